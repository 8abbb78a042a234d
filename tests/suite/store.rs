//! The store and the exports on real SQLite files, fed with real games (the PGN corpus) and real
//! board bytes (the arnsholt captures).

use std::{
    fs,
    ops::ControlFlow,
    path::{Path, PathBuf},
};

use crate::lichess_push::round_pgn;
use boardscribe::{
    broadcast::folder::FolderRelay,
    device::Direction,
    export::{self, ExportError, Format, livechess::FolderRound},
    game::{Kind, Outcome},
    pairings,
    sensor::Orientation,
    store::{
        BoardId, GameId, GameRecord, RawBuffer, RawChunk, RoundInfo, Store, StoreError, Write,
        schema,
    },
    tracker::event::{RecordedMove, TrackerEvent},
};
use pgn_reader::{RawComment, RawTag, Reader, SanPlus, Visitor};
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position, fen::Fen, san::SanPlus as Sp};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");
const CAPTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/captures/dgt-arnsholt"
);

/// A corpus game: its result and moves, played out with shakmaty.
struct CorpusGame {
    result: String,
    moves: Vec<Move>,
}

fn corpus(file: &str) -> Vec<CorpusGame> {
    let text = fs::read_to_string(Path::new(CORPUS).join(file)).unwrap();
    let games: Vec<CorpusGame> = boardscribe::emulator::games_from_pgn(&text)
        .unwrap()
        .into_iter()
        .map(|g| CorpusGame {
            result: g.tag("Result").unwrap_or("*").to_string(),
            moves: g.moves,
        })
        .collect();
    assert!(!games.is_empty(), "{file} has games");
    games
}

/// The moves of a game as the tracker records them: SAN, UCI, FEN after, both clocks.
///
/// Clocks: 90 minutes each, the mover's clock loses 7 to 180 s per move (whole seconds, so PGN's
/// `%clk` can carry them exactly), and the first ply has no clock yet.
fn recorded(moves: &[Move], t0: u64) -> Vec<RecordedMove> {
    let mut pos = Chess::default();
    let mut clocks = [5_400_000u64, 5_400_000u64];
    let mut at = t0;
    let mut out = Vec::new();
    for (i, m) in moves.iter().enumerate() {
        let ply = i as u32 + 1;
        let mover = i % 2;
        let spent = 1000 * (7 + (u64::from(ply) * 37) % 174);
        clocks[mover] = clocks[mover].saturating_sub(spent);
        at += spent;
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        let san = Sp::from_move_and_play_unchecked(&mut pos, *m).to_string();
        out.push(RecordedMove {
            ply,
            notation: san,
            uci: Some(uci),
            position: Fen::from_position(&pos, EnPassantMode::Legal).to_string(),
            at_ms: at,
            clock_white_ms: (ply > 1).then_some(clocks[0]),
            clock_black_ms: (ply > 1).then_some(clocks[1]),
            // Some moves flagged, so that the flag's round trip is shown.
            time_trouble: ply.is_multiple_of(5),
        });
    }
    out
}

fn outcome(result: &str) -> Option<Outcome> {
    match result {
        "1-0" => Some(Outcome::WhiteWins),
        "0-1" => Some(Outcome::BlackWins),
        "1/2-1/2" => Some(Outcome::Draw),
        _ => None,
    }
}

fn ev(board: BoardId, event: TrackerEvent) -> Write {
    Write::Event { board, event }
}

fn start(board: BoardId, at_ms: u64) -> Write {
    ev(
        board,
        TrackerEvent::GameStarted {
            at_ms,
            orientation: Orientation::Normal,
            start: None,
        },
    )
}

/// Writes a game move by move (one batch per move, as a live board does) and ends it with its result.
fn write_game(store: &mut Store, board: BoardId, moves: &[RecordedMove], result: &str) -> GameId {
    let t0 = moves.first().map_or(0, |m| m.at_ms - 1);
    // The last touched: a game still open on the board is closed first.
    let game = *store
        .write_batch(&[start(board, t0)])
        .unwrap()
        .last()
        .unwrap();
    for m in moves {
        let touched = store
            .write_batch(&[ev(board, TrackerEvent::Move(m.clone()))])
            .unwrap();
        assert_eq!(touched, vec![game]);
    }
    if let Some(outcome) = outcome(result) {
        let end = TrackerEvent::GameEnded {
            at_ms: moves.last().map_or(t0, |m| m.at_ms) + 1,
            after_ply: moves.len() as u32,
            outcome,
            termination: "normal".into(),
        };
        store.write_batch(&[ev(board, end)]).unwrap();
    }
    game
}

fn db(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("boardscribe.db")
}

#[test]
fn migrations_apply_to_an_empty_file_and_reopening_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    fs::File::create(&path).unwrap();
    let board = {
        let mut store = Store::open(&path).unwrap();
        store.board("board 1", Kind::Chess).unwrap()
    };
    let schema_sql = |path: &Path| -> (i64, String, Vec<String>) {
        let conn = rusqlite::Connection::open(path).unwrap();
        let version = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        let mode = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        let mut stmt = conn
            .prepare("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
            .unwrap();
        let sql = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        (version, mode, sql)
    };
    let first = schema_sql(&path);
    assert_eq!(first.0, schema::MIGRATIONS.len() as i64);
    assert_eq!(first.1, "wal");
    for table in ["boards", "games", "moves", "raw_chunks", "events"] {
        assert!(
            first
                .2
                .iter()
                .any(|s| s.starts_with(&format!("CREATE TABLE {table} "))),
            "{table}"
        );
    }

    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.board("board 1", Kind::Chess).unwrap(), board);
    assert_ne!(store.board("board 2", Kind::Chess).unwrap(), board);
    store.integrity_check().unwrap();
    drop(store);
    assert_eq!(schema_sql(&path), first);

    // A database from a newer program is refused, not guessed at.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", schema::MIGRATIONS.len() as i64 + 1)
        .unwrap();
    drop(conn);
    assert!(matches!(
        Store::open(&path),
        Err(StoreError::NewerSchema { found, known }) if found == known + 1
    ));
}

