//! The togyz korgool rules against the cross-check data of `shared/rules/togyz-korgool.md`
//! (perft, the section 5 vectors) and against every game of `shared/corpus/togyz`.

use boardscribe::game::{
    Outcome,
    togyz::{
        Board, Move, Position, ResultFormat, Rules, Side, Termination,
        notation::{Record, Replayed, format_result, from_fen, parse_records, to_fen},
        perft,
    },
};

const KAZAKH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/kazakh-2016-2018.pgn"
);
const PLAYOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/playok-2025.pgn"
);

fn corpus(path: &str) -> Vec<Record> {
    let text = std::fs::read_to_string(path).unwrap();
    parse_records(&text).unwrap()
}

/// Games whose `Result` header says `result`, counted on the raw text.
fn headers_with_result(path: &str, result: &str) -> usize {
    let text = std::fs::read_to_string(path).unwrap();
    text.matches(&format!("[Result \"{result}\"]")).count()
}

/// Plays a PlayOK-style move list from the start, checking every digit, mark and store total.
fn line(moves: &str) -> Replayed {
    let recs = parse_records(moves).unwrap();
    assert_eq!(recs.len(), 1);
    recs[0].replay(Rules::KYRGYZ).unwrap()
}

/// A board from the vectors' `W[..] B[..]` rows (a tuz cell written 0), stores and tuz pits.
fn board(w: [u8; 9], b: [u8; 9], k: [u8; 2], tuz: [u8; 2]) -> Board {
    let mut pits = [0; 18];
    pits[..9].copy_from_slice(&w);
    pits[9..].copy_from_slice(&b);
    Board {
        pits,
        stores: k,
        tuz: tuz.map(|t| (t != 0).then_some(t)),
    }
}

#[test]
fn perft_from_start() {
    let start = Position::new();
    let t = std::time::Instant::now();
    assert_eq!(
        (1..=5).map(|d| perft(&start, d)).collect::<Vec<_>>(),
        [9, 73, 613, 5199, 43184]
    );
    eprintln!("perft 1-5: {:?}", t.elapsed());
}

/// Depth 6 is a few milliseconds, so it runs by default.
#[test]
fn perft_depth_6() {
    let t = std::time::Instant::now();
    assert_eq!(perft(&Position::new(), 6), 360_035);
    eprintln!("perft 6: {:?}", t.elapsed());
}

/// Depths 7 and 8, computed only in the rules summary (section 5): a fraction of a second with
/// the release profile the README's test command uses.
#[test]
fn perft_depth_7_8() {
    assert_eq!(perft(&Position::new(), 7), 3_003_052);
    assert_eq!(perft(&Position::new(), 8), 25_166_174);
}

#[test]
fn first_moves() {
    let start = Position::new();
    let (pos, s) = start.play_with_info(Move::new(1).unwrap()).unwrap();
    assert_eq!(s.captured, 0);
    assert_eq!(
        pos.board(),
        &board([1, 10, 10, 10, 10, 10, 10, 10, 10], [9; 9], [0, 0], [0, 0])
    );
    assert_eq!(pos.legal_moves().len(), 9);
    for n in 2..=9u8 {
        let r = line(&format!("1. {n}{}(10)", n - 1));
        let pos = r.last();
        for p in 1..=9u8 {
            let w = match p {
                _ if p < n => 9,
                _ if p == n => 1,
                _ => 10,
            };
            let b = match p {
                _ if p + 2 <= n => 10,
                _ if p + 1 == n => 0,
                _ => 9,
            };
            assert_eq!(pos.pit(Side::White, p), w, "move {n}, white pit {p}");
            assert_eq!(pos.pit(Side::Black, p), b, "move {n}, black pit {p}");
        }
        assert_eq!(pos.board().stores, [10, 0]);
        assert_eq!(pos.legal_moves().len(), 8);
    }
    assert_eq!(
        line("1. 76(10)").last().board(),
        &board(
            [9, 9, 9, 9, 9, 9, 1, 10, 10],
            [10, 10, 10, 10, 10, 0, 9, 9, 9],
            [10, 0],
            [0, 0]
        )
    );
}

