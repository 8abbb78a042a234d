//! Arbiter decisions: results, rulings on irregularities, corrected moves and notes.
//!
//! Flow: each operation refuses an author, a note or a ruling's description holding a control
//! character ([`crate::text`]: no line of a terminal or a PGN can be forged with one), validates
//! against the stored game (the rules of a correction, a resumed
//! game and a result's reason are the arbiter's: `arbiter::correction`; this module persists what
//! they give), then in one transaction appends one
//! event of kind `decision` (detail `{action, author, note, ...fields}`) and applies it: a result
//! updates the game's row, a correction retracts the live moves from its ply (their
//! `retracted_by` is the decision's event) and inserts the corrected ones. Nothing is deleted or
//! rewritten, so every decision, and every decision that changed an earlier one, stays in the
//! history ([`Store::history`]). Time is the caller's (`at_ms`, wall-clock ms since the Unix
//! epoch); this module never reads the clock. The decision event's `ply` column keeps the table's
//! convention (the ply it comes before): the irregularity's ply for a ruling, the ply after the
//! move for a correction or a note, and none for a result.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use serde::{Deserialize, Serialize};

use super::{
    EventRecord, GAME_SELECT, GameId, Store, StoreError, game_events, game_header, insert_move_row,
    live_moves, sql_ms,
};
use crate::{
    Millis,
    arbiter::{
        IrregularityKind, Laws,
        correction::{
            CorrectionError, check_reason, continue_record, replay_corrected, replay_rows,
            resignation_drawn,
        },
    },
    game::{
        Kind,
        chess::{ChessGame, start_of},
        togyz::TogyzGame,
    },
};

pub use crate::arbiter::ResultReason;

/// Event kind of a decision, as stored.
pub const DECISION_KIND: &str = "decision";

/// The termination of a resignation the Laws score as a draw (5.1.2 from 2023).
pub const RESIGNATION_CANNOT_MATE: &str = "resignation_opponent_cannot_mate";

/// Results an arbiter may set: the PGN ones and the forfeits of unplayed games.
pub const RESULTS: &[&str] = &["1-0", "0-1", "1/2-1/2", "*", "+/-", "-/+", "-/-"];

/// The results of a game not played: White wins by forfeit, Black does, both lose.
pub const FORFEITS: &[&str] = &["+/-", "-/+", "-/-"];

/// Why a decision was refused.
#[derive(Debug, thiserror::Error)]
pub enum DecisionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no game with id {}", .0.0)]
    UnknownGame(GameId),
    #[error("game {} has no ply {ply} (it has {plies} live moves)", .game.0)]
    NoSuchPly { game: GameId, ply: u32, plies: u32 },
    #[error("game {} has no irregularity {id}", .game.0)]
    UnknownIrregularity { game: GameId, id: u32 },
    #[error("{0:?} is not a result (one of 1-0, 0-1, 1/2-1/2, *, +/-, -/+, -/-)")]
    InvalidResult(String),
    #[error("result {result} does not go with {reason}")]
    InconsistentResult { result: String, reason: String },
    #[error("game {} is not a chess game; only chess moves can be corrected", .0.0)]
    NotChess(GameId),
    #[error("{text:?} is neither a UCI nor a SAN move")]
    InvalidMove { text: String },
    #[error("{text:?} is not a legal move at ply {ply} (position {position})")]
    NotAMove {
        ply: u32,
        text: String,
        position: String,
    },
    #[error("the game is already recorded as it would be: nothing to resume")]
    NothingToResume,
    #[error("{text:?} is not legal at ply {ply} (position {fen})")]
    IllegalMove { ply: u32, text: String, fen: String },
    #[error("ply {ply} is already {text}; nothing to correct")]
    SameMove { ply: u32, text: String },
    #[error(
        "after that correction the recorded move {notation} ({uci}) at ply {ply} is no longer legal"
    )]
    LaterMoveIllegal {
        ply: u32,
        uci: String,
        notation: String,
    },
    #[error("stored move at ply {ply} is unreadable: {uci:?}")]
    StoredMove { ply: u32, uci: Option<String> },
    #[error("the game's stored start position is unreadable: {0:?}")]
    StoredStart(String),
    #[error("the author of a decision must not be empty")]
    EmptyAuthor,
    #[error("a note must not be empty")]
    EmptyNote,
    /// A line break, a tab or an escape in what the record would show (as in a pairing's
    /// names: [`crate::text`]).
    #[error(transparent)]
    ControlCharacter(#[from] crate::text::ControlCharacter),
    #[error("{0:?} is not a forfeit (one of +/-, -/+, -/-)")]
    NotAForfeit(String),
    #[error("no board has number {0}")]
    NoBoardNumbered(u32),
    #[error("board {board} is not paired in round {round}")]
    NotPaired { board: u32, round: u32 },
    #[error("board {board} already has game {} in round {round}: set its result instead", .game.0)]
    BoardHasGame {
        board: u32,
        round: u32,
        game: GameId,
    },
    #[error("game {} has no decision {id}", .game.0)]
    UnknownDecision { game: GameId, id: i64 },
    #[error("decision {id} is an undo: to take the undone decision again, take it anew")]
    UndoOfUndo { id: i64 },
    #[error("decision {id} is already undone (by decision {by})")]
    AlreadyUndone { id: i64, by: i64 },
    #[error("decision {later} changed the game after decision {id}: undo it first")]
    LaterDecision { id: i64, later: i64 },
    #[error(
        "undoing it would leave the move {notation} recorded since, at ply {ply}, illegal: correct the record instead"
    )]
    UndoBreaksLaterMove { ply: u32, notation: String },
    #[error("decision event {id} is unreadable: {source}")]
    Unreadable { id: i64, source: serde_json::Error },
}

