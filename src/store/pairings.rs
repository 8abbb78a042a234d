//! The tournament setting (event, site, round), board numbers and the pairings of each round.
//!
//! Flow: the arbiter (or the daemon's config) sets the round with [`Store::set_round`] and numbers
//! the boards with [`Store::set_board_number`]; [`Store::import_pairings`] replaces a round's
//! pairings. A game copies the setting and its board's number when it starts (in `write_batch`), so
//! it keeps the round it was played in; its players are looked up by (round, board) when it is read.

use rusqlite::{OptionalExtension, Row, TransactionBehavior};

use super::{BoardId, Store, StoreError, write::sql_ms};
use crate::{
    Millis,
    pairings::{Pairing, RoundBye},
    tracker::Side,
};

/// The tournament setting a game takes when it starts.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RoundInfo {
    pub event: String,
    pub site: String,
    /// 1-based.
    pub round: u32,
}

/// The pairing columns, in the order [`pairing_row`] reads them.
pub(super) const PAIRING_COLUMNS: &str = "board, white, black, white_fide, black_fide, \
     white_elo, black_elo, white_title, black_title, white_fed, black_fed, white_start, black_start";

/// A pairing from a row whose columns from `first` on are [`PAIRING_COLUMNS`].
pub(super) fn pairing_row(r: &Row<'_>, first: usize) -> rusqlite::Result<Pairing> {
    Ok(Pairing {
        board: r.get(first)?,
        white: r.get(first + 1)?,
        black: r.get(first + 2)?,
        white_fide: r.get(first + 3)?,
        black_fide: r.get(first + 4)?,
        white_elo: r.get(first + 5)?,
        black_elo: r.get(first + 6)?,
        white_title: r.get(first + 7)?,
        black_title: r.get(first + 8)?,
        white_fed: r.get(first + 9)?,
        black_fed: r.get(first + 10)?,
        white_start: r.get(first + 11)?,
        black_start: r.get(first + 12)?,
    })
}

