//! The daemon: wires devices, pipelines and the store writer; shutdown.
//!
//! Flow: one task per board port reads bytes ([`crate::device::serial`]) into its
//! [`DgtPipeline`]; writes go to the single store writer (a thread owning the SQLite
//! connection), and a board announces its events only after the writer has committed them.
//! SIGINT/SIGTERM stop every task; the store is flushed before exit and open games stay open, so
//! a restart resumes them. `demo` runs the same daemon over emulated boards on pseudo-terminals.
//! With `--http`, the relay ([`crate::relay`]) serves the live state: each board tells its
//! [`Hub`] when it connects or is lost, every event once it is durable, and its clock (at most a
//! few times a second).

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::Context;
use tokio::{
    sync::{mpsc, oneshot, watch},
    task::JoinSet,
};
use tracing::{Instrument, error, info, info_span, warn};

use crate::{
    Millis,
    arbiter::{Laws, LawsConfig, LawsSetup, Referee, Supervision, TimeControl},
    device::{
        Direction,
        serial::{self, Backoff, Watchdog, now_ms},
    },
    emulator::{self, EmulatorOptions, PtyEvent, PtyOptions},
    game::{Kind, chess::ChessGame},
    pipeline::DgtPipeline,
    relay::{self, Hub, Token},
    sensor::dgt::ClockReading,
    store::{BoardId, GameId, Store, StoreError, Write},
    tracker::{Tracker, TrackerEvent},
};

/// The Laws the games are played under (shared by `run`, `demo` and `replay`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LawsArgs {
    /// Edition of the FIDE Laws: fide-2001, fide-2009, fide-2014, fide-2018 or fide-2023.
    #[arg(long, default_value_t = Laws::default())]
    pub laws: Laws,
    /// The time control, e.g. 90+30, 40/90+30:30+30, 15+10, 3+2 (minutes + seconds per move;
    /// `N/` a move quota; `dS` a delay). Article 8.4 and the rapid/blitz rules need it.
    #[arg(long)]
    pub time_control: Option<TimeControl>,
    /// Rapid and blitz: full or reduced supervision (the appendices' two sets of rules).
    #[arg(long, value_enum, default_value_t = Supervision::Full)]
    pub supervision: Supervision,
}

impl LawsArgs {
    pub fn setup(&self) -> LawsSetup {
        let mut cfg = LawsConfig::for_edition(self.laws);
        cfg.supervision = self.supervision;
        LawsSetup {
            cfg,
            time_control: self.time_control.clone(),
        }
    }
}

/// `boardscribe run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The database (created if missing).
    #[arg(long, default_value = "boardscribe.db")]
    pub db: PathBuf,
    /// Serial ports of DGT boards (repeat for several boards).
    #[arg(long = "port", required = true)]
    pub ports: Vec<PathBuf>,
    /// Print every move as it is recorded.
    #[arg(long)]
    pub print_moves: bool,
    /// Serve the relay (round PGN, live state, live page, admin API) on this address, e.g.
    /// 127.0.0.1:8080 (default: no server).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    #[command(flatten)]
    pub admin: AdminArgs,
    #[command(flatten)]
    pub laws: LawsArgs,
}

/// The relay's admin API.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AdminArgs {
    /// A file holding the bearer token of the admin API (without it, admin requests are refused).
    #[arg(long, value_name = "FILE")]
    pub admin_token_file: Option<PathBuf>,
}

impl AdminArgs {
    /// The token, read from its file.
    pub fn token(&self) -> anyhow::Result<Option<Token>> {
        self.admin_token_file
            .as_deref()
            .map(Token::from_file)
            .transpose()
            .map_err(Into::into)
    }
}

/// `boardscribe demo`.
#[derive(clap::Args, Debug, Clone)]
pub struct DemoArgs {
    /// Number of emulated boards.
    #[arg(long, default_value_t = 2)]
    pub boards: usize,
    /// Time multiplier for the emulated players (1 is human speed).
    #[arg(long, default_value_t = 0.04)]
    pub speed: f64,
    /// Where to put the database (default: a new temporary directory).
    #[arg(long)]
    pub db: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Serve the live page on this address (default: 127.0.0.1:8080, or any free port).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// No live page: record, print and exit.
    #[arg(long, conflicts_with = "http")]
    pub no_http: bool,
    #[command(flatten)]
    pub admin: AdminArgs,
    #[command(flatten)]
    pub laws: LawsArgs,
}

