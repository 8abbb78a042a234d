//! Issue 16 item 8: under systemd (`JOURNAL_STREAM` set) every line the daemon writes to
//! stderr starts with its sd-daemon priority (`<3>` error, `<4>` warning, `<6>` info), so that
//! `journalctl -p warning` finds the warnings; elsewhere lines are as they were. The daemon is
//! the real binary recording a configured board that is not plugged in, with its relay on.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

/// A `run` whose stderr lines arrive on a channel; killed when dropped.
struct Daemon {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Daemon {
    fn start(dir: &std::path::Path, journal: bool) -> Daemon {
        let config = dir.join("hall.toml");
        std::fs::write(
            &config,
            format!(
                "database = {:?}\n\n[http]\nbind = \"127.0.0.1:0\"\n\n\
                 [[board]]\nnumber = 1\nkind = \"dgt\"\nport = {:?}\n",
                dir.join("hall.db").display().to_string(),
                dir.join("not-plugged-in").display().to_string()
            ),
        )
        .unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_boardscribe"));
        cmd.args(["run", "--config", config.to_str().unwrap()])
            .env("BOARDSCRIBE_LOG", "boardscribe=info")
            .env_remove("NOTIFY_SOCKET")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if journal {
            // As systemd sets it: the device and inode of the journal's stream socket.
            cmd.env("JOURNAL_STREAM", "8:123456");
        } else {
            cmd.env_remove("JOURNAL_STREAM");
        }
        let mut child = cmd.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Daemon {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for a line containing `what`; returns it.
    fn wait_for(&mut self, what: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(line) = self.seen.iter().find(|l| l.contains(what)) {
                return line.clone();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!(
                    "no line with {what:?}; stderr so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn under_the_journal_each_line_carries_its_priority() {
    let dir = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::start(dir.path(), true);
    let info = daemon.wait_for("relay serving");
    assert!(
        info.starts_with("<6>INFO boardscribe::daemon: relay serving url=http://127.0.0.1:"),
        "{info}"
    );
    let warning = daemon.wait_for("board not available");
    assert!(warning.starts_with("<4>WARN "), "{warning}");
    assert!(
        daemon
            .seen
            .iter()
            .all(|l| l.starts_with("<6>") || l.starts_with("<4>")),
        "{:?}",
        daemon.seen
    );
    assert!(
        daemon.seen.iter().all(|l| !l.contains("\u{1b}[")),
        "no colours for the journal: {:?}",
        daemon.seen
    );
    drop(daemon);

    // An error that ends the program: every line of it at priority 3.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "database = 5\n[http]\nbind = 80\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(["run", "--config", bad.to_str().unwrap()])
        .env("JOURNAL_STREAM", "8:123456")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with("<3>boardscribe: "), "{stderr}");
    assert!(
        lines[1].starts_with("<3>") && lines[1].contains("http.bind"),
        "{stderr}"
    );
}

#[test]
fn elsewhere_lines_carry_no_priority() {
    let dir = tempfile::tempdir().unwrap();
    let mut daemon = Daemon::start(dir.path(), false);
    daemon.wait_for("relay serving");
    let warning = daemon.wait_for("board not available");
    assert!(warning.contains(" WARN "), "{warning}");
    assert!(
        daemon.seen.iter().all(|l| !l.starts_with('<')),
        "{:?}",
        daemon.seen
    );
}
