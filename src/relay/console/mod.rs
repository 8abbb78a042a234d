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
pub mod calibrate;
pub mod decisions;
pub mod resume;
pub mod round_start;
pub mod rulings;
pub mod spectators;

use std::fmt::Write as _;

use super::{
    alerts::{Alert, AlertState, EventAlert},
    live::Connection,
    page::{board_title_in, clock_text, escape, language_switch, last_move_text, player_html},
    view::BoardView,
};
use crate::{
    lang::{Lang, record::kind_title},
    tracker::Side,
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
    /// Its name in the page's markup (a class, a test's handle): never translated.
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

    /// Its name for the arbiter, in `lang`.
    pub fn words(self, lang: Lang) -> &'static str {
        lang.text(match self {
            BoardState::Waiting => "arbiter.state_waiting",
            BoardState::Playing => "arbiter.state_playing",
            BoardState::Irregular => "arbiter.state_irregular",
            BoardState::Unplugged => "arbiter.state_unplugged",
            BoardState::Finished => "arbiter.state_finished",
            BoardState::ResultToConfirm => "arbiter.state_result_to_confirm",
        })
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

/// The round as the console shows it: the current one, when and by whom it started, and the
/// next one's number for the forms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundLine {
    pub current: Option<u32>,
    /// When (the local time, in words) and by whom.
    pub started: Option<(String, String)>,
    pub next: u32,
    /// The round start that can be undone (the round, and the one current again after).
    pub undo: Option<(u32, u32)>,
    /// The import of pairings that can be undone (its round, and how many boards it set).
    pub import_undo: Option<(u32, u32)>,
}

/// The console's main page.
pub struct HallPage<'a> {
    pub views: &'a [BoardView],
    /// The event's own alerts (the halls' faults, at the event node).
    pub event_alerts: &'a [EventAlert],
    pub attention_only: bool,
    pub round: RoundLine,
    /// The live page's address for spectators (the host the console was reached at).
    pub spectators: Option<String>,
    pub flash: Option<Flash>,
    pub lang: Lang,
}

/// The console's style; the boards are drawn as the live page draws them (`boards.css`).
const STYLE: &str = concat!(
    "body{font:15px system-ui,sans-serif;margin:0;background:#fafafa}\
header{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:center;padding:.5em 1em;background:#263238;color:#fff}\
header a{color:#fff}header h1{font-size:1.1em;margin:0}header form{margin:0}main{padding:.5em}\
nav.langs{display:flex;flex-wrap:wrap;gap:.2em .6em;font-size:.8em}nav.langs a{color:#9bd;text-decoration:none}\
nav.langs a[aria-current]{color:#fff;font-weight:bold}\
body.alerting header{background:#b71c1c}\
#alert-signal{position:sticky;top:0;z-index:2;background:#b71c1c;color:#fff;padding:.5em 1em;cursor:pointer}\
table{border-collapse:collapse;width:100%;background:#fff}\
th,td{padding:.3em .5em;border-bottom:1px solid #ddd;text-align:start;white-space:nowrap}\
td.players{white-space:normal}tr.state-irregular{background:#ffebee}\
tr.state-unplugged{background:#eceff1;color:#546e7a}tr.state-result-to-confirm{background:#fff8e1}\
tr.state-finished{color:#2e7d32}.alerts ul{padding-inline-start:1.2em}.alerts li{margin:.4em 0}\
.article{font-weight:bold}.penalty{color:#b71c1c}.detail{color:#455a64}\
.san,.clock,td.move{direction:ltr;unicode-bidi:isolate}\
form.rule,form.inline{display:inline-flex;flex-wrap:wrap;gap:.3em;align-items:center;margin:.2em 0}\
section.round form,section.actions form{display:flex;flex-wrap:wrap;gap:.4em;align-items:center;margin:.5em 0}\
section{margin:.5em 0 1em}h2{font-size:1.05em;margin:.6em 0 .3em}\
input,select,button,textarea{font:inherit;max-width:100%}textarea,input.note-text{width:100%;box-sizing:border-box}\
ol.moves{columns:12em;padding-inline-start:2.5em}ol.history{padding-inline-start:1.2em}ol.history li{margin:.2em 0}\
.flash{padding:.5em 1em;margin:0;background:#e8f5e9}.flash.error{background:#ffebee;color:#b71c1c}\
form.login{max-width:22em;margin:3em auto;display:flex;flex-direction:column;gap:.6em;padding:0 1em}\
.error{color:#b71c1c}.qr svg{width:10em;height:auto}.qr{margin:.3em 0}.diagrams{display:flex;flex-wrap:wrap;gap:1em;margin:.4em 0}\
.diagrams figure{margin:0;width:min(16em,45vw)}.diagrams svg{width:100%;height:auto}\
form.resume{display:flex;flex-wrap:wrap;gap:.4em;align-items:center;margin:.4em 0}form.calibrate.inline{margin-inline-start:.5em}\
@media (max-width:600px){td.clock,th.clock{display:none}main{padding:.2em}\
th,td{padding:.3em .3em}select{width:100%}}",
    include_str!("../assets/boards.css")
);

