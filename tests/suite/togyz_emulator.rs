//! The togyz emulator playing corpus games: every frame it sends decodes byte-exactly with the
//! TGZ-1 reader, the sensed board reads as the rules' position after every press (tuz pit and
//! store as one quantity), 162 korgools lie on the board whenever no hand holds any, and the
//! generic tracker fed with the decoded frames records exactly the games' notation.

use boardscribe::{
    Millis,
    capture::parse_capture,
    device::Direction,
    emulator::{
        TogyzAction, TogyzEmulatorOptions, TogyzPayload, TogyzScript, script_togyz, togyz_records,
    },
    game::{
        GameKind,
        togyz::{Move, Position, Rules, Side, TogyzGame, notation::Record},
    },
    protocol::{
        FrameReader,
        tgz::{Frame, Tgz},
    },
    sensor::{Orientation, dgt::ClockReading, tgz::TgzBoardState},
    tracker::{Tracker, TrackerEvent, TrackerSettings},
};

const PLAYOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/playok-2025.pgn"
);
const KAZAKH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/kazakh-2016-2018.pgn"
);

/// The first `n` games of a corpus file with their moves.
fn games(path: &str, n: usize) -> Vec<(Record, Vec<Move>)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut all = togyz_records(&text, Rules::KYRGYZ).unwrap();
    all.truncate(n);
    assert_eq!(all.len(), n, "{path}");
    all
}

/// A few ways of playing: seed, speed, board turned round.
fn options(game: usize) -> Vec<TogyzEmulatorOptions> {
    [(0u64, 1.0, false), (1, 0.4, true), (2, 2.5, false)]
        .into_iter()
        .map(|(k, speed, rotated)| TogyzEmulatorOptions {
            seed: game as u64 * 7919 + k,
            speed,
            rotated,
            ..TogyzEmulatorOptions::default()
        })
        .collect()
}

/// The board-to-host frames of a script, decoded by the TGZ-1 reader, each with its event.
fn decoded(script: &TogyzScript) -> Vec<(usize, Frame)> {
    let mut reader = FrameReader::with_wire(Tgz);
    let mut out = Vec::new();
    for (i, e) in script.events.iter().enumerate() {
        if e.dir != Direction::FromBoard {
            continue;
        }
        let bytes = e.payload.to_bytes();
        reader.push(&bytes);
        let frame = match reader.next_frame() {
            Some(Ok(f)) => f,
            other => panic!("event {i} {bytes:02x?}: {other:?}"),
        };
        assert!(reader.next_frame().is_none(), "event {i}: one frame");
        assert_eq!(frame.to_bytes(), bytes, "event {i}: byte-exact");
        assert_eq!(TogyzPayload::Frame(frame.clone()), e.payload, "event {i}");
        out.push((i, frame));
    }
    out
}

fn apply(state: &mut TgzBoardState, f: &Frame) -> bool {
    match f {
        Frame::BoardDump(d) => {
            state.apply_dump(d);
            true
        }
        Frame::PitUpdate { location, count } => state.apply_pit(*location, *count),
        Frame::TuzUpdate { player, pit } => state.apply_tuz(*player, *pit),
        _ => false,
    }
}

/// What the wire showed of the hands, over many scripts.
#[derive(Debug, Default)]
struct Seen {
    /// A sown pit reported before the pit sown just before it.
    out_of_order: usize,
    /// A pit read one or two higher for a moment.
    resting: usize,
    /// Captures (and a new tuz's three) lifted from the opponent's pit: it reads 0 before the
    /// store rises.
    captures: usize,
    /// A store rising twice for one capture.
    two_handfuls: usize,
    /// Korgools lying under a tuz marker at a press.
    left_in_tuz: usize,
    markers: usize,
}

