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
    // Issue 16: the token files it names are read as `run` reads them; until they exist the
    // check says so, and says nothing else.
    std::fs::write(&path, &out.stdout).unwrap();
    let out = boardscribe(&["config", "check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let p = path.display();
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    // Each error names the line of the example that names the file.
    let line_of = |file: &str| {
        1 + EXAMPLE
            .lines()
            .position(|l| l.contains(&format!("\"/etc/boardscribe/{file}\"")))
            .unwrap()
    };
    let (lichess, admin) = (line_of("lichess.token"), line_of("admin.token"));
    assert!(
        lines[0].starts_with(&format!(
            "{p}:{lichess}:14: the Lichess token file \"/etc/boardscribe/lichess.token\" cannot be read: "
        )),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "{p}:{admin}:14: the admin token file \"/etc/boardscribe/admin.token\" cannot be read: "
        )),
        "{stderr}"
    );
    assert_eq!(lines[2], format!("boardscribe: {p}: 2 error(s)"));
    // With the token files in place (the admin one as docs/operations.md makes it), it passes.
    let tokens = dir.path().join("tokens");
    std::fs::create_dir(&tokens).unwrap();
    std::fs::write(tokens.join("lichess.token"), "t0ken\n").unwrap();
    std::fs::write(tokens.join("admin.token"), format!("{STRONG_TOKEN}\n")).unwrap();
    let local = EXAMPLE.replace("/etc/boardscribe/", &format!("{}/", tokens.display()));
    std::fs::write(&path, local).unwrap();
    let out = boardscribe(&["config", "check", path.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.starts_with(&format!("{}: ok\n", path.display())),
        "{stdout}"
    );
    assert!(stdout.contains("boards: 4\n"), "{stdout}");
    assert_eq!(
        text(&out.stderr),
        "",
        "no warning: the example binds 127.0.0.1"
    );
}