#[test]
fn corpus_games_read_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let games = corpus("WorldChamp1886.pgn");
    let mut expected = Vec::new();
    {
        let mut store = Store::open(&path).unwrap();
        let board = store.board("table 3", Kind::Chess).unwrap();
        let mut t = 1_700_000_000_000;
        for g in &games {
            let moves = recorded(&g.moves, t);
            let id = write_game(&mut store, board, &moves, &g.result);
            t = moves.last().map_or(t, |m| m.at_ms) + 60_000;
            expected.push((id, moves, g.result.clone()));
        }
    }
    let store = Store::open(&path).unwrap();
    let all = store.games().unwrap();
    assert_eq!(all.len(), games.len());
    for ((id, moves, result), got) in expected.iter().zip(&all) {
        assert_eq!(got.id, *id);
        assert_eq!(&got.moves, moves);
        assert_eq!(got.kind, Kind::Chess);
        assert_eq!(got.board_name, "table 3");
        assert_eq!(got.started_at_ms, moves[0].at_ms - 1);
        assert_eq!(&got.result, result);
        assert_eq!(got.white, None);
        let decisive = outcome(result).is_some();
        assert_eq!(got.termination.as_deref(), decisive.then_some("normal"));
        // Every game ends, by its result or by the next game starting.
        assert!(got.ended_at_ms.is_some());
        let kinds: Vec<_> = got.events.iter().map(|e| e.kind.as_str()).collect();
        let want: &[&str] = if decisive {
            &["game_started", "game_ended"]
        } else {
            &["game_started"]
        };
        assert_eq!(kinds, want);
        assert_eq!(store.game(*id).unwrap().as_ref(), Some(got));
    }
    assert_eq!(store.game(GameId(10_000)).unwrap(), None);
    store.integrity_check().unwrap();
}

#[test]
fn revisions_and_takebacks_retract_and_keep_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let game = &corpus("Capablanca.pgn")[0];
    let played = recorded(&game.moves, 0);
    let mut store = Store::open(&path).unwrap();
    let board = store.board("b", Kind::Chess).unwrap();
    let id = store.write_batch(&[start(board, 0)]).unwrap()[0];
    let mut batch: Vec<Write> = played[..10]
        .iter()
        .map(|m| ev(board, TrackerEvent::Move(m.clone())))
        .collect();

    // Ply 10 slides to another legal move of the same position.
    let mut pos = Chess::default();
    for m in &game.moves[..9] {
        pos.play_unchecked(*m);
    }
    let other = pos
        .legal_moves()
        .into_iter()
        .find(|m| *m != game.moves[9])
        .unwrap();
    let mut slid = recorded(&[&game.moves[..9], &[other]].concat(), 0)[9].clone();
    slid.at_ms = played[9].at_ms + 400;
    batch.push(ev(
        board,
        TrackerEvent::Revision {
            at_ms: slid.at_ms,
            old: played[9].clone(),
            new: slid.clone(),
        },
    ));
    assert_eq!(store.write_batch(&batch).unwrap(), vec![id]);
    let g = store.game(id).unwrap().unwrap();
    assert_eq!(g.moves[..9], played[..9]);
    assert_eq!(g.moves[9], slid);

    // Back to ply 7, then the game continues as played.
    let takeback = TrackerEvent::Takeback {
        at_ms: slid.at_ms + 5000,
        from_ply: 10,
        to_ply: 7,
    };
    store.write_batch(&[ev(board, takeback)]).unwrap();
    assert_eq!(store.open_game(board).unwrap().unwrap().moves, played[..7]);
    let rest: Vec<Write> = played[7..20]
        .iter()
        .map(|m| ev(board, TrackerEvent::Move(m.clone())))
        .collect();
    store.write_batch(&rest).unwrap();

    let g = store.game(id).unwrap().unwrap();
    assert_eq!(g.moves, played[..20]);
    let kinds: Vec<_> = g.events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["game_started", "revised_move", "takeback"]);
    let (rev, tb) = (&g.events[1], &g.events[2]);
    assert_eq!(rev.ply, Some(11));
    assert_eq!(
        serde_json::from_value::<RecordedMove>(rev.detail["old"].clone()).unwrap(),
        played[9]
    );
    assert_eq!(
        serde_json::from_value::<RecordedMove>(rev.detail["new"].clone()).unwrap(),
        slid
    );
    assert_eq!(
        (tb.ply, &tb.detail["from_ply"], &tb.detail["to_ply"]),
        (Some(11), &10.into(), &7.into())
    );
    drop(store);

    // The retracted rows are still there, each pointing at the event that retracted it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut stmt = conn
        .prepare("SELECT ply, notation, retracted_by FROM moves WHERE retracted_by IS NOT NULL ORDER BY id")
        .unwrap();
    let retracted: Vec<(u32, String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want = vec![
        (8, played[7].notation.clone(), tb.id),
        (9, played[8].notation.clone(), tb.id),
        (10, played[9].notation.clone(), rev.id),
        (10, slid.notation.clone(), tb.id),
    ];
    assert_eq!(retracted, want);
    assert!(conn.execute("DELETE FROM moves WHERE ply = 1", []).is_err());
}

#[test]
fn the_unfinished_game_is_there_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let games = corpus("London1851.pgn");
    let (finished, unfinished) = (recorded(&games[0].moves, 0), recorded(&games[1].moves, 0));
    let half = unfinished.len() / 2;
    let (b1, b2, open_id) = {
        let mut store = Store::open(&path).unwrap();
        let b1 = store.board("b1", Kind::Chess).unwrap();
        let b2 = store.board("b2", Kind::Chess).unwrap();
        write_game(&mut store, b1, &finished, "1-0");
        let id = write_game(&mut store, b2, &unfinished[..half], "*");
        store.set_game_date(id, "1851.05.27").unwrap();
        (b1, b2, id)
    };
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.open_game(b1).unwrap(), None);
    let open = store.open_game(b2).unwrap().unwrap();
    assert_eq!(open.id, open_id);
    assert_eq!(open.moves, unfinished[..half]);
    assert_eq!((open.result.as_str(), open.ended_at_ms), ("*", None));
    assert_eq!(open.date.as_deref(), Some("1851.05.27"));

    // Resume where it stopped, then a new game on the board closes it, result untouched.
    let more: Vec<Write> = unfinished[half..]
        .iter()
        .map(|m| ev(b2, TrackerEvent::Move(m.clone())))
        .collect();
    store.write_batch(&more).unwrap();
    let new_start = unfinished.last().unwrap().at_ms + 10;
    let touched = store.write_batch(&[start(b2, new_start)]).unwrap();
    assert_eq!(touched.len(), 2);
    assert_eq!(touched[0], open_id);
    let closed = store.game(open_id).unwrap().unwrap();
    assert_eq!(closed.moves, unfinished);
    assert_eq!(
        (closed.result.as_str(), closed.ended_at_ms),
        ("*", Some(new_start))
    );
    assert_eq!(store.open_game(b2).unwrap().unwrap().id, touched[1]);
}

