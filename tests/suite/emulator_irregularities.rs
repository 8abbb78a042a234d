//! Scripted irregularities on real corpus games: the FIELD_UPDATEs, decoded and replayed onto a
//! board here (no tracker), show each irregularity at the times the script records, the
//! position before it once resolved, and the game's own moves and final position.

use std::collections::BTreeMap;

use boardscribe::emulator::{
    BoardScript, EmulatorOptions, EventKind, IllegalKind, IrregularityInfo, IrregularityScript,
    PgnGame, ScriptedIrregularity, WrongStartKind, random_irregularities, script_pgn,
};
use shakmaty::{
    CastlingMode, Chess, Color, Piece, Position, Rank, Role, Square, attacks, uci::UciMove,
};

fn corpus() -> Vec<PgnGame> {
    crate::corpus_common::chess_games()
}

/// DGT code of a piece (dgt-notes 1.5), written out independently of the emulator.
fn dgt_code(p: Piece) -> u8 {
    let w = match p.role {
        Role::Pawn => 1,
        Role::Rook => 2,
        Role::Knight => 3,
        Role::Bishop => 4,
        Role::King => 5,
        Role::Queen => 6,
    };
    if p.color == Color::White { w } else { w + 6 }
}

/// Board numbering (dgt-notes 1.6): 0 = a8, 63 = h1; rotated boards read `i ^ 63`.
fn index(sq: Square, rotated: bool) -> usize {
    let i = (7 - sq.rank() as usize) * 8 + sq.file() as usize;
    if rotated { i ^ 63 } else { i }
}

fn expected_board(pos: &Chess, rotated: bool) -> [u8; 64] {
    let mut b = [0u8; 64];
    for sq in Square::ALL {
        if let Some(p) = pos.board().piece_at(sq) {
            b[index(sq, rotated)] = dgt_code(p);
        }
    }
    b
}

fn sq(name: &str) -> Square {
    name.parse().unwrap()
}

/// The FIELD_UPDATEs of a script, decoded from their wire bytes: `(time, kind, ply, index, code)`.
fn updates(script: &BoardScript) -> Vec<(u64, EventKind, u32, usize, u8)> {
    let mut out = Vec::new();
    for e in &script.events {
        let b = e.payload.to_bytes();
        if b[0] == 0x8e {
            assert_eq!(b[..3], [0x8e, 0x00, 0x05]);
            assert!(b[3] < 64 && b[4] <= 12);
            out.push((e.at_ms, e.kind, e.ply, usize::from(b[3]), b[4]));
        }
    }
    out
}

/// The board the host sees at time `t` (every update sent at or before `t` applied).
fn board_at(script: &BoardScript, t: u64) -> [u8; 64] {
    let mut b = script.start_dump.0;
    for (at, _, _, i, c) in updates(script) {
        if at > t {
            break;
        }
        b[i] = c;
    }
    b
}

/// BWTIME frames `(time, status byte)`.
fn clock_statuses(script: &BoardScript) -> Vec<(u64, u8)> {
    script
        .events
        .iter()
        .map(|e| (e.at_ms, e.payload.to_bytes()))
        .filter(|(_, b)| b[0] == 0x8d)
        .map(|(t, b)| (t, b[9]))
        .collect()
}

/// Status while `c`'s clock runs, as on the real captures: white 0x09, black 0x13.
fn running(c: Color) -> u8 {
    match c {
        Color::White => 0x09,
        Color::Black => 0x13,
    }
}

/// The status of the last clock frame sent from `t` to `t + 30` ms (a press's frame can
/// leave a few ms late behind other frames).
fn status_at(script: &BoardScript, t: u64) -> u8 {
    clock_statuses(script)
        .into_iter()
        .rev()
        .find(|&(at, _)| at >= t && at <= t + 30)
        .unwrap_or_else(|| panic!("no clock frame at {t}"))
        .1
}

/// The position after `n` plies of `game`.
fn position_after(game: &PgnGame, n: usize) -> Chess {
    let mut pos = game.start.clone();
    for m in &game.moves[..n] {
        pos.play_unchecked(*m);
    }
    pos
}

