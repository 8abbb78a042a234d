//! Arbiter decisions on real games: results, rulings, corrected moves and notes are appended as
//! `decision` events, validated against the stored game, and shown by the exports (and the
//! history) without anything recorded being overwritten. Games come from the real capture
//! `dgt-arnsholt/1.capture` (a 3+2 game, 57 plies), replayed through the daemon's pipeline; the
//! irregularities come from the same game played by the emulator with scripted irregularities.

use std::{
    io::Cursor,
    path::{Path, PathBuf},
    process::{Command, Output},
};

use boardscribe::{
    emulator::{
        EmulatorOptions, IllegalKind, IrregularityScript, PgnGame, ScriptedIrregularity, script_pgn,
    },
    export::{self, ExportOptions, Format},
    replay::{replay_file, replay_reader},
    store::{Action, DecisionError, GameId, ResultReason, Ruling, Store},
};
use serde_json::Value;
use shakmaty::{Chess, EnPassantMode, fen::Fen, san::SanPlus, uci::UciMove};

const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/captures/dgt-arnsholt/1.capture"
);
const UCI: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/captures/dgt-arnsholt/1.uci"
);
pub(crate) const T: u64 = 1_764_000_000_000;

/// The moves of 1.capture as its `.uci` file gives them.
pub(crate) fn expected_uci() -> Vec<String> {
    std::fs::read_to_string(UCI)
        .unwrap()
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(str::to_string)
        .collect()
}

/// `(SAN with suffix, FEN after)` of each move of `ucis` played from the start, by shakmaty.
pub(crate) fn sans_and_fens(ucis: &[String]) -> Vec<(String, String)> {
    let mut pos = Chess::default();
    ucis.iter()
        .map(|u| {
            let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
            let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
            (san, fen)
        })
        .collect()
}

/// 1.capture replayed into a fresh database file.
pub(crate) fn replayed() -> (tempfile::TempDir, PathBuf, Store, GameId) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let mut store = Store::open(&db).unwrap();
    let summary = replay_file(&mut store, Path::new(CAPTURE), &mut |_, _| {}).unwrap();
    assert_eq!(summary.games.len(), 1);
    let game = summary.games[0];
    let live: Vec<_> = store.game(game).unwrap().unwrap().moves;
    assert_eq!(
        live.iter()
            .map(|m| m.uci.clone().unwrap())
            .collect::<Vec<_>>(),
        expected_uci()
    );
    (dir, db, store, game)
}

