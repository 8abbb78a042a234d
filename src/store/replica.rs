//! The event node's copy of every hall's record: the records a hall published, applied in the
//! hall's order, each exactly once.
//!
//! Flow: a hall's outbox rows travel as [`Envelope`]s ([`super::hall_record`], the wire both
//! sides share: the hall's origin, the record's place `seq` in the hall's order, when the hall
//! committed it, its kind and its row as the hall's triggers wrote it).
//! [`Store::apply_hall_records`] takes a batch of them in one transaction: a record at or
//! before the hall's stored position is a duplicate and skipped; the next one is applied under
//! the event node's own ids (a board is known by hall and number: its name is `hall/name`;
//! `replica_ids` maps each hall row to the event node's), and the position moves on. A record
//! from another origin (another database calling itself this hall) or after a gap (a record
//! missing before it) is refused, with what was applied before it kept: nothing is ever
//! guessed. [`Store::replica_position`] says where a hall stands. Times are the caller's.
//!
//! A hall database published again under another hall name (`cluster republish`: the hall's
//! PC replaced, its old database copied off) comes as a copy of its whole record, each record
//! marked with the last record of the database it stands for ([`Envelope::snapshot_of`]). The
//! ids of a database's rows are mapped under the first hall name its records came under
//! (`replica_origins`), whatever name they come under later: a row of the copy the event node
//! already holds is compared with it and kept (a game takes the copy's state, a move its
//! retraction), one it lacks is added, under the first name (`A/board 1` stays `A/board 1`).
//! A row that differs is refused ([`ReplicaError::Conflict`]), and so is a copy older than
//! what was applied ([`ReplicaError::StaleCopy`]). What the first name delivers later up to the
//! copy's last record is already there: it is passed over (`superseded`).

use rusqlite::{OptionalExtension, ToSql, Transaction, TransactionBehavior};
use serde_json::value::RawValue;

pub use super::hall_record::{Envelope, Incoming};
use super::{
    BoardId, GameId, Store, StoreError,
    hall_record::{
        BoardNumberRow, BoardRow, EventRow, GameRow, LinkRow, MoveRow, RecordKind, RetractedRow,
    },
    read::parse_kind,
};
use crate::game::Kind;

/// Where a hall's record stands at the event node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaPosition {
    pub origin: String,
    /// The last record applied.
    pub seq: u64,
    /// Its place in the broker's stream.
    pub stream_seq: u64,
    /// When the hall committed it (wall-clock ms).
    pub at_ms: u64,
    /// When the event node applied it (wall-clock ms).
    pub applied_at_ms: u64,
}

/// A board the event node keeps without the number its hall gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NumberRefused {
    /// The board's name at the event node (`hall/name`).
    pub board: String,
    /// The number its hall gave it.
    pub number: i64,
    /// The board that has the number (none: the number is free again, the board takes it at
    /// its hall's next renumbering).
    pub holder: Option<String>,
}

/// What one batch did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Records applied, and duplicates skipped.
    pub applied: usize,
    pub skipped: usize,
    /// Records passed over because a republished copy of their database already brought
    /// them: the position moves on past them.
    pub superseded: usize,
    /// The event node's games the batch touched, in first-touch order.
    pub games: Vec<GameId>,
    /// Boards added or renumbered.
    pub boards: Vec<BoardId>,
    /// Boards connected (true) or lost (false), in order.
    pub links: Vec<(BoardId, bool)>,
    /// Games begun, with their boards, in order.
    pub new_games: Vec<(BoardId, GameId)>,
    /// The hall's position after the batch, if anything was applied.
    pub position: Option<ReplicaPosition>,
    /// Each applied record's hall commit time (wall-clock ms), for the latency.
    pub committed_at: Vec<u64>,
    /// What the event node could apply only in part (a board number another hall's board has).
    pub warnings: Vec<String>,
    /// The record that stopped the batch, if one did: what came before it is applied.
    pub refused: Option<ReplicaError>,
}

impl From<rusqlite::Error> for ReplicaError {
    fn from(e: rusqlite::Error) -> ReplicaError {
        ReplicaError::Store(e.into())
    }
}

/// A board as the event node shows it: its name (`hall/name`), number, kind, whether the hall
/// has it connected (its last link; `None`: never said) and its newest game.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardShown {
    pub id: BoardId,
    pub name: String,
    pub number: Option<u32>,
    pub kind: Kind,
    pub connected: Option<bool>,
    pub latest_game: Option<GameId>,
}

/// Why a hall's record is not applied.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "hall {hall}: record {seq} comes from another database (origin {got}, the event has \
         {stored}): two halls publish under one name, or the hall's database was replaced"
    )]
    OtherOrigin {
        hall: String,
        seq: u64,
        stored: String,
        got: String,
    },
    #[error("hall {hall}: record {got} arrived, {expected} was expected: records are missing")]
    Gap {
        hall: String,
        expected: u64,
        got: u64,
    },
    #[error(
        "hall {hall}: record {seq} (database {origin}) differs from what the event node holds \
         of it under hall {owner}: {what}; nothing is guessed: it and what follows wait"
    )]
    Conflict {
        hall: String,
        origin: String,
        seq: u64,
        owner: String,
        what: String,
    },
    #[error(
        "hall {hall}: record {seq} is part of a copy of database {origin} as of its record \
         {copy}, but the event node already applied its record {applied}: the copy is older \
         than what the event node holds; republish a newer copy of the database"
    )]
    StaleCopy {
        hall: String,
        origin: String,
        seq: u64,
        copy: u64,
        applied: u64,
    },
    #[error("hall {hall}: record {seq} ({}) is unreadable: {why}", kind.as_str())]
    Unreadable {
        hall: String,
        seq: u64,
        kind: RecordKind,
        why: String,
    },
    #[error("hall {hall}: record {seq} names {table} {remote}, which the hall never sent")]
    UnknownRow {
        hall: String,
        seq: u64,
        table: &'static str,
        remote: i64,
    },
}

impl GameRow {
    /// Its columns but the id, in the table's order, on the event node's board `board`.
    fn values<'a>(&'a self, board: &'a i64) -> [&'a dyn ToSql; 16] {
        [
            board,
            &self.kind,
            &self.orientation,
            &self.date,
            &self.started_at_ms,
            &self.ended_at_ms,
            &self.white,
            &self.black,
            &self.result,
            &self.termination,
            &self.event,
            &self.site,
            &self.round,
            &self.board_no,
            &self.start_position,
            &self.time_control,
        ]
    }
}

/// A hall's record, read.
enum Record {
    Board(BoardRow),
    BoardNumber(BoardNumberRow),
    Game(GameRow),
    GameUpdate(GameRow),
    Move(MoveRow),
    MoveRetracted(RetractedRow),
    Event(EventRow),
    Link(LinkRow),
}

