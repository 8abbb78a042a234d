//! The clock rules: Article 8.4 time trouble, a flag fall (6.9) and both flags down.
//!
//! [`TimeTrouble`] is fed each completed move with the mover's clock after the press and says
//! whether that move falls in the 8.4 window (the player need not record it). [`flag_fall`] rules
//! a fallen flag on the position; [`both_flags`] says what the configured edition does when both
//! flags are down and the order is unknown. Time is an argument: nothing here reads a clock.

use shakmaty::{Chess, Color, Position};

use super::{
    articles::{Ending, GameEnd},
    laws::{BothFlagsPolicy, Federation, Laws, LawsConfig},
    penalty::can_mate,
    time_control::{Bonus, Category, TimeControl},
};
use crate::{Millis, game::Outcome};

/// Article 8.4, per player and per period: once a player's clock has shown under five minutes in
/// a period whose increment is under 30 seconds, he need not record for the rest of that period.
#[derive(Clone, Debug)]
pub struct TimeTrouble {
    tc: TimeControl,
    threshold_ms: Millis,
    min_increment_ms: Millis,
    delay_counts: bool,
    /// Indexed by `Color as usize`: the period of the last move seen and whether the window is open.
    sides: [(usize, bool); 2],
}

impl TimeTrouble {
    pub fn new(tc: &TimeControl, cfg: &LawsConfig) -> TimeTrouble {
        TimeTrouble {
            tc: tc.clone(),
            threshold_ms: cfg.record_exemption_ms,
            min_increment_ms: cfg.record_exemption_min_increment_ms,
            delay_counts: cfg.record_exemption_delay_counts,
            sides: [(0, false); 2],
        }
    }

    /// Whether `mover`'s move `move_number` (his own count, 1-based) is in time trouble.
    ///
    /// `remaining_ms` is his clock right after the press, including what the press added (the
    /// increment; the next period's base on the last move of a quota); the lowest his clock
    /// showed during the move is that minus [`TimeControl::added_at_press_ms`]. `None` (clock
    /// unknown) keeps the window as it was. A new period closes the window.
    pub fn on_move(
        &mut self,
        mover: Color,
        move_number: u32,
        remaining_ms: Option<Millis>,
    ) -> bool {
        let period = self.tc.period_of(move_number);
        let exempting = self.period_exempts(period);
        let side = &mut self.sides[mover as usize];
        if side.0 != period {
            *side = (period, false);
        }
        if !exempting {
            return false;
        }
        if let Some(after_press) = remaining_ms {
            let lowest = after_press.saturating_sub(self.tc.added_at_press_ms(move_number));
            if lowest < self.threshold_ms {
                side.1 = true;
            }
        }
        side.1
    }

    /// Whether `color`'s window is open (as of his last move).
    pub fn is_on(&self, color: Color) -> bool {
        self.sides[color as usize].1
    }

    /// Whether 8.4 can apply in `period` at all: no increment (or, if so configured, delay) of
    /// the minimum or more.
    fn period_exempts(&self, period: usize) -> bool {
        match self.tc.period(period).bonus {
            Bonus::None => true,
            Bonus::Increment(s) => u64::from(s) * 1000 < self.min_increment_ms,
            Bonus::Delay(s) => !self.delay_counts || u64::from(s) * 1000 < self.min_increment_ms,
        }
    }
}

/// A fallen flag (6.9; 6.10 in 2001): `flagged` loses, unless his opponent cannot mate by any
/// series of legal moves, then it is a draw. "Cannot mate" is the insufficient-material fast
/// path ([`can_mate`]): a lone king, king and minor piece, bishops all on one colour. The full
/// helpmate search is out of scope, so a rare position where the opponent has material but no
/// possible mate is ruled a loss here and left to the arbiter.
///
/// The caller rules the flag only if nothing ended the game first (mate, stalemate, a dead
/// position, 9.6) and, when `LawsConfig::daemon_is_observer` is off, proposes this to the arbiter.
pub fn flag_fall(pos: &Chess, flagged: Color, laws: Laws) -> Ending {
    let opponent = !flagged;
    if can_mate(pos, opponent) {
        Ending::new(win_for(opponent), GameEnd::TimeForfeit, laws)
    } else {
        Ending::new(Outcome::Draw, GameEnd::TimeForfeitCannotMate, laws)
    }
}

