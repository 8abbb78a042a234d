//! A game as it stood at a past moment, read from stored times: what a delayed broadcast shows.
//!
//! Flow: the header is read as now (players, round, board); the moves are the rows that were
//! live at `at_ms` (made by then and not yet retracted by then: a move row keeps the time it was
//! made, and its retraction is an event with its own time); the events are those recorded by
//! then; the result is the one standing at `at_ms` ([`result_at`]) and the game counts as ended
//! only if it ended by then. A game begun after `at_ms` did not exist then and is left out
//! ([`begun_by`]): its existence would tell that the board's game before it is over. Nothing
//! here reads the clock: `at_ms` is the caller's, so a restart changes nothing about what a
//! moment shows.

use std::collections::BTreeMap;

use super::{
    Action, EventRecord, GameId, GameRecord, MOVE_COLUMNS, Recorded, Store, StoreError,
    game_events, move_row, sql_ms,
};
use crate::{Millis, tracker::event::RecordedMove};

impl Store {
    /// Game `id` as it stood at `at_ms`; `None` if it had not begun by then.
    pub fn game_as_of(&self, id: GameId, at_ms: Millis) -> Result<Option<GameRecord>, StoreError> {
        self.game_header(id)?
            .filter(|h| begun_by(h, at_ms))
            .map(|h| self.complete_as_of(h, at_ms))
            .transpose()
    }

    /// The games of `round` begun by `at_ms`, as they stood then, in the order of
    /// [`Store::round_games`].
    pub fn round_games_as_of(
        &self,
        round: u32,
        at_ms: Millis,
    ) -> Result<Vec<GameRecord>, StoreError> {
        self.round_headers(round)?
            .into_iter()
            .filter(|h| begun_by(h, at_ms))
            .map(|h| self.complete_as_of(h, at_ms))
            .collect()
    }

    /// Every game begun by `at_ms`, as it stood then, by id.
    pub fn games_as_of(&self, at_ms: Millis) -> Result<Vec<GameRecord>, StoreError> {
        self.all_headers()?
            .into_iter()
            .filter(|h| begun_by(h, at_ms))
            .map(|h| self.complete_as_of(h, at_ms))
            .collect()
    }

    /// Each board's game at `at_ms` (its newest game begun by then, else its first game, with
    /// no moves), as it stood then; by board number, unnumbered boards by name.
    pub fn boards_as_of(&self, at_ms: Millis) -> Result<Vec<GameRecord>, StoreError> {
        self.board_headers_as_of(at_ms)?
            .into_iter()
            .map(|h| self.complete_as_of(h, at_ms))
            .collect()
    }

    pub(super) fn complete_as_of(
        &self,
        mut game: GameRecord,
        at_ms: Millis,
    ) -> Result<GameRecord, StoreError> {
        let at = sql_ms(at_ms)?;
        // Every row made by then and not retracted by then; a ply may have two such rows when a
        // correction kept the corrected move's time: the older row is the one live at `at_ms`
        // (the newer one was written by the correction, later).
        let mut by_ply: BTreeMap<u32, RecordedMove> = BTreeMap::new();
        {
            // The live rows through the live moves' index, the retracted ones through theirs:
            // `moves` has no index on the game alone, and a scan of it per game read made every
            // view of every game cost the whole table (docs/benchmarks.md, the delayed view).
            let mut stmt = self.conn.prepare_cached(&format!(
                "SELECT {MOVE_COLUMNS} FROM moves WHERE id IN ( \
                   SELECT id FROM moves \
                     WHERE game_id = ?1 AND retracted_by IS NULL AND at_ms <= ?2 \
                   UNION ALL SELECT m.id FROM moves m JOIN events e ON e.id = m.retracted_by \
                     WHERE m.retracted_by IS NOT NULL AND m.game_id = ?1 AND m.at_ms <= ?2 \
                     AND e.at_ms > ?2) \
                 ORDER BY id"
            ))?;
            let rows = stmt.query_map((game.id, at), |r| move_row(r, 0))?;
            for mv in rows {
                let mv = mv?;
                by_ply.entry(mv.ply).or_insert(mv);
            }
        }
        // Plies stay contiguous: a gap means the rest was not yet played as it stands.
        game.moves = by_ply
            .into_values()
            .enumerate()
            .take_while(|(i, m)| m.ply as usize == i + 1)
            .map(|(_, m)| m)
            .collect();
        let events = game_events(&self.conn, game.id)?;
        let changed_since = events
            .iter()
            .any(|e| e.at_ms > at_ms && changes_result(&e.what, &e.kind));
        if changed_since {
            game.result = result_at(&events, at_ms);
            if game.result == "*" {
                game.termination = None;
            }
        }
        game.events = events.into_iter().filter(|e| e.at_ms <= at_ms).collect();
        if game.ended_at_ms.is_some_and(|t| t > at_ms) {
            game.ended_at_ms = None;
        }
        if game.started_at_ms > at_ms {
            game.result = "*".into();
            game.termination = None;
        }
        Ok(game)
    }
}

