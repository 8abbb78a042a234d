//! One board's task: find its port, open it, feed its recorder, persist, reconnect.
//!
//! Flow: [`prepare`] resolves a configured board in the store and resumes its open game;
//! [`board_task`] then loops until `stop`: find the port of the board's [`Locator`] (a serial
//! number is looked up in sysfs on every attempt, so a board moved to another USB port is found
//! again), open it over its kind's link (a serial line, or USB HID: a hidraw node or the socket
//! standing in for one, each command an output report, spaced by the link's gap), send the
//! kind's start-up commands ([`Board`]), and run a session: bytes in,
//! watchdog probes when the board falls silent, writes to the store writer, events announced once
//! durable, counters into the [`Metrics`]. A lost board is reopened with backoff; its game goes on.
//! A batch the store refuses (a full disk) goes back into the recorder, which keeps tracking; it
//! is tried again every `persist::RETRY_EVERY`, not on every frame, and the board shows on the live
//! state that its recording is suspended, and why, until the store takes it. An arbiter's
//! decision that changes the record (from the admin API, through the board's desk) is taken
//! between two reads, once the board's writes are durable (`persist::take_order`).

use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, watch};
use tracing::{error, info, warn};

use super::{
    context::{Attempt, BoardRef, Ctx},
    persist::{persist, take_order},
    port::{Unavailable, open, retry_delay, wait_for_port},
};
use crate::{
    Millis,
    arbiter::{Judge, LawsSetup},
    config::{BoardConfig, Locator},
    decider::desk::{DeskOrder, next_change},
    device::{
        Direction,
        link::Port,
        serial::{Backoff, Watchdog, now_ms},
    },
    game::{GameKind, Kind},
    pipeline::{Board, Pipeline},
    recorder::Recorder,
    relay::live::Lost,
    sensor::dgt::ClockLayout,
    store::{BoardId, GameId, GameRecord, Store},
    tracker::{RecordedMove, Tracker, TrackerSettings},
};

/// One board to record: where it is and what the store knows of it.
pub struct BoardSpec<B: Board> {
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
    /// What the board's sensor learnt of it before (a calibration), kept in the store.
    pub learnt: Option<String>,
}

impl<B: Board> BoardSpec<B> {
    /// The board as the daemon records it, reached through `locator` (its own, or its bus's):
    /// what it shows and its recorder. A resumed game counts as started.
    pub(super) fn start(self, locator: Locator, ctx: &Ctx) -> (BoardRef, Recorder<B>) {
        if self.game.is_some() {
            ctx.metrics.game_started();
        }
        let board = BoardRef::new(self.name, locator, ctx, self.game);
        let mut pipeline =
            Pipeline::<B>::new(self.tracker, self.judge).with_clock_layout(self.clock_layout);
        if let Some(text) = &self.learnt {
            match pipeline.restore_sensor(text) {
                Ok(()) => {
                    info!(board = %board.name, "the board's sensor goes on with what it learnt before")
                }
                Err(why) => {
                    warn!(board = %board.name, %why, "what the board's sensor learnt before does not read: it learns again")
                }
            }
        }
        let recorder = Recorder::new(self.id, pipeline);
        (board, recorder)
    }
}

/// A configured board of any kind, prepared: what the fleet shows of it before it starts, and
/// its task.
pub trait PreparedBoard: Send {
    fn name(&self) -> &str;
    fn number(&self) -> u32;
    /// The game its kind is made for.
    fn game(&self) -> Kind;
    /// The resumed game's moves.
    fn resumed(&self) -> &[RecordedMove];
    /// Whether its sensor learns the board itself (a Certabo board's calibration).
    fn learns(&self) -> bool;
    /// The board's task ([`board_task`]).
    fn run(self: Box<Self>, ctx: Ctx, seed: u64) -> BoxFuture<'static, ()>;
}

impl<B: Board> PreparedBoard for BoardSpec<B> {
    fn name(&self) -> &str {
        &self.name
    }

    fn number(&self) -> u32 {
        self.number
    }

