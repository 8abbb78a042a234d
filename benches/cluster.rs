//! One event across several halls through NATS JetStream (issue 18): a benchmark binary, not a
//! timed test.
//!
//! Flow: one `nats-server` with JetStream, one event node (`boardscribe event`) and `HALLS` hall
//! processes (`boardscribe run` with `[cluster] hall`), each recording `BOARDS` emulated boards
//! (5 DGT boards to 3 togyz pit boards, whole corpus games at ten times human speed, as
//! tests/suite/fleet.rs plays them; every hall its own range of board numbers), all on this
//! machine. The round runs for `SECS` seconds; then the emulators stop, the halls are stopped
//! with SIGTERM (their last records published), the event node catches up, and its database is
//! checked against every hall's (every game move by move with clocks, retractions, events,
//! links; each record once, in order: tests/suite/cluster_common). Measured: each record's time
//! from the hall's commit to the event node's (`replica_log`: both stamped with the wall clock of
//! their transaction), as p50/p99/max over the records committed during the round; the CPU of
//! every process over the round (user + sys, /proc/PID/stat) and its VmRSS and VmHWM at the end.
//!
//! Run with `cargo bench --bench cluster`. Knobs (environment): `CLUSTERBENCH_HALLS` (8),
//! `CLUSTERBENCH_BOARDS` (128 per hall), `CLUSTERBENCH_SECS` (120), `CLUSTERBENCH_SPEED` (0.1),
//! `CLUSTERBENCH_SPECTATORS` (0: spectators' event streams held open on the event node's page,
//! each read to the end; the event node builds an event's body only while someone follows).
//! Without `--bench` (`cargo test --benches`) the defaults are a 2-hall, 2-board, 15-second smoke
//! run. See docs/benchmarks.md.

#[path = "../tests/suite/fleet_common/mod.rs"]
mod fleet_common;

#[path = "../tests/suite/cluster_common/mod.rs"]
mod cluster_common;

#[path = "../tests/suite/ports.rs"]
mod ports;

use std::time::{Duration, Instant};

use boardscribe::emulator::PtyFleet;
use cluster_common::{EventNode, Hall, Nats};

/// A process measured over the round.
struct Proc {
    what: String,
    pid: u32,
    cpu0: f64,
    cpu: f64,
    rss_kib: u64,
    hwm_kib: u64,
}

impl Proc {
    fn new(what: String, pid: u32) -> Proc {
        Proc {
            what,
            pid,
            cpu0: fleet_common::cpu_secs(pid),
            cpu: 0.0,
            rss_kib: 0,
            hwm_kib: 0,
        }
    }

