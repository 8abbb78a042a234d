//! DGT bus mode end to end: a chain of emulated boards on ONE pseudo-terminal, recorded by the
//! daemon's `record_fleet` through a `[[bus]]`, each board its own board in the store.
//!
//! (a) 16 boards play 16 corpus games at human speed (speed 1.0; each game cut to its first
//! `PLIES` plies so the test stays near two minutes): every game is recorded exactly; every
//! move's settled-to-durable latency (the press that completes it to its commit) is within the
//! bound the line rate gives (see [`latency_bound_ms`]), and so is what the bus adds over the same
//! script on a port of its own; one board's raw stream, written as a `dgt-bus` capture, replays
//! to the same moves.
//! (c) without a pty, the fold and the tracker over 24 whole corpus games polled at two rates
//! and every phase: exact, and every move within two polls and a scan of its press.
//! (b) checksum errors on one board all game long, a board off the chain for a while mid-game,
//! a board gone for good: no move lost on the others, none on the one that came back, and the
//! silent one keeps every move it played before it went silent.

use std::{
    collections::HashMap,
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use boardscribe::{
    arbiter::LawsSetup,
    bus::{MasterSettings, address_from_serial, wire_ms},
    capture,
    config::{BoardConfig, BoardKind, BusBoardConfig, BusConfig, Locator},
    daemon,
    device::Direction,
    emulator::{self, BoardScript, BusChainOptions, BusFault, EmulatorOptions, PgnGame, PtyEvent},
    sensor::dgt::ClockLayout,
    store::Store,
    tracker::{TrackerEvent, TrackerSettings},
};
use shakmaty::CastlingMode;
use tokio::{
    sync::{mpsc, watch},
    time::Instant,
};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");

/// Plies per game: with 1 to 20 s of thought a ply (mean about 6 s) plus the hands, about two
/// minutes of play at human speed. `BOARDSCRIBE_BUS_PLIES=N` plays N plies instead (0: the whole
/// games, about 8 to 15 minutes).
const PLIES: usize = 12;

fn plies() -> Option<usize> {
    match std::env::var("BOARDSCRIBE_BUS_PLIES") {
        Ok(v) => {
            Some(v.parse().expect("BOARDSCRIBE_BUS_PLIES: a number of plies")).filter(|&n| n > 0)
        }
        Err(_) => Some(PLIES),
    }
}

fn corpus_games(file: &str, n: usize) -> Vec<PgnGame> {
    let text = std::fs::read_to_string(Path::new(CORPUS).join(format!("{file}.pgn"))).unwrap();
    emulator::games_from_pgn(&text)
        .unwrap()
        .into_iter()
        .filter(|g| g.moves.len() >= PLIES.max(plies().unwrap_or(0)))
        .take(n)
        .collect()
}

fn cut(mut g: PgnGame) -> PgnGame {
    if let Some(n) = plies() {
        g.moves.truncate(n);
        g.sans.truncate(n);
        g.outcome = None;
    }
    g
}

fn uci(g: &PgnGame) -> Vec<String> {
    g.moves
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect()
}

/// One board of the chain: its game, script, serial and address.
struct Seat {
    game: PgnGame,
    script: BoardScript,
    serial: String,
    address: u16,
    name: String,
}

/// One board a game, at human speed: every third board turned round, every fourth clock with
/// White's time on the right.
fn seats(games: Vec<PgnGame>, seed: u64) -> Vec<Seat> {
    games
        .into_iter()
        .enumerate()
        .map(|(i, g)| {
            let g = cut(g);
            let opts = EmulatorOptions {
                speed: 1.0,
                seed: seed + i as u64,
                rotated: i % 3 == 2,
                time_control: Some((15 * 60_000, 10_000)),
                result_gesture: false,
                white_clock_right: i % 4 == 1,
                ..EmulatorOptions::default()
            };
            let mut script = emulator::script_pgn(&g, &opts).unwrap();
            let serial = format!("{:05}", 1101 + 17 * i);
            script.serial = serial.clone();
            let address = address_from_serial(&serial).unwrap();
            Seat {
                game: g,
                script,
                serial,
                address,
                name: format!("bus board {}", i + 1),
            }
        })
        .collect()
}

fn bus_config(link: &Path, seats: &[Seat]) -> BusConfig {
    let locator = Locator::Port(link.to_path_buf());
    BusConfig {
        name: "hall".into(),
        locator: locator.clone(),
        boards: seats
            .iter()
            .enumerate()
            .map(|(i, s)| BusBoardConfig {
                board: BoardConfig {
                    number: i as u32 + 1,
                    kind: BoardKind::Dgt,
                    name: s.name.clone(),
                    locator: locator.clone(),
                    clock_layout: ClockLayout::default(),
                },
                serial: s.serial.clone(),
                address: s.address,
            })
            .collect(),
    }
}

/// When each move became durable: (board, ply) -> instant.
type Durable = Arc<Mutex<HashMap<(String, u32), Instant>>>;

struct Run {
    dir: tempfile::TempDir,
    db: std::path::PathBuf,
    stop: watch::Sender<bool>,
    daemon: tokio::task::JoinHandle<anyhow::Result<()>>,
    chain: tokio::task::JoinHandle<Result<(), emulator::EmulatorError>>,
    durable: Durable,
    /// When every board started its script.
    start_at: Instant,
    done: mpsc::UnboundedReceiver<PtyEvent>,
}

/// The chain on a pty and the daemon recording it; every script starts at `start_at`.
async fn start(seats: &[Seat], faults: Option<mpsc::UnboundedReceiver<BusFault>>) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bus.db");
    let link = dir.path().join("bus");
    // Discovery (1.1 s) and a dump and a clock per board come first.
    let start_at = Instant::now() + Duration::from_millis(4000);
    let (chain, rx, _) = chain_on_pty(seats, &link, start_at, faults).await;
    let laws = LawsSetup {
        time_control: Some("15+10".parse().unwrap()),
        ..LawsSetup::default()
    };
    let mut fleet = daemon::Fleet::new(&db, Vec::new(), laws);
    fleet.buses = vec![bus_config(&link, seats)];
    let durable: Durable = Arc::default();
    let (stop, stop_rx) = watch::channel(false);
    let seen = durable.clone();
    let daemon = tokio::spawn(async move {
        daemon::record_fleet(fleet, stop_rx, None, move |board, e| {
            if let TrackerEvent::Move(m) = e {
                seen.lock()
                    .unwrap()
                    .entry((board.to_owned(), m.ply))
                    .or_insert_with(Instant::now);
            }
        })
        .await
    });
    Run {
        dir,
        db,
        stop,
        daemon,
        chain,
        durable,
        start_at,
        done: rx,
    }
}

