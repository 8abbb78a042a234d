//! The halls' faults reach the arbiter (issue 32, item 2): with a real `nats-server`, an event
//! node following halls A, B and D, and real hall processes, each fault a venue meets is an
//! alert on the event node's console and in its admin API, with what to do, and is gone when
//! it is over: a board number two halls both use, a hall killed (silent), a hall that
//! publishes but is not followed, two databases publishing as one hall (stalled), and a hall
//! whose records the broker stops taking (its outbox grows). Spectators see none of it.
//!
//! Run with `cargo test --release --test suite hall_faults:: -- --nocapture` (it prints how
//! long each alert took).

use std::time::{Duration, Instant};

use async_nats::jetstream::{self, stream};
use serde_json::Value;

use crate::{
    cluster_common::{EventNode, Hall, Nats},
    fleet_common,
};

const TOKEN: &str = "5c0e9a17d24b86f3a1e07c5d9b2f4e68";

/// How long a hall may be unheard, as the event node is configured here.
const SILENT_AFTER: Duration = Duration::from_secs(6);

/// The event node's alerts about the event, as the arbiter's API gives them.
async fn event_alerts(http: &reqwest::Client, port: u16) -> Vec<Value> {
    let Ok(r) = http
        .get(format!("http://127.0.0.1:{port}/api/admin/alerts"))
        .bearer_auth(TOKEN)
        .send()
        .await
    else {
        return Vec::new();
    };
    let body: Value = r.json().await.unwrap_or_default();
    body["event"].as_array().cloned().unwrap_or_default()
}

