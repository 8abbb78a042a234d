//! One board's page in the console (`/arbiter/boards/N`): who plays, the state and the result,
//! the board's open alerts with their ruling forms, the game's moves numbered as on a
//! scoresheet, its history in words (local time, what, by whom), and the forms to set a
//! result, correct a move by its number and side ("move 34, black: Nf6") and add a note. Flow:
//! the server reads the board's current game and its history, puts the history in words
//! ([`crate::words::history`]) and renders here. Pure.

use std::fmt::Write as _;

use super::{BoardView, Flash, alert_item, board_href, board_state, header, page, player_label};
use crate::{
    lang::{Lang, record::reason_text},
    relay::{
        alerts::AlertState,
        page::{board_title_in, clock_text, escape},
    },
    store::GameRecord,
    tracker::Side,
};

/// What a board's page shows.
pub struct BoardPage<'a> {
    pub view: &'a BoardView,
    /// The game the forms act on: the board's current one.
    pub game: Option<&'a GameRecord>,
    /// The game's history, one line per event, in words.
    pub history: &'a [String],
    /// The game's decisions that stand (none undone), by id, each in the history's words: each
    /// can be undone.
    pub standing: &'a [(i64, String)],
    /// A board with no game in the round it is paired in: the round, for the form that records
    /// its game as not played (a forfeit).
    pub unplayed_round: Option<u32>,
    pub flash: Option<Flash>,
    pub lang: Lang,
}

/// The reasons the result form offers, stored by these names and shown in the page's language
/// ([`reason_text`]); any other text is kept as typed.
const REASONS: [&str; 4] = ["resignation", "agreement", "forfeit", "decision"];

/// The part of the board's page the script refreshes: state, alerts, moves and history.
pub fn board_live_html(p: &BoardPage<'_>) -> String {
    let v = p.view;
    let lang = p.lang;
    let b = &v.live;
    let back = board_href(v);
    let mut out = String::new();
    let clock = |ms: Option<u64>| ms.map_or(String::from("–"), clock_text);
    let [white, black] = lang.sides(b.kind);
    let _ = write!(
        out,
        r#"<p class="status"><span class="state" data-state="{state_name}">{state}</span>{result} · {white} <span class="clock">{wc}</span> · {black} <span class="clock">{bc}</span></p>"#,
        state_name = board_state(v).as_str(),
        state = escape(board_state(v).words(lang)),
        result = b.result.as_deref().map_or(String::new(), |r| format!(
            r#" · {} <span class="result san">{}</span>{}"#,
            escape(lang.text("arbiter.result_word")),
            escape(r),
            if b.result_final {
                format!(" {}", escape(lang.text("arbiter.final")))
            } else {
                String::new()
            }
        )),
        white = escape(white),
        black = escape(black),
        wc = clock(b.clock.map(|c| c.white_ms)),
        bc = clock(b.clock.map(|c| c.black_ms)),
    );
    let open: Vec<_> = v
        .alerts
        .iter()
        .filter(|a| a.state == AlertState::Open)
        .collect();
    let _ = write!(
        out,
        r#"<section class="alerts" data-open="{}"><h2>{}</h2><ul>"#,
        open.len(),
        escape(&lang.fill("arbiter.alerts", &[("count", &open.len().to_string())]))
    );
    for a in open {
        alert_item(&mut out, v, a, &back, lang);
    }
    out.push_str("</ul></section>");
    let _ = write!(
        out,
        r#"<section><h2>{}</h2><ol class="moves">"#,
        escape(lang.text("arbiter.moves"))
    );
    if let Some(g) = p.game {
        for pair in g.moves.chunks(2) {
            let white = pair.first().map_or("", |m| m.notation.as_str());
            let black = pair.get(1).map_or("", |m| m.notation.as_str());
            let _ = write!(
                out,
                r#"<li><span class="san">{}</span> <span class="san">{}</span></li>"#,
                escape(white),
                escape(black)
            );
        }
    }
    let _ = write!(
        out,
        r#"</ol></section><section><h2>{}</h2><ol class="history" dir="auto">"#,
        escape(lang.text("arbiter.history"))
    );
    // A line that starts with a space goes on with the one before (the moves it withdrew).
    let mut open = false;
    for line in p.history {
        if line.starts_with(' ') && open {
            let _ = write!(
                out,
                r#"<br><span class="withdrawn">{}</span>"#,
                escape(line.trim())
            );
            continue;
        }
        if open {
            out.push_str("</li>");
        }
        let _ = write!(out, "<li>{}", escape(line));
        open = true;
    }
    if open {
        out.push_str("</li>");
    }
    out.push_str("</ol></section>");
    out
}

