use std::net::SocketAddr;

use super::*;
use crate::arbiter::FivefoldRule;

/// Every diagnostic for `text`, as printed.
fn errors(text: &str) -> Vec<String> {
    match Config::from_toml(text, "venue.toml") {
        Ok(c) => panic!("expected errors, got {c:?}"),
        Err(e) => e.diagnostics().iter().map(ToString::to_string).collect(),
    }
}

fn one_error(text: &str) -> String {
    let mut e = errors(text);
    assert_eq!(e.len(), 1, "{e:?}");
    e.remove(0)
}

fn ok(text: &str) -> Config {
    match Config::from_toml(text, "venue.toml") {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

const BOARD_HEAD: &str = "[[board]]\nnumber = 2\nkind = \"dgt\"\n";

#[test]
fn the_shipped_example_validates_and_says_what_it_shows() {
    let c = ok(EXAMPLE);
    assert_eq!(
        c.database,
        PathBuf::from("/var/lib/boardscribe/boardscribe.db")
    );
    assert_eq!(
        c.http,
        Some("127.0.0.1:8080".parse::<SocketAddr>().unwrap())
    );
    assert_eq!(c.tournament.round.as_deref(), Some("3"));
    assert_eq!(c.tournament.laws, Laws::Fide2023);
    assert_eq!(
        c.tournament.time_control,
        Some("90+30".parse::<TimeControl>().unwrap())
    );
    assert_eq!(c.laws.illegal_strikes_to_lose, Some(2));
    assert_eq!(c.laws.penalty_secs_rapid, 120);
    let numbers: Vec<u32> = c.boards.iter().map(|b| b.number).collect();
    assert_eq!(numbers, [1, 2, 3, 4]);
    assert_eq!(c.boards[0].locator, Locator::Serial("00012345".into()));
    assert_eq!(c.boards[0].name, "Board 1 (top table)");
    assert_eq!(c.boards[1].name, "board 2");
    assert_eq!(c.boards[2].kind, BoardKind::Togyz);
    assert_eq!(
        c.boards[2].locator,
        Locator::Symlink("/dev/eboard/tgz-TGZ0042".into())
    );
    assert_eq!(c.boards[3].locator, Locator::Port("/dev/ttyUSB0".into()));
    let [lichess] = c.relay.lichess.as_slice() else {
        panic!("one Lichess round: {:?}", c.relay.lichess)
    };
    assert_eq!(lichess.base_url, DEFAULT_LICHESS_URL);
    assert_eq!(
        lichess.boards.as_ref().map(ToString::to_string).as_deref(),
        Some("1-64")
    );
    assert_eq!(
        (c.relay.delay_ms, c.relay.public_comments, c.relay.slice),
        (0, false, 64)
    );
    assert_eq!(
        c.admin.as_ref().unwrap().token_file,
        PathBuf::from("/etc/boardscribe/admin.token")
    );
    let s = c.summary();
    assert!(s.contains("boards: 4\n"), "{s}");
    assert!(
        s.contains("laws: fide-2023, supervision full, time control 90+30\n"),
        "{s}"
    );
}

#[test]
fn an_empty_file_gives_the_defaults_and_no_http() {
    let c = ok("");
    assert_eq!(c, Config::default());
    assert_eq!(c.database, PathBuf::from("boardscribe.db"));
    assert_eq!(c.http, None);
    assert_eq!(ok("[http]\n").http, Some("127.0.0.1:8080".parse().unwrap()));
    assert_eq!(
        ok("[http]\nbind = \"[::]:80\"\ntls = \"proxy\"\n").http,
        Some("[::]:80".parse().unwrap())
    );
}

#[test]
fn syntax_errors_name_line_and_column() {
    let e = one_error("database = \"x\"\ndatabase = \n");
    assert!(e.starts_with("venue.toml:2:12: "), "{e}");
}

#[test]
fn unknown_keys_are_errors_that_list_the_valid_ones() {
    assert_eq!(
        one_error("databse = \"x.db\"\n"),
        "venue.toml:1:1: unknown key `databse`; valid: `database`, `http`, `tournament`, \
         `laws`, `board`, `bus`, `relay`, `admin`, `cluster`"
    );
    assert_eq!(
        one_error(&format!(
            "{BOARD_HEAD}port = \"/dev/ttyACM0\"\ncolour = \"white\"\n"
        )),
        "venue.toml:5:1: unknown key `colour`; valid: `number`, `kind`, `name`, `serial`, \
         `symlink`, `port`, `usb_port`, `clock_layout`, `bus`, `bus_serial`"
    );
    let e = one_error("[laws]\nfivefold_rule = \"any\"\n");
    assert!(
        e.starts_with(
            "venue.toml:2:1: unknown key `fivefold_rule`; valid: `illegal_strikes_to_lose`"
        ),
        "{e}"
    );
    assert_eq!(
        one_error("[relay.mastodon]\n"),
        "venue.toml:1:8: unknown key `mastodon`; valid: `clk_format`, `delay`, `public_comments`, \
         `slice`, `folder`, `lichess`"
    );
}

#[test]
fn missing_and_mistyped_keys() {
    assert_eq!(
        one_error("[[board]]\nkind = \"dgt\"\nport = \"/dev/ttyACM0\"\n"),
        "venue.toml:1:1: missing key `number`; add it to this table"
    );
    // Issue 16: a mistake of type names its key (the line alone does not say which table).
    assert_eq!(
        one_error("[[board]]\nnumber = \"one\"\nkind = \"dgt\"\n"),
        "venue.toml:2:10: board.number: invalid type: string \"one\", expected a whole number"
    );
    assert_eq!(
        one_error("[laws]\nfivefold = \"never\"\n"),
        "venue.toml:2:12: laws.fivefold: unknown value `never`; valid: `none`, `consecutive`, `any`"
    );
    assert_eq!(
        one_error("[[bus]]\nport = \"/dev/ttyUSB0\"\n"),
        "venue.toml:1:1: missing key `name`; add it to this table"
    );
}

/// Issue 16: `config check` reported one type error of four; now every mistake in one pass.
#[test]
fn every_mistake_of_type_is_reported_in_one_pass_with_its_key() {
    let text = "database = 5\n\n[http]\nbind = 8080\n\n[tournament]\nevent = 2026\n\n\
                [[board]]\nnumber = 1\nkind = \"dgt\"\nport = \"/dev/ttyACM0\"\n\n\
                [[board]]\nnumber = \"two\"\nkind = 2\nport = \"/dev/ttyACM1\"\ncolour = \"red\"\n\n\
                [relay.folder]\ndir = [\"/srv\"]\n";
    assert_eq!(
        errors(text),
        [
            "venue.toml:1:12: database: invalid type: integer `5`, expected a string",
            "venue.toml:4:8: http.bind: invalid type: integer `8080`, expected a string",
            "venue.toml:7:9: tournament.event: invalid type: integer `2026`, expected a string",
            "venue.toml:15:10: board.number: invalid type: string \"two\", expected a whole number",
            "venue.toml:16:8: board.kind: invalid type: integer `2`, expected a string",
            "venue.toml:18:1: unknown key `colour`; valid: `number`, `kind`, `name`, `serial`, \
             `symlink`, `port`, `usb_port`, `clock_layout`, `bus`, `bus_serial`",
            "venue.toml:21:7: relay.folder.dir: invalid type: sequence, expected a string",
        ]
    );
    // A key left out for its type is not reported missing as well; the checks of values go on
    // beside the mistakes of form.
    assert_eq!(
        errors("[tournament]\nlaws = \"fide-2017\"\n\n[admin]\ntoken_file = 3\n"),
        [
            "venue.toml:2:8: unknown laws edition \"fide-2017\"; valid: fide-2001, fide-2009, \
             fide-2014, fide-2018, fide-2023",
            "venue.toml:5:14: admin.token_file: invalid type: integer `3`, expected a string",
        ]
    );
}

/// Issue 16: a token file that `run` cannot read is a mistake `config check` reports.
#[test]
fn token_files_are_read_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.token");
    std::fs::write(&empty, "\n").unwrap();
    let good = dir.path().join("admin.token");
    std::fs::write(&good, "0123456789abcdef0123456789ABCDEF\n").unwrap();
    let missing = dir.path().join("missing.token");
    let text = |admin: &std::path::Path, lichess: &std::path::Path| {
        format!(
            "[relay.lichess]\nround = \"AbCd1234\"\ntoken_file = {:?}\n\n[admin]\ntoken_file = {:?}\n",
            lichess.display().to_string(),
            admin.display().to_string()
        )
    };
    let checked = |t: &str| {
        Config::from_toml_with(t, "venue.toml", FileChecks::ALL).map_err(|e| {
            e.diagnostics()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        })
    };
    let e = checked(&text(&missing, &empty)).unwrap_err();
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].starts_with(&format!(
            "venue.toml:3:14: the Lichess token file {:?} is empty",
            empty.display().to_string()
        )),
        "{e:?}"
    );
    assert!(
        e[1].starts_with(&format!(
            "venue.toml:6:14: the admin token file {:?} cannot be read: ",
            missing.display().to_string()
        )) && e[1].contains("or fix the path"),
        "{e:?}"
    );
    assert!(checked(&text(&good, &good)).is_ok());
    // Without FileChecks the text alone is checked (the example names /etc files).
    assert!(Config::from_toml(&text(&missing, &missing), "venue.toml").is_ok());
}

