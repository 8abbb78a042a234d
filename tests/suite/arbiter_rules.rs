//! The arbiter's rules, article by article, on real positions played with shakmaty.
//!
//! Each test is named after the article it shows; where editions differ, a test shows both sides.
//! The corpus test replays every game of ../shared/corpus/chess through the repetition tracker.

use std::path::Path;

use boardscribe::{
    arbiter::{
        AutoEnd, BothFlagsDecision, BothFlagsPolicy, Category, Federation, FivefoldRule, GameEnd,
        IrregularityKind, Laws, LawsConfig, Penalty, Repetitions, TimeControl, TimeTrouble,
        article, automatic_end, both_flags, can_mate, claimable, flag_fall, flag_fall_under,
        game_end_article, illegal_move_penalty, illegal_move_penalty_article, uscf_mating_material,
    },
    emulator::games_from_pgn,
    game::Outcome,
};
use shakmaty::{CastlingMode, Chess, Color, Position, fen::Fen, san::San};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");

fn cfg(laws: Laws) -> LawsConfig {
    LawsConfig::for_edition(laws)
}

fn tc(s: &str) -> TimeControl {
    s.parse().unwrap()
}

fn fen(f: &str) -> Chess {
    f.parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap()
}

/// Plays space-separated SAN moves from `pos`, feeding `reps`; returns the final position.
fn play(mut pos: Chess, sans: &str, reps: &mut Repetitions) -> Chess {
    for san in sans.split_whitespace() {
        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        pos = pos.play(m).unwrap();
        reps.push(&pos);
    }
    pos
}

// ---------------------------------------------------------------- Article 7: which article

#[test]
fn art_7_4_displaced_pieces_are_7_3_up_to_2009_and_7_4_from_2014() {
    let k = IrregularityKind::Displaced;
    assert_eq!(article(k, Laws::Fide2001), Some("7.3"));
    assert_eq!(article(k, Laws::Fide2009), Some("7.3"));
    assert_eq!(article(k, Laws::Fide2014), Some("7.4"));
    assert_eq!(article(k, Laws::Fide2018), Some("7.4"));
    assert_eq!(article(k, Laws::Fide2023), Some("7.4"));
}

#[test]
fn art_7_5_1_illegal_move_is_7_4_up_to_2009_7_5_in_2014_7_5_1_from_2017() {
    let k = IrregularityKind::IllegalMove;
    assert_eq!(article(k, Laws::Fide2001), Some("7.4"));
    assert_eq!(article(k, Laws::Fide2009), Some("7.4"));
    assert_eq!(article(k, Laws::Fide2014), Some("7.5"));
    assert_eq!(article(k, Laws::Fide2018), Some("7.5.1"));
    assert_eq!(article(k, Laws::Fide2023), Some("7.5.1"));
}

#[test]
fn art_7_2_1_wrong_start_position_and_7_2_2_board_rotated_by_edition() {
    let ws = IrregularityKind::WrongStartPosition;
    let br = IrregularityKind::BoardRotated;
    for (laws, start, rotated) in [
        (Laws::Fide2001, "7.1a", "7.1b"),
        (Laws::Fide2009, "7.1a", "7.1b"),
        (Laws::Fide2014, "7.2a", "7.2b"),
        (Laws::Fide2018, "7.2.1", "7.2.2"),
        (Laws::Fide2023, "7.2.1", "7.2.2"),
    ] {
        assert_eq!(article(ws, laws), Some(start), "{laws}");
        assert_eq!(article(br, laws), Some(rotated), "{laws}");
    }
}

#[test]
fn art_7_5_3_clock_without_move_has_an_article_only_from_2017() {
    let k = IrregularityKind::ClockWithoutMove;
    assert_eq!(article(k, Laws::Fide2018), Some("7.5.3"));
    assert_eq!(article(k, Laws::Fide2023), Some("7.5.3"));
    for laws in [Laws::Fide2001, Laws::Fide2009, Laws::Fide2014] {
        assert_eq!(article(k, laws), None, "{laws}");
    }
    assert!(k.note().is_some());
}

#[test]
fn art_5_and_9_6_game_end_articles_by_edition() {
    use GameEnd::*;
    let row = |laws| {
        [
            Checkmate,
            Stalemate,
            DeadPosition,
            FivefoldRepetition,
            SeventyFiveMoves,
            TimeForfeit,
        ]
        .map(|e| game_end_article(e, laws))
    };
    assert_eq!(
        row(Laws::Fide2001),
        [
            Some("5.1a"),
            Some("5.2a"),
            Some("5.2b"),
            None,
            None,
            Some("6.10")
        ]
    );
    assert_eq!(
        row(Laws::Fide2009),
        [
            Some("5.1a"),
            Some("5.2a"),
            Some("5.2b"),
            None,
            None,
            Some("6.9")
        ]
    );
    assert_eq!(
        row(Laws::Fide2014),
        [
            Some("5.1a"),
            Some("5.2a"),
            Some("5.2b"),
            Some("9.6a"),
            Some("9.6b"),
            Some("6.9")
        ]
    );
    for laws in [Laws::Fide2018, Laws::Fide2023] {
        assert_eq!(
            row(laws),
            [
                Some("5.1.1"),
                Some("5.2.1"),
                Some("5.2.2"),
                Some("9.6.1"),
                Some("9.6.2"),
                Some("6.9")
            ]
        );
    }
}

