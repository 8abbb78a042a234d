//! The arbiter's console at `/arbiter` (first step): the login form, and the hall as a compact
//! table sorted by board number — board, players, move, both clocks and a state (waiting,
//! playing, irregular, unplugged, finished, result to confirm) — with the open alerts and their
//! articles above it. Flow: the server builds the arbiter's [`BoardView`]s (with alerts) and
//! renders them here with pure functions; the page reloads itself every few seconds. The actions
//! (rule, set a result, correct, start a round, upload pairings) are the admin API's, which the
//! console's session cookie also opens. No external assets.

use std::fmt::Write as _;

use super::{
    alerts::{Alert, AlertState},
    live::Connection,
    page::{board_title, clock_text, escape, last_move_text},
    view::BoardView,
};

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

const STYLE: &str = "body{font:15px system-ui,sans-serif;margin:0;background:#fafafa}\
header{display:flex;gap:1em;align-items:center;padding:.5em 1em;background:#263238;color:#fff}\
header h1{font-size:1.1em;margin:0}main{padding:.5em}\
table{border-collapse:collapse;width:100%;background:#fff}\
th,td{padding:.3em .5em;border-bottom:1px solid #ddd;text-align:left;white-space:nowrap}\
td.players{white-space:normal}tr.state-irregular{background:#ffebee}\
tr.state-unplugged{background:#eceff1;color:#546e7a}tr.state-result-to-confirm{background:#fff8e1}\
tr.state-finished{color:#2e7d32}.alerts li{margin:.2em 0}.article{font-weight:bold}\
form.login{max-width:22em;margin:3em auto;display:flex;flex-direction:column;gap:.6em}\
.error{color:#b71c1c}@media (max-width:600px){td.clock,th.clock{display:none}}";

fn page(title: &str, main: &str, refresh: bool) -> String {
    let refresh = if refresh {
        r#"<meta http-equiv="refresh" content="5">"#
    } else {
        ""
    };
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">{refresh}
<title>{title}</title><style>{STYLE}</style></head>
<body data-page="arbiter">{main}</body></html>
"#,
        title = escape(title),
    )
}

/// The login form; `error` says why the last try failed.
pub fn login_html(error: Option<&str>) -> String {
    let error = error.map_or(String::new(), |e| {
        format!(r#"<p class="error" role="alert">{}</p>"#, escape(e))
    });
    let main = format!(
        r#"<form class="login" method="post" action="/arbiter/login"><h1>boardscribe: arbiter</h1>{error}
<label>Admin token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<button type="submit">Log in</button></form>"#
    );
    page("boardscribe: arbiter login", &main, false)
}

/// The console: the open alerts, then every board, sorted by number (unnumbered by name);
/// `attention_only` keeps the boards that need the arbiter.
pub fn console_html(views: &[BoardView], attention_only: bool) -> String {
    let mut boards: Vec<&BoardView> = views.iter().collect();
    boards.sort_by(|a, b| {
        (a.live.number.is_none(), a.live.number, &a.live.name).cmp(&(
            b.live.number.is_none(),
            b.live.number,
            &b.live.name,
        ))
    });
    let open: Vec<(&BoardView, &Alert)> = boards
        .iter()
        .flat_map(|v| {
            v.alerts
                .iter()
                .filter(|a| a.state == AlertState::Open)
                .map(move |a| (*v, a))
        })
        .collect();
    let mut main = String::from(
        r#"<header><h1>boardscribe: arbiter</h1><nav><a href="/arbiter">all boards</a> · <a href="/arbiter?attention=1">needs attention</a></nav>
<form method="post" action="/arbiter/logout"><button type="submit">Log out</button></form></header><main>"#,
    );
    let _ = write!(
        main,
        r#"<section class="alerts" data-open="{}"><h2>Alerts ({})</h2><ul>"#,
        open.len(),
        open.len()
    );
    for (v, a) in &open {
        let _ = write!(
            main,
            r#"<li class="alert" data-alert="{}">{}: <span class="article">{}</span> {}{}{}</li>"#,
            escape(&a.id),
            escape(&board_title(&v.live)),
            escape(a.article.as_deref().unwrap_or("")),
            escape(&a.detail),
            a.penalty_due
                .as_deref()
                .map_or(String::new(), |p| format!(" — {}", escape(p))),
            if a.count > 1 {
                format!(" (×{})", a.count)
            } else {
                String::new()
            },
        );
    }
    main.push_str("</ul></section>");
    main.push_str(
        r#"<table class="hall"><thead><tr><th>Board</th><th>Players</th><th>Move</th><th class="clock">White</th><th class="clock">Black</th><th>State</th></tr></thead><tbody>"#,
    );
    for v in boards {
        let state = board_state(v);
        if attention_only && !state.needs_attention() {
            continue;
        }
        let b = &v.live;
        let mv = last_move_text(b);
        let clock = |ms: Option<u64>| ms.map_or(String::new(), clock_text);
        let _ = write!(
            main,
            r#"<tr class="state-{class}" data-board="{name}"><td>{title}</td><td class="players">{white} – {black}</td><td>{mv}</td><td class="clock">{wc}</td><td class="clock">{bc}</td><td class="state">{state}{result}</td></tr>"#,
            class = state.as_str().replace(' ', "-"),
            name = escape(&b.name),
            title = escape(&board_title(&v.live)),
            white = escape(&v.white_label),
            black = escape(&v.black_label),
            mv = escape(&mv),
            wc = clock(b.clock.map(|c| c.white_ms)),
            bc = clock(b.clock.map(|c| c.black_ms)),
            state = state.as_str(),
            result = b
                .result
                .as_deref()
                .map_or(String::new(), |r| format!(" {}", escape(r))),
        );
    }
    main.push_str("</tbody></table></main>");
    page("boardscribe: arbiter", &main, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::{live::BoardLive, view::Seats};

    #[test]
    fn boards_are_sorted_by_number_with_their_state_and_unplugged_ones_need_attention() {
        let view = |name: &str, number: u32, lost: bool| {
            let mut live = BoardLive::new(name, Some(number), &[]).snapshot();
            if lost {
                live.connection = Connection::Lost;
            }
            BoardView::new(live, None, Seats::default())
        };
        let views = [
            view("b12", 12, false),
            view("b3", 3, true),
            view("b7", 7, false),
        ];
        let html = console_html(&views, false);
        let at = |s: &str| html.find(s).unwrap();
        assert!(at(r#"data-board="b3""#) < at(r#"data-board="b7""#));
        assert!(at(r#"data-board="b7""#) < at(r#"data-board="b12""#));
        assert!(html.contains(r#"<tr class="state-unplugged" data-board="b3">"#));
        assert!(html.contains(r#"<tr class="state-waiting" data-board="b7">"#));
        let attention = console_html(&views, true);
        assert!(attention.contains(r#"data-board="b3""#));
        assert!(!attention.contains(r#"data-board="b7""#));
    }
}
