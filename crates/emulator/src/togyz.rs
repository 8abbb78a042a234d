//! Script generation for a togyz korgool pit board (TGZ-1) with a clock: a record becomes the
//! timed board traffic of people playing it.
//!
//! Flow: the host's start-up commands and the board's replies (serial number, board dump,
//! updates with the clock, the clock); then per ply a thinking time and the hands: the owner of a
//! tuz may first carry the korgools lying in it to his store, the start pit is lifted, korgools
//! are sown one at a time (the first back into the start pit when there are two or more), a hand
//! may rest on a pit for a moment, a capture is lifted out of the opponent's pit and carried to
//! the store in one or two handfuls, a new tuz gets its marker (before or after its three
//! korgools go to the store, or they are left under it), and the clock is pressed. The load
//! cells report a change after the 50 ms debounce and a settling time, at their next turn in the
//! scan, so a quick hand is read out of order; the DGT clock model gives the BWTIME frames.
//! Finally frames are spaced by their transmission time at 9600 baud. Every ply is checked: the
//! board the hands leave reads (tuz pit and owner's store as one quantity) as the rules'
//! position. Scheduled irregularities ([`TogyzEmulatorOptions::irregularities`]) are played by
//! the mover's hands before their ply (korgools scattered and put back, a sowing skipping a pit
//! or leaving its capture, pressed and reinstated, a wrong start corrected) and their truth kept
//! in [`TogyzScript::irregularities`]; with none scheduled the script is unchanged. Pure: seeded
//! randomness, no I/O, no system clock.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::Color;

use super::{
    EmulatorError, EventKind,
    handling::scale,
    hardware::{Clock, Control, Handshake, HandshakeStep, handshake, space_on_wire},
    script::{Event, Payload, Script, TogyzBoard},
};

mod hands;
use hands::{Hands, Report1, Sensors, board_player, color};

mod irregular;
use boardscribe_core::{
    Millis,
    game::{
        GameKind,
        togyz::{
            Board, Move, Position, Rules, Side, TogyzGame, TogyzReading,
            notation::{MoveText, Record, parse_records},
        },
    },
    protocol::Direction,
    protocol::{
        dgt::{BwTime, ClockTime, status},
        tgz::{Frame, LOCATIONS, PitDump, cmd},
    },
};
use irregular::irregularity;
pub use irregular::{TogyzIrregularity, TogyzIrregularityInfo, TogyzIrregularityKind};

/// 25 minutes and 10 seconds a move (the rapid time of [KG 9.3], with an increment).
const DEFAULT_TIME_CONTROL: (u64, u64) = (25 * 60_000, 10_000);
/// The board's debounce: a change is reported once it has lasted this long.
const DEBOUNCE_MS: Millis = 50;
const PIT_LOCATIONS: usize = 18;
const STORE: usize = 18;

/// How a togyz record is played on the board.
#[derive(Clone, Debug, PartialEq)]
pub struct TogyzEmulatorOptions {
    /// Time multiplier for every human duration: 1.0 human, 0.3 quick hands, 3.0 slow hands.
    pub speed: f64,
    pub seed: u64,
    /// The board turned round (black sits at the connector side): board location `i` is game
    /// location `i + 9 mod 18`, the stores swap, and each player's marker reads as the other's.
    pub rotated: bool,
    /// Base and increment in ms; `None` with a clock means 25 min + 10 s.
    pub time_control: Option<(u64, u64)>,
    /// A clock is connected (BWTIME frames, lever presses).
    pub clock: bool,
    pub rules: Rules,
    /// Irregularities to play (at most one before each ply); empty: a clean game, and the script
    /// is the same as without the field.
    pub irregularities: Vec<TogyzIrregularity>,
}

impl Default for TogyzEmulatorOptions {
    fn default() -> Self {
        TogyzEmulatorOptions {
            speed: 1.0,
            seed: 0,
            rotated: false,
            time_control: None,
            clock: true,
            rules: Rules::KYRGYZ,
            irregularities: Vec::new(),
        }
    }
}

/// How a ply was handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TogyzStyle {
    /// Korgools dropped quickly: neighbouring pits read out of order.
    FastHand,
    /// A hand rested on a pit for a moment (its count one or two higher).
    RestingHand,
    /// A capture carried to the store in two handfuls.
    Handfuls,
    /// The mover carried the korgools lying in his tuz to his store before lifting.
    TuzCarriedBefore,
    /// The mover carried the korgools lying in his tuz to his store after sowing.
    TuzCarriedAfter,
    /// A new tuz's marker set before its three korgools were carried.
    MarkerFirst,
    /// A new tuz's three korgools left under the marker.
    LeftInTuz,
}

