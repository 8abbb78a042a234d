//! The detection matrix of shared/rules/fide-laws.md (section 7), row by row: each test scripts a
//! scenario on the emulator (a corpus game played with an irregularity, a clock, a time control),
//! replays its capture through the pipeline `run` uses, and asserts what the store recorded
//! (irregularities with their articles, rulings, resolutions; time trouble; results), under the
//! editions where they differ. `scripted_irregularities_on_many_games` gives the rates.

use std::collections::HashMap;

use boardscribe::{
    arbiter::{AutoEnd, Federation, Laws, LawsConfig, LawsSetup, Supervision, TimeControl},
    emulator::{
        self, BoardScript, EmulatorOptions, IllegalKind, IrregularityScript, Payload, PgnGame,
        ScriptedIrregularity, WrongStartKind,
    },
    export,
    protocol::dgt::{BwTime, Frame, hour_flags},
    replay::replay_reader_with,
    store::{EventRecord, GameRecord, Store},
};
use rand::{SeedableRng, seq::IndexedRandom};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;
use shakmaty::{Chess, EnPassantMode, Move, Position, Role, fen::Fen};

fn corpus(file: &str) -> Vec<PgnGame> {
    let path = format!(
        "{}/../shared/corpus/chess/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    emulator::games_from_pgn(&std::fs::read_to_string(&path).expect("corpus file"))
        .expect("corpus parses")
}

fn laws(edition: Laws, time_control: Option<&str>) -> LawsSetup {
    LawsSetup {
        cfg: LawsConfig::for_edition(edition),
        time_control: time_control.map(|t| t.parse::<TimeControl>().expect("time control")),
        ..LawsSetup::default()
    }
}

/// Rapid or blitz laws with the given supervision (the appendices' two sets of rules).
fn supervised(edition: Laws, time_control: &str, supervision: Supervision) -> LawsSetup {
    let mut l = laws(edition, Some(time_control));
    l.cfg.supervision = supervision;
    l
}

/// What replaying one scripted game recorded.
struct Recorded {
    script: BoardScript,
    games: Vec<GameRecord>,
    /// Every event as the store announced it.
    kinds: Vec<String>,
    /// The store it was replayed into.
    store: Store,
}

impl Recorded {
    fn game(&self) -> &GameRecord {
        self.games.last().expect("a game was recorded")
    }

    fn ucis(&self) -> Vec<String> {
        self.game()
            .moves
            .iter()
            .map(|m| m.uci.clone().unwrap_or_default())
            .collect()
    }

    /// The game's events that cite `article`.
    fn citing(&self, article: &str) -> Vec<&EventRecord> {
        self.game()
            .events
            .iter()
            .filter(|e| e.detail["article"] == article)
            .collect()
    }

    fn expected_ucis(&self) -> Vec<String> {
        self.script.plies.iter().map(|p| p.uci.clone()).collect()
    }

    /// The game's irregularities as exported in JSON.
    fn irregularities(&self) -> Vec<Value> {
        export::json::irregularities(self.game())
    }

    fn of_kind(&self, kind: &str) -> Vec<Value> {
        self.irregularities()
            .into_iter()
            .filter(|i| i["kind"] == kind)
            .collect()
    }
}

fn play(game: &PgnGame, opts: EmulatorOptions, laws: &LawsSetup) -> Recorded {
    let script = emulator::script_pgn(game, &opts).expect("script");
    replay_script(script, laws)
}

fn replay_script(script: BoardScript, laws: &LawsSetup) -> Recorded {
    let text = script.to_capture_text();
    let mut store = Store::open_in_memory().expect("store");
    let mut kinds = Vec::new();
    let summary = replay_reader_with(
        &mut store,
        "scenario",
        "board 1",
        text.as_bytes(),
        laws,
        &mut |_, e| kinds.push(e.kind().to_string()),
    )
    .expect("replay");
    let games = summary
        .games
        .iter()
        .map(|g| store.game(*g).expect("read").expect("game"))
        .collect();
    Recorded {
        script,
        games,
        kinds,
        store,
    }
}

fn with(before_ply: u32, kind: IrregularityScript, seed: u64) -> EmulatorOptions {
    EmulatorOptions {
        seed,
        irregularities: vec![ScriptedIrregularity { before_ply, kind }],
        ..EmulatorOptions::default()
    }
}

fn capablanca(n: usize) -> PgnGame {
    corpus("Capablanca.pgn").swap_remove(n)
}

#[test]
fn art_7_4_a_piece_knocked_aside_and_put_back_is_displaced_then_resolved() {
    let game = capablanca(3);
    for (edition, article) in [(Laws::Fide2023, "7.4"), (Laws::Fide2009, "7.3")] {
        let r = play(
            &game,
            with(12, IrregularityScript::Knock { hold_ms: 6_000 }, 7),
            &laws(edition, None),
        );
        assert_eq!(r.ucis(), r.expected_ucis(), "the moves stay exact");
        let found = r.of_kind("displaced");
        assert_eq!(found.len(), 1, "{:?}", r.irregularities());
        let d = &found[0];
        assert_eq!(d["ply"], 12);
        assert_eq!(d["article"], article);
        assert_eq!(d["resolved"], true);
        let info = &r.script.irregularities[0];
        for square in &info.square_names {
            assert!(
                d["detail"].as_str().unwrap_or("").contains(square.as_str()),
                "{d} names {square}"
            );
        }
        // The frames that show it lie within what the script did.
        let since = d["since_ms"].as_u64().unwrap_or(0);
        assert!(
            since >= info.start_ms && since <= info.restore_ms,
            "{d} {info:?}"
        );
    }
}

#[test]
fn art_7_4_a_piece_knocked_over_is_a_missing_piece() {
    let game = capablanca(5);
    let r = play(
        &game,
        with(15, IrregularityScript::KnockOver { hold_ms: 20_000 }, 11),
        &laws(Laws::Fide2023, None),
    );

    assert_eq!(r.ucis(), r.expected_ucis());
    let found = r.of_kind("displaced");
    assert_eq!(found.len(), 1, "{:?}", r.irregularities());
    assert_eq!(found[0]["ply"], 15);
    assert!(
        found[0]["detail"]
            .as_str()
            .unwrap_or("")
            .contains("→ empty"),
        "{}",
        found[0]
    );
    assert_eq!(found[0]["resolved"], true);
}

#[test]
fn art_7_5_1_an_illegal_move_completed_by_a_press_is_recorded_never_played() {
    let game = capablanca(7);
    let r = play(
        &game,
        with(
            10,
            IrregularityScript::IllegalMove {
                kind: IllegalKind::WrongShape,
            },
            3,
        ),
        &laws(Laws::Fide2023, None),
    );
    assert_eq!(
        r.ucis(),
        r.expected_ucis(),
        "recording goes on from the reinstated position"
    );
    let found = r.of_kind("illegal_move");
    assert_eq!(found.len(), 1, "{:?}", r.irregularities());
    let i = &found[0];
    let info = &r.script.irregularities[0];
    assert_eq!(i["ply"], 10);
    assert_eq!(i["article"], "7.5.1");
    assert_eq!(i["player"], "black", "ply 10 is Black's");
    assert_eq!(i["resolved"], true, "the position was reinstated");
    let uci = info.uci.clone().expect("the illegal move");
    assert!(
        i["detail"].as_str().unwrap_or("").contains(&uci[..4]),
        "{i} names {uci}"
    );
    assert!(
        i["ruling"]
            .as_str()
            .unwrap_or("")
            .starts_with("first completed illegal move by black"),
        "{i}"
    );
    // Never in the movetext: the PGN has it only in a comment.
    let pgn = export::write_pgn([r.game()], &export::PgnStyle::arbiter());
    let movetext: String = pgn
        .lines()
        .filter(|l| !l.starts_with('['))
        .collect::<Vec<_>>()
        .join(" ");
    let outside_comments: String = movetext
        .split('{')
        .map(|part| part.split_once('}').map_or(part, |(_, rest)| rest))
        .collect();
    assert!(
        !outside_comments.contains(&uci[..4]),
        "{uci} outside comments in {pgn}"
    );
    assert!(
        pgn.contains("Irregularity: illegal_move (7.5.1) by black"),
        "{pgn}"
    );
}

#[test]
fn art_7_5_1_a_move_that_leaves_the_king_in_check_is_illegal() {
    // Try games until the emulator finds a move into check (it falls back to a wrong shape).
    for (n, game) in corpus("Capablanca.pgn").into_iter().enumerate().take(60) {
        let opts = with(
            20,
            IrregularityScript::IllegalMove {
                kind: IllegalKind::IntoCheck,
            },
            n as u64,
        );
        let r = play(&game, opts, &laws(Laws::Fide2023, None));
        if r.script.irregularities[0].kind
            != (IrregularityScript::IllegalMove {
                kind: IllegalKind::IntoCheck,
            })
        {
            continue;
        }
        assert_eq!(r.ucis(), r.expected_ucis());
        let found = r.of_kind("illegal_move");
        assert_eq!(found.len(), 1, "{:?}", r.irregularities());
        assert!(
            found[0]["detail"]
                .as_str()
                .unwrap_or("")
                .contains("king in check"),
            "{}",
            found[0]
        );
        return;
    }
    panic!("no game offered a move into check");
}

#[test]
fn art_7_5_2_a_pawn_left_on_the_last_rank_at_the_press_is_illegal() {
    // A game with a promotion: the pawn is pushed to the last rank and the clock pressed.
    for game in corpus("Capablanca.pgn") {
        let Some(ply) = game.moves.iter().position(|m| m.is_promotion()) else {
            continue;
        };
        let before_ply = ply as u32 + 1;
        let opts = with(
            before_ply,
            IrregularityScript::IllegalMove {
                kind: IllegalKind::PawnOnLastRank,
            },
            5,
        );
        let r = play(&game, opts, &laws(Laws::Fide2023, None));
        if r.script.irregularities[0].kind
            != (IrregularityScript::IllegalMove {
                kind: IllegalKind::PawnOnLastRank,
            })
        {
            continue;
        }
        assert_eq!(r.ucis(), r.expected_ucis());
        let found = r.of_kind("illegal_move");
        assert_eq!(found.len(), 1, "{:?}", r.irregularities());
        assert_eq!(found[0]["ply"], before_ply);
        assert!(
            found[0]["detail"].as_str().unwrap_or("").contains("7.5.2"),
            "{}",
            found[0]
        );
        return;
    }
    panic!("no promotion in the corpus could be scripted");
}

/// A corpus game with a promotion, and the ply of its first one.
fn promotion_game() -> (PgnGame, u32) {
    corpus("Capablanca.pgn")
        .into_iter()
        .find_map(|g| {
            let ply = g.moves.iter().position(|m| m.is_promotion())?;
            Some((g, ply as u32 + 1))
        })
        .expect("a promotion in the corpus")
}

#[test]
fn art_a_5_4_an_illegal_position_after_one_completed_move_is_drawn_without_full_supervision() {
    let (game, before_ply) = promotion_game();
    let script = IrregularityScript::IllegalMoveAnswered {
        kind: IllegalKind::PawnOnLastRank,
    };
    let run = |setup: &LawsSetup| {
        let r = play(&game, with(before_ply, script, 5), setup);
        assert_eq!(r.script.irregularities[0].kind, script, "no fallback");
        assert_eq!(
            r.ucis(),
            r.expected_ucis(),
            "recording goes on after reinstatement"
        );
        let found = r.of_kind("illegal_position");
        assert_eq!(found.len(), 1, "{:?}", r.irregularities());
        let i = found[0].clone();
        assert_eq!(i["ply"], before_ply);
        assert_eq!(i["resolved"], true, "the position before it was reinstated");
        let detail = i["detail"].as_str().unwrap_or("").to_string();
        assert!(
            detail.contains("pawn on") && detail.contains("after a move by the opponent"),
            "{i}"
        );
        assert_eq!(
            r.of_kind("illegal_move").len(),
            1,
            "{:?}",
            r.irregularities()
        );
        i
    };
    // Rapid without full supervision: a draw the arbiter confirms, under the edition's article.
    let i = run(&supervised(Laws::Fide2023, "15+10", Supervision::Reduced));
    assert_eq!(i["article"], "A.5.4");
    assert!(i["ruling"].as_str().unwrap_or("").contains("drawn"), "{i}");
    let i = run(&supervised(Laws::Fide2018, "15+10", Supervision::Reduced));
    assert_eq!(i["article"], "A.4.4");
    let i = run(&supervised(Laws::Fide2009, "15+10", Supervision::Reduced));
    assert_eq!(i["article"], "A.4c");
    assert!(
        i["ruling"].as_str().unwrap_or("").contains("intervenes"),
        "{i}"
    );
    // Fully supervised (or standard play), Article 7 applies: the position is reinstated.
    for setup in [
        supervised(Laws::Fide2023, "15+10", Supervision::Full),
        supervised(Laws::Fide2023, "90+30", Supervision::Reduced),
    ] {
        let i = run(&setup);
        assert_eq!(i["article"], "7.5.1");
        assert!(
            i["ruling"].as_str().unwrap_or("").contains("reinstates"),
            "{i}"
        );
    }
}

#[test]
fn art_a_5_4_a_legal_position_after_an_answered_illegal_move_is_not_an_illegal_position() {
    // A wrong-shape illegal move answered by the opponent leaves a board no rule calls illegal.
    let game = capablanca(7);
    let script = IrregularityScript::IllegalMoveAnswered {
        kind: IllegalKind::WrongShape,
    };
    let r = play(
        &game,
        with(10, script, 3),
        &supervised(Laws::Fide2023, "15+10", Supervision::Reduced),
    );
    assert_eq!(r.script.irregularities[0].kind, script);
    assert_eq!(r.ucis(), r.expected_ucis());
    assert_eq!(
        r.of_kind("illegal_move").len(),
        1,
        "{:?}",
        r.irregularities()
    );
    assert!(
        r.of_kind("illegal_position").is_empty(),
        "{:?}",
        r.irregularities()
    );
}

#[test]
fn art_a_5_2_an_illegal_move_without_full_supervision_stands_unless_claimed() {
    let game = capablanca(7);
    let script = IrregularityScript::IllegalMove {
        kind: IllegalKind::WrongShape,
    };
    let ruling = |setup: &LawsSetup| {
        let r = play(&game, with(10, script, 3), setup);
        assert_eq!(r.ucis(), r.expected_ucis());
        let found = r.of_kind("illegal_move");
        assert_eq!(found.len(), 1, "{:?}", r.irregularities());
        found[0]["ruling"].as_str().unwrap_or("").to_string()
    };
    let reduced = ruling(&supervised(Laws::Fide2023, "15+10", Supervision::Reduced));
    assert!(
        reduced.contains("(A.5.2)") && reduced.contains("unclaimed, the move stands"),
        "{reduced}"
    );
    assert!(
        reduced.contains("60 s to be added to white's clock"),
        "{reduced}"
    );
    let reduced = ruling(&supervised(Laws::Fide2018, "15+10", Supervision::Reduced));
    assert!(reduced.contains("(A.4.2)"), "{reduced}");
    let blitz = ruling(&supervised(Laws::Fide2009, "3+2", Supervision::Reduced));
    assert!(
        blitz.contains("claim a win") && blitz.contains("(B.3c)"),
        "{blitz}"
    );
    let full = ruling(&supervised(Laws::Fide2023, "15+10", Supervision::Full));
    assert!(
        full.contains("(7.5.5, A.3); the arbiter applies it"),
        "{full}"
    );
    assert!(!full.contains("stands"), "{full}");
}

#[test]
fn art_7_5_3_a_press_without_a_move_is_reported_for_the_arbiter() {
    let game = capablanca(9);
    for (edition, article) in [
        (Laws::Fide2023, Value::from("7.5.3")),
        (Laws::Fide2009, Value::Null),
    ] {
        let r = play(
            &game,
            with(8, IrregularityScript::PressWithoutMove, 21),
            &laws(edition, None),
        );
        assert_eq!(r.ucis(), r.expected_ucis());
        let found = r.of_kind("clock_without_move");
        assert_eq!(found.len(), 1, "{:?}", r.irregularities());
        assert_eq!(found[0]["ply"], 8);
        assert_eq!(found[0]["player"], "black");
        assert_eq!(found[0]["article"], article, "7.5.3 exists from 2017");
        assert!(r.of_kind("illegal_move").is_empty());
    }
}

/// Two completed illegal moves by White (before plies 9 and 19).
fn two_illegal_moves(edition: Laws) -> Recorded {
    two_illegal_moves_under(&laws(edition, Some("90+30")))
}

/// The US Chess preset over the 2023 edition, at `time_control`.
fn uscf(time_control: &str) -> LawsSetup {
    LawsSetup {
        cfg: LawsConfig::preset(Laws::Fide2023, Federation::Uscf),
        time_control: Some(time_control.parse().expect("time control")),
        ..LawsSetup::default()
    }
}

fn two_illegal_moves_under(setup: &LawsSetup) -> Recorded {
    let game = capablanca(12);
    let kind = IrregularityScript::IllegalMove {
        kind: IllegalKind::WrongShape,
    };
    let opts = EmulatorOptions {
        seed: 17,
        irregularities: vec![
            ScriptedIrregularity {
                before_ply: 9,
                kind,
            },
            ScriptedIrregularity {
                before_ply: 19,
                kind,
            },
        ],
        ..EmulatorOptions::default()
    };
    play(&game, opts, setup)
}

#[test]
fn art_7_5_5_a_second_illegal_move_loses_from_2014() {
    let r = two_illegal_moves(Laws::Fide2023);
    assert_eq!(r.ucis(), r.expected_ucis());
    let found = r.of_kind("illegal_move");
    assert_eq!(found.len(), 2, "{:?}", r.irregularities());
    let ruling = |i: usize| found[i]["ruling"].as_str().unwrap_or("").to_string();
    assert!(
        ruling(0).contains("120 s to be added to black's clock"),
        "{}",
        ruling(0)
    );
    assert!(ruling(1).starts_with("second completed illegal move by white"));
    assert!(ruling(1).contains("white loses the game"), "{}", ruling(1));
}

#[test]
fn art_7_4_b_a_second_illegal_move_does_not_lose_in_2009() {
    let r = two_illegal_moves(Laws::Fide2009);
    let found = r.of_kind("illegal_move");
    assert_eq!(found.len(), 2, "{:?}", r.irregularities());
    assert_eq!(found[1]["article"], "7.4");
    let second = found[1]["ruling"].as_str().unwrap_or("");
    assert!(
        second.contains("120 s to be added to black's clock"),
        "{second}"
    );
    assert!(!second.contains("loses"), "{second}");
}

#[test]
fn art_7_2_1_a_wrong_set_up_is_reported_at_the_start_and_resolved_when_corrected() {
    let game = capablanca(2);
    for kind in [
        WrongStartKind::KingQueenSwapped,
        WrongStartKind::KnightBishopSwapped,
    ] {
        let r = play(
            &game,
            with(1, IrregularityScript::WrongStart { kind }, 2),
            &laws(Laws::Fide2023, None),
        );
        assert_eq!(r.games.len(), 1, "one game, begun on the wrong set-up");
        assert_eq!(r.ucis(), r.expected_ucis());
        let found = r.of_kind("wrong_start_position");
        assert_eq!(found.len(), 1, "{:?}", r.irregularities());
        assert_eq!(found[0]["ply"], 1);
        assert_eq!(found[0]["article"], "7.2.1");
        assert_eq!(found[0]["resolved"], true);
        for square in &r.script.irregularities[0].square_names {
            assert!(
                found[0]["detail"]
                    .as_str()
                    .unwrap_or("")
                    .contains(square.as_str())
            );
        }
    }
}

/// The board index at which a board turned a quarter (numbering file f, rank r showing game file r,
/// rank 7 - f) shows what board index `i` shows on a board lying normally.
fn quarter_index(i: u8) -> u8 {
    // Normal numbering: 0 = a8; game file F = i % 8, game rank R = 7 - i / 8.
    let (file, rank) = (i % 8, 7 - i / 8);
    // The quarter-turned numbering (f, r) with r = F and f = 7 - R, as a board index.
    let (f, r) = (7 - rank, file);
    (7 - r) * 8 + f
}

#[test]
fn art_7_2_2_a_board_turned_a_quarter_is_reported_and_the_game_goes_on() {
    let game = capablanca(6);
    let mut script = emulator::script_pgn(&game, &EmulatorOptions::default()).expect("script");
    // The same hands on a board turned a quarter: every square the sensors report moves.
    for event in &mut script.events {
        if let Payload::Frame(frame) = &mut event.payload {
            match frame {
                Frame::BoardDump(dump) => {
                    let mut turned = [0u8; 64];
                    for (i, &code) in dump.0.iter().enumerate() {
                        turned[usize::from(quarter_index(i as u8))] = code;
                    }
                    dump.0 = turned;
                }
                Frame::FieldUpdate { square, .. } => *square = quarter_index(*square),
                _ => {}
            }
        }
    }
    for (edition, article) in [(Laws::Fide2023, "7.2.2"), (Laws::Fide2009, "7.1b")] {
        let r = replay_script(script.clone(), &laws(edition, None));
        assert_eq!(r.ucis(), r.expected_ucis(), "the game goes on, recorded");
        assert_eq!(r.game().orientation.as_str(), "quarter_left");
        let found = r.of_kind("board_rotated");
        assert_eq!(found.len(), 1, "{:?}", r.irregularities());
        assert_eq!(found[0]["ply"], 1);
        assert_eq!(found[0]["article"], article);
    }
    // A board turned round (half a turn) is a regular placement: nothing to report.
    let opts = EmulatorOptions {
        rotated: true,
        ..EmulatorOptions::default()
    };
    let r = play(&game, opts, &laws(Laws::Fide2023, None));
    assert_eq!(r.game().orientation.as_str(), "rotated");
    assert!(r.of_kind("board_rotated").is_empty());
}

#[test]
fn a_move_taken_back_stays_in_the_audit_trail() {
    let game = capablanca(4);
    let r = play(
        &game,
        with(14, IrregularityScript::Takeback, 5),
        &laws(Laws::Fide2023, None),
    );
    assert_eq!(r.ucis(), r.expected_ucis());
    let found = r.of_kind("takeback");
    assert_eq!(found.len(), 1, "{:?}", r.irregularities());
    assert_eq!(found[0]["detail"]["from_ply"], 14);
    assert_eq!(found[0]["detail"]["to_ply"], 13);
}

/// The first ply at which a position (placement, side to move, castling, legal e.p.) occurs for
/// the `n`th time, computed from FEN texts.
fn nth_occurrence(game: &PgnGame, n: usize) -> Option<usize> {
    let mut pos = Chess::default();
    let key = |p: &Chess| {
        let fen = Fen::from_position(p, EnPassantMode::Legal).to_string();
        fen.split(' ').take(4).collect::<Vec<_>>().join(" ")
    };
    let mut seen: HashMap<String, usize> = HashMap::new();
    *seen.entry(key(&pos)).or_default() += 1;
    for (i, m) in game.moves.iter().enumerate() {
        pos.play_unchecked(*m);
        let c = seen.entry(key(&pos)).or_default();
        *c += 1;
        if *c == n {
            return Some(i + 1);
        }
    }
    None
}

#[test]
fn art_9_6_1_fivefold_repetition_ends_a_real_game_from_2014_not_in_2009() {
    // Zukertort-Steinitz 1886, game 11: the players repeated the position five times and more.
    let game = corpus("WorldChamp1886.pgn").swap_remove(10);
    let fifth = nth_occurrence(&game, 5).expect("a fivefold repetition");
    let third = nth_occurrence(&game, 3).expect("a threefold repetition");
    let r = play(
        &game,
        EmulatorOptions::default(),
        &laws(Laws::Fide2023, None),
    );
    let g = r.game();
    assert_eq!(g.result, "1/2-1/2");
    assert_eq!(g.termination.as_deref(), Some("fivefold_repetition"));
    assert_eq!(
        g.moves.len(),
        fifth,
        "the game ends with the fifth occurrence"
    );
    assert!(r.kinds.contains(&"claimable".to_string()));
    let claim = g
        .events
        .iter()
        .find(|e| e.kind == "claimable")
        .expect("threefold claimable");
    assert_eq!(claim.detail["claim"], "threefold_repetition");
    assert_eq!(claim.detail["article"], "9.2");
    assert_eq!(claim.ply, Some(third as u32 + 1));

    let r = play(
        &game,
        EmulatorOptions::default(),
        &laws(Laws::Fide2009, None),
    );
    assert_eq!(r.ucis(), r.expected_ucis(), "no automatic end before 2014");
    assert_ne!(r.game().termination.as_deref(), Some("fivefold_repetition"));

    // An event that wants the arbiter to declare it (auto_end_9_6 = "may"): noted once at the
    // fifth occurrence, and the game goes on being recorded.
    let mut setup = laws(Laws::Fide2023, None);
    setup.cfg.auto_end_9_6 = AutoEnd::May;
    let r = play(&game, EmulatorOptions::default(), &setup);
    assert_eq!(r.ucis(), r.expected_ucis());
    let noted = r.citing("9.6.1");
    assert_eq!(noted.len(), 1, "{noted:?}");
    assert_eq!(noted[0].ply, Some(fifth as u32 + 1));
    assert_eq!(
        noted[0].detail["claim"],
        "fivefold repetition: the arbiter declares the draw"
    );
    // The same as a phrase, for the other languages.
    assert_eq!(
        noted[0].detail["claim_phrase"]["key"],
        "claim.declared.fivefold_repetition"
    );
    assert_ne!(r.game().termination.as_deref(), Some("fivefold_repetition"));
}

#[test]
fn art_5_1_1_checkmate_ends_the_game_with_its_result() {
    let game = corpus("Capablanca.pgn")
        .into_iter()
        .find(|g| {
            let mut pos = g.start.clone();
            for m in &g.moves {
                pos.play_unchecked(*m);
            }
            pos.is_checkmate()
        })
        .expect("a game ending in mate");
    let r = play(
        &game,
        EmulatorOptions::default(),
        &laws(Laws::Fide2023, None),
    );
    assert_eq!(r.ucis(), r.expected_ucis());
    let g = r.game();
    assert_eq!(g.termination.as_deref(), Some("checkmate"));
    let winner = if game.moves.len() % 2 == 1 {
        "1-0"
    } else {
        "0-1"
    };
    assert_eq!(g.result, winner);
}

/// Whether each of the mover's moves is in Article 8.4 time trouble, computed from the stored
/// clocks alone: from the first move after which his clock, less the increment, is under 5:00.
fn expected_time_trouble(g: &GameRecord, increment_ms: u64) -> Vec<bool> {
    let mut on = [false, false];
    g.moves
        .iter()
        .map(|m| {
            let white = m.ply % 2 == 1;
            let clock = if white {
                m.clock_white_ms
            } else {
                m.clock_black_ms
            };
            let side = usize::from(!white);
            if clock.is_some_and(|c| c.saturating_sub(increment_ms) < 300_000) {
                on[side] = true;
            }
            on[side]
        })
        .collect()
}

#[test]
fn art_8_4_moves_under_five_minutes_without_a_30_second_increment_are_in_time_trouble() {
    let game = capablanca(20);
    // Seven minutes plus two seconds a move: both players drop under five minutes mid-game.
    let opts = EmulatorOptions {
        seed: 4,
        time_control: Some((7 * 60_000, 2_000)),
        ..EmulatorOptions::default()
    };
    let r = play(&game, opts, &laws(Laws::Fide2023, Some("7+2")));
    let g = r.game();
    let flags: Vec<bool> = g.moves.iter().map(|m| m.time_trouble).collect();
    assert_eq!(flags, expected_time_trouble(g, 2_000));
    assert!(flags.iter().any(|&f| f), "the window opens");
    assert!(!flags[0], "not from the start");
    let json = export::json(std::slice::from_ref(g));
    let first = flags.iter().position(|&f| f).unwrap_or(0);
    assert_eq!(json["games"][0]["moves"][first]["time_trouble"], true);
    assert_eq!(json["games"][0]["moves"][0]["time_trouble"], false);

    // With a 30-second increment the duty to record stays (8.4).
    let opts = EmulatorOptions {
        seed: 4,
        time_control: Some((7 * 60_000, 30_000)),
        ..EmulatorOptions::default()
    };
    let r = play(&game, opts, &laws(Laws::Fide2023, Some("7+30")));
    assert!(r.game().moves.iter().all(|m| !m.time_trouble));
}

#[test]
fn art_6_9_a_flag_fall_is_reported_with_the_result_the_laws_give() {
    let game = capablanca(30);
    // One minute for the game: a flag falls long before the end.
    let opts = EmulatorOptions {
        seed: 8,
        time_control: Some((60_000, 0)),
        result_gesture: false,
        ..EmulatorOptions::default()
    };
    let r = play(&game, opts.clone(), &laws(Laws::Fide2023, Some("1")));
    let g = r.game();
    let flag = g
        .events
        .iter()
        .find(|e| e.kind == "flag_fall")
        .expect("a flag fall");
    let side = flag.detail["side"].as_str().expect("side");
    let expected = if side == "white" { "0-1" } else { "1-0" };
    assert_eq!(flag.detail["proposed"], expected);
    assert_eq!(flag.detail["article"], "6.9");
    // Reported, not decided: the daemon is not an observer by default (6.8).
    assert_eq!(g.result, "*");

    // When the daemon counts as an observer, the game ends on time.
    let mut setup = laws(Laws::Fide2023, Some("1"));
    setup.cfg.daemon_is_observer = true;
    let r = play(&game, opts, &setup);
    let g = &r.games[0];
    assert_eq!(g.termination.as_deref(), Some("time_forfeit"));
    assert_eq!(g.result, expected);
}

#[test]
fn art_6_4_a_flag_fall_says_whether_the_period_quota_was_met() {
    let game = capablanca(30);
    let opts = EmulatorOptions {
        seed: 8,
        time_control: Some((60_000, 0)),
        result_gesture: false,
        ..EmulatorOptions::default()
    };
    // The emulated clock gives one minute and never adds a second period; the Laws are told of a
    // quota the flagged player cannot have met (200 moves), then of one he has (1 move).
    let flag = |tc: &str| {
        let r = play(&game, opts.clone(), &laws(Laws::Fide2023, Some(tc)));
        let g = r.game();
        let flag = g
            .events
            .iter()
            .find(|e| e.kind == "flag_fall")
            .expect("a flag fall")
            .clone();
        // The event's ply is the one the flag fell before.
        let after = flag.ply.expect("ply") - 1;
        let white = flag.detail["side"] == "white";
        // Moves the flagged player completed, counted from the record.
        let done = g
            .moves
            .iter()
            .filter(|m| m.ply <= after && (m.ply % 2 == 1) == white)
            .count();
        assert!(done > 1, "the flag fell after some moves");
        (flag.detail["note"].as_str().unwrap_or("").to_string(), done)
    };
    let (note, done) = flag("200/1:1");
    assert!(
        note.contains(&format!(
            "had completed {done} of the 200 moves required by the end of period 1 (6.4)"
        )),
        "{note}"
    );
    let (note, done) = flag("1/1:1");
    assert!(
        note.contains(&format!(
            "had completed {done} moves: the flag fell in period 2"
        )),
        "{note}"
    );
    assert!(note.contains("(6.10.2)"), "{note}");
    // Sudden death has no quota to check.
    let (note, _) = flag("1");
    assert!(!note.contains("6.4"), "{note}");
}

#[test]
fn art_6_11_both_flags_down_are_reported_with_what_the_edition_provides() {
    let game = capablanca(30);
    let opts = EmulatorOptions {
        seed: 8,
        time_control: Some((60_000, 0)),
        result_gesture: false,
        ..EmulatorOptions::default()
    };
    let mut script = emulator::script_pgn(&game, &opts).expect("script");
    // Two seconds after the first flag fell, the clock shows the other flag too (its side ran
    // out while nobody looked).
    let first = script
        .events
        .iter()
        .position(|e| {
            matches!(&e.payload, Payload::Frame(Frame::BwTime(t)) if t.right_flags() | t.left_flags() != 0)
        })
        .expect("a flag fell in the script");
    let mut both = script.events[first].clone();
    both.at_ms += 2_000;
    if let Payload::Frame(Frame::BwTime(t)) = &mut both.payload {
        *t = BwTime::from_parts(
            t.right(),
            t.right_flags() | hour_flags::FLAG_FALLEN,
            t.left(),
            t.left_flags() | hour_flags::FLAG_FALLEN,
            t.status(),
        );
    }
    let at = script
        .events
        .iter()
        .position(|e| e.at_ms > both.at_ms)
        .unwrap_or(script.events.len());
    script.events.insert(at, both);
    for (edition, tc, expect) in [
        // 2009 (6.11): play on, but a draw in the last period; sudden death has one period.
        (Laws::Fide2009, "1", "the game is drawn"),
        // From 2017 Guidelines III.3.1 applies only if announced: the arbiter decides.
        (Laws::Fide2023, "1", "the arbiter decides"),
    ] {
        let r = replay_script(script.clone(), &laws(edition, Some(tc)));
        let falls: Vec<_> = r
            .game()
            .events
            .iter()
            .filter(|e| e.kind == "flag_fall")
            .collect();
        assert_eq!(falls.len(), 2, "{falls:?}");
        assert_eq!(falls[0].detail["both"], false);
        assert_eq!(falls[1].detail["both"], true);
        let note = falls[1].detail["note"].as_str().unwrap_or("");
        assert!(
            note.starts_with(&format!("both flags are down: {expect}")),
            "{edition}: {note}"
        );
        assert_ne!(falls[0].detail["side"], falls[1].detail["side"]);
    }
}

#[test]
fn art_6_10_2_a_clock_set_against_the_time_control_is_reported() {
    let game = capablanca(8);
    // The emulated clock is set to 15 minutes and 10 seconds a move.
    let opts = EmulatorOptions {
        seed: 12,
        time_control: Some((15 * 60_000, 10_000)),
        ..EmulatorOptions::default()
    };
    let r = play(&game, opts.clone(), &laws(Laws::Fide2023, Some("90+30")));
    let found = r.of_kind("clock_mis_set");
    assert_eq!(found.len(), 1, "{:?}", r.irregularities());
    assert_eq!(found[0]["ply"], 1);
    assert_eq!(found[0]["article"], "6.10.2");
    assert_eq!(
        found[0]["detail"],
        "the clocks show 0:15:00 and 0:15:00; the time control gives 1:30:00 each"
    );
    assert_eq!(r.ucis(), r.expected_ucis());
    // The board never holds a mis-set clock open: once play went on, the arbiter's alert is
    // over by itself, and the PGN says so too (it said "unresolved", the alert's state aside).
    let alerts = boardscribe::relay::alerts::game_alerts(r.game());
    let alert = alerts
        .iter()
        .find(|a| a.kind == "clock_mis_set")
        .expect("an alert of the mis-set clock");
    assert_eq!(
        alert.state,
        boardscribe::relay::alerts::AlertState::Resolved,
        "{alert:?}"
    );
    let said = alert.resolved.clone().expect("how it ended");
    let pgn = export::write_pgn([r.game()], &export::PgnStyle::arbiter());
    let flat = pgn.split_whitespace().collect::<Vec<_>>().join(" ");
    let comment = flat
        .split('{')
        .find(|c| c.contains("Irregularity: clock_mis_set"))
        .unwrap_or_else(|| panic!("no clock_mis_set comment in {pgn}"));
    assert!(
        comment.contains(&format!("; resolved: {said} }}")),
        "the PGN ends the mis-set clock's comment as the alert did ({said}): {comment}"
    );
    assert!(!comment.contains("unresolved"), "{comment}");
    // Set as the event's control: nothing to report.
    let r = play(&game, opts, &laws(Laws::Fide2023, Some("15+10")));
    assert!(r.of_kind("clock_mis_set").is_empty());
}

/// Scripted irregularities on many corpus games: how many are recorded at the right ply with the
/// right kind, how many alarms match nothing scripted, and whether the moves stay exact.
#[test]
fn scripted_irregularities_on_many_games() {
    let games: Vec<PgnGame> = corpus("Capablanca.pgn")
        .into_iter()
        .chain(corpus("London1851.pgn"))
        .step_by(6)
        .collect();
    let setup = laws(Laws::Fide2023, None);
    let (mut scripted, mut found, mut alarms, mut exact) = (0usize, 0usize, 0usize, 0usize);
    let (mut stamps, mut other_stamps, mut swapped) = (0usize, 0usize, Vec::new());
    let mut missed: Vec<String> = Vec::new();
    let mut per_kind: HashMap<&'static str, (usize, usize)> = HashMap::new();
    for (i, game) in games.iter().enumerate() {
        let seed = 1000 + i as u64;
        let irregularities = emulator::random_irregularities(seed, game.moves.len(), 0.04);
        let opts = EmulatorOptions {
            seed,
            irregularities,
            ..EmulatorOptions::default()
        };
        let r = play(game, opts, &setup);
        if r.ucis() == r.expected_ucis() && r.games.len() == 1 {
            exact += 1;
            // Each move's clocks against its press (White's clock on the left): swapped stamps
            // (White's time in Black's place) are never allowed; other differences are counted.
            for (mv, press) in r.game().moves.iter().zip(r.script.press_clocks()) {
                let Some(press) = press else {
                    continue;
                };
                stamps += 1;
                let got = (mv.clock_white_ms, mv.clock_black_ms);
                if got == (Some(press.right_ms), Some(press.left_ms))
                    && press.left_ms != press.right_ms
                {
                    swapped.push(format!(
                        "game {i} seed {seed} ply {} ({:?})",
                        mv.ply,
                        r.script
                            .irregularities
                            .iter()
                            .filter(|x| x.before_ply <= mv.ply + 2)
                            .map(|x| (x.before_ply, &x.kind))
                            .collect::<Vec<_>>()
                    ));
                } else if got != (Some(press.left_ms), Some(press.right_ms)) {
                    other_stamps += 1;
                }
            }
        }
        let mut recorded = r.irregularities();
        for info in &r.script.irregularities {
            let (kind, plies): (&str, Vec<u32>) = match &info.kind {
                IrregularityScript::Knock { .. } | IrregularityScript::KnockOver { .. } => {
                    ("displaced", vec![info.before_ply])
                }
                IrregularityScript::IllegalMove { .. }
                | IrregularityScript::IllegalMoveAnswered { .. } => {
                    ("illegal_move", vec![info.before_ply])
                }
                IrregularityScript::PressWithoutMove => {
                    ("clock_without_move", vec![info.before_ply])
                }
                IrregularityScript::Takeback => {
                    ("takeback", vec![info.before_ply, info.before_ply + 1])
                }
                IrregularityScript::WrongStart { .. } => ("wrong_start_position", vec![1]),
            };
            // A knock put back within the settle window (2.5 s; 15 s for a piece knocked over,
            // which the sensors cannot tell from one in the hand) is, by definition, not
            // displaced: not expected, though not a false alarm if reported.
            let expected = match info.kind {
                IrregularityScript::Knock { hold_ms } => hold_ms >= 3_000,
                IrregularityScript::KnockOver { hold_ms } => hold_ms >= 15_500,
                _ => true,
            };
            let hit = recorded.iter().position(|x| {
                x["kind"] == kind
                    && x["ply"]
                        .as_u64()
                        .is_some_and(|p| plies.contains(&(p as u32)))
            });
            if let Some(k) = hit {
                recorded.remove(k);
            }
            if !expected {
                continue;
            }
            scripted += 1;
            let entry = per_kind.entry(kind).or_default();
            entry.0 += 1;
            if hit.is_some() {
                found += 1;
                entry.1 += 1;
            } else {
                missed.push(format!(
                    "game {i} seed {seed}: {kind} before ply {} ({:?})",
                    info.before_ply, info.kind
                ));
            }
        }
        alarms += recorded.len();
    }
    let mut kinds: Vec<_> = per_kind.into_iter().collect();
    kinds.sort();
    eprintln!(
        "{} games, {exact} recorded exactly; {scripted} scripted irregularities, {found} recorded \
         at the right ply ({:.1} %), {alarms} alarms matching nothing scripted; per kind \
         (scripted, found): {kinds:?}",
        games.len(),
        100.0 * found as f64 / scripted.max(1) as f64
    );
    for m in &missed {
        eprintln!("missed: {m}");
    }
    eprintln!(
        "clock stamps: {stamps} moves with a press, {} swapped, {other_stamps} otherwise \
         different",
        swapped.len()
    );
    assert!(swapped.is_empty(), "swapped clock stamps: {swapped:?}");
    assert!(scripted > 100, "enough irregularities scripted: {scripted}");
    assert_eq!(exact, games.len(), "every game's moves stay exact");
    assert!(
        found * 100 >= scripted * 95,
        "at least 95 % found: {found} of {scripted}"
    );
    assert!(
        alarms * 100 <= scripted * 2,
        "false alarms at most 2 %: {alarms}"
    );
}

/// A seeded game from the start in which `pick` chooses each move among the legal ones, until
/// `done` says so; `None` if the game ends (mate, stalemate, a fifth repetition) first.
fn playout(
    seed: u64,
    max_plies: usize,
    mut pick: impl FnMut(&Chess, &[Move], &mut ChaCha8Rng) -> Option<Move>,
    done: impl Fn(&Chess, usize) -> bool,
) -> Option<Vec<Move>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut pos = Chess::default();
    let mut moves = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    while moves.len() < max_plies {
        if done(&pos, moves.len()) {
            return Some(moves);
        }
        let legal: Vec<Move> = pos.legal_moves().into_iter().collect();
        let mv = pick(&pos, &legal, &mut rng)?;
        pos.play_unchecked(mv);
        moves.push(mv);
        let key = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
        let key: String = key.split(' ').take(4).collect::<Vec<_>>().join(" ");
        let n = seen.entry(key).or_default();
        *n += 1;
        if *n >= 3 || pos.is_game_over() && !done(&pos, moves.len()) {
            return None;
        }
    }
    None
}

