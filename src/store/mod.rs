//! The SQLite store: one writer that owns the connection.
//!
//! Flow: a board's recorder sends [`Write`]s (raw bytes and tracker events) in batches;
//! [`Store::write_batch`] (`write`) applies a batch in one transaction, so a move is durable
//! before anyone is told about it; `open` opens the file and diagnoses a disk that refuses it;
//! `read` reads the record back and `model` types what it says; `decisions`, `import` and `pairings` are the arbiter's. Moves
//! are never deleted or rewritten: a revision or takeback sets `retracted_by` on the old rows and the
//! history stays in `events`. Readers ([`Store::game`], [`Store::games`], [`Store::open_game`]) see
//! live moves only. The schema lives in [`schema`]; the raw byte blocks are encoded in [`raw`].
//! A game takes the tournament setting (event, site, round) and its board's number when it starts;
//! its players come from the round's pairings when it is read ([`Store::import_pairings`]).
//! SQLite runs in WAL mode with `synchronous=NORMAL` (a power cut may lose the last commits, never
//! corrupt the file), `foreign_keys=ON` and a busy timeout.

mod as_of;
mod closing;
mod decisions;
mod event;
mod follow;
mod hall_outbox;
pub mod hall_record;
mod history;
mod import;
mod lookup;
pub mod model;
mod open;
mod pairings;
mod players;
pub mod raw;
mod read;
pub mod replica;
mod round_pick;
pub mod schema;
mod standings;
mod write;

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use rusqlite::{
    Connection, ErrorCode, OptionalExtension, Row, ToSql, TransactionBehavior,
    types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, Type, ValueRef},
};
use serde::{Deserialize, Serialize};
use serde_json::json;

pub use self::{
    as_of::{begun_by, result_at},
    closing::ClosedGame,
    decisions::{
        Action, DECISION_KIND, Decision, DecisionError, FORFEITS, RESULTS, ResultReason, Ruling,
    },
    event::{EventChange, EventDecision, EventOpened, EventSettings, RoundRecord, StoredEvent},
    follow::{Marks, Touched, earliest_after},
    hall_outbox::{HallError, HallIdentity, HallSnapshot, OutboxRecord, OutboxState},
    history::{HistoryEntry, RetractedMove},
    import::{IMPORT_NOTE, ImportedGame, import_note},
    lookup::{BoardGame, BoardGames},
    model::{
        ArbiterRuling, Audit, Entry, IrregularityRecord, OverUnresolved, Recorded, Resolution,
        Shown, worded,
    },
    pairings::RoundInfo,
    players::{PlayerRecord, is_usable_name},
    raw::{RawBlock, RawBuffer, RawChunk, RawError},
    round_pick::broadcast_games,
    standings::event_field,
};
pub use crate::pairings::Pairing;
use crate::{
    Millis,
    game::Kind,
    protocol::Direction,
    sensor::Orientation,
    tracker::event::{RecordedMove, TrackerEvent},
};
use read::{
    GAME_SELECT, MOVE_COLUMNS, game_events, game_header, live_moves, move_row, open_game_id,
    parse_kind,
};
pub use write::WriteReport;
use write::{Batch, insert_move_row, sql_ms};

