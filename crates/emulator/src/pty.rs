//! A scripted board (DGT, a TGZ-1 togyz pit board, a ChessLink board) on a pseudo-terminal,
//! or (a Chessnut board, on USB HID) on a Unix socket standing in for its hidraw node.
//!
//! Flow: open a pty pair that behaves as a USB serial device (`port`: released when its host
//! goes, bytes to no host lost), publish the slave's path (and a symlink), answer host commands
//! like a board,
//! and once the host asks for updates play the script in real time: FIELD_UPDATEs and BWTIMEs
//! go out only in update mode; the board state and clock advance regardless. An optional
//! unplug closes the pty mid-move and opens a new one later (the board comes back idle). Every
//! byte both ways can be written to a capture v1 file. A DGT board keeps its memory as it plays
//! ([`EeRecorder`]) and answers SEND_EE_MOVES (0x49) with it. One runner serves every board: a small
//! `PtyBoard` trait gives a script kind's board state, frames and command answers, and whether
//! it is reached over a serial line (a pty) or HID (a socket at the link's path, `socket`).
//! [`PtyFleet`] starts many boards at once (each waited for until its pty exists) and merges
//! their events, for the demo, the tests and the benchmarks.

use std::{
    io,
    path::{Path, PathBuf},
    time::Duration,
};

use tokio::{
    io::AsyncWriteExt,
    sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel},
    task::JoinSet,
    time::{Instant, sleep, sleep_until},
};

use super::{
    BoardScript, EmulatorError, EventKind, Payload, ScriptEvent, TogyzAction, TogyzEvent,
    TogyzPayload, TogyzScript,
    certabo::CertaboScript,
    chesslink::ChessLinkScript,
    chessnut::ChessnutScript,
    ichessone::IChessOneScript,
    script::{Event, Script, ScriptBoard, WireFrame},
};

mod boards;
mod port;
mod socket;
use boardscribe_core::{
    Millis,
    capture::push_line,
    kind::BoardKind,
    memory::EeRecorder,
    protocol::Direction,
    protocol::{
        dgt::{BatteryStatus, BoardDump, BwTime, Frame, cmd},
        tgz::{self, PitDump},
    },
};
pub(super) use port::{Heard, Pty, Sent};
use socket::Socket;

/// Where the board is reached: a pty (a serial line), or a socket standing in for a hidraw node.
enum Port {
    Pty(Pty),
    Socket(Socket),
}

impl Port {
    /// A pty (its link at `link`), or a socket at `link` for a HID board.
    fn open<S: PtyBoard>(link: Option<&Path>) -> Result<Port, EmulatorError> {
        if !S::HID {
            return Ok(Port::Pty(Pty::open(link)?));
        }
        let path = link.ok_or_else(|| {
            EmulatorError::BadOptions(format!(
                "an {} is reached over a socket: give its path (--link PATH)",
                S::NAME
            ))
        })?;
        Ok(Port::Socket(Socket::open(path)?))
    }

    fn path(&self) -> &Path {
        match self {
            Port::Pty(p) => &p.path,
            Port::Socket(s) => &s.path,
        }
    }

    async fn read(&mut self, buf: &mut [u8]) -> Result<Heard, EmulatorError> {
        match self {
            Port::Pty(p) => p.read(buf).await,
            Port::Socket(s) => s.read(buf).await,
        }
    }

    async fn send(&mut self, bytes: &[u8]) -> Sent {
        match self {
            Port::Pty(p) => p.send(bytes).await,
            Port::Socket(s) => s.send(bytes).await,
        }
    }
}

/// How the pty runner behaves.
#[derive(Clone, Debug)]
pub struct PtyOptions {
    /// A symlink made (or replaced) to point at the slave side.
    pub link: Option<PathBuf>,
    /// Every byte both ways, timestamped from the start, as capture v1.
    pub capture_out: Option<PathBuf>,
    /// Wait this long after the first update-mode command before playing the script.
    pub start_delay_ms: u64,
    /// Close the pty right after the origin square of this ply (1-based) is reported empty.
    pub unplug_at_ply: Option<u32>,
    /// How long the board stays unplugged; the script keeps playing meanwhile.
    pub unplug_for_ms: u64,
    /// The board's memory is gone when it is plugged in again (a DGT board whose ring a long
    /// outage overran, or one that keeps none): the host must do without it.
    pub memory_lost_on_unplug: bool,
    /// After the script ends keep answering for this long, then return; `None`: forever.
    pub linger_ms: Option<u64>,
    /// Print the slave's path on standard output (for the command line).
    pub print_path: bool,
}