/// Issue 16: an HTTP address other machines reach, with no admin token, is warned of.
#[test]
fn an_open_bind_without_a_token_warns() {
    let c = ok("[http]\nbind = \"0.0.0.0:8080\"\ntls = \"none\"\n");
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    let w = c.warnings[0].to_string();
    assert!(
        w.starts_with("venue.toml:2:8: warning: the HTTP server listens on 0.0.0.0:8080, reachable from other machines"),
        "{w}"
    );
    for quiet in [
        "[http]\nbind = \"127.0.0.1:8080\"\n",
        "[http]\nbind = \"[::1]:8080\"\n",
        "[http]\n",
        "[http]\nbind = \"0.0.0.0:8080\"\ntls = \"proxy\"\n[admin]\ntoken_file = \"/etc/boardscribe/admin.token\"\n",
    ] {
        assert_eq!(ok(quiet).warnings, [], "{quiet}");
    }
}

/// Issue 31: an address other machines reach must say how TLS is done (the daemon has none);
/// loopback needs nothing, and the value is one of two.
#[test]
fn an_open_bind_must_say_how_tls_is_done() {
    assert_eq!(
        one_error("[http]\nbind = \"0.0.0.0:8080\"\n"),
        format!(
            "venue.toml:2:8: {}",
            plain_http_refusal("0.0.0.0:8080".parse().unwrap())
        )
    );
    assert!(one_error("[http]\nbind = \"[::]:80\"\n").contains("tls = \"proxy\""));
    for (tls, want) in [("proxy", HttpTls::Proxy), ("none", HttpTls::None)] {
        let c = ok(&format!(
            "[http]\nbind = \"192.168.1.5:80\"\ntls = \"{tls}\"\n"
        ));
        assert_eq!(c.http_tls, Some(want));
    }
    assert_eq!(ok("[http]\nbind = \"127.0.0.1:8080\"\n").http_tls, None);
    assert!(
        one_error("[http]\nbind = \"127.0.0.1:8080\"\ntls = \"yes\"\n")
            .starts_with("venue.toml:3:7: unknown value \"yes\" for tls; valid: proxy ")
    );
}