/// The correction rules' refusals, as the store's callers have always seen them.
impl From<CorrectionError> for DecisionError {
    fn from(err: CorrectionError) -> DecisionError {
        match err {
            CorrectionError::InconsistentResult { result, reason } => {
                DecisionError::InconsistentResult { result, reason }
            }
            CorrectionError::InvalidMove { text } => DecisionError::InvalidMove { text },
            CorrectionError::NotAMove {
                ply,
                text,
                position,
            } => DecisionError::NotAMove {
                ply,
                text,
                position,
            },
            CorrectionError::IllegalMove { ply, text, fen } => {
                DecisionError::IllegalMove { ply, text, fen }
            }
            CorrectionError::LaterMoveIllegal { ply, uci, notation } => {
                DecisionError::LaterMoveIllegal { ply, uci, notation }
            }
            CorrectionError::StoredMove { ply, uci } => DecisionError::StoredMove { ply, uci },
            CorrectionError::StoredStart(start) => DecisionError::StoredStart(start),
        }
    }
}

impl From<rusqlite::Error> for DecisionError {
    fn from(err: rusqlite::Error) -> DecisionError {
        DecisionError::Store(err.into())
    }
}

impl From<serde_json::Error> for DecisionError {
    fn from(err: serde_json::Error) -> DecisionError {
        DecisionError::Store(err.into())
    }
}

/// The arbiter's ruling on an irregularity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ruling {
    /// A penalty was applied (time added, a loss), as described.
    PenaltyApplied {
        description: String,
    },
    /// The move stands (the claim came too late, or the arbiter saw no irregularity).
    MoveStands,
    /// The position before ply `ply` was reinstated (Article 7.5.1).
    PositionReinstated {
        ply: u32,
    },
    NoAction,
}

impl Ruling {
    /// Stable name (`penalty_applied`, `move_stands`, `position_reinstated`, `no_action`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Ruling::PenaltyApplied { .. } => "penalty_applied",
            Ruling::MoveStands => "move_stands",
            Ruling::PositionReinstated { .. } => "position_reinstated",
            Ruling::NoAction => "no_action",
        }
    }
}

