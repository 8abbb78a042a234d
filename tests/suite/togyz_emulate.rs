//! `boardscribe emulate --kind togyz` as a user meets it: real processes and real
//! pseudo-terminals. The emulated pit board plays a corpus record (or a seeded random game),
//! `boardscribe run` records it from a config with a togyz board, `boardscribe export` reads the
//! record back; a chess PGN given to the togyz board is refused, naming what it is.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use boardscribe::{
    emulator::{random_togyz_game, togyz_records},
    game::togyz::{
        Position, Rules,
        notation::{MoveText, Record},
    },
};
use serde_json::Value;

use crate::pty_end_to_end::{BIN, DEADLINE, Proc, poll};

const TOGYZ: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/togyz");
const CHESS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");

/// The togyz records of corpus file `file`.
fn records(file: &str) -> Vec<Record> {
    let text = std::fs::read_to_string(Path::new(TOGYZ).join(file)).unwrap();
    togyz_records(&text, Rules::KYRGYZ)
        .unwrap()
        .into_iter()
        .map(|(record, _)| record)
        .collect()
}

/// A config recording one togyz board at `link` into `db`, its event played at `time_control`.
fn togyz_config(dir: &Path, link: &Path, db: &Path, time_control: &str) -> PathBuf {
    let config = dir.join("boardscribe.toml");
    std::fs::write(
        &config,
        format!(
            "database = \"{}\"\n[tournament]\nevent = \"Togyz test\"\ntime_control = \
             \"{time_control}\"\n\n[[board]]\nnumber = 1\nkind = \"togyz\"\nport = \"{}\"\n",
            db.display(),
            link.display()
        ),
    )
    .unwrap();
    config
}

