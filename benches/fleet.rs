//! A hall through one `boardscribe run` process (issue 6): a benchmark binary, not a timed test.
//!
//! Flow: a baseline (the daemon with one configured board that is not plugged in: its RSS is
//! the "0 boards" figure), then one phase per hall size (64, then 256 boards; 5 DGT boards to 3
//! togyz pit boards, whole corpus games at ten times human speed, as tests/suite/fleet.rs sets them
//! up through `PtyFleet` and tests/suite/fleet_common). Each phase runs for a fixed time, then the
//! daemon is stopped with SIGTERM. Measured: the daemon's CPU (user + sys from /proc/PID/stat,
//! over the phase), its VmRSS at the end and VmHWM, frames and moves per second (`/metrics`),
//! and frame-to-durable latency as benches/relay.rs defines it (the frame completing a move, from
//! the emulators' captures, to the daemon's `--print-moves` line, printed once the move is
//! durable). Prints one table.
//!
//! Run with `cargo bench --bench fleet`. Knobs (environment): `FLEETBENCH_SIZES` (`64,256`),
//! `FLEETBENCH_SECS` (90 per phase), `FLEETBENCH_SPEED` (0.1). Without `--bench` (`cargo test
//! --benches`) the defaults are a 4-board, 10-second smoke run. See docs/benchmarks.md.

#[path = "../tests/suite/fleet_common/mod.rs"]
mod fleet_common;

#[path = "../tests/suite/ports.rs"]
mod ports;

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use boardscribe::emulator::PtyFleet;
use fleet_common::Daemon;

/// What one phase measured.
struct Phase {
    boards: usize,
    chess: usize,
    secs: f64,
    cpu: f64,
    rss_kib: u64,
    hwm_kib: u64,
    frames: f64,
    moves: f64,
    latency: Vec<f64>,
    untimed: usize,
    late: Vec<f64>,
    load: String,
}

/// The daemon with one board that is never plugged in, for `secs`: its VmRSS and VmHWM.
fn baseline(secs: u64) -> (u64, u64) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("hall.db");
    let config = dir.path().join("boardscribe.toml");
    let entries = [(1, "dgt", "absent".to_owned(), dir.path().join("absent"))];
    let text = fleet_common::config_text(&db, ports::free(), &entries);
    std::fs::write(&config, text).expect("the config");
    let mut daemon = Daemon::start(dir.path(), &config);
    std::thread::sleep(Duration::from_secs(secs));
    let mem = fleet_common::memory_kib(daemon.pid());
    daemon.terminate();
    mem
}

async fn phase(n: usize, secs: u64, speed: f64) -> Phase {
    let chess = n * 5 / 8;
    let hall = fleet_common::hall(chess, n - chess, speed, u64::MAX);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let entries = fleet_common::hall_entries(dir.path(), &hall);
    let db = dir.path().join("hall.db");
    let http = ports::free();
    let config = dir.path().join("boardscribe.toml");
    std::fs::write(&config, fleet_common::config_text(&db, http, &entries)).expect("the config");
    // The daemon first, so that it inherits none of the emulators' ptys (see tests/suite/fleet.rs).
    let mut daemon = Daemon::start(dir.path(), &config);
    let pid = daemon.pid();
    let cpu0 = fleet_common::cpu_secs(pid);
    let mut fleet = PtyFleet::spawn(hall.iter().map(|b| {
        (
            b.script.clone(),
            fleet_common::pty_options(dir.path(), b, false, 0),
        )
    }))
    .await
    .expect("the emulators start");
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs(secs);
    // Keep the emulators' event channel drained until the phase ends.
    let _ = tokio::time::timeout_at(end.into(), fleet.all_done(|_, _| {})).await;
    tokio::time::sleep_until(end.into()).await;
    let wall = t0.elapsed().as_secs_f64();
    let cpu = fleet_common::cpu_secs(pid) - cpu0;
    let (rss_kib, hwm_kib) = fleet_common::memory_kib(pid);
    let load = fleet_common::loadavg();
    let metrics = tokio::task::block_in_place(|| fleet_common::http_get(http, "/metrics"))
        .unwrap_or_default();
    let get = |name: &str| fleet_common::metric(&metrics, name).unwrap_or(f64::NAN);
    let frames = get("boardscribe_frames_total");
    let moves = get("boardscribe_moves_total");
    let status = tokio::task::block_in_place(|| daemon.terminate());
    if !status.success() {
        eprintln!("the daemon exited with {status:?}");
    }
    fleet.abort();
    let printed = daemon.printed.lock().expect("the printed moves").clone();
    let mut by_board: HashMap<&str, Vec<(u32, Instant)>> = HashMap::new();
    for (name, ply, at) in &printed {
        if *at <= end {
            by_board.entry(name.as_str()).or_default().push((*ply, *at));
        }
    }
    let (mut latency, mut untimed, mut late) = (Vec::new(), 0, Vec::new());
    for (i, b) in hall.iter().enumerate() {
        let capture = std::fs::read_to_string(dir.path().join(format!("{}.capture", b.name)))
            .unwrap_or_default();
        let (written, l) = fleet_common::written_late(&b.script, &capture, fleet.ready[i]);
        late.extend(l);
        let mine = by_board.get(b.name.as_str()).cloned().unwrap_or_default();
        let (lat, missed) = fleet_common::latencies(&written, &mine);
        latency.extend(lat);
        untimed += missed;
    }
    Phase {
        boards: n,
        chess,
        secs: wall,
        cpu,
        rss_kib,
        hwm_kib,
        frames,
        moves,
        latency,
        untimed,
        late,
        load,
    }
}