/// Waits (at most `within`) until the event node has an alert with `id`, or (`open` false)
/// until it has none; the alert, and how long it took.
async fn wait_alert(
    http: &reqwest::Client,
    event: &EventNode,
    id: &str,
    open: bool,
    within: Duration,
) -> (Option<Value>, Duration) {
    let start = Instant::now();
    loop {
        let alerts = event_alerts(http, event.http).await;
        let found = alerts.into_iter().find(|a| a["id"] == id);
        if found.is_some() == open {
            return (found, start.elapsed());
        }
        assert!(
            start.elapsed() < within,
            "alert {id} {} after {within:?}:\n{}",
            if open { "not shown" } else { "still shown" },
            event.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_of_a_hall_is_an_alert_on_the_event_nodes_console_until_it_is_over() {
    let dir = tempfile::tempdir().unwrap();
    let nats = Nats::start(dir.path());
    let token_file = dir.path().join("admin.token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    // Hall D's stream takes 3 records and refuses the rest, as a broker out of its limits.
    let client = async_nats::connect(nats.url()).await.unwrap();
    jetstream::new(client)
        .create_stream(stream::Config {
            name: "BOARDSCRIBE_D".into(),
            subjects: vec!["boardscribe.records.D".into()],
            max_messages: 3,
            discard: stream::DiscardPolicy::New,
            ..Default::default()
        })
        .await
        .unwrap();
    let boards = |n: usize| fleet_common::hall(n, 0, 0.1, 45_000);
    // A and B both number their board 1; D has five boards (ten records, the stream takes 3).
    let mut a = Hall::new(dir.path(), "A", &nats.url(), boards(1), 1, "");
    let mut b = Hall::new(dir.path(), "B", &nats.url(), boards(1), 1, "");
    let mut d = Hall::new(dir.path(), "D", &nats.url(), boards(5), 201, "");
    let mut event = EventNode::new(
        dir.path(),
        &nats.url(),
        &["A", "B", "D"],
        &format!(
            "hall_silent_after = \"{}s\"\n\n[admin]\ntoken_file = \"{}\"\n",
            SILENT_AFTER.as_secs(),
            token_file.display()
        ),
    );
    event.start();
    a.start();
    b.start();
    d.start();
    let http = reqwest::Client::new();

    // The board number both halls use: one board keeps it, the other is named with its holder.
    let taken = ["board-B/B1-number", "board-A/A1-number"];
    let start = Instant::now();
    let number = loop {
        let alerts = event_alerts(&http, event.http).await;
        if let Some(a) = alerts
            .iter()
            .find(|a| taken.contains(&a["id"].as_str().unwrap_or("")))
        {
            break a.clone();
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{}", event.log());
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    println!("board number taken: alert after {:?}", start.elapsed());
    assert_eq!(number["kind"], "board_number_taken");
    let detail = number["detail"].as_str().unwrap();
    assert!(
        detail.contains("A/A1") && detail.contains("B/B1") && detail.contains("number 1"),
        "{detail}"
    );
    assert!(number["advice"].as_str().unwrap().contains("renumber"));

    // D's outbox grows once the broker refuses its records for longer than 10 s.
    let (outbox, waited) = wait_alert(
        &http,
        &event,
        "hall-D-outbox",
        true,
        Duration::from_secs(40),
    )
    .await;
    println!("outbox growing: alert after {waited:?} more");
    let outbox = outbox.unwrap();
    assert_eq!(outbox["kind"], "hall_outbox_growing");
    let detail = outbox["detail"].as_str().unwrap();
    assert!(
        detail.contains("records the NATS servers have not taken"),
        "{detail}"
    );
    assert!(
        detail.to_lowercase().contains("maximum messages"),
        "{detail}"
    );

    // While they run and are heard, no hall is silent.
    let alerts = event_alerts(&http, event.http).await;
    assert!(
        !alerts.iter().any(|a| a["kind"] == "hall_silent"),
        "{alerts:#?}"
    );

    // Hall B killed: silent once it has not been heard for SILENT_AFTER.
    b.kill();
    let (silent, waited) = wait_alert(
        &http,
        &event,
        "hall-B-silent",
        true,
        Duration::from_secs(20),
    )
    .await;
    println!("hall killed: silent alert after {waited:?} (allowed {SILENT_AFTER:?})");
    assert!(
        waited >= SILENT_AFTER - Duration::from_secs(3),
        "{waited:?}"
    );
    let silent = silent.unwrap();
    assert!(
        silent["detail"]
            .as_str()
            .unwrap()
            .contains("has not been heard since")
    );
    assert!(
        silent["advice"]
            .as_str()
            .unwrap()
            .contains("keeps recording")
    );

    // The console shows the faults as alerts, with what to do; spectators see none of it.
    let console = http
        .get(format!(
            "http://127.0.0.1:{}/arbiter?fragment=1",
            event.http
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for id in ["hall-B-silent", "hall-D-outbox"] {
        assert!(
            console.contains(&format!(r#"data-alert="{id}""#)),
            "{id} not on the console:\n{console}"
        );
    }
    assert!(console.contains("What to do:"), "{console}");
    // In the console's language: Russian words, the command and the time as they are; the API
    // keeps its English and gives the fault typed beside it.
    let russian = http
        .get(format!(
            "http://127.0.0.1:{}/arbiter?fragment=1&lang=ru",
            event.http
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for words in [
        "зал B не выходит на связь с ",
        "Что делать:",
        "`systemctl status boardscribe` на нём",
    ] {
        assert!(russian.contains(words), "{words:?} not in:\n{russian}");
    }
    assert!(!russian.contains("has not been heard"), "{russian}");
    assert_eq!(silent["fault"]["kind"], "hall_silent");
    assert_eq!(silent["fault"]["hall"], "B");
    assert_eq!(silent["fault"]["heard"], true);
    for path in ["/", "/api/boards", "/round.pgn"] {
        let public = http
            .get(format!("http://127.0.0.1:{}{path}", event.http))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for word in [
            "hall_silent",
            "hall-B-silent",
            "not been heard",
            "What to do",
        ] {
            assert!(!public.contains(word), "{path} shows {word:?}");
        }
    }

    // B back: its silence is over.
    b.start();
    let (_, waited) = wait_alert(
        &http,
        &event,
        "hall-B-silent",
        false,
        Duration::from_secs(20),
    )
    .await;
    println!("hall back: silent alert over after {waited:?}");

    // A hall the event node does not follow.
    let mut c = Hall::new(dir.path(), "C", &nats.url(), boards(1), 301, "");
    c.start();
    let (stranger, _) = wait_alert(
        &http,
        &event,
        "hall-C-not-followed",
        true,
        Duration::from_secs(20),
    )
    .await;
    assert!(
        stranger.unwrap()["advice"]
            .as_str()
            .unwrap()
            .contains("[cluster] halls")
    );

    // A second database publishing as hall A: stalled, both origins named.
    let second = dir.path().join("second");
    std::fs::create_dir_all(&second).unwrap();
    let mut a2 = Hall::new(&second, "A", &nats.url(), boards(1), 401, "");
    a2.start();
    let (stalled, waited) = wait_alert(
        &http,
        &event,
        "hall-A-stalled",
        true,
        Duration::from_secs(20),
    )
    .await;
    println!("two databases as hall A: stalled alert after {waited:?}");
    let detail = stalled.unwrap()["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("databases publish as hall A"), "{detail}");
    a2.kill();
    let (_, waited) = wait_alert(
        &http,
        &event,
        "hall-A-stalled",
        false,
        SILENT_AFTER + Duration::from_secs(10),
    )
    .await;
    println!("second database stopped: stalled alert over after {waited:?}");

    // The event node's log warns of each fault once, as it opens, and says when it is over.
    let log = event.log();
    let said = |level: &str, text: &str| {
        log.lines()
            .filter(|l| l.contains(level) && l.contains(text))
            .count()
    };
    assert_eq!(said("WARN", "hall B has not been heard since"), 1, "{log}");
    assert_eq!(
        said("INFO", "over: hall B has not been heard since"),
        1,
        "{log}"
    );
    for h in [&mut a, &mut b, &mut c, &mut d] {
        h.kill();
    }
    event.terminate();
}
