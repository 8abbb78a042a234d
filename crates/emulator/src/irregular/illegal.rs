//! Illegal moves for a scripted irregularity: a piece moved against its shape, a king left in
//! check, a pawn on the last rank unpromoted, and the quiet answers and other moves around them.

use super::*;

/// A wrong-shape move for `mover` to an empty square: its origin and target.
pub(super) fn wrong_shape(rng: &mut ChaCha8Rng, pos: &Chess) -> Option<Move> {
    let board = pos.board();
    let us = pos.turn();
    let occ = board.occupied();
    let mut main = Vec::new();
    let mut other = Vec::new();
    for from in board.by_color(us) {
        let Some(p) = board.piece_at(from) else {
            continue;
        };
        let reach = if p.role == Role::Pawn {
            // Pushes and captures are the pawn's shapes.
            let dir: i32 = if us == Color::White { 8 } else { -8 };
            let mut b = attacks::pawn_attacks(us, from);
            for k in [1, 2] {
                if let Some(sq) = from.offset(dir * k) {
                    b.add(sq);
                }
            }
            b
        } else {
            attacks::attacks(from, p, occ)
        };
        let targets = (attacks::king_attacks(from) | attacks::knight_attacks(from)) & !occ & !reach;
        for to in targets {
            // A pawn on the last rank would be a different irregularity.
            if p.role == Role::Pawn
                && (to.rank() == shakmaty::Rank::First || to.rank() == shakmaty::Rank::Eighth)
            {
                continue;
            }
            let m = Move::Normal {
                role: p.role,
                from,
                capture: None,
                to,
                promotion: None,
            };
            if matches!(p.role, Role::Pawn | Role::King) {
                other.push(m);
            } else {
                main.push(m);
            }
        }
    }
    pick(rng, &main).or_else(|| pick(rng, &other))
}

/// A move of the right shape (pseudo-legal) that leaves the mover's own king attacked.
pub(super) fn into_check(rng: &mut ChaCha8Rng, pos: &Chess) -> Option<Move> {
    let board = pos.board();
    let us = pos.turn();
    let them = us.other();
    let occ = board.occupied();
    let last = if us == Color::White {
        shakmaty::Rank::Eighth
    } else {
        shakmaty::Rank::First
    };
    let mut found = Vec::new();
    for from in board.by_color(us) {
        let Some(p) = board.piece_at(from) else {
            continue;
        };
        let targets: Bitboard = if p.role == Role::Pawn {
            let dir: i32 = if us == Color::White { 8 } else { -8 };
            let mut b = attacks::pawn_attacks(us, from) & board.by_color(them);
            if let Some(one) = from.offset(dir)
                && !occ.contains(one)
            {
                b.add(one);
                let home = if us == Color::White {
                    shakmaty::Rank::Second
                } else {
                    shakmaty::Rank::Seventh
                };
                if from.rank() == home
                    && let Some(two) = from.offset(2 * dir)
                    && !occ.contains(two)
                {
                    b.add(two);
                }
            }
            b
        } else {
            attacks::attacks(from, p, occ) & !board.by_color(us)
        };
        for to in targets {
            let victim = board.piece_at(to);
            if victim.is_some_and(|v| v.role == Role::King)
                || (p.role == Role::Pawn && to.rank() == last)
            {
                continue;
            }
            let mut after = board.clone();
            after.discard_piece_at(from);
            after.set_piece_at(to, p);
            let king = if p.role == Role::King {
                Some(to)
            } else {
                after.king_of(us)
            };
            if let Some(k) = king
                && after.attacks_to(k, them, after.occupied()).any()
            {
                found.push(Move::Normal {
                    role: p.role,
                    from,
                    capture: victim.map(|v| v.role),
                    to,
                    promotion: None,
                });
            }
        }
    }
    pick(rng, &found)
}

/// A pawn move to the last rank without the promotion.
pub(super) fn pawn_on_last_rank(rng: &mut ChaCha8Rng, pos: &Chess) -> Option<Move> {
    let mut found: Vec<Move> = Vec::new();
    for m in pos.legal_moves() {
        if let Move::Normal {
            role: Role::Pawn,
            from,
            capture,
            to,
            promotion: Some(_),
        } = m
        {
            let plain = Move::Normal {
                role: Role::Pawn,
                from,
                capture,
                to,
                promotion: None,
            };
            if !found.contains(&plain) {
                found.push(plain);
            }
        }
    }
    pick(rng, &found)
}

/// The illegal move for `kind`, with fallbacks; `None` when no piece can move wrongly at all.
pub(super) fn illegal_move(
    rng: &mut ChaCha8Rng,
    pos: &Chess,
    kind: IllegalKind,
) -> Option<(Move, IllegalKind)> {
    let first = match kind {
        IllegalKind::IntoCheck => into_check(rng, pos),
        IllegalKind::PawnOnLastRank => pawn_on_last_rank(rng, pos),
        IllegalKind::WrongShape => None,
    };
    match first {
        Some(m) => Some((m, kind)),
        None => wrong_shape(rng, pos).map(|m| (m, IllegalKind::WrongShape)),
    }
}

/// A quiet move for the opponent after the illegal move `m` (as if it had been the nearest legal
/// move: a promotion to a queen; or, with no such move, as if the turn had simply passed), that
/// moves a piece of his from a square `board` still shows to an empty one, away from `m`.
pub(super) fn quiet_answer(
    rng: &mut ChaCha8Rng,
    pos: &Chess,
    m: &Move,
    board: &[u8; 64],
) -> Option<Move> {
    let as_queen = match *m {
        Move::Normal {
            role: Role::Pawn,
            from,
            capture,
            to,
            promotion: None,
        } => Some(Move::Normal {
            role: Role::Pawn,
            from,
            capture,
            to,
            promotion: Some(Role::Queen),
        }),
        _ => None,
    };
    let after = as_queen
        .filter(|q| pos.is_legal(*q))
        .and_then(|q| pos.clone().play(q).ok())
        .or_else(|| pos.clone().swap_turn().ok())?;
    let [from, to] = from_to(m);
    let found: Vec<Move> = after
        .legal_moves()
        .into_iter()
        .filter(|r| {
            matches!(
                r,
                Move::Normal {
                    capture: None,
                    promotion: None,
                    ..
                }
            ) && r.from().is_some_and(|f| board[f.to_usize()] != 0)
                && board[r.to().to_usize()] == 0
                && ![from, to].contains(&r.to())
                && r.from().is_some_and(|f| ![from, to].contains(&f))
        })
        .collect();
    pick(rng, &found)
}

/// A plausible other legal move (not mate, no promotion, preferably by the same piece);
/// the recorded move itself when there is none.
pub(super) fn other_move(rng: &mut ChaCha8Rng, pos: &Chess, recorded: &Move) -> Move {
    let mut same = Vec::new();
    let mut any = Vec::new();
    for m in pos.legal_moves() {
        if m == *recorded
            || !matches!(
                m,
                Move::Normal {
                    promotion: None,
                    ..
                }
            )
        {
            continue;
        }
        if pos.clone().play(m).is_ok_and(|p| p.is_checkmate()) {
            continue;
        }
        if m.from() == recorded.from() {
            same.push(m);
        }
        any.push(m);
    }
    let first = if rng.random_bool(0.6) {
        pick(rng, &same)
    } else {
        None
    };
    first.or_else(|| pick(rng, &any)).unwrap_or(*recorded)
}