fn report(base: (u64, u64), speed: f64, phases: &mut [Phase]) {
    println!();
    println!(
        "fleet bench: one `boardscribe run` process; emulators in this process (tokio, 2 worker \
         threads), speed {speed} (1 = human); memory per board = (RSS - {} KiB RSS with 0 boards) \
         / boards; latency in ms from the frame completing a move to its durable print",
        base.0
    );
    println!();
    println!(
        "{:>6} {:>10} {:>6} {:>7} {:>6} {:>8} {:>8} {:>9} {:>9} {:>9} {:>8} {:>7} {:>7} {:>7} {:>6} {:>8}  load avg",
        "boards",
        "dgt/togyz",
        "secs",
        "cpu s",
        "cpu %",
        "RSS MiB",
        "HWM MiB",
        "KiB/b RSS",
        "KiB/b HWM",
        "frames/s",
        "moves/s",
        "p50",
        "p99",
        "max",
        "n",
        "emu p99",
    );
    for p in phases.iter_mut() {
        let (p50, p99, max) = fleet_common::quantiles(&mut p.latency);
        let (_, late99, _) = fleet_common::quantiles(&mut p.late);
        let per = |kib: u64| kib.saturating_sub(base.0) as f64 / p.boards as f64;
        println!(
            "{:>6} {:>10} {:>6.1} {:>7.2} {:>6.1} {:>8.1} {:>8.1} {:>9.0} {:>9.0} {:>9.1} {:>8.1} {:>7.0} {:>7.0} {:>7.0} {:>6} {:>8.0}  {}",
            p.boards,
            format!("{}/{}", p.chess, p.boards - p.chess),
            p.secs,
            p.cpu,
            p.cpu / p.secs * 100.0,
            p.rss_kib as f64 / 1024.0,
            p.hwm_kib as f64 / 1024.0,
            per(p.rss_kib),
            per(p.hwm_kib),
            p.frames / p.secs,
            p.moves / p.secs,
            p50,
            p99,
            max,
            p.latency.len(),
            late99,
            p.load
        );
        if p.untimed > 0 {
            println!(
                "       ({} durable moves whose frames were not found)",
                p.untimed
            );
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: a short smoke run then.
    let full = std::env::args().any(|a| a == "--bench");
    let sizes: Vec<usize> =
        fleet_common::knob::<String>("FLEETBENCH_SIZES", if full { "64,256" } else { "4" }.into())
            .split(',')
            .map(|s| {
                s.trim()
                    .parse()
                    .expect("FLEETBENCH_SIZES: numbers, comma-separated")
            })
            .collect();
    let secs = fleet_common::knob("FLEETBENCH_SECS", if full { 90 } else { 10 });
    let speed = fleet_common::knob("FLEETBENCH_SPEED", 0.1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    eprintln!("baseline: the daemon with no board plugged in");
    let base = baseline(5);
    let mut phases = Vec::new();
    for n in sizes {
        eprintln!(
            "phase: {n} boards for {secs} s (load average {})",
            fleet_common::loadavg()
        );
        phases.push(rt.block_on(phase(n, secs, speed)));
    }
    report(base, speed, &mut phases);
}
