//! The PDF scoresheets (issue 33, item 1): a benchmark binary, not a timed test.
//!
//! Flow: a round of 64 boards is recorded into a database in a temporary directory through the
//! replay path (corpus games from `tatamast22.pgn` and `Capablanca.pgn` on the emulator, one a
//! board, boards numbered 1-64), with pairings imported through the CSV parser whose names are
//! in Russian, Kazakh and Persian. Then the real binary runs `boardscribe export --round 1
//! --format pdf` a few times (wall time each, as an arbiter would wait for it), and one game
//! of 120 moves (the longest corpus game, continued with legal moves picked by a fixed rule) is
//! written as a PDF. Prints the times, the round PDF's size and pages, and the 120-move PDF's
//! size.
//!
//! Run with `nice -n 10 cargo bench --bench round_pdf` (it builds the release binary it runs).
//! Knobs (environment): `PDFBENCH_BOARDS` (64), `PDFBENCH_RUNS` (5). Without `--bench` (`cargo
//! test --benches`) a 4-board smoke run. See docs/benchmarks.md.

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use boardscribe::{
    arbiter::{Laws, LawsConfig, LawsSetup},
    emulator::{self, EmulatorOptions, PgnGame},
    export::{self, ExportOptions, Format, Notation, SheetOptions},
    game::Kind,
    pairings::{self, PairingsFormat},
    replay::replay_reader_with,
    store::{RoundInfo, Store},
};
use shakmaty::{Position, san::SanPlus};

const BIN: &str = env!("CARGO_BIN_EXE_boardscribe");

fn corpus(file: &str) -> Vec<PgnGame> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../shared/corpus/chess/{file}"));
    let text = std::fs::read_to_string(path).expect("the corpus (../shared/corpus)");
    emulator::games_from_pgn(&text).expect("the corpus parses")
}

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn laws() -> LawsSetup {
    LawsSetup {
        cfg: LawsConfig::for_edition(Laws::Fide2023),
        ..LawsSetup::default()
    }
}

/// Plays `game` on board `name` (numbered `number`) and replays it into `store`.
fn record(store: &mut Store, name: &str, number: u32, game: &PgnGame) {
    let board = store.board(name, Kind::Chess).expect("a board");
    store.set_board_number(board, number).expect("numbered");
    let script = emulator::script_pgn(game, &EmulatorOptions::default()).expect("a script");
    let text = script.to_capture_text();
    replay_reader_with(
        store,
        "bench",
        name,
        text.as_bytes(),
        &laws(),
        &mut |_, _| {},
    )
    .expect("replayed");
}

/// Pairings for `boards` boards, names in three scripts in turn.
fn pairings_csv(boards: usize) -> String {
    let names = [
        ("Непомнящий, Ян", "Карякин, Сергей"),
        ("Әбдіғалиев, Қасым Ғалымұлы", "Өлзийбаяр, Үүрийнхүү"),
        ("پرویز چمران", "ژاله گلکار یزدی"),
    ];
    let mut csv = String::from("board,white,black,white_title,black_elo\n");
    for b in 1..=boards {
        let (w, k) = names[b % names.len()];
        csv.push_str(&format!("{b},\"{w} {b}\",\"{k} {b}\",GM,{}\n", 2000 + b));
    }
    csv
}

/// The longest corpus game, continued to `plies` plies with legal moves that do not end the
/// game (the first such move in shakmaty's order, rotated by the ply number).
fn long_game(plies: usize) -> PgnGame {
    let mut game = corpus("Capablanca.pgn")
        .into_iter()
        .max_by_key(|g| g.moves.len())
        .expect("a corpus game");
    let mut pos = game.start.clone();
    for m in &game.moves {
        pos = pos.play(*m).expect("a legal corpus game");
    }
    while game.moves.len() < plies {
        let legal = pos.legal_moves();
        let n = legal.len();
        let next = (0..n)
            .map(|k| legal[(k + game.moves.len() * 7) % n])
            .find(|m| pos.clone().play(*m).is_ok_and(|p| !p.is_game_over()))
            .expect("a move that does not end the game");
        game.sans
            .push(SanPlus::from_move_and_play_unchecked(&mut pos.clone(), next).to_string());
        pos = pos.play(next).expect("legal");
        game.moves.push(next);
    }
    game.outcome = None;
    game
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: a smoke run then.
    let full = std::env::args().any(|a| a == "--bench");
    let boards = knob("PDFBENCH_BOARDS", if full { 64 } else { 4 });
    let runs = knob("PDFBENCH_RUNS", if full { 5 } else { 1 });
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("round.db");

    eprintln!("recording a round of {boards} boards ...");
    let started = Instant::now();
    let mut games = corpus("tatamast22.pgn");
    games.extend(corpus("Capablanca.pgn"));
    let mut store = Store::open(&db).expect("a database");
    store
        .set_round(&RoundInfo {
            event: "Қазақстан кубогы".into(),
            site: "Алматы".into(),
            round: 1,
        })
        .expect("the round");
    let mut plies = 0;
    for (b, game) in games.iter().take(boards).enumerate() {
        record(&mut store, &format!("hall {}", b + 1), b as u32 + 1, game);
        plies += game.moves.len();
    }
    let rows = pairings::parse(&pairings_csv(boards), PairingsFormat::Csv, 1).expect("pairings");
    store.import_pairings(1, &rows).expect("imported");
    drop(store);
    eprintln!(
        "recorded {plies} plies in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let out = dir.path().join("round-1.pdf");
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let status = Command::new(BIN)
            .args(["export", "--format", "pdf", "--round", "1", "--out"])
            .arg(&out)
            .arg("--db")
            .arg(&db)
            .status()
            .expect("the boardscribe binary runs");
        times.push(t.elapsed());
        assert!(status.success(), "export --round 1 --format pdf failed");
    }
    times.sort();
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let pages = Command::new("pdfinfo")
        .arg(&out)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Pages:").map(|p| p.trim().to_owned()))
        })
        .unwrap_or_else(|| "? (no pdfinfo)".into());

    // A game of 120 moves, alone.
    let long = long_game(240);
    let mut store = Store::open_in_memory().expect("a database");
    record(&mut store, "long", 1, &long);
    let g = store
        .games()
        .expect("games")
        .into_iter()
        .max_by_key(|g| g.moves.len())
        .expect("the long game");
    assert_eq!(g.moves.len(), 240, "120 moves recorded");
    let long_pdf = export::export_bytes(
        &store,
        Format::Pdf,
        Some(g.id),
        ExportOptions::default(),
        &SheetOptions::default(),
    )
    .expect("the PDF");
    let figurine = export::export_bytes(
        &store,
        Format::Pdf,
        Some(g.id),
        ExportOptions::default(),
        &SheetOptions {
            notation: Notation::Figurine,
            ..SheetOptions::default()
        },
    )
    .expect("the PDF");

    let ms = |d: &Duration| d.as_secs_f64() * 1000.0;
    println!(
        "round PDF, {boards} boards ({plies} plies), {runs} runs of `boardscribe export --round 1 --format pdf`:"
    );
    println!(
        "  wall time: min {:.0} ms, median {:.0} ms, max {:.0} ms",
        ms(&times[0]),
        ms(&times[times.len() / 2]),
        ms(&times[times.len() - 1])
    );
    println!("  file: {size} bytes, {pages} pages");
    println!(
        "120-move game (two sheets): {} bytes; with figurines: {} bytes",
        long_pdf.len(),
        figurine.len()
    );
}
