//! One bus port's task: a chain of DGT boards on one serial port, each its own board.
//!
//! Flow: [`bus_task`] loops until `stop`: find and open the port of the bus's [`Locator`], run
//! a session, reopen with backoff when the port goes away. A session runs the pure
//! [`BusMaster`]: it writes the command the master picks, reads replies with a bus-mode frame
//! splitter, passes each reply to the master, and routes the real bytes to the board they
//! concern: commands to its address (and broadcast pings) and its replies go into that board's
//! `Recorder<DgtBus>` (raw stream first, then the folded frames), which persists through the
//! same store writer, hub and metrics as a board on its own port. Joined and lost boards are
//! announced as connected and lost. After a gap a board's recorder asks for its memory, which
//! the master reads with SEND_FROM_START; a game begun on a board has its start tagged in the
//! board's log (SET_START_GAME), where that read begins.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use tokio::sync::{mpsc, watch};
use tracing::{Instrument, debug, info, info_span, warn};

use super::{
    board::BoardSpec,
    context::{Attempt, BoardRef, Ctx},
    persist, port,
};
use crate::{
    Millis,
    bus::{BoardInput, BusMaster, DgtBus, MasterSettings, fold_reply},
    config::Locator,
    decider::desk::{DeskOrder, next_change},
    device::{
        Direction,
        link::Port,
        serial::{Backoff, now_ms},
    },
    pipeline::Board,
    protocol::dgt::{Command, Frame, FrameError, Mode, parse_frame, split_frame},
    recorder::Recorder,
    relay::live::Lost,
};

/// One bus to record: its port and the boards expected on it, by address.
pub struct BusSpec {
    pub name: String,
    pub locator: Locator,
    pub boards: Vec<(u16, BoardSpec<DgtBus>)>,
    pub settings: MasterSettings,
}

/// A board on the bus: its recorder and what the daemon shows of it.
struct BusBoard {
    board: BoardRef,
    recorder: Recorder<DgtBus>,
    /// Answering now.
    connected: bool,
    /// Games begun on it so far (each gets its start tagged in the board's log).
    games: u64,
}

/// Cuts bus replies out of the byte stream, keeping each frame's real bytes.
#[derive(Default)]
struct Splitter {
    buf: Vec<u8>,
}

impl Splitter {
    /// Appends `bytes`; every whole frame as (its bytes, its decoding). Bytes that start no
    /// frame are dropped up to the next byte with bit 7 set.
    fn push(&mut self, bytes: &[u8]) -> Vec<(Vec<u8>, Result<Frame, FrameError>)> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        loop {
            let Some(start) = self.buf.iter().position(|b| b & 0x80 != 0) else {
                self.buf.clear();
                break;
            };
            self.buf.drain(..start);
            match split_frame(&self.buf, Mode::Bus) {
                Ok((rest, _)) => {
                    let len = self.buf.len() - rest.len();
                    let raw: Vec<u8> = self.buf.drain(..len).collect();
                    let frame = match parse_frame(&raw, Mode::Bus) {
                        Ok((_, f)) => Ok(f),
                        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => Err(e),
                        Err(nom::Err::Incomplete(_)) => Err(FrameError::BadLength {
                            id: raw[0],
                            len: raw.len() as u16,
                        }),
                    };
                    out.push((raw, frame));
                }
                Err(nom::Err::Incomplete(_)) => break,
                Err(nom::Err::Error(e) | nom::Err::Failure(e)) => {
                    debug!(?e, "bus bytes skipped");
                    self.buf.remove(0);
                }
            }
        }
        out
    }

    /// Whether part of a frame is buffered.
    fn partial(&self) -> bool {
        !self.buf.is_empty()
    }
}

