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
use shakmaty::{Chess, Move, Position, Square, san::SanPlus};

use super::{
    BoardScript, EmulatorError, EmulatorOptions, EventKind, Payload, PgnGame, PlyInfo, ScriptEvent,
    handling::{Style, Timing, handle_move, result_gesture, scale},
    hardware::{
        Clock, Control, Handshake, HandshakeStep, Scanner, board_index, handshake, physical,
        space_on_wire, to_dump,
    },
    irregular::{self, IrregularityScript},
};
use boardscribe_core::{
    Millis,
    game::Outcome,
    protocol::Direction,
    protocol::dgt::{BwTime, ClockTime, Frame, cmd, status},
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

/// The script of `moves` played from `start`.
pub fn script_game_from(
    start: &Chess,
    moves: &[Move],
    outcome: Option<Outcome>,
    opts: &EmulatorOptions,
) -> Result<BoardScript, EmulatorError> {
    if !(opts.speed.is_finite() && opts.speed > 0.0 && opts.speed <= 1000.0) {
        return Err(EmulatorError::BadOptions(format!(
            "speed must be in (0, 1000], got {}",
            opts.speed
        )));
    }
    irregular::validate(&opts.irregularities, moves.len())?;
    let speed = opts.speed;
    let rotated = opts.rotated;
    let mut irr_rng = ChaCha8Rng::seed_from_u64(opts.seed ^ IRREGULAR_SEED);
    let mut infos = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let period_us = rng.random_range(200..=250) * 1000;
    let scanner = Scanner {
        period_us,
        phase_us: rng.random_range(0..period_us),
        rotated,
    };
    let timing = Timing {
        speed,
        scanner: &scanner,
    };
    let serial = format!("{:05}", rng.random_range(0..100_000u32));
    let (base, inc) = opts.time_control.unwrap_or(DEFAULT_TIME_CONTROL);
    let mut board = physical(start);
    // A wrong set-up: two pieces of one side on each other's squares.
    for s in &opts.irregularities {
        if let IrregularityScript::WrongStart { kind } = s.kind {
            let (a, b, _) = irregular::wrong_start(&mut irr_rng, start, kind)?;
            board.swap(a.to_usize(), b.to_usize());
        }
    }
    let start_dump = to_dump(&board, rotated);
    let initial_clock = if opts.clock {
        Clock::new(base, inc).frame()
    } else {
        let zero = ClockTime::from_millis(0);
        BwTime::from_parts(zero, 0, zero, 0, status::NO_CLOCK)
    };

    let mut events: Vec<ScriptEvent> = Vec::new();
    let ev = |at_ms, dir, payload, kind, ply| ScriptEvent {
        at_ms,
        dir,
        payload,
        kind,
        action: (),
        ply,
    };
    // A square the sensors reported.
    let field_update = |(at, square, code): (Millis, u8, u8), kind, ply| {
        let update = Frame::FieldUpdate {
            square,
            piece: code,
        };
        ev(at, Direction::FromBoard, Payload::Frame(update), kind, ply)
    };

    // The host's start-up: serial number, board dump, update mode, clock.
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
            HandshakeStep::Command(c) => (Direction::ToBoard, Payload::Command(vec![c])),
            HandshakeStep::Reply(f) => (Direction::FromBoard, Payload::Frame(f)),
        };
        events.push(ev(t, dir, payload, EventKind::Handshake, 0));
    }

    let mut controls = Vec::new();
    let clock_start = body_start_ms + timing.dur(&mut rng, 300, 1500);
    if opts.clock {
        controls.push(Control::Start(clock_start));
    }

    let mut pos = start.clone();
    let mut plies = Vec::new();
    let mut prev_end = clock_start;
    let mut prev_press: Option<Millis> = opts.clock.then_some(clock_start);
    let mut prev_report = body_start_ms;
    for (i, m) in moves.iter().enumerate() {
        let ply = i as u32 + 1;
        if let Some(s) = opts.irregularities.iter().find(|s| s.before_ply == ply) {
            let cx = irregular::Ctx {
                timing: &timing,
                scanner: &scanner,
                rotated,
                clock: opts.clock,
                body_start_ms,
            };
            let free = prev_press
                .unwrap_or(prev_end)
                .max(prev_end)
                .max(prev_report + 1);
            let played = irregular::play_before(
                &mut irr_rng,
                s,
                &pos,
                m,
                &mut board,
                free,
                prev_press,
                &cx,
            )?;
            events.extend(
                played
                    .reports
                    .iter()
                    .map(|&r| field_update(r, EventKind::Irregularity, ply)),
            );
            if opts.clock {
                for &(at, side) in &played.presses {
                    controls.push(Control::Press {
                        at,
                        mover: side,
                        ply: ply - 1,
                    });
                }
            }
            prev_end = played.end;
            prev_press = played.presses.last().map(|p| p.0).or(prev_press);
            prev_report = prev_report.max(played.settled);
            infos.push(played.info);
        }
        let mover = pos.turn();
        let san = SanPlus::from_move(pos.clone(), *m).to_string();
        let uci = m.to_uci(pos.castles().mode()).to_string();
        let next = pos
            .clone()
            .play(*m)
            .map_err(|_| EmulatorError::IllegalMove {
                ply,
                san: san.clone(),
            })?;

        let mut styles = Vec::new();
        let mut begin = if i > 0 && rng.random_bool(P_QUICK) {
            styles.push(Style::QuickReply);
            prev_end + timing.dur(&mut rng, 200, 600)
        } else {
            let think = (rng.random_range(0.0f64..1.0) * 20f64.ln()).exp() * 1000.0;
            prev_press.unwrap_or(prev_end).max(prev_end) + scale(think as u64, speed)
        };
        begin = begin.max(prev_report + 1);
        if styles.contains(&Style::QuickReply) && prev_press.is_some_and(|p| begin < p) {
            styles.push(Style::ReplyBeforePress);
        }

        let before = board;
        let handled = handle_move(&mut rng, &mut board, m, mover, begin, &timing, ply)?;
        if board != physical(&next) {
            return Err(EmulatorError::Physical {
                ply,
                detail: format!("the hands left a board that is not the position after {san}"),
            });
        }
        styles.extend(handled.styles.iter().copied());
        let reports = scanner.reports(&handled.acts, &before);
        let end = handled.acts.last().map_or(begin, |a| a.t);
        let settled = reports.last().map_or(end, |r| r.0);
        events.extend(
            reports
                .iter()
                .map(|&r| field_update(r, EventKind::Move, ply)),
        );
        let press = if opts.clock {
            let p = (end + timing.dur(&mut rng, 150, 700)).max(prev_press.unwrap_or(0) + 50);
            controls.push(Control::Press { at: p, mover, ply });
            Some(p)
        } else {
            None
        };
        let (from_sq, to_sq) = match *m {
            Move::Castle { king, rook } => {
                let f = if rook.file() > king.file() {
                    shakmaty::File::G
                } else {
                    shakmaty::File::C
                };
                (king, Square::from_coords(f, king.rank()))
            }
            _ => (m.from().unwrap_or(m.to()), m.to()),
        };
        plies.push(PlyInfo {
            ply,
            san,
            uci,
            styles,
            start_ms: handled.acts.first().map_or(begin, |a| a.t),
            end_ms: end,
            press_ms: press,
            from_index: board_index(from_sq, rotated),
            to_index: board_index(to_sq, rotated),
            board_after: to_dump(&board, rotated),
        });
        prev_end = end;
        prev_press = press.or(prev_press);
        prev_report = settled;
        pos = next;
    }

    // The game is over: the clock is stopped, then maybe the kings show the result.
    let n = moves.len() as u32;
    let pause = prev_end.max(prev_press.unwrap_or(0)) + timing.dur(&mut rng, 1500, 4000);
    if opts.clock {
        controls.push(Control::Pause(pause));
    }
    let mut gesture = None;
    if let (true, Some(o)) = (opts.result_gesture, outcome) {
        let g0 = (pause + timing.dur(&mut rng, 500, 1500)).max(prev_report + 1);
        let before = board;
        if let Some((handled, wk, bk)) =
            result_gesture(&mut rng, &mut board, o, g0, &timing, n + 1)?
        {
            events.extend(
                scanner
                    .reports(&handled.acts, &before)
                    .into_iter()
                    .map(|r| field_update(r, EventKind::ResultGesture, n + 1)),
            );
            gesture = Some((board_index(wk, rotated), board_index(bk, rotated)));
        }
    }

    if opts.clock {
        for (at, f, ply) in Clock::new(base, inc).run(&controls) {
            events.push(ev(
                at,
                Direction::FromBoard,
                Payload::Frame(Frame::BwTime(f)),
                EventKind::Clock,
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

    Ok(BoardScript {
        events,
        plies,
        start_dump,
        initial_clock,
        serial,
        rotated,
        body_start_ms,
        result_gesture: gesture,
        irregularities: infos,
    })
}
