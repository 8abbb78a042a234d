//! Shared by tests/fleet.rs and benches/fleet.rs: a hall of emulated boards (DGT and togyz,
//! whole corpus games) on pseudo-terminals, one `boardscribe run --config FILE` process recording
//! them (its `--print-moves` lines timestamped as they arrive: a move is printed only once it is
//! durable), a board that sends nothing but random bytes, the frame times read back from the
//! emulators' captures, and the daemon's CPU and memory from /proc.
#![allow(dead_code)]

use std::{
    collections::HashMap,
    fs::File,
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use boardscribe::{
    capture::parse_capture,
    device::Direction,
    emulator::{
        self, BoardScript, EmulatorOptions, EventKind, Payload, PtyOptions, PtyScript, TogyzAction,
        TogyzEmulatorOptions, TogyzPayload, TogyzScript,
    },
    game::{
        GameKind,
        chess::ChessGame,
        togyz::{Rules, TogyzGame},
    },
    protocol::{dgt, tgz},
};
use rand::{RngCore, SeedableRng};
use shakmaty::CastlingMode;
use tokio::io::AsyncWriteExt;

pub const BIN: &str = env!("CARGO_BIN_EXE_boardscribe");
const CHESS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");
const CHESS_FILES: [&str; 4] = ["tatamast22", "Capablanca", "London1851", "WorldChamp1886"];
const TOGYZ: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/togyz");
const TOGYZ_FILES: [&str; 2] = ["playok-2025", "kazakh-2016-2018"];

/// One hall round at a time (fleet.rs, flood.rs): a daemon started while another test's
/// emulators run would inherit their ptys and never see those boards unplugged. Tests whose
/// bounds are on time (bus_mode.rs's sixteen boards) take it too, so that a flood of 10,000
/// sockets in the same process does not run beside them.
pub static ONE_ROUND_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The kind of a hall board: the daemon's own list.
pub use boardscribe::kind::BoardKind as Kind;

/// One emulated board of the hall and the record it must produce.
#[derive(Clone)]
pub struct HallBoard {
    pub number: u32,
    pub name: String,
    pub kind: Kind,
    pub script: PtyScript,
    /// UCI (chess) or togyz notation of every ply, in order.
    pub moves: Vec<String>,
    /// The result when the rules end the game after the last ply, else `*`.
    pub result: &'static str,
    /// Where the corpus game comes from (`file#n`).
    pub source: String,
}

impl HallBoard {
    /// `game`'s moves as [`HallBoard::moves`] writes them (UCI for chess, togyz notation).
    pub fn moves_of(&self, game: &boardscribe::store::GameRecord) -> Vec<String> {
        game.moves
            .iter()
            .map(|m| match self.kind.game() {
                boardscribe::game::Kind::Chess => m.uci.clone().unwrap_or_default(),
                boardscribe::game::Kind::Togyz => m.notation.clone(),
            })
            .collect()
    }

    /// When the script plays its last event, from the body's start (ms).
    pub fn length_ms(&self) -> u64 {
        match &self.script {
            PtyScript::Dgt(s) => s.events.last().map_or(0, |e| e.at_ms) - s.body_start_ms,
            PtyScript::Togyz(s) => s.events.last().map_or(0, |e| e.at_ms) - s.body_start_ms,
            other => other.vendor().map_or(0, |v| v.length_ms()),
        }
    }
}

/// The result `G`'s rules give after `moves` from the start, `*` while the game goes on.
fn outcome<G: GameKind>(moves: &[G::Move]) -> &'static str {
    let mut pos = G::start();
    for mv in moves {
        pos = G::play(&pos, mv);
    }
    let mut next = Vec::new();
    G::successors(&pos, G::reading_key(&G::reading(&pos)), &mut next);
    G::outcome(&pos, !next.is_empty()).map_or("*", |(o, _)| o.as_pgn())
}

