//! Pairing files as arbiters save them (issue 33, items 5 and 7): a Windows-1251 CSV with
//! semicolons, as a Russian-locale Excel writes it, imported through the real command line and
//! the console's upload, reads its names exactly; a file that is not text is refused with its
//! line. A UTF-8 TRF with Cyrillic, Mongolian, Kazakh and Persian names (one written decomposed)
//! gives the same names, composed, back in every export: PGN, JSON, the HTML and PDF scoresheets,
//! the TRF for the pairing program and `/api/boards`.

use std::{
    path::{Path, PathBuf},
    process::{Command, Output},
};

use boardscribe::{
    game::Kind,
    lang::Lang,
    pairings::{self, PairingsError},
    relay::Token,
    sensor::Orientation,
    store::{BoardId, GameId, Store, Write},
    tracker::event::{RecordedMove, TrackerEvent},
};
use serde_json::Value;
use shakmaty::{Chess, EnPassantMode, Position, fen::Fen, san::San};

use crate::{
    console_actions::{Console, TOKEN},
    relay_common::{Bench, Served},
};

const BIN: &str = env!("CARGO_BIN_EXE_boardscribe");

/// A round's pairings as a Russian-locale Excel saves "CSV (разделители - точки с запятой)":
/// Windows-1251, semicolons, CRLF, a name holding a semicolon quoted, an empty row at the end.
const CYRILLIC_CSV: &str = "board;white;black;white_elo;black_elo;white_fed;black_fed\r\n\
1;Иванов, Иван;Ёлкина, Юлия;2410;2380;RUS;RUS\r\n\
2;\"Шевченко; Ігор\";Қасымұлы, Әлішер;2350;;UKR;KAZ\r\n\
;;;;;;\r\n";

/// The names of [`CYRILLIC_CSV`], by board: white, black.
const CYRILLIC_NAMES: [(&str, &str); 2] = [
    ("Иванов, Иван", "Ёлкина, Юлия"),
    ("Шевченко; Ігор", "Қасымұлы, Әлішер"),
];

/// [`CYRILLIC_CSV`] in Windows-1251, but for the Kazakh letters (Қ ұ Ә і are not in it: the
/// black player of board 2 is "Касымулы, Алишер" there, as such files spell it).
fn windows_1251() -> (Vec<u8>, [(&'static str, &'static str); 2]) {
    let text = CYRILLIC_CSV.replace("Қасымұлы, Әлішер", "Касымулы, Алишер");
    let (bytes, _, unmappable) = encoding_rs::WINDOWS_1251.encode(&text);
    assert!(!unmappable);
    assert!(std::str::from_utf8(&bytes).is_err(), "not UTF-8");
    let mut names = CYRILLIC_NAMES;
    names[1].1 = "Касымулы, Алишер";
    (bytes.into_owned(), names)
}

fn pairings_cli(db: &Path, round: u32, file: &Path) -> Output {
    Command::new(BIN)
        .args(["pairings", "--db"])
        .arg(db)
        .args(["--round", &round.to_string()])
        .arg(file)
        .output()
        .unwrap()
}

fn names(store: &Store, round: u32) -> Vec<(String, String)> {
    store
        .pairings(round)
        .unwrap()
        .into_iter()
        .map(|p| (p.white, p.black))
        .collect()
}

fn owned(names: &[(&str, &str)]) -> Vec<(String, String)> {
    names
        .iter()
        .map(|(w, b)| ((*w).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn a_windows_1251_semicolon_csv_imports_through_the_command_line_with_its_names() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("event.db");
    let (bytes, want) = windows_1251();
    let csv = dir.path().join("тур 1.csv");
    std::fs::write(&csv, &bytes).unwrap();
    let out = pairings_cli(&db, 1, &csv);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "round 1: 2 boards imported (read as Windows-1251 (Cyrillic))\n"
    );
    let store = Store::open(&db).unwrap();
    assert_eq!(names(&store, 1), owned(&want));
    let p = store.pairings(1).unwrap();
    assert_eq!(
        (p[1].white_elo, p[1].black_fed.as_deref()),
        (Some(2350), Some("KAZ"))
    );
    drop(store);

    // The same file in UTF-8 (with Excel's BOM) keeps the Kazakh letters.
    let utf8 = dir.path().join("r2.csv");
    std::fs::write(&utf8, [b"\xef\xbb\xbf", CYRILLIC_CSV.as_bytes()].concat()).unwrap();
    let out = pairings_cli(&db, 2, &utf8);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "round 2: 2 boards imported\n"
    );
    assert_eq!(names(&Store::open(&db).unwrap(), 2), owned(&CYRILLIC_NAMES));

    // Bytes that are no text: refused with the line of the first bad byte and the fix; the
    // round's pairings stay as they were.
    let mut noise = b"board;white;black\r\n1;a;b\r\n2;c;".to_vec();
    noise.extend([0x00, 0x9f, 0x13, 0xff, 0x80, 0x0a, 0xc3, 0x28, 0xfe, 0x01]);
    let bad = dir.path().join("r1.csv");
    std::fs::write(&bad, &noise).unwrap();
    let out = pairings_cli(&db, 1, &bad);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3: byte 0x9F is not UTF-8"), "{err}");
    assert!(err.contains("save it as CSV UTF-8"), "{err}");
    assert_eq!(names(&Store::open(&db).unwrap(), 1), owned(&want));
}

