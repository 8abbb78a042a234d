//! Reading the record back: games with their header, live moves and every event, the open game of
//! a board, a round's games, a board's raw stream. Flow: `GAME_SELECT` rows become
//! [`GameRecord`] headers ([`game_header`]), completed with their moves and events.

use std::sync::LazyLock;

use super::*;

/// The columns [`move_row`] reads, in its order.
pub(super) const MOVE_COLUMNS: &str =
    "ply, notation, uci, position, at_ms, clock_white_ms, clock_black_ms, time_trouble";

/// A move from a row whose columns from `first` on are [`MOVE_COLUMNS`].
pub(super) fn move_row(r: &Row, first: usize) -> rusqlite::Result<RecordedMove> {
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
pub(super) fn live_moves(conn: &Connection, game: GameId) -> Result<Vec<RecordedMove>, StoreError> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {MOVE_COLUMNS} FROM moves \
             WHERE game_id = ?1 AND retracted_by IS NULL ORDER BY ply"
        ))?
        .query_map([game], |r| move_row(r, 0))?
        .collect::<Result<_, _>>()?)
}

/// Every event of `game`, by id.
pub(super) fn game_events(conn: &Connection, game: GameId) -> Result<Vec<EventRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, at_ms, kind, ply, detail FROM events WHERE game_id = ?1 ORDER BY id",
    )?;
    let mut rows = stmt.query([game])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let detail = r.get_ref(4)?.as_str().map_err(rusqlite::Error::from)?;
        let (id, at_ms, kind): (i64, Millis, String) = (r.get(0)?, get_ms(r, 1)?, r.get(2)?);
        let detail = serde_json::from_str(detail)?;
        out.push(EventRecord {
            what: Recorded::read(game, id, at_ms, &kind, &detail),
            id,
            at_ms,
            kind,
            ply: r.get(3)?,
            detail,
        });
    }
    Ok(out)
}

pub(super) const GAME_SELECT: &str = "SELECT g.id, g.board_id, b.name, g.kind, g.orientation, g.date, \
     g.started_at_ms, g.ended_at_ms, g.white, g.black, g.result, g.termination, \
     g.event, g.site, g.round, g.board_no, \
     p.board, p.white, p.black, p.white_fide, p.black_fide, p.white_elo, p.black_elo, \
     p.white_title, p.black_title, p.white_fed, p.black_fed, p.white_start, p.black_start, \
     g.start_position, g.time_control \
     FROM games g JOIN boards b ON b.id = g.board_id \
     LEFT JOIN pairings p ON p.round = CAST(g.round AS INTEGER) AND p.board = g.board_no";

/// A game's header row; the outer error is SQLite's, the inner one a value we cannot read.
pub(super) fn game_header(r: &Row<'_>) -> rusqlite::Result<Result<GameRecord, StoreError>> {
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
        start_position: r.get(29)?,
        time_control: r.get(30)?,
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

pub(super) fn parse_kind(s: &str) -> Result<Kind, StoreError> {
    Kind::from_str_opt(s).ok_or_else(|| StoreError::Corrupt(format!("game kind {s:?}")))
}

pub(super) fn get_ms(r: &Row<'_>, i: usize) -> rusqlite::Result<Millis> {
    let v: i64 = r.get(i)?;
    Millis::try_from(v).map_err(|_| FromSqlError::OutOfRange(v).into_column_error(i))
}

pub(super) fn get_opt_ms(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<Millis>> {
    match r.get::<_, Option<i64>>(i)? {
        None => Ok(None),
        Some(v) => Millis::try_from(v)
            .map(Some)
            .map_err(|_| FromSqlError::OutOfRange(v).into_column_error(i)),
    }
}

pub(super) trait IntoColumnError {
    fn into_column_error(self, i: usize) -> rusqlite::Error;
}

impl IntoColumnError for FromSqlError {
    fn into_column_error(self, i: usize) -> rusqlite::Error {
        rusqlite::Error::FromSqlConversionFailure(i, Type::Integer, Box::new(self))
    }
}

pub(super) fn open_game_id(
    conn: &Connection,
    board: BoardId,
) -> Result<Option<GameId>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT id FROM games WHERE board_id = ?1 AND ended_at_ms IS NULL")?
        .query_row([board], |r| r.get(0))
        .optional()?)
}

impl Store {
    /// The game still open on `board` (to resume after a restart).
    pub fn open_game(&self, board: BoardId) -> Result<Option<GameRecord>, StoreError> {
        match open_game_id(&self.conn, board)? {
            Some(id) => self.game(id),
            None => Ok(None),
        }
    }

    /// One game with its live moves and events.
    pub fn game(&self, id: GameId) -> Result<Option<GameRecord>, StoreError> {
        self.game_header(id)?.map(|h| self.complete(h)).transpose()
    }

    /// Every game, by id.
    pub fn games(&self) -> Result<Vec<GameRecord>, StoreError> {
        self.all_headers()?
            .into_iter()
            .map(|h| self.complete(h))
            .collect()
    }

    /// Game `id`'s header, without its moves and events.
    pub(super) fn game_header(&self, id: GameId) -> Result<Option<GameRecord>, StoreError> {
        static BY_ID: LazyLock<String> = LazyLock::new(|| format!("{GAME_SELECT} WHERE g.id = ?1"));
        self.conn
            .prepare_cached(&BY_ID)?
            .query_row([id], game_header)
            .optional()?
            .transpose()
    }

    /// Every game's header, by id, without moves and events.
    pub(super) fn all_headers(&self) -> Result<Vec<GameRecord>, StoreError> {
        self.conn
            .prepare_cached(&format!("{GAME_SELECT} ORDER BY g.id"))?
            .query_map([], game_header)?
            .map(|h| h?)
            .collect()
    }

