//! A flood of connections against the relay while a hall records (issue 17): 16 emulated boards
//! (12 DGT, 4 togyz pit boards) at ten times human speed, recorded by one `boardscribe run`
//! process whose descriptor limit is the unit's (`LimitNOFILE=8192`), while 10,000 idle or slow
//! sockets on loopback hold every connection the relay will take and wait in its backlog (each
//! reopened when the server closes it, for as long as the round lasts). One board is unplugged
//! and plugged back during the flood. Then: every move recorded exactly, the replugged board
//! reconnected within a second, HTTP answering again as soon as the flood ends; and each move's
//! completing frame to durable (p50/p99), in a round without the flood and one with it.
//!
//! Run with `cargo test --release --test suite flood:: -- --nocapture` (it prints the figures).

use crate::fleet_common;

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use boardscribe::{
    emulator::{PtyEvent, PtyFleet},
    store::Store,
};
use fleet_common::Daemon;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CHESS_BOARDS: usize = 12;
const TOGYZ_BOARDS: usize = 4;
/// Ten times human speed.
const SPEED: f64 = 0.1;
/// The longest script played (ms of the body).
const MAX_SCRIPT_MS: u64 = 40_000;
/// The daemon's descriptor limit: the unit's `LimitNOFILE`.
const NOFILE: u64 = 8192;
/// The flood: this many sockets at once.
const SOCKETS: usize = 10_000;
/// The unplugged board is away this long.
const UNPLUG_MS: u64 = 400;

/// What one round measured.
struct Round {
    /// Frame-to-durable ms of the moves of the boards never unplugged.
    latencies: Vec<f64>,
    /// Flood figures, when there was one.
    flood: Option<FloodFigures>,
}

struct FloodFigures {
    peak_open: u64,
    connects: u64,
    failed: u64,
    /// From the replug to the daemon's first command on the new pty.
    reconnect_ms: f64,
    /// From the flood's last socket closed to the first HTTP answer.
    http_back_ms: f64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_boards_record_every_move_through_a_flood_of_10000_sockets() {
    // 10,000 sockets of our own, besides the emulators' ptys.
    let hard = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let want = SOCKETS as u64 + 2_000;
    assert!(
        hard.maximum.is_none_or(|m| m >= want),
        "the hard RLIMIT_NOFILE ({:?}) is below {want}",
        hard.maximum
    );
    rustix::process::setrlimit(
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: hard.maximum,
            maximum: hard.maximum,
        },
    )
    .unwrap();

    let hall = fleet_common::hall(CHESS_BOARDS, TOGYZ_BOARDS, SPEED, MAX_SCRIPT_MS);
    assert_eq!(hall.len(), 16);
    // Board 3 (DGT) and no other is unplugged, in both rounds, so that they compare.
    let unplugged = 2;
    let quiet = round(&hall, unplugged, false).await;
    let flooded = round(&hall, unplugged, true).await;

    let (mut q, mut f) = (quiet.latencies, flooded.latencies);
    let (q50, q99, qmax) = fleet_common::quantiles(&mut q);
    let (f50, f99, fmax) = fleet_common::quantiles(&mut f);
    let figures = flooded.flood.expect("the flood's figures");
    eprintln!(
        "flood: 16 boards; frame->durable ms without the flood p50 {q50:.0} p99 {q99:.0} max {qmax:.0} \
         ({} moves); with {SOCKETS} sockets p50 {f50:.0} p99 {f99:.0} max {fmax:.0} ({} moves); \
         flood peak {} open, {} connects, {} failed; replugged board back in {:.0} ms; \
         HTTP answered {:.0} ms after the flood ended",
        q.len(),
        f.len(),
        figures.peak_open,
        figures.connects,
        figures.failed,
        figures.reconnect_ms,
        figures.http_back_ms,
    );
    // The relay's cap (8192 less its reserve of 256) plus its listen backlog (1024).
    assert!(
        figures.peak_open >= 8_500,
        "the flood held {}",
        figures.peak_open
    );
    assert!(
        figures.reconnect_ms <= 1_000.0,
        "the replugged board came back after {:.0} ms",
        figures.reconnect_ms
    );
    assert!(
        figures.http_back_ms <= 2_000.0,
        "HTTP answered {:.0} ms after the flood",
        figures.http_back_ms
    );
    // The tracker's own windows bound a move's wait (see fleet.rs); the flood adds nothing near.
    assert!(fmax <= 4_000.0, "a move took {fmax:.0} ms under the flood");
}