/// Issue 31: the admin token's bits, estimated from its length and the classes it uses.
#[test]
fn token_bits_follow_length_and_character_classes() {
    let bits = |t: &str| check::token_bits(t).round() as u32;
    assert_eq!(bits("1234"), 13);
    assert_eq!(bits("0123456789abcdef0123456789abcdef"), 128);
    assert_eq!(bits("0123456789ABCDEF0123456789ABCDEF"), 128);
    assert_eq!(bits("event-secret"), 71);
    assert_eq!(bits("s3cret"), 31);
    assert_eq!(bits("abcdefghijklmnopqrstuvwxyz"), 122);
    // base64 of 32 random bytes (openssl rand -base64 32): 44 characters of every class.
    assert!(check::token_bits("q8Jx2bPz0vN+Yk3sWm9aTf1Lr4uE7cHgQoD5iVnZ6yA=") > 250.0);
    assert!(check::token_bits("0123456789abcdef0123456789abcde") < check::MIN_TOKEN_BITS);
}

#[test]
fn tournament_values() {
    assert_eq!(
        one_error("[tournament]\nlaws = \"fide-2017\"\n"),
        "venue.toml:2:8: unknown laws edition \"fide-2017\"; valid: fide-2001, fide-2009, \
         fide-2014, fide-2018, fide-2023"
    );
    assert_eq!(
        one_error("[tournament]\nsupervision = \"partial\"\n"),
        "venue.toml:2:15: unknown supervision \"partial\"; valid: full, reduced"
    );
    assert_eq!(
        one_error("[tournament]\nvariant = \"fischer-random\"\n"),
        "venue.toml:2:11: unknown variant \"fischer-random\"; valid: standard, chess960"
    );
    let c = ok("[tournament]\nvariant = \"chess960\"\n");
    assert_eq!(c.tournament.variant, crate::game::Variant::Chess960);
    assert_eq!(c.laws_setup().variant, crate::game::Variant::Chess960);
    assert!(c.summary().contains("variant: chess960\n"));
    assert_eq!(
        ok(EXAMPLE).tournament.variant,
        crate::game::Variant::Standard
    );
    let dates = ok(EXAMPLE).tournament;
    assert_eq!(dates.start_date.as_deref(), Some("2026-04-10"));
    assert_eq!(dates.end_date.as_deref(), Some("2026-04-18"));
    let quoted = ok("[tournament]\nstart_date = \" 2026-12-02 \"\n").tournament;
    assert_eq!(quoted.start_date.as_deref(), Some("2026-12-02"));
    let e = errors("[tournament]\nstart_date = \"2026-02-30\"\nend_date = \"2026-1-5\"\n");
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].contains("start_date \"2026-02-30\" is not a date"),
        "{e:?}"
    );
    assert!(
        e[1].contains("end_date \"2026-1-5\" is not a date"),
        "{e:?}"
    );
    let e = one_error("[tournament]\nstart_date = 2026-12-05\nend_date = 2026-12-01\n");
    assert!(
        e.contains("end_date 2026-12-01 is before start_date 2026-12-05"),
        "{e}"
    );
    let e = one_error("[tournament]\nevent = \"Open\"\ntime_control = \"90+x\"\n");
    assert!(
        e.starts_with("venue.toml:3:16: invalid time control \"90+x\": "),
        "{e}"
    );
    assert!(e.contains("valid forms are like 90+30"), "{e}");
    // Issue 16: `run` can start only a round numbered 1, 2, ..., so the check refuses the
    // rest (it accepted "3.1", which `run` then refused).
    for (value, shown) in [
        ("0", "0"),
        ("\"3.1\"", "\"3.1\""),
        ("3.5", "3.5"),
        ("\"\"", "\"\""),
    ] {
        assert_eq!(
            one_error(&format!("[tournament]\nround = {value}\n")),
            format!(
                "venue.toml:2:9: round {shown} is not a round number; valid: a whole number of 1 \
                 or more, e.g. round = 3"
            )
        );
    }
    assert_eq!(
        ok("[tournament]\nround = \"3\"\n")
            .tournament
            .round
            .as_deref(),
        Some("3")
    );
    assert_eq!(
        one_error("[tournament]\nsupervision = \"reduced\"\n\n[laws]\nsupervision = \"full\"\n"),
        "venue.toml:2:15: supervision is set both here and in [laws]; keep one of the two"
    );
}

