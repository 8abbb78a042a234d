//! The console's actions over real HTTP (issue 16, item 5), with emulated boards recorded by the
//! daemon: a logged-in arbiter (named at the login) rules on an alert, sets a result, corrects a
//! move by its number and side, notes, starts round 2 and uploads its pairings, each through the
//! console's forms; after each, the database, `/round.pgn` and the public page say so, and every
//! decision carries the arbiter's name. A form without a session, or from another site, changes
//! nothing; a move that does not read comes back as the reason. The same forms in a real
//! browser: `console_browser`.

use crate::relay_common;

use std::time::{Duration, Instant};

use boardscribe::{
    emulator::{
        self, EmulatorOptions, IllegalKind, IrregularityScript, PgnGame, PtyOptions, PtyScript,
        ScriptedIrregularity,
    },
    lang::Lang,
    relay::{Token, page::board_name_in},
    store::{Action, GameRecord, Ruling},
};
use relay_common::{Bench, corpus_game};
use reqwest::{StatusCode, header, redirect::Policy};
use serde_json::Value;
use shakmaty::{CastlingMode, Chess, Position, fen::Fen, san::San};

pub(crate) const TOKEN: &str = "console-actions-token";

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

/// The console's client: no redirects followed (the test reads where each form sends back).
/// Also `pairing_files`' (a pairings file uploaded as the arbiter does).
pub(crate) struct Console {
    pub(crate) client: reqwest::Client,
    pub(crate) url: String,
    pub(crate) cookie: String,
    /// `http://127.0.0.1:PORT`, what a browser sends as `Origin`.
    pub(crate) origin: String,
}

