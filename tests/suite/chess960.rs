//! Chess960 end to end, in process: 300 seeded random Chess960 games played by the emulator with
//! human handling (castling in every hand order), written as captures and replayed through the
//! `replay` path into SQLite under `--variant chess960`, each recorded exactly, its PGN export
//! read back move by move by a Chess960-aware reader (`pgn-reader` + shakmaty in
//! `CastlingMode::Chess960`); a game resumed after a restart from the start position the store
//! kept; and Chess960 games read back from the board's memory.

use std::{collections::BTreeMap, io::Cursor, ops::ControlFlow};

use boardscribe::{
    arbiter::LawsSetup,
    config::{BoardConfig, BoardKind, Locator},
    daemon::board::prepare,
    device::Direction,
    emulator::{self, BoardScript, EmulatorOptions, EventKind, Payload, Style},
    export::{PgnStyle, json::json, write_pgn},
    game::{GameKind, Kind, Variant, chess::ChessGame},
    memory::{
        self, EeRecorder, Recording, games_from_log, games_from_log_in, log_from_bytes, parse_log,
    },
    pipeline::{Dgt, Pipeline},
    protocol::dgt::{BoardDump, Frame},
    recorder::Recorder,
    replay::replay_reader_with,
    sensor::{Orientation, dgt::ClockLayout},
    store::{GameRecord, Store},
    tracker::{Tracker, TrackerEvent},
};
use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use shakmaty::{CastlingMode, Chess, Position, fen::Fen, uci::UciMove};

fn laws() -> LawsSetup {
    LawsSetup {
        variant: Variant::Chess960,
        ..LawsSetup::default()
    }
}