impl Store {
    /// Gives `board` its number in the hall; a board that had this number loses it.
    pub fn set_board_number(&mut self, board: BoardId, number: u32) -> Result<(), StoreError> {
        if number == 0 {
            return Err(StoreError::InvalidNumber("board number", number));
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.prepare_cached("UPDATE boards SET number = NULL WHERE number = ?1 AND id <> ?2")?
            .execute((number, board))?;
        let n = tx
            .prepare_cached("UPDATE boards SET number = ?1 WHERE id = ?2")?
            .execute((number, board))?;
        if n == 0 {
            return Err(StoreError::UnknownBoard(board));
        }
        tx.commit()?;
        Ok(())
    }

    /// The number of `board`, if it has one.
    pub fn board_number(&self, board: BoardId) -> Result<Option<u32>, StoreError> {
        self.conn
            .prepare_cached("SELECT number FROM boards WHERE id = ?1")?
            .query_row([board], |r| r.get::<_, Option<u32>>(0))
            .optional()?
            .ok_or(StoreError::UnknownBoard(board))
    }

    /// Sets the event, site and round that games starting from now on take.
    pub fn set_round(&mut self, info: &RoundInfo) -> Result<(), StoreError> {
        if info.round == 0 {
            return Err(StoreError::InvalidNumber("round", 0));
        }
        self.conn
            .prepare_cached(
                "INSERT INTO tournament (id, event, site, round) VALUES (1, ?1, ?2, ?3) \
                 ON CONFLICT (id) DO UPDATE SET event = ?1, site = ?2, round = ?3",
            )?
            .execute((&info.event, &info.site, info.round))?;
        Ok(())
    }

    /// The current setting; `None` until [`Store::set_round`] was called.
    pub fn round_info(&self) -> Result<Option<RoundInfo>, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT event, site, round FROM tournament WHERE id = 1")?
            .query_row([], |r| {
                Ok(RoundInfo {
                    event: r.get(0)?,
                    site: r.get(1)?,
                    round: r.get(2)?,
                })
            })
            .optional()?)
    }

    /// Replaces the pairings of `round` with `rows` (and leaves it no byes), in one
    /// transaction; returns how many.
    pub fn import_pairings(&mut self, round: u32, rows: &[Pairing]) -> Result<usize, StoreError> {
        self.import_round(round, rows, &[])
    }

    /// Replaces the pairings of `round` with `rows` and its byes with `byes` (a TRF's; none
    /// for a CSV's, so that a file imported again leaves no bye of the one before), in one
    /// transaction; returns how many boards.
    pub fn import_round(
        &mut self,
        round: u32,
        rows: &[Pairing],
        byes: &[RoundBye],
    ) -> Result<usize, StoreError> {
        check_numbers(round, rows)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        replace_round(&tx, round, rows, byes)?;
        tx.commit()?;
        Ok(rows.len())
    }

    /// Gives `name` a bye of kind `code` in `round` (`U` the pairing program's, `F` a full
    /// point, `H` a half point asked for, `Z` none), by `by` at `at_ms`: kept with the round's
    /// byes as a TRF's are, so that the standings and the TRF count it; the player's FIDE id,
    /// rating, title, federation and starting rank are copied from the latest pairing that
    /// names the player, so that the bye counts for the same player. Replaces the player's bye
    /// in that round; logged. Refused for a name no pairing of the event names, a player paired
    /// on a board in that round, and a code that is no bye's.
    pub fn set_bye(
        &mut self,
        round: u32,
        name: &str,
        code: char,
        by: &str,
        at_ms: Millis,
    ) -> Result<(), StoreError> {
        if round == 0 {
            return Err(StoreError::InvalidNumber("round", 0));
        }
        if !matches!(code, 'U' | 'F' | 'H' | 'Z') {
            return Err(StoreError::NotAByeCode(code));
        }
        crate::text::one_line("name of who gave the bye", by)?;
        let name = name.trim();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let paired: Option<u32> = tx
            .prepare_cached(
                "SELECT board FROM pairings WHERE round = ?1 AND (white = ?2 OR black = ?2)",
            )?
            .query_row((round, name), |r| r.get(0))
            .optional()?;
        if let Some(board) = paired {
            return Err(StoreError::PlayerPaired {
                round,
                name: name.to_owned(),
                board,
            });
        }
        let known = tx
            .prepare_cached(&format!(
                "SELECT {PAIRING_COLUMNS} FROM pairings WHERE white = ?1 OR black = ?1 \
                 ORDER BY round DESC LIMIT 1"
            ))?
            .query_row([name], |r| pairing_row(r, 0))
            .optional()?;
        let Some(p) = known else {
            return Err(StoreError::UnknownPlayer(name.to_owned()));
        };
        let side = if p.white == name {
            Side::White
        } else {
            Side::Black
        };
        let player = p.player(side);
        let start = match side {
            Side::White => p.white_start,
            Side::Black => p.black_start,
        };
        tx.prepare_cached("DELETE FROM round_byes WHERE round = ?1 AND name = ?2")?
            .execute((round, name))?;
        tx.prepare_cached(
            "INSERT INTO round_byes (round, name, fide, elo, title, fed, start, code) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute((
            round,
            name,
            player.as_ref().and_then(|p| p.fide),
            player.as_ref().and_then(|p| p.elo),
            player.as_ref().and_then(|p| p.title.clone()),
            player.as_ref().and_then(|p| p.fed.clone()),
            start,
            code.to_string(),
        ))?;
        tx.prepare_cached(
            "INSERT INTO bye_log (round, name, code, by, at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute((round, name, code.to_string(), by, sql_ms(at_ms)?))?;
        tx.commit()?;
        Ok(())
    }

    /// Withdraws `name`'s bye in `round` (given by mistake), by `by` at `at_ms`; logged.
    pub fn withdraw_bye(
        &mut self,
        round: u32,
        name: &str,
        by: &str,
        at_ms: Millis,
    ) -> Result<(), StoreError> {
        crate::text::one_line("name of who withdrew the bye", by)?;
        let name = name.trim();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let gone = tx
            .prepare_cached("DELETE FROM round_byes WHERE round = ?1 AND name = ?2")?
            .execute((round, name))?;
        if gone == 0 {
            return Err(StoreError::NoBye {
                round,
                name: name.to_owned(),
            });
        }
        tx.prepare_cached(
            "INSERT INTO bye_log (round, name, code, by, at_ms) VALUES (?1, ?2, NULL, ?3, ?4)",
        )?
        .execute((round, name, by, sql_ms(at_ms)?))?;
        tx.commit()?;
        Ok(())
    }

    /// [`Store::import_round`] by the arbiter `by` at `at_ms`, logged with the round's pairings
    /// and byes as they were before, so that it can be undone
    /// ([`Store::undo_pairings_import`]).
    pub fn import_round_by(
        &mut self,
        round: u32,
        rows: &[Pairing],
        byes: &[RoundBye],
        by: &str,
        at_ms: Millis,
    ) -> Result<usize, StoreError> {
        check_numbers(round, rows)?;
        crate::text::one_line("name of who imported the pairings", by)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (before, before_byes) = (round_pairings(&tx, round)?, round_byes(&tx, round)?);
        replace_round(&tx, round, rows, byes)?;
        log_pairings(
            &tx,
            round,
            "import",
            &before,
            &before_byes,
            rows.len(),
            by,
            at_ms,
        )?;
        tx.commit()?;
        Ok(rows.len())
    }

    /// The import of pairings that can be undone now: the latest one logged, if it was not
    /// undone and no game has begun in its round since. Its round and how many boards it set.
    pub fn pairings_import_to_undo(&self) -> Result<Option<(u32, u32)>, StoreError> {
        Ok(last_import(&self.conn)?.and_then(|i| (i.games == 0).then_some((i.round, i.boards))))
    }

    /// Undoes the latest import of `round`'s pairings (by `by`, at `at_ms`): the round's
    /// pairings and byes are those before it again, and the log keeps both. Refused
    /// ([`StoreError::ImportNotUndoable`]) unless it is the latest import logged, not undone,
    /// and no game has begun in the round since (its players would change). Returns the
    /// pairings given back.
    pub fn undo_pairings_import(
        &mut self,
        round: u32,
        by: &str,
        at_ms: Millis,
    ) -> Result<Vec<Pairing>, StoreError> {
        crate::text::one_line("name of who undid the import", by)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let import = match last_import(&tx)? {
            Some(i) if i.round == round && i.games == 0 => i,
            Some(i) if i.round == round => {
                return Err(StoreError::ImportNotUndoable {
                    round,
                    games: i.games,
                });
            }
            _ => return Err(StoreError::ImportNotUndoable { round, games: 0 }),
        };
        let (now, now_byes) = (round_pairings(&tx, round)?, round_byes(&tx, round)?);
        replace_round(&tx, round, &import.pairings, &import.byes)?;
        log_pairings(
            &tx,
            round,
            "undo",
            &now,
            &now_byes,
            import.pairings.len(),
            by,
            at_ms,
        )?;
        tx.commit()?;
        Ok(import.pairings)
    }

    /// The byes of `round`, in the order imported.
    pub fn byes(&self, round: u32) -> Result<Vec<RoundBye>, StoreError> {
        round_byes(&self.conn, round)
    }
}