impl Console {
    pub(crate) async fn login(url: &str, name: &str) -> Console {
        let client = reqwest::Client::builder()
            .redirect(Policy::none())
            .build()
            .unwrap();
        let ok = client
            .post(format!("{url}arbiter/login"))
            .form(&[("token", TOKEN), ("name", name)])
            .send()
            .await
            .unwrap();
        assert_eq!(ok.status(), StatusCode::SEE_OTHER);
        let cookie = ok.headers()[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        Console {
            client,
            origin: url.trim_end_matches('/').to_owned(),
            url: url.to_owned(),
            cookie,
        }
    }

    /// Posts a form as the browser does, following nothing.
    async fn send_form(&self, path: &str, form: &[(&str, &str)]) -> reqwest::Response {
        self.client
            .post(format!("{}{path}", self.url))
            .header(header::COOKIE, &self.cookie)
            .header(header::ORIGIN, &self.origin)
            .form(form)
            .send()
            .await
            .unwrap()
    }

    /// Posts a form as the browser does; where it sends back, decoded.
    pub(crate) async fn post(&self, path: &str, form: &[(&str, &str)]) -> String {
        let resp = self.send_form(path, form).await;
        assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{path}");
        self.told(&resp).await
    }

    /// Posts a form as the browser does: the status and the body.
    pub(crate) async fn post_raw(&self, path: &str, form: &[(&str, &str)]) -> (StatusCode, String) {
        let resp = self.send_form(path, form).await;
        let status = resp.status();
        (status, resp.text().await.unwrap())
    }

    /// The console's pairings form, as the browser posts it: `round`, `format` and the file's
    /// bytes as they are on disk.
    pub(crate) async fn upload_pairings(
        &self,
        round: u32,
        file_name: &str,
        bytes: &[u8],
    ) -> String {
        let boundary = "----boardscribe-pairing-files";
        let mut body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"round\"\r\n\r\n{round}\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"format\"\r\n\r\nauto\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; \
             filename=\"{file_name}\"\r\nContent-Type: text/csv\r\n\r\n"
        )
        .into_bytes();
        body.extend(bytes);
        body.extend(format!("\r\n--{boundary}--\r\n").into_bytes());
        let resp = self
            .client
            .post(format!("{}arbiter/pairings", self.url))
            .header(header::COOKIE, &self.cookie)
            .header(header::ORIGIN, &self.origin)
            .header(
                header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        self.told(&resp).await
    }

    /// Where an action's answer sends back, with what the banner there says.
    pub(crate) async fn told(&self, resp: &reqwest::Response) -> String {
        let back = location(resp);
        // The redirect names the server's message by its id: the banner of the page it
        // leads to says it. Told here as `PAGE?msg=TEXT`, or `PAGE?err=TEXT` for a refusal.
        let (page, id) = back
            .split_once("flash=")
            .unwrap_or_else(|| panic!("no message in {back}"));
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{back}");
        let page = page.trim_end_matches(['?', '&']);
        let html = self.get(back.trim_start_matches('/')).await;
        let at = html
            .find(r#"<p class="flash"#)
            .unwrap_or_else(|| panic!("{back} shows no message"));
        let tag = &html[at..];
        let error = tag.starts_with(r#"<p class="flash error""#);
        let text = &tag[tag.find('>').unwrap() + 1..tag.find("</p>").unwrap()];
        let text = text
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&");
        let sep = if page.contains('?') { '&' } else { '?' };
        let key = if error { "err" } else { "msg" };
        format!("{page}{sep}{key}={text}")
    }

    pub(crate) async fn get(&self, path: &str) -> String {
        let resp = self.get_response(path).await;
        assert_eq!(resp.status(), StatusCode::OK, "{path}");
        resp.text().await.unwrap()
    }

    /// A path's answer as it comes, with the session's cookie.
    pub(crate) async fn get_response(&self, path: &str) -> reqwest::Response {
        self.client
            .get(format!("{}{path}", self.url))
            .header(header::COOKIE, &self.cookie)
            .send()
            .await
            .unwrap()
    }

    /// A page, or none while the database does not exist yet (the relay answers 500 until the
    /// daemon creates it).
    async fn get_once_ready(&self, path: &str) -> Option<String> {
        let resp = self.get_response(path).await;
        match resp.status() {
            StatusCode::OK => Some(resp.text().await.unwrap()),
            StatusCode::INTERNAL_SERVER_ERROR => None,
            other => panic!("{path}: {other}"),
        }
    }

    /// Every alert; none while the database does not exist yet (the relay answers 500 until
    /// the daemon creates it).
    async fn alerts(&self) -> Vec<Value> {
        let resp = self
            .client
            .get(format!("{}api/admin/alerts", self.url))
            .header(header::COOKIE, &self.cookie)
            .send()
            .await
            .unwrap();
        if resp.status() != StatusCode::OK {
            return Vec::new();
        }
        let v: Value = resp.json().await.unwrap();
        v["alerts"].as_array().unwrap().clone()
    }
}

/// A redirect's `Location`, percent-decoded.
fn location(resp: &reqwest::Response) -> String {
    let raw = resp.headers()[header::LOCATION].to_str().unwrap();
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            out.push(u8::from_str_radix(&raw[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

fn game_on(bench: &Bench, board: usize) -> GameRecord {
    let games = bench.store().games().unwrap();
    games
        .into_iter()
        .rfind(|g| g.board_name == bench.boards[board])
        .expect("a game on the board")
}

/// Another legal move than the one played at `game`'s last ply, in SAN, and that ply.
fn another_last_move(game: &GameRecord) -> (u32, String) {
    let last = game.moves.last().unwrap();
    let before: Chess = match game.moves.len() {
        1 => Chess::default(),
        n => {
            let fen: Fen = game.moves[n - 2].position.parse().unwrap();
            fen.into_position(CastlingMode::Standard).unwrap()
        }
    };
    let m = before
        .legal_moves()
        .into_iter()
        .find(|m| Some(m.to_uci(CastlingMode::Standard).to_string()) != last.uci)
        .unwrap();
    (last.ply, San::from_move(&before, m).to_string())
}

/// Waits for `cond` on fresh reads, up to `secs`.
pub(crate) async fn until<T>(secs: u64, what: &str, mut cond: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = cond().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_rules_sets_results_corrects_notes_and_runs_rounds_through_its_forms() {
    let mut bench = Bench::with_round(Token::new(TOKEN), Some(1)).await;
    let url = bench.url.clone();
    // Board 1: an illegal move before ply 7 (a penalty is due: open until ruled); board 2: a
    // clean game.
    let illegal = ScriptedIrregularity {
        before_ply: 7,
        kind: IrregularityScript::IllegalMove {
            kind: IllegalKind::WrongShape,
        },
    };
    bench
        .start_scripts(vec![
            (
                script(&corpus_game("tatamast22", 3), 11, vec![illegal]),
                PtyOptions::default(),
            ),
            (
                script(&corpus_game("tatamast22", 4), 12, Vec::new()),
                PtyOptions::default(),
            ),
        ])
        .await;
    let console = Console::login(&url, "Chief Arbiter").await;

    // The alert, in the console's live part, with its ruling form.
    let alert = until(60, "the illegal move's alert", async || {
        console
            .alerts()
            .await
            .into_iter()
            .find(|a| a["kind"] == "illegal_move" && a["state"] == "open")
    })
    .await;
    let id = alert["id"].as_str().unwrap().to_owned();
    let live = console.get("arbiter?fragment=1").await;
    assert!(live.contains(&format!("data-alert=\"{id}\"")), "{live}");
    assert!(live.contains(r#"<option value="penalty_applied">apply the penalty due: "#));
    assert!(
        !live.contains("<html"),
        "the fragment is the live part only"
    );
    let game = alert["game"].as_i64().unwrap().to_string();
    let irregularity = alert["irregularity"].as_u64().unwrap().to_string();
    let ply = alert["ply"].as_u64().unwrap().to_string();
    let rule = [
        ("game", game.as_str()),
        ("irregularity", irregularity.as_str()),
        ("ply", ply.as_str()),
        ("ruling", "penalty_applied"),
        ("description", ""),
        ("back", "/arbiter"),
    ];

    // Without a session, or from another site: nothing.
    let anonymous = reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap();
    let resp = anonymous
        .post(format!("{url}arbiter/rule"))
        .form(&rule)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(location(&resp), "/arbiter");
    let resp = console
        .client
        .post(format!("{url}arbiter/rule"))
        .header(header::COOKIE, &console.cookie)
        .header(header::ORIGIN, "https://elsewhere.example")
        .form(&rule)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let game_id = boardscribe::store::GameId(game.parse().unwrap());
    assert!(bench.store().decisions(game_id).unwrap().is_empty());

    // Rule: the penalty due, applied; the alert leaves the queue.
    let back = console.post("arbiter/rule", &rule).await;
    assert!(back.starts_with("/arbiter?msg="), "{back}");
    assert!(back.contains("ruled: penalty applied"), "{back}");
    let decisions = bench.store().decisions(game_id).unwrap();
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0].author, "Chief Arbiter");
    let Action::Rule {
        ruling: Ruling::PenaltyApplied { description },
        ..
    } = &decisions[0].action
    else {
        panic!("{:?}", decisions[0].action)
    };
    assert_eq!(Some(description.as_str()), alert["penalty_due"].as_str());
    let ruled = console.alerts().await;
    let ruled = ruled.iter().find(|a| a["id"] == id.as_str()).unwrap();
    assert_eq!(ruled["state"], "ruled");
    assert!(
        !console
            .get("arbiter?fragment=1")
            .await
            .contains(&format!("data-alert=\"{id}\""))
    );

    // A result from board 1's page: final in the store, the round PGN and the public page.
    let back = console
        .post(
            "arbiter/boards/1/result",
            &[
                ("game", &game),
                ("result", "0-1"),
                ("reason", "resignation"),
                ("note", "white resigned"),
            ],
        )
        .await;
    assert!(back.starts_with("/arbiter/boards/1?msg="), "{back}");
    let record = bench.store().game(game_id).unwrap().unwrap();
    assert_eq!(record.result, "0-1");
    let round = reqwest::get(format!("{url}round.pgn"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(round.contains("[Result \"0-1\"]"), "{round}");
    let public = reqwest::get(&url).await.unwrap().text().await.unwrap();
    assert!(public.contains("0-1"));
    assert!(
        !public.contains("white resigned"),
        "notes stay off the public page"
    );

    // A note, then the board's page: the history in words, by whom.
    let back = console
        .post(
            "arbiter/boards/1/note",
            &[("game", &game), ("text", "clock checked")],
        )
        .await;
    assert!(back.contains("note added"), "{back}");
    let page = console.get("arbiter/boards/1").await;
    assert!(page.contains(r#"<ol class="history" dir="auto">"#));
    assert!(page.contains("by Chief Arbiter"), "{page}");
    assert!(page.contains("clock checked"), "{page}");

    // Correct board 2's last move by its number and side, once its game is over.
    bench.wait_scripts(Duration::from_secs(120)).await;
    let game2 = until(20, "board 2's whole game", async || {
        let g = game_on(&bench, 1);
        (g.moves.len() == corpus_game("tatamast22", 4).moves.len()).then_some(g)
    })
    .await;
    let (ply, san) = another_last_move(&game2);
    let number = ply.div_ceil(2).to_string();
    let side = if ply % 2 == 1 { "white" } else { "black" };
    let id2 = game2.id.0.to_string();
    let not_a_move = [
        ("game", id2.as_str()),
        ("move", number.as_str()),
        ("side", side),
        ("san", "Kz9"),
    ];
    let refused = console.post("arbiter/boards/2/correct", &not_a_move).await;
    assert!(refused.starts_with("/arbiter/boards/2?err="), "{refused}");
    assert!(
        refused.ends_with(&Lang::En.fill("refused.invalid_move", &[("text", "Kz9")])),
        "{refused}"
    );
    // The same refusal in the console's language, once the arbiter chose Russian; then back
    // to English.
    console.get("arbiter?lang=ru").await;
    let refused = console.post("arbiter/boards/2/correct", &not_a_move).await;
    assert!(
        refused.ends_with(&Lang::Ru.fill("refused.invalid_move", &[("text", "Kz9")])),
        "{refused}"
    );
    assert!(!refused.contains("not a move"), "{refused}");
    console.get("arbiter?lang=en").await;
    let back = console
        .post(
            "arbiter/boards/2/correct",
            &[
                ("game", &id2),
                ("move", &number),
                ("side", side),
                ("san", &san),
            ],
        )
        .await;
    assert!(back.contains(&format!("corrected to {san}")), "{back}");
    let corrected = bench.store().game(game2.id).unwrap().unwrap();
    assert_eq!(corrected.moves.last().unwrap().notation, san);
    assert_eq!(corrected.moves.len(), game2.moves.len());
    let round = reqwest::get(format!("{url}round.pgn"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(round.contains(&san), "{round}");

    // Round 2's pairings uploaded as a file, before it starts: the console still proposes
    // round 2, not 3.
    let csv = "board,white,black,white_elo,black_elo\n1,\"Abenov, Arman\",\"Li, Wei\",2610,2555\n2,\"Kim, Ana\",\"Ortiz, Luis\",2400,2380\n";
    let back = console
        .upload_pairings(2, "round2.csv", csv.as_bytes())
        .await;
    assert!(
        back.contains("round 2: 2 boards paired from round2.csv"),
        "{back}"
    );
    let hall = console.get("arbiter").await;
    assert!(
        hall.contains(r#"<input type="number" name="round" min="1" value="2" required></label><button type="submit">Start round"#),
        "{hall}"
    );
    // Round 3 would skip round 2: the console names it and starts nothing until confirmed.
    let (status, page) = console
        .post_raw("arbiter/rounds/start", &[("round", "3")])
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(
        page.contains(&Lang::En.fill("arbiter.confirm_round_skips", &[("rounds", "2")])),
        "{page}"
    );
    assert!(page.contains(r#"name="confirm" value="1""#), "{page}");
    assert_eq!(bench.store().round_info().unwrap().unwrap().round, 1);
    // Round 2 over games of round 1 still in play: each board named, then started once
    // confirmed.
    let in_play: Vec<String> = bench
        .store()
        .round_in_play(1)
        .unwrap()
        .iter()
        .map(|(number, name)| board_name_in(*number, name, Lang::En))
        .collect();
    let (status, page) = console
        .post_raw("arbiter/rounds/start", &[("round", "2")])
        .await;
    if in_play.is_empty() {
        assert_eq!(
            status,
            StatusCode::SEE_OTHER,
            "nothing left: started at once"
        );
    } else {
        assert_eq!(status, StatusCode::OK, "{page}");
        let named = Lang::En.fill(
            "arbiter.confirm_round_in_play",
            &[("current", "1"), ("boards", &in_play.join(", "))],
        );
        assert!(page.contains(&named), "{named} in {page}");
        assert_eq!(bench.store().round_info().unwrap().unwrap().round, 1);
        let back = console
            .post("arbiter/rounds/start", &[("round", "2"), ("confirm", "1")])
            .await;
        assert!(back.contains("round 2 started"), "{back}");
    }
    let store = bench.store();
    assert_eq!(store.round_info().unwrap().unwrap().round, 2);
    let paired = store.pairings(2).unwrap();
    assert_eq!(paired.len(), 2);
    assert_eq!(paired[0].white, "Abenov, Arman");
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
    assert_eq!(current.len(), 1);
    assert_eq!(current[0]["number"], 2);
    assert_eq!(current[0]["started_by"], "Chief Arbiter");
    let hall = console.get("arbiter").await;
    assert!(
        hall.contains(r#"<span class="current-round">2</span>"#),
        "{hall}"
    );
    assert!(hall.contains("by Chief Arbiter"), "{hall}");
    // Round 1's sheets, every board's in one printable file (HTML and PDF), from the console;
    // the current round's links on the hall page; nothing for a round without games, or for
    // anyone else.
    assert!(
        hall.contains(r#"<a class="sheets" href="/arbiter/sheets/2.html?lang=en">HTML</a>"#),
        "{hall}"
    );
    let sheets = console.get("arbiter/sheets/1.html").await;
    assert_eq!(
        sheets.matches(r#"<section class="sheet""#).count(),
        2,
        "{sheets}"
    );
    let pdf = console.get_response("arbiter/sheets/1.pdf").await;
    assert_eq!(pdf.status(), StatusCode::OK);
    assert_eq!(pdf.headers()[header::CONTENT_TYPE], "application/pdf");
    assert!(pdf.bytes().await.unwrap().starts_with(b"%PDF"));
    let none = console.get_response("arbiter/sheets/2.html").await;
    assert_eq!(none.status(), StatusCode::NOT_FOUND);
    let stranger = reqwest::get(format!("{url}arbiter/sheets/1.html"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        !stranger.contains(r#"<section class="sheet""#),
        "{stranger}"
    );
    // The spectators' link: the address the console was reached at, and its QR code.
    assert!(
        hall.contains(&format!(r#"<a href="{url}" dir="ltr">{url}</a>"#)),
        "{url} in {hall}"
    );
    assert!(hall.contains(r#"<figure class="qr" role="img""#), "{hall}");
    // Board 1's game of round 1 is over (its result set above): from the round's start it
    // shows its round-2 pairing, waiting for that game, with none of round 1's moves under the
    // new names; on the public data and on the console.
    let boards: Value = reqwest::get(format!("{url}api/boards"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let b1 = boards["boards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["number"] == 1)
        .unwrap();
    assert_eq!(b1["white"], "Abenov, Arman", "{b1}");
    assert_eq!(b1["black"], "Li, Wei", "{b1}");
    assert_eq!(b1["round"], 2, "{b1}");
    assert_eq!(b1["ply"], 0, "{b1}");
    assert!(b1["result"].is_null() && b1["game_id"].is_null(), "{b1}");
    let at = hall.find(r#"data-number="1">"#).unwrap();
    let row = &hall[hall[..at].rfind("<tr ").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.starts_with(r#"<tr class="state-waiting""#) && row.contains("Abenov, Arman"),
        "{row}"
    );
    // The live page names the round for spectators; a board's page leads back to every board.
    let live = reqwest::get(&url).await.unwrap().text().await.unwrap();
    assert!(
        live.contains(&format!(
            "· {}</p>",
            Lang::En.fill("page.round", &[("round", "2")])
        )),
        "{live}"
    );
    let board = reqwest::get(format!("{url}boards/1"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        board.contains(r#"<nav class="board-links"><a href="/">"#),
        "{board}"
    );

    // The event's log of decisions: every one taken above, filtered by board, round and
    // author (any case), each line naming its author.
    let store = bench.store();
    let taken: usize = store
        .games()
        .unwrap()
        .iter()
        .map(|g| store.decisions(g.id).unwrap().len())
        .sum();
    assert!(taken >= 4, "{taken} decisions");
    let logged = async |query: &str| {
        let page = console.get(&format!("arbiter/decisions{query}")).await;
        let authors: Vec<String> = page
            .split(r#"<li data-author=""#)
            .skip(1)
            .map(|li| li[..li.find('"').unwrap()].to_owned())
            .collect();
        authors
    };
    // The event's own decisions too: round 2 started from the console.
    let event = store.event_decisions().unwrap();
    assert!(event.iter().any(|d| d.round == 2), "{event:?}");
    let all = logged("").await;
    assert_eq!(all.len(), taken + event.len());
    assert!(all.iter().all(|a| a == "Chief Arbiter"), "{all:?}");
    let on = |n: u32| {
        let g = store.games().unwrap();
        g.iter()
            .filter(|g| g.board_no == Some(n))
            .map(|g| store.decisions(g.id).unwrap().len())
            .sum::<usize>()
    };
    assert_eq!(logged("?board=1").await.len(), on(1));
    assert_eq!(logged("?board=2").await.len(), on(2));
    assert_eq!(on(1) + on(2), taken);
    let of_round = |n: u32| event.iter().filter(|d| d.round == n).count();
    assert_eq!(
        logged("?round=1&author=chief+arbiter").await.len(),
        taken + of_round(1)
    );
    assert_eq!(logged("?round=2").await.len(), of_round(2));
    assert!(logged("?author=Deputy").await.is_empty());

    bench.stop().await;
}

/// A board unplugged at bullet hands whose memory is gone when it comes back (issue 34, item 2):
/// the console shows the `thread_lost` alert in words for people (no count of milliseconds;
/// the record's last move by its number and side), what the board shows drawn beside the
/// record's last position, and a form that resumes the game. The arbiter copies the moves from
/// the scoresheets, numbered as they are written, into it: the record is the game, exactly, and
/// the alert is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_resumes_a_lost_board_from_the_scoresheets_beside_both_positions() {
    let mut bench = Bench::new(Token::new(TOKEN)).await;
    let url = bench.url.clone();
    let game = corpus_game("tatamast22", 12);
    let mut pos = Chess::default();
    let mut played: Vec<(String, String)> = Vec::new();
    for m in &game.moves {
        let san = San::from_move(&pos, *m).to_string();
        played.push((m.to_uci(CastlingMode::Standard).to_string(), san));
        pos.play_unchecked(*m);
    }
    bench
        .start_with(&[(game, 3, 0.0)], 0.1, |_, pty| {
            pty.unplug_at_ply = Some(10);
            pty.unplug_for_ms = 6_000;
            pty.memory_lost_on_unplug = true;
        })
        .await;
    let console = Console::login(&url, "Chief").await;
    let page = until(120, "a thread_lost alert on the console", async || {
        let page = console.get_once_ready("arbiter").await?;
        page.contains(r#"data-kind="thread_lost""#).then_some(page)
    })
    .await;
    let alert = &page[page.find(r#"data-kind="thread_lost""#).unwrap()..];
    let alert = &alert[..alert.find("</li>").unwrap()];
    // Words for people: times of day, the record's last move by number and side.
    let detail = &alert[alert.find(r#"class="detail""#).unwrap()..];
    let detail = &detail[detail.find('>').unwrap() + 1..detail.find("</span>").unwrap()];
    assert!(!detail.contains(" ms"), "{detail}");
    assert!(
        detail.contains("stops after") && detail.contains(", move "),
        "{detail}"
    );
    // Both positions drawn: what the board showed differs from the record's last position.
    let figure = |class: &str| {
        let at = alert
            .find(&format!(r#"<figure class="{class}">"#))
            .unwrap_or_else(|| panic!("no {class} in {alert}"));
        let f = &alert[at..];
        f[..f.find("</figure>").unwrap()].to_owned()
    };
    let (shown, record) = (figure("board-shows"), figure("record-shows"));
    let pieces = |svg: &str| svg.matches("data-piece=").count();
    assert!(pieces(&shown) > 0 && pieces(&record) > 0, "{alert}");
    assert_ne!(
        shown.replace("board-shows", ""),
        record.replace("record-shows", ""),
        "the board and the record show the same position"
    );
    let form = &alert[alert.find(r#"<form class="resume""#).expect(alert)..];
    let action = &form[form.find(r#"action=""#).unwrap() + 8..];
    let action = action[..action.find('"').unwrap()]
        .trim_start_matches('/')
        .to_owned();

    bench.wait_done(Duration::from_secs(180)).await;
    let recorded = game_on(&bench, 0);
    let plies = recorded.moves.len();
    assert!(plies < played.len(), "the record stopped: {plies} plies");
    let ucis: Vec<String> = played.iter().map(|(u, _)| u.clone()).collect();
    let live: Vec<String> = recorded
        .moves
        .iter()
        .map(|m| m.uci.clone().unwrap())
        .collect();
    assert_eq!(live, ucis[..plies], "nothing invented");
    // The record's last move is the form's default.
    let number = plies.div_ceil(2).to_string();
    assert!(
        form.contains(&format!(r#"name="move" min="0" value="{number}""#)),
        "{form}"
    );
    // The scoresheets' moves, numbered as written: `6. Nf3 Nc6 7. Bb5`, or `6... Nc6` first.
    let mut sheet = String::new();
    for (ply, (_, san)) in played.iter().enumerate().skip(plies) {
        let n = ply / 2 + 1;
        if ply % 2 == 0 {
            sheet.push_str(&format!("{n}. "));
        } else if ply == plies {
            sheet.push_str(&format!("{n}... "));
        }
        sheet.push_str(san);
        sheet.push(if ply % 2 == 1 { '\n' } else { ' ' });
    }
    let side = if plies.is_multiple_of(2) {
        "black"
    } else {
        "white"
    };
    let game_id = recorded.id.0.to_string();
    let told = console
        .post(
            &action,
            &[
                ("game", &game_id),
                ("move", &number),
                ("side", side),
                ("moves", &sheet),
                ("note", "from both scoresheets"),
            ],
        )
        .await;
    let count = (played.len() - plies).to_string();
    assert!(
        told.contains("msg=") && told.contains(&count),
        "{told} ({count} moves)"
    );
    until(15, "the record resumed and the alert over", async || {
        let g = game_on(&bench, 0);
        let live: Vec<String> = g.moves.iter().map(|m| m.uci.clone().unwrap()).collect();
        let open = console
            .get("arbiter")
            .await
            .contains(r#"data-kind="thread_lost""#);
        (live == ucis && !open).then_some(())
    })
    .await;
    let decisions = bench.store().decisions(recorded.id).unwrap();
    let resumed = decisions
        .iter()
        .find(|d| matches!(d.action, Action::Resume { .. }))
        .expect("a resume decision");
    assert_eq!(resumed.author, "Chief");
    bench.stop().await;
}

/// A result set at the command line (`boardscribe arbiter result`, another process) for a
/// game already over reaches the open console's live part, `/api/boards` and the public page's
/// data without a reload (issue 34, item 2): the daemon follows the decisions taken on its
/// database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_set_at_the_command_line_reaches_the_open_console_and_the_page() {
    let mut bench = Bench::new(Token::new(TOKEN)).await;
    let url = bench.url.clone();
    bench
        .start(&[(corpus_game("tatamast22", 4), 21, 0.0)], 0.05)
        .await;
    bench.wait_done(Duration::from_secs(120)).await;
    let console = Console::login(&url, "Chief").await;
    let recorded = game_on(&bench, 0);
    assert!(!recorded.moves.is_empty());
    // A result the game does not have yet, decided from the players' signatures.
    let result = if recorded.result == "0-1" {
        "1-0"
    } else {
        "0-1"
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_boardscribe"))
        .args(["arbiter", "--db", bench.db.to_str().unwrap(), "result"])
        .args(["--game", &recorded.id.0.to_string(), "--result", result])
        .args(["--reason", "decision", "--author", "Deputy"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let board = bench.boards[0].clone();
    until(10, "the command line's result on the console", async || {
        let live = console.get("arbiter?fragment=1").await;
        let row = &live[live.find(&format!(r#"data-board="{board}""#))?..];
        let row = &row[..row.find("</tr>")?];
        row.contains(&format!(r#"<span class="san">{result}</span>"#))
            .then_some(())
    })
    .await;
    let public: Value = reqwest::get(format!("{url}api/boards"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let b = &public["boards"][0];
    assert_eq!(b["result"], result, "{b}");
    assert_eq!(b["result_final"], true, "{b}");
    bench.stop().await;
}
