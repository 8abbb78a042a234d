//! Board memory (EE_MOVES) read back into games: corpus games played by the emulator, written to
//! the board's memory as the board writes it, interpreted through the tracker; and
//! `boardscribe import-memory` against an emulated board on a real pseudo-terminal (`--port`) and
//! against a file (`--from`): every move exact, a second import adds nothing, a damaged dump
//! stores nothing.

use std::{path::Path, process::Command, time::Duration};

use boardscribe::{
    emulator::{
        self, BoardScript, EmulatorOptions, EventKind, Payload, PgnGame, PtyEvent, PtyOptions,
    },
    memory::{EeRecorder, games_from_log, log_from_bytes, parse_log},
    protocol::dgt::{EeTag, EeToken, Frame},
    store::Store,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const BIN: &str = env!("CARGO_BIN_EXE_boardscribe");

fn corpus() -> Vec<PgnGame> {
    crate::corpus_common::chess_games()
}

/// Plays `script`'s board and clock frames into the board's memory (and `board`).
fn play_into(memory: &mut EeRecorder, board: &mut [u8; 64], script: &BoardScript) {
    for e in &script.events {
        if e.kind == EventKind::Handshake {
            continue;
        }
        match &e.payload {
            Payload::Frame(Frame::FieldUpdate { square, piece }) => {
                board[usize::from(*square)] = *piece;
                memory.field(e.at_ms, *square, *piece)
            }
            Payload::Frame(Frame::BwTime(t)) => memory.clock(t),
            _ => {}
        }
    }
}

/// The halted clock's time at each ply's press, from the script's clock frames: the n-th lever
/// change is ply n's press.
fn press_readings(script: &BoardScript) -> Vec<Option<u64>> {
    let mut lever = None;
    let mut out = Vec::new();
    for e in &script.events {
        let Payload::Frame(Frame::BwTime(t)) = &e.payload else {
            continue;
        };
        if e.kind == EventKind::Handshake || t.is_ack() || t.no_clock() {
            continue;
        }
        let now = t.lever_right_high();
        if lever.is_some_and(|l| l != now) {
            // Lever high on the right: the left player (White) pressed.
            let halted = if now { t.left() } else { t.right() };
            out.push(Some(halted.to_millis()));
        }
        lever = Some(now);
    }
    out.resize(script.plies.len(), None);
    out
}

fn ucis(script: &BoardScript) -> Vec<String> {
    script.plies.iter().map(|p| p.uci.clone()).collect()
}

#[test]
fn corpus_games_in_one_memory_read_back_exactly() {
    let corpus = corpus();
    // Every 24th game of the corpus, every third one on a board turned round.
    let picked: Vec<&PgnGame> = corpus.iter().step_by(24).collect();
    assert!(picked.len() >= 30);
    let scripts: Vec<BoardScript> = picked
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let opts = EmulatorOptions {
                seed: 700 + i as u64,
                rotated: i % 3 == 2,
                ..EmulatorOptions::default()
            };
            emulator::script_pgn(g, &opts).unwrap()
        })
        .collect();
    // Play them one after another on one board; the memory is big enough for a few games only,
    // so read it back after every three games, as an arbiter would between rounds.
    let mut checked = 0;
    let (mut clock_plies, mut clock_misses) = (0, Vec::new());
    for group in scripts.chunks(3) {
        let mut memory = EeRecorder::power_up(&group[0].start_dump.0);
        let mut first_digest = None;
        let mut board = group[0].start_dump.0;
        for (n, script) in group.iter().enumerate() {
            if n > 0 {
                // Pieces off the board, then the next start position set up.
                let at = script.events[0].at_ms;
                for (sq, &code) in board.iter().enumerate() {
                    if code != 0 {
                        memory.field(at, sq as u8, 0);
                    }
                }
                for (sq, &code) in script.start_dump.0.iter().enumerate() {
                    if code != 0 {
                        memory.field(at + 1000, sq as u8, code);
                    }
                }
            }
            board = script.start_dump.0;
            play_into(&mut memory, &mut board, script);
            if n == 0 {
                // Read once after the first game: the same game, read again later with more
                // written after it, has the same digest (so an import does not store it twice).
                let log = log_from_bytes(&memory.clone().dump().to_bytes(), "early").unwrap();
                let early = games_from_log(&parse_log(&log).unwrap(), 0);
                assert_eq!(early.len(), 1);
                first_digest = Some(early[0].digest);
            }
        }
        let frame = memory.dump();
        let bytes = frame.to_bytes();
        let log = log_from_bytes(&bytes, "test").unwrap();
        let tokens = parse_log(&log).unwrap();
        // Nothing was pushed out of the memory: it still starts at the power-up.
        let nop = EeToken::Tag(EeTag::Nop);
        assert_eq!(tokens[..4], [nop, nop, nop, EeToken::Tag(EeTag::PowerUp)]);
        let begins = tokens
            .iter()
            .filter(|t| matches!(t, EeToken::Tag(EeTag::BeginPos | EeTag::BeginPosRot)))
            .count();
        assert_eq!(begins, group.len(), "one start-position tag per game");
        let games = games_from_log(&tokens, 1_000_000);
        assert_eq!(games.len(), group.len(), "one game per start position");
        for (script, game) in group.iter().zip(&games) {
            let got: Vec<String> = game.moves.iter().map(|m| m.uci.clone().unwrap()).collect();
            assert_eq!(
                got,
                ucis(script),
                "moves of a game (rotated {})",
                script.rotated
            );
            // The clock: the halted clock's time is written at every press; from the second ply
            // on (the first press may be the first reading) the mover's clock is the time the
            // emulated clock showed at the press (White's is the left-hand clock).
            let presses = press_readings(script);
            for mv in game.moves.iter().skip(1) {
                let mover = if mv.ply % 2 == 1 {
                    mv.clock_white_ms
                } else {
                    mv.clock_black_ms
                };
                clock_plies += 1;
                let want = presses[mv.ply as usize - 1];
                if mover != want {
                    clock_misses.push((mv.ply, mover, want));
                }
            }
            checked += 1;
        }
        assert_eq!(
            first_digest,
            Some(games[0].digest),
            "the first game read early and late"
        );
        // Digests tell the games apart, and are the same when read again.
        let again = games_from_log(&tokens, 5_000_000);
        assert_eq!(
            games.iter().map(|g| g.digest).collect::<Vec<_>>(),
            again.iter().map(|g| g.digest).collect::<Vec<_>>()
        );
        let mut digests: Vec<u64> = games.iter().map(|g| g.digest).collect();
        digests.sort_unstable();
        digests.dedup();
        assert_eq!(digests.len(), games.len());
    }
    assert_eq!(checked, scripts.len());
    // Every move after the first has its press's reading, also where a press was written
    // before the last square of its move.
    eprintln!(
        "clock readings: {} of {clock_plies} plies differ",
        clock_misses.len()
    );
    assert!(
        clock_misses.is_empty(),
        "{} of {clock_plies} plies with another clock reading than their press: {:?}",
        clock_misses.len(),
        &clock_misses[..clock_misses.len().min(20)]
    );
}

