//! Profiling aid: the three real captures through sensor + tracker, N times (no store).
//! `cargo run --release --example profile_tracker -- 200` (or under valgrind --tool=callgrind).
use boardscribe::{
    capture::parse_capture,
    device::Direction,
    pipeline::DgtPipeline,
    protocol::{FrameReader, dgt::Mode},
};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let mut games = Vec::new();
    for name in ["1", "2", "johan"] {
        let path = format!(
            "{}/../shared/captures/dgt-arnsholt/{name}.capture",
            env!("CARGO_MANIFEST_DIR")
        );
        let cap = parse_capture(&std::fs::read_to_string(path).unwrap()).unwrap();
        let mut r = FrameReader::new(Mode::Single);
        let mut frames = Vec::new();
        for c in cap.chunks.iter().filter(|c| c.dir == Direction::FromBoard) {
            r.push(&c.bytes);
            while let Some(f) = r.next_frame() {
                frames.push((c.t_ms, f.unwrap()));
            }
        }
        games.push(frames);
    }
    let start = std::time::Instant::now();
    let mut total = 0;
    for _ in 0..n {
        for g in &games {
            let mut p = DgtPipeline::fresh();
            for (t, f) in g {
                p.feed_frame(*t, f.clone());
            }
            p.flush(g.last().unwrap().0);
            total += p.pending_events();
        }
    }
    let frames: usize = games.iter().map(Vec::len).sum::<usize>() * n;
    let el = start.elapsed();
    println!(
        "{frames} frames in {el:?}: {:.2} M frames/s ({total} writes)",
        frames as f64 / el.as_secs_f64() / 1e6
    );
}
