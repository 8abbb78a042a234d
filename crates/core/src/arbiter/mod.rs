//! The arbiter's rules: what the FIDE Laws of Chess say about a game, edition by edition.
//!
//! Pure functions and small state machines, no I/O and no clock: the tracker feeds them positions,
//! clock readings and counts, and records what they rule. [`laws`] names the edition and its
//! switches; [`time_control`] parses the configured control and derives the rapid/blitz category;
//! [`articles`] names the article of each irregularity and game end; [`penalty`] is the
//! illegal-move ladder (Article 7); [`clock`] is Article 8.4 time trouble, flag fall and both
//! flags (Article 6); [`draw`] is repetition, the 50/75-move rules and the automatic game ends
//! (Articles 5 and 9); [`referee`] applies all of it to one board's recorded events. Article
//! numbers follow `shared/rules/fide-laws.md`; where that brief marks a detail as resting on one
//! secondary source, the item doc says so ("[U]"). [`togyz`] is the same for a togyz korgool pit
//! board under the Kyrgyz rules; both referees are a [`Judge`] to the pipeline.

pub mod articles;
pub mod clock;
pub mod correction;
pub mod draw;
pub mod laws;
pub mod penalty;
pub mod referee;
pub mod time_control;
pub mod togyz;

pub use articles::{
    Ending, GameEnd, IrregularityKind, article, game_end_article, uscf_article,
    uscf_game_end_article,
};
pub use clock::{
    BothFlags, BothFlagsDecision, TimeTrouble, both_flags, flag_fall, flag_fall_under,
    uscf_no_win_on_time,
};
pub use correction::{CorrectionError, ResultReason};
pub use draw::{Claimable, PositionKey, Repetitions, automatic_end, claimable};
pub use laws::{
    AutoEnd, BothFlagsPolicy, Federation, FivefoldRule, Laws, LawsConfig, LawsError, LawsOverrides,
    Supervision,
};
pub use penalty::{
    Penalty, can_mate, illegal_move_penalty, illegal_move_penalty_article, penalty_ms,
    resignation_draw, uscf_mating_material,
};
pub use referee::{LawsSetup, Referee};
pub use time_control::{Bonus, Category, Period, TimeControl, TimeControlError};

pub use togyz::{TogyzReferee, togyz_article};

use crate::{
    Millis,
    game::GameKind,
    sensor::ClockReading,
    tracker::{Played, RecordedMove, Side, TrackerEvent},
};

/// What applies a game's rules to one board's tracker events: annotates them in place and adds
/// what they cause (game ends, claims, flag falls).
pub trait Judge {
    /// The game it judges, whose positions and moves the tracker hands it ([`Played`]).
    type Game: GameKind;
    /// Continues a game recorded before (after a restart), from its stored moves played from
    /// `start` (its stored start position, as text; `None`: the standard start).
    fn resume(&mut self, start: Option<&str>, moves: &[RecordedMove]);
    /// What the store holds of a resumed game that its moves do not show: the sides whose flag
    /// was reported fallen, and the player of each completed illegal move (a restart neither
    /// reports a flag again nor counts an illegal move anew).
    fn resumed_counts(&mut self, _flags_fallen: &[Side], _illegal_by: &[Side]) {}
    /// The arbiter changed the record of the game in progress to `moves`: the game is played
    /// again from `start`, keeping what the players did that the moves do not show (illegal
    /// moves completed, flags).
    fn rebase(&mut self, start: Option<&str>, moves: &[RecordedMove]) {
        self.resume(start, moves);
    }
    /// Judges one event of the tracker, with what it plays (`Some` beside each event that
    /// [`TrackerEvent::plays`]): pushes it onto `out` with what the Laws say of it (an article,
    /// a ruling, time trouble), followed by what it causes (a game end, a claimable draw).
    fn review(
        &mut self,
        event: TrackerEvent,
        played: Option<Played<Self::Game>>,
        out: &mut Vec<TrackerEvent>,
    );
    /// A clock reading: flags are reported into `out`. `white_on_left`: White's clock is the
    /// left-hand one.
    fn clock(
        &mut self,
        at: Millis,
        reading: &ClockReading,
        white_on_left: bool,
        out: &mut Vec<TrackerEvent>,
    );
    /// What the judge noticed since the last call that is worth a log line (never expected).
    fn take_notices(&mut self) -> Vec<JudgeNotice>;
}

/// Something a judge noticed that is not part of the record, for the edge to log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JudgeNotice {
    /// The game's start position does not read: the judge plays from the standard start.
    StartUnreadable(Option<String>),
    /// A recorded move does not fit the judge's position (the tracker records only legal
    /// moves), or came without what it plays: the judge stops following the game.
    MoveDoesNotFit { ply: u32, mv: String },
}

impl std::fmt::Display for JudgeNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JudgeNotice::StartUnreadable(start) => write!(
                f,
                "referee: the game's start position {start:?} does not read; the standard start"
            ),
            JudgeNotice::MoveDoesNotFit { ply, mv } => write!(
                f,
                "referee: the recorded move {mv} (ply {ply}) does not fit its position"
            ),
        }
    }
}