/// What a script event does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TogyzAction {
    /// A start-up command or its reply.
    Handshake,
    /// The start pit emptied into the hand.
    Lift,
    /// A korgool sown.
    Sow,
    /// A hand resting on a pit, or lifted from it.
    Rest,
    /// A capture lifted out of the opponent's pit or put into the store (a new tuz's three too).
    Capture,
    /// Korgools lying in a tuz carried to its owner's store.
    Carry,
    /// A tuz marker set.
    Marker,
    /// A clock frame other than a press: a tick, the start, the stop.
    Clock,
    /// The clock frame of a lever press.
    Press,
    /// A hand making or putting right a scripted irregularity.
    Irregular,
}

/// Bytes of one togyz script event.
pub type TogyzPayload = Payload<Frame>;

/// The events of a togyz board's script.
pub type TogyzEvent = Event<TogyzBoard>;

/// What happened in one ply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TogyzPlyInfo {
    /// 1-based.
    pub ply: u32,
    /// `76`, `45X`.
    pub notation: String,
    pub side: Side,
    pub styles: Vec<TogyzStyle>,
    /// First hand action (a carry from the tuz, or the lift).
    pub start_ms: Millis,
    /// Last hand action.
    pub end_ms: Millis,
    /// The press frame's time on the wire, if a clock is connected.
    pub press_ms: Option<Millis>,
    /// The board (board numbering) once the ply has settled; korgools may lie in tuz pits.
    pub board_after: PitDump,
}

/// A togyz game as the timed traffic of a pit board.
pub type TogyzScript = Script<TogyzBoard>;

impl TogyzScript {
    /// How often each handling style occurs in this script.
    pub fn style_counts(&self) -> std::collections::BTreeMap<TogyzStyle, usize> {
        let mut m = std::collections::BTreeMap::new();
        for p in &self.plies {
            for s in &p.styles {
                *m.entry(*s).or_insert(0) += 1;
            }
        }
        m
    }
}

/// The records of a PGN-like togyz text with their moves, replayed under `rules`.
pub fn togyz_records(text: &str, rules: Rules) -> Result<Vec<(Record, Vec<Move>)>, EmulatorError> {
    let records = parse_records(text).map_err(|e| EmulatorError::Pgn {
        game: 0,
        message: e.to_string(),
    })?;
    records
        .into_iter()
        .enumerate()
        .map(|(i, rec)| {
            let replayed = rec.replay(rules).map_err(|e| EmulatorError::Pgn {
                game: i + 1,
                message: e.to_string(),
            })?;
            let moves = replayed.sowings.iter().map(|s| s.mv).collect();
            Ok((rec, moves))
        })
        .collect()
}

/// The board location of game location `loc` (its own inverse).
pub fn board_location(loc: usize, rotated: bool) -> usize {
    match (rotated, loc < PIT_LOCATIONS) {
        (false, _) => loc,
        (true, true) => (loc + 9) % PIT_LOCATIONS,
        (true, false) => loc ^ 1,
    }
}

