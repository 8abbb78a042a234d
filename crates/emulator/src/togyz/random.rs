//! Seeded random togyz korgool games for the emulator: legal play from the start position.
//!
//! Flow: [`random_togyz_game`] draws a length of 40 to 160 plies from the seed and plays legal
//! moves until it is reached or the game is over (a store past 81, a player with no korgool to
//! move). The play is random but leans the way players do: a sowing that captures, or makes a
//! tuz, is taken half the time when there is one. Pure: seeded, no I/O.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use boardscribe_core::game::togyz::{Move, Position, Rules};

/// Mixed into the seed, so that a game's seed and its script's seed draw different streams.
const GAME_SEED: u64 = 0x7065_6b0e_5eed_0002;
const P_GAIN: f64 = 0.5;

/// A random legal togyz game from `seed` under `rules` (the same seed, the same game).
pub fn random_togyz_game(seed: u64, rules: Rules) -> Vec<Move> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ GAME_SEED);
    let plies = rng.random_range(40..=160);
    let mut pos = Position::with_rules(rules);
    let mut moves = Vec::with_capacity(plies);
    while moves.len() < plies && pos.outcome().is_none() {
        let mut legal: Vec<(Move, Position, bool)> = pos
            .legal_moves()
            .map(|m| {
                let (after, sowing) = pos.play_unchecked(m);
                (m, after, sowing.captured > 0 || sowing.tuz_created)
            })
            .collect();
        if legal.is_empty() {
            break;
        }
        let gains: Vec<usize> = (0..legal.len()).filter(|&i| legal[i].2).collect();
        let chosen = if !gains.is_empty() && rng.random_bool(P_GAIN) {
            gains[rng.random_range(0..gains.len())]
        } else {
            rng.random_range(0..legal.len())
        };
        let (mv, after, _) = legal.swap_remove(chosen);
        moves.push(mv);
        pos = after;
    }
    moves
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_legal_game_and_seeds_differ() {
        let a = random_togyz_game(7, Rules::KYRGYZ);
        assert_eq!(a, random_togyz_game(7, Rules::KYRGYZ));
        assert!((1..=160).contains(&a.len()), "{}", a.len());
        let mut pos = Position::with_rules(Rules::KYRGYZ);
        for m in &a {
            pos = pos.play(*m).expect("every move legal");
        }
        let games: std::collections::BTreeSet<Vec<Move>> = (0..20)
            .map(|s| random_togyz_game(s, Rules::KYRGYZ))
            .collect();
        assert!(games.len() > 15, "games vary: {}", games.len());
    }
}
