//! The shipped udev rules: the real udev parses them, and an evaluator of the keys they use gives
//! each kind of board its symlink, group, mode and systemd tag, and other devices nothing.
//!
//! Real USB boards cannot be plugged in here, and udev only reads devices from a real sysfs, so
//! the real `udevadm test` runs the rules on a tty this machine has (in a private mount namespace
//! where they are the only rules and /dev and /run are scratch), and the per-board outcomes come
//! from the evaluator below, which follows udev's matching rules for the keys the file uses.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::Command,
};

const RULES: &str = include_str!("../../udev/70-boardscribe.rules");
const RULES_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/udev/70-boardscribe.rules");

// ---- the real udev ----

/// Runs `udevadm test` on a tty of this machine with `rules_file` as the only rules; returns the
/// output.
fn udevadm_test(rules_file: &Path) -> String {
    let udevadm = ["/usr/bin/udevadm", "/bin/udevadm", "/sbin/udevadm"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or_else(|| {
            panic!("udevadm is missing: install systemd (apt-get install systemd udev) to test the udev rules")
        });
    let tty = std::fs::read_dir("/sys/class/tty")
        .expect("/sys/class/tty")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("device").exists())
        .unwrap_or_else(|| PathBuf::from("/sys/class/tty/tty"));
    let name = rules_file
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // Private mounts: only these rules; what udevadm test writes (/dev links, /run/udev) is thrown away.
    let script = format!(
        "set -e; mount -t tmpfs none /etc/udev/rules.d; cp '{src}' /etc/udev/rules.d/{name}; \
         for d in /usr/lib/udev/rules.d /lib/udev/rules.d; do [ -d $d ] && mount -t tmpfs none $d; done; \
         mount -t tmpfs none /run; mount -t tmpfs none /dev; \
         {udevadm} test {tty}",
        src = rules_file.display(),
        tty = tty.display()
    );
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .expect("running unshare (util-linux)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "udevadm test in a private mount namespace failed (needs root and unshare -m):\n{text}"
    );
    text
}

/// Lines where udev complains about `name` (it names the file and line of each bad rule).
fn complaints<'a>(output: &'a str, name: &str) -> Vec<&'a str> {
    output
        .lines()
        .filter(|l| l.contains(&format!("{name}:")))
        .collect()
}

#[test]
fn the_real_udev_reads_the_rules_without_a_complaint() {
    let out = udevadm_test(Path::new(RULES_PATH));
    assert!(
        out.contains("Reading rules file: /etc/udev/rules.d/70-boardscribe.rules"),
        "{out}"
    );
    assert_eq!(
        complaints(&out, "70-boardscribe.rules"),
        Vec::<&str>::new(),
        "{out}"
    );
    // Not a board: nothing of ours on it.
    assert!(!out.contains("eboard"), "{out}");
}

#[test]
fn the_real_udev_check_catches_a_broken_rule() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("70-boardscribe.rules");
    let text = RULES
        .replace("GOTO=\"boardscribe_name\"", "GOTO=\"boardscribe_nowhere\"")
        .replace("GROUP=\"dialout\"", "GRUOP=\"dialout\"");
    std::fs::write(&broken, text).unwrap();
    let out = udevadm_test(&broken);
    let found = complaints(&out, "70-boardscribe.rules");
    assert!(
        found
            .iter()
            .any(|l| l.contains("GOTO=\"boardscribe_nowhere\" has no matching label")),
        "{out}"
    );
    assert!(found.iter().any(|l| l.contains("GRUOP")), "{out}");
}

// ---- an evaluator of the keys the rules use ----

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Match,
    NoMatch,
    Assign,
    Add,
}

#[derive(Debug)]
struct Key {
    name: String,
    arg: Option<String>,
    op: Op,
    value: String,
}

/// One line of rules: its keys, or a label.
fn parse(text: &str) -> Vec<Vec<Key>> {
    let mut rules = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut keys = Vec::new();
        let mut rest = line;
        while !rest.is_empty() {
            let op_at = rest
                .find(['=', '!', '+'])
                .unwrap_or_else(|| panic!("line {}: no operator in {rest:?}", i + 1));
            let lhs = &rest[..op_at];
            let (op, after) = match &rest[op_at..] {
                r if r.starts_with("==") => (Op::Match, &r[2..]),
                r if r.starts_with("!=") => (Op::NoMatch, &r[2..]),
                r if r.starts_with("+=") => (Op::Add, &r[2..]),
                r if r.starts_with('=') => (Op::Assign, &r[1..]),
                r => panic!("line {}: bad operator at {r:?}", i + 1),
            };
            let after = after
                .strip_prefix('"')
                .unwrap_or_else(|| panic!("line {}: value not quoted", i + 1));
            let close = after
                .find('"')
                .unwrap_or_else(|| panic!("line {}: unclosed value", i + 1));
            let value = after[..close].to_owned();
            let (name, arg) = match lhs.split_once('{') {
                Some((n, a)) => (n.to_owned(), Some(a.trim_end_matches('}').to_owned())),
                None => (lhs.to_owned(), None),
            };
            keys.push(Key {
                name,
                arg,
                op,
                value,
            });
            rest = after[close + 1..]
                .trim_start()
                .trim_start_matches(',')
                .trim_start();
        }
        rules.push(keys);
    }
    rules
}

