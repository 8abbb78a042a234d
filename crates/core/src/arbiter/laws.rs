//! Laws editions and the switches an event can set.
//!
//! [`Laws`] names an edition of the FIDE Laws of Chess (`"fide-2001"` … `"fide-2023"`; the 2017
//! and 2018 texts share `fide-2018`). [`LawsConfig::for_edition`] fills every switch of section 8
//! of `shared/rules/fide-laws.md` with what that edition says; an event overrides single switches
//! through [`LawsOverrides`] (all fields optional, as they come from a config file).
//! [`Federation`] picks whose rules apply: FIDE's (the edition's), or the US Chess preset
//! ([`LawsConfig::preset`]), which changes the switches section 6 of the brief lists and the
//! rules the switches cannot express (categories, the win on time, the blitz illegal move).

use std::{fmt, str::FromStr};

use serde::{Deserialize, Serialize};

/// An edition of the FIDE Laws of Chess, by the year it came into force.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum Laws {
    /// Istanbul 2001 (in force 1 July 2001); the 2005 changes to Article 6 are noted where used.
    #[serde(rename = "fide-2001")]
    Fide2001,
    /// Dresden 2009 (in force 1 July 2009).
    #[serde(rename = "fide-2009")]
    Fide2009,
    /// Tallinn 2014 (in force 1 July 2014); partly reconstructed from secondary sources [U].
    #[serde(rename = "fide-2014")]
    Fide2014,
    /// Goynuk 2017 (in force 1 January 2018).
    #[serde(rename = "fide-2018")]
    Fide2018,
    /// Chennai 2022 (in force 1 January 2023).
    #[default]
    #[serde(rename = "fide-2023")]
    Fide2023,
}

impl Laws {
    /// Every edition, oldest first.
    pub const ALL: [Laws; 5] = [
        Laws::Fide2001,
        Laws::Fide2009,
        Laws::Fide2014,
        Laws::Fide2018,
        Laws::Fide2023,
    ];

    /// The config name: `"fide-2001"` … `"fide-2023"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Laws::Fide2001 => "fide-2001",
            Laws::Fide2009 => "fide-2009",
            Laws::Fide2014 => "fide-2014",
            Laws::Fide2018 => "fide-2018",
            Laws::Fide2023 => "fide-2023",
        }
    }

    /// Whether article numbers are decimal (`7.5.1`, from 2017) rather than lettered (`7.4b`).
    pub fn decimal_articles(self) -> bool {
        self >= Laws::Fide2018
    }
}

impl fmt::Display for Laws {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Laws {
    type Err = LawsError;

    fn from_str(s: &str) -> Result<Laws, LawsError> {
        Laws::ALL
            .into_iter()
            .find(|l| l.as_str() == s.trim())
            .ok_or_else(|| LawsError::UnknownEdition(s.to_string()))
    }
}

/// What can be wrong in a laws setting.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LawsError {
    #[error(
        "unknown laws edition {0:?}: valid are fide-2001, fide-2009, fide-2014, fide-2018, fide-2023"
    )]
    UnknownEdition(String),
}

/// Whether and how fivefold repetition ends the game by itself (Article 9.6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FivefoldRule {
    /// No automatic end (before 1 July 2014).
    None,
    /// 2014 [U]: the position appeared "for at least five consecutive alternate moves by each
    /// player", read here as the same position after each of the last five moves of the player
    /// who just moved, four plies apart (a shuffle repeated without interruption).
    Consecutive,
    /// 2017 and later: the same position appeared at least five times, in any order.
    Any,
}

/// Who ends a game on fivefold repetition or 75 moves (Article 9.6), which the Laws make an
/// automatic draw from 2014: the sensors can be wrong, so an event may want the arbiter to confirm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AutoEnd {
    /// The daemon records the draw and the game ends (the Laws' own rule).
    #[default]
    Must,
    /// The daemon records that 9.6 applies, for the arbiter to declare; recording goes on.
    May,
    /// Nothing is recorded for 9.6 (the threefold and fifty-move claims are still noted).
    Never,
}

