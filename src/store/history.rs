//! A game's history: every event in the order recorded, each with the move rows it retracted
//! (a revision, a takeback, a correction, a resumed game). Flow: the retracted rows are read
//! once and handed to the event that retracted them.

use super::{
    EventRecord, GameId, MOVE_COLUMNS, Store, decisions::DecisionError, decisions::header,
    game_events, move_row,
};
use crate::tracker::event::RecordedMove;

/// A move row that was retracted, with the event that retracted it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetractedMove {
    pub retracted_by: i64,
    pub mv: RecordedMove,
}

/// One entry of a game's history: an event and the move rows it retracted.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryEntry {
    pub event: EventRecord,
    /// By ply; empty unless the event retracted moves (revision, takeback, correction).
    pub retracted: Vec<RecordedMove>,
}

impl Store {
    /// Every event of `game` in the order recorded, each with the move rows it retracted.
    pub fn history(&self, game: GameId) -> Result<Vec<HistoryEntry>, DecisionError> {
        header(&self.conn, game)?;
        let mut retracted = self.retracted_moves(game)?;
        Ok(game_events(&self.conn, game)?
            .into_iter()
            .map(|event| {
                let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut retracted)
                    .into_iter()
                    .partition(|r| r.retracted_by == event.id);
                retracted = rest;
                HistoryEntry {
                    event,
                    retracted: mine.into_iter().map(|r| r.mv).collect(),
                }
            })
            .collect())
    }

    /// Every retracted move row of `game`, by retracting event then ply.
    pub fn retracted_moves(&self, game: GameId) -> Result<Vec<RetractedMove>, DecisionError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT retracted_by, {MOVE_COLUMNS} FROM moves \
             WHERE game_id = ?1 AND retracted_by IS NOT NULL ORDER BY retracted_by, ply, id"
        ))?;
        let rows = stmt
            .query_map([game], |r| {
                Ok(RetractedMove {
                    retracted_by: r.get(0)?,
                    mv: move_row(r, 1)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }
}
