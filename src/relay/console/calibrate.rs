//! Calibrating a board again from the console: the button on the row (and the page) of each
//! board whose sensor learns the board itself (a Certabo board's calibration), and the page
//! that says what the arbiter must set up and asks to confirm. Flow: the button posts
//! `/arbiter/boards/{key}/calibrate`; the server answers [`confirm_html`], whose button posts
//! the same again with `confirm`, and only then asks the board's task to learn the board again
//! (the admin API's own `decider.relearn`). Pure.

use std::fmt::Write as _;

use super::{BoardView, board_href, header, page};
use crate::{lang::Lang, relay::page::escape};

/// The board's "Calibrate" button when its sensor learns the board (else nothing); the
/// confirmation and the outcome return to `back`.
pub fn calibrate_form(out: &mut String, v: &BoardView, back: &str, lang: Lang) {
    if !v.live.learns {
        return;
    }
    let _ = write!(
        out,
        r#"<form class="calibrate inline" method="post" action="{href}/calibrate"><input type="hidden" name="back" value="{back}"><button type="submit">{calibrate}</button></form>"#,
        href = escape(&board_href(v)),
        back = escape(back),
        calibrate = escape(lang.text("arbiter.calibrate")),
    );
}

/// The page asking the arbiter to confirm calibrating board `title` (its console page `href`)
/// again, naming the setup the board must then be shown; its button posts again, confirmed,
/// and a link goes back to `back` unchanged.
pub fn confirm_html(title: &str, href: &str, back: &str, lang: Lang) -> String {
    let board = [("board", title)];
    let mut main = String::new();
    header(&mut main, None, back, lang);
    let _ = write!(
        main,
        r#"<main><section class="confirm-calibrate" role="alertdialog" aria-labelledby="confirm-title"><h2 id="confirm-title">{title}</h2><p class="setup" dir="auto">{setup}</p><form class="calibrate confirm" method="post" action="{href}/calibrate"><input type="hidden" name="back" value="{back}"><input type="hidden" name="confirm" value="1"><button type="submit">{go}</button></form>
<p><a href="{back}">{cancel}</a></p></section></main>"#,
        title = escape(&lang.fill("arbiter.confirm_calibrate_title", &board)),
        setup = escape(lang.text("arbiter.confirm_calibrate_setup")),
        href = escape(href),
        back = escape(back),
        go = escape(&lang.fill("arbiter.confirm_calibrate", &board)),
        cancel = escape(lang.text("arbiter.confirm_calibrate_cancel")),
    );
    page(
        &lang.fill("arbiter.confirm_calibrate_title", &board),
        &main,
        false,
        lang,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::{live::BoardLive, view::Seats};

    fn view(learns: bool) -> BoardView {
        let mut live = BoardLive::new("cb-7", Some(7), &[]).snapshot();
        live.learns = learns;
        BoardView::new(live, None, Seats::default())
    }

    #[test]
    fn only_a_board_that_learns_gets_the_button() {
        let mut out = String::new();
        calibrate_form(&mut out, &view(false), "/arbiter", Lang::En);
        assert!(out.is_empty(), "{out}");
        calibrate_form(&mut out, &view(true), "/arbiter", Lang::En);
        assert_eq!(
            out,
            r#"<form class="calibrate inline" method="post" action="/arbiter/boards/7/calibrate"><input type="hidden" name="back" value="/arbiter"><button type="submit">Calibrate</button></form>"#
        );
    }

    #[test]
    fn the_confirmation_names_the_setup_in_every_language_and_posts_confirmed() {
        for lang in Lang::ALL {
            let html = confirm_html("B 7", "/arbiter/boards/7", "/arbiter", lang);
            assert!(
                html.contains(r#"action="/arbiter/boards/7/calibrate""#),
                "{html}"
            );
            assert!(html.contains(r#"name="confirm" value="1""#), "{html}");
            assert!(html.contains("d3") && html.contains("d6"), "{lang}: {html}");
            assert!(html.contains("B 7"), "{lang}");
        }
    }
}
