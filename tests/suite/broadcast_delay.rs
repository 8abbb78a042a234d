//! The broadcast delay (issue 17, items 1 and 2) over real HTTP with emulated boards recorded by
//! the daemon: with `delay` = a few seconds, at every poll no public output — `/round.pgn`,
//! `/games/N.pgn`, `/api/boards`, the public event stream, the LiveChess folder, the push to a
//! local Lichess stand-in — shows a move or a result younger than the delay, while the arbiter
//! (admin token) sees each move at once; a relay started afresh on the same database (a
//! restarted daemon) inside the window shows nothing newer either; once the window has passed,
//! every public output has the whole game. The round is noisy (scripted irregularities, an
//! arbiter's note): no public output carries "Irregularity" or "Arbiter", the arbiter's PGN does.
//!
//! A move is "shown" at ply p with SAN s; it is old enough if the store has a move row (live or
//! retracted since) at ply p with notation s made at least `delay` before the answer arrived.
//!
//! A game's boundary (issue 31, item 5): board 1 plays two games, the pieces set up again
//! between them. A game is "named" when public `/api/boards` gives its id, `/games/ID.pgn`
//! answers for it, a public PGN has it (by its board and `UTCDate`/`UTCTime`) or a public event
//! says `game_started` for it; it may be named only once it began, and the game before it on
//! its board ended, at least `delay` before the answer arrived; until then `/games/ID.pgn`
//! answers 404. A relay started afresh just after the second game began (a restart inside the
//! window) is held to the same. `/metrics`, which counts every move at once, is polled at every
//! step too: spectators are never answered (the operator's, with the token).
//!
//! `boardscribe serve --db` on the same live database, started with the delay as soon as the
//! database has a game (issue 32, item 1), is polled with the relays: it is held to the same.

use crate::relay_common;

