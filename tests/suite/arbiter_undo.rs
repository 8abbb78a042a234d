//! Undoing an arbiter's decision (issue 34, item 1): every decision can be undone, as a further
//! decision in the audit trail, never an edit. On the real capture `dgt-arnsholt/1.capture`
//! replayed through the daemon's pipeline (and the emulator's irregular game of it): an undone
//! result gives back the one it replaced, an undone correction or resume gives back the moves it
//! withdrew (the record is the capture's again, byte for byte in the exports), an undone ruling
//! leaves its irregularity open, an undone note leaves the sheet; the history keeps both
//! decisions, and the JSON export names the undo. What cannot be undone is refused with a
//! reason: a decision already undone, an undo, and one a later decision changed again.

use boardscribe::store::{Action, DecisionError, ResultReason, Ruling, Store};

use crate::arbiter_decisions::{
    T, expected_uci, irregular_game, json_game, move_rows, movetext_sans, pgn, replayed,
    sans_and_fens,
};

/// The record's moves, as UCI.
fn live_uci(store: &Store, game: boardscribe::store::GameId) -> Vec<String> {
    store
        .game(game)
        .unwrap()
        .unwrap()
        .moves
        .iter()
        .map(|m| m.uci.clone().unwrap())
        .collect()
}

#[test]
fn an_undone_result_gives_back_the_one_it_replaced_and_both_stay_in_the_history() {
    let (_dir, _db, mut store, game) = replayed();
    let before = store.game(game).unwrap().unwrap();
    let (was, was_termination) = (before.result.clone(), before.termination.clone());
    let pgn_before = pgn(&store, game, false);

    let set = store
        .set_result(game, "0-1", ResultReason::Resignation, "Chief", None, T)
        .unwrap();
    let undo = store
        .undo_decision(game, set.id, "Deputy", Some("wrong board"), T + 1_000)
        .unwrap();
    let Action::Undo {
        decision, result, ..
    } = &undo.action
    else {
        panic!("{:?}", undo.action)
    };
    assert_eq!(*decision, set.id);
    assert_eq!(result.as_deref(), Some(was.as_str()));
    let after = store.game(game).unwrap().unwrap();
    assert_eq!(
        (after.result.clone(), after.termination.clone()),
        (was.clone(), was_termination)
    );
    // The record reads as if the result had never been set; the history and the JSON keep
    // both decisions, the undone one naming its undo.
    assert_eq!(pgn(&store, game, false), pgn_before);
    let j = json_game(&store, game, false);
    let decisions = j["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 2, "{decisions:#?}");
    assert_eq!(decisions[0]["action"], "set_result");
    assert_eq!(decisions[0]["undone_by"], undo.id);
    assert_eq!(decisions[1]["action"], "undo");
    assert_eq!(decisions[1]["decision"], set.id);
    assert_eq!(decisions[1]["author"], "Deputy");
    assert_eq!(decisions[1]["note"], "wrong board");
    assert_eq!(j["result"], was.as_str());

    // Neither can be undone again; the result can be set anew.
    assert!(matches!(
        store.undo_decision(game, set.id, "Chief", None, T + 2_000),
        Err(DecisionError::AlreadyUndone { id, by }) if id == set.id && by == undo.id
    ));
    assert!(matches!(
        store.undo_decision(game, undo.id, "Chief", None, T + 2_000),
        Err(DecisionError::UndoOfUndo { .. })
    ));
    assert!(matches!(
        store.undo_decision(game, 999_999, "Chief", None, T + 2_000),
        Err(DecisionError::UnknownDecision { .. })
    ));
    store
        .set_result(
            game,
            "1-0",
            ResultReason::Resignation,
            "Chief",
            None,
            T + 3_000,
        )
        .unwrap();
    assert_eq!(store.game(game).unwrap().unwrap().result, "1-0");
}

#[test]
fn only_the_latest_result_standing_can_be_undone_and_then_the_one_before_it_stands() {
    let (_dir, _db, mut store, game) = replayed();
    let was = store.game(game).unwrap().unwrap().result;
    let first = store
        .set_result(game, "1-0", ResultReason::Resignation, "Chief", None, T)
        .unwrap();
    let second = store
        .set_result(
            game,
            "1/2-1/2",
            ResultReason::Agreement,
            "Chief",
            None,
            T + 1,
        )
        .unwrap();
    assert!(matches!(
        store.undo_decision(game, first.id, "Chief", None, T + 2),
        Err(DecisionError::LaterDecision { id, later }) if id == first.id && later == second.id
    ));
    store
        .undo_decision(game, second.id, "Chief", None, T + 3)
        .unwrap();
    let g = store.game(game).unwrap().unwrap();
    assert_eq!(
        (g.result.as_str(), g.termination.as_deref()),
        ("1-0", Some("resignation"))
    );
    store
        .undo_decision(game, first.id, "Chief", None, T + 4)
        .unwrap();
    assert_eq!(store.game(game).unwrap().unwrap().result, was);
    // The delayed view follows the times: at T+1 the draw stood, at T+3 the win, at T+4 the
    // capture's own result.
    let at = |ms| store.game_as_of(game, ms).unwrap().unwrap().result;
    assert_eq!(at(T + 1), "1/2-1/2");
    assert_eq!(at(T + 3), "1-0");
    assert_eq!(at(T + 4), was);
}

#[test]
fn an_undone_correction_gives_back_the_moves_it_withdrew() {
    let (_dir, db, mut store, game) = replayed();
    let ucis = expected_uci();
    let pgn_before = pgn(&store, game, false);
    let json_moves_before = json_game(&store, game, false)["moves"].clone();
    // 1.capture's ply 10; another legal move there that keeps the later moves legal is found
    // by trying every legal move at that ply.
    let ply = find_harmless_correction(&mut store, game, &ucis);
    let corrected = live_uci(&store, game);
    assert_ne!(corrected, ucis);
    let correction = store.decisions(game).unwrap().pop().unwrap();
    let (rows, retracted) = move_rows(&db, game);

    let undo = store
        .undo_decision(game, correction.id, "Chief", None, T + 10_000)
        .unwrap();
    let Action::Undo {
        ply: Some(from),
        retracted: withdrawn,
        restored,
        ..
    } = undo.action
    else {
        panic!("{:?}", undo.action)
    };
    assert_eq!(from, ply);
    assert_eq!(withdrawn as usize, ucis.len() + 1 - ply as usize);
    assert_eq!(restored, withdrawn);
    // The capture's moves again, exactly, with their times and clocks; nothing deleted.
    assert_eq!(live_uci(&store, game), ucis);
    assert_eq!(json_game(&store, game, false)["moves"], json_moves_before);
    assert_eq!(pgn(&store, game, false), pgn_before);
    assert_eq!(
        move_rows(&db, game),
        (rows + i64::from(restored), retracted + i64::from(withdrawn))
    );
    // The delayed view before the undo still shows the corrected record.
    let then = store.game_as_of(game, T + 9_999).unwrap().unwrap();
    let then: Vec<String> = then.moves.iter().map(|m| m.uci.clone().unwrap()).collect();
    assert_eq!(then, corrected);
}

/// Corrects one ply of 1.capture's game (from ply 10 on) to another legal move that keeps every
/// later move legal; returns the ply.
fn find_harmless_correction(
    store: &mut Store,
    game: boardscribe::store::GameId,
    ucis: &[String],
) -> u32 {
    use shakmaty::{CastlingMode, Chess, Position, uci::UciMove};
    let mut pos = Chess::default();
    for (i, u) in ucis.iter().enumerate() {
        let played = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        if i >= 9 {
            for m in pos.legal_moves() {
                if m == played {
                    continue;
                }
                let text = m.to_uci(CastlingMode::Standard).to_string();
                let ply = i as u32 + 1;
                if store
                    .correct_move(game, ply, &text, "Chief", None, T)
                    .is_ok()
                {
                    return ply;
                }
            }
        }
        pos.play_unchecked(played);
    }
    panic!("no correction keeps 1.capture's later moves legal");
}

#[test]
fn of_two_corrections_the_later_is_undone_first_and_an_undone_resume_gives_the_game_back() {
    let (_dir, _db, mut store, game) = replayed();
    let ucis = expected_uci();
    let want = sans_and_fens(&ucis);
    let first = {
        find_harmless_correction(&mut store, game, &ucis);
        store.decisions(game).unwrap().pop().unwrap()
    };
    let after_first = live_uci(&store, game);
    // A resume after ply 50 with the record's own moves from there, then two withdrawn.
    let written: Vec<String> = after_first[50..after_first.len() - 2].to_vec();
    let resume = store
        .resume_game(game, 50, &written, "Chief", None, T + 1)
        .unwrap();
    assert!(matches!(
        store.undo_decision(game, first.id, "Chief", None, T + 2),
        Err(DecisionError::LaterDecision { later, .. }) if later == resume.id
    ));
    assert_eq!(live_uci(&store, game).len(), after_first.len() - 2);
    store
        .undo_decision(game, resume.id, "Chief", None, T + 3)
        .unwrap();
    assert_eq!(live_uci(&store, game), after_first);
    store
        .undo_decision(game, first.id, "Chief", None, T + 4)
        .unwrap();
    assert_eq!(live_uci(&store, game), ucis);
    let sans = movetext_sans(&pgn(&store, game, false));
    let want_sans: Vec<String> = want.iter().map(|(s, _)| s.clone()).collect();
    assert_eq!(sans, want_sans);
}

#[test]
fn an_undone_ruling_leaves_its_irregularity_open_and_an_undone_note_leaves_the_sheet() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let game = irregular_game(&mut store);
    let irregularity = |store: &Store| {
        let j = json_game(store, game, false);
        j["irregularities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["kind"] == "illegal_move")
            .cloned()
            .unwrap()
    };
    let open = irregularity(&store);
    let id = open["id"].as_u64().unwrap() as u32;
    let ruled = store
        .rule_on_irregularity(
            game,
            id,
            Ruling::PenaltyApplied {
                description: "two minutes added".into(),
            },
            "Chief",
            None,
            T,
        )
        .unwrap();
    assert!(irregularity(&store).get("ruling_by_arbiter").is_some());
    let note = store
        .add_note(game, None, "phone rang in the hall", "Chief", T + 1)
        .unwrap();
    assert!(pgn(&store, game, false).contains("phone rang in the hall"));

    store
        .undo_decision(game, ruled.id, "Deputy", None, T + 2)
        .unwrap();
    store
        .undo_decision(game, note.id, "Deputy", None, T + 3)
        .unwrap();
    assert_eq!(
        irregularity(&store),
        open,
        "the irregularity as the board left it"
    );
    let record = pgn(&store, game, false);
    assert!(!record.contains("phone rang in the hall"), "{record}");
    assert!(!record.contains("two minutes added"), "{record}");
    // The history says all four, in words.
    let words = boardscribe::words::history::in_words(
        &store.game(game).unwrap().unwrap(),
        &store.history(game).unwrap(),
        &jiff::tz::TimeZone::UTC,
        boardscribe::lang::Lang::En,
    );
    let undone = |id: i64| format!("decision {id} undone");
    assert!(
        words.iter().any(|l| l.contains(&undone(ruled.id))),
        "{words:#?}"
    );
    assert!(
        words.iter().any(|l| l.contains(&undone(note.id))),
        "{words:#?}"
    );
    assert!(
        words.iter().any(|l| l.contains("two minutes added")),
        "{words:#?}"
    );
}

/// A result set on the wrong board in the middle of its game (issue 34, item 1), then undone
/// from the console: the daemon had closed the game on the arbiter's result, and the undo opens
/// it again; the board, still playing, is recorded on from its record as after a restart (the
/// moves made meanwhile read back), so that the record ends as the game the board played,
/// whole. The console's page lists the decisions that stand, each with its undo form; after the
/// undo the history names both decisions, and the live data shows the game going on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_set_on_the_wrong_board_is_undone_from_the_console_and_the_board_records_on() {
    use std::time::Duration;

    use boardscribe::relay::Token;

    use crate::{
        console_actions::{Console, TOKEN, until},
        relay_common::{Bench, corpus_game},
    };

    let mut bench = Bench::new(Token::new(TOKEN)).await;
    let url = bench.url.clone();
    let played = corpus_game("tatamast22", 12);
    let plies = played.moves.len();
    bench.start(&[(played.clone(), 5, 0.0)], 0.1).await;
    let console = Console::login(&url, "Chief").await;
    let board = bench.boards[0].clone();
    let db = bench.db.clone();
    let game_on = || {
        Store::open_read_only(&db)
            .ok()?
            .games()
            .ok()?
            .into_iter()
            .rfind(|g| g.board_name == board)
    };
    let game = until(60, "six plies recorded", async || {
        game_on().filter(|g| g.moves.len() >= 6)
    })
    .await;
    assert!(game.moves.len() < plies - 10, "the game is still in play");
    let id = game.id.0.to_string();
    let back = console
        .post(
            "arbiter/boards/1/result",
            &[("game", &id), ("result", "1-0"), ("reason", "resignation")],
        )
        .await;
    assert!(back.starts_with("/arbiter/boards/1?msg="), "{back}");
    let closed = game_on().unwrap();
    assert!(
        closed.ended_at_ms.is_some(),
        "the arbiter's result closes the game"
    );
    let set = closed.decisions().next().unwrap().0.clone();

    // The console lists it as standing, with a form that undoes it.
    let page = console.get("arbiter/boards/1").await;
    let form = format!(
        r#"<input type="hidden" name="decision" value="{}">"#,
        set.id
    );
    assert!(page.contains(&form), "{page}");
    let decision = set.id.to_string();
    let back = console
        .post(
            "arbiter/boards/1/undo",
            &[
                ("game", &id),
                ("decision", &decision),
                ("note", "wrong board"),
            ],
        )
        .await;
    assert!(back.contains("msg="), "{back}");
    let reopened = game_on().unwrap();
    assert_eq!(reopened.id, game.id, "the same game, not a new one");
    assert_eq!(reopened.ended_at_ms, None, "the game is open again");
    assert_eq!(reopened.result, "*");
    let page = console.get("arbiter/boards/1").await;
    assert!(
        !page.contains(&form),
        "an undone decision is not offered again"
    );
    assert!(
        page.contains(&format!("decision {} undone", set.id)),
        "{page}"
    );

    // The board plays its game out; the record is the game, every move of it.
    bench.wait_done(Duration::from_secs(240)).await;
    let recorded = until(30, "the whole game recorded", async || {
        game_on().filter(|g| g.moves.len() >= plies)
    })
    .await;
    assert_eq!(recorded.id, game.id);
    let mut pos = shakmaty::Chess::default();
    let want: Vec<String> = played
        .moves
        .iter()
        .map(|m| {
            let uci = m.to_uci(shakmaty::CastlingMode::Standard).to_string();
            shakmaty::Position::play_unchecked(&mut pos, *m);
            uci
        })
        .collect();
    let got: Vec<String> = recorded
        .moves
        .iter()
        .map(|m| m.uci.clone().unwrap())
        .collect();
    assert_eq!(got, want);
    let (set_result, undo): (Vec<_>, Vec<_>) = recorded
        .all_decisions()
        .map(|(d, _)| d.action.clone())
        .partition(|a| matches!(a, Action::SetResult { .. }));
    assert_eq!(
        (set_result.len(), undo.len()),
        (1, 1),
        "both decisions kept"
    );
    let live: serde_json::Value = reqwest::get(format!("{url}api/boards"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let b = &live["boards"][0];
    assert_eq!(b["ply"], plies, "{b}");
    assert_ne!(b["result"], "1-0", "{b}");
    bench.stop().await;
}

/// A round started by mistake from the console (issue 34, item 1) is undone there: the console
/// offers to undo the latest round start while no game has begun in it, the round before is
/// current again (the console, the round list of the command line), and a second undo is
/// refused with the reason, through the API too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_started_by_mistake_is_undone_from_the_console() {
    use std::time::Duration;

    use boardscribe::relay::Token;
    use reqwest::StatusCode;

    use crate::{
        console_actions::{Console, TOKEN, until},
        relay_common::{Bench, corpus_game},
    };

    let mut bench = Bench::with_round(Token::new(TOKEN), Some(1)).await;
    let url = bench.url.clone();
    bench
        .start(&[(corpus_game("tatamast22", 4), 3, 0.0)], 0.05)
        .await;
    let console = Console::login(&url, "Chief").await;
    let db = bench.db.clone();
    until(60, "the board's game of round 1", async || {
        let games = Store::open_read_only(&db).ok()?.games().ok()?;
        games.into_iter().find(|g| g.round == Some(1))
    })
    .await;
    let undo_form = r#"<form class="round-undo" method="post" action="/arbiter/rounds/undo"><input type="hidden" name="round" value="3">"#;
    assert!(!console.get("arbiter").await.contains("round-undo"));
    // Round 3 instead of 2, confirmed past the warning.
    let back = console
        .post("arbiter/rounds/start", &[("round", "3"), ("confirm", "1")])
        .await;
    assert!(back.contains("msg="), "{back}");
    let page = console.get("arbiter").await;
    assert!(page.contains(undo_form), "{page}");
    let back = console.post("arbiter/rounds/undo", &[("round", "3")]).await;
    assert!(back.contains("msg=") && back.contains("round 1"), "{back}");
    let page = console.get("arbiter").await;
    assert!(!page.contains("round-undo"), "{page}");
    let rounds = std::process::Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(["round", "list", "--json", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    let rounds: serde_json::Value = serde_json::from_slice(&rounds.stdout).unwrap();
    let listed: Vec<(u64, bool)> = rounds["rounds"]
        .as_array()
        .unwrap_or_else(|| panic!("{rounds}"))
        .iter()
        .map(|r| (r["number"].as_u64().unwrap(), r["current"] == true))
        .collect();
    assert_eq!(listed, [(1, true)], "{rounds}");
    // Nothing left to undo: refused, with the reason.
    let back = console.post("arbiter/rounds/undo", &[("round", "3")]).await;
    assert!(back.contains("err=") && back.contains("round 3"), "{back}");
    let refused = reqwest::Client::new()
        .post(format!("{url}api/admin/rounds/3/undo"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    bench.wait_done(Duration::from_secs(120)).await;
    bench.stop().await;
}

/// A round's pairings imported from the wrong file (issue 34, item 1) are undone from the
/// console: the round's pairings before that import are back, the decisions log says both, and
/// an undo is not undone (the right file is imported again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_pairings_file_is_undone_from_the_console() {
    use boardscribe::{
        relay::Token,
        store::{EventSettings, RoundInfo},
    };

    use crate::{
        console_actions::{Console, TOKEN},
        relay_common::Bench,
    };

    let bench = Bench::new(Token::new(TOKEN)).await;
    {
        let mut store = Store::open(&bench.db).unwrap();
        let info = RoundInfo {
            event: "Club open".into(),
            site: "Here".into(),
            round: 1,
        };
        store
            .open_event(Some(&info), &EventSettings::default(), 1)
            .unwrap();
    }
    let console = Console::login(&bench.url, "Chief").await;
    let right = "board,white,black\n1,Ann,Bob\n2,Cid,Dee\n";
    let wrong = "board,white,black\n1,Ann,Cid\n2,Bob,Dee\n3,Eve,Fay\n";
    console
        .upload_pairings(2, "round2.csv", right.as_bytes())
        .await;
    console
        .upload_pairings(2, "round3.csv", wrong.as_bytes())
        .await;
    let names = || {
        let store = Store::open_read_only(&bench.db).unwrap();
        store
            .pairings(2)
            .unwrap()
            .into_iter()
            .map(|p| (p.board, p.white, p.black))
            .collect::<Vec<_>>()
    };
    assert_eq!(names().len(), 3);
    let page = console.get("arbiter").await;
    let form = r#"<form class="pairings-undo" method="post" action="/arbiter/pairings/undo"><input type="hidden" name="round" value="2">"#;
    assert!(page.contains(form), "{page}");
    let back = console
        .post("arbiter/pairings/undo", &[("round", "2")])
        .await;
    assert!(back.contains("msg="), "{back}");
    assert_eq!(
        names(),
        [
            (1, "Ann".to_owned(), "Bob".to_owned()),
            (2, "Cid".to_owned(), "Dee".to_owned())
        ]
    );
    // Not again: the undo stands until a file is imported anew.
    let page = console.get("arbiter").await;
    assert!(!page.contains("pairings-undo"), "{page}");
    let back = console
        .post("arbiter/pairings/undo", &[("round", "2")])
        .await;
    assert!(back.contains("err="), "{back}");
    let log = console.get("arbiter/decisions?round=2").await;
    assert_eq!(log.matches("pairings imported").count(), 2, "{log}");
    assert_eq!(
        log.matches("import of the pairings undone").count(),
        1,
        "{log}"
    );
    bench.stop().await;
}
