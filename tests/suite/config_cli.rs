//! `boardscribe config example|check` and `boardscribe devices`, run as the sysadmin runs them.

use std::process::{Command, Output};

const EXAMPLE: &str = include_str!("../../config/boardscribe.example.toml");

fn boardscribe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn config_example_prints_the_shipped_file_and_check_accepts_it() {
    let out = boardscribe(&["config", "example"]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), EXAMPLE);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("boardscribe.toml");
    std::fs::write(&path, &out.stdout).unwrap();
    let out = boardscribe(&["config", "check", path.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.starts_with(&format!("{}: ok\n", path.display())),
        "{stdout}"
    );
    assert!(stdout.contains("boards: 4\n"), "{stdout}");
}

#[test]
fn config_check_prints_every_mistake_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hall.toml");
    std::fs::write(
        &path,
        "[tournament]\nlaws = \"fide-2017\"\n\n[[board]]\nnumber = 1\nkind = \"chess\"\nport = \"/dev/ttyACM0\"\n",
    )
    .unwrap();
    let out = boardscribe(&["config", "check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let p = path.display();
    assert_eq!(
        text(&out.stderr),
        format!(
            "{p}:2:8: unknown laws edition \"fide-2017\"; valid: fide-2001, fide-2009, fide-2014, fide-2018, fide-2023\n\
             {p}:6:8: unknown board kind \"chess\"; valid: dgt, togyz\n\
             boardscribe: {p}: 2 error(s)\n"
        )
    );
    assert_eq!(text(&out.stdout), "");
}

#[test]
fn devices_lists_this_machines_ports_and_the_configured_boards() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("boardscribe.toml");
    std::fs::write(
        &path,
        "[[board]]\nnumber = 5\nkind = \"togyz\"\nserial = \"NOT-PLUGGED-IN\"\n",
    )
    .unwrap();
    let out = boardscribe(&["devices", "--config", path.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.starts_with("PORT "), "{stdout}");
    assert!(
        stdout.ends_with("board 5 (board 5, togyz): not plugged in (serial NOT-PLUGGED-IN)\n"),
        "{stdout}"
    );
}
