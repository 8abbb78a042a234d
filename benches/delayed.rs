//! The delayed view (issue 36, item 4): a benchmark binary, not a timed test.
//!
//! Flow: a store on a file holds `N` boards, each playing a corpus game (`../shared/corpus/chess`,
//! games of 100 plies or more) whose moves are timed one every `DELAYBENCH_PLY_MS` (30 s), each
//! board's game begun at its own moment so that moves fall evenly in time, the first of them 20
//! minutes before the run: the 15-minute delay window is full of moves. The moves timed up to
//! the start are written before it; a writer thread then writes each later move when the wall
//! clock reaches its time (batches every 50 ms), as boards would. The view (`relay::delayed`'s
//! `DelayedView`, with a 15-minute delay) runs on a thread of its own as `broadcast::run` turns
//! it: a turn, then 500 ms, again, for `DELAYBENCH_SECS` (20) seconds, once with the full read
//! per turn (`Flow::Full`, the flow before this item) and once incremental (`Flow::Incremental`),
//! each over a store of its own filled the same way, at each of `DELAYBENCH_BOARDS` (150 and
//! 1,024). The first 3 turns are not measured (the first reads every game). Measured: the view thread's CPU over the run (`/proc/thread-self/schedstat`, time on
//! a core, in ns) as % of one core, the turns' time, and, for every move that appeared on the
//! public hub during the run, how late: the wall time after the turn that first showed it minus
//! (its stored time + the delay), p50/p99/max.
//!
//! Run with `cargo bench --bench delayed`. Knobs (environment): `DELAYBENCH_BOARDS` (`150,1024`),
//! `DELAYBENCH_SECS` (20), `DELAYBENCH_PLY_MS` (30000). Without `--bench` (`cargo test
//! --benches`) it is a 4-board, 2-second smoke run of each flow. See docs/benchmarks.md.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

use boardscribe::{
    Millis,
    device::serial::now_ms,
    emulator::games_from_pgn,
    export::publish::Publication,
    game::Kind,
    relay::{
        Hub,
        delayed::{DelayedView, Flow},
    },
    sensor::Orientation,
    store::{BoardId, Store, Write},
    tracker::{TrackerEvent, event::RecordedMove},
};
use shakmaty::{EnPassantMode, Position, fen::Fen, uci::UciMove};

mod common;

use common::knob;

const DELAY_MS: Millis = 15 * 60 * 1000;
/// How long before the run each board's first move is: the delay window and 5 minutes.
const LEAD_MS: Millis = DELAY_MS + 5 * 60 * 1000;
/// How long the view waits after each turn (`relay::delayed`'s tick).
const TICK: Duration = Duration::from_millis(500);

/// Turns before the measure: the first one reads every game in either flow.
const WARM_UP: usize = 3;

/// A corpus game's moves, ready to store (time left 0).
type Line = Vec<RecordedMove>;

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let sizes: String = knob(
        "DELAYBENCH_BOARDS",
        if bench { "150,1024" } else { "4" }.to_owned(),
    );
    let secs: u64 = knob("DELAYBENCH_SECS", if bench { 20 } else { 2 });
    let ply_ms: Millis = knob("DELAYBENCH_PLY_MS", 30_000);
    let lines = corpus_lines();
    println!(
        "delayed view, 15-minute delay, a move every {} s per board, {secs} s per run, {} corpus games",
        ply_ms / 1000,
        lines.len()
    );
    println!(
        "{:>6} {:>12} {:>8} {:>10} {:>10} {:>7} {:>9} {:>9} {:>9}",
        "boards",
        "flow",
        "cpu %",
        "turn p50",
        "turn max",
        "moves",
        "late p50",
        "late p99",
        "late max"
    );
    for n in sizes
        .split(',')
        .filter_map(|s| s.trim().parse::<usize>().ok())
    {
        for flow in [Flow::Full, Flow::Incremental] {
            let m = run(n, flow, secs, ply_ms, &lines);
            println!(
                "{n:>6} {:>12} {:>8.1} {:>8.1}ms {:>8.1}ms {:>7} {:>7}ms {:>7}ms {:>7}ms",
                format!("{flow:?}").to_lowercase(),
                m.cpu_pct,
                m.turn_p50_ms,
                m.turn_max_ms,
                m.late.len(),
                pct(&m.late, 0.50),
                pct(&m.late, 0.99),
                m.late.last().copied().unwrap_or(0),
            );
        }
    }
}