// ---------------------------------------------------------------- Article 7: the ladder

#[test]
fn art_7_4_b_third_illegal_move_loses_in_2009() {
    let c = cfg(Laws::Fide2009);
    let two_min = Penalty::AddTimeToOpponent { ms: 120_000 };
    assert_eq!(
        illegal_move_penalty(&c, Category::Standard, 1, true),
        two_min
    );
    assert_eq!(
        illegal_move_penalty(&c, Category::Standard, 2, true),
        two_min
    );
    assert_eq!(
        illegal_move_penalty(&c, Category::Standard, 3, true),
        Penalty::Loss
    );
    assert_eq!(
        illegal_move_penalty_article(Laws::Fide2009, Category::Standard),
        "7.4b"
    );
    // 2001 is the same ladder.
    let c = cfg(Laws::Fide2001);
    assert_eq!(
        illegal_move_penalty(&c, Category::Standard, 2, true),
        two_min
    );
    assert_eq!(
        illegal_move_penalty(&c, Category::Standard, 3, true),
        Penalty::Loss
    );
}

#[test]
fn art_7_5_5_second_illegal_move_loses_from_2014() {
    for laws in [Laws::Fide2014, Laws::Fide2018, Laws::Fide2023] {
        let c = cfg(laws);
        assert_eq!(
            illegal_move_penalty(&c, Category::Standard, 1, true),
            Penalty::AddTimeToOpponent { ms: 120_000 },
            "{laws}"
        );
        assert_eq!(
            illegal_move_penalty(&c, Category::Standard, 2, true),
            Penalty::Loss,
            "{laws}"
        );
    }
    // Not under 2009: the second costs time only.
    assert_eq!(
        illegal_move_penalty(&cfg(Laws::Fide2009), Category::Standard, 2, true),
        Penalty::AddTimeToOpponent { ms: 120_000 }
    );
    assert_eq!(
        illegal_move_penalty_article(Laws::Fide2014, Category::Standard),
        "7.5b"
    );
    assert_eq!(
        illegal_move_penalty_article(Laws::Fide2023, Category::Standard),
        "7.5.5"
    );
}

#[test]
fn art_7_5_5_loss_turns_draw_when_the_opponent_cannot_mate() {
    // Black's second illegal move; White has king and knight against king and pawn: a helpmate
    // exists (the pawn can block), so Black loses. With a lone knight against a lone king White
    // cannot mate: a draw.
    let knight_v_pawn = fen("8/8/4k3/3p4/8/8/2N5/4K3 b - - 0 60");
    let knight_v_king = fen("8/8/4k3/8/8/8/2N5/4K3 b - - 0 60");
    let c = cfg(Laws::Fide2023);
    let ruling =
        |pos: &Chess| illegal_move_penalty(&c, Category::Standard, 2, can_mate(pos, Color::White));
    assert_eq!(ruling(&knight_v_pawn), Penalty::Loss);
    assert_eq!(ruling(&knight_v_king), Penalty::Draw);
}

#[test]
fn art_7_5_5_strikes_are_a_switch() {
    let mut c = cfg(Laws::Fide2023);
    c.illegal_strikes_to_lose = None; // USCF 11D: time only
    assert_eq!(
        illegal_move_penalty(&c, Category::Standard, 5, true),
        Penalty::AddTimeToOpponent { ms: 120_000 }
    );
    c.illegal_strikes_to_lose = Some(1); // unsupervised rapid/blitz, 2009/2014
    assert_eq!(
        illegal_move_penalty(&c, Category::Rapid, 1, true),
        Penalty::Loss
    );
}

#[test]
fn app_a_3_rapid_penalty_is_one_minute_in_2023_but_two_in_2018() {
    assert_eq!(
        illegal_move_penalty(&cfg(Laws::Fide2023), Category::Rapid, 1, true),
        Penalty::AddTimeToOpponent { ms: 60_000 }
    );
    assert_eq!(
        illegal_move_penalty(&cfg(Laws::Fide2018), Category::Rapid, 1, true),
        Penalty::AddTimeToOpponent { ms: 120_000 }
    );
    assert_eq!(
        illegal_move_penalty_article(Laws::Fide2023, Category::Rapid),
        "7.5.5, A.3"
    );
}

#[test]
fn app_b_2_blitz_penalty_is_one_minute_from_2014_but_two_in_2009() {
    for laws in [Laws::Fide2014, Laws::Fide2018, Laws::Fide2023] {
        assert_eq!(
            illegal_move_penalty(&cfg(laws), Category::Blitz, 1, true),
            Penalty::AddTimeToOpponent { ms: 60_000 },
            "{laws}"
        );
    }
    assert_eq!(
        illegal_move_penalty(&cfg(Laws::Fide2009), Category::Blitz, 1, true),
        Penalty::AddTimeToOpponent { ms: 120_000 }
    );
}

