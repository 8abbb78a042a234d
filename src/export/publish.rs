//! What the public sees of a game, apart from what the arbiter sees: the broadcast's delay, its
//! comments, its clocks between moves, its identity and its slices. Pure: time is an argument.
//!
//! Flow: a public output (round and game PGN, the public page and its events, folders, the
//! Lichess push) takes a [`Publication`]: with a delay it reads each game as it stood
//! [`Publication::cutoff`] ago from the store (`Store::round_games_as_of`), then renders it with
//! [`PgnStyle::public`]: moves, clocks (`[%clk]`, and `WhiteClock`/`BlackClock` at that moment,
//! [`clocks_at`]) and results; irregularities and the arbiter's notes only if the venue says so.
//! [`BoardRange`] picks a slice of a round by board number (`1-64,101-120`), as Lichess rounds
//! of at most 100 games need.

use std::{collections::HashMap, fmt, str::FromStr};

use crate::{Millis, store::GameRecord};

/// The longest broadcast delay a venue may set (issue 17: 0 to 60 minutes).
pub const MAX_DELAY_MS: u64 = 60 * 60_000;

/// How many games a slice holds unless configured: Lichess takes at most 100 per round.
pub const DEFAULT_SLICE: usize = 64;

/// A delay as a venue writes it: `"15m"`, `"90s"`, `"1h"`, `"0"`; at most [`MAX_DELAY_MS`].
pub fn parse_delay(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, unit_ms) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (t, 1000),
        Some((i, _)) => {
            let unit = match t[i..].trim() {
                "s" | "sec" => 1000,
                "m" | "min" => 60_000,
                "h" => 3_600_000,
                _ => {
                    return Err(format!(
                        "{text:?} is not a delay; write e.g. \"15m\", \"90s\" or \"0\""
                    ));
                }
            };
            (&t[..i], unit)
        }
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a delay; write e.g. \"15m\", \"90s\" or \"0\""))?;
    let ms = n.saturating_mul(unit_ms);
    if ms > MAX_DELAY_MS {
        return Err(format!("delay {text:?} is longer than 60 minutes"));
    }
    Ok(ms)
}

/// How public outputs publish the games.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Publication {
    /// Every public output shows each game as it stood this long ago.
    pub delay_ms: u64,
    /// Irregularities and the arbiter's decisions as comments (`[relay] public_comments`).
    pub comments: bool,
    pub clk: ClockFormat,
}

impl Publication {
    /// The moment a public output shows at `now_ms`: `None` without a delay (now, as recorded).
    pub fn cutoff(&self, now_ms: Millis) -> Option<Millis> {
        (self.delay_ms > 0).then(|| now_ms.saturating_sub(self.delay_ms))
    }

    /// The PGN style of a public output at `now_ms`: with a delay, the clocks at the moment it
    /// shows ([`clocks_at`]); live, the clocks the boards show now (`live`, by board name; a
    /// board not in it shows the clocks of its last move).
    pub fn style<'a>(&self, now_ms: Millis, live: &'a HashMap<String, (u64, u64)>) -> PgnStyle<'a> {
        PgnStyle {
            clk: self.clk,
            internal: self.comments,
            clocks: match self.cutoff(now_ms) {
                Some(at) => Clocks::At(at),
                None => Clocks::Live(live),
            },
            time_control: TimeControlTag::Standard,
        }
    }

    /// The PGN style of the Lichess push: the public comments, clocks fixed at the last move
    /// shown, the time control as Lichess reads it.
    pub fn lichess_style(&self) -> PgnStyle<'static> {
        PgnStyle {
            clk: self.clk,
            internal: self.comments,
            clocks: Clocks::LastMove,
            time_control: TimeControlTag::Lichess,
        }
    }
}

/// Where the `WhiteClock`/`BlackClock` tags come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clocks<'a> {
    /// No clock tags.
    Off,
    /// The clocks at a past moment, from the stored moves ([`clocks_at`]).
    At(Millis),
    /// The clocks the boards show now, by board name; else the last move's.
    Live(&'a HashMap<String, (u64, u64)>),
    /// The clocks as they stood after the last move shown, not running: a body that changes
    /// with the moves only (the Lichess push; Lichess runs the clock itself from `[%clk]`).
    LastMove,
}

