use super::*;

fn date(year: i32, month: u8, day: u8) -> Date {
    Date::new(year, month, day).unwrap()
}

#[test]
fn each_language_writes_a_day_in_its_own_form() {
    let day = date(2026, 12, 4);
    let want = [
        (Lang::En, "4 December 2026"),
        (Lang::Ru, "4 декабря 2026 г."),
        (Lang::Uk, "4 грудня 2026 р."),
        (Lang::Mn, "2026 оны 12-р сарын 4"),
        (Lang::Ky, "2026-жылдын 4-декабры"),
        (Lang::Kk, "2026 жылғы 4 желтоқсан"),
        // 13 Azar 1405.
        (Lang::Fa, "۱۳ آذر ۱۴۰۵"),
    ];
    for (lang, text) in want {
        assert_eq!(lang.date(day), text, "{lang}");
    }
    let first = date(2025, 1, 1);
    let want = [
        (Lang::En, "1 January 2025"),
        (Lang::Ru, "1 января 2025 г."),
        (Lang::Uk, "1 січня 2025 р."),
        (Lang::Mn, "2025 оны 1-р сарын 1"),
        (Lang::Ky, "2025-жылдын 1-январы"),
        (Lang::Kk, "2025 жылғы 1 қаңтар"),
        // 12 Dey 1403.
        (Lang::Fa, "۱۲ دی ۱۴۰۳"),
    ];
    for (lang, text) in want {
        assert_eq!(lang.date(first), text, "{lang}");
    }
    assert_eq!(Lang::Ky.date(date(1996, 6, 28)), "1996-жылдын 28-июну");
    assert_eq!(Lang::Ky.date(date(2020, 4, 11)), "2020-жылдын 11-апрели");
    assert_eq!(Lang::Ky.date(date(2004, 7, 17)), "2004-жылдын 17-июлу");
}

#[test]
fn a_stored_date_is_read_in_one_place_and_a_partly_known_one_kept_as_stored() {
    assert_eq!(Date::from_pgn("2026.12.04"), Ok(date(2026, 12, 4)));
    assert_eq!(Lang::Ru.stored_date("2026.12.04"), "4 декабря 2026 г.");
    for kept in ["2026.??.??", "????.??.??", "2026.12.??", "????.12.04"] {
        assert_eq!(
            Date::from_pgn(kept),
            Err(DateError::PartlyUnknown(kept.into()))
        );
        for lang in Lang::ALL {
            assert_eq!(lang.stored_date(kept), kept, "{lang}");
        }
    }
    for not_a_date in [
        "2026-12-04",
        "2026.1.4",
        "26.12.04",
        "2026.12.04 ",
        "2026.1a.04",
        "",
    ] {
        assert_eq!(
            Date::from_pgn(not_a_date),
            Err(DateError::Shape(not_a_date.into()))
        );
        assert_eq!(Lang::En.stored_date(not_a_date), not_a_date);
    }
    assert_eq!(
        Date::from_pgn("2026.02.29"),
        Err(DateError::NoSuchDay {
            year: 2026,
            month: 2,
            day: 29
        })
    );
    assert!(Date::from_pgn("2024.02.29").is_ok());
    assert!(Date::from_pgn("2100.02.29").is_err() && Date::from_pgn("2000.02.29").is_ok());
    assert!(Date::from_pgn("2026.13.01").is_err() && Date::from_pgn("2026.04.31").is_err());
    assert!(Date::from_pgn("2026.00.10").is_err() && Date::from_pgn("2026.01.00").is_err());
    assert_eq!(date(2026, 12, 4).to_pgn(), "2026.12.04");
}

#[test]
fn days_are_counted_from_1970() {
    assert_eq!(date(1970, 1, 1).days_since_1970(), 0);
    assert_eq!(date(1969, 12, 31).days_since_1970(), -1);
    assert_eq!(date(2000, 3, 1).days_since_1970(), 11_017);
    assert_eq!(date(2026, 3, 21).days_since_1970(), 20_533);
    assert_eq!(date(1827, 3, 22).days_since_1970(), -52_150);
}