    /// The games played in `round`, by board number (unnumbered last, by board name), then id.
    pub fn round_games(&self, round: u32) -> Result<Vec<GameRecord>, StoreError> {
        self.round_headers(round)?
            .into_iter()
            .map(|h| self.complete(h))
            .collect()
    }

    /// The boards (number, name) whose game of `round` is still in play: not ended, no result.
    pub fn round_in_play(&self, round: u32) -> Result<Vec<(Option<u32>, String)>, StoreError> {
        Ok(self
            .round_headers(round)?
            .into_iter()
            .filter(|g| g.ended_at_ms.is_none() && g.result == "*")
            .map(|g| (g.board_no, g.board_name))
            .collect())
    }

    /// The headers of the games of `round`, in [`Store::round_games`]'s order, without their
    /// moves and events.
    pub(super) fn round_headers(&self, round: u32) -> Result<Vec<GameRecord>, StoreError> {
        self.conn
            .prepare_cached(&format!(
                "{GAME_SELECT} WHERE g.round = CAST(?1 AS TEXT) \
                 ORDER BY g.board_no IS NULL, g.board_no, b.name, g.id"
            ))?
            .query_map([round], game_header)?
            .map(|h| h?)
            .collect()
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

    /// A game as a live page shows it: its header and live moves, without its history
    /// (`events` left empty).
    pub fn game_shown(&self, id: GameId) -> Result<Option<GameRecord>, StoreError> {
        match self.game_header(id)? {
            Some(mut g) => {
                g.moves = live_moves(&self.conn, g.id)?;
                Ok(Some(g))
            }
            None => Ok(None),
        }
    }

    /// How many moves have ever been retracted: a number that only grows (a move, once
    /// retracted, stays so), read from its index alone.
    pub fn retractions_count(&self) -> Result<u64, StoreError> {
        let n: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM moves WHERE retracted_by IS NOT NULL")?
            .query_row([], |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// `kept` (a game as this returned it before, or nothing) brought up to date with a read of
    /// only what changed: the header again, and the live moves after those `kept` holds, when
    /// those are still the game's first live moves. `retracted` is [`Store::retractions_count`],
    /// read in the same read transaction as this (a caller outside one gets one per call).
    ///
    /// Why it holds: a move row is never rewritten nor deleted, and a retracted one never comes
    /// back (the schema refuses all three), so a takeback or a correction retracts rows and
    /// writes new ones. When no move was retracted since `kept` was read, its moves (plies 1 to
    /// n, no gap) are all still live, and no other live move can have a ply up to n: only the
    /// moves after n are new. Else the live moves' row ids (in ply order) tell whether `kept`'s
    /// are still the first ones; if not, the live moves are read whole. `None`: no such game.
    pub fn game_shown_since(
        &self,
        id: GameId,
        kept: Option<ShownGame>,
        retracted: u64,
    ) -> Result<Option<ShownGame>, StoreError> {
        // One snapshot for the header, the ids and the moves: the caller's transaction, or a
        // savepoint of its own.
        if !self.conn.is_autocommit() {
            return self.read_shown_since(id, kept, retracted);
        }
        self.conn.execute_batch("SAVEPOINT shown_since")?;
        let read = self.read_shown_since(id, kept, retracted);
        let released = self.conn.execute_batch("RELEASE shown_since");
        let read = read?;
        released?;
        Ok(read)
    }

    fn read_shown_since(
        &self,
        id: GameId,
        kept: Option<ShownGame>,
        retracted: u64,
    ) -> Result<Option<ShownGame>, StoreError> {
        let Some(mut game) = self.game_header(id)? else {
            return Ok(None);
        };
        let kept = kept.filter(|k| {
            k.game.id == id
                && k.game
                    .moves
                    .iter()
                    .enumerate()
                    .all(|(i, m)| usize::try_from(m.ply).is_ok_and(|p| p == i + 1))
        });
        let (mut moves, mut ids): (Vec<RecordedMove>, Vec<i64>) = match kept {
            // Nothing retracted since: the kept moves stand.
            Some(k) if k.retracted == retracted => (k.game.moves, k.ids),
            kept => {
                // The live moves' row ids by ply.
                let ids: Vec<i64> = self
                    .conn
                    .prepare_cached(
                        "SELECT id FROM moves WHERE game_id = ?1 AND retracted_by IS NULL \
                         ORDER BY ply",
                    )?
                    .query_map([id], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                match kept.filter(|k| ids.starts_with(&k.ids)) {
                    Some(k) => (k.game.moves, k.ids),
                    None => (Vec::new(), Vec::new()),
                }
            }
        };
        let carried = ids.len();
        static AFTER: LazyLock<String> = LazyLock::new(|| {
            format!(
                "SELECT id, {MOVE_COLUMNS} FROM moves \
                 WHERE game_id = ?1 AND retracted_by IS NULL AND ply > ?2 ORDER BY ply"
            )
        });
        let mut stmt = self.conn.prepare_cached(&AFTER)?;
        let after = moves.last().map_or(0, |m| i64::from(m.ply));
        let mut rows = stmt.query((id, after))?;
        while let Some(r) = rows.next()? {
            ids.push(r.get(0)?);
            moves.push(move_row(r, 1)?);
        }
        game.moves = moves;
        Ok(Some(ShownGame {
            game,
            ids,
            retracted,
            carried,
        }))
    }

    pub(super) fn complete(&self, mut game: GameRecord) -> Result<GameRecord, StoreError> {
        game.moves = live_moves(&self.conn, game.id)?;
        game.events = game_events(&self.conn, game.id)?;
        Ok(game)
    }
}