/// Keeps one bus recorded: reconnects with backoff until `stop`.
pub async fn bus_task(spec: BusSpec, ctx: Ctx, seed: u64) {
    let BusSpec {
        name,
        locator,
        boards: specs,
        settings,
    } = spec;
    let mut boards = BTreeMap::new();
    for (address, spec) in specs {
        let (board, recorder) = spec.start(locator.clone(), &ctx);
        boards.insert(
            address,
            BusBoard {
                board,
                recorder,
                connected: false,
                games: 0,
            },
        );
    }
    let mut desk = ctx.hub.as_ref().map(|hub| {
        hub.desks()
            .open(boards.values().map(|b: &BusBoard| b.board.name.as_str()))
    });
    let mut backoff = Backoff::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ now_ms());
    let mut stop = ctx.stop.clone();
    let mut last_seen: Option<Instant> = None;
    // The last reason the port could not be opened (said once, not at every attempt).
    let mut unavailable: Option<port::Unavailable> = None;
    loop {
        if *stop.borrow() {
            break;
        }
        match port::open(&locator, &ctx.sysfs, DgtBus::LINK).await {
            Ok((path, port)) => {
                unavailable = None;
                info!(bus = %name, port = %path.display(), "bus port open");
                backoff.reset();
                let ended = session(port, &mut boards, &settings, &ctx, &mut stop, &mut desk).await;
                last_seen = Some(Instant::now());
                for b in boards.values_mut() {
                    b.recorder.pipeline.disconnected(now_ms());
                    if b.connected {
                        b.connected = false;
                        lost(b, &ctx, Lost::BusGone);
                    }
                    persist::persist(&mut b.recorder, &mut b.board, &ctx, Attempt::WhenDue).await;
                }
                match ended {
                    None => break,
                    Some(why) => warn!(bus = %name, reason = %why, "bus port lost; reopening"),
                }
            }
            Err(failed) if unavailable.as_ref() == Some(&failed) => {}
            Err(failed) => {
                warn!(bus = %name, cause = %failed, "bus port not available");
                if failed.busy {
                    for b in boards.values_mut() {
                        if let Some(live) = &b.board.live {
                            let why = Lost::PortBusy {
                                why: failed.why.clone(),
                            };
                            live.hub.board_lost(&b.board.name, why);
                        }
                    }
                }
                unavailable = Some(failed);
            }
        }
        let delay = port::retry_delay(&mut backoff, last_seen);
        let deadline = Instant::now() + delay;
        loop {
            // Decisions reach the records while the bus is away, too.
            let left = deadline.saturating_duration_since(Instant::now());
            tokio::select! {
                _ = port::wait_for_port(&locator, &ctx.sysfs, left) => break,
                _ = stop.changed() => break,
                change = next_change(&mut desk) => take_change(change, &mut boards, &ctx).await,
            }
        }
    }
    for b in boards.values_mut() {
        persist::persist(&mut b.recorder, &mut b.board, &ctx, Attempt::Now).await;
    }
}

/// An arbiter's decision on the record of one of the bus's boards (or a request to its sensor).
async fn take_change(order: DeskOrder, boards: &mut BTreeMap<u16, BusBoard>, ctx: &Ctx) {
    match boards.values_mut().find(|b| b.board.name == order.board()) {
        Some(b) => persist::take_order(order, &mut b.recorder, &mut b.board, ctx).await,
        None => warn!(board = %order.board(), "a decision for a board not on this bus"),
    }
}

fn lost(b: &mut BusBoard, ctx: &Ctx, why: Lost) {
    b.recorder.link(now_ms(), false);
    ctx.metrics.board_lost();
    if let Some(live) = &b.board.live {
        live.hub.board_lost(&b.board.name, why);
    }
}

