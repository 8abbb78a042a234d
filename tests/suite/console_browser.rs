//! The arbiter's console in a real browser (issue 16, "what must be shown"): Debian's chromium,
//! headless, driven through chromedriver (WebDriver, `fantoccini`; the plumbing is in
//! `browser`), against the relay and emulated boards recorded by the daemon (`relay_common`).
//! The arbiter logs in through the form; a board knocks a piece and the alert appears in the
//! queue without a reload (the console's script refreshes `#live`) with the alert signal; the
//! arbiter rules it through its form and it leaves the queue; sets a result on the board's
//! page; corrects a move by its number and side; uploads round 2's pairings and starts round 2.
//! After each step the database (read-only), `/round.pgn` and the public page (`/` and
//! `/api/boards` without a token) say so, and the public side never shows the irregularity or
//! the arbiter's notes. The same login, alert and ruling at a phone's size, where the hall and
//! the queue fit without scrolling sideways. Screenshots: target/test-artifacts/console/.

use crate::{browser, relay_common};

use std::time::Instant;

use boardscribe::{
    emulator::{
        self, EmulatorOptions, IrregularityScript, PgnGame, PtyOptions, PtyScript,
        ScriptedIrregularity,
    },
    lang::Lang,
    pairings::Pairing,
    relay::Token,
    relay::page::board_name_in,
    store::{Action, GameId, GameRecord, Ruling, Store},
};
use browser::{Browser, Viewport, until};
use fantoccini::Locator;
use relay_common::{Bench, corpus_game};
use serde_json::Value;
use shakmaty::{Chess, Position, san::San, uci::UciMove};

const TOKEN: &str = "console-browser-token";
const ARBITER: &str = "Chief Arbiter";
/// The knock's ply (before it) and how long the piece stays off (real time): long enough for
/// the arbiter to rule while it is open.
const KNOCK_BEFORE_PLY: u32 = 9;
const KNOCK_HOLD_MS: u64 = 20_000;

fn script(game: &PgnGame, seed: u64, irregularities: Vec<ScriptedIrregularity>) -> PtyScript {
    let opts = EmulatorOptions {
        speed: 0.05,
        seed,
        time_control: Some((15 * 60_000, 10_000)),
        irregularities,
        ..EmulatorOptions::default()
    };
    PtyScript::from(emulator::script_pgn(game, &opts).unwrap())
}

/// A board that knocks a piece before [`KNOCK_BEFORE_PLY`] and holds it off
/// [`KNOCK_HOLD_MS`].
fn knocking(game: &PgnGame, seed: u64) -> (PtyScript, PtyOptions) {
    let knock = ScriptedIrregularity {
        before_ply: KNOCK_BEFORE_PLY,
        kind: IrregularityScript::Knock {
            hold_ms: KNOCK_HOLD_MS,
        },
    };
    (script(game, seed, vec![knock]), PtyOptions::default())
}

/// What spectators get: the public page, `/api/boards` and `/round.pgn`, without a token.
struct Public {
    page: String,
    boards: Value,
    round_pgn: String,
}

impl Public {
    async fn read(url: &str) -> Public {
        let get = async |path: &str| {
            let resp = reqwest::get(format!("{url}{path}")).await.unwrap();
            assert_eq!(resp.status(), reqwest::StatusCode::OK, "{path}");
            resp.text().await.unwrap()
        };
        let boards = get("api/boards").await;
        Public {
            page: get("").await,
            boards: serde_json::from_str(&boards).unwrap(),
            round_pgn: get("round.pgn").await,
        }
    }

