//! The board's side of a pseudo-terminal, made to behave as a USB serial device does for the
//! host that opens it.
//!
//! Flow: [`Pty::open`] makes a pty pair, keeps only the master (so the master hangs up, POLLHUP,
//! whenever no host has the slave open) and publishes the slave's path (and a symlink).
//! [`Pty::read`] waits for a host and reads its commands; when the last host fd closes (a host
//! that closed the port, or a process killed with its port open) the port is released as the
//! kernel releases a USB device: the exclusive flag (TIOCEXCL) the host set is cleared, which a
//! pty would otherwise keep for as long as its master is open, so that the next open succeeds;
//! where the emulator may not open the locked slave to clear it (not root), a fresh pty takes
//! its place and the link is pointed at it ([`Heard::Moved`]), as a device enumerated again.
//! [`Pty::send`] writes to the host, and drops what a board would lose: bytes sent while no host
//! has the port open (a pty would keep them for the next host, who would read them as new),
//! and bytes a host that does not read leaves piling up.

use std::{
    io,
    os::{fd::AsRawFd, unix::fs::OpenOptionsExt},
    path::{Path, PathBuf},
    time::Duration,
};

use nix::poll::{PollFd, PollFlags, poll};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    time::{sleep, timeout},
};
use tokio_serial::{ClearBuffer, SerialPort, SerialStream};

use crate::EmulatorError;

/// How often a port no host has open is looked at again.
const HOST_POLL: Duration = Duration::from_millis(20);

/// How long a write may wait for a host that does not read.
const WRITE_WAIT: Duration = Duration::from_millis(100);

/// The board's side of one pseudo-terminal.
pub(crate) struct Pty {
    master: SerialStream,
    pub(crate) path: PathBuf,
    link: Option<PathBuf>,
    /// Whether a host had the port open when last looked at.
    held: bool,
}

/// What [`Pty::read`] brings.
pub(crate) enum Heard {
    /// This many bytes from the host, at the front of the buffer.
    Bytes(usize),
    /// The port is now at this path (and the link, if any, points there).
    Moved(PathBuf),
}

/// What became of bytes given to [`Pty::send`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sent {
    Written,
    /// No host had the port open, or the host did not read: the bytes are gone.
    Dropped,
}

fn replace_link(link: &Path, target: &Path) -> io::Result<()> {
    // A new link renamed over the old one: a host never finds the link missing.
    let tmp = link.with_extension(format!("new-{}", std::process::id()));
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::os::unix::fs::symlink(target, &tmp)?;
    std::fs::rename(&tmp, link)
}

/// Marks `fd` close-on-exec.
fn close_on_exec(fd: std::os::fd::RawFd) -> io::Result<()> {
    use nix::fcntl::{FcntlArg, FdFlag, fcntl};
    fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))
        .map(drop)
        .map_err(io::Error::from)
}

/// Clears the exclusive flag a host left on the slave at `path`, as the kernel does when a USB
/// device's last holder closes it. Opening a slave a host left exclusive takes root.
fn clear_exclusive(path: &Path) -> io::Result<()> {
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc_flags())
        .open(path)?;
    rustix::termios::ioctl_tiocnxcl(&slave).map_err(io::Error::from)
}

/// O_NOCTTY | O_NONBLOCK: the emulator never takes the pty as its terminal, nor waits on it.
fn libc_flags() -> i32 {
    (rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::NONBLOCK).bits() as i32
}

impl Pty {
    /// A new pty pair; the slave's path, and `link` pointing at it.
    pub(crate) fn open(link: Option<&Path>) -> Result<Pty, EmulatorError> {
        let (master, slave) = SerialStream::pair()?;
        // serialport opens the pair inheritable: a process the emulator's process starts (a
        // daemon under test, a browser) would hold the board's side open, and an unplugged
        // board would never go away for the host.
        close_on_exec(master.as_raw_fd())?;
        let path = slave
            .name()
            .map(PathBuf::from)
            .ok_or_else(|| io::Error::other("the pseudo-terminal has no name"))?;
        // The slave is the host's: with it closed, the master hangs up while no host has it.
        drop(slave);
        if let Some(l) = link {
            replace_link(l, &path)?;
        }
        Ok(Pty {
            master,
            path,
            link: link.map(Path::to_path_buf),
            held: false,
        })
    }

    /// Whether a host has the port open now: the master hangs up while no one has the slave.
    fn host_present(&self) -> bool {
        let mut fds = [PollFd::new(self.master.as_raw_fd(), PollFlags::empty())];
        match poll(&mut fds, 0) {
            Ok(_) => !fds[0]
                .revents()
                .is_some_and(|r| r.contains(PollFlags::POLLHUP)),
            // A pty that cannot be polled is taken as held: its reads and writes will tell.
            Err(_) => true,
        }
    }

    /// The last host closed the port: it is released for the next one.
    fn release(&mut self) -> Result<Option<PathBuf>, EmulatorError> {
        // What was written since the host went would be read by the next one as new.
        if let Err(e) = self.master.clear(ClearBuffer::Output) {
            tracing::debug!(cause = %e, "could not flush the pty");
        }
        match clear_exclusive(&self.path) {
            Ok(()) => Ok(None),
            Err(e) => {
                tracing::debug!(cause = %e, path = %self.path.display(), "the port cannot be released; a new one takes its place");
                *self = Pty::open(self.link.as_deref())?;
                Ok(Some(self.path.clone()))
            }
        }
    }

    /// The next bytes from a host, waiting for one to open the port; the port released each
    /// time its last host goes (see the module doc). Cancel-safe.
    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> Result<Heard, EmulatorError> {
        loop {
            if !self.host_present() {
                if std::mem::replace(&mut self.held, false)
                    && let Some(path) = self.release()?
                {
                    return Ok(Heard::Moved(path));
                }
                sleep(HOST_POLL).await;
                continue;
            }
            self.held = true;
            match self.master.read(buf).await {
                Ok(n) if n > 0 => return Ok(Heard::Bytes(n)),
                // EOF or EIO: the host went away (looked at again above).
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(cause = %e, "pty read failed; host gone?");
                    sleep(HOST_POLL).await;
                }
            }
        }
    }

    /// Writes `bytes` to the host, if one has the port open and reads it.
    pub(crate) async fn send(&mut self, bytes: &[u8]) -> Sent {
        if !self.host_present() {
            return Sent::Dropped;
        }
        match timeout(WRITE_WAIT, self.master.write_all(bytes)).await {
            Ok(Ok(())) => Sent::Written,
            Ok(Err(e)) => {
                tracing::debug!(cause = %e, "write to the host failed; dropped");
                Sent::Dropped
            }
            Err(_) => {
                // Nobody reads the slave side: drop what piled up there, as a board talking to a
                // host that does not listen loses its bytes (the master's output is the slave's
                // input).
                tracing::debug!("the host does not read; frame dropped");
                if let Err(e) = self.master.clear(ClearBuffer::Output) {
                    tracing::debug!(cause = %e, "could not flush the pty");
                }
                Sent::Dropped
            }
        }
    }
}
