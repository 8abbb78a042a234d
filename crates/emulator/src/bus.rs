//! A chain of scripted DGT boards in bus mode on one pseudo-terminal (dgt-notes 1.12).
//!
//! Flow: every board plays its [`BoardScript`] in real time from the first command addressed to
//! it (plus `start_delay_ms`), keeping its board, its clock and the changes not yet asked for as
//! EEPROM tokens (a field token per FIELD_UPDATE; both clock sides on a lever change, left first). The host
//! writes 4-byte bus commands; the board with that address answers after the command's wire
//! time and `answer_delay_ms`, its bytes arriving as they cross the line at 9600 baud (1.04 ms a
//! byte, in chunks of [`CHUNK`]): PING, BRD_DUMP, BWTIME, UPDATE (the pending tokens; kept for
//! REPEAT_CHANGES), VERSION, START_GAME_WRITTEN (SET_START_GAME writes a START_TAG) and
//! FROM_START (its EEPROM log from the last START_TAG: every board keeps one, as a board on its
//! own port does, a ring of the real size with its power-up listing, BEGINPOS tags and both
//! clocks at each lever change). A broadcast
//! PING is answered by every board, one after the other. Faults on demand ([`BusFault`]): the
//! next replies of a board corrupted (one bit, so the checksum fails), a board off the chain for
//! a while or for good (it keeps playing and buffering its changes, as a real board does).

use std::{collections::VecDeque, path::PathBuf, time::Duration};

use tokio::{
    sync::mpsc::{UnboundedReceiver, UnboundedSender},
    time::Instant,
};

use super::{BoardScript, EmulatorError, EventKind, Payload, PtyEvent, ScriptEvent, pty};
use boardscribe_core::{
    Millis,
    bus::{address_from_serial, master::BROADCAST, wire_ms},
    memory::EeRecorder,
    protocol::dgt::{
        BusCommand, BusReply, BwTime, ClockTime, Command, CommandError, EeTag, EeToken, Frame,
        MessageId, bus_id, decode_command, encode_ee_tokens,
    },
};

/// A reply reaches the host in pieces of at most this many bytes, each once it has crossed the
/// line (a long one, a log from the start of a game, takes seconds).
pub const CHUNK: usize = 16;

/// How the chain behaves.
#[derive(Clone, Debug)]
pub struct BusChainOptions {
    /// A symlink made (or replaced) to point at the slave side.
    pub link: Option<PathBuf>,
    /// A board starts its script this long after the first command addressed to it.
    pub start_delay_ms: u64,
    /// Every board starts its script at this instant instead (a test knows when each ply is
    /// played).
    pub start_at: Option<Instant>,
    /// How long a board takes to start answering once the command is in.
    pub answer_delay_ms: u64,
    /// After every script ends keep answering for this long, then return; `None`: forever.
    pub linger_ms: Option<u64>,
}

impl Default for BusChainOptions {
    fn default() -> Self {
        BusChainOptions {
            link: None,
            start_delay_ms: 0,
            start_at: None,
            answer_delay_ms: 3,
            linger_ms: None,
        }
    }
}

/// A fault to play now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusFault {
    /// The board's next `replies` replies each have one bit flipped (a checksum error).
    Corrupt { address: u16, replies: u32 },
    /// The board leaves the chain for `for_ms` (`None`: for good): it hears no command.
    Drop { address: u16, for_ms: Option<u64> },
}

/// What a board in bus mode writes to its log for one frame of its script (dgt-notes 1.11): a
/// field token per FIELD_UPDATE (`quick`: under 250 ms after the previous change), and both clocks,
/// left first, when a BWTIME shows the lever changed; `clock` follows the BWTIMEs.
pub fn log_tokens(frame: &Frame, quick: bool, clock: &mut BwTime, out: &mut Vec<EeToken>) {
    match frame {
        Frame::FieldUpdate { square, piece } => out.push(EeToken::Field {
            square: *square,
            piece: *piece,
            quick,
        }),
        Frame::BwTime(t) => {
            if t.lever_right_high() != clock.lever_right_high() {
                let side = |i: usize| ClockTime {
                    hours: t.0[i] & 0x0f,
                    minutes: unbcd(t.0[i + 1]),
                    seconds: unbcd(t.0[i + 2]),
                };
                out.push(EeToken::Clock {
                    left: true,
                    time: side(3),
                });
                out.push(EeToken::Clock {
                    left: false,
                    time: side(0),
                });
            }
            *clock = *t;
        }
        _ => {}
    }
}

