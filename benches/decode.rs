//! Decode throughput over the real captures (`../shared/captures/dgt-arnsholt/`): the
//! board-to-host bytes of all three games, concatenated, through `FrameReader`; and capture
//! text parsing; and a row per other vendor's wire (`vendor_decode`: ChessLink, Chessnut,
//! Certabo). Run with `cargo bench --bench decode`.

use std::hint::black_box;

use boardscribe::{
    capture::parse_capture,
    device::Direction,
    emulator::{self, EmulatorOptions, Payload},
    protocol::{
        FrameReader, Wire, certabo as ca, chesslink as cl, chessnut as cn, dgt::Mode,
        ichessone as ic,
    },
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

/// Frames a reader cuts off `bytes` pushed whole, errors not counted.
fn frames_of<W: Wire>(wire: W, bytes: &[u8]) -> usize {
    let mut r = FrameReader::with_wire(wire);
    r.push(bytes);
    std::iter::from_fn(|| r.next_frame())
        .filter(Result::is_ok)
        .count()
}

/// One row per vendor: each board-to-host stream through its wire in 64-byte reads. ChessLink:
/// 20 corpus games played on emulated ChessLink boards; Chessnut: the same games' positions as
/// USB position reports; iChessOne: the same games played on emulated iChessOne boards;
/// Certabo: the real records of fixtures/certabo (cer2nut's), repeated to 1 MB.
fn vendors(c: &mut Criterion) {
    let pgn = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/chess/Capablanca.pgn"
    ))
    .expect("the chess corpus");
    let games = emulator::games_from_pgn(&pgn).expect("a PGN");
    let mut chesslink = Vec::new();
    let mut chessnut = Vec::new();
    let mut ichessone = Vec::new();
    for (i, g) in games.iter().take(20).enumerate() {
        let opts = EmulatorOptions {
            seed: i as u64,
            clock: false,
            ..EmulatorOptions::default()
        };
        let Ok(script) = emulator::script_pgn(g, &opts) else {
            continue;
        };
        for e in emulator::ichessone_script(&script).events {
            if let Payload::Frame(f) = &e.payload {
                ichessone.extend(f.to_bytes());
            }
        }
        for e in emulator::chesslink_script(&script).events {
            if let Payload::Frame(f) = &e.payload {
                chesslink.extend(f.to_bytes());
                if let cl::Frame::Status(report) = f {
                    let squares = report.to_squares(cl::Orientation::Normal);
                    chessnut.extend(
                        cn::Frame::usb_position(cn::WirePlacement::from_squares(&squares))
                            .to_bytes(),
                    );
                }
            }
        }
    }
    let mut certabo = Vec::new();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/certabo");
    let mut records = Vec::new();
    for entry in std::fs::read_dir(dir).expect("fixtures/certabo") {
        let path = entry.expect("a fixture").path();
        if path.extension().is_some_and(|e| e == "txt") {
            records.extend(std::fs::read(&path).expect("a fixture"));
        }
    }
    while certabo.len() < 1 << 20 && !records.is_empty() {
        certabo.extend(&records);
    }
    let mut g = c.benchmark_group("vendor_decode");
    println!(
        "chesslink: {} bytes, {} frames; chessnut: {} bytes, {} frames; certabo: {} bytes, {} \
         frames; ichessone: {} bytes, {} frames per iteration",
        chesslink.len(),
        frames_of(cl::ChessLink, &chesslink),
        chessnut.len(),
        frames_of(cn::Chessnut, &chessnut),
        certabo.len(),
        frames_of(ca::Certabo, &certabo),
        ichessone.len(),
        frames_of(ic::IChessOne, &ichessone)
    );
    g.throughput(Throughput::Bytes(chesslink.len() as u64));
    g.bench_function("chesslink", |b| {
        b.iter(|| in_reads(cl::ChessLink, black_box(&chesslink)))
    });
    g.throughput(Throughput::Bytes(chessnut.len() as u64));
    g.bench_function("chessnut", |b| {
        b.iter(|| in_reads(cn::Chessnut, black_box(&chessnut)))
    });
    g.throughput(Throughput::Bytes(certabo.len() as u64));
    g.bench_function("certabo", |b| {
        b.iter(|| in_reads(ca::Certabo, black_box(&certabo)))
    });
    g.throughput(Throughput::Bytes(ichessone.len() as u64));
    g.bench_function("ichessone", |b| {
        b.iter(|| in_reads(ic::IChessOne, black_box(&ichessone)))
    });
    g.finish();
}

/// `bytes` through `wire` in 64-byte reads, as a serial port hands them over: the frames cut.
fn in_reads<W: Wire>(wire: W, bytes: &[u8]) -> usize {
    let mut r = FrameReader::with_wire(wire);
    let mut n = 0;
    for chunk in bytes.chunks(64) {
        r.push(chunk);
        n += std::iter::from_fn(|| r.next_frame()).count();
    }
    n
}

criterion_group!(benches, decode, vendors);
criterion_main!(benches);