/// What the writer says of a batch, handing the batch back (to announce it, or to retry it).
type WriteReply = (Result<Vec<GameId>, StoreError>, Vec<Write>);

/// A batch for the writer and where to say it is durable.
type WriteRequest = (Vec<Write>, oneshot::Sender<WriteReply>);

/// Why a batch was not stored.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the store writer has stopped")]
    WriterGone,
}

/// The handle boards use to reach the one store writer.
#[derive(Clone)]
pub struct StoreWriter {
    tx: mpsc::Sender<WriteRequest>,
}

impl StoreWriter {
    /// Starts the writer thread; it owns `store` until every handle is dropped.
    pub fn start(
        mut store: Store,
    ) -> std::io::Result<(StoreWriter, std::thread::JoinHandle<Store>)> {
        let (tx, mut rx) = mpsc::channel::<WriteRequest>(256);
        let handle = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || {
                let mut dated: std::collections::HashSet<GameId> = Default::default();
                while let Some((writes, reply)) = rx.blocking_recv() {
                    let result = store.write_batch(&writes).and_then(|games| {
                        for &g in &games {
                            if dated.insert(g) {
                                store.set_game_date(g, &pgn_date(now_ms()))?;
                            }
                        }
                        Ok(games)
                    });
                    if let Err(e) = &result {
                        error!(cause = %e, "store write failed");
                    }
                    // The board may have gone; nothing to tell then.
                    let _ignored_if_board_gone = reply.send((result, writes));
                }
                store
            })?;
        Ok((StoreWriter { tx }, handle))
    }

    /// Writes a batch in one transaction and hands it back once it is durable; on failure, the
    /// batch comes back with the error (unless the writer has stopped with it).
    pub async fn write(
        &self,
        writes: Vec<Write>,
    ) -> Result<Vec<Write>, (WriteError, Option<Vec<Write>>)> {
        let (reply, done) = oneshot::channel();
        if let Err(mpsc::error::SendError((writes, _))) = self.tx.send((writes, reply)).await {
            return Err((WriteError::WriterGone, Some(writes)));
        }
        match done.await {
            Ok((Ok(_), writes)) => Ok(writes),
            Ok((Err(e), writes)) => Err((e.into(), Some(writes))),
            Err(_) => Err((WriteError::WriterGone, None)),
        }
    }
}

/// `YYYY.MM.DD` (PGN) of a Unix time in ms, UTC.
pub fn pgn_date(ms: Millis) -> String {
    // Days to civil date (Howard Hinnant's algorithm).
    let z = (ms / 86_400_000) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}.{m:02}.{d:02}")
}

/// How the daemon shows recorded events on standard output.
pub fn print_event(board: &str, event: &TrackerEvent) {
    match event {
        TrackerEvent::GameStarted { orientation, .. } => {
            println!("{board}: new game (board {})", orientation.as_str());
        }
        TrackerEvent::Move(m) => {
            let n = m.ply.div_ceil(2);
            let dots = if m.ply % 2 == 1 { "." } else { "..." };
            println!("{board}: {n}{dots} {}", m.notation);
        }
        TrackerEvent::Revision { old, new, .. } => {
            println!(
                "{board}: ply {} revised: {} -> {}",
                new.ply, old.notation, new.notation
            );
        }
        TrackerEvent::Takeback {
            from_ply, to_ply, ..
        } => {
            println!("{board}: takeback from ply {from_ply} to ply {to_ply}");
        }
        TrackerEvent::ResultGesture { proposed, .. } => {
            println!(
                "{board}: result shown with the kings: {}",
                proposed.as_pgn()
            );
        }
        TrackerEvent::GameEnded {
            outcome,
            termination,
            ..
        } => println!("{board}: {} ({termination})", outcome.as_pgn()),
        TrackerEvent::Irregularity {
            kind,
            ply,
            detail,
            article,
            ..
        } => {
            let article = article
                .as_deref()
                .map_or(String::new(), |a| format!(", {a}"));
            println!(
                "{board}: irregularity before ply {ply}: {}{article}: {detail}",
                kind.as_str()
            );
        }
        TrackerEvent::Resolved { id, how, .. } => {
            println!("{board}: irregularity {id} resolved: {how}");
        }
        TrackerEvent::FlagFall {
            side,
            proposed,
            note,
            ..
        } => {
            let note = note.as_deref().map_or(String::new(), |n| format!("; {n}"));
            println!(
                "{board}: {} flag fell: {} for the arbiter to confirm{note}",
                side.as_str(),
                proposed.as_pgn()
            );
        }
        TrackerEvent::Claimable { claim, ply, .. } => {
            println!("{board}: before ply {ply} a draw may be claimed: {claim}");
        }
        TrackerEvent::Reoriented { orientation, .. } => {
            println!("{board}: the board lies {}", orientation.as_str());
        }
    }
}

