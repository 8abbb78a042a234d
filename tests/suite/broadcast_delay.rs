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
    emulator::games_from_pgn,
    export::publish::Publication,
    relay::Token,
    store::{GameRecord, result_at},
};
use futures_util::StreamExt as _;
use relay_common::{Bench, Outputs, corpus_game};
use serde_json::Value;

const TOKEN: &str = "delay-test-token";
const DELAY_MS: u64 = 4000;

/// A game as a public output shows it: board number, SAN moves, result.
#[derive(Clone, Debug)]
struct Shown {
    board: u32,
    sans: Vec<String>,
    result: String,
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
            }
        })
        .collect()
}

/// Every move row ever written, by (game's board number, ply, SAN): the earliest time made.
fn move_rows(db: &Path) -> HashMap<(u32, u32, String), u64> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let Ok(mut stmt) = conn.prepare(
        "SELECT g.board_no, m.ply, m.notation, min(m.at_ms) FROM moves m \
             JOIN games g ON g.id = m.game_id GROUP BY 1, 2, 3",
    ) else {
        return HashMap::new();
    };
    stmt.query_map([], |r| {
        Ok((
            (
                r.get::<_, u32>(0)?,
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

/// The games as stored, by board number (the latest of each board).
fn stored(bench: &Bench) -> HashMap<u32, GameRecord> {
    let mut out = HashMap::new();
    // The daemon may not have created the database yet.
    let Ok(store) = boardscribe::store::Store::open_read_only(&bench.db) else {
        return out;
    };
    for g in store.games().unwrap() {
        if let Some(n) = g.board_no {
            out.insert(n, g);
        }
    }
    out
}

/// Fails unless every move and result in `shown` was recorded at least the delay before `at`.
fn assert_old_enough(what: &str, shown: &[Shown], bench: &Bench, at: u64) {
    let rows = move_rows(&bench.db);
    let games = stored(bench);
    let limit = at.saturating_sub(DELAY_MS);
    for s in shown {
        for (i, san) in s.sans.iter().enumerate() {
            let ply = i as u32 + 1;
            let made = rows
                .iter()
                .filter(|((b, p, n), _)| {
                    *b == s.board && *p == ply && n.trim_end_matches(['+', '#']) == san
                })
                .map(|(_, t)| *t)
                .min()
                .unwrap_or_else(|| {
                    panic!(
                        "{what}: board {} ply {ply} {san} was never recorded",
                        s.board
                    )
                });
            assert!(
                made <= limit,
                "{what}: board {} ply {ply} {san} made at {made}, shown at {at}: younger than the delay",
                s.board
            );
        }
        if s.result != "*" && !s.result.is_empty() {
            let g = &games[&s.board];
            assert_eq!(
                result_at(&g.events, limit),
                s.result,
                "{what}: board {} shows a result younger than the delay",
                s.board
            );
        }
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
    let games = [
        (corpus_game("tatamast22", 27), 31, 0.06),
        (corpus_game("tatamast22", 5), 32, 0.06),
    ];
    bench.start(&games, 0.05).await;
    let numbers: HashMap<String, u32> = bench
        .boards
        .iter()
        .enumerate()
        .map(|(i, b)| (b.clone(), i as u32 + 1))
        .collect();
    let events = follow_events(bench.url.clone());
    let client = reqwest::Client::new();
    let url = bench.url.clone();
    let mut second: Option<(String, Seen)> = None;
    let mut noted = false;
    let (mut polls, mut arbiter_ahead) = (0, 0);
    let start = Instant::now();
    let mut done_at: Option<Instant> = None;
    loop {
        polls += 1;
        let stored_before = stored(&bench);
        // The public PGNs, from each relay.
        let mut relays = vec![url.clone()];
        relays.extend(second.iter().map(|(u, _)| u.clone()));
        for relay in &relays {
            let text = get_text(&client, &format!("{relay}round.pgn")).await;
            let at = now_ms();
            assert!(
                !text.contains("Irregularity") && !text.contains("Arbiter"),
                "public PGN:\n{text}"
            );
            assert_old_enough("/round.pgn", &shown_in_pgn(&text), &bench, at);
            for g in stored_before.values() {
                let text = get_text(&client, &format!("{relay}games/{}.pgn", g.id.0)).await;
                let at = now_ms();
                assert!(
                    !text.contains("Irregularity") && !text.contains("Arbiter"),
                    "{text}"
                );
                assert_old_enough("/games/N.pgn", &shown_in_pgn(&text), &bench, at);
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
            assert_old_enough("/api/boards", &shown, &bench, at);
        }
        // The arbiter sees every move at once (at least what was stored before asking).
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
            if before > 0 && stored_before[&n].result == "*" {
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
                );
            }
        }
        for (at, body) in stand_in.0.lock().unwrap().clone() {
            assert!(
                !body.contains("Irregularity") && !body.contains("Arbiter"),
                "{body}"
            );
            assert_old_enough("Lichess push", &shown_in_pgn(&body), &bench, at);
        }
        let mut streams = vec![events.clone()];
        streams.extend(second.iter().map(|(_, e)| e.clone()));
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
                    assert_old_enough("public event", &[shown], &bench, at);
                }
            }
        }
        // Midway: an arbiter's note, and a relay started afresh (a restarted daemon).
        let plies: usize = stored_before.values().map(|g| g.moves.len()).sum();
        if !noted && plies >= 12 {
            let g = stored_before.values().next().unwrap();
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
            second = Some((second_url, second_events));
            noted = true;
        }
        // Every board has played its whole game.
        let all_over = (1..=games.len() as u32).all(|n| {
            stored_before
                .get(&n)
                .is_some_and(|g| g.moves.len() == games[n as usize - 1].0.moves.len())
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
            stored_before
                .iter()
                .map(|(n, g)| (n, g.moves.len(), g.result.clone()))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(noted, "the note was never taken");
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
    assert_eq!(shown.len(), games.len(), "{public}");
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