/// A fallen flag under `cfg`: FIDE's rule ([`flag_fall`]), or US Chess 14E, where the game is
/// also drawn when the opponent has only a king and one minor piece, or a king and two knights
/// against no pawns ([`uscf_no_win_on_time`]). 14E keeps the win where the opponent has a forced
/// win; no search for one is made here, so the draw is for the director to confirm.
pub fn flag_fall_under(cfg: &LawsConfig, pos: &Chess, flagged: Color) -> Ending {
    let opponent = !flagged;
    match cfg.federation {
        Federation::Fide => flag_fall(pos, flagged, cfg.laws),
        Federation::Uscf if !can_mate(pos, opponent) || uscf_no_win_on_time(pos, opponent) => {
            cfg.ending(Outcome::Draw, GameEnd::TimeForfeitCannotMate)
        }
        Federation::Uscf => cfg.ending(win_for(opponent), GameEnd::TimeForfeit),
    }
}

/// US Chess 14E: `winner` (whose opponent's flag fell) has only a lone king, a king and one
/// bishop or knight, or a king and two knights while the flagged player has no pawns.
pub fn uscf_no_win_on_time(pos: &Chess, winner: Color) -> bool {
    let board = pos.board();
    let mine = board.by_color(winner);
    let others = (mine & !board.kings()).count();
    let knights = (mine & board.knights()).count();
    let bishops = (mine & board.bishops()).count();
    let flagged_has_pawns = (board.by_color(!winner) & board.pawns()).any();
    others == 0
        || (others == 1 && knights + bishops == 1)
        || (others == 2 && knights == 2 && !flagged_has_pawns)
}

/// The result where `color` wins.
pub(super) fn win_for(color: Color) -> Outcome {
    match color {
        Color::White => Outcome::WhiteWins,
        Color::Black => Outcome::BlackWins,
    }
}

/// What happens when both flags are down and which fell first is unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BothFlagsDecision {
    /// The game goes on (the next period's time is added).
    Continue,
    /// The game is drawn.
    Draw,
    /// No rule applies: the arbiter rules (per-side flag timestamps usually show the order).
    Arbiter,
}

/// A [`BothFlagsDecision`] with the article it rests on, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BothFlags {
    pub decision: BothFlagsDecision,
    pub article: Option<&'static str>,
}

/// Both flags down, order unknown, in period `period` of `tc` (as counted by
/// [`TimeControl::period_of`]).
///
/// 2001: continue (6.12), but in a quickplay finish (the last period) a draw (10.3). 2005
/// (6.12) and 2009 (6.11): continue, draw in the last period; 2009 rapid and blitz: draw (A.4d;
/// blitz through B). 2014: where the rule stands is unknown [U], the 2009 rule is assumed.
/// 2017 and later: Guidelines III.3.1, only if the event announced it (policy `Guideline`), only
/// without increment and not in blitz; otherwise the arbiter rules.
pub fn both_flags(cfg: &LawsConfig, tc: &TimeControl, period: usize) -> BothFlags {
    use BothFlagsDecision::*;
    let last = tc.is_last_period(period);
    let category = cfg.category(tc);
    let rule = |decision, article| BothFlags { decision, article };
    match cfg.both_flags {
        BothFlagsPolicy::Arbiter => rule(Arbiter, None),
        BothFlagsPolicy::DrawInLastPeriod => match cfg.laws {
            Laws::Fide2001 if last => rule(Draw, Some("10.3")),
            Laws::Fide2001 => rule(Continue, Some("6.12")),
            Laws::Fide2009 if category != Category::Standard => rule(Draw, Some("A.4d")),
            Laws::Fide2009 if last => rule(Draw, Some("6.11")),
            Laws::Fide2009 => rule(Continue, Some("6.11")),
            _ if last => rule(Draw, None),
            _ => rule(Continue, None),
        },
        BothFlagsPolicy::Guideline => {
            let no_increment = tc.period(period).increment_ms() == 0;
            if !no_increment || category == Category::Blitz {
                rule(Arbiter, None)
            } else if last {
                rule(Draw, Some("III.3.1"))
            } else {
                rule(Continue, Some("III.3.1"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_clock_keeps_the_window() {
        let tc: TimeControl = "90".parse().unwrap();
        let mut tt = TimeTrouble::new(&tc, &LawsConfig::default());
        assert!(!tt.on_move(Color::White, 1, None));
        assert!(tt.on_move(Color::White, 30, Some(200_000)));
        assert!(tt.on_move(Color::White, 31, None));
        assert!(tt.is_on(Color::White));
        assert!(!tt.is_on(Color::Black));
    }
}
