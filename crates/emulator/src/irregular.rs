//! Scripted irregularities: what players do wrong over the board (FIDE Article 7), emulated.
//!
//! Flow: [`random_irregularities`] (or the caller) lists [`ScriptedIrregularity`]s; the script
//! generator in `dgt` calls [`play_before`] when it reaches such a ply, which chooses the
//! details (seeded: which piece is knocked, which illegal move is made), drives the hands
//! (`handling`) in phases that each finish on the sensors before the next begins, and returns
//! the FIELD_UPDATEs, the lever presses and an [`IrregularityInfo`] with the truth. The board
//! always ends on the position before the irregularity, so the recorded move follows as usual.
//! Pure: seeded randomness, time is an argument.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Bitboard, Chess, Color, Move, Position, Role, Square, attacks};

use super::{
    EmulatorError,
    handling::{Act, Timing, from_to, handle_move, knock, restore},
    hardware::{Scanner, board_index, physical, to_dump},
};

mod illegal;
use boardscribe_core::{Millis, protocol::dgt::BoardDump};
use illegal::{illegal_move, other_move, quiet_answer};

/// How long a knocked piece stays displaced unless told otherwise (longer than any settle window).
pub const DEFAULT_HOLD_MS: Millis = 5_000;

/// What an illegal move looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IllegalKind {
    /// A piece moved in a way its kind cannot (a bishop like a rook or a knight) to an empty square.
    WrongShape,
    /// A move of the right shape that leaves the own king in check (falls back to `WrongShape`).
    IntoCheck,
    /// A pawn moved to the last rank and left there as a pawn (falls back to `WrongShape`).
    PawnOnLastRank,
}

/// Which pieces of the start position stand on each other's squares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WrongStartKind {
    /// King and queen of one side swapped (falls back to `KnightBishopSwapped`).
    KingQueenSwapped,
    /// A knight and a bishop of one side swapped (falls back to `KingQueenSwapped`).
    KnightBishopSwapped,
}

/// One kind of scripted irregularity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IrregularityScript {
    /// While the player to move thinks, a piece is knocked to an empty neighbouring square,
    /// stays there `hold_ms` (not scaled by speed; at least a scan period + 100 ms), and is put back.
    Knock { hold_ms: Millis },
    /// Like `Knock`, but the piece falls over: the sensors see its square empty.
    KnockOver { hold_ms: Millis },
    /// The player to move makes an illegal move and presses the clock; seconds later (the
    /// arbiter) the move is reversed on the board, the clock is not touched, and the player
    /// then makes the recorded move (whose press finds the lever already down).
    IllegalMove { kind: IllegalKind },
    /// Like `IllegalMove`, but nobody notices at once: the opponent answers with a quiet move on
    /// that board and presses, and only then is the position before the illegal move reinstated
    /// (both moves undone) and the recorded move made. Not drawn by [`random_irregularities`].
    IllegalMoveAnswered { kind: IllegalKind },
    /// The player to move presses the clock without moving; the opponent presses back.
    PressWithoutMove,
    /// The player to move makes another legal move (never mate) and presses; the move is taken
    /// back (a captured piece returns), the opponent presses back, then the recorded move follows.
    Takeback,
    /// Only before ply 1: the game starts from a wrong set-up that the players then correct.
    WrongStart { kind: WrongStartKind },
}

/// An irregularity to play before a ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScriptedIrregularity {
    /// 1-based: it happens after `before_ply - 1` plies were played, before ply `before_ply`.
    pub before_ply: u32,
    pub kind: IrregularityScript,
}

/// What a scripted irregularity did: the truth a tracker is tested against.
///
/// Times are script times before wire spacing (frames can leave a few ms later), like
/// [`super::PlyInfo`]'s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrregularityInfo {
    /// 1-based ply it happened before.
    pub before_ply: u32,
    /// What happened, after fallbacks (an `IntoCheck` with no such move is a `WrongShape`).
    pub kind: IrregularityScript,
    /// First hand action or press; 0 for a wrong start (the board was so from the beginning).
    pub start_ms: Millis,
    /// The sensors have reported the irregular board (the handshake's end for a wrong start).
    pub shown_ms: Millis,
    /// First hand action putting things right, or the opponent's answering press.
    pub restore_ms: Millis,
    /// The sensors have reported the restored board: the position before it again.
    pub resolved_ms: Millis,
    /// The irregular player's lever press (illegal move, press without move, takeback).
    pub press_ms: Option<Millis>,
    /// The opponent's press that gives the turn back (press without move, takeback).
    pub answer_press_ms: Option<Millis>,
    /// Board indices involved: origin then target of a knock, illegal or taken-back move (a
    /// knocked-over piece has only its square), the swapped squares of a wrong start.
    pub squares: Vec<u8>,
    /// The same squares, algebraic (`"c1"`).
    pub square_names: Vec<String>,
    /// The illegal or taken-back move, UCI (`"c1c2"`).
    pub uci: Option<String>,
    /// The board while irregular (board numbering): displaced, after the illegal or
    /// taken-back move at its press (for an answered illegal move: after the answer), or the
    /// wrong set-up.
    pub board_during: BoardDump,
}

