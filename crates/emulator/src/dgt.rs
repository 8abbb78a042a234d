//! Script generation for a DGT board with a clock: a game record becomes timed board traffic.
//!
//! Flow: the host's start-up commands and the board's replies; then per ply a thinking time,
//! the hands (`handling`), the sensor scan that turns physical changes into FIELD_UPDATEs (one
//! square every period/64, so quick hands give out-of-order or missing updates as on real
//! boards, dgt-notes 1.13), and the lever press; a clock model emits BWTIME frames at every
//! displayed second and every press (dgt-notes 1.8, as on the real captures: white on the
//! left, status 0x09 while white runs, 0x13 while black runs). Finally frames are spaced by
//! their transmission time at 9600 baud. A scripted irregularity (`irregular`) is played
//! before its ply from a random stream of its own, so a script without any draws as before.
//! Pure: seeded randomness, no I/O, no system clock.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Move, Position, san::SanPlus};

use super::{
    BoardScript, EmulatorError, EmulatorOptions, EventKind, IrregularityInfo, Payload, PgnGame,
    PlyInfo, ScriptEvent, ScriptedIrregularity,
    handling::{Style, Timing, check_speed, from_to, handle_move, result_gesture, scale},
    hardware::{
        Clock, Control, Handshake, HandshakeStep, Scanner, board_index, handshake, physical,
        to_dump,
    },
    irregular::{self, IrregularityScript},
    script::put_on_wire,
};
use boardscribe_core::{
    Millis,
    game::Outcome,
    protocol::Direction,
    protocol::dgt::{BoardDump, BwTime, ClockTime, Frame, cmd, status},
};

const P_QUICK: f64 = 0.12;
const DEFAULT_TIME_CONTROL: (u64, u64) = (15 * 60_000, 10_000);
/// Mixed into the seed for the irregularities' own random stream, so that a script without
/// irregularities draws exactly what it always drew.
const IRREGULAR_SEED: u64 = 0x1_7e9a_51c3_2b4d;

/// The script of `moves` from the standard start; `outcome` drives the result gesture.
pub fn script_game(
    moves: &[Move],
    outcome: Option<Outcome>,
    opts: &EmulatorOptions,
) -> Result<BoardScript, EmulatorError> {
    script_game_from(&Chess::default(), moves, outcome, opts)
}

/// The script of a game read from a PGN.
pub fn script_pgn(game: &PgnGame, opts: &EmulatorOptions) -> Result<BoardScript, EmulatorError> {
    script_game_from(&game.start, &game.moves, game.outcome, opts)
}

/// The script of `moves` played from `start`: the handshake, then per ply an irregularity
/// scheduled before it and the ply itself, then the end of the game.
pub fn script_game_from(
    start: &Chess,
    moves: &[Move],
    outcome: Option<Outcome>,
    opts: &EmulatorOptions,
) -> Result<BoardScript, EmulatorError> {
    check_speed(opts.speed)?;
    if let Some(think) = opts.think_speed {
        check_speed(think)?;
    }
    irregular::validate(&opts.irregularities, moves.len())?;
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let setup = Setup::new(&mut rng, opts);
    let mut game = Writer::begin(&setup, rng, start)?;
    for (i, m) in moves.iter().enumerate() {
        let ply = i as u32 + 1;
        if let Some(s) = opts.irregularities.iter().find(|s| s.before_ply == ply) {
            game.irregularity(s, m)?;
        }
        game.ply(m, ply)?;
    }
    game.finish(outcome, moves.len() as u32)
}

/// What a script keeps from start to end: the options, the board's scan, serial number and
/// time control.
struct Setup<'a> {
    opts: &'a EmulatorOptions,
    scanner: Scanner,
    serial: String,
    base: u64,
    inc: u64,
}

impl<'a> Setup<'a> {
    /// The board's own draws: its scan period and phase, its serial number.
    fn new(rng: &mut ChaCha8Rng, opts: &'a EmulatorOptions) -> Setup<'a> {
        let period_us = rng.random_range(200..=250) * 1000;
        let scanner = Scanner {
            period_us,
            phase_us: rng.random_range(0..period_us),
            rotated: opts.rotated,
        };
        let serial = format!("{:05}", rng.random_range(0..100_000u32));
        let (base, inc) = opts.time_control.unwrap_or(DEFAULT_TIME_CONTROL);
        Setup {
            opts,
            scanner,
            serial,
            base,
            inc,
        }
    }

    fn timing(&self) -> Timing<'_> {
        Timing {
            speed: self.opts.speed,
            scanner: &self.scanner,
        }
    }
}

