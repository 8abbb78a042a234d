//! Debug aid: script one corpus game with the emulator and show what the tracker records.
//! `cargo run --release --example debug_game -- FILE INDEX SEED SCALE [ROTATED]`
use boardscribe::{
    emulator::{self, EmulatorOptions},
    replay::replay_reader,
    store::Store,
};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&a[1]).unwrap();
    let games = emulator::games_from_pgn(&text).unwrap();
    let game = &games[a[2].parse::<usize>().unwrap() - 1];
    let opts = EmulatorOptions {
        seed: a[3].parse().unwrap(),
        rotated: a.get(5).is_some_and(|r| r == "rotated"),
        ..EmulatorOptions::default()
    };
    let mut script = emulator::script_pgn(game, &opts).unwrap();
    script.scale_times(a[4].parse().unwrap());
    let text = script.to_capture_text();
    std::fs::write("/tmp/debug.capture", &text).unwrap();
    let mut store = Store::open_in_memory().unwrap();
    replay_reader(&mut store, "x", "x", text.as_bytes(), &mut |_, e| {
        println!("{e:?}")
    })
    .unwrap();
    for p in &script.plies {
        println!(
            "ply {} {} {:?} {}..{} press {:?}",
            p.ply, p.san, p.styles, p.start_ms, p.end_ms, p.press_ms
        );
    }
}