/// The script of `moves` played from the start position under `opts.rules`.
pub fn script_togyz(
    moves: &[Move],
    opts: &TogyzEmulatorOptions,
) -> Result<TogyzScript, EmulatorError> {
    if !(opts.speed.is_finite() && opts.speed > 0.0 && opts.speed <= 1000.0) {
        return Err(EmulatorError::BadOptions(format!(
            "speed must be in (0, 1000], got {}",
            opts.speed
        )));
    }
    let speed = opts.speed;
    let rotated = opts.rotated;
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let period_ms = rng.random_range(20..=40);
    let sensors = Sensors {
        period_ms,
        phase_ms: rng.random_range(0..period_ms),
    };
    let serial = format!("{:05}", rng.random_range(0..100_000u32));
    let (base, inc) = opts.time_control.unwrap_or(DEFAULT_TIME_CONTROL);

    let start = Position::with_rules(opts.rules);
    let start_reading = TogyzGame::reading(&start);
    let to_dump = |raw: &[u8; LOCATIONS], markers: &[u8; 2]| {
        let mut counts = [0u8; LOCATIONS];
        for (loc, &n) in raw.iter().enumerate() {
            counts[board_location(loc, rotated)] = n;
        }
        let mut tuz = [0u8; 2];
        for side in [Side::White, Side::Black] {
            tuz[board_player(side, rotated).index()] = markers[side.index()];
        }
        PitDump { counts, tuz }
    };
    let mut infos: Vec<TogyzIrregularityInfo> = Vec::new();
    let mut start_raw = start_reading.counts;
    // A wrong start: one korgool lies in the wrong pit from the beginning.
    let wrong_start = opts
        .irregularities
        .iter()
        .any(|i| i.before_ply == 1 && i.kind == TogyzIrregularityKind::WrongStart)
        .then(|| {
            let from = rng.random_range(0..PIT_LOCATIONS);
            let to = (from + rng.random_range(1..PIT_LOCATIONS)) % PIT_LOCATIONS;
            start_raw[from] -= 1;
            start_raw[to] += 1;
            (from, to)
        });
    let start_dump = to_dump(&start_raw, &start_reading.tuz);
    let initial_clock = if opts.clock {
        Clock::new(base, inc).frame()
    } else {
        let zero = ClockTime::from_millis(0);
        BwTime::from_parts(zero, 0, zero, 0, status::NO_CLOCK)
    };

    let mut events: Vec<TogyzEvent> = Vec::new();
    let ev = |at_ms, dir, payload, kind, action, ply| TogyzEvent {
        at_ms,
        dir,
        payload,
        kind,
        action,
        ply,
    };

    // The host's start-up: serial number, board dump, updates with the clock, clock.
    let Handshake {
        steps,
        body_start_ms,
    } = handshake(
        [
            (cmd::RETURN_SERIALNR, Some(Frame::SerialNr(serial.clone()))),
            (cmd::SEND_BRD, Some(Frame::BoardDump(start_dump))),
            (cmd::SEND_UPDATE_NICE, None),
            (cmd::SEND_CLK, Some(Frame::BwTime(initial_clock))),
        ],
        |f| f.to_bytes().len(),
    );
    for (t, step) in steps {
        let (dir, payload) = match step {
            HandshakeStep::Command(c) => (Direction::ToBoard, TogyzPayload::Command(vec![c])),
            HandshakeStep::Reply(f) => (Direction::FromBoard, TogyzPayload::Frame(f)),
        };
        events.push(ev(
            t,
            dir,
            payload,
            EventKind::Handshake,
            TogyzAction::Handshake,
            0,
        ));
    }

    let mut hands = Hands {
        rng: &mut rng,
        speed,
        raw: start_raw,
        markers: start_reading.tuz,
        acts: Vec::new(),
    };
    let mut controls = Vec::new();
    let clock_start = body_start_ms + hands.dur(300, 1500);
    if opts.clock {
        controls.push(Control::Start(clock_start));
    }
    let mut last_report = [0 as Millis; LOCATIONS];
    let mut pos = start;
    let mut plies = Vec::new();
    let mut prev_free = clock_start;
    // Each player's time as the clock will show it, so that thinking gets quicker when time
    // runs short (a record's game was played to its end, not lost on time).
    let mut remaining = [base; 2];
    let mut switched = clock_start;
    for (i, &mv) in moves.iter().enumerate() {
        let ply = i as u32 + 1;
        let (next, sowing) = pos
            .play_with_info(mv)
            .map_err(|e| EmulatorError::IllegalMove {
                ply,
                san: format!("pit {}: {e}", mv.pit()),
            })?;
        let side = sowing.side;
        let notation = MoveText::from_sowing(&sowing).to_string();
        let physical = |detail: String| EmulatorError::Physical {
            ply,
            detail: format!("{notation}: {detail}"),
        };
        let mut styles = Vec::new();
        let before = hands.raw;
        hands.acts.clear();

        let think = (hands.rng.random_range(0.0f64..1.0) * 20f64.ln()).exp() * 1000.0;
        let think = scale(think as u64, speed).min(remaining[side.index()] / 15);
        let begin = prev_free + think;
        let mut t = begin;
        if let Some(irr) = opts.irregularities.iter().find(|i| i.before_ply == ply) {
            let captures = sowing.captured > 0;
            t = irregularity(
                &mut hands,
                irr,
                t,
                wrong_start,
                (side, mv, captures),
                &mut infos,
            );
            if let Some(info) = infos.last().filter(|i| i.before_ply == ply)
                && let Some(at) = info.press_ms
                && opts.clock
            {
                controls.push(Control::Press {
                    at,
                    mover: color(side),
                    ply,
                });
            }
        }
        // The mover may first carry what lies in his tuz to his store.
        if hands.rng.random_bool(0.6)
            && let Some(done) = hands.carry(t, side)
        {
            styles.push(TogyzStyle::TuzCarriedBefore);
            t = done + hands.dur(300, 700).max(200);
        }
        let start_loc = Board::location(side, mv.pit());
        let n = hands.raw[start_loc];
        if n == 0 {
            return Err(physical("the start pit is empty".into()));
        }
        hands.pit(t, start_loc, -i16::from(n), TogyzAction::Lift);
        let fast = hands.rng.random_bool(0.3);
        if fast {
            styles.push(TogyzStyle::FastHand);
        }
        t += hands.dur(250, 500);
        let mut drops = Vec::new();
        let mut loc = start_loc;
        let sown = if n == 1 {
            1
        } else {
            drops.push((t, start_loc));
            hands.pit(t, start_loc, 1, TogyzAction::Sow);
            n - 1
        };
        for _ in 0..sown {
            t += if fast {
                hands.dur(50, 140)
            } else {
                hands.dur(150, 350)
            };
            loc = (loc + 1) % PIT_LOCATIONS;
            drops.push((t, loc));
            hands.pit(t, loc, 1, TogyzAction::Sow);
        }
        if usize::from(sowing.landing) != loc {
            return Err(physical(format!(
                "the last korgool fell in location {loc}, the rules say {}",
                sowing.landing
            )));
        }
        // A hand resting on a pit just sown, for a moment.
        if hands.rng.random_bool(0.2) {
            let (dt, dl) = drops[hands.rng.random_range(0..drops.len())];
            let k = hands.rng.random_range(1..=2);
            let on = dt + hands.dur(20, 60);
            let off = on + scale(hands.rng.random_range(100..=400), speed).max(60);
            hands.pit(on, dl, k, TogyzAction::Rest);
            hands.pit(off, dl, -k, TogyzAction::Rest);
            styles.push(TogyzStyle::RestingHand);
            // The hand leaves the pit before it takes anything.
            t = t.max(off);
        }
        // A new tuz, or a capture.
        let landing = usize::from(sowing.landing);
        let store = STORE + side.index();
        if sowing.tuz_created {
            let t1 = t + hands.dur(300, 900);
            if hands.rng.random_bool(0.5) {
                styles.push(TogyzStyle::MarkerFirst);
                hands.marker(t1, side, sowing.landing_pit());
                t = t1;
                if hands.rng.random_bool(0.5) {
                    styles.push(TogyzStyle::LeftInTuz);
                } else {
                    let at = t1 + hands.dur(300, 700);
                    t = hands.carry(at, side).unwrap_or(t1);
                }
            } else {
                let c = i16::from(hands.raw[landing]);
                hands.pit(t1, landing, -c, TogyzAction::Capture);
                let t2 = t1 + hands.dur(200, 500);
                hands.pit(t2, store, c, TogyzAction::Capture);
                t = t2 + hands.dur(300, 800);
                hands.marker(t, side, sowing.landing_pit());
            }
        } else if sowing.captured > 0 {
            let c = i16::from(sowing.captured);
            if i16::from(hands.raw[landing]) != c {
                return Err(physical(format!(
                    "the landing pit holds {}, the capture is {c}",
                    hands.raw[landing]
                )));
            }
            let t1 = t + hands.dur(250, 700);
            hands.pit(t1, landing, -c, TogyzAction::Capture);
            t = t1 + hands.dur(200, 500);
            if c >= 2 && hands.rng.random_bool(0.4) {
                styles.push(TogyzStyle::Handfuls);
                let a = hands.rng.random_range(1..c);
                hands.pit(t, store, a, TogyzAction::Capture);
                t += hands.dur(200, 450);
                hands.pit(t, store, c - a, TogyzAction::Capture);
            } else {
                hands.pit(t, store, c, TogyzAction::Capture);
            }
        }
        // What was sown into his own tuz the mover may carry at once.
        if hands.rng.random_bool(0.3) {
            let at = t + hands.dur(300, 700);
            if hands.carry(at, side).is_some() {
                styles.push(TogyzStyle::TuzCarriedAfter);
            }
        }

        let reading = TogyzReading {
            counts: hands.raw,
            tuz: hands.markers,
        };
        if reading != TogyzGame::reading(&next) {
            return Err(physical(format!(
                "the hands left {reading:?}, the rules say {:?}",
                TogyzGame::reading(&next)
            )));
        }
        let acts = std::mem::take(&mut hands.acts);
        let mut reports = sensors
            .reports(hands.rng, &acts, &before, &mut last_report)
            .map_err(physical)?;
        if fast {
            // A fast hand: neighbouring pits read the other way round now and then.
            let mut j = 0;
            while j + 1 < reports.len() {
                let (a, b) = (reports[j], reports[j + 1]);
                if let (Report1::Pit { loc: la, .. }, Report1::Pit { loc: lb, .. }) =
                    (a.change, b.change)
                    && la != lb
                    && a.action == TogyzAction::Sow
                    && b.action == TogyzAction::Sow
                    && hands.rng.random_bool(0.35)
                {
                    reports[j].t = b.t;
                    reports[j + 1].t = a.t;
                    reports.swap(j, j + 1);
                    j += 2;
                } else {
                    j += 1;
                }
            }
        }
        let end = acts.iter().map(|a| a.t).max().unwrap_or(begin);
        let start_ms = acts.iter().map(|a| a.t).min().unwrap_or(begin);
        let settled = reports.last().map_or(end, |r| r.t);
        for r in &reports {
            let frame = match r.change {
                Report1::Pit { loc, count } => Frame::PitUpdate {
                    location: board_location(loc, rotated) as u8,
                    count,
                },
                Report1::Marker { side, pit } => Frame::TuzUpdate {
                    player: board_player(side, rotated),
                    pit,
                },
            };
            let kind = if r.action == TogyzAction::Irregular {
                EventKind::Irregularity
            } else {
                EventKind::Move
            };
            events.push(ev(
                r.t,
                Direction::FromBoard,
                TogyzPayload::Frame(frame),
                kind,
                r.action,
                ply,
            ));
        }
        let press = if opts.clock {
            let p = (end + hands.dur(150, 700)).max(settled + 20);
            controls.push(Control::Press {
                at: p,
                mover: color(side),
                ply,
            });
            Some(p)
        } else {
            None
        };
        plies.push(TogyzPlyInfo {
            ply,
            notation,
            side,
            styles,
            start_ms,
            end_ms: end,
            press_ms: press,
            board_after: to_dump(&hands.raw, &hands.markers),
        });
        if let Some(p) = press {
            let r = &mut remaining[side.index()];
            *r = r.saturating_sub(p - switched) + inc;
            switched = p;
        }
        prev_free = press.unwrap_or(settled).max(settled) + 1;
        pos = next;
    }

    // The game is over: the clock is stopped.
    if opts.clock {
        let pause = prev_free + hands.dur(1500, 4000);
        controls.push(Control::Pause(pause));
        let presses: Vec<(Millis, u32)> = controls
            .iter()
            .filter_map(|c| match *c {
                Control::Press { at, ply, .. } => Some((at, ply)),
                _ => None,
            })
            .collect();
        for (at, f, ply) in Clock::new(base, inc).run(&controls) {
            let action = if presses.contains(&(at, ply)) {
                TogyzAction::Press
            } else {
                TogyzAction::Clock
            };
            events.push(ev(
                at,
                Direction::FromBoard,
                TogyzPayload::Frame(Frame::BwTime(f)),
                EventKind::Clock,
                action,
                ply,
            ));
        }
    }

    // Time order, then one frame at a time on the wire.
    events.sort_by_key(|e| e.at_ms);
    space_on_wire(&mut events, |e| {
        let len = (e.dir == Direction::FromBoard).then(|| e.payload.to_bytes().len());
        (&mut e.at_ms, len)
    });
    for e in &events {
        if e.action == TogyzAction::Press
            && let Some(p) = plies.get_mut(e.ply as usize - 1)
        {
            p.press_ms = Some(e.at_ms);
        }
    }

    Ok(TogyzScript {
        events,
        plies,
        start_dump,
        initial_clock,
        serial,
        rotated,
        body_start_ms,
        result_gesture: None,
        irregularities: infos,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_maps_rows_and_stores_onto_each_other() {
        for loc in 0..LOCATIONS {
            assert_eq!(board_location(board_location(loc, true), true), loc);
        }
        assert_eq!(board_location(0, true), 9);
        assert_eq!(board_location(17, true), 8);
        assert_eq!(board_location(18, true), 19);
    }

    #[test]
    fn a_quick_drop_after_a_scan_is_read_after_its_neighbour() {
        let s = Sensors {
            period_ms: 40,
            phase_ms: 0,
        };
        // Location 5 is read at 10, 50, 90...; location 6 at 12, 52, 92...
        assert_eq!(s.next_scan(5, 51), 90);
        assert_eq!(s.next_scan(6, 51), 52);
        assert_eq!(s.next_scan(6, 12), 12);
    }
}
