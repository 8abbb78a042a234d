//! A round as a broadcast reads it: one game per board, and the round's PGN.
//!
//! Which games: those of the round; per board number the newest game with a move, else the newest
//! (a start position set up after a game ended is the next round's, not a replacement), numbered
//! boards by number, then boards without a number by name. The round PGN is each of them as
//! [`pgn`](super::pgn), a blank line between games: what the relay serves as `/round.pgn`, pushes
//! to Lichess and writes as `games.pgn` in a LiveChess-style folder (`relay::folder`). Pure.

use super::{
    pgn::{ClockFormat, pgn_styled},
    publish::{BoardRange, PgnStyle},
};
use crate::store::GameRecord;

/// The round's PGN as a broadcast reads it: [`broadcast_games`], each as [`pgn`], a blank line
/// between games (the text of `games.pgn`, and what is pushed to Lichess).
pub fn round_pgn(games: &[GameRecord], round: u32) -> String {
    round_pgn_clk(games, round, ClockFormat::default())
}

/// [`round_pgn`] with clocks written in `clk`.
pub fn round_pgn_clk(games: &[GameRecord], round: u32, clk: ClockFormat) -> String {
    games_pgn(&broadcast_games(games, round), clk)
}

/// [`round_pgn`] in `style`, only the boards in `range` if given (a slice of a big round).
pub fn round_pgn_styled(
    games: &[GameRecord],
    round: u32,
    style: &PgnStyle,
    range: Option<&BoardRange>,
) -> String {
    let picked = broadcast_games(games, round);
    let picked = match range {
        Some(r) => r.select(&picked),
        None => picked,
    };
    games_pgn_styled(&picked, style)
}

/// `games` as PGN in `style`, a blank line between them.
pub fn games_pgn_styled(games: &[&GameRecord], style: &PgnStyle) -> String {
    games
        .iter()
        .map(|g| pgn_styled(g, style))
        .collect::<Vec<_>>()
        .join("\n")
}

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

/// `games` as PGN, a blank line between them.
pub fn games_pgn(games: &[&GameRecord], clk: ClockFormat) -> String {
    games_pgn_styled(games, &PgnStyle::internal(clk))
}
