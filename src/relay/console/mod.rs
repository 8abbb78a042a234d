//! The arbiter's console at `/arbiter`: the login form; the hall as a compact table sorted by
//! board number — board, players, move, both clocks and a state (waiting, playing, irregular,
//! unplugged, finished, result to confirm) — under the open alerts, each with its article, the
//! penalty due and a form with the rulings the Laws allow ([`rulings`]); the round's forms
//! (start the next round, import pairings); and each board's page ([`board`]): its moves, its
//! history in words, and the forms to set a result, correct a move by number and side, and
//! note. Flow: the server builds the arbiter's [`BoardView`]s (with alerts) and renders them
//! here with pure functions; every form posts to the server, which acts through the admin
//! API's own paths and sends the browser back with a message ([`Flash`]). The pages load one
//! script, `/arbiter/console.js` ([`SCRIPT`]), which refreshes the `#live` part every few
//! seconds and signals a new alert (visible, and audible when the arbiter turns the sound on);
//! without script the page reloads itself. No external assets, no inline script.

pub mod board;
pub mod rulings;

use std::fmt::Write as _;

use super::{
    alerts::{Alert, AlertState, EventAlert},
    live::Connection,
    page::{board_title, clock_text, escape, last_move_text},
    view::BoardView,
};

pub use board::{BoardPage, board_html};

/// The console's script, served as `/arbiter/console.js`.
pub const SCRIPT: &str = include_str!("console.js");

/// What a board needs from the arbiter, at a glance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoardState {
    /// No game yet, or the start position set up.
    Waiting,
    Playing,
    /// An alert is open.
    Irregular,
    /// The daemon does not hear the board.
    Unplugged,
    Finished,
    /// A result the board showed (gesture, flag) that no one has made final.
    ResultToConfirm,
}

impl BoardState {
    pub fn as_str(self) -> &'static str {
        match self {
            BoardState::Waiting => "waiting",
            BoardState::Playing => "playing",
            BoardState::Irregular => "irregular",
            BoardState::Unplugged => "unplugged",
            BoardState::Finished => "finished",
            BoardState::ResultToConfirm => "result to confirm",
        }
    }

    /// Whether the arbiter should look at the board now.
    pub fn needs_attention(self) -> bool {
        matches!(
            self,
            BoardState::Irregular | BoardState::Unplugged | BoardState::ResultToConfirm
        )
    }
}

/// The state of a board as the arbiter's view shows it (alerts first: an unplugged board is an
/// alert too).
pub fn board_state(v: &BoardView) -> BoardState {
    let b = &v.live;
    if b.connection == Connection::Lost {
        BoardState::Unplugged
    } else if v.alerts.iter().any(|a| a.state == AlertState::Open) {
        BoardState::Irregular
    } else if b.result_final {
        BoardState::Finished
    } else if b.result.is_some() {
        BoardState::ResultToConfirm
    } else if b.ply > 0 {
        BoardState::Playing
    } else {
        BoardState::Waiting
    }
}

/// What the last action did, shown once at the top of the page it led back to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flash {
    pub text: String,
    /// Refused: the reason, in red.
    pub error: bool,
}

/// The round as the console shows it: the current one, when and by whom it started (in
/// words), and the next one's number for the forms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundLine {
    pub current: Option<u32>,
    pub started: Option<String>,
    pub next: u32,
}

/// The console's main page.
pub struct HallPage<'a> {
    pub views: &'a [BoardView],
    /// The event's own alerts (the halls' faults, at the event node).
    pub event_alerts: &'a [EventAlert],
    pub attention_only: bool,
    pub round: RoundLine,
    pub flash: Option<Flash>,
}