/// Whether the Laws end `g` before its last move: a fivefold repetition or 75 moves without a
/// capture or a pawn move (9.6). Older games played on: such a game is not one the daemon
/// records whole.
pub fn cut_by_the_laws(g: &emulator::PgnGame) -> bool {
    use shakmaty::{EnPassantMode, Position, fen::Epd};
    let mut pos = shakmaty::Chess::default();
    let mut seen: HashMap<String, u32> = HashMap::new();
    g.moves.iter().enumerate().any(|(i, m)| {
        pos = pos.clone().play(*m).expect("a legal corpus move");
        let key = Epd::from_position(&pos, EnPassantMode::Legal).to_string();
        let n = seen.entry(key).or_insert(0);
        *n += 1;
        i + 1 < g.moves.len() && (*n >= 5 || pos.halfmoves() >= 150)
    })
}

/// `chess` DGT boards then `togyz` pit boards, numbered from 1, playing whole corpus games
/// (standard start; the chess games taken in turn from each file, the togyz games from each file)
/// whose script at `speed` lasts at most `max_ms`; a quarter of the chess boards play games the
/// rules end (mate or stalemate), if the corpus has them. Every other board lies turned round.
pub fn hall(chess: usize, togyz: usize, speed: f64, max_ms: u64) -> Vec<HallBoard> {
    let mut out = Vec::new();
    let mut files: Vec<Vec<(String, emulator::PgnGame)>> = CHESS_FILES
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(Path::new(CHESS).join(format!("{f}.pgn")))
                .unwrap_or_else(|e| panic!("{f}: {e}"));
            emulator::games_from_pgn(&text)
                .unwrap()
                .into_iter()
                .enumerate()
                .filter(|(_, g)| {
                    g.moves.len() >= 20
                        && !g.tags.iter().any(|(k, _)| k.eq_ignore_ascii_case("FEN"))
                })
                .filter(|(_, g)| !cut_by_the_laws(g))
                .map(|(n, g)| (format!("{f}#{}", n + 1), g))
                .collect()
        })
        .collect();
    let decided = |g: &emulator::PgnGame| outcome::<ChessGame>(&g.moves) != "*";
    // The games the rules end first, for a quarter of the boards; then any, in turn.
    let mut order: Vec<(String, emulator::PgnGame)> = Vec::new();
    for f in &mut files {
        let (ended, rest): (Vec<_>, Vec<_>) = f.drain(..).partition(|(_, g)| decided(g));
        order.extend(ended.into_iter().take(chess / 4 / CHESS_FILES.len() + 1));
        *f = rest;
    }
    let mut iters: Vec<_> = files.into_iter().map(Vec::into_iter).collect();
    'fill: loop {
        let mut any = false;
        for it in &mut iters {
            if let Some(g) = it.next() {
                order.push(g);
                any = true;
            }
            if order.len() > chess * 40 {
                break 'fill;
            }
        }
        if !any {
            break;
        }
    }
    for (source, game) in order {
        if out.len() == chess {
            break;
        }
        let i = out.len();
        let opts = EmulatorOptions {
            speed,
            seed: 7_000 + i as u64,
            rotated: i % 2 == 1,
            time_control: Some((15 * 60_000, 10_000)),
            result_gesture: false,
            ..EmulatorOptions::default()
        };
        let Ok(script) = emulator::script_pgn(&game, &opts) else {
            continue;
        };
        let board = HallBoard {
            number: i as u32 + 1,
            name: format!("chess-{}", i + 1),
            kind: Kind::Dgt,
            moves: game
                .moves
                .iter()
                .map(|m| m.to_uci(CastlingMode::Standard).to_string())
                .collect(),
            result: outcome::<ChessGame>(&game.moves),
            script: PtyScript::Dgt(script),
            source,
        };
        if board.length_ms() <= max_ms {
            out.push(board);
        }
    }
    assert_eq!(out.len(), chess, "not enough chess games short enough");
    let mut games = Vec::new();
    for f in TOGYZ_FILES {
        let text = std::fs::read_to_string(Path::new(TOGYZ).join(format!("{f}.pgn")))
            .unwrap_or_else(|e| panic!("{f}: {e}"));
        let records = emulator::togyz_records(&text, Rules::KYRGYZ).unwrap();
        games.push(
            records
                .into_iter()
                .enumerate()
                .filter(|(_, (_, moves))| moves.len() >= 20)
                .map(move |(n, r)| (format!("{f}#{}", n + 1), r))
                .collect::<Vec<_>>()
                .into_iter(),
        );
    }
    let mut t = 0usize;
    while t < togyz {
        let mut any = false;
        for it in &mut games {
            let Some((source, (record, moves))) = it.next() else {
                continue;
            };
            any = true;
            if t == togyz {
                break;
            }
            let number = (chess + t) as u32 + 1;
            let opts = TogyzEmulatorOptions {
                speed,
                seed: 9_000 + t as u64,
                rotated: t % 2 == 1,
                ..TogyzEmulatorOptions::default()
            };
            let Ok(script) = emulator::script_togyz(&moves, &opts) else {
                continue;
            };
            let board = HallBoard {
                number,
                name: format!("togyz-{}", t + 1),
                kind: Kind::Togyz,
                moves: record.moves.iter().map(|m| m.text.to_string()).collect(),
                result: outcome::<TogyzGame>(&moves),
                script: PtyScript::Togyz(script),
                source,
            };
            if board.length_ms() <= max_ms {
                out.push(board);
                t += 1;
            }
        }
        assert!(any, "not enough togyz games short enough");
    }
    out
}

