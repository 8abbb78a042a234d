//! Bad input never costs a move: an emulated game's clean byte stream with seeded noise between
//! frames, frames broken off (and sent again, or lost for good), frames split across reads, frames
//! of unknown ids and a megabyte of noise in the middle, through the pipeline `replay` and `run`
//! share, records exactly the game; the decoder's warnings are counted and logged in the board's
//! span. A malformed capture line stops `boardscribe replay` with the line's number.
//!
//! Why the moves must still be exact: noise sits between whole frames, so a noisy partial frame
//! always ends at the next real frame's id (bit 7 set) and the real frame decodes intact. Noise
//! can only fake a frame the tracker acts on if it holds one of their ids (BOARD_DUMP 0x86, BWTIME
//! 0x8d, FIELD_UPDATE 0x8e) followed by a valid header and payload: the short noise between frames
//! never holds those ids, and the megabyte is checked to decode to none of those frames. A frame
//! lost for good is only ever one the record does not need (an identity reply, a clock tick that
//! changes nothing but the time), and an id always follows it, so noise cannot complete it.

use std::{
    io::Write,
    process::Command,
    sync::{Arc, Mutex},
};

use boardscribe::{
    Millis,
    device::Direction,
    emulator::{self, BoardScript, EmulatorOptions, Payload, PgnGame},
    pipeline::PipelineStats,
    protocol::{
        FrameReader,
        dgt::{Frame, Mode},
    },
    replay::replay_reader,
    sensor::dgt::ClockReading,
    store::Store,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::CastlingMode;

const BIN: &str = env!("CARGO_BIN_EXE_boardscribe");
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");

/// The ids of the frames the sensor and tracker act on.
const TRACKED_IDS: [u8; 3] = [0x86, 0x8d, 0x8e];
/// Ids with a decoder of their own (dgt-notes 1.4); every other id with bit 7 is unknown.
const KNOWN_IDS: [u8; 12] = [
    0x86, 0x8d, 0x8e, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0xa0, 0xa2,
];

fn corpus_game(file: &str, n: usize) -> PgnGame {
    let text = std::fs::read_to_string(format!("{CORPUS}/{file}.pgn")).unwrap();
    emulator::games_from_pgn(&text).unwrap().swap_remove(n - 1)
}

fn expected_uci(game: &PgnGame) -> Vec<String> {
    game.moves
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect()
}

/// Capture v1 text of timed chunks.
fn capture_text(chunks: &[(Millis, Direction, Vec<u8>)]) -> String {
    let mut out = String::from("# boardscribe capture v1\n# device: dgt\n");
    for (t, dir, bytes) in chunks {
        let arrow = if *dir == Direction::FromBoard {
            '<'
        } else {
            '>'
        };
        out.push_str(&format!("{}.{:03} {arrow}", t / 1000, t % 1000));
        for b in bytes {
            out.push_str(&format!(" {b:02x}"));
        }
        out.push('\n');
    }
    out
}

/// What was done to the stream.
#[derive(Debug, Default)]
struct Damage {
    noise_runs: usize,
    noise_bytes: usize,
    /// Frames begun and sent again whole.
    truncated: usize,
    /// Frames cut off for good (only frames the record does not need).
    lost: usize,
    unknown_frames: usize,
    split_frames: usize,
}

/// A byte that is anything but one of [`TRACKED_IDS`].
fn safe_noise_byte(rng: &mut ChaCha8Rng) -> u8 {
    loop {
        let b: u8 = rng.random();
        if !TRACKED_IDS.contains(&b) {
            return b;
        }
    }
}

/// A well-formed frame with an id no decoder knows, and a payload of 0..=40 bytes.
fn unknown_frame(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let id = loop {
        let id = rng.random_range(0x80..=0xffu8);
        if !KNOWN_IDS.contains(&id) {
            break id;
        }
    };
    let payload_len: usize = rng.random_range(0..=40);
    let len = 3 + payload_len;
    let mut f = vec![id, (len >> 7) as u8 & 0x7f, len as u8 & 0x7f];
    f.extend((0..payload_len).map(|_| rng.random_range(0..0x80u8)));
    f
}

/// A megabyte of uniformly random bytes, of which none decodes to a tracked frame.
fn megabyte_of_noise(rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut noise = vec![0u8; 1 << 20];
    rng.fill(&mut noise[..]);
    let mut reader = FrameReader::new(Mode::Single);
    reader.push(&noise);
    // Any byte with bit 7 set ends a partial frame, as the next real frame's id will.
    reader.push(&[0x80]);
    let mut faked = 0;
    while let Some(next) = reader.next_frame() {
        if let Ok(Frame::BoardDump(_) | Frame::FieldUpdate { .. } | Frame::BwTime(_)) = next {
            faked += 1;
        }
    }
    assert_eq!(faked, 0, "this seed's megabyte fakes tracked frames");
    noise
}

/// Whether the board's frame `f` carries nothing the record needs, given the clock reading before
/// it: an identity reply, or a clock tick that neither starts, stops nor turns the clock.
fn expendable(f: &Frame, clock_before: Option<ClockReading>) -> bool {
    match f {
        Frame::SerialNr(_) | Frame::LongSerialNr(_) | Frame::Version { .. } => true,
        Frame::BwTime(t) => match (ClockReading::from_bwtime(t), clock_before) {
            (Some(now), Some(before)) => {
                (now.running, now.lever_right_high) == (before.running, before.lever_right_high)
            }
            _ => false,
        },
        _ => false,
    }
}

/// The script's chunks with seeded damage between and around the board's frames.
fn damage(script: &BoardScript, seed: u64) -> (Vec<(Millis, Direction, Vec<u8>)>, Damage) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut d = Damage::default();
    let from_board = script
        .events
        .iter()
        .filter(|e| e.dir == Direction::FromBoard)
        .count();
    let mut seen = 0;
    let mut clock: Option<ClockReading> = None;
    // A frame was cut off for good: the next bytes must begin with an id, or noise could
    // complete it.
    let mut cut_off = false;
    let mut out = Vec::new();
    let noise = |out: &mut Vec<_>, t: Millis, bytes: Vec<u8>, cut_off: &mut bool| {
        if std::mem::take(cut_off) {
            out.push((t, Direction::FromBoard, vec![0x80]));
        }
        out.push((t, Direction::FromBoard, bytes));
    };
    for e in &script.events {
        let (t, dir, frame) = (e.at_ms, e.dir, e.payload.to_bytes());
        if dir == Direction::ToBoard {
            out.push((t, dir, frame));
            continue;
        }
        seen += 1;
        if seen == from_board / 2 {
            let mb = megabyte_of_noise(&mut rng);
            d.noise_runs += 1;
            d.noise_bytes += mb.len();
            for c in mb.chunks(4096) {
                noise(&mut out, t, c.to_vec(), &mut cut_off);
            }
        }
        if rng.random_bool(0.3) {
            let n = rng.random_range(1..=24);
            d.noise_runs += 1;
            d.noise_bytes += n;
            let bytes = (0..n).map(|_| safe_noise_byte(&mut rng)).collect();
            noise(&mut out, t, bytes, &mut cut_off);
        }
        if rng.random_bool(0.1) {
            d.unknown_frames += 1;
            out.push((t, dir, unknown_frame(&mut rng)));
            cut_off = false;
        }
        let Payload::Frame(f) = &e.payload else {
            out.push((t, dir, frame));
            continue;
        };
        let lose = expendable(f, clock) && rng.random_bool(0.2);
        if let Frame::BwTime(b) = f
            && let Some(reading) = ClockReading::from_bwtime(b)
            && !lose
        {
            clock = Some(reading);
        }
        if lose {
            // Cut off for good: the rest of the frame never comes.
            d.lost += 1;
            let cut = rng.random_range(1..frame.len());
            out.push((t, dir, frame[..cut].to_vec()));
            cut_off = true;
            continue;
        }
        // A frame the board began, broke off, and sent again whole.
        if rng.random_bool(0.1) {
            d.truncated += 1;
            let cut = rng.random_range(1..frame.len());
            out.push((t, dir, frame[..cut].to_vec()));
        }
        if rng.random_bool(0.2) {
            d.split_frames += 1;
            let cut = rng.random_range(1..frame.len());
            out.push((t, dir, frame[..cut].to_vec()));
            out.push((t, dir, frame[cut..].to_vec()));
        } else {
            out.push((t, dir, frame));
        }
        cut_off = false;
    }
    (out, d)
}