/// An import from the command line is a logged decision (issue 34): `--author` names who took
/// it (`--by` is the same, as for `round start`), else `$USER`, else "arbiter"; the event's
/// decisions log names each. An author with a control character is refused, nothing imported.
#[test]
fn a_pairings_import_names_its_author_in_the_decisions_log() {
    use boardscribe::store::EventChange;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("event.db");
    let csv = dir.path().join("round1.csv");
    std::fs::write(&csv, CYRILLIC_CSV).unwrap();
    let import = |args: &[&str], user: Option<&str>| {
        let mut cmd = Command::new(BIN);
        cmd.args(["pairings", "--db"])
            .arg(&db)
            .args(["--round", "1"])
            .args(args)
            .arg(&csv);
        match user {
            Some(u) => cmd.env("USER", u),
            None => cmd.env_remove("USER"),
        };
        cmd.output().unwrap()
    };
    let imports = || -> Vec<String> {
        Store::open(&db)
            .unwrap()
            .event_decisions()
            .unwrap()
            .into_iter()
            .filter(|d| matches!(d.change, EventChange::PairingsImported { boards: 2 }))
            .map(|d| d.author)
            .collect()
    };
    let mut want = Vec::new();
    for (args, user, author) in [
        (
            &["--author", "Бас төреші"][..],
            Some("deputy"),
            "Бас төреші",
        ),
        (
            &["--by", "Chief arbiter"][..],
            Some("deputy"),
            "Chief arbiter",
        ),
        (&[][..], Some("deputy"), "deputy"),
        (&[][..], None, "arbiter"),
    ] {
        let out = import(args, user);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        want.push(author.to_owned());
        assert_eq!(imports(), want, "{args:?} with USER={user:?}");
    }
    let out = import(&["--author", "Chief\u{1b}[2J"], Some("deputy"));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("control character (U+001B)"), "{err}");
    assert_eq!(imports(), want, "nothing imported");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_windows_1251_semicolon_csv_uploads_through_the_console_with_its_names() {
    let bench = Bench::with_round(Token::new(TOKEN), Some(1)).await;
    let console = Console::login(&bench.url, "Chief arbiter").await;
    let (bytes, want) = windows_1251();
    let told = console.upload_pairings(1, "round1.csv", &bytes).await;
    assert!(
        told.ends_with(
            "msg=round 1: 2 boards paired from round1.csv (read as Windows-1251 (Cyrillic))"
        ),
        "{told}"
    );
    assert_eq!(names(&bench.store(), 1), owned(&want));

    // Excel's "Unicode text": UTF-16 LE with its BOM, tabs between the columns.
    let tabs = CYRILLIC_CSV
        .replace(';', "\t")
        .replace("\"Шевченко\t Ігор\"", "\"Шевченко; Ігор\"");
    let le: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain(tabs.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let told = console.upload_pairings(2, "round2.csv", &le).await;
    assert!(told.ends_with("(read as UTF-16 LE)"), "{told}");
    assert_eq!(names(&bench.store(), 2), owned(&CYRILLIC_NAMES));

    // Not text: refused with its line, nothing changed.
    let mut noise = b"board;white;black\n1;a;b\n".to_vec();
    noise.extend([0x9f, 0x13, 0xff, 0x80, 0x00]);
    let told = console.upload_pairings(1, "round1.csv", &noise).await;
    assert!(
        told.contains("err=line 3: byte 0x9F is not UTF-8"),
        "{told}"
    );
    assert!(told.contains("save it as CSV UTF-8"), "{told}");
    assert_eq!(names(&bench.store(), 1), owned(&want));

    // In the console's language, once the arbiter chose Kazakh: the file's fault with its line,
    // in Kazakh words, and nothing changed.
    console.get("arbiter?lang=kk").await;
    let told = console
        .upload_pairings(1, "round1.csv", b"board;white\n1;a\n")
        .await;
    let missing = PairingsError::MissingColumn {
        line: 1,
        column: "black",
    };
    assert!(told.ends_with(&missing.words(Lang::Kk)), "{told}");
    assert!(
        !told.contains("line 1") && !told.contains("column"),
        "{told}"
    );
    let told = console.upload_pairings(1, "round1.csv", &noise).await;
    let not_text = pairings::decode(&noise).unwrap_err();
    assert!(told.ends_with(&not_text.words(Lang::Kk)), "{told}");
    assert!(!told.contains("is not UTF-8"), "{told}");
    assert_eq!(names(&bench.store(), 1), owned(&want));
    bench.stop().await;
}

// ------------------------------------------------------------------ item 7: names round-trip

/// The players of a round-1 TRF, by starting rank: (title, name as the file writes it, rating,
/// federation). Player 1 is written decomposed (И + U+0306, е + U+0308).
const PLAYERS: [(&str, &str, u32, &str); 8] = [
    ("GM", "Найденов, И\u{306}ордан Пе\u{308}трович", 2610, "RUS"),
    ("IM", "Ёлкина, Юлия", 2450, "RUS"),
    ("", "Өлзийбаатар, Үүрцайх", 2300, "MGL"),
    ("FM", "Батсүх, Өнөрбаяр", 2280, "MGL"),
    ("", "Қасымұлы, Ұлықбек Әлішер", 2250, "KAZ"),
    ("WGM", "Ғалымжанова, Іңкәр Шаһизада", 2200, "KAZ"),
    ("", "پژمان گلچین", 2150, "IRI"),
    ("", "کیمیا چگینی", 2100, "IRI"),
];

/// A TRF16 `001` line: fields at their columns (1-based), counted in characters.
fn trf_line(rank: usize) -> String {
    let (title, name, rating, fed) = PLAYERS[rank - 1];
    let opponent = if rank % 2 == 1 { rank + 1 } else { rank - 1 };
    let colour = if rank % 2 == 1 { 'w' } else { 'b' };
    let mut line: Vec<char> = vec![' '; 99];
    let mut put = |column: usize, text: &str| {
        for (i, c) in text.chars().enumerate() {
            line[column - 1 + i] = c;
        }
    };
    put(1, "001");
    put(5, &format!("{rank:>4}"));
    put(10, "m");
    put(11, title);
    put(15, name);
    put(49, &format!("{rating:>4}"));
    put(54, fed);
    put(58, &format!("{:>11}", 4_100_000 + rank));
    put(81, " 0.0");
    put(92, &format!("{opponent:>4} {colour}"));
    line.into_iter().collect::<String>().trim_end().to_owned()
}

/// The names as every export must give them back: composed, else exactly as the file spells
/// them. White and black of boards 1 to 4.
fn expected_names() -> Vec<(String, String)> {
    let composed = |rank: usize| match rank {
        1 => "Найденов, Йордан Пётрович".to_owned(),
        _ => PLAYERS[rank - 1].1.to_owned(),
    };
    (0..4)
        .map(|b| (composed(2 * b + 1), composed(2 * b + 2)))
        .collect()
}

/// Two plies (1. e4 e5) on `board`, from `t0`.
fn write_game(store: &mut Store, board: BoardId, t0: u64) -> GameId {
    let start = Write::Event {
        board,
        event: TrackerEvent::GameStarted {
            at_ms: t0,
            orientation: Orientation::Normal,
            start: None,
        },
    };
    let game = *store.write_batch(&[start]).unwrap().last().unwrap();
    let mut pos = Chess::default();
    for (i, san) in ["e4", "e5"].into_iter().enumerate() {
        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(m);
        let recorded = RecordedMove {
            ply: i as u32 + 1,
            notation: san.to_owned(),
            uci: Some(m.to_uci(shakmaty::CastlingMode::Standard).to_string()),
            position: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
            at_ms: t0 + 1_000 * (i as u64 + 1),
            clock_white_ms: None,
            clock_black_ms: None,
            time_trouble: false,
        };
        let event = TrackerEvent::Move(recorded);
        store.write_batch(&[Write::Event { board, event }]).unwrap();
    }
    game
}

fn export(db: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(["export", "--db"])
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("exports are UTF-8")
}

/// A PGN tag's value in the `n`th game of `pgn` (0-based).
fn pgn_tag(pgn: &str, n: usize, tag: &str) -> String {
    let prefix = format!("[{tag} \"");
    pgn.split("[Event ")
        .nth(n + 1)
        .unwrap_or_else(|| panic!("no game {n} in {pgn}"))
        .lines()
        .find_map(|l| l.strip_prefix(&prefix)?.strip_suffix("\"]"))
        .unwrap_or_else(|| panic!("no {tag} in game {n} of {pgn}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_come_back_exactly_in_every_export() {
    let dir = tempfile::tempdir().unwrap();
    let db: PathBuf = dir.path().join("event.db");
    let trf_text: String = ["012 Улаанбаатар — Алматы — تهران Open".to_owned()]
        .into_iter()
        .chain((1..=PLAYERS.len()).map(trf_line))
        .map(|l| l + "\n")
        .collect();
    assert!(trf_text.contains("И\u{306}"), "the file holds Й decomposed");
    let trf = dir.path().join("round1.trf");
    std::fs::write(&trf, &trf_text).unwrap();
    let out = pairings_cli(&db, 1, &trf);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "round 1: 4 boards imported\n"
    );
    let want = expected_names();
    let round = Command::new(BIN)
        .args(["round", "start", "1", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(round.status.success());

    let mut store = Store::open(&db).unwrap();
    assert_eq!(names(&store, 1), want);
    let mut games = Vec::new();
    for n in 1..=4u32 {
        let board = store.board(&format!("hall-{n}"), Kind::Chess).unwrap();
        store.set_board_number(board, n).unwrap();
        games.push(write_game(&mut store, board, 10_000 * u64::from(n)));
    }
    drop(store);

    // PGN: the round's games by board.
    let pgn = export(&db, &["--format", "pgn", "--round", "1"]);
    for (i, (white, black)) in want.iter().enumerate() {
        assert_eq!(&pgn_tag(&pgn, i, "White"), white, "{pgn}");
        assert_eq!(&pgn_tag(&pgn, i, "Black"), black, "{pgn}");
    }
    assert!(!pgn.contains('\u{306}') && !pgn.contains('\u{308}'));

    // JSON.
    let json: Value = serde_json::from_str(&export(&db, &["--format", "json", "--round", "1"]))
        .expect("the JSON export parses");
    let exported: Vec<(String, String)> = json["games"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["white"].as_str().unwrap().to_owned(),
                g["black"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(exported, want);

    // The HTML scoresheet of each game: title, name and rating.
    for (i, (id, (white, black))) in games.iter().zip(&want).enumerate() {
        let html = export(
            &db,
            &["--format", "scoresheet", "--game", &id.0.to_string()],
        );
        let (wt, _, we, _) = PLAYERS[2 * i];
        let (bt, _, be, _) = PLAYERS[2 * i + 1];
        // The title and the name isolated, so that they keep their order with the rating.
        let label = |title: &str, name: &str, elo: u32| {
            let title = if title.is_empty() {
                String::new()
            } else {
                format!("<bdi>{title}</bdi> ")
            };
            format!("{title}<bdi>{name}</bdi> ({elo})")
        };
        assert!(html.contains(&label(wt, white, we)), "{html}");
        assert!(html.contains(&label(bt, black, be)), "{html}");
        assert!(!html.contains('\u{306}'));
    }

    // The PDF scoresheet of each game, read back with poppler's `pdftotext`: both names, composed.
    for (id, (white, black)) in games.iter().zip(&want) {
        let pdf = dir.path().join(format!("game-{}.pdf", id.0));
        crate::pdf_scripts::export_sheet(&db, *id, Lang::En, &pdf);
        let text = crate::pdf_scripts::pdftotext(&pdf, None);
        for name in [white, black] {
            assert!(text.contains(name.as_str()), "{name:?} in {text}");
        }
        assert!(
            !text.contains('\u{306}') && !text.contains('\u{308}'),
            "{text}"
        );
    }

    // The TRF for the pairing program: each player's name in its columns (15-47) by starting
    // rank, composed; read back by the TRF parser, the same round.
    let trf_out = export(&db, &["--format", "trf"]);
    let in_file: Vec<String> = trf_out
        .lines()
        .filter(|l| l.starts_with("001"))
        .map(|l| {
            let chars: Vec<char> = l.chars().collect();
            chars[14..47.min(chars.len())]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect();
    let by_rank: Vec<String> = want
        .iter()
        .flat_map(|(w, b)| [w.clone(), b.clone()])
        .collect();
    assert_eq!(in_file, by_rank, "{trf_out}");
    assert!(!trf_out.contains('\u{306}') && !trf_out.contains('\u{308}'));
    let read_back = pairings::parse_trf(&trf_out, 1).expect("the exported TRF parses");
    let read_back: Vec<(String, String)> =
        read_back.into_iter().map(|p| (p.white, p.black)).collect();
    assert_eq!(read_back, want, "{trf_out}");

    // `/api/boards`, as a read-only server shows the boards.
    let served = Served::start(&db, 0).await;
    let boards: Value = reqwest::get(format!("{}api/boards", served.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut shown: Vec<(u64, String, String)> = boards
        .as_array()
        .or_else(|| boards["boards"].as_array())
        .unwrap_or_else(|| panic!("{boards}"))
        .iter()
        .map(|b| {
            (
                b["number"].as_u64().unwrap_or_default(),
                b["white"].as_str().unwrap().to_owned(),
                b["black"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    shown.sort();
    let shown: Vec<(String, String)> = shown.into_iter().map(|(_, w, b)| (w, b)).collect();
    assert_eq!(shown, want, "{boards}");
}