/// Plays the script's frames into a board state and checks it against the rules at every press
/// and before every lift.
fn check_script(script: &TogyzScript, moves: &[Move], label: &str, seen: &mut Seen) {
    let mut positions = vec![Position::new()];
    for &m in moves {
        let next = positions.last().unwrap().play(m).unwrap();
        positions.push(next);
    }
    let orientation = if script.rotated {
        Orientation::Rotated
    } else {
        Orientation::Normal
    };
    let mut state = TgzBoardState::default();
    let mut presses = 0;
    let mut lifts = 0;
    let mut last_sown: Option<(u32, u8)> = None;
    let mut last_clock: Option<ClockReading> = None;
    let mut capture: Option<(u32, usize)> = None;
    for (i, f) in decoded(script) {
        let e = &script.events[i];
        let before = *state.counts();
        if let Frame::PitUpdate { location, count } = f {
            let l = usize::from(location);
            match e.action {
                TogyzAction::Sow => {
                    if let Some((p, prev)) = last_sown
                        && p == e.ply
                        && (location + 1) % 18 == prev
                    {
                        seen.out_of_order += 1;
                    }
                    last_sown = Some((e.ply, location));
                }
                TogyzAction::Rest if count > before[l] => seen.resting += 1,
                TogyzAction::Capture => match capture {
                    Some((p, n)) if p == e.ply => {
                        assert!(l >= 18, "{label} ply {}: the store rises after", e.ply);
                        capture = Some((p, n + 1));
                        if n + 1 == 3 {
                            seen.two_handfuls += 1;
                        }
                    }
                    _ => {
                        assert_eq!((l < 18, count), (true, 0), "{label} ply {}", e.ply);
                        seen.captures += 1;
                        capture = Some((e.ply, 1));
                    }
                },
                _ => {}
            }
        }
        if matches!(f, Frame::TuzUpdate { .. }) {
            seen.markers += 1;
        }
        if e.action == TogyzAction::Lift {
            assert_eq!(
                state.reading(orientation).total(),
                162,
                "{label} ply {}: before the lift",
                e.ply
            );
            lifts += 1;
        }
        apply(&mut state, &f);
        if let Frame::BwTime(t) = &f {
            let r = ClockReading::from_bwtime(t).unwrap();
            if e.action == TogyzAction::Press {
                // The lever goes down on the mover's side; the increment is added.
                let white = script.plies[e.ply as usize - 1].side == Side::White;
                assert_eq!(r.lever_right_high, white, "{label} ply {}", e.ply);
                let prev = last_clock.unwrap();
                let (now, before) = if white {
                    (r.left_ms, prev.left_ms)
                } else {
                    (r.right_ms, prev.right_ms)
                };
                assert!(now > before, "{label} ply {}: {prev:?} then {r:?}", e.ply);
            }
            last_clock = Some(r);
        }
        if e.action == TogyzAction::Press {
            let p = e.ply as usize;
            assert_eq!(
                state.reading(orientation),
                TogyzGame::reading(&positions[p]),
                "{label} ply {p} ({}): at the press",
                script.plies[p - 1].notation
            );
            assert_eq!(state.reading(orientation).total(), 162, "{label} ply {p}");
            assert_eq!(state.to_dump(), script.plies[p - 1].board_after, "{label}");
            let r = state.reading(orientation);
            if [Side::White, Side::Black]
                .into_iter()
                .any(|s| r.tuz_location(s).is_some_and(|l| r.counts[l] > 0))
            {
                seen.left_in_tuz += 1;
            }
            presses += 1;
        }
    }
    assert_eq!(presses, moves.len(), "{label}: one press a ply");
    assert_eq!(lifts, moves.len(), "{label}: one lift a ply");
}

fn run_corpus(path: &str, n: usize) {
    let mut styles = std::collections::BTreeMap::new();
    let mut seen = Seen::default();
    for (g, (rec, moves)) in games(path, n).iter().enumerate() {
        let want: Vec<String> = rec.moves.iter().map(|m| m.text.to_string()).collect();
        for opts in options(g) {
            let script = script_togyz(moves, &opts).unwrap();
            let label = format!("game {} seed {}", g + 1, opts.seed);
            let got: Vec<&str> = script.plies.iter().map(|p| p.notation.as_str()).collect();
            assert_eq!(got, want, "{label}");
            check_script(&script, moves, &label, &mut seen);
            for (s, k) in script.style_counts() {
                *styles.entry(s).or_insert(0) += k;
            }
        }
    }
    // Every kind of handling happened somewhere in these games.
    assert_eq!(styles.len(), 7, "{styles:?}");
    // And the wire shows it.
    let Seen {
        out_of_order,
        resting,
        captures,
        two_handfuls,
        left_in_tuz,
        markers,
    } = seen;
    for (what, k) in [
        ("out of order", out_of_order),
        ("resting hands", resting),
        ("captures", captures),
        ("two handfuls", two_handfuls),
        ("korgools left in a tuz", left_in_tuz),
        ("markers", markers),
    ] {
        assert!(k > 0, "no {what}: {seen:?}");
    }
}