use std::{
    collections::HashMap,
    path::Path,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{Router, body::Bytes, extract::State, routing::post};
use boardscribe::{
    device::serial::now_ms,
    emulator::{self, EmulatorOptions, PgnGame, PtyOptions, PtyScript, games_from_pgn, script_pgn},
    export::publish::{Publication, utc_date_time},
    relay::Token,
    store::{GameRecord, result_at},
};
use futures_util::StreamExt as _;
use relay_common::{Bench, Outputs, Served, corpus_game};
use serde_json::Value;

const TOKEN: &str = "delay-test-token";
const DELAY_MS: u64 = 4000;

/// A game as a public output shows it: board number, SAN moves, result, and what names the
/// game if anything does (its id in a view, its start in a PGN).
#[derive(Clone, Debug)]
struct Shown {
    board: u32,
    sans: Vec<String>,
    result: String,
    game: Option<i64>,
    /// `(UTCDate, UTCTime)`.
    start: Option<(String, String)>,
}

/// The games of a PGN body.
fn shown_in_pgn(text: &str) -> Vec<Shown> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    games_from_pgn(text)
        .unwrap_or_else(|e| panic!("public PGN does not read: {e}\n{text}"))
        .into_iter()
        .map(|g| {
            let tag = |k: &str| {
                g.tags
                    .iter()
                    .find(|(n, _)| n == k)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            Shown {
                board: tag("Board").parse().unwrap_or(0),
                sans: g
                    .sans
                    .iter()
                    .map(|s| s.trim_end_matches(['+', '#']).to_owned())
                    .collect(),
                result: tag("Result"),
                game: None,
                start: Some((tag("UTCDate"), tag("UTCTime"))),
            }
        })
        .collect()
}

/// Every move row ever written, by (game id, ply, SAN): the earliest time made.
fn move_rows(db: &Path) -> HashMap<(i64, u32, String), u64> {
    // The daemon may not have created the database yet (as `stored_all`): no row then, so that
    // any move shown is one never recorded.
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return HashMap::new();
    };
    let Ok(mut stmt) = conn
        .prepare("SELECT m.game_id, m.ply, m.notation, min(m.at_ms) FROM moves m GROUP BY 1, 2, 3")
    else {
        return HashMap::new();
    };
    stmt.query_map([], |r| {
        Ok((
            (
                r.get::<_, i64>(0)?,
                r.get::<_, u32>(1)?,
                r.get::<_, String>(2)?,
            ),
            r.get::<_, i64>(3)? as u64,
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Every game as stored, by id.
fn stored_all(bench: &Bench) -> Vec<GameRecord> {
    // The daemon may not have created the database yet.
    boardscribe::store::Store::open_read_only(&bench.db)
        .map(|s| s.games().unwrap())
        .unwrap_or_default()
}

/// The games as stored, by board number (the latest of each board).
fn stored(bench: &Bench) -> HashMap<u32, GameRecord> {
    let mut out = HashMap::new();
    for g in stored_all(bench) {
        if let Some(n) = g.board_no {
            out.insert(n, g);
        }
    }
    out
}

/// Why `game` may not be named publicly at `at` (answer time), if it may not: it began, or the
/// game before it on its board (in `games`) ended, less than the delay before.
fn named_too_early(game: &GameRecord, games: &[GameRecord], at: u64) -> Option<String> {
    let limit = at.saturating_sub(DELAY_MS);
    let before = games
        .iter()
        .filter(|g| g.board == game.board && g.id < game.id)
        .max_by_key(|g| g.id);
    if game.started_at_ms > limit {
        return Some(format!(
            "game {} (board {:?}, {}) began at {}, named at {at}: younger than the delay",
            game.id.0,
            game.board_no,
            match before {
                Some(b) => format!("after game {}", b.id.0),
                None => "its board's first".into(),
            },
            game.started_at_ms
        ));
    }
    let ended = before.and_then(|b| b.ended_at_ms)?;
    (ended > limit).then(|| {
        format!(
            "game {} named at {at}, the game before it ended at {ended}: younger than the delay",
            game.id.0
        )
    })
}

/// Fails unless every move and result in `shown` was recorded at least the delay before `at`,
/// in a game that `shown` may be (the one it names, else any of its board's). A game named
/// too early is added to `leaks`.
fn assert_old_enough(what: &str, shown: &[Shown], bench: &Bench, at: u64, leaks: &mut Vec<String>) {
    let rows = move_rows(&bench.db);
    let games = stored_all(bench);
    let limit = at.saturating_sub(DELAY_MS);
    for s in shown {
        let candidates: Vec<&GameRecord> = games
            .iter()
            .filter(|g| g.board_no == Some(s.board))
            .filter(|g| s.game.is_none_or(|id| g.id.0 == id))
            .filter(|g| {
                s.start
                    .as_ref()
                    .is_none_or(|start| utc_date_time(g.started_at_ms) == *start)
            })
            .collect();
        assert!(
            !candidates.is_empty(),
            "{what}: board {} shows a game never recorded: {s:?}",
            s.board
        );
        if s.game.is_some() || s.start.is_some() {
            for g in &candidates {
                if let Some(why) = named_too_early(g, &games, at) {
                    leaks.push(format!("{what}: {why}"));
                }
            }
        }
        let check = |g: &GameRecord| -> Result<(), String> {
            for (i, san) in s.sans.iter().enumerate() {
                let ply = i as u32 + 1;
                let made = rows
                    .iter()
                    .filter(|((id, p, n), _)| {
                        *id == g.id.0 && *p == ply && n.trim_end_matches(['+', '#']) == san
                    })
                    .map(|(_, t)| *t)
                    .min()
                    .ok_or_else(|| {
                        format!("game {}: ply {ply} {san} was never recorded", g.id.0)
                    })?;
                if made > limit {
                    return Err(format!(
                        "game {}: ply {ply} {san} made at {made}, shown at {at}: younger than the delay",
                        g.id.0
                    ));
                }
            }
            if s.result != "*" && !s.result.is_empty() && result_at(&g.events, limit) != s.result {
                return Err(format!(
                    "game {}: result {} younger than the delay",
                    g.id.0, s.result
                ));
            }
            Ok(())
        };
        let errors: Vec<String> = candidates.iter().filter_map(|g| check(g).err()).collect();
        assert!(
            errors.len() < candidates.len(),
            "{what}: board {}: {}",
            s.board,
            errors.join("; ")
        );
    }
}

/// The local Lichess stand-in: keeps each body with the time it arrived.
#[derive(Clone, Default)]
struct StandIn(Arc<Mutex<Vec<(u64, String)>>>);

async fn push(State(s): State<StandIn>, body: Bytes) -> String {
    let text = String::from_utf8(body.to_vec()).unwrap();
    let games = shown_in_pgn(&text).len();
    s.0.lock().unwrap().push((now_ms(), text));
    format!(
        "{{\"games\":[{}]}}",
        vec!["{\"tags\":{},\"moves\":1}"; games].join(",")
    )
}

/// The body of a GET, as the public reads it.
async fn get_text(client: &reqwest::Client, url: &str) -> String {
    client.get(url).send().await.unwrap().text().await.unwrap()
}

/// The JSON a request answers.
async fn get_json(request: reqwest::RequestBuilder) -> Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// Events of a stream, each with the time it arrived.
type Seen = Arc<Mutex<Vec<(u64, Value)>>>;

/// The public event stream, each event with the time it arrived.
fn follow_events(url: String) -> Seen {
    let seen: Seen = Arc::default();
    let out = seen.clone();
    tokio::spawn(async move {
        let resp = reqwest::get(format!("{url}api/events")).await.unwrap();
        let mut body = resp.bytes_stream();
        let mut buf = String::new();
        while let Some(Ok(chunk)) = body.next().await {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let block: String = buf.drain(..end + 2).collect();
                for line in block.lines() {
                    if let Some(data) = line.strip_prefix("data:")
                        && let Ok(v) = serde_json::from_str::<Value>(data.trim())
                    {
                        out.lock().unwrap().push((now_ms(), v));
                    }
                }
            }
        }
    });
    seen
}

/// What a board view (`/api/boards`, an event's snapshot) shows.
fn shown_in_view(v: &Value, numbers: &HashMap<String, u32>) -> Option<Shown> {
    let board = v["number"]
        .as_u64()
        .map(|n| n as u32)
        .or_else(|| numbers.get(v["name"].as_str()?).copied())?;
    Some(Shown {
        board,
        game: v["game_id"].as_i64(),
        start: None,
        sans: v["moves"]
            .as_array()?
            .iter()
            .map(|m| {
                m.as_str()
                    .unwrap_or_default()
                    .trim_end_matches(['+', '#'])
                    .to_owned()
            })
            .collect(),
        result: match v["result"].as_str() {
            Some(r) if v["result_final"].as_bool() == Some(true) => r.to_owned(),
            _ => "*".to_owned(),
        },
    })
}

/// Emulated board scripts: each board plays its games one after another, the pieces set up
/// again between them (game, seed, rate of scripted irregularities per ply).
fn board_scripts(plan: &[Vec<(PgnGame, u64, f64)>]) -> Vec<(PtyScript, PtyOptions)> {
    plan.iter()
        .enumerate()
        .map(|(i, games)| {
            let script = |(game, seed, rate): &(PgnGame, u64, f64)| {
                let opts = EmulatorOptions {
                    speed: 0.05,
                    seed: *seed,
                    rotated: i % 2 == 1,
                    time_control: Some((15 * 60_000, 10_000)),
                    irregularities: emulator::random_irregularities(*seed, game.moves.len(), *rate),
                    ..EmulatorOptions::default()
                };
                script_pgn(game, &opts).unwrap()
            };
            let mut board = script(&games[0]);
            for next in &games[1..] {
                // The last position stays a moment before the pieces go back.
                let setup_at = board.events.last().map_or(0, |e| e.at_ms) + 2000;
                board = board.followed_by(&script(next), setup_at).unwrap();
            }
            (PtyScript::from(board), PtyOptions::default())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_public_output_shows_a_move_younger_than_the_delay() {
    // The Lichess stand-in.
    let stand_in = StandIn::default();
    let app = Router::new()
        .route("/api/broadcast/round/{id}/push", post(push))
        .with_state(stand_in.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let lichess_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let folder = tempfile::tempdir().unwrap();
    let outputs = Outputs {
        publication: Publication {
            delay_ms: DELAY_MS,
            ..Publication::default()
        },
        folder: Some(folder.path().to_owned()),
        lichess: vec![(lichess_url, "dElAyRnd".into(), None)],
        lichess_token: Some("lip_delaytest".into()),
    };
    let token = Token::new(TOKEN);
    let mut bench = Bench::with_outputs(token.clone(), Some(1), outputs).await;
    // Board 1: two games, the pieces set up again between them; board 2: one long game.
    let plan = vec![
        vec![
            (corpus_game("tatamast22", 27), 31, 0.06),
            (corpus_game("tatamast22", 76), 33, 0.0),
        ],
        vec![(corpus_game("tatamast22", 5), 32, 0.06)],
    ];
    bench.start_scripts(board_scripts(&plan)).await;
    let numbers: HashMap<String, u32> = bench
        .boards
        .iter()
        .enumerate()
        .map(|(i, b)| (b.clone(), i as u32 + 1))
        .collect();
    let events = follow_events(bench.url.clone());
    let client = reqwest::Client::new();
    let url = bench.url.clone();
    // Relays started afresh on the same database (restarted daemons), with their events.
    let mut restarted: Vec<(String, Seen)> = Vec::new();
    let mut restarted_in_window = false;
    let mut noted = false;
    let (mut polls, mut arbiter_ahead) = (0, 0);
    // Games named too early, by any public output.
    let mut leaks: Vec<String> = Vec::new();
    // Polls at which board 1's second game was stored while the public view still named the
    // first (the delay held), and at which the public view named the second.
    let (mut held, mut crossed) = (0, 0);
    let start = Instant::now();
    let mut done_at: Option<Instant> = None;
    // `boardscribe serve --db` on the live database, beside the recording daemon, with the
    // broadcast's delay: held to the same rule as the daemon's own relays.
    let mut served: Option<(Served, Seen)> = None;
    loop {
        polls += 1;
        let all_before = stored_all(&bench);
        let stored_before = stored(&bench);
        if served.is_none() && !all_before.is_empty() {
            let s = Served::start(&bench.db, DELAY_MS).await;
            let events = follow_events(s.url.clone());
            served = Some((s, events));
        }
        // The public PGNs and board views, from each relay.
        let mut relays = vec![url.clone()];
        relays.extend(restarted.iter().map(|(u, _)| u.clone()));
        relays.extend(served.iter().map(|(s, _)| s.url.clone()));
        for relay in &relays {
            let answer = client
                .get(format!("{relay}round.pgn"))
                .send()
                .await
                .unwrap();
            let status = answer.status();
            let text = answer.text().await.unwrap();
            let at = now_ms();
            assert!(
                !text.contains("Irregularity") && !text.contains("Arbiter"),
                "public PGN:\n{text}"
            );
            if status == 200 {
                assert_old_enough("/round.pgn", &shown_in_pgn(&text), &bench, at, &mut leaks);
            } else {
                // Only before the daemon has created the database.
                assert!(all_before.is_empty(), "/round.pgn: {status} {text}");
            }
            for g in &all_before {
                let asked = now_ms();
                let answer = client
                    .get(format!("{relay}games/{}.pgn", g.id.0))
                    .send()
                    .await
                    .unwrap();
                let status = answer.status();
                let text = answer.text().await.unwrap();
                let at = now_ms();
                if status == reqwest::StatusCode::NOT_FOUND {
                    // Refused: right only while the game may not be public yet.
                    assert!(
                        named_too_early(g, &all_before, asked).is_some(),
                        "/games/{}.pgn: 404 for a game public since: {text}",
                        g.id.0
                    );
                    continue;
                }
                assert_eq!(status, 200, "/games/{}.pgn: {text}", g.id.0);
                if let Some(why) = named_too_early(g, &all_before, at) {
                    leaks.push(format!("/games/{}.pgn answered: {why}", g.id.0));
                }
                assert!(
                    !text.contains("Irregularity") && !text.contains("Arbiter"),
                    "{text}"
                );
                assert_old_enough("/games/N.pgn", &shown_in_pgn(&text), &bench, at, &mut leaks);
            }
            let boards = get_json(client.get(format!("{relay}api/boards"))).await;
            let at = now_ms();
            let shown: Vec<Shown> = boards["boards"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .iter()
                .filter_map(|b| shown_in_view(b, &numbers))
                .collect();
            assert_old_enough("/api/boards", &shown, &bench, at, &mut leaks);
            // `/metrics` runs ahead of the delay (every move counted at once, internal kinds):
            // the operator's, never answered to spectators.
            // (`serve` has no token and counts nothing: its /metrics is the loopback's.)
            let metrics = client.get(format!("{relay}metrics")).send().await.unwrap();
            let serve = served.as_ref().is_some_and(|(s, _)| &s.url == relay);
            if !serve && metrics.status() != reqwest::StatusCode::UNAUTHORIZED {
                leaks.push(format!("{relay}metrics answered {}", metrics.status()));
            }
            // Board 1's boundary, as the first relay names it.
            if relay == &url {
                let board1: Vec<&GameRecord> = all_before
                    .iter()
                    .filter(|g| g.board_no == Some(1))
                    .collect();
                let named = shown.iter().find(|s| s.board == 1).and_then(|s| s.game);
                if let [first, second, ..] = board1[..] {
                    if named == Some(second.id.0) {
                        crossed += 1;
                    } else if named == Some(first.id.0) {
                        held += 1;
                    }
                }
            }
        }
        // The arbiter sees every move at once (at least what was stored before asking), and
        // every game: its PGN answers for the newest at once.
        let arbiter = get_json(client.get(format!("{url}api/boards")).bearer_auth(TOKEN)).await;
        let public = get_json(client.get(format!("{url}api/boards"))).await;
        let (a_boards, p_boards) = (
            arbiter["boards"].as_array().cloned().unwrap_or_default(),
            public["boards"].as_array().cloned().unwrap_or_default(),
        );
        for a in &a_boards {
            let n = numbers[a["name"].as_str().unwrap()];
            let before = stored_before.get(&n).map_or(0, |g| g.moves.len());
            // The same board in the public view (0 plies until the delayed view has it).
            let p_ply = p_boards
                .iter()
                .find(|p| p["name"] == a["name"])
                .map_or(0, |p| p["ply"].as_u64().unwrap() as usize);
            let a_ply = a["ply"].as_u64().unwrap() as usize;
            // The same game: the board may have begun its next game since the store was read
            // (the hub then shows that one, from its first ply).
            let same_game = a["game_id"].as_i64() == stored_before.get(&n).map(|g| g.id.0);
            if before > 0 && stored_before[&n].result == "*" && same_game {
                assert!(
                    // The hub hears of a move just after the store commits it.
                    a_ply + 1 >= before,
                    "the arbiter's view lags the store: {a_ply} < {before}"
                );
            }
            if a_ply > p_ply {
                arbiter_ahead += 1;
            }
        }
        if let Some(newest) = all_before.last() {
            let answer = client
                .get(format!("{url}games/{}.pgn", newest.id.0))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap();
            assert_eq!(
                answer.status(),
                200,
                "the arbiter's /games/{}.pgn",
                newest.id.0
            );
        }
        // The folder and the pushes.
        for entry in std::fs::read_dir(folder.path().join("round-1"))
            .into_iter()
            .flatten()
        {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "pgn") {
                let at = now_ms();
                let text = std::fs::read_to_string(&path).unwrap();
                assert!(
                    !text.contains("Irregularity") && !text.contains("Arbiter"),
                    "{text}"
                );
                assert_old_enough(
                    &path.display().to_string(),
                    &shown_in_pgn(&text),
                    &bench,
                    at,
                    &mut leaks,
                );
            }
        }
        for (at, body) in stand_in.0.lock().unwrap().clone() {
            assert!(
                !body.contains("Irregularity") && !body.contains("Arbiter"),
                "{body}"
            );
            assert_old_enough("Lichess push", &shown_in_pgn(&body), &bench, at, &mut leaks);
        }
        let mut streams = vec![events.clone()];
        streams.extend(restarted.iter().map(|(_, e)| e.clone()));
        streams.extend(served.iter().map(|(_, e)| e.clone()));
        let all_now = stored_all(&bench);
        for stream in streams {
            for (at, ev) in stream.lock().unwrap().clone() {
                let text = ev.to_string();
                assert!(!text.contains("watched the clock"), "{text}");
                let open = &ev["snapshot"]["irregularities"];
                assert!(
                    open.is_null() || open.as_array().is_some_and(Vec::is_empty),
                    "{text}"
                );
                if let Some(shown) = shown_in_view(&ev["snapshot"], &numbers) {
                    assert_old_enough("public event", &[shown], &bench, at, &mut leaks);
                }
                // A board's next game: some game after its first began the delay before.
                if ev["type"] == "game_started" {
                    let n = numbers[ev["board"].as_str().unwrap()];
                    let on_board: Vec<&GameRecord> =
                        all_now.iter().filter(|g| g.board_no == Some(n)).collect();
                    let shown_over = on_board
                        .iter()
                        .skip(1)
                        .any(|g| named_too_early(g, &all_now, at).is_none());
                    if !shown_over {
                        leaks.push(format!(
                            "public event at {at}: board {n}'s next game started, younger than the delay"
                        ));
                    }
                }
            }
        }
        // Midway: an arbiter's note, and a relay started afresh (a restarted daemon).
        let plies: usize = stored_before.values().map(|g| g.moves.len()).sum();
        // (On board 2's game: the round's, where board 1's first game is not, once over.)
        if !noted
            && plies >= 12
            && let Some(g) = stored_before.get(&2)
        {
            let answer = client
                .post(format!("{url}api/admin/games/{}/note", g.id.0))
                .bearer_auth(TOKEN)
                .json(&serde_json::json!({"author": "Chief Arbiter", "text": "Arbiter watched the clock"}))
                .send()
                .await
                .unwrap();
            assert!(answer.status().is_success(), "{:?}", answer.text().await);
            let second_url = bench.second_relay(token.clone()).await;
            let second_events = follow_events(second_url.clone());
            restarted.push((second_url, second_events));
            noted = true;
        }
        // Just after board 1's second game began: another relay started afresh, inside the
        // window in which the first game is not yet shown over.
        let board1_games = all_before.iter().filter(|g| g.board_no == Some(1)).count();
        if !restarted_in_window && board1_games >= 2 {
            let third_url = bench.second_relay(token.clone()).await;
            let third_events = follow_events(third_url.clone());
            restarted.push((third_url, third_events));
            restarted_in_window = true;
        }
        // Every board has played all its games.
        let all_over = plan.iter().enumerate().all(|(i, games)| {
            let n = i as u32 + 1;
            let on_board = all_before.iter().filter(|g| g.board_no == Some(n)).count();
            on_board == games.len()
                && stored_before
                    .get(&n)
                    .is_some_and(|g| g.moves.len() == games[games.len() - 1].0.moves.len())
        });
        if all_over && done_at.is_none() {
            done_at = Some(Instant::now());
        }
        if done_at.is_some_and(|d| d.elapsed() > Duration::from_millis(DELAY_MS + 4000)) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(150),
            "the games did not end in time: {:?}",
            all_before
                .iter()
                .map(|g| (g.board_no, g.moves.len(), g.result.clone()))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(noted, "the note was never taken");
    assert!(
        restarted_in_window,
        "board 1's second game never began in {polls} polls"
    );
    leaks.dedup();
    assert!(
        leaks.is_empty(),
        "{} times a game was named before the delay allowed, first:\n{}",
        leaks.len(),
        leaks
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        held > 0 && crossed > 0,
        "board 1's boundary: the public view named the first game after the second began in \
         {held} polls, the second in {crossed}, of {polls}"
    );
    eprintln!(
        "board 1's boundary: {held} polls held the first game, {crossed} named the second, of {polls}"
    );
    let started_seen = events
        .lock()
        .unwrap()
        .iter()
        .any(|(_, ev)| ev["type"] == "game_started");
    assert!(
        started_seen,
        "the public events never said board 1's next game started"
    );
    assert!(
        arbiter_ahead > 0,
        "the arbiter was never ahead of the public view in {polls} polls"
    );
    // Once the window has passed, every public output has the whole record.
    let final_games = stored(&bench);
    let public = get_text(&client, &format!("{url}round.pgn")).await;
    let arbiter_pgn = client
        .get(format!("{url}round.pgn"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        arbiter_pgn.contains("Arbiter"),
        "the arbiter's PGN keeps the notes:\n{arbiter_pgn}"
    );
    let shown = shown_in_pgn(&public);
    assert_eq!(shown.len(), plan.len(), "{public}");
    for s in &shown {
        let g = &final_games[&s.board];
        let sans: Vec<String> = g
            .moves
            .iter()
            .map(|m| m.notation.trim_end_matches(['+', '#']).to_owned())
            .collect();
        assert_eq!(
            s.sans, sans,
            "board {}: the public PGN after the window",
            s.board
        );
        assert_eq!(
            s.result, g.result,
            "board {}: the result after the window",
            s.board
        );
    }
    let last_push = stand_in.0.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        shown_in_pgn(&last_push.1)
            .iter()
            .map(|s| s.sans.len())
            .sum::<usize>(),
        final_games.values().map(|g| g.moves.len()).sum::<usize>(),
        "the last push has every move"
    );
    bench.stop().await;
}