#[test]
fn events_without_an_open_game_are_kept_without_one() {
    let mut store = Store::open_in_memory().unwrap();
    let board = store.board("b", Kind::Chess).unwrap();
    let game = &corpus("tatamast22.pgn")[0];
    let m = recorded(&game.moves, 0)[0].clone();
    let tb = TrackerEvent::Takeback {
        at_ms: 3,
        from_ply: 1,
        to_ply: 0,
    };
    assert_eq!(
        store
            .write_batch(&[ev(board, TrackerEvent::Move(m)), ev(board, tb)])
            .unwrap(),
        vec![]
    );
    assert!(store.games().unwrap().is_empty());
    assert_eq!(store.open_game(board).unwrap(), None);
}

/// A capture's lines as reads, each line split into reads of 1 to 4 bytes at the line's time.
fn capture_reads(name: &str) -> Vec<RawChunk> {
    let text = fs::read_to_string(Path::new(CAPTURES).join(name)).unwrap();
    let mut out = Vec::new();
    for (n, line) in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .enumerate()
    {
        let mut parts = line.split_whitespace();
        let secs: f64 = parts.next().unwrap().parse().unwrap();
        let dir = match parts.next().unwrap() {
            "<" => Direction::FromBoard,
            ">" => Direction::ToBoard,
            d => panic!("direction {d}"),
        };
        let bytes: Vec<u8> = parts.map(|h| u8::from_str_radix(h, 16).unwrap()).collect();
        for piece in bytes.chunks(1 + n % 4) {
            out.push(RawChunk {
                t_ms: (secs * 1000.0).round() as u64,
                dir,
                bytes: piece.to_vec(),
            });
        }
    }
    out
}

#[test]
fn raw_reads_keep_every_timestamp_and_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let (one, two) = (capture_reads("2.capture"), capture_reads("johan.capture"));
    assert!(one.len() > 1000 && two.len() > 1000);
    {
        let mut store = Store::open(&path).unwrap();
        let b1 = store.board("b1", Kind::Chess).unwrap();
        let b2 = store.board("b2", Kind::Chess).unwrap();
        // Board 1: single reads, interleaved with board 2's, coalesced by write_batch.
        // Board 2: coalesced by the pipeline's RawBuffer, flushed every 100 reads.
        let mut buf = RawBuffer::new();
        let mut rest = two.iter();
        for reads in one.chunks(300) {
            let mut blocks = Vec::new();
            for c in rest.by_ref().take(300) {
                buf.push(c.t_ms, c.dir, &c.bytes);
                if buf.reads() == 100 {
                    blocks.push(buf.take().unwrap());
                }
            }
            let mut blocks = blocks.into_iter();
            let mut batch = Vec::new();
            for (i, c) in reads.iter().enumerate() {
                batch.push(Write::Raw {
                    board: b1,
                    chunk: c.clone(),
                });
                if i % 100 == 50 {
                    batch.extend(
                        blocks
                            .next()
                            .map(|block| Write::RawBlock { board: b2, block }),
                    );
                }
            }
            batch.extend(blocks.map(|block| Write::RawBlock { board: b2, block }));
            store.write_batch(&batch).unwrap();
        }
        // What is left: the buffer's partial block, then single reads.
        let mut batch: Vec<Write> = buf
            .take()
            .map(|block| Write::RawBlock { board: b2, block })
            .into_iter()
            .collect();
        batch.extend(rest.map(|c| Write::Raw {
            board: b2,
            chunk: c.clone(),
        }));
        store.write_batch(&batch).unwrap();
    }
    let store = Store::open(&path).unwrap();
    let b1 = store_board(&path, "b1");
    let b2 = store_board(&path, "b2");
    for (board, want) in [(b1, &one), (b2, &two)] {
        let got = store.raw_chunks(board).unwrap();
        assert_eq!(got.len(), want.len());
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
            panic!("read {i} of {board:?}: {:?} != {:?}", got[i], want[i]);
        }
    }

    // Coalesced: far fewer rows than reads, and smaller than one row per read would be.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (rows, reads, blob): (i64, i64, i64) = conn
        .query_row(
            "SELECT count(*), sum(reads), sum(length(bytes)) FROM raw_chunks",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(reads as usize, one.len() + two.len());
    assert!(reads / rows >= 50, "{rows} rows for {reads} reads");
    let payload: usize = one.iter().chain(&two).map(|c| c.bytes.len()).sum();
    assert!(
        (blob as usize) < payload + 3 * reads as usize,
        "{blob} bytes for {payload}"
    );
}

fn store_board(path: &Path, name: &str) -> BoardId {
    let conn = rusqlite::Connection::open(path).unwrap();
    BoardId(
        conn.query_row("SELECT id FROM boards WHERE name = ?1", [name], |r| {
            r.get(0)
        })
        .unwrap(),
    )
}

/// Moves (as SAN text), comments and tags of a PGN, read back with pgn-reader.
#[derive(Default, Debug, PartialEq)]
struct Parsed {
    tags: Vec<(String, String)>,
    sans: Vec<String>,
    /// `(number of moves before the comment, comment)`
    comments: Vec<(usize, String)>,
    outcome: Option<String>,
}

impl Parsed {
    fn tag(&self, name: &str) -> Option<String> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }
}

struct Parse;

impl Visitor for Parse {
    type Tags = Parsed;
    type Movetext = Parsed;
    type Output = Parsed;

    fn begin_tags(&mut self) -> ControlFlow<Parsed, Parsed> {
        ControlFlow::Continue(Parsed::default())
    }

    fn tag(&mut self, p: &mut Parsed, name: &[u8], value: RawTag<'_>) -> ControlFlow<Parsed> {
        p.tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, p: Parsed) -> ControlFlow<Parsed, Parsed> {
        ControlFlow::Continue(p)
    }

    fn san(&mut self, p: &mut Parsed, san: SanPlus) -> ControlFlow<Parsed> {
        p.sans.push(san.to_string());
        ControlFlow::Continue(())
    }