    fn end(&mut self) {
        self.cpu = fleet_common::cpu_secs(self.pid) - self.cpu0;
        (self.rss_kib, self.hwm_kib) = fleet_common::memory_kib(self.pid);
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let halls_n: usize = fleet_common::knob("CLUSTERBENCH_HALLS", if bench { 8 } else { 2 });
    let boards_n: usize = fleet_common::knob("CLUSTERBENCH_BOARDS", if bench { 128 } else { 2 });
    let secs: u64 = fleet_common::knob("CLUSTERBENCH_SECS", if bench { 120 } else { 15 });
    let speed: f64 = fleet_common::knob("CLUSTERBENCH_SPEED", 0.1);
    let spectators: usize = fleet_common::knob("CLUSTERBENCH_SPECTATORS", 0);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let nats = tokio::task::block_in_place(|| Nats::start(dir.path()));
    let chess = boards_n * 5 / 8;
    let every = fleet_common::hall(
        chess * halls_n,
        (boards_n - chess) * halls_n,
        speed,
        u64::MAX,
    );
    let (dgt, togyz): (Vec<_>, Vec<_>) = every
        .into_iter()
        .partition(|b| b.kind == fleet_common::Kind::Dgt);
    let names: Vec<String> = (0..halls_n)
        .map(|i| char::from(b'A' + i as u8).to_string())
        .collect();
    let mut halls: Vec<Hall> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut boards = dgt[i * chess..(i + 1) * chess].to_vec();
            boards.extend_from_slice(&togyz[i * (boards_n - chess)..(i + 1) * (boards_n - chess)]);
            Hall::new(
                dir.path(),
                name,
                &nats.url(),
                boards,
                1 + (i * 1000) as u32,
                "",
            )
        })
        .collect();
    let hall_names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut event = EventNode::new(dir.path(), &nats.url(), &hall_names, "");
    event.start();
    for h in &mut halls {
        h.start();
    }
    // The processes first, so that none inherits the emulators' ptys.
    let boards: Vec<_> = halls
        .iter()
        .flat_map(|h| {
            h.boards.iter().map(|b| {
                (
                    b.script.clone(),
                    fleet_common::pty_options(&h.dir, b, false, 0),
                )
            })
        })
        .collect();
    let mut procs: Vec<Proc> = halls
        .iter()
        .map(|h| {
            Proc::new(
                format!("hall {} ({} boards)", h.name, h.boards.len()),
                h.daemon.as_ref().expect("started").pid(),
            )
        })
        .collect();
    procs.push(Proc::new("event node".to_owned(), event.pid()));
    if let Some(pid) = nats.pid() {
        procs.push(Proc::new("nats-server".to_owned(), pid));
    }
    let followed = spectators_follow(event.http, spectators).await;
    let bench_cpu0 = fleet_common::cpu_secs(std::process::id());
    let mut fleet = PtyFleet::spawn(boards).await.expect("the emulators start");
    let t0 = Instant::now();
    let round_start_ms = now_ms();
    let end = t0 + Duration::from_secs(secs);
    let _ = tokio::time::timeout_at(end.into(), fleet.all_done(|_, _| {})).await;
    tokio::time::sleep_until(end.into()).await;
    let round_end_ms = now_ms();
    let wall = t0.elapsed().as_secs_f64();
    for p in &mut procs {
        p.end();
    }
    let bench_cpu = fleet_common::cpu_secs(std::process::id()) - bench_cpu0;
    let metrics = tokio::task::block_in_place(|| fleet_common::http_get(event.http, "/metrics"))
        .unwrap_or_default();
    fleet.abort();
    let (compared, lat, caught) = tokio::task::block_in_place(|| {
        for h in &mut halls {
            h.terminate();
        }
        let refs: Vec<&Hall> = halls.iter().collect();
        let t = Instant::now();
        event.wait_caught_up(&refs, Duration::from_secs(300));
        let caught = t.elapsed();
        let compared = cluster_common::assert_event_holds_halls(&event, &refs);
        let mut lat: Vec<f64> = cluster_common::read_only(&event.db)
            .prepare(
                "SELECT applied_at_ms - at_ms FROM replica_log WHERE at_ms >= ?1 AND at_ms <= ?2",
            )
            .expect("the latency query")
            .query_map([round_start_ms as i64, round_end_ms as i64], |r| {
                r.get::<_, i64>(0)
            })
            .expect("the latencies")
            .map(|x| x.expect("a latency") as f64)
            .collect();
        lat.sort_by(f64::total_cmp);
        event.terminate();
        (compared, lat, caught)
    });
    let (p50, p99, max) = fleet_common::quantiles(&mut lat.clone());
    println!();
    println!(
        "cluster bench: {halls_n} halls × {boards_n} boards ({} DGT, {} togyz each) = {} boards, \
         speed {speed} (1 = human), one nats-server {} and one event node on this machine; \
         round {wall:.1} s",
        chess,
        boards_n - chess,
        halls_n * boards_n,
        nats_version(),
    );
    println!(
        "event node = halls: {} games, {} move rows, {} records, each once and in order; the \
         event node caught up {:.1} s after the halls stopped",
        compared.games,
        compared.moves,
        compared.records,
        caught.as_secs_f64()
    );
    println!(
        "hall commit → event node commit, {} records committed during the round: p50 {p50:.0} \
         ms, p99 {p99:.0} ms, max {max:.0} ms",
        lat.len()
    );
    let applied: f64 = hall_names
        .iter()
        .filter_map(|h| {
            fleet_common::metric(
                &metrics,
                &format!("boardscribe_cluster_applied_total{{hall=\"{h}\"}}"),
            )
        })
        .sum();
    println!(
        "records applied per second over the round: {:.0}",
        applied / wall
    );
    println!();
    println!(
        "{:<24} {:>8} {:>8} {:>9} {:>9}",
        "process", "cpu s", "cpu %", "RSS MiB", "HWM MiB"
    );
    for p in &procs {
        println!(
            "{:<24} {:>8.2} {:>8.1} {:>9.1} {:>9.1}",
            p.what,
            p.cpu,
            p.cpu / wall * 100.0,
            p.rss_kib as f64 / 1024.0,
            p.hwm_kib as f64 / 1024.0
        );
    }
    println!(
        "{:<24} {:>8.2} {:>8.1}",
        "bench (the emulators)",
        bench_cpu,
        bench_cpu / wall * 100.0
    );
    let read: Vec<u64> = followed
        .iter()
        .map(|f| f.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    if !read.is_empty() {
        println!(
            "spectators' event streams: {} open, bytes read each: {read:?}",
            read.len()
        );
    }
    println!("load avg at the end: {}", fleet_common::loadavg());
}

/// `n` spectators on the event node's event stream, each reading it to the end: how many bytes
/// each has read so far.
async fn spectators_follow(
    http: u16,
    n: usize,
) -> Vec<std::sync::Arc<std::sync::atomic::AtomicU64>> {
    use futures_util::StreamExt as _;
    let mut read = Vec::new();
    for _ in 0..n {
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        // The event node may still be starting.
        let mut tries = 0;
        let resp = loop {
            match reqwest::get(format!("http://127.0.0.1:{http}/api/events")).await {
                Ok(resp) => break resp,
                Err(_) if tries < 200 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("the event stream does not open: {e}"),
            }
        };
        assert!(resp.status().is_success(), "{}", resp.status());
        let counted = count.clone();
        tokio::spawn(async move {
            let mut body = resp.bytes_stream();
            while let Some(Ok(chunk)) = body.next().await {
                counted.fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::Relaxed);
            }
        });
        read.push(count);
    }
    read
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn nats_version() -> String {
    std::process::Command::new(cluster_common::nats_binary())
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