/// What a decision did, with its fields (stored flat in the event's detail next to `action`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// The game's result and termination were set; the previous ones are kept here.
    SetResult {
        result: String,
        reason: ResultReason,
        previous_result: String,
        previous_termination: Option<String>,
    },
    /// A ruling on irregularity `irregularity` (its `id` within the game).
    Rule { irregularity: u32, ruling: Ruling },
    /// The move at `ply` was corrected from `old_*` to `new_*`; `retracted` live moves (from
    /// `ply` on) were retracted and as many inserted.
    CorrectMove {
        ply: u32,
        old_uci: Option<String>,
        old_notation: String,
        new_uci: String,
        new_notation: String,
        retracted: u32,
    },
    /// A note, on a ply or on the whole game; the text is the decision's `note`.
    Note { ply: Option<u32> },
    /// The game goes on after ply `after_ply` followed by `moves` (their notation; the
    /// players' scoresheets, or none): the `retracted` live moves after `after_ply` were
    /// retracted. The board's tracker, when it records the game, goes on from there (after a
    /// `thread_lost`, or with the position reinstated on the board).
    Resume {
        after_ply: u32,
        moves: Vec<String>,
        retracted: u32,
    },
    /// Decision `decision` (an earlier one on this game, named `undone` by its action) is
    /// withdrawn: it no longer counts, and what it did is reversed, as a further decision (both
    /// stay in the history). An undone result gives back `result` and `termination`, the ones
    /// it replaced, and a game it closed whose result is open again is `reopened` (its board
    /// records it again). An undone correction or resume retracted the `retracted` live moves
    /// from `ply` and recorded `restored` in their place: the ones it had retracted, then the
    /// moves recorded after it, played again.
    Undo {
        decision: i64,
        undone: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        termination: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        reopened: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ply: Option<u32>,
        #[serde(default, skip_serializing_if = "is_zero")]
        retracted: u32,
        #[serde(default, skip_serializing_if = "is_zero")]
        restored: u32,
    },
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Action {
    /// Stable name, stored as the detail's `action`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Action::SetResult { .. } => "set_result",
            Action::Rule { .. } => "rule",
            Action::CorrectMove { .. } => "correct_move",
            Action::Note { .. } => "note",
            Action::Resume { .. } => "resume",
            Action::Undo { .. } => "undo",
        }
    }

    /// Whether it changed the game's live moves (a correction, a resumed game, an undo of
    /// either): the board recording the game goes on from the record it leaves.
    pub fn changed_record(&self) -> bool {
        match self {
            Action::CorrectMove { .. } | Action::Resume { .. } => true,
            Action::Undo {
                retracted,
                restored,
                ..
            } => retracted + restored > 0,
            _ => false,
        }
    }

    /// The decision it withdraws, for an undo.
    pub fn undoes(&self) -> Option<i64> {
        match self {
            Action::Undo { decision, .. } => Some(*decision),
            _ => None,
        }
    }
}

/// One decision, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The row id of its event.
    pub id: i64,
    pub game: GameId,
    /// Wall-clock ms since the Unix epoch, as the caller gave it.
    pub at_ms: Millis,
    pub author: String,
    pub note: Option<String>,
    pub action: Action,
}

/// The detail JSON of a decision event.
#[derive(Serialize, Deserialize)]
struct Detail {
    #[serde(flatten)]
    action: Action,
    author: String,
    note: Option<String>,
}

/// [`Detail`] borrowed from a decision, to write it as stored.
#[derive(Serialize)]
struct DetailRef<'a> {
    #[serde(flatten)]
    action: &'a Action,
    author: &'a str,
    note: Option<&'a str>,
}

impl Decision {
    /// The fields stored in the decision's event (`action`, its fields, `author`, `note`).
    pub fn fields(&self) -> serde_json::Value {
        serde_json::to_value(DetailRef {
            action: &self.action,
            author: &self.author,
            note: self.note.as_deref(),
        })
        .unwrap_or(serde_json::Value::Null)
    }

    /// The decision stored as `event` (of kind [`DECISION_KIND`]) of `game`.
    pub fn from_event(game: GameId, event: &EventRecord) -> Result<Decision, DecisionError> {
        Decision::from_parts(game, event.id, event.at_ms, &event.detail)
    }

    /// The decision stored in event row `id` of `game` with `detail`.
    pub(super) fn from_parts(
        game: GameId,
        id: i64,
        at_ms: Millis,
        detail: &serde_json::Value,
    ) -> Result<Decision, DecisionError> {
        let detail = Detail::deserialize(detail)
            .map_err(|source| DecisionError::Unreadable { id, source })?;
        Ok(Decision {
            id,
            game,
            at_ms,
            author: detail.author,
            note: detail.note,
            action: detail.action,
        })
    }
}

impl Store {
    /// Sets (or changes) the result of `game` and records why. A final result (not `*`) closes
    /// a game still open: the board no longer extends it, and nothing it does changes the result
    /// ([`super::closing`]).
    pub fn set_result(
        &mut self,
        game: GameId,
        result: &str,
        reason: ResultReason,
        author: &str,
        note: Option<&str>,
        at_ms: Millis,
    ) -> Result<Decision, DecisionError> {
        let author = check_author(author)?;
        if !RESULTS.contains(&result) {
            return Err(DecisionError::InvalidResult(result.to_owned()));
        }
        check_reason(result, &reason)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (board, previous_result, previous_termination) = header(&tx, game)?;
        let action = Action::SetResult {
            result: result.to_owned(),
            reason: reason.clone(),
            previous_result,
            previous_termination,
        };
        let decision = insert(&tx, game, board, None, action, author, note, at_ms)?;
        tx.prepare_cached("UPDATE games SET result = ?1, termination = ?2 WHERE id = ?3")?
            .execute((result, reason.as_str(), game))?;
        super::closing::close_decided(&tx, game, result)?;
        tx.commit()?;
        Ok(decision)
    }

