//! Restarts and unplugs in time trouble, through real processes only: each trial starts four
//! `boardscribe emulate` processes (corpus games of 30 to 70 plies, hands at speeds 0.1 to 1.0, the
//! second with White's clock on the right) and one `boardscribe run` on their links, kills the
//! daemon -9 one to three times at seeded moments and starts it again after 1 to 60 s, while one
//! board is unplugged for 1 to 30 s, half the time losing its memory. Nothing in the test touches a
//! port: no holder fd, no ioctl, no pipeline in this process; what the daemon recorded is read from
//! its database.
//!
//! What must hold: a board with its memory is recorded exactly, in one game row; a board whose
//! memory was lost is recorded exactly, or raises `thread_lost` within 5 s of being heard again
//! and is recorded exactly once the arbiter resumes it (the admin API, with the moves from the
//! scoresheets) or by itself once the board fits again; no record ever holds a move that was not
//! played. Each restart's catch-up (from the new process starting to the last ply played before
//! it being stored) is measured and printed.
//!
//! CI runs a short set of trials, side by side (each trial is its own harness: its daemon, its
//! boards, its database), with blitz hands (0.1 to 0.3) and outages of up to 20 s.
//! `BOARDSCRIBE_RESTART_TRIALS=N` runs N trials drawn from the full ranges (the full set: 64),
//! `BOARDSCRIBE_RESTART_PARALLEL=P` P at a time (default 3), `BOARDSCRIBE_SEED_OFFSET` other
//! seeds, `BOARDSCRIBE_RESTART_SEED=S` only the trial of seed S; `BOARDSCRIBE_SHOW_TRIALS=1`
//! prints each trial's plan and outcome, `BOARDSCRIBE_BIN` runs another build of the binary.

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::Stdio,
    sync::Arc,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use boardscribe::{
    emulator::{self, EmulatorOptions, PgnGame},
    store::Store,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use shakmaty::CastlingMode;
use tokio::{
    process::{Child, Command},
    sync::Semaphore,
    time::sleep,
};

const BIN: &str = env!("CARGO_BIN_EXE_boardscribe");

/// The binary under test: this build's, or `BOARDSCRIBE_BIN` (a copy, so that a long full set
/// keeps one binary while the tree is rebuilt).
fn bin() -> String {
    std::env::var("BOARDSCRIBE_BIN").unwrap_or_else(|_| BIN.to_owned())
}
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");
const TOKEN: &str = "restart-trials-admin-token-0123456789";

/// How long a board heard again may show what the record does not reach before `thread_lost`.
const LOST_WITHIN_MS: u64 = 5_000;

/// Trials CI runs (each about two minutes of real time, side by side).
const CI_TRIALS: u64 = 3;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Every corpus game of 30 to 70 plies: (file, 1-based number, game).
fn corpus() -> Vec<(String, usize, PgnGame)> {
    let mut out = Vec::new();
    for (stem, games) in crate::corpus_common::chess_files() {
        for (i, g) in games.into_iter().enumerate() {
            if (30..=70).contains(&g.moves.len()) && g.tag("FEN").is_none() {
                out.push((stem.clone(), i + 1, g));
            }
        }
    }
    out
}

/// One board of a trial.
#[derive(Clone, Debug)]
struct BoardPlan {
    file: String,
    game: usize,
    speed: f64,
    seed: u64,
    expected: Vec<String>,
    /// Each ply's end, in ms after the script starts (the host asking for updates).
    ply_ends: Vec<u64>,
    /// When the last event is played, in ms after the script starts.
    duration_ms: u64,
    unplug: Option<Unplug>,
    /// White's clock is the right-hand one (`--white-clock-right`).
    white_clock_right: bool,
}

#[derive(Clone, Copy, Debug)]
struct Unplug {
    at_ply: u32,
    for_ms: u64,
    memory_lost: bool,
}

/// A kill -9 of the daemon `after_ms` after its last start, and the time it stays down.
#[derive(Clone, Copy, Debug)]
struct Kill {
    after_ms: u64,
    down_ms: u64,
}

#[derive(Clone, Debug)]
struct Plan {
    seed: u64,
    boards: Vec<BoardPlan>,
    kills: Vec<Kill>,
}

/// The ranges trials are drawn from.
#[derive(Clone, Copy, Debug)]
struct Ranges {
    /// Hands' speed, in hundredths.
    speed: (u32, u32),
    /// How long the daemon stays down, in ms.
    down_ms: (u64, u64),
    /// How long a board stays unplugged, in ms.
    unplug_ms: (u64, u64),
}

/// The full set: speeds 0.1 to 1.0, restarts after 1 to 60 s, unplugs of 1 to 30 s.
const FULL: Ranges = Ranges {
    speed: (10, 100),
    down_ms: (1_000, 60_000),
    unplug_ms: (1_000, 30_000),
};

/// CI's short set: blitz hands (games of one to two minutes), shorter outages.
const SHORT: Ranges = Ranges {
    speed: (10, 30),
    down_ms: (1_000, 20_000),
    unplug_ms: (1_000, 15_000),
};

fn plan(seed: u64, games: &[(String, usize, PgnGame)], r: Ranges) -> Plan {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7265_7374_6172_7473);
    let unplugged = rng.random_range(0..4usize);
    let boards: Vec<BoardPlan> = (0..4)
        .map(|i| {
            let (file, game, pgn) = &games[rng.random_range(0..games.len())];
            let speed = (rng.random_range(r.speed.0..=r.speed.1) as f64) / 100.0;
            let board_seed = rng.random_range(0..1_000_000u64);
            // The second board's clock has White's time on the right (Black's choice, Article
            // 6.4): a daemon started again learns which clock is whose anew.
            let white_clock_right = i == 1;
            let opts = EmulatorOptions {
                speed,
                seed: board_seed,
                white_clock_right,
                ..EmulatorOptions::default()
            };
            let script = emulator::script_pgn(pgn, &opts).unwrap();
            let start = script.body_start_ms;
            let ply_ends: Vec<u64> = script
                .plies
                .iter()
                .map(|p| p.end_ms.saturating_sub(start))
                .collect();
            let duration_ms = script
                .events
                .last()
                .map_or(0, |e| e.at_ms.saturating_sub(start));
            let unplug = (i == unplugged).then(|| Unplug {
                at_ply: rng.random_range(4..pgn.moves.len() as u32 - 4),
                for_ms: rng.random_range(r.unplug_ms.0..=r.unplug_ms.1),
                // Every other trial: the unplugged board comes back without its memory.
                memory_lost: seed % 2 == 1,
            });
            BoardPlan {
                file: file.clone(),
                game: *game,
                speed,
                seed: board_seed,
                expected: pgn
                    .moves
                    .iter()
                    .map(|m| m.to_uci(CastlingMode::Standard).to_string())
                    .collect(),
                ply_ends,
                duration_ms,
                unplug,
                white_clock_right,
            }
        })
        .collect();
    let longest = boards.iter().map(|b| b.duration_ms).max().unwrap_or(0);
    let n = rng.random_range(1..=3u32);
    let mut kills = Vec::new();
    let mut at = 0;
    for _ in 0..n {
        // Kills while the games are on: spread over their first four fifths.
        let room = (longest * 4 / 5).saturating_sub(at).max(4_000) / u64::from(n);
        let after_ms = rng.random_range(2_000..=room.max(2_001));
        let down_ms = rng.random_range(r.down_ms.0..=r.down_ms.1);
        at += after_ms + down_ms;
        kills.push(Kill { after_ms, down_ms });
    }
    Plan {
        seed,
        boards,
        kills,
    }
}