/// The corpus games of 100 plies or more, as move rows.
fn corpus_lines() -> Vec<Line> {
    let dir = format!("{}/../shared/corpus/chess", env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pgn"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a corpus file");
        for g in games_from_pgn(&text).expect("the corpus reads") {
            if g.moves.len() < 100 {
                continue;
            }
            let mut pos = g.start.clone();
            let mut line = Vec::new();
            for (i, (m, san)) in g.moves.iter().zip(&g.sans).enumerate() {
                let uci = UciMove::from_standard(*m).to_string();
                pos = pos.play(*m).expect("corpus moves are legal");
                let ply = i as u32 + 1;
                // Each side's clock goes down 20 s a move from 90 minutes.
                let left = 5_400_000u64.saturating_sub(u64::from(ply / 2) * 20_000);
                line.push(RecordedMove {
                    ply,
                    notation: san.clone(),
                    uci: Some(uci),
                    position: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
                    at_ms: 0,
                    clock_white_ms: (ply % 2 == 1).then_some(left),
                    clock_black_ms: ply.is_multiple_of(2).then_some(left),
                    time_trouble: false,
                });
            }
            out.push(line);
        }
    }
    assert!(!out.is_empty(), "no corpus game of 100 plies in {dir}");
    out
}

/// What one run measured.
struct Measured {
    cpu_pct: f64,
    turn_p50_ms: f64,
    turn_max_ms: f64,
    /// Each move's lateness (ms), sorted.
    late: Vec<u64>,
}

/// The moves of `n` boards: (board index, move with its stored time), by time; board `i` plays
/// corpus game `i` from `start + i * ply_ms / n`.
fn schedule(n: usize, start: Millis, ply_ms: Millis, lines: &[Line]) -> Vec<(usize, RecordedMove)> {
    let mut moves = Vec::new();
    for i in 0..n {
        let first = start + i as Millis * ply_ms / n as Millis;
        for (k, mv) in lines[i % lines.len()].iter().enumerate() {
            let mut mv = mv.clone();
            mv.at_ms = first + k as Millis * ply_ms;
            moves.push((i, mv));
        }
    }
    moves.sort_by_key(|(_, m)| m.at_ms);
    moves
}