// ---------------------------------------------------------------- Rapid/blitz appendices

#[test]
fn app_a_1_category_thresholds_2009_vs_2014() {
    // base + 60 × increment: 2009 blitz under 15 minutes, 2014 on blitz 10 minutes or less.
    for (control, old, new) in [
        ("10", Category::Blitz, Category::Blitz),
        ("11", Category::Blitz, Category::Rapid),
        ("10+1", Category::Blitz, Category::Rapid), // 11 minutes
        ("14", Category::Blitz, Category::Rapid),
        ("15", Category::Rapid, Category::Rapid),
        ("5+5", Category::Blitz, Category::Blitz), // 10 minutes
        ("3+2", Category::Blitz, Category::Blitz),
        ("5d3", Category::Blitz, Category::Blitz),
        ("15+10", Category::Rapid, Category::Rapid),
        ("59", Category::Rapid, Category::Rapid),
        ("60", Category::Standard, Category::Standard),
        ("90+30", Category::Standard, Category::Standard),
        ("40/90+30:30+30", Category::Standard, Category::Standard),
        ("40/25:5", Category::Rapid, Category::Rapid),
    ] {
        let t = tc(control);
        assert_eq!(t.category(Laws::Fide2009), old, "{control} under 2009");
        assert_eq!(t.category(Laws::Fide2001), old, "{control} under 2001");
        for laws in [Laws::Fide2014, Laws::Fide2018, Laws::Fide2023] {
            assert_eq!(t.category(laws), new, "{control} under {laws}");
        }
    }
}

// ---------------------------------------------------------------- Article 8.4

#[test]
fn art_8_4_no_exemption_with_an_increment_of_30_seconds() {
    let t = tc("40/90+30:30+30");
    let mut tt = TimeTrouble::new(&t, &cfg(Laws::Fide2023));
    for n in 1..=60u32 {
        // Down to 20 seconds before each press, in both periods.
        let after = 20_000 + t.added_at_press_ms(n);
        assert!(!tt.on_move(Color::White, n, Some(after)), "move {n}");
        assert!(!tt.on_move(Color::Black, n, Some(after)), "move {n}");
    }
}

#[test]
fn art_8_4_window_stays_open_to_the_end_without_increment() {
    let mut tt = TimeTrouble::new(&tc("90"), &cfg(Laws::Fide2023));
    assert!(!tt.on_move(Color::White, 29, Some(5 * 60_000 + 1)));
    assert!(tt.on_move(Color::White, 30, Some(5 * 60_000 - 1)));
    // Every later move of White, even if the arbiter gives time back.
    assert!(tt.on_move(Color::White, 31, Some(4 * 60_000)));
    assert!(tt.on_move(Color::White, 32, Some(7 * 60_000)));
    assert!(tt.on_move(Color::White, 90, None));
}

#[test]
fn art_8_4_is_per_player() {
    let mut tt = TimeTrouble::new(&tc("90"), &cfg(Laws::Fide2009));
    assert!(tt.on_move(Color::White, 35, Some(60_000)));
    assert!(!tt.on_move(Color::Black, 35, Some(6 * 60_000)));
    assert!(tt.on_move(Color::White, 36, Some(50_000)));
    assert!(!tt.on_move(Color::Black, 36, Some(5 * 60_000)));
    assert!(tt.on_move(Color::Black, 37, Some(4 * 60_000)));
}

#[test]
fn art_8_4_a_new_period_closes_the_window() {
    let t = tc("40/120:60");
    let mut tt = TimeTrouble::new(&t, &cfg(Laws::Fide2018));
    assert!(!tt.on_move(Color::White, 34, Some(6 * 60_000)));
    assert!(tt.on_move(Color::White, 35, Some(4 * 60_000)));
    for n in 36..=39 {
        assert!(tt.on_move(Color::White, n, Some(3 * 60_000)), "move {n}");
    }
    // The 40th press adds the hour of the second period; the move itself was made in trouble.
    assert!(tt.on_move(Color::White, 40, Some(60 * 60_000 + 60_000)));
    assert!(!tt.on_move(Color::White, 41, Some(59 * 60_000)));
    assert!(!tt.on_move(Color::White, 70, Some(5 * 60_000)));
    assert!(tt.on_move(Color::White, 71, Some(4 * 60_000 + 59_000)));
    assert!(tt.on_move(Color::White, 72, Some(4 * 60_000)));
}

#[test]
fn art_8_4_an_increment_under_30_seconds_counts_the_clock_before_it() {
    let t = tc("60+10");
    let mut tt = TimeTrouble::new(&t, &cfg(Laws::Fide2023));
    // 5:15 after the press: 5:05 before the increment, never under five minutes.
    assert!(!tt.on_move(Color::Black, 50, Some(5 * 60_000 + 15_000)));
    // 5:05 after the press: 4:55 before it.
    assert!(tt.on_move(Color::Black, 51, Some(5 * 60_000 + 5_000)));
    assert!(tt.on_move(Color::Black, 52, Some(6 * 60_000)));
}

