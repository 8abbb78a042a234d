//! The arbiter's word is final: a result the arbiter set (anything but `*`) stands against
//! whatever the board does later, and it closes the game, so that the board no longer extends it.
//!
//! Flow: [`Store::set_result`](super::Store::set_result) calls [`close_decided`] in its
//! transaction: a final result ends the game at the last time its board was heard in it (stream
//! time, as a game end does). The writer ([`super::write`]) keeps a result gesture or a game end
//! from overwriting an arbiter's result ([`NO_ARBITER_RESULT`]); an event of a board whose game
//! is closed is kept without a game, as between games, and the batch names the closed game
//! ([`ClosedGame`]) so that the board's task ends its game too. A game still open with an
//! arbiter's result (a database written before this rule) is closed when its board is prepared
//! ([`Store::close_if_decided`]).

use rusqlite::{Connection, OptionalExtension};

use super::{BoardId, GameId, Store, StoreError};

/// SQL condition on a `games` row: no arbiter's result stands on it (none was set, or the
/// latest one set and not undone is `*`). A gesture or a game end changes the result only then.
pub(super) const NO_ARBITER_RESULT: &str = "COALESCE((SELECT json_extract(d.detail, '$.result') \
     FROM events d WHERE d.game_id = games.id AND d.kind = 'decision' \
     AND json_extract(d.detail, '$.action') = 'set_result' \
     AND NOT EXISTS (SELECT 1 FROM events u WHERE u.game_id = d.game_id \
     AND u.kind = 'decision' AND json_extract(u.detail, '$.action') = 'undo' \
     AND json_extract(u.detail, '$.decision') = d.id) \
     ORDER BY d.id DESC LIMIT 1), '*') = '*'";

/// A game the store closed while its board's task may still follow it: the board's events
/// found no open game. Its result is the one that stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClosedGame {
    pub board: BoardId,
    pub game: GameId,
    pub result: String,
    pub termination: Option<String>,
}

/// Ends `game` if `result` is final (anything but `*`) and it is still open, at the latest
/// stream time of its start, moves and board events.
pub(super) fn close_decided(
    conn: &Connection,
    game: GameId,
    result: &str,
) -> Result<(), StoreError> {
    if result == "*" {
        return Ok(());
    }
    conn.prepare_cached(
        "UPDATE games SET ended_at_ms = (SELECT max(t) FROM ( \
             SELECT started_at_ms AS t FROM games WHERE id = ?1 \
             UNION ALL SELECT at_ms FROM moves WHERE game_id = ?1 \
             UNION ALL SELECT at_ms FROM events WHERE game_id = ?1 AND kind <> 'decision')) \
         WHERE id = ?1 AND ended_at_ms IS NULL",
    )?
    .execute([game])?;
    Ok(())
}

/// The latest game of `board` if it is closed: what a board event that found no open game
/// would have extended.
pub(super) fn latest_closed(
    conn: &Connection,
    board: BoardId,
) -> Result<Option<ClosedGame>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT id, result, termination FROM games WHERE board_id = ?1 \
             AND ended_at_ms IS NOT NULL ORDER BY id DESC LIMIT 1",
        )?
        .query_row([board], |r| {
            Ok(ClosedGame {
                board,
                game: r.get(0)?,
                result: r.get(1)?,
                termination: r.get(2)?,
            })
        })
        .optional()?)
}

impl Store {
    /// Closes `game` if it is open with an arbiter's final result; returns whether it did.
    pub fn close_if_decided(&mut self, game: GameId) -> Result<bool, StoreError> {
        let final_result: Option<String> = self
            .conn
            .prepare_cached(&format!(
                "SELECT result FROM games WHERE id = ?1 AND ended_at_ms IS NULL \
                 AND NOT ({NO_ARBITER_RESULT})"
            ))?
            .query_row([game], |r| r.get(0))
            .optional()?;
        match final_result {
            Some(result) => {
                close_decided(&self.conn, game, &result)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}