/// What to rule when both flags are down and which fell first is unknown (Article 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BothFlagsPolicy {
    /// Continue, but draw in the last period (2001 6.12 with 10.3; 2005 6.12; 2009 6.11;
    /// 2009 rapid A.4d: draw). 2014: where this stands is unknown [U], the same is assumed.
    DrawInLastPeriod,
    /// 2017 and later Guidelines III.3.1, when the event announced them: the same rule, for games
    /// without increment that are not blitz; otherwise the arbiter rules.
    Guideline,
    /// Nothing is decided here: the arbiter rules (per-side flag timestamps show the order).
    Arbiter,
}

/// How closely arbiters watch the rapid or blitz games (the appendices: with full supervision the
/// Competition Rules apply, A.3/B.3 up to 2018, A.4/B.2 in 2023; otherwise the reduced rules of
/// A.4/B.3 up to 2018 and A.5/B.3 in 2023). Standard games are always fully supervised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Supervision {
    /// Enough arbiters (2009: about one per three rapid games, one per blitz game; from 2014
    /// also every game recorded): Article 7 applies as in standard play.
    #[default]
    Full,
    /// Fewer arbiters: an illegal move stands unless the opponent claims it before his next move
    /// (A.4c 2009, A.4.2 2014/2018, A.5.2 2023), and an illegal position after one completed move
    /// is a draw (A.4.4, A.5.4).
    Reduced,
}

impl Supervision {
    /// The config name: `"full"` or `"reduced"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Supervision::Full => "full",
            Supervision::Reduced => "reduced",
        }
    }
}

/// Whose rules the event is played under. US Chess (the brief's section 6, from secondary
/// sources) differs from FIDE in the illegal-move penalty (11D: 2 minutes, no loss ladder; in
/// blitz the opponent may claim the game), fivefold repetition and 75 moves (14K: the director
/// *may* declare them), the win on time (14E: not with a lone king, king and minor piece, or two
/// knights against no pawns), delay counting for the recording duty, and the time-control
/// categories (regular from 30 minutes, quick over 10 and under 30, blitz up to 10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
pub enum Federation {
    /// The FIDE Laws of the configured edition.
    #[default]
    Fide,
    /// The US Chess preset on top of the edition (rules it does not change stay the edition's).
    Uscf,
}

impl Federation {
    /// The config name: `"fide"` or `"uscf"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Federation::Fide => "fide",
            Federation::Uscf => "uscf",
        }
    }

    /// Every federation, as a config file names them.
    pub const ALL: [Federation; 2] = [Federation::Fide, Federation::Uscf];
}

/// The edition plus every switch an event may set; [`LawsConfig::for_edition`] gives the defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LawsConfig {
    pub laws: Laws,
    /// Whose rules: FIDE's, or the US Chess preset ([`LawsConfig::preset`]).
    #[serde(default)]
    pub federation: Federation,
    /// The completed illegal move by one player that loses (3 up to 2009: 7.4b; 2 from 2014:
    /// 7.5b, 7.5.5); `None`: no move ever loses (USCF 11D). Set 1 for the 2009/2014 unsupervised
    /// rapid and blitz rules (A.4c, B.3c, A.4.2), where a claimed illegal move loses at once.
    pub illegal_strikes_to_lose: Option<u32>,
    /// Time added to the opponent for an illegal move in a standard game (7.4b, 7.5b, 7.5.5).
    pub penalty_secs_standard: u32,
    /// The same in rapid (1 minute in 2023: A.3).
    pub penalty_secs_rapid: u32,
    /// The same in blitz (1 minute from 2014: B.2; 2023 B.3 refers to A.3).
    pub penalty_secs_blitz: u32,
    /// Fivefold repetition ends the game (9.6.1): none before 2014.
    pub fivefold: FivefoldRule,
    /// 75 moves without a pawn move or capture end the game (9.6.2): from 2014.
    pub seventy_five_moves: bool,
    /// Article 8.4: below this on the clock a player need not record (5 minutes in all editions).
    pub record_exemption_ms: u64,
    /// Article 8.4: an increment of at least this keeps the recording duty (30 s).
    pub record_exemption_min_increment_ms: u64,
    /// Whether a delay of at least the minimum counts like an increment for 8.4 (not stated by
    /// any edition [U]; default: no, a delay adds nothing to the clock).
    pub record_exemption_delay_counts: bool,
    /// Both flags down, order unknown.
    pub both_flags: BothFlagsPolicy,
    /// Whether a flag fall the daemon sees counts as the arbiter observing it (6.8); default no:
    /// the daemon reports it and the arbiter rules.
    pub daemon_is_observer: bool,
    /// Rapid/blitz: moves by each player after which a wrong set-up, orientation or clock setting
    /// can no longer be claimed (3 in 2009 A.4/B; 10 from 2014: A.4.1, A.5.1).
    pub setup_claim_deadline_moves: u32,
    /// Colours reversed: replay if fewer than this many moves by both were made (7.3 from 2017);
    /// `None`: continue unless the arbiter rules otherwise (7.2 up to 2014).
    pub colours_reversed_limit: Option<u32>,
    /// Rapid and blitz: full or reduced supervision (the appendices' two sets of rules).
    pub supervision: Supervision,
    /// Whether fivefold repetition and 75 moves end the game here or are left to the arbiter.
    pub auto_end_9_6: AutoEnd,
}

