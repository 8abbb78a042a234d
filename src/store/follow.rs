//! Following the as-of view as its moment moves on (`relay::delayed`): which games' view at a
//! later moment can differ from the one read at an earlier moment, found without reading them.
//!
//! Flow: a game's view at a moment ([`Store::game_as_of`]) is a function of its header (read
//! as now: the `games` row, its board's name, its pairing), its move rows (each with the time
//! it was made and, once retracted, the time of the event that retracted it), its events, and
//! the moment. With those rows unchanged, the view changes only when the moment passes one of
//! their stored times: [`Store::next_change`] gives the first one after a moment. Rows change in
//! only three ways the view can see, each found from marks kept between reads
//! ([`Store::touched_since`]): a move row inserted (rowids only grow: moves are never
//! deleted), an event inserted (the same), a move retracted (`retracted_by` set once, never
//! cleared: the set of retracted moves only grows, and its count tells whether it did). Headers
//! are not followed row by row (a result, a correction, a pairing imported, a board renamed, a
//! replica's update of a game): the caller reads them all again ([`Store::board_headers_as_of`])
//! whenever anything was committed ([`Store::data_version`], read before the read transaction
//! [`Store::in_snapshot`], so that a commit meanwhile is seen again) and compares.

use std::collections::{HashMap, HashSet};

use super::{GAME_SELECT, GameId, GameRecord, Store, StoreError, game_header, sql_ms};
use crate::Millis;

/// Where the store stood at a read: what [`Store::touched_since`] looks past at the next one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// The newest move row read.
    last_move: i64,
    /// The newest event row read.
    last_event: i64,
    /// The moves retracted by then.
    retracted: HashSet<i64>,
}

/// The games that rows written since a [`Marks`] touch, against a moment `at_ms`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// Games whose view at `at_ms` (or any moment) can differ: a new event (it can change the
    /// result standing at any moment), a move retracted, a move made by `at_ms` (a late one).
    pub now: HashSet<GameId>,
    /// Games with new moves all made after `at_ms`: the earliest of them, when the view first
    /// sees one.
    pub later: HashMap<GameId, Millis>,
}

impl Touched {
    /// Files a new move of `game` made at `made_ms` against the moment `at_ms`.
    fn moved(&mut self, game: GameId, made_ms: Millis, at_ms: Millis) {
        if made_ms <= at_ms {
            self.now.insert(game);
        } else {
            let t = self.later.entry(game).or_insert(made_ms);
            *t = (*t).min(made_ms);
        }
    }
}

