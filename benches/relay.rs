//! The relay under a hall's load (issue 4): a benchmark binary, not a timed test.
//!
//! Flow: 64 emulated DGT boards on pseudo-terminals play corpus games (`../shared/corpus/chess/`)
//! into one `daemon::record_boards` with a hub; the relay serves on 127.0.0.1:0 and an SSE client
//! reads `/api/events`. Three phases of a fixed time each: quiet; N in-process clients polling
//! `/round.pgn` (half of them with `If-None-Match`) at a pace; the same back to back. Every
//! emulator writes a capture; its frames are matched in order to the script's, which gives the
//! time each frame was written, on the same process's `Instant` as the durable announcement
//! (`record_boards`' callback) and the SSE arrival. A move's completing frame is its clock press,
//! or its last field update when the tracker recorded it before the press (settled). Prints one
//! table.
//!
//! Run with `cargo bench --bench relay`. Knobs (environment): `RELAYBENCH_BOARDS` (64),
//! `RELAYBENCH_SPEED` (0.2, the emulator's time multiplier), `RELAYBENCH_SECS` (60 per phase),
//! `RELAYBENCH_CLIENTS` (8), `RELAYBENCH_POLL_MS` (100, the paced phase's interval per client).
//! Without `--bench` (`cargo test --benches`) the defaults are a 2-board, 3-second smoke run.
//! See docs/benchmarks.md.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use boardscribe::{
    arbiter::LawsSetup,
    capture::parse_capture,
    daemon,
    device::Direction,
    emulator::{
        self, BoardScript, EmulatorOptions, EventKind, Payload, PgnGame, PtyFleet, PtyOptions,
        PtyScript,
    },
    protocol::dgt::{Frame, cmd},
    relay::Hub,
    tracker::TrackerEvent,
};
use futures_util::StreamExt;
use reqwest::{StatusCode, header};
use tokio::{sync::watch, task::JoinSet};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");
const CORPUS_FILES: [&str; 4] = ["tatamast22", "Capablanca", "London1851", "WorldChamp1886"];
/// Games shorter than this are skipped (a board should keep playing for the whole phase).
const MIN_PLIES: usize = 60;

/// The knobs of a run.
#[derive(Clone, Copy, Debug)]
struct Knobs {
    boards: usize,
    speed: f64,
    secs: u64,
    clients: usize,
    /// The paced phase: each client's interval between requests.
    poll_ms: u64,
}

fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

impl Knobs {
    /// What `cargo bench` runs.
    const FULL: Knobs = Knobs {
        boards: 64,
        speed: 0.2,
        secs: 60,
        clients: 8,
        poll_ms: 100,
    };
    /// What `cargo test --benches` runs (no `--bench` flag): does the bench still work?
    const SMOKE: Knobs = Knobs {
        boards: 2,
        secs: 3,
        clients: 2,
        ..Knobs::FULL
    };

    /// `defaults`, overridden by the environment.
    fn from_env(defaults: Knobs) -> Knobs {
        Knobs {
            boards: knob("RELAYBENCH_BOARDS", defaults.boards),
            speed: knob("RELAYBENCH_SPEED", defaults.speed),
            secs: knob("RELAYBENCH_SECS", defaults.secs),
            clients: knob("RELAYBENCH_CLIENTS", defaults.clients),
            poll_ms: knob("RELAYBENCH_POLL_MS", defaults.poll_ms),
        }
    }
}

