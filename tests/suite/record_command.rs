//! `boardscribe record` against an emulated board on a pseudo-terminal writes a capture that
//! `replay` turns into exactly the game played.

use std::{path::Path, process::Command, time::Duration};

use boardscribe::{
    capture::parse_capture,
    device::Direction,
    emulator::{self, EmulatorOptions, PtyEvent, PtyOptions},
    replay::replay_reader,
    store::Store,
};

#[test]
fn record_writes_a_capture_that_replays_to_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/chess/Capablanca.pgn"),
    )
    .unwrap();
    let games = emulator::games_from_pgn(&text).unwrap();
    // A short game, played fast.
    let game = games
        .iter()
        .find(|g| (16..=30).contains(&g.moves.len()))
        .unwrap();
    let opts = EmulatorOptions {
        speed: 0.03,
        seed: 11,
        ..EmulatorOptions::default()
    };
    let script = emulator::script_pgn(game, &opts).unwrap();
    let expected: Vec<String> = script.plies.iter().map(|p| p.uci.clone()).collect();
    let link = dir.path().join("board");
    let out = dir.path().join("rec.capture");

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let pty = PtyOptions {
            link: Some(link.clone()),
            linger_ms: Some(30_000),
            ..PtyOptions::default()
        };
        let emu = tokio::spawn(async move { emulator::run_pty(&script, &pty, Some(tx)).await });
        while let Some(ev) = rx.recv().await {
            if matches!(ev, PtyEvent::Ready(_)) {
                break;
            }
        }
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_boardscribe"))
            .args(["record", "--port"])
            .arg(&link)
            .arg("--out")
            .arg(&out)
            .args(["--seconds", "120"])
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        stop_at_the_games_end(&mut rx, &mut child).await;
        emu.abort();
    });

    let capture = std::fs::read_to_string(&out).unwrap();
    let parsed = parse_capture(&capture).unwrap();
    assert_eq!(parsed.device(), Some("dgt"));
    assert!(
        parsed.chunks.iter().any(|c| c.dir == Direction::ToBoard),
        "host commands kept"
    );
    let mut store = Store::open_in_memory().unwrap();
    let summary =
        replay_reader(&mut store, "rec", "rec", capture.as_bytes(), &mut |_, _| {}).unwrap();
    let game = store.game(summary.games[0]).unwrap().unwrap();
    let got: Vec<String> = game.moves.iter().map(|m| m.uci.clone().unwrap()).collect();
    assert_eq!(got, expected);
}

/// The moves of each game replaying `capture` records, in order.
/// Waits for the emulated game's end, lets the last frames arrive, then stops the recorder as a
/// user would (Ctrl-C); it must exit cleanly.
async fn stop_at_the_games_end(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<PtyEvent>,
    child: &mut tokio::process::Child,
) {
    let done = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(ev) = rx.recv().await {
            if ev == PtyEvent::ScriptDone {
                break;
            }
        }
    })
    .await;
    assert!(done.is_ok(), "the emulated game did not finish in time");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let pid = child.id().unwrap().to_string();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
}

fn replayed_moves(capture: &str) -> Vec<Vec<String>> {
    let mut store = Store::open_in_memory().unwrap();
    let summary =
        replay_reader(&mut store, "rec", "rec", capture.as_bytes(), &mut |_, _| {}).unwrap();
    summary
        .games
        .iter()
        .map(|&g| {
            let game = store.game(g).unwrap().unwrap();
            game.moves.iter().map(|m| m.uci.clone().unwrap()).collect()
        })
        .collect()
}

/// A Certabo board calibrated before (its calibration kept in the daemon's database, learnt
/// there by a real `replay` of a capture that shows the setup) plays a game turned round (Black
/// on the board's ranks 1 and 2) with no calibration setup in it; a real `record --kind certabo
/// --db DB --board NAME` writes the kept calibration in the capture's `# learnt:` header, and
/// the capture replays to the game's exact moves. Without the header the same capture does
/// not: the sensor learns its calibration from the first start position it sees, taken as
/// lying the normal way, so every piece reads as its opposite number. (A capture of a board
/// lying the normal way and opening with the start position replays without the header: that
/// start position is a calibration setup without the extra queens.)
#[test]
fn record_puts_a_certabo_boards_kept_calibration_in_the_capture_and_it_replays() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/chess/Capablanca.pgn"),
    )
    .unwrap();
    let games = emulator::games_from_pgn(&text).unwrap();
    let hands = |n: usize, seed: u64, rotated: bool| {
        let opts = EmulatorOptions {
            speed: 0.1,
            seed,
            rotated,
            clock: false,
            ..EmulatorOptions::default()
        };
        emulator::script_pgn(&games[n - 1], &opts).unwrap()
    };
    // The daemon's database learns board cb's calibration from a capture showing the setup.
    let db = d.join("live.db");
    let setup = d.join("cb.capture");
    let first = hands(70, 5, false);
    std::fs::write(&setup, emulator::certabo_script(&first).to_capture_text()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args([
            "replay",
            setup.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kept: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT l.text FROM board_learnt l JOIN boards b ON b.id = l.board_id \
             WHERE b.name = 'cb' AND l.kind = 'certabo'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, emulator::calibration().to_text());

    // Lying the normal way and opening with the start position, a capture needs no header.
    let normal = hands(381, 6, false);
    let bare_normal: String = emulator::certabo_script_calibrated(&normal)
        .to_capture_text()
        .lines()
        .filter(|l| !l.starts_with("# learnt:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let moves: Vec<String> = normal.plies.iter().map(|p| p.uci.clone()).collect();
    assert_eq!(replayed_moves(&bare_normal), vec![moves]);

    // The board, calibrated before, plays another game turned round: no setup.
    let game = hands(381, 6, true);
    let expected: Vec<String> = game.plies.iter().map(|p| p.uci.clone()).collect();
    let script = emulator::PtyScript::Certabo(emulator::certabo_script_calibrated(&game));
    let link = d.join("board");
    let out = d.join("rec.capture");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let pty = PtyOptions {
            link: Some(link.clone()),
            linger_ms: Some(30_000),
            ..PtyOptions::default()
        };
        let emu = tokio::spawn(async move { script.run(&pty, Some(tx)).await });
        while let Some(ev) = rx.recv().await {
            if matches!(ev, PtyEvent::Ready(_)) {
                break;
            }
        }
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_boardscribe"))
            .args(["record", "--kind", "certabo", "--port"])
            .arg(&link)
            .arg("--out")
            .arg(&out)
            .arg("--db")
            .arg(&db)
            .args(["--board", "cb", "--seconds", "120"])
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        stop_at_the_games_end(&mut rx, &mut child).await;
        emu.abort();
    });

    let capture = std::fs::read_to_string(&out).unwrap();
    let parsed = parse_capture(&capture).unwrap();
    assert_eq!(parsed.device(), Some("certabo"));
    assert!(
        capture.lines().any(|l| l == format!("# learnt: {kept}")),
        "{}",
        capture.lines().take(6).collect::<Vec<_>>().join("\n")
    );
    assert_eq!(replayed_moves(&capture), vec![expected.clone()]);
    // The same capture without its header: not the game.
    let bare: String = capture
        .lines()
        .filter(|l| !l.starts_with("# learnt:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let without = replayed_moves(&bare);
    eprintln!("without the header: {without:?}");
    assert!(
        !without.contains(&expected),
        "the game recorded without the calibration: {without:?}"
    );
}