/// udev's patterns: `*`, `?`, `[a-z]` and `|` between alternatives.
fn glob(pattern: &str, s: &str) -> bool {
    pattern
        .split('|')
        .any(|alt| glob_one(alt.as_bytes(), s.as_bytes()))
}

fn glob_one(p: &[u8], s: &[u8]) -> bool {
    match p.first() {
        None => s.is_empty(),
        Some(b'*') => (0..=s.len()).any(|i| glob_one(&p[1..], &s[i..])),
        Some(b'?') => !s.is_empty() && glob_one(&p[1..], &s[1..]),
        Some(b'[') => {
            let end = p.iter().position(|&c| c == b']').expect("unclosed [");
            let set = &p[1..end];
            let Some(&c) = s.first() else { return false };
            let hit = set
                .windows(3)
                .any(|w| w[1] == b'-' && w[0] <= c && c <= w[2])
                || set.contains(&c);
            hit && glob_one(&p[end + 1..], &s[1..])
        }
        Some(&c) => s.first() == Some(&c) && glob_one(&p[1..], &s[1..]),
    }
}

/// A tty and the devices above it (nearest first), each with its sysfs attributes.
struct Device {
    action: &'static str,
    subsystem: &'static str,
    kernel: &'static str,
    parents: Vec<BTreeMap<&'static str, &'static str>>,
}

/// What the rules did to a device.
#[derive(Debug, Default, PartialEq)]
struct Outcome {
    symlinks: Vec<String>,
    group: Option<String>,
    mode: Option<String>,
    tags: Vec<String>,
    systemd_wants: Option<String>,
}

fn evaluate(rules: &[Vec<Key>], dev: &Device) -> Outcome {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    let mut out = Outcome::default();
    let mut goto: Option<String> = None;
    for rule in rules {
        if let Some(label) = &goto {
            if rule.iter().any(|k| k.name == "LABEL" && &k.value == label) {
                goto = None;
            }
            continue;
        }
        // The parent that every ATTRS key of this rule matched on (udev: all on the same one).
        let attrs: Vec<&Key> = rule.iter().filter(|k| k.name == "ATTRS").collect();
        let parent = if attrs.is_empty() {
            None
        } else {
            match dev.parents.iter().find(|p| {
                attrs.iter().all(|k| {
                    let v = p.get(k.arg.as_deref().unwrap());
                    let hit = v.is_some_and(|v| glob(&k.value, v));
                    if k.op == Op::Match { hit } else { !hit }
                })
            }) {
                Some(p) => Some(p),
                None => continue,
            }
        };
        let matched = rule.iter().all(|k| {
            let actual = match k.name.as_str() {
                "ACTION" => dev.action.to_owned(),
                "SUBSYSTEM" => dev.subsystem.to_owned(),
                "KERNEL" => dev.kernel.to_owned(),
                "ENV" => env
                    .get(k.arg.as_deref().unwrap())
                    .cloned()
                    .unwrap_or_default(),
                _ => return true,
            };
            match k.op {
                Op::Match => glob(&k.value, &actual),
                Op::NoMatch => !glob(&k.value, &actual),
                _ => true,
            }
        });
        if !matched {
            continue;
        }
        let subst = |v: &str, env: &BTreeMap<String, String>| -> String {
            let mut s = v.replace("$kernel", dev.kernel);
            while let Some(at) = s.find('$') {
                let close = s[at..].find('}').expect("unclosed substitution") + at;
                let (kind, name) = s[at + 1..close].split_once('{').expect("$kind{name}");
                let value = match kind {
                    "env" => env.get(name).cloned().unwrap_or_default(),
                    "attr" => parent
                        .and_then(|p| p.get(name))
                        .map(|v| v.to_string())
                        .unwrap_or_default(),
                    other => panic!("substitution ${other} not handled"),
                };
                s.replace_range(at..=close, &value);
            }
            s
        };
        for k in rule.iter().filter(|k| matches!(k.op, Op::Assign | Op::Add)) {
            let v = subst(&k.value, &env);
            match (k.name.as_str(), k.arg.as_deref()) {
                ("ENV", Some("SYSTEMD_WANTS")) => out.systemd_wants = Some(v),
                ("ENV", Some(name)) => {
                    env.insert(name.to_owned(), v);
                }
                ("SYMLINK", None) => out.symlinks.push(v),
                ("GROUP", None) => out.group = Some(v),
                ("MODE", None) => out.mode = Some(v),
                ("TAG", None) => out.tags.push(v),
                ("GOTO", None) => goto = Some(v),
                ("LABEL", None) => {}
                (other, _) => panic!("key {other} not handled by the evaluator"),
            }
        }
    }
    out
}

