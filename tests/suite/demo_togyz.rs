//! `boardscribe demo` as a newcomer meets it: the real binary with its default boards, chess
//! and togyz korgool mixed. It prints the live page, the arbiter's console and how to log in
//! (the token it made); headless Chromium (through chromedriver, as the console's browser
//! tests) opens the live page and finds the togyz korgool board playing the demo's record, then
//! logs into the console with what the demo printed and finds every board there. Screenshots
//! in `target/test-artifacts/demo/`.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use boardscribe::{emulator::togyz_records, game::togyz::Rules};
use serde_json::Value;

use crate::{
    browser::{Browser, Viewport, until},
    pty_end_to_end::{Proc, poll},
};

/// The togyz korgool games the demo plays.
const DEMO_TOGYZ: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo-togyz.pgn");

/// Where the demo's screenshots are kept: not committed.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts/demo");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The rest of the first line of `log` that starts with `prefix` (trimmed).
fn line_after(log: &str, prefix: &str) -> Option<String> {
    log.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(|rest| rest.trim().to_owned())
}

/// What the live page shows of each board: its name, whether it draws a togyz board (its
/// stores), its moves.
const READ_BOARDS: &str = "return [...document.querySelectorAll('main section.board')].map(s => ({\
     name: s.dataset.board, \
     togyz: s.querySelectorAll('svg rect[data-store]').length, \
     moves: [...s.querySelectorAll('.moves li')].map(li => li.dataset.san)}));";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_shows_a_togyz_board_and_says_how_to_reach_the_console() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let http = crate::ports::free_addr();
    let db = d.join("demo.db");
    let http_arg = http.to_string();
    let mut demo = Proc::start(
        d,
        "demo",
        &[
            "demo",
            "--http",
            &http_arg,
            "--db",
            db.to_str().unwrap(),
            "--speed",
            "0.05",
        ],
    );
    // What a newcomer reads: the boards, the live page, the console and how to log in.
    let (page, console, login) = poll("the demo's addresses", || {
        let log = demo.log_text();
        Some((
            line_after(&log, "live page:")?,
            line_after(&log, "arbiter's console:")?,
            line_after(&log, "  log in with the admin token in ")?,
        ))
    });
    assert_eq!(page, format!("http://{http}/"));
    assert_eq!(console, format!("http://{http}/arbiter"));
    let (file, token) = login
        .split_once(" and your name: the token is ")
        .unwrap_or_else(|| panic!("no token said: {login}"));
    let kept = std::fs::read_to_string(file).unwrap();
    assert_eq!(kept.trim(), token, "the token printed is the one in {file}");
    let log = demo.log_text();
    let togyz_line = log
        .lines()
        .find(|l| l.contains("(togyz korgool):"))
        .unwrap_or_else(|| panic!("no togyz board in the demo:\n{log}"));
    let chess_boards = log.lines().filter(|l| l.contains("(chess):")).count();
    assert!(chess_boards >= 1, "no chessboard beside it:\n{log}");
    // Board N (togyz korgool): White - Black on LINK; the page names the board by its link.
    let togyz_board = togyz_line
        .rsplit_once(" on ")
        .map(|(_, link)| link.to_owned())
        .unwrap();
    let records = togyz_records(&std::fs::read_to_string(DEMO_TOGYZ).unwrap(), Rules::KYRGYZ)
        .expect("the demo's togyz games read");
    let (record, _) = &records[0];
    assert!(
        togyz_line.contains(record.header("White").unwrap()),
        "{togyz_line}"
    );
    let expected: Vec<String> = record.moves.iter().map(|m| m.text.to_string()).collect();

    let browser = Browser::launch(
        Viewport::Desktop {
            width: 1280,
            height: 1000,
        },
        "demo",
    )
    .await;
    browser.goto(&page).await;
    let boards = until(
        60,
        "the togyz board with six moves on the live page",
        async || {
            let boards = browser.eval(READ_BOARDS).await;
            let togyz = boards
                .as_array()?
                .iter()
                .find(|b| b["name"] == togyz_board.as_str())?
                .clone();
            (togyz["moves"].as_array()?.len() >= 6).then_some(boards)
        },
    )
    .await;
    let all = boards.as_array().unwrap();
    assert_eq!(all.len(), chess_boards + 1, "{boards:#}");
    let togyz = all
        .iter()
        .find(|b| b["name"] == togyz_board.as_str())
        .unwrap();
    assert!(
        togyz["togyz"].as_u64().unwrap_or(0) >= 2,
        "the board drawn with its stores: {togyz}"
    );
    let shown: Vec<String> = togyz["moves"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    // The record so far (its last move may yet be revised).
    let n = shown.len() - 1;
    assert_eq!(
        shown[..n],
        expected[..n],
        "the demo's togyz game on the page"
    );
    for chess in all.iter().filter(|b| b["name"] != togyz_board.as_str()) {
        assert_eq!(chess["togyz"], 0, "{chess}");
    }
    let png = browser.client.screenshot().await.unwrap();
    std::fs::write(artifacts().join("live-page-togyz.png"), png).unwrap();

    // The console, logged into as the demo said.
    browser.log_in(&console, token, "Demo Arbiter").await;
    let row = format!("tr[data-board=\"{togyz_board}\"]");
    browser.wait_for(&row, 20).await;
    let rows = browser
        .eval("return document.querySelectorAll('tr[data-board]').length")
        .await;
    assert_eq!(rows.as_u64(), Some(all.len() as u64));
    let png = browser.client.screenshot().await.unwrap();
    std::fs::write(artifacts().join("console.png"), png).unwrap();
    browser.close().await;
    // Stopped as a newcomer stops it (Ctrl-C or SIGTERM): it says where its database is.
    demo.terminate();
    assert!(demo.wait_exit(Duration::from_secs(30)).success());
    assert!(
        demo.log_text()
            .contains(&format!("database: {}", db.display())),
        "{}",
        demo.log_text()
    );
}