/// `hall`'s boards as [`config_text`] lists them, each at the link `dir/<name>` its emulator
/// makes.
pub fn hall_entries(dir: &Path, hall: &[HallBoard]) -> Vec<(u32, &'static str, String, PathBuf)> {
    hall.iter()
        .map(|b| (b.number, b.kind.name(), b.name.clone(), dir.join(&b.name)))
        .collect()
}

/// Whether `daemon` printed the last move of every board of `hall` (it is durable).
pub fn printed_all(daemon: &Daemon, hall: &[HallBoard]) -> bool {
    let printed = daemon.printed.lock().unwrap();
    hall.iter().all(|b| {
        printed
            .iter()
            .any(|(n, ply, _)| *n == b.name && *ply as usize == b.moves.len())
    })
}

/// Waits (at most `within`) until `daemon` printed the last move of every board of `hall`.
pub async fn wait_printed_all(daemon: &Daemon, hall: &[HallBoard], within: Duration) {
    let waited = Instant::now();
    while !printed_all(daemon, hall) && waited.elapsed() < within {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The config of a hall: `boards` as (number, kind, name, port); `extra` is appended as is.
pub fn config_text(db: &Path, http_port: u16, boards: &[(u32, &str, String, PathBuf)]) -> String {
    let mut s = format!(
        "database = \"{}\"\n\n[tournament]\nevent = \"Fleet Open\"\nsite = \"Test Hall\"\n\
         round = 1\ntime_control = \"15+10\"\n\n[http]\nbind = \"127.0.0.1:{http_port}\"\n",
        db.display()
    );
    for (number, kind, name, port) in boards {
        s.push_str(&format!(
            "\n[[board]]\nnumber = {number}\nkind = \"{kind}\"\nname = \"{name}\"\nport = \"{}\"\n",
            port.display()
        ));
    }
    s
}

/// A bench's knob: the environment variable `name`, else `default`.
pub fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not valid")),
        Err(_) => default,
    }
}

/// The load averages (1, 5, 15 minutes), as /proc/loadavg gives them.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The pty options of hall board `i` writing its capture into `dir`; the boards whose index is
/// in `unplug` are unplugged at a ply between 8 and 14 for `unplug_ms`.
pub fn pty_options(dir: &Path, board: &HallBoard, unplug: bool, unplug_ms: u64) -> PtyOptions {
    PtyOptions {
        link: Some(dir.join(&board.name)),
        capture_out: Some(dir.join(format!("{}.capture", board.name))),
        unplug_at_ply: unplug.then_some(8 + board.number % 7),
        unplug_for_ms: unplug_ms,
        ..PtyOptions::default()
    }
}

