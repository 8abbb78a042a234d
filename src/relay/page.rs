//! The live page, for spectators: every board as an inline SVG, the players, clocks, moves and
//! results; one board large. No irregularity, alert or note: those are the arbiter's (the admin
//! API); only a store refusing writes is told, as a banner.
//!
//! Flow: the server renders the page from the boards' [`BoardView`]s with pure functions
//! ([`index_html`], [`board_page_html`]; the boards are drawn by [`super::svg`]); the small script in `assets/live.js`
//! (served as `/live.js`, never inline) then follows `/api/events` and redraws a board from the snapshot each event carries (the SVG
//! comes from the server, so there is one renderer). No external assets, no build step.

use std::fmt::Write as _;

use crate::{
    game::Kind,
    lang::Lang,
    relay::{live::BoardSnapshot, view::BoardView},
    store::{PlayerRecord, RoundInfo},
    tracker::Side,
};

/// The page's style (the standings page shares it).
pub(crate) const STYLE: &str = concat!(
    include_str!("assets/live.css"),
    include_str!("assets/boards.css")
);
/// The page's script, served as `/live.js` (no inline script: the server's CSP forbids it).
pub const SCRIPT: &str = include_str!("assets/live.js");

/// FNV-1a of the script: its URL's query, so a browser keeping it fetches a new one anew.
const SCRIPT_HASH: u64 = {
    let bytes = SCRIPT.as_bytes();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    h
};

/// The script's URL, with its hash.
pub fn script_url() -> String {
    format!("/live.js?v={SCRIPT_HASH:016x}")
}

pub use crate::export::escape_html as escape;

/// `m:ss`, or `h:mm:ss` from an hour on.
pub fn clock_text(ms: u64) -> String {
    let s = ms / 1000;
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m}:{s:02}")
    }
}

/// The last move as `12. Nf3` or `12... Nf6`.
pub(crate) fn last_move_text(b: &BoardSnapshot) -> String {
    b.last_move.as_ref().map_or(String::new(), |m| {
        let dots = if m.ply % 2 == 1 { "." } else { "..." };
        format!("{}{dots} {}", m.ply.div_ceil(2), m.san)
    })
}

/// A board as a page in `lang` titles it: `Доска 12`, else its name.
pub(crate) fn board_title_in(b: &BoardSnapshot, lang: Lang) -> String {
    board_name_in(b.number, &b.name, lang)
}

/// A board by its number in `lang` (`Доска 12`), else by its name: a snapshot's or a game's.
pub fn board_name_in(number: Option<u32>, name: &str, lang: Lang) -> String {
    match number {
        Some(n) => lang.fill("page.board", &[("n", &n.to_string())]),
        None => name.to_owned(),
    }
}

/// A player as the page writes them in `lang`: title, the name isolated, rating; the side's
/// name when the pairing is not known.
pub(crate) fn player_html(
    player: Option<&PlayerRecord>,
    side: Side,
    kind: Kind,
    lang: Lang,
) -> String {
    match player {
        Some(p) => p.label_html(),
        None => escape(lang.side(side, kind)),
    }
}