/// A whole page in `lang`: the head (style, script, a reload without script when `live`),
/// then `main`.
fn page(title: &str, main: &str, live: bool, lang: Lang) -> String {
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
<html lang="{code}" dir="{dir}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">{reload}
<title>{title}</title><style>{STYLE}</style>{script}</head>
<body data-page="arbiter">{main}</body></html>
"#,
        code = lang.code(),
        dir = lang.dir(),
        title = escape(title),
    )
}

/// The header every console page has: the title, the hall's two views, the sound switch, the
/// logout and the languages (`path`: the page's own); then the new-alert signal (hidden until
/// the script shows it) and the flash.
fn header(out: &mut String, flash: Option<&Flash>, path: &str, lang: Lang) {
    let _ = write!(
        out,
        r#"<header><h1><a href="/arbiter">{title}</a></h1><nav><a href="/arbiter">{all}</a> · <a href="/arbiter?attention=1">{attention}</a> · <a href="/arbiter/decisions">{decisions}</a></nav>
<label><input type="checkbox" id="sound"> {sound}</label>
<form method="post" action="/arbiter/logout"><button type="submit">{logout}</button></form>{langs}</header>
<div id="alert-signal" role="alert" hidden><strong>{new_alert}</strong> <span></span> {dismiss}</div>"#,
        title = escape(lang.text("arbiter.title")),
        all = escape(lang.text("arbiter.all_boards")),
        attention = escape(lang.text("arbiter.needs_attention")),
        decisions = escape(lang.text("arbiter.decisions_link")),
        sound = escape(lang.text("arbiter.sound")),
        logout = escape(lang.text("arbiter.log_out")),
        langs = language_switch(path, lang),
        new_alert = escape(lang.text("arbiter.new_alert")),
        dismiss = escape(lang.text("arbiter.dismiss")),
    );
    if let Some(f) = flash {
        let _ = write!(
            out,
            r#"<p class="flash{}" role="status" dir="auto">{}</p>"#,
            if f.error { " error" } else { "" },
            escape(&f.text)
        );
    }
}

/// Why a login failed, for the form to say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoginError {
    WrongToken,
    /// The server has no admin token: the console is off.
    NoToken,
}