impl Record {
    fn read(kind: RecordKind, row: &RawValue) -> Result<Record, String> {
        let text = row.get();
        let r = match kind {
            RecordKind::Board => serde_json::from_str(text).map(Record::Board),
            RecordKind::BoardNumber => serde_json::from_str(text).map(Record::BoardNumber),
            RecordKind::Game => serde_json::from_str(text).map(Record::Game),
            RecordKind::GameUpdate => serde_json::from_str(text).map(Record::GameUpdate),
            RecordKind::Move => serde_json::from_str(text).map(Record::Move),
            RecordKind::MoveRetracted => serde_json::from_str(text).map(Record::MoveRetracted),
            RecordKind::Event => serde_json::from_str(text).map(Record::Event),
            RecordKind::Link => serde_json::from_str(text).map(Record::Link),
        };
        r.map_err(|e| e.to_string())
    }
}

/// The tables whose ids are mapped, as `replica_ids.tbl` names them.
const BOARDS: &str = "boards";
const GAMES: &str = "games";
const MOVES: &str = "moves";
const EVENTS: &str = "events";
const LINKS: &str = "board_links";

impl Store {
    /// Where hall `hall`'s record stands here, if anything of it was applied.
    pub fn replica_position(&self, hall: &str) -> Result<Option<ReplicaPosition>, StoreError> {
        read_position(&self.conn, hall)
    }

    /// The hall a game of this node belongs to, and the game's id in that hall.
    pub fn replica_game(&self, game: GameId) -> Result<Option<(String, i64)>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT hall, remote FROM replica_ids WHERE tbl = 'games' AND local = ?1",
            )?
            .query_row([game], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    /// This node's id of hall `hall`'s event `remote`, once it arrived.
    pub fn replica_event(&self, hall: &str, remote: i64) -> Result<Option<i64>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT local FROM replica_ids WHERE hall = ?1 AND tbl = 'events' AND remote = ?2",
            )?
            .query_row((hall, remote), |r| r.get(0))
            .optional()?)
    }

    /// Every board (`only`: these), as the event node shows it.
    pub fn boards_shown(&self, only: Option<BoardId>) -> Result<Vec<BoardShown>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT b.id, b.name, b.number, b.kind,                (SELECT connected FROM board_links l WHERE l.board_id = b.id ORDER BY l.id DESC                 LIMIT 1),                (SELECT max(g.id) FROM games g WHERE g.board_id = b.id)              FROM boards b WHERE ?1 IS NULL OR b.id = ?1 ORDER BY b.number IS NULL, b.number, b.name",
        )?;
        let rows = stmt.query_map([only], |r| {
            Ok((
                BoardId(r.get(0)?),
                r.get::<_, String>(1)?,
                r.get::<_, Option<i64>>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, Option<i64>>(4)?,
                r.get::<_, Option<i64>>(5)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, name, number, kind, connected, latest) = row?;
            out.push(BoardShown {
                id,
                name,
                number: number.and_then(|n| u32::try_from(n).ok()),
                kind: parse_kind(&kind)?,
                connected: connected.map(|c| c != 0),
                latest_game: latest.map(GameId),
            });
        }
        Ok(out)
    }

    /// Every board kept without the number its hall gave it, because another board of the
    /// event has that number: by board name.
    pub fn numbers_refused(&self) -> Result<Vec<NumberRefused>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT b.name, b.number_refused, \
               (SELECT h.name FROM boards h WHERE h.number = b.number_refused AND h.id <> b.id) \
             FROM boards b WHERE b.number_refused IS NOT NULL ORDER BY b.name",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(NumberRefused {
                board: r.get(0)?,
                number: r.get(1)?,
                holder: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Applies `records` of hall `hall`, in order, in one transaction, at `now_ms` (wall clock).
    pub fn apply_hall_records(
        &mut self,
        hall: &str,
        records: &[Incoming],
        now_ms: u64,
    ) -> Result<Applied, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = apply_records(&tx, hall, records, now_ms)?;
        tx.commit()?;
        Ok(out)
    }

    /// Applies several halls' records in one transaction and one commit, at `now_ms`: each
    /// hall's `(hall, records)` as [`Store::apply_hall_records`] applies them, one hall after
    /// the other. A refused record stops only its hall. A hall whose batch fails (its `Err`: an
    /// error of SQLite's, not a refusal) leaves nothing of it: the transaction is rolled back
    /// and the other halls' batches applied again without it, as if it had not been there
    /// (never in the common case, where nothing fails; a savepoint per hall instead cost every
    /// transaction its statement journal). The outer error (the commit, or beginning the
    /// transaction) means that nothing of any hall was applied.
    pub fn apply_halls(
        &mut self,
        batches: &[(&str, &[Incoming])],
        now_ms: u64,
    ) -> Result<Vec<Result<Applied, StoreError>>, StoreError> {
        let mut failed: Vec<Option<StoreError>> = batches.iter().map(|_| None).collect();
        'attempt: loop {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut done: Vec<Option<Applied>> = Vec::with_capacity(batches.len());
            for (i, &(hall, records)) in batches.iter().enumerate() {
                if failed[i].is_some() {
                    done.push(None);
                    continue;
                }
                match apply_records(&tx, hall, records, now_ms) {
                    Ok(applied) => done.push(Some(applied)),
                    Err(e) => {
                        failed[i] = Some(e);
                        // Rolled back as it is dropped.
                        drop(tx);
                        continue 'attempt;
                    }
                }
            }
            tx.commit()?;
            return Ok(failed
                .into_iter()
                .zip(done)
                .map(|(failed, done)| match (failed, done) {
                    (Some(e), _) => Err(e),
                    (None, Some(applied)) => Ok(applied),
                    (None, None) => Ok(Applied::default()),
                })
                .collect());
        }
    }
}