    /// [`Store::set_result`] under the Laws of `laws`: from 2023 a resignation where the opponent
    /// cannot mate is recorded as a draw, the note saying why (5.1.2). Returns the decision and
    /// that reason when the result was changed.
    #[allow(clippy::too_many_arguments)]
    pub fn declare_result(
        &mut self,
        game: GameId,
        result: &str,
        reason: ResultReason,
        laws: Laws,
        author: &str,
        note: Option<&str>,
        at_ms: Millis,
    ) -> Result<(Decision, Option<String>), DecisionError> {
        if reason == ResultReason::Resignation {
            let record = self.game(game)?.ok_or(DecisionError::UnknownGame(game))?;
            if record.kind == Kind::Chess
                && let Some(why) = resignation_drawn(
                    laws,
                    record.start_position.as_deref(),
                    &record.moves,
                    result,
                )
            {
                let note = match note {
                    Some(n) => format!("{n}; {why}"),
                    None => why.clone(),
                };
                // The termination says both: a resignation, drawn by the Laws.
                let reason = ResultReason::Other(RESIGNATION_CANNOT_MATE.to_string());
                let d = self.set_result(game, "1/2-1/2", reason, author, Some(&note), at_ms)?;
                return Ok((d, Some(why)));
            }
        }
        let d = self.set_result(game, result, reason, author, note, at_ms)?;
        Ok((d, None))
    }

    /// Rules on irregularity `irregularity` (its `id` within `game`).
    pub fn rule_on_irregularity(
        &mut self,
        game: GameId,
        irregularity: u32,
        ruling: Ruling,
        author: &str,
        note: Option<&str>,
        at_ms: Millis,
    ) -> Result<Decision, DecisionError> {
        let author = check_author(author)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (board, _, _) = header(&tx, game)?;
        let ply = irregularity_ply(&tx, game, irregularity)?;
        if let Ruling::PositionReinstated { ply: before } = ruling {
            let plies = live_moves(&tx, game)?.len() as u32;
            if before == 0 || before > plies + 1 {
                return Err(DecisionError::NoSuchPly {
                    game,
                    ply: before,
                    plies,
                });
            }
        }
        let action = Action::Rule {
            irregularity,
            ruling,
        };
        let decision = insert(&tx, game, board, ply, action, author, note, at_ms)?;
        tx.commit()?;
        Ok(decision)
    }

    /// Corrects a mis-sensed move: `new_move` (UCI or SAN) replaces the live move at `ply`, and
    /// every later live move is replayed after it (they must all stay legal). The old rows are
    /// retracted by the decision, the new ones keep their times and clocks. Made through the
    /// admin API on a game a board is recording, the board's task applies it and goes on from
    /// the corrected record ([`crate::decider::desk`]); made otherwise, the next start does.
    pub fn correct_move(
        &mut self,
        game: GameId,
        ply: u32,
        new_move: &str,
        author: &str,
        note: Option<&str>,
        at_ms: Millis,
    ) -> Result<Decision, DecisionError> {
        let author = check_author(author)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (board, _, _) = header(&tx, game)?;
        if game_kind(&tx, game)? != Kind::Chess {
            return Err(DecisionError::NotChess(game));
        }
        let live = live_moves(&tx, game)?;
        let plies = live.len() as u32;
        if ply == 0 || ply > plies {
            return Err(DecisionError::NoSuchPly { game, ply, plies });
        }
        let old = &live[ply as usize - 1];
        let start = stored_start(&tx, game)?;
        let start = start_of(start.as_deref())
            .ok_or_else(|| DecisionError::StoredStart(start.unwrap_or_default()))?;
        let corrected = replay_corrected(start, &live, ply, new_move)?;
        let first = &corrected[0];
        if old.uci.as_deref() == first.uci.as_deref() {
            return Err(DecisionError::SameMove {
                ply,
                text: old.notation.clone(),
            });
        }
        let action = Action::CorrectMove {
            ply,
            old_uci: old.uci.clone(),
            old_notation: old.notation.clone(),
            new_uci: first.uci.clone().unwrap_or_default(),
            new_notation: first.notation.clone(),
            retracted: corrected.len() as u32,
        };
        let decision = insert(&tx, game, board, Some(ply + 1), action, author, note, at_ms)?;
        tx.prepare_cached(
            "UPDATE moves SET retracted_by = ?1 \
             WHERE game_id = ?2 AND ply >= ?3 AND retracted_by IS NULL",
        )?
        .execute((decision.id, game, ply))?;
        for mv in &corrected {
            insert_move_row(&tx, game, mv)?;
        }
        tx.commit()?;
        Ok(decision)
    }