impl LawsConfig {
    /// Every switch as the edition sets it.
    pub fn for_edition(laws: Laws) -> LawsConfig {
        let since_2014 = laws >= Laws::Fide2014;
        let since_2018 = laws >= Laws::Fide2018;
        LawsConfig {
            laws,
            federation: Federation::Fide,
            illegal_strikes_to_lose: Some(if since_2014 { 2 } else { 3 }),
            penalty_secs_standard: 120,
            // 2009: 2 minutes in rapid and blitz too; 2001 is taken to be the same [U].
            penalty_secs_rapid: if laws >= Laws::Fide2023 { 60 } else { 120 },
            penalty_secs_blitz: if since_2014 { 60 } else { 120 },
            fivefold: match laws {
                Laws::Fide2001 | Laws::Fide2009 => FivefoldRule::None,
                Laws::Fide2014 => FivefoldRule::Consecutive,
                Laws::Fide2018 | Laws::Fide2023 => FivefoldRule::Any,
            },
            seventy_five_moves: since_2014,
            record_exemption_ms: 5 * 60 * 1000,
            record_exemption_min_increment_ms: 30 * 1000,
            record_exemption_delay_counts: false,
            // From 2017 Guidelines III.3.1 applies only if announced, so the default is the arbiter.
            both_flags: if since_2018 {
                BothFlagsPolicy::Arbiter
            } else {
                BothFlagsPolicy::DrawInLastPeriod
            },
            daemon_is_observer: false,
            setup_claim_deadline_moves: if since_2014 { 10 } else { 3 },
            colours_reversed_limit: since_2018.then_some(10),
            supervision: Supervision::Full,
            auto_end_9_6: AutoEnd::Must,
        }
    }

    /// The switches of `federation` over `laws`: FIDE's are the edition's own
    /// ([`LawsConfig::for_edition`]); the US Chess preset sets a 2-minute penalty in every
    /// category with no loss ladder (11D), fivefold repetition as the 2014 text words it and 75
    /// moves, both left to the director (14K), a delay of 30 s or more keeping the recording duty,
    /// both flags and every flag to the director (only a player calls a flag, 13C1).
    pub fn preset(laws: Laws, federation: Federation) -> LawsConfig {
        let mut c = LawsConfig::for_edition(laws);
        c.federation = federation;
        if federation == Federation::Uscf {
            c.illegal_strikes_to_lose = None;
            c.penalty_secs_standard = 120;
            c.penalty_secs_rapid = 120;
            c.penalty_secs_blitz = 120;
            c.fivefold = FivefoldRule::Consecutive;
            c.seventy_five_moves = true;
            c.auto_end_9_6 = AutoEnd::May;
            c.record_exemption_delay_counts = true;
            c.both_flags = BothFlagsPolicy::Arbiter;
            c.daemon_is_observer = false;
        }
        c
    }

    /// The edition's defaults with the given switches replaced.
    pub fn with_overrides(laws: Laws, o: &LawsOverrides) -> LawsConfig {
        LawsConfig::preset_with_overrides(laws, Federation::Fide, o)
    }