/// One board to record: where it is and what the store knows of it.
struct BoardSpec {
    name: String,
    /// Its place in the order given (1-based), shown as the board number until pairings say.
    number: u32,
    path: PathBuf,
    id: BoardId,
    tracker: Tracker<ChessGame>,
    referee: Referee,
}

/// Resolves boards in the store and resumes their open games.
fn prepare_boards(
    store: &mut Store,
    ports: &[PathBuf],
    laws: &LawsSetup,
) -> anyhow::Result<Vec<BoardSpec>> {
    let mut boards = Vec::new();
    for (i, path) in ports.iter().enumerate() {
        let name = path.display().to_string();
        let id = store.board(&name, Kind::Chess)?;
        let settings = laws.tracker_settings();
        let mut referee = laws.referee();
        let tracker = match store.open_game(id)? {
            Some(game) => {
                match Tracker::resume(settings.clone(), game.orientation, &game.moves, now_ms()) {
                    Some(t) => {
                        info!(board = %name, game = game.id.0, plies = game.moves.len(), "resuming game");
                        referee.resume(&game.moves);
                        t
                    }
                    None => {
                        warn!(board = %name, game = game.id.0, "stored game does not replay; waiting for a new game");
                        Tracker::new(settings)
                    }
                }
            }
            None => Tracker::new(settings),
        };
        boards.push(BoardSpec {
            name,
            number: i as u32 + 1,
            path: path.clone(),
            id,
            tracker,
            referee,
        });
    }
    Ok(boards)
}

/// The emulated clock for `laws`' time control: the first period's base and increment.
fn emulated_clock(laws: &LawsSetup) -> (u64, u64) {
    laws.time_control
        .as_ref()
        .and_then(|tc| tc.periods().first())
        .map_or((15 * 60_000, 10_000), |p| {
            (u64::from(p.base_secs) * 1000, p.increment_ms())
        })
}

/// `boardscribe run`: records every given port until SIGINT/SIGTERM.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let (stop_tx, stop_rx) = watch::channel(false);
        tokio::spawn(async move {
            wait_for_signal().await;
            info!("stopping");
            let _ignored_if_all_done = stop_tx.send(true);
        });
        let print = args.print_moves;
        let hub = match args.http {
            Some(addr) => {
                let hub = Hub::new();
                let token = args.admin.token()?;
                let url = start_relay(addr, &hub, &args.db, token, stop_rx.clone()).await?;
                info!(%url, "relay serving");
                Some(hub)
            }
            None => None,
        };
        record_boards(
            &args.db,
            &args.ports,
            &args.laws.setup(),
            stop_rx,
            hub,
            move |board, e| {
                if print {
                    print_event(board, e)
                }
            },
        )
        .await
    })
}

/// Binds `addr` and serves the relay until `stop` turns true; returns the page's URL.
pub async fn start_relay(
    addr: SocketAddr,
    hub: &Hub,
    db: &Path,
    token: Option<Token>,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr} for the relay"))?;
    let bound = listener.local_addr()?;
    let app = relay::router(hub.clone(), db, token);
    let shutdown = async move {
        // Stopped, or the daemon is gone: either way, stop serving.
        let _ignored_if_sender_gone = stop.wait_for(|s| *s).await;
    };
    let hub = hub.clone();
    tokio::spawn(async move {
        if let Err(e) = relay::serve(listener, app, hub, shutdown).await {
            error!(cause = %e, "relay server failed");
        }
    });
    Ok(format!("http://{bound}/"))
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ignored = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ignored = tokio::signal::ctrl_c().await;
    }
}