#[test]
fn art_8_4_a_delay_counts_only_if_configured() {
    let t = tc("90d30");
    let mut c = cfg(Laws::Fide2023);
    let mut tt = TimeTrouble::new(&t, &c);
    assert!(tt.on_move(Color::White, 40, Some(60_000)));
    c.record_exemption_delay_counts = true;
    let mut tt = TimeTrouble::new(&t, &c);
    assert!(!tt.on_move(Color::White, 40, Some(60_000)));
}

// ---------------------------------------------------------------- Article 6: flags

#[test]
fn art_6_9_flag_fall_loses_when_the_opponent_can_mate() {
    let start = Chess::default();
    let e = flag_fall(&start, Color::White, Laws::Fide2023);
    assert_eq!(e.outcome, Outcome::BlackWins);
    assert_eq!((e.termination, e.article), ("time_forfeit", "6.9"));
    let e = flag_fall(&start, Color::Black, Laws::Fide2001);
    assert_eq!(e.outcome, Outcome::WhiteWins);
    assert_eq!(e.article, "6.10");
    // A lone knight can still mate a king that has a pawn to block with.
    let pos = fen("8/8/4k3/3p4/8/8/2N5/4K3 b - - 0 60");
    assert_eq!(
        flag_fall(&pos, Color::Black, Laws::Fide2023).outcome,
        Outcome::WhiteWins
    );
}

#[test]
fn art_6_9_flag_fall_draws_when_the_opponent_cannot_mate() {
    for (position, flagged) in [
        // The side that would win has only a king.
        ("8/8/4k3/8/8/8/4KQ2/8 w - - 0 50", Color::White),
        // King and knight against a lone king.
        ("8/8/4k3/8/8/8/2N5/4K3 b - - 0 60", Color::Black),
        // King and bishop.
        ("8/8/4k3/8/8/8/2B5/4K3 b - - 0 60", Color::Black),
        // Bishops all on one colour (c2, e4: both light squares).
        ("8/8/4k3/8/4B3/8/2B5/4K3 b - - 0 60", Color::Black),
    ] {
        let pos = fen(position);
        let e = flag_fall(&pos, flagged, Laws::Fide2023);
        assert_eq!(e.outcome, Outcome::Draw, "{position}");
        assert_eq!(e.end, GameEnd::TimeForfeitCannotMate);
        assert_eq!(e.article, "6.9");
    }
    // Bishops on both colours can mate: a loss.
    let pos = fen("8/8/4k3/8/3B4/8/2B5/4K3 b - - 0 60");
    assert_eq!(
        flag_fall(&pos, Color::Black, Laws::Fide2023).outcome,
        Outcome::WhiteWins
    );
    // And the queen side flagging in the first position loses.
    let pos = fen("8/8/4k3/8/8/8/4KQ2/8 w - - 0 50");
    assert_eq!(
        flag_fall(&pos, Color::Black, Laws::Fide2023).outcome,
        Outcome::WhiteWins
    );
}

#[test]
fn art_6_12_both_flags_in_2001_continue_but_draw_in_a_quickplay_finish() {
    let t = tc("40/120:60");
    let c = cfg(Laws::Fide2001);
    let first = both_flags(&c, &t, t.period_of(40));
    assert_eq!(first.decision, BothFlagsDecision::Continue);
    assert_eq!(first.article, Some("6.12"));
    let last = both_flags(&c, &t, t.period_of(41));
    assert_eq!(last.decision, BothFlagsDecision::Draw);
    assert_eq!(last.article, Some("10.3"));
}

#[test]
fn art_6_11_both_flags_in_2009_continue_except_in_the_last_period_and_draw_in_rapid() {
    let c = cfg(Laws::Fide2009);
    let t = tc("40/120:60");
    assert_eq!(both_flags(&c, &t, 0).decision, BothFlagsDecision::Continue);
    assert_eq!(both_flags(&c, &t, 1).decision, BothFlagsDecision::Draw);
    let rapid = tc("40/20:5");
    let r = both_flags(&c, &rapid, 0);
    assert_eq!(
        (r.decision, r.article),
        (BothFlagsDecision::Draw, Some("A.4d"))
    );
}

#[test]
fn guidelines_iii_3_1_both_flags_apply_from_2017_only_if_announced() {
    let t = tc("40/120:60");
    let mut c = cfg(Laws::Fide2023);
    assert_eq!(c.both_flags, BothFlagsPolicy::Arbiter);
    assert_eq!(both_flags(&c, &t, 1).decision, BothFlagsDecision::Arbiter);
    c.both_flags = BothFlagsPolicy::Guideline;
    let last = both_flags(&c, &t, 1);
    assert_eq!(
        (last.decision, last.article),
        (BothFlagsDecision::Draw, Some("III.3.1"))
    );
    assert_eq!(both_flags(&c, &t, 0).decision, BothFlagsDecision::Continue);
    // Not with an increment, not in blitz.
    assert_eq!(
        both_flags(&c, &tc("90+30"), 0).decision,
        BothFlagsDecision::Arbiter
    );
    assert_eq!(
        both_flags(&c, &tc("5"), 0).decision,
        BothFlagsDecision::Arbiter
    );
}

