//! Writing a batch in one transaction: raw blocks coalesced per board, then the tracker's events,
//! each as its rows (games begun and ended, moves, events). Flow: [`Store::write_batch`] →
//! [`Batch::apply`] per write → one commit; a failed batch is rolled back whole.

use std::sync::LazyLock;

use super::*;
use closing::{ClosedGame, NO_ARBITER_RESULT};

pub(super) fn sql_ms(ms: Millis) -> Result<i64, StoreError> {
    i64::try_from(ms).map_err(|_| StoreError::TimeOutOfRange(ms))
}

pub(super) fn sql_opt_ms(ms: Option<Millis>) -> Result<Option<i64>, StoreError> {
    ms.map(sql_ms).transpose()
}

pub(super) fn dir_text(dir: Direction) -> &'static str {
    match dir {
        Direction::FromBoard => "<",
        Direction::ToBoard => ">",
    }
}

/// What a batch knows about one board.
pub(super) struct BoardState {
    pub(super) board: BoardId,
    pub(super) kind: Option<Kind>,
    /// `None` until looked up.
    pub(super) open: Option<Option<GameId>>,
}

/// One `write_batch` in progress.
pub(super) struct Batch<'c> {
    pub(super) conn: &'c Connection,
    /// The move insert, held for the batch: most of a batch's writes are moves.
    moves: Option<rusqlite::CachedStatement<'c>>,
    pub(super) boards: Vec<BoardState>,
    pub(super) touched: Vec<GameId>,
    pub(super) raw: Vec<(BoardId, RawBuffer)>,
    /// The closed game each board's gameless events would have extended.
    pub(super) closed: Vec<ClosedGame>,
}

/// What a batch did: the games it touched and the games it found closed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteReport {
    /// In first-touch order.
    pub touched: Vec<GameId>,
    /// The latest game of each board that wrote an event (not a game start) with no game open:
    /// ended, or closed by the arbiter's result ([`super::closing`]).
    pub closed: Vec<ClosedGame>,
}

impl<'c> Batch<'c> {
    /// A batch writing through `conn` (the transaction it runs in).
    pub(super) fn new(conn: &'c Connection) -> Batch<'c> {
        Batch {
            conn,
            moves: None,
            boards: Vec::new(),
            touched: Vec::new(),
            raw: Vec::new(),
            closed: Vec::new(),
        }
    }

    pub(super) fn apply(&mut self, write: &Write) -> Result<(), StoreError> {
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
            Write::Link {
                board,
                at_ms,
                connected,
            } => {
                self.conn
                    .prepare_cached(
                        "INSERT INTO board_links (board_id, at_ms, connected) VALUES (?1, ?2, ?3)",
                    )?
                    .execute((board, sql_ms(*at_ms)?, i64::from(*connected)))?;
                Ok(())
            }
            Write::Learnt {
                board,
                kind,
                what,
                text,
            } => {
                self.conn
                    .prepare_cached(
                        "INSERT INTO board_learnt (board_id, kind, what, text) \
                         VALUES (?1, ?2, ?3, ?4) \
                         ON CONFLICT (board_id, kind) DO UPDATE SET what = excluded.what, \
                         text = excluded.text, \
                         updated = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
                    )?
                    .execute((board, kind, what, text))?;
                Ok(())
            }
        }
    }

    /// Writes the raw bytes still held and ends the batch (its held statement back to the
    /// connection's cache): the games it touched, and those it found closed.
    pub(super) fn finish(mut self) -> Result<(Vec<GameId>, Vec<ClosedGame>), StoreError> {
        self.flush_raw()?;
        Ok((
            std::mem::take(&mut self.touched),
            std::mem::take(&mut self.closed),
        ))
    }

    pub(super) fn flush_raw(&mut self) -> Result<(), StoreError> {
        for i in 0..self.raw.len() {
            let board = self.raw[i].0;
            if let Some(block) = self.raw[i].1.take() {
                self.insert_raw(board, &block)?;
            }
        }
        Ok(())
    }