/// `n` corpus games from the standard position with at least [`MIN_PLIES`] plies, taken in turn
/// from each file, scripted with a clock (15+10) and no scripted irregularities.
fn scripts(n: usize, speed: f64) -> Vec<BoardScript> {
    let mut per_file: Vec<std::vec::IntoIter<PgnGame>> = CORPUS_FILES
        .iter()
        .map(|f| {
            let path = Path::new(CORPUS).join(format!("{f}.pgn"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let games = emulator::games_from_pgn(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            games
                .into_iter()
                .filter(|g| {
                    g.moves.len() >= MIN_PLIES
                        && !g.tags.iter().any(|(k, _)| k.eq_ignore_ascii_case("FEN"))
                })
                .collect::<Vec<_>>()
                .into_iter()
        })
        .collect();
    let mut out = Vec::new();
    'fill: while out.len() < n {
        let mut any = false;
        for games in &mut per_file {
            let Some(game) = games.next() else { continue };
            any = true;
            let i = out.len();
            let opts = EmulatorOptions {
                speed,
                seed: 1000 + i as u64,
                rotated: i % 2 == 1,
                time_control: Some((15 * 60_000, 10_000)),
                ..EmulatorOptions::default()
            };
            if let Ok(script) = emulator::script_pgn(&game, &opts) {
                out.push(script);
            }
            if out.len() == n {
                break 'fill;
            }
        }
        assert!(any, "the corpus has only {} games long enough", out.len());
    }
    out
}

/// When each board's frames were written, and what the emulators did.
struct Board {
    name: String,
    script: BoardScript,
    capture: PathBuf,
    /// The capture's text, read once the phase is over.
    capture_text: String,
    /// When the emulator announced the pty (its capture's time zero, within microseconds).
    ready: Instant,
}

/// One load client's requests: (conditional, status, latency).
type Requests = Vec<(bool, Option<StatusCode>, Duration)>;

/// What one phase measured.
struct Phase {
    boards: Vec<Board>,
    /// (board, ply, when) of every move as it became durable.
    durable: Vec<(String, u32, Instant)>,
    /// (board, ply, when) of every `move` event as the SSE client read it.
    sse: Vec<(String, u32, Instant)>,
    sse_events: u64,
    sse_id_gaps: u64,
    requests: Requests,
    window: (Instant, Instant),
}

/// What the SSE client saw.
#[derive(Default)]
struct SseSeen {
    /// (board, ply, when) of every `move` event.
    moves: Vec<(String, u32, Instant)>,
    events: u64,
    /// Events whose id is not the last one + 1.
    id_gaps: u64,
}

/// Reads `/api/events`, noting when each `move` event arrived.
async fn sse_client(url: String, out: Arc<Mutex<SseSeen>>) -> Result<(), reqwest::Error> {
    let resp = reqwest::get(format!("{url}api/events")).await?;
    assert_eq!(resp.status(), StatusCode::OK, "/api/events");
    let mut body = resp.bytes_stream();
    let mut buf = String::new();
    let mut last_id: Option<u64> = None;
    while let Some(chunk) = body.next().await {
        let at = Instant::now();
        buf.push_str(&String::from_utf8_lossy(&chunk?));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            let (mut id, mut kind, mut data) = (None, "", String::new());
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = v.trim().parse::<u64>().ok();
                } else if let Some(v) = line.strip_prefix("event:") {
                    kind = v.trim();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            let Some(id) = id else { continue };
            let mut o = out.lock().unwrap_or_else(|p| p.into_inner());
            o.events += 1;
            if last_id.is_some_and(|l| id != l + 1) {
                o.id_gaps += 1;
            }
            last_id = Some(id);
            if kind == "move" {
                let v: serde_json::Value = serde_json::from_str(&data).unwrap_or_default();
                if let (Some(b), Some(p)) = (v["board"].as_str(), v["ply"].as_u64()) {
                    o.moves.push((b.to_owned(), p as u32, at));
                }
            }
        }
    }
    Ok(())
}

/// Polls `/round.pgn` until `until`, back to back or one request per `pace`; with
/// `conditional`, sends the last ETag it saw.
async fn load_client(
    url: String,
    conditional: bool,
    until: Instant,
    pace: Option<Duration>,
) -> Requests {
    let client = reqwest::Client::new();
    let mut etag: Option<String> = None;
    let mut out = Vec::new();
    while Instant::now() < until {
        let mut req = client.get(format!("{url}round.pgn"));
        if let (true, Some(e)) = (conditional, &etag) {
            req = req.header(header::IF_NONE_MATCH, e.as_str());
        }
        let t = Instant::now();
        let status = match req.send().await {
            Ok(resp) => {
                let status = resp.status();
                if let Some(e) = resp.headers().get(header::ETAG) {
                    etag = e.to_str().ok().map(str::to_owned);
                }
                match resp.bytes().await {
                    Ok(_) => Some(status),
                    Err(_) => None,
                }
            }
            Err(_) => None,
        };
        out.push((conditional && etag.is_some(), status, t.elapsed()));
        if let Some(pace) = pace {
            tokio::time::sleep_until((t + pace).into()).await;
        } else if status != Some(StatusCode::OK) && status != Some(StatusCode::NOT_MODIFIED) {
            // The database may not exist yet: do not spin on errors.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    out
}

/// Records the boards for `knobs.secs`, with `load` clients polling `/round.pgn` meanwhile
/// (back to back, or one request per `pace` each).
async fn phase(
    knobs: Knobs,
    scripts: &[BoardScript],
    load: usize,
    pace: Option<Duration>,
) -> Phase {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("relay.db");
    let hub = Hub::new();
    let (stop, stop_rx) = watch::channel(false);
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let url = daemon::start_relay(any, &hub, &db, None, stop_rx)
        .await
        .expect("the relay starts");

    let sse = Arc::new(Mutex::new(SseSeen::default()));
    let sse_task = tokio::spawn(sse_client(url.clone(), sse.clone()));

    let mut links = Vec::new();
    let mut specs = Vec::new();
    for (i, script) in scripts.iter().enumerate() {
        let link = dir.path().join(format!("board-{}", i + 1));
        let capture = dir.path().join(format!("board-{}.capture", i + 1));
        let pty = PtyOptions {
            link: Some(link.clone()),
            capture_out: Some(capture.clone()),
            ..PtyOptions::default()
        };
        specs.push((PtyScript::from(script.clone()), pty));
        links.push((link, capture));
    }
    let mut emulators = PtyFleet::spawn(specs)
        .await
        .expect("the emulators announce their ptys");
    let boards: Vec<Board> = links
        .into_iter()
        .zip(scripts)
        .zip(&emulators.ready)
        .map(|(((link, capture), script), ready)| Board {
            name: link.display().to_string(),
            script: script.clone(),
            capture,
            capture_text: String::new(),
            ready: *ready,
        })
        .collect();
    // Keep the emulators' events drained while the phase runs.
    let drain = async { emulators.all_done(|_, _| {}).await };

    let durable = Arc::new(Mutex::new(Vec::new()));
    let note = durable.clone();
    let announce = move |b: &str, e: &TrackerEvent| {
        if let TrackerEvent::Move(m) = e {
            let at = Instant::now();
            note.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((b.to_owned(), m.ply, at));
        }
    };
    let ports: Vec<PathBuf> = boards.iter().map(|b| PathBuf::from(&b.name)).collect();
    let laws = LawsSetup {
        time_control: Some("15+10".parse().expect("a time control")),
        ..LawsSetup::default()
    };
    let stop_rec = stop.subscribe();
    let db2 = db.clone();
    let recorder = tokio::spawn(async move {
        daemon::record_boards(&db2, &ports, &laws, stop_rec, Some(hub), announce).await
    });

    let start = Instant::now();
    let end = start + Duration::from_secs(knobs.secs);
    let mut clients = JoinSet::new();
    for k in 0..load {
        clients.spawn(load_client(url.clone(), k % 2 == 1, end, pace));
    }
    let _ = tokio::time::timeout_at(end.into(), drain).await;
    tokio::time::sleep_until(end.into()).await;
    let mut requests = Vec::new();
    while let Some(r) = clients.join_next().await {
        requests.extend(r.expect("a load client"));
    }
    // Moves completed just before the end reach the store and the client.
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.send(true).expect("the recorder listens");
    recorder
        .await
        .expect("the recorder task")
        .expect("record_boards");
    emulators.abort();
    if tokio::time::timeout(Duration::from_secs(5), sse_task)
        .await
        .is_err()
    {
        eprintln!("the SSE stream did not end with the server");
    }
    let SseSeen {
        moves: sse,
        events: sse_events,
        id_gaps: sse_id_gaps,
    } = std::mem::take(&mut *sse.lock().unwrap());
    let durable = std::mem::take(&mut *durable.lock().unwrap());
    // The captures are read before the directory goes.
    let boards = boards
        .into_iter()
        .map(|mut b| {
            b.capture_text = std::fs::read_to_string(&b.capture).expect("the capture");
            b
        })
        .collect();
    drop(dir);
    Phase {
        boards,
        durable,
        sse,
        sse_events,
        sse_id_gaps,
        requests,
        window: (start, end),
    }
}

/// Per ply (index ply - 1): when its field updates and its press were written.
#[derive(Clone, Default, Debug)]
struct Written {
    updates: Vec<Instant>,
    press: Option<Instant>,
}

/// Matches the script's body frames in order to the capture's board-to-host lines; also the
/// emulator's lateness (written minus scheduled) of every matched frame, in ms.
fn written(board: &Board) -> (Vec<Written>, Vec<f64>) {
    let cap = parse_capture(&board.capture_text).expect("the emulator's capture parses");
    let sent: Vec<_> = cap
        .chunks
        .iter()
        .filter(|c| c.dir == Direction::FromBoard)
        .collect();
    let s = &board.script;
    let mut plies = vec![Written::default(); s.plies.len()];
    let presses: HashMap<u64, usize> = s
        .plies
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((p.press_ms?, i)))
        .collect();
    let mut late = Vec::new();
    // The runner starts the body when the host first asks for updates: that command's line.
    let asks = [
        cmd::SEND_UPDATE,
        cmd::SEND_UPDATE_NICE,
        cmd::SEND_UPDATE_BRD,
    ];
    let Some(origin) = cap
        .chunks
        .iter()
        .find(|c| c.dir == Direction::ToBoard && c.bytes.iter().any(|b| asks.contains(b)))
        .map(|c| c.t_ms as i64)
    else {
        return (plies, late);
    };
    let mut j = 0;
    for e in s.events.iter().filter(|e| e.kind != EventKind::Handshake) {
        let Payload::Frame(f) = &e.payload else {
            continue;
        };
        let bytes = f.to_bytes();
        let due = origin + e.at_ms as i64 - s.body_start_ms as i64;
        // The capture's ms are truncated; a frame is never written before it is due.
        let found = sent[j..].iter().take(400).position(|c| {
            let t = c.t_ms as i64;
            c.bytes == bytes && t >= due - 1 && t <= due + 5_000
        });
        let Some(k) = found else { continue };
        let c = sent[j + k];
        j += k + 1;
        late.push((c.t_ms as i64 - due).max(0) as f64);
        let at = board.ready + Duration::from_millis(c.t_ms);
        match (e.kind, f) {
            (EventKind::Move, Frame::FieldUpdate { .. }) => {
                if let Some(w) = (e.ply as usize)
                    .checked_sub(1)
                    .and_then(|i| plies.get_mut(i))
                {
                    w.updates.push(at);
                }
            }
            (EventKind::Clock, Frame::BwTime(_)) => {
                if let Some(w) = presses.get(&e.at_ms).and_then(|&i| plies.get_mut(i)) {
                    w.press.get_or_insert(at);
                }
            }
            _ => {}
        }
    }
    (plies, late)
}

/// p50, p99 and max of `v` (ms), and its count.
fn stats(v: &mut [f64]) -> String {
    if v.is_empty() {
        return format!("{:>7} {:>7} {:>7} {:>6}", "-", "-", "-", 0);
    }
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1];
    format!(
        "{:>7.1} {:>7.1} {:>7.1} {:>6}",
        q(0.50),
        q(0.99),
        v[v.len() - 1],
        v.len()
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The latencies of one phase.
struct Latencies {
    to_durable: Vec<f64>,
    press_to_durable: Vec<f64>,
    to_sse: Vec<f64>,
    durable_to_sse: Vec<f64>,
    lateness: Vec<f64>,
    by_press: usize,
    by_settle: usize,
    unmatched: usize,
    missed_sse: usize,
    moves_in_window: usize,
    /// Moves that became durable within the window, whatever their frames.
    durable_in_window: usize,
}

fn latencies(p: &Phase) -> Latencies {
    let mut by_name: HashMap<&str, Vec<Written>> = HashMap::new();
    let mut lateness = Vec::new();
    for b in &p.boards {
        let (w, late) = written(b);
        by_name.insert(b.name.as_str(), w);
        lateness.extend(late);
    }
    let sse: HashMap<(&str, u32), Instant> = p
        .sse
        .iter()
        .rev()
        .map(|(b, ply, at)| ((b.as_str(), *ply), *at))
        .collect();
    let mut l = Latencies {
        to_durable: Vec::new(),
        press_to_durable: Vec::new(),
        to_sse: Vec::new(),
        durable_to_sse: Vec::new(),
        lateness,
        by_press: 0,
        by_settle: 0,
        unmatched: 0,
        missed_sse: 0,
        moves_in_window: 0,
        durable_in_window: p
            .durable
            .iter()
            .filter(|d| d.2 >= p.window.0 && d.2 <= p.window.1)
            .count(),
    };
    let mut seen = std::collections::HashSet::new();
    for (board, ply, durable) in &p.durable {
        // The first time a ply became durable (a takeback may record it again).
        if !seen.insert((board.as_str(), *ply)) {
            continue;
        }
        let w = by_name
            .get(board.as_str())
            .and_then(|w| w.get((*ply as usize).wrapping_sub(1)));
        // The press completes the move, unless the tracker recorded it as settled before it:
        // then the last field update of the ply before it was recorded.
        let press = w.and_then(|w| w.press).filter(|t| t <= durable);
        let settle = w.and_then(|w| w.updates.iter().rev().find(|t| *t <= durable).copied());
        let (frame, by_press) = match (press, settle) {
            (Some(press), _) => (press, true),
            (None, Some(settle)) => (settle, false),
            _ => {
                l.unmatched += 1;
                continue;
            }
        };
        if frame < p.window.0 || frame > p.window.1 {
            continue;
        }
        if by_press {
            l.by_press += 1;
        } else {
            l.by_settle += 1;
        }
        l.moves_in_window += 1;
        l.to_durable.push(ms(*durable - frame));
        if by_press {
            l.press_to_durable.push(ms(*durable - frame));
        }
        match sse.get(&(board.as_str(), *ply)) {
            Some(at) => {
                l.to_sse.push(ms(at.saturating_duration_since(frame)));
                l.durable_to_sse
                    .push(ms(at.saturating_duration_since(*durable)));
            }
            None => l.missed_sse += 1,
        }
    }
    l
}

fn request_row(label: &str, reqs: &[&(bool, Option<StatusCode>, Duration)], secs: u64) -> String {
    let ok = reqs.iter().filter(|r| r.1 == Some(StatusCode::OK)).count();
    let nm = reqs
        .iter()
        .filter(|r| r.1 == Some(StatusCode::NOT_MODIFIED))
        .count();
    let err = reqs.len() - ok - nm;
    let mut lat: Vec<f64> = reqs.iter().map(|r| ms(r.2)).collect();
    format!(
        "{label:<26} {:>8} {:>9.0} {:>7} {:>7} {:>5}   {}",
        reqs.len(),
        reqs.len() as f64 / secs as f64,
        ok,
        nm,
        err,
        stats(&mut lat)
    )
}

fn report(knobs: Knobs, phases: &[(&str, &Phase)]) {
    println!();
    println!(
        "relay bench: {} boards, emulator speed {}, {} s per phase, tokio 2 worker threads; \
         /round.pgn load: {} clients ({} with If-None-Match), back to back (\"saturated\") or one \
         request per {} ms each (\"paced\")",
        knobs.boards,
        knobs.speed,
        knobs.secs,
        knobs.clients,
        knobs.clients / 2,
        knobs.poll_ms
    );
    println!(
        "latencies in ms from the frame that completed the move (its clock press, or its last \
         field update when recorded as settled); frame-to-durable includes the tracker's \
         300 ms post-press scan wait and its 100 ms tick"
    );
    println!();
    println!(
        "{:<10} {:<16} {:>7} {:>7} {:>7} {:>6}",
        "phase", "measure", "p50", "p99", "max", "n"
    );
    for (label, p) in phases {
        let mut l = latencies(p);
        let rows: [(&str, &mut Vec<f64>); 5] = [
            ("frame->durable", &mut l.to_durable),
            ("press->durable", &mut l.press_to_durable),
            ("frame->SSE", &mut l.to_sse),
            ("durable->SSE", &mut l.durable_to_sse),
            ("emulator late", &mut l.lateness),
        ];
        for (i, (name, v)) in rows.into_iter().enumerate() {
            let label = if i == 0 { *label } else { "" };
            println!("{label:<10} {name:<16} {}", stats(v));
        }
        println!(
            "{:<10} durable moves {:.1}/s; timed moves {} (by press {}, by settle {}; \
             frames not found {}), durable without SSE {}; SSE events {}, id gaps {}",
            "",
            l.durable_in_window as f64 / knobs.secs as f64,
            l.moves_in_window,
            l.by_press,
            l.by_settle,
            l.unmatched,
            l.missed_sse,
            p.sse_events,
            p.sse_id_gaps
        );
    }
    println!();
    println!(
        "{:<26} {:>8} {:>9} {:>7} {:>7} {:>5}   {:>7} {:>7} {:>7} {:>6}",
        "/round.pgn", "requests", "req/s", "200", "304", "err", "p50", "p99", "max", "n"
    );
    for (label, p) in phases.iter().filter(|(_, p)| !p.requests.is_empty()) {
        let all: Vec<_> = p.requests.iter().collect();
        let plain: Vec<_> = p.requests.iter().filter(|r| !r.0).collect();
        let cond: Vec<_> = p.requests.iter().filter(|r| r.0).collect();
        for (kind, reqs) in [("all", all), ("plain GET", plain), ("If-None-Match", cond)] {
            let name = format!("{label} {kind}");
            println!("{}", request_row(&name, &reqs, knobs.secs));
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: a short smoke run then.
    let full = std::env::args().any(|a| a == "--bench");
    let knobs = Knobs::from_env(if full { Knobs::FULL } else { Knobs::SMOKE });
    let scripts = scripts(knobs.boards, knobs.speed);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    rt.block_on(async {
        let (n, secs, clients) = (knobs.boards, knobs.secs, knobs.clients);
        eprintln!("quiet phase: {n} boards for {secs} s");
        let quiet = phase(knobs, &scripts, 0, None).await;
        let pace = Duration::from_millis(knobs.poll_ms);
        eprintln!("paced phase: {n} boards, {clients} clients every {pace:?}, {secs} s");
        let paced = phase(knobs, &scripts, clients, Some(pace)).await;
        eprintln!("saturated phase: {n} boards, {clients} clients back to back, {secs} s");
        let saturated = phase(knobs, &scripts, clients, None).await;
        report(
            knobs,
            &[
                ("quiet", &quiet),
                ("paced", &paced),
                ("saturated", &saturated),
            ],
        );
    });
}
