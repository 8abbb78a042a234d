//! Notation on the sheet (issue 33, item 3), through the real binary: a Russian event kept with
//! `notation = "local"` prints its corpus game's moves with the Russian piece letters
//! (Кр Ф Л С К, FIDE Appendix C) on the HTML and the PDF sheet, moves named in a remark too,
//! while its PGN and JSON stay English SAN exactly as recorded; `--notation` and `--figurine`
//! override the event's; a Mongolian sheet in `local` prints figurines (its Laws text gives the
//! rook and the bishop one letter) and the command and `config check` say why.

use std::{path::Path, process::Command};

use boardscribe::{
    emulator::{EmulatorOptions, PgnGame},
    store::{EventSettings, GameRecord, Store},
};

use crate::scoresheet::{corpus, keep, laws, pdf_text, read_plies, record};

/// The Russian letters of Appendix C, written out here rather than taken from the table:
/// король Кр, ферзь Ф, ладья Л, слон С (the bishop), конь К (the knight).
fn russian(san: &str) -> String {
    san.chars()
        .map(|c| match c {
            'K' => "Кр".to_owned(),
            'Q' => "Ф".to_owned(),
            'R' => "Л".to_owned(),
            'B' => "С".to_owned(),
            'N' => "К".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

/// The figurines U+2654–U+2658 for K Q R B N.
fn figurines(san: &str) -> String {
    san.chars()
        .map(|c| match c {
            'K' => '♔',
            'Q' => '♕',
            'R' => '♖',
            'B' => '♗',
            'N' => '♘',
            c => c,
        })
        .collect()
}

/// The first game of Capablanca's that fits one sheet and has every piece move, castling, a
/// check and a promotion.
fn game_with_every_piece() -> PgnGame {
    corpus("Capablanca.pgn")
        .into_iter()
        .find(|g| {
            let any = |p: &dyn Fn(&str) -> bool| g.sans.iter().any(|s| p(s));
            g.sans.len() <= 80
                && ['K', 'Q', 'R', 'B', 'N']
                    .iter()
                    .all(|c| any(&|s| s.starts_with(*c)))
                && any(&|s| s.starts_with("O-O"))
                && any(&|s| s.contains('+'))
                && any(&|s| s.contains('='))
        })
        .expect("such a game in the corpus")
}

/// A Russian event's round 1 (board 7) with `notation = "local"` kept with it, and a corpus game
/// recorded on board 7.
fn russian_local_event(db: &Path) -> GameRecord {
    let mut store = Store::open(db).unwrap();
    crate::page_languages::seat_russian_round(&mut store);
    let event = store.event().unwrap().unwrap();
    let settings = EventSettings {
        notation: Some("local".into()),
        ..event.settings
    };
    store.open_event(Some(&event.round), &settings, 0).unwrap();
    let g = record(
        &mut store,
        &game_with_every_piece(),
        &EmulatorOptions::default(),
        &laws(None),
    );
    assert_eq!((g.round, g.board_no), (Some(1), Some(7)));
    g
}

/// `boardscribe export --db DB ARGS...`: its standard output and standard error; it must succeed.
fn export(db: &Path, args: &[&str]) -> (Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .arg("export")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "export {args:?}: {stderr}");
    (out.stdout, stderr)
}

/// The cells of an HTML sheet, in ply order.
fn cells(html: &[u8]) -> Vec<String> {
    let html = std::str::from_utf8(html).unwrap();
    read_plies(html)
        .into_iter()
        .map(|(_, _, c)| c.san)
        .collect()
}

#[test]
fn a_russian_local_sheet_prints_its_letters_and_the_pgn_stays_english_san() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ru.db");
    let g = russian_local_event(&db);
    let id = g.id.0.to_string();
    let sans: Vec<&str> = g.moves.iter().map(|m| m.notation.as_str()).collect();
    let want: Vec<String> = sans.iter().map(|s| russian(s)).collect();

    // The HTML sheet: the event's notation and language, no flag needed.
    let (html, stderr) = export(&db, &["--format", "scoresheet", "--game", &id]);
    assert_eq!(stderr, "", "Russian has its letters: nothing to say");
    let written = cells(&html);
    assert_eq!(written, want, "every move with the Russian letters");
    let starting = |prefix: &str| written.iter().filter(|c| c.starts_with(prefix)).count();
    assert!(starting("Кр") > 0, "a king's move: {written:?}");
    assert!(starting("Ф") > 0, "a queen's move: {written:?}");
    assert!(starting("Л") > 0 && starting("С") > 0, "{written:?}");
    assert!(
        starting("К") > starting("Кр"),
        "a knight's move: {written:?}"
    );
    assert!(written.iter().any(|c| c.starts_with("O-O")), "castling");
    assert!(written.iter().any(|c| c.ends_with('+')), "a check");
    let promotions: Vec<&String> = written.iter().filter(|c| c.contains('=')).collect();
    assert!(
        !promotions.is_empty()
            && promotions
                .iter()
                .all(|c| ["=Ф", "=Л", "=С", "=К"].iter().any(|p| c.contains(p))),
        "the promoted piece in Russian: {promotions:?}"
    );
    for cell in &written {
        assert!(
            !cell.contains(['K', 'Q', 'R', 'B', 'N', '♔', '♕', '♖', '♗', '♘']),
            "{cell}: no English letter, no figurine"
        );
    }

    // The PDF: the same moves read back by poppler.
    let (pdf, _) = export(&db, &["--format", "pdf", "--game", &id]);
    let (text, pages) = pdf_text(&pdf);
    assert_eq!(pages, 1);
    let tokens: Vec<&str> = text.split_whitespace().collect();
    for w in &want {
        assert!(tokens.contains(&w.as_str()), "{w} in the PDF: {text}");
    }
    assert!(tokens.iter().any(|t| t.starts_with("Кр")), "{text}");
    assert!(tokens.iter().any(|t| t.starts_with('Ф')), "{text}");
    keep(
        "notation-local-ru",
        std::str::from_utf8(&html).unwrap(),
        &pdf,
    );

    // PGN and JSON: English SAN exactly as recorded, whatever the sheets print.
    let (pgn, _) = export(&db, &["--format", "pgn", "--game", &id]);
    let pgn = String::from_utf8(pgn).unwrap();
    let movetext = pgn.split("\n\n").nth(1).expect("movetext after the tags");
    let mut comment = false;
    let mut moves = Vec::new();
    for token in movetext.split_whitespace() {
        if token.starts_with('{') {
            comment = true;
        }
        if !comment && !token.ends_with('.') && !["1-0", "0-1", "1/2-1/2", "*"].contains(&token) {
            moves.push(token);
        }
        if token.ends_with('}') {
            comment = false;
        }
    }
    assert_eq!(moves, sans, "the PGN's moves are the recorded SAN");
    assert!(movetext.is_ascii(), "no local letter in PGN: {movetext}");
    let (json, _) = export(&db, &["--format", "json", "--game", &id]);
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let notations: Vec<&str> = json["games"][0]["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["notation"].as_str().unwrap())
        .collect();
    assert_eq!(notations, sans, "JSON keeps SAN");

    // A move the arbiter names in a remark is written as the cells are: the last move
    // corrected to another legal piece move.
    let last = g.moves.last().unwrap();
    let game = game_with_every_piece();
    let before = game
        .moves
        .iter()
        .take(g.moves.len() - 1)
        .fold(game.start.clone(), |pos, m| {
            shakmaty::Position::play(pos, *m).unwrap()
        });
    let other = shakmaty::Position::legal_moves(&before)
        .into_iter()
        .map(|m| shakmaty::san::SanPlus::from_move(before.clone(), m).to_string())
        .find(|san| san.starts_with(['K', 'Q', 'R', 'B', 'N']) && *san != last.notation)
        .expect("another piece's move");
    let mut store = Store::open(&db).unwrap();
    store
        .correct_move(g.id, last.ply, &other, "Арбитр", None, 10_000)
        .unwrap();
    drop(store);
    let (html, _) = export(&db, &["--format", "scoresheet", "--game", &id]);
    let html = String::from_utf8(html).unwrap();
    let corrected = format!(
        "записан как {}, исправлен на {}",
        russian(&last.notation),
        russian(&other)
    );
    assert!(
        html.contains(&corrected),
        "{corrected} in the remarks: {}",
        &html[html.find("<ol class=\"remarks\"").unwrap_or(0)..]
    );
    assert_eq!(
        cells(html.as_bytes()).last().unwrap(),
        &russian(&other),
        "the corrected cell"
    );
}

#[test]
fn the_command_line_overrides_the_events_notation() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ru.db");
    let g = russian_local_event(&db);
    let id = g.id.0.to_string();
    let sans: Vec<String> = g.moves.iter().map(|m| m.notation.clone()).collect();
    let sheet = |extra: &[&str]| {
        let mut args = vec!["--format", "scoresheet", "--game", &id];
        args.extend_from_slice(extra);
        cells(&export(&db, &args).0)
    };
    assert_eq!(sheet(&["--notation", "san"]), sans);
    let figurine: Vec<String> = sans.iter().map(|s| figurines(s)).collect();
    assert_eq!(sheet(&["--notation", "figurine"]), figurine);
    assert_eq!(sheet(&["--figurine"]), figurine, "--figurine is an alias");
    // `local` in English is SAN: the sheet's language picks the letters.
    assert_eq!(sheet(&["--notation", "local", "--lang", "en"]), sans);

    let refused = Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(["export", "--format", "scoresheet", "--game", &id])
        .args(["--figurine", "--notation", "local", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(!refused.status.success(), "two notations at once");
    let refused = Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(["export", "--format", "scoresheet", "--game", &id])
        .args(["--notation", "national", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && stderr.contains("san, figurine, local"),
        "{stderr}"
    );
}

#[test]
fn a_mongolian_local_sheet_prints_figurines_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("mn.db");
    let g = russian_local_event(&db);
    let id = g.id.0.to_string();
    let want: Vec<String> = g.moves.iter().map(|m| figurines(&m.notation)).collect();
    let why = "note: notation local: Mongolian's Laws text gives the rook and the bishop the one \
               letter Т; the sheet prints figurines\n";

    let (html, stderr) = export(
        &db,
        &["--format", "scoresheet", "--game", &id, "--lang", "mn"],
    );
    assert_eq!(stderr, why);
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains("<html lang=\"mn\""));
    assert_eq!(
        cells(html.as_bytes()),
        want,
        "figurines, not Т for two pieces"
    );

    let (pdf, stderr) = export(&db, &["--format", "pdf", "--game", &id, "--lang", "mn"]);
    assert_eq!(stderr, why);
    let (text, _) = pdf_text(&pdf);
    let tokens: Vec<&str> = text.split_whitespace().collect();
    for w in &want {
        assert!(tokens.contains(&w.as_str()), "{w} in the PDF: {text}");
    }
    assert!(tokens.iter().any(|t| t.starts_with('♔')), "{text}");
    keep("notation-local-mn", &html, &pdf);

    // `config check` says it before the event: a warning, and the file is still good.
    let config = dir.path().join("mn.toml");
    std::fs::write(
        &config,
        "[tournament]\nlanguage = \"mn\"\nnotation = \"local\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(["config", "check"])
        .arg(&config)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "{}:3:12: warning: notation = \"local\" with language = \"mn\": Mongolian's Laws \
             text gives the rook and the bishop the one letter Т, so the sheets print figurines",
            config.display()
        )),
        "{stderr}"
    );
    assert!(
        stdout.contains("notation: local on the sheets (♔ ♕ ♖ ♗ ♘: Mongolian's"),
        "{stdout}"
    );
}