#[test]
fn supervision_and_overrides_reach_the_laws() {
    let c = ok(
        "[tournament]\nlaws = \"fide-2014\"\nsupervision = \"reduced\"\n\n\
                [laws]\nfivefold = \"any\"\n",
    );
    assert_eq!(c.laws.supervision, Supervision::Reduced);
    assert_eq!(c.laws.fivefold, FivefoldRule::Any);
    let edition = LawsConfig::for_edition(Laws::Fide2014);
    assert_eq!(c.laws.both_flags, edition.both_flags);
    assert_eq!(c.laws_setup().cfg, c.laws);
}

#[test]
fn columns_count_characters_not_bytes() {
    assert_eq!(
        one_error("tournament = { site = \"Алматы\", laws = \"fide-1\" }\n"),
        "venue.toml:1:40: unknown laws edition \"fide-1\"; valid: fide-2001, fide-2009, \
         fide-2014, fide-2018, fide-2023"
    );
}

#[test]
fn bind_address() {
    assert_eq!(
        one_error("[http]\nbind = \"localhost\"\n"),
        "venue.toml:2:8: invalid bind address \"localhost\"; valid: an IP address and port \
         such as 127.0.0.1:8080, 0.0.0.0:80 or [::]:8080"
    );
}

#[test]
fn board_kind_number_and_layout() {
    // Every kind the daemon reads, in its one list's order.
    let kinds = crate::kind::BoardKind::ALL.map(|k| k.name()).join(", ");
    assert!(kinds.starts_with("dgt, togyz, chesslink, chessnut, certabo"));
    assert_eq!(
        one_error("[[board]]\nnumber = 1\nkind = \"chess\"\nport = \"/dev/ttyACM0\"\n"),
        format!("venue.toml:3:8: unknown board kind \"chess\"; valid: {kinds}")
    );
    assert_eq!(
        one_error("[[board]]\nnumber = 0\nkind = \"dgt\"\nport = \"/dev/ttyACM0\"\n"),
        "venue.toml:2:10: board number 0 is not valid; valid: a whole number of 1 or more"
    );
    assert_eq!(
        one_error(&format!(
            "{BOARD_HEAD}port = \"/dev/ttyACM0\"\nclock_layout = \"h15\"\n"
        )),
        "venue.toml:5:16: unknown clock_layout \"h15\"; valid: h17 (dgtbrd.h 2011-2017, the \
         default), h13 (dgtbrd13.h 1998)"
    );
    assert_eq!(
        one_error(
            "[[board]]\nnumber = 1\nkind = \"togyz\"\nport = \"/dev/ttyACM0\"\nclock_layout = \"h13\"\n"
        ),
        "venue.toml:5:16: clock_layout is for dgt boards; remove it from this togyz board"
    );
    let c = ok(&format!(
        "{BOARD_HEAD}port = \"/dev/ttyACM0\"\nclock_layout = \"h13\"\n"
    ));
    assert_eq!(c.boards[0].clock_layout, ClockLayout::H13);
}

#[test]
fn a_duplicate_board_number_points_at_the_second() {
    let text = "[[board]]\nnumber = 7\nkind = \"dgt\"\nport = \"/dev/ttyACM0\"\n\n\
                [[board]]\nnumber = 7\nkind = \"dgt\"\nport = \"/dev/ttyACM1\"\n";
    assert_eq!(
        one_error(text),
        "venue.toml:7:10: board number 7 is already used at line 2; give each board its own number"
    );
}

#[test]
fn two_boards_on_one_device_or_one_name() {
    let text = "[[board]]\nnumber = 1\nkind = \"dgt\"\nserial = \"A1\"\n\n\
                [[board]]\nnumber = 2\nkind = \"dgt\"\nserial = \"A1\"\n";
    assert_eq!(
        one_error(text),
        "venue.toml:9:10: board 2 has the same serial A1 as board 1 (line 4); each board needs \
         its own device"
    );
    let text = "[[board]]\nnumber = 1\nkind = \"dgt\"\nname = \"Top\"\nserial = \"A1\"\n\n\
                [[board]]\nnumber = 2\nkind = \"dgt\"\nname = \"Top\"\nserial = \"A2\"\n";
    assert_eq!(
        one_error(text),
        "venue.toml:10:8: board name \"Top\" is already used at line 4; give each board its own name"
    );
}

#[test]
fn exactly_one_way_to_find_a_board() {
    assert_eq!(
        one_error("\n[[board]]\nnumber = 2\nkind = \"dgt\"\n"),
        "venue.toml:2:1: board 2 says nowhere how to find it; give exactly one of serial = \"…\" \
         (USB serial number), symlink = \"/dev/eboard/…\" or port = \"/dev/ttyACM0\""
    );
    assert_eq!(
        one_error(&format!(
            "{BOARD_HEAD}serial = \"A1\"\nport = \"/dev/ttyACM0\"\n"
        )),
        "venue.toml:5:8: board 2 gives both serial and port; give exactly one of serial, symlink, \
         port or usb_port"
    );
    assert_eq!(
        one_error(&format!("{BOARD_HEAD}symlink = \"eboard/dgt-1\"\n")),
        "venue.toml:4:11: symlink \"eboard/dgt-1\" is not an absolute path; valid: e.g. \
         \"/dev/eboard/dgt-12345\""
    );
    assert_eq!(
        one_error(&format!("{BOARD_HEAD}serial = \"  \"\n")),
        "venue.toml:4:10: serial is empty; give one, e.g. \"12345\""
    );
}

