//! One event across several halls (issue 18): hall processes (`boardscribe run` with
//! `[cluster] hall`) over emulated boards publish their records through a real `nats-server`
//! with JetStream, and the event node (`boardscribe event`) holds each hall's record exactly
//! (every game, move by move with clocks, retractions, events and board links; each record once,
//! in order), through the faults a venue sees: the broker stopped for 30 s, a hall killed -9,
//! the event node killed mid-round, a hall cut off from the broker for a minute while it records,
//! a node of a three-node cluster killed.
//!
//! Run with `cargo test --release --test suite cluster:: -- --nocapture` (it prints the figures).

use std::time::{Duration, Instant};

use async_nats::jetstream::consumer::{AckPolicy, DeliverPolicy, pull};
use boardscribe::{cluster::commands, emulator::PtyFleet};

use crate::{
    cluster_common::{
        Cut, EventNode, Hall, Nats, Watch, assert_event_holds_halls, latencies, play,
    },
    fleet_common,
};

/// Ten times human speed, as the fleet test.
const SPEED: f64 = 0.1;

/// Moves hall `h` has printed (each once durable).
fn printed(h: &Hall) -> usize {
    h.daemon.as_ref().unwrap().printed.lock().unwrap().len()
}

/// Stops the halls (so that their records are whole: a board's link lost at the end comes
/// too), waits until the event node holds all of it (at most `within_s` seconds), and checks it.
fn stop_and_compare(
    event: &mut EventNode,
    halls: &mut [&mut Hall],
    within_s: u64,
) -> crate::cluster_common::Compared {
    for h in halls.iter_mut() {
        h.terminate();
    }
    let halls: Vec<&Hall> = halls.iter().map(|h| &**h).collect();
    event.wait_caught_up(&halls, Duration::from_secs(within_s));
    assert_event_holds_halls(event, &halls)
}

fn longest(halls: &[&Hall]) -> u64 {
    halls
        .iter()
        .flat_map(|h| h.boards.iter().map(|b| b.length_ms()))
        .max()
        .unwrap()
}

/// Waits for every board's script, then for every hall's last printed move.
async fn finish(mut fleet: PtyFleet, halls: &[&Hall]) {
    let within = Duration::from_millis(longest(halls) + 120_000);
    tokio::time::timeout(within, fleet.all_done(|_, _| {}))
        .await
        .expect("the boards did not finish in time");
    // What the boards sent is recorded: settle windows, the last press.
    tokio::time::sleep(Duration::from_secs(5)).await;
}

/// Quantiles of sorted `v`: p50, p99, max.
fn quantiles(v: &[f64]) -> (f64, f64, f64) {
    let q = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    (q(0.5), q(0.99), *v.last().unwrap())
}