/// Which reader the `TimeControl` tag is written for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeControlTag {
    /// The PGN standard: seconds (`180+2`, `40/5400+30:1800+30`).
    #[default]
    Standard,
    /// Lichess, which reads a base of 180 or less as minutes and one period only
    /// ([`TimeControl::lichess_tag`](crate::arbiter::TimeControl::lichess_tag)).
    Lichess,
}

/// How a game is written as PGN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PgnStyle<'a> {
    pub clk: ClockFormat,
    /// Irregularities and the arbiter's decisions as comments (the arbiter's exports, always).
    pub internal: bool,
    /// `WhiteClock`/`BlackClock` tags.
    pub clocks: Clocks<'a>,
    /// The `TimeControl` tag's form.
    pub time_control: TimeControlTag,
}

impl PgnStyle<'_> {
    /// The arbiter's PGN: every comment, no clock tags.
    pub fn internal(clk: ClockFormat) -> PgnStyle<'static> {
        PgnStyle {
            clk,
            internal: true,
            clocks: Clocks::Off,
            time_control: TimeControlTag::Standard,
        }
    }

    /// The arbiter's PGN with clocks as `[%clk h:mm:ss]`: [`PgnStyle::internal`] with the
    /// default clock format.
    pub fn arbiter() -> PgnStyle<'static> {
        PgnStyle::internal(ClockFormat::default())
    }

    /// Both clocks for `game`'s `WhiteClock`/`BlackClock` tags, if any.
    pub fn clocks_of(&self, game: &GameRecord) -> Option<(u64, u64)> {
        match self.clocks {
            Clocks::Off => None,
            Clocks::At(at) => clocks_at(game, at),
            Clocks::Live(live) => live
                .get(&game.board_name)
                .copied()
                .filter(|_| game.ended_at_ms.is_none())
                .or_else(|| clocks_at(game, game.moves.last()?.at_ms)),
            Clocks::LastMove => clocks_at(game, game.moves.last()?.at_ms),
        }
    }
}

/// Both clocks (white, black) at `at_ms`, from the clocks stored with the moves: after the last
/// move made by then, the side to move's clock has run since that move, unless the game is
/// over; `None` before any clock was read.
pub fn clocks_at(game: &GameRecord, at_ms: Millis) -> Option<(u64, u64)> {
    let moves = || game.moves.iter().filter(|m| m.at_ms <= at_ms);
    let last = |white: bool| {
        moves().rev().find_map(|m| {
            if white {
                m.clock_white_ms
            } else {
                m.clock_black_ms
            }
        })
    };
    let (mut white, mut black) = (last(true), last(false));
    if white.is_none() && black.is_none() {
        return None;
    }
    let over = game.result != "*" || game.ended_at_ms.is_some_and(|t| t <= at_ms);
    if let Some(m) = moves().next_back().filter(|_| !over) {
        let ran = at_ms.saturating_sub(m.at_ms);
        // White moved last (odd ply): black's clock runs.
        let running = if m.ply % 2 == 1 {
            &mut black
        } else {
            &mut white
        };
        if let Some(ms) = running.as_mut() {
            *ms = ms.saturating_sub(ran);
        }
    }
    Some((white.unwrap_or(0), black.unwrap_or(0)))
}

/// The game's identity for a broadcast, the same across corrections, takebacks, restarts and
/// a game begun again on the same board: `r<round>b<board>` when both are known, else
/// `g<store id>`.
pub fn game_identity(game: &GameRecord) -> String {
    match (game.round, game.board_no) {
        (Some(r), Some(b)) => format!("r{r}b{b}"),
        _ => format!("g{}", game.id.0),
    }
}

/// `(UTCDate, UTCTime)` of a Unix time in ms: `YYYY.MM.DD`, `HH:MM:SS`.
pub fn utc_date_time(ms: Millis) -> (String, String) {
    let s = ms / 1000;
    let days = s / 86_400;
    let secs = s % 86_400;
    // Days to civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        format!("{y:04}.{m:02}.{d:02}"),
        format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60),
    )
}

/// Board numbers, as ranges: `1-64`, `1-4,11-15`, `7`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardRange(Vec<(u32, u32)>);

