//! The schema, as an append-only list of migrations applied by `PRAGMA user_version`.
//!
//! Entry `i` takes a database from version `i` to `i + 1`, in one transaction with the version bump.
//! Never remove or edit an entry once released: add a new one. A database newer than this list is
//! refused rather than guessed at.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::StoreError;

/// Every migration, oldest first.
///
/// Conventions: times are integer milliseconds on the stream's clock; `events.ply` is the ply the
/// event happened before (plies played so far + 1); moves and events are append-only (triggers),
/// except that a move's `retracted_by` is set once, to the event (revision, takeback) that retracted it.
pub const MIGRATIONS: &[&str] = &[
    // 1: boards, games, moves, raw chunks, events.
    r#"
CREATE TABLE boards (
    id      INTEGER PRIMARY KEY,
    name    TEXT NOT NULL UNIQUE,
    kind    TEXT NOT NULL,
    created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
) STRICT;

CREATE TABLE games (
    id            INTEGER PRIMARY KEY,
    board_id      INTEGER NOT NULL REFERENCES boards (id),
    kind          TEXT NOT NULL,
    orientation   TEXT NOT NULL,
    date          TEXT,
    started_at_ms INTEGER NOT NULL,
    ended_at_ms   INTEGER,
    white         TEXT,
    black         TEXT,
    result        TEXT NOT NULL DEFAULT '*',
    termination   TEXT,
    event         TEXT,
    site          TEXT,
    round         TEXT
) STRICT;
-- At most one open game per board; also the lookup for it.
CREATE UNIQUE INDEX games_open ON games (board_id) WHERE ended_at_ms IS NULL;
CREATE INDEX games_board ON games (board_id);

CREATE TABLE events (
    id       INTEGER PRIMARY KEY,
    game_id  INTEGER REFERENCES games (id),
    board_id INTEGER NOT NULL REFERENCES boards (id),
    at_ms    INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    ply      INTEGER,
    detail   TEXT NOT NULL CHECK (json_valid(detail))
) STRICT;
CREATE INDEX events_game ON events (game_id);
CREATE INDEX events_board ON events (board_id);

CREATE TABLE moves (
    id             INTEGER PRIMARY KEY,
    game_id        INTEGER NOT NULL REFERENCES games (id),
    ply            INTEGER NOT NULL CHECK (ply >= 1),
    notation       TEXT NOT NULL,
    uci            TEXT,
    position       TEXT NOT NULL,
    at_ms          INTEGER NOT NULL,
    clock_white_ms INTEGER,
    clock_black_ms INTEGER,
    time_trouble   INTEGER NOT NULL DEFAULT 0 CHECK (time_trouble IN (0, 1)),
    retracted_by   INTEGER REFERENCES events (id)
) STRICT;
-- One live move per ply; also the read path for a game's live moves.
CREATE UNIQUE INDEX moves_live ON moves (game_id, ply) WHERE retracted_by IS NULL;
CREATE INDEX moves_retracted_by ON moves (retracted_by) WHERE retracted_by IS NOT NULL;

CREATE TRIGGER moves_no_delete BEFORE DELETE ON moves
BEGIN SELECT RAISE(ABORT, 'moves are never deleted'); END;
CREATE TRIGGER moves_no_rewrite
BEFORE UPDATE OF id, game_id, ply, notation, uci, position, at_ms, clock_white_ms,
    clock_black_ms, time_trouble ON moves
BEGIN SELECT RAISE(ABORT, 'moves are never rewritten; retract and insert'); END;
CREATE TRIGGER moves_retract_once BEFORE UPDATE OF retracted_by ON moves
WHEN OLD.retracted_by IS NOT NULL OR NEW.retracted_by IS NULL
BEGIN SELECT RAISE(ABORT, 'a move is retracted once'); END;

CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are never deleted'); END;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are never updated'); END;

CREATE TABLE raw_chunks (
    id       INTEGER PRIMARY KEY,
    board_id INTEGER NOT NULL REFERENCES boards (id),
    t_ms     INTEGER NOT NULL,
    dir      TEXT NOT NULL CHECK (dir IN ('<', '>')),
    reads    INTEGER NOT NULL,
    bytes    BLOB NOT NULL
) STRICT;
CREATE INDEX raw_chunks_board ON raw_chunks (board_id);
"#,
    // 2: drop indexes no query uses; each cost a page write in every commit that touched the table.
    r#"
