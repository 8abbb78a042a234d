//! The arbiter's rules: what the FIDE Laws of Chess say about a game, edition by edition.
//!
//! Pure functions and small state machines, no I/O and no clock: the tracker feeds them positions,
//! clock readings and counts, and records what they rule. [`laws`] names the edition and its
//! switches; [`time_control`] parses the configured control and derives the rapid/blitz category;
//! [`articles`] names the article of each irregularity and game end; [`penalty`] is the
//! illegal-move ladder (Article 7); [`clock`] is Article 8.4 time trouble, flag fall and both
//! flags (Article 6); [`draw`] is repetition, the 50/75-move rules and the automatic game ends
//! (Articles 5 and 9); [`referee`] applies all of it to one board's recorded events. Article numbers follow `shared/rules/fide-laws.md`; where that brief marks a
//! detail as resting on one secondary source, the item doc says so ("[U]").

pub mod articles;
pub mod clock;
pub mod draw;
pub mod laws;
pub mod penalty;
pub mod referee;
pub mod time_control;

pub use articles::{Ending, GameEnd, IrregularityKind, article, game_end_article};
pub use clock::{BothFlags, BothFlagsDecision, TimeTrouble, both_flags, flag_fall};
pub use draw::{Claimable, PositionKey, Repetitions, automatic_end, claimable};
pub use laws::{
    AutoEnd, BothFlagsPolicy, FivefoldRule, Laws, LawsConfig, LawsError, LawsOverrides, Supervision,
};
pub use penalty::{
    Penalty, can_mate, illegal_move_penalty, illegal_move_penalty_article, penalty_ms,
    resignation_draw,
};
pub use referee::{LawsSetup, Referee};
pub use time_control::{Bonus, Category, Period, TimeControl, TimeControlError};