/// A "board" that sends nothing but random bytes, as fast as its reader takes them (or at most
/// `bytes_per_s`), on a pty of its own thread, behind the symlink `link`.
pub struct Garbage {
    stop: Arc<AtomicBool>,
    pub sent: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Garbage {
    pub fn start(link: &Path, bytes_per_s: Option<u64>) -> Garbage {
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let link = link.to_owned();
        let thread = {
            let (stop, sent) = (stop.clone(), sent.clone());
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    use tokio_serial::SerialPort;
                    let (mut master, slave) = tokio_serial::SerialStream::pair().unwrap();
                    let path = slave.name().unwrap();
                    std::os::unix::fs::symlink(&path, &link).unwrap();
                    ready_tx.send(()).unwrap();
                    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(666);
                    let mut buf = [0u8; 1024];
                    let start = Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        rng.fill_bytes(&mut buf);
                        let wrote = tokio::time::timeout(
                            Duration::from_millis(100),
                            master.write_all(&buf),
                        )
                        .await;
                        if matches!(wrote, Ok(Ok(()))) {
                            let total = sent.fetch_add(buf.len() as u64, Ordering::Relaxed);
                            if let Some(rate) = bytes_per_s {
                                let due = Duration::from_secs_f64(total as f64 / rate as f64);
                                if let Some(wait) = due.checked_sub(start.elapsed()) {
                                    tokio::time::sleep(wait).await;
                                }
                            }
                        } else {
                            // Nobody reads: drop what piled up, as a line would.
                            let _ = slave.clear(tokio_serial::ClearBuffer::Input);
                        }
                    }
                    drop(slave);
                });
            })
        };
        ready_rx.recv().unwrap();
        Garbage {
            stop,
            sent,
            thread: Some(thread),
        }
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for Garbage {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A `--print-moves` line: board name, ply, when it arrived.
pub type Printed = (String, u32, Instant);

/// The `run` process: its log file, its printed moves; killed (and its log shown) if still
/// running when dropped.
pub struct Daemon {
    child: Option<Child>,
    pub log: PathBuf,
    pub printed: Arc<Mutex<Vec<Printed>>>,
    pub started: Instant,
}

impl Daemon {
    pub fn start(dir: &Path, config: &Path) -> Daemon {
        Daemon::start_limited(dir, config, None)
    }

    /// [`Daemon::start`] with `RLIMIT_NOFILE` set to `nofile` (soft and hard, as the unit's
    /// `LimitNOFILE` does) through util-linux's `prlimit`, which then runs the daemon itself.
    pub fn start_limited(dir: &Path, config: &Path, nofile: Option<u64>) -> Daemon {
        let log = dir.join("daemon.log");
        let err = File::create(&log).unwrap();
        let started = Instant::now();
        let mut command = match nofile {
            Some(n) => {
                let mut c = Command::new("prlimit");
                c.arg(format!("--nofile={n}:{n}")).arg("--").arg(BIN);
                c
            }
            None => Command::new(BIN),
        };
        let mut child = command
            .args(["run", "--print-moves", "--config", config.to_str().unwrap()])
            .env("BOARDSCRIBE_LOG", "boardscribe=info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .unwrap();
        let printed = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().unwrap();
        {
            let printed = printed.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { return };
                    let at = Instant::now();
                    if let Some((board, ply)) = parse_move_line(&line) {
                        printed.lock().unwrap().push((board, ply, at));
                    }
                }
            });
        }
        Daemon {
            child: Some(child),
            log,
            printed,
            started,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, then the exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        let child = self.child.as_mut().unwrap();
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                self.child = None;
                return status;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no exit after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            let log = self.log();
            let tail = &log[log.len().saturating_sub(20_000)..];
            eprintln!("--- daemon log (tail) ---\n{tail}");
        }
    }
}