    /// Adds a note to `game`, after the move at `ply` or (`None`) on the whole game.
    pub fn add_note(
        &mut self,
        game: GameId,
        ply: Option<u32>,
        text: &str,
        author: &str,
        at_ms: Millis,
    ) -> Result<Decision, DecisionError> {
        let author = check_author(author)?;
        if text.trim().is_empty() {
            return Err(DecisionError::EmptyNote);
        }
        clean("note", text)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (board, _, _) = header(&tx, game)?;
        if let Some(ply) = ply {
            let plies = live_moves(&tx, game)?.len() as u32;
            if ply == 0 || ply > plies {
                return Err(DecisionError::NoSuchPly { game, ply, plies });
            }
        }
        let action = Action::Note { ply };
        let column = ply.map(|p| p + 1);
        let decision = insert(&tx, game, board, column, action, author, Some(text), at_ms)?;
        tx.commit()?;
        Ok(decision)
    }

    /// Resumes `game` after ply `after_ply`: the live moves after it are retracted, and `moves`
    /// (UCI or SAN for chess, pit numbers for togyz korgool: what the players' scoresheets
    /// show, or none) are recorded after it, each checked legal where it is played. The moves
    /// carry no clocks (when they were made is not known) and are stamped `at_ms`. The board's
    /// tracker goes on from the new record; see [`Action::Resume`].
    pub fn resume_game(
        &mut self,
        game: GameId,
        after_ply: u32,
        moves: &[String],
        author: &str,
        note: Option<&str>,
        at_ms: Millis,
    ) -> Result<Decision, DecisionError> {
        let author = check_author(author)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (board, _, _) = header(&tx, game)?;
        let kind = game_kind(&tx, game)?;
        let live = live_moves(&tx, game)?;
        let plies = live.len() as u32;
        if after_ply > plies {
            return Err(DecisionError::NoSuchPly {
                game,
                ply: after_ply,
                plies,
            });
        }
        if after_ply == plies && moves.is_empty() {
            return Err(DecisionError::NothingToResume);
        }
        let start = stored_start(&tx, game)?;
        let kept = &live[..after_ply as usize];
        let added = match kind {
            Kind::Chess => continue_record::<ChessGame>(start.as_deref(), kept, moves, at_ms)?,
            Kind::Togyz => continue_record::<TogyzGame>(start.as_deref(), kept, moves, at_ms)?,
        };
        let action = Action::Resume {
            after_ply,
            moves: added.iter().map(|m| m.notation.clone()).collect(),
            retracted: plies - after_ply,
        };
        let decision = insert(
            &tx,
            game,
            board,
            Some(after_ply + 1),
            action,
            author,
            note,
            at_ms,
        )?;
        tx.prepare_cached(
            "UPDATE moves SET retracted_by = ?1 \
             WHERE game_id = ?2 AND ply > ?3 AND retracted_by IS NULL",
        )?
        .execute((decision.id, game, after_ply))?;
        for mv in &added {
            insert_move_row(&tx, game, mv)?;
        }
        tx.commit()?;
        Ok(decision)
    }

