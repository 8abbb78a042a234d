//! Dates as each language writes them on sheets and pages: `4 December 2026`,
//! `4 декабря 2026 г.`, `2026-жылдын 4-декабры`, and Persian in Iran's own calendar, `۱۳ آذر ۱۴۰۵`.
//!
//! Flow: the store keeps a game's date as PGN writes it (`YYYY.MM.DD`, `?` for what is not
//! known), and PGN keeps writing it so. [`Date::from_pgn`] is the one place that reads it: a
//! whole date becomes a checked (Gregorian) [`Date`]; a date with unknown parts is refused, and
//! [`Lang::stored_date`] then writes it back as stored. [`Lang::date`] writes a [`Date`] through
//! the language's table: `[date] form` with `{day}`, `{month}` (`month_1` … `month_12`, as the
//! form writes them: genitive in Russian, possessive in Kyrgyz) and `{year}`, in the table's
//! `digits`. Persian is written in the Solar Hijri calendar ([`solar_hijri`]), whose months its
//! table names; the others in the Gregorian one. Pure.

use super::Lang;

/// A day of the Gregorian calendar (proleptic before 1582), checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    year: i32,
    month: u8,
    day: u8,
}

/// Why a text or numbers are not a [`Date`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DateError {
    #[error("{0:?} is not a date written YYYY.MM.DD")]
    Shape(String),
    #[error("{0:?} has parts not known (`?`)")]
    PartlyUnknown(String),
    #[error("{year:04}-{month:02}-{day:02} is not a day of the calendar")]
    NoSuchDay { year: i32, month: u8, day: u8 },
}

impl Date {
    /// The day `day` of month `month` (1–12) of `year`.
    pub fn new(year: i32, month: u8, day: u8) -> Result<Date, DateError> {
        if (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month) {
            Ok(Date { year, month, day })
        } else {
            Err(DateError::NoSuchDay { year, month, day })
        }
    }

    /// A date as PGN and the store write it, `YYYY.MM.DD`; one with a `?` is partly unknown.
    pub fn from_pgn(text: &str) -> Result<Date, DateError> {
        let bytes = text.as_bytes();
        let shaped = bytes.len() == 10
            && bytes.iter().enumerate().all(|(i, &b)| match i {
                4 | 7 => b == b'.',
                _ => b.is_ascii_digit() || b == b'?',
            });
        if !shaped {
            return Err(DateError::Shape(text.to_owned()));
        }
        if bytes.contains(&b'?') {
            return Err(DateError::PartlyUnknown(text.to_owned()));
        }
        // Ten ASCII bytes, all digits but the dots: each part is a number that fits its type.
        let number = |range: std::ops::Range<usize>| {
            bytes[range]
                .iter()
                .fold(0u16, |n, b| n * 10 + u16::from(b - b'0'))
        };
        let (month, day) = (number(5..7) as u8, number(8..10) as u8);
        Date::new(i32::from(number(0..4)), month, day)
    }

    /// `YYYY.MM.DD`, as PGN writes it.
    pub fn to_pgn(self) -> String {
        format!("{:04}.{:02}.{:02}", self.year, self.month, self.day)
    }

    pub fn year(self) -> i32 {
        self.year
    }

    pub fn month(self) -> u8 {
        self.month
    }

    pub fn day(self) -> u8 {
        self.day
    }

    /// Days since 1970-01-01 (negative before it).
    fn days_since_1970(self) -> i64 {
        // Years counted from March, so that the leap day ends a year (era: 400 years).
        let year = i64::from(self.year) - i64::from(self.month <= 2);
        let era = year.div_euclid(400);
        let year_of_era = year.rem_euclid(400);
        let month_from_march = (i64::from(self.month) + 9) % 12;
        let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(self.day) - 1;
        let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        era * 146_097 + day_of_era - 719_468
    }
}

fn is_leap_year(year: i32) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The calendar a language's dates are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Calendar {
    Gregorian,
    /// Iran's official calendar (Solar Hijri): what an Iranian arbiter writes.
    SolarHijri,
}

