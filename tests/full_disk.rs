//! A full disk stops recording cleanly and loses nothing (issue 6).
//!
//! The disk is made full the way SQLite sees a full disk: `PRAGMA max_page_count` on the
//! writer's own connection ([`PageLimit`], the daemon's test seam; production leaves it unset),
//! so SQLite answers SQLITE_FULL exactly as it does when the disk has no space left.
//! - `a_full_disk_suspends_recording_and_loses_no_move`: emulated DGT boards on pseudo-terminals
//!   play corpus games through `daemon::record_fleet` with the relay on 127.0.0.1:0; the store
//!   fills mid-game; the log, `/metrics` and `/api/boards` (real HTTP) say so; space returns;
//!   every game is recorded exactly as played, moves of the outage included, the raw bytes
//!   replay to the same moves, and `PRAGMA integrity_check` says "ok".
//! - `raw_beyond_the_bound_is_dropped_counted_and_marked`: a real capture through a pipeline with
//!   a small raw bound into a store that fills and recovers: every byte is stored or counted as
//!   dropped, the stored stream is the capture with one contiguous run cut out and marked, and
//!   every move is recorded.

#[path = "suite/relay_common/mod.rs"]
mod relay_common;

#[path = "suite/ports.rs"]
mod ports;

use std::{
    io,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, OnceLock},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use boardscribe::{
    arbiter::LawsSetup,
    capture::{Chunk, parse_capture},
    daemon::{self, PageLimit},
    emulator::{self, EmulatorOptions, PgnGame, PtyEvent, PtyOptions},
    game::Kind,
    recorder::{DgtRecorder, Recorder},
    relay::{Hub, RelayExtras},
    store::{RawChunk, Store, StoreError, Write},
    tracker::TrackerEvent,
};
use relay_common::corpus_game;
use serde_json::Value;
use shakmaty::uci::UciMove;
use tokio::{
    sync::{mpsc, watch},
    task::JoinSet,
};

/// The log lines of this test binary (one subscriber for the process; each test finds its own
/// lines by its database's path).
#[derive(Clone, Default)]
struct LogBuf(Arc<Mutex<Vec<u8>>>);