    /// [`LawsConfig::preset`] with the given switches replaced.
    pub fn preset_with_overrides(
        laws: Laws,
        federation: Federation,
        o: &LawsOverrides,
    ) -> LawsConfig {
        let mut c = LawsConfig::preset(laws, federation);
        if let Some(n) = o.illegal_strikes_to_lose {
            c.illegal_strikes_to_lose = (n > 0).then_some(n);
        }
        set(&mut c.penalty_secs_standard, o.penalty_secs_standard);
        set(&mut c.penalty_secs_rapid, o.penalty_secs_rapid);
        set(&mut c.penalty_secs_blitz, o.penalty_secs_blitz);
        set(&mut c.fivefold, o.fivefold);
        set(&mut c.seventy_five_moves, o.seventy_five_moves);
        set(&mut c.record_exemption_ms, o.record_exemption_ms);
        set(
            &mut c.record_exemption_min_increment_ms,
            o.record_exemption_min_increment_ms,
        );
        set(
            &mut c.record_exemption_delay_counts,
            o.record_exemption_delay_counts,
        );
        set(&mut c.both_flags, o.both_flags);
        set(&mut c.daemon_is_observer, o.daemon_is_observer);
        set(
            &mut c.setup_claim_deadline_moves,
            o.setup_claim_deadline_moves,
        );
        if let Some(n) = o.colours_reversed_limit {
            c.colours_reversed_limit = (n > 0).then_some(n);
        }
        set(&mut c.supervision, o.supervision);
        set(&mut c.auto_end_9_6, o.auto_end_9_6);
        c
    }
}

impl Default for LawsConfig {
    fn default() -> LawsConfig {
        LawsConfig::for_edition(Laws::default())
    }
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

/// Switches as a config file gives them: each one absent keeps the edition's value.
/// For the two counts, 0 means "never" (`illegal_strikes_to_lose`, `colours_reversed_limit`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LawsOverrides {
    pub illegal_strikes_to_lose: Option<u32>,
    pub penalty_secs_standard: Option<u32>,
    pub penalty_secs_rapid: Option<u32>,
    pub penalty_secs_blitz: Option<u32>,
    pub fivefold: Option<FivefoldRule>,
    pub seventy_five_moves: Option<bool>,
    pub record_exemption_ms: Option<u64>,
    pub record_exemption_min_increment_ms: Option<u64>,
    pub record_exemption_delay_counts: Option<bool>,
    pub both_flags: Option<BothFlagsPolicy>,
    pub daemon_is_observer: Option<bool>,
    pub setup_claim_deadline_moves: Option<u32>,
    pub colours_reversed_limit: Option<u32>,
    pub supervision: Option<Supervision>,
    pub auto_end_9_6: Option<AutoEnd>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editions_round_trip_through_their_names() {
        for l in Laws::ALL {
            assert_eq!(l.to_string().parse::<Laws>(), Ok(l));
            let json = serde_json::to_string(&l).unwrap();
            assert_eq!(json, format!("\"{}\"", l.as_str()));
            assert_eq!(serde_json::from_str::<Laws>(&json).unwrap(), l);
        }
        assert_eq!(Laws::default(), Laws::Fide2023);
    }

    #[test]
    fn unknown_edition_names_the_valid_ones() {
        let err = "fide-2017".parse::<Laws>().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("\"fide-2017\""), "{msg}");
        for l in Laws::ALL {
            assert!(msg.contains(l.as_str()), "{msg}");
        }
        assert!(serde_json::from_str::<Laws>("\"uscf\"").is_err());
    }

    #[test]
    fn overrides_replace_only_what_they_name() {
        let o: LawsOverrides = serde_json::from_str(
            r#"{"illegal_strikes_to_lose": 0, "fivefold": "consecutive", "penalty_secs_rapid": 90,
                "supervision": "reduced"}"#,
        )
        .unwrap();
        let c = LawsConfig::with_overrides(Laws::Fide2023, &o);
        assert_eq!(c.illegal_strikes_to_lose, None);
        assert_eq!(c.fivefold, FivefoldRule::Consecutive);
        assert_eq!(c.penalty_secs_rapid, 90);
        assert_eq!(c.supervision, Supervision::Reduced);
        let d = LawsConfig::for_edition(Laws::Fide2023);
        assert_eq!(c.penalty_secs_standard, d.penalty_secs_standard);
        assert_eq!(c.both_flags, d.both_flags);
        assert!(serde_json::from_str::<LawsOverrides>(r#"{"fivefold_rule": "any"}"#).is_err());
    }
}
