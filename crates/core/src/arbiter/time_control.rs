//! Time controls as an event configures them, and what the Laws derive from them.
//!
//! Config form: periods joined by `:`; each period is `[N/]M[+S|dS]`: an optional move quota `N/`,
//! the base time `M` in whole minutes, then an increment `+S` (Fischer, seconds added at each
//! press) or a delay `dS` (seconds that run before the main time each move, unused delay lost:
//! 6.3.2, "simple"/Bronstein delay). Examples: `90+30`, `40/90+30:30+30`, `15+10`, `3+2`, `5d3`,
//! `40/120:60`. Every period but the last needs a quota; a last period with a quota repeats.
//! [`TimeControl::pgn_tag`] gives the PGN `TimeControl` tag in seconds (`40/5400+30:1800+30`;
//! a delay is written `300d3`, the fsmosca/PGN-Standard#13 proposal, as PGN has no delay form).
//! [`TimeControl::category`] is the rapid/blitz appendix definition of each edition.

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

use super::laws::Laws;

/// What each move earns on the clock in a period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bonus {
    None,
    /// Seconds added at each press (cumulative, Fischer).
    Increment(u32),
    /// Seconds that run before the main time at each move; unused delay is lost.
    Delay(u32),
}

/// One period of a time control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Period {
    /// Moves to make in this period; `None`: the rest of the game.
    pub moves: Option<u32>,
    /// Base time added when the period starts, in seconds (configured in whole minutes).
    pub base_secs: u32,
    pub bonus: Bonus,
}

impl Period {
    /// Milliseconds of increment per move (0 for none or a delay).
    pub fn increment_ms(&self) -> u64 {
        match self.bonus {
            Bonus::Increment(s) => u64::from(s) * 1000,
            _ => 0,
        }
    }

    /// Milliseconds of delay per move (0 for none or an increment).
    pub fn delay_ms(&self) -> u64 {
        match self.bonus {
            Bonus::Delay(s) => u64::from(s) * 1000,
            _ => 0,
        }
    }
}

/// A time control: one or more periods.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TimeControl {
    periods: Vec<Period>,
}

/// The rapid/blitz appendices' category of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Standard,
    Rapid,
    Blitz,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Standard => "standard",
            Category::Rapid => "rapid",
            Category::Blitz => "blitz",
        }
    }
}

/// A time control that does not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TimeControlError {
    #[error(
        "invalid time control {text:?}: {reason}; valid forms are like 90+30, 40/90+30:30+30, \
         15+10, 3+2, 5d3, 40/120:60 (minutes, then +increment or d delay in seconds, an optional \
         N/ move quota, periods joined by ':')"
    )]
    Invalid { text: String, reason: String },
}

impl TimeControl {
    /// A time control from its periods, with the same checks as parsing.
    pub fn new(periods: Vec<Period>) -> Result<TimeControl, TimeControlError> {
        let tc = TimeControl { periods };
        match check(&tc.periods) {
            Ok(()) => Ok(tc),
            Err(reason) => Err(TimeControlError::Invalid {
                text: tc.render(|p| (p.base_secs / 60).to_string()),
                reason,
            }),
        }
    }

    pub fn periods(&self) -> &[Period] {
        &self.periods
    }

    /// The period (counted from 0) in force for a player's `move_number` (1-based; 0 is taken as
    /// 1). A last period with a quota repeats, so the count can pass the number of periods.
    pub fn period_of(&self, move_number: u32) -> usize {
        let m = move_number.max(1);
        let mut first = 1u32;
        let last = self.periods.len() - 1;
        for (i, p) in self.periods.iter().enumerate() {
            match p.moves {
                None => return i,
                Some(q) if i < last => {
                    if m < first.saturating_add(q) {
                        return i;
                    }
                    first = first.saturating_add(q);
                }
                Some(q) => return i + ((m - first) / q) as usize,
            }
        }
        last
    }

