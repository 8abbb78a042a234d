//! The shipped systemd files: `systemd-analyze verify` passes on the unit (with ExecStart pointed
//! at the binary this build made), the hardening is there, the offline security review scores
//! it low, and the sysusers file is what systemd-sysusers accepts.

use std::{collections::BTreeMap, path::Path, process::Command};

const UNIT: &str = include_str!("../../systemd/boardscribe.service");
/// The event node's unit (issue 18).
const EVENT_UNIT: &str = include_str!("../../systemd/boardscribe-event.service");
const SYSUSERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/systemd/boardscribe.sysusers");
const UDEV_RULES: &str = include_str!("../../udev/70-boardscribe.rules");

fn systemd_tool(name: &str) -> String {
    ["/usr/bin", "/bin"]
        .iter()
        .map(|d| format!("{d}/{name}"))
        .find(|p| Path::new(p).exists())
        .unwrap_or_else(|| {
            panic!("{name} is missing: install systemd (apt-get install systemd) to test the units")
        })
}

/// The unit with ExecStart at the built binary, in a temporary directory, under its own name.
fn unit_copy(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let bin = env!("CARGO_BIN_EXE_boardscribe");
    let text = text.replace(
        "ExecStart=/usr/bin/boardscribe ",
        &format!("ExecStart={bin} "),
    );
    write_unit(&text)
}

fn write_unit(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("boardscribe.service");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// `systemd-analyze verify`: its exit status and everything it said.
fn verify(text: &str) -> (bool, String) {
    let (_dir, path) = unit_copy(text);
    verify_as_is(&path)
}

fn verify_as_is(path: &Path) -> (bool, String) {
    let out = Command::new(systemd_tool("systemd-analyze"))
        .args(["verify", "--man=no"])
        .arg(path)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[test]
fn systemd_analyze_verify_passes_without_a_warning() {
    let (ok, said) = verify(UNIT);
    assert!(ok, "{said}");
    let about_us: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("boardscribe.service"))
        .collect();
    assert_eq!(about_us, Vec::<&str>::new(), "{said}");
}

#[test]
fn the_event_nodes_unit_verifies_runs_the_event_node_and_allows_no_device() {
    let (ok, said) = verify(EVENT_UNIT);
    assert!(ok, "{said}");
    let service = section(EVENT_UNIT, "Service");
    assert_eq!(
        service["ExecStart"],
        ["/usr/bin/boardscribe event --config /etc/boardscribe/event.toml"]
    );
    assert_eq!(service["Type"], ["notify"]);
    assert_eq!(service["DevicePolicy"], ["closed"]);
    assert!(!service.contains_key("DeviceAllow"));
    let (level, said) = exposure(EVENT_UNIT);
    assert!(level <= 2.0, "exposure {level} (0 best, 10 worst):\n{said}");
}

#[test]
fn verify_catches_a_misspelt_key_and_a_missing_binary() {
    let (_, said) = verify(&UNIT.replace("NoNewPrivileges=yes", "NoNewPrivilegs=yes"));
    assert!(said.contains("Unknown key 'NoNewPrivilegs'"), "{said}");
    let (dir, path) = write_unit(&UNIT.replace(
        "ExecStart=/usr/bin/boardscribe ",
        "ExecStart=/nonexistent/boardscribe ",
    ));
    let (ok, said) = verify_as_is(&path);
    assert!(!ok, "{said}");
    drop(dir);
}

/// Every `Key=value` of a section, values of repeated keys in order.
fn section(text: &str, name: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut inside = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == format!("[{name}]");
        } else if inside
            && !line.starts_with('#')
            && let Some((k, v)) = line.split_once('=')
        {
            out.entry(k.to_owned()).or_default().push(v.to_owned());
        }
    }
    out
}

#[test]
fn the_unit_is_notify_with_a_watchdog_a_state_directory_and_hardening() {
    let s = section(UNIT, "Service");
    let one = |k: &str| -> &str {
        match s.get(k).map(Vec::as_slice) {
            Some([v]) => v,
            other => panic!("{k}: {other:?}"),
        }
    };
    for (k, v) in [
        ("Type", "notify"),
        ("NotifyAccess", "main"),
        ("WatchdogSec", "30"),
        (
            "ExecStart",
            "/usr/bin/boardscribe run --config /etc/boardscribe/boardscribe.toml",
        ),
        ("StateDirectory", "boardscribe"),
        ("WorkingDirectory", "%S/boardscribe"),
        ("Restart", "on-failure"),
        ("KillSignal", "SIGTERM"),
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("DevicePolicy", "closed"),
        ("SupplementaryGroups", "dialout"),
        ("User", "boardscribe"),
        // Issue 16: the `<N>` priorities the daemon writes under JOURNAL_STREAM are read.
        ("StandardError", "journal"),
        ("SyslogLevelPrefix", "yes"),
        // Issue 17: room for spectators' connections besides the relay's reserve of 256.
        ("LimitNOFILE", "8192"),
    ] {
        assert_eq!(one(k), v, "{k}");
    }
    assert_eq!(
        s["DeviceAllow"],
        [
            "char-ttyUSB rw",
            "char-ttyACM rw",
            "char-rfcomm rw",
            "char-hidraw rw"
        ],
        "serial devices only"
    );
    assert!(
        !s.contains_key("PrivateDevices"),
        "PrivateDevices would hide the boards"
    );
    assert_eq!(section(UNIT, "Install")["WantedBy"], ["multi-user.target"]);
}

#[test]
fn the_udev_rules_start_this_unit() {
    assert!(UDEV_RULES.contains("ENV{SYSTEMD_WANTS}+=\"boardscribe.service\""));
    assert!(UDEV_RULES.contains("TAG+=\"systemd\""));
}

#[test]
fn the_offline_security_review_scores_the_unit_low() {
    let (level, said) = exposure(UNIT);
    assert!(level <= 2.0, "exposure {level} (0 best, 10 worst):\n{said}");
}

/// `systemd-analyze security --offline` of a unit: its overall exposure and what it said.
fn exposure(unit: &str) -> (f64, String) {
    let (_dir, path) = unit_copy(unit);
    let out = Command::new(systemd_tool("systemd-analyze"))
        .args(["security", "--offline=yes", "--no-pager"])
        .arg(&path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let level: f64 = said
        .lines()
        .find_map(|l| l.split_once("Overall exposure level for boardscribe.service: "))
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in:\n{said}"));
    (level, said)
}

#[test]
fn systemd_sysusers_accepts_the_user() {
    let out = Command::new(systemd_tool("systemd-sysusers"))
        .arg("--dry-run")
        .arg(SYSUSERS)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert!(
        !said.contains("boardscribe.sysusers:"),
        "complaints: {said}"
    );
}