/// A `MakeWriter` for tracing: every log line into one shared buffer.
#[derive(Clone, Default)]
struct SharedLog(Arc<Mutex<Vec<u8>>>);

impl Write for SharedLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Replays a capture text into a fresh store on board `board`; the moves of each game, the
/// pipeline's counters and the log.
fn replay(board: &str, text: &str) -> (Vec<Vec<String>>, PipelineStats, String) {
    let log = SharedLog::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer({
            let log = log.clone();
            move || log.clone()
        })
        .finish();
    let mut store = Store::open_in_memory().unwrap();
    let summary = tracing::subscriber::with_default(subscriber, || {
        replay_reader(&mut store, board, board, text.as_bytes(), &mut |_, _| {})
    })
    .unwrap();
    let games = summary
        .games
        .iter()
        .map(|g| {
            store
                .game(*g)
                .unwrap()
                .unwrap()
                .moves
                .iter()
                .map(|m| m.uci.clone().unwrap())
                .collect()
        })
        .collect();
    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    (games, summary.stats, text)
}

#[test]
fn noise_truncation_and_unknown_frames_cost_no_move() {
    // Short games, plain and turned round; each with two different damage seeds.
    let cases = [
        ("WorldChamp1886", 20, 3, false),
        ("tatamast22", 38, 4, true),
    ];
    for (file, n, seed, rotated) in cases {
        let game = corpus_game(file, n);
        let expected = expected_uci(&game);
        let script = emulator::script_pgn(
            &game,
            &EmulatorOptions {
                seed,
                rotated,
                ..EmulatorOptions::default()
            },
        )
        .unwrap();
        let (clean_games, clean, clean_log) =
            replay("clean-board", &capture_text(&script.to_chunks()));
        assert_eq!(clean_games, vec![expected.clone()], "{file} #{n}, clean");
        assert_eq!(clean.decode_warnings, 0, "{clean_log}");

        for damage_seed in [seed * 100 + 1, seed * 100 + 2] {
            let what = format!("{file} #{n}, damage seed {damage_seed}");
            let board = format!("noisy-{file}-{n}-{damage_seed}");
            let (chunks, d) = damage(&script, damage_seed);
            assert!(
                d.truncated > 0 && d.lost > 0 && d.unknown_frames > 0 && d.split_frames > 0,
                "{what}: every kind of damage was done: {d:?}"
            );
            let (games, stats, log) = replay(&board, &capture_text(&chunks));
            assert_eq!(games, vec![expected.clone()], "{what}: {d:?}");
            assert!(
                stats.decode_warnings >= (d.truncated + d.lost) as u64,
                "{what}: every truncated frame is a warning: {stats:?}, {d:?}"
            );
            assert!(stats.bytes_skipped > 0, "{what}: {stats:?}");
            assert!(
                stats.frames + d.lost as u64 >= clean.frames + d.unknown_frames as u64,
                "{what}: every real frame and every unknown one decoded: {stats:?} vs {clean:?}"
            );
            assert_eq!(stats.moves, clean.moves, "{what}");
            let warning = log
                .lines()
                .find(|l| l.contains("bad input"))
                .unwrap_or_else(|| panic!("{what}: no bad-input warning logged:\n{log}"));
            assert!(
                warning.contains("WARN") && warning.contains(&format!("board{{board={board}}}")),
                "{what}: the warning names its board in the span: {warning}"
            );
            // One line a second of stream time at most, however much noise.
            let warnings_logged = log.lines().filter(|l| l.contains("bad input")).count();
            assert!(
                (warnings_logged as u64) < stats.decode_warnings,
                "{what}: {warnings_logged} lines for {} warnings",
                stats.decode_warnings
            );
        }
    }
}