/// Records `ports` into the database at `db` until `stop` turns true; `announce` sees every
/// event once it is durable, and so does `hub` (with connections and clocks) if given.
pub async fn record_boards(
    db: &Path,
    ports: &[PathBuf],
    laws: &LawsSetup,
    stop: watch::Receiver<bool>,
    hub: Option<Hub>,
    announce: impl Fn(&str, &TrackerEvent) + Send + Sync + 'static,
) -> anyhow::Result<()> {
    let mut store = Store::open(db).with_context(|| format!("opening {}", db.display()))?;
    let boards = prepare_boards(&mut store, ports, laws)?;
    if let Some(hub) = &hub {
        for b in &boards {
            let resumed = match store.open_game(b.id)? {
                Some(game) if b.tracker.recorded_plies() == game.moves.len() => game.moves,
                _ => Vec::new(),
            };
            hub.add_board(&b.name, Some(b.number), &resumed);
        }
    }
    let (writer, writer_thread) =
        StoreWriter::start(store).context("starting the store writer thread")?;
    let announce = Arc::new(announce);
    let mut tasks = JoinSet::new();
    for (i, board) in boards.into_iter().enumerate() {
        let span = info_span!("board", board = %board.name);
        let writer = writer.clone();
        let stop = stop.clone();
        let announce = announce.clone();
        let hub = hub.clone();
        tasks.spawn(
            async move {
                let live = hub.clone();
                let announce = move |b: &str, e: &TrackerEvent| {
                    announce(b, e);
                    if let Some(hub) = &live {
                        hub.committed(b, e);
                    }
                };
                board_task(board, writer, stop, i as u64, hub, announce).await;
            }
            .instrument(span),
        );
    }
    drop(writer);
    while let Some(res) = tasks.join_next().await {
        if let Err(e) = res {
            error!(cause = %e, "board task failed");
        }
    }
    let store = tokio::task::spawn_blocking(move || writer_thread.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the store writer panicked"))?;
    store.integrity_check()?;
    info!("store closed");
    Ok(())
}

/// Keeps one board recorded: reconnects with backoff until `stop`.
async fn board_task(
    board: BoardSpec,
    writer: StoreWriter,
    mut stop: watch::Receiver<bool>,
    seed: u64,
    hub: Option<Hub>,
    announce: impl Fn(&str, &TrackerEvent),
) {
    let BoardSpec {
        name,
        path,
        id,
        tracker,
        referee,
        ..
    } = board;
    let mut board = BoardRef {
        name,
        path,
        live: hub.map(LiveClockFeed::new),
    };
    let mut pipeline = DgtPipeline::new(id, tracker, referee);
    let mut backoff = Backoff::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ now_ms());
    loop {
        if *stop.borrow() {
            break;
        }
        match serial::open(&board.path) {
            Ok(port) => {
                info!(port = %board.path.display(), "board connected");
                if let Some(live) = &board.live {
                    live.hub.board_connected(&board.name);
                }
                backoff.reset();
                let ended = session(
                    port,
                    &mut board,
                    &mut pipeline,
                    &writer,
                    &mut stop,
                    &announce,
                )
                .await;
                pipeline.disconnected();
                persist(&mut pipeline, &writer, &board.name, &announce).await;
                let why = match &ended {
                    SessionEnd::Stopped => "the daemon stopped",
                    SessionEnd::Lost(why) => why.as_str(),
                };
                if let Some(live) = &board.live {
                    live.hub.board_lost(&board.name, why);
                }
                match ended {
                    SessionEnd::Stopped => break,
                    SessionEnd::Lost(why) => warn!(reason = %why, "board lost; reconnecting"),
                }
            }
            Err(e) => warn!(cause = %e, "board not available"),
        }
        let delay = backoff.next_delay();
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = stop.changed() => {}
        }
    }
    persist(&mut pipeline, &writer, &board.name, &announce).await;
}

/// Name and port of a board whose tracker has moved into its pipeline.
struct BoardRef {
    name: String,
    path: PathBuf,
    live: Option<LiveClockFeed>,
}

/// Passes a board's clock to the relay: a new state of the clock (started, stopped, pressed,
/// a flag) at once, a running clock's time at most every [`LiveClockFeed::EVERY`].
struct LiveClockFeed {
    hub: Hub,
    last: Option<(ClockReading, Instant)>,
}

impl LiveClockFeed {
    const EVERY: Duration = Duration::from_millis(250);

    fn new(hub: Hub) -> LiveClockFeed {
        LiveClockFeed { hub, last: None }
    }

