//! A spectator's crawl (issue 32, item 1): every route of the router's own table that a
//! spectator can reach, with every query parameter it reads, on the recording daemon's relay
//! and on a `boardscribe serve --db` process beside it on the live database, while the round
//! has irregularities, alerts, a ruling and notes. No answer carries an irregularity's kind or
//! text, the recorder's state (`recording`, `store_error`, `lost_reason`), a note, a ruling or
//! the arbiter's name; the arbiter's own answers carry them (so the words looked for are real).
//! A public route the crawl does not know how to fill fails the test: a new route is crawled
//! from the day it is added.
//!
//! Run with `cargo test --release --test suite spectator_crawl:: -- --nocapture`.

use std::time::{Duration, Instant};

use boardscribe::relay::{
    Token,
    console::url_encode,
    server::{Access, RouteSpec, route_table},
};
use futures_util::StreamExt as _;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::relay_common::{Bench, Served, corpus_game};

const TOKEN: &str = "crawl-arbiter-token-7d1f0c2b9a";
const ARBITER: &str = "Chief Arbiter Okonkwo";
const NOTE: &str = "spectators must never read this note";

/// `GET url`'s status and body, as a spectator (or as the arbiter with the token).
async fn fetch(client: &reqwest::Client, url: &str, arbiter: bool) -> (StatusCode, String) {
    let mut req = client.get(url);
    if arbiter {
        req = req.bearer_auth(TOKEN);
    }
    let resp = req.send().await.unwrap();
    (resp.status(), resp.text().await.unwrap())
}

