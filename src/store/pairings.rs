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
        if round == 0 {
            return Err(StoreError::InvalidNumber("round", 0));
        }
        if let Some(p) = rows.iter().find(|p| p.board == 0) {
            return Err(StoreError::InvalidNumber("board number", p.board));
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
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

    /// The byes of `round`, in the order imported.
    pub fn byes(&self, round: u32) -> Result<Vec<RoundBye>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
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
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {PAIRING_COLUMNS} FROM pairings WHERE round = ?1 ORDER BY board"
            ))?
            .query_map([round], |r| pairing_row(r, 0))?
            .collect::<Result<_, _>>()?)
    }
}