/// A script being written: the board and position so far, the events, the clock's controls,
/// what each ply and irregularity was, and when the last hand, press and report were.
struct Writer<'a> {
    setup: &'a Setup<'a>,
    rng: ChaCha8Rng,
    /// The irregularities' own random stream.
    irr_rng: ChaCha8Rng,
    board: [u8; 64],
    pos: Chess,
    start_dump: BoardDump,
    initial_clock: BwTime,
    body_start_ms: Millis,
    events: Vec<ScriptEvent>,
    controls: Vec<Control>,
    plies: Vec<PlyInfo>,
    infos: Vec<IrregularityInfo>,
    prev_end: Millis,
    prev_press: Option<Millis>,
    prev_report: Millis,
}

impl<'a> Writer<'a> {
    /// The board set up (maybe wrongly), the host's start-up, the clock started.
    fn begin(
        setup: &'a Setup<'a>,
        mut rng: ChaCha8Rng,
        start: &Chess,
    ) -> Result<Writer<'a>, EmulatorError> {
        let opts = setup.opts;
        let mut irr_rng = ChaCha8Rng::seed_from_u64(opts.seed ^ IRREGULAR_SEED);
        let mut board = physical(start);
        // A wrong set-up: two pieces of one side on each other's squares.
        for s in &opts.irregularities {
            if let IrregularityScript::WrongStart { kind } = s.kind {
                let (a, b, _) = irregular::wrong_start(&mut irr_rng, start, kind)?;
                board.swap(a.to_usize(), b.to_usize());
            }
        }
        let start_dump = to_dump(&board, opts.rotated);
        let initial_clock = if opts.clock {
            Clock::new(setup.base, setup.inc)
                .white_on_right(opts.white_clock_right)
                .frame()
        } else {
            let zero = ClockTime::from_millis(0);
            BwTime::from_parts(zero, 0, zero, 0, status::NO_CLOCK)
        };
        // The host's start-up: serial number, board dump, update mode, clock.
        let Handshake {
            steps,
            body_start_ms,
        } = handshake(
            [
                (
                    cmd::RETURN_SERIALNR,
                    Some(Frame::SerialNr(setup.serial.clone())),
                ),
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
                    HandshakeStep::Command(c) => (Direction::ToBoard, Payload::Command(vec![c])),
                    HandshakeStep::Reply(f) => (Direction::FromBoard, Payload::Frame(f)),
                };
                event(t, dir, payload, EventKind::Handshake, 0)
            })
            .collect();
        let mut controls = Vec::new();
        let clock_start = body_start_ms + setup.timing().dur(&mut rng, 300, 1500);
        if opts.clock {
            controls.push(Control::Start(clock_start));
        }
        Ok(Writer {
            setup,
            rng,
            irr_rng,
            board,
            pos: start.clone(),
            start_dump,
            initial_clock,
            body_start_ms,
            events,
            controls,
            plies: Vec::new(),
            infos: Vec::new(),
            prev_end: clock_start,
            prev_press: opts.clock.then_some(clock_start),
            prev_report: body_start_ms,
        })
    }

    /// The irregularity `s` played before its ply, whose recorded move is `m`.
    fn irregularity(&mut self, s: &ScriptedIrregularity, m: &Move) -> Result<(), EmulatorError> {
        let setup = self.setup;
        let timing = setup.timing();
        let ply = s.before_ply;
        let cx = irregular::Ctx {
            timing: &timing,
            scanner: &setup.scanner,
            rotated: setup.opts.rotated,
            clock: setup.opts.clock,
            body_start_ms: self.body_start_ms,
        };
        let free = self
            .prev_press
            .unwrap_or(self.prev_end)
            .max(self.prev_end)
            .max(self.prev_report + 1);
        let played = irregular::play_before(
            &mut self.irr_rng,
            s,
            &self.pos,
            m,
            &mut self.board,
            free,
            self.prev_press,
            &cx,
        )?;
        self.events.extend(
            played
                .reports
                .iter()
                .map(|&r| field_update(r, EventKind::Irregularity, ply)),
        );
        if setup.opts.clock {
            for &(at, side) in &played.presses {
                self.controls.push(Control::Press {
                    at,
                    mover: side,
                    ply: ply - 1,
                });
            }
        }
        self.prev_end = played.end;
        self.prev_press = played.presses.last().map(|p| p.0).or(self.prev_press);
        self.prev_report = self.prev_report.max(played.settled);
        self.infos.push(played.info);
        Ok(())
    }

    /// Ply `ply` (1-based), move `m`: a thinking time (or a quick reply), the hands, the
    /// sensors' reports, the press.
    fn ply(&mut self, m: &Move, ply: u32) -> Result<(), EmulatorError> {
        let setup = self.setup;
        let timing = setup.timing();
        let opts = setup.opts;
        let mover = self.pos.turn();
        let san = SanPlus::from_move(self.pos.clone(), *m).to_string();
        let uci = m.to_uci(self.pos.castles().mode()).to_string();
        let next = self
            .pos
            .clone()
            .play(*m)
            .map_err(|_| EmulatorError::IllegalMove {
                ply,
                san: san.clone(),
            })?;

        let mut styles = Vec::new();
        let mut begin = if ply > 1 && self.rng.random_bool(P_QUICK) {
            styles.push(Style::QuickReply);
            self.prev_end + timing.dur(&mut self.rng, 200, 600)
        } else {
            let think = (self.rng.random_range(0.0f64..1.0) * 20f64.ln()).exp() * 1000.0;
            self.prev_press.unwrap_or(self.prev_end).max(self.prev_end)
                + scale(think as u64, opts.think_speed.unwrap_or(opts.speed))
        };
        begin = begin.max(self.prev_report + 1);
        if styles.contains(&Style::QuickReply) && self.prev_press.is_some_and(|p| begin < p) {
            styles.push(Style::ReplyBeforePress);
        }

        let before = self.board;
        let handled = handle_move(
            &mut self.rng,
            &mut self.board,
            m,
            mover,
            begin,
            &timing,
            ply,
        )?;
        if self.board != physical(&next) {
            return Err(EmulatorError::Physical {
                ply,
                detail: format!("the hands left a board that is not the position after {san}"),
            });
        }
        styles.extend(handled.styles.iter().copied());
        let reports = setup.scanner.reports(&handled.acts, &before);
        let end = handled.acts.last().map_or(begin, |a| a.t);
        let settled = reports.last().map_or(end, |r| r.0);
        self.events.extend(
            reports
                .iter()
                .map(|&r| field_update(r, EventKind::Move, ply)),
        );
        let press = if opts.clock {
            let p =
                (end + timing.dur(&mut self.rng, 150, 700)).max(self.prev_press.unwrap_or(0) + 50);
            self.controls.push(Control::Press { at: p, mover, ply });
            Some(p)
        } else {
            None
        };
        let [from_sq, to_sq] = from_to(m);
        self.plies.push(PlyInfo {
            ply,
            san,
            uci,
            styles,
            start_ms: handled.acts.first().map_or(begin, |a| a.t),
            end_ms: end,
            press_ms: press,
            from_index: board_index(from_sq, opts.rotated),
            to_index: board_index(to_sq, opts.rotated),
            board_after: to_dump(&self.board, opts.rotated),
        });
        self.prev_end = end;
        self.prev_press = press.or(self.prev_press);
        self.prev_report = settled;
        self.pos = next;
        Ok(())
    }

    /// The game is over after `n` plies: the clock is stopped, then maybe the kings show the
    /// result; the clock's frames join the events, which go on the wire in time order.
    fn finish(mut self, outcome: Option<Outcome>, n: u32) -> Result<BoardScript, EmulatorError> {
        let setup = self.setup;
        let timing = setup.timing();
        let opts = setup.opts;
        let pause =
            self.prev_end.max(self.prev_press.unwrap_or(0)) + timing.dur(&mut self.rng, 1500, 4000);
        if opts.clock {
            self.controls.push(Control::Pause(pause));
        }
        let mut gesture = None;
        if let (true, Some(o)) = (opts.result_gesture, outcome) {
            let g0 = (pause + timing.dur(&mut self.rng, 500, 1500)).max(self.prev_report + 1);
            let before = self.board;
            if let Some((handled, wk, bk)) =
                result_gesture(&mut self.rng, &mut self.board, o, g0, &timing, n + 1)?
            {
                self.events.extend(
                    setup
                        .scanner
                        .reports(&handled.acts, &before)
                        .into_iter()
                        .map(|r| field_update(r, EventKind::ResultGesture, n + 1)),
                );
                gesture = Some((board_index(wk, opts.rotated), board_index(bk, opts.rotated)));
            }
        }
        if opts.clock {
            let clock = Clock::new(setup.base, setup.inc).white_on_right(opts.white_clock_right);
            for (at, f, ply) in clock.run(&self.controls) {
                self.events.push(event(
                    at,
                    Direction::FromBoard,
                    Payload::Frame(Frame::BwTime(f)),
                    EventKind::Clock,
                    ply,
                ));
            }
        }

        let mut events = self.events;
        put_on_wire(&mut events);

        Ok(BoardScript {
            events,
            plies: self.plies,
            start_dump: self.start_dump,
            initial_clock: self.initial_clock,
            serial: setup.serial.clone(),
            rotated: opts.rotated,
            body_start_ms: self.body_start_ms,
            result_gesture: gesture,
            irregularities: self.infos,
        })
    }
}

fn event(
    at_ms: Millis,
    dir: Direction,
    payload: Payload,
    kind: EventKind,
    ply: u32,
) -> ScriptEvent {
    ScriptEvent {
        at_ms,
        dir,
        payload,
        kind,
        action: (),
        ply,
    }
}

/// A square the sensors reported.
fn field_update((at, square, code): (Millis, u8, u8), kind: EventKind, ply: u32) -> ScriptEvent {
    let update = Frame::FieldUpdate {
        square,
        piece: code,
    };
    event(at, Direction::FromBoard, Payload::Frame(update), kind, ply)
}