/// How long a write waits for another connection's lock (a reader's export, a backup).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLITE_FULL, or the OS's ENOSPC: the disk (or a test's page limit) is full; the batch was
    /// rolled back whole, so writing it again later is clean.
    #[error("the disk holding {db} is full: free space there; recording resumes by itself")]
    Full { db: String },
    /// The database or its directory cannot be written (SQLITE_READONLY, or an I/O error on a
    /// directory that went away or turned read-only).
    #[error("{db} cannot be written ({why}): {fix}")]
    NotWritable {
        db: String,
        why: String,
        fix: &'static str,
    },
    /// The database cannot be opened or created, with the likely cause.
    #[error("cannot open {db}: {why}")]
    CannotOpen { db: String, why: String },
    #[error("sqlite: {0}")]
    Sqlite(#[source] rusqlite::Error),
    #[error("the database has schema version {found}, newer than this program's {known}")]
    NewerSchema { found: usize, known: usize },
    #[error("the database could not be switched to WAL mode (journal mode {0})")]
    NoWal(String),
    #[error("board {name:?} is registered as {stored:?}, not {asked:?}")]
    BoardKind {
        name: String,
        stored: Kind,
        asked: Kind,
    },
    #[error("no board with id {0:?}")]
    UnknownBoard(BoardId),
    #[error("no game with id {0:?}")]
    UnknownGame(GameId),
    /// A bye for a name no pairing of the event names.
    #[error("no player named {0:?} in the event's pairings")]
    UnknownPlayer(String),
    /// A bye for a player who has a board in that round.
    #[error("{name} plays on board {board} in round {round}: no bye")]
    PlayerPaired {
        round: u32,
        name: String,
        board: u32,
    },
    #[error("{0:?} is not a bye (U, F, H or Z)")]
    NotAByeCode(char),
    /// Only the latest import of pairings, of a round where no game has begun since, can be
    /// undone (`games`: how many have).
    #[error(
        "the import of round {round}'s pairings cannot be undone: {}",
        match games { 0 => "it is not the latest import".to_owned(), n => format!("{n} game(s) began in the round since") }
    )]
    ImportNotUndoable { round: u32, games: u32 },
    #[error("{name} has no bye in round {round}")]
    NoBye { round: u32, name: String },
    /// Only the latest round start, from an earlier round, can be undone, and only before a
    /// game begins in it (`games`: how many have).
    #[error(
        "the start of round {round} cannot be undone: {}",
        match games { 0 => "it is not the latest start of the current round".to_owned(), n => format!("{n} game(s) began in it") }
    )]
    RoundStartNotUndoable { round: u32, games: u32 },
    #[error("game {game:?} already has a live move at ply {ply}")]
    PlyTaken { game: GameId, ply: u32 },
    #[error("date {0:?} is not of the form YYYY.MM.DD")]
    InvalidDate(String),
    #[error("time {0} ms does not fit in SQLite")]
    TimeOutOfRange(Millis),
    #[error("stored data is unreadable: {0}")]
    Corrupt(String),
    #[error("raw chunk row {row}: {source}")]
    Raw { row: i64, source: RawError },
    #[error("integrity check failed: {0}")]
    Integrity(String),
    /// `PRAGMA quick_check` found damage when the database was opened for writing, or SQLite
    /// found its file malformed: nothing is written to it ([`Store::open`]).
    #[error(
        "{db} is damaged: stored data is unreadable ({problems}); nothing is written to it. Keep \
         a copy of the file, then restore the last backup, or recover what still reads into a \
         new file (sqlite3 DAMAGED.db .recover | sqlite3 NEW.db) and use that"
    )]
    Damaged { db: String, problems: String },
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0} {1} is out of range (counts from 1)")]
    InvalidNumber(&'static str, u32),
    #[error("round {round}: board {board} is paired twice")]
    DuplicateBoard { round: u32, board: u32 },
    /// A line break, a tab or an escape in a name the record would show ([`crate::text`]).
    #[error(transparent)]
    ControlCharacter(#[from] crate::text::ControlCharacter),
}

/// What a [`StoreError`] names the database by before the store knows its path.
const UNNAMED: &str = "the database";

impl From<rusqlite::Error> for StoreError {
    fn from(err: rusqlite::Error) -> StoreError {
        match err.sqlite_error_code() {
            Some(ErrorCode::DiskFull) => StoreError::Full {
                db: UNNAMED.to_owned(),
            },
            Some(code @ (ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)) => {
                StoreError::Damaged {
                    db: UNNAMED.to_owned(),
                    problems: open::damage_words(code).to_owned(),
                }
            }
            _ => StoreError::Sqlite(err),
        }
    }
}

impl StoreError {
    /// Whether the store refused for lack of space (a full disk, or a test's page limit).
    pub fn is_full(&self) -> bool {
        matches!(self, StoreError::Full { .. })
    }
}

/// A board's row id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BoardId(pub i64);

/// A game's row id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct GameId(pub i64);

macro_rules! sql_id {
    ($t:ident) => {
        impl ToSql for $t {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }
        impl FromSql for $t {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                i64::column_result(value).map($t)
            }
        }
    };
}
sql_id!(BoardId);
sql_id!(GameId);

