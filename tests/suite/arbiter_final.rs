//! The arbiter's word is final (issue 16, item 3), end to end: emulated boards on
//! pseudo-terminals recorded by the daemon, the relay over real HTTP, the `boardscribe arbiter`
//! command as another process. A result the arbiter set stands against a later result gesture
//! (the export and `/api/boards` agree); a board that plays on after the result adds no move to
//! the game, and the start position set up again begins a new game; a daemon stopped and started
//! again on the same database adds no event twice.

use crate::relay_common;

use std::{
    process::Command,
    time::{Duration, Instant},
};

use boardscribe::{
    emulator::{
        self, BoardScript, EmulatorOptions, Event, EventKind, IllegalKind, IrregularityScript,
        Payload, PgnGame, PtyOptions, PtyScript, ScriptedIrregularity,
    },
    protocol::{Direction, dgt::Frame},
    relay::Token,
    store::{GameRecord, Store},
};
use relay_common::{Bench, corpus_game};
use reqwest::StatusCode;
use serde_json::{Value, json};
use shakmaty::CastlingMode;

const TOKEN: &str = "the-chief-arbiter";

/// The daemon's board scripts at this speed (a ply in well under a second).
const SPEED: f64 = 0.05;

fn script(game: &PgnGame, seed: u64, irregularities: Vec<ScriptedIrregularity>) -> BoardScript {
    let opts = EmulatorOptions {
        speed: SPEED,
        seed,
        time_control: Some((15 * 60_000, 10_000)),
        irregularities,
        ..EmulatorOptions::default()
    };
    emulator::script_pgn(game, &opts).unwrap()
}

/// The first drawn game of the corpus file `file` from game `from` on, with the first seed from
/// `seed` on, whose final position leaves the centre squares free for the kings' gesture.
fn drawn_with_gesture(
    file: &str,
    from: usize,
    seed: u64,
    irregularities: &[ScriptedIrregularity],
) -> (PgnGame, BoardScript) {
    for n in from..from + 40 {
        let game = corpus_game(file, n);
        if game.outcome != Some(boardscribe::game::Outcome::Draw) || game.moves.len() < 24 {
            continue;
        }
        for s in seed..seed + 8 {
            let script = script(&game, s, irregularities.to_vec());
            if script.result_gesture.is_some() {
                return (game, script);
            }
        }
    }
    panic!("no drawn game with a gesture in {file} from {from}");
}

/// `script` with its result gesture made `ms` later (the players sit a while after the last
/// move, time for the arbiter to enter a result).
fn gesture_later(mut script: BoardScript, ms: u64) -> BoardScript {
    assert!(script.result_gesture.is_some(), "the game has no gesture");
    for e in &mut script.events {
        if e.kind == EventKind::ResultGesture {
            e.at_ms += ms;
        }
    }
    script.events.sort_by_key(|e| e.at_ms);
    script
}

/// `first` played to its end (no gesture), the pieces set up again in the start position, then
/// `second` played on the same board.
fn then_new_game(mut first: BoardScript, second: &BoardScript) -> BoardScript {
    let end = first.events.last().unwrap().at_ms;
    let last = first.plies.last().unwrap().board_after.0;
    let start = second.start_dump.0;
    let mut at = end + 2_000;
    let mut update = |square: usize, piece: u8| {
        at += 60;
        first.events.push(Event {
            at_ms: at,
            dir: Direction::FromBoard,
            payload: Payload::Frame(Frame::FieldUpdate {
                square: square as u8,
                piece,
            }),
            kind: EventKind::Move,
            action: (),
            ply: 0,
        });
    };
    // Every piece off the board, then every piece of the start on its square.
    for sq in 0..64 {
        if last[sq] != 0 && last[sq] != start[sq] {
            update(sq, 0);
        }
    }
    for sq in 0..64 {
        if start[sq] != 0 && last[sq] != start[sq] {
            update(sq, start[sq]);
        }
    }
    let shift = at + 2_000 - second.body_start_ms.min(at);
    first.events.extend(
        second
            .events
            .iter()
            .filter(|e| e.at_ms >= second.body_start_ms && e.kind != EventKind::Handshake)
            .cloned()
            .map(|mut e| {
                e.at_ms += shift;
                e
            }),
    );
    first.result_gesture = None;
    first
}