impl Run {
    async fn wait_done(&mut self, within: Duration) {
        tokio::time::timeout(within, async {
            while let Some(e) = self.done.recv().await {
                if e == PtyEvent::ScriptDone {
                    return;
                }
            }
        })
        .await
        .expect("the scripts did not end in time");
        // The last presses reach the store.
        tokio::time::sleep(Duration::from_millis(4000)).await;
    }

    async fn stop(self) -> (tempfile::TempDir, std::path::PathBuf, Durable, Instant) {
        self.stop.send(true).unwrap();
        self.daemon.await.unwrap().unwrap();
        self.chain.abort();
        (self.dir, self.db, self.durable, self.start_at)
    }
}

/// The moves (UCI) of each board's games, in order.
fn recorded(db: &Path) -> HashMap<String, Vec<Vec<String>>> {
    let store = Store::open_read_only(db).unwrap();
    let mut out: HashMap<String, Vec<Vec<String>>> = HashMap::new();
    for g in store.games().unwrap() {
        out.entry(g.board_name.clone()).or_default().push(
            g.moves
                .iter()
                .map(|m| m.uci.clone().unwrap_or_default())
                .collect(),
        );
    }
    out
}

/// The worst delay the bus adds to a move, in ms. A press is seen by the next SEND_CHANGES of its
/// board, at most one round of every board away; a round is `n` exchanges of a 4-byte command, the
/// board's answer delay and a 6-byte empty update, and each board's clock is read every 3 s (a
/// 13-byte reply), which can fall into the same round. The mover's own update carries up to ~24
/// bytes of tokens (its lever change among them, read in place) and its clock read follows. The
/// press is recorded at the first read of the board one sensor scan after it (the squares a hand
/// still sets down after pressing come in a later update): up to one more round. Then the store's
/// commit. The scan itself (`scan_ms`) is the same on a port of its own and comes on top of this
/// for the whole latency.
fn latency_bound_ms(n: u64) -> u64 {
    let turnaround = 3 + 3; // answer delay + the host's reply-to-command turn
    let exchange = wire_ms(4) + wire_ms(6) + turnaround;
    let clock_read = wire_ms(4) + wire_ms(13) + turnaround;
    let round = n * exchange + n * clock_read;
    let own = wire_ms(24) + clock_read;
    let commit = 250;
    2 * round + own + commit
}