    fn comment(&mut self, p: &mut Parsed, c: RawComment<'_>) -> ControlFlow<Parsed> {
        p.comments.push((
            p.sans.len(),
            String::from_utf8_lossy(c.as_bytes()).trim().to_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, p: &mut Parsed, o: pgn_reader::Outcome) -> ControlFlow<Parsed> {
        p.outcome = Some(o.to_string());
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, p: Parsed) -> Parsed {
        p
    }
}

fn parse_all(pgn: &str) -> Vec<Parsed> {
    let mut reader = Reader::new(pgn.as_bytes());
    let mut out = Vec::new();
    while let Some(p) = reader.read_game(&mut Parse).unwrap() {
        out.push(p);
    }
    out
}

/// Milliseconds of a `[%clk h:mm:ss]` comment.
fn clk_ms(comment: &str) -> u64 {
    let inner = comment
        .strip_prefix("[%clk ")
        .and_then(|c| c.strip_suffix(']'))
        .unwrap();
    let f: Vec<u64> = inner.split(':').map(|x| x.parse().unwrap()).collect();
    assert_eq!(
        (f.len(), inner.len() - inner.rfind(':').unwrap()),
        (3, 3),
        "{inner}"
    );
    ((f[0] * 60 + f[1]) * 60 + f[2]) * 1000
}

fn corpus_store(file: &str, dir: &tempfile::TempDir) -> (Store, Vec<GameRecord>) {
    let mut store = Store::open(&db(dir)).unwrap();
    let board = store.board("Hall A / 7", Kind::Chess).unwrap();
    // One batch per game, results as the arbiter would record them.
    for g in corpus(file) {
        let mut batch = vec![start(board, 0)];
        batch.extend(
            recorded(&g.moves, 0)
                .into_iter()
                .map(|m| ev(board, TrackerEvent::Move(m))),
        );
        if let Some(proposed) = outcome(&g.result) {
            let after_ply = g.moves.len() as u32;
            batch.push(ev(
                board,
                TrackerEvent::ResultGesture {
                    at_ms: 1,
                    after_ply,
                    proposed,
                },
            ));
        }
        store.write_batch(&batch).unwrap();
    }
    let games = store.games().unwrap();
    (store, games)
}

#[test]
fn pgn_reads_back_with_the_same_moves_and_clocks() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, games) = corpus_store("Capablanca.pgn", &dir);
    store.set_game_date(games[0].id, "1901.03.14").unwrap();
    let text = export::export(&store, Format::Pgn, None).unwrap();
    assert!(
        text.lines().all(|l| l.chars().count() < 80),
        "a line of 80 or more"
    );
    let parsed = parse_all(&text);
    assert_eq!(parsed.len(), games.len());
    for (i, (g, p)) in games.iter().zip(&parsed).enumerate() {
        let notations: Vec<_> = g.moves.iter().map(|m| m.notation.clone()).collect();
        assert_eq!(p.sans, notations, "game {}", g.id.0);
        let want: Vec<(usize, u64)> = g
            .moves
            .iter()
            .filter_map(|m| {
                let clock = if m.ply % 2 == 1 {
                    m.clock_white_ms
                } else {
                    m.clock_black_ms
                };
                clock.map(|c| (m.ply as usize, c))
            })
            .collect();
        let got: Vec<(usize, u64)> = p.comments.iter().map(|(n, c)| (*n, clk_ms(c))).collect();
        assert_eq!(got, want, "game {}", g.id.0);
        assert_eq!(p.outcome.as_deref(), Some(g.result.as_str()));
        let tag = |name: &str| {
            p.tags
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        let roster: Vec<_> = p.tags.iter().take(7).map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            roster,
            ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
        );
        assert_eq!(
            tag("Date"),
            Some(if i == 0 { "1901.03.14" } else { "????.??.??" })
        );
        assert_eq!(
            (tag("White"), tag("Black")),
            (Some("Hall A / 7 white"), Some("Hall A / 7 black"))
        );
        assert_eq!(
            (tag("Event"), tag("Site"), tag("Round")),
            (Some("?"), Some("?"), Some("?"))
        );
        assert_eq!(tag("Result"), Some(g.result.as_str()));
        assert_eq!(tag("Board"), Some("Hall A / 7"));
        assert_eq!(tag("Variant"), None);
    }
    let one = export::export(&store, Format::Pgn, Some(games[3].id)).unwrap();
    assert_eq!(
        one,
        export::write_pgn([&games[3]], &export::PgnStyle::arbiter())
    );
    assert!(matches!(
        export::export(&store, Format::Pgn, Some(GameId(-1))),
        Err(ExportError::UnknownGame(GameId(-1)))
    ));
}

#[test]
fn json_export_has_the_contract_fields() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, games) = corpus_store("WorldChamp1886.pgn", &dir);
    let board = store.board("Hall A / 7", Kind::Chess).unwrap();
    // One game with a takeback, so irregularities are not empty.
    let replay = recorded(&corpus("WorldChamp1886.pgn")[0].moves[..4], 0);
    let mut batch = vec![start(board, 0)];
    batch.extend(
        replay
            .iter()
            .map(|m| ev(board, TrackerEvent::Move(m.clone()))),
    );
    batch.push(ev(
        board,
        TrackerEvent::Takeback {
            at_ms: 99_000_000,
            from_ply: 4,
            to_ply: 3,
        },
    ));
    let last = *store.write_batch(&batch).unwrap().last().unwrap();

    let text = export::export(&store, Format::Json, None).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let out = v["games"].as_array().unwrap();
    assert_eq!(out.len(), games.len() + 1);
    for (g, o) in games.iter().zip(out) {
        assert_eq!(o["id"], g.id.0);
        assert_eq!(o["board"], "Hall A / 7");
        assert_eq!(o["kind"], "chess");
        assert!(o["white"].is_null() && o["black"].is_null());
        assert_eq!(o["result"], g.result.as_str());
        assert!(matches!(
            o["result"].as_str(),
            Some("1-0" | "0-1" | "1/2-1/2" | "*")
        ));
        assert!(o.get("termination").is_some());
        assert_eq!(o["irregularities"], serde_json::json!([]));
        let moves = o["moves"].as_array().unwrap();
        assert_eq!(moves.len(), g.moves.len());
        for (m, j) in g.moves.iter().zip(moves) {
            assert_eq!(j["ply"], m.ply);
            assert_eq!(j["notation"], m.notation.as_str());
            assert_eq!(j["uci"], m.uci.as_deref().unwrap());
            assert_eq!(j["fen"], m.position.as_str());
            assert_eq!(j["clock_white_ms"], serde_json::json!(m.clock_white_ms));
            assert_eq!(j["clock_black_ms"], serde_json::json!(m.clock_black_ms));
            assert_eq!(j["time_trouble"], m.time_trouble);
            assert_eq!(j["at_ms"], m.at_ms);
            Fen::from_ascii(j["fen"].as_str().unwrap().as_bytes()).unwrap();
        }
    }
    let o = out.last().unwrap();
    assert_eq!(o["id"], last.0);
    assert_eq!(o["moves"].as_array().unwrap().len(), 3);
    assert_eq!(
        o["irregularities"],
        serde_json::json!([{ "ply": 5, "kind": "takeback", "article": null, "at_ms": 99_000_000,
            "detail": { "from_ply": 4, "to_ply": 3 }, "resolved": true }])
    );
}

