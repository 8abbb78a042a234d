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
    handling::{check_speed, scale},
    hardware::{Clock, Control, Handshake, HandshakeStep, handshake},
    script::{Event, Payload, Script, TogyzBoard, put_on_wire},
};

mod hands;
use hands::{Hands, Report1, Sensors, board_player, color};

mod irregular;
mod random;
use boardscribe_core::{
    Millis,
    game::{
        GameKind,
        togyz::{
            Board, Move, Position, Rules, Side, Sowing, TogyzGame, TogyzReading,
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
pub use random::random_togyz_game;

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

/// The records of a PGN-like togyz text with their moves, replayed under `rules`. A record of
/// another game is refused, naming it: a `Variant` tag that is not togyz korgool, or a text whose
/// moves read as chess (`1. e4 e5`, which no togyz move reads as).
pub fn togyz_records(text: &str, rules: Rules) -> Result<Vec<(Record, Vec<Move>)>, EmulatorError> {
    let records = parse_records(text).map_err(|e| match chess_game_in(text) {
        Some(game) => EmulatorError::NotTogyz {
            game,
            why: format!("its moves read as chess, not as togyz korgool ({e})"),
        },
        None => EmulatorError::Pgn {
            game: 0,
            message: e.to_string(),
        },
    })?;
    if let Some((i, variant)) = records.iter().enumerate().find_map(|(i, rec)| {
        rec.header("Variant")
            .filter(|v| !is_togyz_variant(v))
            .map(|v| (i, v))
    }) {
        return Err(EmulatorError::NotTogyz {
            game: i + 1,
            why: format!("Variant {variant:?} is not togyz korgool"),
        });
    }
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

/// Whether a `Variant` tag names togyz korgool (as the corpus writes it, or spelt out).
fn is_togyz_variant(variant: &str) -> bool {
    let v: String = variant
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    matches!(
        v.as_str(),
        "togyz"
            | "togyzkorgool"
            | "togyzkumalak"
            | "toguzkorgool"
            | "тоғызқұмалақ"
            | "тогузкоргоол"
    )
}

/// The number (1-based) of the first game of `text` that reads as a chess game with moves, if
/// any: what a chess PGN given as a togyz record is.
fn chess_game_in(text: &str) -> Option<usize> {
    let games = super::games_from_pgn(text).ok()?;
    games
        .iter()
        .position(|g| !g.moves.is_empty())
        .map(|i| i + 1)
}

/// The board location of game location `loc` (its own inverse).
pub fn board_location(loc: usize, rotated: bool) -> usize {
    match (rotated, loc < PIT_LOCATIONS) {
        (false, _) => loc,
        (true, true) => (loc + 9) % PIT_LOCATIONS,
        (true, false) => loc ^ 1,
    }
}

/// The script of `moves` played from the start position under `opts.rules`: the handshake,
/// then per ply the hands (after an irregularity scheduled before it), then the clock stopped.
pub fn script_togyz(
    moves: &[Move],
    opts: &TogyzEmulatorOptions,
) -> Result<TogyzScript, EmulatorError> {
    check_speed(opts.speed)?;
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut game = Writer::begin(&mut rng, opts);
    for (i, &mv) in moves.iter().enumerate() {
        game.ply(mv, i as u32 + 1)?;
    }
    Ok(game.finish())
}

/// The counts a board dump reads for game locations `raw` and tuz `markers`.
fn to_dump(raw: &[u8; LOCATIONS], markers: &[u8; 2], rotated: bool) -> PitDump {
    let mut counts = [0u8; LOCATIONS];
    for (loc, &n) in raw.iter().enumerate() {
        counts[board_location(loc, rotated)] = n;
    }
    let mut tuz = [0u8; 2];
    for side in [Side::White, Side::Black] {
        tuz[board_player(side, rotated).index()] = markers[side.index()];
    }
    PitDump { counts, tuz }
}

fn event(
    at_ms: Millis,
    dir: Direction,
    payload: TogyzPayload,
    kind: EventKind,
    action: TogyzAction,
    ply: u32,
) -> TogyzEvent {
    TogyzEvent {
        at_ms,
        dir,
        payload,
        kind,
        action,
        ply,
    }
}

/// A script being written: the hands on the board, the position, the events and the clock's
/// controls so far, what each ply and irregularity was, and each player's time.
struct Writer<'a, 'r> {
    opts: &'a TogyzEmulatorOptions,
    sensors: Sensors,
    hands: Hands<'r>,
    serial: String,
    base: u64,
    inc: u64,
    /// The korgool that lay in the wrong pit from the start (from, to), if any.
    wrong_start: Option<(usize, usize)>,
    start_dump: PitDump,
    initial_clock: BwTime,
    body_start_ms: Millis,
    events: Vec<TogyzEvent>,
    controls: Vec<Control>,
    plies: Vec<TogyzPlyInfo>,
    infos: Vec<TogyzIrregularityInfo>,
    last_report: [Millis; LOCATIONS],
    pos: Position,
    /// When the hands may next begin.
    prev_free: Millis,
    /// Each player's time as the clock will show it, so that thinking gets quicker when time
    /// runs short (a record's game was played to its end, not lost on time).
    remaining: [u64; 2],
    /// The last press.
    switched: Millis,
}

impl<'a, 'r> Writer<'a, 'r> {
    /// The board's own draws (scan, serial number), the board set up (maybe wrongly), the
    /// host's start-up, the clock started.
    fn begin(rng: &'r mut ChaCha8Rng, opts: &'a TogyzEmulatorOptions) -> Writer<'a, 'r> {
        let period_ms = rng.random_range(20..=40);
        let sensors = Sensors {
            period_ms,
            phase_ms: rng.random_range(0..period_ms),
        };
        let serial = format!("{:05}", rng.random_range(0..100_000u32));
        let (base, inc) = opts.time_control.unwrap_or(DEFAULT_TIME_CONTROL);

        let start = Position::with_rules(opts.rules);
        let start_reading = TogyzGame::reading(&start);
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
        let start_dump = to_dump(&start_raw, &start_reading.tuz, opts.rotated);
        let initial_clock = if opts.clock {
            Clock::new(base, inc).frame()
        } else {
            let zero = ClockTime::from_millis(0);
            BwTime::from_parts(zero, 0, zero, 0, status::NO_CLOCK)
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
        let events = steps
            .into_iter()
            .map(|(t, step)| {
                let (dir, payload) = match step {
                    HandshakeStep::Command(c) => {
                        (Direction::ToBoard, TogyzPayload::Command(vec![c]))
                    }
                    HandshakeStep::Reply(f) => (Direction::FromBoard, TogyzPayload::Frame(f)),
                };
                event(
                    t,
                    dir,
                    payload,
                    EventKind::Handshake,
                    TogyzAction::Handshake,
                    0,
                )
            })
            .collect();

        let mut hands = Hands {
            rng,
            speed: opts.speed,
            raw: start_raw,
            markers: start_reading.tuz,
            acts: Vec::new(),
        };
        let mut controls = Vec::new();
        let clock_start = body_start_ms + hands.dur(300, 1500);
        if opts.clock {
            controls.push(Control::Start(clock_start));
        }
        Writer {
            opts,
            sensors,
            hands,
            serial,
            base,
            inc,
            wrong_start,
            start_dump,
            initial_clock,
            body_start_ms,
            events,
            controls,
            plies: Vec::new(),
            infos: Vec::new(),
            last_report: [0; LOCATIONS],
            pos: start,
            prev_free: clock_start,
            remaining: [base; 2],
            switched: clock_start,
        }
    }

    /// Ply `ply` (1-based), move `mv`: thinking, a scheduled irregularity, the hands, the
    /// check that the board reads as the rules' position, the sensors' reports, the press.
    fn ply(&mut self, mv: Move, ply: u32) -> Result<(), EmulatorError> {
        let (next, sowing) =
            self.pos
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
        let before = self.hands.raw;
        self.hands.acts.clear();

        let think = (self.hands.rng.random_range(0.0f64..1.0) * 20f64.ln()).exp() * 1000.0;
        let think = scale(think as u64, self.opts.speed).min(self.remaining[side.index()] / 15);
        let begin = self.prev_free + think;
        let mut t = begin;
        if let Some(irr) = self
            .opts
            .irregularities
            .iter()
            .find(|i| i.before_ply == ply)
        {
            t = self.irregularity(irr, t, ply, (side, mv, sowing.captured > 0));
        }
        // The mover may first carry what lies in his tuz to his store.
        if self.hands.rng.random_bool(0.6)
            && let Some(done) = self.hands.carry(t, side)
        {
            styles.push(TogyzStyle::TuzCarriedBefore);
            t = done + self.hands.dur(300, 700).max(200);
        }
        let sown = self
            .hands
            .sow(t, side, mv, &sowing, &mut styles)
            .map_err(physical)?;
        let t = self
            .hands
            .take(sown.t, side, &sowing, &mut styles)
            .map_err(physical)?;
        // What was sown into his own tuz the mover may carry at once.
        if self.hands.rng.random_bool(0.3) {
            let at = t + self.hands.dur(300, 700);
            if self.hands.carry(at, side).is_some() {
                styles.push(TogyzStyle::TuzCarriedAfter);
            }
        }

        let reading = TogyzReading {
            counts: self.hands.raw,
            tuz: self.hands.markers,
        };
        if reading != TogyzGame::reading(&next) {
            return Err(physical(format!(
                "the hands left {reading:?}, the rules say {:?}",
                TogyzGame::reading(&next)
            )));
        }
        let acts = std::mem::take(&mut self.hands.acts);
        let reports = self.reports(&acts, &before, sown.fast).map_err(physical)?;
        let end = acts.iter().map(|a| a.t).max().unwrap_or(begin);
        let start_ms = acts.iter().map(|a| a.t).min().unwrap_or(begin);
        let settled = reports.last().map_or(end, |r| r.t);
        self.push_reports(&reports, ply);
        let press = if self.opts.clock {
            let p = (end + self.hands.dur(150, 700)).max(settled + 20);
            self.controls.push(Control::Press {
                at: p,
                mover: color(side),
                ply,
            });
            Some(p)
        } else {
            None
        };
        self.plies.push(TogyzPlyInfo {
            ply,
            notation,
            side,
            styles,
            start_ms,
            end_ms: end,
            press_ms: press,
            board_after: to_dump(&self.hands.raw, &self.hands.markers, self.opts.rotated),
        });
        if let Some(p) = press {
            let r = &mut self.remaining[side.index()];
            *r = r.saturating_sub(p - self.switched) + self.inc;
            self.switched = p;
        }
        self.prev_free = press.unwrap_or(settled).max(settled) + 1;
        self.pos = next;
        Ok(())
    }

    /// The irregularity `irr` made by the mover's hands from `t`, before ply `ply`; when the
    /// hands are free again.
    fn irregularity(
        &mut self,
        irr: &TogyzIrregularity,
        t: Millis,
        ply: u32,
        mover: (Side, Move, bool),
    ) -> Millis {
        let t = irregularity(
            &mut self.hands,
            irr,
            t,
            self.wrong_start,
            mover,
            &mut self.infos,
        );
        if let Some(info) = self.infos.last().filter(|i| i.before_ply == ply)
            && let Some(at) = info.press_ms
            && self.opts.clock
        {
            self.controls.push(Control::Press {
                at,
                mover: color(mover.0),
                ply,
            });
        }
        t
    }

    /// What the load cells report of the hands' `acts` on the board `before`; a fast hand's
    /// neighbouring pits now and then read the other way round.
    fn reports(
        &mut self,
        acts: &[hands::Act],
        before: &[u8; LOCATIONS],
        fast: bool,
    ) -> Result<Vec<hands::Report>, String> {
        let rng = &mut *self.hands.rng;
        let mut reports = self
            .sensors
            .reports(rng, acts, before, &mut self.last_report)?;
        if fast {
            let mut j = 0;
            while j + 1 < reports.len() {
                let (a, b) = (reports[j], reports[j + 1]);
                if let (Report1::Pit { loc: la, .. }, Report1::Pit { loc: lb, .. }) =
                    (a.change, b.change)
                    && la != lb
                    && a.action == TogyzAction::Sow
                    && b.action == TogyzAction::Sow
                    && rng.random_bool(0.35)
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
        Ok(reports)
    }

    /// The reports as the board's frames, in board numbering.
    fn push_reports(&mut self, reports: &[hands::Report], ply: u32) {
        let rotated = self.opts.rotated;
        for r in reports {
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
            self.events.push(event(
                r.t,
                Direction::FromBoard,
                TogyzPayload::Frame(frame),
                kind,
                r.action,
                ply,
            ));
        }
    }

    /// The game is over: the clock is stopped, its frames join the events, which go on the
    /// wire in time order; each ply's press is its frame's time on the wire.
    fn finish(mut self) -> TogyzScript {
        if self.opts.clock {
            let pause = self.prev_free + self.hands.dur(1500, 4000);
            self.controls.push(Control::Pause(pause));
            let presses: Vec<(Millis, u32)> = self
                .controls
                .iter()
                .filter_map(|c| match *c {
                    Control::Press { at, ply, .. } => Some((at, ply)),
                    _ => None,
                })
                .collect();
            for (at, f, ply) in Clock::new(self.base, self.inc).run(&self.controls) {
                let action = if presses.contains(&(at, ply)) {
                    TogyzAction::Press
                } else {
                    TogyzAction::Clock
                };
                self.events.push(event(
                    at,
                    Direction::FromBoard,
                    TogyzPayload::Frame(Frame::BwTime(f)),
                    EventKind::Clock,
                    action,
                    ply,
                ));
            }
        }

        let mut events = self.events;
        put_on_wire(&mut events);
        let mut plies = self.plies;
        for e in &events {
            if e.action == TogyzAction::Press
                && let Some(p) = plies.get_mut(e.ply as usize - 1)
            {
                p.press_ms = Some(e.at_ms);
            }
        }

        TogyzScript {
            events,
            plies,
            start_dump: self.start_dump,
            initial_clock: self.initial_clock,
            serial: self.serial,
            rotated: self.opts.rotated,
            body_start_ms: self.body_start_ms,
            result_gesture: None,
            irregularities: self.infos,
        }
    }
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

    #[test]
    fn a_chess_game_or_another_variant_is_no_togyz_record() {
        let chess = "[Event \"Havana\"]\n[White \"A\"]\n[Black \"B\"]\n\n1.e4 e5 2.Nf3 Nc6 1-0\n";
        let refused = togyz_records(chess, Rules::KYRGYZ).unwrap_err().to_string();
        assert!(
            refused.contains("game 1 is not a togyz korgool record")
                && refused.contains("read as chess"),
            "{refused}"
        );
        let other = "[Variant \"Standard\"]\n\n1. 76 98 *\n";
        let refused = togyz_records(other, Rules::KYRGYZ).unwrap_err().to_string();
        assert!(
            refused.contains("Variant \"Standard\" is not togyz"),
            "{refused}"
        );
        // Togyz under its own names reads; a broken togyz record is its own error.
        for variant in ["togyz", "Togyz Korgool", "togyzkumalak"] {
            let text = format!("[Variant \"{variant}\"]\n\n1. 76 98 *\n");
            let read = togyz_records(&text, Rules::KYRGYZ).expect(variant);
            assert_eq!(read[0].1.len(), 2);
        }
        let broken = "[Variant \"togyz\"]\n\n1. 76 0x *\n";
        let refused = togyz_records(broken, Rules::KYRGYZ)
            .unwrap_err()
            .to_string();
        assert!(!refused.contains("not a togyz"), "{refused}");
    }
}
