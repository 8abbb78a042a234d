//! Issue 16 item 7: the arbiter names a game by its board ("board 12") and a ply by its move
//! ("move 34, black"), and reads a game's history in words; scripts keep `--game`, `--ply` and
//! `history --json` as they were. The game is the real capture of a whole game, replayed twice
//! on board 12 of round 3 through the binary, as an arbiter would after a round.

use std::process::{Command, Output};

use boardscribe::{
    game::Kind,
    store::{GameId, RoundInfo, Store},
};
use jiff::{
    Timestamp,
    tz::{Offset, TimeZone},
};

const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/captures/dgt-arnsholt/1.capture"
);

/// The machine's zone for these runs: five hours east of UTC, as a POSIX TZ (no tzdb needed).
const TZ: &str = "<+05>-5";

fn boardscribe(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(args)
        .env("USER", "cli-tester")
        .env("TZ", TZ)
        .env("BOARDSCRIBE_LOG", "warn")
        .output()
        .unwrap()
}

/// Stdout and stderr of a command that must succeed.
fn ok(args: &[&str]) -> (String, String) {
    let out = boardscribe(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

fn fails(args: &[&str]) -> String {
    let out = boardscribe(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `history --json` as it always printed the store's history (the contract for scripts).
fn history_as_stored(store: &Store, game: GameId) -> String {
    let mut out = String::new();
    for h in store.history(game).unwrap() {
        let e = &h.event;
        let ply = e.ply.map(|p| format!(" ply {p}")).unwrap_or_default();
        out.push_str(&format!(
            "#{} at_ms {} {}{ply} {}\n",
            e.id, e.at_ms, e.kind, e.detail
        ));
        if !h.retracted.is_empty() {
            let moves: Vec<String> = h
                .retracted
                .iter()
                .map(|m| format!("{}:{}", m.ply, m.notation))
                .collect();
            out.push_str(&format!("    retracted: {}\n", moves.join(" ")));
        }
    }
    out
}

#[test]
fn the_arbiter_names_games_by_board_and_plies_by_move() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("round3.db");
    let db = db_path.to_str().unwrap();
    let capture = dir.path().join("board12.capture");
    std::fs::copy(CAPTURE, &capture).unwrap();
    {
        let mut store = Store::open(&db_path).unwrap();
        let board = store.board("board12", Kind::Chess).unwrap();
        store.set_board_number(board, 12).unwrap();
        store
            .set_round(&RoundInfo {
                event: "Open".into(),
                site: "Almaty".into(),
                round: 3,
            })
            .unwrap();
    }
    // The same game twice on board 12: two games of round 3 (1, then 2).
    for _ in 0..2 {
        ok(&["replay", "-q", capture.to_str().unwrap(), "--db", db]);
    }
    let a = |rest: &[&'static str]| [&["arbiter", "--db", db][..], rest].concat();

    // Board 12 has two games this round: the latest is taken, and the arbiter is told.
    let (out, err) = ok(&a(&[
        "note",
        "--board",
        "12",
        "--move",
        "3b",
        "--text",
        "hand on the knight",
        "--author",
        "Chief",
    ]));
    assert!(
        out.starts_with("decision") && out.contains("on game 2 by Chief: note after ply 6"),
        "{out}"
    );
    assert!(
        err.contains("board 12: 2 games in round 3 (1, 2); taking the latest, game 2"),
        "{err}"
    );
    // A move with its number: white's ninth, h3 as sensed, was a3.
    let (out, _) = ok(&a(&[
        "correct", "--board", "12", "--move", "9w a3", "--note", "sensor",
    ]));
    assert!(
        out.contains("on game 2 by cli-tester: ply 17: h3 -> a3"),
        "{out}"
    );
    // The contract form still works, on the other game.
    let (out, _) = ok(&a(&[
        "correct", "--game", "1", "--ply", "17", "--move", "a3",
    ]));
    assert!(
        out.contains("on game 1 by cli-tester: ply 17: h3 -> a3"),
        "{out}"
    );
    // A number alone is two plies once both are played: the arbiter is asked which.
    let err = fails(&a(&["correct", "--board", "12", "--move", "9 a3"]));
    assert!(
        err.contains(
            "game 2: move 9 is two plies, white's a3 and black's c5: say 9w (ply 17) or 9b (ply 18)"
        ),
        "{err}"
    );
    let err = fails(&a(&["note", "--game", "2", "--move", "40", "--text", "x"]));
    assert!(
        err.contains("game 2 has no move 40 yet: its record has 57 plies, the last 29. Bf6"),
        "{err}"
    );
    // ...and the last move alone is white's: 29 is ply 57.
    let (out, _) = ok(&a(&[
        "note", "--game", "2", "--move", "29", "--text", "flag?",
    ]));
    assert!(out.contains("note after ply 57"), "{out}");
    let err = fails(&a(&["note", "--game", "2", "--move", "0b", "--text", "x"]));
    assert!(err.contains("move numbers count from 1"), "{err}");
    // A ruling takes the move play went on before the same way (this game has no
    // irregularity to rule on: the move number is read first, then the store refuses).
    let rule = [
        "rule",
        "--board",
        "12",
        "--irregularity",
        "1",
        "--ruling",
        "reinstated",
    ];
    let err = fails(&a(&[&rule[..], &["--move", "12b"]].concat()));
    assert!(err.contains("no irregularity 1"), "{err}");
    let err = fails(&a(&[&rule[..], &["--move", "12x"]].concat()));
    assert!(err.contains("\"12x\" is not a move number"), "{err}");
    let err = fails(&a(&rule));
    assert!(
        err.contains("--ruling reinstated needs --ply or --move"),
        "{err}"
    );
    let err = fails(&a(&["correct", "--board", "12", "--move", "9b"]));
    assert!(err.contains("give the move number, then the move"), "{err}");
    // Resume after black's 28th: the one move after it is withdrawn.
    let (out, _) = ok(&a(&["resume", "--board", "12", "--after-move", "28b"]));
    assert!(
        out.contains("on game 2 by cli-tester: resumed after ply 56 (1 move(s) withdrawn)"),
        "{out}"
    );
    let (out, _) = ok(&a(&[
        "result",
        "--board",
        "12",
        "--result",
        "0-1",
        "--reason",
        "resignation",
        "--note",
        "resigned",
        "--author",
        "Chief",
    ]));
    assert!(
        out.contains("on game 2 by Chief: result 0-1 (resignation), was *"),
        "{out}"
    );

    // The history in words: local time, board and game, move, what, by whom.
    let (words, _) = ok(&a(&["history", "--board", "12"]));
    let lines: Vec<&str> = words.lines().collect();
    let store = Store::open(&db_path).unwrap();
    let events = store.history(GameId(2)).unwrap();
    let decisions: Vec<_> = events
        .iter()
        .filter(|h| h.event.kind == "decision")
        .collect();
    assert_eq!(decisions.len(), 5, "{words}");
    let zone = TimeZone::fixed(Offset::constant(5));
    let local = |ms: u64| {
        Timestamp::from_millisecond(ms as i64)
            .unwrap()
            .to_zoned_datetime(zone.clone())
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string()
    };
    let at = |i: usize| local(decisions[i].event.at_ms);
    let head = "board 12 (game 2)";
    for want in [
        format!(
            "{}  {head}  move 3 black   note by Chief: \"hand on the knight\"",
            at(0)
        ),
        format!(
            "{}  {head}  move 9 white   move corrected: 9. h3 -> a3 (41 move(s) re-recorded) by \
             cli-tester: \"sensor\"",
            at(1)
        ),
        "    withdrawn: 9. h3 9... c5 10. Nd5 10... Be7".to_owned(),
        format!(
            "{}  {head}  move 29 white  note by cli-tester: \"flag?\"",
            at(2)
        ),
        format!(
            "{}  {head}  move 29 white  game resumed after move 28 black (1 move(s) withdrawn) \
             by cli-tester",
            at(3)
        ),
        format!(
            "{}  {head}  move 29 white  result set to 0-1 (resignation, was *) by Chief: \
             \"resigned\"",
            at(4)
        ),
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(&want)),
            "no line {want:?} in\n{words}"
        );
    }
    // The board's own events are on the capture's clock (its seconds from 0).
    assert!(
        lines[0].starts_with("capture +0:00:") && lines[0].ends_with("move 1 white   game started"),
        "{words}"
    );
    assert_eq!(
        lines.len(),
        events.len() + 2,
        "one line each, and two withdrawals"
    );

    // For scripts, byte for byte what history printed before it spoke in words.
    let (json, _) = ok(&a(&["history", "--game", "2", "--json"]));
    assert_eq!(json, history_as_stored(&store, GameId(2)));
    drop(store);

    // What is missing is said.
    let err = fails(&a(&["history", "--board", "99"]));
    assert!(err.contains("board 99: no board has this number"), "{err}");
    let err = fails(&a(&["history", "--board", "12", "--game", "2"]));
    assert!(err.contains("cannot be used with"), "{err}");
    {
        let mut store = Store::open(&db_path).unwrap();
        store
            .set_round(&RoundInfo {
                event: "Open".into(),
                site: "Almaty".into(),
                round: 4,
            })
            .unwrap();
    }
    let err = fails(&a(&["history", "--board", "12"]));
    assert!(
        err.contains(
            "board 12: no game in round 4 (the current round); its latest game is 2, of round 3: \
             give --game 2"
        ),
        "{err}"
    );
}

/// Issue 31: an author or a note holding a control character (an escape sequence that clears
/// the screen, a line break that starts a forged line) is refused by every arbiter command,
/// and nothing is written; one already in an old database is shown escaped by `history`, one
/// line per event as ever.
#[test]
fn control_characters_are_refused_in_decisions_and_shown_escaped_from_old_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("round.db");
    let db = db_path.to_str().unwrap();
    {
        let mut store = Store::open(&db_path).unwrap();
        let board = store.board("board12", Kind::Chess).unwrap();
        store.set_board_number(board, 12).unwrap();
    }
    let capture = dir.path().join("board12.capture");
    std::fs::copy(CAPTURE, &capture).unwrap();
    ok(&["replay", "-q", capture.to_str().unwrap(), "--db", db]);
    let a = |rest: &[&str]| -> Vec<String> {
        ["arbiter", "--db", db]
            .iter()
            .chain(rest)
            .map(|s| s.to_string())
            .collect()
    };
    let clear = "Chief\u{1b}[2J";
    let forged = "Chief\n2026-12-02 15:00:00  board 12 (game 1)  result set to 1-0 by Chief";
    let refused: [(Vec<String>, &str); 6] = [
        (
            a(&["note", "--board", "12", "--text", "seen", "--author", clear]),
            "the author holds a control character (U+001B) at character 6",
        ),
        (
            a(&["note", "--board", "12", "--text", forged]),
            "the note holds a control character (U+000A) at character 6",
        ),
        (
            a(&[
                "result",
                "--board",
                "12",
                "--result",
                "0-1",
                "--reason",
                "resignation",
                "--author",
                forged,
            ]),
            "the author holds a control character (U+000A) at character 6",
        ),
        (
            a(&[
                "result",
                "--board",
                "12",
                "--result",
                "0-1",
                "--reason",
                "resignation",
                "--note",
                clear,
            ]),
            "the note holds a control character (U+001B) at character 6",
        ),
        (
            a(&[
                "correct", "--board", "12", "--move", "9w a3", "--note", "a\tb",
            ]),
            "the note holds a control character (U+0009) at character 2",
        ),
        (
            ["round", "start", "2", "--db", db, "--by", clear]
                .map(str::to_owned)
                .to_vec(),
            "the name of who started the round holds a control character (U+001B) at character 6",
        ),
    ];
    for (args, want) in &refused {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = fails(&args);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            !err.contains('\u{1b}'),
            "the refusal echoes no escape: {err:?}"
        );
    }
    let store = Store::open(&db_path).unwrap();
    assert!(
        store.decisions(GameId(1)).unwrap().is_empty(),
        "nothing decided"
    );
    assert!(store.rounds().unwrap().is_empty(), "no round started");
    let events = store.history(GameId(1)).unwrap().len();
    drop(store);

    // A note and a result, then the same two as an old database may keep them, taken before
    // the rule with control characters in their author and note: written here straight into
    // the table (events are never updated, so as new rows).
    ok(&[
        "arbiter", "--db", db, "note", "--board", "12", "--text", "seen",
    ]);
    ok(&[
        "arbiter",
        "--db",
        db,
        "result",
        "--board",
        "12",
        "--result",
        "0-1",
        "--reason",
        "resignation",
        "--note",
        "resigned",
    ]);
    let conn = rusqlite::Connection::open(&db_path).unwrap();
    let written = conn
        .execute(
            "INSERT INTO events (game_id, board_id, at_ms, kind, ply, detail) \
             SELECT game_id, board_id, at_ms, kind, ply, \
             json_set(detail, '$.author', ?1, '$.note', ?2) \
             FROM events WHERE kind = 'decision' ORDER BY id",
            (forged, "x\u{1b}]0;pwned\u{7}\r\ny"),
        )
        .unwrap();
    assert_eq!(written, 2);
    drop(conn);

    let (words, _) = ok(&["arbiter", "--db", db, "history", "--board", "12"]);
    assert!(
        !words.chars().any(|c| c.is_control() && c != '\n'),
        "a control character reached the terminal: {words:?}"
    );
    let lines: Vec<&str> = words.lines().collect();
    assert_eq!(lines.len(), events + 4, "one line per event: {words}");
    let escaped = "by Chief\\u{a}2026-12-02 15:00:00  board 12 (game 1)  result set to 1-0 by \
                   Chief: \"x\\u{1b}]0;pwned\\u{7}\\r\\ny\"";
    let shown: Vec<&&str> = lines.iter().filter(|l| l.ends_with(escaped)).collect();
    assert_eq!(shown.len(), 2, "both decisions, escaped:\n{words}");
    assert!(shown[0].contains("  note by Chief\\u{a}"), "{}", shown[0]);
    assert!(
        shown[1].contains("  result set to 0-1 (resignation, was *) by Chief\\u{a}"),
        "{}",
        shown[1]
    );
    // `--json` was already safe: JSON escapes them.
    let (json, _) = ok(&["arbiter", "--db", db, "history", "--board", "12", "--json"]);
    assert!(
        !json.chars().any(|c| c.is_control() && c != '\n'),
        "{json:?}"
    );
    assert!(json.contains("\\u001b]0;pwned\\u0007\\r\\ny"), "{json}");
}