    /// Board `n`'s entry in `/api/boards`.
    fn board(&self, n: u32) -> &Value {
        self.boards["boards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["number"] == n)
            .unwrap_or_else(|| panic!("no board {n} in {}", self.boards))
    }

    /// Nothing of the arbiter's reaches the spectators' page and boards: no irregularity,
    /// alert, ruling or note.
    fn assert_clean(&self, secrets: &[String]) {
        for b in self.boards["boards"].as_array().unwrap() {
            let none = |key: &str| {
                b.get(key)
                    .is_none_or(|v| v.as_array().is_none_or(Vec::is_empty))
            };
            assert!(none("irregularities"), "public irregularities: {b}");
            assert!(none("alerts"), "public alerts: {b}");
        }
        // The round PGN still carries them as comments: keeping them off it is issue 17's
        // (`[relay] public_comments`), not the console's.
        let boards = self.boards.to_string();
        for s in secrets {
            for (what, text) in [("/", &self.page), ("/api/boards", &boards)] {
                assert!(
                    !text.contains(s.as_str()),
                    "{s:?} on the public {what}: {text}"
                );
            }
        }
    }
}

/// The latest game on board index `board`, once the daemon has made the database.
fn game_on(bench: &Bench, board: usize) -> Option<GameRecord> {
    let games = Store::open_read_only(&bench.db).ok()?.games().ok()?;
    games
        .into_iter()
        .rfind(|g| g.board_name == bench.boards[board])
}

/// A correction the record takes: at ply 6 ("move 3, black") if it can be, else the next ply
/// that can, another legal move after which every later recorded move is still legal and the
/// game does not end. Its ply and its SAN.
fn a_correction(game: &GameRecord) -> (u32, String) {
    let ucis: Vec<UciMove> = game
        .moves
        .iter()
        .map(|m| m.uci.as_deref().unwrap().parse().unwrap())
        .collect();
    let n = ucis.len();
    let order = (5..n).chain(0..5.min(n));
    for i in order {
        let mut before = Chess::default();
        for u in &ucis[..i] {
            let m = u.to_move(&before).unwrap();
            before.play_unchecked(m);
        }
        let played = ucis[i].to_move(&before).unwrap();
        for alt in before.legal_moves() {
            if alt == played {
                continue;
            }
            let mut after = before.clone();
            after.play_unchecked(alt);
            let later_legal = ucis[i + 1..].iter().all(|u| match u.to_move(&after) {
                Ok(m) => {
                    after.play_unchecked(m);
                    true
                }
                Err(_) => false,
            });
            if later_legal && !after.is_game_over() {
                return (i as u32 + 1, San::from_move(&before, alt).to_string());
            }
        }
    }
    panic!("no move of game {} can be corrected", game.id.0)
}

/// The game in a PGN text whose tags include `tag`, with its movetext.
fn pgn_game<'a>(pgn: &'a str, tag: &str) -> Option<&'a str> {
    pgn.split("\n\n[").find(|g| g.contains(tag))
}

/// The SAN moves of one PGN game's movetext (comments, move numbers and the result left out).
fn movetext_sans(game: &str) -> Vec<String> {
    let movetext = game.split_once("\n\n").map_or("", |(_, m)| m);
    let mut plain = String::new();
    let mut depth = 0;
    for c in movetext.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            c if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && !["1-0", "0-1", "1/2-1/2", "*"].contains(t))
        .map(str::to_owned)
        .collect()
}

/// Logs in through the form; the console comes back with a session cookie that scripts
/// cannot read.
/// Submits with `css` and waits for `page` with the server's banner: the banner's text (the
/// redirect names the message by an id, never by its text).
async fn flash_after(browser: &Browser, css: &str, page: &str) -> String {
    browser.submit(css, &format!("{page}?flash=")).await;
    browser.text("p.flash").await
}

async fn log_in(browser: &mut Browser, url: &str) {
    browser.goto(&format!("{url}arbiter")).await;
    browser.wait_for("form.login", 20).await;
    browser.screenshot("login").await;
    browser.type_into("input[name=token]", TOKEN).await;
    browser.type_into("input[name=name]", ARBITER).await;
    let path = browser
        .submit("form.login button[type=submit]", "/arbiter")
        .await;
    assert_eq!(path, "/arbiter");
    browser.wait_for("#live table.hall", 20).await;
    let cookies = browser.client.get_all_cookies().await.unwrap();
    let session = cookies
        .iter()
        .find(|c| c.name() == "boardscribe_session")
        .expect("the session cookie");
    assert_eq!(session.http_only(), Some(true));
    assert_eq!(
        browser.eval("return document.cookie").await,
        "",
        "the session cookie is HttpOnly"
    );
}

