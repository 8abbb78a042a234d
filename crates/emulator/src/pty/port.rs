//! The board's side of a pseudo-terminal, made to behave as a USB serial device does for the
//! host that opens it.
//!
//! Flow: [`Pty::open`] makes a pty pair, keeps only the master (so the master hangs up, POLLHUP,
//! whenever no host has the slave open) and publishes the slave's path (and a symlink that
//! dangles once the emulator's process is gone, see [`link_target`]).
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
    ffi::OsString,
    io,
    os::{
        fd::{AsFd, BorrowedFd, OwnedFd},
        unix::{ffi::OsStringExt, fs::OpenOptionsExt},
    },
    path::{Path, PathBuf},
    time::Duration,
};

use rustix::{
    event::{PollFd, PollFlags, Timespec, poll},
    fs::{Mode, OFlags},
    pty::OpenptFlags,
    termios::{OptionalActions, QueueSelector},
};
use tokio::{
    io::unix::AsyncFd,
    time::{sleep, timeout},
};

use crate::EmulatorError;

/// How often a port no host has open is looked at again.
const HOST_POLL: Duration = Duration::from_millis(20);

/// How long a write may wait for a host that does not read.
const WRITE_WAIT: Duration = Duration::from_millis(100);

/// The master side of the pty: watched by the runtime only while a host has the port open.
/// A master whose slave is closed hangs up, and the runtime keeps a hang-up as final for its
/// registration: a master still registered when a host comes back would be "readable" at every
/// poll, and a read loop on it would spin. So the master is registered afresh for each host.
enum Master {
    Idle(OwnedFd),
    Watched(AsyncFd<OwnedFd>),
}

impl Master {
    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Master::Idle(fd) => fd.as_fd(),
            Master::Watched(a) => a.get_ref().as_fd(),
        }
    }
}

