//! The relay end to end over pseudo-terminals and real HTTP: emulated boards recorded by the
//! daemon's `record_boards`, the server on 127.0.0.1:0, a client subscribed to `/api/events`.
//! Every move event must arrive in order and already be in SQLite; every PGN served must parse
//! with pgn-reader into exactly the recorded moves; a conditional GET answers 304 until the next
//! move; the admin API refuses what it must and then changes nothing.

use crate::relay_common;

use std::{
    collections::HashMap,
    io::Cursor,
    ops::ControlFlow,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use boardscribe::{
    export::{self, ExportOptions, Format},
    relay::Token,
    store::Store,
};
use futures_util::StreamExt;
use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use relay_common::{Bench, corpus_game};
use reqwest::{StatusCode, header};
use serde_json::{Value, json};
use shakmaty::{CastlingMode, Chess, Position, uci::UciMove};

const TOKEN: &str = "t0ken-for-the-arbiter";

/// One game as served: its tags and its moves in UCI, checked legal by pgn-reader + shakmaty.
#[derive(Debug, Default)]
struct Served {
    tags: HashMap<String, String>,
    uci: Vec<String>,
}

struct PgnVisitor;

impl Visitor for PgnVisitor {
    type Tags = HashMap<String, String>;
    type Movetext = (Served, Chess, Option<String>);
    type Output = Result<Served, String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(HashMap::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        tags.insert(
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        );
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let served = Served {
            tags,
            uci: Vec::new(),
        };
        ControlFlow::Continue((served, Chess::default(), None))
    }

    fn san(&mut self, mt: &mut Self::Movetext, san: SanPlus) -> ControlFlow<Self::Output> {
        let (served, pos, error) = mt;
        if error.is_none() {
            match san.san.to_move(pos) {
                Ok(m) => {
                    served
                        .uci
                        .push(UciMove::from_move(m, CastlingMode::Standard).to_string());
                    pos.play_unchecked(m);
                }
                Err(e) => *error = Some(format!("{san}: {e}")),
            }
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, mt: Self::Movetext) -> Self::Output {
        match mt.2 {
            Some(e) => Err(e),
            None => Ok(mt.0),
        }
    }
}

/// Every game of a served PGN text.
fn parse_pgn(text: &str) -> Vec<Served> {
    let mut reader = Reader::new(Cursor::new(text.as_bytes()));
    let mut games = Vec::new();
    while let Some(game) = reader.read_game(&mut PgnVisitor).unwrap() {
        games.push(game.unwrap_or_else(|e| panic!("served PGN has an illegal move: {e}\n{text}")));
    }
    games
}

/// One server-sent event.
#[derive(Debug)]
struct Sse {
    id: Option<u64>,
    kind: String,
    data: Value,
}

/// Reads `/api/events` into a channel of parsed events.
async fn subscribe(url: &str) -> tokio::sync::mpsc::UnboundedReceiver<Sse> {
    let resp = reqwest::get(format!("{url}api/events")).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        resp.headers()[header::CONTENT_TYPE].to_str().unwrap(),
        "text/event-stream"
    );
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut body = resp.bytes_stream();
        let mut buf = String::new();
        while let Some(Ok(chunk)) = body.next().await {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let frame: String = buf.drain(..end + 2).collect();
                let (mut id, mut kind, mut data) = (None, String::from("message"), String::new());
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim().parse().ok();
                    } else if let Some(v) = line.strip_prefix("event:") {
                        kind = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if data.is_empty() {
                    continue; // a keep-alive comment
                }
                let data = serde_json::from_str(&data).unwrap();
                if tx.send(Sse { id, kind, data }).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// What the SSE client has seen, board by board.
#[derive(Default)]
struct Seen {
    /// Each board's moves (UCI) as the events tell them.
    moves: HashMap<String, Vec<String>>,
    move_events: usize,
    connected: Vec<String>,
    problems: Vec<String>,
}

impl Seen {
    fn plies(&self) -> usize {
        self.moves.values().map(Vec::len).sum()
    }
}

/// Whether board `board` has a move (live or since retracted) `uci` at `ply` in SQLite.
fn in_sqlite(conn: &rusqlite::Connection, board: &str, ply: u64, uci: &str) -> bool {
    conn.query_row(
        "SELECT count(*) FROM moves m JOIN games g ON g.id = m.game_id \
         JOIN boards b ON b.id = g.board_id WHERE b.name = ?1 AND m.ply = ?2 AND m.uci = ?3",
        rusqlite::params![board, ply as i64, uci],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
        > 0
}

/// Follows the events: order, ids, and that each move is durable when it arrives.
fn follow(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Sse>,
    db: std::path::PathBuf,
) -> Arc<Mutex<Seen>> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let out = seen.clone();
    tokio::spawn(async move {
        let mut last_id = 0;
        let mut conn = None;
        while let Some(ev) = rx.recv().await {
            let mut s = seen.lock().unwrap();
            let Some(id) = ev.id else {
                s.problems.push(format!("event without id: {ev:?}"));
                continue;
            };
            if id != last_id + 1 {
                s.problems.push(format!("event {id} after {last_id}"));
            }
            last_id = id;
            let board = ev.data["board"].as_str().unwrap_or_default().to_owned();
            let ply = ev.data["ply"].as_u64().unwrap_or(0);
            match ev.kind.as_str() {
                "board_connected" => s.connected.push(board),
                "move" | "revision" => {
                    let uci = ev.data["uci"].as_str().unwrap_or_default().to_owned();
                    let conn = conn.get_or_insert_with(|| {
                        rusqlite::Connection::open_with_flags(
                            &db,
                            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                        )
                        .unwrap()
                    });
                    if !in_sqlite(conn, &board, ply, &uci) {
                        s.problems
                            .push(format!("{board} ply {ply} {uci}: not in SQLite on arrival"));
                    }
                    let list = s.moves.entry(board.clone()).or_default();
                    if ev.kind == "move" {
                        if ply as usize != list.len() + 1 {
                            let n = list.len();
                            s.problems
                                .push(format!("{board}: move at ply {ply} after {n} plies"));
                        } else {
                            list.push(uci);
                            s.move_events += 1;
                        }
                    } else if ply >= 1 && ply as usize <= list.len() {
                        list.truncate(ply as usize - 1);
                        list.push(uci);
                    }
                    // The snapshot carried along shows the move just made.
                    let snap = &ev.data["snapshot"];
                    if snap["ply"].as_u64() != Some(ply) || snap["fen"] != ev.data["fen"] {
                        s.problems
                            .push(format!("{board}: snapshot behind ply {ply}"));
                    }
                }
                "takeback" => {
                    let to = ev.data["to_ply"].as_u64().unwrap_or(0) as usize;
                    s.moves.entry(board).or_default().truncate(to);
                }
                "game_started" => {
                    s.moves.insert(board, Vec::new());
                }
                _ => {}
            }
        }
    });
    out
}

fn uci_of(game: &boardscribe::emulator::PgnGame) -> Vec<String> {
    game.moves
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect()
}

fn live_uci(g: &boardscribe::store::GameRecord) -> Vec<String> {
    g.moves.iter().map(|m| m.uci.clone().unwrap()).collect()
}

async fn get_round(client: &reqwest::Client, url: &str) -> (String, String) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let resp = client.get(format!("{url}round.pgn")).send().await.unwrap();
        if resp.status() == StatusCode::OK {
            assert_eq!(
                resp.headers()[header::CONTENT_TYPE].to_str().unwrap(),
                "text/plain; charset=utf-8"
            );
            let etag = resp.headers()[header::ETAG].to_str().unwrap().to_owned();
            return (resp.text().await.unwrap(), etag);
        }
        // The daemon may not have created the database yet.
        assert!(Instant::now() < deadline, "round.pgn: {}", resp.status());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn conditional(client: &reqwest::Client, url: &str, etag: &str) -> reqwest::Response {
    client
        .get(format!("{url}round.pgn"))
        .header(header::IF_NONE_MATCH, etag)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boards_recorded_live_reach_sse_pgn_and_admin() {
    let token = Token::new(TOKEN).unwrap();
    let mut bench = Bench::new(Some(token)).await;
    let url = bench.url.clone();
    let client = reqwest::Client::new();
    let events = subscribe(&url).await;
    let seen = follow(events, bench.db.clone());
    let games = [
        (corpus_game("tatamast22", 27), 11, 0.0),
        (corpus_game("tatamast22", 86), 12, 0.0),
        (corpus_game("WorldChamp1886", 20), 13, 0.0),
    ];
    bench.start(&games, 0.04).await;

    // While the boards play: a conditional GET with the last ETag gets the new body once a move
    // was announced after that body was read.
    let mut changes_seen = 0;
    while changes_seen < 3 {
        let (body, etag) = get_round(&client, &url).await;
        let served: usize = parse_pgn(&body).iter().map(|g| g.uci.len()).sum();
        let deadline = Instant::now() + Duration::from_secs(20);
        while seen.lock().unwrap().plies() <= served {
            assert!(Instant::now() < deadline, "no move after {served} plies");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let resp = conditional(&client, &url, &etag).await;
        assert_eq!(resp.status(), StatusCode::OK, "a move came after {etag}");
        assert_ne!(resp.headers()[header::ETAG].to_str().unwrap(), etag);
        changes_seen += 1;
    }

    bench.wait_done(Duration::from_secs(180)).await;
    let store = bench.store();
    let recorded = store.games().unwrap();
    {
        let s = seen.lock().unwrap();
        assert!(s.problems.is_empty(), "{:#?}", s.problems);
        assert_eq!(s.connected.len(), bench.boards.len());
        for (i, name) in bench.boards.iter().enumerate() {
            let game = recorded.iter().rfind(|g| &g.board_name == name).unwrap();
            assert_eq!(s.moves[name], live_uci(game), "{name}: SSE and SQLite");
            assert_eq!(
                s.moves[name],
                uci_of(&games[i].0),
                "{name}: SSE and the game played"
            );
        }
        assert!(s.move_events >= s.plies());
    }

    // The round PGN and every game's PGN parse into exactly the recorded moves.
    let (body, etag) = get_round(&client, &url).await;
    let served = parse_pgn(&body);
    assert_eq!(served.len(), recorded.len());
    for (s, g) in served.iter().zip(&recorded) {
        assert_eq!(s.uci, live_uci(g), "game {}", g.id.0);
        let one = client
            .get(format!("{url}games/{}.pgn", g.id.0))
            .send()
            .await
            .unwrap();
        assert_eq!(one.status(), StatusCode::OK);
        let one = parse_pgn(&one.text().await.unwrap());
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].uci, live_uci(g));
        assert_eq!(one[0].tags.get("Result"), s.tags.get("Result"));
    }
    let missing = client.get(format!("{url}games/999999.pgn")).send().await;
    assert_eq!(missing.unwrap().status(), StatusCode::NOT_FOUND);

    // Nothing moves now: 304, with the same tag, however often the store writes raw bytes.
    for _ in 0..3 {
        let resp = conditional(&client, &url, &etag).await;
        assert_eq!(resp.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(resp.headers()[header::ETAG].to_str().unwrap(), etag);
        assert!(resp.bytes().await.unwrap().is_empty());
        tokio::time::sleep(Duration::from_millis(600)).await;
    }

    // /api/boards shows each board's position and clocks.
    let boards: Value = client
        .get(format!("{url}api/boards"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let list = boards["boards"].as_array().unwrap();
    assert_eq!(list.len(), bench.boards.len());
    for (i, b) in list.iter().enumerate() {
        let game = recorded
            .iter()
            .rfind(|g| g.board_name == bench.boards[i])
            .unwrap();
        let last = game.moves.last().unwrap();
        assert_eq!(b["name"], bench.boards[i].as_str());
        assert_eq!(b["number"], i + 1);
        assert_eq!(b["fen"], last.position.as_str());
        assert_eq!(b["last_move"]["san"], last.notation.as_str());
        assert_eq!(b["game_id"], game.id.0);
        assert!(b["clock"]["white_ms"].as_u64().is_some(), "{b}");
        assert!(b["svg"].as_str().unwrap().starts_with("<svg"));
    }

    check_admin(&bench, &client, &recorded[0]).await;
    bench.stop().await;
}

async fn api_boards(client: &reqwest::Client, url: &str) -> Value {
    crate::relay_common::api_boards_as_arbiter(client, url, TOKEN).await
}

/// A board unplugged for 6 s at bullet hands whose memory is gone when it comes back: the record
/// stops, `thread_lost` is on `/api/boards` (`recording: "lost"`). The arbiter resumes the game
/// through the admin API with the moves of the scoresheets; the board's task takes the decision
/// live: the alert is resolved, the page shows the whole game, and the store holds it exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arbiter_resumes_a_lost_board_live_through_the_admin_api() {
    let token = Token::new(TOKEN).unwrap();
    let mut bench = Bench::new(Some(token)).await;
    let url = bench.url.clone();
    let client = reqwest::Client::new();
    let game = corpus_game("tatamast22", 12);
    let expected = uci_of(&game);
    bench
        .start_with(&[(game, 3, 0.0)], 0.1, |_, pty| {
            pty.unplug_at_ply = Some(10);
            pty.unplug_for_ms = 6_000;
            pty.memory_lost_on_unplug = true;
        })
        .await;
    let deadline = Instant::now() + Duration::from_secs(120);
    let lost = loop {
        let boards = api_boards(&client, &url).await;
        let b = boards["boards"][0].clone();
        if b["recording"] == "lost" {
            // Spectators are not told: the lost thread is the arbiter's alert.
            let public = client
                .get(format!("{url}api/boards"))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            assert!(!public.contains("\"lost\""), "{public}");
            break b;
        }
        assert!(Instant::now() < deadline, "never lost: {b}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        lost["irregularities"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["kind"] == "thread_lost"),
        "{lost}"
    );
    bench.wait_done(Duration::from_secs(180)).await;
    let store = bench.store();
    let recorded = store.games().unwrap().remove(0);
    let plies = recorded.moves.len();
    assert!(plies < expected.len(), "the record stopped: {plies} plies");
    assert_eq!(live_uci(&recorded), expected[..plies], "nothing invented");

    // The arbiter, from the scoresheets: everything after the last recorded ply.
    let resume = format!("{url}api/admin/games/{}/resume", recorded.id.0);
    let body = json!({ "after_ply": plies, "moves": expected[plies..], "author": "Chief" });
    let refused = client.post(&resume).json(&body).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let bad = json!({ "after_ply": plies, "moves": ["e2e5"] });
    let refused = client
        .post(&resume)
        .bearer_auth(TOKEN)
        .json(&bad)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let resp = client
        .post(&resume)
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status(),
        StatusCode::OK,
        "{}",
        resp.text().await.unwrap()
    );
    let decided: Value = resp.json().await.unwrap();
    assert_eq!(decided["action"]["action"], "resume");

    // The board fits the record again: the alert is resolved and recording is ok.
    let deadline = Instant::now() + Duration::from_secs(10);
    let b = loop {
        let boards = api_boards(&client, &url).await;
        let b = boards["boards"][0].clone();
        if b["recording"] == "ok" && b["irregularities"].as_array().unwrap().is_empty() {
            break b;
        }
        assert!(
            Instant::now() < deadline,
            "still lost after the decision: {b}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(b["ply"], expected.len());
    let store = bench.store();
    let g = store.game(recorded.id).unwrap().unwrap();
    assert_eq!(live_uci(&g), expected);
    let kinds: Vec<&str> = g.events.iter().map(|e| e.kind.as_str()).collect();
    let at = |k: &str| kinds.iter().position(|x| *x == k);
    assert!(
        at("thread_lost") < at("decision") && at("decision") < at("resolved"),
        "{kinds:?}"
    );
    bench.stop().await;
}

/// The record as an export with its history shows it: what a refused request must not change.
fn export_all(store: &Store) -> String {
    export::export_with(
        store,
        Format::Json,
        None,
        ExportOptions {
            history: true,
            ..ExportOptions::default()
        },
    )
    .unwrap()
}

async fn check_admin(
    bench: &Bench,
    client: &reqwest::Client,
    game: &boardscribe::store::GameRecord,
) {
    let url = &bench.url;
    let id = game.id.0;
    let before = export_all(&bench.store());
    let post = |path: String, auth: Option<&str>, body: &str| {
        let mut req = client
            .post(format!("{url}api/admin/games/{path}"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(body.to_owned());
        if let Some(auth) = auth {
            req = req.header(header::AUTHORIZATION, auth);
        }
        req.send()
    };
    let good = format!("Bearer {TOKEN}");
    let result = r#"{"result": "1-0", "reason": "resignation", "author": "Arbiter A"}"#;
    let refused: Vec<(String, Option<&str>, &str, StatusCode)> = vec![
        (
            format!("{id}/result"),
            None,
            result,
            StatusCode::UNAUTHORIZED,
        ),
        (
            format!("{id}/result"),
            Some("Bearer nope"),
            result,
            StatusCode::UNAUTHORIZED,
        ),
        (
            format!("{id}/result"),
            Some(TOKEN),
            result,
            StatusCode::UNAUTHORIZED,
        ),
        (
            format!("{id}/result"),
            Some(&good[..good.len() - 1]),
            result,
            StatusCode::UNAUTHORIZED,
        ),
        (
            format!("{id}/result"),
            Some(&good),
            "{\"result\": ",
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("{id}/result"),
            Some(&good),
            "[1, 2]",
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("{id}/result"),
            Some(&good),
            r#"{"result": "2-0", "reason": "resignation"}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("{id}/result"),
            Some(&good),
            r#"{"result": "1-0", "reason": "resignation", "sql": "1; DROP TABLE games"}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("{id}/correct"),
            Some(&good),
            r#"{"ply": 1, "move": "e2e5"}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("{id}/rule"),
            Some(&good),
            r#"{"irregularity": 99, "ruling": {"kind": "move_stands"}}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("{id}/note"),
            Some(&good),
            r#"{"text": "   "}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            "999999/result".to_string(),
            Some(&good),
            result,
            StatusCode::NOT_FOUND,
        ),
        (
            "999999/note".to_string(),
            Some(&good),
            r#"{"text": "x"}"#,
            StatusCode::NOT_FOUND,
        ),
        (
            "x'1/result".to_string(),
            Some(&good),
            result,
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("{id}/delete"),
            Some(&good),
            result,
            StatusCode::NOT_FOUND,
        ),
    ];
    for (path, auth, body, status) in &refused {
        let resp = post(path.clone(), *auth, body).await.unwrap();
        assert_eq!(resp.status(), *status, "POST {path} {auth:?} {body}");
        let answer: Value = resp.json().await.unwrap();
        let message = answer["error"].as_str().unwrap_or_default();
        assert!(!message.is_empty(), "{path}: {answer}");
        assert!(!message.contains(TOKEN));
        assert_eq!(
            export_all(&bench.store()),
            before,
            "refused {path} changed the record"
        );
    }

    // Good requests do what they say.
    let (_, old_etag) = get_round(client, url).await;
    let resp = post(format!("{id}/result"), Some(&good), result)
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let answer: Value = resp.json().await.unwrap();
    assert_eq!(answer["action"]["action"], "set_result");
    assert_eq!(answer["author"], "Arbiter A");
    let resp = post(
        format!("{id}/note"),
        Some(&good),
        &json!({"ply": 1, "text": "first move was slow", "author": "Arbiter A"}).to_string(),
    )
    .await
    .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let store = bench.store();
    let after = store.game(game.id).unwrap().unwrap();
    assert_eq!(after.result, "1-0");
    assert_eq!(after.termination.as_deref(), Some("resignation"));
    assert_eq!(store.decisions(game.id).unwrap().len(), 2);
    assert_eq!(live_uci(&after), live_uci(game));
    let resp = conditional(client, url, &old_etag).await;
    assert_eq!(
        resp.status(),
        StatusCode::OK,
        "a decision re-publishes the round"
    );
    // The live state shows the result the arbiter set.
    let boards: Value = client
        .get(format!("{url}api/boards"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let b = boards["boards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["game_id"] == id)
        .unwrap();
    assert_eq!(
        (&b["result"], &b["result_final"]),
        (&json!("1-0"), &json!(true))
    );
    assert_eq!(b["termination"], "resignation");
    let one = client
        .get(format!("{url}games/{id}.pgn"))
        .send()
        .await
        .unwrap();
    let one = parse_pgn(&one.text().await.unwrap());
    assert_eq!(one[0].tags["Result"], "1-0");
    assert_eq!(one[0].uci, live_uci(game));
}

/// The pairings import over HTTP refuses what it must and changes nothing then; a good import
/// names the players in `/round.pgn` (the current round's games); `/metrics` counts exactly the
/// moves SQLite holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairings_over_http_name_the_round_and_metrics_count_the_moves() {
    let token = Token::new(TOKEN).unwrap();
    let mut bench = Bench::with_round(Some(token), Some(1)).await;
    let url = bench.url.clone();
    let client = reqwest::Client::new();
    let games = [
        (corpus_game("tatamast22", 27), 21, 0.0),
        (corpus_game("WorldChamp1886", 20), 22, 0.0),
    ];
    bench.start(&games, 0.04).await;
    bench.wait_done(Duration::from_secs(180)).await;

    let post = |auth: Option<&str>, body: String| {
        let mut req = client
            .post(format!("{url}api/admin/pairings"))
            .header(header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(auth) = auth {
            req = req.header(header::AUTHORIZATION, auth);
        }
        req.send()
    };
    let bearer = format!("Bearer {TOKEN}");
    let good_csv = "board,white,black,white_fide,black_fide\n\
                    1,\"Tal, Mikhail\",\"Petrosian, Tigran\",4100018,4100026\n\
                    2,Steinitz,Zukertort,,\n";
    let good = json!({ "round": 1, "format": "csv", "text": good_csv }).to_string();
    let before = export_all(&bench.store());
    let (round_before, _) = get_round(&client, &url).await;

    let refused = [
        (None, good.clone(), StatusCode::UNAUTHORIZED, "bearer"),
        (
            Some("Bearer wrong"),
            good.clone(),
            StatusCode::UNAUTHORIZED,
            "bearer",
        ),
        (
            Some(bearer.as_str()),
            "{\"round\": 1,".to_owned(),
            StatusCode::BAD_REQUEST,
            "invalid JSON",
        ),
        (
            Some(bearer.as_str()),
            json!({ "round": 1, "format": "xls", "text": good_csv }).to_string(),
            StatusCode::BAD_REQUEST,
            "invalid JSON",
        ),
        (
            Some(bearer.as_str()),
            json!({ "round": 1, "format": "csv",
                    "text": "board,white,black\n1,A,B\n1,C,D\n" })
            .to_string(),
            StatusCode::BAD_REQUEST,
            "line 3: board 1 was already given on line 2",
        ),
        (
            Some(bearer.as_str()),
            json!({ "round": 1, "format": "csv", "text": "board,white,black\n2,A\n" }).to_string(),
            StatusCode::BAD_REQUEST,
            "line 2",
        ),
        (
            Some(bearer.as_str()),
            json!({ "round": 0, "format": "csv", "text": good_csv }).to_string(),
            StatusCode::BAD_REQUEST,
            "round",
        ),
    ];
    for (auth, body, status, says) in refused {
        let resp = post(auth, body.clone()).await.unwrap();
        assert_eq!(resp.status(), status, "{body}");
        let answer: Value = resp.json().await.unwrap();
        let message = answer["error"].as_str().unwrap();
        assert!(message.contains(says), "{body}: {message}");
    }
    assert_eq!(
        export_all(&bench.store()),
        before,
        "a refusal changed the record"
    );
    assert!(bench.store().pairings(1).unwrap().is_empty());
    let (round_now, _) = get_round(&client, &url).await;
    assert_eq!(round_now, round_before);

    let resp = post(Some(&bearer), good).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let answer: Value = resp.json().await.unwrap();
    assert_eq!(answer, json!({ "round": 1, "boards": 2 }));

    let (body, _) = get_round(&client, &url).await;
    let served = parse_pgn(&body);
    let recorded = bench.store().round_games(1).unwrap();
    assert_eq!(served.len(), 2);
    let names = [
        ("Tal, Mikhail", "Petrosian, Tigran"),
        ("Steinitz", "Zukertort"),
    ];
    for (i, s) in served.iter().enumerate() {
        assert_eq!(s.tags["White"], names[i].0);
        assert_eq!(s.tags["Black"], names[i].1);
        assert_eq!(s.tags["Round"], format!("1.{}", i + 1));
        let game = recorded
            .iter()
            .rfind(|g| g.board_name == bench.boards[i])
            .unwrap();
        assert_eq!(s.uci, live_uci(game));
    }
    assert_eq!(served[0].tags["WhiteFideId"], "4100018");

    // /metrics: Prometheus text whose moves counter is what SQLite holds.
    // The operator's: not for spectators (they run ahead of any delay), with the token.
    let resp = client.get(format!("{url}metrics")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let resp = client
        .get(format!("{url}metrics"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(
        resp.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = resp.text().await.unwrap();
    let sample = |name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
            .parse()
            .unwrap()
    };
    let in_sqlite: usize = bench
        .store()
        .games()
        .unwrap()
        .iter()
        .map(|g| g.moves.len())
        .sum();
    assert!(in_sqlite > 0);
    assert_eq!(sample("boardscribe_moves_total"), in_sqlite as f64);
    assert_eq!(sample("boardscribe_boards_configured"), 2.0);
    assert!(sample("boardscribe_boards_connected") <= 2.0);
    assert!(sample("boardscribe_frames_total") > in_sqlite as f64);
    assert!(sample("boardscribe_store_commit_seconds_count") > 0.0);
    assert_eq!(sample("boardscribe_sse_subscribers"), 0.0);
    bench.stop().await;
}

/// A result the board only proposed (the kings' gesture) reads on the live page and the board's
/// page, over HTTP in each language the switch asks for, as awaiting the arbiter's confirmation,
/// and `/api/boards` says it is not final; once the arbiter sets it, the pages show it bare.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposed_result_says_it_awaits_the_arbiter_on_the_pages() {
    use boardscribe::{
        game::{Kind, Outcome},
        lang::Lang,
        store::{Action, Decision, GameId, ResultReason},
        tracker::TrackerEvent,
    };
    let bench = Bench::new(None).await;
    {
        let mut store = Store::open(&bench.db).unwrap();
        let board = store.board("hall 1", Kind::Chess).unwrap();
        store.set_board_number(board, 1).unwrap();
    }
    bench.hub.add_board("hall 1", Some(1), &[]);
    bench.hub.committed(
        "hall 1",
        &TrackerEvent::ResultGesture {
            at_ms: 5_000,
            after_ply: 0,
            proposed: Outcome::BlackWins,
        },
    );
    let client = reqwest::Client::new();
    let page = |path: String| {
        let client = client.clone();
        async move {
            let answer = client.get(&path).send().await.unwrap();
            assert_eq!(answer.status(), StatusCode::OK, "{path}");
            answer.text().await.unwrap()
        }
    };
    let boards: Value = client
        .get(format!("{}api/boards", bench.url))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (
            &boards["boards"][0]["result"],
            &boards["boards"][0]["result_final"]
        ),
        (&json!("0-1"), &json!(false)),
        "{boards}"
    );
    for lang in Lang::ALL {
        let pending = lang.fill("page.pending", &[("result", "0-1")]);
        let arbiter = lang.text("sheet.arbiter").to_lowercase();
        assert!(
            pending.to_lowercase().contains(&arbiter),
            "{lang}: {pending}"
        );
        let shown = format!(
            r#"<span class="result">{}</span>"#,
            export::escape_html(&pending)
        );
        for path in ["", "boards/1"] {
            let text = page(format!("{}{path}?lang={}", bench.url, lang.code())).await;
            assert!(text.contains(&shown), "{lang} /{path}: {shown}");
        }
    }
    // The arbiter's result stands: shown as it is.
    bench.hub.decision(
        "hall 1",
        &Decision {
            id: 1,
            game: GameId(1),
            action: Action::SetResult {
                result: "0-1".into(),
                reason: ResultReason::Resignation,
                previous_result: "*".into(),
                previous_termination: None,
            },
            author: "Arbiter".into(),
            note: None,
            at_ms: 6_000,
        },
    );
    let text = page(format!("{}boards/1?lang=ru", bench.url)).await;
    assert!(
        text.contains(r#"<span class="result">0-1</span>"#),
        "the result that stands"
    );
    bench.stop().await;
}