// ---------------------------------------------------------------- Articles 5 and 9

const SHUFFLE: &str = "Nf3 Nf6 Ng1 Ng8";

#[test]
fn art_5_1_1_checkmate_ends_the_game() {
    let mut reps = Repetitions::new(&Chess::default());
    let pos = play(Chess::default(), "f3 e5 g4 Qh4#", &mut reps);
    for (laws, art) in [(Laws::Fide2009, "5.1a"), (Laws::Fide2023, "5.1.1")] {
        let e = automatic_end(&cfg(laws), &pos, &reps).unwrap();
        assert_eq!(e.outcome, Outcome::BlackWins);
        assert_eq!((e.termination, e.article), ("checkmate", art));
    }
}

#[test]
fn art_5_2_1_stalemate_ends_the_game() {
    let start = fen("7k/8/8/8/8/8/6Q1/K7 w - - 0 1");
    let mut reps = Repetitions::new(&start);
    let pos = play(start, "Qg6", &mut reps);
    let e = automatic_end(&cfg(Laws::Fide2023), &pos, &reps).unwrap();
    assert_eq!(
        (e.outcome, e.termination, e.article),
        (Outcome::Draw, "stalemate", "5.2.1")
    );
}

#[test]
fn art_5_2_2_dead_position_ends_the_game() {
    let start = fen("8/8/4k3/8/8/2n5/3B4/4K3 w - - 0 1");
    let mut reps = Repetitions::new(&start);
    assert!(automatic_end(&cfg(Laws::Fide2023), &start, &reps).is_none());
    let pos = play(start, "Bxc3", &mut reps);
    for (laws, art) in [(Laws::Fide2001, "5.2b"), (Laws::Fide2018, "5.2.2")] {
        let e = automatic_end(&cfg(laws), &pos, &reps).unwrap();
        assert_eq!(
            (e.outcome, e.termination, e.article),
            (Outcome::Draw, "dead_position", art)
        );
    }
}

#[test]
fn art_9_2_threefold_is_claimable_never_automatic() {
    let mut reps = Repetitions::new(&Chess::default());
    let pos = play(Chess::default(), SHUFFLE, &mut reps);
    assert_eq!(reps.count(), 2);
    assert!(!claimable(&reps).threefold);
    let pos = play(pos, SHUFFLE, &mut reps);
    assert_eq!(reps.count(), 3);
    assert!(claimable(&reps).threefold);
    assert!(!claimable(&reps).fifty_moves);
    for laws in Laws::ALL {
        assert_eq!(automatic_end(&cfg(laws), &pos, &reps), None, "{laws}");
    }
    // A takeback undoes the repetition.
    assert!(reps.pop());
    assert!(!claimable(&reps).threefold);
}

#[test]
fn art_9_6_1_fivefold_is_automatic_from_2014_and_none_before() {
    let mut reps = Repetitions::new(&Chess::default());
    let mut pos = Chess::default();
    for _ in 0..4 {
        pos = play(pos, SHUFFLE, &mut reps);
    }
    assert_eq!(reps.count(), 5);
    for laws in [Laws::Fide2001, Laws::Fide2009] {
        assert_eq!(automatic_end(&cfg(laws), &pos, &reps), None, "{laws}");
        assert!(claimable(&reps).threefold);
    }
    for (laws, art) in [
        (Laws::Fide2014, "9.6a"),
        (Laws::Fide2018, "9.6.1"),
        (Laws::Fide2023, "9.6.1"),
    ] {
        let e = automatic_end(&cfg(laws), &pos, &reps).unwrap();
        assert_eq!(
            (e.outcome, e.termination, e.article),
            (Outcome::Draw, "fivefold_repetition", art),
            "{laws}"
        );
    }
}

#[test]
fn art_9_6_1_needs_consecutive_alternate_moves_in_2014_but_any_five_from_2017() {
    // The start position comes back after plies 4, 12, 16 and 20: five times, but the long
    // detour (plies 4 to 12) interrupts the run of alternate moves.
    let long_way = "Nf3 Nf6 Nc3 Nc6 Nb1 Nb8 Ng1 Ng8";
    let mut reps = Repetitions::new(&Chess::default());
    let mut pos = play(Chess::default(), SHUFFLE, &mut reps);
    pos = play(pos, long_way, &mut reps);
    pos = play(pos, SHUFFLE, &mut reps);
    pos = play(pos, SHUFFLE, &mut reps);
    assert_eq!(reps.count(), 5);
    assert!(!reps.fivefold(FivefoldRule::Consecutive));
    assert_eq!(automatic_end(&cfg(Laws::Fide2014), &pos, &reps), None);
    assert!(automatic_end(&cfg(Laws::Fide2018), &pos, &reps).is_some());
    // Ply 24: 8 is still in the window. Ply 28: the last five are 12, 16, 20, 24, 28.
    pos = play(pos, SHUFFLE, &mut reps);
    assert!(!reps.fivefold(FivefoldRule::Consecutive));
    pos = play(pos, SHUFFLE, &mut reps);
    assert!(reps.fivefold(FivefoldRule::Consecutive));
    let e = automatic_end(&cfg(Laws::Fide2014), &pos, &reps).unwrap();
    assert_eq!(e.end, GameEnd::FivefoldRepetition);
}

