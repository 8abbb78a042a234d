//! A replaced hall database (issue 32, item 6): hall A records a game while the event node
//! follows it through a real `nats-server`; then the hall is cut off from the broker (its moves
//! stay in its outbox) and killed -9, as a PC that dies mid-round. Its old database, published
//! again as hall A2 with `boardscribe cluster republish`, gives the event node every game
//! exactly once with every move: the moves it had are not repeated under A2, the ones it never
//! got are added, the boards keep their names (`A/...`) and numbers. A second run sends nothing;
//! the database under its own name is refused.
//!
//! Run with `cargo test --release --test suite cluster_republish -- --nocapture`.

use std::{
    path::Path,
    process::{Command, Output},
    time::{Duration, Instant},
};

use boardscribe::emulator::PtyFleet;

use crate::{
    cluster_common::{Cut, EventNode, Hall, Nats, game_rows, read_only},
    fleet_common::{self, BIN},
};

/// Ten times human speed, as the cluster tests.
const SPEED: f64 = 0.1;

/// Move rows of every game of `db` on boards `numbers` (0 while the database is not there).
fn moves(db: &Path, numbers: &[u32]) -> usize {
    // The database is there once its process made it whole (its schema's version set).
    let ready = db.exists()
        && crate::cluster_common::read_only(db)
            .query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            .is_ok_and(|v| v == boardscribe::store::schema::MIGRATIONS.len() as i64);
    if !ready {
        return 0;
    }
    game_rows(db, numbers).iter().map(|g| g.moves.len()).sum()
}

/// Polls `what` every 200 ms until it holds, at most `within`.
fn wait_for(within: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < within, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn republish(db: &Path, hall: &str, config: &Path) -> Output {
    Command::new(BIN)
        .args(["cluster", "republish", "--db"])
        .arg(db)
        .args(["--hall", hall, "--config"])
        .arg(config)
        .output()
        .unwrap()
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_halls_database_republished_as_a2_gives_every_game_once_with_every_move() {
    let dir = tempfile::tempdir().unwrap();
    let nats = Nats::start(dir.path());
    let cut = Cut::start(nats.port);
    let boards = fleet_common::hall(2, 0, SPEED, 60_000);
    let mut a = Hall::new(dir.path(), "A", &cut.url(), boards, 1, "");
    let numbers: Vec<u32> = a.boards.iter().map(|b| b.number).collect();
    let mut event = EventNode::new(dir.path(), &nats.url(), &["A", "A2"], "");
    event.start();
    a.start();
    let opts: Vec<_> = a
        .boards
        .iter()
        .map(|b| {
            (
                b.script.clone(),
                fleet_common::pty_options(&a.dir, b, false, 0),
            )
        })
        .collect();
    let fleet = PtyFleet::spawn(opts).await.unwrap();
    tokio::task::block_in_place(|| {
        // The event node follows the hall's first moves; then the link goes (the bytes are held:
        // nothing more reaches the broker) and the hall records on into its outbox.
        wait_for(
            Duration::from_secs(40),
            "the event node's first moves",
            || moves(&event.db, &numbers) >= 4,
        );
        cut.cut();
        std::thread::sleep(Duration::from_millis(500));
        let at_cut = moves(&event.db, &numbers);
        wait_for(
            Duration::from_secs(40),
            "moves recorded while cut off",
            || moves(&a.db, &numbers) >= at_cut + 6,
        );
        // The PC dies.
        a.kill();
    });
    drop(fleet);
    tokio::task::block_in_place(|| {
        let at_hall = game_rows(&a.db, &numbers);
        let hall_moves: usize = at_hall.iter().map(|g| g.moves.len()).sum();
        let before = moves(&event.db, &numbers);
        assert!(
            before < hall_moves,
            "the event node already had every move ({before} of {hall_moves})"
        );
        let outbox: i64 = read_only(&a.db)
            .query_row("SELECT count(*) FROM outbox", [], |r| r.get(0))
            .unwrap();
        assert!(outbox > 0, "the hall's outbox kept nothing");

        // The old database under its own name is refused, before anything is sent.
        let own = republish(&a.db, "A", &event.config);
        assert!(!own.status.success(), "{}", text(&own.stdout));
        assert!(
            text(&own.stderr).contains("hall A's own database"),
            "{}",
            text(&own.stderr)
        );

        // The operator publishes the old database again as hall A2.
        let started = Instant::now();
        let out = republish(&a.db, "A2", &event.config);
        assert!(
            out.status.success(),
            "republish: {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let said = text(&out.stdout);
        println!("{said}");
        assert!(said.contains("as hall A2"), "{said}");
        assert!(said.contains("BOARDSCRIBE_A2"), "{said}");
        assert!(said.contains("every one acknowledged"), "{said}");
        let records: i64 = read_only(&a.db)
            .query_row(
                "SELECT (SELECT count(*) FROM boards) + (SELECT count(*) FROM games) + \
                 (SELECT count(*) FROM events) + (SELECT count(*) FROM moves) + \
                 (SELECT count(*) FROM board_links)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        wait_for(
            Duration::from_secs(30),
            "the event node applying hall A2",
            || event.seq("A2") == records as u64,
        );
        println!(
            "republished {records} records in {:?}: the event node had {before} of {hall_moves} \
             moves",
            started.elapsed()
        );

        // Every game once, with every move (retractions, clocks) and event, as the hall has it.
        let at_event = game_rows(&event.db, &numbers);
        assert_eq!(
            at_hall.len(),
            at_event.len(),
            "games at the hall and the event"
        );
        for (h, e) in at_hall.iter().zip(&at_event) {
            assert_eq!(h.header, e.header);
            assert_eq!(h.moves, e.moves, "{}", h.header);
            assert_eq!(h.events, e.events, "{}", h.header);
        }
        let c = read_only(&event.db);
        let games: i64 = c
            .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
            .unwrap();
        assert_eq!(games as usize, at_hall.len(), "no game twice");
        // The boards keep their names under A and their numbers; none is added under A2.
        let boards: Vec<(String, Option<i64>)> = c
            .prepare("SELECT name, number FROM boards ORDER BY name")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let expected: Vec<(String, Option<i64>)> = a
            .boards
            .iter()
            .map(|b| (format!("A/{}", b.name), Some(i64::from(b.number))))
            .collect();
        assert_eq!(boards, expected);
        drop(c);

        // A second run finds the copy in the stream and sends nothing.
        let again = republish(&a.db, "A2", &event.config);
        assert!(again.status.success(), "{}", text(&again.stderr));
        assert!(
            text(&again.stdout).contains(" 0 sent now"),
            "{}",
            text(&again.stdout)
        );

        // The link comes back: what the dead hall had sent into it reaches hall A's stream
        // late. The copy brought it already: passed over, nothing twice.
        let a_before = event.seq("A");
        cut.restore();
        std::thread::sleep(Duration::from_secs(4));
        let a_after = event.seq("A");
        println!("hall A's stream after the link came back: record {a_before} → {a_after}");
        assert_eq!(event.seq("A2"), records as u64);
        assert_eq!(game_rows(&event.db, &numbers), at_event);
        let log = event.log();
        assert!(
            !log.contains("stop here") && !log.contains("differs"),
            "{log}"
        );
        if a_after > a_before {
            assert!(log.contains("passed over"), "{log}");
        }
        event.terminate();
    });
}
