//! The human hand model: how a player's hands lift and place pieces to make a move.
//!
//! Flow: [`handle_move`] chooses a handling style (seeded) and drives [`Hands`], which keeps
//! the physical board and what the hands hold, and refuses anything physically impossible (a
//! lift from an empty square, a piece placed that no hand holds, a third piece in two hands).
//! The output is a list of timed square changes ([`Act`]); the sensor scan in `dgt` turns
//! them into FIELD_UPDATEs. Pure: time is an argument.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use shakmaty::{Color, File, Move, Rank, Role, Square, attacks};

pub(crate) use super::hardware::Act;
use super::{EmulatorError, hardware::Scanner};

mod moves;
use boardscribe_core::{Millis, game::Outcome, protocol::dgt::piece};
pub(crate) use moves::handle_move;

/// A way of handling a move, counted per ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Style {
    /// Lift the piece, place it on its target.
    Plain,
    /// Capture: the victim is taken off first, then the mover goes to the empty square.
    CaptureVictimFirst,
    /// Capture: the mover is lifted, then the victim taken off, then the mover placed.
    CaptureMoverFirst,
    /// Capture: the mover is set on top of the victim (the square's code just changes).
    CaptureOnTop,
    /// Castling: the king is set on its square before the rook.
    CastleKingFirst,
    /// Castling: the rook is set on its square before the king.
    CastleRookFirst,
    /// Chess960 castling with the king already on its castled square: only the rook moves.
    CastleKingStays,
    /// Chess960 castling with the rook already on its castled square: only the king moves.
    CastleRookStays,
    /// Chess960 castling with both pieces in the hands before either is set down (king and rook
    /// swapping squares need it; with `CastleKingFirst` or `CastleRookFirst` for which lands first).
    CastleBothInHands,
    /// En passant: the captured pawn is removed before the capturing pawn is lifted.
    EnPassantVictimFirst,
    /// En passant: the captured pawn is removed while the capturing pawn is in the hand.
    EnPassantVictimBetween,
    /// En passant: the captured pawn is removed after the capturing pawn is placed.
    EnPassantVictimLast,
    /// Promotion: the pawn is set down on the last rank first, then exchanged.
    PromotionPawnFirst,
    /// Promotion: the promoted piece is placed directly.
    PromotionDirect,
    /// A rook, bishop or queen rests on 1 to 3 squares it crosses.
    Slide,
    /// A piece is lifted and put back on its own square before the move.
    TouchAdjust,
    /// A neighbouring piece is knocked off and put back after the move.
    NudgeNeighbour,
    /// Lift and place within one sensor scan, timed so that the target square is reported
    /// before the origin clears (dgt-notes 1.13).
    FastHands,
    /// The reply started 0.2 to 0.6 s after the previous move was placed.
    QuickReply,
    /// The reply started before the previous mover pressed the clock.
    ReplyBeforePress,
    /// Both kings put on the centre squares to show the result.
    ResultGesture,
}

impl Style {
    /// Every style, for tests that want to see each one.
    pub const ALL: [Style; 21] = [
        Style::Plain,
        Style::CaptureVictimFirst,
        Style::CaptureMoverFirst,
        Style::CaptureOnTop,
        Style::CastleKingFirst,
        Style::CastleRookFirst,
        Style::CastleKingStays,
        Style::CastleRookStays,
        Style::CastleBothInHands,
        Style::EnPassantVictimFirst,
        Style::EnPassantVictimBetween,
        Style::EnPassantVictimLast,
        Style::PromotionPawnFirst,
        Style::PromotionDirect,
        Style::Slide,
        Style::TouchAdjust,
        Style::NudgeNeighbour,
        Style::FastHands,
        Style::QuickReply,
        Style::ReplyBeforePress,
        Style::ResultGesture,
    ];

