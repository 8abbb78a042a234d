//! A hall's outbox: every record the hall commits, kept for the event node until the broker has it.
//!
//! Flow: [`Store::join_hall`] marks the database as hall `name` of a clustered event (once; the
//! database keeps a random origin that tells it from another database calling itself the same
//! hall). From then on the schema's triggers copy every row written to the record tables
//! (boards, games, moves, events, board links) into `outbox`, in the transaction that writes the
//! row, in commit order (`seq`). The publisher ([`crate::cluster::hall`]) reads them
//! ([`Store::outbox_after`]), and deletes what the broker acknowledged
//! ([`Store::outbox_release`]); [`Store::outbox_state`] gives the depth and the oldest record's
//! age for `/metrics`. [`Store::hall_snapshot`] gives a hall database's whole record as records
//! again (`cluster republish`: a replaced hall's old database published under a new name). No
//! clock is read here: the triggers stamp the wall-clock time of the transaction.

use rusqlite::OptionalExtension;

use super::{Store, StoreError, hall_record::RecordKind};

/// The hall a database records for, and the database's origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HallIdentity {
    pub hall: String,
    /// Random, made when the database joined: every message id carries it.
    pub origin: String,
}

/// One record waiting for the broker: its place in the hall's order, when the hall committed it
/// (wall-clock ms since the Unix epoch), what it is and the row as JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboxRecord {
    pub seq: u64,
    pub at_ms: u64,
    pub kind: RecordKind,
    pub row: String,
}

/// How much waits in the outbox.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutboxState {
    /// Records not yet acknowledged by the broker.
    pub depth: u64,
    /// When the oldest of them was committed (wall-clock ms), if any waits.
    pub oldest_at_ms: Option<u64>,
}

/// A hall database's whole record, as records to publish again under another hall name: every
/// board, game, event, move and link as it stands, in the order of their tables' dependencies
/// (as [`Store::join_hall`] backfills them), numbered 1, 2, 3, ….
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HallSnapshot {
    pub identity: HallIdentity,
    /// The last record the database ever committed to its outbox: the copy stands for every
    /// record up to it (0: none).
    pub last_seq: u64,
    pub records: Vec<OutboxRecord>,
}

impl HallSnapshot {
    /// How many records of `kind` it holds.
    pub fn count(&self, kind: RecordKind) -> usize {
        self.records.iter().filter(|r| r.kind == kind).count()
    }
}

/// Why a database cannot record for a hall.
#[derive(Debug, thiserror::Error)]
pub enum HallError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "this database records for hall {stored:?}, not {asked:?}: give each hall its own \
         database (or keep the hall's name)"
    )]
    OtherHall { stored: String, asked: String },
}

impl From<rusqlite::Error> for HallError {
    fn from(e: rusqlite::Error) -> HallError {
        HallError::Store(e.into())
    }
}

impl Store {
    /// Marks the database as hall `hall`'s with a new `origin`, or checks that it already is
    /// (keeping its origin); from now on every record is also kept in the outbox. Records
    /// written before the database joined are put in the outbox now, in the order of their
    /// tables' dependencies, so that the event node gets the whole record.
    pub fn join_hall(&mut self, hall: &str, origin: &str) -> Result<HallIdentity, HallError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let stored: Option<(String, String)> = tx
            .query_row("SELECT hall, origin FROM cluster_hall", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let identity = match stored {
            Some((stored, origin)) if stored == hall => HallIdentity {
                hall: stored,
                origin,
            },
            Some((stored, _)) => {
                return Err(HallError::OtherHall {
                    stored,
                    asked: hall.to_owned(),
                });
            }
            None => {
                tx.execute(
                    "INSERT INTO cluster_hall (id, hall, origin) VALUES (1, ?1, ?2)",
                    (hall, origin),
                )?;
                tx.execute_batch(&backfill_sql())?;
                // From now on every write keeps its record in the outbox too.
                super::schema::make_outbox(&tx)?;
                HallIdentity {
                    hall: hall.to_owned(),
                    origin: origin.to_owned(),
                }
            }
        };
        tx.commit()?;
        Ok(identity)
    }

