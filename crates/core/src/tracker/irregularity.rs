//! What the tracker can witness on a board and its clock: the kinds of irregularity it records
//! (the names are a contract of `shared/DESIGN.md`). Which article of the Laws each falls under
//! is the arbiter's (`arbiter::articles`).

use serde::{Deserialize, Serialize};

/// An irregularity the tracker records, with the ply it happened before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IrregularityKind {
    /// The board differs from the position in a way no move explains (a piece knocked or
    /// displaced by the player).
    Displaced,
    /// A move that breaks Articles 3.1–3.9, completed by a clock press.
    IllegalMove,
    /// The clock pressed without a move.
    ClockWithoutMove,
    /// The game began from a wrong initial position.
    WrongStartPosition,
    /// The board is turned round (h1 not on the right-hand corner of White).
    BoardRotated,
    /// An illegal position (both kings in check, or a pawn on its last rank) still on the board
    /// after the opponent completed a move (A.5.4 2023, A.4.4 2014/2018, A.4c 2009: in rapid and
    /// blitz without full supervision, a draw).
    IllegalPosition,
    /// The clock at the start does not show the time control's time (6.10.2: the arbiter fixes a
    /// clock set wrongly).
    ClockMisSet,
    /// A move taken back (the tracker's audit trail; not an irregularity under the Laws).
    Takeback,
    /// The last move revised, e.g. a slide or a rook-first castling (audit trail only).
    RevisedMove,
    /// After a gap (the board not heard) the record does not reach what the board shows, and
    /// no single run of moves explains it: recording waits (an alert for the arbiter).
    ThreadLost,
    /// Plies missed in a gap, read from the board's memory (audit trail only).
    RecoveredFromMemory,
    /// Plies missed in a gap, the one run of moves that explains the board (audit trail only).
    RecoveredBySearch,
}

impl IrregularityKind {
    pub const ALL: [IrregularityKind; 12] = [
        IrregularityKind::Displaced,
        IrregularityKind::IllegalMove,
        IrregularityKind::ClockWithoutMove,
        IrregularityKind::WrongStartPosition,
        IrregularityKind::BoardRotated,
        IrregularityKind::IllegalPosition,
        IrregularityKind::ClockMisSet,
        IrregularityKind::Takeback,
        IrregularityKind::RevisedMove,
        IrregularityKind::ThreadLost,
        IrregularityKind::RecoveredFromMemory,
        IrregularityKind::RecoveredBySearch,
    ];

    /// The stored name (`displaced`, `illegal_move`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            IrregularityKind::Displaced => "displaced",
            IrregularityKind::IllegalMove => "illegal_move",
            IrregularityKind::ClockWithoutMove => "clock_without_move",
            IrregularityKind::WrongStartPosition => "wrong_start_position",
            IrregularityKind::BoardRotated => "board_rotated",
            IrregularityKind::IllegalPosition => "illegal_position",
            IrregularityKind::ClockMisSet => "clock_mis_set",
            IrregularityKind::Takeback => "takeback",
            IrregularityKind::RevisedMove => "revised_move",
            IrregularityKind::ThreadLost => "thread_lost",
            IrregularityKind::RecoveredFromMemory => "recovered_from_memory",
            IrregularityKind::RecoveredBySearch => "recovered_by_search",
        }
    }

    /// Whether this is the tracker's own correction (a takeback, a revised move), kept for the
    /// audit trail; every other kind is shown by the board or clock and numbered by `id` within
    /// a game.
    pub fn is_audit_trail(self) -> bool {
        matches!(
            self,
            IrregularityKind::Takeback
                | IrregularityKind::RevisedMove
                | IrregularityKind::RecoveredFromMemory
                | IrregularityKind::RecoveredBySearch
        )
    }

    /// Whether the board never holds it open (a press without a move, a board turned round, a
    /// clock mis-set): no resolution is ever recorded for it, and it is over once play went on.
    pub fn is_instant(self) -> bool {
        matches!(
            self,
            IrregularityKind::ClockWithoutMove
                | IrregularityKind::BoardRotated
                | IrregularityKind::ClockMisSet
        )
    }

    /// The kind stored as `s`, if any.
    pub fn from_str_opt(s: &str) -> Option<IrregularityKind> {
        IrregularityKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}
