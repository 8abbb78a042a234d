//! The host's side of an emulated board's serial port, opened as the daemon opens a board's:
//! exclusive (TIOCEXCL and an exclusive `flock`, as `serialport` does).
//!
//! An exclusive `flock` belongs to the open file, not to the descriptor: it goes when the last
//! copy of the descriptor closes. While another test of this binary starts a process, the child
//! holds a copy of every descriptor until it execs (close-on-exec closes them only then), so a
//! port this process has just closed can stay locked for a moment, and an open at that moment
//! is refused ("Unable to acquire exclusive lock"). A host (the daemon too) opens again; so
//! does [`open`], for a short while, then fails with the error it got. Only that refusal is
//! tried again: a port whose TIOCEXCL a host left set (EBUSY at the open) is the emulator's to
//! release, and the tests that close and open a port see at once whether it did.

use std::{path::Path, time::Duration};

use tokio_serial::{Error, ErrorKind, SerialPortBuilderExt, SerialStream};

/// How long a refused open is tried again.
const BUSY_FOR: Duration = Duration::from_secs(2);

/// Opens the port at `path` at 9600 baud, exclusive, trying again while its `flock` is held
/// (see the module doc).
pub async fn open(path: &Path) -> SerialStream {
    let deadline = tokio::time::Instant::now() + BUSY_FOR;
    loop {
        match tokio_serial::new(path.to_string_lossy(), 9600).open_native_async() {
            Ok(port) => return port,
            Err(e) if locked(&e) && tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => panic!("opening {}: {e}", path.display()),
        }
    }
}

/// Whether `e` is the `flock` refusal (`serialport` names it only by its description).
fn locked(e: &Error) -> bool {
    e.kind() == ErrorKind::NoDevice && e.description.contains("exclusive lock")
}