#[test]
fn tuz_by_black_and_no_second_tuz() {
    let r = line("1. 65(10) 65(10) 2. 99 89(12) 3. 23(22)");
    assert_eq!(
        r.last().board(),
        &board(
            [11, 1, 12, 12, 2, 3, 12, 12, 1],
            [12, 12, 0, 11, 1, 2, 11, 1, 12],
            [22, 12],
            [0, 0]
        )
    );
    let r = line("1. 65(10) 65(10) 2. 99 89(12) 3. 23(22) 45X");
    let pos = *r.last();
    assert_eq!(
        pos.board(),
        &board(
            [12, 2, 13, 13, 0, 3, 12, 12, 1],
            [12, 12, 0, 1, 2, 3, 12, 2, 13],
            [22, 15],
            [0, 5]
        )
    );
    assert_eq!(pos.turn(), Side::White);
    let fen3 = "13S,2S,12S,3S,2S,1S,1,12S,12S/12S,2S,13S,13S,t,3S,12S,12S,1S 22 15 S 4";
    assert_eq!(to_fen(&pos), fen3);
    assert_eq!(from_fen(fen3, Rules::KYRGYZ).unwrap(), pos);
    // 36(26) sows through black's tuz (white's pit 5): black's store +1.
    let r = line("1. 65(10) 65(10) 2. 99 89(12) 3. 23(22) 45X 4. 36(26)");
    let pos = *r.last();
    assert_eq!(pos.board().stores, [26, 16]);
    assert_eq!(pos.pit(Side::White, 9), 2);
    assert_eq!(r.sowings.last().unwrap().into_tuz, [0, 1]);
    // 79: three in white's pit 9, and black has a tuz already: nothing but the tuz korgool.
    let (after, s) = pos.play_with_info(Move::new(7).unwrap()).unwrap();
    assert_eq!((s.landing_side(), s.landing_pit()), (Side::White, 9));
    assert_eq!(after.pit(Side::White, 9), 3);
    assert!(!s.tuz_created);
    assert_eq!(after.board().stores, [26, 17]);
}

const FULL_GAME: &str = "1. 76(10) 98 2. 66 76(2) 3. 12(22) 88(16) 4. 25(34) 89 5. 93 36(20) \
    6. 49 49 7. 81(50) 24 8. 93(54) 61(26) 9. 53 84X 10. 76X 91 11. 93 15 12. 13 91(32) \
    13. 82 74 14. 12 89 15. 22(65) 48 16. 23 78 17. 61(70) 78 18. 67 91 19. 12 82(36) \
    20. 12 89 21. 93 23 22. 81(72) 92(38) 23. 12 53 24. 12 89 25. 24 92(41) 26. 12 38 \
    27. 91 12 28. 72(76) 12 29. 78 23 30. 81 45 31. 57 89 32. 78 78 33. 67 78 34. 78 89 \
    35. 81(78) 89 36. 31(81) 89 37. 81 12 38. 96";

#[test]
fn full_game_to_82() {
    let r = line(FULL_GAME);
    let pos = r.last();
    assert_eq!(
        pos.board(),
        &board(
            [1, 2, 2, 0, 3, 2, 2, 1, 1],
            [1, 3, 4, 3, 5, 0, 1, 0, 6],
            [82, 43],
            [6, 4]
        )
    );
    assert_eq!(
        to_fen(pos),
        "6S,1,1S,t,5S,3S,4S,3S,1S/1S,2S,2S,t,3S,2S,2S,1S,1S 82 43 N 38"
    );
    // The winning 96 ends in white's own tuz: one korgool to the store, no capture.
    let last = r.sowings.last().unwrap();
    assert_eq!((last.captured, last.into_tuz), (0, [1, 0]));
    let result = pos.outcome().unwrap();
    assert_eq!(result.outcome, Outcome::WhiteWins);
    assert_eq!(result.termination, Termination::Store82);
    assert_eq!(format_result(&result, ResultFormat::Kyrgyz), "1–0/43");
    assert_eq!(format_result(&result, ResultFormat::Pgn), "1-0");
    assert!(pos.legal_moves().is_empty());
    assert!(pos.play(Move::new(1).unwrap()).is_err());
}

#[test]
fn black_tuz_kcl() {
    let r = line("1. 32(10) 43(2) 2. 66 77(14) 3. 34 56X");
    assert_eq!(
        r.last().board(),
        &board(
            [12, 12, 1, 13, 12, 0, 0, 11, 11],
            [11, 1, 10, 2, 1, 12, 2, 12, 12],
            [10, 17],
            [0, 6]
        )
    );
}