/// Runs the master on an open port until the port fails (`Some(why)`) or `stop` (`None`).
async fn session(
    mut port: Port,
    boards: &mut BTreeMap<u16, BusBoard>,
    settings: &MasterSettings,
    ctx: &Ctx,
    stop: &mut watch::Receiver<bool>,
    desk: &mut Option<mpsc::Receiver<DeskOrder>>,
) -> Option<String> {
    let mut master = BusMaster::new(settings.clone(), boards.keys().copied());
    let mut splitter = Splitter::default();
    let mut buf = [0u8; 1024];
    let mut last_tick = Instant::now();
    let mut last_raw_flush = Instant::now();
    let mut strangers: Vec<u16> = Vec::new();
    loop {
        let now = now_ms();
        if master.deadline().is_some_and(|d| now >= d) {
            let inputs = master.on_timeout(now);
            handle(&mut master, boards, ctx, now, inputs, &mut strangers);
        }
        if let Some((cmd, address)) = master.next_command(now) {
            let bytes = Command::Bus { cmd, address }.to_bytes();
            if let Err(e) = port.send(&bytes).await {
                return Some(e.to_string());
            }
            for (&a, b) in boards.iter_mut() {
                if address == crate::bus::master::BROADCAST || a == address {
                    b.recorder.feed(now, Direction::ToBoard, &bytes);
                }
            }
        }
        let wait = master
            .wake_at()
            .map_or(100, |w| w.saturating_sub(now_ms()))
            .clamp(1, 100);
        tokio::select! {
            read = port.read(&mut buf) => match read {
                Ok(0) => return Some("port closed".into()),
                Ok(n) => {
                    let at = now_ms();
                    for (raw, frame) in splitter.push(&buf[..n]) {
                        on_frame(&mut master, boards, ctx, at, &raw, frame, &mut strangers);
                    }
                    if splitter.partial() {
                        master.receiving(at);
                    }
                }
                Err(e) => return Some(e.to_string()),
            },
            _ = tokio::time::sleep(Duration::from_millis(wait)) => {}
            _ = stop.changed() => return None,
            change = next_change(desk) => take_change(change, boards, ctx).await,
        }
        // A board answering on the bus has its recorder's time moved on only when it is read
        // (see `DgtBus::split`); one that does not answer is given the time here.
        if last_tick.elapsed() >= Duration::from_millis(100) {
            last_tick = Instant::now();
            let at = now_ms();
            for b in boards.values_mut().filter(|b| !b.connected) {
                b.recorder.pipeline.tick(at);
            }
        }
        let raw_due = last_raw_flush.elapsed() >= Duration::from_secs(1);
        if raw_due {
            last_raw_flush = Instant::now();
        }
        for (&address, b) in boards.iter_mut() {
            ask_memory_or_tag(&mut master, address, b);
            if b.recorder.pending_writes() > 0 || raw_due {
                persist::persist(&mut b.recorder, &mut b.board, ctx, Attempt::WhenDue).await;
            }
            if let Some(live) = b.board.live.as_mut() {
                live.update(&b.board.name, &b.recorder);
            }
        }
    }
}

/// One frame from the line: its bytes to its board's raw stream, its meaning to the master, and
/// the master's inputs to the boards.
fn on_frame(
    master: &mut BusMaster,
    boards: &mut BTreeMap<u16, BusBoard>,
    ctx: &Ctx,
    at: Millis,
    raw: &[u8],
    frame: Result<Frame, FrameError>,
    strangers: &mut Vec<u16>,
) {
    let frame = match frame {
        Ok(f) => f,
        Err(e) => {
            debug!(?e, "bus frame not decoded");
            return;
        }
    };
    if let Frame::Bus(r) = &frame
        && let Some(b) = boards.get_mut(&r.address)
    {
        // Raw bytes only; the recorder folds the reply when the master passes it on.
        b.recorder.keep_raw(at, Direction::FromBoard, raw);
    }
    let inputs = master.on_reply(at, frame);
    handle(master, boards, ctx, at, inputs, strangers);
}

fn handle(
    master: &mut BusMaster,
    boards: &mut BTreeMap<u16, BusBoard>,
    ctx: &Ctx,
    at: Millis,
    inputs: Vec<BoardInput>,
    strangers: &mut Vec<u16>,
) {
    for input in inputs {
        match input {
            BoardInput::Joined { address } => match boards.get_mut(&address) {
                Some(b) => {
                    b.connected = true;
                    b.recorder.link(at, true);
                    info!(board = %b.board.name, address, "board answers on the bus");
                    ctx.metrics.board_connected();
                    if let Some(live) = &b.board.live {
                        live.hub.board_connected(&b.board.name);
                    }
                }
                None if !strangers.contains(&address) => {
                    strangers.push(address);
                    warn!(
                        address,
                        serial = %crate::bus::serial_from_address(address),
                        "a board not in the config answers on the bus; not recorded"
                    );
                }
                None => {}
            },
            BoardInput::MemoryNotRead { address } => {
                if let Some(b) = boards.get_mut(&address) {
                    b.recorder
                        .pipeline
                        .memory_not_read("the board did not send its log");
                }
            }
            BoardInput::Lost { address } => {
                if let Some(b) = boards.get_mut(&address)
                    && b.connected
                {
                    b.connected = false;
                    warn!(board = %b.board.name, address, "board stopped answering on the bus");
                    lost(b, ctx, Lost::BusSilent);
                }
            }
            BoardInput::Reply { address, reply } => {
                let folded = fold_reply(&reply);
                if let Some(id) = folded.not_folded {
                    debug!(address, id, "bus reply not folded");
                }
                if folded.clock_changed {
                    master.want_clock(address);
                }
                if let Some(why) = &folded.doubt {
                    warn!(address, %why, "bus board in doubt; asking for a dump");
                    master.doubt(address);
                }
                if let Some(b) = boards.get_mut(&address) {
                    // The same frames replay makes of the reply's bytes.
                    b.recorder.pipeline.feed_split(at, Frame::Bus(reply));
                    b.recorder.pipeline.tick(at);
                }
            }
        }
    }
}