impl io::Write for LogBuf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl LogBuf {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn log() -> &'static LogBuf {
    static LOG: OnceLock<LogBuf> = OnceLock::new();
    LOG.get_or_init(|| {
        let buf = LogBuf::default();
        let out = buf.clone();
        tracing_subscriber::fmt()
            .with_writer(move || out.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .init();
        buf
    })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The game's moves in UCI, from the corpus PGN (via shakmaty).
fn uci_of(game: &PgnGame) -> Vec<String> {
    game.moves
        .iter()
        .map(|m| UciMove::from_standard(*m).to_string())
        .collect()
}

/// The value of the sample `name` in Prometheus text.
fn sample(text: &str, name: &str) -> Option<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ').map(str::to_owned))
}

/// Polls `check` every 100 ms until it gives `Some`, for at most `within`.
async fn until<T, F: Future<Output = Option<T>>>(
    what: &str,
    within: Duration,
    mut check: impl FnMut() -> F,
) -> T {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn get_text(client: &reqwest::Client, url: &str) -> String {
    let resp = client.get(url).send().await.unwrap();
    assert!(resp.status().is_success(), "{url}: {}", resp.status());
    resp.text().await.unwrap()
}

async fn boards_json(client: &reqwest::Client, base: &str) -> Vec<Value> {
    let v: Value =
        serde_json::from_str(&get_text(client, &format!("{base}api/boards")).await).unwrap();
    v["boards"].as_array().unwrap().clone()
}

/// Waits until `/metrics` (at `url`) shows `boardscribe_store_full` at `value`.
async fn until_store_full_is(client: &reqwest::Client, url: &str, value: &str, within: Duration) {
    let what = format!("/metrics to say boardscribe_store_full {value}");
    until(&what, within, || async {
        let text = get_text(client, url).await;
        (sample(&text, "boardscribe_store_full").as_deref() == Some(value)).then_some(())
    })
    .await
}

/// Waits until every board of `/api/boards` passes `ok`; the boards as then shown.
async fn until_every_board(
    what: &str,
    client: &reqwest::Client,
    base: &str,
    ok: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    until(what, Duration::from_secs(20), || async {
        let boards = boards_json(client, base).await;
        boards.iter().all(&ok).then_some(boards)
    })
    .await
}

/// The moves (UCI) of every game of board `name`, live moves only, by game then ply.
fn recorded_uci(store: &Store, name: &str) -> Vec<Vec<String>> {
    store
        .games()
        .unwrap()
        .into_iter()
        .filter(|g| g.board_name == name)
        .map(|g| {
            g.moves
                .into_iter()
                .map(|m| m.uci.expect("a chess move has its UCI"))
                .collect()
        })
        .collect()
}

/// The moves a fresh pipeline finds in raw reads (the stored stream replayed).
fn replayed_uci(chunks: &[RawChunk]) -> Vec<String> {
    let mut p = DgtRecorder::fresh(boardscribe::store::BoardId(0));
    let mut moves = Vec::new();
    let mut take = |p: &mut DgtRecorder| {
        for w in p.take_writes() {
            if let Write::Event {
                event: TrackerEvent::Move(m),
                ..
            } = w
            {
                moves.push(m.uci.unwrap());
            }
        }
    };
    for c in chunks {
        p.feed(c.t_ms, c.dir, &c.bytes);
        take(&mut p);
    }
    if let Some(last) = chunks.last() {
        p.flush(last.t_ms + 10_000);
    }
    take(&mut p);
    moves
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_disk_suspends_recording_and_loses_no_move() {
    let log = log();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("full.db");
    let games = [
        corpus_game("tatamast22", 27),
        corpus_game("WorldChamp1886", 20),
    ];

    // Emulated boards, each game lasting about 45 s.
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<usize>();
    let mut emulators = JoinSet::new();
    let mut ports: Vec<PathBuf> = Vec::new();
    for (i, game) in games.iter().enumerate() {
        let opts = |speed: f64| EmulatorOptions {
            speed,
            seed: 60 + i as u64,
            rotated: i % 2 == 1,
            time_control: Some((15 * 60_000, 10_000)),
            ..EmulatorOptions::default()
        };
        let human = emulator::script_pgn(game, &opts(1.0)).unwrap();
        let human_ms = human.to_chunks().last().unwrap().0;
        let script = emulator::script_pgn(game, &opts(45_000.0 / human_ms as f64)).unwrap();
        let link = dir.path().join(format!("board-{}", i + 1));
        let pty = PtyOptions {
            link: Some(link.clone()),
            ..PtyOptions::default()
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        emulators.spawn(async move { emulator::run_pty(&script, &pty, Some(tx)).await });
        while let Some(ev) = rx.recv().await {
            if matches!(ev, PtyEvent::Ready(_)) {
                break;
            }
        }
        let done_tx = done_tx.clone();
        tokio::spawn(async move {
            while let Some(ev) = rx.recv().await {
                if ev == PtyEvent::ScriptDone {
                    let _ = done_tx.send(i);
                }
            }
        });
        ports.push(link);
    }
    let names: Vec<String> = ports.iter().map(|p| p.display().to_string()).collect();

    // The daemon, with the relay on a free port.
    let laws = LawsSetup {
        time_control: Some("15+10".parse().unwrap()),
        ..LawsSetup::default()
    };
    let limit = PageLimit::new();
    let mut fleet = daemon::Fleet::new(
        &db,
        daemon::port_boards(&ports, boardscribe::kind::BoardKind::Dgt),
        laws,
    );
    fleet.page_limit = Some(limit.clone());
    let metrics = fleet.metrics.clone();
    let (stop, stop_rx) = watch::channel(false);
    let hub = Hub::new();
    let extras = RelayExtras {
        metrics: metrics.clone(),
        changes: Some(fleet.changes.clone()),
        ..RelayExtras::default()
    };
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    // The arbiter's token: this test reads what the arbiter reads.
    const TOKEN: &str = "full-disk-test-token-0123456789abcdef0123456789abcdef";
    let token = boardscribe::relay::Token::new(TOKEN);
    let base = daemon::start_relay_with(any, &hub, &db, token, stop_rx.clone(), extras)
        .await
        .unwrap();
    let daemon = tokio::spawn({
        let hub = hub.clone();
        async move { daemon::record_fleet(fleet, stop_rx, Some(hub), |_, _| {}).await }
    });
    let client = {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {TOKEN}").parse().unwrap(),
        );
        reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .unwrap()
    };
    let metrics_url = format!("{base}metrics");

    // A few moves recorded, then the disk is full.
    let total: usize = games.iter().map(|g| g.moves.len()).sum();
    until("the first moves", Duration::from_secs(60), || async {
        (metrics.moves() as usize >= total / 5).then_some(())
    })
    .await;
    limit.freeze();
    // Writes that fit in the pages the database has still succeed (as on a real disk), for a
    // while.
    until_store_full_is(&client, &metrics_url, "1", Duration::from_secs(40)).await;
    let full_at = now_ms();
    let full_text = format!("the disk holding {} is full", db.display());
    let suspended = until_every_board("/api/boards to say so", &client, &base, |b| {
        b["recording"] == "suspended"
    })
    .await;
    // Once every board is refused, each of its batches carries its raw backlog, which only
    // grows: nothing more gets in.
    let moves_at_full = metrics.moves();
    for b in &suspended {
        let why = b["store_error"].as_str().unwrap();
        assert!(why.starts_with(&full_text), "{why}");
        assert!(why.ends_with("free space there; recording resumes by itself"));
    }
    let logged = log.text();
    let errors: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains("ERROR") && l.contains(&full_text))
        .collect();
    assert_eq!(
        errors.len(),
        1,
        "one error line, not one per batch or frame:\n{logged}"
    );
    assert!(errors[0].contains("the store refuses writes"));

    // The arbiter's console says so above everything, with the store's reason (issue 32,
    // item 5); a decision is refused whole with the same reason, nothing kept half-done.
    let console = get_text(&client, &format!("{base}arbiter")).await;
    let banner = console
        .split("store-refuses")
        .nth(1)
        .unwrap_or_else(|| panic!("no banner on the console:\n{console}"));
    assert!(banner.contains(&full_text), "{banner}");
    assert!(
        banner.contains("Decisions are refused until then"),
        "{banner}"
    );
    let game = suspended[0]["game_id"].as_i64().unwrap();
    let refused = client
        .post(format!("{base}api/admin/games/{game}/result"))
        .json(&serde_json::json!({"result": "1-0", "reason": "resignation", "author": "Chief"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    let why = refused.text().await.unwrap();
    assert!(
        why.contains("the store refuses writes") && why.contains(&full_text),
        "{why}"
    );

    // The boards play on while the store refuses; nothing more is recorded meanwhile.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let text = get_text(&client, &metrics_url).await;
    assert_eq!(
        sample(&text, "boardscribe_store_full").as_deref(),
        Some("1")
    );
    let refused: u64 = sample(&text, "boardscribe_store_full_batches_total")
        .unwrap()
        .parse()
        .unwrap();
    // Retried every 1-2 s, not on every frame.
    assert!((2..=30).contains(&refused), "{refused} refused batches");
    assert_eq!(
        sample(&text, "boardscribe_raw_bytes_dropped_total").as_deref(),
        Some("0"),
        "the default bound holds an outage of seconds"
    );
    assert_eq!(metrics.moves(), moves_at_full);

    // Space returns.
    let lifted_at = now_ms();
    limit.lift();
    until_store_full_is(&client, &metrics_url, "0", Duration::from_secs(20)).await;
    until_every_board("/api/boards to say recording is on", &client, &base, |b| {
        b["recording"] == "ok" && b["store_error"].is_null()
    })
    .await;
    let logged = log.text();
    assert!(
        logged.contains("the store accepts writes again; recording resumed"),
        "{logged}"
    );

    // The games end; the daemon stops (checking the store's integrity as it closes).
    tokio::time::timeout(Duration::from_secs(120), async {
        for _ in 0..games.len() {
            done_rx.recv().await.unwrap();
        }
    })
    .await
    .expect("the games did not finish in time");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.send(true).unwrap();
    daemon.await.unwrap().unwrap();
    emulators.abort_all();

    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let store = Store::open_read_only(&db).unwrap();
    let mut during = 0;
    for (name, game) in names.iter().zip(&games) {
        let expected = uci_of(game);
        assert_eq!(recorded_uci(&store, name), vec![expected.clone()], "{name}");
        let g = store
            .games()
            .unwrap()
            .into_iter()
            .find(|g| &g.board_name == name)
            .unwrap();
        during += g
            .moves
            .iter()
            .filter(|m| (full_at..lifted_at).contains(&m.at_ms))
            .count();
        // The raw bytes kept through the outage are whole: they replay to the same game.
        let board = g.board;
        let chunks = store.raw_chunks(board).unwrap();
        assert!(
            chunks.iter().all(|c| !c.is_gap()),
            "{name}: nothing dropped"
        );
        assert!(chunks.windows(2).all(|w| w[0].t_ms <= w[1].t_ms), "{name}");
        assert_eq!(replayed_uci(&chunks), expected, "{name}: raw replay");
    }
    assert!(
        during >= 4,
        "only {during} moves were played while the store refused"
    );
}

/// Expected moves from a `.uci` file of the real captures (`1. e2e4 e7e5` lines).
fn capture_uci(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(str::to_string)
        .collect()
}

#[test]
fn raw_beyond_the_bound_is_dropped_counted_and_marked() {
    let _ = log();
    let captures = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/captures/dgt-arnsholt"
    );
    let capture =
        parse_capture(&std::fs::read_to_string(format!("{captures}/2.capture")).unwrap()).unwrap();
    let expected = capture_uci(Path::new(&format!("{captures}/2.uci")));
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("bound.db")).unwrap();
    let board = store.board("arnsholt-2", Kind::Chess).unwrap();
    const BOUND: usize = 1024;
    let mut pipeline = Recorder::fresh(board).with_raw_bound(BOUND);

    // A third of the capture stored, a third while the store is full, a third after.
    let n = capture.chunks.len();
    let (full_from, full_to) = (n / 3, 2 * n / 3);
    let mut refusals = 0;
    for (i, c) in capture.chunks.iter().enumerate() {
        if i == full_from {
            let pages = store.page_count().unwrap();
            assert_eq!(store.set_max_pages(Some(pages)).unwrap(), pages);
        }
        if i == full_to {
            store.set_max_pages(None).unwrap();
        }
        pipeline.feed(c.t_ms, c.dir, &c.bytes);
        assert!(pipeline.raw_pending() <= BOUND + 16, "the bound holds");
        if i % 8 == 7 {
            let writes = pipeline.take_writes();
            match store.write_batch(&writes) {
                Ok(_) => {}
                Err(e @ StoreError::Full { .. }) => {
                    assert!(e.to_string().contains("bound.db is full"), "{e}");
                    refusals += 1;
                    pipeline.requeue(writes);
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    let last = capture.chunks.last().unwrap().t_ms;
    pipeline.flush(last);
    store.write_batch(&pipeline.take_writes()).unwrap();
    assert!(refusals > 3, "{refusals}");
    store.integrity_check().unwrap();

    // Every move, in one game.
    let games = store.games().unwrap();
    assert_eq!(games.len(), 1);
    let got: Vec<String> = games[0]
        .moves
        .iter()
        .map(|m| m.uci.clone().unwrap())
        .collect();
    assert_eq!(got, expected);

    // The stored stream: the capture with one contiguous run of reads cut out, marked by one
    // gap at the first read dropped; every byte either stored or counted as dropped.
    let stored = store.raw_chunks(board).unwrap();
    let gaps: Vec<usize> = (0..stored.len()).filter(|&i| stored[i].is_gap()).collect();
    assert_eq!(gaps.len(), 1, "one gap");
    let (before, after) = (&stored[..gaps[0]], &stored[gaps[0] + 1..]);
    let same = |s: &RawChunk, c: &Chunk| (s.t_ms, s.dir, &s.bytes) == (c.t_ms, c.dir, &c.bytes);
    assert!(before.iter().zip(&capture.chunks).all(|(s, c)| same(s, c)));
    let cut_to = n - after.len();
    assert!(
        after
            .iter()
            .zip(&capture.chunks[cut_to..])
            .all(|(s, c)| same(s, c))
    );
    let cut = &capture.chunks[before.len()..cut_to];
    assert!(!cut.is_empty());
    assert_eq!(stored[gaps[0]].t_ms, cut[0].t_ms, "marked where it begins");
    assert!(
        before.len() > full_from && cut_to <= full_to + 8,
        "the bound filled during the outage"
    );
    let stats = pipeline.stats();
    let cut_bytes: usize = cut.iter().map(|c| c.bytes.len()).sum();
    assert_eq!(stats.raw_bytes_dropped, cut_bytes as u64);
    assert_eq!(stats.raw_reads_dropped, cut.len() as u64);
    let fed: usize = capture.chunks.iter().map(|c| c.bytes.len()).sum();
    let kept: usize = stored.iter().map(|c| c.bytes.len()).sum();
    assert_eq!(kept + cut_bytes, fed);
    assert!(
        stored.iter().all(|c| !c.bytes.is_empty() || c.is_gap())
            && capture.chunks.iter().all(|c| !c.bytes.is_empty()),
        "an empty read only marks the gap"
    );
    log()
        .text()
        .lines()
        .find(|l| l.contains("newer raw bytes are dropped"))
        .expect("the drop is logged");
}
