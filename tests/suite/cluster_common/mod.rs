//! Shared by tests/suite/cluster.rs and benches/cluster.rs: real `nats-server` processes with
//! JetStream (one, or a three-node cluster on loopback), each on free ports with a store
//! directory of its own; a TCP relay that can hold a hall's traffic (the hall cut off from the
//! broker); hall processes (`boardscribe run` with `[cluster] hall`) over emulated boards; the
//! event node (`boardscribe event`); and the check that the event node's database holds every
//! hall's record exactly: every game, move by move with clocks, retracted moves and events, each
//! record once, in order.
#![allow(dead_code)]

use std::{
    fs::File,
    net::TcpStream,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use rusqlite::{Connection, OpenFlags};

use crate::fleet_common::{self, BIN, Daemon, HallBoard};

/// Debian's `nats-server` (2.9); `NATS_SERVER` names another.
pub fn nats_binary() -> String {
    std::env::var("NATS_SERVER").unwrap_or_else(|_| "nats-server".to_owned())
}

/// One `nats-server` process with JetStream: client, monitoring and (in a cluster) route ports
/// of its own, its store directory kept across restarts.
pub struct Nats {
    child: Option<Child>,
    pub name: String,
    pub port: u16,
    pub monitor: u16,
    config: PathBuf,
    log: PathBuf,
}

impl Nats {
    /// A single server.
    pub fn start(dir: &Path) -> Nats {
        Nats::start_with(dir, "")
    }

    /// A single server, `extra` added to its configuration (users, TLS).
    pub fn start_with(dir: &Path, extra: &str) -> Nats {
        // A port found free may be taken by another test before the server binds it: then
        // the server stops at once, saying so, and is started again on other ports.
        for _ in 0..5 {
            let mut n = Nats::configure(dir, "n1", None, extra);
            let _ = std::fs::remove_file(&n.log);
            n.spawn();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(20) {
                if n.log().contains("address already in use") {
                    break;
                }
                if n.is_ready() {
                    return n;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            assert!(
                n.log().contains("address already in use"),
                "nats-server {} not ready: {}",
                n.name,
                n.log()
            );
            n.kill();
        }
        panic!("nats-server found no free ports in five tries");
    }

    /// Three servers routed to each other (cluster `boardscribe`), JetStream on each.
    pub fn cluster(dir: &Path) -> Vec<Nats> {
        let routes: Vec<u16> = (0..3).map(|_| crate::ports::free()).collect();
        let mut nodes: Vec<Nats> = (0..3)
            .map(|i| Nats::configure(dir, &format!("n{}", i + 1), Some((i, &routes)), ""))
            .collect();
        for n in &mut nodes {
            n.spawn();
        }
        for n in &nodes {
            n.wait_ready(Duration::from_secs(60));
        }
        nodes
    }

    fn configure(dir: &Path, name: &str, cluster: Option<(usize, &[u16])>, extra: &str) -> Nats {
        let port = crate::ports::free();
        let monitor = crate::ports::free();
        let store = dir.join(format!("nats-{name}"));
        std::fs::create_dir_all(&store).unwrap();
        let mut text = format!(
            "server_name: {name}\nlisten: 127.0.0.1:{port}\nhttp: 127.0.0.1:{monitor}\n\
             jetstream {{\n  store_dir: \"{}\"\n}}\n",
            store.display()
        );
        if let Some((me, routes)) = cluster {
            let others: Vec<String> = routes
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != me)
                .map(|(_, p)| format!("nats-route://127.0.0.1:{p}"))
                .collect();
            text.push_str(&format!(
                "cluster {{\n  name: boardscribe\n  listen: 127.0.0.1:{}\n  routes: [{}]\n}}\n",
                routes[me],
                others.join(", ")
            ));
        }
        text.push_str(extra);
        let config = dir.join(format!("nats-{name}.conf"));
        std::fs::write(&config, text).unwrap();
        Nats {
            child: None,
            name: name.to_owned(),
            port,
            monitor,
            config,
            log: dir.join(format!("nats-{name}.log")),
        }
    }

    fn spawn(&mut self) {
        let log = File::options()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = Command::new(nats_binary())
            .args(["-c", self.config.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{} cannot be started ({e}): install nats-server (Debian's package; \
                     .ci/run installs it)",
                    nats_binary()
                )
            });
        self.child = Some(child);
    }

    /// Whether the server says JetStream is ready (`/healthz?js-enabled-only=true`) and takes
    /// clients.
    fn is_ready(&self) -> bool {
        fleet_common::http_get(self.monitor, "/healthz?js-enabled-only=true")
            .is_some_and(|b| b.contains("ok"))
            && TcpStream::connect(("127.0.0.1", self.port)).is_ok()
    }

    /// Waits until the server says JetStream is ready (`/healthz?js-enabled-only=true`).
    pub fn wait_ready(&self, within: Duration) {
        let start = Instant::now();
        loop {
            if self.is_ready() {
                return;
            }
            assert!(
                start.elapsed() < within,
                "nats-server {} not ready: {}",
                self.name,
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The URL with a user and password in it.
    pub fn url_as(&self, user: &str, password: &str) -> String {
        format!("nats://{user}:{password}@127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether a client named `name` is connected to this server (`/connz`).
    pub fn serves(&self, name: &str) -> bool {
        fleet_common::http_get(self.monitor, "/connz").is_some_and(|c| {
            c.contains(&format!("\"name\": \"{name}\""))
                || c.contains(&format!("\"name\":\"{name}\""))
        })
    }

    /// SIGTERM (a clean stop), waited for.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Started again on the same ports and store.
    pub fn restart(&mut self) {
        self.spawn();
        self.wait_ready(Duration::from_secs(60));
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A TCP relay from a port of its own to `target`, which can hold every byte both ways (a hall
/// cut off from the broker: its connection neither breaks nor passes anything) and let them go
/// again.
pub struct Cut {
    pub port: u16,
    held: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Cut {
    pub fn start(target: u16) -> Cut {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let held = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        {
            let held = held.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((client, _)) => {
                            let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                                continue;
                            };
                            for (from, to) in [
                                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                                (server, client),
                            ] {
                                let held = held.clone();
                                let stop = stop.clone();
                                std::thread::spawn(move || pipe(from, to, &held, &stop));
                            }
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(20)),
                    }
                }
            });
        }
        Cut { port, held, stop }
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Holds every byte, both ways, until [`Cut::restore`].
    pub fn cut(&self) {
        self.held.store(true, Ordering::Relaxed);
    }

    pub fn restore(&self) {
        self.held.store(false, Ordering::Relaxed);
    }
}

impl Drop for Cut {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream, held: &AtomicBool, stop: &AtomicBool) {
    use std::io::{Read, Write};
    from.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    while !stop.load(Ordering::Relaxed) {
        // While cut, nothing is read: the bytes wait in the kernel's buffers, as on a dead link.
        if held.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break,
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Both);
}

/// Every hall's boards, playing (after the halls started: a process started later would
/// inherit the ptys).
pub async fn play(halls: &[&Hall]) -> boardscribe::emulator::PtyFleet {
    let boards: Vec<_> = halls
        .iter()
        .flat_map(|h| {
            h.boards.iter().map(|b| {
                let opts = fleet_common::pty_options(&h.dir, b, false, 0);
                (b.script.clone(), opts)
            })
        })
        .collect();
    boardscribe::emulator::PtyFleet::spawn(boards)
        .await
        .unwrap()
}

/// A hall: its boards, its directory, config and database, and its `run` process.
pub struct Hall {
    pub name: String,
    pub boards: Vec<HallBoard>,
    pub dir: PathBuf,
    pub config: PathBuf,
    pub db: PathBuf,
    pub http: u16,
    pub daemon: Option<Daemon>,
    starts: u32,
}

impl Hall {
    /// Hall `name` in `dir/name`, reaching the broker at `url`; its boards numbered from
    /// `first_number` (each hall its own range of the event's board numbers).
    pub fn new(
        dir: &Path,
        name: &str,
        url: &str,
        mut boards: Vec<HallBoard>,
        first_number: u32,
        extra: &str,
    ) -> Hall {
        let dir = dir.join(format!("hall-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        for (i, b) in boards.iter_mut().enumerate() {
            b.number = first_number + i as u32;
            b.name = format!("{name}{}", b.number);
        }
        let entries: Vec<_> = boards
            .iter()
            .map(|b| (b.number, b.kind.name(), b.name.clone(), dir.join(&b.name)))
            .collect();
        let db = dir.join("hall.db");
        let http = crate::ports::free();
        let mut text = fleet_common::config_text(&db, http, &entries);
        text.push_str(&format!(
            "\n[cluster]\nurl = \"{url}\"\nhall = \"{name}\"\n{extra}"
        ));
        let config = dir.join("boardscribe.toml");
        std::fs::write(&config, text).unwrap();
        Hall {
            name: name.to_owned(),
            boards,
            dir,
            config,
            db,
            http,
            daemon: None,
            starts: 0,
        }
    }

    /// Starts (or starts again) the hall's `run`; each start logs to a directory of its own.
    pub fn start(&mut self) {
        self.starts += 1;
        let run_dir = self.dir.join(format!("run-{}", self.starts));
        std::fs::create_dir_all(&run_dir).unwrap();
        self.daemon = Some(Daemon::start(&run_dir, &self.config));
    }

    /// SIGKILL: nothing is flushed, nothing said (the Daemon's drop kills and reaps it).
    pub fn kill(&mut self) {
        drop(self.daemon.take());
    }

    pub fn terminate(&mut self) {
        if let Some(mut d) = self.daemon.take() {
            assert!(d.terminate().success(), "{}: {}", self.name, d.log());
        }
    }

    /// Every start's log, oldest first.
    pub fn log(&self) -> String {
        (1..=self.starts)
            .map(|i| {
                let log = self.dir.join(format!("run-{i}")).join("daemon.log");
                format!(
                    "--- {} run {i} ---\n{}",
                    self.name,
                    std::fs::read_to_string(log).unwrap_or_default()
                )
            })
            .collect()
    }

    /// The hall's `/metrics` sample `name{hall="…"}`, if served.
    pub fn metric(&self, name: &str) -> Option<f64> {
        let text = fleet_common::http_get(self.http, "/metrics")?;
        fleet_common::metric(&text, &format!("{name}{{hall=\"{}\"}}", self.name))
    }

    /// The last record the hall committed to its outbox (0: none).
    pub fn last_seq(&self) -> u64 {
        let c = read_only(&self.db);
        c.query_row(
            "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'outbox'), 0)",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as u64
    }
}

/// The event node's `boardscribe event` process.
pub struct EventNode {
    child: Option<Child>,
    pub dir: PathBuf,
    pub config: PathBuf,
    pub db: PathBuf,
    pub http: u16,
    starts: u32,
}

impl EventNode {
    /// Following `halls` at `url`, in `dir/event`; `extra` goes into the config as is.
    pub fn new(dir: &Path, url: &str, halls: &[&str], extra: &str) -> EventNode {
        let dir = dir.join("event");
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("event.db");
        let http = crate::ports::free();
        let list: Vec<String> = halls.iter().map(|h| format!("\"{h}\"")).collect();
        let text = format!(
            "database = \"{}\"\n\n[http]\nbind = \"127.0.0.1:{http}\"\n\n[cluster]\nurl = \"{url}\"\n\
             halls = [{}]\n{extra}",
            db.display(),
            list.join(", ")
        );
        let config = dir.join("event.toml");
        std::fs::write(&config, text).unwrap();
        EventNode {
            child: None,
            dir,
            config,
            db,
            http,
            starts: 0,
        }
    }

    pub fn start(&mut self) {
        self.starts += 1;
        let log = File::create(self.dir.join(format!("event-{}.log", self.starts))).unwrap();
        let child = Command::new(BIN)
            .args(["event", "--config", self.config.to_str().unwrap()])
            .env("BOARDSCRIBE_LOG", "boardscribe=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn terminate(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &c.id().to_string()])
                .status();
            let status = c.wait().unwrap();
            assert!(status.success(), "the event node: {status}\n{}", self.log());
        }
    }

    pub fn log(&self) -> String {
        (1..=self.starts)
            .map(|i| {
                std::fs::read_to_string(self.dir.join(format!("event-{i}.log"))).unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n--- restarted ---\n")
    }

    /// Where hall `hall` stands here: the last record applied (0: none).
    pub fn seq(&self, hall: &str) -> u64 {
        if !self.db.exists() {
            return 0;
        }
        let c = read_only(&self.db);
        c.query_row(
            "SELECT seq FROM replica_halls WHERE hall = ?1",
            [hall],
            |r| r.get::<_, i64>(0),
        )
        .map_or(0, |s| s as u64)
    }

    /// Waits until every hall's last record is here.
    pub fn wait_caught_up(&self, halls: &[&Hall], within: Duration) {
        let start = Instant::now();
        loop {
            let behind: Vec<String> = halls
                .iter()
                .filter_map(|h| {
                    let (want, got) = (h.last_seq(), self.seq(&h.name));
                    (want != got).then(|| format!("{}: {got} of {want}", h.name))
                })
                .collect();
            if behind.is_empty() {
                return;
            }
            assert!(
                start.elapsed() < within,
                "the event node did not catch up ({}):\n{}",
                behind.join(", "),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for EventNode {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.kill();
            let log = self.log();
            eprintln!(
                "--- event node log (tail) ---\n{}",
                &log[log.len().saturating_sub(20_000)..]
            );
        }
    }
}

pub fn read_only(db: &Path) -> Connection {
    let c = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    c.busy_timeout(Duration::from_secs(5)).unwrap();
    c
}

/// A game's rows as a hall and the event node must both hold them: the header by board
/// number and start, every move row (retracted ones too, with what retracted them) and every
/// event, in the order written.
#[derive(Debug, PartialEq)]
pub struct GameRows {
    pub header: String,
    pub moves: Vec<String>,
    pub events: Vec<String>,
}

/// Every game of `db` whose board has a number in `numbers`, as [`GameRows`].
pub fn game_rows(db: &Path, numbers: &[u32]) -> Vec<GameRows> {
    let c = read_only(db);
    let mut out = Vec::new();
    let mut games = c
        .prepare(
            "SELECT g.id, g.board_no, g.kind, g.orientation, g.date, g.started_at_ms, \
             g.ended_at_ms, g.result, g.termination, g.event, g.site, g.round, \
             g.start_position, g.time_control FROM games g ORDER BY g.board_no, g.started_at_ms, g.id",
        )
        .unwrap();
    let rows = games
        .query_map([], |r| {
            let id: i64 = r.get(0)?;
            let board: Option<i64> = r.get(1)?;
            let mut header = Vec::new();
            for i in 1..14 {
                let v: rusqlite::types::Value = r.get(i)?;
                header.push(format!("{v:?}"));
            }
            Ok((id, board, header.join("|")))
        })
        .unwrap();
    for row in rows {
        let (id, board, header) = row.unwrap();
        if !board.is_some_and(|b| numbers.contains(&(b as u32))) {
            continue;
        }
        let moves = rows_text(
            &c,
            "SELECT m.ply, m.notation, m.uci, m.position, m.at_ms, m.clock_white_ms, \
             m.clock_black_ms, m.time_trouble, e.kind, e.at_ms, e.detail \
             FROM moves m LEFT JOIN events e ON e.id = m.retracted_by \
             WHERE m.game_id = ?1 ORDER BY m.id",
            id,
        );
        let events = rows_text(
            &c,
            "SELECT at_ms, kind, ply, detail FROM events WHERE game_id = ?1 ORDER BY id",
            id,
        );
        out.push(GameRows {
            header,
            moves,
            events,
        });
    }
    out
}

/// Each row `sql` gives for `id`, its columns written out and joined by `|`.
fn rows_text(c: &Connection, sql: &str, id: i64) -> Vec<String> {
    let mut stmt = c.prepare(sql).unwrap();
    let n = stmt.column_count();
    stmt.query_map([id], |r| {
        (0..n)
            .map(|i| Ok(format!("{:?}", r.get::<_, rusqlite::types::Value>(i)?)))
            .collect::<rusqlite::Result<Vec<_>>>()
            .map(|v| v.join("|"))
    })
    .unwrap()
    .collect::<Result<Vec<_>, _>>()
    .unwrap()
}

/// What the check counted.
#[derive(Debug, Default)]
pub struct Compared {
    pub games: usize,
    pub moves: usize,
    pub records: u64,
}

/// Asserts that the event node's database holds each hall's record exactly: the same games,
/// each with the same move rows (clocks, retractions) and events in the same order, every
/// board link, and each hall's records applied once each, seq 1 to the last with no gap.
pub fn assert_event_holds_halls(event: &EventNode, halls: &[&Hall]) -> Compared {
    let mut compared = Compared::default();
    for h in halls {
        let numbers: Vec<u32> = h.boards.iter().map(|b| b.number).collect();
        let at_hall = game_rows(&h.db, &numbers);
        let at_event = game_rows(&event.db, &numbers);
        assert!(!at_hall.is_empty(), "hall {} recorded no game", h.name);
        assert_eq!(
            at_hall.len(),
            at_event.len(),
            "hall {}: games at the hall and at the event node",
            h.name
        );
        for (a, b) in at_hall.iter().zip(&at_event) {
            assert_eq!(a.header, b.header, "hall {}: a game's header", h.name);
            assert_eq!(a.moves, b.moves, "hall {}: {}: moves", h.name, a.header);
            assert_eq!(a.events, b.events, "hall {}: {}: events", h.name, a.header);
            compared.moves += a.moves.len();
        }
        compared.games += at_hall.len();
        let links = |db: &Path, prefix: &str| -> Vec<String> {
            read_only(db)
                .prepare(
                    "SELECT b.name, l.at_ms, l.connected FROM board_links l \
                     JOIN boards b ON b.id = l.board_id ORDER BY l.id",
                )
                .unwrap()
                .query_map([], |r| {
                    Ok(format!(
                        "{}|{}|{}",
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?
                    ))
                })
                .unwrap()
                .map(Result::unwrap)
                .filter_map(|l| l.strip_prefix(prefix).map(str::to_owned))
                .collect()
        };
        assert_eq!(
            links(&h.db, ""),
            links(&event.db, &format!("{}/", h.name)),
            "hall {}: board links",
            h.name
        );
        // Each record once, in order: seq 1..=last, nothing twice, nothing missing.
        let last = h.last_seq();
        let (count, min, max): (i64, i64, i64) = read_only(&event.db)
            .query_row(
                "SELECT count(*), COALESCE(min(seq), 0), COALESCE(max(seq), 0) FROM replica_log \
                 WHERE hall = ?1",
                [&h.name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(
            (count as u64, min as u64, max as u64),
            (last, 1, last),
            "hall {}: records applied (count, first, last)",
            h.name
        );
        compared.records += last;
    }
    compared
}

/// Hall-commit → event-commit latencies of every record applied, in ms, sorted.
pub fn latencies(event_db: &Path) -> Vec<f64> {
    let mut v: Vec<f64> = read_only(event_db)
        .prepare("SELECT applied_at_ms - at_ms FROM replica_log")
        .unwrap()
        .query_map([], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(|x| x.unwrap() as f64)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Counts samples of a gauge that went above zero while polled: a hall's outbox filling up.
pub struct Watch {
    pub max: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Watch {
    /// Polls `name` of `hall` every 200 ms, keeping its largest value.
    pub fn start(http: u16, name: String) -> Watch {
        let max = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        {
            let (max, stop) = (max.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Some(v) = fleet_common::http_get(http, "/metrics")
                        .and_then(|t| fleet_common::metric(&t, &name))
                    {
                        max.fetch_max(v as u64, Ordering::Relaxed);
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            });
        }
        Watch { max, stop }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