/// Applies `records` of hall `hall`, in order, inside `tx`, at `now_ms` (wall clock).
fn apply_records(
    tx: &Transaction<'_>,
    hall: &str,
    records: &[Incoming],
    now_ms: u64,
) -> Result<Applied, StoreError> {
    let mut position = read_position(tx, hall)?;
    let mut out = Applied::default();
    for incoming in records {
        let e = &incoming.envelope;
        if let Some(p) = &position {
            if p.origin != e.origin {
                out.refused = Some(ReplicaError::OtherOrigin {
                    hall: hall.to_owned(),
                    seq: e.seq,
                    stored: p.origin.clone(),
                    got: e.origin.clone(),
                });
                break;
            }
            if e.seq <= p.seq {
                out.skipped += 1;
                continue;
            }
        }
        let expected = position.as_ref().map_or(1, |p| p.seq + 1);
        if e.seq != expected {
            out.refused = Some(ReplicaError::Gap {
                hall: hall.to_owned(),
                expected,
                got: e.seq,
            });
            break;
        }
        let record = match Record::read(e.kind, &e.row) {
            Ok(r) => r,
            Err(why) => {
                out.refused = Some(ReplicaError::Unreadable {
                    hall: hall.to_owned(),
                    seq: e.seq,
                    kind: e.kind,
                    why,
                });
                break;
            }
        };
        // The database's rows are mapped under the first hall name they came under.
        let origin = read_origin(tx, &e.origin)?.unwrap_or_else(|| OriginState {
            owner: hall.to_owned(),
            seq: 0,
            covered: 0,
        });
        if let Some(copy) = e.snapshot_of
            && origin.seq > copy
        {
            out.refused = Some(ReplicaError::StaleCopy {
                hall: hall.to_owned(),
                origin: e.origin.clone(),
                seq: e.seq,
                copy,
                applied: origin.seq,
            });
            break;
        }
        let superseded = e.snapshot_of.is_none() && e.seq <= origin.covered;
        if !superseded {
            let mut apply = Apply {
                tx,
                hall,
                ids: &origin.owner,
                origin: &e.origin,
                merge: e.snapshot_of.is_some(),
                seq: e.seq,
                out: &mut out,
            };
            match apply.record(record) {
                Ok(()) => {}
                Err(ReplicaError::Store(err)) => return Err(err),
                Err(refused) => {
                    out.refused = Some(refused);
                    break;
                }
            }
        }
        tx.prepare_cached(
            "INSERT INTO replica_origins (origin, hall, seq, covered) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (origin) DO UPDATE SET seq = max(seq, ?3), covered = max(covered, ?4)",
        )?
        .execute((
            &e.origin,
            &origin.owner,
            if e.snapshot_of.is_some() {
                0
            } else {
                e.seq as i64
            },
            e.snapshot_of.unwrap_or(0) as i64,
        ))?;
        tx.prepare_cached(
            "INSERT INTO replica_log (hall, seq, kind, at_ms, applied_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute((
            hall,
            e.seq as i64,
            e.kind.as_str(),
            e.at_ms as i64,
            now_ms as i64,
        ))?;
        if superseded {
            out.superseded += 1;
        } else {
            out.applied += 1;
            out.committed_at.push(e.at_ms);
        }
        position = Some(ReplicaPosition {
            origin: e.origin.clone(),
            seq: e.seq,
            stream_seq: incoming.stream_seq,
            at_ms: e.at_ms,
            applied_at_ms: now_ms,
        });
    }
    if out.applied + out.superseded > 0
        && let Some(p) = &position
    {
        tx.prepare_cached(
            "INSERT INTO replica_halls (hall, origin, seq, stream_seq, at_ms, applied_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (hall) DO UPDATE SET \
             origin = ?2, seq = ?3, stream_seq = ?4, at_ms = ?5, applied_at_ms = ?6",
        )?
        .execute((
            hall,
            &p.origin,
            p.seq as i64,
            p.stream_seq as i64,
            p.at_ms as i64,
            p.applied_at_ms as i64,
        ))?;
        out.position = position;
    }
    Ok(out)
}

fn read_position(
    conn: &rusqlite::Connection,
    hall: &str,
) -> Result<Option<ReplicaPosition>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT origin, seq, stream_seq, at_ms, applied_at_ms FROM replica_halls \
             WHERE hall = ?1",
        )?
        .query_row([hall], |r| {
            Ok(ReplicaPosition {
                origin: r.get(0)?,
                seq: r.get::<_, i64>(1)? as u64,
                stream_seq: r.get::<_, i64>(2)? as u64,
                at_ms: r.get::<_, i64>(3)?.max(0) as u64,
                applied_at_ms: r.get::<_, i64>(4)?.max(0) as u64,
            })
        })
        .optional()?)
}

/// What the event node holds of a hall database (`replica_origins`).
struct OriginState {
    /// The hall name its rows are mapped under.
    owner: String,
    /// The last of its records applied as the hall delivered it.
    seq: u64,
    /// The last record a republished copy of it stood for.
    covered: u64,
}

fn read_origin(
    conn: &rusqlite::Connection,
    origin: &str,
) -> Result<Option<OriginState>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT hall, seq, covered FROM replica_origins WHERE origin = ?1")?
        .query_row([origin], |r| {
            Ok(OriginState {
                owner: r.get(0)?,
                seq: r.get::<_, i64>(1)?.max(0) as u64,
                covered: r.get::<_, i64>(2)?.max(0) as u64,
            })
        })
        .optional()?)
}

/// One record being applied inside the batch's transaction.
struct Apply<'a, 'c> {
    tx: &'a Transaction<'c>,
    /// The hall whose stream delivered it.
    hall: &'a str,
    /// The hall name the database's ids are mapped under (its boards are `ids/name`).
    ids: &'a str,
    /// The database it comes from.
    origin: &'a str,
    /// A republished copy: a row already here is compared and kept, not added again.
    merge: bool,
    seq: u64,
    out: &'a mut Applied,
}