    /// The styles only Chess960 castling gives (never seen in a standard game).
    pub const CHESS960: [Style; 3] = [
        Style::CastleKingStays,
        Style::CastleRookStays,
        Style::CastleBothInHands,
    ];
}

const P_TOUCH: f64 = 0.04;
const P_NUDGE: f64 = 0.03;
const P_SLIDE: f64 = 0.3;
const P_FAST: f64 = 0.12;

/// The acts of one ply (or gesture) and the styles used.
#[derive(Clone, Debug, Default)]
pub(crate) struct Handled {
    pub acts: Vec<Act>,
    pub styles: Vec<Style>,
}

/// Durations: human ones scaled by `speed`; "sensed" ones last at least one scan.
pub(crate) struct Timing<'a> {
    pub speed: f64,
    pub scanner: &'a Scanner,
}

impl Timing<'_> {
    /// A uniformly random human duration in `lo..=hi` ms, times `speed`.
    pub fn dur(&self, rng: &mut ChaCha8Rng, lo: u64, hi: u64) -> Millis {
        scale(rng.random_range(lo..=hi), self.speed)
    }

    /// Like [`Timing::dur`], but long enough for the scan to see it.
    fn sensed(&self, rng: &mut ChaCha8Rng, lo: u64, hi: u64) -> Millis {
        self.dur(rng, lo, hi).max(self.scanner.period_ms() + 15)
    }

    /// Lift-to-place time of a hand.
    fn carry(&self, rng: &mut ChaCha8Rng) -> Millis {
        self.dur(rng, 150, 900)
    }
}

/// The moving piece's origin and target (the king's for castling).
pub(crate) fn from_to(m: &Move) -> [Square; 2] {
    match *m {
        Move::Castle { king, rook } => {
            let f = if rook.file() > king.file() {
                shakmaty::File::G
            } else {
                shakmaty::File::C
            };
            [king, Square::from_coords(f, king.rank())]
        }
        _ => [m.from().unwrap_or(m.to()), m.to()],
    }
}

/// A speed the hands can play at: finite, in (0, 1000].
pub(crate) fn check_speed(speed: f64) -> Result<(), EmulatorError> {
    if speed.is_finite() && speed > 0.0 && speed <= 1000.0 {
        Ok(())
    } else {
        Err(EmulatorError::BadOptions(format!(
            "speed must be in (0, 1000], got {speed}"
        )))
    }
}

/// `ms * speed`, rounded, at least 1 ms.
pub(crate) fn scale(ms: u64, speed: f64) -> Millis {
    let v = (ms as f64 * speed).round();
    if v.is_finite() && v >= 1.0 {
        v as Millis
    } else {
        1
    }
}

pub(crate) use boardscribe_core::game::chess::piece_code as code_of;

/// The colour of a non-empty DGT piece code.
fn color_of(code: u8) -> Option<Color> {
    match code {
        1..=6 => Some(Color::White),
        7..=12 => Some(Color::Black),
        _ => None,
    }
}

/// Two hands over the physical board (indexed by square, a1 = 0).
struct Hands<'a> {
    board: &'a mut [u8; 64],
    held: Vec<u8>,
    t: Millis,
    acts: Vec<Act>,
    ply: u32,
}

impl<'a> Hands<'a> {
    fn new(board: &'a mut [u8; 64], t: Millis, ply: u32) -> Self {
        Hands {
            board,
            held: Vec::new(),
            t,
            acts: Vec::new(),
            ply,
        }
    }

    fn err(&self, detail: String) -> EmulatorError {
        EmulatorError::Physical {
            ply: self.ply,
            detail,
        }
    }

    fn wait(&mut self, ms: Millis) {
        self.t += ms;
    }

    fn set(&mut self, sq: Square, code: u8) {
        self.board[sq.to_usize()] = code;
        self.acts.push(Act {
            t: self.t,
            sq,
            code,
        });
    }

