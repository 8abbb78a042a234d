//! One board's task: find its port, open it, feed its pipeline, persist, reconnect.
//!
//! Flow: [`prepare`] resolves a configured board in the store and resumes its open game;
//! [`board_task`] then loops until `stop`: find the port of the board's [`Locator`] (a serial
//! number is looked up in sysfs on every attempt, so a board moved to another USB port is found
//! again), open it, send the kind's start-up commands ([`BoardKit`]), and run a session: bytes in,
//! watchdog probes when the board falls silent, writes to the store writer, events announced once
//! durable, counters into the [`Metrics`]. A lost board is reopened with backoff; its game goes on.
//! A batch the store refuses (a full disk) goes back into the pipeline, which keeps tracking; it
//! is tried again every [`RETRY_EVERY`], not on every frame, and the board shows on the live
//! state that its recording is suspended, and why, until the store takes it. An arbiter's
//! decision that changes the record (from the admin API, through the board's desk) is taken
//! between two reads, once the board's writes are durable ([`take_change`]).

use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use tokio::sync::{mpsc, watch};
use tracing::{debug, error, info, warn};

use super::writer::StoreWriter;
use crate::{
    arbiter::{IrregularityKind, Judge, LawsSetup, TogyzReferee},
    config::{BoardConfig, Locator},
    device::{
        Direction, discover,
        serial::{self, Backoff, Watchdog, now_ms},
    },
    game::{GameKind, Kind, togyz::TogyzGame},
    metrics::Metrics,
    pipeline::{Board, Dgt, Pipeline, PipelineStats, Tgz},
    protocol::tgz,
    relay::{
        Hub,
        desk::{RecordChange, next_change},
    },
    sensor::dgt::{ClockLayout, ClockReading},
    store::{BoardId, GameId, Store, Write},
    tracker::{RecordedMove, Tracker, TrackerEvent, TrackerSettings},
};

/// What the daemon needs of a kind of board beyond its pipeline.
pub trait BoardKit: Board + 'static {
    /// The kind the store records.
    const KIND: Kind;
    /// Sent after every open (boards power up silent).
    fn startup() -> Vec<u8>;
    /// Sent when the board falls silent: answered in every mode.
    fn probe() -> Vec<u8>;
    /// Asks for the board's memory, after a gap (boards with [`Board::HAS_MEMORY`]).
    fn memory_request() -> Vec<u8> {
        Vec::new()
    }
    fn settings(laws: &LawsSetup) -> TrackerSettings;
    fn judge(laws: &LawsSetup) -> Self::Judge;
}

impl BoardKit for Dgt {
    const KIND: Kind = Kind::Chess;

    fn startup() -> Vec<u8> {
        serial::STARTUP.to_vec()
    }

    fn probe() -> Vec<u8> {
        serial::PROBE.to_vec()
    }

    /// Reset first: a board sending updates could mix them into the reply.
    fn memory_request() -> Vec<u8> {
        vec![
            crate::protocol::dgt::cmd::SEND_RESET,
            crate::protocol::dgt::cmd::SEND_EE_MOVES,
        ]
    }

    fn settings(laws: &LawsSetup) -> TrackerSettings {
        laws.tracker_settings()
    }

    fn judge(laws: &LawsSetup) -> Self::Judge {
        laws.referee()
    }
}

impl BoardKit for Tgz {
    const KIND: Kind = Kind::Togyz;

    /// Identity, a full dump, updates with the clock, and the clock now.
    fn startup() -> Vec<u8> {
        let mut out = vec![tgz::cmd::RETURN_SERIALNR];
        for c in tgz::startup(true) {
            c.encode(&mut out);
        }
        out.push(tgz::cmd::SEND_CLK);
        out
    }

    fn probe() -> Vec<u8> {
        vec![tgz::cmd::RETURN_SERIALNR]
    }

    fn settings(_laws: &LawsSetup) -> TrackerSettings {
        TrackerSettings::for_game::<TogyzGame>()
    }