    /// Undoes decision `decision` of `game`, as a further decision ([`Action::Undo`]): the
    /// undone one no longer counts (a ruling's irregularity is open again, a note is withdrawn)
    /// and what it did is reversed. An undone result gives back the result it replaced; a game
    /// its board began, closed by it, whose result is then open is reopened if it is still its
    /// board's latest game (the board records it again; a game recorded as not played is not),
    /// and one whose earlier final result stands again is closed. An
    /// undone correction or resume gives back the moves it retracted, and the moves recorded
    /// after it are played again after them (refused if one is no longer legal there). Refused:
    /// an undo (take the decision anew), a decision already undone, and a result, correction or
    /// resume that a later one (not undone) changed again: undo that first.
    pub fn undo_decision(
        &mut self,
        game: GameId,
        decision: i64,
        author: &str,
        note: Option<&str>,
        at_ms: Millis,
    ) -> Result<Decision, DecisionError> {
        let author = check_author(author)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (board, _, _) = header(&tx, game)?;
        let decisions = game_decisions(&tx, game)?;
        let target = decisions
            .iter()
            .find(|d| d.id == decision)
            .ok_or(DecisionError::UnknownDecision { game, id: decision })?;
        let undone_by = |id: i64| {
            decisions
                .iter()
                .find(|d| d.action.undoes() == Some(id))
                .map(|d| d.id)
        };
        if let Some(by) = undone_by(decision) {
            return Err(DecisionError::AlreadyUndone { id: decision, by });
        }
        // A later decision of the same sort, still standing, changed what this one did.
        let later_standing = |same: fn(&Action) -> bool| {
            decisions
                .iter()
                .filter(|d| d.id > decision && same(&d.action))
                .find(|d| undone_by(d.id).is_none())
                .map(|d| DecisionError::LaterDecision {
                    id: decision,
                    later: d.id,
                })
        };
        let undone = target.action.as_str().to_owned();
        let mut action = Action::Undo {
            decision,
            undone,
            result: None,
            termination: None,
            reopened: false,
            ply: None,
            retracted: 0,
            restored: 0,
        };
        let mut restore = None;
        match &target.action {
            Action::Undo { .. } => return Err(DecisionError::UndoOfUndo { id: decision }),
            Action::Rule { .. } | Action::Note { .. } => {}
            Action::SetResult {
                previous_result,
                previous_termination,
                ..
            } => {
                if let Some(e) = later_standing(|a| matches!(a, Action::SetResult { .. })) {
                    return Err(e);
                }
                // A game its board began (not one recorded as not played), closed, its board's
                // latest: its board can record it on.
                let (closed, latest): (bool, bool) = tx
                    .prepare_cached(
                        "SELECT ended_at_ms IS NOT NULL \
                         AND EXISTS (SELECT 1 FROM events e WHERE e.game_id = g.id \
                             AND e.kind = 'game_started'), \
                         id = (SELECT MAX(id) FROM games WHERE board_id = g.board_id) \
                         FROM games g WHERE id = ?1",
                    )?
                    .query_row([game], |r| Ok((r.get(0)?, r.get(1)?)))?;
                if let Action::Undo {
                    result,
                    termination,
                    reopened,
                    ..
                } = &mut action
                {
                    *result = Some(previous_result.clone());
                    termination.clone_from(previous_termination);
                    *reopened = previous_result == "*" && closed && latest;
                }
            }
            Action::CorrectMove { ply, retracted, .. } => {
                if let Some(e) = later_standing(is_record_change) {
                    return Err(e);
                }
                restore = Some((*ply, *retracted as usize));
            }
            Action::Resume {
                after_ply, moves, ..
            } => {
                if let Some(e) = later_standing(is_record_change) {
                    return Err(e);
                }
                restore = Some((after_ply + 1, moves.len()));
            }
        }
        let mut restored_rows = Vec::new();
        if let Some((first, inserted)) = restore {
            let live = live_moves(&tx, game)?;
            let kept = &live[..(first as usize - 1).min(live.len())];
            // The rows the decision retracted, then the moves recorded after its own.
            let mut rows: Vec<_> = tx
                .prepare_cached(&format!(
                    "SELECT {} FROM moves WHERE game_id = ?1 AND retracted_by = ?2 ORDER BY ply",
                    super::read::MOVE_COLUMNS
                ))?
                .query_map((game, decision), |r| super::read::move_row(r, 0))?
                .collect::<Result<_, _>>()?;
            rows.extend(live.iter().skip(kept.len() + inserted).cloned());
            let start = stored_start(&tx, game)?;
            let replayed = match game_kind(&tx, game)? {
                Kind::Chess => replay_rows::<ChessGame>(start.as_deref(), kept, &rows),
                Kind::Togyz => replay_rows::<TogyzGame>(start.as_deref(), kept, &rows),
            };
            restored_rows = replayed.map_err(|e| match e {
                CorrectionError::LaterMoveIllegal { ply, notation, .. } => {
                    DecisionError::UndoBreaksLaterMove { ply, notation }
                }
                other => other.into(),
            })?;
            if let Action::Undo {
                ply,
                retracted,
                restored,
                ..
            } = &mut action
            {
                *ply = Some(first);
                *retracted = (live.len() - kept.len()) as u32;
                *restored = restored_rows.len() as u32;
            }
        }
        let column = restore.map(|(first, _)| first);
        let decision = insert(&tx, game, board, column, action, author, note, at_ms)?;
        match &decision.action {
            Action::Undo {
                result: Some(result),
                termination,
                reopened,
                ..
            } => {
                tx.prepare_cached(
                    "UPDATE games SET result = ?1, termination = ?2, \
                     ended_at_ms = CASE WHEN ?3 THEN NULL ELSE ended_at_ms END WHERE id = ?4",
                )?
                .execute((result, termination, reopened, game))?;
                super::closing::close_decided(&tx, game, result)?;
            }
            Action::Undo {
                ply: Some(first), ..
            } => {
                tx.prepare_cached(
                    "UPDATE moves SET retracted_by = ?1 \
                     WHERE game_id = ?2 AND ply >= ?3 AND retracted_by IS NULL",
                )?
                .execute((decision.id, game, first))?;
                for mv in &restored_rows {
                    insert_move_row(&tx, game, mv)?;
                }
            }
            _ => {}
        }
        tx.commit()?;
        Ok(decision)
    }

