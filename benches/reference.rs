//! boardscribe against the reference reconstructor, side by side in one run: arnsholt/dgtdriver's
//! in-memory `DgtDriver` + `MoveParser` (Java, warmed in a JVM that stays up), our tracker alone,
//! and our replay end to end (capture text → decode → sensor → tracker → referee → SQLite on a
//! file, committed), all over the three real captures (`../shared/captures/dgt-arnsholt/`; the
//! reference reads their original recordings, the `.inbytes` files), or the ones named by
//! `BENCH_CAPTURES` (in `BENCH_CAPTURES_DIR`, see `common::captures`).
//!
//! Flow: compile the reference from a checkout (`DGTDRIVER=/path/to/dgtdriver`; its sources are
//! not part of this project) and our driver (`benches/reference/ReferenceBench.java`) with
//! `javac`; warm both sides; then rounds, each timing our replay, our tracker and the
//! reference for about the same wall time, so that whatever the machine does meanwhile falls on
//! all three alike. It prints each side's median time per pass over the three games and the
//! ratios.
//!
//! Run: `DGTDRIVER=~/src/dgtdriver cargo bench --bench reference`
//! (`git clone https://github.com/arnsholt/dgtdriver` first; needs a JDK). Knobs:
//! `REFERENCE_ROUNDS` (9), `REFERENCE_ROUND_MS` (600 per side per round), `REFERENCE_IN_MEMORY`
//! (set: replay into SQLite in memory instead of a file, to tell the file's share).
//!
//! After the rounds, cycles: a few reference passes (about `REFERENCE_CYCLE_MS`, 15), then each
//! of ours for as long, `REFERENCE_CYCLES` (300) times; each cycle gives a ratio (the reference's
//! median pass over ours, in that cycle), and the median of these is printed beside the rounds'
//! ratio of medians. The rounds meet the machine's swings of speed (over seconds, here up to
//! 1.9x) at different moments for each side; a cycle's sides meet them at nearly the same one.