/// Plays `hall` through one daemon limited to [`NOFILE`] descriptors, board `unplugged` pulled
/// and plugged back, with the flood if asked; checks the record and returns the figures.
async fn round(hall: &[fleet_common::HallBoard], unplugged: usize, flood: bool) -> Round {
    // One round at a time, and not beside fleet.rs's (another test's ptys would leak in).
    let _alone = fleet_common::ONE_ROUND_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let entries = fleet_common::hall_entries(dir.path(), hall);
    let db = dir.path().join("flood.db");
    let http = crate::ports::free();
    let config = dir.path().join("boardscribe.toml");
    std::fs::write(&config, fleet_common::config_text(&db, http, &entries)).unwrap();
    let mut daemon = Daemon::start_limited(dir.path(), &config, Some(NOFILE));
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::task::block_in_place(|| fleet_common::http_get(http, "/metrics")).is_none() {
        assert!(Instant::now() < deadline, "the relay never answered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let addr = SocketAddr::from(([127, 0, 0, 1], http));
    let mut flooder = flood.then(|| Flood::start(addr, SOCKETS));
    if let Some(f) = &flooder {
        // The boards come up once the flood holds every slot it can.
        let deadline = Instant::now() + Duration::from_secs(30);
        while f.open.load(Ordering::Relaxed) < 8_000 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let mut fleet = PtyFleet::spawn(hall.iter().enumerate().map(|(i, b)| {
        let opts = fleet_common::pty_options(dir.path(), b, i == unplugged, UNPLUG_MS);
        (b.script.clone(), opts)
    }))
    .await
    .unwrap();
    let longest = hall.iter().map(|b| b.length_ms()).max().unwrap();
    let mut replugged_at = None;
    tokio::time::timeout(
        Duration::from_millis(longest + 60_000),
        fleet.all_done(|i, e| {
            if i == unplugged && matches!(e, PtyEvent::Replugged(_)) {
                replugged_at = Some(Instant::now());
            }
        }),
    )
    .await
    .expect("the boards did not finish their games in time");
    let replugged_at = replugged_at.expect("the board was not plugged back");
    fleet_common::wait_printed_all(&daemon, hall, Duration::from_secs(20)).await;
    let flood_figures = match flooder.as_mut() {
        Some(f) => {
            // Sockets the server closed (its 10 s header timeout) come back 500 ms later, and
            // they were opened together, so one instant can fall in their dip: the flood lasted
            // if it held 8,000 at some point of the last two seconds.
            let mut open_at_end = 0;
            let window = Instant::now() + Duration::from_secs(2);
            while Instant::now() < window && open_at_end < 8_000 {
                open_at_end = open_at_end.max(f.open.load(Ordering::Relaxed));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert!(open_at_end >= 8_000, "the flood lasted: {open_at_end} open");
            f.stop();
            let ended = Instant::now();
            let deadline = ended + Duration::from_secs(30);
            while !tokio::task::block_in_place(|| metrics_answer(addr)) {
                assert!(Instant::now() < deadline, "HTTP never came back");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Some(FloodFigures {
                peak_open: f.peak.load(Ordering::Relaxed),
                connects: f.connects.load(Ordering::Relaxed),
                failed: f.failed.load(Ordering::Relaxed),
                reconnect_ms: 0.0,
                http_back_ms: ended.elapsed().as_secs_f64() * 1000.0,
            })
        }
        None => None,
    };
    let status = daemon.terminate();
    assert!(status.success(), "{status:?}");
    let log = daemon.log();
    assert!(!log.contains("Too many open files"), "EMFILE in the log");

    // The record: every game exactly.
    let store = Store::open_read_only(&db).unwrap();
    let games = store.games().unwrap();
    for b in hall {
        let mine: Vec<_> = games.iter().filter(|g| g.board_name == b.name).collect();
        assert_eq!(mine.len(), 1, "{} ({}): games", b.name, b.source);
        let got = b.moves_of(mine[0]);
        assert_eq!(got, b.moves, "{} ({}) moves", b.name, b.source);
        assert_eq!(mine[0].result, b.result, "{} ({}) result", b.name, b.source);
    }

    // Latencies, as fleet.rs measures them; and the replugged board's reconnection.
    let printed = daemon.printed.lock().unwrap().clone();
    let mut by_board: HashMap<&str, Vec<(u32, Instant)>> = HashMap::new();
    for (name, ply, at) in &printed {
        by_board.entry(name.as_str()).or_default().push((*ply, *at));
    }
    let mut latencies = Vec::new();
    let mut reconnect_ms = f64::NAN;
    for (i, b) in hall.iter().enumerate() {
        let capture =
            std::fs::read_to_string(dir.path().join(format!("{}.capture", b.name))).unwrap();
        if i == unplugged {
            let back = first_command_after_replug(&capture).expect("no command after the replug");
            let back = fleet.ready[i] + Duration::from_secs_f64(back);
            reconnect_ms = back.saturating_duration_since(replugged_at).as_secs_f64() * 1000.0;
            continue;
        }
        let written = fleet_common::written(&b.script, &capture, fleet.ready[i]);
        let mine = by_board.get(b.name.as_str()).cloned().unwrap_or_default();
        let (lat, _missed) = fleet_common::latencies(&written, &mine);
        latencies.extend(lat);
    }
    let total: usize = hall
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != unplugged)
        .map(|(_, b)| b.moves.len())
        .sum();
    assert!(
        latencies.len() * 10 >= total * 9,
        "only {} of {total} moves timed",
        latencies.len()
    );
    assert!(reconnect_ms.is_finite());
    fleet.abort();
    Round {
        latencies,
        flood: flood_figures.map(|f| FloodFigures { reconnect_ms, ..f }),
    }
}

/// Whether `GET /metrics` on `addr` answers 200, trying once: a connection not accepted within
/// 100 ms counts as no (a SYN the full listen queue dropped would otherwise be sent again by the
/// kernel only after a second, and the figure would be the kernel's, not the server's).
fn metrics_answer(addr: SocketAddr) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(100)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

/// The time (s since the capture's start) of the first host-to-board line after `# replugged`.
fn first_command_after_replug(capture: &str) -> Option<f64> {
    let mut lines = capture
        .lines()
        .skip_while(|l| !l.starts_with("# replugged"));
    lines.next()?;
    lines
        .filter(|l| !l.starts_with('#'))
        .find(|l| l.split_whitespace().nth(1) == Some(">"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
}

/// `sockets` connections held open against `addr` on a runtime of their own: half idle (they
/// never send a byte), half slow (a request head one header line a second, never finished).
/// A socket the server closes is opened again after a pause, until [`Flood::stop`].
struct Flood {
    stop: Arc<AtomicBool>,
    open: Arc<AtomicU64>,
    peak: Arc<AtomicU64>,
    connects: Arc<AtomicU64>,
    failed: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Flood {
    fn start(addr: SocketAddr, sockets: usize) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let [open, peak, connects, failed] = [(); 4].map(|_| Arc::new(AtomicU64::new(0)));
        let thread = {
            let (stop, open, peak, connects, failed) = (
                stop.clone(),
                open.clone(),
                peak.clone(),
                connects.clone(),
                failed.clone(),
            );
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let mut tasks = tokio::task::JoinSet::new();
                    for i in 0..sockets {
                        let (stop, open, peak, connects, failed) = (
                            stop.clone(),
                            open.clone(),
                            peak.clone(),
                            connects.clone(),
                            failed.clone(),
                        );
                        tasks.spawn(async move {
                            let slow = i % 2 == 1;
                            while !stop.load(Ordering::Relaxed) {
                                let conn = tokio::time::timeout(
                                    Duration::from_secs(3),
                                    tokio::net::TcpStream::connect(addr),
                                )
                                .await;
                                let Ok(Ok(mut s)) = conn else {
                                    failed.fetch_add(1, Ordering::Relaxed);
                                    tokio::time::sleep(Duration::from_millis(500)).await;
                                    continue;
                                };
                                connects.fetch_add(1, Ordering::Relaxed);
                                let now = open.fetch_add(1, Ordering::Relaxed) + 1;
                                peak.fetch_max(now, Ordering::Relaxed);
                                hold(&mut s, slow, &stop).await;
                                drop(s);
                                open.fetch_sub(1, Ordering::Relaxed);
                                if !stop.load(Ordering::Relaxed) {
                                    tokio::time::sleep(Duration::from_millis(500)).await;
                                }
                            }
                        });
                        if i % 500 == 499 {
                            tokio::task::yield_now().await;
                        }
                    }
                    while tasks.join_next().await.is_some() {}
                });
            })
        };
        Flood {
            stop,
            open,
            peak,
            connects,
            failed,
            thread: Some(thread),
        }
    }

    /// Closes every socket and waits until they are closed.
    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Holds `s` until the server closes it or `stop`: idle, or sending a never-ending request head.
async fn hold(s: &mut tokio::net::TcpStream, slow: bool, stop: &AtomicBool) {
    let mut buf = [0u8; 512];
    if slow
        && s.write_all(b"GET / HTTP/1.1\r\nHost: flood\r\n")
            .await
            .is_err()
    {
        return;
    }
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        match tokio::time::timeout(Duration::from_millis(250), s.read(&mut buf)).await {
            // Closed (or answered: a 408 then the close).
            Ok(Ok(0) | Err(_)) => return,
            Ok(Ok(_)) => {}
            Err(_quiet) => {
                n += 1;
                if slow
                    && n.is_multiple_of(4)
                    && s.write_all(format!("X-Slow-{n}: 1\r\n").as_bytes())
                        .await
                        .is_err()
                {
                    return;
                }
            }
        }
    }
}