/// `board: 12. Nf3`, `board: 12... Nf6` (daemon::print_event) as (board, ply).
fn parse_move_line(line: &str) -> Option<(String, u32)> {
    let (board, rest) = line.rsplit_once(": ")?;
    let (n, _) = rest.split_once(' ')?;
    let (num, black) = match n.strip_suffix("...") {
        Some(num) => (num, true),
        None => (n.strip_suffix('.')?, false),
    };
    let num: u32 = num.parse().ok()?;
    Some((board.to_owned(), 2 * num - u32::from(!black)))
}

/// An HTTP GET of `path` on 127.0.0.1:`port`: the body, if the answer is 200.
pub fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).ok()?;
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return None;
    }
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        let mut plain = String::new();
        let mut rest = body;
        while let Some((size, tail)) = rest.split_once("\r\n") {
            let n = usize::from_str_radix(size.trim(), 16).ok()?;
            if n == 0 {
                break;
            }
            plain.push_str(tail.get(..n)?);
            rest = tail.get(n + 2..)?;
        }
        return Some(plain);
    }
    Some(body.to_owned())
}

/// A sample of a Prometheus text exposition, by metric name (without labels).
pub fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
}

/// User + system CPU seconds of process `pid` so far (/proc/PID/stat; 100 ticks a second).
pub fn cpu_secs(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which is in parentheses).
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 (1-based); `after` starts at field 3.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// VmRSS and VmHWM of process `pid`, in KiB.
pub fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let get = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (get("VmRSS:"), get("VmHWM:"))
}

/// Per ply (index ply - 1): when the frame completing it was written, as candidates: the
/// press, and the ply's last board frame.
#[derive(Clone, Default, Debug)]
pub struct Written {
    pub updates: Vec<Instant>,
    pub press: Option<Instant>,
}

/// A script frame as the capture matcher needs it: due (ms from the body start), bytes, and
/// what it is (`Some((ply, is_press))` for a ply's board frame or press).
type Due = (u64, Vec<u8>, Option<(u32, bool)>);

fn dues(script: &PtyScript) -> Vec<Due> {
    match script {
        PtyScript::Dgt(s) => dgt_dues(s),
        PtyScript::Togyz(s) => togyz_dues(s),
        other => other.vendor().map_or_else(Vec::new, |v| {
            v.reports()
                .into_iter()
                .map(|(at, bytes, ply)| (at, bytes, ply.map(|p| (p, false))))
                .collect()
        }),
    }
}

fn dgt_dues(s: &BoardScript) -> Vec<Due> {
    let presses: HashMap<u64, u32> = s
        .plies
        .iter()
        .filter_map(|p| Some((p.press_ms?, p.ply)))
        .collect();
    s.events
        .iter()
        .filter(|e| e.kind != EventKind::Handshake)
        .filter_map(|e| {
            let Payload::Frame(f) = &e.payload else {
                return None;
            };
            let what = match (e.kind, f) {
                (EventKind::Move, dgt::Frame::FieldUpdate { .. }) => Some((e.ply, false)),
                (EventKind::Clock, dgt::Frame::BwTime(_)) => {
                    presses.get(&e.at_ms).map(|&ply| (ply, true))
                }
                _ => None,
            };
            Some((e.at_ms - s.body_start_ms, f.to_bytes(), what))
        })
        .collect()
}

/// A board that reports whole positions (ChessLink, Chessnut): each report of a ply's hands.
fn togyz_dues(s: &TogyzScript) -> Vec<Due> {
    s.events
        .iter()
        .filter(|e| e.kind != EventKind::Handshake)
        .filter_map(|e| {
            let TogyzPayload::Frame(f) = &e.payload else {
                return None;
            };
            let what = match (e.action, f) {
                (TogyzAction::Press, tgz::Frame::BwTime(_)) => Some((e.ply, true)),
                (
                    TogyzAction::Lift
                    | TogyzAction::Sow
                    | TogyzAction::Rest
                    | TogyzAction::Capture
                    | TogyzAction::Carry
                    | TogyzAction::Marker,
                    _,
                ) => Some((e.ply, false)),
                _ => None,
            };
            Some((e.at_ms - s.body_start_ms, f.to_bytes(), what))
        })
        .collect()
}

