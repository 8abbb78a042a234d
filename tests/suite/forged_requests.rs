//! The arbiter's word cannot be forged (issue 31, "what must be shown"): the arbiter logs in to
//! the console in Debian's chromium (headless, through chromedriver), then opens a page served
//! by another server — another port of 127.0.0.1 (the same site: the `SameSite=Strict` cookie
//! goes along), then another host name (`localhost`) — which tries every console form and
//! every admin route with the arbiter's cookie, through forms of all three enctypes
//! (`application/x-www-form-urlencoded`, `multipart/form-data`, `text/plain` shaped as JSON)
//! and through `fetch` (`no-cors` with simple bodies, and `cors` with JSON, which the browser
//! asks about first). Every one is refused, and the record is unchanged: the final result,
//! the decisions, the notes, the round and the pairings. The session still works afterwards
//! (the forged logout was refused too), and a note from the console's own form is taken, by
//! the session's arbiter. Screenshots: target/test-artifacts/console/forged-*.

use crate::{browser, relay_common};

use std::time::Duration;

use axum::{Router, extract::State, response::Html, routing::get};
use boardscribe::{
    relay::Token,
    store::{Action, GameId, Store},
};
use browser::{Browser, Viewport, until};
use relay_common::{Bench, corpus_game};
use serde_json::json;

const TOKEN: &str = "forged-requests-token";
const ARBITER: &str = "Chief Arbiter";

