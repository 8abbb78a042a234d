//! Seeded Chess960 games for the emulator: a random start position and random legal play.
//!
//! Flow: [`chess960_game`] draws one of the 960 start positions from the seed, a length of 40 to
//! 120 plies, and plays legal moves until it is reached or the game is over (mate, stalemate,
//! insufficient material, a position on the board a third time). The play is random but leans
//! the way players do: a castling move when one is legal is taken half the time (so that every
//! castling shape of 960 comes up), a capture when one is possible a third of the time. The
//! result is a [`PgnGame`] with the tags a Chess960 PGN carries (`Variant`, `SetUp`, `FEN`), so
//! every script and export path takes it as it takes a corpus game. Pure: seeded, no I/O.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Color, EnPassantMode, Move, Position, fen::Fen, san::SanPlus};

use super::PgnGame;
use boardscribe_core::game::{Outcome, chess::chess960_starts};

/// Mixed into the seed, so that a game's seed and its script's seed draw different streams.
const GAME_SEED: u64 = 0x0960_c0de_5eed_0001;
const P_CASTLE: f64 = 0.5;
const P_CAPTURE: f64 = 0.33;

/// A random Chess960 game from `seed` (the same seed, the same game).
pub fn chess960_game(seed: u64) -> PgnGame {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ GAME_SEED);
    let starts = chess960_starts();
    let index = rng.random_range(0..starts.len().max(1));
    let start = starts.get(index).cloned().unwrap_or_default();
    let plies = rng.random_range(40..=120);
    let mut pos = start.clone();
    let mut moves: Vec<Move> = Vec::with_capacity(plies);
    let mut sans = Vec::with_capacity(plies);
    let mut seen: HashMap<String, u32> = HashMap::new();
    while moves.len() < plies && !pos.is_game_over() {
        let legal = pos.legal_moves();
        let castles: Vec<&Move> = legal.iter().filter(|m| m.is_castle()).collect();
        let captures: Vec<&Move> = legal.iter().filter(|m| m.is_capture()).collect();
        let chosen = if !castles.is_empty() && rng.random_bool(P_CASTLE) {
            castles[rng.random_range(0..castles.len())]
        } else if !captures.is_empty() && rng.random_bool(P_CAPTURE) {
            captures[rng.random_range(0..captures.len())]
        } else {
            &legal[rng.random_range(0..legal.len())]
        };
        let m = *chosen;
        sans.push(SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
        moves.push(m);
        // The placement and the side to move: a third time, the players would agree a draw.
        let mut key = pos.board().to_string();
        key.push(if pos.turn() == Color::White { 'w' } else { 'b' });
        let n = seen.entry(key).or_insert(0);
        *n += 1;
        if *n >= 3 {
            break;
        }
    }
    let outcome = match pos.outcome() {
        shakmaty::Outcome::Known(shakmaty::KnownOutcome::Decisive { winner }) => {
            Some(match winner {
                Color::White => Outcome::WhiteWins,
                Color::Black => Outcome::BlackWins,
            })
        }
        shakmaty::Outcome::Known(shakmaty::KnownOutcome::Draw) => Some(Outcome::Draw),
        shakmaty::Outcome::Unknown => None,
    };
    let fen = Fen::from_position(&start, EnPassantMode::Legal).to_string();
    let result = outcome.map_or("*", Outcome::as_pgn);
    let tags = [
        ("Event", "Emulated Chess960".to_owned()),
        ("Site", "boardscribe emulator".to_owned()),
        ("Round", "-".to_owned()),
        ("White", format!("Random White {seed}")),
        ("Black", format!("Random Black {seed}")),
        ("Result", result.to_owned()),
        ("Variant", "Chess960".to_owned()),
        ("SetUp", "1".to_owned()),
        ("FEN", fen),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    PgnGame {
        tags,
        start,
        moves,
        sans,
        outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_game_and_games_are_legal_960() {
        let a = chess960_game(7);
        let b = chess960_game(7);
        assert_eq!(a.moves, b.moves);
        assert_eq!(a.start.board(), b.start.board());
        assert!((1..=120).contains(&a.moves.len()));
        let mut pos = a.start.clone();
        for m in &a.moves {
            assert!(pos.is_legal(*m));
            pos.play_unchecked(*m);
        }
        assert_eq!(a.tag("Variant"), Some("Chess960"));
        let starts: std::collections::BTreeSet<String> = (0..50)
            .map(|s| chess960_game(s).start.board().to_string())
            .collect();
        assert!(starts.len() > 40, "starts vary: {}", starts.len());
    }
}