fn import(db: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("import-memory")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn stored_moves(db: &Path) -> Vec<Vec<String>> {
    let store = Store::open(db).unwrap();
    store
        .games()
        .unwrap()
        .iter()
        .map(|g| g.moves.iter().map(|m| m.uci.clone().unwrap()).collect())
        .collect()
}

#[test]
fn import_memory_from_an_emulated_board_and_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let games = corpus();
    let game = games
        .iter()
        .find(|g| (20..=40).contains(&g.moves.len()))
        .unwrap();
    let opts = EmulatorOptions {
        speed: 0.03,
        seed: 5,
        ..EmulatorOptions::default()
    };
    let script = emulator::script_pgn(game, &opts).unwrap();
    let expected = ucis(&script);
    let link = dir.path().join("board");
    let db = dir.path().join("memory.db");

    let rt = tokio::runtime::Runtime::new().unwrap();
    let reply = rt.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let pty = PtyOptions {
            link: Some(link.clone()),
            linger_ms: Some(120_000),
            ..PtyOptions::default()
        };
        let emu = tokio::spawn(async move { emulator::run_pty(&script, &pty, Some(tx)).await });
        while let Some(ev) = rx.recv().await {
            if matches!(ev, PtyEvent::Ready(_)) {
                break;
            }
        }
        // A host starts the board playing, then goes away: the board plays on, recording.
        let mut port = crate::host_port::open(&link).await;
        port.write_all(&[0x44]).await.unwrap();
        let mut sink = [0u8; 4096];
        let _ = tokio::time::timeout(Duration::from_millis(300), port.read(&mut sink)).await;
        drop(port);
        let done = tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(ev) = rx.recv().await {
                if ev == PtyEvent::ScriptDone {
                    break;
                }
            }
        })
        .await;
        assert!(done.is_ok(), "the emulated game did not finish in time");

        // The board's memory over the port, twice: the second import adds nothing.
        for round in 0..2 {
            let db = db.clone();
            let link = link.clone();
            let out = tokio::task::spawn_blocking(move || {
                import(&db, &["--port", link.to_str().unwrap(), "--board", "3"])
            })
            .await
            .unwrap();
            let said = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                out.status.success(),
                "{said}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            if round == 1 {
                assert!(said.contains("nothing added"), "{said}");
            }
        }
        // The raw reply, for the file test.
        let mut port = crate::host_port::open(&link).await;
        port.write_all(&[0x49]).await.unwrap();
        let mut got = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while log_from_bytes(&got, "pty").is_err() {
            let n = tokio::time::timeout_at(deadline, port.read(&mut sink))
                .await
                .unwrap()
                .unwrap();
            got.extend_from_slice(&sink[..n]);
        }
        emu.abort();
        got
    });

    assert_eq!(stored_moves(&db), vec![expected.clone()]);
    let store = Store::open(&db).unwrap();
    let stored = store.games().unwrap();
    assert_eq!(stored[0].board_no, Some(3));
    let notes = store.decisions(stored[0].id).unwrap();
    assert_eq!(notes.len(), 1, "one import note");
    assert!(
        notes[0]
            .note
            .as_deref()
            .unwrap()
            .starts_with("imported from board memory")
    );
    assert!(
        !store.raw_chunks(stored[0].board).unwrap().is_empty(),
        "raw bytes kept"
    );
    drop(store);

    // From a file holding the reply: into a new database, the same moves; again, nothing more.
    let file = dir.path().join("reply.bin");
    std::fs::write(&file, &reply).unwrap();
    let db2 = dir.path().join("file.db");
    for _ in 0..2 {
        let out = import(&db2, &["--from", file.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(stored_moves(&db2), vec![expected.clone()]);

    // Damaged dumps: cut short, a byte with bit 7 inside the frame, a clock token's minutes
    // out of range. Each is a clear error and stores nothing.
    let log_start = 3;
    let clock_at = reply[log_start..]
        .iter()
        .position(|&b| (0x60..=0x69).contains(&b) || (0x70..=0x79).contains(&b))
        .map(|i| i + log_start)
        .unwrap();
    let mut bad_minutes = reply.clone();
    bad_minutes[clock_at + 1] = 0x6a;
    let mut high_bit = reply.clone();
    let mid = reply.len() / 2;
    high_bit[mid] = 0x9e;
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("cut", reply[..reply.len() - 40].to_vec(), "cut short"),
        ("high", high_bit, "damaged"),
        ("minutes", bad_minutes, "not BCD"),
    ];
    for (name, bytes, says) in cases {
        let file = dir.path().join(format!("{name}.bin"));
        std::fs::write(&file, &bytes).unwrap();
        let db3 = dir.path().join(format!("{name}.db"));
        let out = import(&db3, &["--from", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "{name}: accepted");
        assert!(err.contains(says), "{name}: {err}");
        if db3.exists() {
            assert!(stored_moves(&db3).is_empty(), "{name}: stored something");
        }
    }
    // The good database is untouched by a bad import into it.
    let cut = dir.path().join("cut.bin");
    let out = import(&db2, &["--from", cut.to_str().unwrap()]);
    assert!(!out.status.success());
    assert_eq!(stored_moves(&db2), vec![expected]);
}