impl Default for PtyOptions {
    fn default() -> Self {
        PtyOptions {
            link: None,
            capture_out: None,
            start_delay_ms: 0,
            unplug_at_ply: None,
            unplug_for_ms: 2_000,
            memory_lost_on_unplug: false,
            linger_ms: None,
            print_path: false,
        }
    }
}

/// What the runner tells its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtyEvent {
    /// The board is reachable at this path.
    Ready(PathBuf),
    Unplugged,
    /// Back, at a new path (the symlink, if any, points there).
    Replugged(PathBuf),
    /// Still plugged in, at a new path (the symlink, if any, points there): the host that went
    /// away left the old pty exclusive, and the emulator could not release it (not root).
    Moved(PathBuf),
    /// The last script event has been played.
    ScriptDone,
}

/// Which frames the board sends unasked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Idle,
    /// Board updates only (DGT SEND_UPDATE_BRD, TGZ_SEND_UPDATE_BRD).
    Board,
    /// Board updates and clock frames (DGT SEND_UPDATE and SEND_UPDATE_NICE, TGZ_SEND_UPDATE_NICE).
    Full,
}

/// Whether a played frame is a board change or a clock frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Channel {
    Board,
    Clock,
}

/// What one host command asks of the board.
enum Host {
    Reset,
    Updates(Mode),
    /// Answer with these bytes.
    Reply(Vec<u8>),
    /// Answer with these bytes only while clock frames are on (DGT's clock-message ack).
    ClockReply(Vec<u8>),
    /// Answer with these bytes, then report in this mode (a ChessLink register write).
    ReplyAndUpdates(Vec<u8>, Mode),
    /// Answer with these bytes, then stop reporting.
    ReplyAndReset(Vec<u8>),
    Ignore,
}

/// A vendor's chessboard as the pty runner plays its [`Script`]: what it answers from, what a
/// played report leaves it showing, and how it answers the host. Each vendor's emulator module
/// implements it beside its script; the runner's side ([`PtyBoard`]) is the same for all.
pub(crate) trait Emulated: ScriptBoard {
    /// What the board answers from (its squares), `()` if nothing.
    type State;
    /// For the log.
    const NAME: &'static str;
    /// Reached over USB HID (a socket standing in for its hidraw node), not a serial line.
    const HID: bool = false;

    fn start_state(script: &Script<Self>) -> Self::State;
    /// Whether `e` is played after the handshake (every event that is not part of it).
    fn in_body(e: &Event<Self>) -> bool {
        e.kind != EventKind::Handshake
    }
    /// The capture's headers besides `device` and `source` ([`PtyBoard::capture_extra`]).
    fn capture_extra(script: &Script<Self>) -> Vec<(String, String)> {
        let _ = script;
        Vec::new()
    }
    /// What sending `frame` leaves the board showing.
    fn played(state: &mut Self::State, frame: &Self::Frame) {
        let _ = (state, frame);
    }
    /// One command from the front of `buf`: the bytes it takes and the board's answer, `None`
    /// while it is incomplete.
    fn command(buf: &[u8], state: &mut Self::State) -> Option<(usize, Answer)>;
}

/// What a vendor's chessboard script holds, whichever the vendor ([`PtyScript::vendor`]): for
/// whoever checks a capture against the script it was played from.
pub trait VendorScript {
    /// How many plies its game has.
    fn plies(&self) -> usize;
    /// When its last event is played, from the body's start (ms).
    fn length_ms(&self) -> Millis;
    /// What the board sends by itself once it reports: when (ms from the body's start), the
    /// bytes, and the ply whose move they show (`None` for hands between moves).
    fn reports(&self) -> Vec<(Millis, Vec<u8>, Option<u32>)>;
    /// Whether the host's bytes `sent` switch the board's reports on.
    fn switches_reports_on(&self, sent: &[u8]) -> bool;
}

