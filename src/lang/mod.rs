//! The languages the sheets, pages and console speak: English, Russian, Ukrainian, Mongolian,
//! Kyrgyz, Kazakh and Persian, one table of texts each.
//!
//! Flow: a [`Lang`] is chosen by the venue (`[tournament] language`), by a command (`export
//! --lang`) or by a browser (`Accept-Language`, [`Lang::from_accept_language`]); whatever writes
//! words for a person asks it for a text by key ([`Lang::text`]) or for a text with its blanks
//! filled in ([`Lang::fill`]: `{name}` placeholders). The tables are TOML files beside this
//! module (`en.toml`, `ru.toml`, …), built into the binary and read once; their words for the
//! game's own terms (scoresheet, arbiter, draw, resigns, flag, the pieces, the stores and the
//! tuz) are the reference texts' own (`shared/rules/originals`). Every table has every key of
//! the English one, with the same blanks: a unit test fails otherwise, and on any key the code
//! asks for that English lacks. Article numbers, moves, clocks and numbers are never
//! translated; a sheet in `local` notation writes the pieces with the letters its table gives
//! ([`pieces`]: `notation.pieces`, the one key a table may leave empty); dates are written in
//! the language's form and calendar ([`date`]: [`Lang::date`], [`Lang::stored_date`]). What
//! the record itself says (an irregularity's detail, the penalty the Laws provide) comes as
//! phrases ([`crate::phrase`]), worded by each table's `said` section ([`Lang::said`]); English
//! is the record's own words, kept by the store as ever. Pure: no I/O.

use std::{collections::HashMap, fmt, str::FromStr, sync::OnceLock};

use crate::{
    game::Kind,
    phrase::{self, English, Words},
    tracker::Side,
};

pub mod date;
pub mod pieces;
pub mod record;

pub use date::{Calendar, Date, DateError};
pub use pieces::{NoPieceLetters, PieceLetters};

/// A language of the sheets, pages and console.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Lang {
    #[default]
    En,
    Ru,
    Uk,
    Mn,
    Ky,
    Kk,
    Fa,
}

/// The tables, in [`Lang::ALL`]'s order.
const TABLES: [&str; 7] = [
    include_str!("en.toml"),
    include_str!("ru.toml"),
    include_str!("uk.toml"),
    include_str!("mn.toml"),
    include_str!("ky.toml"),
    include_str!("kk.toml"),
    include_str!("fa.toml"),
];

impl Lang {
    pub const ALL: [Lang; 7] = [
        Lang::En,
        Lang::Ru,
        Lang::Uk,
        Lang::Mn,
        Lang::Ky,
        Lang::Kk,
        Lang::Fa,
    ];