/// Logs in to an empty hall (the database made first, as an earlier run of the daemon would
/// have), marks the page, then starts `boards`: the hall fills without a reload, and all that
/// follows arrives on the page as loaded.
async fn log_in_then_start(
    bench: &mut Bench,
    browser: &mut Browser,
    boards: Vec<(PtyScript, PtyOptions)>,
) {
    drop(Store::open(&bench.db).unwrap());
    let url = bench.url.clone();
    log_in(browser, &url).await;
    let rows = "return document.querySelectorAll('#live table.hall tbody tr').length";
    assert_eq!(browser.eval(rows).await, 0);
    assert_eq!(browser.text("section.alerts h2").await, "Alerts (0)");
    browser.eval("window.loadedOnce = 'yes'; return null").await;
    bench.start_scripts(boards).await;
    until(30, "both boards' games in the database", async || {
        let ok = game_on(bench, 0).is_some() && game_on(bench, 1).is_some();
        ok.then_some(())
    })
    .await;
    until(20, "both boards in the hall", async || {
        (browser.eval(rows).await == 2).then_some(())
    })
    .await;
    assert_eq!(
        browser.eval("return window.loadedOnce || null").await,
        "yes",
        "the page was reloaded"
    );
}

/// Waits for board 1's knock in the console's queue, without a reload (the mark
/// [`log_in_then_start`] set is still there), and for the alert signal; the alert's id,
/// detail and article.
async fn the_alert_arrives(browser: &mut Browser) -> (String, String, String) {
    let started = Instant::now();
    let alert = browser.wait_for("#live li.alert[data-alert]", 60).await;
    let waited = started.elapsed();
    let id = alert.attr("data-alert").await.unwrap().unwrap();
    assert_eq!(
        browser.eval("return window.loadedOnce || null").await,
        "yes",
        "the page was reloaded"
    );
    assert!(id.starts_with("game-"), "{id}");
    let li = alert.text().await.unwrap();
    assert!(li.starts_with("Board 1"), "{li}");
    // The signal: the header turns red, the banner names the board, the title is marked.
    let signal = browser.wait_for("#alert-signal:not([hidden])", 10).await;
    assert!(signal.is_displayed().await.unwrap());
    assert!(signal.text().await.unwrap().contains("Board 1"));
    assert_eq!(
        browser
            .eval("return document.body.classList.contains('alerting')")
            .await,
        true
    );
    assert!(browser.client.title().await.unwrap().starts_with("(!) "));
    let article = browser.text("#live li.alert .article").await;
    assert!(!article.is_empty(), "{li}");
    let alert_json = admin_alert(browser, &id).await;
    let detail = alert_json["detail"].as_str().unwrap().to_owned();
    assert_eq!(alert_json["state"], "open");
    assert!(li.contains(&detail), "{li} / {detail}");
    eprintln!("console_browser: the alert showed {waited:?} after the boards were all in the hall");
    browser.screenshot("alert").await;
    (id, detail, article)
}

/// The alert `id` as the admin API gives it, read with the browser's own session (a fetch
/// from the page, so the HttpOnly cookie goes along).
async fn admin_alert(browser: &Browser, id: &str) -> Value {
    let all = browser
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             fetch('/api/admin/alerts', {credentials: 'same-origin'})\
               .then(r => r.json()).then(done, e => done(String(e)));",
            Vec::new(),
        )
        .await
        .unwrap();
    all["alerts"]
        .as_array()
        .unwrap_or_else(|| panic!("{all}"))
        .iter()
        .find(|a| a["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no alert {id} in {all}"))
}