    /// The rules of period `index` (as counted by [`TimeControl::period_of`]).
    pub fn period(&self, index: usize) -> &Period {
        &self.periods[index.min(self.periods.len() - 1)]
    }

    /// Whether period `index` is the last, in which all remaining moves must be made.
    pub fn is_last_period(&self, index: usize) -> bool {
        index + 1 >= self.periods.len() && self.periods[self.periods.len() - 1].moves.is_none()
    }

    /// Milliseconds the press of a player's `move_number` adds to his clock: the period's
    /// increment, plus the next period's base when this move completes the quota.
    pub fn added_at_press_ms(&self, move_number: u32) -> u64 {
        let m = move_number.max(1);
        let index = self.period_of(m);
        let mut added = self.period(index).increment_ms();
        if self.period_of(m + 1) != index {
            added += u64::from(self.period(index + 1).base_secs) * 1000;
        }
        added
    }

    /// Each player's time for 60 moves, in milliseconds: the bases of the periods that start by
    /// move 60, plus each of those moves' increment or delay (the appendices' "base + 60 ×
    /// increment"; a delay is counted like an increment, as USCF does).
    pub fn time_for_60_moves_ms(&self) -> u64 {
        let mut total = u64::from(self.periods[0].base_secs) * 1000;
        for m in 1..=60u32 {
            let index = self.period_of(m);
            let p = self.period(index);
            total += p.increment_ms() + p.delay_ms();
            if m < 60 && self.period_of(m + 1) != index {
                total += u64::from(self.period(index + 1).base_secs) * 1000;
            }
        }
        total
    }

    /// The category under `laws`. 2001/2009: blitz under 15 minutes, rapid from 15 to under 60;
    /// 2014 and later: blitz 10 minutes or less, rapid over 10 and under 60; standard from 60.
    pub fn category(&self, laws: Laws) -> Category {
        let t = self.time_for_60_moves_ms();
        let min = 60 * 1000;
        let blitz = if laws >= Laws::Fide2014 {
            t <= 10 * min
        } else {
            t < 15 * min
        };
        if blitz {
            Category::Blitz
        } else if t < 60 * min {
            Category::Rapid
        } else {
            Category::Standard
        }
    }

    /// The US Chess category (the brief's section 6): regular from 30 minutes, quick over 10 and
    /// under 30, blitz up to 10 (5 to 10 is ratable blitz; below 5 is counted as blitz here),
    /// counting the base time plus 60 times the delay or increment, as for FIDE.
    pub fn uscf_category(&self) -> Category {
        let t = self.time_for_60_moves_ms();
        let min = 60 * 1000;
        if t <= 10 * min {
            Category::Blitz
        } else if t < 30 * min {
            Category::Rapid
        } else {
            Category::Standard
        }
    }

    /// The PGN `TimeControl` tag: seconds, `N/` quotas, `+inc`, periods joined by `:`.
    pub fn pgn_tag(&self) -> String {
        self.render(|p| p.base_secs.to_string())
    }

    /// The `TimeControl` tag as Lichess reads it (scalachess `TournamentClock.parse`, which is
    /// not the PGN standard): a base of 180 or less is minutes, above is seconds, `+S` the
    /// increment, and nothing else reads. So: the first period only (a multi-period control
    /// gives Lichess its start clock and increment), in minutes when they are whole and at most
    /// 180, else in seconds when that is above 180; `None` when no form reads right (a delay, or
    /// a base under 3 minutes that is not whole minutes): without the tag, Lichess uses the
    /// broadcast's own time control.
    pub fn lichess_tag(&self) -> Option<String> {
        let first = self.periods.first()?;
        let increment = match first.bonus {
            Bonus::None => 0,
            Bonus::Increment(s) => s,
            Bonus::Delay(_) => return None,
        };
        let base = first.base_secs;
        if base % 60 == 0 && base / 60 <= 180 {
            Some(format!("{}+{increment}", base / 60))
        } else if base > 180 {
            Some(format!("{base}+{increment}"))
        } else {
            None
        }
    }

