//! Which game of a round each board shows: the one a broadcast, the round's exports and the
//! standings read.
//!
//! Which games: those of the round; per board number the newest game with a move, else the newest
//! (a start position set up after a game ended is the next round's, not a replacement), numbered
//! boards by number, then boards without a number by name. Pure.

use super::GameRecord;

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