    fn judge(_laws: &LawsSetup) -> TogyzReferee {
        TogyzReferee::new(crate::game::togyz::Rules::KYRGYZ)
    }
}

/// One board to record: where it is and what the store knows of it.
pub struct BoardSpec<B: BoardKit> {
    pub name: String,
    /// The board number of the pairings.
    pub number: u32,
    pub locator: Locator,
    pub id: BoardId,
    pub clock_layout: ClockLayout,
    pub(super) tracker: Tracker<B::Game>,
    pub(super) judge: B::Judge,
    /// The open game resumed from the store, if any.
    pub game: Option<GameId>,
    /// The resumed game's moves (for the live page).
    pub resumed: Vec<RecordedMove>,
}

impl<B: BoardKit> BoardSpec<B> {
    /// The board as the daemon records it, reached through `locator` (its own, or its bus's):
    /// what it shows and its pipeline. A resumed game counts as started.
    pub(super) fn start(self, locator: Locator, ctx: &Ctx) -> (BoardRef, Pipeline<B>) {
        if self.game.is_some() {
            ctx.metrics.game_started();
        }
        let board = BoardRef::new(self.name, locator, ctx, self.game);
        let pipeline = Pipeline::<B>::new(self.id, self.tracker, self.judge)
            .with_clock_layout(self.clock_layout);
        (board, pipeline)
    }
}

/// Resolves `cfg` in the store (numbering it) and resumes its open game.
pub fn prepare<B: BoardKit>(
    store: &mut Store,
    cfg: &BoardConfig,
    laws: &LawsSetup,
) -> anyhow::Result<BoardSpec<B>> {
    let name = cfg.name.clone();
    let id = store.board(&name, B::KIND)?;
    store.set_board_number(id, cfg.number)?;
    let settings = B::settings(laws);
    let mut judge = B::judge(laws);
    let mut game = None;
    let mut resumed = Vec::new();
    let tracker = match store.open_game(id)? {
        Some(open) => {
            // A Chess960 game goes on from its own start position (none stored: the standard
            // one); a start that does not read is a game that does not replay.
            let start = match open.start_position.as_deref() {
                None => Some(None),
                Some(text) => B::Game::parse_start(text).map(Some),
            };
            let resumed_tracker = start.and_then(|start| {
                Tracker::resume(
                    settings.clone(),
                    open.orientation,
                    start,
                    &open.moves,
                    now_ms(),
                )
            });
            match resumed_tracker {
                Some(mut t) => {
                    info!(board = %name, game = open.id.0, plies = open.moves.len(), "resuming game");
                    // A result the kings showed after the last move is not reported again.
                    let last = open.moves.len() as u32 + 1;
                    if open
                        .events
                        .iter()
                        .any(|e| e.kind == "result_gesture" && e.ply == Some(last))
                    {
                        t.gesture_already_reported();
                    }
                    // Irregularities go on being numbered after the stored ones.
                    let numbered = open
                        .events
                        .iter()
                        .filter(|e| IrregularityKind::from_str_opt(&e.kind).is_some())
                        .filter_map(|e| e.detail.get("id")?.as_u64())
                        .max()
                        .unwrap_or(0);
                    t.number_irregularities_after(numbered as u32);
                    judge.resume(open.start_position.as_deref(), &open.moves);
                    game = Some(open.id);
                    resumed = open.moves;
                    t
                }
                None => {
                    warn!(board = %name, game = open.id.0, "stored game does not replay; waiting for a new game");
                    Tracker::new(settings)
                }
            }
        }
        None => Tracker::new(settings),
    };
    Ok(BoardSpec {
        name,
        number: cfg.number,
        locator: cfg.locator.clone(),
        id,
        clock_layout: cfg.clock_layout,
        tracker,
        judge,
        game,
        resumed,
    })
}

/// A board asked for its memory that sends nothing for this long has none to give.
const MEMORY_SILENCE: Duration = Duration::from_secs(2);

/// The longest a memory read may take (a full log takes about 8 s at 9600 baud).
const MEMORY_WAIT: Duration = Duration::from_secs(20);

