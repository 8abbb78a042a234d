//! Togyz korgool: the rules as a pure module, shaped like `shakmaty` (a position, its legal moves,
//! playing a move, game end), after the Kyrgyz federation's rules (`shared/rules/togyz-korgool.md`,
//! article numbers `[KG n.m]`), with a [`Rules`] switch for the Kazakh differences (section 8).
//!
//! Flow: an unchecked [`Board`] (what the sensors see: 18 pit counts, 2 stores, tuz marks) becomes
//! a [`Position`] through [`Position::from_board`]; [`Position::legal_moves`] lists the sowings,
//! [`Position::play`] makes one (and [`Position::play_with_info`] says what it captured);
//! [`Position::outcome`] says whether the game is over by the rules (82, 81:81, atsyrau), and
//! [`Position::flag_fall`] / [`Position::resign`] score what the board cannot show.
//! [`Repetitions`] records repeated positions as possible draw claims for the arbiter ([KG 3.7]).
//! [`notation`] reads and writes moves (`76`, `45X`), results (`1–0/62`) and PGN-like records;
//! [`kind`] is the [`crate::game::GameKind`] the tracker follows a pit board with.

pub mod kind;
pub mod notation;
mod position;
mod repetition;

pub use kind::{TogyzGame, TogyzReading};
pub use position::{
    Board, FlagRule, GameResult, IllegalMove, Move, MoveList, PITS, Position, ResultFormat, Rules,
    SetupError, Side, Sowing, TOTAL, Termination, WIN, perft,
};
pub use repetition::{PossibleDraw, Repetitions};