/// When each ply is recorded (stream ms) with `script` replayed as a board on its own port.
fn alone_at_ms(script: &BoardScript) -> HashMap<u32, u64> {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("alone.db")).unwrap();
    let laws = LawsSetup {
        time_control: Some("15+10".parse().unwrap()),
        ..LawsSetup::default()
    };
    let text = script.to_capture_text();
    boardscribe::replay::replay_reader_with(
        &mut store,
        "alone",
        "alone",
        text.as_bytes(),
        &laws,
        &mut |_, _| {},
    )
    .unwrap();
    let games = store.games().unwrap();
    assert_eq!(games.len(), 1);
    games[0].moves.iter().map(|m| (m.ply, m.at_ms)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_boards_on_one_pty_record_every_game_in_time() {
    // Its bound is on time: not beside fleet.rs's hall nor flood.rs's 10,000 sockets.
    let _alone = crate::fleet_common::ONE_ROUND_AT_A_TIME.lock().await;
    let mut games = corpus_games("Capablanca", 10);
    games.extend(corpus_games("London1851", 6));
    let seats = seats(games, 100);
    let mut run = start(&seats, None).await;
    run.wait_done(Duration::from_secs(if plies().is_some() {
        240
    } else {
        1800
    }))
    .await;
    let (_dir, db, durable, start_at) = run.stop().await;

    let got = recorded(&db);
    for s in &seats {
        let games = got.get(&s.name).map(Vec::as_slice).unwrap_or_default();
        assert_eq!(games.len(), 1, "{}: {games:?}", s.name);
        assert_eq!(games[0], uci(&s.game), "{}", s.name);
    }

    // Settled (the press that completes the ply) to durable, and against the same script
    // replayed as a board on its own port: the bus may add at most the poll-cycle bound.
    let durable = durable.lock().unwrap();
    let bound = latency_bound_ms(seats.len() as u64);
    let scan = TrackerSettings::default().scan_ms;
    let mut lat = Vec::new();
    let mut added = Vec::new();
    let mut over = Vec::new();
    for s in &seats {
        let alone = alone_at_ms(&s.script);
        for p in &s.script.plies {
            let press = p.press_ms.unwrap_or(p.end_ms);
            let settled = start_at + Duration::from_millis(press - s.script.body_start_ms);
            let at = durable[&(s.name.clone(), p.ply)];
            let ms = at.saturating_duration_since(settled).as_millis() as i64;
            let single = alone[&p.ply] as i64 - press as i64;
            if ms > (bound + scan) as i64 || ms - single > bound as i64 {
                over.push(format!(
                    "{} ply {} ({}): {ms} ms on the bus, {single} ms alone; styles {:?}",
                    s.name, p.ply, p.san, p.styles
                ));
            }
            lat.push(ms);
            added.push(ms - single);
        }
    }
    lat.sort_unstable();
    added.sort_unstable();
    let pct = |v: &[i64], q: f64| v[((v.len() - 1) as f64 * q) as usize];
    eprintln!(
        "bus latency over {} moves on {} boards: median {} ms, p90 {} ms, max {} ms (bound {} ms); \
         added by the bus over the board alone: median {} ms, p90 {} ms, max {} ms (bound {bound} ms)",
        lat.len(),
        seats.len(),
        pct(&lat, 0.5),
        pct(&lat, 0.9),
        pct(&lat, 1.0),
        bound + scan,
        pct(&added, 0.5),
        pct(&added, 0.9),
        pct(&added, 1.0),
    );
    assert!(
        over.is_empty(),
        "moves over the bound:\n{}",
        over.join("\n")
    );

    // One board's raw stream (commands to it, its replies) as a dgt-bus capture replays to
    // the same moves.
    let store = Store::open_read_only(&db).unwrap();
    let game = store
        .games()
        .unwrap()
        .into_iter()
        .find(|g| g.board_name == seats[3].name)
        .unwrap();
    let chunks = store.raw_chunks(game.board).unwrap();
    assert!(chunks.iter().any(|c| c.dir == Direction::ToBoard));
    let t0 = chunks[0].t_ms;
    let mut text = capture::capture_head("dgt-bus", &[]).unwrap();
    for c in &chunks {
        capture::push_line(&mut text, c.t_ms - t0, c.dir, &c.bytes);
    }
    let replay_db = _dir.path().join("replay.db");
    let mut replay = Store::open(&replay_db).unwrap();
    let laws = LawsSetup {
        time_control: Some("15+10".parse().unwrap()),
        ..LawsSetup::default()
    };
    boardscribe::replay::replay_reader_with(
        &mut replay,
        "bus board 4",
        "bus board 4",
        text.as_bytes(),
        &laws,
        &mut |_, _| {},
    )
    .unwrap();
    drop(replay);
    let replayed = recorded(&replay_db);
    assert_eq!(replayed["bus board 4"], vec![uci(&seats[3].game)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checksum_errors_a_board_off_the_chain_and_a_silent_board_lose_no_move() {
    let mut games = corpus_games("WorldChamp1886", 3);
    games.extend(corpus_games("tatamast22", 3));
    let seats = seats(games, 7);
    for s in &seats {
        let end = s.script.events.last().unwrap().at_ms - s.script.body_start_ms;
        eprintln!("{}: {} plies, {} ms", s.name, s.script.plies.len(), end);
    }
    let (ftx, frx) = mpsc::unbounded_channel();
    let mut run = start(&seats, Some(frx)).await;
    let noisy = seats[0].address;
    let away = seats[1].address;
    let silent = seats[2].address;
    // The silent board stops after its fourth press.
    let silent_after = seats[2].script.plies[3].press_ms.unwrap() - seats[2].script.body_start_ms;
    let away_at = seats[1].script.plies[4].start_ms - seats[1].script.body_start_ms;
    let start_at = run.start_at;
    let faults = tokio::spawn(async move {
        let mut t = start_at;
        let mut events = vec![
            (
                silent_after + 1500,
                BusFault::Drop {
                    address: silent,
                    for_ms: None,
                },
            ),
            (
                away_at,
                BusFault::Drop {
                    address: away,
                    for_ms: Some(5000),
                },
            ),
        ];
        // Checksum errors on one board, two replies in a row every 1.5 s, all game long.
        for k in 0..120u64 {
            events.push((
                k * 1500,
                BusFault::Corrupt {
                    address: noisy,
                    replies: 2,
                },
            ));
        }
        events.sort_by_key(|e| e.0);
        for (at, f) in events {
            let when = start_at + Duration::from_millis(at);
            if when > t {
                tokio::time::sleep_until(when).await;
                t = when;
            }
            if ftx.send(f).is_err() {
                return;
            }
        }
    });
    run.wait_done(Duration::from_secs(if plies().is_some() {
        240
    } else {
        1800
    }))
    .await;
    faults.abort();
    let (_dir, db, _, _) = run.stop().await;
    let got = recorded(&db);
    for (i, s) in seats.iter().enumerate() {
        let games = got.get(&s.name).map(Vec::as_slice).unwrap_or_default();
        assert_eq!(games.len(), 1, "{}: {games:?}", s.name);
        let want = uci(&s.game);
        if i == 2 {
            // Every move up to the fourth press was recorded before the board fell silent.
            assert!(games[0].len() >= 4, "{}: {:?}", s.name, games[0]);
            assert_eq!(games[0][..], want[..games[0].len()], "{}", s.name);
        } else {
            assert_eq!(games[0], want, "{}", s.name);
        }
    }
}

/// (d) The daemon killed mid-game (its task aborted: only what the store committed survives)
/// and started again after 5 s and after 20 s of missed play, four boards on the bus, one of them
/// turned round. Each restart resumes the open games from the store and reads every board's log
/// since its game's start tag (SET_START_GAME when the game began, SEND_FROM_START after the gap):
/// every game ends exact, no irregularity is raised, and the boards that played while the daemon
/// was down have their missed plies marked as recovered from memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_and_restarted_every_bus_board_is_recovered_from_its_log_since_the_start_tag() {
    // Not beside the halls of fleet.rs, flood.rs and mixed_hall.rs (a daemon of 20 to 64
    // boards, their emulators in this process): slowed by them, the clock was read late enough
    // after a board's changes for a press to land between the two, which was read as two presses
    // (a false `clock_without_move`, since fixed: `a_press_read_in_the_clock_before_its_log_
    // tokens_is_one_press`). The test keeps to itself so that its timings stay those of a hall.
    let _alone = crate::fleet_common::ONE_ROUND_AT_A_TIME.lock().await;
    let seats = seats(corpus_games("tatamast22", 4), 31);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bus.db");
    let link = dir.path().join("bus");
    let start_at = Instant::now() + Duration::from_millis(4000);
    let (chain, mut done, _) = chain_on_pty(&seats, &link, start_at, None).await;
    let laws = LawsSetup {
        time_control: Some("15+10".parse().unwrap()),
        ..LawsSetup::default()
    };
    let start_daemon = |stop: watch::Receiver<bool>| {
        let mut fleet = daemon::Fleet::new(&db, Vec::new(), laws.clone());
        fleet.buses = vec![bus_config(&link, &seats)];
        tokio::spawn(async move { daemon::record_fleet(fleet, stop, None, |_, _| {}).await })
    };
    // Killed 20 s and 45 s into play, down for 5 s and 20 s.
    let mut gaps = Vec::new();
    for (kill_s, down_s) in [(20u64, 5u64), (45, 20)] {
        let (_stop, stop_rx) = watch::channel(false);
        let run = start_daemon(stop_rx);
        tokio::time::sleep_until(start_at + Duration::from_secs(kill_s)).await;
        run.abort();
        let _ = run.await;
        gaps.push((kill_s * 1000, (kill_s + down_s) * 1000));
        tokio::time::sleep(Duration::from_secs(down_s)).await;
    }
    let (stop, stop_rx) = watch::channel(false);
    let last = start_daemon(stop_rx);
    tokio::time::timeout(Duration::from_secs(600), async {
        while let Some(e) = done.recv().await {
            if e == PtyEvent::ScriptDone {
                return;
            }
        }
    })
    .await
    .expect("the scripts did not end in time");
    tokio::time::sleep(Duration::from_millis(4000)).await;
    stop.send(true).unwrap();
    last.await.unwrap().unwrap();
    chain.abort();
    let got = recorded(&db);
    let store = Store::open_read_only(&db).unwrap();
    let games = store.games().unwrap();
    let mut marked = 0;
    for s in &seats {
        let want = uci(&s.game);
        assert_eq!(got.get(&s.name), Some(&vec![want]), "{}", s.name);
        let g = games.iter().find(|g| g.board_name == s.name).unwrap();
        let kinds: Vec<&str> = g.events.iter().map(|e| e.kind.as_str()).collect();
        let told = [
            "game_started",
            "move",
            "revised_move",
            "takeback",
            "game_ended",
        ];
        let raised: Vec<&&str> = kinds
            .iter()
            .filter(|k| !told.contains(k) && !k.starts_with("recovered_"))
            .collect();
        if !raised.is_empty() {
            // Every event but the moves, with when (from the body's start), its ply and what it
            // says, and the plies' presses: what the next look into this needs.
            let t0 = s.script.body_start_ms;
            let said: Vec<String> = g
                .events
                .iter()
                .filter(|e| e.kind != "move")
                .map(|e| format!("{} ply {:?} {}: {}", e.at_ms, e.ply, e.kind, e.detail))
                .collect();
            let presses: Vec<String> = s
                .script
                .plies
                .iter()
                .enumerate()
                .filter_map(|(i, p)| Some(format!("{}@{}", i + 1, p.press_ms? - t0)))
                .collect();
            panic!(
                "{}: {raised:?}; gaps {gaps:?} (ms of play)\n{}\npresses: {}",
                s.name,
                said.join("\n"),
                presses.join(" ")
            );
        }
        // Plies pressed while the daemon was down.
        let missed = s
            .script
            .plies
            .iter()
            .filter_map(|p| p.press_ms)
            .map(|t| t - s.script.body_start_ms)
            .filter(|t| gaps.iter().any(|(from, to)| (from..to).contains(&t)))
            .count();
        let recovered = kinds.contains(&"recovered_from_memory");
        eprintln!(
            "{}: {missed} plies pressed while down, marked: {recovered}",
            s.name
        );
        if missed > 0 {
            assert!(recovered, "{}: {kinds:?}", s.name);
            marked += 1;
        }
    }
    assert!(
        marked >= 2,
        "only {marked} boards played while the daemon was down"
    );
}

/// The boards of `seats` on one pty linked at `link`, each starting its script at `start_at`:
/// the chain's task, its events after the pty came up, and the pty's path.
async fn chain_on_pty(
    seats: &[Seat],
    link: &Path,
    start_at: Instant,
    faults: Option<mpsc::UnboundedReceiver<BusFault>>,
) -> (
    tokio::task::JoinHandle<Result<(), emulator::EmulatorError>>,
    mpsc::UnboundedReceiver<PtyEvent>,
    std::path::PathBuf,
) {
    let opts = BusChainOptions {
        link: Some(link.to_path_buf()),
        start_at: Some(start_at),
        linger_ms: None,
        ..BusChainOptions::default()
    };
    let boards: Vec<(u16, BoardScript)> = seats
        .iter()
        .map(|s| (s.address, s.script.clone()))
        .collect();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let chain =
        tokio::spawn(async move { emulator::run_bus_pty(&boards, &opts, faults, Some(tx)).await });
    loop {
        if let PtyEvent::Ready(path) = rx.recv().await.expect("the chain's pty did not come up") {
            return (chain, rx, path);
        }
    }
}

/// [`chain_on_pty`] with idle boards (their scripts start in an hour: nothing to report but
/// their clocks).
async fn idle_chain(
    seats: &[Seat],
    link: &Path,
) -> (
    tokio::task::JoinHandle<Result<(), emulator::EmulatorError>>,
    std::path::PathBuf,
) {
    let start_at = Instant::now() + Duration::from_secs(3600);
    let (chain, _, path) = chain_on_pty(seats, link, start_at, None).await;
    (chain, path)
}

/// The poll cycle on the line: a master alone (no daemon) over the emulated chain of 16 idle
/// boards; prints the milliseconds per full round (run with --nocapture). A round cannot be
/// faster than the bytes take at 9600 baud, and must not be much slower.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poll_cycle_of_sixteen_boards() {
    use boardscribe::{
        bus::BusMaster,
        device::serial,
        protocol::{
            FrameReader,
            dgt::{Command, Mode},
        },
    };
    let mut games = corpus_games("Capablanca", 10);
    games.extend(corpus_games("London1851", 6));
    let seats = seats(games, 300);
    let dir = tempfile::tempdir().unwrap();
    let (chain, path) = idle_chain(&seats, &dir.path().join("bus")).await;
    let mut port = serial::open(&path, boardscribe::kind::SerialSettings::DGT).unwrap();
    let settings = MasterSettings::default();
    let mut master = BusMaster::new(settings, seats.iter().map(|s| s.address));
    let mut reader = FrameReader::with_wire(Mode::Bus);
    let t0 = std::time::Instant::now();
    let now = || serial::now_ms();
    let mut buf = [0u8; 512];
    let mut window: Option<(std::time::Instant, u64)> = None;
    while t0.elapsed() < Duration::from_secs(12) {
        if window.is_none() && t0.elapsed() >= Duration::from_secs(4) {
            window = Some((std::time::Instant::now(), master.stats().rounds));
        }
        if master.deadline().is_some_and(|d| now() >= d) {
            master.on_timeout(now());
        }
        if let Some((cmd, address)) = master.next_command(now()) {
            serial::send(&mut port, &path, &Command::Bus { cmd, address }.to_bytes())
                .await
                .unwrap();
        }
        let wait = master
            .deadline()
            .map_or(5, |d| d.saturating_sub(now()).clamp(1, 100));
        if let Ok(Ok(n)) = tokio::time::timeout(
            Duration::from_millis(wait),
            serial::read(&mut port, &path, &mut buf),
        )
        .await
        {
            reader.push(&buf[..n]);
            while let Some(Ok(frame)) = reader.next_frame() {
                master.on_reply(now(), frame);
            }
        }
    }
    chain.abort();
    let (since, rounds_before) = window.unwrap();
    let rounds = master.stats().rounds - rounds_before;
    let per_round = since.elapsed().as_secs_f64() * 1000.0 / rounds as f64;
    let stats = master.stats();
    eprintln!(
        "poll cycle: {per_round:.1} ms per round of 16 boards ({rounds} rounds; {} commands, {} timeouts, {} bad checksums)",
        stats.commands, stats.timeouts, stats.bad_checksums
    );
    assert_eq!(stats.timeouts, 0, "an idle chain answers every command");
    assert!(master.boards().all(|(_, present)| present));
    // The line alone: a 4-byte command and a 6-byte empty update per board.
    let line = 16.0 * (4.0 + 6.0) * 10_000.0 / 9600.0;
    assert!(
        per_round >= line,
        "{per_round:.1} ms per round is faster than the line allows ({line:.1} ms)"
    );
    assert!(
        per_round <= 2.5 * line + 16.0 * 6.0,
        "{per_round:.1} ms per round"
    );
}

/// `boardscribe devices` against a chain on a pty: each configured board that answers the
/// broadcast PING, the one configured and silent, and the one answering and not configured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devices_lists_the_boards_answering_on_a_bus() {
    let seats = seats(corpus_games("Capablanca", 3), 400);
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("bus");
    // Boards 1 and 2 are on the chain and configured, the third is on the chain only; board 3
    // of the config is not on the chain.
    let (chain, _) = idle_chain(&seats, &link).await;
    let config = dir.path().join("boardscribe.toml");
    let board = |n: u32, serial: &str| {
        format!(
            "[[board]]\nnumber = {n}\nkind = \"dgt\"\nbus = \"hall-a\"\nbus_serial = \"{serial}\"\n\n"
        )
    };
    let text = format!(
        "[[bus]]\nname = \"hall-a\"\nport = \"{}\"\n\n{}{}{}",
        link.display(),
        board(1, &seats[0].serial),
        board(2, &seats[1].serial),
        board(3, "09999"),
    );
    std::fs::write(&config, text).unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(["devices", "--config"])
        .arg(&config)
        .output()
        .await
        .unwrap();
    chain.abort();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bus = stdout
        .lines()
        .skip_while(|l| !l.starts_with("bus hall-a"))
        .collect::<Vec<_>>();
    assert_eq!(
        bus,
        [
            format!("bus hall-a (port {}): 3 board(s) answer", link.display()),
            format!(
                "  board   1  serial {}  address {:>5}  answers",
                seats[0].serial, seats[0].address
            ),
            format!(
                "  board   2  serial {}  address {:>5}  answers",
                seats[1].serial, seats[1].address
            ),
            format!(
                "  board   3  serial 09999  address {:>5}  SILENT",
                address_from_serial("09999").unwrap()
            ),
            format!(
                "  not configured: serial {}  address {:>5}",
                seats[2].serial, seats[2].address
            ),
        ]
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
        "{stdout}"
    );
}

/// The fold and the tracker alone, without a pty: each of 24 whole corpus games polled every
/// `period` ms at every phase (in 50 ms steps), the board's update turned into EEPROM tokens as the
/// emulated chain does (`emulator::log_tokens`). Every game is recorded exactly, move by move with
/// no revision, and every move at most two polls and a scan after its press (the poll that reads
/// the press, then the first read one scan later).
/// What a bus board's pipeline made of a script polled in virtual time: its moves, and the
/// irregularities it raised.
struct Polled {
    moves: Vec<boardscribe::tracker::RecordedMove>,
    irregular: Vec<(u32, boardscribe::tracker::IrregularityKind)>,
}

/// Polls `script` as the master does, in virtual time, without a pty: SEND_CHANGES every
/// `period` ms from `100 + phase`, and SEND_CLK after a lever change in the changes and every
/// 3 s, `clock_lag` ms after the changes. The board goes on meanwhile: what its hands and its
/// clock did between the changes and the clock's read is in that read, and its log tokens in
/// the next changes (the board writes both clocks to its log at each lever change, dgt-notes
/// 1.11).
fn poll_in_virtual_time(script: &BoardScript, period: u64, phase: u64, clock_lag: u64) -> Polled {
    use boardscribe::{
        bus::DgtBus,
        emulator::Payload,
        pipeline::Pipeline,
        protocol::dgt::{BusReply, Frame, MessageId, bus_id, encode_ee_tokens},
        recorder::Recorder,
        store::{BoardId, Write},
        tracker::Tracker,
    };
    let reply = |id: u8, data: Vec<u8>| {
        Frame::Bus(BusReply {
            id: MessageId(id),
            address: 1,
            data,
            checksum_ok: true,
        })
    };
    let laws = LawsSetup {
        time_control: Some("15+10".parse().unwrap()),
        ..LawsSetup::default()
    };
    let t0 = script.body_start_ms;
    let body: Vec<_> = script.events.iter().filter(|e| e.at_ms >= t0).collect();
    let end = body.last().unwrap().at_ms - t0 + 5000;
    let pipeline = Pipeline::<DgtBus>::new(Tracker::new(laws.tracker_settings()), laws.referee());
    let mut p = Recorder::new(BoardId(1), pipeline);
    p.feed_split(0, reply(bus_id::BRD_DUMP, script.start_dump.0.to_vec()));
    let mut clock = script.initial_clock;
    p.feed_split(10, reply(bus_id::BWTIME, clock.0.to_vec()));
    // The board: its script played up to `until` (its clock, and its log not yet read).
    let mut next = 0;
    let mut tokens = Vec::new();
    let mut lever = false;
    let mut play_until = |until: u64,
                          clock: &mut boardscribe::protocol::dgt::BwTime,
                          tokens: &mut Vec<_>,
                          lever: &mut bool| {
        while next < body.len() && body[next].at_ms - t0 <= until {
            if let Payload::Frame(f) = &body[next].payload {
                let before = *clock;
                emulator::log_tokens(f, false, clock, tokens);
                *lever |= clock.lever_right_high() != before.lever_right_high();
            }
            next += 1;
        }
    };
    let (mut t, mut clock_read) = (100 + phase, 0);
    let mut polled = Polled {
        moves: Vec::new(),
        irregular: Vec::new(),
    };
    while t < end {
        play_until(t, &mut clock, &mut tokens, &mut lever);
        let mut data = Vec::new();
        encode_ee_tokens(&std::mem::take(&mut tokens), &mut data);
        p.feed_split(t, reply(bus_id::UPDATE, data));
        // The master reads the clock after a lever change in the changes, and every 3 s.
        if std::mem::take(&mut lever) || t >= clock_read + 3000 {
            let read_at = t + clock_lag.max(15);
            play_until(t + clock_lag, &mut clock, &mut tokens, &mut lever);
            p.feed_split(read_at, reply(bus_id::BWTIME, clock.0.to_vec()));
            clock_read = t;
        }
        p.tick(t + clock_lag.max(15) + 5);
        for w in p.take_writes() {
            match w {
                Write::Event {
                    event: TrackerEvent::Move(m),
                    ..
                } => polled.moves.push(m),
                Write::Event {
                    event:
                        TrackerEvent::Irregularity {
                            ply,
                            kind,
                            at_ms,
                            player,
                            ..
                        },
                    ..
                } => {
                    eprintln!("irregular at {at_ms} {player:?}");
                    polled.irregular.push((ply, kind))
                }
                _ => {}
            }
        }
        t += period;
    }
    polled
}

/// Whole corpus games (12 of Capablanca's, 12 of London 1851) as bus board scripts, White's
/// clock on the left or on the right.
fn whole_game_scripts(white_clock_right: bool) -> Vec<BoardScript> {
    let mut games = Vec::new();
    for file in ["Capablanca", "London1851"] {
        let text = std::fs::read_to_string(Path::new(CORPUS).join(format!("{file}.pgn"))).unwrap();
        games.extend(
            emulator::games_from_pgn(&text)
                .unwrap()
                .into_iter()
                .take(12),
        );
    }
    games
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let opts = EmulatorOptions {
                speed: 1.0,
                seed: 100 + i as u64,
                rotated: i % 3 == 2,
                time_control: Some((15 * 60_000, 10_000)),
                result_gesture: false,
                white_clock_right,
                ..EmulatorOptions::default()
            };
            emulator::script_pgn(g, &opts).unwrap()
        })
        .collect()
}