const STYLE: &str = "body{font:15px system-ui,sans-serif;margin:0;background:#fafafa}\
header{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:center;padding:.5em 1em;background:#263238;color:#fff}\
header a{color:#fff}header h1{font-size:1.1em;margin:0}header form{margin:0}main{padding:.5em}\
body.alerting header{background:#b71c1c}\
#alert-signal{position:sticky;top:0;z-index:2;background:#b71c1c;color:#fff;padding:.5em 1em;cursor:pointer}\
table{border-collapse:collapse;width:100%;background:#fff}\
th,td{padding:.3em .5em;border-bottom:1px solid #ddd;text-align:left;white-space:nowrap}\
td.players{white-space:normal}tr.state-irregular{background:#ffebee}\
tr.state-unplugged{background:#eceff1;color:#546e7a}tr.state-result-to-confirm{background:#fff8e1}\
tr.state-finished{color:#2e7d32}.alerts ul{padding-left:1.2em}.alerts li{margin:.4em 0}\
.article{font-weight:bold}.penalty{color:#b71c1c}\
form.rule,form.inline{display:inline-flex;flex-wrap:wrap;gap:.3em;align-items:center;margin:.2em 0}\
section.round form,section.actions form{display:flex;flex-wrap:wrap;gap:.4em;align-items:center;margin:.5em 0}\
section{margin:.5em 0 1em}h2{font-size:1.05em;margin:.6em 0 .3em}\
input,select,button,textarea{font:inherit;max-width:100%}textarea,input.note-text{width:100%;box-sizing:border-box}\
ol.moves{columns:12em;padding-left:2.5em}ol.history{padding-left:1.2em}ol.history li{margin:.2em 0}\
.flash{padding:.5em 1em;margin:0;background:#e8f5e9}.flash.error{background:#ffebee;color:#b71c1c}\
form.login{max-width:22em;margin:3em auto;display:flex;flex-direction:column;gap:.6em;padding:0 1em}\
.error{color:#b71c1c}@media (max-width:600px){td.clock,th.clock{display:none}main{padding:.2em}\
th,td{padding:.3em .3em}}";

/// A whole page: the head (style, script, a reload without script when `live`), then `main`.
fn page(title: &str, main: &str, live: bool) -> String {
    let (script, reload) = if live {
        (
            r#"<script src="/arbiter/console.js" defer></script>"#,
            r#"<noscript><meta http-equiv="refresh" content="10"></noscript>"#,
        )
    } else {
        ("", "")
    };
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">{reload}
<title>{title}</title><style>{STYLE}</style>{script}</head>
<body data-page="arbiter">{main}</body></html>
"#,
        title = escape(title),
    )
}

/// The header every console page has: the title, the hall's two views, the sound switch and
/// the logout; then the new-alert signal (hidden until the script shows it) and the flash.
fn header(out: &mut String, flash: Option<&Flash>) {
    out.push_str(
        r#"<header><h1><a href="/arbiter">boardscribe: arbiter</a></h1><nav><a href="/arbiter">all boards</a> · <a href="/arbiter?attention=1">needs attention</a></nav>
<label><input type="checkbox" id="sound"> sound</label>
<form method="post" action="/arbiter/logout"><button type="submit">Log out</button></form></header>
<div id="alert-signal" role="alert" hidden><strong>New alert:</strong> <span></span> (tap to dismiss)</div>"#,
    );
    if let Some(f) = flash {
        let _ = write!(
            out,
            r#"<p class="flash{}" role="status">{}</p>"#,
            if f.error { " error" } else { "" },
            escape(&f.text)
        );
    }
}