#[test]
fn relay_and_admin_tables() {
    assert_eq!(
        one_error("[relay.lichess]\nround = \"AbCd1234\"\n"),
        "venue.toml:1:1: [relay.lichess] needs `token_file`; add e.g. token_file = \
         \"/etc/boardscribe/lichess.token\""
    );
    assert_eq!(
        one_error(
            "[relay.lichess]\nround = \"AbCd1234\"\ntoken_file = \"/t\"\nbase_url = \"lichess.org\"\n"
        ),
        "venue.toml:4:12: base_url \"lichess.org\" is not an http(s) URL; valid: e.g. \
         \"https://lichess.org\""
    );
    assert_eq!(
        one_error("[relay.folder]\n"),
        "venue.toml:1:1: [relay.folder] needs `dir`; add e.g. dir = \"/var/lib/boardscribe/relay\""
    );
    assert_eq!(
        one_error("[admin]\n"),
        "venue.toml:1:1: [admin] needs `token_file`; add e.g. token_file = \
         \"/etc/boardscribe/admin.token\""
    );
    let c = ok(
        "[relay.lichess]\nround = \"AbCd1234\"\ntoken_file = \"/t\"\nbase_url = \"http://localhost:9663/\"\n",
    );
    assert_eq!(c.relay.lichess[0].base_url, "http://localhost:9663");
}

#[test]
fn every_mistake_is_reported_in_file_order() {
    let text = "[[board]]\nnumber = 1\nkind = \"chess\"\nport = \"/dev/ttyACM0\"\n\n\
                [tournament]\nlaws = \"fide-2017\"\n";
    let e = errors(text);
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].starts_with("venue.toml:3:8: unknown board kind"),
        "{e:?}"
    );
    assert!(
        e[1].starts_with("venue.toml:7:8: unknown laws edition"),
        "{e:?}"
    );
    let whole = Config::from_toml(text, "venue.toml")
        .unwrap_err()
        .to_string();
    assert_eq!(whole, e.join("\n"));
}

#[test]
fn flags_win_over_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("boardscribe.toml");
    std::fs::write(
        &path,
        "database = \"from-file.db\"\n[[board]]\nnumber = 9\nkind = \"togyz\"\nserial = \"T\"\n",
    )
    .unwrap();
    let c = Config::load(Some(&path), ConfigOverrides::default()).unwrap();
    assert_eq!(c.source.as_deref(), Some(path.as_path()));
    assert_eq!(c.database, PathBuf::from("from-file.db"));
    assert_eq!(c.boards.len(), 1);
    let overrides = ConfigOverrides {
        database: Some("flag.db".into()),
        http: Some("0.0.0.0:9000".parse().unwrap()),
        ports: vec!["/dev/pts/3".into(), "/dev/pts/4".into()],
        port_kind: BoardKind::Dgt,
        delay_ms: Some(90_000),
    };
    let c = Config::load(Some(&path), overrides).unwrap();
    assert_eq!(c.database, PathBuf::from("flag.db"));
    assert_eq!(c.http, Some("0.0.0.0:9000".parse().unwrap()));
    let boards: Vec<(u32, BoardKind, Locator)> = c
        .boards
        .iter()
        .map(|b| (b.number, b.kind, b.locator.clone()))
        .collect();
    assert_eq!(
        boards,
        [
            (1, BoardKind::Dgt, Locator::Port("/dev/pts/3".into())),
            (2, BoardKind::Dgt, Locator::Port("/dev/pts/4".into())),
        ]
    );
    // No file: the defaults and the flags.
    let c = Config::load(None, ConfigOverrides::default()).unwrap();
    assert_eq!(c, Config::default());
}

#[test]
fn errors_name_the_file_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hall.toml");
    std::fs::write(&path, "[tournament]\nlaws = \"uscf\"\n").unwrap();
    let e = Config::load(Some(&path), ConfigOverrides::default()).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "{}:2:8: unknown laws edition \"uscf\"",
            path.display()
        )),
        "{e}"
    );
    let missing = dir.path().join("nope.toml");
    let e = Config::load(Some(&missing), ConfigOverrides::default()).unwrap_err();
    assert!(matches!(e, ConfigError::Read { .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("{}: cannot read: ", missing.display())),
        "{e}"
    );
}

#[test]
fn federation_picks_the_preset_and_overrides_still_win() {
    assert_eq!(
        one_error("[tournament]\nfederation = \"fica\"\n"),
        "venue.toml:2:14: unknown federation \"fica\"; valid: fide, uscf"
    );
    let c = ok("[tournament]\nlaws = \"fide-2018\"\nfederation = \"USCF\"\n");
    assert_eq!(c.tournament.federation, Federation::Uscf);
    assert_eq!(c.laws, LawsConfig::preset(Laws::Fide2018, Federation::Uscf));
    assert_eq!(c.laws.illegal_strikes_to_lose, None);
    let c = ok("[tournament]\nfederation = \"uscf\"\n\n[laws]\nillegal_strikes_to_lose = 3\n");
    assert_eq!(c.laws.federation, Federation::Uscf);
    assert_eq!(c.laws.illegal_strikes_to_lose, Some(3));
    assert_eq!(
        c.laws.penalty_secs_blitz, 120,
        "the rest stays the preset's"
    );
    assert_eq!(ok("").laws.federation, Federation::Fide);
}