/// The first Solar Hijri year the Calendar Center's table fixes, and 1 Farvardin of it
/// (22 March 1827).
const FIRST_SOLAR_HIJRI_YEAR: i32 = 1206;
const FIRST_NOWRUZ: (i32, u8, u8) = (1827, 3, 22);
/// The last year it fixes: 1498, which ends on 20 March 2120.
const LAST_SOLAR_HIJRI_YEAR: i32 = 1498;

/// Whether a Solar Hijri year has 366 days (30 Esfand): the 33-year rule, which is the
/// calendar of the Calendar Center of the University of Tehran (the Iranian calendar
/// authority, `calendar.ut.ac.ir`, "Kabise Shamsi 1206–1498") for every year of its table, as a
/// test checks against the table; it parts from the astronomical calendar only after it (1502).
fn is_solar_hijri_leap(year: i32) -> bool {
    (25 * i64::from(year) + 11).rem_euclid(33) < 8
}

/// `date` in the Solar Hijri calendar as (year, month, day), for the days the Calendar
/// Center's table fixes (22 March 1827 to 20 March 2120); `None` outside them.
pub fn solar_hijri(date: Date) -> Option<(i32, u8, u8)> {
    let (y, m, d) = FIRST_NOWRUZ;
    let first = Date {
        year: y,
        month: m,
        day: d,
    }
    .days_since_1970();
    let mut rest = date.days_since_1970() - first;
    if rest < 0 {
        return None;
    }
    let mut year = FIRST_SOLAR_HIJRI_YEAR;
    loop {
        let length = if is_solar_hijri_leap(year) { 366 } else { 365 };
        if rest < length {
            break;
        }
        rest -= length;
        year += 1;
        if year > LAST_SOLAR_HIJRI_YEAR {
            return None;
        }
    }
    // Six months of 31 days, five of 30, and Esfand of 29 (30 in a leap year).
    let (month, day) = if rest < 186 {
        (rest / 31 + 1, rest % 31 + 1)
    } else {
        ((rest - 186) / 30 + 7, (rest - 186) % 30 + 1)
    };
    Some((year, month as u8, day as u8))
}

/// The keys of the month words, January (Farvardin in Persian) first.
const MONTHS: [&str; 12] = [
    "date.month_1",
    "date.month_2",
    "date.month_3",
    "date.month_4",
    "date.month_5",
    "date.month_6",
    "date.month_7",
    "date.month_8",
    "date.month_9",
    "date.month_10",
    "date.month_11",
    "date.month_12",
];

impl Lang {
    /// The calendar its dates are written in: the Solar Hijri one for Persian.
    pub fn calendar(self) -> Calendar {
        match self {
            Lang::Fa => Calendar::SolarHijri,
            _ => Calendar::Gregorian,
        }
    }

    /// `date` as the language writes it (`4 December 2026`, `۱۳ آذر ۱۴۰۵`); a day its calendar
    /// cannot write exactly (Persian before 1827 or after 2119) as PGN writes it.
    pub fn date(self, date: Date) -> String {
        let (year, month, day) = match self.calendar() {
            Calendar::Gregorian => (date.year, date.month, date.day),
            Calendar::SolarHijri => match solar_hijri(date) {
                Some(d) => d,
                None => return date.to_pgn(),
            },
        };
        let month = usize::from(month)
            .checked_sub(1)
            .and_then(|i| MONTHS.get(i))
            .map_or("", |key| self.text(key));
        self.fill(
            "date.form",
            &[
                ("day", &self.digits(&day.to_string())),
                ("month", month),
                ("year", &self.digits(&year.to_string())),
            ],
        )
    }

    /// A date as the store keeps it (`YYYY.MM.DD`), as the language writes it; one with parts
    /// not known (`2026.??.??`), or that is not a date, as it was stored.
    pub fn stored_date(self, stored: &str) -> String {
        match Date::from_pgn(stored) {
            Ok(date) => self.date(date),
            Err(_) => stored.to_owned(),
        }
    }

    /// `number`'s ASCII digits in the language's digits (`date.digits`, zero first).
    fn digits(self, number: &str) -> String {
        let digits: Vec<char> = self.text("date.digits").chars().collect();
        number
            .chars()
            .map(|c| match c.to_digit(10) {
                Some(d) if digits.len() == 10 => digits[d as usize],
                _ => c,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
