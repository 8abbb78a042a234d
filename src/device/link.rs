//! A board's open link, whatever reaches it: a serial port, a hidraw node, or a Unix socket
//! standing in for a hidraw node (an emulated HID board: a hidraw node cannot be made without
//! the kernel).
//!
//! Flow: [`open`] takes the path to open and the kind's [`Link`]: a serial line is opened with
//! its settings ([`serial::open`]); a HID link opens the path as a hidraw node (read and write,
//! non-blocking, each read one input report; refused, naming them, while another process has
//! it open: the kernel does not make it exclusive), or connects to it when it is a socket (a stream:
//! the reports must frame themselves, as the kind's wire does). [`Port::read`] reads what came;
//! [`Port::send`] writes one output report (or a serial line's bytes), held until the link's
//! gap since the last write has passed.

use std::{
    io,
    os::unix::fs::{FileTypeExt, OpenOptionsExt},
    path::{Path, PathBuf},
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{UnixStream, unix::pipe},
    time::Instant,
};
use tokio_serial::SerialStream;

use super::{
    holders,
    serial::{self, DeviceError},
};
use crate::kind::Link;

/// What carries the bytes.
enum Carrier {
    Serial(SerialStream),
    /// A hidraw node, opened non-blocking: each read one input report, each write one output
    /// report. A character device the kernel polls, watched as tokio watches a pipe's two
    /// ends (its safe wrapper for a polled descriptor that is not a socket).
    Hidraw {
        rx: pipe::Receiver,
        tx: pipe::Sender,
    },
    /// A socket standing in for a hidraw node: a stream of reports.
    Socket(UnixStream),
}

/// An open link to a board.
pub struct Port {
    carrier: Carrier,
    path: PathBuf,
    /// The least time between two writes (the kind's, on a HID link).
    gap: Duration,
    last_write: Option<Instant>,
}

impl std::fmt::Debug for Port {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.carrier {
            Carrier::Serial(_) => "serial",
            Carrier::Hidraw { .. } => "hidraw",
            Carrier::Socket(_) => "socket",
        };
        write!(f, "Port({what} {})", self.path.display())
    }
}

