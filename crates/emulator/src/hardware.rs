//! What a DGT board's electronics and clock do, whatever is played on them: the sensor scan that
//! turns physical changes into FIELD_UPDATEs (one square every period/64, so quick hands give
//! out-of-order or missing updates as on real boards, dgt-notes 1.13), the frames spaced by
//! their transmission time at 9600 baud, the clock model (BWTIME frames at every displayed
//! second and every press, dgt-notes 1.8) and the host's start-up handshake. Flow: `dgt` (the
//! chess script), `handling` and `irregular` scan the boards the hands leave; `togyz` uses the
//! clock, the wire and the handshake too. Pure: no I/O, no system clock.

use shakmaty::{Chess, Color, Position, Square};

use boardscribe_core::{
    Millis,
    game::chess::piece_code as code_of,
    protocol::dgt::{BoardDump, BwTime, ClockTime, hour_flags, piece, status},
};

/// One physical change: square `sq` holds `code` from time `t` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Act {
    pub t: Millis,
    pub sq: Square,
    pub code: u8,
}

/// The board index of a square: 0 = a8 ... 63 = h1, or `^ 63` on a rotated board.
pub(crate) fn board_index(sq: Square, rotated: bool) -> u8 {
    let idx = (7 - sq.rank().to_u32()) * 8 + sq.file().to_u32();
    let idx = idx as u8;
    if rotated { idx ^ 63 } else { idx }
}

/// The board's sensor scan: board index `i` is read at `phase + i * period / 64 + k * period`.
#[derive(Clone, Debug)]
pub(crate) struct Scanner {
    pub(crate) period_us: u64,
    pub(crate) phase_us: u64,
    pub(crate) rotated: bool,
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

/// A DGT clock in Fischer (or plain) mode; white's time on the left unless it was put on the
/// right.
pub(super) struct Clock {
    white_right: bool,
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
            white_right: false,
            remaining: [base, base],
            increment,
            running: None,
            since: 0,
            flagged: None,
            to_move: Color::White,
        }
    }

    /// The same clock with White's time on the right (and the lever the other way round).
    pub(super) fn white_on_right(mut self, right: bool) -> Clock {
        self.white_right = right;
        self
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
        // The lever is high on the right once the left-hand player has pressed.
        let (left, right) = if self.white_right {
            (Color::Black, Color::White)
        } else {
            (Color::White, Color::Black)
        };
        let mut st = if self.to_move == left {
            status::LEFT_TURN
        } else {
            status::RIGHT_TURN | status::LEVER_RIGHT_HIGH
        };
        if self.running.is_some() {
            st |= status::RUNNING;
        }
        BwTime::from_parts(
            shown(self.remaining[ci(right)]),
            flags(right),
            shown(self.remaining[ci(left)]),
            flags(left),
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
    fn a_clock_with_white_on_the_right_shows_each_side_on_the_other_half_and_the_lever_reversed() {
        let controls = [
            Control::Start(0),
            Control::Press {
                at: 3_500,
                mover: Color::White,
                ply: 1,
            },
            Control::Press {
                at: 9_200,
                mover: Color::Black,
                ply: 2,
            },
            Control::Pause(12_000),
        ];
        let left = Clock::new(180_000, 2_000).run(&controls);
        let right = Clock::new(180_000, 2_000)
            .white_on_right(true)
            .run(&controls);
        assert_eq!(left.len(), right.len());
        let turns = status::LEFT_TURN | status::RIGHT_TURN;
        for ((t, l, _), (u, r, _)) in left.iter().zip(&right) {
            assert_eq!(t, u);
            // The halves swapped (bytes 0-2 the right-hand clock, 3-5 the left-hand one).
            assert_eq!(l.0[..3], r.0[3..6], "at {t}");
            assert_eq!(l.0[3..6], r.0[..3], "at {t}");
            // The other half's turn light, the lever the other way, running alike.
            let (ls, rs) = (l.0[6], r.0[6]);
            assert_eq!(ls & turns, (rs & turns) ^ turns, "at {t}");
            assert_ne!(l.lever_right_high(), r.lever_right_high(), "at {t}");
            assert_eq!(ls & status::RUNNING, rs & status::RUNNING, "at {t}");
        }
        // White to move first: its clock (on the right) runs, the lever high on the right.
        assert_eq!(
            right[0].1.0[6],
            status::RIGHT_TURN | status::LEVER_RIGHT_HIGH | status::RUNNING
        );
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
