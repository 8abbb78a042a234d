//! The SQLite store: one writer that owns the connection.
//!
//! Flow: the pipeline sends [`Write`]s (raw bytes and tracker events) in batches; [`Store::write_batch`]
//! applies a batch in one transaction, so a move is durable before anyone is told about it. Moves
//! are never deleted or rewritten: a revision or takeback sets `retracted_by` on the old rows and the
//! history stays in `events`. Readers ([`Store::game`], [`Store::games`], [`Store::open_game`]) see
//! live moves only. The schema lives in [`schema`]; the raw byte blocks are encoded in [`raw`].
//! A game takes the tournament setting (event, site, round) and its board's number when it starts;
//! its players come from the round's pairings when it is read ([`Store::import_pairings`]).
//! SQLite runs in WAL mode with `synchronous=NORMAL` (a power cut may lose the last commits, never
//! corrupt the file), `foreign_keys=ON` and a busy timeout.

mod decisions;
mod import;
mod pairings;
pub mod raw;
pub mod schema;

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
    decisions::{
        Action, DECISION_KIND, Decision, DecisionError, HistoryEntry, RESULTS, ResultReason,
        RetractedMove, Ruling,
    },
    import::{IMPORT_NOTE, ImportedGame, import_note},
    pairings::RoundInfo,
    raw::{RawBlock, RawBuffer, RawChunk, RawError},
};
pub use crate::pairings::Pairing;
use crate::{
    Millis,
    game::Kind,
    protocol::Direction,
    sensor::Orientation,
    tracker::event::{RecordedMove, TrackerEvent},
};

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
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0} {1} is out of range (counts from 1)")]
    InvalidNumber(&'static str, u32),
    #[error("round {round}: board {board} is paired twice")]
    DuplicateBoard { round: u32, board: u32 },
}

/// What a [`StoreError`] names the database by before the store knows its path.
const UNNAMED: &str = "the database";

impl From<rusqlite::Error> for StoreError {
    fn from(err: rusqlite::Error) -> StoreError {
        match err.sqlite_error_code() {
            Some(ErrorCode::DiskFull) => StoreError::Full {
                db: UNNAMED.to_owned(),
            },
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
    /// The board's number in the hall when the game started ([`Store::set_board_number`]).
    pub board_no: Option<u32>,
    /// The pairing at (round, board_no), as imported when the game is read.
    pub pairing: Option<Pairing>,
    /// Live moves only, by ply.
    pub moves: Vec<RecordedMove>,
    /// Every event of the game, by id.
    pub events: Vec<EventRecord>,
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
    pub detail: serde_json::Value,
}

/// The store: owns the one writing connection.
pub struct Store {
    conn: Connection,
    /// The database file (`None` in memory), to name it in errors.
    path: Option<PathBuf>,
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let opened = Connection::open(path)
            .map_err(StoreError::from)
            .and_then(|conn| Store::setup(conn, true));
        match opened {
            Ok(mut store) => {
                store.path = Some(path.to_owned());
                Ok(store)
            }
            Err(e) => Err(diagnose_open(path, e)),
        }
    }

    /// A private database in memory (tests, demos).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Store::setup(Connection::open_in_memory()?, false)
    }