#[test]
fn clk_format_is_checked_and_reaches_the_relays() {
    assert_eq!(
        one_error("[relay]\nclk_format = \"mm:ss\"\n"),
        "venue.toml:2:14: unknown clk_format \"mm:ss\"; valid: h:mm:ss, hh:mm:ss"
    );
    let c = ok("[relay]\nclk_format = \"hh:mm:ss\"\n");
    assert_eq!(c.relay.clk_format, ClockFormat::HhMmSs);
    assert_eq!(ok("").relay.clk_format, ClockFormat::HMmSs);
}

#[test]
fn the_example_bus_holds_its_boards_by_address() {
    let c = ok(EXAMPLE);
    assert_eq!(c.buses.len(), 1);
    let bus = &c.buses[0];
    assert_eq!(bus.name, "hall-a");
    assert_eq!(bus.locator, Locator::Port("/dev/ttyUSB1".into()));
    let got: Vec<(u32, &str, u16)> = bus
        .boards
        .iter()
        .map(|b| (b.board.number, b.serial.as_str(), b.address))
        .collect();
    assert_eq!(got, [(5, "01025", 0x401), (6, "01026", 0x402)]);
    assert_eq!(bus.boards[0].board.locator, bus.locator);
    assert_eq!(bus.boards[0].board.name, "board 5");
    // Bus boards are not boards on their own port.
    assert!(c.boards.iter().all(|b| b.number < 5));
}

#[test]
fn bus_mistakes_are_reported_where_they_are() {
    let bus = "[[bus]]\nname = \"hall-a\"\nport = \"/dev/ttyUSB1\"\n";
    let e = one_error(&format!(
        "{bus}{BOARD_HEAD}bus = \"hall-b\"\nbus_serial = \"01025\"\n"
    ));
    assert_eq!(
        e,
        "venue.toml:7:7: board 2: bus \"hall-b\" is not defined; valid: \"hall-a\""
    );
    let e = one_error(&format!(
        "{bus}{BOARD_HEAD}bus = \"hall-a\"\nbus_serial = \"1x\"\n"
    ));
    assert!(
        e.starts_with("venue.toml:8:14: bus_serial \"1x\" is not a board serial number"),
        "{e}"
    );
    let e = one_error(&format!("{bus}{BOARD_HEAD}bus = \"hall-a\"\n"));
    assert!(e.contains("needs `bus_serial`"), "{e}");
    let e = one_error(&format!(
        "{bus}{BOARD_HEAD}bus = \"hall-a\"\nbus_serial = \"01025\"\nport = \"/dev/ttyUSB3\"\n"
    ));
    assert!(
        e.starts_with("venue.toml:9:8: board 2 is on bus \"hall-a\""),
        "{e}"
    );
    let e = one_error(&format!(
        "{bus}{BOARD_HEAD}bus = \"hall-a\"\nbus_serial = \"01025\"\n\
         [[board]]\nnumber = 3\nkind = \"dgt\"\nbus = \"hall-a\"\nbus_serial = \"1025\"\n"
    ));
    assert!(
        e.starts_with(
            "venue.toml:13:14: board 3: bus_serial \"1025\" gives bus address 1025 like board 2"
        ),
        "{e}"
    );
    let e = one_error(&format!("{bus}{BOARD_HEAD}port = \"/dev/ttyUSB1\"\n"));
    assert!(
        e.starts_with("venue.toml:3:8: bus \"hall-a\" has the same port /dev/ttyUSB1 as board 2"),
        "{e}"
    );
    let e = one_error("[[bus]]\nname = \"hall-a\"\n");
    assert!(
        e.starts_with("venue.toml:1:1: bus \"hall-a\" says nowhere how to find it"),
        "{e}"
    );
    let e = one_error(&format!(
        "{BOARD_HEAD}port = \"/dev/ttyUSB0\"\nbus_serial = \"01025\"\n"
    ));
    assert!(e.contains("bus_serial is for boards on a bus"), "{e}");
}

#[test]
fn relay_delay_slices_and_several_lichess_rounds() {
    let c = ok(
        "[relay]\ndelay = \"15m\"\npublic_comments = true\nslice = 100\n\n\
         [[relay.lichess]]\nrounds = { 1 = \"AAAAaaaa\", 2 = \"AAAAbbbb\" }\ntoken_file = \"/t\"\nboards = \"1-100\"\n\n\
         [[relay.lichess]]\nrounds = { 1 = \"BBBBaaaa\" }\ntoken_file = \"/t\"\nboards = \"101-150\"\n",
    );
    assert_eq!(c.relay.delay_ms, 15 * 60_000);
    assert!(c.relay.public_comments);
    assert_eq!(c.relay.slice, 100);
    let rounds: Vec<(String, String)> = c
        .relay
        .lichess
        .iter()
        .map(|l| (l.rounds.to_string(), l.boards.as_ref().unwrap().to_string()))
        .collect();
    assert_eq!(
        rounds,
        [
            ("rounds 1 = AAAAaaaa, 2 = AAAAbbbb".into(), "1-100".into()),
            ("rounds 1 = BBBBaaaa".into(), "101-150".into())
        ]
    );
    // Every mistake of the table in one pass, each at its place.
    let e = errors(
        "[relay]\ndelay = \"2h\"\nslice = 500\n\n[[relay.lichess]]\nround = \"AbCd1234\"\n\
         token_file = \"/t\"\nboards = \"9-3\"\n",
    );
    assert_eq!(e.len(), 3, "{e:?}");
    for ((line, what), got) in [
        (2, "longer than 60 minutes"),
        (3, "1 to 100"),
        (8, "board numbers"),
    ]
    .into_iter()
    .zip(&e)
    {
        assert!(
            got.starts_with(&format!("venue.toml:{line}:")) && got.contains(what),
            "{e:?}"
        );
    }
}

