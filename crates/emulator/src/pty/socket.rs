//! The board's side of a Unix socket standing in for a hidraw node (a hidraw node cannot be made
//! without the kernel): the host connects to the socket's path as it would open the node.
//!
//! Flow: [`Socket::open`] binds a stream socket at the path (replacing a stale one); the path is
//! the board's device node. [`Socket::read`] waits for a host to connect and reads its commands;
//! a host that goes (closes, or dies) leaves the board waiting for the next one, as a device node
//! stays there for the next process that opens it. [`Socket::send`] writes to the host and drops
//! what a board would lose: reports sent while no host is connected, and reports a host that
//! does not read leaves piling up. Dropping the socket removes its path (the board unplugged).

use std::{
    io,
    os::unix::fs::FileTypeExt,
    path::{Path, PathBuf},
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{UnixListener, UnixStream},
    time::timeout,
};

use super::{Heard, Sent};
use crate::EmulatorError;

/// How long a write may wait for a host that does not read.
const WRITE_WAIT: Duration = Duration::from_millis(100);

/// The board's side of the socket.
pub(crate) struct Socket {
    listener: UnixListener,
    host: Option<UnixStream>,
    pub(crate) path: PathBuf,
}

impl Socket {
    /// Binds the socket at `path`; a socket left there by a board that is gone is replaced.
    pub(crate) fn open(path: &Path) -> Result<Socket, EmulatorError> {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path)?;
        Ok(Socket {
            listener,
            host: None,
            path: path.to_owned(),
        })
    }

    /// The next bytes from a host, waiting for one to connect.
    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> Result<Heard, EmulatorError> {
        loop {
            let Some(host) = self.host.as_mut() else {
                let (stream, _) = self.listener.accept().await?;
                tracing::debug!(path = %self.path.display(), "a host connected");
                self.host = Some(stream);
                continue;
            };
            match host.read(buf).await {
                Ok(0) => self.host = None,
                Ok(n) => return Ok(Heard::Bytes(n)),
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => self.host = None,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Writes `bytes` to the host, if one is connected and reading.
    pub(crate) async fn send(&mut self, bytes: &[u8]) -> Sent {
        let Some(host) = self.host.as_mut() else {
            return Sent::Dropped;
        };
        match timeout(WRITE_WAIT, host.write_all(bytes)).await {
            Ok(Ok(())) => Sent::Written,
            // The host went: the next read waits for another.
            Ok(Err(_)) => {
                self.host = None;
                Sent::Dropped
            }
            // A host that does not read: what it did not take is lost, as on a board.
            Err(_) => Sent::Dropped,
        }
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // The node goes with the board; already gone is fine.
        let _gone_already = std::fs::remove_file(&self.path);
    }
}