    /// Opens an existing database for reading only (the relay's readers): no migration, no
    /// writes; it refuses a schema other than this program's.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        use rusqlite::OpenFlags;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "cache_size", -16 * 1024)?;
        conn.set_prepared_statement_cache_capacity(64);
        let found = schema::version(&conn)?;
        let known = schema::MIGRATIONS.len();
        if found > known {
            return Err(StoreError::NewerSchema { found, known });
        }
        if found < known {
            return Err(StoreError::Corrupt(format!(
                "schema version {found}, not yet migrated to {known}"
            )));
        }
        Ok(Store {
            conn,
            path: Some(path.to_owned()),
        })
    }

    /// SQLite's `data_version`: changes whenever another connection has committed, so a reader
    /// can tell cheaply whether what it rendered is still current.
    pub fn data_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }

    fn setup(mut conn: Connection, file: bool) -> Result<Store, StoreError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        if file {
            let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError::NoWal(mode));
            }
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // Checkpoint (copy the WAL into the database, with an fsync) every 32 MiB rather than
        // every 4 MiB, and keep the WAL file from growing past 64 MiB once checkpointed.
        conn.pragma_update(None, "wal_autocheckpoint", 8192)?;
        conn.pragma_update(None, "journal_size_limit", 64 * 1024 * 1024)?;
        conn.pragma_update(None, "cache_size", -16 * 1024)?;
        conn.pragma_update(None, "foreign_keys", true)?;
        conn.set_prepared_statement_cache_capacity(64);
        schema::migrate(&mut conn)?;
        Ok(Store { conn, path: None })
    }

    /// The board called `name`, registered as `kind` if it is new.
    pub fn board(&mut self, name: &str, kind: Kind) -> Result<BoardId, StoreError> {
        self.conn
            .prepare_cached(
                "INSERT INTO boards (name, kind) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
            )?
            .execute((name, kind.as_str()))?;
        let (id, stored): (BoardId, String) = self
            .conn
            .prepare_cached("SELECT id, kind FROM boards WHERE name = ?1")?
            .query_row([name], |r| Ok((r.get(0)?, r.get(1)?)))?;
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

    /// Applies writes in one transaction, in order; returns the games touched, in first-touch order.
    ///
    /// `GameStarted` closes the board's open game (sets `ended_at_ms`, the result stays) and opens a
    /// new one; `Move` adds a live move to the open game; `Revision` retracts the live move at
    /// `new.ply` and inserts `new`; `Takeback` retracts live moves after `to_ply`; `ResultGesture`
    /// sets the proposed result (the arbiter confirms later); `GameEnded` sets result, termination
    /// and `ended_at_ms`. Every event but `Move` is also kept in `events`. Without an open game an
    /// event (a `Move` too, as kind `move`) is kept in `events` with no game and changes nothing else.
    pub fn write_batch(&mut self, writes: &[Write]) -> Result<Vec<GameId>, StoreError> {
        self.write_batch_dated(writes, None)
    }

    /// [`Store::write_batch`], also dating (`YYYY.MM.DD`) every touched game without a date, in
    /// the same transaction: a refused batch (a full disk) leaves nothing behind, so sending it
    /// again is clean.
    pub fn write_batch_dated(
        &mut self,
        writes: &[Write],
        date: Option<&str>,
    ) -> Result<Vec<GameId>, StoreError> {
        if let Some(date) = date
            && !is_pgn_date(date)
        {
            return Err(StoreError::InvalidDate(date.to_owned()));
        }
        // SQLite would go on writing to a file deleted while open, and lose it all on close.
        if let Some(path) = &self.path
            && !path.exists()
        {
            return Err(StoreError::NotWritable {
                db: path.display().to_string(),
                why: "the file or its directory was deleted or moved while open".into(),
                fix: "what is written now would be lost: restore it, or restart boardscribe with \
                      another database",
            });
        }
        self.try_write_batch(writes, date)
            .map_err(|e| self.located(e))
    }

    fn try_write_batch(
        &mut self,
        writes: &[Write],
        date: Option<&str>,
    ) -> Result<Vec<GameId>, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut batch = Batch::new(&tx);
        for write in writes {
            batch.apply(write)?;
        }
        batch.flush_raw()?;
        let touched = batch.touched;
        if let Some(date) = date {
            let mut stmt =
                tx.prepare_cached("UPDATE games SET date = ?1 WHERE id = ?2 AND date IS NULL")?;
            for &game in &touched {
                stmt.execute((date, game))?;
            }
        }
        tx.commit()?;
        Ok(touched)
    }

    /// Caps the database at `pages` pages (`PRAGMA max_page_count`), or lifts the cap (`None`).
    ///
    /// This is how a test makes the disk full: SQLite then answers SQLITE_FULL exactly as it does
    /// when the disk itself is full. The cap never goes below the database's current size.
    pub fn set_max_pages(&mut self, pages: Option<u64>) -> Result<u64, StoreError> {
        // SQLite's own maximum (SQLITE_MAX_PAGE_COUNT); asking for more gives that.
        let pages = pages.unwrap_or(u64::from(u32::MAX - 1));
        let pages = i64::try_from(pages).unwrap_or(i64::MAX);
        let set: i64 =
            self.conn
                .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |r| {
                    r.get(0)
                })?;
        Ok(u64::try_from(set).unwrap_or(0))
    }

    /// The database's size in pages.
    pub fn page_count(&self) -> Result<u64, StoreError> {
        let n: i64 = self.conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// `err` naming this store's file, and what a failed write most likely means: a full disk
    /// (SQLITE_FULL, or an I/O error while the file system has no space left), a database or
    /// directory that cannot be written or has gone away.
    fn located(&self, err: StoreError) -> StoreError {
        let Some(path) = &self.path else {
            return err;
        };
        let db = path.display().to_string();
        let code = match &err {
            StoreError::Full { .. } => return StoreError::Full { db },
            StoreError::Sqlite(e) => e.sqlite_error_code(),
            _ => None,
        };
        let dir = parent_dir(path);
        match code {
            Some(ErrorCode::ReadOnly) => StoreError::NotWritable {
                db,
                why: "read-only, or moved or deleted while open".into(),
                fix: "make it writable again (or put it back); recording resumes by itself",
            },
            Some(ErrorCode::SystemIoFailure | ErrorCode::CannotOpen) => {
                if !dir.is_dir() {
                    StoreError::NotWritable {
                        db,
                        why: format!("its directory {} has gone away", dir.display()),
                        fix: "put the directory back, or restart with another database",
                    }
                } else if disk_space_left(&dir).is_some_and(|left| left < LOW_SPACE) {
                    StoreError::Full { db }
                } else if !writable(&dir) {
                    StoreError::NotWritable {
                        db,
                        why: format!("its directory {} is read-only", dir.display()),
                        fix: "make it writable again; recording resumes by itself",
                    }
                } else {
                    err
                }
            }
            _ => err,
        }
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

    /// The game still open on `board` (to resume after a restart).
    pub fn open_game(&self, board: BoardId) -> Result<Option<GameRecord>, StoreError> {
        match open_game_id(&self.conn, board)? {
            Some(id) => self.game(id),
            None => Ok(None),
        }
    }

    /// One game with its live moves and events.
    pub fn game(&self, id: GameId) -> Result<Option<GameRecord>, StoreError> {
        let header = self
            .conn
            .prepare_cached(&format!("{GAME_SELECT} WHERE g.id = ?1"))?
            .query_row([id], game_header)
            .optional()?;
        match header {
            Some(header) => Ok(Some(self.complete(header?)?)),
            None => Ok(None),
        }
    }

    /// Every game, by id.
    pub fn games(&self) -> Result<Vec<GameRecord>, StoreError> {
        let headers = self
            .conn
            .prepare_cached(&format!("{GAME_SELECT} ORDER BY g.id"))?
            .query_map([], game_header)?
            .collect::<Result<Vec<_>, _>>()?;
        headers
            .into_iter()
            .map(|h| self.complete(h?))
            .collect::<Result<Vec<_>, _>>()
    }

    /// The games played in `round`, by board number (unnumbered last, by board name), then id.
    pub fn round_games(&self, round: u32) -> Result<Vec<GameRecord>, StoreError> {
        let headers = self
            .conn
            .prepare_cached(&format!(
                "{GAME_SELECT} WHERE g.round = CAST(?1 AS TEXT) \
                 ORDER BY g.board_no IS NULL, g.board_no, b.name, g.id"
            ))?
            .query_map([round], game_header)?
            .collect::<Result<Vec<_>, _>>()?;
        headers
            .into_iter()
            .map(|h| self.complete(h?))
            .collect::<Result<Vec<_>, _>>()
    }

    /// Every read of `board`, one chunk per original read, in the order written.
    pub fn raw_chunks(&self, board: BoardId) -> Result<Vec<RawChunk>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, t_ms, bytes FROM raw_chunks WHERE board_id = ?1 ORDER BY id",
        )?;
        let mut rows = stmt.query([board])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let id: i64 = row.get(0)?;
            let t_ms = get_ms(row, 1)?;
            let blob = row.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
            RawBlock::decode(t_ms, blob, &mut out)
                .map_err(|source| StoreError::Raw { row: id, source })?;
        }
        Ok(out)
    }

    /// SQLite's `integrity_check` and `foreign_key_check`; the problems found, if any.
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        let mut problems: Vec<String> = self
            .conn
            .prepare("PRAGMA integrity_check")?
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
        if problems.len() == 1 && problems[0] == "ok" {
            problems.clear();
        }
        let mut stmt = self.conn.prepare("PRAGMA foreign_key_check")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let table: String = row.get(0)?;
            let rowid: Option<i64> = row.get(1)?;
            let parent: String = row.get(2)?;
            problems.push(format!(
                "{table} row {rowid:?} refers to a missing {parent} row"
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(StoreError::Integrity(problems.join("; ")))
        }
    }

    fn complete(&self, mut game: GameRecord) -> Result<GameRecord, StoreError> {
        game.moves = live_moves(&self.conn, game.id)?;
        game.events = game_events(&self.conn, game.id)?;
        Ok(game)
    }
}