/// The game of 1.capture played by the emulator with an illegal move (reinstated) before ply 9
/// and a clock press without a move before ply 20, replayed into `store`.
pub(crate) fn irregular_game(store: &mut Store) -> GameId {
    let mut pos = Chess::default();
    let mut moves = Vec::new();
    let mut sans = Vec::new();
    for u in expected_uci() {
        let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        sans.push(SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
        moves.push(m);
    }
    let game = PgnGame {
        tags: Vec::new(),
        start: Chess::default(),
        moves,
        sans,
        outcome: None,
    };
    let opts = EmulatorOptions {
        result_gesture: false,
        irregularities: vec![
            ScriptedIrregularity {
                before_ply: 9,
                kind: IrregularityScript::IllegalMove {
                    kind: IllegalKind::WrongShape,
                },
            },
            ScriptedIrregularity {
                before_ply: 20,
                kind: IrregularityScript::PressWithoutMove,
            },
        ],
        ..EmulatorOptions::default()
    };
    let text = script_pgn(&game, &opts).unwrap().to_capture_text();
    let summary = replay_reader(
        store,
        "scripted",
        "scripted",
        Cursor::new(text),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(summary.games.len(), 1);
    summary.games[0]
}

/// Rows of the moves table of `game`: (all, retracted).
pub(crate) fn move_rows(db: &Path, game: GameId) -> (i64, i64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(
        "SELECT count(*), count(retracted_by) FROM moves WHERE game_id = ?1",
        [game.0],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

fn event_count(store: &Store, game: GameId) -> usize {
    store.game(game).unwrap().unwrap().events.len()
}

pub(crate) fn json_game(store: &Store, game: GameId, history: bool) -> Value {
    let text = export::export_with(
        store,
        Format::Json,
        Some(game),
        ExportOptions {
            history,
            ..ExportOptions::default()
        },
    )
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["games"][0].clone()
}

pub(crate) fn pgn(store: &Store, game: GameId, history: bool) -> String {
    export::export_with(
        store,
        Format::Pgn,
        Some(game),
        ExportOptions {
            history,
            ..ExportOptions::default()
        },
    )
    .unwrap()
}

/// The movetext of a PGN without comments, as SAN tokens (move numbers dropped).
pub(crate) fn movetext_sans(pgn: &str) -> Vec<String> {
    let body = pgn.split("\n\n").nth(1).unwrap();
    let mut out = Vec::new();
    let mut depth = 0;
    let mut plain = String::new();
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    for token in plain.split_whitespace() {
        let token = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if !token.is_empty() && !["1-0", "0-1", "1/2-1/2", "*"].contains(&token) {
            out.push(token.to_string());
        }
    }
    out
}

#[test]
fn no_decision_leaves_the_exports_as_they_were() {
    let (_dir, _db, store, game) = replayed();
    let record = store.game(game).unwrap().unwrap();
    let g = json_game(&store, game, false);
    assert!(g.get("decisions").is_none() && g.get("history").is_none());
    assert_eq!(
        pgn(&store, game, false),
        export::write_pgn([&record], &export::PgnStyle::arbiter())
    );
    assert!(!pgn(&store, game, false).contains("Arbiter"));
    assert!(store.decisions(game).unwrap().is_empty());
}

#[test]
fn set_result_updates_the_game_and_a_change_keeps_both_decisions() {
    let (_dir, _db, mut store, game) = replayed();
    let first = store
        .set_result(
            game,
            "1-0",
            ResultReason::Resignation,
            "A. Arbiter",
            Some("black resigned"),
            T,
        )
        .unwrap();
    let g = store.game(game).unwrap().unwrap();
    assert_eq!(g.result, "1-0");
    assert_eq!(g.termination.as_deref(), Some("resignation"));

    let second = store
        .set_result(
            game,
            "1/2-1/2",
            ResultReason::Agreement,
            "Chief",
            None,
            T + 60_000,
        )
        .unwrap();
    assert!(second.id > first.id);
    let g = store.game(game).unwrap().unwrap();
    assert_eq!(
        (g.result.as_str(), g.termination.as_deref()),
        ("1/2-1/2", Some("agreement"))
    );

    let decisions = store.decisions(game).unwrap();
    assert_eq!(decisions, vec![first.clone(), second.clone()]);
    assert_eq!(decisions[0].author, "A. Arbiter");
    assert_eq!(decisions[0].at_ms, T);
    assert_eq!(decisions[0].note.as_deref(), Some("black resigned"));
    assert_eq!(
        decisions[1].action,
        Action::SetResult {
            result: "1/2-1/2".into(),
            reason: ResultReason::Agreement,
            previous_result: "1-0".into(),
            previous_termination: Some("resignation".into()),
        }
    );
    let history = store.history(game).unwrap();
    let kinds: Vec<_> = history.iter().map(|h| h.event.kind.as_str()).collect();
    assert_eq!(kinds, ["game_started", "decision", "decision"]);

    let j = json_game(&store, game, false);
    assert_eq!(j["result"], "1/2-1/2");
    assert_eq!(j["termination"], "agreement");
    let d = j["decisions"].as_array().unwrap();
    assert_eq!(d.len(), 2);
    assert_eq!(d[0]["action"], "set_result");
    assert_eq!(d[0]["result"], "1-0");
    assert_eq!(d[0]["reason"], "resignation");
    assert_eq!(d[0]["author"], "A. Arbiter");
    assert_eq!(d[0]["note"], "black resigned");
    assert_eq!(d[0]["at_ms"], T);
    assert_eq!(d[1]["previous_result"], "1-0");
    assert_eq!(d[1]["id"], second.id);

    let text = pgn(&store, game, false);
    assert!(text.contains("[Result \"1/2-1/2\"]"), "{text}");
    assert!(text.trim_end().ends_with("1/2-1/2"));
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "{ Arbiter: result 1-0 (resignation), was *; by A. Arbiter: black resigned }"
        ),
        "{flat}"
    );
    assert!(flat.contains("{ Arbiter: result 1/2-1/2 (agreement), was 1-0; by Chief } 1/2-1/2"));
    // The comments are after the last move.
    let last = flat.rfind("29. Bf6").unwrap();
    assert!(flat.find("Arbiter: result").unwrap() > last);
}

#[test]
fn forfeits_are_stored_as_given_and_exported_as_pgn_results() {
    let (_dir, _db, mut store, game) = replayed();
    store
        .set_result(game, "-/+", ResultReason::Forfeit, "arb", None, T)
        .unwrap();
    assert_eq!(json_game(&store, game, false)["result"], "-/+");
    let text = pgn(&store, game, false);
    assert!(text.contains("[Result \"0-1\"]"));
    assert!(text.contains("result -/+ (forfeit)"));
    store
        .set_result(game, "-/-", ResultReason::Forfeit, "arb", None, T + 1)
        .unwrap();
    let text = pgn(&store, game, false);
    assert!(text.contains("[Result \"*\"]") && text.trim_end().ends_with('*'));
    store
        .set_result(
            game,
            "1-0",
            ResultReason::Other("adjudication".into()),
            "arb",
            None,
            T + 2,
        )
        .unwrap();
    assert_eq!(
        store.game(game).unwrap().unwrap().termination.as_deref(),
        Some("adjudication")
    );
}

#[test]
fn set_result_refuses_what_is_not_a_result() {
    let (_dir, _db, mut store, game) = replayed();
    let before = event_count(&store, game);
    let err = |r: Result<_, DecisionError>| r.unwrap_err();
    assert!(matches!(
        err(store.set_result(GameId(99), "1-0", ResultReason::Resignation, "a", None, T)),
        DecisionError::UnknownGame(GameId(99))
    ));
    for bad in ["2-0", "1-0 ", "", "½-½", "0-0"] {
        let e = err(store.set_result(game, bad, ResultReason::Decision, "a", None, T));
        assert!(
            matches!(&e, DecisionError::InvalidResult(s) if s == bad),
            "{e}"
        );
    }
    for (result, reason) in [
        ("1-0", ResultReason::Agreement),
        ("1/2-1/2", ResultReason::Resignation),
        ("*", ResultReason::Resignation),
        ("1/2-1/2", ResultReason::Forfeit),
    ] {
        let e = err(store.set_result(game, result, reason, "a", None, T));
        assert!(matches!(e, DecisionError::InconsistentResult { .. }), "{e}");
    }
    assert!(matches!(
        err(store.set_result(game, "1-0", ResultReason::Resignation, "  ", None, T)),
        DecisionError::EmptyAuthor
    ));
    assert_eq!(event_count(&store, game), before, "nothing was appended");
    let g = store.game(game).unwrap().unwrap();
    assert_eq!((g.result.as_str(), g.termination), ("*", None));
}

#[test]
fn correct_move_retracts_the_old_rows_and_records_the_line_again() {
    let (_dir, db, mut store, game) = replayed();
    let old = store.game(game).unwrap().unwrap().moves;
    assert_eq!(move_rows(&db, game), (57, 0));

    // 9. h3 was 9. a3 on the board: everything after still stands, but 26... Bxa2 takes nothing.
    let d = store
        .correct_move(game, 17, "a2a3", "arb", Some("sensor on h3"), T)
        .unwrap();
    assert_eq!(
        d.action,
        Action::CorrectMove {
            ply: 17,
            old_uci: Some("h2h3".into()),
            old_notation: "h3".into(),
            new_uci: "a2a3".into(),
            new_notation: "a3".into(),
            retracted: 41,
        }
    );
    assert_eq!(move_rows(&db, game), (57 + 41, 41), "nothing deleted");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (by, min_ply): (i64, u32) = conn
        .query_row(
            "SELECT max(retracted_by), min(ply) FROM moves WHERE retracted_by IS NOT NULL",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((by, min_ply), (d.id, 17));

    let mut ucis = expected_uci();
    ucis[16] = "a2a3".into();
    let want = sans_and_fens(&ucis);
    let live = store.game(game).unwrap().unwrap().moves;
    assert_eq!(live.len(), 57);
    for (i, (m, o)) in live.iter().zip(&old).enumerate() {
        assert_eq!(m.ply as usize, i + 1);
        assert_eq!(m.uci.as_deref(), Some(ucis[i].as_str()));
        assert_eq!((&m.notation, &m.position), (&want[i].0, &want[i].1));
        assert_eq!(
            (m.at_ms, m.clock_white_ms, m.clock_black_ms, m.time_trouble),
            (o.at_ms, o.clock_white_ms, o.clock_black_ms, o.time_trouble),
            "ply {} keeps its time and clocks",
            m.ply
        );
        if i < 16 {
            assert_eq!(m, o);
        }
    }
    assert_eq!(old[51].notation, "Bxa2");
    assert_eq!(live[51].notation, "Ba2");

    // The export shows the corrected record, and the history shows what it replaced.
    let text = pgn(&store, game, false);
    let sans: Vec<String> = want.iter().map(|(s, _)| s.clone()).collect();
    assert_eq!(movetext_sans(&text), sans);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("9. a3 { [%clk 0:02:43] } { Arbiter: move 9 white corrected from h3 to a3; by arb: sensor on h3 } 9... c5"),
        "{flat}"
    );
    assert!(!flat.contains("History"));
    let with_history = pgn(&store, game, true);
    assert_eq!(
        movetext_sans(&with_history),
        sans,
        "history is in comments only"
    );
    let flat = with_history
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let h = flat
        .find("{ History: retracted by arbiter correct_move")
        .unwrap();
    assert!(flat[h..].starts_with(&format!(
        "{{ History: retracted by arbiter correct_move (event {}): 9. h3 c5 10. Nd5",
        d.id
    )));
    assert!(flat[h..].contains("26. Qg6 Bxa2 27. Bg5"));
    assert!(h < flat.find("9. a3").unwrap());

    let j = json_game(&store, game, true);
    assert_eq!(j["moves"][16]["uci"], "a2a3");
    assert_eq!(j["moves"][51]["notation"], "Ba2");
    assert_eq!(j["decisions"][0]["action"], "correct_move");
    assert_eq!(j["decisions"][0]["ply"], 17);
    let entry = j["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == d.id)
        .unwrap();
    assert_eq!(entry["kind"], "decision");
    let retracted = entry["retracted"].as_array().unwrap();
    assert_eq!(retracted.len(), 41);
    assert_eq!(retracted[0]["uci"], "h2h3");
    assert_eq!(retracted[35]["notation"], "Bxa2");
    assert!(json_game(&store, game, false).get("history").is_none());

    // A second correction of a corrected ply retracts the corrected rows in turn.
    let d2 = store
        .correct_move(game, 17, "h3", "arb", None, T + 1)
        .unwrap();
    assert_eq!(move_rows(&db, game), (57 + 41 + 41, 82));
    let live = store.game(game).unwrap().unwrap().moves;
    assert_eq!(
        live.iter()
            .map(|m| m.uci.clone().unwrap())
            .collect::<Vec<_>>(),
        expected_uci()
    );
    assert_eq!(live, old, "back to the sensed record, rows and all");
    let history = store.history(game).unwrap();
    let retracting: Vec<_> = history
        .iter()
        .filter(|h| !h.retracted.is_empty())
        .map(|h| (h.event.id, h.retracted[0].uci.clone().unwrap()))
        .collect();
    assert_eq!(
        retracting,
        [(d.id, "h2h3".to_string()), (d2.id, "a2a3".to_string())]
    );
    store.integrity_check().unwrap();
}

#[test]
fn correct_move_accepts_san_and_a_last_move() {
    let (_dir, db, mut store, game) = replayed();
    // The last ply, 29. Bf6 (g5f6), given in SAN as another bishop move.
    let d = store.correct_move(game, 57, "Bh6", "arb", None, T).unwrap();
    let Action::CorrectMove {
        new_uci, retracted, ..
    } = &d.action
    else {
        panic!("{d:?}")
    };
    assert_eq!((new_uci.as_str(), *retracted), ("g5h6", 1));
    assert_eq!(move_rows(&db, game), (58, 1));
    let last = store.game(game).unwrap().unwrap().moves.pop().unwrap();
    assert_eq!(last.notation, "Bh6");
}

#[test]
fn a_correction_that_makes_a_later_move_illegal_is_refused() {
    let (_dir, db, mut store, game) = replayed();
    let before = event_count(&store, game);
    // 9. h4 instead of 9. h3: 20. Rh4 (f4h4) would take its own pawn.
    let e = store
        .correct_move(game, 17, "h2h4", "arb", None, T)
        .unwrap_err();
    assert!(
        matches!(&e, DecisionError::LaterMoveIllegal { ply: 39, uci, notation } if uci == "f4h4" && notation == "Rh4"),
        "{e}"
    );
    assert!(e.to_string().contains("ply 39"), "{e}");
    // 1. e3 instead of 1. e4: 7. Be3 (c1e3) lands on the pawn.
    let e = store
        .correct_move(game, 1, "e3", "arb", None, T)
        .unwrap_err();
    assert!(
        matches!(e, DecisionError::LaterMoveIllegal { ply: 13, .. }),
        "{e}"
    );
    assert_eq!(move_rows(&db, game), (57, 0));
    assert_eq!(event_count(&store, game), before);
}

#[test]
fn correct_move_refuses_bad_plies_and_moves() {
    let (_dir, db, mut store, game) = replayed();
    let before = event_count(&store, game);
    let mut err = |game, ply, mv: &str| {
        store
            .correct_move(game, ply, mv, "arb", None, T)
            .unwrap_err()
    };
    assert!(matches!(
        err(GameId(42), 1, "e2e4"),
        DecisionError::UnknownGame(GameId(42))
    ));
    for ply in [0, 58, 1000] {
        let e = err(game, ply, "e2e4");
        assert!(
            matches!(e, DecisionError::NoSuchPly { ply: p, plies: 57, .. } if p == ply),
            "{e}"
        );
    }
    // 5. Nd5 from the position after 4... Bc5: no knight reaches d5.
    let e = err(game, 9, "Nd5");
    assert!(
        matches!(&e, DecisionError::IllegalMove { ply: 9, fen, .. } if fen == &sans_and_fens(&expected_uci()[..8])[7].1),
        "{e}"
    );
    assert!(matches!(
        err(game, 9, "e2e5"),
        DecisionError::IllegalMove { .. }
    ));
    for junk in ["zz", "", "e9e4", "knight to d5"] {
        let e = err(game, 9, junk);
        assert!(
            matches!(e, DecisionError::InvalidMove { .. }),
            "{junk:?}: {e}"
        );
    }
    assert!(matches!(
        err(game, 9, "b5c6"),
        DecisionError::SameMove { ply: 9, .. }
    ));
    assert!(matches!(
        err(game, 9, "Bxc6"),
        DecisionError::SameMove { .. }
    ));
    assert!(matches!(
        store.correct_move(game, 9, "Ba4", "", None, T),
        Err(DecisionError::EmptyAuthor)
    ));
    assert_eq!(move_rows(&db, game), (57, 0));
    assert_eq!(event_count(&store, game), before);
}

/// After `thread_lost` the arbiter resumes the game after the last recorded ply with the moves
/// the scoresheets show; or goes back to an earlier ply (the position set up again on the board).
#[test]
fn resume_after_a_ply_withdraws_the_later_moves_and_records_the_scoresheets() {
    let (_dir, db, mut store, game) = replayed();
    let ucis = expected_uci();
    let want = sans_and_fens(&ucis);
    // The record lost its last 10 plies (as a gap would leave it): back to ply 47 first.
    let d = store
        .resume_game(game, 47, &[], "arb", Some("position set up again"), T)
        .unwrap();
    assert_eq!(
        d.action,
        Action::Resume {
            after_ply: 47,
            moves: vec![],
            retracted: 10
        }
    );
    assert_eq!(store.game(game).unwrap().unwrap().moves.len(), 47);
    // Then the scoresheets' moves, in UCI and SAN mixed, numbered as people write them.
    let written: Vec<String> = ucis[47..]
        .iter()
        .enumerate()
        .map(|(i, u)| match i % 2 {
            0 => u.clone(),
            _ => want[47 + i].0.clone(),
        })
        .collect();
    let d = store
        .resume_game(game, 47, &written, "arb", None, T + 1_000)
        .unwrap();
    let sans: Vec<String> = want[47..].iter().map(|(s, _)| s.clone()).collect();
    assert_eq!(
        d.action,
        Action::Resume {
            after_ply: 47,
            moves: sans.clone(),
            retracted: 0
        }
    );
    let live = store.game(game).unwrap().unwrap().moves;
    assert_eq!(live.len(), 57);
    for (i, m) in live.iter().enumerate().skip(47) {
        assert_eq!(m.uci.as_deref(), Some(ucis[i].as_str()));
        assert_eq!((&m.notation, &m.position), (&want[i].0, &want[i].1));
        // When they were made is not known: no clocks, the decision's time.
        assert_eq!(
            (m.clock_white_ms, m.clock_black_ms, m.at_ms),
            (None, None, T + 1_000)
        );
    }
    assert_eq!(
        move_rows(&db, game),
        (67, 10),
        "the withdrawn rows are kept"
    );
    let text = pgn(&store, game, false);
    assert_eq!(
        movetext_sans(&text),
        want.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>()
    );
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!(
            "Arbiter: game resumed after ply 47 with {} from the scoresheets; by arb",
            sans.join(" ")
        )),
        "{flat}"
    );

    // Refused, changing nothing: past the record, nothing to do, a move that is not legal.
    let before = event_count(&store, game);
    let e = store
        .resume_game(game, 58, &[], "arb", None, T)
        .unwrap_err();
    assert!(
        matches!(
            e,
            DecisionError::NoSuchPly {
                ply: 58,
                plies: 57,
                ..
            }
        ),
        "{e}"
    );
    let e = store
        .resume_game(game, 57, &[], "arb", None, T)
        .unwrap_err();
    assert!(matches!(e, DecisionError::NothingToResume), "{e}");
    let e = store
        .resume_game(game, 10, &["e2e4".into()], "arb", None, T)
        .unwrap_err();
    assert!(
        matches!(&e, DecisionError::NotAMove { ply: 11, text, position } if text == "e2e4" && position == &want[9].1),
        "{e}"
    );
    assert_eq!(event_count(&store, game), before);
    assert_eq!(store.game(game).unwrap().unwrap().moves.len(), 57);
}

#[test]
fn rulings_on_irregularities_are_shown_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let game = irregular_game(&mut store);
    let g = json_game(&store, game, false);
    let irregularities = g["irregularities"].as_array().unwrap().clone();
    let illegal = irregularities
        .iter()
        .find(|i| i["kind"] == "illegal_move")
        .unwrap_or_else(|| panic!("{irregularities:#?}"));
    let id = illegal["id"].as_u64().unwrap() as u32;
    let ply = illegal["ply"].as_u64().unwrap() as u32;
    assert_eq!(ply, 9, "the scripted illegal move came before ply 9");
    assert!(illegal.get("ruling_by_arbiter").is_none());

    let first = store
        .rule_on_irregularity(
            game,
            id,
            Ruling::PositionReinstated { ply: 9 },
            "arb",
            None,
            T,
        )
        .unwrap();
    let second = store
        .rule_on_irregularity(
            game,
            id,
            Ruling::PenaltyApplied {
                description: "2 minutes added to black".into(),
            },
            "Chief",
            Some("on appeal"),
            T + 5,
        )
        .unwrap();
    assert_eq!(
        second.action,
        Action::Rule {
            irregularity: id,
            ruling: Ruling::PenaltyApplied {
                description: "2 minutes added to black".into()
            }
        }
    );
    let others: Vec<u32> = irregularities
        .iter()
        .filter_map(|i| i["id"].as_u64())
        .map(|i| i as u32)
        .filter(|&i| i != id)
        .collect();
    assert!(!others.is_empty(), "{irregularities:#?}");
    store
        .rule_on_irregularity(game, others[0], Ruling::MoveStands, "arb", None, T + 6)
        .unwrap();
    store
        .rule_on_irregularity(game, others[0], Ruling::NoAction, "arb", None, T + 7)
        .unwrap();
    assert_eq!(store.decisions(game).unwrap().len(), 4);
    assert_eq!(store.decisions(game).unwrap()[0], first);

    let g = json_game(&store, game, false);
    let find = |id: u32| {
        g["irregularities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["id"] == id)
            .unwrap()
            .clone()
    };
    let ruled = &find(id)["ruling_by_arbiter"];
    assert_eq!(ruled["decision"], second.id, "the latest ruling");
    assert_eq!(ruled["author"], "Chief");
    assert_eq!(ruled["note"], "on appeal");
    assert_eq!(ruled["at_ms"], T + 5);
    assert_eq!(ruled["ruling"]["kind"], "penalty_applied");
    assert_eq!(ruled["ruling"]["description"], "2 minutes added to black");
    assert_eq!(
        find(others[0])["ruling_by_arbiter"]["ruling"]["kind"],
        "no_action"
    );
    let d = g["decisions"].as_array().unwrap();
    assert_eq!(d[0]["ruling"]["kind"], "position_reinstated");
    assert_eq!(d[0]["ruling"]["ply"], 9);
    assert_eq!(d[0]["irregularity"], id);
    assert_eq!(
        d[0]["ply"], 9,
        "the event comes before the ply of its irregularity"
    );

    // In PGN the rulings follow the irregularity, before ply 9 (5. Bxc6).
    let flat = pgn(&store, game, false)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let irr = flat.find("Irregularity: illegal_move").unwrap();
    let r1 = flat
        .find(&format!(
            "Arbiter: irregularity {id} ruled: position reinstated (before ply 9); by arb }}"
        ))
        .unwrap_or_else(|| panic!("{flat}"));
    let r2 = flat
        .find(&format!("Arbiter: irregularity {id} ruled: penalty applied: 2 minutes added to black; by Chief: on appeal }}"))
        .unwrap();
    let mv = flat.find("5. Bxc6").unwrap();
    assert!(irr < r1 && r1 < r2 && r2 < mv, "{flat}");
}

#[test]
fn rulings_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let game = irregular_game(&mut store);
    let plies = store.game(game).unwrap().unwrap().moves.len() as u32;
    let ids: Vec<u32> = json_game(&store, game, false)["irregularities"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["id"].as_u64())
        .map(|i| i as u32)
        .collect();
    let missing = ids.iter().max().unwrap() + 1;
    let before = event_count(&store, game);
    let mut rule = |game, id, ruling| store.rule_on_irregularity(game, id, ruling, "arb", None, T);
    assert!(matches!(
        rule(game, missing, Ruling::MoveStands),
        Err(DecisionError::UnknownIrregularity { id, .. }) if id == missing
    ));
    assert!(matches!(
        rule(GameId(77), ids[0], Ruling::MoveStands),
        Err(DecisionError::UnknownGame(GameId(77)))
    ));
    for bad in [0, plies + 2] {
        assert!(matches!(
            rule(game, ids[0], Ruling::PositionReinstated { ply: bad }),
            Err(DecisionError::NoSuchPly { ply, .. }) if ply == bad
        ));
    }
    assert_eq!(event_count(&store, game), before);
    // The real capture has no irregularity at all: its irregularity 1 does not exist.
    let (_dir, _db, mut real, real_game) = replayed();
    assert!(matches!(
        real.rule_on_irregularity(real_game, 1, Ruling::NoAction, "arb", None, T),
        Err(DecisionError::UnknownIrregularity { id: 1, .. })
    ));
}