fn uci(game: &PgnGame) -> Vec<String> {
    game.moves
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect()
}

fn live_uci(g: &GameRecord) -> Vec<String> {
    g.moves.iter().map(|m| m.uci.clone().unwrap()).collect()
}

/// The games of board `name`, by id.
fn games_of(db: &std::path::Path, name: &str) -> Vec<GameRecord> {
    match Store::open_read_only(db) {
        Ok(store) => store
            .games()
            .unwrap()
            .into_iter()
            .filter(|g| g.board_name == name)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Polls `f` every 100 ms until it gives a value, for at most `within`.
async fn until<T>(what: &str, within: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < within, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The `boardscribe` binary, as another process; its standard output.
fn boardscribe(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(args)
        .env("BOARDSCRIBE_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The PGN export of one game, by the command line.
fn export_pgn(db: &std::path::Path, game: i64) -> String {
    let db = db.to_str().unwrap();
    boardscribe(&[
        "export",
        "--db",
        db,
        "--format",
        "pgn",
        "--game",
        &game.to_string(),
    ])
}

async fn api_boards(client: &reqwest::Client, url: &str) -> Value {
    crate::relay_common::api_boards_as_arbiter(client, url, TOKEN).await
}

async fn post(client: &reqwest::Client, url: &str, path: &str, body: Value) -> Value {
    let resp = client
        .post(format!("{url}api/admin/games/{path}"))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let answer: Value = resp.json().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{path}: {answer}");
    answer
}

/// Issue 16's repro: `arbiter result --game 7 --result 0-1`, then the kings shown in the centre
/// for a draw, and the export said `1/2-1/2`; through the admin API, 1-0 set, a later gesture,
/// and the export said otherwise than `/api/boards`. Board 1 is decided through the admin API,
/// board 2 by the command line from another process; both then show the draw with their kings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_gesture_never_overrides_the_arbiter() {
    let mut bench = Bench::new(Token::new(TOKEN)).await;
    let url = bench.url.clone();
    let client = reqwest::Client::new();
    // Two drawn games: the kings will show 1/2-1/2 on the centre squares.
    let (one, two) = (
        drawn_with_gesture("tatamast22", 1, 1, &[]),
        drawn_with_gesture("tatamast22", 20, 2, &[]),
    );
    let games = [one.0, two.0];
    let scripts = [one.1, two.1]
        .into_iter()
        .map(|s| {
            let s = gesture_later(s, 8_000);
            (PtyScript::from(s), PtyOptions::default())
        })
        .collect();
    bench.start_scripts(scripts).await;
    let db = bench.db.clone();
    let names = bench.boards.clone();
    // Each game recorded to its last move, its gesture still to come: the arbiter decides at
    // once (board 1 through the admin API, board 2 from the command line).
    let mut recorded: Vec<Option<GameRecord>> = vec![None, None];
    let start = Instant::now();
    while recorded.iter().any(Option::is_none) {
        assert!(start.elapsed() < Duration::from_secs(120), "not every move");
        for i in 0..2 {
            let g = match (&recorded[i], games_of(&db, &names[i]).pop()) {
                (None, Some(g)) if live_uci(&g) == uci(&games[i]) => g,
                _ => continue,
            };
            assert!(g.ended_at_ms.is_none());
            let id = g.id.0;
            if i == 0 {
                let answer = post(
                    &client,
                    &url,
                    &format!("{id}/result"),
                    json!({ "result": "1-0", "reason": "resignation", "author": "Chief" }),
                )
                .await;
                assert_eq!(answer["action"]["result"], "1-0");
            } else {
                boardscribe(&[
                    "arbiter",
                    "--db",
                    db.to_str().unwrap(),
                    "result",
                    "--game",
                    &id.to_string(),
                    "--result",
                    "0-1",
                    "--reason",
                    "resignation",
                    "--author",
                    "Deputy",
                ]);
            }
            recorded[i] = Some(g);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let recorded: Vec<GameRecord> = recorded.into_iter().flatten().collect();
    let (api_game, cli_game) = (recorded[0].id.0, recorded[1].id.0);
    let decided_at = Store::open_read_only(&db)
        .unwrap()
        .decisions(recorded[1].id)
        .unwrap()[0]
        .id;
    for g in &recorded {
        // The gesture had not come yet.
        let events = Store::open_read_only(&db)
            .unwrap()
            .game(g.id)
            .unwrap()
            .unwrap()
            .events;
        let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
        assert!(!kinds.contains(&"result_gesture"), "{kinds:?}");
    }

    // The kings come to the centre for a draw on both boards.
    bench.wait_scripts(Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let conn = rusqlite::Connection::open(&db).unwrap();
    let board_2 = recorded[1].board.0;
    let gestures: i64 = conn
        .query_row(
            "SELECT count(*) FROM events WHERE board_id = ?1 AND kind = 'result_gesture' \
             AND id > ?2",
            [board_2, decided_at],
            |r| r.get(0),
        )
        .unwrap();
    let after: Vec<(i64, Option<i64>, String)> = conn
        .prepare("SELECT id, game_id, kind FROM events WHERE board_id = ?1 AND id > ?2")
        .unwrap()
        .query_map([board_2, decided_at], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        gestures >= 1,
        "board 2 showed its gesture after the decision: {after:?}"
    );

    for (game, want, termination) in [
        (api_game, "1-0", "resignation"),
        (cli_game, "0-1", "resignation"),
    ] {
        let pgn = export_pgn(&db, game);
        assert!(pgn.contains(&format!("[Result \"{want}\"]")), "{pgn}");
        assert!(pgn.trim_end().ends_with(want), "{pgn}");
        let g = Store::open_read_only(&db)
            .unwrap()
            .game(boardscribe::store::GameId(game))
            .unwrap()
            .unwrap();
        assert_eq!(
            (g.result.as_str(), g.termination.as_deref()),
            (want, Some(termination))
        );
        assert!(g.ended_at_ms.is_some(), "the final result closed the game");
    }
    // The live state says what the export says, final.
    let boards = api_boards(&client, &url).await;
    for (i, want) in [(0, "1-0"), (1, "0-1")] {
        let b = &boards["boards"][i];
        assert_eq!(
            (&b["result"], &b["result_final"]),
            (&json!(want), &json!(true)),
            "{b}"
        );
    }
    bench.stop().await;
}

/// Game 3 of the issue went on from move 14 to 46 after a resignation. Here both boards play
/// on after the arbiter's result at ply 12 or so (board 1 decided through the admin API, board
/// 2 by the command line while the daemon runs): the game's moves stop at the result; the
/// pieces set up again begin a new game, recorded whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_playing_on_after_the_result_does_not_extend_the_game() {
    let mut bench = Bench::new(Token::new(TOKEN)).await;
    let url = bench.url.clone();
    let client = reqwest::Client::new();
    let first = [corpus_game("tatamast22", 7), corpus_game("tatamast22", 16)];
    let second = corpus_game("tatamast22", 27);
    let scripts = first
        .iter()
        .zip(1..)
        .map(|(g, seed)| {
            let mut opts_first = script(g, seed, Vec::new());
            opts_first.result_gesture = None;
            opts_first
                .events
                .retain(|e| e.kind != EventKind::ResultGesture);
            let s = then_new_game(opts_first, &script(&second, seed + 10, Vec::new()));
            (PtyScript::from(s), PtyOptions::default())
        })
        .collect();
    bench.start_scripts(scripts).await;
    let db = bench.db.clone();
    let names = bench.boards.clone();
    let playing: Vec<GameRecord> = until(
        "twelve plies on each board",
        Duration::from_secs(120),
        || {
            let per_board: Vec<GameRecord> = names
                .iter()
                .map(|n| games_of(&db, n).pop())
                .collect::<Option<_>>()?;
            per_board
                .iter()
                .all(|g| g.moves.len() >= 12)
                .then_some(per_board)
        },
    )
    .await;

    // Board 1: the admin API (the board's task takes it between two reads).
    post(
        &client,
        &url,
        &format!("{}/result", playing[0].id.0),
        json!({ "result": "0-1", "reason": "resignation" }),
    )
    .await;
    let at_decision_api = games_of(&db, &names[0])[0].moves.len();
    // Board 2: another process.
    boardscribe(&[
        "arbiter",
        "--db",
        db.to_str().unwrap(),
        "result",
        "--game",
        &playing[1].id.0.to_string(),
        "--result",
        "1-0",
        "--reason",
        "resignation",
    ]);
    let at_decision_cli = games_of(&db, &names[1])[0].moves.len();

    bench.wait_scripts(Duration::from_secs(180)).await;
    let want_second = uci(&second);
    let done = until("the new games", Duration::from_secs(30), || {
        let per_board: Vec<Vec<GameRecord>> = names.iter().map(|n| games_of(&db, n)).collect();
        per_board
            .iter()
            .all(|g| g.len() == 2 && live_uci(&g[1]) == want_second)
            .then_some(per_board)
    })
    .await;
    for (i, (games, at_decision, result)) in [
        (&done[0], at_decision_api, "0-1"),
        (&done[1], at_decision_cli, "1-0"),
    ]
    .into_iter()
    .enumerate()
    {
        let old = &games[0];
        let played = first[i].moves.len();
        assert_eq!(
            old.moves.len(),
            at_decision,
            "board {}: no move after the result",
            i + 1
        );
        assert!(old.moves.len() < played, "the board played on to {played}");
        assert_eq!(live_uci(old), uci(&first[i])[..old.moves.len()]);
        assert_eq!(old.result, result);
        assert!(old.ended_at_ms.is_some());
        // Nothing the board did afterwards was recorded as a move of that game, retracted or not.
        let conn = rusqlite::Connection::open(&db).unwrap();
        let rows: i64 = conn
            .query_row(
                "SELECT count(*) FROM moves WHERE game_id = ?1",
                [old.id.0],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(rows as usize, at_decision);
        // The new game: from the start, every move, its own result still open.
        let new = &games[1];
        assert_eq!(new.result, "*");
        assert_eq!(live_uci(new), want_second);
    }
    // The live page follows the new games.
    let boards = api_boards(&client, &url).await;
    for i in 0..2 {
        assert_eq!(boards["boards"][i]["ply"], want_second.len());
        assert_eq!(boards["boards"][i]["result_final"], false);
    }
    bench.stop().await;
}

/// An events row: id, game, kind, ply, detail.
type EventRow = (i64, Option<i64>, String, Option<i64>, String);

/// A daemon stopped and started again (twice) on a database whose game is still open (the
/// board shows its result gesture; an illegal move, a press without a move and a knocked piece
/// on the way) adds no event: every row of the events table is as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_adds_no_event_twice() {
    let mut bench = Bench::new(Token::new(TOKEN)).await;
    let irregularities = [
        ScriptedIrregularity {
            before_ply: 5,
            kind: IrregularityScript::IllegalMove {
                kind: IllegalKind::WrongShape,
            },
        },
        ScriptedIrregularity {
            before_ply: 10,
            kind: IrregularityScript::PressWithoutMove,
        },
        ScriptedIrregularity {
            before_ply: 15,
            kind: IrregularityScript::Knock { hold_ms: 4_000 },
        },
    ];
    let (game, s) = drawn_with_gesture("tatamast22", 1, 5, &irregularities);
    bench
        .start_scripts(vec![(PtyScript::from(s), PtyOptions::default())])
        .await;
    bench.wait_scripts(Duration::from_secs(120)).await;
    let db = bench.db.clone();
    let name = bench.boards[0].clone();
    let events = |db: &std::path::Path| -> Vec<EventRow> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut stmt = conn
            .prepare("SELECT id, game_id, kind, ply, detail FROM events ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    };
    // Everything the board did is in: every move, and the gesture.
    until("the gesture", Duration::from_secs(20), || {
        let kinds: Vec<String> = events(&db).into_iter().map(|e| e.2).collect();
        (kinds.iter().any(|k| k == "result_gesture")
            && games_of(&db, &name).last()?.moves.len() == game.moves.len())
        .then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = events(&db);
    let kinds: Vec<&str> = before.iter().map(|e| e.2.as_str()).collect();
    for k in [
        "illegal_move",
        "clock_without_move",
        "displaced",
        "result_gesture",
    ] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
    let open = games_of(&db, &name);
    assert_eq!(open.len(), 1);
    assert!(open[0].ended_at_ms.is_none(), "the game is still open");

    for round in 1..=2 {
        bench.stop_daemon().await;
        bench.restart_daemon();
        // The board is read again (its memory after the gap, a full dump, the clock).
        tokio::time::sleep(Duration::from_secs(6)).await;
        let after = events(&db);
        assert_eq!(
            after,
            before,
            "restart {round} added events: {:?}",
            &after[before.len().min(after.len())..]
        );
        let games = games_of(&db, &name);
        assert_eq!(games.len(), 1);
        assert_eq!(live_uci(&games[0]), uci(&game));
    }
    bench.stop().await;
}

/// What a restart must not forget: the referee of a resumed game is told the illegal moves
/// completed and the flags reported before (from the stored events), so that a restart neither
/// counts the next illegal move as a first one nor reports a fallen flag again.
#[test]
fn a_resumed_referee_keeps_the_illegal_moves_and_flags_counted() {
    use boardscribe::{
        arbiter::{Judge, LawsSetup},
        sensor::ClockReading,
        tracker::{IrregularityKind, Side, TrackerEvent},
    };
    let setup = LawsSetup {
        time_control: Some("90+30".parse().unwrap()),
        ..LawsSetup::default()
    };
    let illegal = TrackerEvent::Irregularity {
        at_ms: 10,
        since_ms: 9,
        id: 2,
        ply: 1,
        kind: IrregularityKind::IllegalMove,
        player: Some(Side::White),
        detail: "Nb1-b3".into(),
        article: None,
        ruling: None,
        ruling_phrase: None,
        detail_phrase: None,
    };
    let flag = ClockReading {
        left_ms: 0,
        right_ms: 60_000,
        running: true,
        lever_right_high: false,
        left_flag: true,
        right_flag: false,
    };
    let judged = |counts: bool| {
        let mut referee = setup.referee();
        referee.resume(None, &[]);
        if counts {
            referee.resumed_counts(&[Side::White], &[Side::White]);
        }
        let mut out = Vec::new();
        referee.review(illegal.clone(), None, &mut out);
        referee.clock(20, &flag, true, &mut out);
        out
    };
    let ruling = |out: &[TrackerEvent]| match &out[0] {
        TrackerEvent::Irregularity { ruling, .. } => ruling.clone().unwrap_or_default(),
        e => panic!("{e:?}"),
    };
    let fresh = judged(false);
    assert!(ruling(&fresh).starts_with("first completed illegal move by white"));
    assert!(
        fresh
            .iter()
            .any(|e| matches!(e, TrackerEvent::FlagFall { .. }))
    );
    let resumed = judged(true);
    assert!(
        ruling(&resumed).starts_with("second completed illegal move by white"),
        "{}",
        ruling(&resumed)
    );
    assert!(ruling(&resumed).contains("white loses the game"));
    assert!(
        !resumed
            .iter()
            .any(|e| matches!(e, TrackerEvent::FlagFall { .. })),
        "{resumed:?}"
    );
}