/// The login form in `lang`; `error` says why the last try failed. The language goes with the
/// login into the session.
pub fn login_html(error: Option<LoginError>, lang: Lang) -> String {
    let error = error.map_or(String::new(), |e| {
        let key = match e {
            LoginError::WrongToken => "arbiter.wrong_token",
            LoginError::NoToken => "arbiter.no_token",
        };
        format!(
            r#"<p class="error" role="alert">{}</p>"#,
            escape(lang.text(key))
        )
    });
    let main = format!(
        r#"<form class="login" method="post" action="/arbiter/login"><h1>{title}</h1>{error}
<label>{token} <input type="password" name="token" autocomplete="current-password" required autofocus></label>
<label>{name} <input type="text" name="name" autocomplete="name" maxlength="80" dir="auto"></label>
<input type="hidden" name="lang" value="{code}">
<button type="submit">{log_in}</button></form>{langs}"#,
        title = escape(lang.text("arbiter.title")),
        token = escape(lang.text("arbiter.token")),
        name = escape(lang.text("arbiter.your_name")),
        code = lang.code(),
        log_in = escape(lang.text("arbiter.log_in")),
        langs = language_switch("/arbiter", lang),
    );
    page(lang.text("arbiter.login_title"), &main, false, lang)
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

/// One open alert as a list item, in `lang`, with its ruling form when the alert is an
/// irregularity; `back` is the page the form returns to. Everything is in `lang`: the kind, the
/// article, the move and side, the detail and the penalty (worded from the record's phrases;
/// a record kept before its phrases were shows its English), the detail isolated
/// (`dir="auto"`).
pub(crate) fn alert_item(out: &mut String, v: &BoardView, a: &Alert, back: &str, lang: Lang) {
    let title = board_title_in(&v.live, lang);
    let article = a.article.as_deref().map_or(String::new(), |art| {
        format!(
            r#"<span class="article">{}</span> "#,
            escape(&lang.fill("sheet.article", &[("article", art)]))
        )
    });
    let when = a.ply.map_or(String::new(), |p| {
        format!(
            r#" <span class="when">{}</span>"#,
            escape(&lang.before_ply(Some(p), v.live.kind))
        )
    });
    let words = lang.said(v.live.kind);
    let detail = a.detail_in(lang, &words);
    // Worded from the record's phrase, the detail runs the language's way (a Persian one
    // begins with a square); the record's English, or a system's words, find their own.
    let dir = if a.detail_phrase.is_some() {
        lang.dir()
    } else {
        "auto"
    };
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(
            r#": <span class="detail" dir="{dir}">{}</span>"#,
            escape(&detail)
        )
    };
    let _ = write!(
        out,
        r#"<li class="alert" data-alert="{id}" data-kind="{kind}" data-board-title="{title}"><a href="{href}">{title}</a>: {article}<strong class="kind">{what}</strong>{when}{detail}{penalty}{count}"#,
        id = escape(&a.id),
        kind = escape(&a.kind),
        title = escape(&title),
        href = escape(&board_href(v)),
        what = escape(&kind_title(&a.kind, v.live.kind, lang)),
        penalty = a.penalty_in(&words).map_or(String::new(), |p| format!(
            r#" — <span class="penalty">{}</span> <span class="detail" dir="auto">{}</span>"#,
            escape(lang.text("arbiter.penalty_due")),
            escape(&p)
        )),
        count = if a.count > 1 {
            format!(" (×{})", a.count)
        } else {
            String::new()
        },
    );
    rulings::rule_form(out, a, v.live.ply, v.live.kind, back, lang);
    resume::lost_thread_part(out, v, a, lang);
    out.push_str("</li>");
}

/// One of the event's own alerts: the hall, what is wrong and what to do, in `lang` (its fault
/// worded there; the commands, settings, reasons and times as they are), each isolated
/// (`dir="auto"`); the console's script signals it as any other alert.
fn event_alert_item(out: &mut String, a: &EventAlert, lang: Lang) {
    let hall = lang.fill("arbiter.hall", &[("hall", &a.hall)]);
    let _ = write!(
        out,
        r#"<li class="alert event-alert" data-alert="{id}" data-kind="{kind}" data-board-title="{hall}"><strong>{hall}</strong>: <span class="detail" dir="auto">{detail}</span>. <span class="advice">{what_to_do} <span dir="auto">{advice}</span>.</span></li>"#,
        id = escape(&a.id),
        kind = escape(&a.kind),
        hall = escape(&hall),
        detail = escape(&a.detail_in(lang)),
        what_to_do = escape(lang.text("arbiter.what_to_do")),
        advice = escape(&a.advice_in(lang)),
    );
}

