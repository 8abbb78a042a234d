//! One move by hand, step by step: castling in either order (and Chess960's), captures with the
//! victim or the mover first, slides, quick hands, promotions and en passant, as sensor acts.

use super::*;

/// Makes `m` (legal for `mover`) with the hands on `board`, starting at `t0`.
pub(crate) fn handle_move(
    rng: &mut ChaCha8Rng,
    board: &mut [u8; 64],
    m: &Move,
    mover: Color,
    t0: Millis,
    tm: &Timing<'_>,
    ply: u32,
) -> Result<Handled, EmulatorError> {
    let mut h = Hands::new(board, t0, ply);
    let mut styles = Vec::new();

    if rng.random_bool(P_TOUCH) {
        let own: Vec<Square> = Square::ALL
            .into_iter()
            .filter(|sq| color_of(h.board[sq.to_usize()]) == Some(mover))
            .collect();
        if let Some(sq) = pick(rng, &own) {
            let code = h.lift(sq)?;
            h.wait(tm.sensed(rng, 250, 700));
            h.place(sq, code)?;
            h.wait(tm.dur(rng, 200, 900));
            styles.push(Style::TouchAdjust);
        }
    }

    let target = match *m {
        Move::Castle { king, rook } => {
            let rank = king.rank();
            let (kf, rf) = if rook.file() > king.file() {
                (File::G, File::F)
            } else {
                (File::C, File::D)
            };
            let (k_to, r_to) = (Square::from_coords(kf, rank), Square::from_coords(rf, rank));
            let standard = king.file() == File::E && matches!(rook.file(), File::A | File::H);
            if !standard {
                castle_960(rng, &mut h, &mut styles, tm, (king, rook), (k_to, r_to))?;
            } else if rng.random_bool(0.7) {
                h.lift_and_place(king, k_to, tm.carry(rng))?;
                h.wait(tm.dur(rng, 100, 500));
                h.lift_and_place(rook, r_to, tm.carry(rng))?;
                styles.push(Style::CastleKingFirst);
            } else {
                h.lift_and_place(rook, r_to, tm.carry(rng))?;
                h.wait(tm.dur(rng, 100, 500));
                h.lift_and_place(king, k_to, tm.carry(rng))?;
                styles.push(Style::CastleRookFirst);
            }
            k_to
        }
        Move::EnPassant { from, to } => {
            let victim = Square::from_coords(to.file(), from.rank());
            match rng.random_range(0..3) {
                0 => {
                    let v = h.lift(victim)?;
                    h.wait(tm.sensed(rng, 200, 700));
                    h.discard(v)?;
                    h.lift_and_place(from, to, tm.carry(rng))?;
                    styles.push(Style::EnPassantVictimFirst);
                }
                1 => {
                    let p = h.lift(from)?;
                    h.wait(tm.dur(rng, 100, 400));
                    let v = h.lift(victim)?;
                    h.wait(tm.sensed(rng, 150, 500));
                    h.place(to, p)?;
                    h.discard(v)?;
                    styles.push(Style::EnPassantVictimBetween);
                }
                _ => {
                    h.lift_and_place(from, to, tm.carry(rng))?;
                    h.wait(tm.dur(rng, 150, 600));
                    let v = h.lift(victim)?;
                    h.discard(v)?;
                    styles.push(Style::EnPassantVictimLast);
                }
            }
            to
        }
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            normal_move(
                rng,
                &mut h,
                &mut styles,
                tm,
                (role, from, capture, to, promotion),
                mover,
            )?;
            to
        }
        Move::Put { .. } => return Err(h.err("drops are not chess moves".to_string())),
    };

    if rng.random_bool(P_NUDGE) {
        let near: Vec<Square> = attacks::king_attacks(target)
            .into_iter()
            .filter(|sq| h.board[sq.to_usize()] != piece::EMPTY)
            .collect();
        if let Some(sq) = pick(rng, &near) {
            h.wait(tm.dur(rng, 100, 400));
            let code = h.lift(sq)?;
            h.wait(tm.sensed(rng, 250, 700));
            h.place(sq, code)?;
            styles.push(Style::NudgeNeighbour);
        }
    }
    h.finish(styles)
}

/// Chess960 castling, king `from.0` to `to.0` and rook `from.1` to `to.1`, in any order the
/// squares allow: one piece alone when the other is already on its square; else the king or the
/// rook carried over first (when its square is free), or both lifted and set down in either
/// order (always possible; the only way when they swap squares).
pub(super) fn castle_960(
    rng: &mut ChaCha8Rng,
    h: &mut Hands<'_>,
    styles: &mut Vec<Style>,
    tm: &Timing<'_>,
    (king, rook): (Square, Square),
    (k_to, r_to): (Square, Square),
) -> Result<(), EmulatorError> {
    if king == k_to {
        h.lift_and_place(rook, r_to, tm.carry(rng))?;
        styles.push(Style::CastleKingStays);
        return Ok(());
    }
    if rook == r_to {
        h.lift_and_place(king, k_to, tm.carry(rng))?;
        styles.push(Style::CastleRookStays);
        return Ok(());
    }
    #[derive(Clone, Copy)]
    enum Order {
        KingCarried,
        RookCarried,
        BothKingFirst,
        BothRookFirst,
    }
    let mut orders = vec![Order::BothKingFirst, Order::BothRookFirst];
    if k_to != rook {
        orders.push(Order::KingCarried);
    }
    if r_to != king {
        orders.push(Order::RookCarried);
    }
    match pick(rng, &orders).unwrap_or(Order::BothKingFirst) {
        Order::KingCarried => {
            h.lift_and_place(king, k_to, tm.carry(rng))?;
            h.wait(tm.dur(rng, 100, 500));
            h.lift_and_place(rook, r_to, tm.carry(rng))?;
            styles.push(Style::CastleKingFirst);
        }
        Order::RookCarried => {
            h.lift_and_place(rook, r_to, tm.carry(rng))?;
            h.wait(tm.dur(rng, 100, 500));
            h.lift_and_place(king, k_to, tm.carry(rng))?;
            styles.push(Style::CastleRookFirst);
        }
        both @ (Order::BothKingFirst | Order::BothRookFirst) => {
            let king_first = matches!(both, Order::BothKingFirst);
            // Either piece may be lifted first.
            let (kc, rc) = if rng.random_bool(0.5) {
                let kc = h.lift(king)?;
                h.wait(tm.dur(rng, 50, 300));
                (kc, h.lift(rook)?)
            } else {
                let rc = h.lift(rook)?;
                h.wait(tm.dur(rng, 50, 300));
                (h.lift(king)?, rc)
            };
            h.wait(tm.carry(rng));
            if king_first {
                h.place(k_to, kc)?;
                h.wait(tm.dur(rng, 100, 400));
                h.place(r_to, rc)?;
                styles.push(Style::CastleKingFirst);
            } else {
                h.place(r_to, rc)?;
                h.wait(tm.dur(rng, 100, 400));
                h.place(k_to, kc)?;
                styles.push(Style::CastleRookFirst);
            }
            styles.push(Style::CastleBothInHands);
        }
    }
    Ok(())
}

