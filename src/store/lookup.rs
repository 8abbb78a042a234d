//! Finding a game the way the arbiter names it: by the board's number in the hall.
//!
//! Flow: [`Store::games_on_board`] lists every game played on the board numbered N (the number
//! the game took when it began, else the board's number now), with the round each began in and
//! the current round; the caller picks one (the latest of the current round) and says what was
//! missing or ambiguous. [`Store::board_of_latest_game`] names the board a game is the latest
//! game of (the board whose task may be recording it). Read-only.

use rusqlite::OptionalExtension;

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

impl Store {
    /// The name of the board whose latest game (by id) is `game`: the board whose task may be
    /// recording it now. `None` when a later game began on its board, or there is no such game.
    pub fn board_of_latest_game(&self, game: GameId) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT b.name FROM games g JOIN boards b ON b.id = g.board_id \
                 WHERE g.id = ?1 \
                 AND g.id = (SELECT MAX(later.id) FROM games later WHERE later.board_id = g.board_id)",
            )?
            .query_row([game], |r| r.get(0))
            .optional()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Kind;
    use crate::store::begin_test_game;

    #[test]
    fn a_game_names_its_board_while_it_is_the_boards_latest() {
        let mut store = Store::open_in_memory().unwrap();
        let b1 = store.board("b1", Kind::Chess).unwrap();
        let b2 = store.board("b2", Kind::Chess).unwrap();
        let first = begin_test_game(&mut store, b1, 0);
        let other = begin_test_game(&mut store, b2, 10);
        assert_eq!(
            store.board_of_latest_game(first).unwrap().as_deref(),
            Some("b1")
        );
        // A game on another board does not make it older.
        assert_eq!(
            store.board_of_latest_game(other).unwrap().as_deref(),
            Some("b2")
        );
        let second = begin_test_game(&mut store, b1, 20);
        assert_eq!(store.board_of_latest_game(first).unwrap(), None);
        assert_eq!(
            store.board_of_latest_game(second).unwrap().as_deref(),
            Some("b1")
        );
        assert_eq!(store.board_of_latest_game(GameId(999)).unwrap(), None);
    }
}