/// A player as the console writes them: title, the name isolated, rating.
fn player_label(v: &BoardView, side: Side, lang: Lang) -> String {
    player_html(
        match side {
            Side::White => v.white_player.as_ref(),
            Side::Black => v.black_player.as_ref(),
        },
        side,
        v.live.kind,
        lang,
    )
}

/// The part of the console the script refreshes: the event's own alerts (a hall's faults, at
/// the event node), the open alerts, then the hall; in `lang`.
pub fn hall_live_html(
    views: &[BoardView],
    event: &[EventAlert],
    attention_only: bool,
    lang: Lang,
) -> String {
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
    store_banner(&mut out, &boards, lang);
    let count = open.len() + event.len();
    let _ = write!(
        out,
        r#"<section class="alerts" data-open="{count}"><h2>{}</h2><ul>"#,
        escape(&lang.fill("arbiter.alerts", &[("count", &count.to_string())])),
    );
    for a in event {
        event_alert_item(&mut out, a, lang);
    }
    for (v, a) in &open {
        alert_item(&mut out, v, a, back, lang);
    }
    out.push_str("</ul></section>");
    let _ = write!(
        out,
        r#"<table class="hall"><thead><tr><th>{board}</th><th>{players}</th><th>{mv}</th><th class="clock">{white}</th><th class="clock">{black}</th><th>{state}</th></tr></thead><tbody>"#,
        board = escape(lang.text("sheet.board")),
        players = escape(lang.text("arbiter.players")),
        mv = escape(lang.text("arbiter.move")),
        white = escape(lang.text("sheet.white")),
        black = escape(lang.text("sheet.black")),
        state = escape(lang.text("arbiter.state")),
    );
    for v in boards {
        let state = board_state(v);
        if attention_only && !state.needs_attention() {
            continue;
        }
        let b = &v.live;
        let clock = |ms: Option<u64>| ms.map_or(String::new(), clock_text);
        // A board whose sensor learns it: calibrated again from its row.
        let mut calibrate = String::new();
        calibrate::calibrate_form(&mut calibrate, v, back, lang);
        let _ = write!(
            out,
            r#"<tr class="state-{class}" data-board="{name}" data-number="{number}"><td><a class="board" href="{href}">{title}</a></td><td class="players">{white} – {black}</td><td class="move">{mv}</td><td class="clock">{wc}</td><td class="clock">{bc}</td><td class="state">{state}{result}{calibrate}</td></tr>"#,
            class = state.as_str().replace(' ', "-"),
            name = escape(&b.name),
            number = b.number.map_or(String::new(), |n| n.to_string()),
            href = escape(&board_href(v)),
            title = escape(&board_title_in(b, lang)),
            white = player_label(v, Side::White, lang),
            black = player_label(v, Side::Black, lang),
            mv = escape(&last_move_text(b)),
            wc = clock(b.clock.map(|c| c.white_ms)),
            bc = clock(b.clock.map(|c| c.black_ms)),
            state = escape(state.words(lang)),
            result = b.result.as_deref().map_or(String::new(), |r| format!(
                r#" <span class="san">{}</span>"#,
                escape(r)
            )),
        );
    }
    out.push_str("</tbody></table>");
    out
}

