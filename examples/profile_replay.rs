//! Profiling aid: the three real captures through `replay` into SQLite on a file, N times.
//! `cargo run --release --example profile_replay -- 500`, or under `perf stat -e instructions`
//! for comparisons that a busy machine does not blur. `PROFILE_IN_MEMORY=1` keeps the database
//! in memory (no file I/O); `PROFILE_PASSES=file` writes each pass's time (µs), one a line;
//! `PROFILE_CAPTURES=johan` (names, comma-separated) replays only those captures.
use boardscribe::{replay::replay_reader, store::Store};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let names = std::env::var("PROFILE_CAPTURES").unwrap_or_else(|_| String::from("1,2,johan"));
    let texts: Vec<(&str, String)> = names
        .split(',')
        .map(|name| {
            let path = format!(
                "{}/../shared/captures/dgt-arnsholt/{name}.capture",
                env!("CARGO_MANIFEST_DIR")
            );
            (name, std::fs::read_to_string(path).expect("capture"))
        })
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = if std::env::var_os("PROFILE_IN_MEMORY").is_some() {
        Store::open_in_memory()
    } else {
        Store::open(&dir.path().join("profile.db"))
    }
    .expect("store");
    let start = std::time::Instant::now();
    let mut frames = 0u64;
    let mut passes = Vec::with_capacity(n);
    for _ in 0..n {
        let pass = std::time::Instant::now();
        for (name, text) in &texts {
            let s = replay_reader(&mut store, name, name, text.as_bytes(), &mut |_, _| {})
                .expect("replay");
            frames += s.stats.frames;
        }
        passes.push(pass.elapsed().as_micros());
    }
    if let Some(path) = std::env::var_os("PROFILE_PASSES") {
        let text: String = passes.iter().map(|us| format!("{us}\n")).collect();
        std::fs::write(path, text).expect("write the passes' times");
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{frames} frames in {secs:.3} s: {:.2} M frames/s",
        frames as f64 / secs / 1e6
    );
    for file in ["profile.db", "profile.db-wal"] {
        if let Ok(meta) = std::fs::metadata(dir.path().join(file)) {
            println!("{file}: {} bytes", meta.len());
        }
    }
}