    fn update(&mut self, name: &str, pipeline: &DgtPipeline) {
        let Some(reading) = pipeline.last_clock() else {
            return;
        };
        let due = match &self.last {
            None => true,
            Some((last, _)) if *last == reading => false,
            Some((last, at)) => {
                let state =
                    |r: &ClockReading| (r.running, r.lever_right_high, r.left_flag, r.right_flag);
                state(last) != state(&reading) || at.elapsed() >= Self::EVERY
            }
        };
        if due {
            self.last = Some((reading, Instant::now()));
            self.hub.clock(name, &reading, pipeline.white_on_left());
        }
    }
}

enum SessionEnd {
    Stopped,
    Lost(String),
}

/// Writes what the pipeline has and announces its events once they are durable; a batch the
/// store refused goes back to the pipeline, ahead of newer writes, for the next attempt.
async fn persist(
    pipeline: &mut DgtPipeline,
    writer: &StoreWriter,
    name: &str,
    announce: &impl Fn(&str, &TrackerEvent),
) {
    let writes = pipeline.take_writes();
    if writes.is_empty() {
        return;
    }
    match writer.write(writes).await {
        Ok(writes) => {
            for w in &writes {
                if let Write::Event { event, .. } = w {
                    announce(name, event);
                }
            }
        }
        Err((e, writes)) => {
            error!(cause = %e, "could not store; keeping the writes for the next attempt");
            if let Some(writes) = writes {
                pipeline.requeue(writes);
            }
        }
    }
}

async fn session(
    mut port: tokio_serial::SerialStream,
    board: &mut BoardRef,
    pipeline: &mut DgtPipeline,
    writer: &StoreWriter,
    stop: &mut watch::Receiver<bool>,
    announce: &impl Fn(&str, &TrackerEvent),
) -> SessionEnd {
    let path = board.path.clone();
    let path = path.as_path();
    if let Err(e) = serial::send(&mut port, path, &serial::STARTUP).await {
        return SessionEnd::Lost(e.to_string());
    }
    pipeline.feed(now_ms(), Direction::ToBoard, &serial::STARTUP);
    let watchdog = Watchdog::default();
    let mut buf = [0u8; 4096];
    let mut last_rx = Instant::now();
    let mut probed = false;
    let mut last_raw_flush = Instant::now();
    let mut ticker = tokio::time::interval(Duration::from_millis(100));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            read = serial::read(&mut port, path, &mut buf) => match read {
                Ok(0) => return SessionEnd::Lost("port closed".into()),
                Ok(n) => {
                    pipeline.feed(now_ms(), Direction::FromBoard, &buf[..n]);
                    last_rx = Instant::now();
                    probed = false;
                }
                Err(e) => return SessionEnd::Lost(e.to_string()),
            },
            _ = ticker.tick() => {
                pipeline.tick(now_ms());
                let silent = last_rx.elapsed();
                if silent >= watchdog.give_up_after {
                    return SessionEnd::Lost(format!("silent for {} s", silent.as_secs()));
                }
                if silent >= watchdog.probe_after && !probed {
                    probed = true;
                    if let Err(e) = serial::send(&mut port, path, &serial::PROBE).await {
                        return SessionEnd::Lost(e.to_string());
                    }
                    pipeline.feed(now_ms(), Direction::ToBoard, &serial::PROBE);
                }
            },
            _ = stop.changed() => return SessionEnd::Stopped,
        }
        let raw_due = last_raw_flush.elapsed() >= Duration::from_secs(1);
        if pipeline.pending_writes() > 0 || raw_due {
            persist(pipeline, writer, &board.name, announce).await;
            if raw_due {
                last_raw_flush = Instant::now();
            }
        }
        if let Some(live) = board.live.as_mut() {
            live.update(&board.name, pipeline);
        }
    }
}