fn replay_moves(moves: &[Move], seed: u64, setup: &LawsSetup) -> Recorded {
    let opts = EmulatorOptions {
        seed,
        result_gesture: false,
        ..EmulatorOptions::default()
    };
    let script = emulator::script_game(moves, None, &opts).expect("script");
    replay_script(script, setup)
}

#[test]
fn art_5_1_2_a_resignation_where_the_opponent_cannot_mate_is_a_draw_from_2023() {
    // Captures first, until Black has no mating material left and White still has.
    let moves = (0..500)
        .find_map(|seed| {
            playout(
                seed,
                400,
                |pos, legal, rng| {
                    let captures: Vec<Move> = legal
                        .iter()
                        .copied()
                        .filter(|m| m.is_capture() && pos.turn() == shakmaty::Color::White)
                        .collect();
                    captures.choose(rng).or_else(|| legal.choose(rng)).copied()
                },
                |pos, _| {
                    pos.has_insufficient_material(shakmaty::Color::Black)
                        && !pos.has_insufficient_material(shakmaty::Color::White)
                        && !pos.is_game_over()
                },
            )
        })
        .expect("a playout where only White can mate");
    for (edition, want) in [(Laws::Fide2023, "1/2-1/2"), (Laws::Fide2018, "0-1")] {
        let mut r = replay_moves(&moves, 3, &laws(edition, None));
        let game = r.game().id;
        assert_eq!(r.game().moves.len(), moves.len());
        // White resigns: Black, who cannot mate, would win.
        let (decision, why) = r
            .store
            .declare_result(
                game,
                "0-1",
                boardscribe::store::ResultReason::Resignation,
                edition,
                "arbiter",
                None,
                1,
            )
            .expect("result");
        let stored = r.store.game(game).expect("read").expect("game");
        assert_eq!(stored.result, want, "{edition}");
        let termination = if edition == Laws::Fide2023 {
            "resignation_opponent_cannot_mate"
        } else {
            "resignation"
        };
        assert_eq!(stored.termination.as_deref(), Some(termination));
        assert_eq!(why.is_some(), edition == Laws::Fide2023);
        if let Some(why) = why {
            assert!(why.contains("(5.1.2)"), "{why}");
            assert_eq!(decision.note.as_deref(), Some(why.as_str()));
        }
    }
}

