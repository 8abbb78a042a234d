//! systemd readiness, status and watchdog notifications (`Type=notify`, `WatchdogSec=`).
//!
//! Flow: [`Notifier::from_env`] reads `NOTIFY_SOCKET` and the watchdog period (through the
//! `sd-notify` crate, which also formats every message); `run` calls [`Notifier::ready`] once the
//! boards are open, [`Notifier::status`] when the counts change, keeps [`Notifier::watchdog_loop`]
//! running (a `WATCHDOG=1` at half the period), and [`Notifier::stopping`] on SIGTERM. Without
//! `NOTIFY_SOCKET` (not under systemd) every call does nothing. Sends never block (they are made
//! from async tasks): when systemd's queue is full, the notification fails with an error the
//! caller logs, and the next one is tried afresh.

use std::{
    ffi::{OsStr, OsString},
    fmt::Write as _,
    future::Future,
    io,
    os::unix::{ffi::OsStrExt, net::UnixDatagram},
    time::Duration,
};

use sd_notify::NotifyState;

/// Why a notification was not delivered.
#[derive(Debug, thiserror::Error)]
#[error("notifying systemd at {socket:?}: {source}")]
pub struct NotifyError {
    socket: OsString,
    source: io::Error,
}

/// Where systemd listens, and how often it wants to hear from us.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notifier {
    /// `NOTIFY_SOCKET`: a path, or `@name` for an abstract socket; `None`: not under systemd.
    socket: Option<OsString>,
    /// `WatchdogSec` of the unit, when the watchdog is on for this process.
    watchdog: Option<Duration>,
}

impl Notifier {
    /// From the environment systemd gives a `Type=notify` service.
    pub fn from_env() -> Notifier {
        Notifier {
            socket: std::env::var_os("NOTIFY_SOCKET").filter(|s| !s.is_empty()),
            watchdog: sd_notify::watchdog_enabled(),
        }
    }

    /// An explicit socket and watchdog period (tests, or a supervisor of our own).
    pub fn new(socket: Option<OsString>, watchdog: Option<Duration>) -> Notifier {
        Notifier { socket, watchdog }
    }

    /// Whether there is anyone to notify.
    pub fn is_enabled(&self) -> bool {
        self.socket.is_some()
    }

    /// How often to send `WATCHDOG=1`: half the unit's `WatchdogSec`, as sd_watchdog_enabled(3)
    /// advises; `None` when the watchdog is off or there is no socket.
    pub fn watchdog_interval(&self) -> Option<Duration> {
        self.socket.as_ref()?;
        self.watchdog.map(|w| w / 2).filter(|w| !w.is_zero())
    }

    /// `READY=1` with a status line: start-up is done, the boards are being read.
    pub fn ready(&self, status: &str) -> Result<(), NotifyError> {
        self.send(&[NotifyState::Ready, NotifyState::Status(status)])
    }

    /// `STATUS=…`, shown by `systemctl status`.
    pub fn status(&self, status: &str) -> Result<(), NotifyError> {
        self.send(&[NotifyState::Status(status)])
    }

    /// `WATCHDOG=1`: still alive.
    pub fn watchdog(&self) -> Result<(), NotifyError> {
        self.send(&[NotifyState::Watchdog])
    }

    /// `STOPPING=1` with a status line: shutting down on request.
    pub fn stopping(&self, status: &str) -> Result<(), NotifyError> {
        self.send(&[NotifyState::Stopping, NotifyState::Status(status)])
    }

    /// Sends `WATCHDOG=1` every [`Notifier::watchdog_interval`] until `shutdown` completes;
    /// returns at once when the watchdog is off. A failed send is logged and retried next time.
    pub async fn watchdog_loop(&self, shutdown: impl Future<Output = ()>) {
        let Some(every) = self.watchdog_interval() else {
            return;
        };
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => return,
                _ = ticks.tick() => {
                    if let Err(e) = self.watchdog() {
                        tracing::warn!(cause = %e, "watchdog notification not sent");
                    }
                }
            }
        }
    }

    /// One datagram with every state, one per line; nothing without a socket.
    fn send(&self, states: &[NotifyState<'_>]) -> Result<(), NotifyError> {
        let Some(socket) = &self.socket else {
            return Ok(());
        };
        let mut message = String::new();
        for s in states {
            // Writing to a String cannot fail.
            let _ = writeln!(message, "{s}");
        }
        send_datagram(socket, message.as_bytes()).map_err(|source| NotifyError {
            socket: socket.clone(),
            source,
        })
    }
}

