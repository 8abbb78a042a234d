//! Opening the database: a file (created with its schema, WAL, a busy timeout), in memory, or
//! read-only; and what an open or a write that failed says about the disk (a missing or read-only
//! directory, a full disk, with the fix), the size cap and the integrity check.
//!
//! Flow: [`Store::open`] (every writer: the daemon, the relay's admin connection, the CLI's
//! commands) runs `PRAGMA quick_check` before anything is written, once per open and never per
//! write, and refuses a damaged file with [`StoreError::Damaged`] (the same "unreadable" as a
//! read that meets bad data); a file SQLite calls malformed or not a database is refused so too.
//! The read-only opens skip it, so what still reads can be exported from a damaged file.

use super::*;

/// Below this much free space, an I/O error while writing means the disk is full.
pub(super) const LOW_SPACE: u64 = 1 << 20;

/// The directory holding `db` (`.` for a bare file name).
pub(super) fn parent_dir(db: &Path) -> PathBuf {
    match db.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// Bytes this user may still write on the file system holding `dir`.
pub(super) fn disk_space_left(dir: &Path) -> Option<u64> {
    let vfs = rustix::fs::statvfs(dir).ok()?;
    Some(vfs.f_bavail.saturating_mul(vfs.f_frsize))
}

/// Whether this user may create files in `dir`.
pub(super) fn writable(dir: &Path) -> bool {
    rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok()
}

/// Why `db` could not be opened, in one line with the fix, when the cause can be seen.
pub(super) fn diagnose_open(db: &Path, err: StoreError) -> StoreError {
    let name = db.display().to_string();
    let dir = parent_dir(db);
    match err {
        StoreError::Full { .. } => return StoreError::Full { db: name },
        StoreError::Damaged { problems, .. } => {
            return StoreError::Damaged { db: name, problems };
        }
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

/// What SQLite's error `code` (of a file it found damaged) says, in a few words.
pub(super) fn damage_words(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::NotADatabase => "SQLite says the file is not a database",
        _ => "SQLite says the file is malformed",
    }
}

/// The most of quick_check's findings a refusal quotes (the first says where; the rest are more
/// of the same).
const PROBLEMS_QUOTED: usize = 3;

/// `PRAGMA quick_check` on `conn`: the damage found, if any. It reads every page once (about a
/// millisecond per MiB, warm: docs/operations.md), without the index cross-checks of
/// `integrity_check`.
fn quick_check(conn: &Connection) -> Result<(), StoreError> {
    let found: Result<Vec<String>, StoreError> = conn
        .prepare(&format!("PRAGMA quick_check({})", PROBLEMS_QUOTED + 1))
        .and_then(|mut stmt| {
            stmt.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()
        })
        .map_err(StoreError::from);
    let rows = match found {
        Ok(rows) if rows.len() == 1 && rows[0] == "ok" => return Ok(()),
        Ok(rows) => rows,
        Err(e) => return Err(e),
    };
    // A row may hold several lines, under a `*** in database main ***` heading.
    let problems: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("***"))
        .collect();
    let mut quoted = problems
        .iter()
        .take(PROBLEMS_QUOTED)
        .copied()
        .collect::<Vec<_>>()
        .join("; ");
    if problems.len() > PROBLEMS_QUOTED {
        quoted.push_str("; and more");
    }
    Err(StoreError::Damaged {
        db: UNNAMED.to_owned(),
        problems: quoted,
    })
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`; a damaged file is
    /// refused before anything is written to it (see the module).
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
        Store::open_read_only_since(path, schema::MIGRATIONS.len())
    }

    /// [`Store::open_read_only`], also taking a database of schema `oldest` or newer that this
    /// program has not migrated (a database another release wrote, read by a caller that reads
    /// only what `oldest` has).
    pub(crate) fn open_read_only_since(path: &Path, oldest: usize) -> Result<Store, StoreError> {
        use rusqlite::OpenFlags;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "cache_size", -16 * 1024)?;
        conn.set_prepared_statement_cache_capacity(64);
        stable_plans(&conn)?;
        let found = schema::version(&conn)?;
        let known = schema::MIGRATIONS.len();
        if found > known {
            return Err(StoreError::NewerSchema { found, known });
        }
        if found < oldest.min(known) {
            return Err(StoreError::Corrupt(format!(
                "schema version {found}, not yet migrated to {known}"
            )));
        }
        Ok(Store {
            conn,
            path: Some(path.to_owned()),
        })
    }

    /// Begins a read transaction: until [`Store::end_read`], every query of this connection
    /// sees the database as one commit left it, whatever other connections commit meanwhile.
    pub fn begin_read(&self) -> Result<(), StoreError> {
        self.conn.execute_batch("BEGIN DEFERRED")?;
        Ok(())
    }

    /// Ends the read transaction [`Store::begin_read`] began.
    pub fn end_read(&self) -> Result<(), StoreError> {
        self.conn.execute_batch("COMMIT")?;
        Ok(())
    }

    /// Caps the pages this connection keeps in memory at about `kib` KiB (16 MiB when opened): a
    /// process that must stay small trades some reads of pages the system still caches for it.
    pub fn set_cache_kib(&self, kib: u32) -> Result<(), StoreError> {
        self.conn
            .pragma_update(None, "cache_size", -i64::from(kib))?;
        Ok(())
    }

    /// SQLite's `data_version`: changes whenever another connection has committed, so a reader
    /// can tell cheaply whether what it rendered is still current.
    pub fn data_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }

    pub(super) fn setup(mut conn: Connection, file: bool) -> Result<Store, StoreError> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        if file {
            quick_check(&conn)?;
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
        stable_plans(&conn)?;
        schema::migrate(&mut conn)?;
        schema::follow_outbox_shapes(&mut conn)?;
        Ok(Store { conn, path: None })
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
    pub(super) fn located(&self, err: StoreError) -> StoreError {
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
}

/// Keeps each cached statement's query plan whatever values are bound to it (SQLite's query
/// planner stability guarantee). Without it, SQLite compiles a statement again whenever a bound
/// id crosses between 0 or 1 and any other number (its estimate for `= ?` differs), and a
/// statement whose table has triggers costs a hundred thousand instructions to compile: the
/// replay of a board after another's spent a tenth of its time there.
fn stable_plans(conn: &Connection) -> Result<(), StoreError> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}
