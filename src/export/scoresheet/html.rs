//! The scoresheet as a print-ready A4 HTML page: one table of move pairs per page, the remarks
//! and the signature lines at the end.

use super::*;

/// The sheet as a self-contained HTML page (inline CSS, A4, print-ready).
///
/// Structure (stable, tests and tools may read it): one `section.sheet` a page; a
/// `table.header`; two `table.moves` a page, each row `tr.row` with `td.no`, `td.w`, `td.b`;
/// in a played cell `span.san` (the move), `span.clk` (`h:mm:ss`), `span.tt` (the time-trouble
/// mark); `ol.remarks` with `li.remark` (`span.art` the article); `.result .value`; and
/// `div.signature` lines for White, Black and the Arbiter.
pub fn html(sheet: &Scoresheet) -> String {
    let lang = sheet.lang;
    let title = lang.fill(
        "sheet.document",
        &[
            ("game", &sheet.header.game_id.to_string()),
            ("board", sheet.header.board.as_deref().unwrap_or("")),
        ],
    );
    html_sheets(std::slice::from_ref(sheet), lang, &title)
}

/// Several games' sheets in one printable page titled `title` (a round's, in board order): each
/// game's sheets one after the other, a printed page each.
pub fn html_sheets(sheets: &[Scoresheet], lang: Lang, title: &str) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"{}\" dir=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
        lang.code(),
        lang.dir(),
        escape_html(title)
    );
    for sheet in sheets {
        let pages = sheet.pages();
        let count = pages.len();
        for page in &pages {
            html_page(&mut out, sheet, page, count);
        }
    }
    out.push_str("</body>\n</html>\n");
    out
}

pub(super) fn html_page(out: &mut String, sheet: &Scoresheet, page: &Page, count: usize) {
    let h = &sheet.header;
    let lang = sheet.lang;
    let heading = escape_html(sheet.title());
    let of = lang.fill(
        "sheet.page",
        &[
            ("game", &h.game_id.to_string()),
            ("page", &page.number.to_string()),
            ("pages", &count.to_string()),
        ],
    );
    let _ = writeln!(
        out,
        "<section class=\"sheet\" data-page=\"{}\">\n<h1><span>{heading}</span>\
         <span class=\"page\">{}</span></h1>",
        page.number,
        escape_html(&of)
    );
    let field = |v: &Option<String>| v.as_deref().map(escape_html).unwrap_or_default();
    // What a person wrote (the event, the site, the names) is isolated: a right-to-left name
    // keeps its title and rating in their places, whichever way the page runs.
    let written = |v: &Option<String>| {
        v.as_deref()
            .map(|v| format!("<bdi>{}</bdi>", escape_html(v)))
            .unwrap_or_default()
    };
    let player =
        |p: &Option<PlayerRecord>| p.as_ref().map(PlayerRecord::label_html).unwrap_or_default();
    // The date in the language's form, which runs the language's way (Persian's right to
    // left); one stored with unknown parts stays as stored, left to right.
    let date = h
        .date
        .as_deref()
        .map(|d| format!("<bdi>{}</bdi>", escape_html(&lang.stored_date(d))))
        .unwrap_or_default();
    let label = |key| escape_html(lang.text(key));
    let [_, white, black] = sheet.column_heads();
    let _ = writeln!(
        out,
        "<table class=\"header\">\n\
         <tr><th>{}</th><td class=\"event\">{}</td><th>{}</th><td class=\"site\">{}</td></tr>\n\
         <tr><th>{}</th><td class=\"round\">{}</td><th>{}</th><td class=\"board\">{}</td></tr>\n\
         <tr><th>{}</th><td class=\"date\">{}</td><th>{}</th><td class=\"time-control\">{}</td></tr>\n\
         <tr><th>{}</th><td class=\"white\">{}</td><th>{}</th><td class=\"black\">{}</td></tr>\n\
         </table>",
        label("sheet.event"),
        written(&h.event),
        label("sheet.site"),
        written(&h.site),
        label("sheet.round"),
        field(&h.round),
        label("sheet.board"),
        field(&h.board),
        label("sheet.date"),
        date,
        label("sheet.time_control"),
        field(&h.time_control),
        escape_html(white),
        player(&h.white),
        escape_html(black),
        player(&h.black),
    );
    let [no, white, black] = sheet.column_heads();
    out.push_str("<div class=\"columns\">\n");
    for column in &page.columns {
        let _ = writeln!(
            out,
            "<table class=\"moves\">\n<thead><tr><th>{no}</th><th>{white}</th><th>{black}</th></tr></thead>\n<tbody>"
        );
        for row in column {
            let _ = writeln!(
                out,
                "<tr class=\"row\"><td class=\"no\">{}</td><td class=\"w\">{}</td><td class=\"b\">{}</td></tr>",
                row.number,
                html_cell(row.white.as_ref(), sheet.lang),
                html_cell(row.black.as_ref(), sheet.lang)
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    out.push_str("</div>\n");
    if page.number == count {
        html_end(out, sheet);
    }
    out.push_str("</section>\n");
}

pub(super) fn html_cell(cell: Option<&Cell>, lang: Lang) -> String {
    let Some(c) = cell else {
        return String::new();
    };
    let mut s = format!("<span class=\"san\">{}</span>", escape_html(&c.text));
    if c.time_trouble {
        let _ = write!(
            s,
            "<span class=\"tt\" title=\"{}\">{TIME_TROUBLE_MARK}</span>",
            escape_html(lang.text("sheet.time_trouble"))
        );
    }
    for r in &c.remarks {
        let _ = write!(s, "<span class=\"ref\">[{r}]</span>");
    }
    if let Some(clk) = &c.clock {
        let _ = write!(s, "<span class=\"clk\">{clk}</span>");
    }
    s
}

pub(super) fn html_end(out: &mut String, sheet: &Scoresheet) {
    let termination = sheet
        .termination_text()
        .map(|t| format!(" <span class=\"termination\">({})</span>", escape_html(&t)))
        .unwrap_or_default();
    let lang = sheet.lang;
    let _ = writeln!(
        out,
        "<div class=\"result\">{}: <span class=\"value\">{}</span>{termination}</div>",
        escape_html(lang.text("sheet.result")),
        escape_html(&sheet.result)
    );
    if sheet.has_time_trouble {
        let _ = writeln!(
            out,
            "<p class=\"legend\">{}</p>",
            escape_html(&sheet.time_trouble_legend())
        );
    }
    if !sheet.remarks.is_empty() {
        out.push_str("<ol class=\"remarks\">\n");
        for r in &sheet.remarks {
            let article = r
                .article
                .as_deref()
                .map(|a| {
                    let art = lang.fill("sheet.article", &[("article", a)]);
                    format!("<span class=\"art\">{}</span> ", escape_html(&art))
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "<li class=\"remark\" value=\"{}\" data-ply=\"{}\">{article}<span class=\"title\">{}</span>: <bdi>{}</bdi></li>",
                r.number,
                r.ply.map(|p| p.to_string()).unwrap_or_default(),
                escape_html(&r.title),
                escape_html(&r.text)
            );
        }
        out.push_str("</ol>\n");
    }
    out.push_str("<div class=\"signatures\">\n");
    for (signer, line) in sheet.signers() {
        let _ = writeln!(
            out,
            "<div class=\"signature\" data-signer=\"{signer}\">{}</div>",
            escape_html(&line)
        );
    }
    out.push_str("</div>\n");
}
