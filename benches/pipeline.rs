//! Pipeline throughput on the real captures (`../shared/captures/dgt-arnsholt/`, all three games):
//! - `tracker`: decoded frames through the sensor state and the tracker (no decoding, no store);
//! - `replay_end_to_end`: capture text through `replay` (parse, decode, track) into SQLite on a file.
//!
//! Run with `cargo bench --bench pipeline`. Throughput is in frames (elements) per second.

use std::hint::black_box;

use boardscribe::{
    device::{Direction, capture::parse_capture, replay::replay_reader},
    pipeline::DgtPipeline,
    protocol::{FrameReader, dgt::Mode},
    store::{BoardId, Store},
    tracker::TrackerEvent,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

mod common;

use common::{CAPTURES, texts};

/// Each capture as (time, frame) pairs, decoded once.
fn decoded(texts: &[String]) -> Vec<Vec<(u64, boardscribe::protocol::dgt::Frame)>> {
    texts
        .iter()
        .map(|t| {
            let cap = parse_capture(t).expect("valid capture");
            let mut reader = FrameReader::new(Mode::Single);
            let mut out = Vec::new();
            for chunk in cap.chunks.iter().filter(|c| c.dir == Direction::FromBoard) {
                reader.push(&chunk.bytes);
                while let Some(f) = reader.next_frame() {
                    out.push((chunk.t_ms, f.expect("real captures decode cleanly")));
                }
            }
            out
        })
        .collect()
}

fn pipeline(c: &mut Criterion) {
    let texts = texts();
    let games = decoded(&texts);
    let frames: usize = games.iter().map(Vec::len).sum();
    println!("{frames} frames per iteration (three real games)");

    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Elements(frames as u64));
    g.bench_function("tracker", |b| {
        b.iter(|| {
            let mut moves = 0;
            for game in &games {
                let mut p = DgtPipeline::fresh(BoardId(1));
                for (t, f) in game {
                    p.feed_frame(*t, f.clone());
                }
                p.flush(game.last().map_or(0, |x| x.0));
                moves += p.pending_writes();
            }
            black_box(moves)
        })
    });

    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = Store::open(&dir.path().join("bench.db")).expect("store");
    g.bench_function("replay_end_to_end", |b| {
        b.iter(|| {
            let mut n = 0;
            for (name, text) in CAPTURES.iter().zip(&texts) {
                let s = replay_reader(
                    &mut store,
                    name,
                    name,
                    text.as_bytes(),
                    &mut |_, e: &TrackerEvent| {
                        black_box(e);
                    },
                )
                .expect("replay");
                n += s.stats.frames;
            }
            assert_eq!(n as usize, frames);
        })
    });
    g.finish();
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