/// Checks every script must pass: (b) the board shows the game's position when each ply
/// begins (so after every irregularity's resolution), (c) the final position, (d) the moves.
fn check_game(game: &PgnGame, script: &BoardScript, rotated: bool) {
    for w in script.events.windows(2) {
        assert!(w[0].at_ms <= w[1].at_ms, "time went back");
    }
    let ups = updates(script);
    let mut board = script.start_dump.0;
    let mut pos = game.start.clone();
    let mut done = 0usize;
    let mut last_ply = 0;
    for &(_, kind, ply, i, c) in &ups {
        assert!(ply >= last_ply, "ply {ply} after {last_ply}");
        last_ply = ply;
        if kind == EventKind::ResultGesture {
            break;
        }
        // Entering a new ply (its irregularity or its move): the earlier plies are settled.
        while done + 1 < ply as usize {
            pos.play_unchecked(game.moves[done]);
            done += 1;
            assert_eq!(board, expected_board(&pos, rotated), "after ply {done}");
        }
        board[i] = c;
    }
    while done < game.moves.len() {
        pos.play_unchecked(game.moves[done]);
        done += 1;
    }
    assert_eq!(board, expected_board(&pos, rotated), "final position");
    // Each ply's irregularity is over before its recorded move's first update.
    for ply in 1..=game.moves.len() as u32 {
        let first_move = ups
            .iter()
            .position(|u| u.1 == EventKind::Move && u.2 == ply);
        let last_irregular = ups
            .iter()
            .rposition(|u| u.1 == EventKind::Irregularity && u.2 == ply);
        if let (Some(m), Some(x)) = (first_move, last_irregular) {
            assert!(x < m, "ply {ply}: irregular update after the move began");
        }
    }
    assert_eq!(script.plies.len(), game.moves.len());
    for (info, m) in script.plies.iter().zip(&game.moves) {
        assert_eq!(info.uci, m.to_uci(CastlingMode::Standard).to_string());
    }
    for (info, san) in script.plies.iter().zip(&game.sans) {
        assert_eq!(&info.san, san);
    }
}

/// The board just before the first update of ply `ply`'s recorded move.
fn board_before_move(script: &BoardScript, ply: u32) -> [u8; 64] {
    let mut b = script.start_dump.0;
    for (_, kind, p, i, c) in updates(script) {
        if kind == EventKind::Move && p == ply {
            break;
        }
        b[i] = c;
    }
    b
}

/// Checks of one irregularity that hold for every kind; returns the position before it.
fn check_common(game: &PgnGame, script: &BoardScript, info: &IrregularityInfo, rotated: bool) {
    let before = expected_board(&position_after(game, info.before_ply as usize - 1), rotated);
    // (a) the irregular board is what the host sees from when it was shown until the restoration.
    assert_eq!(
        board_at(script, info.shown_ms + 50),
        info.board_during.0,
        "{info:?}"
    );
    assert_eq!(board_at(script, info.restore_ms), info.board_during.0);
    // (b) then the position before it again, before the recorded move begins.
    assert_eq!(
        board_before_move(script, info.before_ply),
        before,
        "{info:?}"
    );
    let last_irregular = updates(script)
        .into_iter()
        .filter(|u| u.1 == EventKind::Irregularity && u.2 == info.before_ply)
        .map(|u| u.0)
        .max();
    if let Some(t) = last_irregular {
        assert_eq!(board_at(script, t), before);
        assert!(
            t > info.restore_ms && t <= info.resolved_ms + 100,
            "{info:?} {t}"
        );
    }
    assert!(info.start_ms <= info.shown_ms && info.shown_ms < info.restore_ms + 1);
    assert!(info.restore_ms <= info.resolved_ms);
    assert!(info.resolved_ms < script.plies[info.before_ply as usize - 1].start_ms);
    assert_eq!(info.squares.len(), info.square_names.len());
    for (&i, name) in info.squares.iter().zip(&info.square_names) {
        assert_eq!(usize::from(i), index(sq(name), rotated));
    }
}

fn opts(seed: u64, irregularities: Vec<ScriptedIrregularity>) -> EmulatorOptions {
    EmulatorOptions {
        seed,
        irregularities,
        ..EmulatorOptions::default()
    }
}

fn one(before_ply: u32, kind: IrregularityScript) -> Vec<ScriptedIrregularity> {
    vec![ScriptedIrregularity { before_ply, kind }]
}