/// [`whole_game_scripts`] with White's clock on the left, then on the right: each with its
/// index and the clock's side.
fn whole_game_scripts_both_sides() -> impl Iterator<Item = (usize, &'static str, BoardScript)> {
    [false, true].into_iter().flat_map(|right| {
        let side = if right { "right" } else { "left" };
        whole_game_scripts(right)
            .into_iter()
            .enumerate()
            .map(move |(i, s)| (i, side, s))
    })
}

#[test]
fn polled_updates_record_every_whole_game_exactly_within_two_polls_and_a_scan() {
    let scan = TrackerSettings::default().scan_ms;
    let mut plies = 0;
    for (i, side, script) in whole_game_scripts_both_sides() {
        let script = &script;
        let t0 = script.body_start_ms;
        for period in [60u64, 300] {
            for phase in (0..period).step_by(50) {
                let polled = poll_in_virtual_time(script, period, phase, 0);
                let moves = &polled.moves;
                let at = format!(
                    "game {i}, White's clock {side}, a poll every {period} ms from {phase} ms"
                );
                let got: Vec<_> = moves.iter().map(|m| m.uci.clone().unwrap()).collect();
                let want: Vec<_> = script.plies.iter().map(|p| p.uci.clone()).collect();
                assert_eq!(got, want, "{at}");
                for (m, ply) in moves.iter().zip(&script.plies) {
                    let press = ply.press_ms.unwrap_or(ply.end_ms) - t0;
                    // Negative: recorded before its press, as a first move is once it settles
                    // (no clock runs yet).
                    let latency = m.at_ms as i64 - press as i64;
                    assert!(
                        latency <= (2 * period + scan + 20) as i64,
                        "{at}: ply {} ({}, {:?}) recorded {latency} ms after its press",
                        ply.ply,
                        ply.san,
                        ply.styles
                    );
                }
                plies += want.len();
            }
        }
    }
    eprintln!("{plies} plies recorded exactly and in time");
}