#[test]
fn a_cluster_table_makes_a_hall_or_the_event_node() {
    let hall = ok("[cluster]\nurl = \"nats://10.0.0.5:4222, tls://10.0.0.6:4222\"\nhall = \"A\"\n");
    let c = hall.cluster.clone().expect("[cluster]");
    assert_eq!(c.urls, ["nats://10.0.0.5:4222", "tls://10.0.0.6:4222"]);
    assert_eq!(c.hall.as_deref(), Some("A"));
    assert!(c.halls.is_empty());
    assert_eq!(c.replicas, 1);
    assert!(hall.summary().contains("cluster: hall A, publishing to"));
    let event = ok(
        "[cluster]\nurl = \"nats://127.0.0.1:4222\"\nhalls = [\"A\", \"hall-2\"]\nreplicas = 3\n\
         creds_file = \"/etc/boardscribe/event.creds\"\n",
    );
    let c = event.cluster.clone().expect("[cluster]");
    assert_eq!(c.halls, ["A", "hall-2"]);
    assert_eq!(c.replicas, 3);
    assert_eq!(c.hall_silent_after_ms, 15_000);
    let patient =
        ok("[cluster]\nurl = \"nats://h:4222\"\nhalls = [\"A\"]\nhall_silent_after = \"1m\"\n");
    assert_eq!(
        patient.cluster.expect("[cluster]").hall_silent_after_ms,
        60_000
    );
    assert_eq!(
        c.creds_file,
        Some(PathBuf::from("/etc/boardscribe/event.creds"))
    );
    assert!(
        event
            .summary()
            .contains("event node following halls A, hall-2")
    );
}

#[test]
fn cluster_mistakes_are_named_where_they_are() {
    assert!(
        one_error("[cluster]\nhall = \"A\"\n").contains("[cluster] needs `url`"),
        "a hall without url"
    );
    let e = one_error("[cluster]\nurl = \"10.0.0.5:4222\"\nhall = \"A\"\n");
    assert!(
        e.starts_with("venue.toml:2:7:") && e.contains("nats:// or tls://"),
        "{e}"
    );
    let e = one_error("[cluster]\nurl = \"nats://h:4222\"\nhall = \"hall A\"\n");
    assert!(
        e.starts_with("venue.toml:3:8:") && e.contains("not a hall name"),
        "{e}"
    );
    let e = one_error("[cluster]\nurl = \"nats://h:4222\"\nhalls = [\"A\", \"A\"]\n");
    assert!(e.contains("listed twice"), "{e}");
    let e = one_error("[cluster]\nurl = \"nats://h:4222\"\nhall = \"A\"\nhalls = [\"B\"]\n");
    assert!(e.contains("a process is one or the other"), "{e}");
    let e = one_error("[cluster]\nurl = \"nats://h:4222\"\nhall = \"A\"\nreplicas = 7\n");
    assert!(e.contains("replicas = 7"), "{e}");
    let e = one_error(
        "[cluster]\nurl = \"nats://h:4222\"\nhalls = [\"A\"]\nhall_silent_after = \"2s\"\n",
    );
    assert!(
        e.starts_with("venue.toml:4:21:") && e.contains("6s\" or more"),
        "{e}"
    );
    let e = one_error(
        "[cluster]\nurl = \"nats://h:4222\"\nhall = \"A\"\ntls_cert_file = \"/etc/c.pem\"\n",
    );
    assert!(e.contains("tls_cert_file and tls_key_file together"), "{e}");
    let e = one_error("[cluster]\nurl = \"nats://h:4222\"\nhal = \"A\"\n");
    assert!(e.contains("hal"), "{e}");
}

#[test]
fn lichess_rounds_map_event_rounds_to_eight_character_ids() {
    let c = ok(
        "[[relay.lichess]]\nrounds = { 2 = \"RoundTwo\", 1 = \"RoundOne\" }\ntoken_file = \"/t\"\n",
    );
    assert_eq!(
        c.relay.lichess[0].rounds,
        crate::broadcast::lichess::plan::LichessRounds::Map(
            [(1, "RoundOne".to_owned()), (2, "RoundTwo".to_owned())].into()
        )
    );
    for (text, line, what) in [
        ("rounds = { 1 = \"short\" }", 2, "not a Lichess round id"),
        ("round = \"AbCd-234\"", 2, "not a Lichess round id"),
        ("rounds = { first = \"RoundOne\" }", 2, "not a round number"),
        ("rounds = { 0 = \"RoundOne\" }", 2, "not a round number"),
        ("rounds = {}", 2, "rounds is empty"),
        (
            "round = \"RoundOne\"\nrounds = { 1 = \"RoundOne\" }",
            3,
            "not both",
        ),
        ("boards = \"1-4\"", 1, "needs `rounds`"),
    ] {
        let e = one_error(&format!("[[relay.lichess]]\n{text}\ntoken_file = \"/t\"\n"));
        assert!(
            e.starts_with(&format!("venue.toml:{line}:")) && e.contains(what),
            "{text}: {e}"
        );
    }
}

