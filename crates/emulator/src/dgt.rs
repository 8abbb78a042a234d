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
use shakmaty::{Chess, Color, Move, Position, Square, san::SanPlus};

use super::{
    BoardScript, EmulatorError, EmulatorOptions, EventKind, Payload, PgnGame, PlyInfo, ScriptEvent,
    handling::{Act, Style, Timing, code_of, handle_move, result_gesture, scale},
    irregular::{self, IrregularityScript},
};
use boardscribe_core::{
    Millis,
    game::Outcome,
    protocol::Direction,
    protocol::dgt::{BoardDump, BwTime, ClockTime, Frame, cmd, hour_flags, piece, status},
};

const P_QUICK: f64 = 0.12;
const DEFAULT_TIME_CONTROL: (u64, u64) = (15 * 60_000, 10_000);
/// Mixed into the seed for the irregularities' own random stream, so that a script without
/// irregularities draws exactly what it always drew.
const IRREGULAR_SEED: u64 = 0x1_7e9a_51c3_2b4d;

/// The board index of a square: 0 = a8 ... 63 = h1, or `^ 63` on a rotated board.
pub(crate) fn board_index(sq: Square, rotated: bool) -> u8 {
    let idx = (7 - sq.rank().to_u32()) * 8 + sq.file().to_u32();
    let idx = idx as u8;
    if rotated { idx ^ 63 } else { idx }
}

/// The board's sensor scan: board index `i` is read at `phase + i * period / 64 + k * period`.
#[derive(Clone, Debug)]
pub(crate) struct Scanner {
    period_us: u64,
    phase_us: u64,
    rotated: bool,
}

impl Scanner {
    pub fn index(&self, sq: Square) -> u8 {
        board_index(sq, self.rotated)
    }

    pub fn period_ms(&self) -> Millis {
        self.period_us / 1000
    }

    fn offset_us(&self, idx: u8) -> u64 {
        self.phase_us + u64::from(idx) * self.period_us / 64
    }

    /// The first reading of `idx` at or after `t_us`.
    fn next_scan_us(&self, idx: u8, t_us: u64) -> u64 {
        let off = self.offset_us(idx);
        if t_us <= off {
            off
        } else {
            off + (t_us - off).div_ceil(self.period_us) * self.period_us
        }
    }

    /// The first reading of `idx` at or after `t` ms, rounded up to ms.
    pub fn next_scan_ms(&self, idx: u8, t: Millis) -> Millis {
        self.next_scan_us(idx, t * 1000).div_ceil(1000)
    }

    /// Time from a reading of `from` to the next reading of `to`, in whole ms.
    pub fn lag_ms(&self, from: u8, to: u8) -> Millis {
        let steps = (i32::from(to) - i32::from(from)).rem_euclid(64) as u64;
        steps * self.period_us / 64 / 1000
    }

    /// FIELD_UPDATEs for `acts` on a board that read `before` (by square) when they began:
    /// `(time ms, board index, code)` in time order. A square is reported when a reading
    /// differs from the last value reported for it.
    pub(super) fn reports(&self, acts: &[Act], before: &[u8; 64]) -> Vec<(Millis, u8, u8)> {
        let mut out: Vec<(u64, u8, u8)> = Vec::new();
        let mut squares: Vec<Square> = acts.iter().map(|a| a.sq).collect();
        squares.sort();
        squares.dedup();
        for sq in squares {
            let mine: Vec<&Act> = acts.iter().filter(|a| a.sq == sq).collect();
            let (Some(first), Some(last)) = (mine.first(), mine.last()) else {
                continue;
            };
            let idx = self.index(sq);
            let mut reported = before[sq.to_usize()];
            let mut s = self.next_scan_us(idx, first.t * 1000);
            while s <= last.t * 1000 + self.period_us {
                let value = mine
                    .iter()
                    .take_while(|a| a.t * 1000 <= s)
                    .last()
                    .map_or(before[sq.to_usize()], |a| a.code);
                if value != reported {
                    out.push((s, idx, value));
                    reported = value;
                }
                s += self.period_us;
            }
        }
        out.sort();
        out.into_iter()
            .map(|(s, idx, code)| (s.div_ceil(1000) + 1, idx, code))
            .collect()
    }
}

/// Transmission time of `len` bytes at 9600 baud, 10 bits a byte.
pub(super) fn tx_ms(len: usize) -> Millis {
    (len as u64 * 10_000).div_ceil(9600)
}

