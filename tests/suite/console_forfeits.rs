//! A forfeit for a board whose game was never played (issue 34, item 2), through the console
//! over real HTTP with emulated boards recorded by the daemon: once round 2 starts, a board
//! paired in it with no game offers a form that records its game as not played (`+/-`, `-/+`,
//! `-/-`). The game is stored with the pairing's players and no moves, counts in the exported
//! TRF as a forfeit (`+` and `-`), shows on the live data at the start position under its
//! result, is refused a second time, and can be undone like any decision.

use std::time::Duration;

use boardscribe::{relay::Token, store::Store, tracker::Side};
use serde_json::Value;

use crate::{
    console_actions::{Console, TOKEN, until},
    relay_common::{Bench, corpus_game},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_without_a_game_is_forfeited_from_the_console_and_counts_in_the_trf() {
    let mut bench = Bench::with_round(Token::new(TOKEN), Some(1)).await;
    let url = bench.url.clone();
    bench
        .start(
            &[
                (corpus_game("tatamast22", 4), 3, 0.0),
                (corpus_game("tatamast22", 5), 4, 0.0),
            ],
            0.05,
        )
        .await;
    bench.wait_done(Duration::from_secs(180)).await;
    let console = Console::login(&url, "Chief").await;
    // Round 1's results, confirmed as the arbiter does once the players sign.
    let db = bench.db.clone();
    for board in ["1", "2"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_boardscribe"))
            .args(["arbiter", "--db", db.to_str().unwrap(), "result"])
            .args([
                "--board",
                board,
                "--result",
                "1/2-1/2",
                "--reason",
                "agreement",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let csv =
        "board,white,black\n1,\"Abenov, Arman\",\"Li, Wei\"\n2,\"Kim, Ana\",\"Ortiz, Luis\"\n";
    let back = console
        .upload_pairings(2, "round2.csv", csv.as_bytes())
        .await;
    assert!(back.contains("msg="), "{back}");
    let back = console
        .post("arbiter/rounds/start", &[("round", "2"), ("confirm", "1")])
        .await;
    assert!(back.contains("msg="), "{back}");

    // Board 2 waits for its round-2 game, which never comes: the page offers the forfeit.
    let page = until(10, "board 2 waiting in round 2", async || {
        let page = console.get("arbiter/boards/2").await;
        page.contains(r#"<form class="forfeit""#).then_some(page)
    })
    .await;
    assert!(
        page.contains(r#"<input type="hidden" name="round" value="2">"#),
        "{page}"
    );
    let back = console
        .post(
            "arbiter/boards/2/forfeit",
            &[
                ("round", "2"),
                ("board", "2"),
                ("result", "+/-"),
                ("note", "no show"),
            ],
        )
        .await;
    assert!(back.contains("msg="), "{back}");
    let store = Store::open_read_only(&db).unwrap();
    let game = store
        .round_games(2)
        .unwrap()
        .into_iter()
        .find(|g| g.board_no == Some(2))
        .expect("board 2's game of round 2");
    let name = |side| game.player(side).map(|p| p.name);
    assert_eq!(
        (name(Side::White), name(Side::Black), game.result.as_str()),
        (Some("Kim, Ana".into()), Some("Ortiz, Luis".into()), "+/-")
    );
    assert_eq!(game.termination.as_deref(), Some("forfeit"));
    assert!(game.moves.is_empty() && game.ended_at_ms.is_some());
    // Not twice; the page now shows the game, its result and the decision to undo.
    let back = console
        .post(
            "arbiter/boards/2/forfeit",
            &[("round", "2"), ("board", "2"), ("result", "-/+")],
        )
        .await;
    assert!(back.contains("err=") && back.contains("board 2"), "{back}");
    let page = console.get("arbiter/boards/2").await;
    assert!(!page.contains(r#"<form class="forfeit""#), "{page}");
    assert!(
        page.contains(r#"<span class="result san">+/-</span>"#),
        "{page}"
    );
    let live: Value = reqwest::get(format!("{url}api/boards"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let b = live["boards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["number"] == 2)
        .unwrap();
    assert_eq!(
        (b["ply"].as_u64(), b["result"].as_str()),
        (Some(0), Some("+/-")),
        "{b}"
    );
    assert_eq!(b["white"], "Kim, Ana", "{b}");

    // The pairing program reads it as a forfeit: + for White, - for Black, in round 2.
    let trf = std::process::Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(["export", "--format", "trf", "--db", db.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        trf.status.success(),
        "{}",
        String::from_utf8_lossy(&trf.stderr)
    );
    let trf = String::from_utf8(trf.stdout).unwrap();
    let line = |name: &str| {
        trf.lines()
            .find(|l| l.starts_with("001") && l.contains(name))
            .unwrap_or_else(|| panic!("{name} in {trf}"))
            .to_owned()
    };
    // Round 2's cell: columns 102-111 (1-based; after round 1's 92-101): the opponent's
    // starting rank, the colour, the result.
    let cell = |l: &str| {
        l.get(101..l.len().min(111))
            .unwrap_or("")
            .trim_end()
            .to_owned()
    };
    assert_eq!(cell(&line("Kim, Ana")), "0004 w +", "{trf}");
    assert_eq!(cell(&line("Ortiz, Luis")), "0002 b -", "{trf}");

    // Undone like any decision: no result stands on the unplayed game.
    let set = game.decisions().next().unwrap().0.id.to_string();
    let id = game.id.0.to_string();
    let back = console
        .post(
            "arbiter/boards/2/undo",
            &[("game", &id), ("decision", &set)],
        )
        .await;
    assert!(back.contains("msg="), "{back}");
    let again = Store::open_read_only(&db)
        .unwrap()
        .game(game.id)
        .unwrap()
        .unwrap();
    assert_eq!(again.result, "*");
    bench.stop().await;
}

/// A bye given in the console (issue 34, item 2): a player who asked for a half-point bye in a
/// round whose pairings (a CSV) carry none. The console's standings page offers the form; the
/// bye counts in the standings (public and the arbiter's) and comes back in the TRF; a player
/// with a board in that round, or a name no pairing gives, is refused with the reason; the bye
/// can be withdrawn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bye_given_in_the_console_counts_in_the_standings_and_can_be_withdrawn() {
    use boardscribe::{
        pairings::Pairing,
        store::{EventSettings, RoundInfo},
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
        store
            .import_pairings(1, &[Pairing::new(1, "Ann", "Bob")])
            .unwrap();
        store
            .import_pairings(2, &[Pairing::new(1, "Bob", "Cid")])
            .unwrap();
    }
    let console = Console::login(&bench.url, "Chief").await;
    let page = console.get("arbiter/standings").await;
    assert!(page.contains(r#"<form class="bye""#), "{page}");
    assert!(page.contains(r#"<option value="Cid">"#), "{page}");
    let points = async |name: &str| {
        let json: Value = reqwest::get(format!("{}standings.json", bench.url))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["entrant"]["name"] == name)
            .map(|r| r["points"].as_f64().unwrap())
    };
    assert_eq!(points("Cid").await, Some(0.0));
    let back = console
        .post(
            "arbiter/byes",
            &[("round", "1"), ("name", "Cid"), ("code", "H")],
        )
        .await;
    assert!(back.contains("msg=Cid"), "{back}");
    assert_eq!(points("Cid").await, Some(0.5));
    let page = console.get("arbiter/standings").await;
    assert!(
        page.contains(r#"<input type="hidden" name="name" value="Cid">"#),
        "{page}"
    );
    let trf = console.get("arbiter/standings.trf").await;
    let cid = trf
        .lines()
        .find(|l| l.starts_with("001") && l.contains("Cid"))
        .unwrap_or_else(|| panic!("{trf}"));
    assert_eq!(cid.get(91..99), Some("0000 - H"), "{trf}");
    // Refused, with the reason: a player with a board that round, a name no pairing gives.
    let back = console
        .post(
            "arbiter/byes",
            &[("round", "1"), ("name", "Ann"), ("code", "H")],
        )
        .await;
    assert!(back.contains("err=") && back.contains("board 1"), "{back}");
    let back = console
        .post(
            "arbiter/byes",
            &[("round", "1"), ("name", "Dan"), ("code", "F")],
        )
        .await;
    assert!(back.contains("err=") && back.contains("Dan"), "{back}");
    // Withdrawn: no bye, no half point.
    let back = console
        .post("arbiter/byes/withdraw", &[("round", "1"), ("name", "Cid")])
        .await;
    assert!(back.contains("msg=Cid"), "{back}");
    assert_eq!(points("Cid").await, Some(0.0));
    assert!(
        Store::open_read_only(&bench.db)
            .unwrap()
            .byes(1)
            .unwrap()
            .is_empty()
    );
    bench.stop().await;
}