/// The columns [`move_row`] reads, in its order.
const MOVE_COLUMNS: &str =
    "ply, notation, uci, position, at_ms, clock_white_ms, clock_black_ms, time_trouble";

/// A move from a row whose columns from `first` on are [`MOVE_COLUMNS`].
fn move_row(r: &Row, first: usize) -> rusqlite::Result<RecordedMove> {
    Ok(RecordedMove {
        ply: r.get(first)?,
        notation: r.get(first + 1)?,
        uci: r.get(first + 2)?,
        position: r.get(first + 3)?,
        at_ms: get_ms(r, first + 4)?,
        clock_white_ms: get_opt_ms(r, first + 5)?,
        clock_black_ms: get_opt_ms(r, first + 6)?,
        time_trouble: r.get::<_, i64>(first + 7)? != 0,
    })
}

/// The live moves of `game`, by ply.
fn live_moves(conn: &Connection, game: GameId) -> Result<Vec<RecordedMove>, StoreError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {MOVE_COLUMNS} FROM moves \
             WHERE game_id = ?1 AND retracted_by IS NULL ORDER BY ply"
        ))?
        .query_map([game], |r| move_row(r, 0))?
        .collect::<Result<_, _>>()?)
}

/// Every event of `game`, by id.
fn game_events(conn: &Connection, game: GameId) -> Result<Vec<EventRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, at_ms, kind, ply, detail FROM events WHERE game_id = ?1 ORDER BY id",
    )?;
    let mut rows = stmt.query([game])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let detail = r.get_ref(4)?.as_str().map_err(rusqlite::Error::from)?;
        out.push(EventRecord {
            id: r.get(0)?,
            at_ms: get_ms(r, 1)?,
            kind: r.get(2)?,
            ply: r.get(3)?,
            detail: serde_json::from_str(detail)?,
        });
    }
    Ok(out)
}