#[test]
fn art_9_2_a_double_step_nobody_can_take_en_passant_changes_nothing() {
    // After 1.e4 FEN names e3, but no black pawn can take: the position after 3.Ng1 is the same.
    let mut reps = Repetitions::new(&Chess::default());
    let pos = play(Chess::default(), "e4", &mut reps);
    assert_eq!(pos.maybe_ep_square(), Some(shakmaty::Square::E3));
    let pos = play(pos, "Nf6 Nf3 Ng8 Ng1", &mut reps);
    assert_eq!(reps.count(), 2);
    play(pos, "Nf6 Nf3 Ng8 Ng1", &mut reps);
    assert_eq!(reps.count(), 3);
    assert!(claimable(&reps).threefold);
}

#[test]
fn art_9_2_a_legal_en_passant_capture_makes_the_position_differ() {
    // 3.e4 with a black pawn on d4: dxe3 e.p. is legal, so the position after 3.e4 differs from
    // the same placement after 5.Ng1, when the chance is gone.
    let mut reps = Repetitions::new(&Chess::default());
    let pos = play(Chess::default(), "Nf3 d5 Ng1 d4 e4", &mut reps);
    assert!(pos.en_passant_moves().len() == 1);
    let pos = play(pos, "Nf6 Nf3 Ng8 Ng1", &mut reps);
    assert_eq!(reps.count(), 1);
    let pos = play(pos, "Nf6 Nf3 Ng8 Ng1", &mut reps);
    assert_eq!(reps.count(), 2);
    assert!(!claimable(&reps).threefold);
    play(pos, "Nf6 Nf3 Ng8 Ng1", &mut reps);
    assert_eq!(reps.count(), 3);
    assert!(claimable(&reps).threefold);
}

#[test]
fn art_9_2_an_en_passant_capture_that_would_expose_the_king_changes_nothing() {
    // 1.e4 beside the black d4 pawn, but dxe3 would open the fourth rank from h4 to the king on
    // a4: not a legal capture, so the position after 3.Ke1 is the same as after 1.e4.
    let start = fen("8/8/8/8/k2p3R/8/4P3/4K3 w - - 0 1");
    let mut reps = Repetitions::new(&start);
    let pos = play(start, "e4", &mut reps);
    assert!(pos.en_passant_moves().is_empty());
    assert_eq!(pos.maybe_ep_square(), Some(shakmaty::Square::E3));
    play(pos, "Ka5 Kf1 Ka4 Ke1", &mut reps);
    assert_eq!(reps.count(), 2);
}

#[test]
fn art_9_2_castling_rights_lost_make_the_position_differ() {
    // After 1.Nf3 Nf6 White may castle; after 2.Rg1 Ng8 3.Rh1 Nf6 the pieces stand the same but
    // the right to castle short is gone.
    let mut reps = Repetitions::new(&Chess::default());
    let pos = play(Chess::default(), "Nf3 Nf6", &mut reps);
    let pos = play(pos, "Rg1 Ng8 Rh1 Nf6", &mut reps);
    assert_eq!(reps.count(), 1);
    let pos = play(pos, "Ng1 Ng8 Nf3 Nf6", &mut reps);
    assert_eq!(reps.count(), 2);
    play(pos, "Ng1 Ng8 Nf3 Nf6", &mut reps);
    assert_eq!(reps.count(), 3);
    // The same shuffle with the rights kept repeats at once.
    let mut kept = Repetitions::new(&Chess::default());
    let pos = play(Chess::default(), "Nf3 Nf6", &mut kept);
    play(pos, "Ng1 Ng8 Nf3 Nf6", &mut kept);
    assert_eq!(kept.count(), 2);
}

#[test]
fn art_9_3_fifty_moves_are_claimable_never_automatic() {
    let start = fen("8/8/4k3/8/8/8/3RK3/8 w - - 98 80");
    let mut reps = Repetitions::new(&start);
    let pos = play(start, "Rd1", &mut reps);
    assert!(!claimable(&reps).fifty_moves);
    let pos = play(pos, "Ke7", &mut reps);
    assert!(claimable(&reps).fifty_moves);
    for laws in Laws::ALL {
        assert_eq!(automatic_end(&cfg(laws), &pos, &reps), None, "{laws}");
    }
}

#[test]
fn art_9_6_2_seventy_five_moves_are_automatic_from_2014_and_none_before() {
    let start = fen("8/8/4k3/8/8/8/3RK3/8 w - - 148 120");
    let mut reps = Repetitions::new(&start);
    let pos = play(start, "Rd1", &mut reps);
    assert_eq!(automatic_end(&cfg(Laws::Fide2023), &pos, &reps), None);
    let pos = play(pos, "Ke7", &mut reps);
    for laws in [Laws::Fide2001, Laws::Fide2009] {
        assert_eq!(automatic_end(&cfg(laws), &pos, &reps), None, "{laws}");
    }
    for (laws, art) in [
        (Laws::Fide2014, "9.6b"),
        (Laws::Fide2018, "9.6.2"),
        (Laws::Fide2023, "9.6.2"),
    ] {
        let e = automatic_end(&cfg(laws), &pos, &reps).unwrap();
        assert_eq!((e.termination, e.article), ("seventy_five_moves", art));
    }
}