/// The form that records a paired board's game of `round` as not played: a forfeit of either
/// side, or of both.
fn forfeit_section(out: &mut String, p: &BoardPage<'_>, href: &str, round: u32, number: u32) {
    let lang = p.lang;
    let t = |key: &'static str| escape(lang.text(key));
    let [white, black] = lang.sides(p.view.live.kind);
    let forfeit = |side: &str| lang.fill("arbiter.forfeit_win", &[("side", side)]);
    let options: String = [
        ("+/-", format!("+/− {}", forfeit(white))),
        ("-/+", format!("−/+ {}", forfeit(black))),
        ("-/-", format!("−/− {}", lang.text("arbiter.forfeit_both"))),
    ]
    .iter()
    .map(|(value, label)| format!(r#"<option value="{value}">{}</option>"#, escape(label)))
    .collect();
    let _ = write!(
        out,
        r#"<section class="actions"><h2>{head}</h2><form class="forfeit" method="post" action="{href}/forfeit"><input type="hidden" name="round" value="{round}"><input type="hidden" name="board" value="{number}"><select name="result" aria-label="{head}">{options}</select><input type="text" name="note" placeholder="{note}" maxlength="500" aria-label="{note}" dir="auto"><button type="submit">{record}</button></form></section>"#,
        head = escape(&lang.fill("arbiter.forfeit_head", &[("round", &round.to_string())])),
        note = t("arbiter.note"),
        record = t("arbiter.record_forfeit"),
    );
}

/// The decisions that stand, each with a form that undoes it (as a further decision: both stay
/// in the history).
fn undo_section(out: &mut String, p: &BoardPage<'_>, href: &str, game: i64) {
    if p.standing.is_empty() {
        return;
    }
    let lang = p.lang;
    let t = |key: &'static str| escape(lang.text(key));
    let _ = write!(
        out,
        r#"<section class="standing"><h2>{}</h2><ol class="history">"#,
        t("arbiter.standing_head")
    );
    for (id, line) in p.standing {
        let _ = write!(
            out,
            r#"<li data-decision="{id}"><span dir="auto">{line}</span><form class="undo" method="post" action="{href}/undo"><input type="hidden" name="game" value="{game}"><input type="hidden" name="decision" value="{id}"><input type="text" name="note" placeholder="{note}" maxlength="500" aria-label="{note}" dir="auto"><button type="submit">{undo}</button></form></li>"#,
            line = escape(line),
            note = t("arbiter.undo_why"),
            undo = t("arbiter.undo"),
        );
    }
    out.push_str("</ol></section>");
}

/// The board's page, in the page's language.
pub fn board_html(p: &BoardPage<'_>) -> String {
    let v = p.view;
    let lang = p.lang;
    let title = board_title_in(&v.live, lang);
    let href = board_href(v);
    let mut main = String::new();
    header(&mut main, p.flash.as_ref(), &href, lang);
    let round = v.round.map_or(String::new(), |r| {
        format!("{} {r} · ", escape(lang.text("sheet.round")))
    });
    let game = p.game.map_or_else(
        || escape(lang.text("arbiter.no_game")),
        |g| escape(&lang.fill("arbiter.game", &[("game", &g.id.0.to_string())])),
    );
    let _ = write!(
        main,
        r#"<main><h2 class="board-title">{title}: {white} – {black}</h2><p>{round}{game}</p><div id="live">{live}</div>"#,
        title = escape(&title),
        white = player_label(v, Side::White, lang),
        black = player_label(v, Side::Black, lang),
        live = board_live_html(p),
    );
    if let (None, Some(round), Some(number)) = (p.game, p.unplayed_round, v.live.number) {
        forfeit_section(&mut main, p, &escape(&href), round, number);
    }
    if let Some(g) = p.game {
        let game = g.id.0;
        let href = escape(&href);
        // The result the board shows is offered first: confirming it is one tap.
        let shown = v.live.result.as_deref();
        let [white, black] = lang.sides(g.kind);
        // Forfeits as the record and the pairing programs write them (+/- : White wins).
        let forfeit = |side: &str| lang.fill("arbiter.forfeit_win", &[("side", side)]);
        let results: String = [
            ("1-0", "1-0".to_owned()),
            ("0-1", "0-1".to_owned()),
            ("1/2-1/2", "½-½".to_owned()),
            ("+/-", format!("+/− {}", forfeit(white))),
            ("-/+", format!("−/+ {}", forfeit(black))),
            ("-/-", format!("−/− {}", lang.text("arbiter.forfeit_both"))),
        ]
        .iter()
        .map(|(value, label)| {
            let selected = if shown == Some(*value) {
                " selected"
            } else {
                ""
            };
            format!(
                r#"<option value="{value}"{selected}>{}</option>"#,
                escape(label)
            )
        })
        .collect();
        let t = |key: &'static str| escape(lang.text(key));
        let _ = write!(
            main,
            r#"<section class="actions"><h2>{result_head}</h2><form class="result" method="post" action="{href}/result"><input type="hidden" name="game" value="{game}"><select name="result" aria-label="{result_head}">{results}</select><input type="text" name="reason" list="reasons" placeholder="{reason}" maxlength="80" aria-label="{reason}" dir="auto"><input type="text" name="note" placeholder="{note}" maxlength="500" aria-label="{note}" dir="auto"><button type="submit">{set_result}</button></form>
<h2>{correct_head}</h2><form class="correct" method="post" action="{href}/correct"><input type="hidden" name="game" value="{game}"><label>{move_label} <input type="number" name="move" min="1" required inputmode="numeric" size="4"></label><select name="side" aria-label="{side}"><option value="white">{white}</option><option value="black">{black}</option></select><input type="text" name="san" placeholder="Nf6" required maxlength="10" aria-label="{played}" autocapitalize="off" autocomplete="off" dir="ltr"><input type="text" name="note" placeholder="{note}" maxlength="500" aria-label="{note}" dir="auto"><button type="submit">{correct}</button></form>
<h2>{note_head}</h2><form class="note" method="post" action="{href}/note"><input type="hidden" name="game" value="{game}"><input type="text" name="text" required maxlength="2000" aria-label="{note_head}" class="note-text" dir="auto"><button type="submit">{add_note}</button></form>
<datalist id="reasons">"#,
            result_head = t("sheet.result"),
            reason = t("arbiter.reason"),
            note = t("arbiter.note"),
            set_result = t("arbiter.set_result"),
            correct_head = t("arbiter.correct_move"),
            move_label = t("arbiter.move_label"),
            side = t("arbiter.side"),
            white = escape(white),
            black = escape(black),
            played = t("arbiter.move_played"),
            correct = t("arbiter.correct"),
            note_head = t("arbiter.note_head"),
            add_note = t("arbiter.add_note"),
        );
        for value in REASONS {
            let _ = write!(
                main,
                r#"<option value="{value}" label="{}">"#,
                escape(&reason_text(value, lang))
            );
        }
        main.push_str("</datalist></section>");
        undo_section(&mut main, p, &href, game);
    }
    if v.live.learns {
        let _ = write!(
            main,
            r#"<section class="actions"><h2>{}</h2>"#,
            escape(lang.text("arbiter.calibration_head"))
        );
        super::calibrate::calibrate_form(&mut main, v, &href, lang);
        main.push_str("</section>");
    }
    main.push_str("</main>");
    page(
        &lang.fill("arbiter.board_page", &[("board", &title)]),
        &main,
        true,
        lang,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::{live::BoardLive, view::Seats};

    #[test]
    fn a_board_without_a_game_has_no_forms_and_a_board_with_one_names_it_in_each() {
        let live = BoardLive::new("b12", Some(12), &[]).snapshot();
        let view = BoardView::new(live, None, Seats::default());
        let history = [
            "2026-12-02 10:00:00  board 12 (game 7)  move 1 white  started".to_owned(),
            "2026-12-02 10:05:00  board 12 (game 7)  move 2 white  move corrected".to_owned(),
            "    withdrawn: 2. g3".to_owned(),
        ];
        let html = board_html(&BoardPage {
            view: &view,
            game: None,
            history: &history,
            standing: &[],
            unplayed_round: None,
            flash: None,
            lang: Lang::En,
        });
        assert!(html.contains("Board 12: White – Black"));
        assert!(!html.contains(r#"class="result""#));
        assert!(html.contains(r#"<ol class="history" dir="auto"><li>2026-12-02 10:00:00"#));
        assert!(html.contains(
            r#"move corrected<br><span class="withdrawn">withdrawn: 2. g3</span></li></ol>"#
        ));
        assert_eq!(html.matches("<li>").count(), 2);
        assert!(html.contains(r#"<script src="/arbiter/console.js" defer></script>"#));
    }
}