/// A press made between a board's changes and its clock's read shows in the clock first, and
/// its log tokens come with the next changes: one press, not two. Every whole game is recorded
/// exactly and no irregularity is raised, for clock reads that lag the changes by 20 ms to
/// 0.9 s (a host slowed by load), polled every 60 ms to every second.
#[test]
fn a_press_read_in_the_clock_before_its_log_tokens_is_one_press() {
    let mut plies = 0;
    for (i, side, script) in whole_game_scripts_both_sides() {
        let script = &script;
        // The clock is read before the board's next changes: a lag under the poll's period.
        for (period, lags) in [(60u64, [20, 45]), (300, [40, 280]), (1000, [150, 900])] {
            for (phase, clock_lag) in lags
                .into_iter()
                .enumerate()
                .map(|(k, l)| (k as u64 * 50, l))
            {
                let polled = poll_in_virtual_time(script, period, phase, clock_lag);
                let at = format!(
                    "game {i}, White's clock {side}, a poll every {period} ms from {phase} ms, the clock read {clock_lag} ms after"
                );
                let got: Vec<_> = polled
                    .moves
                    .iter()
                    .map(|m| m.uci.clone().unwrap())
                    .collect();
                let want: Vec<_> = script.plies.iter().map(|p| p.uci.clone()).collect();
                assert_eq!(got, want, "{at}");
                assert_eq!(polled.irregular, [], "{at}");
                plies += want.len();
            }
        }
    }
    eprintln!("{plies} plies recorded exactly with no irregularity");
}