DROP INDEX games_board;
DROP INDEX events_board;
"#,
    // 3: board numbers, the tournament setting a game copies when it starts, pairings per round.
    // `games.round` (TEXT since 1) holds the round number in decimal.
    r#"
ALTER TABLE boards ADD COLUMN number INTEGER CHECK (number IS NULL OR number >= 1);
CREATE UNIQUE INDEX boards_number ON boards (number) WHERE number IS NOT NULL;
ALTER TABLE games ADD COLUMN board_no INTEGER;

CREATE TABLE tournament (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    event TEXT NOT NULL,
    site  TEXT NOT NULL,
    round INTEGER NOT NULL CHECK (round >= 1)
) STRICT;

CREATE TABLE pairings (
    round      INTEGER NOT NULL CHECK (round >= 1),
    board      INTEGER NOT NULL CHECK (board >= 1),
    white      TEXT NOT NULL,
    black      TEXT NOT NULL,
    white_fide INTEGER,
    black_fide INTEGER,
    white_elo  INTEGER,
    black_elo  INTEGER,
    PRIMARY KEY (round, board)
) STRICT, WITHOUT ROWID;
"#,
    // 4: a game's start position when it is not the kind's standard one (a Chess960 start, as
    // FEN), so that the game can be resumed and exported; NULL: the standard start.
    r#"
ALTER TABLE games ADD COLUMN start_position TEXT;
"#,
    // 5: the event around the rounds (issue 16). The `tournament` row is the event: its name
    // (`event`), site, dates, time control, laws and variant, and the current round; `rounds`
    // lists each round started (by whom, when: wall-clock ms since the epoch); a game copies the
    // event's time control when it starts, as it copies the event and the round; pairings carry
    // the players' titles and federations.
    r#"
ALTER TABLE tournament ADD COLUMN start_date TEXT;
ALTER TABLE tournament ADD COLUMN end_date TEXT;
ALTER TABLE tournament ADD COLUMN time_control TEXT;
ALTER TABLE tournament ADD COLUMN laws TEXT;
ALTER TABLE tournament ADD COLUMN variant TEXT;
CREATE TABLE rounds (
    number        INTEGER PRIMARY KEY CHECK (number >= 1),
    started_at_ms INTEGER NOT NULL,
    started_by    TEXT NOT NULL
) STRICT;
INSERT INTO rounds (number, started_at_ms, started_by)
    SELECT round, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'config'
    FROM tournament;
ALTER TABLE games ADD COLUMN time_control TEXT;
ALTER TABLE pairings ADD COLUMN white_title TEXT;
ALTER TABLE pairings ADD COLUMN black_title TEXT;
ALTER TABLE pairings ADD COLUMN white_fed TEXT;
ALTER TABLE pairings ADD COLUMN black_fed TEXT;
"#,
    // 6: one event across several halls (issue 18).
    //
    // A hall (`cluster_hall` set: its name and a random origin naming this database) keeps every
    // record it commits in `outbox` too, by triggers, in the same transaction: the publisher
    // sends them in `seq` order and deletes what the broker acknowledged. Without a
    // `cluster_hall` row the triggers do nothing. The triggers and the views giving each kind's
    // row are not written here: they follow the row structs of `store::hall_record` and are made
    // at every open that differs from them ([`follow_outbox_shapes`]). `board_links` keeps each board's connections
    // and losses. An event node keeps, per hall, the last record it applied (`replica_halls`),
    // which hall row each of its rows stands for (`replica_ids`) and when each record arrived
    // (`replica_log`: the hall's commit time, ms since the epoch, and the event node's).
    r#"