    fn grab(&mut self, code: u8) -> Result<(), EmulatorError> {
        if self.held.len() >= 2 {
            return Err(self.err(format!("a third piece ({code:#04x}) in two hands")));
        }
        self.held.push(code);
        Ok(())
    }

    fn release(&mut self, code: u8) -> Result<(), EmulatorError> {
        match self.held.iter().position(|&c| c == code) {
            Some(i) => {
                self.held.swap_remove(i);
                Ok(())
            }
            None => Err(self.err(format!("piece {code:#04x} is not in a hand"))),
        }
    }

    /// Lifts the piece on `sq` into a hand; returns its code.
    fn lift(&mut self, sq: Square) -> Result<u8, EmulatorError> {
        let code = self.board[sq.to_usize()];
        if code == piece::EMPTY {
            return Err(self.err(format!("lift from empty {sq}")));
        }
        self.grab(code)?;
        self.set(sq, piece::EMPTY);
        Ok(code)
    }

    /// Places a held piece on the empty square `sq`.
    fn place(&mut self, sq: Square, code: u8) -> Result<(), EmulatorError> {
        if self.board[sq.to_usize()] != piece::EMPTY {
            return Err(self.err(format!("place on occupied {sq}")));
        }
        self.release(code)?;
        self.set(sq, code);
        Ok(())
    }

    /// Sets a held piece on top of an enemy piece; the victim is swept off the board.
    fn place_on_top(&mut self, sq: Square, code: u8) -> Result<(), EmulatorError> {
        let victim = self.board[sq.to_usize()];
        if color_of(victim).is_none() || color_of(victim) == color_of(code) {
            return Err(self.err(format!("{code:#04x} on top of {victim:#04x} at {sq}")));
        }
        self.release(code)?;
        self.set(sq, code);
        Ok(())
    }

    /// Puts a held piece aside, off the board.
    fn discard(&mut self, code: u8) -> Result<(), EmulatorError> {
        self.release(code)
    }

    /// Takes a piece from the box beside the board (a promoted piece).
    fn take_from_box(&mut self, code: u8) -> Result<(), EmulatorError> {
        self.grab(code)
    }

    fn lift_and_place(
        &mut self,
        from: Square,
        to: Square,
        carry: Millis,
    ) -> Result<(), EmulatorError> {
        let code = self.lift(from)?;
        self.wait(carry);
        self.place(to, code)
    }

    fn finish(self, styles: Vec<Style>) -> Result<Handled, EmulatorError> {
        if !self.held.is_empty() {
            return Err(self.err(format!("hands still hold {:?}", self.held)));
        }
        Ok(Handled {
            acts: self.acts,
            styles,
        })
    }
}

fn pick<T: Copy>(rng: &mut ChaCha8Rng, items: &[T]) -> Option<T> {
    if items.is_empty() {
        None
    } else {
        Some(items[rng.random_range(0..items.len())])
    }
}

type NormalMove = (Role, Square, Option<Role>, Square, Option<Role>);