/// Rules the alert `id` "no action" through its form; it leaves the queue and the decision
/// names the arbiter. The game's id.
async fn rule_no_action(browser: &mut Browser, bench: &Bench, id: &str) -> GameId {
    let form = format!("li.alert[data-alert=\"{id}\"] form.rule");
    let select = browser
        .wait_for(&format!("{form} select[name=ruling]"), 10)
        .await;
    // As an arbiter does: the list taken in hand (focused), so the script does not replace the
    // live part under it until the button is pressed.
    select.click().await.unwrap();
    select.select_by_value("no_action").await.unwrap();
    assert_eq!(
        browser.eval("return document.activeElement.name").await,
        "ruling"
    );
    let back = flash_after(browser, &format!("{form} button[type=submit]"), "/arbiter").await;
    assert!(back.contains("ruled: no action"), "{back}");
    assert!(
        browser.text("p.flash").await.contains("ruled: no action"),
        "the flash"
    );
    browser
        .wait_gone(&format!("li.alert[data-alert=\"{id}\"]"), 10)
        .await;
    let game: i64 = id
        .strip_prefix("game-")
        .and_then(|r| r.split('-').next())
        .and_then(|g| g.parse().ok())
        .unwrap();
    let game = GameId(game);
    let decisions = bench.store().decisions(game).unwrap();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0].author, ARBITER);
    assert!(
        matches!(
            decisions[0].action,
            Action::Rule {
                ruling: Ruling::NoAction,
                ..
            }
        ),
        "{:?}",
        decisions[0].action
    );
    assert_eq!(admin_alert(browser, id).await["state"], "ruled");
    // Still out of the queue after the script's next two refreshes of the live part.
    for _ in 0..2 {
        browser
            .eval(
                "document.querySelector('#live section.alerts').dataset.stale = '1'; \
                 return null",
            )
            .await;
        browser
            .wait_gone("#live section.alerts[data-stale]", 15)
            .await;
    }
    assert!(
        browser
            .client
            .find_all(Locator::Css(&format!("li.alert[data-alert=\"{id}\"]")))
            .await
            .unwrap()
            .is_empty(),
        "the ruled alert came back"
    );
    browser.screenshot("ruled").await;
    game
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_chromium_logs_in_rules_an_alert_sets_a_result_corrects_and_runs_round_2() {
    let t0 = Instant::now();
    let mut bench = Bench::with_round(Token::new(TOKEN), Some(1)).await;
    let url = bench.url.clone();
    let mut browser = Browser::launch(
        Viewport::Desktop {
            width: 1280,
            height: 1000,
        },
        "desktop",
    )
    .await;
    eprintln!("console_browser: chromium ready in {:?}", t0.elapsed());
    // (a) Log in; board 1 then knocks a piece, board 2 plays a clean game.
    let boards = vec![
        knocking(&corpus_game("tatamast22", 3), 21),
        (
            script(&corpus_game("tatamast22", 4), 22, Vec::new()),
            PtyOptions::default(),
        ),
    ];
    log_in_then_start(&mut bench, &mut browser, boards).await;
    let rows = browser
        .client
        .find_all(Locator::Css("#live table.hall tbody tr"))
        .await
        .unwrap();
    assert_eq!(
        rows[0].attr("data-number").await.unwrap().as_deref(),
        Some("1")
    );
    browser.screenshot("hall").await;
    let public = Public::read(&url).await;
    assert_eq!(public.boards["boards"].as_array().unwrap().len(), 2);
    assert!(
        public.round_pgn.contains("[Round \"1.1\"]"),
        "{}",
        public.round_pgn
    );

    // (b) The knock: in the queue without a reload, with the signal.
    let (alert_id, detail, article) = the_alert_arrives(&mut browser).await;
    let mut secrets = vec![detail.clone(), article.clone(), alert_id.clone()];
    let public = Public::read(&url).await;
    public.assert_clean(&secrets);

    // (c) Rule it: it leaves the queue; the decision is the arbiter's.
    let game = rule_no_action(&mut browser, &bench, &alert_id).await;
    let public = Public::read(&url).await;
    public.assert_clean(&secrets);

    // (d) A result on board 1's page, reached from the hall.
    browser
        .wait_for("#live tr[data-number=\"1\"] a.board", 10)
        .await
        .click()
        .await
        .unwrap();
    until(20, "board 1's page", async || {
        (browser.path().await == "/arbiter/boards/1").then_some(())
    })
    .await;
    let shown = browser.text("h2.board-title").await;
    assert!(shown.starts_with("Board 1"), "{shown}");
    let on_page: i64 = browser
        .wait_for("form.result input[name=game]", 10)
        .await
        .attr("value")
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(on_page, game.0, "the result form acts on the knocked game");
    let result_note = "white resigned: arbiter's result note".to_owned();
    browser
        .wait_for("form.result select[name=result]", 10)
        .await
        .select_by_value("0-1")
        .await
        .unwrap();
    browser
        .type_into("form.result input[name=reason]", "resignation")
        .await;
    browser
        .type_into("form.result input[name=note]", &result_note)
        .await;
    secrets.push(result_note);
    let back = flash_after(
        &browser,
        "form.result button[type=submit]",
        "/arbiter/boards/1",
    )
    .await;
    assert!(back.contains("result 0-1"), "{back}");
    assert!(browser.text(".status .result").await.contains("0-1"));
    assert!(browser.text(".status").await.contains("(final)"));
    browser.screenshot("result").await;
    let record = bench.store().game(game).unwrap().unwrap();
    assert_eq!(record.result, "0-1");
    let decisions = bench.store().decisions(game).unwrap();
    let last = decisions.last().unwrap();
    assert_eq!(last.author, ARBITER);
    assert!(
        matches!(&last.action, Action::SetResult { result, .. } if result == "0-1"),
        "{:?}",
        last.action
    );
    let public = Public::read(&url).await;
    let in_pgn = pgn_game(&public.round_pgn, "[Board \"1\"]").expect("board 1 in the round PGN");
    assert!(in_pgn.contains("[Result \"0-1\"]"), "{in_pgn}");
    assert_eq!(public.board(1)["result"], "0-1");
    assert_eq!(public.board(1)["result_final"], true);
    assert!(public.page.contains("0-1"));
    public.assert_clean(&secrets);

    // (e) Correct a move of the (final) game by its number and side.
    let record = bench.store().game(game).unwrap().unwrap();
    let (ply, san) = a_correction(&record);
    let number = ply.div_ceil(2);
    let side = if ply % 2 == 1 { "white" } else { "black" };
    let correct_note = "sensor misread: arbiter's correction note".to_owned();
    browser
        .type_into("form.correct input[name=move]", &number.to_string())
        .await;
    browser
        .wait_for("form.correct select[name=side]", 10)
        .await
        .select_by_value(side)
        .await
        .unwrap();
    browser
        .type_into("form.correct input[name=san]", &san)
        .await;
    browser
        .type_into("form.correct input[name=note]", &correct_note)
        .await;
    secrets.push(correct_note);
    let back = flash_after(
        &browser,
        "form.correct button[type=submit]",
        "/arbiter/boards/1",
    )
    .await;
    assert!(
        back.contains(&format!("corrected to {san}")),
        "move {number}, {side}: {san}: {back}"
    );
    browser.screenshot("corrected").await;
    let corrected = bench.store().game(game).unwrap().unwrap();
    assert_eq!(corrected.moves[ply as usize - 1].notation, san);
    assert_eq!(corrected.moves.len(), record.moves.len());
    assert_eq!(corrected.result, "0-1", "the arbiter's result stays");
    let decisions = bench.store().decisions(game).unwrap();
    let last = decisions.last().unwrap();
    assert_eq!(last.author, ARBITER);
    assert!(
        matches!(
            &last.action,
            Action::CorrectMove { ply: p, new_notation, .. } if *p == ply && *new_notation == san
        ),
        "{:?}",
        last.action
    );
    // The page's moves, the round PGN and the public answer show the corrected move.
    let moves = browser.text("ol.moves").await;
    assert!(moves.contains(&san), "{moves}");
    // The live board follows the record the arbiter left (its task updates it just after).
    let public = until(10, "the corrected move on the public board", async || {
        let public = Public::read(&url).await;
        (public.board(1)["moves"][ply as usize - 1] == san.as_str()).then_some(public)
    })
    .await;
    let in_pgn = pgn_game(&public.round_pgn, "[Board \"1\"]").unwrap();
    let sans = movetext_sans(in_pgn);
    assert_eq!(sans.len(), record.moves.len(), "{in_pgn}");
    assert_eq!(sans[ply as usize - 1], san, "{in_pgn}");
    public.assert_clean(&secrets);

    // (f) Round 2: its pairings uploaded as a file, then started, both through the forms.
    browser
        .wait_for("header h1 a", 10)
        .await
        .click()
        .await
        .unwrap();
    until(20, "the hall", async || {
        (browser.path().await == "/arbiter").then_some(())
    })
    .await;
    let csv = bench.dir.path().join("round2.csv");
    std::fs::write(
        &csv,
        "board,white,black,white_elo,black_elo\n1,\"Abenov, Arman\",\"Li, Wei\",2610,2555\n\
         2,\"Kim, Ana\",\"Ortiz, Luis\",2400,2380\n",
    )
    .unwrap();
    browser
        .type_into("form.pairings input[name=round]", "2")
        .await;
    browser
        .wait_for("form.pairings input[type=file]", 10)
        .await
        .send_keys(&csv.display().to_string())
        .await
        .unwrap();
    let back = flash_after(&browser, "form.pairings button[type=submit]", "/arbiter").await;
    assert!(
        back.contains("round 2: 2 boards paired from round2.csv"),
        "{back}"
    );
    let paired = bench.store().pairings(2).unwrap();
    assert_eq!(paired.len(), 2);
    assert_eq!(paired[0].white, "Abenov, Arman");
    assert_eq!(paired[1].black, "Ortiz, Luis");
    // The console proposes round 2 (round 2's pairings do not move it on to 3).
    assert_eq!(
        browser
            .eval("return document.querySelector('form.round-start input[name=round]').value")
            .await,
        "2"
    );
    browser
        .type_into("form.round-start input[name=round]", "2")
        .await;
    // Games of round 1 still in play: the console names their boards and starts round 2
    // once confirmed.
    let in_play = bench.store().round_in_play(1).unwrap();
    let back = if in_play.is_empty() {
        flash_after(&browser, "form.round-start button[type=submit]", "/arbiter").await
    } else {
        browser
            .submit(
                "form.round-start button[type=submit]",
                "/arbiter/rounds/start",
            )
            .await;
        let named = browser.text("section.confirm-round").await;
        for (number, name) in &in_play {
            let board = board_name_in(*number, name, Lang::En);
            assert!(named.contains(&board), "{board} in {named}");
        }
        browser.screenshot("round-confirm").await;
        flash_after(&browser, "form.confirm button[type=submit]", "/arbiter").await
    };
    assert!(back.contains("round 2 started"), "{back}");
    assert_eq!(browser.text("span.current-round").await, "2");
    let round_text = browser.text("section.round").await;
    assert!(
        round_text.contains(&format!("by {ARBITER}")),
        "{round_text}"
    );
    browser.screenshot("round-2").await;
    let store = bench.store();
    assert_eq!(store.round_info().unwrap().unwrap().round, 2);
    let rounds = store.rounds().unwrap();
    let current: Vec<_> = rounds.iter().filter(|r| r.current).collect();
    assert_eq!(current.len(), 1);
    assert_eq!(current[0].number, 2);
    assert_eq!(current[0].started_by, ARBITER);
    let rounds: Value = reqwest::get(format!("{url}api/rounds"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let current: Vec<_> = rounds["rounds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["current"] == true)
        .collect();
    assert_eq!(current.len(), 1, "{rounds}");
    assert_eq!(current[0]["number"], 2);
    let round1 = reqwest::get(format!("{url}rounds/1.pgn"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let in_pgn = pgn_game(&round1, "[Board \"1\"]").expect("board 1 in round 1's PGN");
    assert!(in_pgn.contains("[Result \"0-1\"]"), "{in_pgn}");
    let public = Public::read(&url).await;
    public.assert_clean(&secrets);

    // (g) The public page in the browser: board 1, its round-1 game over (0-1, in round 1's
    // PGN above), shows its round-2 pairing from the round's start; never the irregularity or
    // a note.
    browser.goto(&url).await;
    let text = until(20, "the public page's boards", async || {
        let text = browser.eval("return document.body.innerText").await;
        let text = text.as_str().unwrap_or("").to_owned();
        (text.contains("Abenov, Arman") && text.contains("Li, Wei")).then_some(text)
    })
    .await;
    for s in &secrets {
        assert!(!text.contains(s.as_str()), "{s:?} on the public page");
    }
    let lower = text.to_lowercase();
    for word in ["displaced", "knock", "irregular", "ruled", "alert"] {
        assert!(!lower.contains(word), "{word:?} on the public page");
    }
    browser.screenshot("public").await;

    browser.close().await;
    bench.stop().await;
    eprintln!("console_browser: desktop flow in {:?}", t0.elapsed());
}

/// A phone-sized browser (screenshots named `prefix`) logged in to the bench's console; board 1
/// knocks a piece before its ninth ply, board 2 plays on.
async fn on_a_phone_with_a_knock(bench: &mut Bench, prefix: &str) -> Browser {
    let mut browser = Browser::launch(
        Viewport::Phone {
            width: 390,
            height: 844,
        },
        prefix,
    )
    .await;
    let boards = vec![
        knocking(&corpus_game("tatamast22", 5), 31),
        (
            script(&corpus_game("tatamast22", 6), 32, Vec::new()),
            PtyOptions::default(),
        ),
    ];
    log_in_then_start(bench, &mut browser, boards).await;
    browser
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_at_a_phone_size_fits_its_width_and_rules_an_alert() {
    let t0 = Instant::now();
    let mut bench = Bench::with_round(Token::new(TOKEN), Some(1)).await;
    let url = bench.url.clone();
    let mut browser = on_a_phone_with_a_knock(&mut bench, "phone").await;
    let (alert_id, detail, article) = the_alert_arrives(&mut browser).await;

    // The hall and the queue, within the phone's width: nothing scrolls sideways.
    let layout = browser
        .eval(
            "const r = s => { const e = document.querySelector(s); if (!e) return null; \
               const b = e.getBoundingClientRect(); return {left: b.left, right: b.right, \
               width: b.width, height: b.height}; };\
             return {inner: window.innerWidth, body: document.body.scrollWidth, \
               doc: document.documentElement.scrollWidth, hall: r('table.hall'), \
               alerts: r('section.alerts'), alert: r('li.alert'), rule: r('li.alert form.rule')};",
        )
        .await;
    eprintln!("console_browser: phone layout {layout}");
    assert_eq!(layout["inner"], 390, "the page is not zoomed out: {layout}");
    let px = |v: &Value| v.as_f64().unwrap();
    assert!(px(&layout["body"]) <= px(&layout["inner"]), "{layout}");
    assert!(px(&layout["doc"]) <= px(&layout["inner"]), "{layout}");
    for part in ["hall", "alerts", "alert", "rule"] {
        let b = &layout[part];
        assert!(
            px(&b["width"]) > 0.0 && px(&b["height"]) > 0.0,
            "{part}: {layout}"
        );
        assert!(px(&b["left"]) >= 0.0, "{part}: {layout}");
        assert!(px(&b["right"]) <= px(&layout["inner"]), "{part}: {layout}");
    }
    browser.screenshot("alert-layout").await;

    rule_no_action(&mut browser, &bench, &alert_id).await;
    let public = Public::read(&url).await;
    public.assert_clean(&[detail, article, alert_id]);
    browser.close().await;
    bench.stop().await;
    eprintln!("console_browser: phone flow in {:?}", t0.elapsed());
}

/// The console's words in `lang` that must show on the hall with an alert open.
fn english_labels() -> Vec<&'static str> {
    [
        "arbiter.all_boards",
        "arbiter.needs_attention",
        "arbiter.sound",
        "arbiter.log_out",
        "arbiter.players",
        "arbiter.state",
        "arbiter.start_round",
        "arbiter.pairings_for",
        "arbiter.import_pairings",
        "arbiter.by_file_name",
        "arbiter.no_round",
        "arbiter.describe_penalty",
        "arbiter.other_penalty",
        "arbiter.rule",
        "arbiter.state_irregular",
        "arbiter.state_playing",
        "remark.displaced",
        "sheet.white",
        "sheet.black",
        "sheet.round",
    ]
    .into_iter()
    .map(|k| Lang::En.text(k))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_in_persian_and_russian_at_a_phone_size_keeps_its_width_and_its_words() {
    use crate::page_languages::{BLACK, WHITE};
    let mut bench = Bench::with_round(Token::new(TOKEN), Some(1)).await;
    {
        let mut store = Store::open(&bench.db).unwrap();
        let mut pairing = Pairing::new(1, WHITE, BLACK);
        pairing.white_title = Some("IM".into());
        pairing.white_elo = Some(2450);
        pairing.black_title = Some("GM".into());
        pairing.black_elo = Some(2760);
        store.import_pairings(1, &[pairing]).unwrap();
    }
    let url = bench.url.clone();
    let mut browser = on_a_phone_with_a_knock(&mut bench, "languages").await;
    browser.wait_for("#live li.alert[data-alert]", 60).await;

    for lang in [Lang::Fa, Lang::Ru] {
        browser
            .goto(&format!("{url}arbiter?lang={}", lang.code()))
            .await;
        browser.wait_for("#live li.alert[data-alert]", 20).await;
        // The script's refresh keeps the language (the session took the switch's).
        browser.eval("window.loadedOnce = 'yes'; return null").await;
        tokio::time::sleep(std::time::Duration::from_secs(4)).await;
        assert_eq!(
            browser.eval("return window.loadedOnce || null").await,
            "yes"
        );
        let seen = browser
            .assert_fits(
                lang,
                "header, section.alerts, li.alert, form.rule, table.hall, section.round",
                "nav.langs, #alert-signal",
            )
            .await;
        assert_eq!(seen["inner"], 390, "the page is not zoomed out");
        let words = seen["words"].as_str().unwrap();
        for label in english_labels() {
            assert!(
                !words.contains(label),
                "{lang}: {label:?} stayed English in {words}"
            );
        }
        // The board's own detail too, worded from the record's phrase: what the knock left (a
        // piece out of place, or a move no piece makes) in the language's words, no English
        // word of the record left.
        let detail = browser.text("#live li.alert .detail").await;
        assert!(
            detail
                .chars()
                .filter(|c| c.is_alphabetic())
                .any(|c| !c.is_ascii()),
            "{lang}: {detail}"
        );
        for english in [
            "white",
            "black",
            "empty",
            "missing",
            "knocked",
            "piece",
            "move",
            "clock",
            "press",
            "completed",
        ] {
            assert!(!detail.contains(english), "{lang}: {english:?} in {detail}");
        }
        for key in ["arbiter.players", "arbiter.log_out", "remark.displaced"] {
            assert!(words.contains(lang.text(key)), "{lang}: {key} in {words}");
        }
        // The names exactly as paired, each isolated from its title and rating.
        let html = seen["html"].as_str().unwrap();
        assert!(
            html.contains(&format!("<bdi>IM</bdi> <bdi>{WHITE}</bdi> (2450)")),
            "{html}"
        );
        assert!(
            html.contains(&format!("<bdi>GM</bdi> <bdi>{BLACK}</bdi> (2760)")),
            "{html}"
        );
        browser
            .screenshot(&format!("console-{}", lang.code()))
            .await;
    }
    // The session keeps the language the switch chose: the console, then a board's page, in
    // Russian without asking again.
    browser.goto(&format!("{url}arbiter/boards/1")).await;
    browser.wait_for("#live section.alerts", 20).await;
    assert_eq!(
        browser.eval("return document.documentElement.lang").await,
        "ru"
    );
    let page = browser.text("main").await;
    for key in [
        "arbiter.moves",
        "arbiter.history",
        "arbiter.set_result",
        "arbiter.correct_move",
    ] {
        assert!(page.contains(Lang::Ru.text(key)), "{key} in {page}");
    }
    browser.screenshot("console-board-ru").await;
    browser.close().await;
    bench.stop().await;
}
