//! Issue 34, item 4: the standings over real HTTP. Spectators (`/standings`, `/standings.json`)
//! count only the results the public view already shows, under a one-minute delay; the
//! arbiter's console (`/arbiter/standings`, behind its login) counts every result and offers
//! the event's TRF (`/arbiter/standings.trf`). Two rounds of four players, written into the
//! store with the times the delay is judged by; the tables are worked out by hand.

use std::time::{SystemTime, UNIX_EPOCH};

use boardscribe::{
    export::publish::Publication,
    game::Kind,
    pairings::{Pairing, parse_trf},
    relay::Token,
    sensor::Orientation,
    store::{EventSettings, GameId, ResultReason, RoundInfo, Store, Write},
    tracker::event::TrackerEvent,
};
use reqwest::{StatusCode, header};
use serde_json::Value;

use crate::{
    console_actions::{Console, TOKEN},
    relay_common::{Bench, Outputs},
};

const MINUTE: u64 = 60_000;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Rounds 1 and 2 of Ann, Bob, Cid and Dee. Round 1 (two hours ago): Ann beat Bob, Cid drew
/// Dee. Round 2: Ann won with black against Dee half an hour ago; Bob beat Cid just now, which
/// the one-minute delay still hides from spectators.
fn write_event(db: &std::path::Path) {
    let now = now_ms();
    let mut store = Store::open(db).unwrap();
    let info = |round| RoundInfo {
        event: "Naryn Open".into(),
        site: "Naryn".into(),
        round,
    };
    store
        .open_event(
            Some(&info(1)),
            &EventSettings::default(),
            now - 120 * MINUTE,
        )
        .unwrap();
    let pair = |board, white: &str, black: &str, fide_w: u32, fide_b: u32| Pairing {
        white_fide: Some(fide_w),
        black_fide: Some(fide_b),
        ..Pairing::new(board, white, black)
    };
    store
        .import_pairings(
            1,
            &[pair(1, "Ann", "Bob", 1, 2), pair(2, "Cid", "Dee", 3, 4)],
        )
        .unwrap();
    store
        .import_pairings(
            2,
            &[pair(1, "Dee", "Ann", 4, 1), pair(2, "Bob", "Cid", 2, 3)],
        )
        .unwrap();
    let boards: Vec<_> = (1..=2u32)
        .map(|n| {
            let b = store.board(&format!("table {n}"), Kind::Chess).unwrap();
            store.set_board_number(b, n).unwrap();
            b
        })
        .collect();
    let start = |store: &mut Store, round: u32, board: usize, at_ms: u64| -> GameId {
        store.set_round(&info(round)).unwrap();
        let start = Write::Event {
            board: boards[board],
            event: TrackerEvent::GameStarted {
                at_ms,
                orientation: Orientation::Normal,
                start: None,
            },
        };
        *store.write_batch(&[start]).unwrap().last().unwrap()
    };
    let r1 = [
        start(&mut store, 1, 0, now - 120 * MINUTE),
        start(&mut store, 1, 1, now - 120 * MINUTE),
    ];
    let r2 = [
        start(&mut store, 2, 0, now - 60 * MINUTE),
        start(&mut store, 2, 1, now - 60 * MINUTE),
    ];
    let mut result = |game, result: &str, reason, at_ms| {
        store
            .set_result(game, result, reason, "Chief", None, at_ms)
            .unwrap();
    };
    result(r1[0], "1-0", ResultReason::Resignation, now - 90 * MINUTE);
    result(r1[1], "1/2-1/2", ResultReason::Agreement, now - 90 * MINUTE);
    result(r2[0], "0-1", ResultReason::Resignation, now - 30 * MINUTE);
    result(r2[1], "1-0", ResultReason::Resignation, now);
}

