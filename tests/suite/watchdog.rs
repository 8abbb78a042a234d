//! The watchdog: a board that stays connected but falls silent is probed, then given up and
//! reopened with the start-up commands (a fresh full dump). The peer here is the test itself on a
//! real pseudo-terminal, so it can keep quiet on purpose.

use std::{
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use boardscribe::{
    device::serial::STARTUP,
    protocol::dgt::{BoardDump, Frame, cmd},
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_serial::{SerialPort, SerialStream};

fn start_dump() -> Vec<u8> {
    let mut d = [0u8; 64];
    d[..8].copy_from_slice(&[8, 9, 10, 12, 11, 10, 9, 8]);
    d[8..16].fill(7);
    d[48..56].fill(1);
    d[56..].copy_from_slice(&[2, 3, 4, 6, 5, 4, 3, 2]);
    Frame::BoardDump(BoardDump(d)).to_bytes()
}

/// Reads from the board side until `want` has been seen in what the host sent.
async fn expect_bytes(master: &mut SerialStream, want: &[u8], within: Duration) -> Duration {
    let start = Instant::now();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let left = within
            .checked_sub(start.elapsed())
            .unwrap_or_else(|| panic!("host never sent {want:02x?}; saw {seen:02x?}"));
        match tokio::time::timeout(left, master.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                seen.extend_from_slice(&buf[..n]);
                if seen.windows(want.len()).any(|w| w == want) {
                    return start.elapsed();
                }
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            Err(_) => panic!("host never sent {want:02x?}; saw {seen:02x?}"),
        }
    }
}

#[test]
fn a_silent_board_is_probed_then_reopened_with_a_fresh_dump() {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (mut master, slave) = SerialStream::pair().unwrap();
        let path = slave.name().unwrap();
        let log = std::fs::File::create(dir.path().join("run.log")).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_boardscribe"))
            .args(["run", "--port", &path, "--db"])
            .arg(dir.path().join("w.db"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        // The start-up commands, answered with the start position.
        expect_bytes(&mut master, &STARTUP, Duration::from_secs(10)).await;
        master.write_all(&start_dump()).await.unwrap();
        // Then silence: a probe after about three seconds ...
        let probe = expect_bytes(
            &mut master,
            &[cmd::RETURN_SERIALNR],
            Duration::from_secs(10),
        )
        .await;
        assert!(probe >= Duration::from_secs(2), "probed after {probe:?}");
        // ... and, still silent, the board is given up and opened again from scratch.
        expect_bytes(&mut master, &STARTUP, Duration::from_secs(20)).await;
        master.write_all(&start_dump()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        let status = child.wait().unwrap();
        assert!(status.success());
        drop(slave);
    });
    let log = std::fs::read_to_string(dir.path().join("run.log")).unwrap();
    assert!(log.contains("silent for"), "{log}");
    assert!(log.matches("board connected").count() >= 2, "{log}");
}