#[test]
fn art_5_2_1_stalemate_ends_the_game_as_a_draw() {
    // Random play, preferring moves that leave the opponent few replies, until a stalemate.
    let moves = (0..3000)
        .find_map(|seed| {
            playout(
                seed,
                300,
                |pos, legal, rng| {
                    let replies = |m: &Move| {
                        let mut p = pos.clone();
                        p.play_unchecked(*m);
                        p.legal_moves().len()
                    };
                    let fewest = legal.iter().map(replies).min()?;
                    let best: Vec<Move> = legal
                        .iter()
                        .copied()
                        .filter(|m| replies(m) == fewest)
                        .collect();
                    if rand::Rng::random_bool(rng, 0.5) {
                        best.choose(rng).copied()
                    } else {
                        legal.choose(rng).copied()
                    }
                },
                |pos, _| pos.is_stalemate(),
            )
        })
        .expect("a playout ending in stalemate");
    let r = replay_moves(&moves, 5, &laws(Laws::Fide2023, None));
    assert_eq!(r.ucis(), r.expected_ucis());
    let g = r.game();
    assert_eq!(g.termination.as_deref(), Some("stalemate"));
    assert_eq!(g.result, "1/2-1/2");
}

/// The FEN after each of `ucis`, from the start position (independent of the recorder).
fn fens(ucis: &[String]) -> Vec<String> {
    let mut pos = Chess::default();
    let mut out = vec![Fen::from_position(&pos, EnPassantMode::Legal).to_string()];
    for u in ucis {
        let m = u
            .parse::<shakmaty::uci::UciMove>()
            .expect("uci")
            .to_move(&pos)
            .expect("legal");
        pos.play_unchecked(m);
        out.push(Fen::from_position(&pos, EnPassantMode::Legal).to_string());
    }
    out
}