/// One thing to persist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// One read; consecutive reads of a board within a batch are coalesced into one row.
    Raw { board: BoardId, chunk: RawChunk },
    /// Reads already coalesced by a [`RawBuffer`]: one row.
    RawBlock { board: BoardId, block: RawBlock },
    /// A tracker decision.
    Event { board: BoardId, event: TrackerEvent },
    /// The board was opened (`connected`) or lost, at `at_ms` on the stream's clock.
    Link {
        board: BoardId,
        at_ms: Millis,
        connected: bool,
    },
    /// What the board's sensor learnt of it (`crate::pipeline::Learnt`), for a board of kind
    /// `kind` (a kind's name): replaces what was kept before.
    Learnt {
        board: BoardId,
        kind: &'static str,
        what: &'static str,
        text: String,
    },
}

/// A game as stored: header, live moves, and every event (the history).
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    pub id: GameId,
    pub board: BoardId,
    pub board_name: String,
    pub kind: Kind,
    pub orientation: Orientation,
    /// The start position when it is not the kind's standard one (a Chess960 start, as FEN).
    pub start_position: Option<String>,
    pub date: Option<String>,
    pub started_at_ms: Millis,
    pub ended_at_ms: Option<Millis>,
    pub white: Option<String>,
    pub black: Option<String>,
    pub result: String,
    pub termination: Option<String>,
    /// The tournament setting when the game started ([`Store::set_round`]).
    pub event: Option<String>,
    pub site: Option<String>,
    pub round: Option<u32>,
    /// The event's time control when the game started (`90+30`, as the config writes it).
    pub time_control: Option<String>,
    /// The board's number in the hall when the game started ([`Store::set_board_number`]).
    pub board_no: Option<u32>,
    /// The pairing at (round, board_no), as imported when the game is read.
    pub pairing: Option<Pairing>,
    /// Live moves only, by ply.
    pub moves: Vec<RecordedMove>,
    /// Every event of the game, by id.
    pub events: Vec<EventRecord>,
}

/// A game as [`Store::game_shown_since`] read it: the game (header and live moves, no events)
/// and its live moves' row ids, by which a later read takes only what is new.
#[derive(Clone, Debug)]
pub struct ShownGame {
    pub game: GameRecord,
    ids: Vec<i64>,
    /// [`Store::retractions_count`] when it was read.
    retracted: u64,
    /// How many of its first moves are those of the game it was read after, kept as they were
    /// (the same rows; moves are never rewritten).
    pub carried: usize,
}

/// A row of the events table.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRecord {
    pub id: i64,
    pub at_ms: Millis,
    /// [`TrackerEvent::kind`] of the event.
    pub kind: String,
    /// The ply the event happened before (plies played so far + 1).
    pub ply: Option<u32>,
    /// The detail as stored (the history shows it so).
    pub detail: serde_json::Value,
    /// What the event says, typed ([`Recorded::read`]).
    pub what: Recorded,
}

/// The store: owns the one writing connection.
pub struct Store {
    conn: Connection,
    /// The database file (`None` in memory), to name it in errors.
    path: Option<PathBuf>,
}

