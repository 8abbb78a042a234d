//! What the tracker tells the rest of the program: moves, revisions, takebacks, new games.
//!
//! Events are game-agnostic (notation and position as text) so the store, relay and exports
//! serve chess and togyz korgool alike.

use serde::{Deserialize, Serialize};

use crate::{Millis, game::Outcome, sensor::Orientation};

/// A move as recorded on the scoresheet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedMove {
    /// 1-based half-move number in the game.
    pub ply: u32,
    /// SAN for chess (`Nxe5`, `O-O`); `76`, `45X` for togyz korgool.
    pub notation: String,
    /// UCI for chess.
    pub uci: Option<String>,
    /// Position after the move (FEN for chess).
    pub position: String,
    /// Stream time when the move was recorded.
    pub at_ms: Millis,
    pub clock_white_ms: Option<u64>,
    pub clock_black_ms: Option<u64>,
}

/// One thing the tracker decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrackerEvent {
    /// A game begins (the start position was set up), on a board read in `orientation`.
    GameStarted {
        at_ms: Millis,
        orientation: Orientation,
    },
    /// A move is added at `mv.ply`.
    Move(RecordedMove),
    /// The move at `new.ply` is replaced (a slide, a rook-first castling).
    Revision {
        at_ms: Millis,
        old: RecordedMove,
        new: RecordedMove,
    },
    /// Every ply after `to_ply` is taken back (`from_ply` was the last one).
    Takeback {
        at_ms: Millis,
        from_ply: u32,
        to_ply: u32,
    },
    /// Both kings were put on the centre squares: a result the arbiter confirms; never a move.
    ResultGesture {
        at_ms: Millis,
        after_ply: u32,
        proposed: Outcome,
    },
    /// The position alone ends the game (mate, stalemate).
    GameEnded {
        at_ms: Millis,
        after_ply: u32,
        outcome: Outcome,
        termination: String,
    },
}

impl TrackerEvent {
    /// Stable name of the event kind, as stored.
    pub fn kind(&self) -> &'static str {
        match self {
            TrackerEvent::GameStarted { .. } => "game_started",
            TrackerEvent::Move(_) => "move",
            TrackerEvent::Revision { .. } => "revised_move",
            TrackerEvent::Takeback { .. } => "takeback",
            TrackerEvent::ResultGesture { .. } => "result_gesture",
            TrackerEvent::GameEnded { .. } => "game_ended",
        }
    }
}