/// Issue 33: `[tournament] notation` is read with the event's language; `local` in a language
/// whose Laws text gives no piece letters to print works (figurines) and is warned of.
#[test]
fn notation_is_read_and_local_without_letters_is_warned_of() {
    let c = ok(EXAMPLE);
    assert_eq!(c.tournament.notation, Notation::San);
    assert!(!c.summary().contains("notation"), "san is the default");

    let text = |language: &str, notation: &str| {
        format!("[tournament]\nlanguage = \"{language}\"\nnotation = \"{notation}\"\n")
    };
    let c = ok(&text("ru", "local"));
    assert_eq!(c.tournament.notation, Notation::Local);
    assert_eq!(c.warnings, []);
    assert!(
        c.summary()
            .contains("notation: local on the sheets (Кр Ф Л С К)\n"),
        "{}",
        c.summary()
    );

    let c = ok(&text("mn", "local"));
    assert_eq!(c.tournament.notation, Notation::Local);
    let [warning] = c.warnings.as_slice() else {
        panic!("one warning: {:?}", c.warnings)
    };
    assert_eq!(
        warning.to_string().lines().next().unwrap_or_default(),
        "venue.toml:3:12: warning: notation = \"local\" with language = \"mn\": Mongolian's Laws \
         text gives the rook and the bishop the one letter Т, so the sheets print figurines; \
         write notation = \"figurine\" to say so, or \"san\" for English letters"
    );
    assert!(
        c.summary().contains(
            "notation: local on the sheets (♔ ♕ ♖ ♗ ♘: Mongolian's Laws text gives the rook and \
             the bishop the one letter Т)\n"
        ),
        "{}",
        c.summary()
    );

    // A warning exactly where the language's letters are not there to print.
    for lang in crate::lang::Lang::ALL {
        let c = ok(&text(lang.code(), "local"));
        assert_eq!(
            c.warnings.len(),
            usize::from(lang.piece_letters().is_err()),
            "{lang}: {:?}",
            c.warnings
        );
        let c = ok(&text(lang.code(), "figurine"));
        assert_eq!(c.warnings, [], "{lang}: figurines were asked for");
        assert!(
            c.summary()
                .contains("notation: figurine on the sheets (♔ ♕ ♖ ♗ ♘)\n")
        );
    }
    let c = ok("[tournament]\nnotation = \"local\"\n");
    assert_eq!(
        (c.tournament.language, c.warnings.len()),
        (crate::lang::Lang::En, 0),
        "English's letters are SAN's"
    );

    assert_eq!(
        one_error("[tournament]\nnotation = \"Figurines\"\n"),
        "venue.toml:2:12: unknown notation \"Figurines\"; valid: san, figurine, local"
    );
}

/// Issue 34: `[tournament] tiebreaks` lists the tie-breaks in order; without it FIDE's usual
/// Swiss list stands; an unknown or repeated name is refused where it is written.
#[test]
fn tiebreaks_are_read_in_order_and_an_unknown_one_is_refused() {
    use crate::standings::TieBreak;
    let c = ok(EXAMPLE);
    assert_eq!(c.tournament.tiebreaks.0, TieBreak::DEFAULT.to_vec());
    assert!(
        !c.summary().contains("tiebreaks"),
        "the default is not worth a line"
    );

    let c = ok("[tournament]\ntiebreaks = [\"sonneborn-berger\", \"direct-encounter\"]\n");
    assert_eq!(
        c.tournament.tiebreaks.0,
        [TieBreak::SonnebornBerger, TieBreak::DirectEncounter]
    );
    assert!(
        c.summary()
            .contains("tiebreaks: sonneborn-berger,direct-encounter\n"),
        "{}",
        c.summary()
    );

    let e = one_error("[tournament]\ntiebreaks = [\"buchholz\", \"koya\"]\n");
    assert!(
        e.starts_with("venue.toml:2:13:") && e.contains("unknown tie-break \"koya\""),
        "{e}"
    );
    let e = one_error("[tournament]\ntiebreaks = [\"wins\", \"wins\"]\n");
    assert!(e.contains("tie-break wins is listed twice"), "{e}");
}

#[test]
fn a_board_is_found_by_its_usb_port_path() {
    let c = ok(&format!("{BOARD_HEAD}usb_port = \"1-1.4\"\n"));
    assert_eq!(c.boards[0].locator, Locator::UsbPort("1-1.4".into()));
    assert_eq!(
        one_error(&format!(
            "{BOARD_HEAD}usb_port = \"1-1.4\"\nport = \"/dev/hidraw0\"\n"
        )),
        "venue.toml:4:12: board 2 gives both port and usb_port; give exactly one of serial, \
         symlink, port or usb_port"
    );
}