    /// Records the game of board number `board` in round `round` as not played: a forfeit
    /// (`result`: `+/-`, `-/+` or `-/-`), for a board paired in that round where no game began.
    /// The game is stored with no moves, begun and ended at `at_ms`, its players the pairing's,
    /// and the result set on it as a decision (reason `forfeit`), which can be undone like any.
    /// Refused for a board not paired in the round, or that has a game in it already (set that
    /// game's result instead).
    #[allow(clippy::too_many_arguments)]
    pub fn record_forfeit(
        &mut self,
        board: u32,
        round: u32,
        result: &str,
        author: &str,
        note: Option<&str>,
        at_ms: Millis,
    ) -> Result<Decision, DecisionError> {
        let author = check_author(author)?;
        if !FORFEITS.contains(&result) {
            return Err(DecisionError::NotAForfeit(result.to_owned()));
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (board_id, kind): (super::BoardId, String) = tx
            .prepare_cached("SELECT id, kind FROM boards WHERE number = ?1 ORDER BY id LIMIT 1")?
            .query_row([board], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .ok_or(DecisionError::NoBoardNumbered(board))?;
        let paired: bool = tx
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM pairings WHERE round = ?1 AND board = ?2)",
            )?
            .query_row((round, board), |r| r.get(0))?;
        if !paired {
            return Err(DecisionError::NotPaired { board, round });
        }
        let played: Option<GameId> = tx
            .prepare_cached(
                "SELECT id FROM games WHERE board_id = ?1 AND round = CAST(?2 AS TEXT) \
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row((board_id, round), |r| r.get(0))
            .optional()?;
        if let Some(game) = played {
            return Err(DecisionError::BoardHasGame { board, round, game });
        }
        let at = sql_ms(at_ms)?;
        let game = GameId(
            tx.prepare_cached(
                "INSERT INTO games (board_id, kind, orientation, started_at_ms, ended_at_ms, \
                 event, site, round, board_no, time_control) \
                 SELECT ?1, ?2, 'normal', ?3, ?3, t.event, t.site, CAST(?4 AS TEXT), ?5, \
                 t.time_control FROM (SELECT 1) LEFT JOIN tournament t ON t.id = 1",
            )?
            .insert((board_id, kind, at, round, board))?,
        );
        let action = Action::SetResult {
            result: result.to_owned(),
            reason: ResultReason::Forfeit,
            previous_result: "*".to_owned(),
            previous_termination: None,
        };
        let decision = insert(&tx, game, board_id, None, action, author, note, at_ms)?;
        tx.prepare_cached("UPDATE games SET result = ?1, termination = ?2 WHERE id = ?3")?
            .execute((result, ResultReason::Forfeit.as_str(), game))?;
        tx.commit()?;
        Ok(decision)
    }

    /// Every decision stored after event row `after`, in the order taken, with the board
    /// whose latest game each is on (none for an earlier game of its board): what another
    /// process (the CLI) decided while the daemon runs ([`crate::relay::outside`]).
    pub fn decisions_after(
        &self,
        after: i64,
    ) -> Result<Vec<(Decision, Option<String>)>, DecisionError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT e.id, e.game_id, e.at_ms, e.detail,              (SELECT b.name FROM games g JOIN boards b ON b.id = g.board_id               WHERE g.id = e.game_id               AND g.id = (SELECT MAX(later.id) FROM games later WHERE later.board_id = g.board_id))              FROM events e WHERE e.id > ?1 AND e.kind = ?2 ORDER BY e.id",
        ).map_err(StoreError::from)?;
        let rows = stmt
            .query_map(rusqlite::params![after, DECISION_KIND], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    GameId(r.get(1)?),
                    super::read::get_ms(r, 2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })
            .map_err(StoreError::from)?;
        let mut out = Vec::new();
        for row in rows {
            let (id, game, at_ms, detail, board) = row.map_err(StoreError::from)?;
            let detail = serde_json::from_str(&detail).map_err(StoreError::from)?;
            out.push((Decision::from_parts(game, id, at_ms, &detail)?, board));
        }
        Ok(out)
    }

    /// The id of the latest event row (0 for none): where [`Store::decisions_after`] starts.
    pub fn last_event_id(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT COALESCE(MAX(id), 0) FROM events")?
            .query_row([], |r| r.get(0))?)
    }

    /// Every decision on `game`, in the order they were made.
    pub fn decisions(&self, game: GameId) -> Result<Vec<Decision>, DecisionError> {
        header(&self.conn, game)?;
        game_decisions(&self.conn, game)
    }
}