#[test]
fn art_7_6_and_8_5_3_the_record_holds_what_reinstating_a_position_needs() {
    let game = capablanca(3);
    let r = play(
        &game,
        with(12, IrregularityScript::Knock { hold_ms: 6_000 }, 7),
        &laws(Laws::Fide2023, Some("15+10")),
    );
    assert_eq!(r.ucis(), r.expected_ucis());
    let expected = fens(&r.expected_ucis());
    let json = export::json::json(std::slice::from_ref(r.game()));
    let g = &json["games"][0];
    // 8.5.3: every ply's position and both clocks.
    for (i, m) in g["moves"].as_array().expect("moves").iter().enumerate() {
        assert_eq!(m["fen"], expected[i + 1], "ply {}", i + 1);
        assert!(
            m["clock_white_ms"].is_u64() && m["clock_black_ms"].is_u64(),
            "{m}"
        );
    }
    // 7.6: the displaced irregularity carries the position before it and the clocks then.
    let d = g["irregularities"]
        .as_array()
        .expect("irregularities")
        .iter()
        .find(|i| i["kind"] == "displaced")
        .expect("displaced")
        .clone();
    assert_eq!(d["ply"], 12);
    assert_eq!(d["reinstate"]["position_before"], expected[11]);
    assert_eq!(
        d["reinstate"]["clock_white_ms"],
        g["moves"][10]["clock_white_ms"]
    );
    assert_eq!(
        d["reinstate"]["clock_black_ms"],
        g["moves"][10]["clock_black_ms"]
    );
    assert_eq!(d["resolution"]["how"], "position restored");
}