/// The Calendar Center's table (`kabise.txt`): each Solar Hijri year of 1206–1498, starred
/// when it is leap, and the Gregorian date of its 1 Farvardin.
fn calendar_center_table() -> Vec<(i32, bool, Date)> {
    include_str!("kabise.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (year, nowruz) = l.split_once(' ').unwrap();
            let leap = year.ends_with('*');
            let year: i32 = year.trim_end_matches('*').parse().unwrap();
            let pgn = nowruz.trim().replace('-', ".");
            (year, leap, Date::from_pgn(&pgn).unwrap())
        })
        .collect()
}

#[test]
fn the_solar_hijri_calendar_is_the_calendar_centers_for_every_year_of_its_table() {
    let table = calendar_center_table();
    assert_eq!(table.len(), 293, "1206 to 1498");
    assert_eq!(table[0].0, FIRST_SOLAR_HIJRI_YEAR);
    assert_eq!(table[292].0, LAST_SOLAR_HIJRI_YEAR);
    for (i, &(year, leap, nowruz)) in table.iter().enumerate() {
        assert_eq!(is_solar_hijri_leap(year), leap, "{year}");
        assert_eq!(solar_hijri(nowruz), Some((year, 1, 1)), "{year}");
        let eve = nowruz.days_since_1970() - 1;
        if i > 0 {
            // The day before is the last of Esfand: the 30th after a leap year.
            let (before, was_leap, before_nowruz) = table[i - 1];
            let last = if was_leap { 30 } else { 29 };
            assert_eq!(
                eve - before_nowruz.days_since_1970() + 1,
                if was_leap { 366 } else { 365 },
                "{before}"
            );
            let day_before = gregorian_from_days(eve);
            assert_eq!(solar_hijri(day_before), Some((before, 12, last)), "{year}");
        } else {
            assert_eq!(solar_hijri(gregorian_from_days(eve)), None);
        }
    }
    // After the table: 1498 is leap, so its last day is 20 March 2120.
    assert_eq!(solar_hijri(date(2120, 3, 20)), Some((1498, 12, 30)));
    assert_eq!(solar_hijri(date(2120, 3, 21)), None);
}

#[test]
fn known_days_of_the_solar_hijri_calendar() {
    // Nowruz 1405, 1404 (after the leap year 1403: 30 Esfand 1403 = 20 March 2025).
    assert_eq!(solar_hijri(date(2026, 3, 21)), Some((1405, 1, 1)));
    assert_eq!(solar_hijri(date(2026, 3, 20)), Some((1404, 12, 29)));
    assert_eq!(solar_hijri(date(2025, 3, 21)), Some((1404, 1, 1)));
    assert_eq!(solar_hijri(date(2025, 3, 20)), Some((1403, 12, 30)));
    // The first day of Mehr (month 7, after six months of 31 days) and of Dey.
    assert_eq!(solar_hijri(date(2026, 9, 23)), Some((1405, 7, 1)));
    assert_eq!(solar_hijri(date(2026, 9, 22)), Some((1405, 6, 31)));
    assert_eq!(solar_hijri(date(2026, 12, 22)), Some((1405, 10, 1)));
    assert_eq!(solar_hijri(date(2026, 12, 4)), Some((1405, 9, 13)));
    // The calendar's adoption: 1 Farvardin 1304 = 21 March 1925.
    assert_eq!(solar_hijri(date(1925, 3, 21)), Some((1304, 1, 1)));
    // Outside the table, Persian writes the day as PGN does.
    assert_eq!(solar_hijri(date(1800, 1, 1)), None);
    assert_eq!(Lang::Fa.date(date(2130, 1, 1)), "2130.01.01");
    assert_eq!(Lang::Fa.date(date(2026, 3, 21)), "۱ فروردین ۱۴۰۵");
    assert_eq!(Lang::Fa.date(date(2025, 3, 20)), "۳۰ اسفند ۱۴۰۳");
}

/// The Gregorian date `days` after 1970-01-01, by search (tests only).
fn gregorian_from_days(days: i64) -> Date {
    let mut guess = date(1970, 1, 1);
    let year = 1970 + (days as f64 / 365.2425).floor() as i32;
    for y in [year - 1, year, year + 1] {
        for m in 1..=12 {
            for d in 1..=days_in_month(y, m) {
                guess = date(y, m, d);
                if guess.days_since_1970() == days {
                    return guess;
                }
            }
        }
    }
    panic!("no day {days} near {guess:?}")
}