#[test]
fn notes_go_after_their_ply_or_at_the_end() {
    let (_dir, _db, mut store, game) = replayed();
    let on_ply = store
        .add_note(game, Some(3), "Nf3 was played with the left hand", "arb", T)
        .unwrap();
    assert_eq!(on_ply.action, Action::Note { ply: Some(3) });
    assert_eq!(
        on_ply.note.as_deref(),
        Some("Nf3 was played with the left hand")
    );
    store
        .add_note(
            game,
            None,
            "Spectator complaint about noise",
            "Deputy",
            T + 1,
        )
        .unwrap();
    let flat = pgn(&store, game, false)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains("2. Nf3 { [%clk 0:03:01] } { Arbiter: Nf3 was played with the left hand (arb) } 2... Nc6"),
        "{flat}"
    );
    assert!(flat.contains(
        "29. Bf6 { [%clk 0:01:49] } { Arbiter: Spectator complaint about noise (Deputy) } *"
    ));
    let d = &json_game(&store, game, false)["decisions"];
    assert_eq!(d[0]["action"], "note");
    assert_eq!(d[0]["ply"], 3, "the ply of the move noted");
    assert_eq!(d[0]["note"], "Nf3 was played with the left hand");
    assert!(d[1]["ply"].is_null());

    let before = event_count(&store, game);
    for ply in [0, 58] {
        assert!(matches!(
            store.add_note(game, Some(ply), "x", "arb", T),
            Err(DecisionError::NoSuchPly { plies: 57, .. })
        ));
    }
    assert!(matches!(
        store.add_note(game, None, "   ", "arb", T),
        Err(DecisionError::EmptyNote)
    ));
    assert!(matches!(
        store.add_note(GameId(5), None, "x", "arb", T),
        Err(DecisionError::UnknownGame(GameId(5)))
    ));
    assert_eq!(event_count(&store, game), before);
}