impl<B: Emulated> VendorScript for Script<B> {
    fn plies(&self) -> usize {
        self.plies.len()
    }

    fn length_ms(&self) -> Millis {
        self.events.last().map_or(0, |e| e.at_ms) - self.body_start_ms
    }

    fn reports(&self) -> Vec<(Millis, Vec<u8>, Option<u32>)> {
        self.events
            .iter()
            .filter(|e| {
                e.dir == Direction::FromBoard && B::in_body(e) && e.at_ms >= self.body_start_ms
            })
            .filter_map(|e| {
                let Payload::Frame(f) = &e.payload else {
                    return None;
                };
                let ply = (e.kind == EventKind::Move).then_some(e.ply);
                Some((e.at_ms - self.body_start_ms, f.wire_bytes(), ply))
            })
            .collect()
    }

    fn switches_reports_on(&self, sent: &[u8]) -> bool {
        let mut state = B::start_state(self);
        let mut rest = sent;
        while let Some((used, answer)) = B::command(rest, &mut state) {
            if answer.reports == Some(true) {
                return true;
            }
            rest = rest.get(used.max(1)..).unwrap_or_default();
        }
        false
    }
}

/// A vendor board's answer to one host command ([`Emulated::command`]).
#[derive(Debug, Default)]
pub(crate) struct Answer {
    /// The bytes it sends back.
    pub reply: Option<Vec<u8>>,
    /// Whether it reports by itself from then on (`Some(true)`), stops (`Some(false)`), or
    /// goes on as it did.
    pub reports: Option<bool>,
}

impl Answer {
    /// No answer, no change.
    pub const NONE: Answer = Answer {
        reply: None,
        reports: None,
    };
}

/// A kind of scripted board the pty runner plays: its state, its script events, its commands.
trait PtyBoard {
    /// What a BOARD_DUMP reports.
    type State;
    type Event;
    /// The capture's `device` (`dgt`, `togyz`).
    const DEVICE: &'static str;
    /// For the log.
    const NAME: &'static str;
    /// Reached over USB HID (a socket standing in for its hidraw node), not a serial line.
    const HID: bool = false;

    fn start_state(&self) -> Self::State;
    fn initial_clock(&self) -> BwTime;
    fn body_start_ms(&self) -> Millis;
    /// The events after the handshake, in time order.
    fn body(&self) -> Vec<&Self::Event>;
    fn at_ms(e: &Self::Event) -> Millis;
    /// The capture's headers besides `device` and `source` (what the board's sensor is known
    /// to have learnt of it).
    fn capture_extra(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Forgets what the board's memory holds (it keeps only what the board shows now).
    fn forget_memory(_state: &mut Self::State) {}
    /// Index in `body` of the event after which an unplug at `ply` happens.
    fn unplug_after(&self, body: &[&Self::Event], ply: u32) -> Option<usize>;
    /// Plays `e` on the board: the bytes it sends (if in the right mode) and their channel.
    fn play(
        state: &mut Self::State,
        clock: &mut BwTime,
        e: &Self::Event,
    ) -> Option<(Vec<u8>, Channel)>;
    /// One command from the front of `buf`: the bytes it takes and what it asks, `None` while
    /// it is incomplete.
    fn command(&self, buf: &[u8], state: &mut Self::State, clock: &BwTime)
    -> Option<(usize, Host)>;
}

async fn read_opt(pty: Option<&mut Port>, buf: &mut [u8]) -> Result<Heard, EmulatorError> {
    match pty {
        Some(p) => p.read(buf).await,
        None => std::future::pending().await,
    }
}

async fn sleep_opt(at: Option<Instant>) {
    match at {
        Some(at) => sleep_until(at).await,
        None => std::future::pending().await,
    }
}

enum Action {
    Read(Result<Heard, EmulatorError>),
    Event,
    Replug,
    Finish,
}

struct Runner<'a, S: PtyBoard> {
    script: &'a S,
    opts: &'a PtyOptions,
    tx: Option<UnboundedSender<PtyEvent>>,
    state: S::State,
    clock: BwTime,
    mode: Mode,
    pty: Option<Port>,
    capture: Option<tokio::fs::File>,
    t0: Instant,
    inbuf: Vec<u8>,
}

