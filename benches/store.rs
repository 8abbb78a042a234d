//! Store write path: one game's moves and a capture's raw reads per `write_batch`, on a real file.
//!
//! The replay target is > 2 million frames/s end to end; a batch of ~1000 reads and ~60 moves has
//! to cost well under a millisecond.

use std::{fs, hint::black_box, ops::ControlFlow, path::Path, time::Duration};

use boardscribe::{
    device::Direction,
    game::Kind,
    sensor::Orientation,
    store::{BoardId, RawBuffer, RawChunk, Store, Write},
    tracker::event::{RecordedMove, TrackerEvent},
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pgn_reader::{Reader, SanPlus, Visitor};
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position, fen::Fen, san::SanPlus as Sp};

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/chess/WorldChamp1886.pgn"
);
const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/captures/dgt-arnsholt/2.capture"
);

struct Moves;

impl Visitor for Moves {
    type Tags = ();
    type Movetext = (Chess, Vec<Move>);
    type Output = Vec<Move>;

    fn begin_tags(&mut self) -> ControlFlow<Vec<Move>> {
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _: ()) -> ControlFlow<Vec<Move>, Self::Movetext> {
        ControlFlow::Continue((Chess::default(), Vec::new()))
    }

    fn san(&mut self, mt: &mut Self::Movetext, san: SanPlus) -> ControlFlow<Vec<Move>> {
        match san.san.to_move(&mt.0) {
            Ok(m) => {
                mt.0.play_unchecked(m);
                mt.1.push(m);
                ControlFlow::Continue(())
            }
            Err(_) => ControlFlow::Break(Vec::new()),
        }
    }

    fn end_game(&mut self, mt: Self::Movetext) -> Vec<Move> {
        mt.1
    }
}

/// The first corpus game of 55 to 70 plies, as the tracker records it.
fn game_moves() -> Vec<RecordedMove> {
    let bytes = fs::read(CORPUS).expect("corpus");
    let mut reader = Reader::new(&bytes[..]);
    let moves = std::iter::from_fn(|| reader.read_game(&mut Moves).expect("pgn"))
        .find(|m| (55..=70).contains(&m.len()))
        .expect("a game of about 60 plies");
    let mut pos = Chess::default();
    let mut clocks = [5_400_000u64; 2];
    moves
        .iter()
        .enumerate()
        .map(|(i, m)| {
            clocks[i % 2] -= 20_000;
            let uci = m.to_uci(CastlingMode::Standard).to_string();
            let notation = Sp::from_move_and_play_unchecked(&mut pos, *m).to_string();
            RecordedMove {
                ply: i as u32 + 1,
                notation,
                uci: Some(uci),
                position: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
                at_ms: 1000 * i as u64 + 500,
                clock_white_ms: Some(clocks[0]),
                clock_black_ms: Some(clocks[1]),
                time_trouble: false,
            }
        })
        .collect()
}

/// Every line of a real capture as one read.
fn capture_reads() -> Vec<RawChunk> {
    let text = fs::read_to_string(CAPTURE).expect("capture");
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let mut parts = line.split_whitespace();
            let secs: f64 = parts.next().and_then(|s| s.parse().ok()).expect("time");
            let dir = match parts.next() {
                Some(">") => Direction::ToBoard,
                _ => Direction::FromBoard,
            };
            let bytes = parts
                .map(|h| u8::from_str_radix(h, 16).expect("hex"))
                .collect();
            RawChunk {
                t_ms: (secs * 1000.0) as u64,
                dir,
                bytes,
            }
        })
        .collect()
}

fn game_batch(board: BoardId, moves: &[RecordedMove]) -> Vec<Write> {
    let start = TrackerEvent::GameStarted {
        at_ms: 0,
        orientation: Orientation::Normal,
        start: None,
    };
    std::iter::once(start)
        .chain(moves.iter().cloned().map(TrackerEvent::Move))
        .map(|event| Write::Event { board, event })
        .collect()
}

fn bench(c: &mut Criterion) {
    let moves = game_moves();
    let reads = capture_reads();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("bench.db")).expect("store");
    let board = store.board("bench", Kind::Chess).expect("board");

    let mut group = c.benchmark_group("store");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(reads.len() as u64));

    group.bench_function(format!("raw_buffer/{}_reads", reads.len()), |b| {
        let mut buf = RawBuffer::new();
        b.iter(|| {
            for r in &reads {
                buf.push(r.t_ms, r.dir, &r.bytes);
            }
            black_box(buf.take())
        })
    });

    let mut buf = RawBuffer::new();
    for r in &reads {
        buf.push(r.t_ms, r.dir, &r.bytes);
    }
    let block = buf.take().expect("reads");
    let name = format!(
        "write_batch/{}_moves_{}_reads_as_one_block",
        moves.len(),
        reads.len()
    );
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut batch = game_batch(board, &moves);
            batch.push(Write::RawBlock {
                board,
                block: block.clone(),
            });
            black_box(store.write_batch(&batch).expect("write"))
        })
    });

    let name = format!(
        "write_batch/{}_moves_{}_single_reads",
        moves.len(),
        reads.len()
    );
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut batch = game_batch(board, &moves);
            batch.extend(reads.iter().map(|chunk| Write::Raw {
                board,
                chunk: chunk.clone(),
            }));
            black_box(store.write_batch(&batch).expect("write"))
        })
    });

    group.bench_function(format!("write_batch/{}_reads_only", reads.len()), |b| {
        b.iter(|| {
            let batch = [Write::RawBlock {
                board,
                block: block.clone(),
            }];
            black_box(store.write_batch(&batch).expect("write"))
        })
    });
    let mut mem = Store::open_in_memory().expect("store");
    let mboard = mem.board("bench", Kind::Chess).expect("board");
    group.bench_function("write_batch/in_memory_game_only", |b| {
        b.iter(|| black_box(mem.write_batch(&game_batch(mboard, &moves)).expect("write")))
    });
    group.finish();

    store.integrity_check().expect("integrity");
    assert!(Path::new(&dir.path().join("bench.db")).exists());
}

criterion_group!(benches, bench);
criterion_main!(benches);