    fn render(&self, base: impl Fn(&Period) -> String) -> String {
        let mut out = String::new();
        for (i, p) in self.periods.iter().enumerate() {
            if i > 0 {
                out.push(':');
            }
            if let Some(q) = p.moves {
                out.push_str(&format!("{q}/"));
            }
            out.push_str(&base(p));
            match p.bonus {
                Bonus::None => {}
                Bonus::Increment(s) => out.push_str(&format!("+{s}")),
                Bonus::Delay(s) => out.push_str(&format!("d{s}")),
            }
        }
        out
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(|p| (p.base_secs / 60).to_string()))
    }
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    fn from_str(text: &str) -> Result<TimeControl, TimeControlError> {
        let invalid = |reason: String| TimeControlError::Invalid {
            text: text.to_string(),
            reason,
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(invalid("it is empty".into()));
        }
        let mut periods = Vec::new();
        for part in trimmed.split(':') {
            periods.push(parse_period(part.trim()).map_err(&invalid)?);
        }
        check(&periods).map_err(invalid)?;
        Ok(TimeControl { periods })
    }
}

fn check(periods: &[Period]) -> Result<(), String> {
    if periods.is_empty() {
        return Err("no period".into());
    }
    for (i, p) in periods.iter().enumerate() {
        if p.moves == Some(0) {
            return Err(format!("period {} has a quota of 0 moves", i + 1));
        }
        if i + 1 < periods.len() && p.moves.is_none() {
            return Err(format!(
                "period {} has no move quota but is not the last",
                i + 1
            ));
        }
        if i == 0 && p.base_secs == 0 && p.bonus == Bonus::None {
            return Err("the first period gives no time at all".into());
        }
    }
    Ok(())
}

fn parse_period(s: &str) -> Result<Period, String> {
    let (moves, rest) = match s.split_once('/') {
        Some((q, rest)) => (Some(number(q, "move quota", s)?), rest),
        None => (None, s),
    };
    let (base, bonus) = if let Some((b, inc)) = rest.split_once('+') {
        (b, Bonus::Increment(number(inc, "increment", s)?))
    } else if let Some((b, d)) = rest.split_once('d') {
        (b, Bonus::Delay(number(d, "delay", s)?))
    } else {
        (rest, Bonus::None)
    };
    let minutes = number(base, "base minutes", s)?;
    let base_secs = minutes
        .checked_mul(60)
        .ok_or_else(|| format!("{minutes} minutes is too long"))?;
    Ok(Period {
        moves,
        base_secs,
        bonus,
    })
}

fn number(digits: &str, what: &str, period: &str) -> Result<u32, String> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{what} {digits:?} in {period:?} is not a whole number"
        ));
    }
    digits
        .parse()
        .map_err(|_| format!("{what} {digits:?} in {period:?} is too large"))
}

impl Serialize for TimeControl {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TimeControl {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TimeControl, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tc(s: &str) -> TimeControl {
        s.parse().unwrap()
    }

    /// What scalachess's non-strict `TournamentClock.parse` makes of a tag: seconds of base
    /// and increment (written from its documented rule, to check ours against).
    fn lichess_reads(tag: &str) -> Option<(u32, u32)> {
        let (a, b) = tag.split_once('+').unwrap_or((tag, "0"));
        let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
        Some((if a > 180 { a } else { a * 60 }, b))
    }