/// Whether `game` had begun by `at_ms` (stored time), so that a view of that moment may show
/// it. The board's game before it was closed when it began (`GameStarted`), so this is also the
/// moment a delayed view shows that one over.
pub fn begun_by(game: &GameRecord, at_ms: Millis) -> bool {
    game.started_at_ms <= at_ms
}

/// True for an event that can change a game's result: the kings' gesture, the game's end on
/// the board, the arbiter setting a result.
fn changes_result(what: &Recorded, kind: &str) -> bool {
    match what {
        Recorded::Decision(d) => match &d.action {
            Action::SetResult { .. } => true,
            Action::Undo { result, .. } => result.is_some(),
            _ => false,
        },
        Recorded::ResultGesture { .. } => true,
        _ => kind == "game_ended",
    }
}

/// The result standing at `at_ms`, folded over the events recorded by then the way the store
/// writes them: the board's gesture or end sets it unless the arbiter set one; the arbiter's
/// `*` gives it back to the board; an undone result gives back the one it replaced.
pub fn result_at(events: &[EventRecord], at_ms: Millis) -> String {
    let mut result = String::from("*");
    // The arbiter's results set by then and not undone by then, in order.
    let mut set: Vec<(i64, bool)> = Vec::new();
    let arbiter_set = |set: &[(i64, bool)]| set.last().is_some_and(|(_, fin)| *fin);
    for e in events.iter().filter(|e| e.at_ms <= at_ms) {
        match &e.what {
            Recorded::Decision(d) => match &d.action {
                Action::SetResult { result: r, .. } => {
                    result = r.clone();
                    set.push((d.id, r != "*"));
                }
                Action::Undo {
                    decision,
                    result: Some(r),
                    ..
                } => {
                    set.retain(|(id, _)| id != decision);
                    result = r.clone();
                }
                _ => {}
            },
            Recorded::ResultGesture { proposed: Some(p) } if !arbiter_set(&set) => {
                result = p.clone()
            }
            _ if e.kind == "game_ended" && !arbiter_set(&set) => {
                if let Some(r) = e.detail.get("result").and_then(|v| v.as_str()) {
                    result = r.to_owned();
                }
            }
            _ => {}
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        game::{Kind, Outcome},
        sensor::Orientation,
        store::Write,
        tracker::TrackerEvent,
    };

    fn mv(ply: u32, notation: &str, at_ms: Millis) -> RecordedMove {
        RecordedMove {
            ply,
            notation: notation.to_owned(),
            uci: None,
            position: format!("after {notation}"),
            at_ms,
            clock_white_ms: None,
            clock_black_ms: None,
            time_trouble: false,
        }
    }

    /// A board with a game of four moves at 1, 2, 3, 4 s, ply 4 taken back at 5 s, ply 4 played
    /// again at 6 s, the game ended 1-0 at 7 s.
    fn played() -> Store {
        let mut store = Store::open_in_memory().unwrap();
        let board = store.board("b1", Kind::Chess).unwrap();
        let ev = |event| Write::Event { board, event };
        let mut writes = vec![ev(TrackerEvent::GameStarted {
            at_ms: 500,
            orientation: Orientation::Normal,
            start: None,
        })];
        for (ply, san) in [(1, "e4"), (2, "e5"), (3, "Nf3"), (4, "Nc6")] {
            writes.push(ev(TrackerEvent::Move(mv(ply, san, 1000 * u64::from(ply)))));
        }
        writes.push(ev(TrackerEvent::Takeback {
            at_ms: 5000,
            from_ply: 4,
            to_ply: 3,
        }));
        writes.push(ev(TrackerEvent::Move(mv(4, "d6", 6000))));
        writes.push(ev(TrackerEvent::GameEnded {
            at_ms: 7000,
            after_ply: 4,
            outcome: Outcome::WhiteWins,
            termination: "normal".into(),
        }));
        store.write_batch(&writes).unwrap();
        store
    }

    fn line(g: &GameRecord) -> Vec<&str> {
        g.moves.iter().map(|m| m.notation.as_str()).collect()
    }

    #[test]
    fn a_game_reads_as_it_stood_at_each_moment() {
        let store = played();
        let id = store.games().unwrap()[0].id;
        let at = |t| store.game_as_of(id, t).unwrap().unwrap();
        // Begun at 500 ms: not there before, there with no moves from then on.
        assert!(store.game_as_of(id, 499).unwrap().is_none());
        assert_eq!(line(&at(500)), Vec::<&str>::new());
        assert_eq!(at(500).result, "*");
        assert_eq!(line(&at(2500)), ["e4", "e5"]);
        assert_eq!(line(&at(4500)), ["e4", "e5", "Nf3", "Nc6"]);
        // Taken back at 5 s: the position before it, until the new move at 6 s.
        assert_eq!(line(&at(5500)), ["e4", "e5", "Nf3"]);
        assert_eq!(line(&at(6500)), ["e4", "e5", "Nf3", "d6"]);
        assert_eq!(
            (at(6500).result.as_str(), at(6500).ended_at_ms),
            ("*", None)
        );
        assert_eq!(
            (at(7000).result.as_str(), at(7000).ended_at_ms),
            ("1-0", Some(7000))
        );
        assert!(at(2500).events.iter().all(|e| e.at_ms <= 2500));
        // The board's game at a moment, and every game.
        assert_eq!(line(&store.boards_as_of(2500).unwrap()[0]), ["e4", "e5"]);
        assert_eq!(store.games_as_of(499).unwrap().len(), 0);
        assert_eq!(store.games_as_of(500).unwrap().len(), 1);
    }

    /// Two games on one board, the second set up at 10 s: no view before 10 s has the second
    /// game, by id, in the round or among all games; the board's game then is the first.
    #[test]
    fn a_game_begun_later_is_not_there_before() {
        let mut store = played();
        let board = store.board("b1", Kind::Chess).unwrap();
        store
            .write_batch(&[
                Write::Event {
                    board,
                    event: TrackerEvent::GameStarted {
                        at_ms: 10_000,
                        orientation: Orientation::Normal,
                        start: None,
                    },
                },
                Write::Event {
                    board,
                    event: TrackerEvent::Move(mv(1, "d4", 11_000)),
                },
            ])
            .unwrap();
        let games = store.games().unwrap();
        let (first, second) = (games[0].id, games[1].id);
        for t in [7000, 9999] {
            assert!(store.game_as_of(second, t).unwrap().is_none(), "at {t}");
            let ids = |gs: Vec<GameRecord>| gs.iter().map(|g| g.id).collect::<Vec<_>>();
            assert_eq!(ids(store.games_as_of(t).unwrap()), [first], "at {t}");
            assert_eq!(ids(store.boards_as_of(t).unwrap()), [first], "at {t}");
            assert_eq!(store.boards_as_of(t).unwrap()[0].result, "1-0");
        }
        assert_eq!(
            line(&store.game_as_of(second, 10_000).unwrap().unwrap()),
            Vec::<&str>::new()
        );
        assert_eq!(store.games_as_of(10_000).unwrap().len(), 2);
        assert_eq!(store.boards_as_of(10_000).unwrap()[0].id, second);
        assert_eq!(line(&store.boards_as_of(11_000).unwrap()[0]), ["d4"]);
    }
}