fn two_halls(dir: &std::path::Path, url: &str, per_hall: usize, max_ms: u64) -> (Hall, Hall) {
    let boards = fleet_common::hall(per_hall * 2, 0, SPEED, max_ms);
    let (a, b) = boards.split_at(per_hall);
    (
        Hall::new(dir, "A", url, a.to_vec(), 1, ""),
        Hall::new(dir, "B", url, b.to_vec(), 101, ""),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_halls_reach_the_event_node_exactly() {
    let dir = tempfile::tempdir().unwrap();
    // A server that takes only its users: each process logs in with the URL's user and password.
    let nats = Nats::start_with(
        dir.path(),
        "authorization {\n  users: [\n    { user: hall, password: hall-secret }\n    \
         { user: event, password: event-secret }\n  ]\n}\n",
    );
    let (mut a, mut b) = two_halls(dir.path(), &nats.url_as("hall", "hall-secret"), 3, 40_000);
    let folder = dir.path().join("broadcast");
    let mut event = EventNode::new(
        dir.path(),
        &nats.url_as("event", "event-secret"),
        &["A", "B"],
        &format!(
            "\n[tournament]\nevent = \"Two Halls Open\"\nsite = \"Here\"\nround = 1\n\n\
             [relay.folder]\ndir = \"{}\"\n",
            folder.display()
        ),
    );
    event.start();
    a.start();
    b.start();
    let fleet = play(&[&a, &b]).await;
    finish(fleet, &[&a, &b]).await;
    tokio::task::block_in_place(|| {
        event.wait_caught_up(&[&a, &b], Duration::from_secs(30));
        assert_eq!(a.metric("boardscribe_cluster_outbox_depth"), Some(0.0));
        // Each process is connected as its user.
        let connz = fleet_common::http_get(nats.monitor, "/connz?auth=true").unwrap();
        for user in ["hall", "event"] {
            assert!(
                connz.contains(&format!("\"authorized_user\": \"{user}\"")),
                "{connz}"
            );
        }
        let seen = stop_and_compare(&mut event, &mut [&mut a, &mut b], 30);
        assert_eq!(seen.games, 6);
        let lat = latencies(&event.db);
        let (p50, p99, max) = quantiles(&lat);
        println!(
            "two halls, 6 boards: {} games, {} move rows, {} records; hall commit → event \
             commit p50 {p50} ms, p99 {p99} ms, max {max} ms",
            seen.games, seen.moves, seen.records
        );
        // The event node's round PGN holds both halls' boards.
        let pgn = fleet_common::http_get(event.http, "/round.pgn").expect("/round.pgn");
        for board in a.boards.iter().chain(&b.boards) {
            assert!(
                pgn.contains(&format!("[Board \"{}\"]", board.number)),
                "board {} missing from the event's round PGN",
                board.number
            );
        }
        // A slice of the round: hall B's boards only.
        let slice = fleet_common::http_get(event.http, "/round.pgn?boards=101-199").unwrap();
        assert_eq!(
            slice.matches("[Board \"").count(),
            b.boards.len(),
            "{slice}"
        );
        // The event node's LiveChess folder holds every board of both halls.
        for board in a.boards.iter().chain(&b.boards) {
            let file = folder.join(format!("round-1/game-{}.pgn", board.number));
            assert!(file.exists(), "{} missing", file.display());
        }
        let metrics = fleet_common::http_get(event.http, "/metrics").unwrap();
        for h in ["A", "B"] {
            assert_eq!(
                fleet_common::metric(
                    &metrics,
                    &format!("boardscribe_cluster_lag_records{{hall=\"{h}\"}}")
                ),
                Some(0.0),
                "{metrics}"
            );
        }
        event.terminate();
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_broker_stopped_for_30_s_loses_and_repeats_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut nats = Nats::start(dir.path());
    // Hall A's stream made beforehand with a duplicate window far shorter than the outage: the
    // restarted broker remembers no message id of it, and the hall must go on all the same.
    {
        let client = async_nats::connect(nats.url()).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let mut config = boardscribe::cluster::stream_config("A", 1);
        config.duplicate_window = Duration::from_secs(2);
        js.create_stream(config).await.unwrap();
    }
    let (mut a, mut b) = two_halls(dir.path(), &nats.url(), 2, 60_000);
    let mut event = EventNode::new(dir.path(), &nats.url(), &["A", "B"], "");
    event.start();
    a.start();
    b.start();
    let depth = Watch::start(
        a.http,
        "boardscribe_cluster_outbox_depth{hall=\"A\"}".to_owned(),
    );
    let fleet = play(&[&a, &b]).await;
    tokio::time::sleep(Duration::from_secs(8)).await;
    let printed_before = printed(&a);
    tokio::task::block_in_place(|| nats.stop());
    tokio::time::sleep(Duration::from_secs(30)).await;
    let printed_during = printed(&a);
    assert!(
        printed_during > printed_before,
        "hall A recorded nothing while the broker was down"
    );
    let waiting = depth.max.load(std::sync::atomic::Ordering::Relaxed);
    assert!(waiting > 0, "hall A's outbox never held a record");
    tokio::task::block_in_place(|| nats.restart());
    finish(fleet, &[&a, &b]).await;
    tokio::task::block_in_place(|| {
        let seen = stop_and_compare(&mut event, &mut [&mut a, &mut b], 60);
        println!(
            "broker stopped 30 s: {} games, {} move rows, {} records; hall A's outbox held up \
             to {waiting} records",
            seen.games, seen.moves, seen.records
        );
        event.terminate();
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hall_killed_and_the_event_node_killed_mid_round_lose_and_repeat_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let nats = Nats::start(dir.path());
    let (mut a, mut b) = two_halls(dir.path(), &nats.url(), 2, 50_000);
    let mut event = EventNode::new(dir.path(), &nats.url(), &["A", "B"], "");
    event.start();
    a.start();
    b.start();
    let fleet = play(&[&a, &b]).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    tokio::task::block_in_place(|| a.kill());
    tokio::time::sleep(Duration::from_secs(3)).await;
    a.start();
    tokio::time::sleep(Duration::from_secs(7)).await;
    tokio::task::block_in_place(|| event.kill());
    tokio::time::sleep(Duration::from_secs(3)).await;
    event.start();
    finish(fleet, &[&a, &b]).await;
    tokio::task::block_in_place(|| {
        let seen = stop_and_compare(&mut event, &mut [&mut a, &mut b], 60);
        println!(
            "hall A and the event node killed -9: {} games, {} move rows, {} records",
            seen.games, seen.moves, seen.records
        );
        event.terminate();
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hall_cut_off_for_a_minute_keeps_recording_and_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let nats = Nats::start(dir.path());
    let cut = Cut::start(nats.port);
    let boards = fleet_common::hall(4, 0, SPEED, 80_000);
    let (ba, bb) = boards.split_at(2);
    let mut a = Hall::new(dir.path(), "A", &cut.url(), ba.to_vec(), 1, "");
    let mut b = Hall::new(dir.path(), "B", &nats.url(), bb.to_vec(), 101, "");
    let mut event = EventNode::new(dir.path(), &nats.url(), &["A", "B"], "");
    event.start();
    a.start();
    b.start();
    let depth = Watch::start(
        a.http,
        "boardscribe_cluster_outbox_depth{hall=\"A\"}".to_owned(),
    );
    let fleet = play(&[&a, &b]).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let before = event.seq("A");
    cut.cut();
    let cut_at = Instant::now();
    let printed_before = printed(&a);
    tokio::time::sleep(Duration::from_secs(60)).await;
    let printed_during = printed(&a);
    let reached = event.seq("A");
    cut.restore();
    assert!(
        printed_during > printed_before + 10,
        "hall A recorded {} moves in the minute it was cut off",
        printed_during - printed_before
    );
    assert!(
        reached <= before + 1,
        "records of hall A reached the event node while it was cut off ({before} → {reached})"
    );
    let waiting = depth.max.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        waiting > 10,
        "hall A's outbox held at most {waiting} records"
    );
    let caught_up = Instant::now();
    tokio::task::block_in_place(|| event.wait_caught_up(&[&a], Duration::from_secs(120)));
    let catch_up = caught_up.elapsed();
    finish(fleet, &[&a, &b]).await;
    tokio::task::block_in_place(|| {
        let seen = stop_and_compare(&mut event, &mut [&mut a, &mut b], 60);
        println!(
            "hall A cut off {:?}: {} moves recorded meanwhile, its outbox held up to {waiting} \
             records, caught up {catch_up:?} after the link came back; {} games, {} move rows, \
             {} records",
            caught_up - cut_at,
            printed_during - printed_before,
            seen.games,
            seen.moves,
            seen.records
        );
        event.terminate();
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_node_cluster_loses_a_node_mid_round_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let mut nodes = tokio::task::block_in_place(|| Nats::cluster(dir.path()));
    let urls: Vec<String> = nodes.iter().map(Nats::url).collect();
    let url = urls.join(",");
    let boards = fleet_common::hall(4, 0, SPEED, 45_000);
    let (ba, bb) = boards.split_at(2);
    let mut a = Hall::new(dir.path(), "A", &url, ba.to_vec(), 1, "replicas = 3\n");
    let mut b = Hall::new(dir.path(), "B", &url, bb.to_vec(), 101, "replicas = 3\n");
    let mut event = EventNode::new(dir.path(), &url, &["A", "B"], "replicas = 3\n");
    event.start();
    a.start();
    b.start();
    let fleet = play(&[&a, &b]).await;
    tokio::time::sleep(Duration::from_secs(12)).await;
    // Both halls' records reaching the event node first (a 3-node cluster elects its streams'
    // leaders slowly on a loaded machine), while the games still have half their time to run.
    let waited = Instant::now();
    let mut before = (event.seq("A"), event.seq("B"));
    while (before.0 == 0 || before.1 == 0) && waited.elapsed() < Duration::from_secs(15) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        before = (event.seq("A"), event.seq("B"));
    }
    // The node hall A is connected to dies: its connection breaks mid-round.
    let victim = tokio::task::block_in_place(|| {
        let i = nodes
            .iter()
            .position(|n| n.serves("boardscribe hall A"))
            .expect("hall A is connected to a node");
        nodes[i].kill();
        nodes[i].name.clone()
    });
    finish(fleet, &[&a, &b]).await;
    tokio::task::block_in_place(|| {
        let seen = stop_and_compare(&mut event, &mut [&mut a, &mut b], 90);
        assert!(
            before.0 > 0 && before.1 > 0,
            "nothing applied before the node died"
        );
        println!(
            "three-node cluster, node {victim} (hall A's) killed after {before:?} records: {} \
             games, {} move rows, {} records",
            seen.games, seen.moves, seen.records
        );
        event.terminate();
        drop(nodes);
    });
}

/// The event node's game on board `board` (`hall/name`), its newest.
fn event_game(event: &EventNode, board: &str) -> i64 {
    crate::cluster_common::read_only(&event.db)
        .query_row(
            "SELECT max(g.id) FROM games g JOIN boards b ON b.id = g.board_id WHERE b.name = ?1",
            [board],
            |r| r.get(0),
        )
        .unwrap()
}

/// A decision at hall `db` on its game of board `board`, by `author`: (action, note).
fn hall_decisions(db: &std::path::Path, author: &str) -> Vec<(String, Option<String>)> {
    crate::cluster_common::read_only(db)
        .prepare(
            "SELECT json_extract(detail, '$.action'), json_extract(detail, '$.note') FROM events \
             WHERE kind = 'decision' AND json_extract(detail, '$.author') = ?1 ORDER BY id",
        )
        .unwrap()
        .query_map([author], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decisions_at_the_event_node_are_taken_by_the_owning_hall_and_come_back() {
    let dir = tempfile::tempdir().unwrap();
    let nats = Nats::start(dir.path());
    let admin_token = ADMIN_TOKEN;
    let (mut a, mut event) = hall_and_admin(dir.path(), &nats, 3);
    let fleet = play(&[&a]).await;
    tokio::time::sleep(Duration::from_secs(8)).await;
    let http = reqwest::Client::new();
    let post = |path: String, body: serde_json::Value| {
        let http = http.clone();
        let url = format!("http://127.0.0.1:{}{path}", event.http);
        async move {
            let r = http
                .post(url)
                .bearer_auth(admin_token)
                .json(&body)
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            (status, r.json::<serde_json::Value>().await.unwrap())
        }
    };
    // A note on board A1's game: the hall records it, and the answer is the event node's own.
    let g1 = tokio::task::block_in_place(|| event_game(&event, "A/A1"));
    let (status, body) = post(
        format!("/api/admin/games/{g1}/note"),
        serde_json::json!({ "text": "clock checked at the board", "author": "Chief" }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["game"], g1, "{body}");
    // A result on board A2's game, mid-game: the hall's board takes it.
    let g2 = tokio::task::block_in_place(|| event_game(&event, "A/A2"));
    let (status, body) = post(
        format!("/api/admin/games/{g2}/result"),
        serde_json::json!({ "result": "1/2-1/2", "reason": "agreement", "author": "Chief" }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // From the event node's console, as the arbiter's browser sends it: a note on board 3.
    let g3 = tokio::task::block_in_place(|| event_game(&event, "A/A3"));
    let console = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let origin = format!("http://127.0.0.1:{}", event.http);
    let login = console
        .post(format!("{origin}/arbiter/login"))
        .form(&[("token", admin_token), ("name", "Console Arbiter")])
        .send()
        .await
        .unwrap();
    assert_eq!(login.status().as_u16(), 303);
    let cookie = login.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let sent = console
        .post(format!("{origin}/arbiter/boards/3/note"))
        .header("cookie", &cookie)
        .header("origin", &origin)
        .form(&[
            ("game", g3.to_string().as_str()),
            ("text", "seen from the console"),
        ])
        .send()
        .await
        .unwrap();
    let back = sent.headers()["location"].to_str().unwrap().to_owned();
    assert!(back.starts_with("/arbiter/boards/3?flash="), "{back}");
    // The page it leads to says what was done (sent to the hall, not refused).
    let page = console
        .get(format!("{origin}{back}"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(r#"<p class="flash" role="status" dir="auto">"#),
        "{page}"
    );
    // A refusal comes back as the hall's: a note must not be empty.
    let (status, body) = post(
        format!("/api/admin/games/{g1}/note"),
        serde_json::json!({ "text": "", "author": "Chief" }),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    // Round 2 starts at the event node: the hall starts it too.
    let (status, body) = post("/api/admin/rounds/2/start".into(), serde_json::json!({})).await;
    assert_eq!(status, 200, "{body}");
    // The hall is down: the decision waits in its command stream.
    tokio::task::block_in_place(|| a.terminate());
    let (status, body) = post(
        format!("/api/admin/games/{g1}/note"),
        serde_json::json!({ "text": "taken while the hall was down", "author": "Deputy" }),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    a.start();
    finish(fleet, &[&a]).await;
    tokio::task::block_in_place(|| {
        a.terminate();
        event.wait_caught_up(&[&a], Duration::from_secs(30));
        let seen = assert_event_holds_halls(&event, &[&a]);
        assert_eq!(
            hall_decisions(&a.db, "Chief"),
            [
                (
                    "note".to_owned(),
                    Some("clock checked at the board".to_owned())
                ),
                ("set_result".to_owned(), None),
            ]
        );
        assert_eq!(
            hall_decisions(&a.db, "Console Arbiter"),
            [("note".to_owned(), Some("seen from the console".to_owned()))]
        );
        assert_eq!(
            hall_decisions(&a.db, "Deputy"),
            [(
                "note".to_owned(),
                Some("taken while the hall was down".to_owned())
            )]
        );
        let round: i64 = crate::cluster_common::read_only(&a.db)
            .query_row("SELECT round FROM tournament", [], |r| r.get(0))
            .unwrap();
        assert_eq!(round, 2, "the hall's current round; its logs:\n{}", a.log());
        // The event node's exports show the hall's decisions.
        let pgn = fleet_common::http_get(event.http, &format!("/games/{g2}.pgn")).unwrap();
        assert!(pgn.contains("[Result \"1/2-1/2\"]"), "{pgn}");
        println!(
            "decisions through the hall: {} games, {} move rows, {} records",
            seen.games, seen.moves, seen.records
        );
        event.terminate();
    });
}

/// The hall's current round (`None`: no round started yet).
fn hall_round(db: &std::path::Path) -> Option<i64> {
    crate::cluster_common::read_only(db)
        .query_row("SELECT max(round) FROM tournament", [], |r| r.get(0))
        .unwrap()
}

/// A hall killed -9 while the broker had handed it the event node's commands (a round start, then
/// a note: delivered, neither taken nor acknowledged) takes both soon after it is back, not after
/// the broker's minute of waiting for an acknowledgement that never comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_a_hall_held_when_it_was_killed_are_taken_soon_after_it_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let nats = Nats::start(dir.path());
    let (mut a, mut event) = hall_and_admin(dir.path(), &nats, 1);
    let fleet = play(&[&a]).await;
    tokio::time::sleep(Duration::from_secs(8)).await;
    let g1 = tokio::task::block_in_place(|| event_game(&event, "A/A1"));
    let post = |path: String, body: serde_json::Value| admin_post(&event, path, body);
    // The hall frozen: the broker hands it the commands, which it cannot take.
    let pid = a.daemon.as_ref().unwrap().pid().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-STOP", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(
        post("/api/admin/rounds/2/start".into(), serde_json::json!({})).await,
        200
    );
    let note = serde_json::json!({ "text": "taken after the hall was killed", "author": "Chief" });
    assert_eq!(
        post(format!("/api/admin/games/{g1}/note"), note).await,
        202,
        "a frozen hall does not answer: the decision is pending"
    );
    // Killed holding them, then back.
    tokio::task::block_in_place(|| a.kill());
    a.start();
    let back = Instant::now();
    wait_taken(&a, "taken after the hall was killed", back).await;
    println!(
        "commands held by a killed hall taken {:.1} s after it was back",
        back.elapsed().as_secs_f64()
    );
    finish(fleet, &[&a]).await;
    end_taken_once(&mut a, &mut event);
}

/// A hall whose database another process holds locked past the store's patience (a backup, an
/// `sqlite3` shell left in a transaction) when the event node's commands come: each is taken
/// again until the hall can write it, in order, once; none is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_a_hall_could_not_write_are_taken_again_once_it_can() {
    let dir = tempfile::tempdir().unwrap();
    let nats = Nats::start(dir.path());
    // The hall's consumer as an earlier daemon made it (a minute's wait for an acknowledgement,
    // any number held): the hall brings it to its own settings.
    let js = async_nats::jetstream::new(async_nats::connect(nats.url()).await.unwrap());
    let stream = commands::command_stream(&js, "A", 1).await.unwrap();
    let durable = "boardscribe-hall-A";
    stream
        .create_consumer(pull::Config {
            durable_name: Some(durable.to_owned()),
            deliver_policy: DeliverPolicy::All,
            ack_policy: AckPolicy::Explicit,
            ack_wait: Duration::from_secs(60),
            ..Default::default()
        })
        .await
        .unwrap();
    let (mut a, mut event) = hall_and_admin(dir.path(), &nats, 1);
    let fleet = play(&[&a]).await;
    tokio::time::sleep(Duration::from_secs(8)).await;
    let g1 = tokio::task::block_in_place(|| event_game(&event, "A/A1"));
    let lock = rusqlite::Connection::open(&a.db).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    assert_eq!(
        admin_post(
            &event,
            "/api/admin/rounds/2/start".into(),
            serde_json::json!({})
        )
        .await,
        200
    );
    let note = serde_json::json!({ "text": "taken once the lock was gone", "author": "Chief" });
    assert_eq!(
        admin_post(&event, format!("/api/admin/games/{g1}/note"), note).await,
        202,
        "a hall that cannot write: the decision is pending"
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(tokio::task::block_in_place(|| hall_round(&a.db)), Some(1));
    lock.execute_batch("ROLLBACK").unwrap();
    drop(lock);
    let free = Instant::now();
    wait_taken(&a, "taken once the lock was gone", free).await;
    println!(
        "commands a hall could not write taken {:.1} s after its database was free",
        free.elapsed().as_secs_f64()
    );
    let mut consumer = stream.get_consumer::<pull::Config>(durable).await.unwrap();
    let config = consumer.info().await.unwrap().config.clone();
    assert_eq!(
        (config.ack_wait, config.max_ack_pending),
        (Duration::from_secs(10), 1),
        "the hall's consumer brought to its settings"
    );
    finish(fleet, &[&a]).await;
    end_taken_once(&mut a, &mut event);
}

/// A hall `A` of `boards` chess boards and an event node with an admin token, both started.
fn hall_and_admin(dir: &std::path::Path, nats: &Nats, boards: usize) -> (Hall, EventNode) {
    let token_file = dir.join("admin.token");
    std::fs::write(&token_file, format!("{ADMIN_TOKEN}\n")).unwrap();
    let boards = fleet_common::hall(boards, 0, SPEED, 45_000);
    let mut a = Hall::new(dir, "A", &nats.url(), boards.to_vec(), 1, "");
    let mut event = EventNode::new(
        dir,
        &nats.url(),
        &["A"],
        &format!("\n[admin]\ntoken_file = \"{}\"\n", token_file.display()),
    );
    event.start();
    a.start();
    (a, event)
}

/// 128 random bits: `config check` and `event` refuse a guessable admin token.
const ADMIN_TOKEN: &str = "4c0e9a7d21b5f36e8a9d0c4b7e215f6a";

/// The status of the admin API's answer to `body` posted to `path` at the event node.
async fn admin_post(event: &EventNode, path: String, body: serde_json::Value) -> u16 {
    reqwest::Client::new()
        .post(format!("http://127.0.0.1:{}{path}", event.http))
        .bearer_auth(ADMIN_TOKEN)
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// Waits (40 s at most from `since`) for hall `a` to be in round 2 with Chief's one note `text`.
async fn wait_taken(a: &Hall, text: &str, since: Instant) {
    let want = [("note".to_owned(), Some(text.to_owned()))];
    let taken = || hall_round(&a.db) == Some(2) && hall_decisions(&a.db, "Chief") == want;
    while !tokio::task::block_in_place(taken) {
        assert!(
            since.elapsed() < Duration::from_secs(40),
            "after 40 s the hall has not taken the commands (round {:?}, notes {:?}); its logs:\n{}",
            hall_round(&a.db),
            hall_decisions(&a.db, "Chief"),
            a.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Stops hall `a` and the event node, which holds the hall's record exactly; round 2 was started
/// once at the hall.
fn end_taken_once(a: &mut Hall, event: &mut EventNode) {
    tokio::task::block_in_place(|| {
        a.terminate();
        event.wait_caught_up(&[&*a], Duration::from_secs(30));
        assert_event_holds_halls(event, &[&*a]);
        let starts: i64 = crate::cluster_common::read_only(&a.db)
            .query_row(
                "SELECT count(*) FROM round_log WHERE round = 2 AND action = 'start'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(starts, 1, "round 2 started once at the hall");
        event.terminate();
    });
}
