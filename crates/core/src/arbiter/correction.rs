//! Correcting a record, by the arbiter's rules: a move corrected at a ply (the later moves
//! replayed after it, and refused if one is no longer legal), moves added after the record (a
//! game resumed), and which results a reason allows. Pure: the store persists what these return
//! (`store::decisions`), and refuses what they refuse.

use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Position, san::SanPlus, uci::UciMove};

use super::{Laws, resignation_draw};
use crate::{
    Millis,
    game::{
        GameKind,
        chess::{ChessGame, start_of},
    },
    tracker::RecordedMove,
};

/// Why a correction does not stand.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CorrectionError {
    #[error("result {result} does not go with {reason}")]
    InconsistentResult { result: String, reason: String },
    #[error("{text:?} is neither a UCI nor a SAN move")]
    InvalidMove { text: String },
    #[error("{text:?} is not a legal move at ply {ply} (position {position})")]
    NotAMove {
        ply: u32,
        text: String,
        position: String,
    },
    #[error("{text:?} is not legal at ply {ply} (position {fen})")]
    IllegalMove { ply: u32, text: String, fen: String },
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
}

/// Why a result was set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum ResultReason {
    Resignation,
    /// A draw agreed by the players.
    Agreement,
    Forfeit,
    /// The arbiter's decision (a penalty, an adjudication).
    Decision,
    Other(String),
}

impl ResultReason {
    /// Stable name, stored as the decision's `reason` and the game's `termination`.
    pub fn as_str(&self) -> &str {
        match self {
            ResultReason::Resignation => "resignation",
            ResultReason::Agreement => "agreement",
            ResultReason::Forfeit => "forfeit",
            ResultReason::Decision => "decision",
            ResultReason::Other(s) => s,
        }
    }
}

impl From<String> for ResultReason {
    fn from(s: String) -> ResultReason {
        match s.as_str() {
            "resignation" => ResultReason::Resignation,
            "agreement" => ResultReason::Agreement,
            "forfeit" => ResultReason::Forfeit,
            "decision" => ResultReason::Decision,
            _ => ResultReason::Other(s),
        }
    }
}

impl From<ResultReason> for String {
    fn from(r: ResultReason) -> String {
        r.as_str().to_owned()
    }
}

/// Why a resignation after `moves` (played from `start`; `None`: the standard start) is a draw
/// by the Laws (the opponent cannot mate by any series of legal moves), if it is; the moves are
/// played until one does not read.
pub fn resignation_drawn(
    laws: Laws,
    start: Option<&str>,
    moves: &[RecordedMove],
    result: &str,
) -> Option<String> {
    let mut pos = start_of(start)?;
    for m in moves {
        let Some(mv) = m
            .uci
            .as_deref()
            .and_then(|u| u.parse::<UciMove>().ok())
            .and_then(|u| u.to_move(&pos).ok())
        else {
            break;
        };
        pos.play_unchecked(mv);
    }
    resignation_draw(laws, &pos, result)
}

/// A resignation has a winner; an agreement is a draw; forfeits of unplayed games are forfeits.
pub fn check_reason(result: &str, reason: &ResultReason) -> Result<(), CorrectionError> {
    let ok = match reason {
        ResultReason::Resignation => matches!(result, "1-0" | "0-1"),
        ResultReason::Agreement => result == "1/2-1/2",
        ResultReason::Forfeit => matches!(result, "1-0" | "0-1" | "+/-" | "-/+" | "-/-"),
        ResultReason::Decision | ResultReason::Other(_) => true,
    };
    if ok {
        Ok(())
    } else {
        Err(CorrectionError::InconsistentResult {
            result: result.to_owned(),
            reason: reason.as_str().to_owned(),
        })
    }
}

/// The live moves from `ply` on, with `new_move` at `ply` and the later ones replayed after it
/// (the game played from `start`); times, clocks and time-trouble flags are the old rows'.
pub fn replay_corrected(
    start: Chess,
    live: &[RecordedMove],
    ply: u32,
    new_move: &str,
) -> Result<Vec<RecordedMove>, CorrectionError> {
    let mut pos = start;
    // By the stored UCI only: a later move that is no longer legal is refused, never read as
    // another move its SAN would also name.
    let stored = |row: &RecordedMove, pos: &Chess| {
        row.uci
            .as_deref()
            .and_then(|u| u.parse::<UciMove>().ok())
            .and_then(|u| u.to_move(pos).ok())
    };
    for row in &live[..ply as usize - 1] {
        let mv = stored(row, &pos).ok_or_else(|| CorrectionError::StoredMove {
            ply: row.ply,
            uci: row.uci.clone(),
        })?;
        pos.play_unchecked(mv);
    }
    let first = parse_new_move(&pos, ply, new_move)?;
    let mut out = Vec::with_capacity(live.len() + 1 - ply as usize);
    let mut next = Some(first);
    for row in &live[ply as usize - 1..] {
        let mv = match next.take() {
            Some(mv) => mv,
            None => stored(row, &pos).ok_or_else(|| CorrectionError::LaterMoveIllegal {
                ply: row.ply,
                uci: row.uci.clone().unwrap_or_default(),
                notation: row.notation.clone(),
            })?,
        };
        let after = ChessGame::play(&pos, &mv);
        let has_moves = !after.legal_moves().is_empty();
        out.push(RecordedMove {
            notation: ChessGame::notation(&pos, &mv, &after, has_moves),
            uci: ChessGame::uci(&pos, &mv),
            position: ChessGame::position_text(&after),
            ..row.clone()
        });
        pos = after;
    }
    Ok(out)
}