/// One board's section; the script finds its parts by class.
fn board_section(out: &mut String, view: &BoardView, large: bool, lang: Lang) {
    let b = &view.live;
    let title = board_title_in(b, lang);
    let href = match b.number {
        Some(n) => format!("/boards/{n}"),
        None => format!("/boards/{}", percent_encode(&b.name)),
    };
    let size = if large { " large" } else { "" };
    let _ = write!(
        out,
        r#"<section class="board{size}" data-board="{}"><h2><a class="title" href="{}">{}</a> <span class="conn {conn}">{}</span></h2>"#,
        escape(&b.name),
        escape(&href),
        escape(&title),
        escape(lang.text(connection_key(b))),
        conn = connection_name(b),
    );
    let _ = write!(
        out,
        r#"<div class="players"><span class="player black-name">{}</span>{}</div>"#,
        player_html(view.black_player.as_ref(), Side::Black, b.kind, lang),
        clock_span(b, Side::Black, lang),
    );
    let _ = write!(
        out,
        r#"<div class="svg">{}</div>"#,
        super::view::draw_in(b, lang)
    );
    let _ = write!(
        out,
        r#"<div class="players"><span class="player white-name">{}</span>{}</div>"#,
        player_html(view.white_player.as_ref(), Side::White, b.kind, lang),
        clock_span(b, Side::White, lang),
    );
    let result = b.result.as_deref().map_or(String::new(), |r| {
        if b.result_final {
            r.to_owned()
        } else {
            lang.fill("page.pending", &[("result", r)])
        }
    });
    let _ = write!(
        out,
        r#"<div class="status"><span class="last-move">{}</span> <span class="result">{}</span></div>"#,
        escape(&last_move_text(b)),
        escape(&result)
    );
    out.push_str(r#"<ol class="moves">"#);
    for (i, san) in b.moves.iter().enumerate() {
        let number = if i % 2 == 0 {
            format!(r#"<span class="n">{}.</span>"#, i / 2 + 1)
        } else {
            String::new()
        };
        let san = escape(san);
        let _ = write!(
            out,
            r#"<li data-ply="{}" data-san="{san}">{number}{san}</li>"#,
            i + 1
        );
    }
    out.push_str("</ol></section>");
}

/// The key of the connection's word on the page.
fn connection_key(b: &BoardSnapshot) -> &'static str {
    match b.connection {
        crate::relay::live::Connection::Waiting => "page.waiting",
        crate::relay::live::Connection::Connected => "page.connected",
        crate::relay::live::Connection::Lost => "page.lost",
    }
}

fn connection_name(b: &BoardSnapshot) -> &'static str {
    match b.connection {
        crate::relay::live::Connection::Waiting => "waiting",
        crate::relay::live::Connection::Connected => "connected",
        crate::relay::live::Connection::Lost => "lost",
    }
}

fn clock_span(b: &BoardSnapshot, side: Side, lang: Lang) -> String {
    let (ms, running, flag, tt) = match (b.clock, side) {
        (Some(c), Side::White) => (
            Some(c.white_ms),
            c.running == Some(side),
            c.white_flag,
            b.time_trouble.white,
        ),
        (Some(c), Side::Black) => (
            Some(c.black_ms),
            c.running == Some(side),
            c.black_flag,
            b.time_trouble.black,
        ),
        (None, Side::White) => (None, false, false, b.time_trouble.white),
        (None, Side::Black) => (None, false, false, b.time_trouble.black),
    };
    let mut class = String::from("clock");
    for (on, name) in [(running, " running"), (flag, " flag"), (tt, " tt")] {
        if on {
            class.push_str(name);
        }
    }
    format!(
        r#"<span class="{class}" data-side="{}" title="{}">{}</span>"#,
        side.as_str(),
        escape(lang.text("page.time_trouble")),
        ms.map_or("–".to_owned(), clock_text)
    )
}

/// Path-segment encoding of a board name (names are device paths, with slashes).
pub fn percent_encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The words the page's script writes, as JSON for the body's `data-texts`.
fn script_texts(lang: Lang) -> String {
    let mut texts = serde_json::Map::new();
    for (name, key) in [
        ("board", "page.board"),
        ("waiting", "page.waiting"),
        ("connected", "page.connected"),
        ("lost", "page.lost"),
        ("live", "page.live"),
        ("busy", "page.busy"),
        ("reconnecting", "page.reconnecting"),
        ("pending", "page.pending"),
        ("white", "sheet.white"),
        ("black", "sheet.black"),
        ("togyz_white", "togyz.white"),
        ("togyz_black", "togyz.black"),
        ("store_white", "togyz.store_white"),
        ("store_black", "togyz.store_black"),
    ] {
        texts.insert(name.into(), lang.text(key).into());
    }
    serde_json::Value::Object(texts).to_string()
}

/// The switch between the languages: each in its own name, this one marked; `path` is the
/// page's own.
pub(crate) fn language_switch(path: &str, lang: Lang) -> String {
    let mut out = format!(
        r#"<nav class="langs" aria-label="{}">"#,
        escape(lang.text("page.languages"))
    );
    for l in Lang::ALL {
        let current = if l == lang {
            r#" aria-current="true""#
        } else {
            ""
        };
        let _ = write!(
            out,
            r#"<a href="{}?lang={}" lang="{}" hreflang="{}"{current}>{}</a>"#,
            escape(path),
            l.code(),
            l.code(),
            l.code(),
            escape(l.name())
        );
    }
    out.push_str("</nav>");
    out
}