/// Issue 16: four mistakes of type were reported one at a time; now all in one run, each with
/// its key, and `run` refuses the file with the same list.
#[test]
fn config_check_reports_four_type_errors_in_one_run_and_run_refuses_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hall.toml");
    std::fs::write(
        &path,
        "database = 5\n\n[http]\nbind = 8080\n\n[tournament]\nevent = 2026\nround = \"3.1\"\n\n\
         [[board]]\nnumber = \"one\"\nkind = \"dgt\"\nport = \"/dev/ttyACM0\"\n",
    )
    .unwrap();
    let p = path.display();
    let want = [
        format!("{p}:1:12: database: invalid type: integer `5`, expected a string"),
        format!("{p}:4:8: http.bind: invalid type: integer `8080`, expected a string"),
        format!("{p}:7:9: tournament.event: invalid type: integer `2026`, expected a string"),
        format!(
            "{p}:8:9: round \"3.1\" is not a round number; valid: a whole number of 1 or more, \
             e.g. round = 3"
        ),
        format!("{p}:11:10: board.number: invalid type: string \"one\", expected a whole number"),
    ];
    let out = boardscribe(&["config", "check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("{}\nboardscribe: {p}: 5 error(s)\n", want.join("\n"))
    );
    assert_eq!(text(&out.stdout), "");
    // `run` reads the file the same way: the same list, and nothing started.
    let db = dir.path().join("never.db");
    let out = boardscribe(&[
        "run",
        "--config",
        path.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("boardscribe: {}\n", want.join("\n"))
    );
    assert!(!db.exists());
}

/// Issue 16: a missing token file passed `config check` and failed `run`; an open HTTP address
/// without a token passed silently.
#[test]
fn config_check_reports_a_missing_token_file_and_warns_of_an_open_bind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hall.toml");
    let token = dir.path().join("admin.token");
    std::fs::write(
        &path,
        format!(
            "[http]\nbind = \"0.0.0.0:8080\"\ntls = \"proxy\"\n\n[admin]\ntoken_file = {:?}\n\n\
             [[board]]\nnumber = 1\nkind = \"dgt\"\nport = \"/dev/ttyACM0\"\n",
            token.display().to_string()
        ),
    )
    .unwrap();
    let p = path.display();
    let out = boardscribe(&["config", "check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "{p}:6:14: the admin token file {:?} cannot be read: ",
            token.display().to_string()
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(&format!("boardscribe: {p}: 1 error(s)\n")),
        "{stderr}"
    );
    let out = boardscribe(&[
        "run",
        "--config",
        path.to_str().unwrap(),
        "--db",
        dir.path().join("x.db").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("the admin token file"),
        "run refuses it too: {}",
        text(&out.stderr)
    );
    std::fs::write(&token, "").unwrap();
    let out = boardscribe(&["config", "check", path.to_str().unwrap()]);
    assert!(
        text(&out.stderr).contains("is empty; write the token on its first line"),
        "{}",
        text(&out.stderr)
    );
    // With a token the open address is fine; without [admin] it is a warning, not an error.
    std::fs::write(&token, format!("{STRONG_TOKEN}\n")).unwrap();
    let out = boardscribe(&["config", "check", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    std::fs::write(
        &path,
        "[http]\nbind = \"0.0.0.0:8080\"\ntls = \"none\"\n\n[[board]]\nnumber = 1\nkind = \"dgt\"\nport = \"/dev/ttyACM0\"\n",
    )
    .unwrap();
    let out = boardscribe(&["config", "check", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).starts_with(&format!(
            "{p}:2:8: warning: the HTTP server listens on 0.0.0.0:8080, reachable from other \
             machines, and no admin token is set"
        )),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("http: 0.0.0.0:8080 (plain HTTP, as said)\n"));
}

/// 128 random bits, as `openssl rand -hex 16` writes them.
const STRONG_TOKEN: &str = "3f9c2a7be01d4c58a6e2f0b9d3c71e46";

/// Issue 31: `config check` took a 4-digit admin token on 0.0.0.0 without a word. A token
/// under 128 bits is refused with its estimate and how to make one; an address other machines
/// reach is refused unless `[http] tls` says how they reach it (the daemon has no TLS). `run`
/// refuses both the same way, and an open `--http` too.
#[test]
fn config_check_refuses_a_guessable_admin_token_and_plain_http_on_an_open_bind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hall.toml");
    let token = dir.path().join("admin.token");
    let write = |bind: &str, tls: &str| {
        std::fs::write(
            &path,
            format!(
                "[http]\nbind = \"{bind}\"\n{tls}\n[admin]\ntoken_file = {:?}\n\n\
                 [[board]]\nnumber = 1\nkind = \"dgt\"\nport = \"/dev/ttyACM0\"\n",
                token.display().to_string()
            ),
        )
        .unwrap()
    };
    let p = path.display();
    let t = token.display().to_string();
    let check = || boardscribe(&["config", "check", path.to_str().unwrap()]);

    write("0.0.0.0:8080", "");
    std::fs::write(&token, "1234\n").unwrap();
    let out = check();
    assert_eq!(out.status.code(), Some(1));
    let plain = format!(
        "{p}:2:8: the HTTP server listens on 0.0.0.0:8080, reachable from other machines, in \
         plain HTTP (the daemon has no TLS): the admin token and the console's session cross \
         the network readable; bind 127.0.0.1 behind a reverse proxy that terminates TLS, or \
         say how other machines reach it: tls = \"proxy\" (a reverse proxy in front terminates \
         TLS) or tls = \"none\" (plain HTTP on this network, knowingly) in [http]\n"
    );
    let weak = format!(
        "{p}:5:14: the admin token in {t:?} is too easy to guess: about 13 bits (4 characters \
         of digits), under the 128 needed; write a random one: openssl rand -hex 32 > {t}\n"
    );
    assert_eq!(
        text(&out.stderr),
        format!("{plain}{weak}boardscribe: {p}: 2 error(s)\n")
    );
    assert_eq!(text(&out.stdout), "");
    // `run` reads it through the same check: the same words, nothing started.
    let db = dir.path().join("never.db");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--db", db.to_str().unwrap()];
        args.extend(extra);
        boardscribe(&args)
    };
    let out = run(&["--config", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("boardscribe: {plain}{weak}").trim_end().to_owned() + "\n"
    );
    assert!(!db.exists());

    // Loopback needs no word on TLS; a word token of letters is still short.
    write("127.0.0.1:8080", "");
    std::fs::write(&token, "correcthorsebattery\n").unwrap();
    let out = check();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with(&format!(
            "{p}:5:14: the admin token in {t:?} is too easy to guess: about 89 bits (19 \
             characters of lowercase letters)"
        )),
        "{}",
        text(&out.stderr)
    );

    // 32 hex characters pass; so does the open bind once the file says how TLS is done.
    std::fs::write(&token, format!("{STRONG_TOKEN}\n")).unwrap();
    let out = check();
    assert!(out.status.success(), "{}", text(&out.stderr));
    for (tls, shown) in [
        (
            "proxy",
            "http: 0.0.0.0:8080 (TLS at a reverse proxy in front)\n",
        ),
        ("none", "http: 0.0.0.0:8080 (plain HTTP, as said)\n"),
    ] {
        write("0.0.0.0:8080", &format!("tls = \"{tls}\""));
        let out = check();
        assert!(out.status.success(), "{tls}: {}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "{tls}");
        assert!(text(&out.stdout).contains(shown), "{}", text(&out.stdout));
    }
    write("0.0.0.0:8080", "tls = \"yes\"");
    let out = check();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with(&format!(
            "{p}:3:7: unknown value \"yes\" for tls; valid: proxy"
        )),
        "{}",
        text(&out.stderr)
    );

    // An open address given with --http is held to the same rule.
    write("127.0.0.1:8080", "");
    let out = run(&["--config", path.to_str().unwrap(), "--http", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("the HTTP server listens on 0.0.0.0:0, reachable from other machines")
            && err.contains("--http 0.0.0.0:0 is given on the command line"),
        "{err}"
    );
    assert!(!db.exists());
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
    // Every kind the daemon reads, in its one list's order.
    let kinds = boardscribe::kind::BoardKind::ALL
        .map(|k| k.name())
        .join(", ");
    assert!(kinds.starts_with("dgt, togyz, chesslink, chessnut, certabo"));
    assert_eq!(
        text(&out.stderr),
        format!(
            "{p}:2:8: unknown laws edition \"fide-2017\"; valid: fide-2001, fide-2009, fide-2014, fide-2018, fide-2023\n\
             {p}:6:8: unknown board kind \"chess\"; valid: {kinds}\n\
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

#[test]
fn run_refuses_a_guessable_admin_token_given_by_its_flag_as_config_check_does() {
    let dir = tempfile::tempdir().unwrap();
    let weak = dir.path().join("weak.token");
    std::fs::write(&weak, "1234\n").unwrap();
    let db = dir.path().join("x.db");
    let out = boardscribe(&[
        "run",
        "--port",
        "/dev/null",
        "--db",
        db.to_str().unwrap(),
        "--admin-token-file",
        weak.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("too easy to guess: about 13 bits (4 characters of digits)"),
        "{err}"
    );
    assert!(!db.exists(), "nothing was started");
}

/// `config check event.toml hall-a.toml …` (issue 32, item 2): each file checked as alone, and
/// across them a board number two halls both use, a hall the event node does not follow, and
/// two files for one hall; named by file, exit code 1. Halls with their own numbers pass.
#[test]
fn config_check_of_an_event_and_its_halls_finds_a_board_number_used_twice() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let board =
        |n: u32| format!("[[board]]\nnumber = {n}\nkind = \"dgt\"\nport = \"/dev/ttyACM{n}\"\n\n");
    let hall = |name: &str, numbers: &[u32]| {
        let boards: String = numbers.iter().map(|n| board(*n)).collect();
        format!("[cluster]\nurl = \"nats://127.0.0.1:4222\"\nhall = \"{name}\"\n\n{boards}")
    };
    let event = write(
        "event.toml",
        "[cluster]\nurl = \"nats://127.0.0.1:4222\"\nhalls = [\"A\", \"B\"]\n",
    );
    let a = write("hall-a.toml", &hall("A", &[1, 2, 3]));
    let b = write("hall-b.toml", &hall("B", &[3, 4]));
    let c = write("hall-c.toml", &hall("C", &[9]));
    let b_clean = write("hall-b2.toml", &hall("B", &[4, 5]));

    let out = boardscribe(&["config", "check", &event, &a, &b, &c]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("board 3 is in hall \"A\"") && l.contains(&a) && l.contains(&b)),
        "{stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&c) && l.contains("not in") && l.contains(&event)),
        "{stderr}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("board ")).count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("2 error(s) in 4 files"), "{stderr}");
    // Every file's own summary is still printed.
    let stdout = text(&out.stdout);
    for f in [&event, &a, &b, &c] {
        assert!(stdout.contains(&format!("{f}: ok")), "{stdout}");
    }

    // The same hall in two files.
    let out = boardscribe(&["config", "check", &event, &b, &b_clean]);
    assert!(text(&out.stderr).contains("both record for hall \"B\""));
    // Each hall its own numbers: ok.
    let out = boardscribe(&["config", "check", &event, &a, &b_clean]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