const GAME_SELECT: &str = "SELECT g.id, g.board_id, b.name, g.kind, g.orientation, g.date, \
     g.started_at_ms, g.ended_at_ms, g.white, g.black, g.result, g.termination, \
     g.event, g.site, g.round, g.board_no, \
     p.board, p.white, p.black, p.white_fide, p.black_fide, p.white_elo, p.black_elo, \
     g.start_position \
     FROM games g JOIN boards b ON b.id = g.board_id \
     LEFT JOIN pairings p ON p.round = CAST(g.round AS INTEGER) AND p.board = g.board_no";

/// A game's header row; the outer error is SQLite's, the inner one a value we cannot read.
fn game_header(r: &Row<'_>) -> rusqlite::Result<Result<GameRecord, StoreError>> {
    let kind: String = r.get(3)?;
    let orientation: String = r.get(4)?;
    let (kind, orientation) = match (parse_kind(&kind), Orientation::from_str_opt(&orientation)) {
        (Ok(k), Some(o)) => (k, o),
        (Err(e), _) => return Ok(Err(e)),
        (_, None) => {
            return Ok(Err(StoreError::Corrupt(format!(
                "orientation {orientation:?}"
            ))));
        }
    };
    let round = match r.get::<_, Option<String>>(14)? {
        None => None,
        Some(text) => match text.parse::<u32>() {
            Ok(n) => Some(n),
            Err(_) => return Ok(Err(StoreError::Corrupt(format!("round {text:?}")))),
        },
    };
    Ok(Ok(GameRecord {
        id: r.get(0)?,
        board: r.get(1)?,
        board_name: r.get(2)?,
        kind,
        orientation,
        start_position: r.get(23)?,
        date: r.get(5)?,
        started_at_ms: get_ms(r, 6)?,
        ended_at_ms: get_opt_ms(r, 7)?,
        white: r.get(8)?,
        black: r.get(9)?,
        result: r.get(10)?,
        termination: r.get(11)?,
        event: r.get(12)?,
        site: r.get(13)?,
        round,
        board_no: r.get(15)?,
        pairing: match r.get::<_, Option<u32>>(16)? {
            Some(_) => Some(pairings::pairing_row(r, 16)?),
            None => None,
        },
        moves: Vec::new(),
        events: Vec::new(),
    }))
}