/// Runs `boardscribe replay` on a capture whose line `line` is `bad(t)`, `t` being the time of
/// the chunk before it (ms); returns stderr.
fn replay_bad_line(line: usize, bad: impl Fn(Millis) -> String) -> String {
    let dir = tempfile::tempdir().unwrap();
    let game = corpus_game("WorldChamp1886", 20);
    let script = emulator::script_pgn(&game, &EmulatorOptions::default()).unwrap();
    let good = capture_text(&script.to_chunks());
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    assert!(lines.len() > line + 10);
    let before: f64 = lines[line - 2]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let bad = bad((before * 1000.0).round() as Millis);
    lines.insert(line - 1, bad.clone());
    let path = dir.path().join("broken.capture");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let out = Command::new(BIN)
        .args(["replay", path.to_str().unwrap(), "--db"])
        .arg(dir.path().join("r.db"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "replay accepted line {line} {bad:?}: {stderr}"
    );
    assert!(
        stderr.contains(path.to_str().unwrap()),
        "names the file: {stderr}"
    );
    stderr
}

fn secs(ms: Millis) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

#[test]
fn malformed_capture_lines_stop_replay_with_their_line_number() {
    let e = replay_bad_line(7, |t| format!("{} < 8e 00 5 34 00", secs(t)));
    assert!(e.contains("line 7") && e.contains("bad hex"), "{e}");
    let e = replay_bad_line(12, |t| format!("{} < 8e 00 05 34 zz", secs(t + 5)));
    assert!(e.contains("line 12") && e.contains("bad hex"), "{e}");
    let e = replay_bad_line(15, |t| format!("{} < 8e 00 05 34 00", secs(t - 1)));
    assert!(e.contains("line 15") && e.contains("earlier"), "{e}");
    let e = replay_bad_line(5, |t| format!("{} ? 8e 00 05 34 00", secs(t)));
    assert!(e.contains("line 5") && e.contains("bad direction"), "{e}");
}

/// A capture of a kind of board replay does not read is refused by name, with every kind it
/// reads (the one list of kinds and the bus), not read as some other kind's bytes.
#[test]
fn a_capture_of_an_unknown_kind_is_refused_with_the_kinds_replay_reads() {
    let text = "# boardscribe capture v1\n# device: novag\n0.000 < 4d 20 65 32\n";
    let mut store = Store::open_in_memory().unwrap();
    let Err(e) = replay_reader(
        &mut store,
        "novag.txt",
        "b",
        text.as_bytes(),
        &mut |_, _| {},
    ) else {
        panic!("an unknown device was replayed");
    };
    let names: Vec<&str> = boardscribe::kind::BoardKind::ALL
        .iter()
        .map(|k| k.name())
        .collect();
    assert_eq!(
        e.to_string(),
        format!(
            "novag.txt: device \"novag\" is not a kind of board replay reads; it reads: {}, dgt-bus",
            names.join(", ")
        )
    );
    assert!(store.games().unwrap().is_empty());
}
