//! Why a decision, a round start or a round's pairings was not taken: a kind ([`Refused`]) that
//! callers act on, and the arbiter's words ([`Refusal::message`]).
//!
//! Flow: the store's refusals ([`DecisionError`], the [`StoreError`]s the decider meets) are
//! sorted into kinds here and in the decider, once; the HTTP layer turns a kind into a status
//! (`relay::server`), the event node and its halls carry a refusal over NATS as JSON
//! (`cluster::commands`). Nothing here knows HTTP.

use std::fmt;

use serde::{Deserialize, Serialize};
use tracing::error;

use crate::{
    game::Kind,
    lang::Lang,
    phrase::{Arg, Phrase},
    store::{DecisionError, GameId, StoreError},
    tracker::Side,
};

/// Why something was not taken, in the arbiter's words: `message` in English (the admin API's
/// and the command line's), `words` the same for the console to word in its language, where
/// the refusal has them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub reason: Refused,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words: Option<Phrase>,
}

/// The kind of a [`Refusal`]: what the asker may do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refused {
    /// The request is wrong (not a result, no such ply or irregularity, an illegal move, round
    /// 0, a control character in a name): asked the same way, it is refused again.
    Invalid,
    /// No such game.
    UnknownGame,
    /// No board of that name is recorded here (a board's own request: calibrate it).
    UnknownBoard,
    /// Nothing can be decided now, and nothing changed: the store refuses writes, the board's
    /// task is stopping, the event node is stopping or cannot reach its broker, the database
    /// is damaged. Taken again later, it may be.
    Unavailable,
    /// Sent to the hall owning the board, whose answer (or the decision's record) has not come
    /// back yet: the hall takes it when it can, and the record shows it then. Not an error in
    /// the arbiter's eyes.
    Pending,
    /// Something failed inside (logged with its cause).
    Failed,
}

/// What the arbiter reads when something failed inside: the cause is in the log.
pub const INTERNAL: &str = "internal error (see the daemon's log)";

impl Refusal {
    /// Whether asking again later may pass: nothing was refused, something failed or could
    /// not be reached ([`Refused::Failed`], [`Refused::Unavailable`]).
    pub fn may_pass_later(&self) -> bool {
        matches!(self.reason, Refused::Failed | Refused::Unavailable)
    }

    pub fn new(reason: Refused, message: impl Into<String>) -> Refusal {
        Refusal {
            reason,
            message: message.into(),
            words: None,
        }
    }

    /// Refused for `words` (a phrase of the tables' `refused` section): its English is the
    /// message.
    pub fn worded(reason: Refused, words: Phrase) -> Refusal {
        Refusal {
            reason,
            message: words.words(&Lang::En.said(Kind::Chess)),
            words: Some(words),
        }
    }

    /// The arbiter's words in `lang`: the refusal's phrase worded there, else its message.
    pub fn in_lang(&self, lang: Lang) -> String {
        match &self.words {
            Some(p) => p.words(&lang.said(Kind::Chess)),
            None => self.message.clone(),
        }
    }

    /// The request is wrong: [`Refused::Invalid`].
    pub fn invalid(message: impl Into<String>) -> Refusal {
        Refusal::new(Refused::Invalid, message)
    }

    /// Nothing can be decided now: [`Refused::Unavailable`].
    pub fn unavailable(message: impl Into<String>) -> Refusal {
        Refusal::new(Refused::Unavailable, message)
    }

    /// No board named `board` is recorded here: [`Refused::UnknownBoard`].
    pub fn unknown_board(board: &str) -> Refusal {
        Refusal::worded(
            Refused::UnknownBoard,
            Phrase::new("refused.unknown_board").with("board", Arg::Text(format!("{board:?}"))),
        )
    }

    /// Board `board`'s kind learns nothing of the board itself: there is nothing to calibrate.
    pub fn learns_nothing(board: &str) -> Refusal {
        Refusal::worded(
            Refused::Invalid,
            Phrase::new("refused.learns_nothing").with("board", Arg::Text(format!("{board:?}"))),
        )
    }

    /// Something failed inside: `cause` goes to the log, the arbiter reads [`INTERNAL`].
    pub fn failed(cause: impl fmt::Display) -> Refusal {
        error!(cause = %cause, "a decision failed");
        Refusal::new(Refused::Failed, INTERNAL)
    }
}

/// The store's refusal of a decision: the store failing is logged and said in its own words.
impl From<DecisionError> for Refusal {
    fn from(e: DecisionError) -> Refusal {
        let reason = match e {
            DecisionError::UnknownGame(_) => Refused::UnknownGame,
            DecisionError::Store(_) | DecisionError::Unreadable { .. } => {
                error!(cause = %e, "admin decision failed");
                Refused::Failed
            }
            _ => Refused::Invalid,
        };
        Refusal {
            reason,
            message: e.to_string(),
            words: decision_words(&e),
        }
    }
}