/// Below this much free space, an I/O error while writing means the disk is full.
const LOW_SPACE: u64 = 1 << 20;

/// The directory holding `db` (`.` for a bare file name).
fn parent_dir(db: &Path) -> PathBuf {
    match db.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// Bytes this user may still write on the file system holding `dir`.
fn disk_space_left(dir: &Path) -> Option<u64> {
    let vfs = rustix::fs::statvfs(dir).ok()?;
    Some(vfs.f_bavail.saturating_mul(vfs.f_frsize))
}

/// Whether this user may create files in `dir`.
fn writable(dir: &Path) -> bool {
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok()
}

/// Why `db` could not be opened, in one line with the fix, when the cause can be seen.
fn diagnose_open(db: &Path, err: StoreError) -> StoreError {
    let name = db.display().to_string();
    let dir = parent_dir(db);
    match err {
        StoreError::Full { .. } => return StoreError::Full { db: name },
        StoreError::Sqlite(_) => {}
        // A schema or WAL problem: its own message says it.
        other => return other,
    }
    let why = if !dir.is_dir() {
        format!(
            "its directory {} does not exist: create it, or give a database path in an \
             existing directory",
            dir.display()
        )
    } else if !writable(&dir) {
        format!(
            "its directory {} is not writable by this user (SQLite creates the -wal and -shm \
             files beside the database): give the user write access (systemd: StateDirectory=)",
            dir.display()
        )
    } else if db.exists() && !writable(db) {
        "the file is read-only for this user: give the user write access to it".to_owned()
    } else if disk_space_left(&dir).is_some_and(|left| left < LOW_SPACE) {
        return StoreError::Full { db: name };
    } else {
        return err;
    };
    StoreError::CannotOpen { db: name, why }
}

fn parse_kind(s: &str) -> Result<Kind, StoreError> {
    Kind::from_str_opt(s).ok_or_else(|| StoreError::Corrupt(format!("game kind {s:?}")))
}

fn get_ms(r: &Row<'_>, i: usize) -> rusqlite::Result<Millis> {
    let v: i64 = r.get(i)?;
    Millis::try_from(v).map_err(|_| FromSqlError::OutOfRange(v).into_column_error(i))
}

fn get_opt_ms(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<Millis>> {
    match r.get::<_, Option<i64>>(i)? {
        None => Ok(None),
        Some(v) => Millis::try_from(v)
            .map(Some)
            .map_err(|_| FromSqlError::OutOfRange(v).into_column_error(i)),
    }
}

trait IntoColumnError {
    fn into_column_error(self, i: usize) -> rusqlite::Error;
}

impl IntoColumnError for FromSqlError {
    fn into_column_error(self, i: usize) -> rusqlite::Error {
        rusqlite::Error::FromSqlConversionFailure(i, Type::Integer, Box::new(self))
    }
}

fn sql_ms(ms: Millis) -> Result<i64, StoreError> {
    i64::try_from(ms).map_err(|_| StoreError::TimeOutOfRange(ms))
}

fn sql_opt_ms(ms: Option<Millis>) -> Result<Option<i64>, StoreError> {
    ms.map(sql_ms).transpose()
}

fn dir_text(dir: Direction) -> &'static str {
    match dir {
        Direction::FromBoard => "<",
        Direction::ToBoard => ">",
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

fn open_game_id(conn: &Connection, board: BoardId) -> Result<Option<GameId>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT id FROM games WHERE board_id = ?1 AND ended_at_ms IS NULL")?
        .query_row([board], |r| r.get(0))
        .optional()?)
}

/// What a batch knows about one board.
struct BoardState {
    board: BoardId,
    kind: Option<Kind>,
    /// `None` until looked up.
    open: Option<Option<GameId>>,
}

/// One `write_batch` in progress.
struct Batch<'c> {
    conn: &'c Connection,
    boards: Vec<BoardState>,
    touched: Vec<GameId>,
    raw: Vec<(BoardId, RawBuffer)>,
}