/// Puts time-sorted script events on the wire: a board-to-host frame (`slot` gives its length)
/// waits until the one before it is sent at 9600 baud, and no event goes before the one ahead of
/// it. `slot` gives each event's time and, for a frame from the board, its length in bytes.
pub(super) fn space_on_wire<E>(
    events: &mut [E],
    slot: impl Fn(&mut E) -> (&mut Millis, Option<usize>),
) {
    let mut wire_free: Millis = 0;
    let mut last: Millis = 0;
    for e in events.iter_mut() {
        let (at, from_board) = slot(e);
        if let Some(len) = from_board {
            *at = (*at).max(wire_free);
            wire_free = *at + tx_ms(len);
        }
        *at = (*at).max(last);
        last = *at;
    }
}

pub(super) fn to_dump(board: &[u8; 64], rotated: bool) -> BoardDump {
    let mut d = [piece::EMPTY; 64];
    for sq in Square::ALL {
        d[usize::from(board_index(sq, rotated))] = board[sq.to_usize()];
    }
    BoardDump(d)
}

pub(super) fn physical(pos: &Chess) -> [u8; 64] {
    let mut b = [piece::EMPTY; 64];
    for sq in Square::ALL {
        if let Some(p) = pos.board().piece_at(sq) {
            b[sq.to_usize()] = code_of(p);
        }
    }
    b
}

/// What the clock's controls do, in time order.
#[derive(Clone, Copy, Debug)]
pub(super) enum Control {
    Start(Millis),
    Press { at: Millis, mover: Color, ply: u32 },
    Pause(Millis),
}

/// A DGT clock in Fischer (or plain) mode; white's time on the left.
pub(super) struct Clock {
    remaining: [u64; 2],
    increment: u64,
    running: Option<Color>,
    since: Millis,
    flagged: Option<Color>,
    to_move: Color,
}

fn ci(c: Color) -> usize {
    match c {
        Color::White => 0,
        Color::Black => 1,
    }
}

impl Clock {
    pub(super) fn new(base: u64, increment: u64) -> Clock {
        Clock {
            remaining: [base, base],
            increment,
            running: None,
            since: 0,
            flagged: None,
            to_move: Color::White,
        }
    }

    pub(super) fn frame(&self) -> BwTime {
        // The display shows whole seconds, rounded up (3:02 until 3:01.000 is reached).
        let shown = |ms: u64| ClockTime::from_millis(ms.div_ceil(1000) * 1000);
        let flags = |c: Color| {
            let mut f = 0;
            if self.increment > 0 {
                f |= hour_flags::TIME_PER_MOVE;
            }
            if self.flagged == Some(c) {
                f |= hour_flags::FLAG_FALLEN;
            }
            f
        };
        let mut st = match self.to_move {
            Color::White => status::LEFT_TURN,
            Color::Black => status::RIGHT_TURN | status::LEVER_RIGHT_HIGH,
        };
        if self.running.is_some() {
            st |= status::RUNNING;
        }
        BwTime::from_parts(
            shown(self.remaining[1]),
            flags(Color::Black),
            shown(self.remaining[0]),
            flags(Color::White),
            st,
        )
    }

    /// Runs the clock up to (not including) `t`, emitting a frame per displayed second.
    fn advance(&mut self, t: Millis, out: &mut Vec<(Millis, BwTime)>) {
        while let Some(c) = self.running {
            let r = self.remaining[ci(c)];
            let m = r.saturating_sub(1) / 1000;
            let tick = self.since + (r - m * 1000);
            if tick >= t {
                self.remaining[ci(c)] = r.saturating_sub(t.saturating_sub(self.since));
                self.since = t;
                return;
            }
            self.remaining[ci(c)] = m * 1000;
            self.since = tick;
            if m == 0 {
                self.flagged = Some(c);
                self.running = None;
            }
            out.push((tick, self.frame()));
        }
    }

    /// Plays the controls; returns `(time, frame, ply)`.
    pub(super) fn run(mut self, controls: &[Control]) -> Vec<(Millis, BwTime, u32)> {
        let mut out = Vec::new();
        let mut ply = 0;
        for c in controls {
            let mut frames = Vec::new();
            match *c {
                Control::Start(at) => {
                    self.running = Some(Color::White);
                    self.since = at;
                    frames.push((at, self.frame()));
                }
                Control::Press { at, mover, ply: p } => {
                    self.advance(at, &mut frames);
                    out.extend(frames.drain(..).map(|(t, f)| (t, f, ply)));
                    ply = p;
                    if self.flagged.is_none() && self.running == Some(mover) {
                        self.remaining[ci(mover)] += self.increment;
                        self.running = Some(mover.other());
                        self.to_move = mover.other();
                        self.since = at;
                        frames.push((at, self.frame()));
                    }
                }
                Control::Pause(at) => {
                    self.advance(at, &mut frames);
                    if self.running.take().is_some() {
                        frames.push((at, self.frame()));
                    }
                }
            }
            out.extend(frames.into_iter().map(|(t, f)| (t, f, ply)));
        }
        out
    }
}

