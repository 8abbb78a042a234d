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
        let done = tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(ev) = rx.recv().await {
                if ev == PtyEvent::ScriptDone {
                    break;
                }
            }
        })
        .await;
        assert!(done.is_ok(), "the emulated game did not finish in time");
        // Let the last frames arrive, then stop the recorder as a user would (Ctrl-C).
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let pid = child.id().unwrap().to_string();
        Command::new("kill").args(["-INT", &pid]).status().unwrap();
        let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success());
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