impl<S: PtyBoard> Runner<'_, S> {
    fn notify(&self, e: PtyEvent) {
        if let Some(tx) = &self.tx {
            // The caller may have stopped listening; the board goes on regardless.
            let _ignored_if_nobody_listens = tx.send(e);
        }
    }

    fn announce(&self, path: &Path, replugged: bool) {
        tracing::info!(path = %path.display(), replugged, "{}", S::NAME);
        if self.opts.print_path {
            println!("{}", path.display());
        }
        self.notify(if replugged {
            PtyEvent::Replugged(path.to_path_buf())
        } else {
            PtyEvent::Ready(path.to_path_buf())
        });
    }

    fn announce_moved(&self, path: &Path) {
        tracing::info!(path = %path.display(), "{} at a new pty", S::NAME);
        if self.opts.print_path {
            println!("{}", path.display());
        }
        self.notify(PtyEvent::Moved(path.to_path_buf()));
    }

    async fn log(&mut self, dir: Direction, bytes: &[u8]) -> Result<(), EmulatorError> {
        if let Some(f) = &mut self.capture {
            let mut line = String::new();
            let t = self.t0.elapsed().as_millis() as u64;
            push_line(&mut line, t, dir, bytes);
            f.write_all(line.as_bytes()).await?;
            f.flush().await?;
        }
        Ok(())
    }

    async fn send(&mut self, bytes: &[u8]) -> Result<(), EmulatorError> {
        let Some(p) = &mut self.pty else {
            return Ok(());
        };
        match p.send(bytes).await {
            Sent::Written => self.log(Direction::FromBoard, bytes).await,
            Sent::Dropped => Ok(()),
        }
    }

    /// Handles every complete command in the input buffer.
    async fn commands(&mut self, first_update: &mut Option<Instant>) -> Result<(), EmulatorError> {
        while let Some((used, host)) =
            self.script
                .command(&self.inbuf, &mut self.state, &self.clock)
        {
            self.inbuf.drain(..used.clamp(1, self.inbuf.len()));
            match host {
                Host::Reset => self.mode = Mode::Idle,
                Host::Updates(mode) => {
                    self.mode = mode;
                    if first_update.is_none() {
                        *first_update =
                            Some(Instant::now() + Duration::from_millis(self.opts.start_delay_ms));
                    }
                }
                Host::Reply(bytes) => self.send(&bytes).await?,
                Host::ReplyAndUpdates(bytes, mode) => {
                    self.send(&bytes).await?;
                    self.mode = mode;
                    if first_update.is_none() {
                        *first_update =
                            Some(Instant::now() + Duration::from_millis(self.opts.start_delay_ms));
                    }
                }
                Host::ReplyAndReset(bytes) => {
                    self.send(&bytes).await?;
                    self.mode = Mode::Idle;
                }
                Host::ClockReply(bytes) => {
                    if self.mode == Mode::Full {
                        self.send(&bytes).await?;
                    }
                }
                Host::Ignore => {}
            }
        }
        Ok(())
    }

    async fn play(&mut self, e: &S::Event) -> Result<(), EmulatorError> {
        let Some((bytes, channel)) = S::play(&mut self.state, &mut self.clock, e) else {
            return Ok(());
        };
        let on = match channel {
            Channel::Board => self.mode != Mode::Idle,
            Channel::Clock => self.mode == Mode::Full,
        };
        if on {
            self.send(&bytes).await?;
        }
        Ok(())
    }
}

/// Runs `script` as a DGT board with a clock on a pseudo-terminal (see the module doc).
/// Returns after `linger_ms` once the script is done; with `linger_ms: None` it never returns
/// except on an error opening the pty or writing the capture.
pub async fn run_pty(
    script: &BoardScript,
    opts: &PtyOptions,
    events: Option<UnboundedSender<PtyEvent>>,
) -> Result<(), EmulatorError> {
    run(script, opts, events).await
}