impl Store {
    /// What the sensor of `board`, a board of kind `kind` (a kind's name), last learnt of it
    /// ([`Write::Learnt`]), if anything.
    pub fn learnt(&self, board: BoardId, kind: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT text FROM board_learnt WHERE board_id = ?1 AND kind = ?2")?
            .query_row((board, kind), |r| r.get(0))
            .optional()?)
    }

    /// [`Store::learnt`] of the board called `name`, if the store knows it (nothing written).
    pub fn learnt_of(&self, name: &str, kind: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT l.text FROM board_learnt l JOIN boards b ON b.id = l.board_id \
                 WHERE b.name = ?1 AND l.kind = ?2",
            )?
            .query_row((name, kind), |r| r.get(0))
            .optional()?)
    }

    /// The board called `name`, registered as `kind` if it is new.
    pub fn board(&mut self, name: &str, kind: Kind) -> Result<BoardId, StoreError> {
        let known = |conn: &Connection| -> Result<Option<(BoardId, String)>, StoreError> {
            Ok(conn
                .prepare_cached("SELECT id, kind FROM boards WHERE name = ?1")?
                .query_row([name], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?)
        };
        // A board seen before is only read (no write transaction, nothing locked for writing).
        let found = match known(&self.conn)? {
            Some(found) => Some(found),
            None => {
                // Another process may add it meanwhile: then its row stands.
                self.conn
                    .prepare_cached(
                        "INSERT INTO boards (name, kind) VALUES (?1, ?2) \
                         ON CONFLICT (name) DO NOTHING",
                    )?
                    .execute((name, kind.as_str()))?;
                known(&self.conn)?
            }
        };
        let Some((id, stored)) = found else {
            return Err(rusqlite::Error::QueryReturnedNoRows.into());
        };
        let stored = parse_kind(&stored)?;
        if stored != kind {
            return Err(StoreError::BoardKind {
                name: name.to_owned(),
                stored,
                asked: kind,
            });
        }
        Ok(id)
    }

    /// Sets the date of a game, `YYYY.MM.DD` as in PGN (`?` for unknown digits).
    pub fn set_game_date(&mut self, game: GameId, date: &str) -> Result<(), StoreError> {
        if !is_pgn_date(date) {
            return Err(StoreError::InvalidDate(date.to_owned()));
        }
        let n = self
            .conn
            .prepare_cached("UPDATE games SET date = ?1 WHERE id = ?2")?
            .execute((date, game))?;
        if n == 0 {
            return Err(StoreError::UnknownGame(game));
        }
        Ok(())
    }
}

/// `YYYY.MM.DD` with digits or `?` (PGN's Date tag).
fn is_pgn_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'.',
            _ => c.is_ascii_digit() || c == b'?',
        })
}

