//! What the benchmarks share: the real DGT captures, read from `../shared/captures/dgt-arnsholt/`,
//! and the two measures of the recorder every comparison takes (the tracker alone, replay end to
//! end). Each bench uses a part of it.
#![allow(dead_code)]

use std::{
    hint::black_box,
    time::{Duration, Instant},
};

use boardscribe::sensor::dgt::DgtFrames as _;
use boardscribe::{
    capture::parse_capture,
    device::Direction,
    game::chess::ChessGame,
    protocol::{
        FrameReader,
        dgt::{Frame, Mode},
    },
    replay::replay_reader,
    sensor::dgt::{ChessSensor, ClockReading},
    store::Store,
    tracker::{Tracker, TrackerEvent, TrackerSettings},
};

/// The three real games.
pub const CAPTURES: [&str; 3] = ["1", "2", "johan"];

/// The captures measured: `BENCH_CAPTURES` (names, comma-separated: `johan` or `1,2`), or
/// [`CAPTURES`]. With `BENCH_CAPTURES_DIR`, other captures can be measured the same way (each
/// `NAME.capture`, and for the reference `NAME.inbytes`, the same bytes as recorded by it).
/// Read once: the timed passes do not read the environment.
pub fn captures() -> &'static [String] {
    static NAMES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| match std::env::var("BENCH_CAPTURES") {
        Ok(names) if !names.trim().is_empty() => names
            .split(',')
            .map(|n| n.trim().to_owned())
            .filter(|n| !n.is_empty())
            .collect(),
        _ => CAPTURES.iter().map(|n| (*n).to_owned()).collect(),
    })
}

/// Where the captures are: `BENCH_CAPTURES_DIR`, or the real captures in `../shared`.
pub fn captures_dir() -> String {
    std::env::var("BENCH_CAPTURES_DIR").unwrap_or_else(|_| {
        format!(
            "{}/../shared/captures/dgt-arnsholt",
            env!("CARGO_MANIFEST_DIR")
        )
    })
}

/// The text of each capture, in [`captures`] order.
pub fn texts() -> Vec<String> {
    captures()
        .iter()
        .map(|name| {
            let path = format!("{}/{name}.capture", captures_dir());
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        })
        .collect()
}

/// A capture's board frames as (time, frame) pairs, decoded once.
pub type Decoded = Vec<(u64, Frame)>;

/// Each capture's frames, decoded once.
pub fn decoded(texts: &[String]) -> Vec<Decoded> {
    texts
        .iter()
        .map(|t| {
            let cap = parse_capture(t).expect("valid capture");
            let mut reader = FrameReader::new(Mode::Single);
            let mut out = Vec::new();
            for chunk in cap.chunks.iter().filter(|c| c.dir == Direction::FromBoard) {
                reader.push(&chunk.bytes);
                while let Some(f) = reader.next_frame() {
                    out.push((chunk.t_ms, f.expect("real captures decode cleanly")));
                }
            }
            out
        })
        .collect()
}

/// Decoded frames through the sensor state and the tracker alone (no decoding, no referee, no
/// store): the tracker's events, counted.
pub fn track(games: &[Decoded]) -> usize {
    let mut events = Vec::new();
    let mut n = 0;
    for game in games {
        let mut sensor = ChessSensor::default();
        let mut tracker = Tracker::<ChessGame>::new(TrackerSettings::default());
        for (t, f) in game {
            match f {
                Frame::BoardDump(dump) => {
                    sensor.apply_dump(dump);
                    tracker.observe(*t, &sensor, &mut events);
                }
                Frame::FieldUpdate { square, piece }
                    if sensor.apply_field(*square, *piece) && sensor.is_known() =>
                {
                    tracker.observe(*t, &sensor, &mut events);
                }
                Frame::BwTime(bw) => {
                    if let Some(reading) = ClockReading::from_bwtime(bw) {
                        tracker.clock(*t, reading, &mut events);
                    }
                }
                _ => {}
            }
        }
        tracker.flush(game.last().map_or(0, |x| x.0), &mut events);
        n += events.len();
        events.clear();
    }
    n
}

/// Every capture's text through `replay` (parse, decode, track, judge) into `store`, durably:
/// the frames read.
pub fn replay_all(store: &mut Store, texts: &[String]) -> u64 {
    let mut frames = 0;
    for (name, text) in captures().iter().zip(texts) {
        let s = replay_reader(
            store,
            name,
            name,
            text.as_bytes(),
            &mut |_, e: &TrackerEvent| {
                black_box(e);
            },
        )
        .expect("replay");
        frames += s.stats.frames;
    }
    frames
}

/// Runs `f` again and again for about `span`: each run's time.
pub fn time_for(span: Duration, f: &mut dyn FnMut()) -> Vec<Duration> {
    let start = Instant::now();
    let mut times = Vec::new();
    while start.elapsed() < span {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times
}

/// The environment variable `name` read as a `T`, else `default`.
pub fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
