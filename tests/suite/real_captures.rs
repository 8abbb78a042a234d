//! The three real DGT captures (../shared/captures/dgt-arnsholt) replay to exactly the moves that
//! were played, through the same pipeline and store as `run`.

use std::path::{Path, PathBuf};

use boardscribe::{
    export::{self, Format},
    replay::replay_file,
    store::Store,
    tracker::TrackerEvent,
};
use shakmaty::{Chess, Position, san::San, uci::UciMove};

fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel)
}

/// Expected moves in UCI from a `.uci` file (`1. e2e4 e7e5` lines; `*` ends).
fn expected_uci(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(str::to_string)
        .collect()
}

/// Expected moves in UCI from a PGN movetext (SAN), via shakmaty.
fn expected_from_pgn(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut pos = Chess::default();
    let mut out = Vec::new();
    for token in text.split_whitespace() {
        if token.ends_with('.') || ["1-0", "0-1", "1/2-1/2", "*"].contains(&token) {
            continue;
        }
        let token = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        let san: San = token.trim_end_matches(['+', '#']).parse().unwrap();
        let m = san.to_move(&pos).unwrap();
        out.push(UciMove::from_standard(m).to_string());
        pos.play_unchecked(m);
    }
    out
}

fn replay_one(name: &str) -> (Vec<String>, Vec<TrackerEvent>, Store) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let mut events = Vec::new();
    let summary = replay_file(
        &mut store,
        &shared(&format!("captures/dgt-arnsholt/{name}.capture")),
        &mut |_, e| events.push(e.clone()),
    )
    .unwrap();
    assert_eq!(
        summary.stats.decode_warnings, 0,
        "{name}: the real capture decodes cleanly"
    );
    assert_eq!(summary.games.len(), 1, "{name}: one game");
    let game = store.game(summary.games[0]).unwrap().unwrap();
    let moves = game
        .moves
        .iter()
        .map(|m| m.uci.clone().unwrap())
        .collect::<Vec<_>>();
    (moves, events, store)
}

#[test]
fn capture_1_replays_to_its_moves() {
    let (moves, _, _) = replay_one("1");
    assert_eq!(moves, expected_uci(&shared("captures/dgt-arnsholt/1.uci")));
}

#[test]
fn capture_2_on_a_rotated_board_replays_to_its_moves() {
    let (moves, events, _) = replay_one("2");
    assert_eq!(moves, expected_uci(&shared("captures/dgt-arnsholt/2.uci")));
    assert!(events.iter().any(|e| matches!(
        e,
        TrackerEvent::GameStarted {
            orientation: boardscribe::sensor::Orientation::Rotated,
            ..
        }
    )));
}

#[test]
fn johan_replays_to_its_moves_and_the_kings_are_not_a_move() {
    let (moves, events, store) = replay_one("johan");
    assert_eq!(
        moves,
        expected_from_pgn(&shared("captures/dgt-arnsholt/johan.pgn"))
    );
    assert!(
        events.iter().any(|e| matches!(e, TrackerEvent::ResultGesture { proposed, .. } if proposed.as_pgn() == "1-0")),
        "the kings in the centre propose 1-0"
    );
    let pgn = export::export(&store, Format::Pgn, None).unwrap();
    assert!(pgn.contains("22. Qxc6"), "{pgn}");
}

#[test]
fn replay_is_deterministic() {
    let (a, ea, _) = replay_one("johan");
    let (b, eb, _) = replay_one("johan");
    assert_eq!(a, b);
    assert_eq!(ea, eb);
}

#[test]
fn clock_times_are_attached_to_moves() {
    let (_, events, _) = replay_one("1");
    let moves: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            TrackerEvent::Move(m) => Some(m),
            _ => None,
        })
        .collect();
    assert!(
        moves
            .iter()
            .all(|m| m.clock_white_ms.is_some() && m.clock_black_ms.is_some())
    );
    // A 3+2 game: after 1. e4 White has 3:01 (3:02 start, one second used, two added).
    assert_eq!(moves[0].clock_white_ms, Some(181_000));
}