    /// Its ISO 639-1 code, as `lang` attributes, `Accept-Language` and the config write it.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ru => "ru",
            Lang::Uk => "uk",
            Lang::Mn => "mn",
            Lang::Ky => "ky",
            Lang::Kk => "kk",
            Lang::Fa => "fa",
        }
    }

    /// The language a tag names (`ru`, `ru-RU`, `FA`), if it is one of ours.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        Lang::ALL.into_iter().find(|l| l.code() == primary)
    }

    /// Whether its text runs right to left (Persian).
    pub fn rtl(self) -> bool {
        self == Lang::Fa
    }

    /// `rtl` or `ltr`, for a `dir` attribute.
    pub fn dir(self) -> &'static str {
        if self.rtl() { "rtl" } else { "ltr" }
    }

    /// The language a browser prefers most among ours (`Accept-Language`, with its `q`
    /// weights; the first listed wins a tie), if any.
    pub fn from_accept_language(header: &str) -> Option<Lang> {
        let mut best: Option<(Lang, f32)> = None;
        for item in header.split(',') {
            let mut parts = item.split(';');
            let Some(lang) = parts.next().and_then(Lang::from_tag) else {
                continue;
            };
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if q > 0.0 && best.is_none_or(|(_, b)| q > b) {
                best = Some((lang, q));
            }
        }
        best.map(|(l, _)| l)
    }

    /// The text of `key` in this language (English if its table lacks it, which a test keeps
    /// from happening; the key itself if English lacks it too).
    pub fn text(self, key: &'static str) -> &'static str {
        let tables = tables();
        tables[self as usize]
            .get(key)
            .or_else(|| tables[Lang::En as usize].get(key))
            .map_or(key, |s| s.as_str())
    }

    /// [`Lang::text`] with each `{name}` replaced by its value in `args`.
    pub fn fill(self, key: &'static str, args: &[(&str, &str)]) -> String {
        let mut out = self.text(key).to_owned();
        for (name, value) in args {
            out = out.replace(&format!("{{{name}}}"), value);
        }
        out
    }

    /// White's and Black's names (togyz korgool's own words for its sides).
    pub fn sides(self, kind: Kind) -> [&'static str; 2] {
        match kind {
            Kind::Chess => [self.text("sheet.white"), self.text("sheet.black")],
            Kind::Togyz => [self.text("togyz.white"), self.text("togyz.black")],
        }
    }

    /// The name of `side` in a game of `kind`.
    pub fn side(self, side: Side, kind: Kind) -> &'static str {
        self.sides(kind)[usize::from(side == Side::Black)]
    }

    /// The side that makes `ply` (1-based), in words.
    pub fn side_of(self, ply: u32, kind: Kind) -> &'static str {
        self.side(Side::of_ply(ply), kind)
    }

    /// "before move 6 (Black)" for the ply an event happened before; "before the game" for
    /// none.
    pub fn before_ply(self, ply: Option<u32>, kind: Kind) -> String {
        match ply {
            Some(p) if p > 0 => self.fill(
                "remark.before_move",
                &[
                    ("move", &p.div_ceil(2).to_string()),
                    ("side", self.side_of(p, kind)),
                ],
            ),
            _ => self.text("remark.before_game").to_owned(),
        }
    }

    /// Its words for the record's phrases (an irregularity's detail, a ruling) in a game of
    /// `kind`.
    pub fn said(self, kind: Kind) -> Said {
        Said { lang: self, kind }
    }

    /// The language's own name, as its switch shows it.
    pub fn name(self) -> &'static str {
        self.text("lang.name")
    }

    /// Its name in English, for what the command line says (`config check`).
    pub fn english_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Ru => "Russian",
            Lang::Uk => "Ukrainian",
            Lang::Mn => "Mongolian",
            Lang::Ky => "Kyrgyz",
            Lang::Kk => "Kazakh",
            Lang::Fa => "Persian",
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl FromStr for Lang {
    type Err = String;

    fn from_str(s: &str) -> Result<Lang, String> {
        match Lang::ALL.into_iter().find(|l| l.code() == s.trim()) {
            Some(l) => Ok(l),
            None => Err(format!(
                "{s:?} is not a language of boardscribe; write one of {}",
                Lang::ALL.map(Lang::code).join(", ")
            )),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Lang {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Lang, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A language's words for phrases ([`crate::phrase`]) and its names for the sides of a game of
/// `kind`. The record's phrases (the keys of [`crate::phrase::ENGLISH`]) are worded by its
/// table's `said` section, English by the record's own words, so that they read exactly as the
/// record stores them; the daemon's own phrases (a refusal's: `refused.*`) are keys of the
/// tables themselves.
#[derive(Clone, Copy, Debug)]
pub struct Said {
    lang: Lang,
    kind: Kind,
}

impl Words for Said {
    fn template(&self, key: &str) -> Option<&str> {
        let tables = tables();
        if English.template(key).is_some() {
            if self.lang == Lang::En {
                return None;
            }
            return tables[self.lang as usize]
                .get(&format!("said.{key}"))
                .map(String::as_str);
        }
        tables[self.lang as usize]
            .get(key)
            .or_else(|| tables[Lang::En as usize].get(key))
            .map(String::as_str)
    }

    fn side(&self, side: Side) -> String {
        match self.lang {
            Lang::En => side.as_str().to_owned(),
            lang => lang.side(side, self.kind).to_owned(),
        }
    }

    /// The machine's local time of day, `14:03:22` (a venue's PC keeps the venue's time); a
    /// moment on a capture's own clock as [`phrase::utc_time`] says it.
    fn time(&self, at_ms: u64) -> String {
        local_time_of_day(at_ms, local_zone())
    }
}

/// `at_ms` as a time of day in `zone`, `14:03:22`; a moment on a capture's own clock (before
/// [`phrase::WALL_CLOCK_MS`]) as [`phrase::utc_time`] says it.
pub fn local_time_of_day(at_ms: u64, zone: &jiff::tz::TimeZone) -> String {
    local_time(at_ms, zone).map_or_else(
        || phrase::utc_time(at_ms),
        |t| t.strftime("%H:%M:%S").to_string(),
    )
}

/// The moment `at_ms` in `zone`, when it is on the epoch's clock; `None` for a stream's own
/// clock (a replayed capture's, from 0: before [`phrase::WALL_CLOCK_MS`]).
pub fn local_time(at_ms: u64, zone: &jiff::tz::TimeZone) -> Option<jiff::ZonedDateTime> {
    i64::try_from(at_ms)
        .ok()
        .filter(|_| at_ms >= phrase::WALL_CLOCK_MS)
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
        .map(|t| t.to_zoned_datetime(zone.clone()))
}

/// The machine's local time zone (`TZ`, else `/etc/localtime`; UTC if neither reads), read
/// once.
pub fn local_zone() -> &'static jiff::tz::TimeZone {
    static ZONE: OnceLock<jiff::tz::TimeZone> = OnceLock::new();
    ZONE.get_or_init(|| jiff::tz::TimeZone::try_system().unwrap_or(jiff::tz::TimeZone::UTC))
}

/// Every table, flattened to `section.key`, read once.
fn tables() -> &'static [HashMap<String, String>; 7] {
    static TABLES_READ: OnceLock<[HashMap<String, String>; 7]> = OnceLock::new();
    TABLES_READ.get_or_init(|| TABLES.map(|text| flatten(text).unwrap_or_default()))
}

/// A table's texts by dotted key; `Err` names what is wrong with it.
fn flatten(text: &str) -> Result<HashMap<String, String>, String> {
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let mut out = HashMap::new();
    let mut stack: Vec<(String, &toml::Table)> = vec![(String::new(), &table)];
    while let Some((prefix, t)) = stack.pop() {
        for (k, v) in t {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::String(s) => {
                    out.insert(key, s.clone());
                }
                toml::Value::Table(inner) => stack.push((key, inner)),
                other => return Err(format!("{key}: a text is expected, found {other}")),
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