/// The round's part of the console: where the event stands, start the next round, import a
/// round's pairings (a CSV or TRF file).
fn round_section(out: &mut String, round: &RoundLine, lang: Lang) {
    let _ = write!(
        out,
        r#"<section class="round"><h2>{}</h2><p>"#,
        escape(lang.text("sheet.round"))
    );
    match round.current {
        Some(n) => {
            let number = format!(r#"<span class="current-round">{n}</span>"#);
            let _ = write!(
                out,
                "{}",
                escape(lang.text("arbiter.round_current")).replace("{round}", &number)
            );
            if let Some((when, who)) = &round.started {
                let _ = write!(
                    out,
                    " {}",
                    escape(&lang.fill("arbiter.round_started", &[("when", when), ("who", who)]))
                );
            }
            let _ = write!(
                out,
                r#" <a href="/rounds/{n}.pgn">{}</a> · {} <a class="sheets" href="/arbiter/sheets/{n}.html?lang={code}">HTML</a> <a class="sheets" href="/arbiter/sheets/{n}.pdf?lang={code}">PDF</a>"#,
                escape(&lang.fill("arbiter.round_pgn", &[("round", &n.to_string())])),
                escape(&lang.fill("arbiter.round_sheets", &[("round", &n.to_string())])),
                code = lang.code(),
            );
            let _ = write!(
                out,
                r#" · <a href="/arbiter/standings">{}</a>"#,
                escape(lang.text("standings.title"))
            );
        }
        None => out.push_str(&escape(lang.text("arbiter.no_round"))),
    }
    if let Some((undone, back)) = round.undo {
        let _ = write!(
            out,
            r#" <form class="round-undo" method="post" action="/arbiter/rounds/undo"><input type="hidden" name="round" value="{undone}"><button type="submit">{}</button></form>"#,
            escape(&lang.fill(
                "arbiter.undo_round",
                &[
                    ("round", &undone.to_string()),
                    ("previous", &back.to_string())
                ]
            ))
        );
    }
    if let Some((paired, boards)) = round.import_undo {
        let _ = write!(
            out,
            r#" <form class="pairings-undo" method="post" action="/arbiter/pairings/undo"><input type="hidden" name="round" value="{paired}"><button type="submit">{}</button></form>"#,
            escape(&lang.fill(
                "arbiter.undo_import",
                &[
                    ("round", &paired.to_string()),
                    ("boards", &boards.to_string())
                ]
            ))
        );
    }
    let next = round.next;
    let _ = write!(
        out,
        r#"</p><form class="round-start" method="post" action="/arbiter/rounds/start"><label>{start_label} <input type="number" name="round" min="1" value="{next}" required></label><button type="submit">{start}</button></form>
<form class="pairings" method="post" action="/arbiter/pairings" enctype="multipart/form-data"><label>{pairings_for} <input type="number" name="round" min="1" value="{next}" required></label>
<label>{format} <select name="format"><option value="auto">{by_name}</option><option value="csv">CSV</option><option value="trf">TRF</option></select></label>
<input type="file" name="file" accept=".csv,.trf,.trfx,.txt" required><button type="submit">{import}</button></form></section>"#,
        start_label = escape(lang.text("arbiter.start_round_label")),
        start = escape(lang.text("arbiter.start_round")),
        pairings_for = escape(lang.text("arbiter.pairings_for")),
        format = escape(lang.text("arbiter.format")),
        by_name = escape(lang.text("arbiter.by_file_name")),
        import = escape(lang.text("arbiter.import_pairings")),
    );
}

/// While the store refuses a board's writes (a full disk, a read-only or damaged database):
/// a banner above everything, with the store's reason, the boards whose recording is
/// suspended, and what it means for the arbiter's decisions.
fn store_banner(out: &mut String, boards: &[&BoardView], lang: Lang) {
    let refused: Vec<&BoardView> = boards
        .iter()
        .copied()
        .filter(|v| v.live.store_error.is_some())
        .collect();
    let Some(first) = refused.first() else {
        return;
    };
    let names: Vec<String> = refused.iter().map(|v| v.live.name.clone()).collect();
    let _ = write!(
        out,
        r#"<p class="flash error store-refuses" role="alert"><strong>{head}</strong> <span dir="auto">{reason}</span>. {rest}</p>"#,
        head = escape(lang.text("arbiter.store_refuses")),
        reason = escape(first.live.store_error.as_deref().unwrap_or_default()),
        rest = escape(&lang.fill(
            "arbiter.store_refuses_then",
            &[("boards", &names.join(", "))]
        )),
    );
}

/// The console in `lang`: the open alerts, then every board, sorted by number (unnumbered by
/// name); `attention_only` keeps the boards that need the arbiter; then the round's forms.
pub fn console_html(p: &HallPage<'_>) -> String {
    let lang = p.lang;
    let mut main = String::new();
    header(&mut main, p.flash.as_ref(), "/arbiter", lang);
    main.push_str(r#"<main><div id="live">"#);
    main.push_str(&hall_live_html(
        p.views,
        p.event_alerts,
        p.attention_only,
        lang,
    ));
    main.push_str("</div>");
    round_section(&mut main, &p.round, lang);
    if let Some(url) = &p.spectators {
        spectators::spectators_section(&mut main, url, lang);
    }
    main.push_str("</main>");
    page(lang.text("arbiter.title"), &main, true, lang)
}

/// The byes the console's standings page shows, and the round its form proposes.
pub struct ByesPanel<'a> {
    /// Every round's byes, by round.
    pub byes: &'a [(u32, crate::pairings::RoundBye)],
    /// The round the form proposes (the current one).
    pub round: u32,
}

/// The kinds of bye the console gives, by code, with their words' keys.
const BYE_KINDS: [(char, &str); 4] = [
    ('H', "arbiter.bye_half"),
    ('F', "arbiter.bye_full"),
    ('U', "arbiter.bye_pairing"),
    ('Z', "arbiter.bye_zero"),
];

/// The standings page of the console: the table with the crosstable, counting every result
/// (no delay), the event's TRF to download for the pairing program, and the byes: each with a
/// form that withdraws it, and a form that gives one (a player who asked for a half-point bye;
/// a CSV's round, which carries none).
pub fn standings_html(
    s: &crate::standings::Standings,
    byes: &ByesPanel<'_>,
    flash: Option<&Flash>,
    lang: Lang,
) -> String {
    use crate::relay::standings_page::{TABLE_STYLE, heading, table_html};
    let t = |key: &'static str| escape(lang.text(key));
    let mut main = String::new();
    header(&mut main, flash, "/arbiter/standings", lang);
    let _ = write!(
        main,
        r#"<main><style>{TABLE_STYLE}</style><h2>{}</h2><p><a href="/arbiter/standings.trf" download="standings.trf">{}</a></p>{}"#,
        escape(&heading(s, lang)),
        escape(lang.text("standings.trf")),
        table_html(s, lang),
    );
    let kind = |code: char| {
        BYE_KINDS
            .iter()
            .find(|(c, _)| *c == code)
            .map_or(String::new(), |(_, key)| escape(lang.text(key)))
    };
    let _ = write!(
        main,
        r#"<section class="byes"><h2>{}</h2><ul>"#,
        t("arbiter.byes_head")
    );
    for (round, bye) in byes.byes {
        let _ = write!(
            main,
            r#"<li data-round="{round}">{round_word} {round} · <bdi>{name}</bdi> · {kind}<form class="bye-withdraw" method="post" action="/arbiter/byes/withdraw"><input type="hidden" name="round" value="{round}"><input type="hidden" name="name" value="{name}"><button type="submit">{withdraw}</button></form></li>"#,
            round_word = t("sheet.round"),
            name = escape(&bye.name),
            kind = kind(bye.code),
            withdraw = t("arbiter.bye_withdraw"),
        );
    }
    let options: String = BYE_KINDS
        .iter()
        .map(|(code, key)| {
            format!(
                r#"<option value="{code}">{}</option>"#,
                escape(lang.text(key))
            )
        })
        .collect();
    let _ = write!(
        main,
        r#"</ul><form class="bye" method="post" action="/arbiter/byes"><label>{round_word} <input type="number" name="round" min="1" value="{round}" required inputmode="numeric" size="4"></label><input type="text" name="name" list="players" required maxlength="200" aria-label="{player}" placeholder="{player}" dir="auto"><select name="code" aria-label="{head}">{options}</select><button type="submit">{give}</button></form><datalist id="players">"#,
        round_word = t("sheet.round"),
        round = byes.round,
        player = t("standings.player"),
        head = t("arbiter.byes_head"),
        give = t("arbiter.bye_give"),
    );
    for row in &s.rows {
        let _ = write!(main, r#"<option value="{}">"#, escape(&row.entrant.name));
    }
    main.push_str("</datalist></section></main>");
    page(lang.text("standings.title"), &main, false, lang)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::{alerts::EventFault, live::BoardLive, view::Seats};

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
        let calm = hall_live_html(&views, &[], false, Lang::En);
        assert!(!calm.contains("store-refuses"), "{calm}");
        views[1].live.store_error = Some("database or disk is full <disk>".into());
        let html = hall_live_html(&views, &[], false, Lang::En);
        let banner = html.find("store-refuses").expect("a banner");
        assert!(banner < html.find("Alerts").unwrap());
        assert!(html.contains(
            r#"<span dir="auto">database or disk is full &lt;disk&gt;</span>. Recording is suspended on b2;"#
        ));
    }

    #[test]
    fn the_events_own_alerts_come_first_counted_and_signalled_as_alerts() {
        let views = [view("b1", 1, false)];
        let fault = EventAlert::new(
            EventFault::HallSilent {
                hall: "B".into(),
                since_ms: 36_000_000,
                heard: true,
            },
            36_000_000,
        );
        let html = hall_live_html(&views, std::slice::from_ref(&fault), false, Lang::En);
        assert!(
            html.contains(r#"data-open="1"><h2>Alerts (1)</h2>"#),
            "{html}"
        );
        assert!(html.contains(
            r#"<li class="alert event-alert" data-alert="hall-B-silent" data-kind="hall_silent" data-board-title="Hall B"><strong>Hall B</strong>: <span class="detail" dir="auto">hall B has not been heard since 10:00:00 UTC: its PC, its boardscribe or its network to the NATS servers is down</span>. <span class="advice">What to do: <span dir="auto">check the hall&#39;s PC, `systemctl status boardscribe` there and its network; the hall keeps recording into its own database meanwhile, and its records arrive when it is back. Watch its boards from the hall&#39;s own console until then</span>.</span></li>"#
        ), "{html}");
    }

    /// The event's alerts speak the console's language: Russian and Persian words, the hall's
    /// name in the table's words, the time, the command and the hall's reason as they are.
    #[test]
    fn the_events_own_alerts_speak_the_consoles_language() {
        let views = [view("b1", 1, false)];
        let alerts = [
            EventAlert::new(
                EventFault::HallSilent {
                    hall: "B".into(),
                    since_ms: 36_000_000,
                    heard: true,
                },
                36_000_000,
            ),
            EventAlert::new(
                EventFault::HallOutboxGrowing {
                    hall: "D".into(),
                    records: 40,
                    oldest_ms: 36_000_000,
                    waiting_ms: 12_000,
                    failure: Some("maximum messages exceeded <limit>".into()),
                },
                36_000_000,
            ),
        ];
        let ru = hall_live_html(&views, &alerts, false, Lang::Ru);
        assert!(ru.contains(
            r#"data-board-title="Зал B"><strong>Зал B</strong>: <span class="detail" dir="auto">зал B не выходит на связь с 10:00:00 UTC: не работает его компьютер, boardscribe на нём или сеть до серверов NATS</span>. <span class="advice">Что делать: <span dir="auto">проверьте компьютер зала, `systemctl status boardscribe` на нём и его сеть;"#
        ), "{ru}");
        assert!(
            ru.contains("в зале D ждут записи, не принятые серверами NATS (записей: 40); самая старая — от 10:00:00 UTC (12 с назад): maximum messages exceeded &lt;limit&gt;</span>"),
            "{ru}"
        );
        let fa = hall_live_html(&views, &alerts, false, Lang::Fa);
        assert!(fa.contains(
            r#"<strong>سالن B</strong>: <span class="detail" dir="auto">سالن B از ساعت 10:00:00 UTC پیامی نفرستاده است:"#
        ), "{fa}");
        assert!(
            fa.contains(r#"<span class="advice">چه باید کرد: <span dir="auto">رایانه سالن، `systemctl status boardscribe` روی آن"#),
            "{fa}"
        );
        assert!(
            fa.contains("(12 ثانیه پیش): maximum messages exceeded &lt;limit&gt;"),
            "{fa}"
        );
        for html in [&ru, &fa] {
            for english in [
                "has not been heard",
                "What to do",
                "keeps recording",
                "records the NATS",
            ] {
                assert!(!html.contains(english), "{english:?} left in {html}");
            }
        }
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
            spectators: None,
            flash: None,
            lang: Lang::En,
        });
        let at = |s: &str| html.find(s).unwrap();
        assert!(at(r#"data-board="b3""#) < at(r#"data-board="b7""#));
        assert!(at(r#"data-board="b7""#) < at(r#"data-board="b12""#));
        assert!(html.contains(r#"<tr class="state-unplugged" data-board="b3" data-number="3">"#));
        assert!(html.contains(r#"<tr class="state-waiting" data-board="b7" data-number="7">"#));
        assert!(html.contains(r#"href="/arbiter/boards/12""#));
        let attention = hall_live_html(&views, &[], true, Lang::En);
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
                started: Some(("2026-12-02 10:00:00".into(), "Chief".into())),
                next: 3,
                undo: Some((2, 1)),
                import_undo: Some((3, 12)),
            },
            spectators: Some("http://10.0.0.5:8080/".into()),
            flash: Some(Flash {
                text: "board 1: <b>".into(),
                error: true,
            }),
            lang: Lang::En,
        });
        assert!(html.contains(r#"<script src="/arbiter/console.js" defer></script>"#));
        assert!(!html.contains("<script>"), "no inline script");
        assert!(html.contains(
            r#"<form class="round-undo" method="post" action="/arbiter/rounds/undo"><input type="hidden" name="round" value="2"><button type="submit">Undo the start of round 2 (round 1 again)</button></form>"#
        ));
        assert!(html.contains(
            r#"<form class="pairings-undo" method="post" action="/arbiter/pairings/undo"><input type="hidden" name="round" value="3"><button type="submit">Undo the import of round 3&#39;s pairings (12 boards)</button></form>"#
        ), "{html}");
        assert!(
            html.contains(
                r#"<p class="flash error" role="status" dir="auto">board 1: &lt;b&gt;</p>"#
            )
        );
        assert!(html.contains(r#"<span class="current-round">2</span>"#));
        assert!(html.contains(r#"name="round" min="1" value="3""#));
        assert!(html.contains(r#"enctype="multipart/form-data""#));
        // The spectators' link, written out and drawn as a QR code.
        assert!(html.contains(r#"<a href="http://10.0.0.5:8080/" dir="ltr">"#));
        assert!(html.contains(r#"<figure class="qr""#));
    }

    #[test]
    fn names_are_encoded_for_urls() {
        assert_eq!(url_encode("a b/ü?&"), "a%20b%2F%C3%BC%3F%26");
        assert_eq!(url_encode("board-1_x.y~"), "board-1_x.y~");
    }
}