/// Runs `script` as a TGZ-1 togyz pit board with a clock on a pseudo-terminal, as [`run_pty`]
/// does a DGT board: unplugged (if asked) right after the start pit of `unplug_at_ply` reads
/// empty.
pub async fn run_togyz_pty(
    script: &TogyzScript,
    opts: &PtyOptions,
    events: Option<UnboundedSender<PtyEvent>>,
) -> Result<(), EmulatorError> {
    run(script, opts, events).await
}

async fn run<S: PtyBoard>(
    script: &S,
    opts: &PtyOptions,
    events: Option<UnboundedSender<PtyEvent>>,
) -> Result<(), EmulatorError> {
    let capture = match &opts.capture_out {
        Some(p) => {
            let mut f = tokio::fs::File::create(p).await?;
            let mut extra = vec![("source".to_owned(), "boardscribe emulate (pty)".to_owned())];
            extra.extend(script.capture_extra());
            let head = boardscribe_core::capture::capture_head(S::DEVICE, &extra)?;
            f.write_all(head.as_bytes()).await?;
            Some(f)
        }
        None => None,
    };
    let pty = Port::open::<S>(opts.link.as_deref())?;
    let path = pty.path().to_path_buf();
    let mut r = Runner {
        script,
        opts,
        tx: events,
        state: script.start_state(),
        clock: script.initial_clock(),
        mode: Mode::Idle,
        pty: Some(pty),
        capture,
        t0: Instant::now(),
        inbuf: Vec::new(),
    };
    r.announce(&path, false);

    let body = script.body();
    let body_start_ms = script.body_start_ms();
    let unplug_at = opts
        .unplug_at_ply
        .and_then(|ply| script.unplug_after(&body, ply));

    let mut next = 0usize;
    let mut start: Option<Instant> = None;
    let mut replug_at: Option<Instant> = None;
    let mut done_at: Option<Instant> = None;
    if body.is_empty() {
        done_at = Some(Instant::now());
        r.notify(PtyEvent::ScriptDone);
    }
    let mut buf = [0u8; 256];
    loop {
        let due = start.and_then(|s| {
            body.get(next)
                .map(|e| s + Duration::from_millis(S::at_ms(e).saturating_sub(body_start_ms)))
        });
        let finish = done_at.and_then(|d| opts.linger_ms.map(|l| d + Duration::from_millis(l)));
        let action = tokio::select! {
            res = read_opt(r.pty.as_mut(), &mut buf) => Action::Read(res),
            _ = sleep_opt(due) => Action::Event,
            _ = sleep_opt(replug_at) => Action::Replug,
            _ = sleep_opt(finish) => Action::Finish,
        };
        match action {
            Action::Read(Ok(Heard::Bytes(n))) => {
                let got = buf[..n].to_vec();
                r.log(Direction::ToBoard, &got).await?;
                r.inbuf.extend_from_slice(&got);
                r.commands(&mut start).await?;
            }
            Action::Read(Ok(Heard::Moved(path))) => {
                // The host went and its pty could not be released: the board is at a new path.
                r.inbuf.clear();
                r.announce_moved(&path);
            }
            Action::Read(Err(e)) => return Err(e),
            Action::Event => {
                let Some(e) = body.get(next) else { continue };
                next += 1;
                r.play(e).await?;
                if unplug_at == Some(next - 1) {
                    // Let the host read what was already sent, then pull the plug.
                    sleep(Duration::from_millis(50)).await;
                    r.pty = None;
                    if let Some(l) = &opts.link {
                        // The device node disappears as on a real unplug.
                        if let Err(e) = std::fs::remove_file(l) {
                            tracing::debug!(cause = %e, "could not remove the link");
                        }
                    }
                    if let Some(f) = &mut r.capture {
                        f.write_all(b"# unplugged\n").await?;
                    }
                    replug_at = Some(Instant::now() + Duration::from_millis(opts.unplug_for_ms));
                    r.notify(PtyEvent::Unplugged);
                }
                if next == body.len() {
                    done_at = Some(Instant::now());
                    r.notify(PtyEvent::ScriptDone);
                }
            }
            Action::Replug => {
                replug_at = None;
                let pty = Port::open::<S>(opts.link.as_deref())?;
                let path = pty.path().to_path_buf();
                r.pty = Some(pty);
                r.mode = Mode::Idle;
                r.inbuf.clear();
                if opts.memory_lost_on_unplug {
                    S::forget_memory(&mut r.state);
                }
                if let Some(f) = &mut r.capture {
                    f.write_all(b"# replugged\n").await?;
                }
                r.announce(&path, true);
            }
            Action::Finish => {
                if let Some(f) = &mut r.capture {
                    f.flush().await?;
                }
                // The board goes away for good: its device node with it, so that a host
                // looking again never finds a later pty that reuses the same number.
                if let Some(l) = &opts.link
                    && let Err(e) = std::fs::remove_file(l)
                {
                    tracing::debug!(cause = %e, "could not remove the link");
                }
                return Ok(());
            }
        }
    }
}