#[test]
fn togyz_games_export_positions_and_a_variant_tag() {
    let mut store = Store::open_in_memory().unwrap();
    let board = store.board("korgool 1", Kind::Togyz).unwrap();
    let m = RecordedMove {
        ply: 1,
        notation: "76".into(),
        uci: None,
        position: "9,9,9,9,9,9,1,10,10/9,9,9,9,9,10,10,10,10/10,0/-,-".into(),
        at_ms: 10,
        clock_white_ms: Some(600_000),
        clock_black_ms: None,
        time_trouble: false,
    };
    let id = store
        .write_batch(&[start(board, 0), ev(board, TrackerEvent::Move(m.clone()))])
        .unwrap()[0];
    let g = store.game(id).unwrap().unwrap();
    assert_eq!(g.kind, Kind::Togyz);
    let pgn = export::write_pgn([&g], &export::PgnStyle::arbiter());
    assert!(pgn.contains("[Variant \"Togyz Korgool\"]\n"), "{pgn}");
    assert!(pgn.ends_with("\n1. 76 { [%clk 0:10:00] } *\n"), "{pgn}");
    let j = &export::json(&[g])["games"][0]["moves"][0];
    assert_eq!(j["position"], m.position.as_str());
    assert!(j.get("fen").is_none() && j.get("uci").is_none());
}

/// Pairings for boards 1 and 2, as a CSV the arbiter would import.
const PAIRINGS_CSV: &str = "board,white,black,white_fide,black_fide,white_elo,black_elo
1,\"Steinitz, Wilhelm\",\"Zukertort, Johannes\",,,2650,2610
2,Capablanca,X,3100001,,,
";