CREATE TABLE cluster_hall (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    hall   TEXT NOT NULL,
    origin TEXT NOT NULL
) STRICT;
CREATE TABLE outbox (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms INTEGER NOT NULL,
    kind  TEXT NOT NULL,
    row   TEXT NOT NULL CHECK (json_valid(row))
) STRICT;
CREATE TABLE board_links (
    id        INTEGER PRIMARY KEY,
    board_id  INTEGER NOT NULL REFERENCES boards (id),
    at_ms     INTEGER NOT NULL,
    connected INTEGER NOT NULL CHECK (connected IN (0, 1))
) STRICT;
CREATE INDEX board_links_board ON board_links (board_id);
CREATE INDEX games_board_latest ON games (board_id, id);
CREATE TABLE replica_halls (
    hall          TEXT PRIMARY KEY,
    origin        TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    stream_seq    INTEGER NOT NULL,
    at_ms         INTEGER NOT NULL,
    applied_at_ms INTEGER NOT NULL
) STRICT;
CREATE TABLE replica_ids (
    hall   TEXT NOT NULL,
    tbl    TEXT NOT NULL,
    remote INTEGER NOT NULL,
    local  INTEGER NOT NULL,
    PRIMARY KEY (hall, tbl, remote)
) STRICT, WITHOUT ROWID;
CREATE INDEX replica_ids_local ON replica_ids (tbl, local);
CREATE TABLE replica_log (
    hall          TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    kind          TEXT NOT NULL,
    at_ms         INTEGER NOT NULL,
    applied_at_ms INTEGER NOT NULL,
    PRIMARY KEY (hall, seq)
) STRICT, WITHOUT ROWID;
"#,
    // 7: the event node's record of a board whose hall gave it a number another board of the
    // event already has: the number it asked for (the board is kept without one meanwhile), so
    // that the arbiter's alert about it outlives the event node's restarts.
    r#"
ALTER TABLE boards ADD COLUMN number_refused INTEGER;
"#,
    // 8: a hall database published again under another hall name (`cluster republish`, issue
    // 32). The event node keeps, per hall database (`origin`), the hall name whose ids its rows
    // are mapped under (`hall`: the first name its records came under), the last of its records
    // applied from the hall itself (`seq`) and the last record a republished copy of the whole
    // database stood for (`covered`: that hall's later deliveries up to it are already there).
    r#"
CREATE TABLE replica_origins (
    origin  TEXT PRIMARY KEY,
    hall    TEXT NOT NULL,
    seq     INTEGER NOT NULL DEFAULT 0,
    covered INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT OR IGNORE INTO replica_origins (origin, hall, seq)
    SELECT origin, hall, seq FROM replica_halls ORDER BY rowid;
"#,
    // 9: the event's language (`[tournament] language`, issue 33): what `export` writes its
    // scoresheets in unless told otherwise.
    r#"
ALTER TABLE tournament ADD COLUMN language TEXT;
"#,
    // 10: the event's notation (`[tournament] notation`, issue 33: `san`, `figurine`, `local`):
    // how `export` writes the scoresheets' moves unless told otherwise.
    r#"
ALTER TABLE tournament ADD COLUMN notation TEXT;
"#,
    // 11: the event's tie-breaks (`[tournament] tiebreaks`, issue 34: names, comma-separated, in
    // order): how the standings rank players on equal points.
    r#"
ALTER TABLE tournament ADD COLUMN tiebreaks TEXT;
"#,
    // 12: the players' starting ranks of the TRF a round's pairings came from (issue 34), kept
    // for the TRF export; NULL for a CSV's.
    r#"
ALTER TABLE pairings ADD COLUMN white_start INTEGER;
ALTER TABLE pairings ADD COLUMN black_start INTEGER;
"#,
    // 13: the byes of a round's pairings (issue 34): a TRF's players left without a board, with
    // the kind of bye (`U`, `F`, `H`, `Z`), for the standings and the TRF export.
    r#"
CREATE TABLE round_byes (
    round  INTEGER NOT NULL,
    name   TEXT NOT NULL,
    fide   INTEGER,
    elo    INTEGER,
    title  TEXT,
    fed    TEXT,
    start  INTEGER,
    code   TEXT NOT NULL CHECK (code IN ('U', 'F', 'H', 'Z'))
) STRICT;
CREATE INDEX round_byes_round ON round_byes (round);
"#,
    // 14: every change of the current round by the arbiter (issue 34): a round started
    // (`start`) and a start undone (`undo`), each with the round current after it (`round`) and
    // before it (`previous`), so that a round started by mistake can be undone, and the log
    // says both.
    r#"
CREATE TABLE round_log (
    id       INTEGER PRIMARY KEY,
    round    INTEGER NOT NULL,
    previous INTEGER,
    action   TEXT NOT NULL CHECK (action IN ('start', 'undo')),
    by       TEXT NOT NULL,
    at_ms    INTEGER NOT NULL
) STRICT;
"#,
    // 15: every bye the arbiter gave or withdrew in the console (issue 34): the round, the
    // player, the kind (`U`, `F`, `H`, `Z`; none for a bye withdrawn), who and when.
    r#"
CREATE TABLE bye_log (
    id     INTEGER PRIMARY KEY,
    round  INTEGER NOT NULL,
    name   TEXT NOT NULL,
    code   TEXT CHECK (code IN ('U', 'F', 'H', 'Z')),
    by     TEXT NOT NULL,
    at_ms  INTEGER NOT NULL
) STRICT;
"#,
    // 16: every import of a round's pairings by the arbiter, and every import undone (issue
    // 34), each with the round's pairings and byes as they were before it (JSON), so that an
    // import of the wrong file can be undone and the log says both.
    r#"
CREATE TABLE pairings_log (
    id       INTEGER PRIMARY KEY,
    round    INTEGER NOT NULL,
    action   TEXT NOT NULL CHECK (action IN ('import', 'undo')),
    pairings TEXT NOT NULL,
    byes     TEXT NOT NULL,
    boards   INTEGER NOT NULL,
    by       TEXT NOT NULL,
    at_ms    INTEGER NOT NULL
) STRICT;
"#,
    // 17: what a board's sensor learnt of the board itself (a Certabo board's calibration: which
    // chip is which piece), one opaque text per board and kind of board, kept so that a power
    // cycle or a restart needs no second calibration; replaced when learnt again.
    r#"
CREATE TABLE board_learnt (
    board_id INTEGER NOT NULL REFERENCES boards(id),
    kind     TEXT NOT NULL,
    what     TEXT NOT NULL,
    text     TEXT NOT NULL,
    updated  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (board_id, kind)
) STRICT;
"#,
];

