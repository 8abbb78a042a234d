//! Writes a noisy emulated round as capture files, for `scripts/compare-exports`: chess games
//! from the corpus played at blitz, human and slow hands, some boards turned round, each with
//! seeded irregularities (Article 7) and seeded garbage bytes between reads; and togyz korgool
//! games from the Kazakh corpus. The same arguments always write the same files.
//!
//! `cargo run --release --example contract_round -- DIR [GAMES]` (default 12 chess games).

use std::{fs, path::PathBuf};

use boardscribe::emulator::{
    self, EmulatorOptions, TogyzEmulatorOptions, random_irregularities, script_pgn, script_togyz,
    togyz_records,
};
use boardscribe::game::togyz::Rules;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");

/// Seeded garbage between a capture's reads: about one read in `every` is followed by a run of
/// 1-12 random bytes from the board (decoders must skip them; what they cost is part of the
/// contract being compared).
fn with_noise(text: &str, seed: u64, every: u32) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = String::with_capacity(text.len() * 2);
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        let Some((time, rest)) = line.split_once(' ') else {
            continue;
        };
        if line.starts_with('#') || !rest.starts_with('<') || rng.random_range(0..every) != 0 {
            continue;
        }
        let bytes: Vec<String> = (0..rng.random_range(1..=12))
            .map(|_| format!("{:02x}", rng.random::<u8>()))
            .collect();
        out.push_str(&format!("{time} < {}\n", bytes.join(" ")));
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or("usage: contract_round DIR [GAMES]")?);
    let games: usize = args.next().map_or(Ok(12), |n| n.parse())?;
    fs::create_dir_all(&dir)?;
    let text = fs::read_to_string(format!("{SHARED}/chess/tatamast22.pgn"))?;
    let corpus = emulator::games_from_pgn(&text)?;
    for (i, game) in corpus.iter().take(games).enumerate() {
        let seed = 7_000 + i as u64;
        let opts = EmulatorOptions {
            speed: [0.3, 1.0, 3.0][i % 3],
            seed,
            rotated: i % 4 == 3,
            time_control: Some((15 * 60_000, 10_000)),
            irregularities: random_irregularities(seed, game.moves.len(), 0.04),
            ..EmulatorOptions::default()
        };
        let script = script_pgn(game, &opts)?;
        let capture = with_noise(&script.to_capture_text(), seed, 40);
        fs::write(dir.join(format!("board{:02}.capture", i + 1)), capture)?;
    }
    let text = fs::read_to_string(format!("{SHARED}/togyz/kazakh-2016-2018.pgn"))?;
    for (i, (_, moves)) in togyz_records(&text, Rules::KYRGYZ)?
        .iter()
        .take(3)
        .enumerate()
    {
        let opts = TogyzEmulatorOptions {
            seed: 9_000 + i as u64,
            rotated: i % 2 == 1,
            ..TogyzEmulatorOptions::default()
        };
        let script = script_togyz(moves, &opts)?;
        fs::write(
            dir.join(format!("togyz{:02}.capture", i + 1)),
            script.to_capture_text(),
        )?;
    }
    println!("{}", dir.display());
    Ok(())
}