/// After a gap the board's memory, its log since the game's start tag (SEND_FROM_START), while
/// its recorder wants it; a game begun on it gets its start tagged in that log (SET_START_GAME).
fn ask_memory_or_tag(master: &mut BusMaster, address: u16, b: &mut BusBoard) {
    if b.connected && b.recorder.pipeline.wants_memory() && master.want_memory(address) {
        b.recorder.pipeline.memory_asked(now_ms());
    }
    let games = b.recorder.stats().pipeline.games;
    if games > b.games {
        b.games = games;
        master.want_start_tag(address);
    }
}

/// Spawns one task per bus (each in its own span).
pub fn spawn_buses(
    tasks: &mut tokio::task::JoinSet<()>,
    buses: Vec<BusSpec>,
    ctx: &Ctx,
    seed: u64,
) {
    for (i, bus) in buses.into_iter().enumerate() {
        let span = info_span!("bus", bus = %bus.name);
        tasks.spawn(bus_task(bus, ctx.clone(), seed + i as u64).instrument(span));
    }
}

/// Which boards answer a broadcast PING on `bus` now (for `boardscribe devices`): their
/// addresses, in the order they answered.
pub async fn ping_bus(
    bus: &crate::config::BusConfig,
    sysfs: &std::path::Path,
    settings: &MasterSettings,
) -> Result<Vec<u16>, String> {
    let (_, mut port) = port::open(&bus.locator, sysfs, DgtBus::LINK).await?;
    let ping = Command::Bus {
        cmd: crate::protocol::dgt::BusCommand::Ping,
        address: crate::bus::master::BROADCAST,
    }
    .to_bytes();
    port.send(&ping).await.map_err(|e| e.to_string())?;
    let until = tokio::time::Instant::now()
        + Duration::from_millis(settings.discovery_ms + crate::bus::wire_ms(ping.len()));
    let mut splitter = Splitter::default();
    let mut found = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        tokio::select! {
            read = port.read(&mut buf) => match read {
                Ok(0) => break,
                Ok(n) => {
                    for (_, frame) in splitter.push(&buf[..n]) {
                        if let Ok(Frame::Bus(r)) = frame
                            && r.checksum_ok
                            && r.id.0 == crate::protocol::dgt::bus_id::PING
                            && !found.contains(&r.address)
                        {
                            found.push(r.address);
                        }
                    }
                }
                Err(e) => return Err(e.to_string()),
            },
            _ = tokio::time::sleep_until(until) => break,
        }
    }
    Ok(found)
}

/// What `boardscribe devices` prints for a bus: each configured board and whether it answered,
/// then the boards that answered and are not configured.
pub fn describe_bus(bus: &crate::config::BusConfig, found: &Result<Vec<u16>, String>) -> String {
    let mut out = format!("bus {} ({}):", bus.name, bus.locator);
    let found = match found {
        Ok(f) => f,
        Err(e) => {
            out.push_str(&format!(" not reachable: {e}\n"));
            return out;
        }
    };
    out.push_str(&format!(" {} board(s) answer\n", found.len()));
    for b in &bus.boards {
        let state = if found.contains(&b.address) {
            "answers"
        } else {
            "SILENT"
        };
        out.push_str(&format!(
            "  board {:>3}  serial {}  address {:>5}  {state}\n",
            b.board.number, b.serial, b.address
        ));
    }
    for a in found {
        if !bus.boards.iter().any(|b| b.address == *a) {
            out.push_str(&format!(
                "  not configured: serial {}  address {a:>5}\n",
                crate::bus::serial_from_address(*a)
            ));
        }
    }
    out
}
