//! `devices --probe`: asking a port that nothing names which kind of board is behind it. Some
//! boards carry no USB ID of their own (a Millennium ChessLink board sits behind a generic USB
//! serial chip), so the drivers find them by asking.
//!
//! Flow: for each kind reached over a serial line, in [`BoardKind::ALL`]'s order, open the port
//! with that kind's line (what the kernel held is dropped), send the kind's question
//! ([`BoardKind::identify`]), gather what comes back for [`ANSWER_WAIT`], and let the kind say
//! whether that is one of its boards talking ([`BoardKind::identified`], pure). The first kind
//! that hears its own report is the port's. A port another process holds is not touched.

use std::{path::Path, time::Duration};

use super::serial::{self, DeviceError};
use crate::{
    boards::Identified,
    kind::{BoardKind, Link},
};

/// How long a board is given to answer each question.
pub const ANSWER_WAIT: Duration = Duration::from_millis(700);

/// A board heard on a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probed {
    pub kind: BoardKind,
    pub found: Identified,
}

impl std::fmt::Display for Probed {
    /// `Millennium ChessLink (chesslink): firmware version 01.02`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.kind.vendor(), self.kind)?;
        if !self.found.identity.is_empty() {
            write!(f, ": {}", self.found.identity.join(", "))?;
        }
        Ok(())
    }
}

/// Asks the port at `path` each serial kind's question in turn; the kind whose board answered,
/// or `None` when none did. An error when the port cannot be opened (busy, gone, not a tty).
pub async fn probe_port(path: &Path, wait: Duration) -> Result<Option<Probed>, DeviceError> {
    for kind in BoardKind::ALL {
        // A HID board is known by its USB IDs (`devices` lists it): nothing to ask.
        let Link::Serial(line) = kind.link() else {
            continue;
        };
        let mut port = serial::open(path, line)?;
        serial::send(&mut port, path, &kind.identify()).await?;
        let answer = gather(&mut port, path, wait).await?;
        drop(port);
        if let Some(found) = kind.identified(&answer) {
            return Ok(Some(Probed { kind, found }));
        }
    }
    Ok(None)
}

/// Everything the port sends within `wait` (less if it closes).
async fn gather(
    port: &mut tokio_serial::SerialStream,
    path: &Path,
    wait: Duration,
) -> Result<Vec<u8>, DeviceError> {
    let deadline = tokio::time::Instant::now() + wait;
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(deadline, serial::read(port, path, &mut buf)).await {
            // Time is up, or the port closed.
            Err(_) | Ok(Ok(0)) => return Ok(answer),
            Ok(Ok(n)) => answer.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => return Err(e),
        }
    }
}

/// The line for `udev/70-boardscribe.rules` (its section for boards found by probing) that
/// claims one board by its USB serial number: a generic USB ID cannot be claimed for a kind,
/// one board's serial number can.
pub fn udev_line(kind: BoardKind, serial: &str) -> String {
    format!(
        "ATTRS{{serial}}==\"{serial}\", ENV{{BOARDSCRIBE_KIND}}=\"{}\", ENV{{BOARDSCRIBE_SERIAL}}=\"$attr{{serial}}\"",
        kind.name()
    )
}