/// The seeds of the games (more with `BOARDSCRIBE_SEED_OFFSET=1000`).
fn seed(i: u64) -> u64 {
    let offset: u64 = std::env::var("BOARDSCRIBE_SEED_OFFSET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    i + offset
}

/// Human speed, blitz hands or slow hands, and every fifth board turned round.
fn options(i: u64) -> EmulatorOptions {
    EmulatorOptions {
        seed: seed(i),
        speed: [1.0, 0.3, 3.0][(i % 3) as usize],
        rotated: i % 5 == 4,
        ..EmulatorOptions::default()
    }
}

fn script(i: u64) -> BoardScript {
    let game = emulator::chess960_game(seed(i));
    emulator::script_pgn(&game, &options(i)).unwrap()
}

/// A PGN read by a Chess960-aware reader: the `FEN` tag in `CastlingMode::Chess960` under
/// `[Variant "Chess960"]`, every SAN resolved and played, as Chess960 UCI.
struct Chess960Reader;

struct Read {
    tags: Vec<(String, String)>,
    pos: Chess,
    ucis: Vec<String>,
    sans: Vec<String>,
    error: Option<String>,
}

/// What the reader found: the tags, the start, and the moves (UCI, SAN).
struct ReadGame {
    tags: Vec<(String, String)>,
    ucis: Vec<String>,
    sans: Vec<String>,
}

impl Visitor for Chess960Reader {
    type Tags = Vec<(String, String)>;
    type Movetext = Read;
    type Output = Result<ReadGame, String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        tags.push((
            String::from_utf8_lossy(name).into_owned(),
            value.decode_utf8_lossy().into_owned(),
        ));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let get = |k: &str| tags.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        if get("Variant").as_deref() != Some("Chess960") || get("SetUp").as_deref() != Some("1") {
            return ControlFlow::Break(Err(format!("not tagged as Chess960: {tags:?}")));
        }
        let Some(fen) = get("FEN") else {
            return ControlFlow::Break(Err("no FEN tag".into()));
        };
        let pos = match fen.parse::<Fen>().map_err(|e| e.to_string()).and_then(|f| {
            f.into_position::<Chess>(CastlingMode::Chess960)
                .map_err(|e| e.to_string())
        }) {
            Ok(p) => p,
            Err(e) => return ControlFlow::Break(Err(format!("FEN {fen:?}: {e}"))),
        };
        ControlFlow::Continue(Read {
            tags,
            pos,
            ucis: Vec::new(),
            sans: Vec::new(),
            error: None,
        })
    }

    fn san(&mut self, r: &mut Self::Movetext, san: SanPlus) -> ControlFlow<Self::Output> {
        if r.error.is_some() {
            return ControlFlow::Continue(());
        }
        match san.san.to_move(&r.pos) {
            Ok(m) => {
                r.ucis.push(UciMove::from_chess960(m).to_string());
                r.sans.push(san.to_string());
                r.pos.play_unchecked(m);
            }
            Err(e) => r.error = Some(format!("{san} at ply {}: {e}", r.ucis.len() + 1)),
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, r: Self::Movetext) -> Self::Output {
        match r.error {
            Some(e) => Err(e),
            None => Ok(ReadGame {
                tags: r.tags,
                ucis: r.ucis,
                sans: r.sans,
            }),
        }
    }
}

fn read_pgn(text: &str) -> Result<ReadGame, String> {
    let mut reader = Reader::new(Cursor::new(text.as_bytes()));
    match reader.read_game(&mut Chess960Reader) {
        Ok(Some(read)) => read,
        Ok(None) => Err("no game".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The stored game's PGN, read back by the Chess960 reader, is the record move by move.
fn check_pgn(record: &GameRecord) -> Result<(), String> {
    let text = write_pgn([record], &PgnStyle::arbiter());
    let read = read_pgn(&text)?;
    let fen = read.tags.iter().find(|(k, _)| k == "FEN").map(|(_, v)| v);
    if fen != record.start_position.as_ref() {
        return Err(format!("FEN {fen:?}, stored {:?}", record.start_position));
    }
    let ucis: Vec<String> = record
        .moves
        .iter()
        .map(|m| m.uci.clone().unwrap())
        .collect();
    let sans: Vec<&String> = record.moves.iter().map(|m| &m.notation).collect();
    if read.ucis != ucis || read.sans.iter().collect::<Vec<_>>() != sans {
        return Err(format!("read {:?}\nrecorded {ucis:?}\n{text}", read.ucis));
    }
    Ok(())
}

/// The castling styles a script used, counted.
fn castling_styles(script: &BoardScript, tally: &mut BTreeMap<Style, usize>) {
    for p in &script.plies {
        for s in &p.styles {
            if matches!(
                s,
                Style::CastleKingFirst
                    | Style::CastleRookFirst
                    | Style::CastleKingStays
                    | Style::CastleRookStays
                    | Style::CastleBothInHands
            ) {
                *tally.entry(*s).or_default() += 1;
            }
        }
    }
}

/// Every game exact, every castling hand order played. Known open (issue 14, item 5: "prefer the
/// explanation that keeps what presses confirmed"): games 57 and 106 fail, not by anything of
/// Chess960 but by the tracker's "a different move a few plies back" rule, which takes a
/// capture slid through a square with its victim lifted first (Qe3xa3 resting on d3; Rb4xb2 on
/// b3) for a misreading two pressed plies back (`show_one_game` shows them).
#[test]
fn three_hundred_seeded_chess960_games_are_recorded_exactly() {
    const GAMES: u64 = 300;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let per = GAMES.div_ceil(threads);
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|part| {
                s.spawn(move || {
                    let mut store = Store::open_in_memory().unwrap();
                    let mut failures = Vec::new();
                    let mut tally = BTreeMap::new();
                    let (mut plies, mut castles, mut revisions, mut takebacks, mut alarms) =
                        (0, 0, 0, 0, 0);
                    for i in part * per..((part + 1) * per).min(GAMES) {
                        let script = script(i);
                        castling_styles(&script, &mut tally);
                        let name = format!("960-{}", seed(i));
                        let summary = replay_reader_with(
                            &mut store,
                            &name,
                            &name,
                            script.to_capture_text().as_bytes(),
                            &laws(),
                            &mut |_, e| match e {
                                TrackerEvent::Revision { .. } => revisions += 1,
                                TrackerEvent::Takeback { .. } => takebacks += 1,
                                TrackerEvent::Irregularity { .. } => alarms += 1,
                                _ => {}
                            },
                        )
                        .unwrap();
                        plies += script.plies.len();
                        castles += script
                            .plies
                            .iter()
                            .filter(|p| p.san.starts_with("O-O"))
                            .count();
                        let want: Vec<&str> = script.plies.iter().map(|p| p.uci.as_str()).collect();
                        let record = summary.games.last().and_then(|g| store.game(*g).unwrap());
                        let Some(record) = record else {
                            failures.push(format!("{name}: no game"));
                            continue;
                        };
                        let got: Vec<&str> = record
                            .moves
                            .iter()
                            .map(|m| m.uci.as_deref().unwrap_or(""))
                            .collect();
                        let game = emulator::chess960_game(seed(i));
                        let start = ChessGame::position_text(&game.start);
                        if got != want || summary.games.len() != 1 {
                            let first = got.iter().zip(&want).position(|(a, b)| a != b);
                            failures.push(format!(
                                "{name} (x{}, rotated {}): {} games, {} of {} plies, first \
                                 difference at {:?}",
                                options(i).speed,
                                options(i).rotated,
                                summary.games.len(),
                                got.len(),
                                want.len(),
                                first.map(|p| (p + 1, got[p], want[p]))
                            ));
                        } else if record.start_position.as_deref() != Some(start.as_str()) {
                            failures.push(format!(
                                "{name}: start {:?}, played from {start}",
                                record.start_position
                            ));
                        } else if let Err(e) = check_pgn(&record) {
                            failures.push(format!("{name}: PGN read back: {e}"));
                        }
                    }
                    (
                        failures, tally, plies, castles, revisions, takebacks, alarms,
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut failures = Vec::new();
    let mut tally: BTreeMap<Style, usize> = BTreeMap::new();
    let (mut plies, mut castles, mut revisions, mut takebacks, mut alarms) = (0, 0, 0, 0, 0);
    for (f, t, p, c, r, tb, a) in results {
        failures.extend(f);
        for (k, v) in t {
            *tally.entry(k).or_default() += v;
        }
        plies += p;
        castles += c;
        revisions += r;
        takebacks += tb;
        alarms += a;
    }
    eprintln!(
        "{GAMES} Chess960 games: {plies} plies, {castles} castlings {tally:?}; {revisions} \
         revisions, {takebacks} takebacks, {alarms} irregularities recorded"
    );
    assert!(
        failures.is_empty(),
        "{} of {GAMES} games differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Every castling hand order was played.
    for s in [
        Style::CastleKingFirst,
        Style::CastleRookFirst,
        Style::CastleKingStays,
        Style::CastleRookStays,
        Style::CastleBothInHands,
    ] {
        assert!(tally.get(&s).copied().unwrap_or(0) >= 5, "{s:?}: {tally:?}");
    }
    // No script takes a move back or plays an irregularity: any is a false one.
    assert_eq!(takebacks, 0, "takebacks recorded, none played");
    assert!(
        alarms * 1000 <= plies,
        "{alarms} irregularities in {plies} plies with none played (over 0.1 %)"
    );
    assert!(
        revisions * 1000 <= plies,
        "{revisions} revisions in {plies} plies (over 0.1 %)"
    );
}

#[test]
fn the_pgn_and_json_exports_carry_the_start() {
    let mut store = Store::open_in_memory().unwrap();
    let script = script(4);
    let summary = replay_reader_with(
        &mut store,
        "one",
        "one",
        script.to_capture_text().as_bytes(),
        &laws(),
        &mut |_, _| {},
    )
    .unwrap();
    let record = store.game(summary.games[0]).unwrap().unwrap();
    let start = record.start_position.clone().unwrap();
    let text = write_pgn([&record], &PgnStyle::arbiter());
    assert!(
        text.contains("[Variant \"Chess960\"]\n[SetUp \"1\"]\n"),
        "{text}"
    );
    assert!(text.contains(&format!("[FEN \"{start}\"]")), "{text}");
    check_pgn(&record).unwrap();
    let v = json(std::slice::from_ref(&record));
    assert_eq!(v["games"][0]["variant"], "chess960");
    assert_eq!(v["games"][0]["start_fen"], start.as_str());
    assert_eq!(
        v["games"][0]["moves"].as_array().unwrap().len(),
        script.plies.len()
    );
    // A standard game has its standard start in the JSON, and no Chess960 tags.
    let mut store = Store::open_in_memory().unwrap();
    let corpus = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/chess/tatamast22.pgn"
    ))
    .unwrap();
    let game = &emulator::games_from_pgn(&corpus).unwrap()[0];
    let script = emulator::script_pgn(game, &EmulatorOptions::default()).unwrap();
    let summary = replay_reader_with(
        &mut store,
        "std",
        "std",
        script.to_capture_text().as_bytes(),
        &LawsSetup::default(),
        &mut |_, _| {},
    )
    .unwrap();
    let record = store.game(summary.games[0]).unwrap().unwrap();
    assert_eq!(record.start_position, None);
    assert!(!write_pgn([&record], &PgnStyle::arbiter()).contains("Variant"));
    let v = json(std::slice::from_ref(&record));
    assert_eq!(v["games"][0]["variant"], "standard");
    assert_eq!(
        v["games"][0]["start_fen"],
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    );
}

/// The first ply after the halfway point whose predecessor was pressed before it began: a
/// clean place for the daemon to die.
fn cut_ply(script: &BoardScript) -> usize {
    let n = script.plies.len();
    (n / 2..n)
        .find(|&k| {
            let (before, next) = (&script.plies[k - 1], &script.plies[k]);
            before.press_ms.is_some_and(|p| p + 400 < next.start_ms)
        })
        .expect("a ply to cut at")
}

#[test]
fn a_chess960_game_resumes_after_a_restart_from_its_stored_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("round.sqlite");
    // A game with castling in both halves, if the seeds have one (they do: checked below).
    let (i, script) = (0..200u64)
        .map(|i| (i, script(i)))
        .find(|(_, s)| {
            let n = s.plies.len();
            let castle =
                |r: std::ops::Range<usize>| s.plies[r].iter().any(|p| p.san.starts_with("O-O"));
            n >= 40 && castle(0..n / 2) && castle(n / 2 + 4..n)
        })
        .expect("a seed castling on both sides of the cut");
    let cut = cut_ply(&script);
    let restart_at = script.plies[cut].start_ms - 1;
    let cfg = BoardConfig {
        number: 1,
        kind: BoardKind::Dgt,
        name: "board 1".into(),
        locator: Locator::Port("/dev/null".into()),
        clock_layout: ClockLayout::default(),
    };

    // Before the crash: the bytes up to the cut, each batch stored as the daemon stores it.
    {
        let mut store = Store::open(&db).unwrap();
        let board = store.board(&cfg.name, Kind::Chess).unwrap();
        let pipeline =
            Pipeline::<Dgt>::new(Tracker::new(laws().tracker_settings()), laws().referee());
        let mut p = Recorder::new(board, pipeline);
        for (t, dir, bytes) in script.to_chunks() {
            if t >= restart_at {
                break;
            }
            p.feed(t, dir, &bytes);
            store.write_batch(&p.take_writes()).unwrap();
        }
        // Killed: nothing flushed.
    }

    // The restart: the store's open game, resumed by the daemon's own `prepare`.
    let mut store = Store::open(&db).unwrap();
    let spec = prepare::<Dgt>(&mut store, &cfg, &laws()).unwrap();
    let open = store.open_game(spec.id).unwrap().unwrap();
    assert_eq!(spec.game, Some(open.id), "the open game is resumed");
    assert!(
        spec.resumed.len() + 1 >= cut,
        "{} of {cut} plies",
        spec.resumed.len()
    );
    let start = open.start_position.clone().unwrap();
    assert_eq!(
        start,
        ChessGame::position_text(&emulator::chess960_game(seed(i)).start)
    );
    // The same resumption as `prepare` makes, driven here: the stored start, then the moves.
    let pos = ChessGame::parse_start(&start).unwrap();
    let tracker = Tracker::resume(
        laws().tracker_settings(),
        open.orientation,
        Some(pos),
        &open.moves,
        restart_at,
    )
    .unwrap();
    let mut referee = laws().referee();
    boardscribe::arbiter::Judge::resume(&mut referee, Some(&start), &open.moves);
    let mut p = Recorder::new(spec.id, Pipeline::<Dgt>::new(tracker, referee));
    // A reopened board answers with a dump of what stands on it, then play goes on.
    let board_now: BoardDump = script.plies[cut - 1].board_after;
    p.feed_frame(restart_at, Frame::BoardDump(board_now));
    for (t, dir, bytes) in script.to_chunks() {
        if t < restart_at || dir != Direction::FromBoard {
            continue;
        }
        p.feed(t, dir, &bytes);
        store.write_batch(&p.take_writes()).unwrap();
    }
    let end = script.events.last().map_or(0, |e| e.at_ms) + 10_000;
    p.tick(end);
    p.flush(end);
    store.write_batch(&p.take_writes()).unwrap();

    let games = store.games().unwrap();
    assert_eq!(games.len(), 1, "no new game after the restart");
    let got: Vec<String> = games[0]
        .moves
        .iter()
        .map(|m| m.uci.clone().unwrap())
        .collect();
    let want: Vec<String> = script.plies.iter().map(|p| p.uci.clone()).collect();
    assert_eq!(got, want);
    check_pgn(&games[0]).unwrap();
    // The stored start survives in the export.
    assert!(write_pgn([&games[0]], &PgnStyle::arbiter()).contains(&format!("[FEN \"{start}\"]")));
    // The referee played on from the stored start: no move it could not place was warned of, and
    // the orientation is the game's.
    assert_eq!(
        games[0].orientation,
        if options(i).rotated {
            Orientation::Rotated
        } else {
            Orientation::Normal
        }
    );
}

/// Plays `script`'s board and clock frames into the board's memory.
fn play_into(memory: &mut EeRecorder, script: &BoardScript) {
    for e in &script.events {
        if e.kind == EventKind::Handshake {
            continue;
        }
        match &e.payload {
            Payload::Frame(Frame::FieldUpdate { square, piece }) => {
                memory.field(e.at_ms, *square, *piece)
            }
            Payload::Frame(Frame::BwTime(t)) => memory.clock(t),
            _ => {}
        }
    }
}

#[test]
fn chess960_games_are_read_back_from_the_boards_memory() {
    // Games one after another on one board, read after every game (the memory holds a few).
    let mut checked = 0;
    for i in 0..24u64 {
        let script = script(i);
        let mut memory = EeRecorder::power_up(&script.start_dump.0);
        play_into(&mut memory, &script);
        let log = log_from_bytes(&memory.dump().to_bytes(), "test").unwrap();
        let tokens = parse_log(&log).unwrap();
        let games = games_from_log_in(&tokens, 1_000_000, Variant::Chess960, &mut Vec::new());
        assert_eq!(games.len(), 1, "seed {}", seed(i));
        let got: Vec<String> = games[0]
            .moves
            .iter()
            .map(|m| m.uci.clone().unwrap())
            .collect();
        let want: Vec<String> = script.plies.iter().map(|p| p.uci.clone()).collect();
        assert_eq!(got, want, "seed {}", seed(i));
        let start = games[0].events.iter().find_map(|e| match e {
            TrackerEvent::GameStarted { start, .. } => start.clone(),
            _ => None,
        });
        let game = emulator::chess960_game(seed(i));
        assert_eq!(start, Some(ChessGame::position_text(&game.start)));
        // After a gap, a daemon recording this game reads the plies after its record from the
        // same memory, under the game's variant.
        let recorded = want.len() / 2;
        let found = memory::continuation(
            &log,
            &Recording {
                orientation: games[0].orientation,
                start: None,
                variant: Variant::Chess960,
                white_on_left: Some(true),
                record: &want[..recorded],
                clocks: &[],
            },
            &mut Vec::new(),
        )
        .unwrap();
        let rest: Vec<String> = found
            .recorded
            .iter()
            .chain(&found.in_hand)
            .map(|m| m.uci.clone().unwrap())
            .collect();
        assert_eq!(rest, want[recorded..], "seed {}", seed(i));
        // Read as standard chess, a Chess960 set-up begins no game with moves (unless it is
        // the standard position, Scharnagl 518).
        if game.start.board() != Chess::default().board() {
            let standard = games_from_log(&tokens, 1_000_000);
            assert!(
                standard.iter().all(|g| g.moves.is_empty()),
                "seed {}",
                seed(i)
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 24);
}

/// One game's script and every event the tracker emits for it, to look at a failing seed:
/// `BOARDSCRIBE_960_GAME=57 cargo test --release --test suite chess960::show_one_game -- --ignored
/// --nocapture` (the game index; `BOARDSCRIBE_SEED_OFFSET` applies).
#[test]
#[ignore]
fn show_one_game() {
    let i: u64 = std::env::var("BOARDSCRIBE_960_GAME")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let script = script(i);
    for p in &script.plies {
        eprintln!(
            "{} {} {} {:?} {}..{} ms, press {:?}",
            p.ply, p.san, p.uci, p.styles, p.start_ms, p.end_ms, p.press_ms
        );
    }
    let mut store = Store::open_in_memory().unwrap();
    let text = script.to_capture_text();
    replay_reader_with(
        &mut store,
        "one",
        "one",
        text.as_bytes(),
        &laws(),
        &mut |_, e| eprintln!("{e:?}"),
    )
    .unwrap();
}