#[test]
fn art_5_2_2_a_dead_position_ends_the_game_as_a_draw() {
    // Captures first, until neither side has mating material (the fast path of 5.2.2).
    let moves = (0..500)
        .find_map(|seed| {
            playout(
                seed,
                400,
                |_, legal, rng| {
                    let captures: Vec<Move> =
                        legal.iter().copied().filter(|m| m.is_capture()).collect();
                    if captures.is_empty() {
                        legal.choose(rng).copied()
                    } else {
                        captures.choose(rng).copied()
                    }
                },
                |pos, _| pos.is_insufficient_material(),
            )
        })
        .expect("a capture-first game reaching a dead position");
    let r = replay_moves(&moves, 3, &laws(Laws::Fide2023, None));
    assert_eq!(r.ucis(), r.expected_ucis());
    let g = r.game();
    assert_eq!(g.termination.as_deref(), Some("dead_position"));
    assert_eq!(g.result, "1/2-1/2");
}

#[test]
fn art_9_6_2_seventy_five_moves_end_the_game_from_2014_fifty_are_claimable() {
    // 1. e3 e6 2. d3 d6 opens the bishops; then only piece moves, never a capture, and no
    // position a third time, for 150 plies.
    let opening = ["e2e3", "e7e6", "d2d3", "d7d6"];
    let moves = (0..500)
        .find_map(|seed| {
            playout(
                seed,
                200,
                |pos, legal, rng| {
                    let n =
                        pos.fullmoves().get() as usize * 2 - usize::from(pos.turn().is_white()) - 1;
                    if let Some(uci) = opening.get(n) {
                        return legal.iter().copied().find(|m| {
                            m.to_uci(shakmaty::CastlingMode::Standard).to_string() == *uci
                        });
                    }
                    let quiet: Vec<Move> = legal
                        .iter()
                        .copied()
                        .filter(|m| !m.is_capture() && m.role() != Role::Pawn)
                        .collect();
                    quiet.choose(rng).copied()
                },
                |_, plies| plies == opening.len() + 150,
            )
        })
        .expect("a quiet game of 150 plies");
    let r = replay_moves(&moves, 5, &laws(Laws::Fide2023, None));
    let g = r.game();
    assert_eq!(g.termination.as_deref(), Some("seventy_five_moves"));
    assert_eq!(g.result, "1/2-1/2");
    assert_eq!(g.moves.len(), opening.len() + 150);
    let fifty = g
        .events
        .iter()
        .find(|e| e.kind == "claimable" && e.detail["claim"] == "fifty_moves")
        .expect("fifty moves claimable");
    assert_eq!(fifty.ply, Some(opening.len() as u32 + 101));
    assert_eq!(fifty.detail["article"], "9.3");

    let r = replay_moves(&moves, 5, &laws(Laws::Fide2009, None));
    assert_eq!(r.ucis(), r.expected_ucis());
    assert_eq!(r.game().termination, None, "no 75-move rule before 2014");
}

