//! A hall at ten times human speed through one `boardscribe run --config FILE` process: 40 DGT
//! boards and 24 togyz pit boards, each on its own pseudo-terminal behind a symlink, play whole
//! corpus games (those whose script lasts at most 75 s at this speed); eight of them (both
//! kinds) are unplugged mid-move and plugged back; a 65th port sends nothing but random bytes
//! as fast as the daemon reads them, for the whole round. After SIGTERM the database holds every
//! game exactly (every ply in order, the result where the rules end the game), the bad input is
//! logged for the garbage port only, `/metrics` counted it, the daemon read the flood no faster
//! than a board may send (it no longer stores gigabytes of noise), and every other board's moves
//! were durable within the tracker's own windows of their completing frame.
//!
//! Run with `cargo test --release --test suite fleet:: -- --nocapture` (it prints the latencies).
//! `FLEET_NO_GARBAGE=1` leaves the garbage port out, to compare the figures.

use crate::fleet_common;

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use boardscribe::{
    emulator::{PtyEvent, PtyFleet},
    store::Store,
};
use fleet_common::{Daemon, Garbage, Kind};

const CHESS_BOARDS: usize = 40;
const TOGYZ_BOARDS: usize = 24;
/// Ten times human speed.
const SPEED: f64 = 0.1;
/// The longest script played (ms of the body); longer corpus games are left out, not cut.
const MAX_SCRIPT_MS: u64 = 75_000;
/// Unplugged for this long (4 s at human speed: a cable pulled and pushed back).
const UNPLUG_MS: u64 = 400;
/// A move's completing frame to durable: the tracker waits up to `press_wait_ms` (3 s) for a
/// press before recording a settled move, and looks on a 100 ms tick; a store commit and the
/// print add milliseconds. More than this is a board held up by something else.
const MAX_LATENCY_MS: f64 = 4_000.0;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hall_of_64_boards_records_every_game_exactly_through_unplugs_and_a_garbage_port() {
    let with_garbage = std::env::var_os("FLEET_NO_GARBAGE").is_none();
    let hall = fleet_common::hall(CHESS_BOARDS, TOGYZ_BOARDS, SPEED, MAX_SCRIPT_MS);
    // Every eighth board from the fourth: five DGT boards and three pit boards.
    let unplugged: Vec<usize> = (3..hall.len()).step_by(8).collect();
    round(hall, unplugged, with_garbage).await;
}

/// The regression test of the replug: two boards of each kind, every one unplugged mid-move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boards_unplugged_mid_move_and_plugged_back_lose_no_move() {
    // Games of at most 35 s, so that this test adds little to the hall's.
    let hall = fleet_common::hall(2, 2, SPEED, 35_000);
    round(hall, vec![0, 1, 2, 3], false).await;
}