/// A set-up position: the given pits, the rest of the 162 split over the stores.
fn setup(white: &[(u8, u8)], black: &[(u8, u8)], tuz: [u8; 2]) -> Position {
    let mut pits = [0u8; 18];
    for &(p, n) in white {
        pits[Board::location(Side::White, p)] = n;
    }
    for &(p, n) in black {
        pits[Board::location(Side::Black, p)] = n;
    }
    let rest = 162 - pits.iter().map(|&n| u16::from(n)).sum::<u16>() as u8;
    let b = Board {
        pits,
        stores: [rest / 2, rest - rest / 2],
        tuz: tuz.map(|t| (t != 0).then_some(t)),
    };
    Position::from_board(b, Side::White, 20, Rules::KYRGYZ).unwrap()
}

#[test]
fn unit_cases_hal() {
    let mv = |p| Move::new(p).unwrap();
    // 91: the single korgool makes black's pit 1 six: captured.
    let pos = setup(&[(9, 1)], &[(1, 5), (5, 1)], [0, 0]);
    let (after, s) = pos.play_with_info(mv(9)).unwrap();
    assert_eq!((s.captured, after.pit(Side::Black, 1)), (6, 0));
    assert_eq!(after.store(Side::White), pos.store(Side::White) + 6);
    // 83 captures ten.
    let pos = setup(&[(8, 5)], &[(3, 9)], [0, 0]);
    let (after, s) = pos.play_with_info(mv(8)).unwrap();
    assert_eq!(s.captured, 10);
    assert_eq!(
        (after.pit(Side::White, 8), after.pit(Side::Black, 3)),
        (1, 0)
    );
    // 82X: a tuz, three korgools to the store.
    let pos = setup(&[(8, 4)], &[(2, 2)], [0, 0]);
    let (after, s) = pos.play_with_info(mv(8)).unwrap();
    assert!(s.tuz_created && s.captured == 3);
    assert_eq!(after.tuz(Side::White), Some(2));
    assert_eq!(after.store(Side::White), pos.store(Side::White) + 3);
    // A korgool sown into a tuz goes to its owner (here the mover's opponent); the pit stays 0.
    let pos = setup(&[(3, 4)], &[(1, 1)], [0, 4]);
    let (after, s) = pos.play_with_info(mv(3)).unwrap();
    assert_eq!(after.pit(Side::White, 4), 0);
    assert_eq!(s.into_tuz, [0, 1]);
    assert_eq!(after.store(Side::Black), pos.store(Side::Black) + 1);
    // Three on the opponent's pit 9: no tuz, they stay (KG 2.2).
    let pos = setup(&[(8, 11)], &[(9, 2)], [0, 0]);
    let (after, s) = pos.play_with_info(mv(8)).unwrap();
    assert_eq!((s.landing_side(), s.landing_pit()), (Side::Black, 9));
    assert!(!s.tuz_created && s.captured == 0);
    assert_eq!(after.pit(Side::Black, 9), 3);
    // Symmetric tuz refused: black owns white's pit 2, so white cannot take black's pit 2.
    let pos = setup(&[(8, 4)], &[(2, 2), (5, 1)], [0, 2]);
    let (after, s) = pos.play_with_info(mv(8)).unwrap();
    assert!(!s.tuz_created && s.captured == 0);
    assert_eq!(
        (after.pit(Side::Black, 2), after.tuz(Side::White)),
        (3, None)
    );
    // A second tuz refused.
    let pos = setup(&[(8, 4)], &[(2, 2), (5, 1)], [6, 0]);
    let (after, s) = pos.play_with_info(mv(8)).unwrap();
    assert!(!s.tuz_created);
    assert_eq!(
        (after.pit(Side::Black, 2), after.tuz(Side::White)),
        (3, Some(6))
    );
}