/// A script for either kind of board, as [`PtyFleet`] plays it.
#[derive(Clone, Debug)]
pub enum PtyScript {
    Dgt(BoardScript),
    Togyz(TogyzScript),
    ChessLink(ChessLinkScript),
    Chessnut(ChessnutScript),
    Certabo(CertaboScript),
    IChessOne(IChessOneScript),
}

impl From<ChessnutScript> for PtyScript {
    fn from(s: ChessnutScript) -> PtyScript {
        PtyScript::Chessnut(s)
    }
}

impl From<CertaboScript> for PtyScript {
    fn from(s: CertaboScript) -> PtyScript {
        PtyScript::Certabo(s)
    }
}

impl From<BoardScript> for PtyScript {
    fn from(s: BoardScript) -> PtyScript {
        PtyScript::Dgt(s)
    }
}

impl From<ChessLinkScript> for PtyScript {
    fn from(s: ChessLinkScript) -> PtyScript {
        PtyScript::ChessLink(s)
    }
}

impl From<TogyzScript> for PtyScript {
    fn from(s: TogyzScript) -> PtyScript {
        PtyScript::Togyz(s)
    }
}

impl PtyScript {
    /// A DGT board's `hands` played on a chessboard of `kind`: the DGT script itself, or its
    /// square changes as that vendor's board reports them; `None` for a kind that is not a
    /// chessboard. A kind without a clock ([`BoardKind::reports_clock`]) is best given hands
    /// scripted without one (no presses).
    pub fn chess_hands(kind: BoardKind, hands: BoardScript) -> Option<PtyScript> {
        match kind {
            BoardKind::Dgt => Some(PtyScript::Dgt(hands)),
            BoardKind::ChessLink => Some(PtyScript::ChessLink(crate::chesslink_script(&hands))),
            BoardKind::Chessnut => Some(PtyScript::Chessnut(crate::chessnut_script(&hands))),
            BoardKind::Certabo => Some(PtyScript::Certabo(crate::certabo_script(&hands))),
            BoardKind::IChessOne => Some(PtyScript::IChessOne(crate::ichessone_script(&hands))),
            BoardKind::Togyz => None,
        }
    }

    /// A DGT board's `hands` on a board of `kind` whose sensor learnt it before the game (a
    /// Certabo board calibrated before: it opens with the game's board, not its calibration
    /// setup); `None` for a kind whose sensor learns nothing ([`chess_hands`] then).
    ///
    /// [`chess_hands`]: PtyScript::chess_hands
    pub fn chess_hands_learnt(kind: BoardKind, hands: BoardScript) -> Option<PtyScript> {
        match kind {
            BoardKind::Certabo => {
                Some(PtyScript::Certabo(crate::certabo_script_calibrated(&hands)))
            }
            _ => None,
        }
    }

    /// The script of a vendor's chessboard, whichever the vendor; `None` for a DGT board's or a
    /// pit board's.
    pub fn vendor(&self) -> Option<&dyn VendorScript> {
        match self {
            PtyScript::Dgt(_) | PtyScript::Togyz(_) => None,
            PtyScript::ChessLink(s) => Some(s),
            PtyScript::Chessnut(s) => Some(s),
            PtyScript::Certabo(s) => Some(s),
            PtyScript::IChessOne(s) => Some(s),
        }
    }

