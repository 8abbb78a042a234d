//! Games read back from a board's own memory (`boardscribe import-memory`), stored once.
//!
//! Flow: [`Store::imported_digests`] lists the digests of the board's games already imported
//! (each such game carries a note starting with [`IMPORT_NOTE`] and naming its digest);
//! [`Store::import_games`] writes the raw dump and every new game, each followed by that note, in
//! one transaction: an import is stored whole or not at all.

use rusqlite::TransactionBehavior;

use super::{
    Batch, BoardId, GameId, RawBlock, Store, StoreError, Write,
    decisions::{self, Action, DecisionError},
};
use crate::{Millis, tracker::TrackerEvent};

/// How every imported game's note begins.
pub const IMPORT_NOTE: &str = "imported from board memory (DGT EE_MOVES)";

/// One game to import: its events (from `GameStarted`) and its digest.
#[derive(Clone, Debug)]
pub struct ImportedGame {
    pub events: Vec<TrackerEvent>,
    pub digest: u64,
    /// Said in the note after the digest (how many tokens, which dump).
    pub detail: String,
}

/// The note of an imported game.
pub fn import_note(digest: u64, detail: &str) -> String {
    format!("{IMPORT_NOTE}; digest {digest:016x}; {detail}")
}

/// The digest an import note names, if `note` is one.
fn note_digest(note: &str) -> Option<u64> {
    let rest = note.strip_prefix(IMPORT_NOTE)?.strip_prefix("; digest ")?;
    u64::from_str_radix(rest.get(..16)?, 16).ok()
}

impl Store {
    /// The board that has `number` in the hall, if any.
    pub fn board_with_number(&self, number: u32) -> Result<Option<BoardId>, StoreError> {
        use rusqlite::OptionalExtension;
        Ok(self
            .conn
            .prepare_cached("SELECT id FROM boards WHERE number = ?1")?
            .query_row([number], |r| r.get(0))
            .optional()?)
    }

    /// The digests of `board`'s games imported from board memory so far.
    pub fn imported_digests(&self, board: BoardId) -> Result<Vec<u64>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT json_extract(detail, '$.note') FROM events \
             WHERE board_id = ?1 AND kind = ?2 AND json_extract(detail, '$.note') IS NOT NULL",
        )?;
        let notes = stmt
            .query_map((board, decisions::DECISION_KIND), |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(notes.iter().filter_map(|n| note_digest(n)).collect())
    }

    /// Writes `raw` (the dump as read) and `games` on `board` in one transaction; each game is
    /// started by its `GameStarted` event (closing the board's open game, as a new game does) and
    /// gets the import note by `author` at `at_ms`. Returns the games written.
    pub fn import_games(
        &mut self,
        board: BoardId,
        raw: Option<&RawBlock>,
        games: &[ImportedGame],
        author: &str,
        at_ms: Millis,
    ) -> Result<Vec<GameId>, DecisionError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut batch = Batch::new(&tx);
        if let Some(block) = raw {
            batch.apply(&Write::RawBlock {
                board,
                block: block.clone(),
            })?;
        }
        let mut written = Vec::with_capacity(games.len());
        for game in games {
            for event in &game.events {
                batch.apply(&Write::Event {
                    board,
                    event: event.clone(),
                })?;
            }
            let Some(id) = batch.open_game(board)? else {
                continue;
            };
            let note = import_note(game.digest, &game.detail);
            decisions::insert(
                &tx,
                id,
                board,
                None,
                Action::Note { ply: None },
                author,
                Some(&note),
                at_ms,
            )?;
            written.push(id);
        }
        batch.finish()?;
        tx.commit()?;
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_digest_round_trip() {
        let note = import_note(0x0123_4567_89ab_cdef, "game 2 of 3, 120 tokens");
        assert_eq!(note_digest(&note), Some(0x0123_4567_89ab_cdef));
        assert_eq!(note_digest("imported from somewhere else"), None);
    }
}