/// The latest import of pairings logged, when it is not undone: its round, the pairings and
/// byes before it, how many boards it set, and how many games began in its round since.
struct LastImport {
    round: u32,
    pairings: Vec<Pairing>,
    byes: Vec<RoundBye>,
    boards: u32,
    games: u32,
}

fn last_import(conn: &rusqlite::Connection) -> Result<Option<LastImport>, StoreError> {
    let row = conn
        .prepare_cached(
            "SELECT round, action, pairings, byes, boards, \
             (SELECT count(*) FROM games g WHERE g.round = CAST(l.round AS TEXT) \
              AND g.started_at_ms >= l.at_ms) \
             FROM pairings_log l ORDER BY id DESC LIMIT 1",
        )?
        .query_row([], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, u32>(4)?,
                r.get::<_, u32>(5)?,
            ))
        })
        .optional()?;
    let Some((round, action, pairings, byes, boards, games)) = row else {
        return Ok(None);
    };
    if action != "import" {
        return Ok(None);
    }
    Ok(Some(LastImport {
        round,
        pairings: serde_json::from_str(&pairings)?,
        byes: serde_json::from_str(&byes)?,
        boards,
        games,
    }))
}

/// Logs an import (or its undoing) of `round`'s pairings, with the pairings and byes before it.
#[allow(clippy::too_many_arguments)]
fn log_pairings(
    conn: &rusqlite::Connection,
    round: u32,
    action: &str,
    before: &[Pairing],
    before_byes: &[RoundBye],
    boards: usize,
    by: &str,
    at_ms: Millis,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO pairings_log (round, action, pairings, byes, boards, by, at_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute((
        round,
        action,
        serde_json::to_string(before)?,
        serde_json::to_string(before_byes)?,
        boards as u32,
        by,
        sql_ms(at_ms)?,
    ))?;
    Ok(())
}

/// The pairings of `round`, by board.
fn round_pairings(conn: &rusqlite::Connection, round: u32) -> Result<Vec<Pairing>, StoreError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {PAIRING_COLUMNS} FROM pairings WHERE round = ?1 ORDER BY board"
        ))?
        .query_map([round], |r| pairing_row(r, 0))?
        .collect::<Result<_, _>>()?)
}

