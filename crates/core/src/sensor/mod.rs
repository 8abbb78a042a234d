//! Sensor state: folds decoded frames into the board as the sensors see it.
//!
//! Flow: a chessboard's position ([`chess::ChessSensor`]: a whole position replaces all 64
//! squares, DGT's `FieldUpdate` changes one) keeps an incremental key for each orientation so
//! the tracker can compare readings in O(1); a Millennium ChessLink board ([`chesslink`]) reports
//! the whole position at every change, a Chessnut board ([`chessnut`]) about every 200 ms, a
//! Certabo board ([`certabo`]) its chip ids several times a second, read through the board's
//! calibration, an iChessOne board ([`ichessone`]) the whole position at every change. A board
//! turned
//! round (black at the connector side) reads square `i` as `i ^ 63` (dgt-notes 1.6). The togyz
//! korgool pit board (`tgz`) works the same way over 20 location counts and two tuz markers.

pub mod certabo;
pub mod chess;
pub mod chesslink;
pub mod chessnut;
pub mod dgt;
pub mod ichessone;
pub mod tgz;

/// Both clocks as a game clock reports them, seen from the front (a DGT clock's BWTIME, read
/// in `dgt`; the pit board's clock speaks the same frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockReading {
    pub left_ms: u64,
    pub right_ms: u64,
    /// A clock is running.
    pub running: bool,
    /// The lever is high on the right: the right-hand clock runs (the left player pressed).
    pub lever_right_high: bool,
    /// The clock shows the left (right) player's flag: fallen, or indicated.
    pub left_flag: bool,
    pub right_flag: bool,
}

use serde::{Deserialize, Serialize};

/// How the board lies relative to its numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Orientation {
    /// White on the side of square 63 (h1), the connector on White's left.
    #[default]
    Normal,
    /// The board turned round: square `i` of the numbering is square `i ^ 63` of the game.
    Rotated,
    /// The board turned a quarter, so that the pieces stand along its files: file `f`, rank `r`
    /// of the numbering is file `r`, rank `7 - f` of the game. Against Article 2.1 (h1 is not a
    /// light square on White's right): the game goes on and the arbiter is told (7.2.2).
    QuarterLeft,
    /// The other quarter turn: file `f`, rank `r` of the numbering is file `7 - r`, rank `f`.
    QuarterRight,
}

impl Orientation {
    pub fn as_str(self) -> &'static str {
        match self {
            Orientation::Normal => "normal",
            Orientation::Rotated => "rotated",
            Orientation::QuarterLeft => "quarter_left",
            Orientation::QuarterRight => "quarter_right",
        }
    }

    pub fn from_str_opt(s: &str) -> Option<Orientation> {
        match s {
            "normal" => Some(Orientation::Normal),
            "rotated" => Some(Orientation::Rotated),
            "quarter_left" => Some(Orientation::QuarterLeft),
            "quarter_right" => Some(Orientation::QuarterRight),
            _ => None,
        }
    }
}

/// What the tracker asks of a sensor state: a cheap key and, on a key hit, the reading itself,
/// in either orientation.
pub trait Sensed<R> {
    fn key(&self, o: Orientation) -> u64;
    fn reading(&self, o: Orientation) -> R;
    /// Whether the whole board has been read (a dump since the last reset).
    fn is_known(&self) -> bool;
}

impl Sensed<crate::game::chess::ChessReading> for chess::ChessSensor {
    #[inline]
    fn key(&self, o: Orientation) -> u64 {
        chess::ChessSensor::key(self, o)
    }

    fn reading(&self, o: Orientation) -> crate::game::chess::ChessReading {
        chess::ChessSensor::reading(self, o)
    }

    fn is_known(&self) -> bool {
        chess::ChessSensor::is_known(self)
    }
}

impl Sensed<crate::game::togyz::TogyzReading> for tgz::TgzBoardState {
    #[inline]
    fn key(&self, o: Orientation) -> u64 {
        tgz::TgzBoardState::key(self, o)
    }

    fn reading(&self, o: Orientation) -> crate::game::togyz::TogyzReading {
        tgz::TgzBoardState::reading(self, o)
    }

    fn is_known(&self) -> bool {
        tgz::TgzBoardState::is_known(self)
    }
}

impl Orientation {
    /// The other way round.
    pub fn flipped(self) -> Orientation {
        match self {
            Orientation::Normal => Orientation::Rotated,
            Orientation::Rotated => Orientation::Normal,
            Orientation::QuarterLeft => Orientation::QuarterRight,
            Orientation::QuarterRight => Orientation::QuarterLeft,
        }
    }

    /// Whether the board lies as Article 2.1 wants it (h1 a light square on White's right).
    pub fn is_regular(self) -> bool {
        matches!(self, Orientation::Normal | Orientation::Rotated)
    }
}