impl Apply<'_, '_> {
    fn record(&mut self, record: Record) -> Result<(), ReplicaError> {
        match record {
            Record::Board(b) => self.board(b),
            Record::BoardNumber(b) => {
                let local = BoardId(self.local(BOARDS, b.id)?);
                self.number(local, b.number)
            }
            Record::Game(g) => {
                let board = self.local(BOARDS, g.board_id)?;
                if let Some(local) = self.held(GAMES, g.id)? {
                    return self.merge_game(local, board, &g);
                }
                self.tx
                    .prepare_cached(
                        "INSERT INTO games (board_id, kind, orientation, date, started_at_ms, \
                         ended_at_ms, white, black, result, termination, event, site, round, \
                         board_no, start_position, time_control) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, \
                         ?15, ?16)",
                    )?
                    .execute(g.values(&board).as_slice())?;
                let local = self.tx.last_insert_rowid();
                self.map(GAMES, g.id, local)?;
                self.out.new_games.push((BoardId(board), GameId(local)));
                self.touch(GameId(local));
                Ok(())
            }
            Record::GameUpdate(g) => {
                let local = self.local(GAMES, g.id)?;
                let board = self.local(BOARDS, g.board_id)?;
                self.update_game(local, board, &g)
            }
            Record::Move(m) => {
                let game = self.local(GAMES, m.game_id)?;
                let retracted_by = match m.retracted_by {
                    Some(e) => Some(self.local(EVENTS, e)?),
                    None => None,
                };
                if let Some(local) = self.held(MOVES, m.id)? {
                    return self.merge_move(local, game, retracted_by, &m);
                }
                self.tx
                    .prepare_cached(
                        "INSERT INTO moves (game_id, ply, notation, uci, position, at_ms, \
                         clock_white_ms, clock_black_ms, time_trouble, retracted_by) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    )?
                    .execute(rusqlite::params![
                        game,
                        m.ply,
                        m.notation,
                        m.uci,
                        m.position,
                        m.at_ms,
                        m.clock_white_ms,
                        m.clock_black_ms,
                        m.time_trouble,
                        retracted_by
                    ])?;
                let local = self.tx.last_insert_rowid();
                self.map(MOVES, m.id, local)?;
                self.touch(GameId(game));
                Ok(())
            }
            Record::MoveRetracted(m) => {
                let local = self.local(MOVES, m.id)?;
                let by = self.local(EVENTS, m.retracted_by)?;
                self.tx
                    .prepare_cached("UPDATE moves SET retracted_by = ?1 WHERE id = ?2")?
                    .execute((by, local))?;
                let game: i64 = self
                    .tx
                    .prepare_cached("SELECT game_id FROM moves WHERE id = ?1")?
                    .query_row([local], |r| r.get(0))?;
                self.touch(GameId(game));
                Ok(())
            }
            Record::Event(ev) => {
                let game = match ev.game_id {
                    Some(g) => Some(self.local(GAMES, g)?),
                    None => None,
                };
                let board = self.local(BOARDS, ev.board_id)?;
                if let Some(local) = self.held(EVENTS, ev.id)? {
                    let have: (Option<i64>, i64, i64, String, Option<i64>, String) = self
                        .tx
                        .prepare_cached(
                            "SELECT game_id, board_id, at_ms, kind, ply, detail FROM events \
                             WHERE id = ?1",
                        )?
                        .query_row([local], |r| {
                            Ok((
                                r.get(0)?,
                                r.get(1)?,
                                r.get(2)?,
                                r.get(3)?,
                                r.get(4)?,
                                r.get(5)?,
                            ))
                        })?;
                    let copy = (game, board, ev.at_ms, ev.kind, ev.ply, ev.detail);
                    if have != copy {
                        return Err(self.conflict(format!(
                            "its event {} is {have:?} here, {copy:?} in the copy",
                            ev.id
                        )));
                    }
                    return Ok(());
                }
                self.tx
                    .prepare_cached(
                        "INSERT INTO events (game_id, board_id, at_ms, kind, ply, detail) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    )?
                    .execute(rusqlite::params![
                        game, board, ev.at_ms, ev.kind, ev.ply, ev.detail
                    ])?;
                let local = self.tx.last_insert_rowid();
                self.map(EVENTS, ev.id, local)?;
                if let Some(g) = game {
                    self.touch(GameId(g));
                }
                Ok(())
            }
            Record::Link(l) => {
                let board = BoardId(self.local(BOARDS, l.board_id)?);
                if let Some(local) = self.held(LINKS, l.id)? {
                    let have: (BoardId, i64, i64) = self
                        .tx
                        .prepare_cached(
                            "SELECT board_id, at_ms, connected FROM board_links WHERE id = ?1",
                        )?
                        .query_row([local], |r| Ok((BoardId(r.get(0)?), r.get(1)?, r.get(2)?)))?;
                    let copy = (board, l.at_ms, l.connected);
                    if have != copy {
                        return Err(self.conflict(format!(
                            "its board link {} is {have:?} here, {copy:?} in the copy",
                            l.id
                        )));
                    }
                    return Ok(());
                }
                self.tx
                    .prepare_cached(
                        "INSERT INTO board_links (board_id, at_ms, connected) VALUES (?1, ?2, ?3)",
                    )?
                    .execute((board, l.at_ms, l.connected))?;
                let local = self.tx.last_insert_rowid();
                self.map(LINKS, l.id, local)?;
                self.out.links.push((board, l.connected != 0));
                Ok(())
            }
        }
    }

    fn board(&mut self, b: BoardRow) -> Result<(), ReplicaError> {
        let name = format!("{}/{}", self.ids, b.name);
        if let Some(local) = self.held(BOARDS, b.id)? {
            let (have_name, have_kind, have_number): (String, String, Option<i64>) = self
                .tx
                .prepare_cached("SELECT name, kind, number FROM boards WHERE id = ?1")?
                .query_row([local], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            if have_name != name || have_kind != b.kind {
                return Err(self.conflict(format!(
                    "its board {} is {have_name} ({have_kind}) here, {name} ({}) in the copy",
                    b.id, b.kind
                )));
            }
            if have_number != b.number {
                self.number(BoardId(local), b.number)?;
            }
            return Ok(());
        }
        if self.merge {
            let taken: Option<i64> = self
                .tx
                .prepare_cached("SELECT id FROM boards WHERE name = ?1")?
                .query_row([&name], |r| r.get(0))
                .optional()?;
            if taken.is_some() {
                return Err(self.conflict(format!(
                    "a board {name} is here already, but not as the copy's board {}",
                    b.id
                )));
            }
        }
        self.tx
            .prepare_cached("INSERT INTO boards (name, kind) VALUES (?1, ?2)")?
            .execute((&name, &b.kind))?;
        let local = BoardId(self.tx.last_insert_rowid());
        self.map(BOARDS, b.id, local.0)?;
        self.number(local, b.number)
    }

    /// Gives `board` the hall's `number` (none if another board of the event has it).
    fn number(&mut self, board: BoardId, number: Option<i64>) -> Result<(), ReplicaError> {
        let given = self.free_number(number, board)?;
        let refused = if given.is_none() { number } else { None };
        self.tx
            .prepare_cached("UPDATE boards SET number = ?1, number_refused = ?2 WHERE id = ?3")?
            .execute((given, refused, board))?;
        self.out.boards.push(board);
        Ok(())
    }

    /// `number` if no other board of the event has it; else none, with a warning.
    fn free_number(
        &mut self,
        number: Option<i64>,
        board: BoardId,
    ) -> Result<Option<i64>, ReplicaError> {
        let Some(n) = number else {
            return Ok(None);
        };
        let holder: Option<String> = self
            .tx
            .prepare_cached("SELECT name FROM boards WHERE number = ?1 AND id <> ?2")?
            .query_row((n, board), |r| r.get(0))
            .optional()?;
        match holder {
            None => Ok(Some(n)),
            Some(other) => {
                self.out.warnings.push(format!(
                    "hall {}: board number {n} is already {other}'s; the board is kept without a \
                     number (number the boards across the event: each hall its own range)",
                    self.hall
                ));
                Ok(None)
            }
        }
    }

    /// Sets game `local` (on the event node's `board`) to the hall's row `g`.
    fn update_game(&mut self, local: i64, board: i64, g: &GameRow) -> Result<(), ReplicaError> {
        self.tx
            .prepare_cached(
                "UPDATE games SET board_id = ?1, kind = ?2, orientation = ?3, date = ?4, \
                 started_at_ms = ?5, ended_at_ms = ?6, white = ?7, black = ?8, \
                 result = ?9, termination = ?10, event = ?11, site = ?12, round = ?13, \
                 board_no = ?14, start_position = ?15, time_control = ?16 WHERE id = ?17",
            )?
            .execute(
                [g.values(&board).as_slice(), &[&local as &dyn ToSql]]
                    .concat()
                    .as_slice(),
            )?;
        self.touch(GameId(local));
        Ok(())
    }

    /// A copy's game the event node holds: the same board, kind and start, or refused; then
    /// it takes the copy's state (its result, its end: the copy is at least as new).
    fn merge_game(&mut self, local: i64, board: i64, g: &GameRow) -> Result<(), ReplicaError> {
        let have: (i64, String, i64) = self
            .tx
            .prepare_cached("SELECT board_id, kind, started_at_ms FROM games WHERE id = ?1")?
            .query_row([local], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        let copy = (board, g.kind.clone(), g.started_at_ms);
        if have != copy {
            return Err(self.conflict(format!(
                "its game {} is (board, kind, start) {have:?} here, {copy:?} in the copy",
                g.id
            )));
        }
        self.update_game(local, board, g)
    }

    /// A copy's move the event node holds: the same in every column, or refused; a retraction
    /// the event node did not have yet is taken.
    fn merge_move(
        &mut self,
        local: i64,
        game: i64,
        retracted_by: Option<i64>,
        m: &MoveRow,
    ) -> Result<(), ReplicaError> {
        type Columns = (
            i64,
            i64,
            String,
            Option<String>,
            String,
            i64,
            Option<i64>,
            Option<i64>,
            i64,
        );
        let (have, have_retracted): (Columns, Option<i64>) = self
            .tx
            .prepare_cached(
                "SELECT game_id, ply, notation, uci, position, at_ms, clock_white_ms, \
                 clock_black_ms, time_trouble, retracted_by FROM moves WHERE id = ?1",
            )?
            .query_row([local], |r| {
                Ok((
                    (
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        r.get(7)?,
                        r.get(8)?,
                    ),
                    r.get(9)?,
                ))
            })?;
        let copy: Columns = (
            game,
            m.ply,
            m.notation.clone(),
            m.uci.clone(),
            m.position.clone(),
            m.at_ms,
            m.clock_white_ms,
            m.clock_black_ms,
            m.time_trouble,
        );
        if have != copy {
            return Err(self.conflict(format!(
                "its move {} is {have:?} here, {copy:?} in the copy",
                m.id
            )));
        }
        match (have_retracted, retracted_by) {
            (a, b) if a == b => Ok(()),
            (None, Some(by)) => {
                self.tx
                    .prepare_cached("UPDATE moves SET retracted_by = ?1 WHERE id = ?2")?
                    .execute((by, local))?;
                self.touch(GameId(game));
                Ok(())
            }
            (have, copy) => Err(self.conflict(format!(
                "its move {} is retracted by event {have:?} here, {copy:?} in the copy",
                m.id
            ))),
        }
    }

    /// The event node's row for the hall's row `remote`, when a republished copy brings a row
    /// it may already hold (never asked otherwise: a hall sends each row once).
    fn held(&self, table: &'static str, remote: i64) -> Result<Option<i64>, ReplicaError> {
        if !self.merge {
            return Ok(None);
        }
        Ok(self
            .tx
            .prepare_cached(
                "SELECT local FROM replica_ids WHERE hall = ?1 AND tbl = ?2 AND remote = ?3",
            )?
            .query_row((self.ids, table, remote), |r| r.get(0))
            .optional()?)
    }

    fn conflict(&self, what: String) -> ReplicaError {
        ReplicaError::Conflict {
            hall: self.hall.to_owned(),
            origin: self.origin.to_owned(),
            seq: self.seq,
            owner: self.ids.to_owned(),
            what,
        }
    }

    fn local(&self, table: &'static str, remote: i64) -> Result<i64, ReplicaError> {
        self.tx
            .prepare_cached(
                "SELECT local FROM replica_ids WHERE hall = ?1 AND tbl = ?2 AND remote = ?3",
            )?
            .query_row((self.ids, table, remote), |r| r.get(0))
            .optional()?
            .ok_or(ReplicaError::UnknownRow {
                hall: self.hall.to_owned(),
                seq: self.seq,
                table,
                remote,
            })
    }

    fn map(&self, table: &'static str, remote: i64, local: i64) -> Result<(), ReplicaError> {
        self.tx
            .prepare_cached(
                "INSERT INTO replica_ids (hall, tbl, remote, local) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute((self.ids, table, remote, local))?;
        Ok(())
    }

    fn touch(&mut self, game: GameId) {
        if !self.out.games.contains(&game) {
            self.out.games.push(game);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        sensor::Orientation,
        store::{OutboxRecord, Write},
        tracker::{RecordedMove, TrackerEvent},
    };

    fn mv(ply: u32, notation: &str) -> RecordedMove {
        RecordedMove {
            ply,
            notation: notation.to_owned(),
            uci: None,
            position: format!("after {notation}"),
            at_ms: 1000 * u64::from(ply),
            clock_white_ms: Some(900_000 - u64::from(ply)),
            clock_black_ms: Some(900_000),
            time_trouble: false,
        }
    }

    fn envelopes(origin: &str, records: &[OutboxRecord]) -> Vec<Incoming> {
        records
            .iter()
            .map(|r| Incoming {
                envelope: Envelope {
                    origin: origin.to_owned(),
                    seq: r.seq,
                    at_ms: r.at_ms,
                    kind: r.kind,
                    row: RawValue::from_string(r.row.clone()).unwrap(),
                    snapshot_of: None,
                },
                stream_seq: r.seq + 100,
            })
            .collect()
    }

    /// A hall database with one board playing `plies` and a revision, as the hall's outbox.
    fn hall() -> (Store, Vec<OutboxRecord>) {
        let mut hall = Store::open_in_memory().unwrap();
        hall.join_hall("A", "0123456789abcdef").unwrap();
        let board = hall.board("board 1", Kind::Chess).unwrap();
        let mut writes = vec![
            Write::Link {
                board,
                at_ms: 10,
                connected: true,
            },
            Write::Event {
                board,
                event: TrackerEvent::GameStarted {
                    at_ms: 20,
                    orientation: Orientation::Normal,
                    start: None,
                },
            },
        ];
        for (i, n) in ["e4", "e5", "Nf3"].iter().enumerate() {
            writes.push(Write::Event {
                board,
                event: TrackerEvent::Move(mv(i as u32 + 1, n)),
            });
        }
        writes.push(Write::Event {
            board,
            event: TrackerEvent::Revision {
                at_ms: 4000,
                old: mv(3, "Nf3"),
                new: mv(3, "Nc3"),
            },
        });
        hall.write_batch(&writes).unwrap();
        let out = hall.outbox_after(0, 1000).unwrap();
        (hall, out)
    }

    #[test]
    fn a_halls_outbox_applied_at_the_event_node_gives_the_same_game_once() {
        let (hall, records) = hall();
        assert_eq!(
            records.iter().map(|r| r.seq).collect::<Vec<_>>(),
            (1..=records.len() as u64).collect::<Vec<_>>()
        );
        let kinds: Vec<&str> = records.iter().map(|r| r.kind.as_str()).collect();
        assert!(kinds.starts_with(&["board", "link", "game"]), "{kinds:?}");
        assert!(kinds.contains(&"move_retracted"), "{kinds:?}");
        let mut event = Store::open_in_memory().unwrap();
        let incoming = envelopes("0123456789abcdef", &records);
        // Applied in two batches, the second overlapping the first: each record once.
        let first = event.apply_hall_records("A", &incoming[..4], 5).unwrap();
        assert_eq!((first.applied, first.skipped), (4, 0));
        let rest = event.apply_hall_records("A", &incoming, 6).unwrap();
        assert_eq!((rest.applied, rest.skipped), (records.len() - 4, 4));
        assert!(rest.refused.is_none());
        let position = event.replica_position("A").unwrap().unwrap();
        assert_eq!(position.seq, records.len() as u64);
        assert_eq!(position.stream_seq, records.len() as u64 + 100);
        let at_hall = hall.games().unwrap();
        let at_event = event.games().unwrap();
        assert_eq!(at_event.len(), 1);
        assert_eq!(at_event[0].board_name, "A/board 1");
        assert_eq!(at_event[0].moves, at_hall[0].moves);
        assert_eq!(at_event[0].moves[2].notation, "Nc3");
        assert_eq!(at_event[0].events.len(), at_hall[0].events.len());
        let shown = event.boards_shown(None).unwrap();
        assert_eq!(shown[0].connected, Some(true));
        assert_eq!(
            event.replica_game(at_event[0].id).unwrap(),
            Some(("A".to_owned(), at_hall[0].id.0))
        );
    }

    #[test]
    fn every_kind_of_record_as_the_hall_writes_it_is_read_whole_at_the_event_node() {
        let (mut hall, _) = hall();
        let board = hall.board("board 1", Kind::Chess).unwrap();
        hall.set_board_number(board, 4).unwrap();
        hall.write_batch(&[Write::Event {
            board,
            event: TrackerEvent::Reoriented {
                at_ms: 5000,
                orientation: Orientation::Rotated,
            },
        }])
        .unwrap();
        let records = hall.outbox_after(0, 1000).unwrap();
        let mut kinds: Vec<RecordKind> = records.iter().map(|r| r.kind).collect();
        kinds.sort_by_key(|k| k.as_str());
        kinds.dedup();
        let mut all = RecordKind::ALL.to_vec();
        all.sort_by_key(|k| k.as_str());
        assert_eq!(kinds, all, "the fixture writes every kind");
        // Each row has exactly the fields its struct reads (unknown fields are refused).
        let mut event = Store::open_in_memory().unwrap();
        let applied = event
            .apply_hall_records("A", &envelopes("0123456789abcdef", &records), 1)
            .unwrap();
        assert!(applied.refused.is_none(), "{:?}", applied.refused);
        assert_eq!(applied.applied, records.len());
        // A row with a column this event node does not know is refused, not dropped.
        let mut newer = envelopes("0123456789abcdef", &records[..1]);
        newer[0].envelope.seq = records.len() as u64 + 1;
        newer[0].envelope.row = RawValue::from_string(
            r#"{"id":99,"name":"x","kind":"chess","number":null,"lane":1}"#.into(),
        )
        .unwrap();
        let refused = event.apply_hall_records("A", &newer, 2).unwrap().refused;
        assert!(
            matches!(
                refused,
                Some(ReplicaError::Unreadable {
                    kind: RecordKind::Board,
                    ..
                })
            ),
            "{refused:?}"
        );
    }

    #[test]
    fn a_board_number_two_halls_use_is_kept_by_the_first_and_remembered_for_the_second() {
        let numbered = |hall: &str, origin: &str, number: u32| {
            let mut s = Store::open_in_memory().unwrap();
            s.join_hall(hall, origin).unwrap();
            let board = s.board("board", Kind::Chess).unwrap();
            s.set_board_number(board, number).unwrap();
            (s, board)
        };
        let (a, _) = numbered("A", "aaaaaaaaaaaaaaaa", 7);
        let (mut b, b_board) = numbered("B", "bbbbbbbbbbbbbbbb", 7);
        let mut event = Store::open_in_memory().unwrap();
        let from_a = envelopes("aaaaaaaaaaaaaaaa", &a.outbox_after(0, 100).unwrap());
        event.apply_hall_records("A", &from_a, 1).unwrap();
        let from_b = envelopes("bbbbbbbbbbbbbbbb", &b.outbox_after(0, 100).unwrap());
        let applied = event.apply_hall_records("B", &from_b, 2).unwrap();
        assert!(applied.warnings.iter().any(|w| w.contains("number 7")));
        assert_eq!(
            event.numbers_refused().unwrap(),
            vec![NumberRefused {
                board: "B/board".into(),
                number: 7,
                holder: Some("A/board".into()),
            }]
        );
        // Hall B renumbers its board: it takes the new number, and nothing is refused any more.
        let last = from_b.len() as u64;
        b.set_board_number(b_board, 8).unwrap();
        let renumbered = envelopes("bbbbbbbbbbbbbbbb", &b.outbox_after(last, 100).unwrap());
        event.apply_hall_records("B", &renumbered, 3).unwrap();
        assert_eq!(event.numbers_refused().unwrap(), vec![]);
        let numbers: Vec<Option<u32>> = event
            .boards_shown(None)
            .unwrap()
            .iter()
            .map(|b| b.number)
            .collect();
        assert_eq!(numbers, vec![Some(7), Some(8)]);
    }

    #[test]
    fn a_gap_or_another_database_is_refused_and_what_came_before_is_kept() {
        let (_, records) = hall();
        let mut event = Store::open_in_memory().unwrap();
        let incoming = envelopes("0123456789abcdef", &records);
        // Record 3 missing: 1 and 2 are applied, 4 refused.
        let mut gapped: Vec<Incoming> = envelopes("0123456789abcdef", &records[..2]);
        gapped.extend(envelopes("0123456789abcdef", &records[3..4]));
        let applied = event.apply_hall_records("A", &gapped, 1).unwrap();
        assert_eq!(applied.applied, 2);
        assert!(
            matches!(
                applied.refused,
                Some(ReplicaError::Gap {
                    expected: 3,
                    got: 4,
                    ..
                })
            ),
            "{:?}",
            applied.refused
        );
        assert_eq!(event.replica_position("A").unwrap().unwrap().seq, 2);
        // Another database calling itself hall A.
        let other = envelopes("fedcba9876543210", &records[2..3]);
        let applied = event.apply_hall_records("A", &other, 2).unwrap();
        assert_eq!(applied.applied, 0);
        assert!(matches!(
            applied.refused,
            Some(ReplicaError::OtherOrigin { .. })
        ));
        // The right record 3 and what follows go on.
        let applied = event.apply_hall_records("A", &incoming[2..], 3).unwrap();
        assert!(applied.refused.is_none());
        assert_eq!(applied.applied, records.len() - 2);
    }

    #[test]
    fn several_halls_in_one_transaction_keep_theirs_when_one_is_refused_and_one_fails() {
        let (hall, records) = hall();
        let n = records.len();
        let a = envelopes("aaaaaaaaaaaaaaaa", &records);
        // Hall B's record 3 missing: 1 and 2 are applied, 4 refused.
        let mut b = envelopes("bbbbbbbbbbbbbbbb", &records[..2]);
        b.extend(envelopes("bbbbbbbbbbbbbbbb", &records[3..]));
        // Hall C's last record again under the next seq: the move retracted twice, which the
        // schema refuses (an SQLite error, not a refusal): nothing of C's batch is kept.
        let mut c = envelopes("cccccccccccccccc", &records);
        let retracted = records
            .iter()
            .find(|r| r.kind == RecordKind::MoveRetracted)
            .unwrap();
        let mut again = envelopes("cccccccccccccccc", std::slice::from_ref(retracted));
        again[0].envelope.seq = n as u64 + 1;
        c.extend(again);
        let mut event = Store::open_in_memory().unwrap();
        let results = event
            .apply_halls(&[("A", &a), ("C", &c), ("B", &b)], 7)
            .unwrap();
        let [a_done, c_done, b_done] = &results[..] else {
            panic!("{results:?}")
        };
        let a_done = a_done.as_ref().unwrap();
        assert_eq!(a_done.applied, n);
        assert!(a_done.refused.is_none());
        assert!(matches!(c_done, Err(StoreError::Sqlite(_))), "{c_done:?}");
        let b_done = b_done.as_ref().unwrap();
        assert_eq!(b_done.applied, 2);
        assert!(
            matches!(
                b_done.refused,
                Some(ReplicaError::Gap {
                    expected: 3,
                    got: 4,
                    ..
                })
            ),
            "{:?}",
            b_done.refused
        );
        // A whole, B up to its gap, C nothing: no position, no board, no log.
        assert_eq!(event.replica_position("A").unwrap().unwrap().seq, n as u64);
        assert_eq!(event.replica_position("B").unwrap().unwrap().seq, 2);
        assert_eq!(event.replica_position("C").unwrap(), None);
        let names: Vec<String> = event
            .boards_shown(None)
            .unwrap()
            .into_iter()
            .map(|b| b.name)
            .collect();
        assert_eq!(names, ["A/board 1", "B/board 1"]);
        let logged: i64 = event
            .conn
            .query_row("SELECT count(*) FROM replica_log", [], |r| r.get(0))
            .unwrap();
        assert_eq!(logged as usize, n + 2);
        let mapped: i64 = event
            .conn
            .query_row(
                "SELECT count(*) FROM replica_ids WHERE hall = 'C'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(mapped, 0);
        assert_eq!(
            event.games().unwrap()[0].moves,
            hall.games().unwrap()[0].moves
        );
        // C's records without the bad one, and B's from its gap, go on as one hall's would.
        let results = event
            .apply_halls(&[("B", &b[..0]), ("C", &c[..n])], 8)
            .unwrap();
        assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
        let b_whole = envelopes("bbbbbbbbbbbbbbbb", &records);
        let results = event.apply_halls(&[("B", &b_whole[2..])], 9).unwrap();
        assert_eq!(results[0].as_ref().unwrap().applied, n - 2);
        for g in event.games().unwrap() {
            assert_eq!(g.moves, hall.games().unwrap()[0].moves, "{}", g.board_name);
        }
    }

    /// Hall `hall`'s whole database as a republished copy.
    fn copy_of(hall: &Store) -> Vec<Incoming> {
        let snapshot = hall.hall_snapshot(9_000).unwrap().unwrap();
        let mut incoming = envelopes(&snapshot.identity.origin, &snapshot.records);
        for i in &mut incoming {
            i.envelope.snapshot_of = Some(snapshot.last_seq);
        }
        incoming
    }

    #[test]
    fn a_republished_copy_adds_what_was_missing_and_no_game_twice() {
        let (hall, records) = hall();
        let incoming = envelopes("0123456789abcdef", &records);
        let mut event = Store::open_in_memory().unwrap();
        // The event node got hall A's first records, then the hall's PC died.
        let first = event.apply_hall_records("A", &incoming[..5], 1).unwrap();
        assert_eq!(first.applied, 5);
        let got = event.games().unwrap()[0].moves.len();
        assert!(
            (1..hall.games().unwrap()[0].moves.len()).contains(&got),
            "{got}"
        );
        // Its database, published again as hall A2, in two batches.
        let copy = copy_of(&hall);
        let a = event.apply_hall_records("A2", &copy[..3], 2).unwrap();
        let b = event.apply_hall_records("A2", &copy, 3).unwrap();
        assert!(
            a.refused.is_none() && b.refused.is_none(),
            "{:?}",
            b.refused
        );
        assert_eq!((a.applied + b.applied, b.skipped), (copy.len(), 3));
        let at_hall = hall.games().unwrap();
        let at_event = event.games().unwrap();
        assert_eq!(at_event.len(), 1, "one game, not one per hall name");
        assert_eq!(at_event[0].board_name, "A/board 1");
        assert_eq!(at_event[0].moves, at_hall[0].moves);
        assert_eq!(at_event[0].moves[2].notation, "Nc3");
        assert_eq!(at_event[0].events.len(), at_hall[0].events.len());
        assert_eq!(event.boards_shown(None).unwrap().len(), 1);
        // The copy once more: nothing new.
        let again = event.apply_hall_records("A2", &copy, 4).unwrap();
        assert_eq!((again.applied, again.skipped), (0, copy.len()));
        // Hall A's stream delivers the rest late: the copy brought it already.
        let late = event.apply_hall_records("A", &incoming[5..], 5).unwrap();
        assert!(late.refused.is_none(), "{:?}", late.refused);
        assert_eq!((late.applied, late.superseded), (0, records.len() - 5));
        assert_eq!(
            event.replica_position("A").unwrap().unwrap().seq,
            records.len() as u64
        );
        let at_event = event.games().unwrap();
        assert_eq!(at_event.len(), 1);
        assert_eq!(at_event[0].moves, at_hall[0].moves);
        assert_eq!(at_event[0].events.len(), at_hall[0].events.len());
        // A copy of a database the event node never saw goes under the new name.
        let mut fresh = Store::open_in_memory().unwrap();
        let applied = fresh.apply_hall_records("A2", &copy, 1).unwrap();
        assert!(applied.refused.is_none(), "{:?}", applied.refused);
        assert_eq!(fresh.games().unwrap()[0].board_name, "A2/board 1");
        assert_eq!(fresh.games().unwrap()[0].moves, at_hall[0].moves);
    }

    #[test]
    fn a_copy_that_differs_or_is_older_than_the_event_is_refused() {
        let (hall, records) = hall();
        let incoming = envelopes("0123456789abcdef", &records);
        let mut event = Store::open_in_memory().unwrap();
        event.apply_hall_records("A", &incoming, 1).unwrap();
        // A move that differs from the one the event node holds.
        let mut copy = copy_of(&hall);
        let at = copy
            .iter()
            .position(|i| i.envelope.kind == RecordKind::Move)
            .unwrap();
        let row = copy[at].envelope.row.get().replace("\"e4\"", "\"d4\"");
        copy[at].envelope.row = RawValue::from_string(row).unwrap();
        let applied = event.apply_hall_records("A2", &copy, 2).unwrap();
        assert_eq!(applied.applied, at);
        let refused = applied.refused.expect("the differing move is refused");
        assert!(
            matches!(&refused, ReplicaError::Conflict { hall, origin, seq, owner, .. }
                if hall == "A2" && origin == "0123456789abcdef" && *seq == at as u64 + 1
                    && owner == "A"),
            "{refused:?}"
        );
        let said = refused.to_string();
        assert!(
            said.contains("hall A2") && said.contains("0123456789abcdef") && said.contains("e4"),
            "{said}"
        );
        assert_eq!(event.games().unwrap()[0].moves[0].notation, "e4");
        // A copy older than what the event node applied (taken before the last record).
        let mut old = copy_of(&hall);
        for i in &mut old {
            i.envelope.snapshot_of = Some(records.len() as u64 - 1);
        }
        let applied = event.apply_hall_records("A3", &old, 3).unwrap();
        assert_eq!(applied.applied, 0);
        assert!(
            matches!(applied.refused, Some(ReplicaError::StaleCopy { copy, applied, .. })
                if copy + 1 == applied),
            "{:?}",
            applied.refused
        );
        // The new name holds one database only.
        let mut event = Store::open_in_memory().unwrap();
        event.apply_hall_records("A2", &copy_of(&hall), 1).unwrap();
        let other = envelopes("fedcba9876543210", &records[..1]);
        let applied = event.apply_hall_records("A2", &other, 2).unwrap();
        assert!(matches!(
            applied.refused,
            Some(ReplicaError::OtherOrigin { .. })
        ));
    }

    #[test]
    fn an_old_halls_database_of_an_earlier_release_is_read_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hall.db");
        {
            let mut hall = Store::open(&path).unwrap();
            hall.join_hall("A", "0123456789abcdef").unwrap();
            let board = hall.board("board 1", Kind::Chess).unwrap();
            hall.board_link(board, 10, true).unwrap();
            hall.outbox_release(1).unwrap();
            // As the release before replica_origins left it.
            hall.conn
                .execute_batch("DROP TABLE replica_origins; PRAGMA user_version = 6;")
                .unwrap();
        }
        assert!(Store::open_read_only(&path).is_err());
        let old = Store::open_hall_copy(&path).unwrap();
        let copy = old.hall_snapshot(5).unwrap().unwrap();
        assert_eq!(copy.identity.origin, "0123456789abcdef");
        // The outbox gave record 1 to the broker; the copy has every row, and the last record.
        assert_eq!(copy.last_seq, 2);
        let kinds: Vec<&str> = copy.records.iter().map(|r| r.kind.as_str()).collect();
        assert_eq!(kinds, ["board", "link"]);
        assert_eq!(
            copy.records.iter().map(|r| r.seq).collect::<Vec<_>>(),
            [1, 2]
        );
        // Never written.
        assert_eq!(
            crate::store::schema::version(&old.conn).unwrap(),
            6,
            "the copy was migrated"
        );
    }

    #[test]
    fn a_database_joins_one_hall_and_keeps_its_origin() {
        let mut s = Store::open_in_memory().unwrap();
        let board = s.board("b", Kind::Chess).unwrap();
        s.board_link(board, 5, true).unwrap();
        // Before joining, nothing is kept for a hall.
        assert_eq!(s.outbox_state().unwrap().depth, 0);
        let id = s.join_hall("A", "aaaa").unwrap();
        // What the database held is put in the outbox when it joins.
        assert_eq!(s.outbox_state().unwrap().depth, 2);
        assert_eq!(s.join_hall("A", "bbbb").unwrap(), id);
        assert!(matches!(
            s.join_hall("B", "cccc"),
            Err(crate::store::HallError::OtherHall { .. })
        ));
        s.outbox_release(1).unwrap();
        assert_eq!(s.outbox_after(0, 10).unwrap()[0].seq, 2);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Whatever the broker delivers (records again, out of order, a row made unreadable),
        /// nothing panics, nothing is applied out of order or twice, and once the records come
        /// in order the event node holds the hall's game exactly.
        #[test]
        fn deliveries_in_any_order_end_in_the_halls_record(
            deliveries in proptest::collection::vec((0usize..12, proptest::bool::ANY), 0..40)
        ) {
            let (hall, records) = hall();
            let mut event = Store::open_in_memory().unwrap();
            for (i, corrupt) in deliveries {
                let Some(r) = records.get(i % records.len()) else { continue };
                let mut one = envelopes("0123456789abcdef", std::slice::from_ref(r));
                if corrupt {
                    one[0].envelope.row = RawValue::from_string("{\"id\": \"x\"}".into()).unwrap();
                }
                let before = event.replica_position("A").unwrap().map_or(0, |p| p.seq);
                let applied = event.apply_hall_records("A", &one, 1).unwrap();
                let after = event.replica_position("A").unwrap().map_or(0, |p| p.seq);
                if applied.applied == 1 {
                    proptest::prop_assert_eq!(after, before + 1);
                    proptest::prop_assert_eq!(r.seq, after);
                } else {
                    proptest::prop_assert_eq!(after, before);
                }
            }
            let applied = event.apply_hall_records("A", &envelopes("0123456789abcdef", &records), 2).unwrap();
            proptest::prop_assert!(applied.refused.is_none());
            let games = event.games().unwrap();
            proptest::prop_assert_eq!(&games[0].moves, &hall.games().unwrap()[0].moves);
            let logged: i64 = event.conn.query_row("SELECT count(*) FROM replica_log", [], |r| r.get(0)).unwrap();
            proptest::prop_assert_eq!(logged as usize, records.len());
        }
    }
}