/// Checks specific to the kind, on top of [`check_common`].
fn check_kind(
    game: &PgnGame,
    script: &BoardScript,
    info: &IrregularityInfo,
    opts: &EmulatorOptions,
) {
    let rotated = opts.rotated;
    let n = info.before_ply as usize - 1;
    let pos = position_after(game, n);
    let before = expected_board(&pos, rotated);
    let during = info.board_during.0;
    let mover = pos.turn();
    let diff: Vec<usize> = (0..64).filter(|&i| before[i] != during[i]).collect();
    match info.kind {
        IrregularityScript::Knock { hold_ms } => {
            let (a, b) = (sq(&info.square_names[0]), sq(&info.square_names[1]));
            let (ia, ib) = (index(a, rotated), index(b, rotated));
            assert_eq!(a.distance(b), 1, "knocked to a neighbouring square");
            assert_ne!(before[ia], 0);
            assert_eq!(before[ib], 0);
            assert_eq!((during[ia], during[ib]), (0, before[ia]));
            assert_eq!(diff, {
                let mut v = vec![ia, ib];
                v.sort();
                v
            });
            assert!(info.restore_ms >= info.start_ms + hold_ms);
        }
        IrregularityScript::KnockOver { hold_ms } => {
            let ia = index(sq(&info.square_names[0]), rotated);
            assert_eq!(info.squares.len(), 1);
            assert_ne!(before[ia], 0);
            assert_eq!(diff, vec![ia], "only the fallen piece's square changed");
            assert_eq!(during[ia], 0);
            assert!(info.restore_ms >= info.start_ms + hold_ms);
        }
        IrregularityScript::IllegalMove { kind } => {
            let uci: UciMove = info.uci.as_deref().unwrap().parse().unwrap();
            assert!(uci.to_move(&pos).is_err(), "{uci} is legal");
            let UciMove::Normal { from, to, .. } = uci else {
                panic!("{uci}")
            };
            let p = pos.board().piece_at(from).unwrap();
            assert_eq!(p.color, mover);
            let mut want = before;
            want[index(from, rotated)] = 0;
            want[index(to, rotated)] = dgt_code(p);
            assert_eq!(during, want, "the board shows the illegal move");
            let occ = pos.board().occupied();
            match kind {
                IllegalKind::WrongShape => {
                    assert!(pos.board().piece_at(to).is_none());
                    if p.role != Role::Pawn {
                        assert!(!attacks::attacks(from, p, occ).contains(to));
                    }
                }
                IllegalKind::IntoCheck => {
                    let mut b = pos.board().clone();
                    b.discard_piece_at(from);
                    b.set_piece_at(to, p);
                    let king = b.king_of(mover).unwrap();
                    assert!(b.attacks_to(king, mover.other(), b.occupied()).any());
                    if p.role != Role::Pawn {
                        assert!(attacks::attacks(from, p, occ).contains(to), "right shape");
                    }
                }
                IllegalKind::PawnOnLastRank => {
                    assert_eq!(p.role, Role::Pawn);
                    assert!(matches!(to.rank(), Rank::First | Rank::Eighth));
                }
            }
            if opts.clock {
                let press = info.press_ms.unwrap();
                // The press switches the clock to the opponent, with the illegal board shown.
                assert_eq!(status_at(script, press), running(mover.other()));
                assert_eq!(board_at(script, press.max(info.shown_ms) + 50), during);
                // Nobody sets it back: it runs for the opponent, and the press after the
                // recorded move finds the lever already down.
                let real = script.plies[n].press_ms.unwrap();
                assert!(real > press);
                for (t, s) in clock_statuses(script) {
                    if t > press + 30 && t <= real + 30 {
                        assert_eq!(s, running(mover.other()), "at {t}");
                    }
                }
            }
        }
        IrregularityScript::IllegalMoveAnswered { .. } => {
            let uci: UciMove = info.uci.as_deref().unwrap().parse().unwrap();
            assert!(uci.to_move(&pos).is_err(), "{uci} is legal");
            if opts.clock {
                let press = info.press_ms.unwrap();
                let answer = info.answer_press_ms.unwrap();
                assert!(answer > press);
                assert_eq!(status_at(script, press), running(mover.other()));
                // At the press the board shows the illegal move alone: one piece of the mover's
                // relocated (two squares differ from the position before it).
                // (Sensor reports can trail a hand by a scan; the answer comes seconds later.)
                let illegal = board_at(script, press + 300);
                let changed = (0..64).filter(|&i| illegal[i] != before[i]).count();
                assert_eq!(changed, 2, "{illegal:?}");
                // Then the opponent moved one piece of his to an empty square, and pressed.
                assert_eq!(status_at(script, answer), running(mover));
                let moved: Vec<usize> = (0..64).filter(|&i| illegal[i] != during[i]).collect();
                assert_eq!(moved.len(), 2, "{moved:?}");
                let from = moved.iter().find(|&&i| during[i] == 0).copied().unwrap();
                let to = moved.iter().find(|&&i| illegal[i] == 0).copied().unwrap();
                assert_eq!(during[to], illegal[from]);
                assert!(info.restore_ms > answer, "reinstated after the answer");
            }
        }
        IrregularityScript::PressWithoutMove => {
            assert!(diff.is_empty());
            if opts.clock {
                let (p, a) = (info.press_ms.unwrap(), info.answer_press_ms.unwrap());
                assert!(p < a);
                assert_eq!(status_at(script, p), running(mover.other()));
                assert_eq!(status_at(script, a), running(mover));
                assert!(
                    updates(script).iter().all(|u| u.0 < p || u.0 > a),
                    "no update between the presses"
                );
            }
        }
        IrregularityScript::Takeback => {
            let uci: UciMove = info.uci.as_deref().unwrap().parse().unwrap();
            let m = uci.to_move(&pos).expect("the taken-back move is legal");
            let after = pos.clone().play(m).unwrap();
            assert!(!after.is_checkmate());
            assert_eq!(during, expected_board(&after, rotated));
            if opts.clock {
                let (p, a) = (info.press_ms.unwrap(), info.answer_press_ms.unwrap());
                assert_eq!(status_at(script, p), running(mover.other()));
                assert_eq!(status_at(script, a), running(mover));
                assert!(
                    a > info.restore_ms,
                    "the opponent presses once the move is taken back"
                );
            }
        }
        IrregularityScript::WrongStart { kind } => {
            assert_eq!(info.before_ply, 1);
            assert_eq!(
                script.start_dump.0, during,
                "the handshake dump is the wrong set-up"
            );
            assert_eq!(diff.len(), 2);
            let (x, y) = (diff[0], diff[1]);
            assert_eq!((during[x], during[y]), (before[y], before[x]), "swapped");
            let mut roles = [before[x], before[y]].map(|c| (c - 1) % 6);
            roles.sort();
            let want = match kind {
                WrongStartKind::KingQueenSwapped => [4, 5],
                WrongStartKind::KnightBishopSwapped => [2, 3],
            };
            assert_eq!(roles, want);
            assert_eq!(
                (before[x] - 1) / 6,
                (before[y] - 1) / 6,
                "one side's pieces"
            );
        }
    }
}