    fn game(&self) -> Kind {
        <B::Game as GameKind>::KIND
    }

    fn resumed(&self) -> &[RecordedMove] {
        &self.resumed
    }

    fn learns(&self) -> bool {
        B::LEARNS
    }

    fn run(self: Box<Self>, ctx: Ctx, seed: u64) -> BoxFuture<'static, ()> {
        Box::pin(board_task(*self, ctx, seed))
    }
}

/// [`prepare`] for a board of the kind [`crate::kind::BoardKind::with_board`] gives.
pub struct Prepare<'a> {
    pub store: &'a mut Store,
    pub cfg: &'a BoardConfig,
    pub laws: &'a LawsSetup,
}

impl crate::boards::WithBoard for Prepare<'_> {
    type Output = anyhow::Result<Box<dyn PreparedBoard>>;

    fn run<B: Board>(self) -> Self::Output {
        Ok(Box::new(prepare::<B>(self.store, self.cfg, self.laws)?))
    }
}

/// Resolves `cfg` in the store (numbering it) and resumes its open game.
pub fn prepare<B: Board>(
    store: &mut Store,
    cfg: &BoardConfig,
    laws: &LawsSetup,
) -> anyhow::Result<BoardSpec<B>> {
    let name = cfg.name.clone();
    let id = store.board(&name, <B::Game as GameKind>::KIND)?;
    store.set_board_number(id, cfg.number)?;
    let settings = B::settings(laws);
    let mut judge = B::judge(laws);
    let mut game = None;
    let mut resumed = Vec::new();
    let open = match store.open_game(id)? {
        // A result the arbiter set stands: the game is over, not resumed.
        Some(open) if store.close_if_decided(open.id)? => {
            info!(board = %name, game = open.id.0, result = %open.result, "the arbiter's result closed the open game");
            None
        }
        open => open,
    };
    let tracker = match open {
        Some(open) => match resume_tracker::<B>(settings.clone(), &mut judge, &open, now_ms()) {
            Some(t) => {
                info!(board = %name, game = open.id.0, plies = open.moves.len(), "resuming game");
                game = Some(open.id);
                resumed = open.moves;
                t
            }
            None => {
                warn!(board = %name, game = open.id.0, "stored game does not replay; waiting for a new game");
                Tracker::new(settings)
            }
        },
        None => Tracker::new(settings),
    };
    let learnt = store.learnt(id, B::KIND.name())?;
    Ok(BoardSpec {
        learnt,
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

/// The tracker going on with `open`, a stored game (after a restart, or reopened by the
/// arbiter), its judge (`judge`) following it too: the game played again from its start (a
/// Chess960 game from its own; none stored: the standard one) to its last move, as after a gap
/// at `at`; its irregularities numbered after the stored ones, those still open resolved when
/// the board fits the game again; a result the kings showed after the last move not reported
/// again. `None` if its start or a move does not replay (nothing is changed then).
pub(super) fn resume_tracker<B: Board>(
    settings: TrackerSettings,
    judge: &mut B::Judge,
    open: &GameRecord,
    at: Millis,
) -> Option<Tracker<B::Game>> {
    let start = match open.start_position.as_deref() {
        None => None,
        Some(text) => Some(B::Game::parse_start(text)?),
    };
    let mut t = Tracker::resume(settings, open.orientation, start, &open.moves, at)?;
    let last = open.moves.len() as u32 + 1;
    if open.gesture_before(last) {
        t.gesture_already_reported();
    }
    t.number_irregularities_after(open.last_irregularity_id());
    t.reopen_irregularities(&open.open_irregularities());
    judge.resume(open.start_position.as_deref(), &open.moves);
    let (flags, illegal) = open.judged_counts();
    judge.resumed_counts(&flags, &illegal);
    Some(t)
}

/// A board asked for its memory that sends nothing for this long has none to give.
const MEMORY_SILENCE: Duration = Duration::from_secs(2);

/// The longest a memory read may take (a full log takes about 8 s at 9600 baud).
const MEMORY_WAIT: Duration = Duration::from_secs(20);

/// How often a port another process holds is tried again.
const BUSY_RETRY: Duration = Duration::from_millis(250);

/// Keeps one board recorded: reconnects with backoff until `stop`.
pub async fn board_task<B: Board>(spec: BoardSpec<B>, ctx: Ctx, seed: u64) {
    if let Some(game) = spec.game {
        tracing::Span::current().record("game", game.0);
    }
    let locator = spec.locator.clone();
    let (mut board, mut recorder) = spec.start(locator, &ctx);
    let mut desk = ctx
        .hub
        .as_ref()
        .map(|hub| hub.desks().open([board.name.as_str()]));
    let mut backoff = Backoff::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ now_ms());
    let mut stop = ctx.stop.clone();
    // When the board was last connected, and the last reason it could not be opened (logged
    // once, not at every attempt).
    let mut last_seen: Option<Instant> = None;
    let mut unavailable: Option<Unavailable> = None;
    loop {
        if *stop.borrow() {
            break;
        }
        // Writes the store refused are tried again while the board is away, too.
        persist(&mut recorder, &mut board, &ctx, Attempt::WhenDue).await;
        match open(&board.locator, &ctx.sysfs, B::LINK).await {
            Ok((path, port)) => {
                unavailable = None;
                info!(port = %path.display(), "board connected");
                recorder.link(now_ms(), true);
                ctx.metrics.board_connected();
                if let Some(live) = &board.live {
                    live.hub.board_connected(&board.name);
                }
                backoff.reset();
                let ended =
                    session(port, &mut board, &mut recorder, &ctx, &mut stop, &mut desk).await;
                last_seen = Some(Instant::now());
                recorder.pipeline.disconnected(now_ms());
                recorder.link(now_ms(), false);
                persist(&mut recorder, &mut board, &ctx, Attempt::WhenDue).await;
                ctx.metrics.board_lost();
                let why = match &ended {
                    SessionEnd::Stopped => Lost::Stopped,
                    SessionEnd::Lost(why) => why.clone(),
                };
                if let Some(live) = &board.live {
                    live.hub.board_lost(&board.name, why);
                }
                match ended {
                    SessionEnd::Stopped => break,
                    SessionEnd::Lost(why) => warn!(reason = %why, "board lost; reconnecting"),
                }
            }
            Err(failed) => {
                if unavailable.as_ref() != Some(&failed) {
                    warn!(cause = %failed, "board not available; looking for it");
                    // A port someone else holds is for the arbiter to see: only someone at
                    // the PC can free it.
                    if failed.busy
                        && let Some(live) = &board.live
                    {
                        live.hub.board_lost(
                            &board.name,
                            Lost::PortBusy {
                                why: failed.why.clone(),
                            },
                        );
                    }
                }
                unavailable = Some(failed);
            }
        }
        let mut delay = retry_delay(&mut backoff, last_seen);
        if unavailable.as_ref().is_some_and(|u| u.busy) {
            // Taken the moment its holder lets go.
            delay = delay.min(BUSY_RETRY);
        }
        let deadline = Instant::now() + delay;
        loop {
            // Decisions reach the record while the board is away, too.
            tokio::select! {
                _ = wait_for_port(&board.locator, &ctx.sysfs, deadline.saturating_duration_since(Instant::now())) => break,
                _ = stop.changed() => break,
                change = next_change(&mut desk) => {
                    take_order(change, &mut recorder, &mut board, &ctx).await;
                }
            }
        }
    }
    persist(&mut recorder, &mut board, &ctx, Attempt::Now).await;
    if board.refused.is_some() {
        let pending = recorder.pending_writes();
        error!(
            pending_writes = pending,
            raw_bytes = recorder.raw_pending(),
            "stopping while the store refuses writes: what this board kept in memory is lost"
        );
    }
}

enum SessionEnd {
    Stopped,
    Lost(Lost),
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

/// Sends `commands` to the board as its kind writes them (one output report at a time on a
/// HID link, each spaced by the link's gap), each kept in the recorder when it went.
async fn send<B: Board>(
    port: &mut Port,
    recorder: &mut Recorder<B>,
    commands: &[u8],
) -> Result<(), crate::device::serial::DeviceError> {
    for report in B::output_reports(commands) {
        port.send(&report).await?;
        recorder.feed(now_ms(), Direction::ToBoard, &report);
    }
    Ok(())
}

async fn session<B: Board>(
    mut port: Port,
    board: &mut BoardRef,
    recorder: &mut Recorder<B>,
    ctx: &Ctx,
    stop: &mut watch::Receiver<bool>,
    desk: &mut Option<mpsc::Receiver<DeskOrder>>,
) -> SessionEnd {
    let startup = B::startup();
    let probe = B::probe();
    // After a gap the board's memory comes first: the moves made meanwhile, in order, with their
    // clocks. The board is started as ever once the reply is in, or it has been silent for
    // MEMORY_SILENCE, or MEMORY_WAIT is over.
    let mut memory_since = None;
    let first = if recorder.pipeline.wants_memory() {
        recorder.pipeline.memory_asked(now_ms());
        memory_since = Some(Instant::now());
        B::memory_request()
    } else {
        startup.clone()
    };
    if let Err(e) = send(&mut port, recorder, &first).await {
        return SessionEnd::Lost(Lost::Port { why: e.to_string() });
    }
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
            read = port.read(&mut buf) => match read {
                Ok(0) => return SessionEnd::Lost(Lost::Closed),
                Ok(n) => {
                    let got = if port.reads_reports() {
                        B::input_report(&buf[..n])
                    } else {
                        &buf[..n]
                    };
                    recorder.feed(now_ms(), Direction::FromBoard, got);
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
                Err(e) => return SessionEnd::Lost(Lost::Port { why: e.to_string() }),
            },
            _ = ticker.tick() => {
                recorder.pipeline.tick(now_ms());
                let silent = last_rx.elapsed();
                if silent >= watchdog.give_up_after {
                    return SessionEnd::Lost(Lost::Silent {
                        secs: silent.as_secs(),
                    });
                }
                if silent >= watchdog.probe_after && !probed {
                    probed = true;
                    if let Err(e) = send(&mut port, recorder, &probe).await {
                        return SessionEnd::Lost(Lost::Port { why: e.to_string() });
                    }
                }
            },
            _ = stop.changed() => return SessionEnd::Stopped,
            change = next_change(desk) => take_order(change, recorder, board, ctx).await,
        }
        // Lost again after a read (moves made meanwhile): the memory once more, and the usual
        // start-up after it.
        if memory_since.is_none() && recorder.pipeline.wants_memory() {
            recorder.pipeline.memory_asked(now_ms());
            memory_since = Some(Instant::now());
            let ask = B::memory_request();
            if let Err(e) = send(&mut port, recorder, &ask).await {
                return SessionEnd::Lost(Lost::Port { why: e.to_string() });
            }
        }
        if let Some(since) = memory_since {
            let waiting = recorder.pipeline.awaiting_memory();
            let given_up = if last_rx.elapsed() >= MEMORY_SILENCE {
                Some("the board did not answer")
            } else if since.elapsed() >= MEMORY_WAIT {
                Some("the reply did not end in time")
            } else {
                None
            };
            if !waiting || given_up.is_some() {
                if let (true, Some(why)) = (waiting, given_up) {
                    recorder.pipeline.memory_not_read(why);
                }
                memory_since = None;
                if let Err(e) = send(&mut port, recorder, &startup).await {
                    return SessionEnd::Lost(Lost::Port { why: e.to_string() });
                }
            }
        }
        let raw_due = last_raw_flush.elapsed() >= Duration::from_secs(1);
        if recorder.pending_writes() > 0 || raw_due {
            persist(recorder, board, ctx, Attempt::WhenDue).await;
            if raw_due {
                last_raw_flush = Instant::now();
            }
        }
        if let Some(live) = board.live.as_mut() {
            live.update(&board.name, recorder);
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