/// The login form; `error` says why the last try failed.
pub fn login_html(error: Option<&str>) -> String {
    let error = error.map_or(String::new(), |e| {
        format!(r#"<p class="error" role="alert">{}</p>"#, escape(e))
    });
    let main = format!(
        r#"<form class="login" method="post" action="/arbiter/login"><h1>boardscribe: arbiter</h1>{error}
<label>Admin token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<label>Your name (for the record) <input type="text" name="name" autocomplete="name" maxlength="80"></label>
<button type="submit">Log in</button></form>"#
    );
    page("boardscribe: arbiter login", &main, false)
}

/// The boards sorted by number (unnumbered ones after, by name).
fn sorted(views: &[BoardView]) -> Vec<&BoardView> {
    let mut boards: Vec<&BoardView> = views.iter().collect();
    boards.sort_by(|a, b| {
        (a.live.number.is_none(), a.live.number, &a.live.name).cmp(&(
            b.live.number.is_none(),
            b.live.number,
            &b.live.name,
        ))
    });
    boards
}

/// The console's page for a board: `/arbiter/boards/N`, else by name.
pub fn board_href(v: &BoardView) -> String {
    match v.live.number {
        Some(n) => format!("/arbiter/boards/{n}"),
        None => format!("/arbiter/boards/{}", url_encode(&v.live.name)),
    }
}

/// `text` for a URL's path or query: unreserved bytes as they are, the others `%XX`.
pub fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// One open alert as a list item, with its ruling form when the alert is an irregularity;
/// `back` is the page the form returns to.
pub(crate) fn alert_item(out: &mut String, v: &BoardView, a: &Alert, back: &str) {
    let title = board_title(&v.live);
    let _ = write!(
        out,
        r#"<li class="alert" data-alert="{id}" data-board-title="{title}"><a href="{href}">{title}</a>: <span class="article">{article}</span> {detail}{penalty}{count}"#,
        id = escape(&a.id),
        title = escape(&title),
        href = escape(&board_href(v)),
        article = escape(a.article.as_deref().unwrap_or("")),
        detail = escape(&a.detail),
        penalty = a.penalty_due.as_deref().map_or(String::new(), |p| format!(
            r#" — <span class="penalty">penalty due: {}</span>"#,
            escape(p)
        )),
        count = if a.count > 1 {
            format!(" (×{})", a.count)
        } else {
            String::new()
        },
    );
    rulings::rule_form(out, a, v.live.ply, back);
    out.push_str("</li>");
}

/// One of the event's own alerts: the hall, what is wrong and what to do (the console's script
/// signals it as any other alert).
fn event_alert_item(out: &mut String, a: &EventAlert) {
    let _ = write!(
        out,
        r#"<li class="alert event-alert" data-alert="{id}" data-kind="{kind}" data-board-title="hall {hall}"><strong>Hall {hall}</strong>: {detail}. <span class="advice">What to do: {advice}.</span></li>"#,
        id = escape(&a.id),
        kind = escape(&a.kind),
        hall = escape(&a.hall),
        detail = escape(&a.detail),
        advice = escape(&a.advice),
    );
}

/// The part of the console the script refreshes: the event's own alerts (a hall's faults, at
/// the event node), the open alerts, then the hall.
pub fn hall_live_html(views: &[BoardView], event: &[EventAlert], attention_only: bool) -> String {
    let boards = sorted(views);
    let open: Vec<(&BoardView, &Alert)> = boards
        .iter()
        .flat_map(|v| {
            v.alerts
                .iter()
                .filter(|a| a.state == AlertState::Open)
                .map(move |a| (*v, a))
        })
        .collect();
    let back = if attention_only {
        "/arbiter?attention=1"
    } else {
        "/arbiter"
    };
    let mut out = String::new();
    store_banner(&mut out, &boards);
    let count = open.len() + event.len();
    let _ = write!(
        out,
        r#"<section class="alerts" data-open="{count}"><h2>Alerts ({count})</h2><ul>"#,
    );
    for a in event {
        event_alert_item(&mut out, a);
    }
    for (v, a) in &open {
        alert_item(&mut out, v, a, back);
    }
    out.push_str("</ul></section>");
    out.push_str(
        r#"<table class="hall"><thead><tr><th>Board</th><th>Players</th><th>Move</th><th class="clock">White</th><th class="clock">Black</th><th>State</th></tr></thead><tbody>"#,
    );
    for v in boards {
        let state = board_state(v);
        if attention_only && !state.needs_attention() {
            continue;
        }
        let b = &v.live;
        let clock = |ms: Option<u64>| ms.map_or(String::new(), clock_text);
        let _ = write!(
            out,
            r#"<tr class="state-{class}" data-board="{name}" data-number="{number}"><td><a class="board" href="{href}">{title}</a></td><td class="players">{white} – {black}</td><td>{mv}</td><td class="clock">{wc}</td><td class="clock">{bc}</td><td class="state">{state}{result}</td></tr>"#,
            class = state.as_str().replace(' ', "-"),
            name = escape(&b.name),
            number = b.number.map_or(String::new(), |n| n.to_string()),
            href = escape(&board_href(v)),
            title = escape(&board_title(b)),
            white = escape(&v.white_label),
            black = escape(&v.black_label),
            mv = escape(&last_move_text(b)),
            wc = clock(b.clock.map(|c| c.white_ms)),
            bc = clock(b.clock.map(|c| c.black_ms)),
            state = state.as_str(),
            result = b
                .result
                .as_deref()
                .map_or(String::new(), |r| format!(" {}", escape(r))),
        );
    }
    out.push_str("</tbody></table>");
    out
}

/// The round's part of the console: where the event stands, start the next round, import a
/// round's pairings (a CSV or TRF file).
fn round_section(out: &mut String, round: &RoundLine) {
    out.push_str(r#"<section class="round"><h2>Round</h2><p>"#);
    match (round.current, &round.started) {
        (Some(n), Some(started)) => {
            let _ = write!(
                out,
                r#"Round <span class="current-round">{n}</span> is current (started {}). <a href="/rounds/{n}.pgn">Round {n} PGN</a>"#,
                escape(started)
            );
        }
        (Some(n), None) => {
            let _ = write!(
                out,
                r#"Round <span class="current-round">{n}</span> is current. <a href="/rounds/{n}.pgn">Round {n} PGN</a>"#
            );
        }
        (None, _) => out.push_str("No round has started."),
    }
    let next = round.next;
    let _ = write!(
        out,
        r#"</p><form class="round-start" method="post" action="/arbiter/rounds/start"><label>Start round <input type="number" name="round" min="1" value="{next}" required></label><button type="submit">Start round</button></form>
<form class="pairings" method="post" action="/arbiter/pairings" enctype="multipart/form-data"><label>Pairings for round <input type="number" name="round" min="1" value="{next}" required></label>
<label>Format <select name="format"><option value="auto">by file name</option><option value="csv">CSV</option><option value="trf">TRF</option></select></label>
<input type="file" name="file" accept=".csv,.trf,.trfx,.txt" required><button type="submit">Import pairings</button></form></section>"#
    );
}

/// While the store refuses a board's writes (a full disk, a read-only or damaged database):
/// a banner above everything, with the store's reason, the boards whose recording is
/// suspended, and what it means for the arbiter's decisions.
fn store_banner(out: &mut String, boards: &[&BoardView]) {
    let refused: Vec<&BoardView> = boards
        .iter()
        .copied()
        .filter(|v| v.live.store_error.is_some())
        .collect();
    let Some(first) = refused.first() else {
        return;
    };
    let names: Vec<String> = refused.iter().map(|v| escape(&v.live.name)).collect();
    let _ = write!(
        out,
        r#"<p class="flash error store-refuses" role="alert"><strong>The record cannot be written:</strong> {}. Recording is suspended on {}; the boards' moves are kept and written when the store takes writes again. Decisions are refused until then (nothing is kept half-done): free disk space, or restore the database, then take them again.</p>"#,
        escape(first.live.store_error.as_deref().unwrap_or_default()),
        names.join(", ")
    );
}

/// The console: the open alerts, then every board, sorted by number (unnumbered by name);
/// `attention_only` keeps the boards that need the arbiter; then the round's forms.
pub fn console_html(p: &HallPage<'_>) -> String {
    let mut main = String::new();
    header(&mut main, p.flash.as_ref());
    main.push_str(r#"<main><div id="live">"#);
    main.push_str(&hall_live_html(p.views, p.event_alerts, p.attention_only));
    main.push_str("</div>");
    round_section(&mut main, &p.round);
    main.push_str("</main>");
    page("boardscribe: arbiter", &main, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::{live::BoardLive, view::Seats};

    fn view(name: &str, number: u32, lost: bool) -> BoardView {
        let mut live = BoardLive::new(name, Some(number), &[]).snapshot();
        if lost {
            live.connection = Connection::Lost;
        }
        BoardView::new(live, None, Seats::default())
    }

    #[test]
    fn a_store_that_refuses_writes_is_a_banner_with_its_reason() {
        let mut views = [view("b1", 1, false), view("b2", 2, false)];
        let calm = hall_live_html(&views, &[], false);
        assert!(!calm.contains("store-refuses"), "{calm}");
        views[1].live.store_error = Some("database or disk is full <disk>".into());
        let html = hall_live_html(&views, &[], false);
        let banner = html.find("store-refuses").expect("a banner");
        assert!(banner < html.find("Alerts").unwrap());
        assert!(
            html.contains("database or disk is full &lt;disk&gt;. Recording is suspended on b2;")
        );
    }

    #[test]
    fn the_events_own_alerts_come_first_counted_and_signalled_as_alerts() {
        let views = [view("b1", 1, false)];
        let fault = EventAlert {
            id: "hall-B-silent".into(),
            kind: "hall_silent".into(),
            hall: "B".into(),
            since_ms: 1,
            detail: "hall B has not been heard since 10:00:00 UTC".into(),
            advice: "check <the> PC".into(),
        };
        let html = hall_live_html(&views, std::slice::from_ref(&fault), false);
        assert!(
            html.contains(r#"data-open="1"><h2>Alerts (1)</h2>"#),
            "{html}"
        );
        assert!(html.contains(
            r#"<li class="alert event-alert" data-alert="hall-B-silent" data-kind="hall_silent" data-board-title="hall B"><strong>Hall B</strong>: hall B has not been heard since 10:00:00 UTC. <span class="advice">What to do: check &lt;the&gt; PC.</span></li>"#
        ));
    }

    #[test]
    fn boards_are_sorted_by_number_with_their_state_and_unplugged_ones_need_attention() {
        let views = [
            view("b12", 12, false),
            view("b3", 3, true),
            view("b7", 7, false),
        ];
        let html = console_html(&HallPage {
            views: &views,
            event_alerts: &[],
            attention_only: false,
            round: RoundLine::default(),
            flash: None,
        });
        let at = |s: &str| html.find(s).unwrap();
        assert!(at(r#"data-board="b3""#) < at(r#"data-board="b7""#));
        assert!(at(r#"data-board="b7""#) < at(r#"data-board="b12""#));
        assert!(html.contains(r#"<tr class="state-unplugged" data-board="b3" data-number="3">"#));
        assert!(html.contains(r#"<tr class="state-waiting" data-board="b7" data-number="7">"#));
        assert!(html.contains(r#"href="/arbiter/boards/12""#));
        let attention = hall_live_html(&views, &[], true);
        assert!(attention.contains(r#"data-board="b3""#));
        assert!(!attention.contains(r#"data-board="b7""#));
    }

    #[test]
    fn the_page_loads_its_script_and_shows_the_flash_and_the_round_forms() {
        let views = [view("b1", 1, false)];
        let html = console_html(&HallPage {
            views: &views,
            event_alerts: &[],
            attention_only: false,
            round: RoundLine {
                current: Some(2),
                started: Some("2026-12-02 10:00:00 by Chief".into()),
                next: 3,
            },
            flash: Some(Flash {
                text: "board 1: <b>".into(),
                error: true,
            }),
        });
        assert!(html.contains(r#"<script src="/arbiter/console.js" defer></script>"#));
        assert!(!html.contains("<script>"), "no inline script");
        assert!(html.contains(r#"<p class="flash error" role="status">board 1: &lt;b&gt;</p>"#));
        assert!(html.contains(r#"<span class="current-round">2</span>"#));
        assert!(html.contains(r#"name="round" min="1" value="3""#));
        assert!(html.contains(r#"enctype="multipart/form-data""#));
    }

    #[test]
    fn names_are_encoded_for_urls() {
        assert_eq!(url_encode("a b/ü?&"), "a%20b%2F%C3%BC%3F%26");
        assert_eq!(url_encode("board-1_x.y~"), "board-1_x.y~");
    }
}