/// Builds, checks and returns the script of `game` with one irregularity.
fn run_one(game: &PgnGame, seed: u64, ply: u32, kind: IrregularityScript) -> BoardScript {
    let o = opts(seed, one(ply, kind));
    let script = script_pgn(game, &o).unwrap();
    check_game(game, &script, false);
    assert_eq!(script.irregularities.len(), 1);
    let info = &script.irregularities[0];
    assert_eq!(info.before_ply, ply);
    check_common(game, &script, info, false);
    check_kind(game, &script, info, &o);
    script
}

#[test]
fn knock_shows_a_displaced_piece_then_the_position_again() {
    let games = corpus();
    for (g, seed) in [(0usize, 1u64), (5, 2), (40, 3)] {
        let s = run_one(
            &games[g],
            seed,
            12,
            IrregularityScript::Knock { hold_ms: 6_000 },
        );
        assert_eq!(s.irregularities[0].squares.len(), 2);
        assert!(matches!(
            s.irregularities[0].kind,
            IrregularityScript::Knock { .. }
        ));
    }
}

#[test]
fn knock_over_shows_a_missing_piece_then_the_position_again() {
    let games = corpus();
    let s = run_one(
        &games[3],
        4,
        9,
        IrregularityScript::KnockOver { hold_ms: 4_000 },
    );
    assert!(matches!(
        s.irregularities[0].kind,
        IrregularityScript::KnockOver { .. }
    ));
}

#[test]
fn illegal_moves_are_pressed_reversed_and_followed_by_the_recorded_move() {
    let games = corpus();
    let mut played: BTreeMap<IllegalKind, usize> = BTreeMap::new();
    for kind in [IllegalKind::WrongShape, IllegalKind::IntoCheck] {
        for (g, ply) in [(1usize, 8u32), (7, 15), (20, 24), (33, 11), (50, 19)] {
            let s = run_one(
                &games[g],
                g as u64,
                ply,
                IrregularityScript::IllegalMove { kind },
            );
            let info = &s.irregularities[0];
            assert!(info.press_ms.is_some() && info.answer_press_ms.is_none());
            // A position without a move into check falls back to a wrong-shape move.
            let IrregularityScript::IllegalMove { kind: got } = info.kind else {
                panic!("{info:?}")
            };
            assert!(got == kind || got == IllegalKind::WrongShape);
            *played.entry(got).or_default() += 1;
        }
    }
    assert!(played[&IllegalKind::IntoCheck] > 0, "{played:?}");
}