fn boardscribe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(args)
        .env("USER", "cli-tester")
        .env("BOARDSCRIBE_LOG", "warn")
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = boardscribe(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(args: &[&str], message: &str) {
    let out = boardscribe(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(stderr.contains(message), "{args:?}: {stderr}");
}

#[test]
fn the_arbiter_command_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    let db = db.to_str().unwrap();
    ok(&["replay", "-q", CAPTURE, "--db", db]);
    let a = |rest: &[&'static str]| [&["arbiter", "--db", db][..], rest].concat();

    let out = ok(&a(&[
        "correct", "--game", "1", "--ply", "17", "--move", "a3", "--note", "sensor",
    ]));
    assert!(out.contains("ply 17: h3 -> a3"), "{out}");
    assert!(
        out.contains("by cli-tester"),
        "$USER is the default author: {out}"
    );
    ok(&a(&[
        "note", "--game", "1", "--ply", "3", "--text", "a note", "--author", "Deputy",
    ]));
    // Back to ply 54 and the last three plies again, as a scoresheet has them.
    let last: Vec<String> = sans_and_fens(&{
        let mut u = expected_uci();
        u[16] = "a2a3".into();
        u
    })[54..]
        .iter()
        .map(|(s, _)| s.clone())
        .collect();
    let written = format!("28. {} 28... {} 29. {}", last[0], last[1], last[2]);
    let resume = [
        "arbiter",
        "--db",
        db,
        "resume",
        "--game",
        "1",
        "--after-ply",
        "54",
    ];
    let out = ok(&[&resume[..], &["--moves", &written]].concat());
    assert!(
        out.contains(&format!("resumed after ply 54 with {}", last.join(" "))),
        "{out}"
    );
    assert!(out.contains("(3 move(s) withdrawn)"), "{out}");
    fails(
        &[&resume[..], &["--moves", "Qh8"]].concat(),
        "not a legal move at ply 55",
    );
    ok(&a(&[
        "result",
        "--game",
        "1",
        "--result",
        "1-0",
        "--reason",
        "resignation",
    ]));
    let out = ok(&a(&[
        "result", "--game", "1", "--result", "-/+", "--reason", "forfeit", "--author", "Chief",
    ]));
    assert!(out.contains("result -/+ (forfeit), was 1-0"), "{out}");

    fails(
        &a(&["correct", "--game", "1", "--ply", "17", "--move", "h2h4"]),
        "ply 39",
    );
    fails(
        &a(&["correct", "--game", "1", "--ply", "58", "--move", "e4"]),
        "no ply 58",
    );
    fails(
        &a(&["correct", "--game", "9", "--ply", "1", "--move", "e4"]),
        "no game with id 9",
    );
    fails(
        &a(&[
            "result", "--game", "1", "--result", "2-0", "--reason", "decision",
        ]),
        "is not a result",
    );
    fails(
        &a(&[
            "rule",
            "--game",
            "1",
            "--irregularity",
            "1",
            "--ruling",
            "stands",
        ]),
        "no irregularity 1",
    );
    fails(
        &a(&[
            "rule",
            "--game",
            "1",
            "--irregularity",
            "1",
            "--ruling",
            "penalty",
        ]),
        "--description",
    );
    fails(
        &a(&["note", "--game", "1", "--text", " "]),
        "must not be empty",
    );
    fails(
        &[
            "arbiter",
            "--db",
            dir.path().join("none.db").to_str().unwrap(),
            "history",
            "--game",
            "1",
        ],
        "no such database",
    );

    // Issue 16: `history` speaks in words; `--json` prints the events as stored, as before.
    let history = ok(&a(&["history", "--game", "1", "--json"]));
    let lines: Vec<&str> = history.lines().collect();
    let decisions: Vec<&&str> = lines.iter().filter(|l| l.contains(" decision ")).collect();
    assert_eq!(decisions.len(), 5, "{history}");
    assert!(decisions[0].contains("\"action\":\"correct_move\""));
    assert!(decisions[2].contains("\"action\":\"resume\""));
    assert!(decisions[3].contains("\"result\":\"1-0\""));
    assert!(
        decisions[4].contains("\"result\":\"-/+\"")
            && decisions[4].contains("\"author\":\"Chief\"")
    );
    assert!(
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("retracted: 17:h3 18:c5")),
        "{history}"
    );

    let pgn = ok(&["export", "--db", db, "--format", "pgn"]);
    assert!(
        pgn.contains("[Result \"0-1\"]") && pgn.contains("9. a3"),
        "{pgn}"
    );
    assert!(!pgn.contains("History"));
    // The LiveChess clock format: the same clocks with two-digit hours.
    let live = ok(&[
        "export",
        "--db",
        db,
        "--format",
        "pgn",
        "--clk-format",
        "hh:mm:ss",
    ]);
    let clocks = |text: &str| -> Vec<String> {
        text.split("[%clk ")
            .skip(1)
            .map(|rest| rest.split(']').next().unwrap_or("").to_string())
            .collect()
    };
    let (short, long) = (clocks(&pgn), clocks(&live));
    assert!(!short.is_empty(), "{pgn}");
    assert_eq!(short.len(), long.len());
    for (s, l) in short.iter().zip(&long) {
        assert_eq!(&format!("0{s}"), l, "single-digit hours get a leading zero");
    }
    assert_eq!(live.len(), pgn.len() + short.len(), "nothing else changes");
    let pgn = ok(&["export", "--db", db, "--format", "pgn", "--history"]);
    assert!(pgn.contains("History: retracted by arbiter correct_move"));
    let json: Value = serde_json::from_str(&ok(&[
        "export",
        "--db",
        db,
        "--format",
        "json",
        "--history",
    ]))
    .unwrap();
    let g = &json["games"][0];
    assert_eq!(g["result"], "-/+");
    assert_eq!(g["termination"], "forfeit");
    let decisions = g["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 5);
    assert_eq!(decisions[2]["action"], "resume");
    assert_eq!(decisions[2]["after_ply"], 54);
    assert_eq!(decisions[2]["moves"].as_array().unwrap().len(), 3);
    assert!(
        g["history"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["retracted"].as_array().unwrap().len() == 41)
    );
    assert!(
        g["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["at_ms"].as_u64().unwrap() > T - 86_400_000 * 365)
    );
}