/// How long a board waits after the store refused its first batch before trying again.
const RETRY_FIRST: Duration = Duration::from_secs(1);

/// How long a board waits between later attempts while the store refuses its writes.
pub const RETRY_EVERY: Duration = Duration::from_secs(2);

/// Sees every event of a board once it is durable.
pub type Announce = Arc<dyn Fn(&str, &TrackerEvent) + Send + Sync>;

/// What every board task shares.
#[derive(Clone)]
pub struct Ctx {
    pub writer: StoreWriter,
    pub stop: watch::Receiver<bool>,
    pub hub: Option<Hub>,
    pub metrics: Arc<Metrics>,
    /// Where serial numbers are looked up (`/sys`).
    pub sysfs: PathBuf,
    pub announce: Announce,
}

/// A board's state besides its pipeline.
pub(super) struct BoardRef {
    pub(super) name: String,
    pub(super) locator: Locator,
    pub(super) live: Option<LiveClockFeed>,
    /// Whether its game is in progress (for the games-live gauge).
    pub(super) playing: bool,
    /// The pipeline counters already added to the metrics.
    pub(super) reported: PipelineStats,
    /// Set while the store refuses this board's writes.
    pub(super) refused: Option<Refusal>,
    /// The game it records (the one resumed, or the last one started).
    pub(super) game: Option<GameId>,
}

/// The store refusing a board's writes: since when, how often, why, and when to try again.
pub(super) struct Refusal {
    since: Instant,
    batches: u64,
    error: String,
    next_try: Instant,
}

/// Whether [`persist`] may wait for the retry time of a refused store.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Attempt {
    /// Only when due (on a frame, a tick).
    WhenDue,
    /// Now, whatever the retry time (stopping).
    Now,
}

impl BoardRef {
    /// A board found through `locator`, shown on the hub of `ctx` if there is one; `game`: its
    /// game in progress.
    pub(super) fn new(name: String, locator: Locator, ctx: &Ctx, game: Option<GameId>) -> BoardRef {
        BoardRef {
            name,
            locator,
            live: ctx.hub.clone().map(LiveClockFeed::new),
            playing: game.is_some(),
            reported: PipelineStats::default(),
            refused: None,
            game,
        }
    }
}

/// Keeps one board recorded: reconnects with backoff until `stop`.
pub async fn board_task<B: BoardKit>(spec: BoardSpec<B>, ctx: Ctx, seed: u64) {
    if let Some(game) = spec.game {
        tracing::Span::current().record("game", game.0);
    }
    let locator = spec.locator.clone();
    let (mut board, mut pipeline) = spec.start(locator, &ctx);
    let mut desk = ctx
        .hub
        .as_ref()
        .map(|hub| hub.desks().open([board.name.as_str()]));
    let mut backoff = Backoff::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ now_ms());
    let mut stop = ctx.stop.clone();
    // When the board was last connected, and the last reason it could not be opened (logged
    // once, not at every attempt).
    let mut last_seen: Option<Instant> = None;
    let mut unavailable: Option<String> = None;
    loop {
        if *stop.borrow() {
            break;
        }
        // Writes the store refused are tried again while the board is away, too.
        persist(&mut pipeline, &mut board, &ctx, Attempt::WhenDue).await;
        match open(&board.locator, &ctx.sysfs) {
            Ok((path, port)) => {
                unavailable = None;
                info!(port = %path.display(), "board connected");
                ctx.metrics.board_connected();
                if let Some(live) = &board.live {
                    live.hub.board_connected(&board.name);
                }
                backoff.reset();
                let ended = session(
                    port,
                    &path,
                    &mut board,
                    &mut pipeline,
                    &ctx,
                    &mut stop,
                    &mut desk,
                )
                .await;
                last_seen = Some(Instant::now());
                pipeline.disconnected(now_ms());
                persist(&mut pipeline, &mut board, &ctx, Attempt::WhenDue).await;
                ctx.metrics.board_lost();
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
            Err(why) => {
                if unavailable.as_ref() != Some(&why) {
                    warn!(cause = %why, "board not available; looking for it");
                }
                unavailable = Some(why);
            }
        }
        let delay = retry_delay(&mut backoff, last_seen);
        let deadline = Instant::now() + delay;
        loop {
            // Decisions reach the record while the board is away, too.
            tokio::select! {
                _ = wait_for_port(&board.locator, &ctx.sysfs, deadline.saturating_duration_since(Instant::now())) => break,
                _ = stop.changed() => break,
                change = next_change(&mut desk) => {
                    take_change(change, &mut pipeline, &mut board, &ctx).await;
                }
            }
        }
    }
    persist(&mut pipeline, &mut board, &ctx, Attempt::Now).await;
    if board.refused.is_some() {
        let pending = pipeline.pending_writes();
        error!(
            pending_writes = pending,
            raw_bytes = pipeline.raw_pending(),
            "stopping while the store refuses writes: what this board kept in memory is lost"
        );
    }
}