/// Makes the outbox's views and triggers as the row structs make them
/// ([`super::hall_record::outbox_sql`]): each one missing or written otherwise is dropped and
/// made again, all in one transaction; nothing is written when every one is as made. The
/// triggers are kept only in a database that joined a hall (a `cluster_hall` row): elsewhere
/// they are dropped, so that no insert pays for an outbox nobody reads. Runs after [`migrate`]
/// at every writing open, so a database follows the shape of the record its program sends.
pub fn follow_outbox_shapes(conn: &mut Connection) -> Result<(), StoreError> {
    if !outbox_stale(conn)? {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Looked at again under the lock: another process may have made them meanwhile.
    make_outbox(&tx)?;
    tx.commit()?;
    Ok(())
}

/// Whether the database's outbox objects differ from those its hall membership wants.
fn outbox_stale(conn: &Connection) -> Result<bool, StoreError> {
    Ok(outbox_changes(conn)?.iter().any(|c| c.is_some()))
}

/// What each outbox object needs: `None` if it is as wanted, else what to make (`Some(None)`:
/// only drop it, a trigger in a database that is no hall's).
fn outbox_changes(
    conn: &Connection,
) -> Result<Vec<Option<(super::hall_record::OutboxObject, bool)>>, StoreError> {
    let joined: bool = conn.query_row("SELECT EXISTS (SELECT 1 FROM cluster_hall)", [], |r| {
        r.get(0)
    })?;
    let mut stmt =
        conn.prepare_cached("SELECT sql FROM sqlite_master WHERE type = ?1 AND name = ?2")?;
    super::hall_record::outbox_sql()
        .into_iter()
        .map(|o| {
            let found: Option<String> = stmt
                .query_row([o.kind, o.name.as_str()], |r| r.get(0))
                .optional()?;
            let wanted = joined || o.kind != "trigger";
            Ok(match (found, wanted) {
                (None, false) => None,
                (Some(_), false) => Some((o, false)),
                (Some(sql), true) if sql == o.sql => None,
                (_, true) => Some((o, true)),
            })
        })
        .collect()
}

/// Drops and makes again, in the open transaction `tx`, every outbox object that is not as the
/// database's hall membership wants ([`follow_outbox_shapes`]; [`super::Store::join_hall`]
/// after it has written the `cluster_hall` row).
pub(super) fn make_outbox(tx: &Connection) -> Result<(), StoreError> {
    let changes: Vec<_> = outbox_changes(tx)?.into_iter().flatten().collect();
    for (o, _) in &changes {
        tx.execute_batch(&format!(
            "DROP {} IF EXISTS {}",
            o.kind.to_uppercase(),
            o.name
        ))?;
    }
    // Views first: a trigger names its view.
    for (o, make) in &changes {
        if *make {
            tx.execute_batch(&o.sql)?;
        }
    }
    Ok(())
}

/// Current schema version of a connection's database.
pub fn version(conn: &Connection) -> Result<usize, StoreError> {
    let v: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    usize::try_from(v).map_err(|_| StoreError::Corrupt(format!("user_version {v}")))
}

/// Brings the database up to the newest schema; a no-op on an up-to-date database.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let found = version(conn)?;
    if found > MIGRATIONS.len() {
        return Err(StoreError::NewerSchema {
            found,
            known: MIGRATIONS.len(),
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found) {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have migrated between our read and our lock.
        if version(&tx)? > i {
            continue;
        }
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, hall_record::outbox_sql};

    fn stored(conn: &Connection, kind: &str, name: &str) -> Option<String> {
        conn.query_row(
            "SELECT sql FROM sqlite_master WHERE type = ?1 AND name = ?2",
            [kind, name],
            |r| r.get(0),
        )
        .optional()
        .unwrap()
    }

    fn schema_version(conn: &Connection) -> i64 {
        conn.query_row("PRAGMA schema_version", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn the_outbox_is_made_from_the_row_structs_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hall.db");
        drop(Store::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
        let wanted = outbox_sql();
        // A view per row shape, a trigger per kind.
        assert_eq!(wanted.iter().filter(|o| o.kind == "view").count(), 7);
        assert_eq!(wanted.iter().filter(|o| o.kind == "trigger").count(), 8);
        // A database that is no hall's has the views and no trigger: its writes do no outbox
        // work.
        let as_made = |joined: bool| {
            for o in &wanted {
                let want = (joined || o.kind == "view").then_some(&o.sql);
                assert_eq!(stored(&conn, o.kind, &o.name).as_ref(), want, "{}", o.name);
            }
        };
        as_made(false);
        // The board row's columns are the struct's fields, in its order.
        let boards = wanted.iter().find(|o| o.name == "outbox_boards").unwrap();
        assert!(
            boards
                .sql
                .contains("json_object('id', id, 'name', name, 'kind', kind, 'number', number)"),
            "{}",
            boards.sql
        );
        // Opened again, nothing is made again.
        let before = schema_version(&conn);
        drop(Store::open(&path).unwrap());
        assert_eq!(schema_version(&conn), before);
        // Joining a hall makes the triggers, and they stay through later opens.
        Store::open(&path)
            .unwrap()
            .join_hall("A", "0123456789abcdef")
            .unwrap();
        as_made(true);
        let before = schema_version(&conn);
        drop(Store::open(&path).unwrap());
        assert_eq!(schema_version(&conn), before);
        as_made(true);
    }

    #[test]
    fn a_database_that_is_no_halls_loses_the_triggers_earlier_releases_made() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain.db");
        drop(Store::open(&path).unwrap());
        // As earlier releases left every database: each trigger there, doing nothing without a
        // hall.
        let conn = Connection::open(&path).unwrap();
        for o in outbox_sql().iter().filter(|o| o.kind == "trigger") {
            conn.execute_batch(&o.sql).unwrap();
        }
        drop(Store::open(&path).unwrap());
        for o in outbox_sql().iter().filter(|o| o.kind == "trigger") {
            assert_eq!(stored(&conn, o.kind, &o.name), None, "{}", o.name);
        }
    }

    #[test]
    fn an_older_databases_outbox_is_made_as_the_structs_say() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        drop(Store::open(&path).unwrap());
        // As schema 6 to 8 left it: the board number's row written in its trigger, no view.
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TRIGGER IF EXISTS outbox_board_number; DROP VIEW outbox_board_numbers;
             CREATE TRIGGER outbox_board_number AFTER UPDATE OF number ON boards
             WHEN EXISTS (SELECT 1 FROM cluster_hall)
             BEGIN INSERT INTO outbox (at_ms, kind, row) VALUES (0, 'board_number',
                 json_object('id', NEW.id, 'number', NEW.number));
             END;",
        )
        .unwrap();
        let mut store = Store::open(&path).unwrap();
        store.join_hall("A", "0123456789abcdef").unwrap();
        for o in outbox_sql() {
            assert_eq!(stored(&conn, o.kind, &o.name), Some(o.sql), "{}", o.name);
        }
        // And it writes the row the event node reads.
        let board = store.board("board 1", crate::game::Kind::Chess).unwrap();
        store.set_board_number(board, 7).unwrap();
        let row: String = conn
            .query_row(
                "SELECT row FROM outbox WHERE kind = 'board_number' ORDER BY seq DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let read: crate::store::hall_record::BoardNumberRow = serde_json::from_str(&row).unwrap();
        assert_eq!((read.id, read.number), (board.0, Some(7)));
    }
}