    #[test]
    fn lichess_reads_the_first_period_right_or_gets_no_tag() {
        for (text, want) in [
            ("3+2", Some((180, 2))),
            ("1+0", Some((60, 0))),
            ("90+30", Some((5400, 30))),
            ("180+0", Some((10_800, 0))),
            ("240+30", Some((14_400, 30))),
            ("40/90+30:30+30", Some((5400, 30))),
            ("40/120:60", Some((7200, 0))),
            ("5d3", None),
        ] {
            let t = tc(text);
            let tag = t.lichess_tag();
            assert_eq!(
                tag.as_deref().and_then(lichess_reads),
                want,
                "{text}: {tag:?}"
            );
            // The standard tag is what Lichess misreads for a blitz base.
            if text == "3+2" {
                assert_eq!(lichess_reads(&t.pgn_tag()), Some((10_800, 2)));
            }
        }
    }

    #[test]
    fn config_forms_round_trip_and_give_pgn_tags() {
        for (text, pgn) in [
            ("90+30", "5400+30"),
            ("40/90+30:30+30", "40/5400+30:1800+30"),
            ("15+10", "900+10"),
            ("3+2", "180+2"),
            ("5d3", "300d3"),
            ("40/120:60", "40/7200:3600"),
            ("90", "5400"),
            ("40/120:20/60:30", "40/7200:20/3600:1800"),
        ] {
            let t = tc(text);
            assert_eq!(t.to_string(), text);
            assert_eq!(t.pgn_tag(), pgn);
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(serde_json::from_str::<TimeControl>(&json).unwrap(), t);
        }
        assert_eq!(tc(" 40/90+30 : 30+30 ").to_string(), "40/90+30:30+30");
    }

    #[test]
    fn bad_forms_name_the_text_and_the_valid_forms() {
        for (text, needle) in [
            ("", "empty"),
            ("90:30", "no move quota"),
            ("ninety", "not a whole number"),
            ("90+", "increment"),
            ("0/90", "quota of 0"),
            ("0", "no time"),
            ("40/90+30:", "base minutes"),
            ("90+30s", "increment"),
            ("99999999999", "too large"),
        ] {
            let msg = text.parse::<TimeControl>().unwrap_err().to_string();
            assert!(msg.contains(&format!("{text:?}")), "{msg}");
            assert!(msg.contains(needle), "{text}: {msg}");
            assert!(msg.contains("40/90+30:30+30"), "{msg}");
        }
        assert!(TimeControl::new(Vec::new()).is_err());
        let open_first = Period {
            moves: None,
            base_secs: 5400,
            bonus: Bonus::None,
        };
        let msg = TimeControl::new(vec![open_first, open_first])
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("\"90:90\"") && msg.contains("no move quota"),
            "{msg}"
        );
    }

    #[test]
    fn periods_follow_the_move_quotas() {
        let t = tc("40/90+30:30+30");
        assert_eq!(t.period_of(1), 0);
        assert_eq!(t.period_of(40), 0);
        assert_eq!(t.period_of(41), 1);
        assert_eq!(t.period_of(200), 1);
        assert!(!t.is_last_period(0));
        assert!(t.is_last_period(1));
        // The 40th press adds the increment and the second period's 30 minutes.
        assert_eq!(t.added_at_press_ms(39), 30_000);
        assert_eq!(t.added_at_press_ms(40), 30_000 + 1_800_000);
        assert_eq!(t.added_at_press_ms(41), 30_000);

        let repeating = tc("40/120");
        assert_eq!(repeating.period_of(40), 0);
        assert_eq!(repeating.period_of(41), 1);
        assert_eq!(repeating.period_of(81), 2);
        assert_eq!(repeating.period(2).base_secs, 7200);
        assert!(!repeating.is_last_period(5));
    }

    #[test]
    fn time_for_60_moves_counts_bases_and_increments() {
        assert_eq!(tc("90+30").time_for_60_moves_ms(), (90 + 30) * 60_000);
        assert_eq!(
            tc("40/90+30:30+30").time_for_60_moves_ms(),
            (90 + 30 + 30) * 60_000
        );
        assert_eq!(tc("3+2").time_for_60_moves_ms(), 5 * 60_000);
        assert_eq!(tc("5d3").time_for_60_moves_ms(), 8 * 60_000);
    }
}