    pub(super) fn flush_raw_of(&mut self, board: BoardId) -> Result<(), StoreError> {
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

    pub(super) fn insert_raw(&self, board: BoardId, block: &RawBlock) -> Result<(), StoreError> {
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

    pub(super) fn state(&mut self, board: BoardId) -> usize {
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

    pub(super) fn open_game(&mut self, board: BoardId) -> Result<Option<GameId>, StoreError> {
        let i = self.state(board);
        if let Some(open) = self.boards[i].open {
            return Ok(open);
        }
        let open = open_game_id(self.conn, board)?;
        self.boards[i].open = Some(open);
        Ok(open)
    }

    pub(super) fn board_kind(&mut self, board: BoardId) -> Result<Kind, StoreError> {
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

    pub(super) fn touch(&mut self, game: GameId) {
        if !self.touched.contains(&game) {
            self.touched.push(game);
        }
    }

    pub(super) fn event(&mut self, board: BoardId, event: &TrackerEvent) -> Result<(), StoreError> {
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
            if !self.closed.iter().any(|c| c.board == board)
                && let Some(closed) = closing::latest_closed(self.conn, board)?
            {
                self.closed.push(closed);
            }
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
                    .prepare_cached(&format!(
                        "UPDATE games SET result = ?1 WHERE id = ?2 AND {NO_ARBITER_RESULT}"
                    ))?
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
                // The arbiter's result stands; the board's end still closes the game.
                self.conn
                    .prepare_cached(&format!(
                        "UPDATE games SET result = CASE WHEN {NO_ARBITER_RESULT} THEN ?1 \
                         ELSE result END, termination = CASE WHEN {NO_ARBITER_RESULT} THEN ?2 \
                         ELSE termination END, ended_at_ms = ?3 WHERE id = ?4"
                    ))?
                    .execute((outcome.as_pgn(), termination, sql_ms(*at_ms)?, game))?;
                let i = self.state(board);
                self.boards[i].open = Some(None);
                Ok(())
            }
        }
    }

    pub(super) fn start_game(
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
                     round, board_no, start_position, time_control) \
                     SELECT b.id, ?2, ?3, ?4, t.event, t.site, CAST(t.round AS TEXT), b.number, ?5, \
                     t.time_control \
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

    pub(super) fn insert_move(
        &mut self,
        game: GameId,
        mv: &RecordedMove,
    ) -> Result<(), StoreError> {
        let stmt = match &mut self.moves {
            Some(stmt) => stmt,
            None => self
                .moves
                .insert(self.conn.prepare_cached(insert_moves_sql_of(1))?),
        };
        execute_move(stmt, game, mv)
    }

    /// Inserts the moves `writes` begins with, if it begins with at least [`MOVE_ROWS`] moves
    /// of one board whose game is open: [`MOVE_ROWS`] rows a statement, the rest in halves
    /// of it, exactly the rows (and ids, in order) that [`Batch::apply`] would insert one by
    /// one. How many writes it took (0: none, for `apply`).
    pub(super) fn moves_run<'w>(&mut self, writes: &'w [Write]) -> Result<usize, StoreError> {
        fn move_of(w: &Write) -> Option<(BoardId, &RecordedMove)> {
            match w {
                Write::Event {
                    board,
                    event: TrackerEvent::Move(mv),
                } => Some((*board, mv)),
                _ => None,
            }
        }
        let Some((board, _)) = writes.first().and_then(move_of) else {
            return Ok(0);
        };
        let of_board = |w: &'w Write| move_of(w).filter(|(b, _)| *b == board).map(|(_, mv)| mv);
        // Counted first: a shorter run (the daemon's batches) costs no list.
        if writes
            .iter()
            .map_while(of_board)
            .nth(MOVE_ROWS - 1)
            .is_none()
        {
            return Ok(0);
        }
        let Some(game) = self.open_game(board)? else {
            return Ok(0);
        };
        let run: Vec<&RecordedMove> = writes.iter().map_while(of_board).collect();
        self.touch(game);
        // [`MOVE_ROWS`] rows a statement, then what is left by halves: each shape is prepared
        // once for the run (its rows all bound again at each use), and the last row goes
        // through the held one-row insert.
        let mut rest = &run[..];
        let mut rows = MOVE_ROWS;
        while rows > 1 {
            if rest.len() >= rows {
                let mut stmt = self.conn.prepare_cached(insert_moves_sql_of(rows))?;
                while let Some((chunk, tail)) = rest.split_at_checked(rows) {
                    if !insert_move_rows(&mut stmt, game, chunk)? {
                        // A constraint refused a row (the statement is undone whole): one by
                        // one, for the error the first bad row gives.
                        drop(stmt);
                        for mv in chunk {
                            self.insert_move(game, mv)?;
                        }
                        stmt = self.conn.prepare_cached(insert_moves_sql_of(rows))?;
                    }
                    rest = tail;
                }
            }
            rows /= 2;
        }
        for mv in rest {
            self.insert_move(game, mv)?;
        }
        Ok(run.len())
    }

    pub(super) fn insert_event(
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
pub(super) fn insert_move_row(
    conn: &Connection,
    game: GameId,
    mv: &RecordedMove,
) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(insert_moves_sql_of(1))?;
    execute_move(&mut stmt, game, mv)
}

/// How many moves [`Batch::moves_run`] inserts a statement: a statement's own cost (cursors
/// opened and closed, its end) shared by that many rows.
const MOVE_ROWS: usize = 16;

/// The insert of `rows` move rows in one statement, each bound by [`bind_move`].
fn insert_moves_sql(rows: usize) -> String {
    format!(
        "INSERT INTO moves (game_id, ply, notation, uci, position, at_ms, clock_white_ms, \
         clock_black_ms, time_trouble) VALUES {}",
        vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?)"; rows].join(", ")
    )
}

/// The values a move row binds ([`bind_move`]).
const MOVE_COLUMNS: usize = 9;

/// The inserts of 1 row, 2, 4 and so on up to [`MOVE_ROWS`], by `trailing_zeros`.
static INSERT_MOVES: LazyLock<Vec<String>> = LazyLock::new(|| {
    (0..=MOVE_ROWS.trailing_zeros())
        .map(|k| insert_moves_sql(1 << k))
        .collect()
});

/// The insert of `rows` move rows, `rows` a power of two up to [`MOVE_ROWS`].
fn insert_moves_sql_of(rows: usize) -> &'static str {
    debug_assert!(rows.is_power_of_two() && rows <= MOVE_ROWS);
    &INSERT_MOVES[rows.trailing_zeros() as usize]
}

