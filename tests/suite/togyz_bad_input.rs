//! Bad TGZ-1 input never stops a pit board: corpus games played on the togyz emulator, their byte
//! streams damaged between whole frames with noise (bytes without bit 7, which cannot start a
//! frame), frames broken off and sent again, a count out of range, a location out of range and an
//! impossible tuz byte, replayed through the pipeline `replay` and `run` share: every game is
//! recorded exactly, each bad frame is counted as a decode warning, and the log says what was wrong
//! in the board's span.

use std::sync::{Arc, Mutex};

use boardscribe::{
    capture::{capture_head, push_line},
    device::Direction,
    emulator::{TogyzEmulatorOptions, script_togyz, togyz_records},
    game::togyz::{Rules, Side},
    protocol::{
        FrameReader,
        tgz::{Frame, Tgz},
    },
    replay::replay_reader,
    store::Store,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PLAYOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/playok-2025.pgn"
);

#[derive(Clone, Default)]
struct SharedLog(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for SharedLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Frames no decoder accepts, each with the warning it must give.
fn bad_frames() -> Vec<(Vec<u8>, &'static str)> {
    vec![
        (
            Frame::PitUpdate {
                location: 3,
                count: 200,
            }
            .to_bytes(),
            "count",
        ),
        (
            Frame::PitUpdate {
                location: 25,
                count: 4,
            }
            .to_bytes(),
            "location",
        ),
        (
            Frame::TuzUpdate {
                player: Side::White,
                pit: 12,
            }
            .to_bytes(),
            "tuz pit 12 is out of range",
        ),
    ]
}

#[test]
fn noise_broken_frames_and_impossible_values_cost_no_move() {
    let text = std::fs::read_to_string(PLAYOK).expect("corpus");
    let games = togyz_records(&text, Rules::KYRGYZ).expect("records");
    let mut total_bad = 0u64;
    for (g, (rec, moves)) in games.iter().take(12).enumerate() {
        let opts = TogyzEmulatorOptions {
            seed: 500 + g as u64,
            ..TogyzEmulatorOptions::default()
        };
        let script = script_togyz(moves, &opts).expect("script");
        let mut rng = ChaCha8Rng::seed_from_u64(g as u64);
        let mut capture = capture_head("togyz", &[]).expect("header");
        let mut bad = 0u64;
        for (t, dir, bytes) in script.to_chunks() {
            if dir == Direction::FromBoard && rng.random_bool(0.05) {
                let noise: Vec<u8> = (0..rng.random_range(1..6))
                    .map(|_| rng.random_range(0..0x80u8))
                    .collect();
                push_line(&mut capture, t, dir, &noise);
                bad += 1;
            }
            if dir == Direction::FromBoard && bytes.len() > 2 && rng.random_bool(0.03) {
                // Broken off, then sent whole.
                push_line(&mut capture, t, dir, &bytes[..bytes.len() - 1]);
                bad += 1;
            }
            if dir == Direction::FromBoard && rng.random_bool(0.02) {
                let frames = bad_frames();
                let (frame, _) = &frames[rng.random_range(0..frames.len())];
                push_line(&mut capture, t, dir, frame);
                bad += 1;
            }
            push_line(&mut capture, t, dir, &bytes);
        }
        let log = SharedLog::default();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer({
                let log = log.clone();
                move || log.clone()
            })
            .finish();
        let mut store = Store::open_in_memory().expect("store");
        let board = format!("pit board {}", g + 1);
        let summary = tracing::subscriber::with_default(subscriber, || {
            replay_reader(
                &mut store,
                &board,
                &board,
                capture.as_bytes(),
                &mut |_, _| {},
            )
        })
        .expect("replay");
        let game = store.game(summary.games[0]).expect("read").expect("game");
        let want: Vec<String> = rec.moves.iter().map(|m| m.text.to_string()).collect();
        let got: Vec<String> = game.moves.iter().map(|m| m.notation.clone()).collect();
        assert_eq!(got, want, "game {}", g + 1);
        // Every damaged spot gave at least one warning (a broken frame and the frame after it
        // can make one warning or two).
        assert!(
            summary.stats.decode_warnings >= bad,
            "game {}: {} warnings for {bad} damaged spots",
            g + 1,
            summary.stats.decode_warnings
        );
        let logged = String::from_utf8(log.0.lock().expect("log").clone()).expect("utf-8");
        if bad > 0 {
            assert!(logged.contains("bad input from board"), "{logged}");
            assert!(
                logged.contains(&board),
                "the board's span names it: {logged}"
            );
        }
        total_bad += bad;
    }
    assert!(total_bad > 50, "the test damaged enough: {total_bad}");
}

#[test]
fn impossible_values_are_warnings_that_say_what_was_wrong() {
    for (bytes, message) in bad_frames() {
        let mut reader = FrameReader::with_wire(Tgz);
        reader.push(&bytes);
        // A good frame after it decodes intact.
        let good = Frame::PitUpdate {
            location: 2,
            count: 9,
        };
        reader.push(&good.to_bytes());
        match reader.next_frame() {
            Some(Err(w)) => assert!(w.to_string().contains(message), "{w} names {message}"),
            other => panic!("{message}: {other:?}"),
        }
        assert_eq!(reader.next_frame(), Some(Ok(good)));
    }
}
