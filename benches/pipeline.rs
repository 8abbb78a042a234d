//! Pipeline throughput on the real captures (`../shared/captures/dgt-arnsholt/`, all three games):
//! - `tracker`: decoded frames through the sensor state and the tracker alone (no decoding, no
//!   referee, no store);
//! - `tracker_and_referee`: the same through [`DgtPipeline::feed_frame`], which adds the referee
//!   (the Laws applied to every event and clock reading) and the store writes it prepares;
//! - `replay_end_to_end`: capture text through `replay` (parse, decode, track) into SQLite on a file;
//! - `gap_search`: the search after a gap ([`search_gap`], at its bound: runs of two plies,
//!   verified four deep, 20,000 positions at most) from a middlegame of the corpus, for a board
//!   it resolves (two knight moves), one it finds ambiguous (a pawn that may have gone one square at
//!   a time: the verification explores four plies) and one it cannot reach (three plies ahead).
//!
//! Run with `cargo bench --bench pipeline`. Throughput is in frames (elements) per second.

use std::hint::black_box;

use boardscribe::{
    game::chess::ChessGame,
    pipeline::DgtPipeline,
    store::Store,
    tracker::{GapSearch, search_gap},
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shakmaty::{Chess, Position, san::San};

mod common;

use common::{decoded, replay_all, texts, track};

fn pipeline(c: &mut Criterion) {
    let texts = texts();
    let games = decoded(&texts);
    let frames: usize = games.iter().map(Vec::len).sum();
    println!("{frames} frames per iteration (three real games)");

    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Elements(frames as u64));
    g.bench_function("tracker", |b| b.iter(|| black_box(track(&games))));
    g.bench_function("tracker_and_referee", |b| {
        b.iter(|| {
            let mut moves = 0;
            for game in &games {
                let mut p = DgtPipeline::fresh();
                for (t, f) in game {
                    p.feed_frame(*t, f.clone());
                }
                p.flush(game.last().map_or(0, |x| x.0));
                moves += p.pending_events();
            }
            black_box(moves)
        })
    });

    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = Store::open(&dir.path().join("bench.db")).expect("store");
    g.bench_function("replay_end_to_end", |b| {
        b.iter(|| assert_eq!(replay_all(&mut store, &texts) as usize, frames))
    });
    g.finish();
}

/// The position after `sans` from the start.
fn after(sans: &[&str]) -> Chess {
    let mut pos = Chess::default();
    for san in sans {
        let m = san
            .parse::<San>()
            .expect("SAN")
            .to_move(&pos)
            .expect("legal");
        pos.play_unchecked(m);
    }
    pos
}

fn gap_search(c: &mut Criterion) {
    use boardscribe::game::GameKind;
    // A Ruy Lopez after 10 moves: 30-odd legal moves on each side.
    let opening = [
        "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7", "Re1", "b5", "Bb3",
        "d6", "c3", "O-O", "h3", "Na5", "Bc2", "c5",
    ];
    let from = after(&opening);
    let target = |more: &[&str]| {
        let all: Vec<&str> = opening.iter().chain(more).copied().collect();
        ChessGame::reading(&after(&all))
    };
    let cases = [
        ("resolved: two knight moves", target(&["Na3", "Nc6"]), Ok(2)),
        (
            "ambiguous: a pawn two squares",
            target(&["d4", "Qc7"]),
            Err(GapSearch::Ambiguous),
        ),
        (
            "unreachable: three plies ahead",
            target(&["d4", "Qc7", "Na3"]),
            Err(GapSearch::Nothing),
        ),
    ];
    let mut g = c.benchmark_group("gap_search");
    for (name, sensed, want) in &cases {
        let got = search_gap::<ChessGame>(&from, sensed, 2, 20_000).map(|p| p.len());
        assert_eq!(&got, want, "{name}");
        g.bench_function(*name, |b| {
            b.iter(|| black_box(search_gap::<ChessGame>(&from, sensed, 2, 20_000)))
        });
    }
    // Deeper than the daemon searches, to see what a bound costs: four plies of four moves
    // (each side two), looked for up to six plies deep.
    let four = target(&["d4", "Qc7", "Na3", "Nc6"]);
    for budget in [20_000, 200_000] {
        g.bench_function(format!("four plies, bound six, budget {budget}"), |b| {
            b.iter(|| black_box(search_gap::<ChessGame>(&from, &four, 4, budget)))
        });
    }
    println!(
        "four plies, bound six: {:?} (budget 20000), {:?} (budget 200000)",
        search_gap::<ChessGame>(&from, &four, 4, 20_000).map(|p| p.len()),
        search_gap::<ChessGame>(&from, &four, 4, 200_000).map(|p| p.len())
    );
    g.finish();
}

criterion_group!(benches, pipeline, gap_search);
criterion_main!(benches);