    /// The hall this database records for, if it joined one.
    pub fn hall(&self) -> Result<Option<HallIdentity>, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT hall, origin FROM cluster_hall", [], |r| {
                Ok(HallIdentity {
                    hall: r.get(0)?,
                    origin: r.get(1)?,
                })
            })
            .optional()?)
    }

    /// Hall database `path`, opened to read its [`Store::hall_snapshot`]: read-only, and taken
    /// from any release since the outbox came (schema 6), as a replaced hall's old database
    /// may be older than this program.
    pub fn open_hall_copy(path: &std::path::Path) -> Result<Store, StoreError> {
        Store::open_read_only_since(path, HALL_SCHEMA)
    }

    /// The database's whole record as [`HallSnapshot`] records stamped `at_ms` (wall clock), if
    /// the database joined a hall.
    pub fn hall_snapshot(&self, at_ms: u64) -> Result<Option<HallSnapshot>, StoreError> {
        let Some(identity) = self.hall()? else {
            return Ok(None);
        };
        let last_seq: i64 = self.conn.query_row(
            "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'outbox'), 0)",
            [],
            |r| r.get(0),
        )?;
        let mut records = Vec::new();
        for kind in RecordKind::WHOLE_ROWS {
            let mut stmt = self
                .conn
                .prepare(&format!("SELECT row FROM {} ORDER BY id", kind.view()))?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
            for row in rows {
                records.push(OutboxRecord {
                    seq: records.len() as u64 + 1,
                    at_ms,
                    kind,
                    row: row?,
                });
            }
        }
        Ok(Some(HallSnapshot {
            identity,
            last_seq: last_seq.max(0) as u64,
            records,
        }))
    }

    /// Up to `limit` records after `seq`, in order.
    pub fn outbox_after(&self, seq: u64, limit: usize) -> Result<Vec<OutboxRecord>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, at_ms, kind, row FROM outbox WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        )?;
        let rows = stmt.query_map((seq as i64, limit as i64), |r| {
            Ok(OutboxRecord {
                seq: r.get::<_, i64>(0)? as u64,
                at_ms: r.get::<_, i64>(1)?.max(0) as u64,
                kind: r.get(2)?,
                row: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Forgets the records up to `seq`: the broker has them.
    pub fn outbox_release(&mut self, seq: u64) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM outbox WHERE seq <= ?1")?
            .execute([seq as i64])?;
        Ok(())
    }

    /// How many records wait, and since when.
    pub fn outbox_state(&self) -> Result<OutboxState, StoreError> {
        let (depth, oldest): (i64, Option<i64>) = self.conn.query_row(
            "SELECT count(*), (SELECT at_ms FROM outbox ORDER BY seq LIMIT 1) FROM outbox",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(OutboxState {
            depth: depth.max(0) as u64,
            oldest_at_ms: oldest.map(|t| t.max(0) as u64),
        })
    }

    /// Writes a board's connection (`connected`) or loss at `at_ms` (the stream's clock).
    pub fn board_link(
        &mut self,
        board: super::BoardId,
        at_ms: crate::Millis,
        connected: bool,
    ) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT INTO board_links (board_id, at_ms, connected) VALUES (?1, ?2, ?3)",
            )?
            .execute((board, super::sql_ms(at_ms)?, i64::from(connected)))?;
        Ok(())
    }
}

/// The schema a hall database has had its outbox and views since.
const HALL_SCHEMA: usize = 6;

/// The record as it stood when the database joined a hall, as the triggers would have written
/// it: each kind of [`RecordKind::WHOLE_ROWS`] in turn, from its view.
fn backfill_sql() -> String {
    RecordKind::WHOLE_ROWS
        .into_iter()
        .map(|kind| {
            format!(
                "INSERT INTO outbox (at_ms, kind, row) SELECT CAST(unixepoch('subsec') * 1000 \
                 AS INTEGER), '{}', row FROM {} ORDER BY id;\n",
                kind.as_str(),
                kind.view()
            )
        })
        .collect()
}