/// One step of the host's start-up exchange.
pub(super) enum HandshakeStep<F> {
    /// A command byte the host sends.
    Command(u8),
    /// The board's reply to it.
    Reply(F),
}

/// The host's start-up exchange, timed.
pub(super) struct Handshake<F> {
    pub steps: Vec<(Millis, HandshakeStep<F>)>,
    /// When the game may begin.
    pub body_start_ms: Millis,
}

/// Times the start-up: each command as the host sends it, then its reply (if any) once the
/// command has crossed the wire; `len` is a reply's size in bytes.
pub(super) fn handshake<F>(
    commands: impl IntoIterator<Item = (u8, Option<F>)>,
    len: impl Fn(&F) -> usize,
) -> Handshake<F> {
    let mut t: Millis = 0;
    let mut steps = Vec::new();
    for (c, reply) in commands {
        steps.push((t, HandshakeStep::Command(c)));
        t += tx_ms(1) + 2;
        if let Some(f) = reply {
            let n = len(&f);
            steps.push((t, HandshakeStep::Reply(f)));
            t += tx_ms(n);
        }
        t += 8;
    }
    Handshake {
        steps,
        body_start_ms: t + 40,
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The clock frames of the real 3+2 game from the start to white's first press.
    fn real_opening_frames() -> Vec<[u8; 7]> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/captures/dgt-arnsholt/1.capture"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let mut out = Vec::new();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let bytes: Vec<u8> = line
                .split_whitespace()
                .skip(2)
                .map(|h| u8::from_str_radix(h, 16).unwrap())
                .collect();
            if bytes.first() == Some(&0x8d) && bytes[9] & status::RUNNING != 0 {
                out.push(bytes[3..].try_into().unwrap());
                if bytes[9] & status::RIGHT_TURN != 0 {
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn clock_ticks_and_press_match_the_real_board() {
        let real = real_opening_frames();
        // White thinks a little over three seconds, then presses: +2 s, black's clock runs.
        let ours: Vec<[u8; 7]> = Clock::new(182_000, 2_000)
            .run(&[
                Control::Start(0),
                Control::Press {
                    at: 3_500,
                    mover: Color::White,
                    ply: 1,
                },
            ])
            .into_iter()
            .map(|(_, f, _)| f.0)
            .collect();
        assert_eq!(ours, real);
    }

    #[test]
    fn a_fallen_flag_stops_the_clock_as_on_the_real_board() {
        // johan.capture ends with black's flag: `30 00 00 20 00 16 12`.
        let frames = Clock::new(2_000, 0).run(&[
            Control::Start(0),
            Control::Press {
                at: 500,
                mover: Color::White,
                ply: 1,
            },
            Control::Pause(10_000),
        ]);
        let (t, last, _) = frames.last().unwrap();
        assert_eq!(*t, 2_500);
        assert_eq!(last.0[0] & 0x7f, hour_flags::FLAG_FALLEN);
        assert_eq!(last.0[6], status::RIGHT_TURN | status::LEVER_RIGHT_HIGH);
    }

    #[test]
    fn quick_hands_are_reported_new_square_first() {
        let s = Scanner {
            period_us: 220_000,
            phase_us: 0,
            rotated: false,
        };
        let (e2, e4) = (Square::E2, Square::E4);
        let (fi, ti) = (s.index(e2), s.index(e4));
        let t1 = s.next_scan_ms(fi, 1_000) + 1;
        let acts = [
            Act {
                t: t1,
                sq: e2,
                code: piece::EMPTY,
            },
            Act {
                t: t1 + 40,
                sq: e4,
                code: piece::WPAWN,
            },
        ];
        let mut before = [piece::EMPTY; 64];
        before[e2.to_usize()] = piece::WPAWN;
        let r = s.reports(&acts, &before);
        assert_eq!(
            r.iter().map(|x| (x.1, x.2)).collect::<Vec<_>>(),
            [(ti, piece::WPAWN), (fi, piece::EMPTY)]
        );
        // A slow hand: the origin clears first.
        let slow = [
            acts[0],
            Act {
                t: t1 + 400,
                ..acts[1]
            },
        ];
        let r = s.reports(&slow, &before);
        assert_eq!(
            r.iter().map(|x| (x.1, x.2)).collect::<Vec<_>>(),
            [(fi, piece::EMPTY), (ti, piece::WPAWN)]
        );
    }
}
