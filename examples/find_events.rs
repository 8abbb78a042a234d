//! Debug aid: play every game of a PGN file through the emulator and replay, and list the games
//! where the tracker recorded revisions or takebacks (none are scripted).
//! `cargo run --release --example find_events -- FILE SCALE [SEED_OFFSET]`
use boardscribe::{
    emulator::{self, EmulatorOptions},
    replay::replay_reader,
    store::Store,
    tracker::TrackerEvent,
};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&a[1]).unwrap();
    let scale: f64 = a[2].parse().unwrap();
    let offset: u64 = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut store = Store::open_in_memory().unwrap();
    for (i, game) in emulator::games_from_pgn(&text).unwrap().iter().enumerate() {
        let opts = EmulatorOptions {
            seed: i as u64 + offset,
            rotated: i % 7 == 0,
            ..EmulatorOptions::default()
        };
        let mut script = emulator::script_pgn(game, &opts).unwrap();
        script.scale_times(scale);
        let text = script.to_capture_text();
        let mut found = Vec::new();
        replay_reader(&mut store, "x", "x", text.as_bytes(), &mut |_, e| {
            if matches!(
                e,
                TrackerEvent::Revision { .. } | TrackerEvent::Takeback { .. }
            ) {
                found.push(format!("{e:?}"));
            }
        })
        .unwrap();
        for f in found {
            println!(
                "game {} seed {}: {}",
                i + 1,
                opts.seed,
                &f[..f.len().min(200)]
            );
        }
    }
}