/// What a spectator's event stream carries for `for_ms`.
async fn events(client: &reqwest::Client, url: &str, for_ms: u64) -> String {
    let resp = client.get(url).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{url}");
    let mut body = resp.bytes_stream();
    let mut text = String::new();
    let until = tokio::time::Instant::now() + Duration::from_millis(for_ms);
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout_at(until, body.next()).await {
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    text
}

/// Every URL a spectator can ask of `route` on the relay at `base` (ends with `/`): its path
/// parameters filled with every board, round and game there is, and each query parameter it
/// reads with the values that select something.
fn urls(base: &str, route: &RouteSpec, boards: &[(u32, String)], games: &[i64]) -> Vec<String> {
    let paths: Vec<String> = match route.path {
        "/boards/{key}" => boards
            .iter()
            .flat_map(|(n, name)| {
                [
                    format!("/boards/{n}"),
                    format!("/boards/{}", url_encode(name)),
                ]
            })
            .collect(),
        "/rounds/{file}" => vec!["/rounds/1.pgn".into()],
        "/games/{file}" => games.iter().map(|g| format!("/games/{g}.pgn")).collect(),
        p if !p.contains('{') => vec![p.to_owned()],
        p => panic!("public route {p} is not crawled: teach the crawl its parameters"),
    };
    let mut queries = vec![String::new()];
    for q in route.queries {
        match *q {
            "boards" => queries.extend(["?boards=1", "?boards=2", "?boards=1-2"].map(String::from)),
            "v" => queries.push("?v=0".into()),
            "lang" => queries.extend(["?lang=ru", "?lang=fa"].map(String::from)),
            other => panic!(
                "{}: query parameter {other} is not crawled: teach the crawl its values",
                route.path
            ),
        }
    }
    paths
        .iter()
        .flat_map(|p| {
            queries
                .iter()
                .map(move |q| format!("{}{p}{q}", base.trim_end_matches('/')))
        })
        .collect()
}

/// Crawls every public route of the relay at `base`; each answer, by URL.
async fn crawl(
    client: &reqwest::Client,
    base: &str,
    boards: &[(u32, String)],
    games: &[i64],
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for route in route_table() {
        if !matches!(route.access, Access::Public | Access::PublicOrArbiter)
            || route.method != "GET"
        {
            continue;
        }
        for url in urls(base, &route, boards, games) {
            let body = if route.path == "/api/events" {
                events(client, &url, 1_500).await
            } else {
                let (status, body) = fetch(client, &url, false).await;
                assert_eq!(status, StatusCode::OK, "{url}: {body}");
                body
            };
            out.push((url, body));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_crawling_every_public_route_finds_nothing_of_the_arbiters() {
    let mut bench = Bench::with_round(Token::new(TOKEN), Some(1)).await;
    let url = bench.url.clone();
    let client = reqwest::Client::new();
    let games = [
        (corpus_game("tatamast22", 5), 41, 0.15),
        (corpus_game("tatamast22", 9), 42, 0.15),
    ];
    bench.start(&games, 0.05).await;

    // Play until the round has alerts with irregularities to rule on, on both boards' games.
    let start = Instant::now();
    let alerts = loop {
        let (_, body) = fetch(&client, &format!("{url}api/admin/alerts"), true).await;
        let v: Value = serde_json::from_str(&body).unwrap_or_default();
        let alerts = v["alerts"].as_array().cloned().unwrap_or_default();
        if alerts.iter().filter(|a| a["irregularity"].is_u64()).count() >= 2 {
            break alerts;
        }
        assert!(start.elapsed() < Duration::from_secs(150), "{alerts:#?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    // The arbiter's decisions: a ruling with a note, and a note, each by name.
    let ruled = alerts.iter().find(|a| a["irregularity"].is_u64()).unwrap();
    let game = ruled["game"].as_i64().unwrap();
    for (action, body) in [
        (
            "rule",
            json!({ "irregularity": ruled["irregularity"], "ruling": { "kind": "no_action" },
                    "note": NOTE, "author": ARBITER }),
        ),
        ("note", json!({ "text": NOTE, "author": ARBITER })),
    ] {
        let resp = client
            .post(format!("{url}api/admin/games/{game}/{action}"))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{action}");
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    // `serve --db` on the live database, beside the recording daemon.
    let served = Served::start(&bench.db, 0).await;

    // What the arbiter reads: every word looked for is there.
    let (_, admin) = fetch(&client, &format!("{url}api/admin/alerts"), true).await;
    let (_, arbiter_boards) = fetch(&client, &format!("{url}api/boards"), true).await;
    let (_, arbiter_pgn) = fetch(&client, &format!("{url}games/{game}.pgn"), true).await;
    let alerts: Vec<Value> = serde_json::from_str::<Value>(&admin).unwrap()["alerts"]
        .as_array()
        .unwrap()
        .clone();
    let mut secrets: Vec<String> = alerts
        .iter()
        .flat_map(|a| {
            [
                a["kind"].as_str().unwrap_or_default().to_owned(),
                a["detail"].as_str().unwrap_or_default().to_owned(),
            ]
        })
        .filter(|w| w.len() > 3)
        .collect();
    secrets.sort();
    secrets.dedup();
    assert!(admin.contains(&secrets[0]));
    assert!(arbiter_boards.contains("\"recording\""), "{arbiter_boards}");
    // PGN wraps its lines wherever the clocks put the words: read it as one line.
    let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat(&arbiter_pgn).contains(NOTE) && flat(&arbiter_pgn).contains(ARBITER),
        "{arbiter_pgn}"
    );
    secrets.extend(
        [
            NOTE,
            ARBITER,
            "\"recording\"",
            "store_error",
            "lost_reason",
            "\"irregularity\"",
            "event: irregularity",
            "event: resolved",
            "penalty",
        ]
        .map(String::from),
    );

    let board_list: Vec<(u32, String)> =
        serde_json::from_str::<Value>(&arbiter_boards).unwrap()["boards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["number"].as_u64().unwrap() as u32,
                    b["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
    let game_ids: Vec<i64> = bench
        .store()
        .games()
        .unwrap()
        .iter()
        .map(|g| g.id.0)
        .collect();
    assert_eq!(board_list.len(), 2);
    for base in [&url, &served.url] {
        let answers = crawl(&client, base, &board_list, &game_ids).await;
        println!("{base}: {} public answers crawled", answers.len());
        assert!(answers.len() >= 20, "{answers:?}");
        for (at, body) in &answers {
            let body = flat(body);
            for s in &secrets {
                assert!(!body.contains(&flat(s)), "{at} shows {s:?}");
            }
        }
        // The games are there for spectators, move by move.
        let round = answers
            .iter()
            .find(|(u, _)| u.ends_with("/round.pgn"))
            .map(|(_, b)| b.clone())
            .unwrap();
        assert!(round.contains("1. "), "{round}");
    }
    drop(served);
    bench.stop().await;
}