/// A child process that is killed when dropped (a failed trial leaves nothing running).
struct Proc {
    child: Child,
    log: PathBuf,
}

impl Proc {
    fn start(log: PathBuf, args: &[String]) -> Proc {
        let out = File::options()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap();
        let err = out.try_clone().unwrap();
        let child = Command::new(bin())
            .args(args)
            .env("BOARDSCRIBE_LOG", "boardscribe=info")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        Proc { child, log }
    }

    async fn kill_hard(&mut self) {
        let _already_gone = self.child.kill().await;
    }
}

/// Timestamps of the daemon's log lines for `board` that contain `what`, in ms since the epoch.
fn log_times(log: &str, board: &str, what: &str) -> Vec<u64> {
    let span = format!("board={board} ");
    let span_end = format!("board={board}}}");
    log.lines()
        .filter(|l| (l.contains(&span) || l.contains(&span_end)) && l.contains(what))
        .filter_map(|l| l.split_whitespace().next().and_then(rfc3339_ms))
        .collect()
}

/// `2026-12-03T19:12:06.703726Z` in ms since the epoch.
fn rfc3339_ms(s: &str) -> Option<u64> {
    let (date, time) = s.strip_suffix('Z')?.split_once('T')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut t = hms.split(':').map(|x| x.parse::<i64>().ok());
    let (h, mi, sec) = (t.next()??, t.next()??, t.next()??);
    let ms: i64 = format!("{frac:0<3}")[..3].parse().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(((days * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms).ok()
}

/// `export --format json`, as a fresh process.
async fn export(db: &Path) -> Value {
    let out = Command::new(bin())
        .args(["export", "--db", db.to_str().unwrap(), "--format", "json"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What one trial measured.
#[derive(Debug, Default)]
struct Outcome {
    /// Per restart and board: ms from the new process starting to the last ply played before
    /// it being stored.
    catch_up_ms: Vec<u64>,
    /// Memory-lost boards: exact by themselves, or after `thread_lost` and the arbiter.
    lost_exact: usize,
    lost_resumed: usize,
    failures: Vec<String>,
}

struct Trial {
    plan: Plan,
    dir: tempfile::TempDir,
    links: Vec<PathBuf>,
    db: PathBuf,
    http: String,
    run_args: Vec<String>,
}

impl Trial {
    fn new(plan: Plan) -> Trial {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let links: Vec<PathBuf> = (1..=4).map(|i| d.join(format!("b{i}"))).collect();
        let db = d.join("record.db");
        let token = d.join("admin.token");
        std::fs::write(&token, TOKEN).unwrap();
        let port = crate::ports::free();
        let http = format!("127.0.0.1:{port}");
        let mut run_args: Vec<String> = vec![
            "run".into(),
            "--db".into(),
            db.display().to_string(),
            "--http".into(),
            http.clone(),
            "--admin-token-file".into(),
            token.display().to_string(),
            "--time-control".into(),
            "15+10".into(),
        ];
        for l in &links {
            run_args.extend(["--port".into(), l.display().to_string()]);
        }
        Trial {
            plan,
            dir,
            links,
            db,
            http,
            run_args,
        }
    }

    fn board(&self, i: usize) -> String {
        self.links[i].display().to_string()
    }

    fn emulate(&self, i: usize) -> Proc {
        let b = &self.plan.boards[i];
        let pgn = Path::new(CORPUS).join(format!("{}.pgn", b.file));
        let mut args: Vec<String> = vec![
            "emulate".into(),
            "--pgn".into(),
            pgn.display().to_string(),
            "--game".into(),
            b.game.to_string(),
            "--speed".into(),
            b.speed.to_string(),
            "--seed".into(),
            b.seed.to_string(),
            "--link".into(),
            self.links[i].display().to_string(),
        ];
        if b.white_clock_right {
            args.push("--white-clock-right".into());
        }
        if let Some(u) = b.unplug {
            args.extend([
                "--unplug-at-ply".into(),
                u.at_ply.to_string(),
                "--unplug-for-ms".into(),
                u.for_ms.to_string(),
            ]);
            if u.memory_lost {
                args.push("--memory-lost-on-unplug".into());
            }
        }
        Proc::start(
            self.dir.path().join(format!("emulate-b{}.log", i + 1)),
            &args,
        )
    }

    fn daemon_log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("run.log")).unwrap_or_default()
    }

    /// When each board's script started: its first connection (the script starts as the host
    /// asks for updates, a few ms later).
    fn script_starts(&self) -> Vec<Option<u64>> {
        let log = self.daemon_log();
        (0..4)
            .map(|i| {
                log_times(&log, &self.board(i), "board connected")
                    .first()
                    .copied()
            })
            .collect()
    }

    /// Plies board `i` had played at `at` (ms since the epoch).
    fn played_at(&self, i: usize, start: u64, at: u64) -> usize {
        let t = at.saturating_sub(start);
        self.plan.boards[i]
            .ply_ends
            .iter()
            .filter(|&&e| e < t)
            .count()
    }

    /// Each board's games as the daemon stored them, their moves in UCI (none while the
    /// database is not there yet): one read of the database.
    fn stored(&self) -> Vec<Vec<Vec<String>>> {
        let mut boards = vec![Vec::new(); 4];
        let Ok(store) = Store::open_read_only(&self.db) else {
            return boards;
        };
        for g in store.games().unwrap_or_default() {
            if let Some(i) = (0..4).find(|&i| g.board_name == self.board(i)) {
                boards[i].push(g.moves.iter().filter_map(|m| m.uci.clone()).collect());
            }
        }
        boards
    }

    /// The record must never hold a move that was not played.
    fn check_prefix(&self, stored: &[Vec<Vec<String>>], out: &mut Outcome) {
        for (i, games) in stored.iter().enumerate() {
            let b = &self.plan.boards[i];
            for g in games {
                let n = g.len().min(b.expected.len());
                if g.len() > b.expected.len() || g[..n] != b.expected[..n] {
                    let msg = format!(
                        "b{}: a move never played: {:?} vs {:?}",
                        i + 1,
                        g,
                        b.expected
                    );
                    if !out.failures.contains(&msg) {
                        out.failures.push(msg);
                    }
                }
            }
        }
    }

    async fn run(self) -> Outcome {
        let mut out = Outcome::default();
        let mut emulators: Vec<Proc> = (0..4).map(|i| self.emulate(i)).collect();
        // The daemon is started as soon as the links are there.
        let t = Instant::now();
        while !self.links.iter().all(|l| l.exists()) {
            assert!(t.elapsed() < Duration::from_secs(20), "no links");
            sleep(Duration::from_millis(20)).await;
        }
        let log = self.dir.path().join("run.log");
        let mut daemon = Proc::start(log.clone(), &self.run_args);
        for k in &self.plan.kills {
            self.watch_for(Duration::from_millis(k.after_ms), &mut out)
                .await;
            daemon.kill_hard().await;
            let stored: Vec<usize> = self
                .stored()
                .iter()
                .map(|games| games.last().map_or(0, Vec::len))
                .collect();
            sleep(Duration::from_millis(k.down_ms)).await;
            let restarted = now_ms();
            daemon = Proc::start(log.clone(), &self.run_args);
            self.catch_up(restarted, &stored, &mut out).await;
        }
        // Until every game has been played and recorded (or lost, and resumed).
        let starts = self.script_starts();
        let end = (0..4)
            .filter_map(|i| starts[i].map(|s| s + self.plan.boards[i].duration_ms))
            .max()
            .unwrap_or_else(now_ms);
        let deadline = end.max(now_ms()) + 60_000;
        let mut resumed = [false; 4];
        loop {
            let stored = self.stored();
            self.check_prefix(&stored, &mut out);
            let mut done = true;
            for (i, games) in stored.iter().enumerate() {
                let b = &self.plan.boards[i];
                if games.len() == 1 && games[0] == b.expected {
                    continue;
                }
                done = false;
                let over = starts[i].is_some_and(|s| now_ms() > s + b.duration_ms + 3_000);
                if over && !resumed[i] && b.unplug.is_some_and(|u| u.memory_lost) {
                    resumed[i] = self.resume_if_lost(i, &mut out).await;
                }
            }
            if done || now_ms() > deadline {
                break;
            }
            sleep(Duration::from_millis(250)).await;
        }
        let log_text = std::fs::read_to_string(&daemon.log).unwrap_or_default();
        self.verdict(&log_text, &mut out).await;
        daemon.kill_hard().await;
        for e in &mut emulators {
            e.kill_hard().await;
        }
        if !out.failures.is_empty() {
            let keep = std::env::temp_dir().join(format!("restart-trial-{}", self.plan.seed));
            let _ = std::fs::remove_dir_all(&keep);
            let _ = std::process::Command::new("cp")
                .arg("-r")
                .arg(self.dir.path())
                .arg(&keep)
                .status();
            out.failures
                .push(format!("logs and database kept in {}", keep.display()));
        }
        out
    }

    /// Waits `d`, checking the record meanwhile.
    async fn watch_for(&self, d: Duration, out: &mut Outcome) {
        let until = Instant::now() + d;
        while Instant::now() < until {
            self.check_prefix(&self.stored(), out);
            sleep(Duration::from_millis(250).min(until - Instant::now())).await;
        }
    }

    /// After a restart at `restarted`: how long until every board's record holds what it had
    /// played by then, where that is more than `stored` at the kill (boards whose memory was
    /// lost, or unplugged at the time, are not timed).
    async fn catch_up(&self, restarted: u64, stored: &[usize], out: &mut Outcome) {
        let starts = self.script_starts();
        let unplugged_now = |i: usize, s: u64| {
            let b = &self.plan.boards[i];
            b.unplug.is_some_and(|u| {
                let from = s + b.ply_ends[u.at_ply as usize - 1];
                u.memory_lost || (from..=from + u.for_ms + 2_000).contains(&restarted)
            })
        };
        let mut pending: Vec<(usize, usize)> = (0..4)
            .filter_map(|i| starts[i].map(|s| (i, s)))
            .filter(|&(i, s)| !unplugged_now(i, s))
            .map(|(i, s)| (i, self.played_at(i, s, restarted)))
            .filter(|&(i, n)| n > stored[i])
            .collect();
        let give_up = restarted + 30_000;
        while !pending.is_empty() && now_ms() < give_up {
            let at = now_ms();
            let now_stored = self.stored();
            pending.retain(|&(i, n)| {
                if now_stored[i].last().map_or(0, Vec::len) >= n {
                    out.catch_up_ms.push(at - restarted);
                    false
                } else {
                    true
                }
            });
            self.check_prefix(&now_stored, out);
            sleep(Duration::from_millis(50)).await;
        }
    }

    /// A memory-lost board whose game is over and whose record stopped: if `thread_lost` is
    /// open, the arbiter resumes it from the scoresheets (every move after the record's last).
    async fn resume_if_lost(&self, i: usize, out: &mut Outcome) -> bool {
        let json = export(&self.db).await;
        let board = self.board(i);
        let Some(g) = json["games"]
            .as_array()
            .and_then(|gs| gs.iter().find(|g| g["board"] == board.as_str()))
        else {
            return false;
        };
        let lost = g["irregularities"].as_array().is_some_and(|is| {
            is.iter()
                .any(|i| i["kind"] == "thread_lost" && i["resolved"] != true)
        });
        if !lost {
            return false;
        }
        let plies = g["moves"].as_array().map_or(0, Vec::len);
        let expected = &self.plan.boards[i].expected;
        let body = json!({
            "after_ply": plies,
            "moves": expected[plies.min(expected.len())..],
            "author": "Chief Arbiter",
        });
        let url = format!(
            "http://{}/api/admin/games/{}/resume",
            self.http,
            g["id"].as_i64().unwrap()
        );
        match reqwest::Client::new()
            .post(&url)
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
        {
            Ok(r) if r.status().is_success() => true,
            Ok(r) => {
                out.failures.push(format!(
                    "b{}: resume refused: {} {}",
                    i + 1,
                    r.status(),
                    r.text().await.unwrap_or_default()
                ));
                true
            }
            Err(e) => {
                out.failures.push(format!("b{}: resume failed: {e}", i + 1));
                true
            }
        }
    }

    async fn verdict(&self, log: &str, out: &mut Outcome) {
        self.check_prefix(&self.stored(), out);
        let json = export(&self.db).await;
        for i in 0..4 {
            let b = &self.plan.boards[i];
            let board = self.board(i);
            let games: Vec<&Value> = json["games"]
                .as_array()
                .map(|gs| gs.iter().filter(|g| g["board"] == board.as_str()).collect())
                .unwrap_or_default();
            if games.len() != 1 {
                out.failures.push(format!(
                    "b{}: {} game rows (one expected)",
                    i + 1,
                    games.len()
                ));
                continue;
            }
            let g = games[0];
            let moves: Vec<String> = g["moves"]
                .as_array()
                .map(|ms| {
                    ms.iter()
                        .map(|m| m["uci"].as_str().unwrap_or_default().to_string())
                        .collect()
                })
                .unwrap_or_default();
            let lost: Vec<&Value> = g["irregularities"]
                .as_array()
                .map(|is| is.iter().filter(|i| i["kind"] == "thread_lost").collect())
                .unwrap_or_default();
            let memory_lost = b.unplug.is_some_and(|u| u.memory_lost);
            if moves != b.expected {
                out.failures.push(format!(
                    "b{}: {} of {} plies recorded{}",
                    i + 1,
                    moves.len(),
                    b.expected.len(),
                    if lost.is_empty() {
                        String::new()
                    } else {
                        " (after thread_lost)".into()
                    }
                ));
                continue;
            }
            if !memory_lost {
                if !lost.is_empty() {
                    out.failures
                        .push(format!("b{}: thread_lost with its memory kept", i + 1));
                }
                continue;
            }
            if lost.is_empty() {
                out.lost_exact += 1;
                continue;
            }
            out.lost_resumed += 1;
            // Raised within 5 s of the board being heard again.
            let heard = log_times(log, &board, "board connected");
            for l in lost {
                let at = l["at_ms"].as_u64().unwrap_or(0);
                let since = heard.iter().rev().find(|&&h| h <= at).copied();
                match since {
                    Some(h) if at - h <= LOST_WITHIN_MS + 500 => {}
                    _ => out.failures.push(format!(
                        "b{}: thread_lost at {at}, the board heard again at {since:?}",
                        i + 1
                    )),
                }
            }
        }
    }
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_and_unplugs_through_real_processes_lose_no_ply() {
    let games = Arc::new(corpus());
    let offset = env_u64("BOARDSCRIBE_SEED_OFFSET").unwrap_or(0);
    let seeds: Vec<u64> = match env_u64("BOARDSCRIBE_RESTART_SEED") {
        Some(s) => vec![s],
        None => (0..env_u64("BOARDSCRIBE_RESTART_TRIALS").unwrap_or(CI_TRIALS))
            .map(|s| s + offset)
            .collect(),
    };
    let show = std::env::var_os("BOARDSCRIBE_SHOW_TRIALS").is_some();
    // A number of trials asked for draws them from the full set's ranges.
    let ranges = if env_u64("BOARDSCRIBE_RESTART_TRIALS").is_some() {
        FULL
    } else {
        SHORT
    };
    let parallel = env_u64("BOARDSCRIBE_RESTART_PARALLEL").unwrap_or(3) as usize;
    let gate = Arc::new(Semaphore::new(parallel.max(1)));
    let mut tasks = Vec::new();
    for seed in seeds {
        let (games, gate) = (games.clone(), gate.clone());
        tasks.push(tokio::spawn(async move {
            let _turn = gate.acquire_owned().await.unwrap();
            let plan = plan(seed, &games, ranges);
            if show {
                eprintln!("trial {seed}: {plan:?}");
            }
            let outcome = Trial::new(plan.clone()).run().await;
            if show {
                eprintln!("trial {seed}: {outcome:?}");
            }
            (plan, outcome)
        }));
    }
    let mut catch_up = Vec::new();
    let (mut exact, mut resumed, mut trials) = (0, 0, 0);
    let mut failures = Vec::new();
    for t in tasks {
        let (plan, outcome) = t.await.unwrap();
        trials += 1;
        catch_up.extend(outcome.catch_up_ms);
        exact += outcome.lost_exact;
        resumed += outcome.lost_resumed;
        for f in outcome.failures {
            failures.push(format!("trial {}: {f}", plan.seed));
        }
    }
    catch_up.sort_unstable();
    eprintln!(
        "restart trials: {trials}, failures {}; catch-up after a restart (start to the last ply played before it stored): p50 {} ms, p99 {} ms, max {} ms over {} board restarts; memory lost: {exact} exact by themselves, {resumed} after thread_lost and the arbiter",
        failures.len(),
        percentile(&catch_up, 0.5),
        percentile(&catch_up, 0.99),
        catch_up.last().copied().unwrap_or(0),
        catch_up.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