/// Sends `bytes` to a unix datagram socket (a path, or `@name` for an abstract one) without
/// blocking: a full queue is an error (`WouldBlock`).
fn send_datagram(socket: &OsStr, bytes: &[u8]) -> io::Result<()> {
    let sock = UnixDatagram::unbound()?;
    sock.set_nonblocking(true)?;
    let raw = socket.as_bytes();
    let sent = match raw.strip_prefix(b"@") {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            sock.send_to_addr(bytes, &addr)?
        }
        None => sock.send_to(bytes, socket)?,
    };
    if sent == bytes.len() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::WriteZero,
            "notification cut short",
        ))
    }
}

/// The status line: `"12 boards, 10 games live"`.
pub fn status_line(boards: usize, games_live: usize) -> String {
    let plural = |n: usize, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    };
    format!(
        "{}, {} live",
        plural(boards, "board", "boards"),
        plural(games_live, "game", "games")
    )
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixDatagram;

    use super::*;

    /// A socket standing in for systemd's, bound in a temporary directory.
    fn systemd_socket() -> (tempfile::TempDir, UnixDatagram, OsString) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let sock = UnixDatagram::bind(&path).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        (dir, sock, path.into_os_string())
    }

    fn receive(sock: &UnixDatagram) -> String {
        let mut buf = [0u8; 4096];
        let n = sock.recv(&mut buf).unwrap();
        String::from_utf8(buf[..n].to_vec()).unwrap()
    }

    #[test]
    fn each_message_reaches_the_socket_as_systemd_reads_it() {
        let (_dir, sock, path) = systemd_socket();
        let n = Notifier::new(Some(path), None);
        assert!(n.is_enabled());
        n.ready(&status_line(12, 10)).unwrap();
        assert_eq!(receive(&sock), "READY=1\nSTATUS=12 boards, 10 games live\n");
        n.status(&status_line(1, 1)).unwrap();
        assert_eq!(receive(&sock), "STATUS=1 board, 1 game live\n");
        n.watchdog().unwrap();
        assert_eq!(receive(&sock), "WATCHDOG=1\n");
        n.stopping("stopping: flushing the store").unwrap();
        assert_eq!(
            receive(&sock),
            "STOPPING=1\nSTATUS=stopping: flushing the store\n"
        );
    }

    #[test]
    fn abstract_sockets_are_reached_too() {
        use std::os::linux::net::SocketAddrExt;
        let name = format!("boardscribe-notify-test-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let sock = UnixDatagram::bind_addr(&addr).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let n = Notifier::new(Some(format!("@{name}").into()), None);
        n.watchdog().unwrap();
        assert_eq!(receive(&sock), "WATCHDOG=1\n");
    }

    #[test]
    fn without_a_socket_nothing_is_sent_and_nothing_fails() {
        let n = Notifier::new(None, Some(Duration::from_secs(30)));
        assert!(!n.is_enabled());
        n.ready("x").unwrap();
        n.watchdog().unwrap();
        assert_eq!(n.watchdog_interval(), None);
    }

    #[test]
    fn a_missing_socket_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let e = Notifier::new(Some(gone.clone().into_os_string()), None)
            .ready("x")
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with(&format!("notifying systemd at {gone:?}: ")),
            "{e}"
        );
    }

    #[test]
    fn a_full_queue_is_an_error_not_a_wait() {
        let (_dir, _sock, path) = systemd_socket();
        // Fill the receiver's queue the way a stalled systemd would leave it.
        let filler = UnixDatagram::unbound().unwrap();
        filler.set_nonblocking(true).unwrap();
        let mut sent = 0;
        while filler.send_to(b"WATCHDOG=1\n", &path).is_ok() {
            sent += 1;
            assert!(sent < 1_000_000, "the queue never filled");
        }
        let e = Notifier::new(Some(path), None).watchdog().unwrap_err();
        assert_eq!(e.source.kind(), io::ErrorKind::WouldBlock, "{e}");
    }

    #[tokio::test]
    async fn the_watchdog_pings_at_half_the_period_until_shutdown() {
        let (_dir, sock, path) = systemd_socket();
        let n = Notifier::new(Some(path), Some(Duration::from_millis(200)));
        assert_eq!(n.watchdog_interval(), Some(Duration::from_millis(100)));
        let started = std::time::Instant::now();
        n.watchdog_loop(tokio::time::sleep(Duration::from_millis(350)))
            .await;
        let elapsed = started.elapsed();
        sock.set_nonblocking(true).unwrap();
        let mut pings = 0;
        let mut buf = [0u8; 64];
        while let Ok(len) = sock.recv(&mut buf) {
            assert_eq!(&buf[..len], b"WATCHDOG=1\n");
            pings += 1;
        }
        // At 0, 100, 200 and 300 ms; a loaded machine may delay the last.
        assert!((3..=4).contains(&pings), "{pings} pings in {elapsed:?}");
        // No watchdog: returns at once.
        let off = Notifier::new(Some("/nonexistent".into()), None);
        off.watchdog_loop(std::future::pending()).await;
    }
}