/// `boardscribe demo`: emulated boards play corpus games into a temporary database.
pub fn demo(args: DemoArgs) -> anyhow::Result<()> {
    let dir = match &args.db {
        Some(db) => db
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(".")),
        None => {
            let d = std::env::temp_dir().join(format!("boardscribe-demo-{}", std::process::id()));
            std::fs::create_dir_all(&d)?;
            d
        }
    };
    let db = args.db.clone().unwrap_or_else(|| dir.join("demo.db"));
    let games = emulator::games_from_pgn(DEMO_PGN)?;
    // The emulated clocks run the configured time control (15+10 unless told).
    let mut laws = args.laws.setup();
    if laws.time_control.is_none() {
        laws.time_control = Some("15+10".parse()?);
    }
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let mut emulators = JoinSet::new();
        let mut ports = Vec::new();
        let (done_tx, mut done_rx) = mpsc::unbounded_channel::<usize>();
        for i in 0..args.boards.max(1) {
            let game = &games[i % games.len()];
            let seed = args.seed + i as u64;
            let opts = EmulatorOptions {
                speed: args.speed,
                seed,
                rotated: i % 2 == 1,
                time_control: Some(emulated_clock(&laws)),
                // A few irregularities (a knocked piece, an illegal move, a press without a
                // move...), so that the demo shows the arbiter's side too.
                irregularities: emulator::random_irregularities(seed, game.moves.len(), 0.03),
                ..EmulatorOptions::default()
            };
            let script = emulator::script_pgn(game, &opts)?;
            let link = dir.join(format!("board-{}", i + 1));
            let pty = PtyOptions {
                link: Some(link.clone()),
                ..PtyOptions::default()
            };
            let (tx, mut rx) = mpsc::unbounded_channel();
            emulators.spawn(async move { emulator::run_pty(&script, &pty, Some(tx)).await });
            // Wait until the pseudo-terminal exists before the daemon opens it; then pass on
            // when its game is over.
            while let Some(ev) = rx.recv().await {
                if matches!(ev, PtyEvent::Ready(_)) {
                    break;
                }
            }
            let done_tx = done_tx.clone();
            tokio::spawn(async move {
                while let Some(ev) = rx.recv().await {
                    if ev == PtyEvent::ScriptDone {
                        let _ignored_if_demo_over = done_tx.send(i);
                    }
                }
            });
            println!(
                "board {}: {} - {} on {}",
                i + 1,
                game.tag("White").unwrap_or("?"),
                game.tag("Black").unwrap_or("?"),
                link.display()
            );
            ports.push(link);
        }
        drop(done_tx);
        let boards = ports.len();
        let (stop_tx, stop_rx) = watch::channel(false);
        let (relay_stop_tx, relay_stop_rx) = watch::channel(false);
        let hub = if args.no_http {
            None
        } else {
            let hub = Hub::new();
            let token = args.admin.token()?;
            let default = SocketAddr::from(([127, 0, 0, 1], 8080));
            let url = match start_relay(
                args.http.unwrap_or(default),
                &hub,
                &db,
                token.clone(),
                relay_stop_rx.clone(),
            )
            .await
            {
                Ok(url) => url,
                // 8080 is taken: any free port will do.
                Err(e) if args.http.is_none() => {
                    warn!(cause = %e, "trying another port");
                    let any = SocketAddr::from(([127, 0, 0, 1], 0));
                    start_relay(any, &hub, &db, token, relay_stop_rx).await?
                }
                Err(e) => return Err(e),
            };
            println!("live page: {url}");
            Some(hub)
        };
        let daemon = tokio::spawn({
            let db = db.clone();
            let laws = laws.clone();
            let hub = hub.clone();
            async move { record_boards(&db, &ports, &laws, stop_rx, hub, print_event).await }
        });
        let all_done = async {
            for _ in 0..boards {
                if done_rx.recv().await.is_none() {
                    break;
                }
            }
            // Let the last moves settle and reach the store.
            tokio::time::sleep(Duration::from_secs(1)).await;
        };
        let interrupted = tokio::select! {
            _ = all_done => false,
            _ = wait_for_signal() => true,
        };
        if interrupted {
            println!("interrupted");
        }
        let _ignored_if_daemon_ended = stop_tx.send(true);
        daemon.await??;
        emulators.abort_all();
        if hub.is_some() && !interrupted {
            println!("games over; the live page stays up until Ctrl-C");
            wait_for_signal().await;
        }
        let _ignored_if_relay_ended = relay_stop_tx.send(true);
        anyhow::Ok(())
    })?;
    println!();
    println!("database: {}", db.display());
    println!(
        "export:   boardscribe export --db {} --format pgn",
        db.display()
    );
    println!(
        "    (or:  cargo run --release -- export --db {} --format json)",
        db.display()
    );
    Ok(())
}

/// Games the demo boards play (public-domain game scores from the corpus).
const DEMO_PGN: &str = include_str!("../fixtures/demo.pgn");
