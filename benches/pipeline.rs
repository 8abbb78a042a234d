//! Pipeline throughput on the real captures (`../shared/captures/dgt-arnsholt/`, all three games):
//! - `tracker`: decoded frames through the sensor state and the tracker alone (no decoding, no
//!   referee, no store);
//! - `tracker_and_referee`: the same through [`DgtPipeline::feed_frame`], which adds the referee
//!   (the Laws applied to every event and clock reading) and the store writes it prepares;
//! - `replay_end_to_end`: capture text through `replay` (parse, decode, track) into SQLite on a file.
//!
//! Run with `cargo bench --bench pipeline`. Throughput is in frames (elements) per second.

use std::hint::black_box;

use boardscribe::{
    device::{Direction, capture::parse_capture, replay::replay_reader},
    game::chess::ChessGame,
    pipeline::DgtPipeline,
    protocol::{
        FrameReader,
        dgt::{Frame, Mode},
    },
    sensor::dgt::{ClockReading, DgtBoardState},
    store::{BoardId, Store},
    tracker::{Tracker, TrackerEvent, TrackerSettings},
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
            let mut events = Vec::new();
            let mut n = 0;
            for game in &games {
                let mut sensor = DgtBoardState::default();
                let mut tracker = Tracker::<ChessGame>::new(TrackerSettings::default());
                for (t, f) in game {
                    match f {
                        Frame::BoardDump(dump) => {
                            sensor.apply_dump(dump);
                            tracker.observe(*t, &sensor, &mut events);
                        }
                        Frame::FieldUpdate { square, piece }
                            if sensor.apply_field(*square, *piece) && sensor.is_known() =>
                        {
                            tracker.observe(*t, &sensor, &mut events);
                        }
                        Frame::BwTime(bw) => {
                            if let Some(reading) = ClockReading::from_bwtime(bw) {
                                tracker.clock(*t, reading, &mut events);
                            }
                        }
                        _ => {}
                    }
                }
                tracker.flush(game.last().map_or(0, |x| x.0), &mut events);
                n += events.len();
                events.clear();
            }
            black_box(n)
        })
    });
    g.bench_function("tracker_and_referee", |b| {
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