#[test]
fn playok_games_read_as_the_rules_at_every_press() {
    run_corpus(PLAYOK, 50);
}

#[test]
fn kazakh_games_read_as_the_rules_at_every_press() {
    run_corpus(KAZAKH, 20);
}

#[test]
fn the_script_is_deterministic_and_its_capture_names_the_device() {
    let (_, moves) = games(PLAYOK, 1).remove(0);
    let opts = TogyzEmulatorOptions {
        seed: 5,
        ..TogyzEmulatorOptions::default()
    };
    let a = script_togyz(&moves, &opts).unwrap();
    let b = script_togyz(&moves, &opts).unwrap();
    assert_eq!(a, b);
    let text = a.to_capture_text();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("# boardscribe capture v1"));
    assert_eq!(lines.next(), Some("# device: togyz"));
    // The handshake: serial number, board dump, updates with the clock, clock.
    let commands: Vec<u8> = a
        .events
        .iter()
        .filter(|e| e.dir == Direction::ToBoard)
        .flat_map(|e| e.payload.to_bytes())
        .collect();
    assert_eq!(commands, [0x45, 0x42, 0x4b, 0x41]);
    assert!(text.contains("> 42\n"));
    // The capture reader gives back the device and every byte the board sent.
    let capture = parse_capture(&text).unwrap();
    assert_eq!(capture.device(), Some("togyz"));
    let sent: Vec<u8> = a
        .events
        .iter()
        .filter(|e| e.dir == Direction::FromBoard)
        .flat_map(|e| e.payload.to_bytes())
        .collect();
    assert_eq!(capture.bytes(Direction::FromBoard), sent);
    assert_eq!(capture.bytes(Direction::ToBoard), commands);
    // Times never go back.
    assert!(a.events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
    let c = script_togyz(
        &moves,
        &TogyzEmulatorOptions {
            seed: 6,
            ..opts.clone()
        },
    )
    .unwrap();
    assert_ne!(a.events, c.events);
}

/// The recorded notation, revisions and takebacks applied.
fn recorded(events: &[TrackerEvent]) -> Vec<String> {
    let mut moves: Vec<String> = Vec::new();
    for e in events {
        match e {
            TrackerEvent::Move(m) => moves.push(m.notation.clone()),
            TrackerEvent::Revision { new, .. } => {
                moves[new.ply as usize - 1] = new.notation.clone();
            }
            TrackerEvent::Takeback { to_ply, .. } => moves.truncate(*to_ply as usize),
            TrackerEvent::GameStarted { .. } => moves.clear(),
            _ => {}
        }
    }
    moves
}

/// Drives the generic tracker with a script's decoded frames; returns the recorded notation
/// and the kinds of events.
fn track(script: &TogyzScript) -> (Vec<String>, Vec<&'static str>) {
    // What the pipeline uses for a pit board.
    let mut tracker = Tracker::<TogyzGame>::new(TrackerSettings::for_game::<TogyzGame>());
    let mut state = TgzBoardState::default();
    let mut out = Vec::new();
    let mut last: Millis = 0;
    for (i, f) in decoded(script) {
        let at = script.events[i].at_ms;
        last = at;
        if let Frame::BwTime(t) = &f {
            if let Some(r) = ClockReading::from_bwtime(t) {
                tracker.clock(at, r, &mut out);
            }
        } else if apply(&mut state, &f) {
            tracker.observe(at, &state, &mut out);
        }
    }
    tracker.tick(last + 10_000, &mut out);
    let kinds = out.iter().map(|e| e.kind()).collect();
    (recorded(&out), kinds)
}

/// The tracker over the first `n` games, played on a board lying normally or turned round:
/// (exact games, games, what differed).
fn track_corpus(path: &str, n: usize, rotated: bool) -> (usize, usize, Vec<String>) {
    let mut exact = 0;
    let mut total = 0;
    let mut misses = Vec::new();
    for (g, (rec, moves)) in games(path, n).iter().enumerate() {
        let want: Vec<String> = rec.moves.iter().map(|m| m.text.to_string()).collect();
        for opts in options(g).into_iter().filter(|o| o.rotated == rotated) {
            let script = script_togyz(moves, &opts).unwrap();
            let (got, kinds) = track(&script);
            total += 1;
            if got == want {
                exact += 1;
            } else {
                let at = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
                misses.push(format!(
                    "game {} seed {} rotated {}: {} of {} plies, first difference at ply {}: {:?} vs {:?}; events {:?}",
                    g + 1,
                    opts.seed,
                    opts.rotated,
                    got.len(),
                    want.len(),
                    at + 1,
                    got.get(at),
                    want.get(at),
                    kinds
                        .iter()
                        .filter(|k| !matches!(**k, "move" | "clock"))
                        .collect::<Vec<_>>()
                ));
            }
        }
    }
    (exact, total, misses)
}