fn usb(attrs: &[(&'static str, &'static str)]) -> Vec<BTreeMap<&'static str, &'static str>> {
    vec![
        // The interface (and for ttyUSB the usb-serial port) carry no IDs.
        BTreeMap::from([("bInterfaceNumber", "00")]),
        attrs.iter().copied().collect(),
        // The root hub has IDs and a serial number too: rules must not take them.
        BTreeMap::from([
            ("idVendor", "1d6b"),
            ("idProduct", "0002"),
            ("serial", "0000:00:14.0"),
            ("product", "xHCI Host Controller"),
        ]),
    ]
}

fn tty(kernel: &'static str, attrs: &[(&'static str, &'static str)]) -> Device {
    Device {
        action: "add",
        subsystem: "tty",
        kernel,
        parents: usb(attrs),
    }
}

fn board(link: &str) -> Outcome {
    Outcome {
        symlinks: vec![link.to_owned()],
        group: Some("dialout".into()),
        mode: Some("0660".into()),
        tags: vec!["systemd".into()],
        systemd_wants: Some("boardscribe.service".into()),
    }
}

#[test]
fn each_board_kind_gets_its_stable_name_and_permissions() {
    let rules = parse(RULES);
    let cases = [
        (
            tty(
                "ttyACM0",
                &[
                    ("idVendor", "045b"),
                    ("idProduct", "8111"),
                    ("serial", "00012345"),
                    ("product", "DGT Smart Board"),
                ],
            ),
            board("eboard/dgt-00012345"),
        ),
        (
            tty(
                "ttyACM3",
                &[
                    ("idVendor", "04d8"),
                    ("idProduct", "000a"),
                    ("serial", "D42"),
                    ("manufacturer", "DGT"),
                    ("product", "USB board"),
                ],
            ),
            board("eboard/dgt-D42"),
        ),
        // No serial number: the kernel name, never the hub's serial.
        (
            tty(
                "ttyACM1",
                &[
                    ("idVendor", "04d8"),
                    ("idProduct", "000a"),
                    ("product", "DGT e-Board"),
                ],
            ),
            board("eboard/dgt-ttyACM1"),
        ),
        (
            tty(
                "ttyUSB0",
                &[
                    ("idVendor", "0403"),
                    ("idProduct", "6001"),
                    ("serial", "A50285BI"),
                    ("product", "DGT USB e-board"),
                ],
            ),
            board("eboard/dgt-A50285BI"),
        ),
        (
            tty(
                "ttyACM2",
                &[
                    ("idVendor", "2e8a"),
                    ("idProduct", "000a"),
                    ("serial", "TGZ0042"),
                    ("product", "TGZ Pit Board rev B"),
                ],
            ),
            board("eboard/tgz-TGZ0042"),
        ),
        (
            tty(
                "ttyUSB1",
                &[
                    ("idVendor", "0403"),
                    ("idProduct", "6001"),
                    ("serial", "TGZ7"),
                    ("product", "TGZ Pit Board"),
                ],
            ),
            board("eboard/tgz-TGZ7"),
        ),
        // A USB HID board: no serial number, so its kernel name; found by its USB port path.
        (
            Device {
                action: "add",
                subsystem: "hidraw",
                kernel: "hidraw3",
                parents: usb(&[
                    ("idVendor", "2d80"),
                    ("idProduct", "8002"),
                    ("product", "Smart Chess Board"),
                ]),
            },
            board("eboard/chessnut-hidraw3"),
        ),
    ];
    for (dev, want) in cases {
        assert_eq!(evaluate(&rules, &dev), want, "{}", dev.kernel);
    }
}