#[test]
fn atsyrau_draw_on_81() {
    let b = board([0, 3, 1, 1, 0, 1, 0, 1, 5], [0; 9], [69, 81], [6, 5]);
    let pos = Position::from_board(b, Side::Black, 69, Rules::KYRGYZ).unwrap();
    let r = pos.outcome().unwrap();
    assert_eq!(
        (r.outcome, r.termination),
        (Outcome::Draw, Termination::Atsyrau)
    );
    assert_eq!(r.counted, [81, 81]);
    // With white to move the game goes on: only the player to move can be stuck.
    let pos = Position::from_board(b, Side::White, 70, Rules::KYRGYZ).unwrap();
    assert_eq!(pos.outcome(), None);
    // The same game in the PlayOK corpus ends there.
    let games = corpus(PLAYOK);
    let found = games
        .iter()
        .filter(|g| g.header("Event") == Some("9283413"))
        .filter_map(|g| Some(*g.replay(Rules::KYRGYZ).ok()?.last()))
        .any(|p| p.board() == &b && p.turn() == Side::Black);
    assert!(found);
}

#[test]
fn atsyrau_loss_while_ahead() {
    let games = corpus(PLAYOK);
    let pos = games
        .iter()
        .filter(|g| g.header("Event") == Some("9267400"))
        .filter_map(|g| Some(*g.replay(Rules::KYRGYZ).ok()?.last()))
        .find(|p| p.board().stores == [52, 79])
        .unwrap();
    assert_eq!(pos.turn(), Side::Black);
    let white_row: u8 = (1..=9).map(|p| pos.pit(Side::White, p)).sum();
    assert_eq!(white_row, 31);
    let r = pos.outcome().unwrap();
    assert_eq!(r.outcome, Outcome::WhiteWins);
    assert_eq!(r.counted, [83, 79]);
    assert_eq!(format_result(&r, ResultFormat::Kyrgyz), "1–0/79");
}

#[test]
fn flag_fall_and_resignation() {
    let r = line(FULL_GAME);
    // Before the last move: 81:43, white to move.
    let pos = r.positions[r.positions.len() - 2];
    assert_eq!(pos.board().stores, [81, 43]);
    // KG 3.10 → 3.4: white's flag with 81 in his store is a draw; black's flag loses.
    let w = pos.flag_fall(Side::White);
    assert_eq!((w.outcome, w.counted), (Outcome::Draw, [81, 81]));
    let b = pos.flag_fall(Side::Black);
    assert_eq!((b.outcome, b.counted), (Outcome::WhiteWins, [119, 43]));
    assert_eq!(format_result(&b, ResultFormat::Kyrgyz), "1–0/43");
    assert_eq!(pos.both_flags().outcome, Outcome::Draw);
    let forfeit = Position::from_board(
        *pos.board(),
        pos.turn(),
        pos.ply(),
        Rules {
            flag_rule: boardscribe::game::togyz::FlagRule::Forfeit,
            ..Rules::KAZAKH
        },
    )
    .unwrap();
    assert_eq!(forfeit.flag_fall(Side::White).outcome, Outcome::BlackWins);
    let res = pos.resign(Side::Black);
    assert_eq!(res.outcome, Outcome::WhiteWins);
    assert_eq!(format_result(&res, ResultFormat::Kyrgyz), "1–0/43");
}

/// How a corpus game ended, as far as the rules can tell.
#[derive(Debug, Default)]
struct Tally {
    games: usize,
    store82: usize,
    draw81: usize,
    atsyrau: usize,
    atsyrau_draws: usize,
    /// The record stops before the rules end the game: resignation, time, agreement.
    unfinished_decisive: usize,
    unfinished_draw: usize,
    /// A player emptied his own row with his move and the game went on.
    own_row_emptied: usize,
}

/// `store_totals`: the records write PlayOK's `(k)` after every even capture (never after a tuz).
fn tally(games: &[Record], rules: Rules, store_totals: bool) -> Tally {
    let mut t = Tally::default();
    for g in games {
        assert_eq!(g.header("Variant"), Some("togyz"));
        let r = g
            .replay(rules)
            .unwrap_or_else(|e| panic!("game at line {}: {e}", g.line));
        t.games += 1;
        let recorded = g.result.and_then(|r| r.outcome).unwrap();
        for (i, s) in r.sowings.iter().enumerate() {
            let after = &r.positions[i + 1];
            let even_capture = s.captured > 0 && !s.tuz_created;
            assert_eq!(
                g.moves[i].store.is_some(),
                store_totals && even_capture,
                "game at line {}, ply {}",
                g.line,
                i + 1
            );
            let row: u8 = (1..=9).map(|p| after.pit(s.side, p)).sum();
            if row == 0 && i + 1 < r.sowings.len() {
                t.own_row_emptied += 1;
            }
        }
        let zero = g.comments.iter().any(|c| c == "zero");
        match r.last().outcome() {
            Some(res) => {
                assert_eq!(res.outcome, recorded, "game at line {}", g.line);
                match res.termination {
                    Termination::Store82 => t.store82 += 1,
                    Termination::Draw81 => t.draw81 += 1,
                    Termination::Atsyrau => {
                        t.atsyrau += 1;
                        if res.outcome == Outcome::Draw {
                            t.atsyrau_draws += 1;
                        }
                    }
                    other => panic!("{other:?} from a position"),
                }
                assert_eq!(
                    zero,
                    res.termination == Termination::Atsyrau,
                    "{{zero}} marks exactly the atsyrau ends (line {})",
                    g.line
                );
            }
            None => {
                assert!(!zero, "line {}", g.line);
                if recorded == Outcome::Draw {
                    t.unfinished_draw += 1;
                } else {
                    t.unfinished_decisive += 1;
                }
            }
        }
    }
    t
}