/// A board range that does not read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a list of board numbers and ranges (e.g. \"1-64\" or \"1-4,11-15\")")]
pub struct BoardRangeError(pub String);

impl BoardRange {
    pub fn contains(&self, board: u32) -> bool {
        self.0.iter().any(|&(a, b)| (a..=b).contains(&board))
    }

    /// The games on boards in the range (a game without a board number is in no range).
    pub fn select<'a>(&self, games: &[&'a GameRecord]) -> Vec<&'a GameRecord> {
        games
            .iter()
            .filter(|g| g.board_no.is_some_and(|b| self.contains(b)))
            .copied()
            .collect()
    }
}

impl FromStr for BoardRange {
    type Err = BoardRangeError;

    fn from_str(s: &str) -> Result<BoardRange, BoardRangeError> {
        let bad = || BoardRangeError(s.to_owned());
        let mut out = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let (a, b): (u32, u32) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
            if a == 0 || b < a {
                return Err(bad());
            }
            out.push((a, b));
        }
        Ok(BoardRange(out))
    }
}

impl fmt::Display for BoardRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (a, b)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if a == b {
                write!(f, "{a}")?;
            } else {
                write!(f, "{a}-{b}")?;
            }
        }
        Ok(())
    }
}

/// How `[%clk]` writes a clock (the brief's `clkFormat`): `h:mm:ss`, the PGN clock command as
/// Lichess and most readers write it (the default), or `hh:mm:ss` with two-digit hours, as DGT
/// LiveChess writes it (`01:59:00`). Both are read by Lichess broadcasts (relay notes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum ClockFormat {
    #[default]
    #[value(name = "h:mm:ss")]
    HMmSs,
    #[value(name = "hh:mm:ss")]
    HhMmSs,
}

impl ClockFormat {
    /// Every format, as the config names them.
    pub const ALL: [ClockFormat; 2] = [ClockFormat::HMmSs, ClockFormat::HhMmSs];

    /// The config name: `"h:mm:ss"` or `"hh:mm:ss"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClockFormat::HMmSs => "h:mm:ss",
            ClockFormat::HhMmSs => "hh:mm:ss",
        }
    }

    /// A clock reading of `ms` milliseconds, whole seconds rounded down.
    pub fn format(self, ms: u64) -> String {
        let s = ms / 1000;
        let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
        match self {
            ClockFormat::HMmSs => format!("{h}:{m:02}:{s:02}"),
            ClockFormat::HhMmSs => format!("{h:02}:{m:02}:{s:02}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_ranges_read_as_lichess_writes_slices() {
        let r: BoardRange = "1-4, 11-15,20".parse().unwrap();
        assert!(r.contains(1) && r.contains(4) && r.contains(11) && r.contains(20));
        assert!(!r.contains(5) && !r.contains(16) && !r.contains(0));
        assert_eq!(r.to_string(), "1-4,11-15,20");
        for bad in ["", "0-3", "5-2", "a", "1-", "1,,2"] {
            assert!(bad.parse::<BoardRange>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn utc_date_and_time_of_known_instants() {
        assert_eq!(
            utc_date_time(0),
            ("1970.01.01".to_owned(), "00:00:00".to_owned())
        );
        // 2024-02-29T23:59:59Z
        assert_eq!(
            utc_date_time(1_709_251_199_000),
            ("2024.02.29".to_owned(), "23:59:59".to_owned())
        );
    }

    #[test]
    fn delays_read_in_seconds_minutes_hours() {
        assert_eq!(parse_delay("15m"), Ok(900_000));
        assert_eq!(parse_delay("90s"), Ok(90_000));
        assert_eq!(parse_delay("1h"), Ok(3_600_000));
        assert_eq!(parse_delay("0"), Ok(0));
        assert_eq!(parse_delay("4"), Ok(4000));
        for bad in ["61m", "2h", "m", "-5m", "15 minutes", ""] {
            assert!(parse_delay(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_delay_moves_the_moment_back() {
        let p = Publication {
            delay_ms: 15 * 60_000,
            ..Publication::default()
        };
        assert_eq!(p.cutoff(1_000_000_000), Some(1_000_000_000 - 900_000));
        assert_eq!(Publication::default().cutoff(5), None);
    }
}