/// A seeded list of irregularities for a game of `plies` plies: each ply but the last gets
/// one with probability `rate`; a wrong start can only come before ply 1. Sorted by ply.
pub fn random_irregularities(seed: u64, plies: usize, rate: f64) -> Vec<ScriptedIrregularity> {
    let rate = if rate.is_finite() {
        rate.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for ply in 1..plies {
        if !rng.random_bool(rate) {
            continue;
        }
        let hold_ms = rng.random_range(3_000..=8_000);
        let kind = if ply == 1 && rng.random_bool(0.3) {
            let kind = if rng.random_bool(0.5) {
                WrongStartKind::KingQueenSwapped
            } else {
                WrongStartKind::KnightBishopSwapped
            };
            IrregularityScript::WrongStart { kind }
        } else {
            match rng.random_range(0..7) {
                0 => IrregularityScript::Knock { hold_ms },
                1 => IrregularityScript::KnockOver { hold_ms },
                2 => IrregularityScript::IllegalMove {
                    kind: IllegalKind::WrongShape,
                },
                3 => IrregularityScript::IllegalMove {
                    kind: IllegalKind::IntoCheck,
                },
                4 => IrregularityScript::IllegalMove {
                    kind: IllegalKind::PawnOnLastRank,
                },
                5 => IrregularityScript::PressWithoutMove,
                _ => IrregularityScript::Takeback,
            }
        };
        out.push(ScriptedIrregularity {
            before_ply: ply as u32,
            kind,
        });
    }
    out
}

/// Checks a list against a game of `plies` plies: plies in `1..=plies`, one per ply, a wrong
/// start only before ply 1.
pub(super) fn validate(list: &[ScriptedIrregularity], plies: usize) -> Result<(), EmulatorError> {
    let mut seen = std::collections::BTreeSet::new();
    for s in list {
        let bad = |why: &str| {
            Err(EmulatorError::BadOptions(format!(
                "irregularity {s:?}: {why}"
            )))
        };
        if s.before_ply == 0 || s.before_ply as usize > plies {
            return bad("no such ply");
        }
        if !seen.insert(s.before_ply) {
            return bad("two irregularities before one ply");
        }
        if matches!(s.kind, IrregularityScript::WrongStart { .. }) && s.before_ply != 1 {
            return bad("a wrong start is only possible before ply 1");
        }
    }
    Ok(())
}

fn pick<T: Copy>(rng: &mut ChaCha8Rng, items: &[T]) -> Option<T> {
    if items.is_empty() {
        None
    } else {
        Some(items[rng.random_range(0..items.len())])
    }
}

/// The two squares of `start` whose pieces are swapped for a wrong set-up, and the kind used.
pub(super) fn wrong_start(
    rng: &mut ChaCha8Rng,
    start: &Chess,
    kind: WrongStartKind,
) -> Result<(Square, Square, WrongStartKind), EmulatorError> {
    let board = start.board();
    let pairs = |a: Role, b: Role| -> Vec<(Square, Square)> {
        let mut v = Vec::new();
        for c in Color::ALL {
            for x in board.by_piece(a.of(c)) {
                for y in board.by_piece(b.of(c)) {
                    v.push((x, y));
                }
            }
        }
        v
    };
    let order = match kind {
        WrongStartKind::KingQueenSwapped => [
            (WrongStartKind::KingQueenSwapped, Role::King, Role::Queen),
            (
                WrongStartKind::KnightBishopSwapped,
                Role::Knight,
                Role::Bishop,
            ),
        ],
        WrongStartKind::KnightBishopSwapped => [
            (
                WrongStartKind::KnightBishopSwapped,
                Role::Knight,
                Role::Bishop,
            ),
            (WrongStartKind::KingQueenSwapped, Role::King, Role::Queen),
        ],
    };
    for (k, a, b) in order {
        let all = pairs(a, b);
        // Neighbours first: that is how such set-ups happen.
        let near: Vec<_> = all
            .iter()
            .copied()
            .filter(|(x, y)| x.distance(*y) == 1)
            .collect();
        if let Some((x, y)) = pick(rng, &near).or_else(|| pick(rng, &all)) {
            return Ok((x, y, k));
        }
    }
    Err(EmulatorError::BadOptions(
        "a wrong start needs a king and queen or a knight and bishop of one side".into(),
    ))
}

/// Fixed inputs of [`play_before`].
pub(super) struct Ctx<'a, 'b> {
    pub timing: &'a Timing<'b>,
    pub scanner: &'a Scanner,
    pub rotated: bool,
    pub clock: bool,
    /// When the handshake is over (a wrong start has been shown by then).
    pub body_start_ms: Millis,
}

/// One irregularity played out.
pub(super) struct Played {
    /// FIELD_UPDATEs `(time, board index, code)`.
    pub reports: Vec<(Millis, u8, u8)>,
    /// Lever presses in time order: `(time, the side whose lever is pressed)`.
    pub presses: Vec<(Millis, Color)>,
    pub info: IrregularityInfo,
    /// Last hand action or press.
    pub end: Millis,
    /// Last report (or `end` when nothing was reported).
    pub settled: Millis,
}

/// Phases of hand work, each reported before the next starts.
struct Phases<'a> {
    scanner: &'a Scanner,
    reports: Vec<(Millis, u8, u8)>,
    /// When the next phase may start (after the last report).
    free: Millis,
}