#[test]
fn other_devices_and_events_get_nothing() {
    let rules = parse(RULES);
    let nothing = Outcome::default();
    let cases = [
        // Another vendor's device on the generic FTDI and Microchip CDC IDs.
        tty(
            "ttyUSB0",
            &[
                ("idVendor", "0403"),
                ("idProduct", "6001"),
                ("serial", "A50285BI"),
                ("product", "FT232R USB UART"),
                ("manufacturer", "FTDI"),
            ],
        ),
        tty(
            "ttyACM0",
            &[
                ("idVendor", "04d8"),
                ("idProduct", "000a"),
                ("serial", "1"),
                ("product", "CDC RS-232 Emulation Demo"),
                ("manufacturer", "Microchip Technology Inc."),
            ],
        ),
        tty(
            "ttyACM0",
            &[
                ("idVendor", "2341"),
                ("idProduct", "0043"),
                ("serial", "7573"),
                ("product", "Arduino Uno"),
            ],
        ),
        tty(
            "ttyACM0",
            &[
                ("idVendor", "2341"),
                ("idProduct", "0043"),
                ("product", "Not a TGZ Pit Board"),
            ],
        ),
        // The DGT IDs, but not a serial port, or the board going away.
        Device {
            action: "add",
            subsystem: "hidraw",
            kernel: "hidraw0",
            parents: usb(&[("idVendor", "045b"), ("idProduct", "8111")]),
        },
        Device {
            action: "remove",
            subsystem: "tty",
            kernel: "ttyACM0",
            parents: usb(&[("idVendor", "045b"), ("idProduct", "8111")]),
        },
        // The Chessnut vendor id on a product id outside its boards', and on a tty.
        Device {
            action: "add",
            subsystem: "hidraw",
            kernel: "hidraw1",
            parents: usb(&[("idVendor", "2d80"), ("idProduct", "9001")]),
        },
        tty("ttyACM0", &[("idVendor", "2d80"), ("idProduct", "8002")]),
        Device {
            action: "add",
            subsystem: "tty",
            kernel: "ttyS0",
            parents: usb(&[("idVendor", "045b"), ("idProduct", "8111")]),
        },
    ];
    for dev in cases {
        assert_eq!(
            evaluate(&rules, &dev),
            nothing,
            "{} {:?}",
            dev.kernel,
            dev.parents[1]
        );
    }
}

#[test]
fn the_evaluator_follows_udev_patterns() {
    assert!(glob("ttyACM[0-9]*|ttyUSB[0-9]*", "ttyUSB12"));
    assert!(!glob("ttyACM[0-9]*|ttyUSB[0-9]*", "ttyS0"));
    assert!(glob("*DGT*|*dgt*", "the dgt board"));
    assert!(!glob("?*", ""));
    assert!(glob("TGZ Pit Board*", "TGZ Pit Board"));
}

/// A board on a generic USB serial chip is named by the line `devices --probe` prints for it
/// (its kind and USB serial number), pasted where the rules say; the real udev reads the rules
/// with it without a complaint, and without it the chip is left alone.
#[test]
fn a_board_found_by_probing_is_named_by_the_line_devices_prints() {
    use boardscribe::{device::probe::udev_line, kind::BoardKind};
    let line = udev_line(BoardKind::ChessLink, "MCL0042");
    let end = "ENV{BOARDSCRIBE_KIND}!=\"?*\", GOTO=\"boardscribe_end\"";
    let pasted = RULES.replacen(end, &format!("{line}\n\n{end}"), 1);
    assert_ne!(pasted, RULES, "the rules have no place for probed boards");
    let chip = tty(
        "ttyUSB4",
        &[
            ("idVendor", "0403"),
            ("idProduct", "6015"),
            ("serial", "MCL0042"),
            ("product", "FT230X Basic UART"),
        ],
    );
    assert_eq!(
        evaluate(&parse(&pasted), &chip),
        board("eboard/chesslink-MCL0042")
    );
    assert_eq!(evaluate(&parse(RULES), &chip), Outcome::default());
    // Another board on the same chip is not taken for it.
    let other = tty(
        "ttyUSB5",
        &[
            ("idVendor", "0403"),
            ("idProduct", "6015"),
            ("serial", "X9"),
        ],
    );
    assert_eq!(evaluate(&parse(&pasted), &other), Outcome::default());

    // A Certabo board behind a CP210x bridge, whose USB ID no rule claims.
    let certabo = udev_line(BoardKind::Certabo, "02A1B3C4");
    let pasted = pasted.replacen(end, &format!("{certabo}\n\n{end}"), 1);
    let bridge = |serial: &'static str| {
        tty(
            "ttyUSB6",
            &[
                ("idVendor", "10c4"),
                ("idProduct", "ea60"),
                ("serial", serial),
                ("product", "CP2102 USB to UART Bridge Controller"),
                ("manufacturer", "Silicon Labs"),
            ],
        )
    };
    assert_eq!(
        evaluate(&parse(&pasted), &bridge("02A1B3C4")),
        board("eboard/certabo-02A1B3C4")
    );
    assert_eq!(
        evaluate(&parse(RULES), &bridge("02A1B3C4")),
        Outcome::default()
    );
    assert_eq!(
        evaluate(&parse(&pasted), &bridge("0001")),
        Outcome::default()
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("70-boardscribe.rules");
    std::fs::write(&file, &pasted).unwrap();
    let out = udevadm_test(&file);
    assert_eq!(
        complaints(&out, "70-boardscribe.rules"),
        Vec::<&str>::new(),
        "{out}"
    );
}