#[test]
fn the_tracker_records_playok_games_played_by_hand_exactly() {
    let (exact, total, misses) = track_corpus(PLAYOK, 50, false);
    assert_eq!(exact, total, "{exact}/{total} exact\n{}", misses.join("\n"));
}

#[test]
fn the_tracker_records_kazakh_games_played_by_hand_exactly() {
    let (exact, total, misses) = track_corpus(KAZAKH, 20, false);
    assert_eq!(exact, total, "{exact}/{total} exact\n{}", misses.join("\n"));
}

/// A board turned round reads the (symmetric) start position the same in both orientations: the
/// tracker lets white's first sowing decide which way round the board lies.
#[test]
fn the_tracker_records_games_on_a_board_turned_round_exactly() {
    let (exact, total, misses) = track_corpus(PLAYOK, 50, true);
    assert_eq!(exact, total, "{exact}/{total} exact\n{}", misses.join("\n"));
}

#[test]
fn without_a_clock_no_presses_and_bad_speeds_are_refused() {
    let (_, moves) = games(KAZAKH, 1).remove(0);
    let opts = TogyzEmulatorOptions {
        clock: false,
        ..TogyzEmulatorOptions::default()
    };
    let s = script_togyz(&moves, &opts).unwrap();
    assert!(s.plies.iter().all(|p| p.press_ms.is_none()));
    let clocks: Vec<&TogyzAction> = s
        .events
        .iter()
        .filter(|e| matches!(e.payload, TogyzPayload::Frame(Frame::BwTime(_))))
        .map(|e| &e.action)
        .collect();
    // Only the answer to SEND_CLK, which says no clock is connected.
    assert_eq!(clocks, [&TogyzAction::Handshake]);
    assert!(s.initial_clock.no_clock());
    for speed in [0.0, -1.0, f64::NAN, 1e6] {
        let bad = TogyzEmulatorOptions {
            speed,
            ..TogyzEmulatorOptions::default()
        };
        assert!(script_togyz(&moves, &bad).is_err(), "{speed}");
    }
}

/// Every game of both corpus files, played the two ways on a board lying normally and tracked with
/// the settings a pit board's pipeline uses: every script reads as the rules at every press and
/// the tracker records all 6280 exactly. (Before pressed plies were made irrevocable for togyz
/// korgool, [KG 1.7], four games failed: a resting hand made a transitional board equal to "two
/// plies taken back, then a legal move".) About 25 s in release.
#[test]
fn every_corpus_game_reads_as_the_rules_and_is_recorded_exactly() {
    let mut seen = Seen::default();
    let mut misses = Vec::new();
    let mut total = 0;
    for path in [PLAYOK, KAZAKH] {
        let text = std::fs::read_to_string(path).unwrap();
        for (g, (rec, moves)) in togyz_records(&text, Rules::KYRGYZ)
            .unwrap()
            .iter()
            .enumerate()
        {
            let want: Vec<String> = rec.moves.iter().map(|m| m.text.to_string()).collect();
            for opts in options(g).into_iter().filter(|o| !o.rotated) {
                let script = script_togyz(moves, &opts).unwrap();
                let label = format!("{path} game {} seed {}", g + 1, opts.seed);
                check_script(&script, moves, &label, &mut seen);
                total += 1;
                let (got, kinds) = track(&script);
                if got != want {
                    let at = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
                    let odd: Vec<_> = kinds
                        .iter()
                        .filter(|k| !matches!(**k, "move" | "clock"))
                        .collect();
                    misses.push(format!(
                        "{label}: {} of {} plies, first difference at ply {}: {:?} vs {:?}, \
                         styles there {:?}; events {odd:?}",
                        got.len(),
                        want.len(),
                        at + 1,
                        got.get(at),
                        want.get(at),
                        script.plies.get(at).map(|p| &p.styles),
                    ));
                }
            }
        }
    }
    assert!(
        misses.is_empty(),
        "{} of {total} not exact:\n{}",
        misses.len(),
        misses.join("\n")
    );
}
