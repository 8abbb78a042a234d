//! Decode throughput over the real captures (`../shared/captures/dgt-arnsholt/`): the
//! board-to-host bytes of all three games, concatenated, through `FrameReader`; and capture
//! text parsing. Run with `cargo bench --bench decode`.

use std::hint::black_box;

use boardscribe::{
    capture::parse_capture,
    device::Direction,
    protocol::{FrameReader, dgt::Mode},
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

mod common;

use common::texts;

fn count_frames(r: &mut FrameReader) -> usize {
    let mut n = 0;
    while let Some(item) = r.next_frame() {
        n += usize::from(item.is_ok());
    }
    n
}

fn decode(c: &mut Criterion) {
    let texts = texts();
    let bytes: Vec<u8> = texts
        .iter()
        .flat_map(|t| {
            parse_capture(t)
                .expect("valid capture")
                .bytes(Direction::FromBoard)
        })
        .collect();
    let frames = count_frames(&mut {
        let mut r = FrameReader::new(Mode::Single);
        r.push(&bytes);
        r
    });
    println!(
        "{} board-to-host bytes, {frames} frames per iteration",
        bytes.len()
    );

    let mut g = c.benchmark_group("dgt_decode");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("frame_reader_whole", |b| {
        let mut r = FrameReader::new(Mode::Single);
        b.iter(|| {
            r.push(black_box(&bytes));
            count_frames(&mut r)
        })
    });
    g.bench_function("frame_reader_64_byte_reads", |b| {
        let mut r = FrameReader::new(Mode::Single);
        b.iter(|| {
            let mut n = 0;
            for chunk in black_box(&bytes).chunks(64) {
                r.push(chunk);
                n += count_frames(&mut r);
            }
            n
        })
    });
    g.finish();

    let all_text: String = texts.concat();
    let mut g = c.benchmark_group("capture_parse");
    g.throughput(Throughput::Bytes(all_text.len() as u64));
    g.bench_function("parse_capture", |b| {
        b.iter(|| {
            texts
                .iter()
                .map(|t| parse_capture(black_box(t)).map_or(0, |c| c.chunks.len()))
                .sum::<usize>()
        })
    });
    g.bench_function("parse_and_decode", |b| {
        let mut r = FrameReader::new(Mode::Single);
        b.iter(|| {
            let mut n = 0;
            for t in &texts {
                let Ok(cap) = parse_capture(black_box(t)) else {
                    continue;
                };
                for chunk in cap.chunks.iter().filter(|c| c.dir == Direction::FromBoard) {
                    r.push(&chunk.bytes);
                    n += count_frames(&mut r);
                }
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