/// "move 6 (Black)": the move and side of `ply`.
fn move_at(ply: u32) -> Phrase {
    Phrase::new("refused.move_at")
        .number("move", ply.div_ceil(2))
        .side("side", Side::of_ply(ply))
}

/// The refusal of `e` in the tables' words, where the arbiter can do something about it (the
/// store failing is said as [`INTERNAL`]).
fn decision_words(e: &DecisionError) -> Option<Phrase> {
    let game = |g: &GameId| Arg::Number(g.0.unsigned_abs());
    Some(match e {
        DecisionError::UnknownGame(g) => Phrase::new("refused.unknown_game").with("game", game(g)),
        DecisionError::NoSuchPly {
            game: g,
            ply,
            plies,
        } => Phrase::new("refused.no_such_ply")
            .with("game", game(g))
            .phrase("move", move_at(*ply))
            .number("plies", *plies),
        DecisionError::UnknownIrregularity { game: g, id } => {
            Phrase::new("refused.unknown_irregularity")
                .with("game", game(g))
                .number("id", *id)
        }
        DecisionError::InvalidResult(result) => {
            Phrase::new("refused.invalid_result").text("result", result)
        }
        DecisionError::InconsistentResult { result, reason } => {
            let reason = match reason.as_str() {
                "resignation" | "agreement" | "forfeit" | "decision" => {
                    Arg::Term(format!("reason.{reason}"))
                }
                other => Arg::Text(other.replace('_', " ")),
            };
            Phrase::new("refused.inconsistent_result")
                .text("result", result)
                .with("reason", reason)
        }
        DecisionError::NotChess(g) => Phrase::new("refused.not_chess").with("game", game(g)),
        DecisionError::InvalidMove { text } => {
            Phrase::new("refused.invalid_move").text("text", text)
        }
        DecisionError::NotAMove { ply, text, .. }
        | DecisionError::IllegalMove { ply, text, .. } => Phrase::new("refused.not_legal")
            .text("text", text)
            .phrase("move", move_at(*ply)),
        DecisionError::NothingToResume => Phrase::new("refused.nothing_to_resume"),
        DecisionError::SameMove { ply, text } => Phrase::new("refused.same_move")
            .phrase("move", move_at(*ply))
            .text("text", text),
        DecisionError::LaterMoveIllegal { ply, notation, .. } => {
            Phrase::new("refused.later_move_illegal")
                .text("notation", notation)
                .phrase("move", move_at(*ply))
        }
        DecisionError::NotAForfeit(result) => {
            Phrase::new("refused.not_a_forfeit").text("result", result)
        }
        DecisionError::NoBoardNumbered(board) => {
            Phrase::new("refused.no_board_numbered").number("board", *board)
        }
        DecisionError::NotPaired { board, round } => Phrase::new("refused.not_paired")
            .number("board", *board)
            .number("round", *round),
        DecisionError::BoardHasGame {
            board,
            round,
            game: g,
        } => Phrase::new("refused.board_has_game")
            .number("board", *board)
            .number("round", *round)
            .with("game", game(g)),
        DecisionError::UnknownDecision { game: g, id } => Phrase::new("refused.unknown_decision")
            .with("game", game(g))
            .number("id", id.unsigned_abs()),
        DecisionError::UndoOfUndo { id } => {
            Phrase::new("refused.undo_of_undo").number("id", id.unsigned_abs())
        }
        DecisionError::AlreadyUndone { id, by } => Phrase::new("refused.already_undone")
            .number("id", id.unsigned_abs())
            .number("by", by.unsigned_abs()),
        DecisionError::LaterDecision { id, later } => Phrase::new("refused.later_decision")
            .number("id", id.unsigned_abs())
            .number("later", later.unsigned_abs()),
        DecisionError::UndoBreaksLaterMove { ply, notation } => {
            Phrase::new("refused.undo_breaks_move")
                .text("notation", notation)
                .phrase("move", move_at(*ply))
        }
        DecisionError::EmptyAuthor => Phrase::new("refused.empty_author"),
        DecisionError::EmptyNote => Phrase::new("refused.empty_note"),
        DecisionError::Store(_)
        | DecisionError::StoredMove { .. }
        | DecisionError::StoredStart(_)
        | DecisionError::ControlCharacter(_)
        | DecisionError::Unreadable { .. } => return None,
    })
}

/// The store's refusal of `e` where only `invalid` says the request is wrong (a round number, a
/// name): anything else failed inside.
pub(super) fn store_refusal(e: StoreError, invalid: fn(&StoreError) -> bool) -> Refusal {
    if invalid(&e) {
        Refusal::invalid(e.to_string())
    } else {
        Refusal::failed(e)
    }
}