/// One state-changing request the attacker tries: its path on the relay and its fields.
struct Forged {
    path: String,
    fields: Vec<(&'static str, String)>,
}

/// Every console form and admin route, aimed at `game` (board 1).
fn actions(game: i64) -> Vec<Forged> {
    let g = game.to_string();
    let a = |path: &str, fields: &[(&'static str, &str)]| Forged {
        path: path.to_owned(),
        fields: fields.iter().map(|(k, v)| (*k, (*v).to_owned())).collect(),
    };
    let csv = "board,white,black\n1,Forged White,Forged Black\n";
    vec![
        a(
            "/arbiter/boards/1/result",
            &[
                ("game", &g),
                ("result", "0-1"),
                ("reason", "decision"),
                ("note", "forged"),
            ],
        ),
        a(
            "/arbiter/boards/1/correct",
            &[
                ("game", &g),
                ("move", "1"),
                ("side", "white"),
                ("san", "d4"),
            ],
        ),
        a(
            "/arbiter/boards/1/note",
            &[("game", &g), ("text", "forged")],
        ),
        a(
            "/arbiter/rule",
            &[("game", &g), ("irregularity", "1"), ("ruling", "no_action")],
        ),
        a("/arbiter/rounds/start", &[("round", "3")]),
        a(
            "/arbiter/pairings",
            &[("round", "2"), ("format", "csv"), ("file", csv)],
        ),
        a("/arbiter/logout", &[]),
        a(
            &format!("/api/admin/games/{g}/result"),
            &[
                ("result", "0-1"),
                ("reason", "decision"),
                ("author", "Mallory"),
            ],
        ),
        a(
            &format!("/api/admin/games/{g}/note"),
            &[("text", "forged"), ("author", "Mallory")],
        ),
        a(
            &format!("/api/admin/games/{g}/correct"),
            &[("move", "d4"), ("author", "Mallory")],
        ),
        a(
            &format!("/api/admin/games/{g}/resume"),
            &[("author", "Mallory")],
        ),
        a(
            &format!("/api/admin/games/{g}/rule"),
            &[("ruling", "no_action"), ("author", "Mallory")],
        ),
        a(
            "/api/admin/pairings",
            &[("format", "csv"), ("text", csv), ("author", "Mallory")],
        ),
        a("/api/admin/rounds/3/start", &[("author", "Mallory")]),
    ]
}

/// The fields as the JSON object the admin API reads (numbers where it wants them).
fn json_body(action: &Forged) -> serde_json::Value {
    let mut body = serde_json::Map::new();
    for (k, v) in &action.fields {
        let value = match *k {
            "ply" | "after_ply" | "irregularity" | "round" => json!(v.parse::<u64>().unwrap()),
            _ => json!(v),
        };
        body.insert((*k).to_owned(), value);
    }
    if action.path.ends_with("/correct") || action.path.ends_with("/resume") {
        body.insert("ply".into(), json!(1));
        body.insert("after_ply".into(), json!(0));
    }
    if action.path.ends_with("/rule") {
        body.insert("irregularity".into(), json!(1));
    }
    if action.path == "/api/admin/pairings" {
        body.insert("round".into(), json!(2));
    }
    serde_json::Value::Object(body)
}

fn attr(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

/// The attacker's page: every action as a form of each enctype (each posting into a frame of
/// its own, so that all of them go), then as `fetch` calls; `window.attackDone` once every
/// frame has loaded and every fetch has settled.
fn attack_page(target: &str, game: i64) -> String {
    let mut forms = String::new();
    let mut n = 0;
    for action in actions(game) {
        let url = format!("{}{}", target.trim_end_matches('/'), action.path);
        for enctype in [
            "application/x-www-form-urlencoded",
            "multipart/form-data",
            "text/plain",
        ] {
            n += 1;
            let inputs = if enctype == "text/plain" && action.path.starts_with("/api/") {
                // `name=value` where name + "=" + value is the JSON the API reads.
                let text = json_body(&action).to_string();
                let (head, tail) = text.split_at(text.len() - 1);
                format!(
                    r#"<input type="hidden" name="{}" value="{}">"#,
                    attr(&format!("{head},\"pad\":\"")),
                    attr(&format!("\"{tail}"))
                )
            } else {
                action
                    .fields
                    .iter()
                    .map(|(k, v)| format!(r#"<textarea name="{}">{}</textarea>"#, attr(k), attr(v)))
                    .collect()
            };
            forms.push_str(&format!(
                r#"<iframe name="f{n}"></iframe><form method="post" action="{url}" enctype="{enctype}" target="f{n}">{inputs}</form>"#,
                url = attr(&url),
            ));
        }
    }
    let mut fetches = Vec::new();
    for action in actions(game) {
        let url = format!("{}{}", target.trim_end_matches('/'), action.path);
        let body = json_body(&action).to_string();
        for (mode, ctype) in [
            ("no-cors", "text/plain"),
            ("no-cors", "application/x-www-form-urlencoded"),
            ("cors", "application/json"),
        ] {
            fetches.push(format!(
                "fetch({url}, {{method: 'POST', mode: '{mode}', credentials: 'include', headers: {{'Content-Type': '{ctype}'}}, body: {body}}}).catch(() => null)",
                url = json!(url),
                body = json!(body),
            ));
        }
    }
    format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>prize draw</title></head><body>
{forms}
<script>
window.attackDone = false;
const frames = document.querySelectorAll('iframe');
let loaded = 0;
const settled = Promise.all([{fetches}]);
const framesDone = new Promise(ok => {{
  frames.forEach(f => f.addEventListener('load', () => {{ loaded += 1; if (loaded === frames.length) ok(); }}));
  setTimeout(ok, 8000);
}});
document.querySelectorAll('form').forEach(f => f.submit());
Promise.all([settled, framesDone]).then(() => {{ window.attackDone = true; }});
</script></body></html>"#,
        fetches = fetches.join(",\n"),
    )
}

/// The attacker's server: `/attack.html` on a port of its own.
async fn serve_attack(page: String) -> u16 {
    async fn page_route(State(page): State<String>) -> Html<String> {
        Html(page)
    }
    let app = Router::new()
        .route("/attack.html", get(page_route))
        .with_state(page);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    port
}

/// What the attacker wants to change, as the store holds it.
#[derive(Debug, PartialEq)]
struct Record {
    result: String,
    events: usize,
    decisions: usize,
    round: Option<u32>,
    rounds: usize,
    paired_2: usize,
    moves: Vec<String>,
}

fn record(store: &Store, game: GameId) -> Record {
    let g = store.game(game).unwrap().unwrap();
    Record {
        result: g.result.clone(),
        events: g.events.len(),
        decisions: store.decisions(game).unwrap().len(),
        round: store.round_info().unwrap().map(|r| r.round),
        rounds: store.rounds().unwrap().len(),
        paired_2: store.pairings(2).unwrap().len(),
        moves: g.moves.iter().map(|m| m.notation.clone()).collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_of_another_origin_cannot_act_with_the_arbiters_cookie() {
    let mut bench = Bench::with_round(Token::new(TOKEN), Some(1)).await;
    let url = bench.url.clone();
    bench
        .start(&[(corpus_game("tatamast22", 2), 7, 0.0)], 0.02)
        .await;
    bench.wait_done(Duration::from_secs(120)).await;
    let game = bench
        .store()
        .games()
        .unwrap()
        .last()
        .expect("board 1's game")
        .id;
    // The final result the attacker will try to change, set by the arbiter's token.
    let client = reqwest::Client::new();
    let set = client
        .post(format!("{url}api/admin/games/{}/result", game.0))
        .bearer_auth(TOKEN)
        .json(&json!({ "result": "1/2-1/2", "reason": "agreement", "author": ARBITER }))
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), 200, "{}", set.text().await.unwrap());
    let before = record(&bench.store(), game);
    assert_eq!(before.result, "1/2-1/2");

    let mut browser = Browser::launch(
        Viewport::Desktop {
            width: 1280,
            height: 900,
        },
        "forged",
    )
    .await;
    browser
        .log_in(&format!("{url}arbiter"), TOKEN, ARBITER)
        .await;
    browser.wait_for("#live table.hall", 20).await;

    let port = serve_attack(attack_page(&url, game.0)).await;
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ] {
        browser.goto(&format!("{origin}/attack.html")).await;
        until(
            30,
            &format!("the attack from {origin} to finish"),
            async || {
                (browser.eval("return window.attackDone === true").await == true).then_some(())
            },
        )
        .await;
        browser.screenshot(&format!("attack-{port}")).await;
        // Whatever a late answer would have done is done by now.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            record(&bench.store(), game),
            before,
            "a page at {origin} changed the record"
        );
    }

    // The session outlived the forged logout, and the console's own form still acts, as the
    // session's arbiter.
    browser.goto(&format!("{url}arbiter/boards/1")).await;
    browser.wait_for("form.note input[name=text]", 20).await;
    browser
        .type_into("form.note input[name=text]", "seen from the console")
        .await;
    browser
        .submit("form.note button[type=submit]", "/arbiter/boards/1?flash=")
        .await;
    assert!(browser.text("p.flash").await.contains("note added"));
    let decisions = bench.store().decisions(game).unwrap();
    assert_eq!(decisions.len(), before.decisions + 1);
    let note = decisions.last().unwrap();
    assert!(
        matches!(note.action, Action::Note { .. }),
        "{:?}",
        note.action
    );
    assert_eq!(note.author, ARBITER);
    browser.close().await;
    bench.stop().await;
}
