//! Who holds a port: the processes that have a serial device open, named for the log, for
//! `boardscribe devices` and for the arbiter's console when a board's port is busy. At a venue
//! that is ModemManager or brltty probing a new USB serial device, a terminal program left
//! open, or a second boardscribe.
//!
//! Flow: [`holders_of`] reads `/proc` (the edge: every process's open files, compared by
//! device number with the port's node); [`describe`] turns what it found into one line.
//! Processes this user may not look into are not seen; nothing here ever opens the port.

use std::{
    fmt,
    os::unix::fs::{FileTypeExt, MetadataExt},
    path::Path,
};

/// A process that has the port open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its command line, as `/proc/PID/cmdline` has it (else its name).
    pub command: String,
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pid {} ({})", self.pid, self.command)
    }
}

/// The longest command line shown for a holder.
const COMMAND_CHARS: usize = 120;

/// Every other process that has the character device at `port` (a link is followed) open, by
/// pid; empty if the port is not a character device or nobody this user can see holds it.
pub fn holders_of(port: &Path) -> Vec<Holder> {
    let Ok(meta) = std::fs::metadata(port) else {
        return Vec::new();
    };
    if !meta.file_type().is_char_device() {
        return Vec::new();
    }
    let device = meta.rdev();
    let me = std::process::id();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<Holder> = procs
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me && holds(pid, device))
        .map(|pid| Holder {
            pid,
            command: command_of(pid),
        })
        .collect();
    found.sort_by_key(|h| h.pid);
    found
}

/// Whether process `pid` has the character device `device` open.
fn holds(pid: u32, device: u64) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::metadata(fd.path())
            .is_ok_and(|m| m.file_type().is_char_device() && m.rdev() == device)
    })
}

/// The command line of `pid`, arguments separated by spaces, cut to [`COMMAND_CHARS`].
fn command_of(pid: u32) -> String {
    let line = std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|raw| {
            raw.split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|l| !l.is_empty())
        .or_else(|| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .ok()
                .map(|c| c.trim().to_owned())
        })
        .unwrap_or_else(|| "?".to_owned());
    // Control characters from a command line never reach a terminal or a page raw.
    let clean: String = line
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if clean.chars().count() > COMMAND_CHARS {
        let cut: String = clean.chars().take(COMMAND_CHARS).collect();
        format!("{cut}…")
    } else {
        clean
    }
}

/// `held by pid 812 (/usr/sbin/ModemManager)`, or `None` when nobody is seen holding it.
pub fn describe(holders: &[Holder]) -> Option<String> {
    if holders.is_empty() {
        return None;
    }
    let list: Vec<String> = holders.iter().map(Holder::to_string).collect();
    Some(format!("held by {}", list.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nobody_holds_what_is_not_a_device() {
        assert!(holders_of(Path::new("/nonexistent/port")).is_empty());
        assert!(holders_of(Path::new("/proc/self/cmdline")).is_empty());
        assert_eq!(describe(&[]), None);
    }

    #[test]
    fn this_process_holding_a_device_is_not_named_but_another_is() {
        // /dev/null is a character device this process has open (stdin of the test harness,
        // or opened here): this process is never among the holders.
        let _null = std::fs::File::open("/dev/null").unwrap();
        let me = std::process::id();
        assert!(
            holders_of(Path::new("/dev/null"))
                .iter()
                .all(|h| h.pid != me)
        );
        let shown = describe(&[Holder {
            pid: 812,
            command: "/usr/sbin/ModemManager".into(),
        }]);
        assert_eq!(
            shown.as_deref(),
            Some("held by pid 812 (/usr/sbin/ModemManager)")
        );
    }
}
