//! What an arbiter decides on a game: a result, a ruling, a corrected move, a resumed game, a
//! note, or the undoing of an earlier one ([`AdminAction`], with the bodies the admin API reads
//! as JSON).
//!
//! Flow: the admin API and the console build an action (its author the session's arbiter when
//! there is one: [`AdminAction::by`]), the event node carries it to a hall over NATS, and the
//! [`super::Decider`] applies it to the store (`AdminAction::apply`), through the board's
//! task when it changes the record of a game in progress ([`AdminAction::for_the_board`]).

use serde::{Deserialize, Serialize};

use crate::{
    Millis,
    store::{Decision, DecisionError, GameId, ResultReason, Ruling, Store},
};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultBody {
    pub result: String,
    pub reason: String,
    pub author: Option<String>,
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleBody {
    pub irregularity: u32,
    pub ruling: Ruling,
    pub author: Option<String>,
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorrectBody {
    pub ply: u32,
    #[serde(rename = "move")]
    pub mv: String,
    pub author: Option<String>,
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeBody {
    pub after_ply: u32,
    #[serde(default)]
    pub moves: Vec<String>,
    pub author: Option<String>,
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoteBody {
    pub ply: Option<u32>,
    pub text: String,
    pub author: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UndoBody {
    /// The decision undone (its id, as the game's history gives it).
    pub decision: i64,
    pub author: Option<String>,
    pub note: Option<String>,
}

/// An admin request, validated: what the admin API, the console and (at the event node) a
/// hall's command carry.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "action", content = "body", rename_all = "snake_case")]
pub enum AdminAction {
    Result(ResultBody),
    Rule(RuleBody),
    Correct(CorrectBody),
    Resume(ResumeBody),
    Note(NoteBody),
    Undo(UndoBody),
}

/// The author of a decision: the one given, else "arbiter".
pub fn author(given: Option<String>) -> String {
    given
        .filter(|a| !a.trim().is_empty())
        .unwrap_or_else(|| "arbiter".into())
}

impl AdminAction {
    /// Records it on `game` at `at` (wall-clock ms).
    pub(super) fn apply(
        self,
        store: &mut Store,
        game: GameId,
        at: Millis,
    ) -> Result<Decision, DecisionError> {
        match self {
            AdminAction::Result(b) => store.set_result(
                game,
                &b.result,
                ResultReason::from(b.reason),
                &author(b.author),
                b.note.as_deref(),
                at,
            ),
            AdminAction::Rule(b) => store.rule_on_irregularity(
                game,
                b.irregularity,
                b.ruling,
                &author(b.author),
                b.note.as_deref(),
                at,
            ),
            AdminAction::Correct(b) => {
                store.correct_move(game, b.ply, &b.mv, &author(b.author), b.note.as_deref(), at)
            }
            AdminAction::Resume(b) => store.resume_game(
                game,
                b.after_ply,
                &b.moves,
                &author(b.author),
                b.note.as_deref(),
                at,
            ),
            AdminAction::Note(b) => store.add_note(game, b.ply, &b.text, &author(b.author), at),
            AdminAction::Undo(b) => {
                store.undo_decision(game, b.decision, &author(b.author), b.note.as_deref(), at)
            }
        }
    }

    /// Who decided.
    pub fn author(&self) -> String {
        author(match self {
            AdminAction::Result(b) => b.author.clone(),
            AdminAction::Rule(b) => b.author.clone(),
            AdminAction::Correct(b) => b.author.clone(),
            AdminAction::Resume(b) => b.author.clone(),
            AdminAction::Note(b) => b.author.clone(),
            AdminAction::Undo(b) => b.author.clone(),
        })
    }

    /// The same action by `who` (a console session's arbiter: never the body's word).
    pub fn by(mut self, who: String) -> AdminAction {
        let slot = match &mut self {
            AdminAction::Result(b) => &mut b.author,
            AdminAction::Rule(b) => &mut b.author,
            AdminAction::Correct(b) => &mut b.author,
            AdminAction::Resume(b) => &mut b.author,
            AdminAction::Note(b) => &mut b.author,
            AdminAction::Undo(b) => &mut b.author,
        };
        *slot = Some(who);
        self
    }

    /// Whether it changes the moves of the record (the board recording the game must follow).
    pub fn changes_record(&self) -> bool {
        matches!(self, AdminAction::Correct(_) | AdminAction::Resume(_))
    }

    /// Whether the board recording the game takes it (a changed record, a result, which
    /// closes the game once final, or an undo, which may give back moves or reopen the game).
    pub fn for_the_board(&self) -> bool {
        self.changes_record() || matches!(self, AdminAction::Result(_) | AdminAction::Undo(_))
    }
}
