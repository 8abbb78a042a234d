//! Alerts with a life cycle and a public page for spectators (issue 16, items 4 and 6), end to
//! end: emulated boards on pseudo-terminals recorded by the daemon, the relay over real HTTP.
//! A repeated irregularity is one alert with a count; a penalty due keeps its alert open after
//! the board is put right, until the arbiter rules; a ruling (admin API or the command line)
//! closes it; an unplugged board is an alert and its clock stops; `/`, `/boards/N`, the public
//! `/api/boards` and `/api/events` of a noisy round carry no irregularity, alert or note.

use crate::relay_common;

use std::{
    process::Command,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use boardscribe::{
    emulator::{
        self, EmulatorOptions, IllegalKind, IrregularityScript, PtyOptions, PtyScript,
        ScriptedIrregularity,
    },
    relay::Token,
};
use futures_util::StreamExt;
use relay_common::{Bench, corpus_game};
use reqwest::StatusCode;
use serde_json::{Value, json};

const TOKEN: &str = "alerts-arbiter-token";

/// `GET url` (as the arbiter with `token`), once the database exists (the daemon creates it as
/// it starts: until then the relay answers 500).
async fn get(client: &reqwest::Client, url: &str, token: bool) -> Value {
    let start = Instant::now();
    loop {
        let mut req = client.get(url);
        if token {
            req = req.bearer_auth(TOKEN);
        }
        let resp = req.send().await.unwrap();
        if resp.status() == StatusCode::OK {
            return resp.json().await.unwrap();
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{url}: {}",
            resp.status()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn admin_alerts(client: &reqwest::Client, url: &str) -> Vec<Value> {
    let v = get(client, &format!("{url}api/admin/alerts"), true).await;
    v["alerts"].as_array().unwrap().clone()
}

/// Every server-sent event of `/api/events` as its raw text, from now on.
async fn sse_text(url: &str) -> Arc<Mutex<String>> {
    sse_text_as(url, None).await
}

/// [`sse_text`], asked with the admin token if given (the arbiter's stream).
async fn sse_text_as(url: &str, token: Option<&str>) -> Arc<Mutex<String>> {
    let mut request = reqwest::Client::new().get(format!("{url}api/events"));
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    let resp = request.send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let text = Arc::new(Mutex::new(String::new()));
    let out = text.clone();
    tokio::spawn(async move {
        let mut body = resp.bytes_stream();
        while let Some(Ok(chunk)) = body.next().await {
            text.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&chunk));
        }
    });
    out
}

fn noisy(seed: u64, irregularities: Vec<ScriptedIrregularity>) -> EmulatorOptions {
    EmulatorOptions {
        speed: 0.05,
        seed,
        time_control: Some((15 * 60_000, 10_000)),
        irregularities,
        ..EmulatorOptions::default()
    }
}

/// White presses without moving before plies 5 and 9, makes an illegal move (completed by a
/// press) before plies 13 and 17, and a piece is knocked over before ply 20.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_alert_per_irregularity_open_until_resolved_or_ruled() {
    let mut bench = Bench::new(Token::new(TOKEN)).await;
    let url = bench.url.clone();
    let client = reqwest::Client::new();
    let at = |before_ply, kind| ScriptedIrregularity { before_ply, kind };
    let illegal = IrregularityScript::IllegalMove {
        kind: IllegalKind::WrongShape,
    };
    let script = emulator::script_pgn(
        &corpus_game("tatamast22", 3),
        &noisy(
            7,
            vec![
                at(5, IrregularityScript::PressWithoutMove),
                at(9, IrregularityScript::PressWithoutMove),
                at(13, illegal),
                at(17, illegal),
                at(20, IrregularityScript::Knock { hold_ms: 3_000 }),
            ],
        ),
    )
    .unwrap();
    bench
        .start_scripts(vec![(PtyScript::from(script), PtyOptions::default())])
        .await;
    // Wait until the knocked piece is back and a few moves were made after it.
    let start = Instant::now();
    let alerts = loop {
        let alerts = admin_alerts(&client, &url).await;
        let boards = get(&client, &format!("{url}api/boards"), true).await;
        let ply = boards["boards"][0]["ply"].as_u64().unwrap_or(0);
        if ply >= 24 && alerts.iter().any(|a| a["kind"] == "displaced") {
            break alerts;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "{alerts:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let of = |kind: &str| -> Vec<&Value> { alerts.iter().filter(|a| a["kind"] == kind).collect() };
    // Two presses without a move: one alert, counted twice, for the arbiter to decide.
    let presses = of("clock_without_move");
    assert_eq!(presses.len(), 1, "{alerts:#?}");
    let press = presses[0];
    assert_eq!(press["count"], 2, "{press}");
    assert_eq!(press["state"], "open");
    assert!(press["penalty_due"].as_str().is_some(), "{press}");
    assert_eq!(press["irregularities"].as_array().unwrap().len(), 2);
    // Two illegal moves by White: put right on the board, but the penalty is due (the second
    // loses the game): open until ruled.
    let illegal = of("illegal_move");
    assert_eq!(illegal.len(), 1, "{alerts:#?}");
    let illegal = illegal[0].clone();
    assert_eq!(illegal["count"], 2, "{illegal}");
    assert_eq!(illegal["state"], "open", "{illegal}");
    assert!(
        illegal["resolved"].as_str().is_some(),
        "put right: {illegal}"
    );
    let due = illegal["penalty_due"].as_str().unwrap();
    assert!(due.contains("second") && due.contains("white"), "{due}");
    assert!(due.contains("loses"), "{due}");
    assert!(illegal["article"].as_str().is_some());
    assert_eq!(illegal["board"], 1);
    assert!(illegal["since_ms"].as_u64().unwrap() > 1_600_000_000_000);
    // The knocked piece was put back: resolved on the board, nothing due.
    let knocked = of("displaced");
    assert_eq!(knocked.len(), 1, "{alerts:#?}");
    assert_eq!(knocked[0]["state"], "resolved");
    assert_eq!(knocked[0]["penalty_due"], Value::Null);
    // /api/boards with the token: the same alerts of the board's game, the open ones as
    // irregularities (one per alert); without it, none.
    let boards = get(&client, &format!("{url}api/boards"), true).await;
    let b = &boards["boards"][0];
    let open: Vec<&str> = b["irregularities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(open, ["clock_without_move", "illegal_move"], "{b}");
    assert_eq!(b["alerts"].as_array().unwrap().len(), 3, "{b}");
    let public = get(&client, &format!("{url}api/boards"), false).await;
    assert_eq!(public["boards"][0]["irregularities"], json!([]));
    assert_eq!(public["boards"][0]["alerts"], json!([]));
    let refused = client
        .get(format!("{url}api/admin/alerts"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);

    // The repro: a ruling answered 200 and the irregularity stayed listed.
    let game = b["game_id"].as_i64().unwrap();
    let ruled = press["irregularity"].as_u64().unwrap();
    let resp = client
        .post(format!("{url}api/admin/games/{game}/rule"))
        .bearer_auth(TOKEN)
        .json(&json!({ "irregularity": ruled, "ruling": { "kind": "no_action" } }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    // The illegal move's alert is ruled from the command line, another process.
    let db = bench.db.to_str().unwrap().to_owned();
    let out = Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args([
            "arbiter",
            "--db",
            &db,
            "rule",
            "--game",
            &game.to_string(),
            "--irregularity",
            &illegal["irregularities"][1].to_string(),
            "--ruling",
            "penalty",
            "--description",
            "white loses the game",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let alerts = admin_alerts(&client, &url).await;
    let state = |kind: &str| {
        alerts
            .iter()
            .find(|a| a["kind"] == kind)
            .map(|a| a["state"].clone())
    };
    assert_eq!(
        state("clock_without_move"),
        Some(json!("ruled")),
        "{alerts:#?}"
    );
    assert_eq!(state("illegal_move"), Some(json!("ruled")), "{alerts:#?}");
    let ruling = &alerts.iter().find(|a| a["kind"] == "illegal_move").unwrap()["ruling"];
    assert_eq!(ruling["kind"], "penalty_applied", "{ruling}");
    let v = get(&client, &format!("{url}api/admin/alerts"), true).await;
    assert_eq!(v["open"], 0, "{v}");
    let boards = get(&client, &format!("{url}api/boards"), true).await;
    assert_eq!(boards["boards"][0]["irregularities"], json!([]));
    bench.stop().await;
}

/// A board unplugged mid-game for six seconds: while it is away it is an alert (for the
/// arbiter) and its clock stands still on the page and in the events; back, the alert is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unplugged_board_is_an_alert_and_its_clock_stops() {
    let mut bench = Bench::new(Token::new(TOKEN)).await;
    let url = bench.url.clone();
    let client = reqwest::Client::new();
    let events = sse_text(&url).await;
    let script = emulator::script_pgn(&corpus_game("tatamast22", 12), &noisy(3, Vec::new()));
    let options = PtyOptions {
        unplug_at_ply: Some(12),
        unplug_for_ms: 6_000,
        ..PtyOptions::default()
    };
    bench
        .start_scripts(vec![(PtyScript::from(script.unwrap()), options)])
        .await;
    let start = Instant::now();
    let lost = loop {
        let boards = get(&client, &format!("{url}api/boards"), true).await;
        let b = boards["boards"][0].clone();
        if b["connection"] == "lost" {
            break b;
        }
        assert!(start.elapsed() < Duration::from_secs(90), "never lost: {b}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let alert = lost["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "board_unplugged")
        .unwrap_or_else(|| panic!("no alert: {lost}"))
        .clone();
    assert_eq!(
        (&alert["state"], &alert["board"]),
        (&json!("open"), &json!(1))
    );
    assert!(alert["since_ms"].as_u64().unwrap() > 1_600_000_000_000);
    assert_eq!(lost["clock"]["running"], Value::Null, "{lost}");
    let all = admin_alerts(&client, &url).await;
    assert!(all.iter().any(|a| a["id"] == alert["id"]), "{all:#?}");
    // The page's clock stands: the event that told it carried a stopped clock.
    let sse = events.lock().unwrap().clone();
    let lost_event = sse
        .split("\n\n")
        .find(|e| e.contains("event: board_lost"))
        .expect("a board_lost event");
    let data: Value = serde_json::from_str(
        lost_event
            .lines()
            .find_map(|l| l.strip_prefix("data:"))
            .unwrap()
            .trim(),
    )
    .unwrap();
    assert!(data["snapshot"]["clock"].is_object(), "{data}");
    assert_eq!(data["snapshot"]["clock"]["running"], Value::Null, "{data}");
    // Back: no alert, the clock runs again.
    let start = Instant::now();
    loop {
        let boards = get(&client, &format!("{url}api/boards"), true).await;
        let b = &boards["boards"][0];
        if b["connection"] == "connected" && b["clock"]["running"].is_string() {
            let kinds: Vec<&Value> = b["alerts"].as_array().unwrap().iter().collect();
            assert!(!kinds.iter().any(|a| a["kind"] == "board_unplugged"), "{b}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never back: {b}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bench.stop().await;
}

/// A noisy round (every kind of scripted irregularity, often), a note and a ruling by the
/// arbiter: spectators' pages, the public `/api/boards` and the events carry none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectators_see_no_irregularity_alert_or_note() {
    let mut bench = Bench::new(Token::new(TOKEN)).await;
    let url = bench.url.clone();
    let client = reqwest::Client::new();
    let events = sse_text(&url).await;
    let arbiter_events = sse_text_as(&url, Some(TOKEN)).await;
    let games = [
        (corpus_game("tatamast22", 5), 31, 0.12),
        (corpus_game("tatamast22", 9), 32, 0.12),
    ];
    bench.start(&games, 0.05).await;
    bench.wait_done(Duration::from_secs(180)).await;
    let alerts = admin_alerts(&client, &url).await;
    assert!(alerts.len() >= 3, "a noisy round: {alerts:#?}");
    let boards = get(&client, &format!("{url}api/boards"), true).await;
    let game = boards["boards"][0]["game_id"].as_i64().unwrap();
    let note = "spectators must not read this note";
    let resp = client
        .post(format!("{url}api/admin/games/{game}/note"))
        .bearer_auth(TOKEN)
        .json(&json!({ "text": note, "author": "Chief" }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let first = alerts
        .iter()
        .find(|a| a["game"] == game && a["irregularity"].is_u64());
    if let Some(a) = first {
        let resp = client
            .post(format!("{url}api/admin/games/{game}/rule"))
            .bearer_auth(TOKEN)
            .json(&json!({ "irregularity": a["irregularity"], "ruling": { "kind": "no_action" }, "note": note }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The arbiter's stream has each decision whole: its author and note (issue 32, item 4).
    let arbiter_seen = arbiter_events.lock().unwrap().clone();
    let decisions: Vec<Value> = arbiter_seen
        .split("\n\n")
        .filter(|e| e.contains("event: decision"))
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let noted = decisions
        .iter()
        .find(|d| d["action"] == "note")
        .unwrap_or_else(|| panic!("no note in the arbiter's stream: {decisions:?}"));
    assert_eq!(noted["author"], "Chief");
    assert_eq!(noted["note"], note);
    if first.is_some() {
        let ruled = decisions
            .iter()
            .find(|d| d["action"] == "rule")
            .unwrap_or_else(|| panic!("no ruling in the arbiter's stream: {decisions:?}"));
        assert_eq!(ruled["note"], note);
    }

    let mut shown = vec![
        (
            "/".to_string(),
            client.get(&url).send().await.unwrap().text().await.unwrap(),
        ),
        (
            "/boards/1".to_string(),
            client
                .get(format!("{url}boards/1"))
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap(),
        ),
        (
            "/api/boards".to_string(),
            get(&client, &format!("{url}api/boards"), false)
                .await
                .to_string(),
        ),
        ("/api/events".to_string(), events.lock().unwrap().clone()),
    ];
    // What the arbiter sees, for contrast: the words looked for are there.
    let admin = get(&client, &format!("{url}api/admin/alerts"), true)
        .await
        .to_string();
    let words: Vec<String> = alerts
        .iter()
        .flat_map(|a| {
            [
                a["kind"].as_str().unwrap().to_owned(),
                a["detail"].as_str().unwrap_or_default().to_owned(),
            ]
        })
        .filter(|w| w.len() > 3)
        .chain([note.to_owned(), "penalty".to_owned(), "art. ".to_owned()])
        .collect();
    assert!(admin.contains(alerts[0]["kind"].as_str().unwrap()));
    for (what, text) in shown.drain(..) {
        assert!(text.len() > 500, "{what}: {text}");
        for w in &words {
            assert!(!text.contains(w.as_str()), "{what} shows {w:?}");
        }
        for bad in [
            "\"irregularity\"",
            "event: irregularity",
            "event: resolved",
            "Chief",
        ] {
            assert!(!text.contains(bad), "{what} shows {bad:?}");
        }
    }
    let public = get(&client, &format!("{url}api/boards"), false).await;
    for b in public["boards"].as_array().unwrap() {
        assert_eq!(b["irregularities"], json!([]));
        assert_eq!(b["alerts"], json!([]));
        assert!(!b["moves"].as_array().unwrap().is_empty());
    }
    bench.stop().await;
}
