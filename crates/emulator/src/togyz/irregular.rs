//! Scripted togyz irregularities: scattered korgools, a wrong start, an illegal sowing (a pit
//! skipped, a capture not taken), each with the truth a tracker is tested against.

use super::*;

/// What goes wrong on a togyz board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TogyzIrregularityKind {
    /// `korgools` knocked out of a pit into its neighbour, left there for at least 4 s, put
    /// back before the move (`displaced`, [KG 4.2–4.3]).
    Scattered { korgools: u8 },
    /// One korgool moved between two pits in the start position, corrected before the first
    /// move (`wrong_start_position`); only before ply 1.
    WrongStart,
    /// The mover sows skipping a pit and presses the clock (`illegal_move`, [KG 1.1, 1.5]); the
    /// arbiter has the position reinstated and the real move is played (its press does not
    /// switch the clock: the lever is already down).
    IllegalSowing,
    /// The mover sows correctly but presses without taking the capture or the tuz
    /// (`illegal_move`, [KG 1.3, 2.6]); the position is reinstated and the move played again,
    /// taken this time. Played only where the move captures.
    CaptureNotTaken,
}

/// An irregularity scheduled before a ply (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TogyzIrregularity {
    pub before_ply: u32,
    pub kind: TogyzIrregularityKind,
}

/// A scripted irregularity as played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TogyzIrregularityInfo {
    pub before_ply: u32,
    pub kind: TogyzIrregularityKind,
    /// First hand action (0 for a wrong start: the board was so from the beginning).
    pub start_ms: Millis,
    /// The irregular board is fully shown (hand time; sensor reports follow within a scan).
    pub shown_ms: Millis,
    /// First hand action putting it right.
    pub restore_ms: Millis,
    /// Last hand action putting it right.
    pub resolved_ms: Millis,
    /// Game locations (0..18) involved: from, to (an illegal sowing: start pit, skipped pit).
    pub locations: (usize, usize),
    /// The mover's press completing an illegal sowing.
    pub press_ms: Option<Millis>,
}

/// Plays `irr` with `hands` from `t`; returns when the mover's hand is free again.
pub(super) fn irregularity(
    hands: &mut Hands<'_>,
    irr: &TogyzIrregularity,
    t: Millis,
    wrong_start: Option<(usize, usize)>,
    (side, mv, captures): (Side, Move, bool),
    infos: &mut Vec<TogyzIrregularityInfo>,
) -> Millis {
    match irr.kind {
        TogyzIrregularityKind::IllegalSowing => {
            return illegal_sowing(hands, irr, t, side, mv, true, infos);
        }
        TogyzIrregularityKind::CaptureNotTaken if captures => {
            return illegal_sowing(hands, irr, t, side, mv, false, infos);
        }
        _ => {}
    }
    let tuz_pits: Vec<usize> = [Side::White, Side::Black]
        .into_iter()
        .filter_map(|s| hands.tuz_loc(s))
        .collect();
    // Korgools go from `from` to `to` (already done for a wrong start), then back.
    let (from, to, k, start_ms, shown_ms, t) = match irr.kind {
        TogyzIrregularityKind::IllegalSowing | TogyzIrregularityKind::CaptureNotTaken => {
            return t;
        }
        TogyzIrregularityKind::WrongStart => {
            let Some((from, to)) = wrong_start else {
                return t;
            };
            (from, to, 1, 0, 0, t)
        }
        TogyzIrregularityKind::Scattered { korgools } => {
            let k = korgools.max(1);
            let candidates: Vec<usize> = (0..PIT_LOCATIONS)
                .filter(|&l| {
                    let to = (l + 1) % PIT_LOCATIONS;
                    // Two or more stay behind: the pit does not look lifted or sown from.
                    hands.raw[l] >= k + 2 && !tuz_pits.contains(&l) && !tuz_pits.contains(&to)
                })
                .collect();
            if candidates.is_empty() {
                return t;
            }
            let from = candidates[hands.rng.random_range(0..candidates.len())];
            let to = (from + 1) % PIT_LOCATIONS;
            hands.pit(t, from, -i16::from(k), TogyzAction::Irregular);
            let shown = t + hands.dur(100, 300);
            hands.pit(shown, to, i16::from(k), TogyzAction::Irregular);
            (from, to, k, t, shown, shown)
        }
    };
    // Left for at least 4 s, then put back.
    let restore = t + hands.dur(4_000, 7_000).max(4_000);
    hands.pit(restore, to, -i16::from(k), TogyzAction::Irregular);
    let resolved = restore + hands.dur(200, 500);
    hands.pit(resolved, from, i16::from(k), TogyzAction::Irregular);
    infos.push(TogyzIrregularityInfo {
        before_ply: irr.before_ply,
        kind: irr.kind,
        start_ms,
        shown_ms,
        restore_ms: restore,
        resolved_ms: resolved,
        locations: (from, to),
        press_ms: None,
    });
    resolved + hands.dur(600, 1_500)
}

/// The mover lifts the start pit of `mv`, sows (skipping one pit if `skip_a_pit`, else as the
/// rules say but leaving the capture), presses; then every korgool goes back into the start
/// pit. Played only when the pit holds three or more (so a pit can be skipped after the first
/// korgool went back) and no tuz lies in the way.
pub(super) fn illegal_sowing(
    hands: &mut Hands<'_>,
    irr: &TogyzIrregularity,
    t: Millis,
    side: Side,
    mv: Move,
    skip_a_pit: bool,
    infos: &mut Vec<TogyzIrregularityInfo>,
) -> Millis {
    let start = Board::location(side, mv.pit());
    let n = hands.raw[start];
    let tuz_pits: Vec<usize> = [Side::White, Side::Black]
        .into_iter()
        .filter_map(|s| hands.tuz_loc(s))
        .collect();
    // Where the korgools would go: back into the start pit, then on, one pit skipped.
    let path: Vec<usize> = (1..=usize::from(n))
        .map(|i| (start + i) % PIT_LOCATIONS)
        .collect();
    if !(3..PIT_LOCATIONS as u8).contains(&n) || path.iter().any(|l| tuz_pits.contains(l)) {
        return t;
    }
    // Not skipping: the pit past the landing pit is left out.
    let skip = if skip_a_pit {
        path[hands.rng.random_range(0..path.len() - 2)]
    } else {
        path[path.len() - 1]
    };
    hands.pit(t, start, -i16::from(n), TogyzAction::Irregular);
    let mut at = t + hands.dur(250, 500);
    hands.pit(at, start, 1, TogyzAction::Irregular);
    let mut sown = vec![start];
    for &loc in path.iter().filter(|&&l| l != skip).take(usize::from(n) - 1) {
        at += hands.dur(150, 350);
        hands.pit(at, loc, 1, TogyzAction::Irregular);
        sown.push(loc);
    }
    let shown = at;
    let press = at + hands.dur(400, 900);
    // The arbiter stops the clock and has the position reinstated.
    let restore = press + hands.dur(3_000, 6_000);
    let mut back = restore;
    for &loc in sown.iter().skip(1) {
        hands.pit(back, loc, -1, TogyzAction::Irregular);
        back += hands.dur(150, 300);
    }
    hands.pit(back, start, i16::from(n) - 1, TogyzAction::Irregular);
    infos.push(TogyzIrregularityInfo {
        before_ply: irr.before_ply,
        kind: irr.kind,
        start_ms: t,
        shown_ms: shown,
        restore_ms: restore,
        resolved_ms: back,
        locations: (start, skip),
        press_ms: Some(press),
    });
    back + hands.dur(800, 2_000)
}