/// Inserts `moves` of `game` through `stmt`, an insert of as many rows: whether they went in
/// (`false`: a constraint refused a row, and the statement was undone whole; the transaction
/// goes on).
fn insert_move_rows(
    stmt: &mut rusqlite::Statement<'_>,
    game: GameId,
    moves: &[&RecordedMove],
) -> Result<bool, StoreError> {
    for (row, mv) in moves.iter().enumerate() {
        bind_move(stmt, row, game, mv)?;
    }
    match stmt.raw_execute() {
        Ok(_) => Ok(true),
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == ErrorCode::ConstraintViolation => {
            Ok(false)
        }
        // Anything else may have ended the transaction: no row is written outside it.
        Err(e) => Err(e.into()),
    }
}

/// Binds `mv` of `game` as row `row` (from 0) of a move insert ([`insert_moves_sql`]).
fn bind_move(
    stmt: &mut rusqlite::Statement<'_>,
    row: usize,
    game: GameId,
    mv: &RecordedMove,
) -> Result<(), StoreError> {
    let (at_ms, white_ms, black_ms) = (
        sql_ms(mv.at_ms)?,
        sql_opt_ms(mv.clock_white_ms)?,
        sql_opt_ms(mv.clock_black_ms)?,
    );
    // Each value bound as its own type (no `dyn ToSql` a value: a bind is most of a row's
    // cost outside SQLite).
    let base = row * MOVE_COLUMNS;
    stmt.raw_bind_parameter(base + 1, game)?;
    stmt.raw_bind_parameter(base + 2, mv.ply)?;
    stmt.raw_bind_parameter(base + 3, mv.notation.as_str())?;
    stmt.raw_bind_parameter(base + 4, mv.uci.as_deref())?;
    stmt.raw_bind_parameter(base + 5, mv.position.as_str())?;
    stmt.raw_bind_parameter(base + 6, at_ms)?;
    stmt.raw_bind_parameter(base + 7, white_ms)?;
    stmt.raw_bind_parameter(base + 8, black_ms)?;
    stmt.raw_bind_parameter(base + 9, mv.time_trouble)?;
    Ok(())
}