/// A board lost less than this long ago is retried every [`RECENT_RETRY`] at most.
const RECENTLY_SEEN: Duration = Duration::from_secs(600);
const RECENT_RETRY: Duration = Duration::from_secs(1);

/// The wait before the next attempt to open a port last connected at `last_seen`: a port that
/// was there a moment ago is retried every second at most; one long gone backs off to 10 s.
pub(super) fn retry_delay(backoff: &mut Backoff, last_seen: Option<Instant>) -> Duration {
    let delay = backoff.next_delay();
    if last_seen.is_some_and(|t| t.elapsed() < RECENTLY_SEEN) {
        delay.min(RECENT_RETRY)
    } else {
        delay
    }
}

/// How often a port that is not there is looked for while waiting to retry.
const PORT_POLL: Duration = Duration::from_millis(100);

/// Waits `delay`, or until the board's device node appears, if it was not there when the wait
/// began (a replugged board is opened as soon as udev has made its node).
pub(super) async fn wait_for_port(locator: &Locator, sysfs: &std::path::Path, delay: Duration) {
    let present = || matches!(discover::path_to_open(locator, sysfs), Ok(Some(_)));
    let deadline = tokio::time::Instant::now() + delay;
    if present() {
        tokio::time::sleep_until(deadline).await;
        return;
    }
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(PORT_POLL.min(deadline - tokio::time::Instant::now())).await;
        if present() {
            return;
        }
    }
}

/// Finds the board's port now and opens it.
pub(super) fn open(
    locator: &Locator,
    sysfs: &std::path::Path,
) -> Result<(PathBuf, tokio_serial::SerialStream), String> {
    let path = match discover::path_to_open(locator, sysfs) {
        Ok(Some(path)) => path,
        Ok(None) => return Err(format!("{locator} is not plugged in")),
        Err(e) => return Err(e.to_string()),
    };
    let port = serial::open(&path).map_err(|e| e.to_string())?;
    Ok((path, port))
}

/// Passes a board's clock to the relay: a new state of the clock (started, stopped, pressed,
/// a flag) at once, a running clock's time at most every [`LiveClockFeed::EVERY`].
pub(super) struct LiveClockFeed {
    pub(super) hub: Hub,
    last: Option<(ClockReading, Instant)>,
}

impl LiveClockFeed {
    const EVERY: Duration = Duration::from_millis(250);

    pub(super) fn new(hub: Hub) -> LiveClockFeed {
        LiveClockFeed { hub, last: None }
    }