/// One scripted board on the chain.
struct ChainBoard<'a> {
    address: u16,
    body: Vec<&'a ScriptEvent>,
    body_start_ms: Millis,
    next: usize,
    start: Option<Instant>,
    clock: BwTime,
    /// Changes the host has not asked for yet.
    pending: Vec<EeToken>,
    /// Everything the board wrote, as its EEPROM ring holds it, and its squares now.
    memory: EeRecorder,
    /// The data of the last UPDATE sent (for REPEAT_CHANGES).
    last_sent: Vec<u8>,
    corrupt: u32,
    /// Off the chain until then (`Some(None)`: for good).
    dropped: Option<Option<Instant>>,
}

impl<'a> ChainBoard<'a> {
    fn new(address: u16, script: &'a BoardScript) -> ChainBoard<'a> {
        ChainBoard {
            address,
            body: script
                .events
                .iter()
                .filter(|e| e.kind != EventKind::Handshake)
                .collect(),
            body_start_ms: script.body_start_ms,
            next: 0,
            start: None,
            clock: script.initial_clock,
            pending: Vec::new(),
            memory: EeRecorder::power_up(&script.start_dump.0),
            last_sent: Vec::new(),
            corrupt: 0,
            dropped: None,
        }
    }

    fn due(&self) -> Option<Instant> {
        let start = self.start?;
        let e = self.body.get(self.next)?;
        Some(start + Duration::from_millis(e.at_ms.saturating_sub(self.body_start_ms)))
    }

    fn done(&self) -> bool {
        self.next >= self.body.len()
    }

    /// Plays every event due by `now`.
    fn play_due(&mut self, now: Instant) {
        while self.due().is_some_and(|d| d <= now) {
            let e = self.body[self.next];
            self.next += 1;
            let Payload::Frame(f) = &e.payload else {
                continue;
            };
            let mut written = Vec::new();
            if let Frame::FieldUpdate { square, piece } = f {
                written.extend(self.memory.field_token(e.at_ms, *square, *piece));
            } else {
                log_tokens(f, false, &mut self.clock, &mut written);
                for t in &written {
                    self.memory.write(*t);
                }
            }
            self.pending.extend(written);
        }
    }

    fn on_chain(&mut self, now: Instant) -> bool {
        match self.dropped {
            None => true,
            Some(Some(until)) if now >= until => {
                self.dropped = None;
                true
            }
            Some(_) => false,
        }
    }

    /// The reply to `cmd`, if this board answers it.
    fn answer(&mut self, cmd: BusCommand) -> Option<Vec<u8>> {
        let (id, data) = match cmd {
            BusCommand::Ping => (bus_id::PING, Vec::new()),
            BusCommand::SendBoard => (bus_id::BRD_DUMP, self.memory.board().to_vec()),
            BusCommand::SendClock => (bus_id::BWTIME, self.clock.0.to_vec()),
            BusCommand::SendChanges => {
                let mut data = Vec::new();
                encode_ee_tokens(&self.pending, &mut data);
                self.pending.clear();
                self.last_sent = data.clone();
                (bus_id::UPDATE, data)
            }
            BusCommand::RepeatChanges => (bus_id::UPDATE, self.last_sent.clone()),
            BusCommand::SendVersion => (bus_id::VERSION, vec![1, 7]),
            BusCommand::SetStartGame => {
                let tag = EeToken::Tag(EeTag::StartTag);
                self.memory.write(tag);
                self.pending.push(tag);
                (bus_id::START_GAME_WRITTEN, Vec::new())
            }
            BusCommand::SendFromStart => (bus_id::FROM_START, self.memory.from_start()),
            _ => return None,
        };
        let mut bytes = Frame::Bus(BusReply {
            id: MessageId(id),
            address: self.address,
            data,
            checksum_ok: true,
        })
        .to_bytes();
        if self.corrupt > 0 {
            self.corrupt -= 1;
            // One bit of the first data byte (or of the checksum): still a frame, a bad sum.
            let at = if bytes.len() > 6 { 5 } else { bytes.len() - 1 };
            bytes[at] ^= 0x01;
        }
        Some(bytes)
    }
}

fn unbcd(b: u8) -> u8 {
    ((b >> 4) & 0x07) * 10 + (b & 0x0f)
}

async fn recv_opt(rx: Option<&mut UnboundedReceiver<BusFault>>) -> Option<BusFault> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The bus address of a script's board (from its serial number).
pub fn script_address(script: &BoardScript) -> Option<u16> {
    address_from_serial(&script.serial)
}

/// Runs `boards` (each `(address, script)`) as a chain on one pseudo-terminal (see the module
/// doc). Returns `linger_ms` after every script is done; never with `linger_ms: None` except on
/// an error opening the pty.
pub async fn run_bus_pty(
    boards: &[(u16, BoardScript)],
    opts: &BusChainOptions,
    mut faults: Option<UnboundedReceiver<BusFault>>,
    events: Option<UnboundedSender<PtyEvent>>,
) -> Result<(), EmulatorError> {
    let notify = |e: PtyEvent| {
        if let Some(tx) = &events {
            // The caller may have stopped listening; the chain goes on regardless.
            let _ignored_if_nobody_listens = tx.send(e);
        }
    };
    let mut chain: Vec<ChainBoard<'_>> = boards
        .iter()
        .map(|(a, s)| {
            let mut b = ChainBoard::new(*a & 0x3fff, s);
            b.start = opts.start_at;
            b
        })
        .collect();
    let mut pty = pty::Pty::open(opts.link.as_deref())?;
    tracing::info!(path = %pty.path.display(), boards = chain.len(), "emulated DGT bus");
    notify(PtyEvent::Ready(pty.path.clone()));
    let mut inbuf: Vec<u8> = Vec::new();
    let mut replies: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut done_at: Option<Instant> = None;
    let mut buf = [0u8; 256];
    loop {
        // Events also play when a command comes in, so the end is checked on every turn.
        if done_at.is_none() && chain.iter().all(ChainBoard::done) {
            done_at = Some(Instant::now());
            notify(PtyEvent::ScriptDone);
        }
        let next_event = chain.iter().filter_map(ChainBoard::due).min();
        let next_reply = replies.front().map(|r| r.0);
        let finish = done_at.and_then(|d| opts.linger_ms.map(|l| d + Duration::from_millis(l)));
        tokio::select! {
            read = pty.read(&mut buf) => match read? {
                pty::Heard::Bytes(n) => {
                    inbuf.extend_from_slice(&buf[..n]);
                    let now = Instant::now();
                    loop {
                        match decode_command(&inbuf) {
                            Ok((Command::Bus { cmd, address }, used)) => {
                                inbuf.drain(..used);
                                let at = now
                                    + Duration::from_millis(wire_ms(4) + opts.answer_delay_ms);
                                schedule(&mut chain, cmd, address, at, opts, &mut replies);
                            }
                            Ok((_, used)) => {
                                inbuf.drain(..used.clamp(1, inbuf.len()));
                            }
                            Err(CommandError::Incomplete { .. }) => break,
                            Err(_) => {
                                inbuf.remove(0);
                            }
                        }
                        if inbuf.is_empty() {
                            break;
                        }
                    }
                }
                pty::Heard::Moved(path) => {
                    inbuf.clear();
                    tracing::info!(path = %path.display(), "emulated DGT bus at a new pty");
                    notify(PtyEvent::Moved(path));
                }
            },
            _ = sleep_opt(next_event) => {
                let now = Instant::now();
                for b in &mut chain {
                    b.play_due(now);
                }
            },
            _ = sleep_opt(next_reply) => {
                if let Some((_, bytes)) = replies.pop_front() {
                    // A reply no host reads is lost, as on a real line.
                    let _sent_or_lost = pty.send(&bytes).await;
                }
            },
            f = recv_opt(faults.as_mut()) => match f {
                Some(BusFault::Corrupt { address, replies: n }) => {
                    if let Some(b) = chain.iter_mut().find(|b| b.address == address) {
                        b.corrupt += n;
                    }
                }
                Some(BusFault::Drop { address, for_ms }) => {
                    let until = for_ms.map(|ms| Instant::now() + Duration::from_millis(ms));
                    if let Some(b) = chain.iter_mut().find(|b| b.address == address) {
                        b.dropped = Some(until);
                    }
                }
                None => faults = None,
            },
            _ = sleep_opt(finish) => {
                // The chain goes away for good, its device node with it (see pty::run).
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

/// Queues the answers to one command heard at `at`: the addressed board's, or every board's
/// to a broadcast PING (one after the other).
fn schedule(
    chain: &mut [ChainBoard<'_>],
    cmd: BusCommand,
    address: u16,
    at: Instant,
    opts: &BusChainOptions,
    replies: &mut VecDeque<(Instant, Vec<u8>)>,
) {
    let mut t = replies.back().map_or(at, |r| r.0.max(at));
    for b in chain.iter_mut() {
        if address != BROADCAST && b.address != address {
            continue;
        }
        if !b.on_chain(at) {
            continue;
        }
        if address != BROADCAST && b.start.is_none() {
            b.start = Some(at + Duration::from_millis(opts.start_delay_ms));
        }
        b.play_due(at);
        if let Some(bytes) = b.answer(cmd) {
            // Each piece of the reply is written once it would have crossed the line.
            let mut crossed = 0;
            for chunk in bytes.chunks(CHUNK) {
                crossed += chunk.len();
                let when = t + Duration::from_millis(wire_ms(crossed));
                replies.push_back((when, chunk.to_vec()));
            }
            t += Duration::from_millis(wire_ms(bytes.len()) + opts.answer_delay_ms);
        }
    }
}
