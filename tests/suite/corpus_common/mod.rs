//! The chess corpus the suite plays (`../shared/corpus/chess`): every PGN file in name order,
//! with its stem and its games in file order. One reader for the modules that play all of it.

use boardscribe::emulator::{self, PgnGame};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");

/// Each corpus file's stem (`tatamast22`) and games.
pub fn chess_files() -> Vec<(String, Vec<PgnGame>)> {
    let mut files: Vec<_> = std::fs::read_dir(CORPUS)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pgn"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(f).unwrap();
            (stem, emulator::games_from_pgn(&text).unwrap())
        })
        .collect()
}

/// Every corpus game, file after file.
pub fn chess_games() -> Vec<PgnGame> {
    chess_files()
        .into_iter()
        .flat_map(|(_, games)| games)
        .collect()
}

/// Every corpus game, file after file, each named `stem#n` (1-based in its file).
pub fn named_chess_games() -> Vec<(String, PgnGame)> {
    chess_files()
        .into_iter()
        .flat_map(|(stem, games)| {
            games
                .into_iter()
                .enumerate()
                .map(move |(i, g)| (format!("{stem}#{}", i + 1), g))
        })
        .collect()
}