/// The byes of `round`, in the order imported.
fn round_byes(conn: &rusqlite::Connection, round: u32) -> Result<Vec<RoundBye>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT name, fide, elo, title, fed, start, code FROM round_byes \
         WHERE round = ?1 ORDER BY rowid",
    )?;
    let rows = stmt.query_map([round], |r| {
        let code: String = r.get(6)?;
        Ok(RoundBye {
            name: r.get(0)?,
            fide: r.get(1)?,
            elo: r.get(2)?,
            title: r.get(3)?,
            fed: r.get(4)?,
            start: r.get(5)?,
            code: code.chars().next().unwrap_or('Z'),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl Store {
    /// The pairing at `board` in `round`.
    pub fn pairing(&self, round: u32, board: u32) -> Result<Option<Pairing>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {PAIRING_COLUMNS} FROM pairings WHERE round = ?1 AND board = ?2"
            ))?
            .query_row((round, board), |r| pairing_row(r, 0))
            .optional()?)
    }

    /// Every pairing of `round`, by board, with the TRF's starting ranks when it came from one.
    pub fn pairings(&self, round: u32) -> Result<Vec<Pairing>, StoreError> {
        round_pairings(&self.conn, round)
    }
}

/// Refuses round 0 and a board 0 among `rows`.
fn check_numbers(round: u32, rows: &[Pairing]) -> Result<(), StoreError> {
    if round == 0 {
        return Err(StoreError::InvalidNumber("round", 0));
    }
    if let Some(p) = rows.iter().find(|p| p.board == 0) {
        return Err(StoreError::InvalidNumber("board number", p.board));
    }
    Ok(())
}

/// Replaces the pairings and byes of `round` with `rows` and `byes`, in `tx`.
fn replace_round(
    tx: &rusqlite::Connection,
    round: u32,
    rows: &[Pairing],
    byes: &[RoundBye],
) -> Result<(), StoreError> {
    tx.prepare_cached("DELETE FROM pairings WHERE round = ?1")?
        .execute([round])?;
    {
        let mut insert = tx.prepare_cached(&format!(
            "INSERT INTO pairings (round, {PAIRING_COLUMNS}) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
        ))?;
        for p in rows {
            let res = insert.execute((
                round,
                p.board,
                &p.white,
                &p.black,
                p.white_fide,
                p.black_fide,
                p.white_elo,
                p.black_elo,
                &p.white_title,
                &p.black_title,
                &p.white_fed,
                &p.black_fed,
                p.white_start,
                p.black_start,
            ));
            match res {
                Ok(_) => {}
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
                {
                    return Err(StoreError::DuplicateBoard {
                        round,
                        board: p.board,
                    });
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    tx.prepare_cached("DELETE FROM round_byes WHERE round = ?1")?
        .execute([round])?;
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO round_byes (round, name, fide, elo, title, fed, start, code) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        for b in byes {
            insert.execute((
                round,
                &b.name,
                b.fide,
                b.elo,
                &b.title,
                &b.fed,
                b.start,
                b.code.to_string(),
            ))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_is_undone_until_a_game_begins_in_its_round_and_never_twice() {
        let mut store = Store::open_in_memory().unwrap();
        let info = RoundInfo {
            event: "Open".into(),
            site: "Here".into(),
            round: 1,
        };
        store
            .open_event(Some(&info), &super::super::EventSettings::default(), 0)
            .unwrap();
        let first = [Pairing::new(1, "Ann", "Bob")];
        let second = [Pairing::new(1, "Ann", "Cid"), Pairing::new(2, "Bob", "Dee")];
        let byes = [RoundBye {
            name: "Eve".into(),
            fide: None,
            elo: None,
            title: None,
            fed: None,
            start: None,
            code: 'H',
        }];
        store
            .import_round_by(1, &first, &byes, "Chief", 10)
            .unwrap();
        store.import_round_by(1, &second, &[], "Chief", 20).unwrap();
        assert_eq!(store.pairings_import_to_undo().unwrap(), Some((1, 2)));
        assert!(matches!(
            store.undo_pairings_import(2, "Chief", 25),
            Err(StoreError::ImportNotUndoable { round: 2, games: 0 })
        ));
        assert_eq!(store.undo_pairings_import(1, "Chief", 30).unwrap(), first);
        assert_eq!(store.pairings(1).unwrap(), first);
        assert_eq!(store.byes(1).unwrap(), byes, "the byes come back too");
        // An undo is not undone; a game begun in the round after an import keeps it.
        assert_eq!(store.pairings_import_to_undo().unwrap(), None);
        store.import_round_by(1, &second, &[], "Chief", 40).unwrap();
        let board = store.board("b1", crate::game::Kind::Chess).unwrap();
        super::super::begin_test_game(&mut store, board, 50);
        assert_eq!(store.pairings_import_to_undo().unwrap(), None);
        assert!(matches!(
            store.undo_pairings_import(1, "Chief", 60),
            Err(StoreError::ImportNotUndoable { round: 1, games: 1 })
        ));
    }
}
