//! A round as a broadcast reads it: one game per board, and the round's PGN.
//!
//! Which games: those of the round; per board number the newest game with a move, else the newest
//! (a start position set up after a game ended is the next round's, not a replacement), numbered
//! boards by number, then boards without a number by name. The round PGN is each of them through
//! [`write_pgn`](super::pgn::write_pgn): what the relay serves as `/round.pgn`, pushes to Lichess
//! and writes as `games.pgn` in a LiveChess-style folder (`broadcast::folder`). Pure.

use crate::store::GameRecord;

/// One game per board of round `round`, as the module doc says: numbered boards by number,
/// then unnumbered boards by name.
pub fn broadcast_games(games: &[GameRecord], round: u32) -> Vec<&GameRecord> {
    let mut picked: Vec<&GameRecord> = Vec::new();
    for g in games.iter().filter(|g| g.round == Some(round)) {
        let same_board = |p: &&GameRecord| match g.board_no {
            Some(n) => p.board_no == Some(n),
            None => p.board_no.is_none() && p.board == g.board,
        };
        match picked.iter().position(same_board) {
            None => picked.push(g),
            Some(i) => {
                let old = picked[i];
                // More moves wins over none; otherwise the newer game.
                let better = match (old.moves.is_empty(), g.moves.is_empty()) {
                    (true, false) => true,
                    (false, true) => false,
                    _ => g.id > old.id,
                };
                if better {
                    picked[i] = g;
                }
            }
        }
    }
    picked.sort_by(|a, b| {
        (a.board_no.is_none(), a.board_no, &a.board_name, a.id).cmp(&(
            b.board_no.is_none(),
            b.board_no,
            &b.board_name,
            b.id,
        ))
    });
    picked
}