#[test]
fn art_9_6_2_mate_on_the_seventy_fifth_move_prevails() {
    let start = fen("k7/8/1K6/8/8/8/8/7R w - - 149 120");
    let mut reps = Repetitions::new(&start);
    let pos = play(start, "Rh8#", &mut reps);
    assert!(reps.seventy_five_moves());
    let e = automatic_end(&cfg(Laws::Fide2023), &pos, &reps).unwrap();
    assert_eq!((e.outcome, e.end), (Outcome::WhiteWins, GameEnd::Checkmate));
}

// ---------------------------------------------------------------- The corpus

/// Every corpus game, replayed: under the 2009 Laws (no automatic 9.6) no position before the
/// last ends the game by itself (the players went on), and every game whose last move mates
/// ends in checkmate for the side that moved, as its result says.
#[test]
fn art_5_corpus_games_end_where_the_laws_say() {
    let mut files: Vec<_> = std::fs::read_dir(Path::new(CORPUS))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pgn"))
        .collect();
    files.sort();
    let c = cfg(Laws::Fide2009);
    let (mut games, mut mates) = (0, 0);
    for f in files {
        for g in games_from_pgn(&std::fs::read_to_string(&f).unwrap()).unwrap() {
            games += 1;
            let mut pos = g.start.clone();
            let mut reps = Repetitions::new(&pos);
            let mut last_end = None;
            for (i, m) in g.moves.iter().enumerate() {
                assert_eq!(
                    last_end,
                    None,
                    "{}: game went on after an automatic end before ply {}",
                    f.display(),
                    i + 1
                );
                pos = pos.play(*m).unwrap();
                reps.push(&pos);
                last_end = automatic_end(&c, &pos, &reps);
            }
            if g.sans.last().is_some_and(|s| s.ends_with('#')) {
                mates += 1;
                let e = last_end.unwrap();
                assert_eq!(e.end, GameEnd::Checkmate);
                assert_eq!(Some(e.outcome), g.outcome, "{}", f.display());
            }
        }
    }
    assert!(games > 900, "{games} games");
    assert!(mates > 0, "no mate in the corpus");
}

// ---------------------------------------------------------------- US Chess preset (brief section 6)

fn uscf() -> LawsConfig {
    LawsConfig::preset(Laws::Fide2023, Federation::Uscf)
}

#[test]
fn uscf_preset_changes_only_what_us_chess_changes() {
    let u = uscf();
    let f = cfg(Laws::Fide2023);
    assert_eq!(u.federation, Federation::Uscf);
    assert_eq!(u.illegal_strikes_to_lose, None, "11D: no loss ladder");
    assert_eq!(
        (
            u.penalty_secs_standard,
            u.penalty_secs_rapid,
            u.penalty_secs_blitz
        ),
        (120, 120, 120)
    );
    assert_eq!(
        u.auto_end_9_6,
        AutoEnd::May,
        "14K: the director may declare"
    );
    assert_eq!(u.fivefold, FivefoldRule::Consecutive);
    assert!(
        u.record_exemption_delay_counts,
        "a delay of 30 s keeps the duty"
    );
    assert!(!u.daemon_is_observer, "13C1: only a player calls a flag");
    assert_eq!(u.record_exemption_ms, f.record_exemption_ms);
    assert_eq!(u.setup_claim_deadline_moves, f.setup_claim_deadline_moves);
    assert_eq!(LawsConfig::preset(Laws::Fide2023, Federation::Fide), f);
}

#[test]
fn uscf_categories_count_base_plus_delay_against_30_and_10_minutes() {
    let u = uscf();
    let f = cfg(Laws::Fide2023);
    for (control, us, fide) in [
        ("5", Category::Blitz, Category::Blitz),
        ("3+2", Category::Blitz, Category::Blitz), // 5 minutes
        ("10", Category::Blitz, Category::Blitz),
        ("5d5", Category::Blitz, Category::Blitz), // 10 minutes
        ("10+1", Category::Rapid, Category::Rapid),
        ("25", Category::Rapid, Category::Rapid),
        ("25d5", Category::Standard, Category::Rapid), // G/25;d5 counts as 30: regular
        ("30", Category::Standard, Category::Rapid),
        ("45+15", Category::Standard, Category::Standard),
        ("90+30", Category::Standard, Category::Standard),
    ] {
        assert_eq!(u.category(&tc(control)), us, "{control} under US Chess");
        assert_eq!(f.category(&tc(control)), fide, "{control} under FIDE");
    }
}