impl Phases<'_> {
    /// Records a phase's acts on a board that was `before`; returns (last act, last report).
    fn add(&mut self, acts: &[Act], before: &[u8; 64], t0: Millis) -> (Millis, Millis) {
        let r = self.scanner.reports(acts, before);
        let end = acts.last().map_or(t0, |a| a.t);
        let settled = r.last().map_or(end, |x| x.0).max(end);
        self.reports.extend(r);
        self.free = self.free.max(settled + 1);
        (end, settled)
    }
}

/// Plays `irr` before the ply whose recorded move is `recorded` from `pos`. `board` is the
/// physical board (it may differ from `pos` only for a wrong start) and ends as `pos`; hands
/// start no earlier than `free`; presses come at least 50 ms after `prev_press`.
#[allow(clippy::too_many_arguments)]
pub(super) fn play_before(
    rng: &mut ChaCha8Rng,
    irr: &ScriptedIrregularity,
    pos: &Chess,
    recorded: &Move,
    board: &mut [u8; 64],
    free: Millis,
    prev_press: Option<Millis>,
    cx: &Ctx<'_, '_>,
) -> Result<Played, EmulatorError> {
    let ply = irr.before_ply;
    let tm = cx.timing;
    let period = cx.scanner.period_ms();
    let mover = pos.turn();
    let want = physical(pos);
    let idx = |sq: Square| board_index(sq, cx.rotated);
    let mut ph = Phases {
        scanner: cx.scanner,
        reports: Vec::new(),
        free,
    };
    let mut presses = Vec::new();
    let press_after = |t: Millis, prev: Option<Millis>| t.max(prev.map_or(0, |p| p + 50));
    let think = tm.dur(rng, 800, 4_000);
    let t0 = free + think;
    let mut squares: Vec<Square> = Vec::new();
    let mut uci = None;
    let mut press = None;
    let mut answer = None;
    let kind;
    let (start, shown, board_during, restore_at);

    match irr.kind {
        IrregularityScript::Knock { hold_ms } | IrregularityScript::KnockOver { hold_ms } => {
            let over = matches!(irr.kind, IrregularityScript::KnockOver { .. });
            let movable: Vec<Square> = Square::ALL
                .into_iter()
                .filter(|&sq| {
                    board[sq.to_usize()] != 0
                        && attacks::king_attacks(sq)
                            .into_iter()
                            .any(|n| board[n.to_usize()] == 0)
                })
                .collect();
            let Some(from) = pick(rng, &movable) else {
                return Err(EmulatorError::BadOptions(format!(
                    "ply {ply}: no piece can be knocked to an empty square"
                )));
            };
            let empty: Vec<Square> = attacks::king_attacks(from)
                .into_iter()
                .filter(|n| board[n.to_usize()] == 0)
                .collect();
            let to = if over { None } else { pick(rng, &empty) };
            let before = *board;
            let h = knock(rng, board, from, to, t0, tm, ply)?;
            let (end, settled) = ph.add(&h.acts, &before, t0);
            squares.push(from);
            squares.extend(to);
            kind = irr.kind;
            start = t0;
            shown = settled;
            board_during = *board;
            restore_at = (end + hold_ms.max(period + 100)).max(ph.free);
        }
        IrregularityScript::IllegalMove { kind: want_kind }
        | IrregularityScript::IllegalMoveAnswered { kind: want_kind } => {
            let answered = matches!(irr.kind, IrregularityScript::IllegalMoveAnswered { .. });
            let Some((m, k)) = illegal_move(rng, pos, want_kind) else {
                return Err(EmulatorError::BadOptions(format!(
                    "ply {ply}: no illegal move possible"
                )));
            };
            let before = *board;
            let h = handle_move(rng, board, &m, mover, t0, tm, ply)?;
            let (end, settled) = ph.add(&h.acts, &before, t0);
            squares.extend(from_to(&m));
            uci = Some(m.to_uci(pos.castles().mode()).to_string());
            kind = if answered {
                IrregularityScript::IllegalMoveAnswered { kind: k }
            } else {
                IrregularityScript::IllegalMove { kind: k }
            };
            start = h.acts.first().map_or(t0, |a| a.t);
            let (mut shown_at, mut during) = (settled, *board);
            let mut after = end;
            if cx.clock {
                let p = press_after(end + tm.dur(rng, 150, 700), prev_press);
                presses.push((p, mover));
                press = Some(p);
                after = p;
            }
            if answered {
                let Some(reply) = quiet_answer(rng, pos, &m, board) else {
                    return Err(EmulatorError::BadOptions(format!(
                        "ply {ply}: no quiet answer to the illegal move"
                    )));
                };
                let t1 = after + tm.dur(rng, 800, 3_000);
                let before = *board;
                let h = handle_move(rng, board, &reply, mover.other(), t1, tm, ply)?;
                let (end, settled) = ph.add(&h.acts, &before, t1);
                // What the arbiter finds: the board after the answer.
                (shown_at, during) = (settled, *board);
                after = end;
                if cx.clock {
                    let a = press_after(end + tm.dur(rng, 150, 700), press);
                    presses.push((a, mover.other()));
                    answer = Some(a);
                    after = a;
                }
            }
            shown = shown_at;
            board_during = during;
            // The arbiter is called; the position before the move is reinstated.
            restore_at = (after + tm.dur(rng, 2_000, 6_000).max(4 * period)).max(ph.free);
        }
        IrregularityScript::PressWithoutMove => {
            kind = irr.kind;
            board_during = *board;
            if cx.clock {
                let p = press_after(t0, prev_press);
                let a = p + tm.dur(rng, 600, 2_500).max(50);
                presses.push((p, mover));
                presses.push((a, mover.other()));
                press = Some(p);
                answer = Some(a);
                start = p;
                restore_at = a;
            } else {
                start = t0;
                restore_at = t0;
            }
            shown = start;
        }
        IrregularityScript::Takeback => {
            let m = other_move(rng, pos, recorded);
            let before = *board;
            let h = handle_move(rng, board, &m, mover, t0, tm, ply)?;
            let (end, settled) = ph.add(&h.acts, &before, t0);
            squares.extend(from_to(&m));
            uci = Some(m.to_uci(pos.castles().mode()).to_string());
            kind = irr.kind;
            start = h.acts.first().map_or(t0, |a| a.t);
            shown = settled;
            board_during = *board;
            let mut after = end;
            if cx.clock {
                let p = press_after(end + tm.dur(rng, 150, 700), prev_press);
                presses.push((p, mover));
                press = Some(p);
                after = p;
            }
            restore_at = (after + tm.dur(rng, 1_000, 4_000).max(2 * period)).max(ph.free);
        }
        IrregularityScript::WrongStart { .. } => {
            kind = irr.kind;
            squares = Square::ALL
                .into_iter()
                .filter(|sq| board[sq.to_usize()] != want[sq.to_usize()])
                .collect();
            start = 0;
            shown = cx.body_start_ms;
            board_during = *board;
            // The players look at it for a few seconds of scans before they see it.
            restore_at = (t0 + tm.dur(rng, 1_500, 4_000)).max(free + 8 * period);
        }
    }

    // Putting things right.
    let before = *board;
    let h = restore(rng, board, &want, restore_at, tm, ply)?;
    let (mut end, settled) = ph.add(&h.acts, &before, restore_at);
    let mut resolved = if h.acts.is_empty() {
        restore_at
    } else {
        settled
    };
    if matches!(irr.kind, IrregularityScript::Takeback) && cx.clock {
        let a = press_after(end + tm.dur(rng, 300, 1_200), press);
        presses.push((a, mover.other()));
        answer = Some(a);
        end = a;
    }
    if let Some(a) = answer {
        end = end.max(a);
        resolved = resolved.max(if h.acts.is_empty() { a } else { settled });
    }
    if *board != want {
        return Err(EmulatorError::Physical {
            ply,
            detail: format!("{kind:?} did not end on the position before it"),
        });
    }
    let info = IrregularityInfo {
        before_ply: ply,
        kind,
        start_ms: start,
        shown_ms: shown,
        restore_ms: restore_at,
        resolved_ms: resolved,
        press_ms: press,
        answer_press_ms: answer,
        squares: squares.iter().map(|&s| idx(s)).collect(),
        square_names: squares.iter().map(|s| s.to_string()).collect(),
        uci,
        board_during: to_dump(&board_during, cx.rotated),
    };
    let settled = ph.reports.last().map_or(end, |r| r.0).max(settled);
    Ok(Played {
        reports: ph.reports,
        presses,
        info,
        end,
        settled,
    })
}