#[test]
fn uscf_11d_a_second_illegal_move_costs_two_minutes_and_does_not_lose() {
    let r = two_illegal_moves_under(&uscf("90+30"));
    assert_eq!(r.ucis(), r.expected_ucis());
    let found = r.of_kind("illegal_move");
    assert_eq!(found.len(), 2, "{:?}", r.irregularities());
    for (i, i_move) in found.iter().enumerate() {
        assert_eq!(i_move["article"], "USCF 11A");
        let ruling = i_move["ruling"].as_str().unwrap_or("");
        assert!(
            ruling.contains("120 s to be added to black's clock"),
            "{i}: {ruling}"
        );
        assert!(
            ruling.contains("(USCF 11D); the director applies it"),
            "{ruling}"
        );
        assert!(!ruling.contains("loses"), "{ruling}");
    }
    // In US Chess blitz the opponent may claim the game at once instead.
    let r = two_illegal_moves_under(&uscf("5"));
    let found = r.of_kind("illegal_move");
    assert_eq!(found.len(), 2, "{:?}", r.irregularities());
    let first = found[0]["ruling"].as_str().unwrap_or("");
    assert!(
        first.contains("black may claim the game before making his next move (USCF ch. 11)"),
        "{first}"
    );
}

#[test]
fn uscf_14k_fivefold_repetition_is_left_to_the_director() {
    let game = corpus("WorldChamp1886.pgn").swap_remove(10);
    let fifth = nth_occurrence(&game, 5).expect("a fivefold repetition");
    let r = play(&game, EmulatorOptions::default(), &uscf("90+30"));
    assert_eq!(
        r.ucis(),
        r.expected_ucis(),
        "the game goes on being recorded"
    );
    let noted = r.citing("USCF 14K");
    assert_eq!(noted.len(), 1, "{noted:?}");
    assert_eq!(noted[0].ply, Some(fifth as u32 + 1));
    let threefold = r
        .game()
        .events
        .iter()
        .find(|e| e.detail["claim"] == "threefold_repetition")
        .expect("threefold claimable");
    assert_eq!(threefold.detail["article"], "USCF 14C");
}

#[test]
fn uscf_13c1_a_flag_fall_is_for_the_player_to_call() {
    let game = capablanca(30);
    let opts = EmulatorOptions {
        seed: 8,
        time_control: Some((60_000, 0)),
        result_gesture: false,
        ..EmulatorOptions::default()
    };
    let r = play(&game, opts, &uscf("1"));
    let g = r.game();
    let flag = g
        .events
        .iter()
        .find(|e| e.kind == "flag_fall")
        .expect("a flag fall");
    assert_eq!(flag.detail["article"], "USCF 13C1");
    let note = flag.detail["note"].as_str().unwrap_or("");
    assert!(
        note.contains("only a player may call a flag; the director rules on the claim (USCF 13C1)"),
        "{note}"
    );
    assert_eq!(g.result, "*");
}