/// The event's name (isolated: the organiser's words) and its current round, in `lang`.
fn event_line(event: Option<&RoundInfo>, lang: Lang) -> String {
    event.map_or(String::new(), |e| {
        let round = lang.fill("page.round", &[("round", &e.round.to_string())]);
        // The event's standings, for spectators (at the broadcast's delay).
        let standings = format!(
            r#" <a class="standings" href="/standings?lang={}">{}</a>"#,
            lang.code(),
            escape(lang.text("standings.title"))
        );
        if e.event.trim().is_empty() {
            format!(r#" <p class="event">{}</p>{standings}"#, escape(&round))
        } else {
            format!(
                r#" <p class="event"><bdi>{}</bdi> · {}</p>{standings}"#,
                escape(&e.event),
                escape(&round)
            )
        }
    })
}

fn page(
    title: &str,
    body_attrs: &str,
    main: &str,
    path: &str,
    event: Option<&RoundInfo>,
    lang: Lang,
) -> String {
    format!(
        r#"<!doctype html>
<html lang="{}" dir="{}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{}</title><style>{STYLE}</style><script src="{}" defer></script></head>
<body {body_attrs} data-texts="{}"><header><h1>{}</h1>{} <span id="status">{}</span>{}</header>
{main}
</body></html>
"#,
        lang.code(),
        lang.dir(),
        escape(title),
        script_url(),
        escape(&script_texts(lang)),
        escape(title),
        event_line(event, lang),
        escape(lang.text("page.connecting")),
        language_switch(path, lang),
    )
}

/// The live page: the event and its round (when the store names them), every board, in
/// `lang`.
pub fn index_html(boards: &[BoardView], event: Option<&RoundInfo>, lang: Lang) -> String {
    let mut main = String::from(r#"<main class="boards">"#);
    for b in boards {
        board_section(&mut main, b, false, lang);
    }
    main.push_str("</main>");
    // A skeleton for boards that appear after the page was loaded.
    let empty = BoardView::new(
        crate::relay::live::BoardLive::new("", None, &[]).snapshot(),
        None,
        Default::default(),
    );
    main.push_str(r#"<template id="board-template">"#);
    board_section(&mut main, &empty, false, lang);
    main.push_str("</template>");
    page(
        lang.text("page.title"),
        r#"data-page="index""#,
        &main,
        "/",
        event,
        lang,
    )
}

/// One board large, with its move list, in `lang`: the way back to every board, and its game's
/// PGN once the game is named (as spectators may see it).
pub fn board_page_html(board: &BoardView, event: Option<&RoundInfo>, lang: Lang) -> String {
    let mut main = format!(
        r#"<nav class="board-links"><a href="/">{}</a>"#,
        escape(lang.text("page.all_boards"))
    );
    if let Some(game) = board.game_id {
        let _ = write!(
            main,
            r#" · <a href="/games/{game}.pgn">{}</a>"#,
            escape(lang.text("page.game_pgn"))
        );
    }
    main.push_str(r#"</nav><main class="single">"#);
    board_section(&mut main, board, true, lang);
    main.push_str("</main>");
    let side = |player: &Option<PlayerRecord>, name: &str, side: Side| match player {
        Some(_) => name.to_owned(),
        None => lang.side(side, board.live.kind).to_owned(),
    };
    let title = lang.fill(
        "page.board_page",
        &[
            ("board", &board_title_in(&board.live, lang)),
            (
                "white",
                &side(&board.white_player, &board.white, Side::White),
            ),
            (
                "black",
                &side(&board.black_player, &board.black, Side::Black),
            ),
        ],
    );
    let path = match board.live.number {
        Some(n) => format!("/boards/{n}"),
        None => format!("/boards/{}", percent_encode(&board.live.name)),
    };
    page(
        &title,
        &format!(
            r#"data-page="board" data-only="{}""#,
            escape(&board.live.name)
        ),
        &main,
        &path,
        event,
        lang,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        game::togyz,
        relay::{
            live::{BoardLive, START_FEN},
            svg::{board_svg, togyz_svg},
        },
    };

    #[test]
    fn the_togyz_start_has_nine_in_every_pit_and_empty_stores() {
        let fen = togyz::notation::to_fen(&togyz::Position::new());
        let svg = togyz_svg(&fen, None, Lang::En);
        assert_eq!(svg.matches(r#"class="pit""#).count(), 18);
        assert_eq!(svg.matches(r#"data-count="9""#).count(), 18);
        assert_eq!(
            svg.matches(r#"data-count="0""#).count(),
            2,
            "two empty stores"
        );
        assert!(!svg.contains("tuz") && !svg.contains("last"));
        // Black's row reads 9 to 1 from the left, on top: its first pit drawn is pit 9.
        let first = svg.find("data-pit=").unwrap();
        assert!(svg[first..].starts_with(r#"data-pit="9""#));
    }

    #[test]
    fn togyz_counts_stores_and_both_tuz_marks_are_drawn() {
        // Rules summary section 5, the game to 82: W[1 2 2 X 3 2 2 1 1] B[1 3 4 3 5 X 1 0 6]
        // K82-43, white's tuz on black's pit 6, black's on white's pit 4.
        let fen = "6S,1,1S,t,5S,3S,4S,3S,1S/1S,2S,2S,t,3S,2S,2S,1S,1S 82 43 N 38";
        let svg = togyz_svg(fen, Some((8, 12)), Lang::En);
        assert!(svg.contains(r#"data-side="black" data-pit="6" data-count="0" data-tuz="white""#));
        assert!(svg.contains(r#"data-side="white" data-pit="4" data-count="0" data-tuz="black""#));
        assert_eq!(svg.matches("class=\"tuzmark\"").count(), 2);
        assert!(svg.contains(r#"data-side="black" data-pit="9" data-count="6""#));
        assert!(svg.contains(r#"data-side="white" data-pit="5" data-count="3""#));
        assert!(svg.contains(r#"data-store="white" data-count="82""#));
        assert!(svg.contains(r#"data-store="black" data-count="43""#));
        assert!(svg.contains(r#"class="pit last" data-side="white" data-pit="9""#));
        assert!(svg.contains(r#"class="pit last" data-side="black" data-pit="4""#));
        assert_eq!(svg.matches(" last").count(), 2);
        // An unreadable FEN draws an empty board, escaped in the label.
        let svg = togyz_svg("<nonsense>", None, Lang::En);
        assert!(svg.contains("&lt;nonsense&gt;") && svg.matches(r#"data-count="0""#).count() == 20);
    }

    #[test]
    fn the_start_position_has_thirty_two_pieces_where_they_belong() {
        let svg = board_svg(START_FEN, None);
        assert_eq!(svg.matches("<rect").count(), 64);
        assert_eq!(svg.matches("<text").count(), 32);
        assert!(svg.contains(r#"data-square="e1" data-piece="K""#));
        assert!(svg.contains(r#"data-square="d8" data-piece="q""#));
        assert!(!svg.contains(" last"));
    }

    #[test]
    fn the_last_move_squares_are_marked() {
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let svg = board_svg(fen, Some("e2e4"));
        assert_eq!(svg.matches(" last\"").count(), 2);
        assert!(svg.contains(r#"class="sq light last" data-square="e2""#));
        assert!(svg.contains(r#"class="sq light last" data-square="e4""#));
        assert!(svg.contains(r#"class="sq dark" data-square="e1""#));
        assert!(svg.contains(r#"data-square="e4" data-piece="P""#));
        assert!(!svg.contains(r#"data-square="e2" data-piece"#));
    }

    /// The event and its round head every page, its name isolated; a board's page leads back to
    /// every board and, once its game is named, to the game's PGN.
    #[test]
    fn the_event_and_round_head_the_pages_and_a_board_page_links_back_and_to_its_pgn() {
        let event = RoundInfo {
            event: "Кубок РК".into(),
            site: "Astana".into(),
            round: 2,
        };
        let live = BoardLive::new("b1", Some(1), &[]).snapshot();
        let view = BoardView::new(live.clone(), None, Default::default());
        for lang in Lang::ALL {
            let round = lang.fill("page.round", &[("round", "2")]);
            let line = format!(
                r#"<p class="event"><bdi>Кубок РК</bdi> · {}</p>"#,
                escape(&round)
            );
            let index = index_html(std::slice::from_ref(&view), Some(&event), lang);
            assert!(index.contains(&line), "{lang}: {index}");
            // And the way to the event's standings, in the page's language.
            assert!(index.contains(&format!(
                r#"<a class="standings" href="/standings?lang={}">{}</a>"#,
                lang.code(),
                escape(lang.text("standings.title"))
            )));
            let board = board_page_html(&view, Some(&event), lang);
            assert!(board.contains(&line), "{lang}");
            assert!(
                board.contains(&format!(
                    r#"<a href="/">{}</a>"#,
                    escape(lang.text("page.all_boards"))
                )),
                "{lang}"
            );
            assert!(!board.contains("/games/"), "no game named yet");
        }
        let view = BoardView::new(live, Some(7), Default::default());
        let board = board_page_html(&view, None, Lang::En);
        assert!(
            board.contains(r#"<a href="/games/7.pgn">This game&#39;s PGN</a>"#),
            "{board}"
        );
        assert!(
            !board.contains(r#"class="event""#),
            "no event named: no line"
        );
    }

    /// A result the board only proposed (the kings' gesture, a flag fallen) says on the live
    /// page and the board's page, in every language, that it awaits the arbiter's confirmation,
    /// in the table's own word for the arbiter; so do the words the page's script writes. A
    /// result that stands is shown bare.
    #[test]
    fn a_proposed_result_awaits_the_arbiter_in_every_language() {
        let mut live = BoardLive::new("b1", Some(1), &[]);
        live.apply(&crate::tracker::TrackerEvent::ResultGesture {
            at_ms: 1_000,
            after_ply: 0,
            proposed: crate::game::Outcome::WhiteWins,
        });
        let proposed = BoardView::new(live.snapshot(), Some(1), Default::default());
        assert!(!proposed.live.result_final);
        let mut stands = live.snapshot();
        stands.result_final = true;
        let stands = BoardView::new(stands, Some(1), Default::default());
        for lang in Lang::ALL {
            let pending = lang.fill("page.pending", &[("result", "1-0")]);
            let arbiter = lang.text("sheet.arbiter").to_lowercase();
            assert!(
                pending.to_lowercase().contains(&arbiter),
                "{lang}: {pending:?} names no {arbiter:?}"
            );
            assert!(pending.starts_with("1-0 "), "{lang}: {pending:?}");
            let shown = format!(r#"<span class="result">{}</span>"#, escape(&pending));
            let index = index_html(std::slice::from_ref(&proposed), None, lang);
            assert!(index.contains(&shown), "{lang}: {shown}");
            let board = board_page_html(&proposed, None, lang);
            assert!(board.contains(&shown), "{lang}: {shown}");
            let texts: serde_json::Value = serde_json::from_str(&script_texts(lang)).unwrap();
            assert_eq!(texts["pending"], lang.text("page.pending"), "{lang}");
            let bare = board_page_html(&stands, None, lang);
            assert!(
                bare.contains(r#"<span class="result">1-0</span>"#),
                "{lang}: the result that stands"
            );
        }
    }

    #[test]
    fn names_are_escaped_and_clocks_formatted() {
        let mut live = BoardLive::new("<b1>", Some(3), &[]).snapshot();
        live.moves = vec!["e4".into()];
        let player = |name: &str| crate::store::PlayerRecord {
            name: name.into(),
            ..Default::default()
        };
        let seats = crate::relay::view::Seats {
            round: Some(1),
            white: Some(player("A & B")),
            black: Some(player("\"C\"")),
        };
        let view = BoardView::new(live, Some(1), seats);
        let html = index_html(std::slice::from_ref(&view), None, Lang::En);
        assert!(html.contains("A &amp; B") && html.contains("&quot;C&quot;"));
        assert!(!html.contains("<b1>"));
        assert!(
            board_page_html(&view, None, Lang::En)
                .contains(r#"<li data-ply="1" data-san="e4"><span class="n">1.</span>e4</li>"#)
        );
        assert_eq!(clock_text(61_999), "1:01");
        assert_eq!(clock_text(3_723_000), "1:02:03");
        assert_eq!(percent_encode("/dev/ttyUSB0"), "%2Fdev%2FttyUSB0");
    }
}