/// Matches the script's frames in order to the capture's board-to-host lines (as
/// benches/relay.rs does): when each ply's frames were written. `ready` is the capture's time
/// zero. The body starts at the host's first request for updates.
pub fn written(script: &PtyScript, capture: &str, ready: Instant) -> Vec<Written> {
    written_late(script, capture, ready).0
}

/// [`written`], and how late (ms) the emulator wrote each frame it matched.
pub fn written_late(script: &PtyScript, capture: &str, ready: Instant) -> (Vec<Written>, Vec<f64>) {
    let mut late = Vec::new();
    let plies = match script {
        PtyScript::Dgt(s) => s.plies.len(),
        PtyScript::Togyz(s) => s.plies.len(),
        other => other.vendor().map_or(0, |v| v.plies()),
    };
    let mut out = vec![Written::default(); plies];
    let Ok(cap) = parse_capture(capture) else {
        return (out, late);
    };
    // The host's command that switches the board's reports on: the script's time zero.
    let asks = |bytes: &[u8]| match script {
        PtyScript::Dgt(_) => bytes.iter().any(|b| {
            [
                dgt::cmd::SEND_UPDATE,
                dgt::cmd::SEND_UPDATE_NICE,
                dgt::cmd::SEND_UPDATE_BRD,
            ]
            .contains(b)
        }),
        PtyScript::Togyz(_) => bytes
            .iter()
            .any(|b| [tgz::cmd::SEND_UPDATE_BRD, tgz::cmd::SEND_UPDATE_NICE].contains(b)),
        other => other.vendor().is_some_and(|v| v.switches_reports_on(bytes)),
    };
    let Some(origin) = cap
        .chunks
        .iter()
        .find(|c| c.dir == Direction::ToBoard && asks(&c.bytes))
        .map(|c| c.t_ms as i64)
    else {
        return (out, late);
    };
    let sent: Vec<_> = cap
        .chunks
        .iter()
        .filter(|c| c.dir == Direction::FromBoard)
        .collect();
    let mut j = 0;
    for (at, bytes, what) in dues(script) {
        let due = origin + at as i64;
        let found = sent[j..].iter().take(400).position(|c| {
            let t = c.t_ms as i64;
            c.bytes == bytes && t >= due - 1 && t <= due + 5_000
        });
        let Some(k) = found else { continue };
        let c = sent[j + k];
        j += k + 1;
        late.push((c.t_ms as i64 - due).max(0) as f64);
        let t = ready + Duration::from_millis(c.t_ms);
        if let Some((ply, press)) = what
            && let Some(w) = (ply as usize).checked_sub(1).and_then(|i| out.get_mut(i))
        {
            if press {
                w.press.get_or_insert(t);
            } else {
                w.updates.push(t);
            }
        }
    }
    (out, late)
}

/// Frame-to-durable latencies in ms of the moves `printed` for `board`, measured from the frame
/// that completed each (its press, or its last board frame before it was recorded as settled),
/// as benches/relay.rs does; the count of moves whose frames were not found besides.
pub fn latencies(written: &[Written], printed: &[(u32, Instant)]) -> (Vec<f64>, usize) {
    let mut out = Vec::new();
    let mut unmatched = 0;
    let mut seen = std::collections::HashSet::new();
    for (ply, durable) in printed {
        if !seen.insert(*ply) {
            continue;
        }
        let w = written.get((*ply as usize).wrapping_sub(1));
        let press = w.and_then(|w| w.press).filter(|t| t <= durable);
        let settle = w.and_then(|w| w.updates.iter().rev().find(|t| *t <= durable).copied());
        match press.or(settle) {
            Some(frame) => out.push((*durable - frame).as_secs_f64() * 1000.0),
            None => unmatched += 1,
        }
    }
    (out, unmatched)
}

/// p50, p99 and max of `v`.
pub fn quantiles(v: &mut [f64]) -> (f64, f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1];
    (q(0.5), q(0.99), v[v.len() - 1])
}