/// Whether `path` (followed through links) is a Unix socket.
pub fn is_socket(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// Opens the link to the board at `path`, reached over `link` (its kind's).
pub async fn open(path: &Path, link: Link) -> Result<Port, DeviceError> {
    let shown = || path.display().to_string();
    let (carrier, gap) = match link {
        Link::Serial(line) => (Carrier::Serial(serial::open(path, line)?), Duration::ZERO),
        Link::Hid { write_gap_ms } => {
            let gap = Duration::from_millis(write_gap_ms);
            if is_socket(path) {
                let stream =
                    UnixStream::connect(path)
                        .await
                        .map_err(|source| DeviceError::Node {
                            path: shown(),
                            source,
                        })?;
                (Carrier::Socket(stream), gap)
            } else {
                if let Some(held) = holders::describe(&holders::holders_of(path)) {
                    return Err(DeviceError::NodeHeld {
                        path: shown(),
                        held,
                    });
                }
                let node = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
                    .open(path)
                    .map_err(|source| DeviceError::Node {
                        path: shown(),
                        source,
                    })?;
                let watched = node
                    .try_clone()
                    .and_then(pipe::Sender::from_file_unchecked)
                    .and_then(|tx| Ok((pipe::Receiver::from_file_unchecked(node)?, tx)));
                let (rx, tx) = watched.map_err(|source| DeviceError::Node {
                    path: shown(),
                    source,
                })?;
                (Carrier::Hidraw { rx, tx }, gap)
            }
        }
    };
    Ok(Port {
        carrier,
        path: path.to_owned(),
        gap,
        last_write: None,
    })
}

impl Port {
    /// Whether each read is one whole input report (a hidraw node), to be cut from its padding.
    pub fn reads_reports(&self) -> bool {
        matches!(self.carrier, Carrier::Hidraw { .. })
    }

    fn io_error(&self, source: io::Error) -> DeviceError {
        DeviceError::Io {
            path: self.path.display().to_string(),
            source,
        }
    }

    /// Writes `bytes`: one output report on a HID link, no sooner than the link's gap after
    /// the last write.
    pub async fn send(&mut self, bytes: &[u8]) -> Result<(), DeviceError> {
        if let Some(last) = self.last_write {
            tokio::time::sleep_until(last + self.gap).await;
        }
        let result = match &mut self.carrier {
            Carrier::Serial(port) => return serial::send(port, &self.path, bytes).await,
            Carrier::Socket(stream) => match stream.write_all(bytes).await {
                Ok(()) => stream.flush().await,
                Err(e) => Err(e),
            },
            // One write(2), one report: a report cut in two would be two reports.
            Carrier::Hidraw { tx, .. } => match tx.write(bytes).await {
                Ok(n) if n == bytes.len() => Ok(()),
                Ok(n) => Err(io::Error::other(format!(
                    "wrote {n} of the report's {} bytes",
                    bytes.len()
                ))),
                Err(e) => Err(e),
            },
        };
        self.last_write = Some(Instant::now());
        result.map_err(|e| self.io_error(e))
    }

    /// Reads what the board sent (a hidraw node: one report); `Ok(0)` means the link closed.
    pub async fn read(&mut self, buf: &mut [u8]) -> Result<usize, DeviceError> {
        let result = match &mut self.carrier {
            Carrier::Serial(port) => return serial::read(port, &self.path, buf).await,
            Carrier::Socket(stream) => stream.read(buf).await,
            Carrier::Hidraw { rx, .. } => rx.read(buf).await,
        };
        result.map_err(|e| self.io_error(e))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::{io::AsyncReadExt, net::UnixListener};

    use super::*;

    /// A HID node another process holds (here a character device a child process keeps open,
    /// as the vendor's app would a hidraw node) is not opened beside it: the error names the
    /// process and counts as busy, so the arbiter is told who holds the board.
    #[tokio::test]
    async fn a_hid_node_another_process_holds_is_refused_naming_it() {
        let node = std::path::Path::new("/dev/zero");
        let held = std::fs::File::open(node).unwrap();
        let mut holder = std::process::Command::new("sleep")
            .arg("30")
            .stdin(held)
            .spawn()
            .unwrap();
        // `spawn` returns once the child has begun its exec, which is a moment before the
        // kernel has set its command line (its name is there already): wait for it, as the
        // vendor's app would long be running.
        let cmdline = format!("/proc/{}/cmdline", holder.id());
        for _ in 0..200 {
            if std::fs::read(&cmdline).is_ok_and(|l| !l.is_empty()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let refused = open(node, Link::Hid { write_gap_ms: 200 }).await;
        let _ = holder.kill();
        let _ = holder.wait();
        let Err(e) = refused else {
            panic!("a held node was opened");
        };
        assert!(e.is_busy(), "{e}");
        let text = e.to_string();
        assert!(
            text.contains(&format!("pid {} (sleep 30)", holder.id())),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_hid_link_on_a_socket_connects_and_spaces_its_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board");
        let listener = UnixListener::bind(&path).unwrap();
        assert!(is_socket(&path));
        let mut port = open(&path, Link::Hid { write_gap_ms: 150 }).await.unwrap();
        assert!(!port.reads_reports());
        let (mut board, _) = listener.accept().await.unwrap();
        let writes = tokio::spawn(async move {
            for report in [[1u8, 1, 0], [2, 1, 0], [3, 1, 0]] {
                port.send(&report).await.unwrap();
            }
            port
        });
        let mut arrivals = Vec::new();
        let mut buf = [0u8; 3];
        for _ in 0..3 {
            board.read_exact(&mut buf).await.unwrap();
            arrivals.push((buf[0], Instant::now()));
        }
        let mut port = writes.await.unwrap();
        assert_eq!(arrivals.iter().map(|a| a.0).collect::<Vec<_>>(), [1, 2, 3]);
        for pair in arrivals.windows(2) {
            let apart = pair[1].1 - pair[0].1;
            assert!(apart >= Duration::from_millis(140), "{apart:?}");
        }
        // What the board sends is read back; a board gone is a closed link.
        board.write_all(&[0x23, 1, 0]).await.unwrap();
        let mut got = [0u8; 16];
        assert_eq!(port.read(&mut got).await.unwrap(), 3);
        drop(board);
        assert_eq!(port.read(&mut got).await.unwrap(), 0);
    }

    /// A FIFO stands in for a hidraw node here: a character stream the kernel polls, opened
    /// read and write, non-blocking, as a node is (the report's bytes come back as one read).
    #[tokio::test]
    async fn a_hid_link_opens_a_node_that_is_not_a_socket_as_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("hidraw9");
        let e = open(&missing, Link::Hid { write_gap_ms: 0 })
            .await
            .unwrap_err();
        assert!(e.to_string().starts_with("cannot open"), "{e}");
        let node = dir.path().join("hidraw0");
        let made = std::process::Command::new("mkfifo")
            .arg(&node)
            .status()
            .unwrap();
        assert!(made.success());
        let mut port = open(&node, Link::Hid { write_gap_ms: 0 }).await.unwrap();
        assert!(port.reads_reports());
        port.send(&[0x21, 1, 0]).await.unwrap();
        let mut got = [0u8; 64];
        let n = port.read(&mut got).await.unwrap();
        assert_eq!(&got[..n], [0x21, 1, 0]);
    }
}