fn run(n: usize, flow: Flow, secs: u64, ply_ms: Millis, lines: &[Line]) -> Measured {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("delayed.db");
    let mut store = Store::open(&db).expect("a store");
    let record = Hub::new();
    let t0 = now_ms();
    let start = t0 - LEAD_MS;
    let boards: Vec<BoardId> = (0..n)
        .map(|i| {
            let name = format!("board{:04}", i + 1);
            let id = store.board(&name, Kind::Chess).expect("a board");
            store.set_board_number(id, i as u32 + 1).expect("a number");
            record.add_board(&name, Some(i as u32 + 1), &[]);
            id
        })
        .collect();
    let games: Vec<Write> = boards
        .iter()
        .map(|&board| Write::Event {
            board,
            event: TrackerEvent::GameStarted {
                at_ms: start - 1000,
                orientation: Orientation::Normal,
                start: None,
            },
        })
        .collect();
    store.write_batch(&games).expect("games begun");
    let moves = schedule(n, start, ply_ms, lines);
    let split = moves.partition_point(|(_, m)| m.at_ms <= t0);
    let (before, during) = moves.split_at(split);
    for chunk in before.chunks(2000) {
        let writes: Vec<Write> = chunk
            .iter()
            .map(|(i, m)| Write::Event {
                board: boards[*i],
                event: TrackerEvent::Move(m.clone()),
            })
            .collect();
        store.write_batch(&writes).expect("moves written");
    }
    let during: Vec<(BoardId, RecordedMove)> = during
        .iter()
        .map(|(i, m)| (boards[*i], m.clone()))
        .collect();
    // Stored time of each board's ply, to tell how late it showed.
    let mut times: Vec<Vec<Millis>> = vec![Vec::new(); n];
    for (i, m) in &moves {
        times[*i].push(m.at_ms);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        thread::spawn(move || write_in_time(store, during, &stop))
    };
    let public = Hub::new();
    let publication = Publication {
        delay_ms: DELAY_MS,
        ..Publication::default()
    };
    let mut view = DelayedView::new(record, public.clone(), &db, publication, flow);
    // The first turns read everything in either flow, and then what the first one took long
    // over: not measured.
    for _ in 0..WARM_UP {
        view.turn(now_ms()).expect("a turn to warm up");
        thread::sleep(TICK);
    }
    let mut shown: Vec<usize> = plies(&public, n);
    let mut late = Vec::new();
    let mut turns = Vec::new();
    let mut excluded = 0u64;
    let (wall0, cpu0) = (Instant::now(), thread_cpu_ns());
    while wall0.elapsed() < Duration::from_secs(secs) {
        let t = Instant::now();
        view.turn(now_ms()).expect("a turn");
        turns.push(t.elapsed());
        let at = now_ms();
        // Reading the hub is the bench's, not the view's: its CPU is left out.
        let looking = thread_cpu_ns();
        for (i, now) in plies(&public, n).into_iter().enumerate() {
            for ply in shown[i]..now {
                if let Some(&stored) = times[i].get(ply) {
                    late.push(at.saturating_sub(stored + DELAY_MS));
                }
            }
            shown[i] = shown[i].max(now);
        }
        excluded += thread_cpu_ns() - looking;
        thread::sleep(TICK);
    }
    let wall = wall0.elapsed();
    let cpu = (thread_cpu_ns() - cpu0).saturating_sub(excluded);
    stop.store(true, Ordering::Relaxed);
    let _ = writer.join();
    assert_eq!(
        view.unseen(),
        0,
        "the backstop found changes the marks missed"
    );
    turns.sort();
    late.sort_unstable();
    Measured {
        cpu_pct: cpu as f64 / wall.as_nanos() as f64 * 100.0,
        turn_p50_ms: turns
            .get(turns.len() / 2)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0),
        turn_max_ms: turns.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
        late,
    }
}

/// The plies each board shows on `public`, by board index (`board0001` is 0).
fn plies(public: &Hub, n: usize) -> Vec<usize> {
    let mut out = vec![0; n];
    for b in public.snapshot().0 {
        if let Some(i) = b
            .name
            .strip_prefix("board")
            .and_then(|d| d.parse::<usize>().ok())
            .and_then(|k| k.checked_sub(1))
            .filter(|i| *i < n)
        {
            out[i] = b.ply as usize;
        }
    }
    out
}

/// Writes each move of `moves` (by time) once the wall clock reaches its stored time, until
/// `stop`.
fn write_in_time(mut store: Store, moves: Vec<(BoardId, RecordedMove)>, stop: &AtomicBool) {
    let mut next = 0;
    while !stop.load(Ordering::Relaxed) && next < moves.len() {
        let now = now_ms();
        let due = moves[next..].partition_point(|(_, m)| m.at_ms <= now);
        if due > 0 {
            let writes: Vec<Write> = moves[next..next + due]
                .iter()
                .map(|(board, m)| Write::Event {
                    board: *board,
                    event: TrackerEvent::Move(m.clone()),
                })
                .collect();
            store.write_batch(&writes).expect("moves written");
            next += due;
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// The calling thread's time on a core so far, in ns (`/proc/thread-self/schedstat`).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The `q` quantile of sorted `v`.
fn pct(v: &[u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v[((v.len() - 1) as f64 * q).round() as usize]
}
