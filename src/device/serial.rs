//! The serial transport of one board: open, start up, read, watch, reconnect.
//!
//! Flow: open the port with its kind's line settings (DGT: 9600 8N1) without flow control and
//! exclusively, dropping what the kernel held from before; send the kind's start-up commands
//! (DGT: identify, full dump, update mode, clock); then every read is timestamped and handed, raw, to the board's pipeline before
//! anything is decoded. A watchdog asks a silent board for its serial number and gives up on it
//! when it still says nothing; the session then ends and the caller reconnects with backoff. A
//! reconnect always begins with a fresh full dump.

use std::{
    path::Path,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_serial::{
    ClearBuffer, DataBits, FlowControl, Parity, SerialPort, SerialPortBuilderExt, SerialStream,
    StopBits,
};

use super::holders;
use crate::{
    Millis,
    kind::{self, SerialSettings},
};

/// Why a port could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error("cannot open {path}: {source}")]
    Open {
        path: String,
        source: tokio_serial::Error,
    },
    /// The port is there but another process has it open (ModemManager, brltty, a second
    /// boardscribe...): named, so that whoever reads the log or the console can free it.
    #[error("cannot open {path}: {source}; {held}")]
    Busy {
        path: String,
        source: tokio_serial::Error,
        /// `held by pid 812 (/usr/sbin/ModemManager)`.
        held: String,
    },
    /// A hidraw node another process has open (the vendor's app, a browser's WebHID page, a
    /// second boardscribe): the kernel does not make a HID node exclusive as it does a serial
    /// port, so it is not opened beside them (both would read, and either could write);
    /// named, as a busy serial port is.
    #[error("cannot open {path}: another process has it open; {held}")]
    NodeHeld { path: String, held: String },
    /// A hidraw node (or the socket standing in for one) that did not open.
    #[error("cannot open {path}: {source}")]
    Node {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// DGT's start-up commands and probe, which `record` sends too.
pub use crate::protocol::dgt::{PROBE, STARTUP};

/// Watchdog timings.
#[derive(Clone, Copy, Debug)]
pub struct Watchdog {
    /// Silence after which the board is probed.
    pub probe_after: Duration,
    /// Silence after which the board is considered gone.
    pub give_up_after: Duration,
}

impl Default for Watchdog {
    fn default() -> Self {
        Watchdog {
            probe_after: Duration::from_secs(3),
            give_up_after: Duration::from_secs(8),
        }
    }
}

/// Wall-clock milliseconds since the Unix epoch (the stream clock of live boards).
pub fn now_ms() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as Millis)
}

impl DeviceError {
    /// Whether the port is held by another process.
    pub fn is_busy(&self) -> bool {
        matches!(
            self,
            DeviceError::Busy { .. } | DeviceError::NodeHeld { .. }
        )
    }
}

/// A port that did not open: busy, with whoever holds it, if anyone else is seen holding it.
fn open_failed(path: &Path, shown: String, source: tokio_serial::Error) -> DeviceError {
    match holders::describe(&holders::holders_of(path)) {
        Some(held) => DeviceError::Busy {
            path: shown,
            source,
            held,
        },
        None => DeviceError::Open {
            path: shown,
            source,
        },
    }
}

/// Opens a board's port with its kind's line settings (DGT: 9600 8N1), no flow control,
/// exclusive. A port another process holds is refused with that process named
/// ([`DeviceError::Busy`]).
pub fn open(path: &Path, line: SerialSettings) -> Result<SerialStream, DeviceError> {
    let shown = path.display().to_string();
    let mut port = tokio_serial::new(shown.clone(), line.baud)
        .data_bits(match line.data_bits {
            kind::DataBits::Seven => DataBits::Seven,
            kind::DataBits::Eight => DataBits::Eight,
        })
        .parity(match line.parity {
            kind::Parity::None => Parity::None,
            kind::Parity::Odd => Parity::Odd,
            kind::Parity::Even => Parity::Even,
        })
        .stop_bits(match line.stop_bits {
            kind::StopBits::One => StopBits::One,
            kind::StopBits::Two => StopBits::Two,
        })
        .flow_control(FlowControl::None)
        .open_native_async()
        .map_err(|source| open_failed(path, shown.clone(), source))?;
    port.set_exclusive(true)
        .map_err(|source| open_failed(path, shown.clone(), source))?;
    // Bytes the kernel holds from before the open were sent at a moment nobody knows (to a
    // host that went away): read as new, a clock reading from then would count as a press.
    port.clear(ClearBuffer::Input)
        .map_err(|source| DeviceError::Open {
            path: shown,
            source,
        })?;
    Ok(port)
}

/// Writes `bytes` to the board.
pub async fn send(port: &mut SerialStream, path: &Path, bytes: &[u8]) -> Result<(), DeviceError> {
    port.write_all(bytes)
        .await
        .map_err(|source| DeviceError::Io {
            path: path.display().to_string(),
            source,
        })?;
    port.flush().await.map_err(|source| DeviceError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Reads what the board sent; `Ok(0)` means the port closed.
pub async fn read(
    port: &mut SerialStream,
    path: &Path,
    buf: &mut [u8],
) -> Result<usize, DeviceError> {
    port.read(buf).await.map_err(|source| DeviceError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Exponential backoff with jitter for reconnects: 0.5 s doubling up to 10 s.
#[derive(Clone, Debug)]
pub struct Backoff {
    attempt: u32,
    jitter_state: u64,
}

impl Backoff {
    pub fn new(seed: u64) -> Backoff {
        Backoff {
            attempt: 0,
            jitter_state: seed | 1,
        }
    }

    /// The delay before the next attempt.
    pub fn next_delay(&mut self) -> Duration {
        let base = 500u64.saturating_mul(1 << self.attempt.min(5)).min(10_000);
        self.attempt += 1;
        // xorshift: up to a quarter of the delay, so boards on one hub do not retry in step.
        self.jitter_state ^= self.jitter_state << 13;
        self.jitter_state ^= self.jitter_state >> 7;
        self.jitter_state ^= self.jitter_state << 17;
        Duration::from_millis(base + self.jitter_state % (base / 4 + 1))
    }

    pub fn reset(&mut self) {
        self.attempt = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_a_cap_and_resets() {
        let mut b = Backoff::new(7);
        let first = b.next_delay();
        assert!(first >= Duration::from_millis(500) && first <= Duration::from_millis(625));
        let delays: Vec<Duration> = (0..10).map(|_| b.next_delay()).collect();
        assert!(delays.iter().all(|d| *d <= Duration::from_millis(12_500)));
        assert!(delays.last().unwrap() >= &Duration::from_secs(10));
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(625));
    }
}