    /// Whether boards of `kind` can be emulated here (on a pseudo-terminal).
    pub fn can_emulate(kind: BoardKind) -> bool {
        match kind {
            BoardKind::Dgt
            | BoardKind::Togyz
            | BoardKind::ChessLink
            | BoardKind::Chessnut
            | BoardKind::Certabo
            | BoardKind::IChessOne => true,
        }
    }

    /// Runs the script on a pty ([`run_pty`] or [`run_togyz_pty`]).
    pub async fn run(
        &self,
        opts: &PtyOptions,
        events: Option<UnboundedSender<PtyEvent>>,
    ) -> Result<(), EmulatorError> {
        match self {
            PtyScript::Dgt(s) => run_pty(s, opts, events).await,
            PtyScript::Togyz(s) => run_togyz_pty(s, opts, events).await,
            PtyScript::ChessLink(s) => run(s, opts, events).await,
            PtyScript::Chessnut(s) => run(s, opts, events).await,
            PtyScript::Certabo(s) => run(s, opts, events).await,
            PtyScript::IChessOne(s) => run(s, opts, events).await,
        }
    }
}

/// Emulated boards on pseudo-terminals, started together; dropping the fleet stops them.
pub struct PtyFleet {
    runners: JoinSet<Result<(), EmulatorError>>,
    /// Each board's pty path when it was first ready, in the order given.
    pub paths: Vec<PathBuf>,
    /// When each board announced its pty (its capture's time zero, within microseconds).
    pub ready: Vec<std::time::Instant>,
    events: UnboundedReceiver<(usize, PtyEvent)>,
    done: Vec<bool>,
}

impl PtyFleet {
    /// Starts every board, each once the one before has its pty (and link) in place.
    pub async fn spawn(
        boards: impl IntoIterator<Item = (PtyScript, PtyOptions)>,
    ) -> Result<PtyFleet, EmulatorError> {
        let (all_tx, events) = unbounded_channel();
        let mut fleet = PtyFleet {
            runners: JoinSet::new(),
            paths: Vec::new(),
            ready: Vec::new(),
            events,
            done: Vec::new(),
        };
        for (i, (script, opts)) in boards.into_iter().enumerate() {
            let (tx, mut rx) = unbounded_channel();
            let runner = fleet
                .runners
                .spawn(async move { script.run(&opts, Some(tx)).await });
            let path = loop {
                match rx.recv().await {
                    Some(PtyEvent::Ready(path)) => break path,
                    Some(_) => {}
                    // The runner ended before its pty was ready: its error says why.
                    None => {
                        let id = runner.id();
                        while let Some(res) = fleet.runners.join_next_with_id().await {
                            if let Ok((done, Err(e))) = res
                                && done == id
                            {
                                return Err(e);
                            }
                        }
                        return Err(EmulatorError::Io(io::Error::other(
                            "an emulated board ended before its pty was ready",
                        )));
                    }
                }
            };
            fleet.ready.push(std::time::Instant::now());
            fleet.paths.push(path);
            fleet.done.push(false);
            let all_tx = all_tx.clone();
            tokio::spawn(async move {
                while let Some(e) = rx.recv().await {
                    if all_tx.send((i, e)).is_err() {
                        return;
                    }
                }
            });
        }
        Ok(fleet)
    }

    /// How many boards.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether the fleet has no board.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The next event of any board (after its first `Ready`), with the board's index.
    pub async fn next_event(&mut self) -> Option<(usize, PtyEvent)> {
        let (i, e) = self.events.recv().await?;
        if e == PtyEvent::ScriptDone
            && let Some(d) = self.done.get_mut(i)
        {
            *d = true;
        }
        Some((i, e))
    }

    /// Waits until every board has played its script; the events meanwhile go to `seen`.
    pub async fn all_done(&mut self, mut seen: impl FnMut(usize, &PtyEvent)) {
        while !self.done.iter().all(|d| *d) {
            match self.next_event().await {
                Some((i, e)) => seen(i, &e),
                None => return,
            }
        }
    }

    /// Stops every board now.
    pub fn abort(&mut self) {
        self.runners.abort_all();
    }
}