/// `boardscribe emulate --kind togyz` with `args`, linked at `dir/<name>`.
fn emulate_togyz(dir: &Path, name: &str, args: &[&str]) -> (Proc, PathBuf) {
    let link = dir.join(name);
    let mut all = vec![
        "emulate",
        "--kind",
        "togyz",
        "--link",
        link.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let proc = Proc::start(dir, &format!("emulate-{name}"), &all);
    poll(&format!("the link {}", link.display()), || {
        std::fs::symlink_metadata(&link).ok().map(|_| ())
    });
    (proc, link)
}

/// The games `boardscribe export --format json` gives of `db`, once it reads.
fn exported_games(db: &Path) -> Option<Vec<Value>> {
    let out = Command::new(BIN)
        .args(["export", "--db", db.to_str().unwrap(), "--format", "json"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let json: Value = serde_json::from_slice(&out.stdout).ok()?;
    json["games"].as_array().cloned()
}

/// The moves of a JSON-exported game, as written (`76`, `45X`).
fn notations(game: &Value) -> Vec<String> {
    game["moves"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter_map(|m| m["notation"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Records from `config` until the board's one game has `plies` moves; the games then.
fn record_until(dir: &Path, config: &Path, db: &Path, plies: usize) -> Vec<Value> {
    let mut daemon = Proc::start(dir, "run", &["run", "--config", config.to_str().unwrap()]);
    let start = Instant::now();
    let mut last = Vec::new();
    loop {
        if let Some(games) = exported_games(db) {
            if games.last().is_some_and(|g| notations(g).len() >= plies) {
                break;
            }
            last = games.iter().map(notations).collect();
        }
        assert!(
            start.elapsed() < DEADLINE,
            "fewer than {plies} plies after {DEADLINE:?}: {last:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    daemon.terminate();
    assert!(daemon.wait_exit(Duration::from_secs(20)).success());
    exported_games(db).expect("the export reads")
}

/// A corpus record on an emulated pit board, the clocks set from the event's config (10+5),
/// recorded by a real daemon: the record's moves, as written in the corpus, and clocks of a
/// 10-minute game, with no clock alert.
#[test]
fn a_corpus_record_played_by_emulate_kind_togyz_is_recorded_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = "playok-2025.pgn";
    // A short game of the file, so that the test plays it whole.
    let all = records(file);
    let (n, record) = all
        .iter()
        .enumerate()
        .filter(|(_, r)| (20..=50).contains(&r.moves.len()))
        .min_by_key(|(_, r)| r.moves.len())
        .expect("a game of 20 to 50 plies");
    let expected: Vec<String> = record.moves.iter().map(|m| m.text.to_string()).collect();
    let db = d.join("togyz.db");
    let link = d.join("pitboard");
    let config = togyz_config(d, &link, &db, "10+5");
    let game = (n + 1).to_string();
    let pgn = Path::new(TOGYZ).join(file);
    let (mut emulator, _) = emulate_togyz(
        d,
        "pitboard",
        &[
            "--pgn",
            pgn.to_str().unwrap(),
            "--game",
            &game,
            "--config",
            config.to_str().unwrap(),
            "--speed",
            "0.05",
            "--seed",
            "4",
            "--linger-ms",
            "1500",
        ],
    );
    let games = record_until(d, &config, &db, expected.len());
    assert!(emulator.wait_exit(DEADLINE).success());
    assert_eq!(games.len(), 1, "{games:#?}");
    let g = &games[0];
    assert_eq!(g["kind"], "togyz");
    assert_eq!(notations(g), expected, "game {game} of {file}");
    let kinds: Vec<&str> = g["irregularities"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["kind"].as_str())
        .collect();
    assert!(kinds.is_empty(), "raised on a clean record: {kinds:?}");
    let moves = g["moves"].as_array().unwrap();
    let white = moves.iter().find_map(|m| m["clock_white_ms"].as_u64());
    let white = white.unwrap_or_else(|| panic!("no clock recorded: {g:#}"));
    assert!(
        (590_000..=605_000).contains(&white),
        "white's first clock {white} ms is not a 10-minute game's (the config's 10+5)"
    );
}

/// A seeded random togyz game (`emulate --kind togyz --seed S`, no record): a real daemon
/// records exactly the game the seed gives, every move legal from the start.
#[test]
fn a_seeded_random_togyz_game_is_recorded_legally() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The first seed whose game is short enough to play whole here.
    let (seed, moves) = (0u64..)
        .map(|s| (s, random_togyz_game(s, Rules::KYRGYZ)))
        .find(|(_, m)| m.len() <= 60)
        .expect("a short game");
    let mut pos = Position::with_rules(Rules::KYRGYZ);
    let mut expected = Vec::new();
    for mv in &moves {
        let text = MoveText::of(&pos, *mv).expect("the generator plays legal moves");
        expected.push(text.to_string());
        pos = pos.play(*mv).unwrap();
    }
    let db = d.join("random.db");
    let link = d.join("pitboard");
    let config = togyz_config(d, &link, &db, "25+10");
    let seed_text = seed.to_string();
    let (mut emulator, _) = emulate_togyz(
        d,
        "pitboard",
        &[
            "--seed",
            &seed_text,
            "--speed",
            "0.05",
            "--linger-ms",
            "1500",
        ],
    );
    let games = record_until(d, &config, &db, expected.len());
    assert!(emulator.wait_exit(DEADLINE).success());
    assert!(
        emulator.log_text().contains(&format!(
            "random game from seed {seed} ({} plies)",
            moves.len()
        )),
        "{}",
        emulator.log_text()
    );
    assert_eq!(games.len(), 1, "{games:#?}");
    let recorded = notations(&games[0]);
    assert_eq!(recorded, expected, "seed {seed}");
    // Legal, as recorded: each text names a legal sowing of the position it was played in.
    let mut pos = Position::with_rules(Rules::KYRGYZ);
    for (ply, text) in recorded.iter().enumerate() {
        let text: MoveText = text.parse().unwrap();
        pos = text
            .to_move(&pos)
            .unwrap_or_else(|e| panic!("ply {}: {text} is not legal: {e}", ply + 1))
            .0;
    }
}

/// A chess PGN given to the togyz board is an error naming it, not a game; the process never
/// opens a pty.
#[test]
fn a_chess_pgn_given_to_the_togyz_emulator_is_refused_naming_it() {
    let pgn = Path::new(CHESS).join("tatamast22.pgn");
    let out = Command::new(BIN)
        .args(["emulate", "--kind", "togyz", "--pgn"])
        .arg(&pgn)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("is not a togyz korgool record") && said.contains("read as chess"),
        "{said}"
    );
    assert!(said.contains("--kind dgt"), "{said}");
    assert!(out.stdout.is_empty(), "a pty was opened: {:?}", out.stdout);
}