    pub(super) fn update<B: Board>(&mut self, name: &str, pipeline: &Pipeline<B>) {
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

/// How much a board may send: a serial line at 9600 baud carries 960 bytes a second; a board
/// sending far more (a fault, a flood of noise) is read no faster than [`Intake::BYTES_PER_SEC`],
/// so that its line's buffer fills and holds it back, and it cannot take the CPU, the store
/// writer or the disk from the other boards.
#[derive(Debug)]
struct Intake {
    since: Instant,
    bytes: u64,
    /// Whether the board is over its budget (logged once each time it starts).
    flooding: bool,
}

impl Intake {
    /// Sixteen times what 9600 baud carries.
    const BYTES_PER_SEC: u64 = 16 * 1024;

    fn new(now: Instant) -> Intake {
        Intake {
            since: now,
            bytes: 0,
            flooding: false,
        }
    }

    /// Counts `n` bytes read at `now`: how long to wait before reading again, if the board is
    /// over its budget for the current second.
    fn admit(&mut self, now: Instant, n: usize) -> Option<Duration> {
        let second = Duration::from_secs(1);
        if now.saturating_duration_since(self.since) >= second {
            if self.bytes <= Self::BYTES_PER_SEC {
                self.flooding = false;
            }
            self.since = now;
            self.bytes = 0;
        }
        self.bytes += n as u64;
        (self.bytes > Self::BYTES_PER_SEC)
            .then(|| second.saturating_sub(now.saturating_duration_since(self.since)))
    }
}

/// Writes what the pipeline has and announces its events once they are durable; a batch the
/// store refused goes back to the pipeline, ahead of newer writes, for the next attempt, which
/// waits [`RETRY_FIRST`], then [`RETRY_EVERY`] (unless `attempt` is [`Attempt::Now`]).
pub(super) async fn persist<B: Board>(
    pipeline: &mut Pipeline<B>,
    board: &mut BoardRef,
    ctx: &Ctx,
    attempt: Attempt,
) {
    report_stats(pipeline, board, &ctx.metrics);
    if attempt == Attempt::WhenDue
        && board
            .refused
            .as_ref()
            .is_some_and(|r| Instant::now() < r.next_try)
    {
        return;
    }
    let writes = pipeline.take_writes();
    if writes.is_empty() {
        return;
    }
    match ctx.writer.write_games(writes).await {
        Ok((writes, games)) => {
            if let Some(r) = board.refused.take() {
                info!(
                    after_s = r.since.elapsed().as_secs(),
                    refused_batches = r.batches,
                    writes = writes.len(),
                    "the store took what this board kept while it refused; recording resumed"
                );
                if let Some(hub) = &ctx.hub {
                    hub.store_status(&board.name, None);
                }
            }
            for w in &writes {
                let Write::Event { event, .. } = w else {
                    continue;
                };
                match event {
                    TrackerEvent::Move(_) => ctx.metrics.move_recorded(),
                    TrackerEvent::Irregularity { kind, detail, .. } => {
                        if *kind == IrregularityKind::ThreadLost {
                            warn!(%detail, "thread lost: the record does not reach the board");
                        }
                        ctx.metrics.irregularity(kind.as_str())
                    }
                    TrackerEvent::Recovered {
                        from_ply,
                        to_ply,
                        source,
                        ..
                    } => info!(
                        from_ply,
                        to_ply,
                        source = source.kind().as_str(),
                        "plies missed in a gap recovered"
                    ),
                    TrackerEvent::GameStarted { .. } => {
                        // The game it opened is the last one the batch touched first.
                        if let Some(game) = games.last() {
                            tracing::Span::current().record("game", game.0);
                            info!(game = game.0, "game started");
                            board.game = Some(*game);
                        }
                        if !board.playing {
                            board.playing = true;
                            ctx.metrics.game_started();
                        }
                    }
                    TrackerEvent::GameEnded { .. } if board.playing => {
                        board.playing = false;
                        ctx.metrics.game_over();
                    }
                    _ => {}
                }
                (ctx.announce)(&board.name, event);
                if let Some(hub) = &ctx.hub {
                    hub.committed(&board.name, event);
                }
            }
        }
        Err((e, writes)) => {
            let now = Instant::now();
            let why = e.to_string();
            if matches!(e, super::writer::WriteError::WriterGone) {
                error!(cause = %e, "could not store; keeping the writes for the next attempt");
            } else {
                // The writer logs the store's failure once for every board.
                debug!(cause = %e, "could not store; keeping the writes for the next attempt");
            }
            let changed = match board.refused.as_mut() {
                Some(r) => {
                    r.batches += 1;
                    r.next_try = now + RETRY_EVERY;
                    let changed = r.error != why;
                    r.error = why.clone();
                    changed
                }
                None => {
                    board.refused = Some(Refusal {
                        since: now,
                        batches: 1,
                        error: why.clone(),
                        next_try: now + RETRY_FIRST,
                    });
                    true
                }
            };
            if changed && let Some(hub) = &ctx.hub {
                hub.store_status(&board.name, Some(&why));
            }
            if let Some(writes) = writes {
                pipeline.requeue(writes);
            }
        }
    }
}

/// Carries out an arbiter's decision that changes the record of this board's game (see
/// [`crate::relay::desk`]): once everything the board recorded is durable, the decision is
/// applied to the store, and the pipeline goes on from the record it leaves. A board whose
/// store refuses writes does not take it (the API says so; nothing changes).
pub(super) async fn take_change<B: Board>(
    change: RecordChange,
    pipeline: &mut Pipeline<B>,
    board: &mut BoardRef,
    ctx: &Ctx,
) {
    persist(pipeline, board, ctx, Attempt::Now).await;
    if board.refused.is_some() {
        warn!(
            game = change.game.0,
            "an arbiter's decision on this board's record waits: the store refuses its writes"
        );
        return;
    }
    let game = change.game;
    let moves = match tokio::task::spawn_blocking(change.apply).await {
        Ok(moves) => moves,
        Err(e) => {
            error!(cause = %e, game = game.0, "an arbiter's decision failed");
            return;
        }
    };
    let Some(moves) = moves else {
        return;
    };
    if board.game != Some(game) {
        return;
    }
    let how = format!(
        "the arbiter set the record to {} plies; tracking goes on from it",
        moves.len()
    );
    if pipeline.rebase(now_ms(), &moves, &how) {
        info!(game = game.0, plies = moves.len(), "{how}");
        if let Some(hub) = &ctx.hub {
            hub.record_changed(&board.name, &moves);
        }
    } else {
        error!(
            game = game.0,
            "the record the arbiter left does not replay; the board goes on from its own"
        );
    }
    persist(pipeline, board, ctx, Attempt::Now).await;
}

/// Adds what the pipeline decoded since the last report to the metrics.
fn report_stats<B: Board>(pipeline: &Pipeline<B>, board: &mut BoardRef, metrics: &Metrics) {
    let now = pipeline.stats();
    let was = board.reported;
    if now != was {
        metrics.decoded(
            now.frames.saturating_sub(was.frames),
            now.decode_warnings.saturating_sub(was.decode_warnings),
            now.bytes_skipped.saturating_sub(was.bytes_skipped),
        );
        let dropped = now.raw_bytes_dropped.saturating_sub(was.raw_bytes_dropped);
        if dropped > 0 {
            metrics.raw_dropped(dropped);
        }
        board.reported = now;
    }
}

async fn session<B: BoardKit>(
    mut port: tokio_serial::SerialStream,
    path: &std::path::Path,
    board: &mut BoardRef,
    pipeline: &mut Pipeline<B>,
    ctx: &Ctx,
    stop: &mut watch::Receiver<bool>,
    desk: &mut Option<mpsc::Receiver<RecordChange>>,
) -> SessionEnd {
    let startup = B::startup();
    let probe = B::probe();
    // After a gap the board's memory comes first: the moves made meanwhile, in order, with their
    // clocks. The board is started as ever once the reply is in, or it has been silent for
    // MEMORY_SILENCE, or MEMORY_WAIT is over.
    let mut memory_since = None;
    let first = if pipeline.wants_memory() {
        pipeline.memory_asked(now_ms());
        memory_since = Some(Instant::now());
        B::memory_request()
    } else {
        startup.clone()
    };
    if let Err(e) = serial::send(&mut port, path, &first).await {
        return SessionEnd::Lost(e.to_string());
    }
    pipeline.feed(now_ms(), Direction::ToBoard, &first);
    let watchdog = Watchdog::default();
    let mut buf = [0u8; 4096];
    let mut last_rx = Instant::now();
    let mut probed = false;
    let mut last_raw_flush = Instant::now();
    let mut intake = Intake::new(Instant::now());
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
                    if let Some(pause) = intake.admit(last_rx, n) {
                        if !intake.flooding {
                            intake.flooding = true;
                            warn!(
                                limit = Intake::BYTES_PER_SEC,
                                "the board sends more than a serial line carries; reading it slowly"
                            );
                        }
                        tokio::select! {
                            _ = tokio::time::sleep(pause) => {}
                            _ = stop.changed() => return SessionEnd::Stopped,
                        }
                    }
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
                    if let Err(e) = serial::send(&mut port, path, &probe).await {
                        return SessionEnd::Lost(e.to_string());
                    }
                    pipeline.feed(now_ms(), Direction::ToBoard, &probe);
                }
            },
            _ = stop.changed() => return SessionEnd::Stopped,
            change = next_change(desk) => take_change(change, pipeline, board, ctx).await,
        }
        // Lost again after a read (moves made meanwhile): the memory once more, and the usual
        // start-up after it.
        if memory_since.is_none() && pipeline.wants_memory() {
            pipeline.memory_asked(now_ms());
            memory_since = Some(Instant::now());
            let ask = B::memory_request();
            if let Err(e) = serial::send(&mut port, path, &ask).await {
                return SessionEnd::Lost(e.to_string());
            }
            pipeline.feed(now_ms(), Direction::ToBoard, &ask);
        }
        if let Some(since) = memory_since {
            let waiting = pipeline.awaiting_memory();
            let given_up = if last_rx.elapsed() >= MEMORY_SILENCE {
                Some("the board did not answer")
            } else if since.elapsed() >= MEMORY_WAIT {
                Some("the reply did not end in time")
            } else {
                None
            };
            if !waiting || given_up.is_some() {
                if let (true, Some(why)) = (waiting, given_up) {
                    pipeline.memory_not_read(why);
                }
                memory_since = None;
                if let Err(e) = serial::send(&mut port, path, &startup).await {
                    return SessionEnd::Lost(e.to_string());
                }
                pipeline.feed(now_ms(), Direction::ToBoard, &startup);
            }
        }
        let raw_due = last_raw_flush.elapsed() >= Duration::from_secs(1);
        if pipeline.pending_writes() > 0 || raw_due {
            persist(pipeline, board, ctx, Attempt::WhenDue).await;
            if raw_due {
                last_raw_flush = Instant::now();
            }
        }
        if let Some(live) = board.live.as_mut() {
            live.update(&board.name, pipeline);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_within_its_line_is_never_held_back() {
        let t0 = Instant::now();
        let mut intake = Intake::new(t0);
        // A DGT board at full line speed: 960 bytes a second for a minute, in 5-byte frames.
        for ms in (0..60_000u64).step_by(5) {
            let now = t0 + Duration::from_millis(ms + 1);
            assert_eq!(intake.admit(now, 5), None, "held back at {ms} ms");
        }
        assert!(!intake.flooding);
    }

    #[test]
    fn a_flood_waits_out_the_rest_of_its_second() {
        let t0 = Instant::now();
        let mut intake = Intake::new(t0);
        let at = |ms| t0 + Duration::from_millis(ms);
        assert_eq!(intake.admit(at(100), 4096), None);
        assert_eq!(intake.admit(at(200), 4096), None);
        assert_eq!(intake.admit(at(300), 4096), None);
        assert_eq!(intake.admit(at(400), 4096), None, "exactly the budget");
        assert_eq!(intake.admit(at(400), 1), Some(Duration::from_millis(600)));
        // The next second starts afresh.
        assert_eq!(intake.admit(at(1_000), 4096), None);
        assert_eq!(
            intake.admit(at(1_250), 4 * 4096),
            Some(Duration::from_millis(750))
        );
    }
}