/// Plays `hall` through one daemon, unplugging the boards at the indices `unplugged`, with the
/// garbage port if asked; checks the record, the log, the metrics and the latencies.
async fn round(hall: Vec<fleet_common::HallBoard>, unplugged: Vec<usize>, with_garbage: bool) {
    // One round at a time: another test's ptys would leak into this one's daemon.
    let _alone = fleet_common::ONE_ROUND_AT_A_TIME.lock().await;
    let longest = hall.iter().map(|b| b.length_ms()).max().unwrap();
    let dir = tempfile::tempdir().unwrap();
    assert!(unplugged.iter().any(|&i| hall[i].kind == Kind::Dgt));
    assert!(unplugged.iter().any(|&i| hall[i].kind == Kind::Togyz));
    let garbage_link = dir.path().join("garbage");
    let mut entries = fleet_common::hall_entries(dir.path(), &hall);
    if with_garbage {
        let number = hall.len() as u32 + 1;
        entries.push((number, "dgt", "garbage".to_owned(), garbage_link.clone()));
    }
    let db = dir.path().join("hall.db");
    let http = crate::ports::free();
    let config = dir.path().join("boardscribe.toml");
    std::fs::write(&config, fleet_common::config_text(&db, http, &entries)).unwrap();
    // The daemon first: a child process inherits every descriptor its parent has open then
    // (the emulators' ptys are not close-on-exec), and a daemon holding a board's pty master
    // would never see that board unplugged. The boards come up while it looks for them.
    let mut daemon = Daemon::start(dir.path(), &config);
    let mut fleet = PtyFleet::spawn(hall.iter().enumerate().map(|(i, b)| {
        let opts = fleet_common::pty_options(dir.path(), b, unplugged.contains(&i), UNPLUG_MS);
        (b.script.clone(), opts)
    }))
    .await
    .unwrap();
    let mut garbage = with_garbage.then(|| Garbage::start(&garbage_link, None));

    // The round: every board plays its script; unplugs and replugs are noted.
    let mut plugs: HashMap<usize, Vec<PtyEvent>> = HashMap::new();
    tokio::time::timeout(
        Duration::from_millis(longest + 60_000),
        fleet.all_done(|i, e| {
            if matches!(e, PtyEvent::Unplugged | PtyEvent::Replugged(_)) {
                plugs.entry(i).or_default().push(e.clone());
            }
        }),
    )
    .await
    .expect("the boards did not finish their games in time");
    for &i in &unplugged {
        let seen = plugs.get(&i).map(Vec::as_slice).unwrap_or_default();
        assert!(
            matches!(seen, [PtyEvent::Unplugged, PtyEvent::Replugged(_)]),
            "{}: {seen:?}",
            hall[i].name
        );
    }
    assert_eq!(plugs.len(), unplugged.len());

    // Every board's last move printed (durable), then the metrics while the daemon runs.
    fleet_common::wait_printed_all(&daemon, &hall, Duration::from_secs(20)).await;
    let round_secs = daemon.started.elapsed().as_secs_f64();
    let metrics = tokio::task::block_in_place(|| fleet_common::http_get(http, "/metrics"))
        .expect("/metrics answers");
    let warnings = fleet_common::metric(&metrics, "boardscribe_decode_warnings_total").unwrap();
    let skipped = fleet_common::metric(&metrics, "boardscribe_bytes_skipped_total");
    let moves_metric = fleet_common::metric(&metrics, "boardscribe_moves_total");
    let sent = garbage
        .as_ref()
        .map_or(0, |g| g.sent.load(std::sync::atomic::Ordering::Relaxed));
    if let Some(g) = garbage.as_mut() {
        g.stop();
    }

    let status = daemon.terminate();
    let log = daemon.log();
    assert!(status.success(), "{status:?}");
    assert!(
        log.contains("store closed"),
        "the store was flushed and closed"
    );

    // The record: every game exactly, one game per board, nothing for the garbage port.
    let store = Store::open_read_only(&db).unwrap();
    let games = store.games().unwrap();
    for b in &hall {
        let mine: Vec<_> = games.iter().filter(|g| g.board_name == b.name).collect();
        assert_eq!(
            mine.len(),
            1,
            "{} ({}): games {}",
            b.name,
            b.source,
            mine.len()
        );
        let g = mine[0];
        let got = b.moves_of(g);
        if got != b.moves {
            let (a, z) = (format!("board={} ", b.name), format!("board={}}}", b.name));
            let lines: Vec<&str> = log
                .lines()
                .filter(|l| l.contains(&a) || l.contains(&z))
                .collect();
            panic!(
                "{} ({}): recorded {} of {} plies\nwant {:?}\ngot  {:?}\nevents {:#?}\nlog:\n{}",
                b.name,
                b.source,
                got.len(),
                b.moves.len(),
                b.moves,
                got,
                g.events,
                lines.join("\n")
            );
        }
        assert_eq!(g.result, b.result, "{} ({}) result", b.name, b.source);
        assert_eq!(g.board_no, Some(b.number));
    }
    assert!(!games.iter().any(|g| g.board_name == "garbage"));
    let decided = hall.iter().filter(|b| b.result != "*").count();

    // The bad input: logged, in the garbage port's span only, and counted.
    let bad: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("bad input from board"))
        .collect();
    if with_garbage {
        assert!(!bad.is_empty(), "the garbage was not logged");
        assert!(sent > 0);
        assert!(warnings > 0.0, "{metrics}");
    } else {
        assert_eq!(warnings, 0.0, "{metrics}");
    }
    for l in &bad {
        assert!(
            l.contains("board=garbage"),
            "bad input from a real board: {l}"
        );
    }
    // The flood is read no faster than a board may send (the daemon's 16 KiB a second, and the
    // read that crossed it, of at most 4 KiB), not as fast as the pty delivers it.
    let slow: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("reading it slowly"))
        .collect();
    if with_garbage {
        let skipped = skipped.expect("bytes skipped in /metrics");
        let allowed = 20.0 * 1024.0 * (round_secs + 2.0);
        assert!(
            skipped <= allowed,
            "{skipped} garbage bytes read in {round_secs:.1} s (sent {sent})"
        );
        assert!(!slow.is_empty(), "the flood was not noticed");
    }
    for l in &slow {
        assert!(l.contains("board=garbage"), "a real board held back: {l}");
    }
    // The unplugged boards came back (and are the only ones that were lost).
    for (i, b) in hall.iter().enumerate() {
        let (a, z) = (format!("board={} ", b.name), format!("board={}}}", b.name));
        let lost = log
            .lines()
            .filter(|l| (l.contains(&a) || l.contains(&z)) && l.contains("board lost"))
            .count();
        if unplugged.contains(&i) {
            assert!(lost >= 1, "{}: not lost at the unplug", b.name);
        } else {
            assert_eq!(lost, 0, "{}: lost without an unplug", b.name);
        }
    }

    // Latency: each move from its completing frame to durable (printed).
    let printed = daemon.printed.lock().unwrap().clone();
    let mut by_board: HashMap<&str, Vec<(u32, Instant)>> = HashMap::new();
    for (name, ply, at) in &printed {
        by_board.entry(name.as_str()).or_default().push((*ply, *at));
    }
    // Boards unplugged mid-move record that move only after they are back: timed apart.
    let (mut steady, mut replugged) = (Vec::new(), Vec::new());
    let mut unmatched = 0;
    for (i, b) in hall.iter().enumerate() {
        let capture =
            std::fs::read_to_string(dir.path().join(format!("{}.capture", b.name))).unwrap();
        let written = fleet_common::written(&b.script, &capture, fleet.ready[i]);
        let mine = by_board.get(b.name.as_str()).cloned().unwrap_or_default();
        let (lat, missed) = fleet_common::latencies(&written, &mine);
        if unplugged.contains(&i) {
            replugged.extend(lat);
        } else {
            steady.extend(lat);
        }
        unmatched += missed;
    }
    let timed = steady.len() + replugged.len();
    let (r50, r99, rmax) = fleet_common::quantiles(&mut replugged);
    let mut all = steady;
    let (p50, p99, max) = fleet_common::quantiles(&mut all);
    eprintln!(
        "fleet: {} boards ({} DGT; {decided} ended by the rules), garbage port {} ({sent} bytes sent); longest script {:.1} s, round {round_secs:.1} \
         s; frame->durable ms (boards never unplugged) p50 {p50:.0} p99 {p99:.0} max {max:.0}; {timed} moves timed ({unmatched} \
         not timed; unplugged boards p50 {r50:.0} p99 {r99:.0} max {rmax:.0}); decode warnings {warnings}, bytes skipped {skipped:?}, moves {moves_metric:?}",
        hall.len(),
        hall.iter().filter(|b| b.kind == Kind::Dgt).count(),
        if with_garbage { "on" } else { "off" },
        longest as f64 / 1000.0,
    );
    let total_moves: usize = hall.iter().map(|b| b.moves.len()).sum();
    assert!(
        timed * 10 >= total_moves * 9,
        "only {timed} of {total_moves} moves timed"
    );
    let steady_timed = all.len();
    assert!(
        steady_timed == 0 || max <= MAX_LATENCY_MS,
        "a move took {max:.0} ms from its frame to the store"
    );
    // The round lasts as long as its longest game, plus the start-up and the last move's wait.
    assert!(
        round_secs <= longest as f64 / 1000.0 + 10.0,
        "the round took {round_secs:.1} s for a longest script of {} ms",
        longest
    );
    fleet.abort();
    if std::env::var_os("FLEET_KEEP").is_some() {
        eprintln!("kept {}", dir.keep().display());
    }
}