#[test]
fn a_pawn_left_on_the_last_rank_before_a_recorded_promotion() {
    let games = corpus();
    let (g, ply) = games
        .iter()
        .enumerate()
        .find_map(|(i, g)| {
            let k = g.moves.iter().position(|m| m.is_promotion())?;
            (k > 0 && k + 2 < g.moves.len()).then_some((i, k as u32 + 1))
        })
        .expect("a promotion in the corpus");
    let kind = IrregularityScript::IllegalMove {
        kind: IllegalKind::PawnOnLastRank,
    };
    let s = run_one(&games[g], 5, ply, kind);
    assert_eq!(s.irregularities[0].kind, kind);
    // Where no promotion is possible the emulator falls back to a wrong-shape move.
    let s = run_one(&games[0], 5, 3, kind);
    assert_eq!(
        s.irregularities[0].kind,
        IrregularityScript::IllegalMove {
            kind: IllegalKind::WrongShape
        }
    );
}

#[test]
fn an_answered_illegal_move_shows_the_opponents_reply_before_reinstatement() {
    let games = corpus();
    for (g, ply) in [(3usize, 9u32), (12, 14), (33, 20)] {
        let kind = IrregularityScript::IllegalMoveAnswered {
            kind: IllegalKind::WrongShape,
        };
        let s = run_one(&games[g], 8, ply, kind);
        assert_eq!(s.irregularities[0].kind, kind);
    }
}

#[test]
fn press_without_move_switches_the_clock_and_the_opponent_presses_back() {
    let games = corpus();
    for (g, ply) in [(2usize, 1u32), (2, 2), (9, 17)] {
        run_one(&games[g], 6, ply, IrregularityScript::PressWithoutMove);
    }
}

#[test]
fn takeback_shows_another_legal_move_then_the_recorded_one() {
    let games = corpus();
    for (g, ply) in [(4usize, 6u32), (11, 21), (30, 2)] {
        let s = run_one(&games[g], 7, ply, IrregularityScript::Takeback);
        let info = &s.irregularities[0];
        assert_ne!(
            info.uci.as_deref(),
            Some(s.plies[ply as usize - 1].uci.as_str()),
            "another move than the recorded one"
        );
    }
}

#[test]
fn wrong_start_is_dumped_at_the_handshake_then_corrected() {
    let games = corpus();
    for kind in [
        WrongStartKind::KingQueenSwapped,
        WrongStartKind::KnightBishopSwapped,
    ] {
        let s = run_one(&games[0], 8, 1, IrregularityScript::WrongStart { kind });
        assert_eq!(
            s.irregularities[0].kind,
            IrregularityScript::WrongStart { kind }
        );
        assert_ne!(s.start_dump.0, expected_board(&Chess::default(), false));
        assert_eq!(s.irregularities[0].start_ms, 0);
    }
}

#[test]
fn bad_irregularity_lists_are_refused() {
    let games = corpus();
    let g = &games[0];
    let n = g.moves.len() as u32;
    let bad = [
        one(0, IrregularityScript::PressWithoutMove),
        one(n + 1, IrregularityScript::PressWithoutMove),
        one(
            2,
            IrregularityScript::WrongStart {
                kind: WrongStartKind::KingQueenSwapped,
            },
        ),
        [
            one(3, IrregularityScript::Takeback),
            one(3, IrregularityScript::PressWithoutMove),
        ]
        .concat(),
    ];
    for list in bad {
        assert!(script_pgn(g, &opts(1, list.clone())).is_err(), "{list:?}");
    }
}