impl<'c> Batch<'c> {
    /// A batch writing through `conn` (the transaction it runs in).
    fn new(conn: &'c Connection) -> Batch<'c> {
        Batch {
            conn,
            boards: Vec::new(),
            touched: Vec::new(),
            raw: Vec::new(),
        }
    }

    fn apply(&mut self, write: &Write) -> Result<(), StoreError> {
        match write {
            Write::Raw { board, chunk } => {
                let buf = match self.raw.iter().position(|(b, _)| b == board) {
                    Some(i) => &mut self.raw[i].1,
                    None => {
                        self.raw.push((*board, RawBuffer::new()));
                        let last = self.raw.len() - 1;
                        &mut self.raw[last].1
                    }
                };
                buf.push(chunk.t_ms, chunk.dir, &chunk.bytes);
                Ok(())
            }
            Write::RawBlock { board, block } => {
                // Keep the board's rows in the order they were written.
                self.flush_raw_of(*board)?;
                self.insert_raw(*board, block)
            }
            Write::Event { board, event } => self.event(*board, event),
        }
    }

    fn flush_raw(&mut self) -> Result<(), StoreError> {
        for i in 0..self.raw.len() {
            let board = self.raw[i].0;
            if let Some(block) = self.raw[i].1.take() {
                self.insert_raw(board, &block)?;
            }
        }
        Ok(())
    }

    fn flush_raw_of(&mut self, board: BoardId) -> Result<(), StoreError> {
        let block = self
            .raw
            .iter_mut()
            .find(|(b, _)| *b == board)
            .and_then(|(_, buf)| buf.take());
        match block {
            Some(block) => self.insert_raw(board, &block),
            None => Ok(()),
        }
    }

    fn insert_raw(&self, board: BoardId, block: &RawBlock) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "INSERT INTO raw_chunks (board_id, t_ms, dir, reads, bytes) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute((
                board,
                sql_ms(block.t_ms())?,
                dir_text(block.dir()),
                block.reads() as i64,
                block.encoded(),
            ))?;
        Ok(())
    }

    fn state(&mut self, board: BoardId) -> usize {
        match self.boards.iter().position(|s| s.board == board) {
            Some(i) => i,
            None => {
                self.boards.push(BoardState {
                    board,
                    kind: None,
                    open: None,
                });
                self.boards.len() - 1
            }
        }
    }

    fn open_game(&mut self, board: BoardId) -> Result<Option<GameId>, StoreError> {
        let i = self.state(board);
        if let Some(open) = self.boards[i].open {
            return Ok(open);
        }
        let open = open_game_id(self.conn, board)?;
        self.boards[i].open = Some(open);
        Ok(open)
    }

    fn board_kind(&mut self, board: BoardId) -> Result<Kind, StoreError> {
        let i = self.state(board);
        if let Some(kind) = self.boards[i].kind {
            return Ok(kind);
        }
        let kind: Option<String> = self
            .conn
            .prepare_cached("SELECT kind FROM boards WHERE id = ?1")?
            .query_row([board], |r| r.get(0))
            .optional()?;
        let kind = parse_kind(&kind.ok_or(StoreError::UnknownBoard(board))?)?;
        self.boards[i].kind = Some(kind);
        Ok(kind)
    }

    fn touch(&mut self, game: GameId) {
        if !self.touched.contains(&game) {
            self.touched.push(game);
        }
    }

    fn event(&mut self, board: BoardId, event: &TrackerEvent) -> Result<(), StoreError> {
        if let TrackerEvent::GameStarted {
            at_ms,
            orientation,
            start,
        } = event
        {
            return self.start_game(board, *at_ms, *orientation, start.as_deref());
        }
        let Some(game) = self.open_game(board)? else {
            let (at_ms, ply, detail) = event_row(event)?;
            self.insert_event(None, board, at_ms, event.kind(), ply, &detail)?;
            return Ok(());
        };
        self.touch(game);
        match event {
            TrackerEvent::GameStarted { .. } => Ok(()),
            TrackerEvent::Move(mv) => self.insert_move(game, mv),
            TrackerEvent::Revision { at_ms, new, .. } => {
                let (_, ply, detail) = event_row(event)?;
                let id =
                    self.insert_event(Some(game), board, *at_ms, event.kind(), ply, &detail)?;
                self.conn
                    .prepare_cached(
                        "UPDATE moves SET retracted_by = ?1 \
                         WHERE game_id = ?2 AND ply = ?3 AND retracted_by IS NULL",
                    )?
                    .execute((id, game, new.ply))?;
                self.insert_move(game, new)
            }
            TrackerEvent::Takeback { at_ms, to_ply, .. } => {
                let (_, ply, detail) = event_row(event)?;
                let id =
                    self.insert_event(Some(game), board, *at_ms, event.kind(), ply, &detail)?;
                self.conn
                    .prepare_cached(
                        "UPDATE moves SET retracted_by = ?1 \
                         WHERE game_id = ?2 AND ply > ?3 AND retracted_by IS NULL",
                    )?
                    .execute((id, game, to_ply))?;
                Ok(())
            }
            TrackerEvent::ResultGesture {
                at_ms, proposed, ..
            } => {
                let (_, ply, detail) = event_row(event)?;
                self.insert_event(Some(game), board, *at_ms, event.kind(), ply, &detail)?;
                self.conn
                    .prepare_cached("UPDATE games SET result = ?1 WHERE id = ?2")?
                    .execute((proposed.as_pgn(), game))?;
                Ok(())
            }
            TrackerEvent::Reoriented { at_ms, orientation } => {
                let (_, ply, detail) = event_row(event)?;
                self.insert_event(Some(game), board, *at_ms, event.kind(), ply, &detail)?;
                self.conn
                    .prepare_cached("UPDATE games SET orientation = ?1 WHERE id = ?2")?
                    .execute((orientation.as_str(), game))?;
                Ok(())
            }
            TrackerEvent::Irregularity { at_ms, .. }
            | TrackerEvent::Resolved { at_ms, .. }
            | TrackerEvent::FlagFall { at_ms, .. }
            | TrackerEvent::Claimable { at_ms, .. }
            | TrackerEvent::Recovered { at_ms, .. } => {
                let (_, ply, detail) = event_row(event)?;
                self.insert_event(Some(game), board, *at_ms, event.kind(), ply, &detail)?;
                Ok(())
            }
            TrackerEvent::GameEnded {
                at_ms,
                outcome,
                termination,
                ..
            } => {
                let (_, ply, detail) = event_row(event)?;
                self.insert_event(Some(game), board, *at_ms, event.kind(), ply, &detail)?;
                self.conn
                    .prepare_cached(
                        "UPDATE games SET result = ?1, termination = ?2, ended_at_ms = ?3 WHERE id = ?4",
                    )?
                    .execute((outcome.as_pgn(), termination, sql_ms(*at_ms)?, game))?;
                let i = self.state(board);
                self.boards[i].open = Some(None);
                Ok(())
            }
        }
    }

    fn start_game(
        &mut self,
        board: BoardId,
        at_ms: Millis,
        orientation: Orientation,
        start: Option<&str>,
    ) -> Result<(), StoreError> {
        let kind = self.board_kind(board)?;
        if let Some(old) = self.open_game(board)? {
            self.conn
                .prepare_cached("UPDATE games SET ended_at_ms = ?1 WHERE id = ?2")?
                .execute((sql_ms(at_ms)?, old))?;
            self.touch(old);
        }
        let game = GameId(
            self.conn
                .prepare_cached(
                    "INSERT INTO games (board_id, kind, orientation, started_at_ms, event, site, \
                     round, board_no, start_position) \
                     SELECT b.id, ?2, ?3, ?4, t.event, t.site, CAST(t.round AS TEXT), b.number, ?5 \
                     FROM boards b LEFT JOIN tournament t ON t.id = 1 WHERE b.id = ?1",
                )?
                .insert((
                    board,
                    kind.as_str(),
                    orientation.as_str(),
                    sql_ms(at_ms)?,
                    start,
                ))?,
        );
        let i = self.state(board);
        self.boards[i].open = Some(Some(game));
        self.touch(game);
        let event = TrackerEvent::GameStarted {
            at_ms,
            orientation,
            start: start.map(str::to_owned),
        };
        let (_, ply, detail) = event_row(&event)?;
        self.insert_event(Some(game), board, at_ms, event.kind(), ply, &detail)?;
        Ok(())
    }

    fn insert_move(&mut self, game: GameId, mv: &RecordedMove) -> Result<(), StoreError> {
        insert_move_row(self.conn, game, mv)
    }

    fn insert_event(
        &mut self,
        game: Option<GameId>,
        board: BoardId,
        at_ms: Millis,
        kind: &str,
        ply: Option<u32>,
        detail: &str,
    ) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "INSERT INTO events (game_id, board_id, at_ms, kind, ply, detail) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .insert((game, board, sql_ms(at_ms)?, kind, ply, detail))?)
    }
}

