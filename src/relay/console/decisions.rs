//! The event's log of decisions in the console (`/arbiter/decisions`): every decision on every
//! game in the order taken, one line each in the console's language (local time, board and
//! game, move, what, by whom), filtered by board, round and author through a form that reloads
//! the page (`?board=12&round=2&author=Chief`). Flow: the server reads the games and their
//! histories, [`crate::words::decision_log`] puts the decisions in words and filters them, and
//! they are rendered here. Pure.

use std::fmt::Write as _;

use super::{header, page};
use crate::{
    lang::Lang,
    relay::page::escape,
    words::decision_log::{LogEntry, LogFilter},
};

/// The log's page: the filter form, then the decisions, the latest last.
pub fn decisions_html(log: &[LogEntry], filter: &LogFilter, lang: Lang) -> String {
    let t = |key: &'static str| escape(lang.text(key));
    let mut main = String::new();
    header(&mut main, None, "/arbiter/decisions", lang);
    let value = |v: Option<&str>| escape(v.unwrap_or(""));
    let round = filter.round.map(|r| r.to_string());
    let _ = write!(
        main,
        r#"<main><h2>{head}</h2><form class="filter" method="get" action="/arbiter/decisions"><label>{board} <input type="text" name="board" value="{b}" size="6" dir="auto"></label><label>{round_label} <input type="number" name="round" min="1" value="{r}" inputmode="numeric" size="4"></label><label>{author} <input type="text" name="author" value="{a}" size="12" dir="auto"></label><button type="submit">{show}</button></form><p class="count">{count}</p><ol class="history decisions" dir="auto">"#,
        head = t("arbiter.decisions_head"),
        board = t("arbiter.filter_board"),
        b = value(filter.board.as_deref()),
        round_label = t("sheet.round"),
        r = value(round.as_deref()),
        author = t("arbiter.filter_author"),
        a = value(filter.author.as_deref()),
        show = t("arbiter.filter_show"),
        count = escape(&lang.fill(
            "arbiter.decisions_count",
            &[("count", &log.len().to_string())]
        )),
    );
    for entry in log {
        let _ = write!(
            main,
            r#"<li data-author="{}" data-round="{}">"#,
            escape(&entry.author),
            entry.round.map_or(String::new(), |r| r.to_string())
        );
        for (i, line) in entry.lines.iter().enumerate() {
            if i > 0 {
                let _ = write!(
                    main,
                    r#"<br><span class="withdrawn">{}</span>"#,
                    escape(line.trim())
                );
            } else {
                main.push_str(&escape(line));
            }
        }
        // A decision that stands can be undone from here, whichever game of the board it is on.
        if let Some((board, game, decision)) = &entry.undo {
            let _ = write!(
                main,
                r#"<form class="undo" method="post" action="/arbiter/boards/{}/undo"><input type="hidden" name="game" value="{game}"><input type="hidden" name="decision" value="{decision}"><button type="submit">{}</button></form>"#,
                escape(&super::url_encode(board)),
                t("arbiter.undo"),
            );
        }
        main.push_str("</li>");
    }
    main.push_str("</ol></main>");
    page(lang.text("arbiter.decisions_head"), &main, false, lang)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_lists_each_decision_under_its_filter_in_every_language() {
        let log = [LogEntry {
            at_ms: 1,
            id: 7,
            round: Some(2),
            author: "Chief <A>".into(),
            lines: vec![
                "2026-12-02 10:05:00  board 12 (game 7)  move 2 white  move corrected".into(),
                "    withdrawn: 2. g3".into(),
            ],
            undo: Some(("12".into(), 7, 31)),
        }];
        let filter = LogFilter {
            board: Some("12".into()),
            round: Some(2),
            author: None,
        };
        for lang in Lang::ALL {
            let html = decisions_html(&log, &filter, lang);
            assert!(html.contains(r#"name="board" value="12""#), "{html}");
            assert!(html.contains(r#"name="round" min="1" value="2""#), "{html}");
            assert!(html.contains(r#"data-author="Chief &lt;A&gt;" data-round="2""#));
            assert!(html.contains(r#"<br><span class="withdrawn">withdrawn: 2. g3</span>"#));
            assert!(html.contains(
                r#"<form class="undo" method="post" action="/arbiter/boards/12/undo"><input type="hidden" name="game" value="7"><input type="hidden" name="decision" value="31">"#
            ));
            assert!(html.contains(&format!(r#"<html lang="{}""#, lang.code())));
        }
    }
}