/// Both kings lifted and put on the centre squares for `outcome` (white e4 + black d5 for
/// 1-0, d4 + e5 for 0-1, one light and one dark square for a draw). `None` when a centre
/// square holds another piece. Returns the acts and the kings' squares (white, black).
pub(crate) fn result_gesture(
    rng: &mut ChaCha8Rng,
    board: &mut [u8; 64],
    outcome: Outcome,
    t0: Millis,
    tm: &Timing<'_>,
    ply: u32,
) -> Result<Option<(Handled, Square, Square)>, EmulatorError> {
    let find = |code: u8| {
        Square::ALL
            .into_iter()
            .find(|sq| board[sq.to_usize()] == code)
    };
    let (Some(wk), Some(bk)) = (find(piece::WKING), find(piece::BKING)) else {
        return Ok(None);
    };
    let sq = |f: File, r: Rank| Square::from_coords(f, r);
    let (wt, bt) = match outcome {
        Outcome::WhiteWins => (sq(File::E, Rank::Fourth), sq(File::D, Rank::Fifth)),
        Outcome::BlackWins => (sq(File::D, Rank::Fourth), sq(File::E, Rank::Fifth)),
        Outcome::Draw if rng.random_bool(0.5) => {
            (sq(File::E, Rank::Fourth), sq(File::E, Rank::Fifth))
        }
        Outcome::Draw => (sq(File::D, Rank::Fourth), sq(File::D, Rank::Fifth)),
    };
    let free = |s: Square| board[s.to_usize()] == piece::EMPTY || s == wk || s == bk;
    if !free(wt) || !free(bt) {
        return Ok(None);
    }
    let mut h = Hands::new(board, t0, ply);
    let (first, second) = if rng.random_bool(0.5) {
        (wk, bk)
    } else {
        (bk, wk)
    };
    h.lift(first)?;
    h.wait(tm.dur(rng, 100, 500));
    h.lift(second)?;
    h.wait(tm.dur(rng, 300, 900));
    h.place(wt, piece::WKING)?;
    h.wait(tm.dur(rng, 100, 500));
    h.place(bt, piece::BKING)?;
    let handled = h.finish(vec![Style::ResultGesture])?;
    Ok(Some((handled, wt, bt)))
}

/// The piece on `from` is knocked onto the empty `to`, or knocked over (lying on its side,
/// unseen by the sensors) when `to` is `None`.
pub(crate) fn knock(
    rng: &mut ChaCha8Rng,
    board: &mut [u8; 64],
    from: Square,
    to: Option<Square>,
    t0: Millis,
    tm: &Timing<'_>,
    ply: u32,
) -> Result<Handled, EmulatorError> {
    let mut h = Hands::new(board, t0, ply);
    let code = h.lift(from)?;
    match to {
        Some(to) => {
            h.wait(tm.dur(rng, 20, 120));
            h.place(to, code)?;
        }
        None => h.discard(code)?,
    }
    h.finish(Vec::new())
}

/// Hands make `board` equal `want`: misplaced pieces are carried to squares that want them,
/// pieces nothing wants are put beside the board, missing ones come from beside it.
pub(crate) fn restore(
    rng: &mut ChaCha8Rng,
    board: &mut [u8; 64],
    want: &[u8; 64],
    t0: Millis,
    tm: &Timing<'_>,
    ply: u32,
) -> Result<Handled, EmulatorError> {
    let mut h = Hands::new(board, t0, ply);
    // Every held piece that an empty square wants goes there.
    let settle = |h: &mut Hands<'_>, rng: &mut ChaCha8Rng| -> Result<(), EmulatorError> {
        for code in h.held.clone() {
            let spot = Square::ALL
                .into_iter()
                .find(|sq| h.board[sq.to_usize()] == piece::EMPTY && want[sq.to_usize()] == code);
            if let Some(sq) = spot {
                h.place(sq, code)?;
                h.wait(tm.dur(rng, 100, 400));
            }
        }
        Ok(())
    };
    let wrong: Vec<Square> = Square::ALL
        .into_iter()
        .filter(|sq| {
            let (c, w) = (h.board[sq.to_usize()], want[sq.to_usize()]);
            c != piece::EMPTY && c != w
        })
        .collect();
    for sq in wrong {
        if h.held.len() >= 2 {
            let code = h.held[0];
            h.discard(code)?;
        }
        h.lift(sq)?;
        h.wait(tm.carry(rng));
        settle(&mut h, rng)?;
    }
    for code in h.held.clone() {
        h.discard(code)?;
    }
    for sq in Square::ALL {
        let w = want[sq.to_usize()];
        if h.board[sq.to_usize()] != w {
            h.take_from_box(w)?;
            h.wait(tm.dur(rng, 200, 700));
            h.place(sq, w)?;
        }
    }
    h.finish(Vec::new())
}