use std::{
    hint::black_box,
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use boardscribe::store::Store;

mod common;

use common::{captures, captures_dir, decoded, knob, replay_all, texts, time_for, track};

fn main() {
    let Some(checkout) = std::env::var_os("DGTDRIVER").map(PathBuf::from) else {
        eprintln!(
            "reference: set DGTDRIVER to a checkout of https://github.com/arnsholt/dgtdriver \
             (and have a JDK) to compare against it; nothing measured"
        );
        return;
    };
    let rounds: usize = knob("REFERENCE_ROUNDS", 9);
    let round = Duration::from_millis(knob("REFERENCE_ROUND_MS", 600));

    let classes = compile_reference(&checkout);
    let recordings: Vec<String> = captures()
        .iter()
        .map(|name| format!("{}/{name}.inbytes", captures_dir()))
        .collect();
    let mut java = Command::new("java")
        .arg("-cp")
        .arg(&classes)
        .arg("ReferenceBench")
        .args(&recordings)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("java runs");
    let mut to_java = java.stdin.take().expect("java's stdin");
    let mut from_java = BufReader::new(java.stdout.take().expect("java's stdout"));
    let mut reference = |n: usize| -> (Vec<Duration>, u64) {
        writeln!(to_java, "{n}").expect("request to java");
        let mut line = String::new();
        from_java.read_line(&mut line).expect("java answers");
        let (times, moves) = line.trim().split_once("moves ").expect("moves at the end");
        let times = times
            .split_whitespace()
            .map(|t| Duration::from_nanos(t.parse().expect("nanoseconds")))
            .collect();
        (times, moves.trim().parse().expect("a move count"))
    };

    let texts = texts();
    let games = decoded(&texts);
    let frames: usize = games.iter().map(Vec::len).sum();
    let dir = tempfile::tempdir().expect("temp dir");
    // REFERENCE_IN_MEMORY=1: replay into a database in memory, to tell the file's share.
    let mut store = if std::env::var_os("REFERENCE_IN_MEMORY").is_some() {
        Store::open_in_memory()
    } else {
        Store::open(&dir.path().join("reference.db"))
    }
    .expect("store");
    let mut ours_replay = || {
        assert_eq!(replay_all(&mut store, &texts) as usize, frames);
    };
    let mut ours_tracker = || {
        black_box(track(&games));
    };

    // Warm-up: the JVM's compilers and our caches, a few seconds each.
    let (_, moves) = reference(50);
    println!(
        "{frames} frames, {moves} moves by the reference per pass over the games ({})",
        captures().join(", ")
    );
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_secs(4) {
        reference(100);
    }
    time_for(Duration::from_secs(1), &mut ours_replay);
    time_for(Duration::from_secs(1), &mut ours_tracker);

    let (mut java_t, mut replay_t, mut tracker_t) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        replay_t.extend(time_for(round, &mut ours_replay));
        tracker_t.extend(time_for(round, &mut ours_tracker));
        let per = java_t.last().copied().unwrap_or(Duration::from_millis(3));
        let n = (round.as_nanos() / per.as_nanos().max(1)).clamp(10, 2000) as usize;
        java_t.extend(reference(n).0);
    }
    // Cycles of a few passes of each side in turn (about 15 ms each): a machine whose speed
    // swings over seconds meets the three sides of one cycle at nearly the same speed, and the
    // cycles' ratios (medians of their passes) are taken through their median.
    let cycle = Duration::from_millis(knob("REFERENCE_CYCLE_MS", 15));
    let cycles: usize = knob("REFERENCE_CYCLES", 300);
    let per = median(&java_t);
    let n = (cycle.as_nanos() / per.as_nanos().max(1)).clamp(2, 50) as usize;
    let (mut replay_r, mut tracker_r) = (Vec::new(), Vec::new());
    for _ in 0..cycles {
        let java_c = median(&reference(n).0);
        let replay_c = median(&time_for(cycle, &mut ours_replay));
        let tracker_c = median(&time_for(cycle, &mut ours_tracker));
        replay_r.push(java_c.as_secs_f64() / replay_c.as_secs_f64());
        tracker_r.push(java_c.as_secs_f64() / tracker_c.as_secs_f64());
    }
    drop(to_java);
    let _ = java.wait();

    let (java_m, replay_m, tracker_m) = (median(&java_t), median(&replay_t), median(&tracker_t));
    println!("median per pass (p10 .. p90), {rounds} interleaved rounds:");
    for (name, m, all) in [
        (
            "reference: dgtdriver MoveParser, in memory",
            java_m,
            &java_t,
        ),
        (
            "boardscribe replay end to end, durable",
            replay_m,
            &replay_t,
        ),
        ("boardscribe tracker alone", tracker_m, &tracker_t),
    ] {
        println!(
            "  {name:<44} {:>9.1} us  ({:.1} .. {:.1}, {} passes)",
            us(m),
            us(quantile(all, 0.1)),
            us(quantile(all, 0.9)),
            all.len()
        );
    }
    println!(
        "replay end to end: {:.2}x the reference; tracker alone: {:.2}x",
        us(java_m) / us(replay_m),
        us(java_m) / us(tracker_m)
    );
    let (replay_r, tracker_r) = (sorted(replay_r), sorted(tracker_r));
    println!(
        "by cycles ({cycles} of {n} reference passes and {} ms of each of ours), the median \
         cycle's ratio (p10 .. p90):",
        cycle.as_millis()
    );
    for (name, r) in [
        ("replay end to end", &replay_r),
        ("tracker alone", &tracker_r),
    ] {
        println!(
            "  {name:<18} {:.2}x  ({:.2} .. {:.2})",
            at_quantile(r, 0.5),
            at_quantile(r, 0.1),
            at_quantile(r, 0.9)
        );
    }
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// The value at quantile `q` of `sorted`.
fn at_quantile<T: Copy>(sorted: &[T], q: f64) -> T {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Compiles the reference's main sources and our driver into the bench's own folder.
fn compile_reference(checkout: &Path) -> PathBuf {
    let sources = checkout.join("src/main/java");
    let mut files = Vec::new();
    let mut dirs = vec![sources.clone()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "java") {
                files.push(path);
            }
        }
    }
    assert!(
        !files.is_empty(),
        "no Java sources under {}",
        sources.display()
    );
    files.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/reference/ReferenceBench.java"));
    let classes = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reference-classes");
    let status = Command::new("javac")
        .arg("-nowarn")
        .arg("-d")
        .arg(&classes)
        .args(&files)
        .status()
        .expect("javac runs");
    assert!(status.success(), "javac failed");
    classes
}

fn median(times: &[Duration]) -> Duration {
    quantile(times, 0.5)
}

fn quantile(times: &[Duration], q: f64) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    at_quantile(&sorted, q)
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