#[test]
fn uscf_11d_an_illegal_move_costs_two_minutes_in_every_offence() {
    let u = uscf();
    for category in [Category::Standard, Category::Rapid] {
        for offence in 1..=4 {
            assert_eq!(
                illegal_move_penalty(&u, category, offence, true),
                Penalty::AddTimeToOpponent { ms: 120_000 },
                "{category:?}, offence {offence}"
            );
        }
        assert_eq!(u.illegal_move_penalty_article(category), "USCF 11D");
    }
    // FIDE 2023 in standard play: the second loses.
    assert_eq!(
        illegal_move_penalty(&cfg(Laws::Fide2023), Category::Standard, 2, true),
        Penalty::Loss
    );
    assert_eq!(u.article(IrregularityKind::IllegalMove), Some("USCF 11A"));
    assert_eq!(u.article(IrregularityKind::Displaced), None);
}

#[test]
fn uscf_blitz_an_illegal_move_lets_the_opponent_claim_with_mating_material() {
    let u = uscf();
    assert_eq!(
        illegal_move_penalty(&u, Category::Blitz, 1, true),
        Penalty::OpponentMayClaimWin
    );
    assert_eq!(
        illegal_move_penalty(&u, Category::Blitz, 1, false),
        Penalty::OpponentMayClaimDraw
    );
    assert_eq!(
        u.illegal_move_penalty_article(Category::Blitz),
        "USCF ch. 11"
    );
    // Mating material: a pawn, a rook, a queen or two minor pieces.
    for (position, white_has) in [
        ("8/8/4k3/8/8/8/4P3/4K3 w - - 0 50", true),
        ("8/8/4k3/8/8/8/R7/4K3 w - - 0 50", true),
        ("8/8/4k3/8/8/8/2N1B3/4K3 w - - 0 50", true),
        ("8/8/4k3/8/8/8/2N5/4K3 w - - 0 50", false),
        ("8/8/4k3/8/8/8/2B5/4K3 w - - 0 50", false),
        ("8/8/4k3/8/8/8/8/4K3 w - - 0 50", false),
    ] {
        assert_eq!(
            uscf_mating_material(&fen(position), Color::White),
            white_has,
            "{position}"
        );
        assert_eq!(u.can_win(&fen(position), Color::White), white_has);
    }
}

#[test]
fn uscf_14e_no_win_on_time_with_a_lone_minor_or_two_knights_against_no_pawns() {
    let u = uscf();
    for (position, flagged, fide, us) in [
        // A knight against a pawn: FIDE's helpmate test lets it win, US Chess does not.
        (
            "8/8/4k3/3p4/8/8/2N5/4K3 b - - 0 60",
            Color::Black,
            Outcome::WhiteWins,
            Outcome::Draw,
        ),
        // A bishop against a pawn: the same.
        (
            "8/8/4k3/3p4/8/8/2B5/4K3 b - - 0 60",
            Color::Black,
            Outcome::WhiteWins,
            Outcome::Draw,
        ),
        // Two knights against a lone king: a helpmate exists (FIDE), no win on time (14E).
        (
            "8/8/4k3/8/8/8/2N1N3/4K3 b - - 0 60",
            Color::Black,
            Outcome::WhiteWins,
            Outcome::Draw,
        ),
        // Two knights against a king with a pawn: a win on time under both.
        (
            "8/8/4k3/3p4/8/8/2N1N3/4K3 b - - 0 60",
            Color::Black,
            Outcome::WhiteWins,
            Outcome::WhiteWins,
        ),
        // A rook wins on time under both.
        (
            "8/8/4k3/8/8/8/2R5/4K3 b - - 0 60",
            Color::Black,
            Outcome::WhiteWins,
            Outcome::WhiteWins,
        ),
        // A lone king never wins.
        (
            "8/8/4k3/8/8/8/4KQ2/8 w - - 0 50",
            Color::White,
            Outcome::Draw,
            Outcome::Draw,
        ),
    ] {
        let pos = fen(position);
        let f = flag_fall_under(&cfg(Laws::Fide2023), &pos, flagged);
        assert_eq!(f.outcome, fide, "FIDE: {position}");
        assert_eq!(f, flag_fall(&pos, flagged, Laws::Fide2023));
        let e = flag_fall_under(&u, &pos, flagged);
        assert_eq!(e.outcome, us, "US Chess: {position}");
        let article = if us == Outcome::Draw {
            "USCF 14E"
        } else {
            "USCF 13C1"
        };
        assert_eq!(e.article, article, "{position}");
    }
}

#[test]
fn uscf_14k_and_14c_articles_for_the_draws() {
    let u = uscf();
    assert_eq!(
        u.game_end_article(GameEnd::FivefoldRepetition),
        Some("USCF 14K")
    );
    assert_eq!(
        u.game_end_article(GameEnd::SeventyFiveMoves),
        Some("USCF 14K")
    );
    assert_eq!(
        u.game_end_article(GameEnd::ThreefoldRepetition),
        Some("USCF 14C")
    );
    assert_eq!(u.game_end_article(GameEnd::FiftyMoves), Some("USCF 14F"));
    assert_eq!(
        cfg(Laws::Fide2023).game_end_article(GameEnd::FivefoldRepetition),
        Some("9.6.1")
    );
}