/// The board's side of one pseudo-terminal.
pub(crate) struct Pty {
    master: Option<Master>,
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

/// Where a link to this process's pty at `path` points: the pty through this process's own
/// root (`/proc/PID/root/dev/pts/N`), so that the link dangles once the emulator is gone,
/// however it ended (killed -9 too), as a USB device's node goes with the device; a host still
/// following it then finds nothing, never a pty another board was given since under the same
/// number.
fn link_target(path: &Path) -> PathBuf {
    let own_root = Path::new("/proc")
        .join(std::process::id().to_string())
        .join("root");
    match path.strip_prefix("/") {
        Ok(relative) if own_root.exists() => own_root.join(relative),
        // No /proc: the pty itself.
        _ => path.to_path_buf(),
    }
}

fn replace_link(link: &Path, target: &Path) -> io::Result<()> {
    let target = link_target(target);
    // A new link renamed over the old one: a host never finds the link missing.
    let tmp = link.with_extension(format!("new-{}", std::process::id()));
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::os::unix::fs::symlink(&target, &tmp)?;
    std::fs::rename(&tmp, link)
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

/// A new pty pair, made close-on-exec from the start (a process another thread of this one
/// starts meanwhile, a daemon under test, must not inherit the board's side and hold it open),
/// its slave set raw once and closed (the host opens it): the master and the slave's path.
fn open_pair() -> io::Result<(OwnedFd, PathBuf)> {
    let master =
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    let name = rustix::pty::ptsname(&master, Vec::new())?;
    let path = PathBuf::from(OsString::from_vec(name.into_bytes()));
    let slave = rustix::fs::open(
        &path,
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    let mut termios = rustix::termios::tcgetattr(&slave)?;
    termios.make_raw();
    rustix::termios::tcsetattr(&slave, OptionalActions::Now, &termios)?;
    drop(slave);
    rustix::io::ioctl_fionbio(&master, true)?;
    Ok((master, path))
}

impl Pty {
    /// A new pty pair; the slave's path, and `link` pointing at it.
    pub(crate) fn open(link: Option<&Path>) -> Result<Pty, EmulatorError> {
        let (master, path) = open_pair()?;
        if let Some(l) = link {
            replace_link(l, &path)?;
        }
        Ok(Pty {
            master: Some(Master::Idle(master)),
            path,
            link: link.map(Path::to_path_buf),
            held: false,
        })
    }

    fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.master.as_ref().map(Master::fd)
    }

    /// Whether a host has the port open now: the master hangs up while no one has the slave.
    fn host_present(&self) -> bool {
        let Some(fd) = self.fd() else {
            return false;
        };
        let mut fds = [PollFd::new(&fd, PollFlags::empty())];
        match poll(&mut fds, Some(&Timespec::default())) {
            Ok(_) => !fds[0].revents().contains(PollFlags::HUP),
            // A pty that cannot be polled is taken as held: its reads and writes will tell.
            Err(_) => true,
        }
    }

    /// The master, registered with the runtime for the host there now.
    fn watched(&mut self) -> io::Result<&AsyncFd<OwnedFd>> {
        self.master = match self.master.take() {
            Some(Master::Idle(fd)) => {
                // Deprecated for I/O safety: an fd registered must stay open while it is. This
                // one is owned by the AsyncFd until `unwatch` takes it back, so it always does;
                // the replacement (`register`) is an unsafe fn, which this crate forbids.
                #[expect(deprecated)]
                let registered = AsyncFd::try_new(fd);
                match registered {
                    Ok(a) => Some(Master::Watched(a)),
                    Err(e) => {
                        let (fd, err) = e.into_parts();
                        self.master = Some(Master::Idle(fd));
                        return Err(err);
                    }
                }
            }
            other => other,
        };
        match &self.master {
            Some(Master::Watched(a)) => Ok(a),
            _ => Err(io::Error::other("the pseudo-terminal is gone")),
        }
    }

    /// The host went: the master is no longer watched (see [`Master`]).
    fn unwatch(&mut self) {
        self.master = match self.master.take() {
            Some(Master::Watched(a)) => Some(Master::Idle(a.into_inner())),
            other => other,
        };
    }

    /// Drops what was written to the host and not read yet.
    fn flush_output(&self) {
        if let Some(fd) = self.fd()
            && let Err(e) = rustix::termios::tcflush(fd, QueueSelector::OFlush)
        {
            tracing::debug!(cause = %e, "could not flush the pty");
        }
    }

    /// The last host closed the port: it is released for the next one.
    fn release(&mut self) -> Result<Option<PathBuf>, EmulatorError> {
        // What was written since the host went would be read by the next one as new.
        self.flush_output();
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
                self.unwatch();
                if std::mem::replace(&mut self.held, false)
                    && let Some(path) = self.release()?
                {
                    return Ok(Heard::Moved(path));
                }
                sleep(HOST_POLL).await;
                continue;
            }
            self.held = true;
            let master = self.watched()?;
            let mut ready = master.readable().await?;
            let hung_up = ready.ready().is_read_closed();
            match ready
                .try_io(|fd| rustix::io::read(fd.get_ref(), &mut *buf).map_err(io::Error::from))
            {
                Ok(Ok(n)) if n > 0 => return Ok(Heard::Bytes(n)),
                // EOF or EIO: the host went away (looked at again above).
                Ok(Ok(_)) => self.unwatch(),
                Ok(Err(e)) => {
                    tracing::debug!(cause = %e, "pty read failed; host gone?");
                    self.unwatch();
                    sleep(HOST_POLL).await;
                }
                // Nothing to read. A hang-up seen by this registration would make it ready at
                // every poll: a host that went and came back is watched afresh.
                Err(_would_block) => {
                    if hung_up {
                        self.unwatch();
                    }
                }
            }
        }
    }

    /// Writes `bytes` to the host, if one has the port open and reads it.
    pub(crate) async fn send(&mut self, bytes: &[u8]) -> Sent {
        if !self.host_present() {
            return Sent::Dropped;
        }
        let written = match self.watched() {
            Ok(master) => timeout(WRITE_WAIT, write_all(master, bytes)).await,
            Err(e) => Ok(Err(e)),
        };
        match written {
            Ok(Ok(())) => Sent::Written,
            Ok(Err(e)) => {
                tracing::debug!(cause = %e, "write to the host failed; dropped");
                self.unwatch();
                Sent::Dropped
            }
            Err(_) => {
                // Nobody reads the slave side: drop what piled up there, as a board talking to a
                // host that does not listen loses its bytes (the master's output is the slave's
                // input).
                tracing::debug!("the host does not read; frame dropped");
                self.flush_output();
                Sent::Dropped
            }
        }
    }
}

/// Writes all of `bytes` to the master as it becomes writable.
async fn write_all(master: &AsyncFd<OwnedFd>, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        let mut ready = master.writable().await?;
        match ready.try_io(|fd| rustix::io::write(fd.get_ref(), bytes).map_err(io::Error::from)) {
            Ok(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(Ok(n)) => bytes = &bytes[n..],
            Ok(Err(e)) => return Err(e),
            Err(_would_block) => {}
        }
    }
    Ok(())
}