/// A new game on `board` (closing the one open there), begun at `at_ms`: for the unit tests of
/// the store and of what writes through it.
#[cfg(test)]
pub(crate) fn begin_test_game(store: &mut Store, board: BoardId, at_ms: Millis) -> GameId {
    let start = crate::tracker::TrackerEvent::GameStarted {
        at_ms,
        orientation: crate::sensor::Orientation::Normal,
        start: None,
    };
    store
        .write_batch(&[Write::Event {
            board,
            event: start,
        }])
        .unwrap()
        .into_iter()
        .max()
        .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Outcome;

    fn mv(ply: u32, notation: &str) -> RecordedMove {
        RecordedMove {
            ply,
            notation: notation.to_owned(),
            uci: None,
            position: format!("after {notation}"),
            at_ms: 1000 * u64::from(ply),
            clock_white_ms: None,
            clock_black_ms: None,
            time_trouble: false,
        }
    }

    fn event(board: BoardId, event: TrackerEvent) -> Write {
        Write::Event { board, event }
    }

    #[test]
    fn a_connections_page_cache_is_capped_where_asked_and_reads_alike() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.db");
        let mut store = Store::open(&path).unwrap();
        let cache = |s: &Store| -> i64 {
            s.conn
                .query_row("PRAGMA cache_size", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(cache(&store), -16 * 1024);
        store.set_cache_kib(512).unwrap();
        assert_eq!(cache(&store), -512);
        let board = store.board("b1", Kind::Chess).unwrap();
        let game = begin_test_game(&mut store, board, 0);
        let writes: Vec<Write> = (1..=40)
            .map(|p| event(board, TrackerEvent::Move(mv(p, "e4"))))
            .collect();
        store.write_batch(&writes).unwrap();
        let reader = Store::open_read_only(&path).unwrap();
        reader.set_cache_kib(64).unwrap();
        assert_eq!(cache(&reader), -64);
        assert_eq!(reader.game(game).unwrap().unwrap().moves.len(), 40);
    }

    fn page_limit(store: &Store, pages: i64) -> i64 {
        store
            .conn
            .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |r| {
                r.get(0)
            })
            .unwrap()
    }

    #[test]
    fn disk_full_rolls_back_and_the_store_recovers() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("full.db")).unwrap();
        let board = store.board("b1", Kind::Chess).unwrap();
        let start = TrackerEvent::GameStarted {
            at_ms: 0,
            orientation: Orientation::Normal,
            start: None,
        };
        let game = store.write_batch(&[event(board, start)]).unwrap()[0];
        store
            .write_batch(&[event(board, TrackerEvent::Move(mv(1, "e4")))])
            .unwrap();

        let pages: i64 = store
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        assert_eq!(page_limit(&store, pages), pages);
        let big = RawChunk {
            t_ms: 5,
            dir: Direction::FromBoard,
            bytes: vec![0x8e; 64 * 1024],
        };
        let batch = [
            event(board, TrackerEvent::Move(mv(2, "e5"))),
            Write::Raw { board, chunk: big },
        ];
        let err = store.write_batch(&batch).unwrap_err();
        let db = dir.path().join("full.db").display().to_string();
        assert!(
            matches!(&err, StoreError::Full { db: named } if *named == db),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("the disk holding {db} is full: free space there; recording resumes by itself")
        );

        store.integrity_check().unwrap();
        let g = store.game(game).unwrap().unwrap();
        assert_eq!(
            g.moves,
            vec![mv(1, "e4")],
            "the failed batch left nothing behind"
        );
        assert!(store.raw_chunks(board).unwrap().is_empty());

        page_limit(&store, 1 << 30);
        assert_eq!(store.write_batch(&batch).unwrap(), vec![game]);
        store.integrity_check().unwrap();
        let g = store.game(game).unwrap().unwrap();
        assert_eq!(g.moves, vec![mv(1, "e4"), mv(2, "e5")]);
        assert_eq!(store.raw_chunks(board).unwrap()[0].bytes.len(), 64 * 1024);
    }

    #[test]
    fn a_missing_or_vanished_directory_is_named_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-dir").join("t.db");
        let err = Store::open(&missing).err().unwrap();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot open {}: its directory {} does not exist: create it, or give a database \
                 path in an existing directory",
                missing.display(),
                missing.parent().unwrap().display()
            )
        );

        let sub = dir.path().join("state");
        std::fs::create_dir(&sub).unwrap();
        let db = sub.join("t.db");
        let mut store = Store::open(&db).unwrap();
        let board = store.board("b1", Kind::Chess).unwrap();
        std::fs::remove_dir_all(&sub).unwrap();
        let start = TrackerEvent::GameStarted {
            at_ms: 0,
            orientation: Orientation::Normal,
            start: None,
        };
        let err = store.write_batch(&[event(board, start)]).unwrap_err();
        assert!(
            matches!(&err, StoreError::NotWritable { db: named, .. } if *named == db.display().to_string()),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "{} cannot be written (the file or its directory was deleted or moved while \
                 open): what is written now would be lost: restore it, or restart boardscribe \
                 with another database",
                db.display()
            )
        );
    }

    #[test]
    fn moves_and_events_are_append_only() {
        let mut store = Store::open_in_memory().unwrap();
        let board = store.board("b1", Kind::Chess).unwrap();
        let start = TrackerEvent::GameStarted {
            at_ms: 0,
            orientation: Orientation::Rotated,
            start: None,
        };
        store
            .write_batch(&[
                event(board, start),
                event(board, TrackerEvent::Move(mv(1, "e4"))),
                event(
                    board,
                    TrackerEvent::Takeback {
                        at_ms: 5,
                        from_ply: 1,
                        to_ply: 0,
                    },
                ),
            ])
            .unwrap();
        for sql in [
            "DELETE FROM moves",
            "UPDATE moves SET notation = 'd4'",
            "UPDATE moves SET retracted_by = NULL",
            "DELETE FROM events",
            "UPDATE events SET kind = 'x'",
        ] {
            let err = store.conn.execute(sql, []).unwrap_err();
            assert_eq!(
                err.sqlite_error_code(),
                Some(ErrorCode::ConstraintViolation),
                "{sql}"
            );
        }
    }

    proptest::proptest! {
        /// A game kept and brought up to date by reading only what is new is the game read
        /// whole, after any moves, takebacks, revisions and an end, read at any moments.
        #[test]
        fn a_game_read_since_is_the_game_read_whole(
            steps in proptest::collection::vec((0u8..6, 1u32..4, proptest::bool::ANY), 1..40),
        ) {
            let mut store = Store::open_in_memory().unwrap();
            let board = store.board("b1", Kind::Chess).unwrap();
            let game = begin_test_game(&mut store, board, 0);
            let mut kept: Option<ShownGame> = None;
            let mut ply = 0u32;
            for (i, (what, n, read)) in steps.into_iter().enumerate() {
                let at_ms = 1000 * (i as u64 + 1);
                let e = match what {
                    0..=2 => {
                        ply += 1;
                        let mut m = mv(ply, &format!("m{i}"));
                        m.clock_white_ms = Some(at_ms);
                        TrackerEvent::Move(m)
                    }
                    3 if ply > 0 => {
                        let to = ply.saturating_sub(n);
                        let e = TrackerEvent::Takeback { at_ms, from_ply: ply, to_ply: to };
                        ply = to;
                        e
                    }
                    4 if ply > 0 => {
                        let old = store.game_shown(game).unwrap().unwrap().moves.pop().unwrap();
                        TrackerEvent::Revision { at_ms, new: mv(ply, &format!("r{i}")), old }
                    }
                    _ => continue,
                };
                store.write_batch(&[event(board, e)]).unwrap();
                if read {
                    let retracted = store.retractions_count().unwrap();
                    let before = kept.as_ref().map(|k| (k.game.moves.clone(), k.ids.clone()));
                    let since = store.game_shown_since(game, kept.take(), retracted).unwrap().unwrap();
                    proptest::prop_assert_eq!(&since.game, &store.game_shown(game).unwrap().unwrap());
                    // What it says it carried is the game read before, row for row.
                    let (moves, ids) = before.unwrap_or_default();
                    proptest::prop_assert!(since.carried <= moves.len());
                    proptest::prop_assert_eq!(&since.game.moves[..since.carried], &moves[..since.carried]);
                    proptest::prop_assert_eq!(&since.ids[..since.carried], &ids[..since.carried]);
                    kept = Some(since);
                }
            }
            let retracted = store.retractions_count().unwrap();
            let since = store.game_shown_since(game, kept, retracted).unwrap().unwrap();
            proptest::prop_assert_eq!(since.game, store.game_shown(game).unwrap().unwrap());
        }
    }

    proptest::proptest! {
        /// A batch with runs of moves (inserted several rows a statement) writes exactly what
        /// applying its writes one by one writes, in one transaction: the same rows with the
        /// same ids, and the same error (a ply taken twice, named) with nothing of it kept.
        #[test]
        fn runs_of_moves_write_what_one_by_one_writes(
            steps in proptest::collection::vec(0u8..16, 0..80),
            twice in proptest::option::of(0usize..80),
        ) {
            let mut writes = Vec::new();
            let (mut ply1, mut ply2) = (0u32, 0u32);
            for (i, mut step) in steps.into_iter().enumerate() {
                // At most one ply taken twice, in half the batches.
                if step == 14 && twice != Some(i) {
                    step = 0;
                }
                let (board, ply) = match step {
                    // A takeback of one ply on the first board.
                    13 if ply1 > 0 => {
                        writes.push(event(BoardId(1), TrackerEvent::Takeback {
                            at_ms: u64::from(ply1) * 1000,
                            from_ply: ply1,
                            to_ply: ply1 - 1,
                        }));
                        ply1 -= 1;
                        continue;
                    }
                    // The first board's last ply again: refused.
                    14 => (BoardId(1), ply1.max(1)),
                    // The second board's next ply.
                    15 => {
                        ply2 += 1;
                        (BoardId(2), ply2)
                    }
                    _ => {
                        ply1 += 1;
                        (BoardId(1), ply1)
                    }
                };
                let mut m = mv(ply, &format!("m{}", writes.len()));
                m.uci = Some(format!("u{}", writes.len()));
                m.clock_white_ms = Some(u64::from(ply) * 7);
                m.time_trouble = ply % 5 == 0;
                writes.push(event(board, TrackerEvent::Move(m)));
            }
            let stores: Vec<(Result<(), String>, Vec<String>)> = [true, false]
                .into_iter()
                .map(|runs| {
                    let mut store = Store::open_in_memory().unwrap();
                    for name in ["b1", "b2"] {
                        let board = store.board(name, Kind::Chess).unwrap();
                        begin_test_game(&mut store, board, 0);
                    }
                    let written = if runs {
                        store.write_batch(&writes).map(|_| ())
                    } else {
                        // The writes applied one by one, in one transaction.
                        let tx = store.conn.transaction().unwrap();
                        let mut batch = Batch::new(&tx);
                        let applied = writes.iter().try_for_each(|w| batch.apply(w));
                        let applied = applied.and_then(|()| batch.finish().map(|_| ()));
                        if applied.is_ok() {
                            tx.commit().unwrap();
                        }
                        applied
                    };
                    let rows: Vec<String> = store
                        .conn
                        .prepare(
                            "SELECT id, game_id, ply, notation, uci, position, at_ms, \
                             clock_white_ms, clock_black_ms, time_trouble, retracted_by \
                             FROM moves ORDER BY id",
                        )
                        .unwrap()
                        .query_map([], |r| {
                            let cols: Vec<rusqlite::types::Value> =
                                (0..11).map(|i| r.get(i)).collect::<Result<_, _>>()?;
                            Ok(format!("{cols:?}"))
                        })
                        .unwrap()
                        .collect::<Result<_, _>>()
                        .unwrap();
                    (written.map_err(|e| format!("{e:?}")), rows)
                })
                .collect();
            proptest::prop_assert_eq!(&stores[0], &stores[1]);
        }
    }

    proptest::proptest! {
        /// Every field of a move comes back as it was written, whether it went in alone or in
        /// a run of several rows a statement (every shape of run: up to twice the rows of the
        /// largest statement, so that each smaller shape ends one).
        #[test]
        fn a_moves_fields_come_back_as_written(
            fields in proptest::collection::vec(
                (
                    "[a-hNBRQKx+#=1-8]{1,7}",
                    proptest::option::of("[a-h][1-8][a-h][1-8][qrbn]?"),
                    "[pnbrqkPNBRQK1-8/ wb-]{1,90}",
                    0u64..1 << 40,
                    proptest::option::of(0u64..1 << 40),
                    proptest::option::of(0u64..1 << 40),
                    proptest::bool::ANY,
                ),
                1..40,
            ),
        ) {
            let moves: Vec<RecordedMove> = fields
                .into_iter()
                .enumerate()
                .map(|(i, (notation, uci, position, at_ms, white, black, trouble))| RecordedMove {
                    ply: i as u32 + 1,
                    notation,
                    uci,
                    position,
                    at_ms,
                    clock_white_ms: white,
                    clock_black_ms: black,
                    time_trouble: trouble,
                })
                .collect();
            let mut store = Store::open_in_memory().unwrap();
            let board = store.board("b1", Kind::Chess).unwrap();
            let game = begin_test_game(&mut store, board, 0);
            let writes: Vec<Write> =
                moves.iter().map(|m| event(board, TrackerEvent::Move(m.clone()))).collect();
            store.write_batch(&writes).unwrap();
            proptest::prop_assert_eq!(store.game(game).unwrap().unwrap().moves, moves);
        }
    }

    #[test]
    fn a_live_ply_cannot_be_played_twice() {
        let mut store = Store::open_in_memory().unwrap();
        let board = store.board("b1", Kind::Chess).unwrap();
        let start = TrackerEvent::GameStarted {
            at_ms: 0,
            orientation: Orientation::Normal,
            start: None,
        };
        let game = store.write_batch(&[event(board, start)]).unwrap()[0];
        let err = store
            .write_batch(&[
                event(board, TrackerEvent::Move(mv(1, "e4"))),
                event(board, TrackerEvent::Move(mv(1, "d4"))),
            ])
            .unwrap_err();
        assert!(matches!(err, StoreError::PlyTaken { game: g, ply: 1 } if g == game));
        assert!(store.game(game).unwrap().unwrap().moves.is_empty());
    }

    #[test]
    fn result_gesture_proposes_and_game_end_closes() {
        let mut store = Store::open_in_memory().unwrap();
        let board = store.board("b1", Kind::Chess).unwrap();
        let start = TrackerEvent::GameStarted {
            at_ms: 0,
            orientation: Orientation::Normal,
            start: None,
        };
        let game = store.write_batch(&[event(board, start)]).unwrap()[0];
        let gesture = TrackerEvent::ResultGesture {
            at_ms: 7,
            after_ply: 0,
            proposed: Outcome::Draw,
        };
        store.write_batch(&[event(board, gesture)]).unwrap();
        let g = store.open_game(board).unwrap().unwrap();
        assert_eq!((g.result.as_str(), g.ended_at_ms), ("1/2-1/2", None));
        let end = TrackerEvent::GameEnded {
            at_ms: 9,
            after_ply: 0,
            outcome: Outcome::BlackWins,
            termination: "checkmate".into(),
        };
        assert_eq!(store.write_batch(&[event(board, end)]).unwrap(), vec![game]);
        assert!(store.open_game(board).unwrap().is_none());
        let g = store.game(game).unwrap().unwrap();
        assert_eq!(g.result, "0-1");
        assert_eq!(g.termination.as_deref(), Some("checkmate"));
        assert_eq!(g.ended_at_ms, Some(9));
        let kinds: Vec<_> = g.events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["game_started", "result_gesture", "game_ended"]);
        assert_eq!(g.events[1].detail["proposed"], "1/2-1/2");
    }

    #[test]
    fn board_kind_is_fixed_and_dates_are_checked() {
        let mut store = Store::open_in_memory().unwrap();
        let b = store.board("t1", Kind::Togyz).unwrap();
        assert_eq!(store.board("t1", Kind::Togyz).unwrap(), b);
        assert!(matches!(
            store.board("t1", Kind::Chess),
            Err(StoreError::BoardKind { .. })
        ));
        assert!(matches!(
            store.set_game_date(GameId(1), "2024-05-01"),
            Err(StoreError::InvalidDate(_))
        ));
        assert!(matches!(
            store.set_game_date(GameId(1), "2024.05.??"),
            Err(StoreError::UnknownGame(GameId(1)))
        ));
        let start = TrackerEvent::GameStarted {
            at_ms: 0,
            orientation: Orientation::Normal,
            start: None,
        };
        assert!(matches!(
            store.write_batch(&[event(BoardId(99), start)]),
            Err(StoreError::UnknownBoard(BoardId(99)))
        ));
    }
}