/// `kept` followed by `rows` played again where they now stand (an undone correction or
/// resume: the rows the decision had retracted, then the moves the board recorded after it),
/// from `start` (its stored text; `None`: the standard start). Each row must be legal where it
/// is played, read by its stored UCI when it has one (never read as another move its notation
/// would also name); each keeps its time and clocks, its ply, notation and position are its
/// place's now. Refused at the first row that is not legal there.
pub fn replay_rows<G: GameKind>(
    start: Option<&str>,
    kept: &[RecordedMove],
    rows: &[RecordedMove],
) -> Result<Vec<RecordedMove>, CorrectionError> {
    let mut pos = position_after::<G>(start, kept)?;
    let mut out = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let ply = (kept.len() + i + 1) as u32;
        let text = row.uci.as_deref().unwrap_or(&row.notation);
        let mv = G::parse_move(&pos, text).ok_or_else(|| CorrectionError::LaterMoveIllegal {
            ply,
            uci: row.uci.clone().unwrap_or_default(),
            notation: row.notation.clone(),
        })?;
        let after = G::play(&pos, &mv);
        let mut successors = Vec::new();
        G::successors(&after, 0, &mut successors);
        out.push(RecordedMove {
            ply,
            notation: G::notation(&pos, &mv, &after, !successors.is_empty()),
            uci: G::uci(&pos, &mv),
            position: G::position_text(&after),
            ..row.clone()
        });
        pos = after;
    }
    Ok(out)
}

/// The position after `kept`, the game's stored moves, played from `start` (its stored text;
/// `None`: the kind's standard start); refused if the start or a move does not read.
fn position_after<G: GameKind>(
    start: Option<&str>,
    kept: &[RecordedMove],
) -> Result<G::Position, CorrectionError> {
    let mut pos = match start {
        None => G::start(),
        Some(text) => {
            G::parse_start(text).ok_or_else(|| CorrectionError::StoredStart(text.to_owned()))?
        }
    };
    for row in kept {
        let mv = row
            .to_move::<G>(&pos)
            .ok_or_else(|| CorrectionError::StoredMove {
                ply: row.ply,
                uci: row.uci.clone(),
            })?;
        pos = G::play(&pos, &mv);
    }
    Ok(pos)
}

/// `texts` played after `kept` (the game from `start`, its stored text; `None`: the standard
/// start), as recorded moves stamped `at_ms`, without clocks.
pub fn continue_record<G: GameKind>(
    start: Option<&str>,
    kept: &[RecordedMove],
    texts: &[String],
    at_ms: Millis,
) -> Result<Vec<RecordedMove>, CorrectionError> {
    let mut pos = position_after::<G>(start, kept)?;
    let mut out = Vec::with_capacity(texts.len());
    for (i, text) in texts.iter().enumerate() {
        let ply = (kept.len() + i + 1) as u32;
        let mv = G::parse_move(&pos, text.trim()).ok_or_else(|| CorrectionError::NotAMove {
            ply,
            text: text.trim().to_owned(),
            position: G::position_text(&pos),
        })?;
        let after = G::play(&pos, &mv);
        let mut successors = Vec::new();
        G::successors(&after, 0, &mut successors);
        out.push(RecordedMove {
            ply,
            notation: G::notation(&pos, &mv, &after, !successors.is_empty()),
            uci: G::uci(&pos, &mv),
            position: G::position_text(&after),
            at_ms,
            clock_white_ms: None,
            clock_black_ms: None,
            time_trouble: false,
        });
        pos = after;
    }
    Ok(out)
}

/// `text` as UCI, else as SAN, legal in `pos` (the position before `ply`).
fn parse_new_move(pos: &Chess, ply: u32, text: &str) -> Result<shakmaty::Move, CorrectionError> {
    let text = text.trim();
    let illegal = || CorrectionError::IllegalMove {
        ply,
        text: text.to_owned(),
        fen: ChessGame::position_text(pos),
    };
    if let Ok(uci) = text.parse::<UciMove>() {
        return uci.to_move(pos).map_err(|_| illegal());
    }
    match text.parse::<SanPlus>() {
        Ok(san) => san.san.to_move(pos).map_err(|_| illegal()),
        Err(_) => Err(CorrectionError::InvalidMove {
            text: text.to_owned(),
        }),
    }
}
