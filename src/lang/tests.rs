use std::collections::BTreeSet;

use super::*;

/// The `{blanks}` of a text.
fn blanks(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.insert(rest[start + 1..start + len].to_owned());
        rest = &rest[start + len + 1..];
    }
    out
}

#[test]
fn every_table_reads() {
    for (lang, text) in Lang::ALL.into_iter().zip(TABLES) {
        let table = flatten(text).unwrap_or_else(|e| panic!("{lang}.toml: {e}"));
        assert!(!table.is_empty(), "{lang}.toml is empty");
    }
}

/// Keys a table may leave empty: the piece letters of a language whose Laws text gives none.
const MAY_BE_EMPTY: &[&str] = &["notation.pieces"];

#[test]
fn every_language_has_every_key_of_english_with_the_same_blanks_and_no_other() {
    let tables = tables();
    let en = &tables[Lang::En as usize];
    let mut problems = Vec::new();
    for lang in Lang::ALL {
        let table = &tables[lang as usize];
        for (key, text) in en {
            match table.get(key) {
                None => problems.push(format!("{lang}: {key} is missing")),
                Some(t) if blanks(t) != blanks(text) => problems.push(format!(
                    "{lang}: {key} has the blanks {:?}, English {:?}",
                    blanks(t),
                    blanks(text)
                )),
                Some(t) if t.trim().is_empty() && !MAY_BE_EMPTY.contains(&key.as_str()) => {
                    problems.push(format!("{lang}: {key} is empty"))
                }
                Some(_) => {}
            }
        }
        // The phrases' keys are the record's (crate::phrase::ENGLISH), held by the test below.
        for key in table
            .keys()
            .filter(|k| !en.contains_key(*k) && !k.starts_with("said."))
        {
            problems.push(format!("{lang}: {key} is not a key of English"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Words that stay as they are in every language: names of things, not words of a language
/// (KG: the Kyrgyz togyz korgool rules, as their articles are cited; NATS: the broker the
/// event's halls publish to, and UTC: the time the event node's alerts give, both named in the
/// `event` section). The commands, settings and documentation an `event` advice names are
/// blanks, not text of the tables, so they need no place here.
const KEPT: &[&str] = &[
    "FIDE",
    "boardscribe",
    "SAN",
    "PGN",
    "KG",
    "USCF",
    "CSV",
    "TRF",
    "csv",
    "trf",
    "NATS",
    "UTC",
    "QR",
];

/// Latin words a key's text keeps in every language, as the user types or reads them: an
/// example of a CSV header, the colour letters and bye codes of a TRF, Excel's own menu names.
const KEPT_IN: &[(&str, &[&str])] = &[
    ("pairing.delimiter", &["board", "white", "black"]),
    ("pairing.bad_colour", &["w", "b"]),
    // A bye's code, as the TRF and the pairing programs write it.
    ("arbiter.bye_half", &["H"]),
    ("arbiter.bye_full", &["F"]),
    ("arbiter.bye_pairing", &["U"]),
    ("arbiter.bye_zero", &["Z"]),
    ("refused.not_a_bye", &["U", "F", "H", "Z"]),
    (
        "pairing.not_text",
        &["Excel", "Save", "As", "Comma", "delimited"],
    ),
];

/// Whether `token` is a reference rather than a word: an article (`A.4c`, `B.3c`, `7.5.2`), a
/// square (`h1`), a name with its number (`Chess960`): it holds a digit.
fn is_reference(token: &str) -> bool {
    token.chars().any(|c| c.is_ascii_digit())
}

#[test]
fn no_text_stays_english_in_another_language() {
    let tables = tables();
    let mut problems = Vec::new();
    for lang in Lang::ALL.into_iter().filter(|l| *l != Lang::En) {
        for (key, text) in &tables[lang as usize] {
            let mut bare = text.clone();
            for b in blanks(text) {
                bare = bare.replace(&format!("{{{b}}}"), "");
            }
            for k in KEPT {
                bare = bare.replace(k, "");
            }
            let kept = KEPT_IN
                .iter()
                .find(|(k, _)| k == key)
                .map_or(&[][..], |(_, words)| *words);
            let words = bare
                .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == '-'))
                .filter(|t| !is_reference(t) && !kept.contains(t));
            if words.flat_map(str::chars).any(|c| c.is_ascii_alphabetic()) {
                problems.push(format!("{lang}: {key} = {text:?} has Latin letters"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every `"section.key"` string in the daemon's sources whose section is one of English's:
/// the keys the code asks a [`Lang`] for.
fn keys_asked(sections: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let code = std::fs::read_to_string(&path).unwrap();
                for literal in code.split('"') {
                    let Some((section, key)) = literal.split_once('.') else {
                        continue;
                    };
                    let word = |s: &str| {
                        !s.is_empty()
                            && s.chars()
                                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    };
                    if sections.contains(section) && word(section) && word(key) {
                        out.insert(literal.to_owned());
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_key_the_code_asks_for_is_in_english_and_every_english_key_is_asked_for() {
    let en = &tables()[Lang::En as usize];
    let sections: BTreeSet<String> = en
        .keys()
        .filter_map(|k| k.split_once('.').map(|(s, _)| s.to_owned()))
        .collect();
    let asked = keys_asked(&sections);
    assert!(
        asked.len() > 40,
        "only {} keys found in the code",
        asked.len()
    );
    let missing: Vec<_> = asked.iter().filter(|k| !en.contains_key(*k)).collect();
    assert!(missing.is_empty(), "asked for, not in en.toml: {missing:?}");
    let unused: Vec<_> = en.keys().filter(|k| !asked.contains(*k)).collect();
    assert!(unused.is_empty(), "in en.toml, never asked for: {unused:?}");
}

#[test]
fn a_browser_gets_the_language_it_prefers_most_among_ours() {
    assert_eq!(
        Lang::from_accept_language("ru-RU,ru;q=0.9,en;q=0.8"),
        Some(Lang::Ru)
    );
    assert_eq!(
        Lang::from_accept_language("de-DE,fa;q=0.5,en;q=0.4"),
        Some(Lang::Fa)
    );
    assert_eq!(
        Lang::from_accept_language("en;q=0.2, kk;q=0.7"),
        Some(Lang::Kk)
    );
    assert_eq!(Lang::from_accept_language("de, fr;q=0.5"), None);
    assert_eq!(Lang::from_accept_language("uk;q=0, mn"), Some(Lang::Mn));
    assert_eq!(Lang::from_accept_language(""), None);
    assert_eq!(Lang::from_tag("KY-kg"), Some(Lang::Ky));
    assert_eq!("fa".parse::<Lang>(), Ok(Lang::Fa));
    assert!(
        "de".parse::<Lang>()
            .unwrap_err()
            .contains("en, ru, uk, mn, ky, kk, fa")
    );
}

#[test]
fn blanks_are_filled_and_persian_runs_right_to_left() {
    assert_eq!(
        Lang::En.fill(
            "sheet.page",
            &[("game", "7"), ("page", "1"), ("pages", "2")]
        ),
        "Game 7 · sheet 1 of 2"
    );
    assert!(Lang::Fa.rtl() && Lang::Fa.dir() == "rtl");
    assert!(Lang::ALL.iter().filter(|l| l.rtl()).count() == 1);
}

/// Every language but English (whose words are the record's own) words every phrase the record
/// can hold: one template per key of `phrase::ENGLISH`, with the same blanks, and nothing else.
#[test]
fn every_language_words_every_phrase_of_the_record_with_its_blanks() {
    use crate::phrase::ENGLISH;
    let tables = tables();
    let mut problems = Vec::new();
    assert!(
        !tables[Lang::En as usize]
            .keys()
            .any(|k| k.starts_with("said.")),
        "English phrases are the record's own (crate::phrase::ENGLISH), not en.toml's"
    );
    for lang in Lang::ALL.into_iter().filter(|l| *l != Lang::En) {
        let table = &tables[lang as usize];
        for (key, english) in ENGLISH {
            match table.get(&format!("said.{key}")) {
                None => problems.push(format!("{lang}: said.{key} is missing")),
                Some(t) if blanks(t) != blanks(english) => problems.push(format!(
                    "{lang}: said.{key} has the blanks {:?}, English {:?}",
                    blanks(t),
                    blanks(english)
                )),
                Some(t) if t.trim().is_empty() => {
                    problems.push(format!("{lang}: said.{key} is empty"))
                }
                Some(_) => {}
            }
        }
        for key in table.keys().filter_map(|k| k.strip_prefix("said.")) {
            if !ENGLISH.iter().any(|(k, _)| *k == key) {
                problems.push(format!("{lang}: said.{key} is no phrase of the record"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A ruling built as the referee builds it, worded in every language: English exactly as the
/// record stores it, every other language with every blank filled, in its own words and its own
/// side names (no English word of the template left).
#[test]
fn a_ruling_reads_in_every_language_and_english_as_recorded() {
    use crate::phrase::{Arg, Phrase};
    let ruling = Phrase::new("laws.applies")
        .phrase(
            "what",
            Phrase::new("laws.offence")
                .with("ordinal", Arg::Ordinal(2))
                .side("side", Side::Black),
        )
        .phrase("due", Phrase::new("laws.loses").side("side", Side::Black))
        .text("ladder", "7.5.5");
    assert_eq!(
        ruling.words(&Lang::En.said(Kind::Chess)),
        "second completed illegal move by black: black loses the game (7.5.5); the arbiter \
         applies it"
    );
    assert_eq!(
        ruling.words(&Lang::En.said(Kind::Chess)),
        ruling.to_string()
    );
    for lang in Lang::ALL.into_iter().filter(|l| *l != Lang::En) {
        let text = ruling.words(&lang.said(Kind::Chess));
        assert!(!text.contains('{'), "{lang}: {text}");
        assert!(text.contains("7.5.5"), "{lang}: {text}");
        assert!(
            text.contains(lang.side(Side::Black, Kind::Chess)),
            "{lang}: {text}"
        );
        for english in ["completed", "illegal", "loses", "arbiter", "black"] {
            assert!(
                !text.contains(english),
                "{lang}: {english:?} left in {text}"
            );
        }
    }
}

/// Korgools knocked out of their pits are korgools in every language, not the chess sheet's
/// displaced pieces (the sheet's remark, the console's alert and the history share the title).
#[test]
fn displaced_korgools_are_not_pieces() {
    for lang in Lang::ALL {
        let togyz = record::kind_title("displaced", Kind::Togyz, lang);
        assert_eq!(togyz, lang.text("remark.displaced_togyz"), "{lang}");
        let chess = record::kind_title("displaced", Kind::Chess, lang);
        assert_eq!(chess, lang.text("remark.displaced"), "{lang}");
        assert_ne!(togyz, chess, "{lang}");
    }
}