#[test]
fn corpus_playok() {
    let games = corpus(PLAYOK);
    let t = tally(&games, Rules::KYRGYZ, true);
    eprintln!("{t:?}");
    assert_eq!(t.games, 2398);
    // Figures of the rules summary (sections 1.4 and 5), counted there independently.
    assert_eq!(t.store82, 531);
    assert_eq!(t.atsyrau, 646);
    assert_eq!(t.atsyrau_draws, 43);
    assert_eq!(t.own_row_emptied, 674);
    // The other games stop before the rules end them (resignation, time, agreed draw: PlayOK
    // does not say which). Every draw the rules do not give is one of those.
    assert_eq!(
        t.unfinished_draw + t.atsyrau_draws + t.draw81,
        headers_with_result(PLAYOK, "1/2-1/2")
    );
    assert_eq!(
        t.store82 + t.atsyrau + t.draw81 + t.unfinished_decisive + t.unfinished_draw,
        t.games
    );
    // And every decisive result the rules do not give is one of those, counted in the raw text.
    assert_eq!(
        t.unfinished_decisive + t.store82 + t.atsyrau - t.atsyrau_draws,
        headers_with_result(PLAYOK, "1-0") + headers_with_result(PLAYOK, "0-1")
    );
}

/// Every game written back from its moves alone reads back to the same record.
fn rewrite(games: &[Record], store_totals: bool) {
    for g in games {
        let r = g.replay(Rules::KYRGYZ).unwrap();
        let moves: Vec<Move> = r.sowings.iter().map(|s| s.mv).collect();
        let rebuilt = Record::from_moves(
            g.headers.clone(),
            Rules::KYRGYZ,
            &moves,
            store_totals,
            g.result,
        )
        .unwrap();
        let text = |r: &Record| {
            r.moves
                .iter()
                .map(|m| (m.text, m.store))
                .collect::<Vec<_>>()
        };
        assert_eq!(text(&rebuilt), text(g), "game at line {}", g.line);
        let again = parse_records(&rebuilt.to_pgn()).unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(text(&again[0]), text(g));
        assert_eq!((&again[0].headers, again[0].result), (&g.headers, g.result));
    }
}

#[test]
fn corpus_written_back() {
    rewrite(&corpus(PLAYOK), true);
    rewrite(&corpus(KAZAKH), false);
}

#[test]
fn corpus_kazakh() {
    let games = corpus(KAZAKH);
    let t = tally(&games, Rules::KAZAKH, false);
    eprintln!("{t:?}");
    assert_eq!(t.games, 742);
    // Tournament records mostly stop at the resignation: the database keeps the result only.
    // No record goes past 82 (replay would refuse the move), and every draw is an agreed one.
    assert_eq!(t.draw81 + t.atsyrau, 0);
    assert_eq!(t.unfinished_draw, headers_with_result(KAZAKH, "1/2-1/2"));
    // Every decisive result is an end at 82 or a record that stops early, counted in the raw text.
    assert_eq!(
        t.store82 + t.unfinished_decisive,
        headers_with_result(KAZAKH, "1-0") + headers_with_result(KAZAKH, "0-1")
    );
    // Sowing is the same under both rule sets.
    let kg = tally(&games, Rules::KYRGYZ, false);
    assert_eq!(
        (kg.store82, kg.unfinished_decisive),
        (t.store82, t.unfinished_decisive)
    );
}
