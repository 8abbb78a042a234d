//! A scripted DGT board on a pseudo-terminal.
//!
//! Flow: open a pty pair (keeping the slave open, so a host closing its side never makes the
//! master fail), publish the slave's path (and a symlink), answer host commands like a board,
//! and once the host asks for updates play the script in real time: FIELD_UPDATEs and BWTIMEs
//! go out only in update mode; the board state and clock advance regardless. An optional
//! unplug closes the pty mid-move and opens a new one later (the board comes back idle). Every
//! byte both ways can be written to a capture v1 file.

use std::{
    io,
    path::{Path, PathBuf},
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    sync::mpsc::UnboundedSender,
    time::{Instant, sleep, sleep_until, timeout},
};
use tokio_serial::{ClearBuffer, SerialPort, SerialStream};

use super::{BoardScript, EmulatorError, EventKind, Payload, ScriptEvent, capture_header};
use crate::{
    device::{Direction, capture::push_line},
    protocol::dgt::{BatteryStatus, BoardDump, BwTime, Frame, cmd},
};

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
    /// The last script event has been played.
    ScriptDone,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Idle,
    /// SEND_UPDATE: field updates and clock frames.
    Update,
    /// SEND_UPDATE_NICE: field updates and clock frames when the time changes.
    Nice,
    /// SEND_UPDATE_BRD: field updates only.
    Board,
}

struct Pty {
    master: SerialStream,
    /// Kept open so the master never sees EIO when the host closes its side.
    slave: SerialStream,
    path: PathBuf,
}

