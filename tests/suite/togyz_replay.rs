//! Togyz korgool end to end through `replay`: corpus games played on the togyz emulator, their
//! captures (`device: togyz`) replayed through the same pipeline `run` uses into SQLite, and the
//! stored record read back: the moves in the corpus's notation, the result the rules give, the
//! JSON export's `kind: "togyz"` and the position after each move, and a flag fall counted by the
//! Kyrgyz rules.

use boardscribe::{
    emulator::{TogyzEmulatorOptions, script_togyz, togyz_records},
    export,
    game::togyz::{Move, Rules, notation::Record},
    replay::replay_reader,
    sensor::Orientation,
    store::{GameRecord, Store},
};

const PLAYOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/playok-2025.pgn"
);

fn games(n: usize) -> Vec<(Record, Vec<Move>)> {
    let text = std::fs::read_to_string(PLAYOK).expect("corpus");
    let mut all = togyz_records(&text, Rules::KYRGYZ).expect("records");
    all.truncate(n);
    all
}

/// Replays one emulated game's capture into a new store; the game recorded.
fn replayed(moves: &[Move], opts: &TogyzEmulatorOptions) -> (Store, GameRecord) {
    let script = script_togyz(moves, opts).expect("script");
    let text = script.to_capture_text();
    let mut store = Store::open_in_memory().expect("store");
    let summary = replay_reader(
        &mut store,
        "togyz capture",
        "pit board 1",
        text.as_bytes(),
        &mut |_, _| {},
    )
    .expect("replay");
    assert_eq!(summary.games.len(), 1, "one game");
    let game = store.game(summary.games[0]).expect("read").expect("game");
    (store, game)
}

#[test]
fn corpus_games_replay_into_the_store_exactly_with_the_rules_result() {
    let mut decided = 0;
    for (g, (rec, moves)) in games(30).iter().enumerate() {
        let opts = TogyzEmulatorOptions {
            seed: 40 + g as u64,
            rotated: g % 3 == 1,
            ..TogyzEmulatorOptions::default()
        };
        let (_, game) = replayed(moves, &opts);
        let want: Vec<String> = rec.moves.iter().map(|m| m.text.to_string()).collect();
        let got: Vec<String> = game.moves.iter().map(|m| m.notation.clone()).collect();
        assert_eq!(got, want, "game {}", g + 1);
        assert_eq!(game.kind, boardscribe::game::Kind::Togyz);
        // The start position reads the same both ways round; the first move settles which way
        // the board lies, and the stored game says so (a restart resumes in that orientation).
        let lies = if opts.rotated {
            Orientation::Rotated
        } else {
            Orientation::Normal
        };
        assert_eq!(game.orientation, lies, "game {}", g + 1);
        // A game the rules end on the board (82, 81:81, atsyrau) carries that result.
        let last = rec.replay(Rules::KYRGYZ).expect("replays");
        if let Some(result) = last.last().outcome() {
            decided += 1;
            assert_eq!(game.result, result.outcome.as_pgn(), "game {}", g + 1);
            assert!(game.termination.is_some(), "game {}", g + 1);
        } else {
            assert_eq!(game.result, "*", "game {}: not over on the board", g + 1);
        }
    }
    assert!(decided > 0, "some games end on the board");
}

#[test]
fn the_json_export_names_the_kind_and_the_position_after_each_move() {
    let (rec, moves) = games(1).swap_remove(0);
    let (store, game) = replayed(&moves, &TogyzEmulatorOptions::default());
    let text = export::export(&store, export::Format::Json, Some(game.id)).expect("export");
    let json: serde_json::Value = serde_json::from_str(&text).expect("json");
    let g = &json["games"][0];
    assert_eq!(g["kind"], "togyz");
    let exported = g["moves"].as_array().expect("moves");
    assert_eq!(exported.len(), rec.moves.len());
    let replay = rec.replay(Rules::KYRGYZ).expect("replays");
    for (i, m) in exported.iter().enumerate() {
        assert_eq!(m["notation"], rec.moves[i].text.to_string());
        let fen = boardscribe::game::togyz::notation::to_fen(&replay.positions[i + 1]);
        assert_eq!(m["position"], fen, "ply {}", i + 1);
    }
}

#[test]
fn a_flag_fall_is_counted_by_the_kyrgyz_rules() {
    // A short clock: White's or Black's flag falls long before the game's end.
    let (_, moves) = games(3).swap_remove(2);
    let opts = TogyzEmulatorOptions {
        seed: 3,
        time_control: Some((20_000, 0)),
        ..TogyzEmulatorOptions::default()
    };
    let (_, game) = replayed(&moves, &opts);
    let flag = game
        .events
        .iter()
        .find(|e| e.kind == "flag_fall")
        .expect("a flag fall");
    assert_eq!(flag.detail["article"], "3.10", "{flag:?}");
    // Only the flagged player's store counts: the proposed result follows from the note's count.
    let note = flag.detail["note"].as_str().expect("note");
    let counted: Vec<u32> = note
        .trim_start_matches("counted ")
        .split(':')
        .map(|n| n.parse().expect("count"))
        .collect();
    let white = flag.detail["side"] == "white";
    let own = if white { counted[0] } else { counted[1] };
    let expected = match (own, white) {
        (0..=80, true) | (82.., false) => "0-1",
        (0..=80, false) | (82.., true) => "1-0",
        _ => "1/2-1/2",
    };
    assert_eq!(flag.detail["proposed"], expected, "{note}");
    assert_eq!(counted[0] + counted[1], 162);
}