/// Inserts a live move row; a second live move at the same ply is [`StoreError::PlyTaken`].
fn insert_move_row(conn: &Connection, game: GameId, mv: &RecordedMove) -> Result<(), StoreError> {
    let res = conn
        .prepare_cached(
            "INSERT INTO moves (game_id, ply, notation, uci, position, at_ms, clock_white_ms, \
             clock_black_ms, time_trouble) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?
        .execute((
            game,
            mv.ply,
            &mv.notation,
            &mv.uci,
            &mv.position,
            sql_ms(mv.at_ms)?,
            sql_opt_ms(mv.clock_white_ms)?,
            sql_opt_ms(mv.clock_black_ms)?,
            mv.time_trouble,
        ));
    match res {
        Ok(_) => Ok(()),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
        {
            Err(StoreError::PlyTaken { game, ply: mv.ply })
        }
        Err(e) => Err(e.into()),
    }
}

/// Time, ply and JSON detail of an event's row: the ply is the one the event happened before,
/// except for a `move` kept without a game, whose ply is the move's.
fn event_row(event: &TrackerEvent) -> Result<(Millis, Option<u32>, String), StoreError> {
    let (at_ms, ply, detail) = match event {
        TrackerEvent::GameStarted {
            at_ms,
            orientation,
            start: None,
        } => (*at_ms, 1, json!({ "orientation": orientation.as_str() })),
        TrackerEvent::GameStarted {
            at_ms,
            orientation,
            start: Some(start),
        } => (
            *at_ms,
            1,
            json!({ "orientation": orientation.as_str(), "start": start }),
        ),
        TrackerEvent::Move(mv) => (mv.at_ms, mv.ply, serde_json::to_value(mv)?),
        TrackerEvent::Revision { at_ms, old, new } => (
            *at_ms,
            new.ply.saturating_add(1),
            json!({ "old": old, "new": new }),
        ),
        TrackerEvent::Takeback {
            at_ms,
            from_ply,
            to_ply,
        } => (
            *at_ms,
            from_ply.saturating_add(1),
            json!({ "from_ply": from_ply, "to_ply": to_ply }),
        ),
        TrackerEvent::ResultGesture {
            at_ms,
            after_ply,
            proposed,
        } => (
            *at_ms,
            after_ply.saturating_add(1),
            json!({ "after_ply": after_ply, "proposed": proposed.as_pgn() }),
        ),
        TrackerEvent::GameEnded {
            at_ms,
            after_ply,
            outcome,
            termination,
        } => (
            *at_ms,
            after_ply.saturating_add(1),
            json!({ "after_ply": after_ply, "result": outcome.as_pgn(), "termination": termination }),
        ),
        TrackerEvent::Irregularity {
            at_ms,
            since_ms,
            id,
            ply,
            player,
            detail,
            article,
            ruling,
            ..
        } => (
            *at_ms,
            *ply,
            json!({
                "id": id,
                "since_ms": since_ms,
                "player": player.map(|p| p.as_str()),
                "detail": detail,
                "article": article,
                "ruling": ruling,
            }),
        ),
        TrackerEvent::Resolved {
            at_ms,
            id,
            ply,
            how,
        } => (*at_ms, *ply, json!({ "id": id, "how": how })),
        TrackerEvent::FlagFall {
            at_ms,
            after_ply,
            side,
            proposed,
            termination,
            article,
            both,
            note,
        } => (
            *at_ms,
            after_ply.saturating_add(1),
            json!({
                "side": side.as_str(),
                "proposed": proposed.as_pgn(),
                "termination": termination,
                "article": article,
                "both": both,
                "note": note,
            }),
        ),
        TrackerEvent::Claimable {
            at_ms,
            ply,
            claim,
            article,
        } => (*at_ms, *ply, json!({ "claim": claim, "article": article })),
        TrackerEvent::Reoriented { at_ms, orientation } => {
            (*at_ms, 1, json!({ "orientation": orientation.as_str() }))
        }
        TrackerEvent::Recovered {
            at_ms,
            since_ms,
            from_ply,
            to_ply,
            source,
        } => (
            *at_ms,
            *from_ply,
            json!({
                "since_ms": since_ms,
                "from_ply": from_ply,
                "to_ply": to_ply,
                "source": source,
            }),
        ),
    };
    Ok((at_ms, Some(ply), detail.to_string()))
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