fn replace_link(link: &Path, target: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(link) {
        Ok(_) => std::fs::remove_file(link)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::os::unix::fs::symlink(target, link)
}

fn open_pty(link: Option<&Path>) -> Result<Pty, EmulatorError> {
    let (master, slave) = SerialStream::pair()?;
    let path = slave
        .name()
        .map(PathBuf::from)
        .ok_or_else(|| io::Error::other("the pseudo-terminal has no name"))?;
    if let Some(l) = link {
        replace_link(l, &path)?;
    }
    Ok(Pty {
        master,
        slave,
        path,
    })
}

async fn read_opt(pty: Option<&mut Pty>, buf: &mut [u8]) -> io::Result<usize> {
    match pty {
        Some(p) => p.master.read(buf).await,
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
    Read(io::Result<usize>),
    Event,
    Replug,
    Finish,
}

struct Runner<'a> {
    script: &'a BoardScript,
    opts: &'a PtyOptions,
    tx: Option<UnboundedSender<PtyEvent>>,
    board: [u8; 64],
    clock: BwTime,
    mode: Mode,
    pty: Option<Pty>,
    capture: Option<tokio::fs::File>,
    t0: Instant,
    inbuf: Vec<u8>,
}

impl Runner<'_> {
    fn notify(&self, e: PtyEvent) {
        if let Some(tx) = &self.tx {
            // The caller may have stopped listening; the board goes on regardless.
            let _ignored_if_nobody_listens = tx.send(e);
        }
    }

    fn announce(&self, path: &Path, replugged: bool) {
        tracing::info!(path = %path.display(), replugged, "emulated DGT board");
        if self.opts.print_path {
            println!("{}", path.display());
        }
        self.notify(if replugged {
            PtyEvent::Replugged(path.to_path_buf())
        } else {
            PtyEvent::Ready(path.to_path_buf())
        });
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

    async fn send(&mut self, frame: &Frame) -> Result<(), EmulatorError> {
        let bytes = frame.to_bytes();
        let Some(p) = &mut self.pty else {
            return Ok(());
        };
        match timeout(Duration::from_millis(100), p.master.write_all(&bytes)).await {
            Ok(Ok(())) => self.log(Direction::FromBoard, &bytes).await,
            Ok(Err(e)) => {
                tracing::debug!(cause = %e, "write to the host failed; dropped");
                Ok(())
            }
            Err(_) => {
                // Nobody reads the slave side: drop what piled up there, as a board
                // talking to an absent host loses its bytes.
                tracing::debug!("the host does not read; frame dropped");
                if let Err(e) = p.slave.clear(ClearBuffer::Input) {
                    tracing::debug!(cause = %e, "could not flush the pty");
                }
                Ok(())
            }
        }
    }

    fn serial_number(&self) -> u32 {
        self.script.serial.parse::<u32>().unwrap_or(0)
    }

    async fn command(
        &mut self,
        c: u8,
        first_update: &mut Option<Instant>,
    ) -> Result<(), EmulatorError> {
        let reply = match c {
            cmd::SEND_RESET => {
                self.mode = Mode::Idle;
                None
            }
            cmd::SEND_CLK => Some(Frame::BwTime(self.clock)),
            cmd::SEND_BRD => Some(Frame::BoardDump(BoardDump(self.board))),
            cmd::SEND_UPDATE | cmd::SEND_UPDATE_NICE | cmd::SEND_UPDATE_BRD => {
                self.mode = match c {
                    cmd::SEND_UPDATE => Mode::Update,
                    cmd::SEND_UPDATE_NICE => Mode::Nice,
                    _ => Mode::Board,
                };
                if first_update.is_none() {
                    *first_update =
                        Some(Instant::now() + Duration::from_millis(self.opts.start_delay_ms));
                }
                None
            }
            cmd::RETURN_SERIALNR => Some(Frame::SerialNr(self.script.serial.clone())),
            cmd::RETURN_LONG_SERIALNR => {
                Some(Frame::LongSerialNr(format!("1.070{}", self.script.serial)))
            }
            cmd::RETURN_BUSADRES => Some(Frame::BusAddress((self.serial_number() & 0x3fff) as u16)),
            cmd::SEND_VERSION => Some(Frame::Version { major: 1, minor: 7 }),
            cmd::SEND_TRADEMARK => Some(Frame::Trademark(
                "boardscribe emulator of a DGT e-board".to_string(),
            )),
            cmd::SEND_BATTERY_STATUS => Some(Frame::Battery(BatteryStatus([
                100, 0x7f, 0x7f, 0, 0, 0, 0, 0, 0,
            ]))),
            _ => None,
        };
        if let Some(f) = reply {
            self.send(&f).await?;
        }
        Ok(())
    }

    /// Handles every complete command in the input buffer.
    async fn commands(&mut self, first_update: &mut Option<Instant>) -> Result<(), EmulatorError> {
        while let Some(&c) = self.inbuf.first() {
            if c == cmd::CLOCK_MESSAGE || c == cmd::SET_LEDS {
                // `c size data...`: the size byte counts what follows it.
                let Some(&size) = self.inbuf.get(1) else {
                    return Ok(());
                };
                let total = 2 + usize::from(size);
                if self.inbuf.len() < total {
                    return Ok(());
                }
                let msg: Vec<u8> = self.inbuf.drain(..total).collect();
                if c == cmd::CLOCK_MESSAGE && matches!(self.mode, Mode::Update | Mode::Nice) {
                    // Acknowledged as a BWTIME (dgt-notes 1.9): ack0 0x10, ack1 = the command.
                    let acked = msg.get(3).copied().unwrap_or(0) & 0x7f;
                    self.send(&Frame::BwTime(BwTime([0x0a, 0x10, acked, 0x0a, 0, 0, 0])))
                        .await?;
                }
            } else {
                self.inbuf.remove(0);
                self.command(c, first_update).await?;
            }
        }
        Ok(())
    }

    async fn play(&mut self, e: &ScriptEvent) -> Result<(), EmulatorError> {
        let Payload::Frame(f) = &e.payload else {
            return Ok(());
        };
        match f {
            Frame::FieldUpdate { square, piece } => {
                if let Some(s) = self.board.get_mut(usize::from(*square)) {
                    *s = *piece;
                }
                if self.mode != Mode::Idle {
                    self.send(f).await?;
                }
            }
            Frame::BwTime(t) => {
                self.clock = *t;
                if matches!(self.mode, Mode::Update | Mode::Nice) {
                    self.send(f).await?;
                }
            }
            _ => {
                if self.mode != Mode::Idle {
                    self.send(f).await?;
                }
            }
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
    let capture = match &opts.capture_out {
        Some(p) => {
            let mut f = tokio::fs::File::create(p).await?;
            f.write_all(capture_header("dgt", "boardscribe emulate (pty)").as_bytes())
                .await?;
            Some(f)
        }
        None => None,
    };
    let pty = open_pty(opts.link.as_deref())?;
    let path = pty.path.clone();
    let mut r = Runner {
        script,
        opts,
        tx: events,
        board: script.start_dump.0,
        clock: script.initial_clock,
        mode: Mode::Idle,
        pty: Some(pty),
        capture,
        t0: Instant::now(),
        inbuf: Vec::new(),
    };
    r.announce(&path, false);

    let body: Vec<&ScriptEvent> = script
        .events
        .iter()
        .filter(|e| e.kind != EventKind::Handshake)
        .collect();
    let unplug_at = opts.unplug_at_ply.and_then(|ply| {
        let info = script.plies.iter().find(|p| p.ply == ply)?;
        body.iter().position(|e| {
            e.kind == EventKind::Move
                && e.ply == ply
                && e.payload
                    == Payload::Frame(Frame::FieldUpdate {
                        square: info.from_index,
                        piece: 0,
                    })
        })
    });

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
                .map(|e| s + Duration::from_millis(e.at_ms.saturating_sub(script.body_start_ms)))
        });
        let finish = done_at.and_then(|d| opts.linger_ms.map(|l| d + Duration::from_millis(l)));
        let action = tokio::select! {
            res = read_opt(r.pty.as_mut(), &mut buf) => Action::Read(res),
            _ = sleep_opt(due) => Action::Event,
            _ = sleep_opt(replug_at) => Action::Replug,
            _ = sleep_opt(finish) => Action::Finish,
        };
        match action {
            Action::Read(Ok(n)) if n > 0 => {
                let got = buf[..n].to_vec();
                r.log(Direction::ToBoard, &got).await?;
                r.inbuf.extend_from_slice(&got);
                r.commands(&mut start).await?;
            }
            Action::Read(res) => {
                // EOF or EIO: the host went away. Keep the board; look again shortly.
                if let Err(e) = res {
                    tracing::debug!(cause = %e, "pty read failed; host gone?");
                }
                sleep(Duration::from_millis(50)).await;
            }
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
                let pty = open_pty(opts.link.as_deref())?;
                let path = pty.path.clone();
                r.pty = Some(pty);
                r.mode = Mode::Idle;
                r.inbuf.clear();
                if let Some(f) = &mut r.capture {
                    f.write_all(b"# replugged\n").await?;
                }
                r.announce(&path, true);
            }
            Action::Finish => {
                if let Some(f) = &mut r.capture {
                    f.flush().await?;
                }
                return Ok(());
            }
        }
    }
}
