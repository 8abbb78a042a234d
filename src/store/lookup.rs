//! Finding a game the way the arbiter names it: by the board's number in the hall.
//!
//! Flow: [`Store::games_on_board`] lists every game played on the board numbered N (the number
//! the game took when it began, else the board's number now), with the round each began in and
//! the current round; the caller picks one (the latest of the current round) and says what was
//! missing or ambiguous. Read-only.

use super::{GameId, Store, StoreError};

/// A game on a numbered board, as [`Store::games_on_board`] lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoardGame {
    pub game: GameId,
    /// The round the game began in, if a round was set then.
    pub round: Option<u32>,
    /// Whether the game is still open (not ended by a new game on its board).
    pub open: bool,
}

/// The games on one board number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardGames {
    pub number: u32,
    /// The round games starting now take ([`Store::round_info`]); `None`: no round set.
    pub current_round: Option<u32>,
    /// Every game on the board, oldest first.
    pub games: Vec<BoardGame>,
}

impl BoardGames {
    /// The games of the current round (all of them when no round is set), oldest first.
    pub fn in_current_round(&self) -> Vec<BoardGame> {
        self.games
            .iter()
            .filter(|g| self.current_round.is_none() || g.round == self.current_round)
            .copied()
            .collect()
    }
}

impl Store {
    /// Every game on the board numbered `number`, oldest first, with the current round.
    pub fn games_on_board(&self, number: u32) -> Result<BoardGames, StoreError> {
        let current_round = self.round_info()?.map(|r| r.round);
        let mut stmt = self.conn.prepare_cached(
            "SELECT g.id, g.round, g.ended_at_ms IS NULL FROM games g \
             JOIN boards b ON b.id = g.board_id \
             WHERE COALESCE(g.board_no, b.number) = ?1 ORDER BY g.id",
        )?;
        let games = stmt
            .query_map([number], |r| {
                let round: Option<String> = r.get(1)?;
                Ok(BoardGame {
                    game: r.get(0)?,
                    round: round.and_then(|s| s.trim().parse().ok()),
                    open: r.get(2)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(BoardGames {
            number,
            current_round,
            games,
        })
    }
}