/// [`insert_move_row`] through the prepared insert `stmt`.
fn execute_move(
    stmt: &mut rusqlite::Statement<'_>,
    game: GameId,
    mv: &RecordedMove,
) -> Result<(), StoreError> {
    bind_move(stmt, 0, game, mv)?;
    match stmt.raw_execute() {
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
pub(super) fn event_row(event: &TrackerEvent) -> Result<(Millis, Option<u32>, String), StoreError> {
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
            detail_phrase,
            article,
            ruling,
            ruling_phrase,
            ..
        } => {
            let mut v = json!({
                "id": id,
                "since_ms": since_ms,
                "player": player.map(|p| p.as_str()),
                "detail": detail,
                "article": article,
                "ruling": ruling,
            });
            with_phrases(
                &mut v,
                [
                    ("detail_phrase", detail_phrase),
                    ("ruling_phrase", ruling_phrase),
                ],
            );
            (*at_ms, *ply, v)
        }
        TrackerEvent::Resolved {
            at_ms,
            id,
            ply,
            how,
            how_phrase,
        } => {
            let mut v = json!({ "id": id, "how": how });
            with_phrases(&mut v, [("how_phrase", how_phrase)]);
            (*at_ms, *ply, v)
        }
        TrackerEvent::FlagFall {
            at_ms,
            after_ply,
            side,
            proposed,
            termination,
            article,
            both,
            note,
            note_phrase,
        } => {
            let mut v = json!({
                "side": side.as_str(),
                "proposed": proposed.as_pgn(),
                "termination": termination,
                "article": article,
                "both": both,
                "note": note,
            });
            with_phrases(&mut v, [("note_phrase", note_phrase)]);
            (*at_ms, after_ply.saturating_add(1), v)
        }
        TrackerEvent::Claimable {
            at_ms,
            ply,
            claim,
            claim_phrase,
            article,
        } => {
            let mut v = json!({ "claim": claim, "article": article });
            with_phrases(&mut v, [("claim_phrase", claim_phrase)]);
            (*at_ms, *ply, v)
        }
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

impl Store {
    /// Applies writes in one transaction, in order; returns the games touched, in first-touch order.
    ///
    /// `GameStarted` closes the board's open game (sets `ended_at_ms`, the result stays) and opens a
    /// new one; `Move` adds a live move to the open game; `Revision` retracts the live move at
    /// `new.ply` and inserts `new`; `Takeback` retracts live moves after `to_ply`; `ResultGesture`
    /// sets the proposed result (the arbiter confirms later); `GameEnded` sets result, termination
    /// and `ended_at_ms` (neither changes a result the arbiter set: [`closing`]). Every event but `Move` is also kept in `events`. Without an open game an
    /// event (a `Move` too, as kind `move`) is kept in `events` with no game and changes nothing else.
    pub fn write_batch(&mut self, writes: &[Write]) -> Result<Vec<GameId>, StoreError> {
        self.write_batch_dated(writes, None)
    }

    /// [`Store::write_batch_report`], the games touched only.
    pub fn write_batch_dated(
        &mut self,
        writes: &[Write],
        date: Option<&str>,
    ) -> Result<Vec<GameId>, StoreError> {
        Ok(self.write_batch_report(writes, date)?.touched)
    }

    /// [`Store::write_batch`], also dating (`YYYY.MM.DD`) every touched game without a date, in
    /// the same transaction: a refused batch (a full disk) leaves nothing behind, so sending it
    /// again is clean. The report names the closed games boards wrote to ([`WriteReport`]).
    pub fn write_batch_report(
        &mut self,
        writes: &[Write],
        date: Option<&str>,
    ) -> Result<WriteReport, StoreError> {
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

    pub(super) fn try_write_batch(
        &mut self,
        writes: &[Write],
        date: Option<&str>,
    ) -> Result<WriteReport, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut batch = Batch::new(&tx);
        let mut rest = writes;
        while let Some(write) = rest.first() {
            // A run of moves of one board's open game (replay, a board catching up) is
            // inserted several rows a statement; anything else one write at a time.
            let taken = batch.moves_run(rest)?;
            if taken == 0 {
                batch.apply(write)?;
            }
            rest = &rest[taken.max(1)..];
        }
        let (touched, closed) = batch.finish()?;
        if let Some(date) = date {
            let mut stmt =
                tx.prepare_cached("UPDATE games SET date = ?1 WHERE id = ?2 AND date IS NULL")?;
            for &game in &touched {
                stmt.execute((date, game))?;
            }
        }
        tx.commit()?;
        Ok(WriteReport { touched, closed })
    }
}

/// The phrases of an event's texts beside their English in its stored detail `v`, for the
/// other languages (kept only when there are some).
fn with_phrases<const N: usize>(
    v: &mut serde_json::Value,
    phrases: [(&str, &Option<crate::phrase::Phrase>); N],
) {
    if let serde_json::Value::Object(o) = v {
        for (name, phrase) in phrases {
            if let Some(p) = phrase.as_ref().and_then(|p| serde_json::to_value(p).ok()) {
                o.insert(name.to_owned(), p);
            }
        }
    }
}