#[test]
fn games_keep_their_round_and_take_players_from_the_pairings() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.round_info().unwrap(), None);
    let b1 = store.board("hall-a-1", Kind::Chess).unwrap();
    let b2 = store.board("hall-a-2", Kind::Chess).unwrap();
    let b9 = store.board("spare", Kind::Chess).unwrap();
    store.set_board_number(b1, 1).unwrap();
    store.set_board_number(b9, 2).unwrap();
    // The number moves to the board that takes it.
    store.set_board_number(b2, 2).unwrap();
    assert_eq!(store.board_number(b9).unwrap(), None);
    assert_eq!(store.board_number(b2).unwrap(), Some(2));
    assert!(matches!(
        store.set_board_number(BoardId(99), 3),
        Err(StoreError::UnknownBoard(_))
    ));
    assert!(matches!(
        store.set_board_number(b1, 0),
        Err(StoreError::InvalidNumber(..))
    ));

    let r1 = RoundInfo {
        event: "Almaty Open".into(),
        site: "Almaty KAZ".into(),
        round: 1,
    };
    store.set_round(&r1).unwrap();
    assert_eq!(store.round_info().unwrap().as_ref(), Some(&r1));
    let games = corpus("WorldChamp1886.pgn");
    let moves = recorded(&games[0].moves[..12], 1_000);
    let g1 = write_game(&mut store, b1, &moves, "*");
    let g2 = write_game(
        &mut store,
        b2,
        &recorded(&games[1].moves[..6], 1_000),
        "1-0",
    );
    let g9 = write_game(&mut store, b9, &moves[..2], "*");

    // Pairings imported after the games began still name their players.
    let rows = pairings::parse_csv(PAIRINGS_CSV).unwrap();
    assert_eq!(store.import_pairings(1, &rows).unwrap(), 2);
    assert_eq!(store.pairings(1).unwrap(), rows);
    assert_eq!(store.pairing(1, 2).unwrap().as_ref(), Some(&rows[1]));
    assert_eq!(store.pairing(2, 1).unwrap(), None);

    // A new round: games already played keep round 1.
    let r2 = RoundInfo {
        round: 2,
        ..r1.clone()
    };
    store.set_round(&r2).unwrap();
    let g = store.game(g1).unwrap().unwrap();
    assert_eq!(
        (g.event.as_deref(), g.site.as_deref(), g.round, g.board_no),
        (Some("Almaty Open"), Some("Almaty KAZ"), Some(1), Some(1))
    );
    assert_eq!(g.pairing.as_ref(), Some(&rows[0]));
    let spare = store.game(g9).unwrap().unwrap();
    assert_eq!(
        (spare.round, spare.board_no, spare.pairing),
        (Some(1), None, None)
    );
    let ids: Vec<GameId> = store.round_games(1).unwrap().iter().map(|g| g.id).collect();
    assert_eq!(ids, [g1, g2, g9]);
    assert!(store.round_games(2).unwrap().is_empty());

    // Re-importing replaces the round's rows; a duplicate board is refused and changes nothing.
    let mut twice = rows.clone();
    twice.push(rows[0].clone());
    assert!(matches!(
        store.import_pairings(1, &twice),
        Err(StoreError::DuplicateBoard { round: 1, board: 1 })
    ));
    assert_eq!(store.pairings(1).unwrap(), rows);
    assert_eq!(store.import_pairings(1, &rows[1..]).unwrap(), 1);
    assert_eq!(store.game(g1).unwrap().unwrap().pairing, None);
    store.import_pairings(1, &rows).unwrap();
    drop(store);

    // The PGN a broadcast reads.
    let store = Store::open(&path).unwrap();
    let text = export::write_pgn(
        [&store.game(g1).unwrap().unwrap()],
        &export::PgnStyle::arbiter(),
    );
    let p = &parse_all(&text)[0];
    let tag = |name: &str| {
        p.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let roster: Vec<_> = p.tags.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        roster,
        [
            "Event", "Site", "Date", "Round", "White", "Black", "Result", "Board", "WhiteElo",
            "BlackElo", "GameId"
        ]
    );
    assert_eq!(tag("Event").as_deref(), Some("Almaty Open"));
    assert_eq!(tag("Site").as_deref(), Some("Almaty KAZ"));
    assert_eq!(tag("Round").as_deref(), Some("1.1"));
    assert_eq!(tag("Board").as_deref(), Some("1"));
    assert_eq!(tag("White").as_deref(), Some("Steinitz, Wilhelm"));
    assert_eq!(tag("Black").as_deref(), Some("Zukertort, Johannes"));
    assert_eq!(tag("WhiteElo").as_deref(), Some("2650"));
    let sans: Vec<_> = moves.iter().map(|m| m.notation.clone()).collect();
    assert_eq!(p.sans, sans);
    assert_eq!(
        p.comments.len(),
        moves.len() - 1,
        "a clock on every move but the first"
    );

    // Board 2: a one-character name is replaced by the board's label, its FIDE id kept on white.
    let text = export::write_pgn(
        [&store.game(g2).unwrap().unwrap()],
        &export::PgnStyle::arbiter(),
    );
    let p = &parse_all(&text)[0];
    let tag = |name: &str| {
        p.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(tag("White").as_deref(), Some("Capablanca"));
    assert_eq!(tag("Black").as_deref(), Some("Board 2 black"));
    assert_eq!(tag("WhiteFideId").as_deref(), Some("3100001"));
    assert_eq!(tag("BlackFideId"), None);
    assert_eq!(tag("Round").as_deref(), Some("1.2"));
    // No board number: the round alone, the board's name.
    let text = export::write_pgn(
        [&store.game(g9).unwrap().unwrap()],
        &export::PgnStyle::arbiter(),
    );
    let p = &parse_all(&text)[0];
    let tag = |name: &str| {
        p.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(
        (tag("Round"), tag("Board"), tag("White")),
        (
            Some("1".into()),
            Some("spare".into()),
            Some("spare white".into())
        )
    );
}

#[test]
fn pairings_files_import_through_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let csv = dir.path().join("round3.csv");
    fs::write(&csv, PAIRINGS_CSV).unwrap();
    let bin = env!("CARGO_BIN_EXE_boardscribe");
    let out = std::process::Command::new(bin)
        .args(["pairings", "--db"])
        .arg(&path)
        .args(["--round", "3"])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "round 3: 2 boards imported\n"
    );
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.pairings(3).unwrap(),
        pairings::parse_csv(PAIRINGS_CSV).unwrap()
    );
    drop(store);

    let bad = dir.path().join("bad.pairings");
    fs::write(&bad, "board,white,black\n1,a,b\n1,c,d\n").unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(bin)
            .args(["pairings", "--db"])
            .arg(&path)
            .args(args)
            .arg(&bad)
            .output()
            .unwrap()
    };
    let out = run(&["--round", "3"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--format"));
    let out = run(&["--round", "3", "--format", "csv"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 3: board 1 was already given on line 2"),
        "{err}"
    );
    // The failed import changed nothing.
    assert_eq!(Store::open(&path).unwrap().pairings(3).unwrap().len(), 2);
}

/// Issue 31: a partly damaged database (one page of the moves table overwritten, as a failing
/// disk leaves it) took a round's pairings and a round start. Every command that writes opens
/// it with `PRAGMA quick_check` and refuses it in the words of a damaged read, and the file is
/// left exactly as it was; `round list` still reads what reads, with a warning.
#[test]
fn a_damaged_database_is_refused_for_writes_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let bin = env!("CARGO_BIN_EXE_boardscribe");
    let run = |args: &[&str]| {
        std::process::Command::new(bin)
            .args(args)
            .env("BOARDSCRIBE_LOG", "warn")
            .output()
            .unwrap()
    };
    let db_arg = path.to_str().unwrap();
    let captures: Vec<String> = ["1", "2", "johan"]
        .iter()
        .map(|n| format!("{CAPTURES}/{n}.capture"))
        .collect();
    let mut replay = vec!["replay", "-q", "--db", db_arg];
    replay.extend(captures.iter().map(String::as_str));
    let out = run(&replay);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["round", "start", "1", "--db", db_arg]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Damage the moves table's first page: its cell pointers now point past the page.
    let (page_size, root): (i64, i64) = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let page_size = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        let root = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'moves'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        (page_size, root)
    };
    assert!(
        !path.with_extension("db-wal").exists(),
        "the WAL was checkpointed at exit"
    );
    let mut bytes = fs::read(&path).unwrap();
    let page = usize::try_from((root - 1) * page_size).unwrap();
    for b in &mut bytes[page + 12..page + 140] {
        *b = 0xff;
    }
    fs::write(&path, &bytes).unwrap();

    let csv = dir.path().join("round2.csv");
    fs::write(&csv, PAIRINGS_CSV).unwrap();
    let damaged = format!("{db_arg} is damaged: stored data is unreadable (");
    for args in [
        vec![
            "pairings",
            "--db",
            db_arg,
            "--round",
            "2",
            csv.to_str().unwrap(),
        ],
        vec!["round", "start", "2", "--db", db_arg],
        vec![
            "arbiter", "--db", db_arg, "note", "--game", "1", "--text", "x",
        ],
    ] {
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(&damaged), "{args:?}: {err}");
        assert!(
            err.contains("restore the last backup, or recover what still reads"),
            "{args:?}: {err}"
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{args:?}");
        assert_eq!(
            fs::read(&path).unwrap(),
            bytes,
            "{args:?} wrote to the file"
        );
    }
    // Reading goes on as far as the file reads (the rounds are on undamaged pages).
    let out = run(&["round", "list", "--db", db_arg]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&damaged) && err.contains("nothing is written"),
        "{err}"
    );
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("*     1  ") && l.contains("arbiter")),
        "round 1, current: {listed}"
    );
    assert_eq!(
        fs::read(&path).unwrap(),
        bytes,
        "round list wrote to the file"
    );
    // The library's writers refuse it the same way.
    assert!(matches!(
        Store::open(&path),
        Err(StoreError::Damaged { .. })
    ));
}

