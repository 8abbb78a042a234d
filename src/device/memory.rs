//! Board memory at the edge: a DGT board's EEPROM log (DGT_MSG_EE_MOVES) read from a file, a
//! capture or a board on a serial port; what it holds is read by the pure [`crate::memory`].
//!
//! Flow: [`read_dump`] (a file: a capture's bytes from the board, or the raw reply) or
//! [`fetch_from_port`] (SEND_RESET, SEND_EE_MOVES, then the reply until it is whole or the wait
//! is over) give the bytes from the board; [`crate::memory::log_from_bytes`] finds the log in them.

use std::{path::Path, time::Duration};

use crate::{
    capture::{CaptureError, parse_capture},
    device::{Direction, serial},
    memory::{MemoryError, log_from_bytes},
    protocol::dgt::cmd,
};

/// Why a board's memory could not be had.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error("capture: {0}")]
    Capture(#[from] CaptureError),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Device(#[from] serial::DeviceError),
    #[error("no complete EE_MOVES reply from {port} within {secs} s ({got} bytes received)")]
    Timeout { port: String, secs: u64, got: usize },
}

/// What `--from FILE` holds: a capture v1 file (its bytes from the board), or the raw reply.
/// Returns the bytes from the board.
pub fn read_dump(path: &Path) -> Result<Vec<u8>, DumpError> {
    let io = |source| DumpError::Io {
        path: path.display().to_string(),
        source,
    };
    let bytes = std::fs::read(path).map_err(io)?;
    if bytes.starts_with(b"# boardscribe capture") {
        let text = String::from_utf8_lossy(&bytes);
        let capture = parse_capture(&text)?;
        return Ok(capture
            .chunks
            .iter()
            .filter(|c| c.dir == Direction::FromBoard)
            .flat_map(|c| c.bytes.iter().copied())
            .collect());
    }
    Ok(bytes)
}

/// Asks the board on `port` for its memory (DGT_SEND_EE_MOVES, 0x49) and reads the reply; it
/// takes about 8 s at 9600 baud for a full log. Returns the bytes read.
pub async fn fetch_from_port(port: &Path, wait: Duration) -> Result<Vec<u8>, DumpError> {
    let mut stream = serial::open(port, crate::kind::SerialSettings::DGT)?;
    // A board in update mode would mix field updates into the reply: reset it first.
    serial::send(&mut stream, port, &[cmd::SEND_RESET, cmd::SEND_EE_MOVES]).await?;
    let deadline = tokio::time::Instant::now() + wait;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if log_from_bytes(&got, "").is_ok() {
            return Ok(got);
        }
        let n = tokio::select! {
            read = serial::read(&mut stream, port, &mut buf) => read?,
            _ = tokio::time::sleep_until(deadline) => {
                let shown = port.display().to_string();
                return Err(match log_from_bytes(&got, &shown) {
                    Err(e @ MemoryError::BadFrame { .. }) => e.into(),
                    _ => DumpError::Timeout { port: shown, secs: wait.as_secs(), got: got.len() },
                });
            }
        };
        if n == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        got.extend_from_slice(&buf[..n]);
    }
}