/// Every decision on `game`, in the order made.
fn game_decisions(conn: &Connection, game: GameId) -> Result<Vec<Decision>, DecisionError> {
    game_events(conn, game)?
        .iter()
        .filter(|e| e.kind == DECISION_KIND)
        .map(|e| Decision::from_event(game, e))
        .collect()
}

/// The start position `game` keeps (none: its kind's standard start).
fn stored_start(conn: &Connection, game: GameId) -> Result<Option<String>, DecisionError> {
    Ok(conn
        .prepare_cached("SELECT start_position FROM games WHERE id = ?1")?
        .query_row([game], |r| r.get(0))?)
}

/// A decision that changes the game's moves (an undo of one is not: it gives back the record).
fn is_record_change(action: &Action) -> bool {
    matches!(action, Action::CorrectMove { .. } | Action::Resume { .. })
}

fn check_author(author: &str) -> Result<&str, DecisionError> {
    let author = author.trim();
    if author.is_empty() {
        return Err(DecisionError::EmptyAuthor);
    }
    clean("author", author)?;
    Ok(author)
}

/// Refuses `text` (the decision's `field`) when it holds a control character.
fn clean(field: &'static str, text: &str) -> Result<(), DecisionError> {
    Ok(crate::text::one_line(field, text)?)
}

/// Refuses a decision whose author, note or ruling's description holds a control character:
/// every decision is written through [`insert`], which asks this first.
fn check_text(author: &str, note: Option<&str>, action: &Action) -> Result<(), DecisionError> {
    clean("author", author)?;
    if let Some(note) = note {
        clean("note", note)?;
    }
    if let Action::Rule {
        ruling: Ruling::PenaltyApplied { description },
        ..
    } = action
    {
        clean("ruling's description", description)?;
    }
    Ok(())
}

/// Board, result and termination of `game`.
pub(super) fn header(
    conn: &Connection,
    game: GameId,
) -> Result<(super::BoardId, String, Option<String>), DecisionError> {
    conn.prepare_cached("SELECT board_id, result, termination FROM games WHERE id = ?1")?
        .query_row([game], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?
        .ok_or(DecisionError::UnknownGame(game))
}

fn game_kind(conn: &Connection, game: GameId) -> Result<Kind, DecisionError> {
    let record = conn
        .prepare_cached(&format!("{GAME_SELECT} WHERE g.id = ?1"))?
        .query_row([game], game_header)
        .optional()?
        .ok_or(DecisionError::UnknownGame(game))??;
    Ok(record.kind)
}

/// The ply irregularity `id` of `game` happened before.
fn irregularity_ply(
    conn: &Connection,
    game: GameId,
    id: u32,
) -> Result<Option<u32>, DecisionError> {
    // The kinds the board or clock shows, numbered by `id` within a game.
    let kinds = IrregularityKind::ALL
        .iter()
        .filter(|k| !k.is_audit_trail())
        .map(|k| format!("'{}'", k.as_str()))
        .collect::<Vec<_>>()
        .join(", ");
    let found: Option<Option<u32>> = conn
        .prepare_cached(&format!(
            "SELECT ply FROM events WHERE game_id = ?1 AND kind IN ({kinds}) \
             AND json_extract(detail, '$.id') = ?2 ORDER BY id LIMIT 1"
        ))?
        .query_row((game, id), |r| r.get(0))
        .optional()?;
    found.ok_or(DecisionError::UnknownIrregularity { game, id })
}

#[allow(clippy::too_many_arguments)]
pub(super) fn insert(
    conn: &Connection,
    game: GameId,
    board: super::BoardId,
    ply: Option<u32>,
    action: Action,
    author: &str,
    note: Option<&str>,
    at_ms: Millis,
) -> Result<Decision, DecisionError> {
    check_text(author, note, &action)?;
    let note = note
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_owned);
    let detail = Detail {
        action,
        author: author.to_owned(),
        note,
    };
    let text = serde_json::to_string(&detail)?;
    let id = conn
        .prepare_cached(
            "INSERT INTO events (game_id, board_id, at_ms, kind, ply, detail) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .insert((game, board, sql_ms(at_ms)?, DECISION_KIND, ply, text))?;
    Ok(Decision {
        id,
        game,
        at_ms,
        author: detail.author,
        note: detail.note,
        action: detail.action,
    })
}