/// (name, rank, points) of each row of `/standings.json`.
fn table(json: &Value) -> Vec<(String, u64, f64)> {
    json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["entrant"]["name"].as_str().unwrap().to_owned(),
                r["rank"].as_u64().unwrap(),
                r["points"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn rows(v: &[(&str, u64, f64)]) -> Vec<(String, u64, f64)> {
    v.iter()
        .map(|(n, r, p)| ((*n).to_owned(), *r, *p))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectators_see_the_delayed_standings_and_the_arbiter_every_result() {
    let outputs = Outputs {
        publication: Publication {
            delay_ms: MINUTE,
            ..Publication::default()
        },
        ..Outputs::default()
    };
    let bench = Bench::with_outputs(Token::new(TOKEN), None, outputs).await;
    write_event(&bench.db);
    let url = bench.url.clone();
    let client = reqwest::Client::new();

    // Spectators: Bob-Cid is not shown yet, so it is pending. Ann 2. Dee and Cid 0.5: Dee's
    // Buchholz Cut-1 is Ann's 2 (Cid's ½ cut), Cid's nothing (Dee's ½ cut, round 2 pending).
    let json: Value = client
        .get(format!("{url}standings.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        table(&json),
        rows(&[
            ("Ann", 1, 2.0),
            ("Dee", 2, 0.5),
            ("Cid", 3, 0.5),
            ("Bob", 4, 0.0)
        ])
    );
    assert_eq!(json["rounds"], 2);
    assert_eq!(json["tiebreaks"][0], "buchholz-cut1");
    assert_eq!(json["rows"][2]["tiebreaks"][0], 0.0, "{json}");
    assert_eq!(json["rows"][1]["tiebreaks"][0], 2.0, "{json}");
    // Bob's round 2 as spectators see it: against Cid (rank 3) with white, not finished.
    assert_eq!(
        json["rows"][3]["rounds"][1],
        serde_json::json!({"opponent_rank": 3, "colour": "white", "result": "pending"})
    );

    // The page, in the browser's language, and in Persian from the switch (right to left).
    let page = client
        .get(format!("{url}standings"))
        .header(header::ACCEPT_LANGUAGE, "ru-RU,ru;q=0.9")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()[header::VARY], "Accept-Language");
    let page = page.text().await.unwrap();
    assert!(page.contains(r#"<html lang="ru" dir="ltr">"#), "{page}");
    assert!(page.contains("Турнирная таблица после тура 2"), "{page}");
    assert!(page.contains("<bdi>Naryn Open</bdi>"), "{page}");
    let page = client
        .get(format!("{url}standings?lang=fa"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains(r#"<html lang="fa" dir="rtl">"#), "{page}");
    assert!(page.contains("جدول رده‌بندی پس از دور 2"), "{page}");
    // Ann's row: rank 1, 2 points, beat Bob (rank 4) with white and Dee (rank 2) with black.
    let ann = &page[page.find("<bdi>Ann</bdi>").unwrap()..];
    let ann = &ann[..ann.find("</tr>").unwrap()];
    assert!(
        ann.contains(r#"<td dir="ltr">4○1</td><td dir="ltr">2●1</td>"#),
        "{ann}"
    );

    // The console: not without a login, neither the page nor the TRF.
    let anonymous = client
        .get(format!("{url}arbiter/standings"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!anonymous.contains("<table"), "{anonymous}");
    let refused = client
        .get(format!("{url}arbiter/standings.trf"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);

    // Logged in: every result. Ann 2, Bob 1, Dee and Cid 0.5 (Dee's Cut-1 2, Cid's Bob's 1).
    let console = Console::login(&url, "Chief").await;
    let html = console.get("arbiter/standings?lang=en").await;
    assert!(html.contains("Standings after round 2"), "{html}");
    assert!(
        html.contains(r#"<a href="/arbiter/standings.trf" download="standings.trf">"#),
        "{html}"
    );
    let order: Vec<usize> = ["Ann", "Bob", "Dee", "Cid"]
        .iter()
        .map(|n| html.find(&format!("<bdi>{n}</bdi>")).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{html}");
    let bob = &html[html.find("<bdi>Bob</bdi>").unwrap()..];
    let bob = &bob[..bob.find("</tr>").unwrap()];
    assert!(bob.contains(r#"<td dir="ltr">1</td>"#), "{bob}");
    assert!(bob.contains(r#"<td dir="ltr">4○1</td>"#), "{bob}");

    let trf = console.get_response("arbiter/standings.trf").await;
    assert_eq!(trf.status(), StatusCode::OK);
    assert!(
        trf.headers()[header::CONTENT_DISPOSITION]
            .to_str()
            .unwrap()
            .starts_with("attachment")
    );
    let trf = trf.text().await.unwrap();
    let store = bench.store();
    for round in 1..=2 {
        let mut back: Vec<(String, String)> = parse_trf(&trf, round)
            .unwrap()
            .into_iter()
            .map(|p| (p.white, p.black))
            .collect();
        let mut paired: Vec<(String, String)> = store
            .pairings(round)
            .unwrap()
            .into_iter()
            .map(|p| (p.white, p.black))
            .collect();
        back.sort();
        paired.sort();
        assert_eq!(back, paired, "round {round}\n{trf}");
    }
    assert!(trf.contains("012 Naryn Open\n"), "{trf}");
    bench.stop().await;
}