pub(super) fn normal_move(
    rng: &mut ChaCha8Rng,
    h: &mut Hands<'_>,
    styles: &mut Vec<Style>,
    tm: &Timing<'_>,
    (role, from, capture, to, promotion): NormalMove,
    mover: Color,
) -> Result<(), EmulatorError> {
    #[derive(PartialEq)]
    enum Cap {
        VictimFirst,
        MoverFirst,
        OnTop,
    }
    let cap = capture.map(|_| match rng.random_range(0..3) {
        0 => Cap::VictimFirst,
        1 => Cap::MoverFirst,
        _ => Cap::OnTop,
    });
    let mut path: Vec<Square> = attacks::between(from, to).into_iter().collect();
    path.sort_by_key(|sq| sq.distance(from));
    let slide = matches!(role, Role::Rook | Role::Bishop | Role::Queen) && !path.is_empty() && {
        rng.random_bool(P_SLIDE)
    };
    let pawn_first = promotion.is_some() && rng.random_bool(0.5);
    // Fast hands: lift right after the scan passed the origin, place before it comes back,
    // and only when the scan reaches the target in between.
    let mut fast = None;
    if cap.is_none() && !slide && promotion.is_none() && rng.random_bool(P_FAST) {
        let d = tm.dur(rng, 20, 90);
        let (fi, ti) = (tm.scanner.index(from), tm.scanner.index(to));
        if tm.scanner.lag_ms(fi, ti) > d + 3 {
            fast = Some(d);
        }
    }

    let mut victim = None;
    if cap == Some(Cap::VictimFirst) {
        let v = h.lift(to)?;
        h.wait(tm.sensed(rng, 200, 700));
        h.discard(v)?;
        h.wait(tm.dur(rng, 100, 400));
        styles.push(Style::CaptureVictimFirst);
    }
    if fast.is_some() {
        let fi = tm.scanner.index(from);
        h.t = tm.scanner.next_scan_ms(fi, h.t) + 1;
    }
    let carried = h.lift(from)?;
    if slide {
        let k = rng.random_range(1..=path.len().min(3));
        let mut stops: Vec<Square> = Vec::new();
        while stops.len() < k {
            if let Some(s) = pick(rng, &path)
                && !stops.contains(&s)
            {
                stops.push(s);
            }
        }
        stops.sort_by_key(|sq| sq.distance(from));
        for s in stops {
            h.wait(tm.dur(rng, 80, 300));
            h.place(s, carried)?;
            h.wait(tm.sensed(rng, 150, 400));
            h.lift(s)?;
        }
        styles.push(Style::Slide);
    }
    h.wait(fast.unwrap_or_else(|| tm.carry(rng)));
    if cap == Some(Cap::MoverFirst) {
        let v = h.lift(to)?;
        victim = Some(v);
        h.wait(tm.sensed(rng, 150, 500));
        styles.push(Style::CaptureMoverFirst);
    }
    let on_top = cap == Some(Cap::OnTop);
    if on_top {
        styles.push(Style::CaptureOnTop);
    }
    let put = |h: &mut Hands<'_>, code: u8, top: bool| {
        if top {
            h.place_on_top(to, code)
        } else {
            h.place(to, code)
        }
    };
    match promotion {
        Some(r) => {
            let promoted = code_of(r.of(mover));
            if pawn_first {
                put(h, carried, on_top)?;
                if let Some(v) = victim.take() {
                    h.discard(v)?;
                }
                h.wait(tm.sensed(rng, 300, 900));
                h.lift(to)?;
                h.discard(carried)?;
                h.take_from_box(promoted)?;
                h.wait(tm.dur(rng, 200, 800));
                h.place(to, promoted)?;
                styles.push(Style::PromotionPawnFirst);
            } else {
                if let Some(v) = victim.take() {
                    h.discard(v)?;
                }
                h.discard(carried)?;
                h.take_from_box(promoted)?;
                h.wait(tm.dur(rng, 150, 500));
                put(h, promoted, on_top)?;
                styles.push(Style::PromotionDirect);
            }
        }
        None => put(h, carried, on_top)?,
    }
    if let Some(v) = victim {
        h.discard(v)?;
    }
    if fast.is_some() {
        styles.push(Style::FastHands);
    }
    if cap.is_none() && promotion.is_none() && !slide && fast.is_none() {
        styles.push(Style::Plain);
    }
    Ok(())
}