#[test]
fn random_lists_are_seeded_and_follow_the_rules() {
    assert_eq!(
        random_irregularities(3, 80, 0.2),
        random_irregularities(3, 80, 0.2)
    );
    assert_ne!(
        random_irregularities(3, 80, 0.2),
        random_irregularities(4, 80, 0.2)
    );
    assert!(random_irregularities(3, 80, 0.0).is_empty());
    assert!(random_irregularities(3, 80, f64::NAN).is_empty());
    let all = random_irregularities(3, 80, 1.0);
    assert_eq!(
        all.iter().map(|s| s.before_ply).collect::<Vec<_>>(),
        (1..80).collect::<Vec<_>>(),
        "every ply but the last, once"
    );
    let mut wrong_start_at_1 = 0;
    for seed in 0..200 {
        for s in random_irregularities(seed, 40, 0.3) {
            assert!((1..40).contains(&s.before_ply));
            if matches!(s.kind, IrregularityScript::WrongStart { .. }) {
                assert_eq!(s.before_ply, 1);
                wrong_start_at_1 += 1;
            }
        }
    }
    assert!(wrong_start_at_1 > 0);
}

/// The kind without its parameters, for counting.
fn kind_name(k: &IrregularityScript) -> String {
    match k {
        IrregularityScript::Knock { .. } => "knock".into(),
        IrregularityScript::KnockOver { .. } => "knock over".into(),
        IrregularityScript::IllegalMove { kind } => format!("illegal {kind:?}"),
        IrregularityScript::IllegalMoveAnswered { kind } => format!("illegal {kind:?}, answered"),
        IrregularityScript::PressWithoutMove => "press without move".into(),
        IrregularityScript::Takeback => "takeback".into(),
        IrregularityScript::WrongStart { kind } => format!("wrong start {kind:?}"),
    }
}

#[test]
fn many_corpus_games_with_random_irregularities_keep_their_moves() {
    let games = corpus();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, g) in games.iter().enumerate().step_by(3) {
        if g.moves.len() < 2 {
            continue;
        }
        let list = random_irregularities(i as u64, g.moves.len(), 0.08);
        let o = EmulatorOptions {
            seed: 900 + i as u64,
            rotated: i % 4 == 1,
            clock: i % 10 != 7,
            speed: [1.0, 0.3, 2.0, 0.05][i % 4],
            time_control: (i % 2 == 0).then_some((600_000, 10_000)),
            irregularities: list.clone(),
            ..EmulatorOptions::default()
        };
        let script = script_pgn(g, &o).unwrap();
        check_game(g, &script, o.rotated);
        assert_eq!(script.irregularities.len(), list.len());
        for (info, asked) in script.irregularities.iter().zip(&list) {
            assert_eq!(info.before_ply, asked.before_ply);
            check_common(g, &script, info, o.rotated);
            check_kind(g, &script, info, &o);
            *seen.entry(kind_name(&info.kind)).or_default() += 1;
        }
    }
    eprintln!("irregularities played: {seen:?}");
    for k in [
        "knock",
        "knock over",
        "illegal WrongShape",
        "illegal IntoCheck",
        "press without move",
        "takeback",
        "wrong start KingQueenSwapped",
        "wrong start KnightBishopSwapped",
    ] {
        assert!(
            seen.get(k).copied().unwrap_or(0) > 0,
            "{k} never played: {seen:?}"
        );
    }
}

#[test]
fn an_irregularity_leaves_the_plies_before_it_untouched() {
    let games = corpus();
    let g = &games[10];
    let plain = script_pgn(g, &opts(21, Vec::new())).unwrap();
    assert!(plain.irregularities.is_empty());
    assert!(
        plain
            .events
            .iter()
            .all(|e| e.kind != EventKind::Irregularity)
    );
    for kind in [
        IrregularityScript::Knock { hold_ms: 5_000 },
        IrregularityScript::IllegalMove {
            kind: IllegalKind::IntoCheck,
        },
        IrregularityScript::Takeback,
        IrregularityScript::PressWithoutMove,
    ] {
        let s = script_pgn(g, &opts(21, one(14, kind))).unwrap();
        let cut = s.irregularities[0].start_ms.min(plain.plies[13].start_ms);
        let head = |x: &BoardScript| {
            x.events
                .iter()
                .filter(|e| e.at_ms < cut)
                .cloned()
                .collect::<Vec<_>>()
        };
        assert!(head(&plain).len() > 50);
        assert_eq!(head(&s), head(&plain), "{kind:?}");
        assert_eq!(s.plies[..13], plain.plies[..13]);
        // Irregular frames are marked as such, and the recorded move follows them.
        assert!(
            s.events.iter().any(|e| e.kind == EventKind::Irregularity)
                || kind == IrregularityScript::PressWithoutMove
        );
    }
}