impl Store {
    /// Runs `f` in one read transaction: everything it reads is of one moment of the file.
    pub fn in_snapshot<T>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        let out = f(self)?;
        tx.commit()?;
        Ok(out)
    }

    /// Marks of the store as it stands: nothing before them is new to [`Store::touched_since`].
    pub fn marks(&self) -> Result<Marks, StoreError> {
        let mut marks = Marks::default();
        self.touched_since(&mut marks, 0)?;
        Ok(marks)
    }

    /// The games touched by rows written since `marks` (see [`Touched`]), filed against the
    /// moment `at_ms`; `marks` moves on to the store as it stands.
    pub fn touched_since(&self, marks: &mut Marks, at_ms: Millis) -> Result<Touched, StoreError> {
        let mut touched = Touched::default();
        {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT id, game_id, at_ms FROM moves WHERE id > ?1 ORDER BY id")?;
            let mut rows = stmt.query([marks.last_move])?;
            while let Some(r) = rows.next()? {
                let (id, game, made): (i64, GameId, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
                marks.last_move = id;
                // A time before the epoch is made by any moment.
                touched.moved(game, Millis::try_from(made).unwrap_or(0), at_ms);
            }
        }
        {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT id, game_id FROM events WHERE id > ?1 ORDER BY id")?;
            let mut rows = stmt.query([marks.last_event])?;
            while let Some(r) = rows.next()? {
                let (id, game): (i64, Option<GameId>) = (r.get(0)?, r.get(1)?);
                marks.last_event = id;
                // An event of no game (a board's, between games) is in no game's view.
                touched.now.extend(game);
            }
        }
        let retracted: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM moves WHERE retracted_by IS NOT NULL")?
            .query_row([], |r| r.get(0))?;
        if usize::try_from(retracted).ok() != Some(marks.retracted.len()) {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT id, game_id FROM moves WHERE retracted_by IS NOT NULL")?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let (id, game): (i64, GameId) = (r.get(0)?, r.get(1)?);
                if marks.retracted.insert(id) {
                    touched.now.insert(game);
                }
            }
        }
        Ok(touched)
    }

    /// Each board's game at `at_ms` as [`Store::boards_as_of`] picks it (its newest game begun
    /// by then, else its first game), as a header read as now (no moves, no events, nothing
    /// taken back to `at_ms`); in [`Store::boards_as_of`]'s order.
    pub fn board_headers_as_of(&self, at_ms: Millis) -> Result<Vec<GameRecord>, StoreError> {
        let at = sql_ms(at_ms)?;
        self.conn
            .prepare_cached(&format!(
                "{GAME_SELECT} WHERE g.id IN (SELECT COALESCE( \
                   (SELECT max(g2.id) FROM games g2 WHERE g2.board_id = bb.id AND g2.started_at_ms <= ?1), \
                   (SELECT min(g3.id) FROM games g3 WHERE g3.board_id = bb.id)) FROM boards bb) \
                 ORDER BY g.board_no IS NULL, g.board_no, b.name, g.id"
            ))?
            .query_map([at], game_header)?
            .map(|h| h?)
            .collect()
    }

    /// The first game start after `at_ms`: the first moment after it at which a board's game
    /// in [`Store::board_headers_as_of`] can be another, with the games as they stand.
    pub fn next_game_start(&self, at_ms: Millis) -> Result<Option<Millis>, StoreError> {
        let at = sql_ms(at_ms)?;
        let t: Option<i64> = self
            .conn
            .prepare_cached("SELECT min(started_at_ms) FROM games WHERE started_at_ms > ?1")?
            .query_row([at], |r| r.get(0))?;
        Ok(t.and_then(|t| Millis::try_from(t).ok()))
    }

    /// `header` (a header of [`Store::board_headers_as_of`]) as its game stood at `at_ms`:
    /// [`Store::boards_as_of`]'s game for its board.
    pub fn header_as_of(
        &self,
        header: GameRecord,
        at_ms: Millis,
    ) -> Result<GameRecord, StoreError> {
        self.complete_as_of(header, at_ms)
    }

    /// The first stored time after `at_ms` at which the view of `header`'s game
    /// ([`Store::header_as_of`]) can change, with its rows as they stand: a move made, a move
    /// retracted, an event, the game's start or end; `None`: none after `at_ms`.
    pub fn next_change(
        &self,
        header: &GameRecord,
        at_ms: Millis,
    ) -> Result<Option<Millis>, StoreError> {
        let at = sql_ms(at_ms)?;
        // Live rows through the live moves' index, retracted ones through theirs.
        let t: Option<i64> = self
            .conn
            .prepare_cached(
                "SELECT min(t) FROM ( \
                   SELECT min(at_ms) AS t FROM moves \
                     WHERE game_id = ?1 AND retracted_by IS NULL AND at_ms > ?2 \
                   UNION ALL SELECT min(m.at_ms) FROM moves m \
                     WHERE m.retracted_by IS NOT NULL AND m.game_id = ?1 AND m.at_ms > ?2 \
                   UNION ALL SELECT min(e.at_ms) FROM moves m JOIN events e ON e.id = m.retracted_by \
                     WHERE m.retracted_by IS NOT NULL AND m.game_id = ?1 AND e.at_ms > ?2 \
                   UNION ALL SELECT min(at_ms) FROM events WHERE game_id = ?1 AND at_ms > ?2)",
            )?
            .query_row((header.id, at), |r| r.get(0))?;
        let rows = t.map(|t| Millis::try_from(t).unwrap_or(0));
        Ok(earliest_after(
            at_ms,
            [rows, Some(header.started_at_ms), header.ended_at_ms],
        ))
    }
}

/// The earliest of `times` after `at_ms`.
pub fn earliest_after(
    at_ms: Millis,
    times: impl IntoIterator<Item = Option<Millis>>,
) -> Option<Millis> {
    times.into_iter().flatten().filter(|t| *t > at_ms).min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_time_after_a_moment() {
        assert_eq!(
            earliest_after(10, [Some(5), None, Some(12), Some(11)]),
            Some(11)
        );
        assert_eq!(earliest_after(10, [Some(10), None]), None);
    }

    #[test]
    fn a_new_move_is_now_when_made_by_the_moment_and_later_after_it() {
        let mut t = Touched::default();
        t.moved(GameId(1), 100, 100);
        t.moved(GameId(2), 300, 100);
        t.moved(GameId(2), 200, 100);
        assert_eq!(t.now, HashSet::from([GameId(1)]));
        assert_eq!(t.later, HashMap::from([(GameId(2), 200)]));
    }
}