/// Every file of a folder, by name.
fn folder_files(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                fs::read_to_string(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn livechess_folder_mirrors_the_round() {
    let game_of = |store: &Store, id: GameId| {
        export::write_pgn(
            [&store.game(id).unwrap().unwrap()],
            &export::PgnStyle::arbiter(),
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    let boards: Vec<BoardId> = (1..=3)
        .map(|n| {
            let b = store.board(&format!("hall-a-{n}"), Kind::Chess).unwrap();
            store.set_board_number(b, n).unwrap();
            b
        })
        .collect();
    let spare = store.board("spare", Kind::Chess).unwrap();
    store
        .set_round(&RoundInfo {
            event: "Almaty Open".into(),
            site: "Almaty".into(),
            round: 4,
        })
        .unwrap();
    store
        .import_pairings(4, &pairings::parse_csv(PAIRINGS_CSV).unwrap())
        .unwrap();
    let corpus = corpus("Capablanca.pgn");
    let g1 = write_game(
        &mut store,
        boards[0],
        &recorded(&corpus[0].moves, 0),
        &corpus[0].result,
    );
    let g2 = write_game(
        &mut store,
        boards[1],
        &recorded(&corpus[1].moves[..9], 0),
        "*",
    );
    // Board 1 is set up again after its game: a new game without moves, not a replacement.
    store.write_batch(&[start(boards[0], 10_000_000)]).unwrap();
    let g_spare = write_game(&mut store, spare, &recorded(&corpus[2].moves[..4], 0), "*");

    let out = dir.path().join("live");
    let relay = FolderRelay::new(&out);
    let games = store.round_games(4).unwrap();
    assert_eq!(relay.write_round(4, &games).unwrap(), 3);
    let round_dir = out.join("round-4");
    let files = folder_files(&round_dir);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["game-1.pgn", "game-2.pgn", "games.pgn"],
        "no temporary files left"
    );
    assert_eq!(files[0].1, game_of(&store, g1));
    assert_eq!(files[1].1, game_of(&store, g2));
    let all = format!(
        "{}\n{}\n{}",
        game_of(&store, g1),
        game_of(&store, g2),
        game_of(&store, g_spare)
    );
    assert_eq!(files[2].1, all);
    assert_eq!(round_pgn(&games, 4), all);
    let parsed = parse_all(&files[2].1);
    assert_eq!(parsed.len(), 3);
    assert_eq!(parsed[0].sans.len(), corpus[0].moves.len());

    // Nothing changed: nothing written.
    let before = fs::metadata(round_dir.join("game-1.pgn"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(
        relay
            .write_round(4, &store.round_games(4).unwrap())
            .unwrap(),
        0
    );
    assert_eq!(
        fs::metadata(round_dir.join("game-1.pgn"))
            .unwrap()
            .modified()
            .unwrap(),
        before
    );

    // A move on board 2: its file and games.pgn change, board 1's does not.
    let more = recorded(&corpus[1].moves[..10], 0);
    store
        .write_batch(&[ev(boards[1], TrackerEvent::Move(more[9].clone()))])
        .unwrap();
    assert_eq!(
        relay
            .write_round(4, &store.round_games(4).unwrap())
            .unwrap(),
        2
    );
    let files = folder_files(&round_dir);
    assert_eq!(files[1].1, game_of(&store, g2));
    assert_eq!(parse_all(&files[1].1)[0].sans.len(), 10);

    // Board 2 renumbered to 3 for its next game: the game played as board 2 keeps its number.
    store.set_board_number(boards[1], 3).unwrap();
    store.set_board_number(boards[2], 2).unwrap();
    let g3 = write_game(
        &mut store,
        boards[1],
        &recorded(&corpus[3].moves[..2], 0),
        "*",
    );
    // A game-7.pgn left from elsewhere goes; other files stay.
    fs::write(round_dir.join("game-7.pgn"), "old").unwrap();
    fs::write(round_dir.join("notes.txt"), "keep").unwrap();
    assert_eq!(
        relay
            .write_round(4, &store.round_games(4).unwrap())
            .unwrap(),
        3
    );
    let files = folder_files(&round_dir);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "game-1.pgn",
            "game-2.pgn",
            "game-3.pgn",
            "games.pgn",
            "notes.txt"
        ]
    );
    assert_eq!(files[1].1, game_of(&store, g2));
    assert_eq!(files[2].1, game_of(&store, g3));
    assert!(files[2].1.contains("[Round \"4.3\"]"));
    assert!(files[1].1.contains("[Round \"4.2\"]"));
}

#[tokio::test]
async fn the_folder_task_follows_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let mut store = Store::open(&path).unwrap();
    let board = store.board("hall-a-1", Kind::Chess).unwrap();
    store.set_board_number(board, 1).unwrap();
    store
        .set_round(&RoundInfo {
            event: "Almaty Open".into(),
            site: "Almaty".into(),
            round: 2,
        })
        .unwrap();
    let moves = recorded(&corpus("Capablanca.pgn")[0].moves[..6], 0);
    let game = write_game(&mut store, board, &moves[..2], "*");
    let out = dir.path().join("live");
    let (changes, rx) = tokio::sync::watch::channel(0u64);
    let reader = path.clone();
    let task = tokio::spawn(FolderRelay::new(&out).run(rx, move || {
        let store = Store::open(&reader)?;
        let Some(info) = store.round_info()? else {
            return Ok::<_, StoreError>(None);
        };
        Ok(Some((info.round, store.round_games(info.round)?)))
    }));
    let file = out.join("round-2").join("game-1.pgn");
    for mv in &moves[2..] {
        store
            .write_batch(&[ev(board, TrackerEvent::Move(mv.clone()))])
            .unwrap();
        changes.send_modify(|n| *n += 1);
    }
    let want = export::write_pgn(
        [&store.game(game).unwrap().unwrap()],
        &export::PgnStyle::arbiter(),
    );
    for _ in 0..500 {
        if fs::read_to_string(&file).is_ok_and(|t| t == want) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), want);
    assert_eq!(parse_all(&want)[0].sans.len(), 6);
    drop(changes);
    task.await.unwrap();
}

/// The folder tree as the Lichess broadcaster app reads it (issue 17, item 4): every file of the
/// round folder, recursively; `games.pgn` alone if it is there (its older rule), else every
/// other `.pgn` (its newer rule, `game-N.pgn`); both must give the same games. Returns the
/// games of the joined PGN.
fn broadcaster_reads(round_dir: &Path) -> Vec<Parsed> {
    fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                all_files(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    all_files(round_dir, &mut files);
    let name = |p: &PathBuf| p.file_name().unwrap().to_string_lossy().into_owned();
    let multi: Vec<&PathBuf> = files
        .iter()
        .filter(|p| name(p).ends_with("games.pgn"))
        .collect();
    let mut single: Vec<&PathBuf> = files
        .iter()
        .filter(|p| name(p).ends_with(".pgn") && !name(p).ends_with("games.pgn"))
        .collect();
    single.sort_by_key(|p| {
        name(p)
            .trim_start_matches("game-")
            .trim_end_matches(".pgn")
            .parse::<u32>()
            .unwrap()
    });
    let joined = |files: &[&PathBuf]| {
        files
            .iter()
            .map(|p| fs::read_to_string(p).unwrap())
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    let from_multi = parse_all(&joined(&multi));
    let from_single = parse_all(&joined(&single));
    assert_eq!(multi.len(), 1, "one games.pgn");
    assert_eq!(
        from_single, from_multi,
        "game-N.pgn files and games.pgn differ"
    );
    from_single
}

#[test]
fn the_livechess_folder_reads_as_the_broadcaster_reads_it_and_a_correction_keeps_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir)).unwrap();
    store
        .set_round(&RoundInfo {
            event: "Almaty Open".into(),
            site: "Almaty".into(),
            round: 2,
        })
        .unwrap();
    let csv = "board,white,black,white_fide,black_fide,white_elo,black_elo,white_title,black_title,white_fed,black_fed\n\
               1,\"Steinitz, Wilhelm\",\"Zukertort, Johannes\",4100001,4100002,2650,2610,GM,IM,AUT,POL\n\
               2,\"Capablanca, Jose Raul\",\"Marshall, Frank\",,,,,,,CUB,USA\n\
               3,\"Lasker, Emanuel\",\"Tarrasch, Siegbert\",,,,,,,GER,GER\n";
    store
        .import_pairings(2, &pairings::parse_csv(csv).unwrap())
        .unwrap();
    let boards: Vec<BoardId> = (1..=3)
        .map(|n| {
            let b = store.board(&format!("hall-{n}"), Kind::Chess).unwrap();
            store.set_board_number(b, n).unwrap();
            b
        })
        .collect();
    let corpus = corpus("Capablanca.pgn");
    let g1 = write_game(
        &mut store,
        boards[0],
        &recorded(&corpus[0].moves[..20], 0),
        "*",
    );
    write_game(
        &mut store,
        boards[1],
        &recorded(&corpus[1].moves, 0),
        &corpus[1].result,
    );
    // Board 3 is paired and has not begun.

    let out = dir.path().join("live");
    let relay = FolderRelay::new(&out);
    let folder = |store: &Store| FolderRound {
        round: 2,
        games: store.round_games(2).unwrap(),
        event: store.event().unwrap(),
        rounds: store.rounds().unwrap(),
        pairings: store.pairings(2).unwrap(),
    };
    assert!(relay.write_folder(&folder(&store)).unwrap() > 0);

    // tournament.json: the fields LiveChess writes, a round's games and those in play.
    let tournament: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("tournament.json")).unwrap()).unwrap();
    assert_eq!(tournament["name"], "Almaty Open");
    assert_eq!(tournament["location"], "Almaty");
    let rounds = tournament["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[1], serde_json::json!({"count": 3, "live": 1}));
    // round-2/index.json: one pairing per board, in board order, as LiveChess writes players.
    let index: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("round-2/index.json")).unwrap()).unwrap();
    let pairings = index["pairings"].as_array().unwrap();
    assert_eq!(pairings.len(), 3);
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(&pairings[0]), ["black", "live", "result", "white"]);
    assert_eq!(
        keys(&pairings[0]["white"]),
        ["federation", "fideid", "fname", "lname", "mname", "title"]
    );
    assert_eq!(
        pairings[0]["white"],
        serde_json::json!({"fname": "Wilhelm", "mname": null, "lname": "Steinitz", "title": "GM",
                           "federation": "AUT", "fideid": 4_100_001})
    );
    assert_eq!(
        (&pairings[0]["result"], &pairings[0]["live"]),
        (&"*".into(), &true.into())
    );
    assert_eq!(pairings[1]["result"], corpus[1].result.as_str());
    assert_eq!(pairings[1]["live"], false);
    assert_eq!(pairings[2]["black"]["lname"], "Tarrasch");
    assert_eq!(
        (&pairings[2]["result"], &pairings[2]["live"]),
        (&"*".into(), &false.into())
    );

    // The PGN as the broadcaster reads it: board n is the n-th pairing, named as it says.
    let games = broadcaster_reads(&out.join("round-2"));
    assert_eq!(games.len(), 2, "board 3 has no game yet");
    for (g, p) in games.iter().zip(pairings) {
        let white = format!(
            "{}, {}",
            p["white"]["lname"].as_str().unwrap(),
            p["white"]["fname"].as_str().unwrap()
        );
        assert_eq!(g.tag("White").as_deref(), Some(white.as_str()));
    }
    let identity = games[0].tag("GameId").unwrap();
    assert_eq!(games[0].sans.len(), 20);

    // The arbiter corrects board 1's last move: the full mainline again, the same identity.
    let ply = 20;
    let old = &store.game(g1).unwrap().unwrap().moves[ply - 1];
    let mut pos = Chess::default();
    for m in &corpus[0].moves[..ply - 1] {
        pos.play_unchecked(*m);
    }
    let other = pos
        .legal_moves()
        .into_iter()
        .map(|m| Sp::from_move(pos.clone(), m).to_string())
        .find(|san| san.trim_end_matches(['+', '#']) != old.notation.trim_end_matches(['+', '#']))
        .unwrap();
    store
        .correct_move(g1, ply as u32, &other, "Chief Arbiter", None, 50_000_000)
        .unwrap();
    assert!(relay.write_folder(&folder(&store)).unwrap() > 0);
    let again = broadcaster_reads(&out.join("round-2"));
    assert_eq!(again[0].tag("GameId").as_deref(), Some(identity.as_str()));
    let live: Vec<String> = store
        .game(g1)
        .unwrap()
        .unwrap()
        .moves
        .iter()
        .map(|m| m.notation.clone())
        .collect();
    assert_eq!(
        again[0].sans.len(),
        live.len(),
        "the whole mainline, corrected"
    );
    assert_eq!(
        again[0].sans[ply - 1].trim_end_matches(['+', '#']),
        other.trim_end_matches(['+', '#'])
    );
    assert!(
        !fs::read_to_string(out.join("round-2/game-1.pgn"))
            .unwrap()
            .contains("Arbiter")
    );
}
