//! The scoresheet as PDF, drawn from the same [`Scoresheet`] layout as the HTML page.
//!
//! Flow: [`pdf`] walks [`Scoresheet::pages`] and writes one A4 page per sheet with `pdf-writer`
//! (in-process, no external program): the header with lines to fill in, two columns of numbered
//! rows (`No. | White | Black`, the mover's clock right-aligned in each cell, `†` on time-trouble
//! plies), then on the last sheet the result, the legend, the numbered remarks (continued on
//! further pages when they do not fit) and the signature lines for White, Black and the Arbiter.
//!
//! Fonts: the PDF uses the standard Helvetica fonts, which every reader has, so nothing is
//! embedded and the file stays small. They have no chess figurines, so the PDF always shows
//! plain SAN (a figurine sheet is written with letters); text is WinAnsi-encoded, and a
//! character outside it (Cyrillic names, for instance) prints as `?` — use the HTML sheet for
//! those.

use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

use super::scoresheet::{Cell, Page, Scoresheet};
use crate::game::Kind;

const WIDTH: f32 = 595.28;
const HEIGHT: f32 = 841.89;
const MARGIN: f32 = 40.0;
const ROW: f32 = 15.0;
/// The lowest a remark line may go before the signature lines.
const SIGNATURES: f32 = MARGIN + 40.0;

const REGULAR: Name<'static> = Name(b"F1");
const BOLD: Name<'static> = Name(b"F2");

/// The PDF bytes of `sheet`.
pub fn pdf(sheet: &Scoresheet) -> Vec<u8> {
    let mut pages: Vec<Content> = Vec::new();
    let sheets = sheet.pages();
    let count = sheets.len();
    for page in &sheets {
        let mut c = Content::new();
        let y = draw_head(&mut c, sheet, page.number, count);
        let y = draw_moves(&mut c, sheet, page, y);
        let mut more = Vec::new();
        if page.number == count {
            draw_end(&mut c, sheet, y, &mut more);
        }
        pages.push(c);
        pages.append(&mut more);
    }
    write(sheet, pages)
}

/// Assembles the document from the pages' content streams.
fn write(sheet: &Scoresheet, pages: Vec<Content>) -> Vec<u8> {
    let catalog = Ref::new(1);
    let tree = Ref::new(2);
    let regular = Ref::new(3);
    let bold = Ref::new(4);
    let info = Ref::new(5);
    let ids: Vec<(Ref, Ref)> = (0..pages.len() as i32)
        .map(|i| (Ref::new(6 + 2 * i), Ref::new(7 + 2 * i)))
        .collect();
    let mut pdf = Pdf::new();
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree)
        .kids(ids.iter().map(|(p, _)| *p))
        .count(ids.len() as i32);
    pdf.type1_font(regular)
        .base_font(Name(b"Helvetica"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    pdf.type1_font(bold)
        .base_font(Name(b"Helvetica-Bold"))
        .encoding_predefined(Name(b"WinAnsiEncoding"));
    let title = format!("Scoresheet, game {}", sheet.header.game_id);
    pdf.document_info(info)
        .title(TextStr(&title))
        .creator(TextStr("boardscribe"));
    for ((page_id, content_id), content) in ids.iter().zip(pages) {
        let mut page = pdf.page(*page_id);
        page.media_box(Rect::new(0.0, 0.0, WIDTH, HEIGHT))
            .parent(tree)
            .contents(*content_id);
        let mut resources = page.resources();
        let mut fonts = resources.fonts();
        fonts.pair(REGULAR, regular);
        fonts.pair(BOLD, bold);
        fonts.finish();
        resources.finish();
        page.finish();
        pdf.stream(*content_id, &content.finish());
    }
    pdf.finish()
}

/// Text at `(x, y)`.
fn text(c: &mut Content, font: Name, size: f32, x: f32, y: f32, s: &str) {
    c.begin_text();
    c.set_font(font, size);
    c.next_line(x, y);
    c.show(Str(&win_ansi(s)));
    c.end_text();
}

/// Text ending at `right`.
fn text_right(c: &mut Content, font: Name, size: f32, right: f32, y: f32, s: &str) {
    text(c, font, size, right - width(s, size), y, s);
}

fn line(c: &mut Content, x1: f32, y1: f32, x2: f32, y2: f32) {
    c.move_to(x1, y1);
    c.line_to(x2, y2);
    c.stroke();
}

/// The title and the header fields; returns the y below them.
fn draw_head(c: &mut Content, sheet: &Scoresheet, number: usize, count: usize) -> f32 {
    let h = &sheet.header;
    let heading = match sheet.kind {
        Kind::Chess => "Scoresheet",
        Kind::Togyz => "Togyz korgool scoresheet",
    };
    let top = HEIGHT - MARGIN;
    text(c, BOLD, 14.0, MARGIN, top - 14.0, heading);
    let page = format!("Game {} - sheet {number} of {count}", h.game_id);
    text_right(c, REGULAR, 9.0, WIDTH - MARGIN, top - 12.0, &page);
    c.set_line_width(0.6);
    let half = (WIDTH - 2.0 * MARGIN) / 2.0;
    let fields = [
        [("Event", &h.event), ("Site", &h.site)],
        [("Round", &h.round), ("Board", &h.board)],
        [("Date", &h.date), ("Time control", &h.time_control)],
        [("White", &h.white), ("Black", &h.black)],
    ];
    let mut y = top - 36.0;
    for pair in fields {
        for (i, (label, value)) in pair.into_iter().enumerate() {
            let x = MARGIN + half * i as f32;
            text(c, REGULAR, 9.0, x, y, label);
            let value_x = x + 62.0;
            let room = half - 70.0;
            if let Some(v) = value {
                text(
                    c,
                    REGULAR,
                    10.0,
                    value_x + 2.0,
                    y,
                    &fit(v, 10.0, room - 4.0),
                );
            }
            line(c, value_x, y - 3.0, value_x + room, y - 3.0);
        }
        y -= 18.0;
    }
    y - 6.0
}

/// The two columns of numbered rows; returns the y below them.
fn draw_moves(c: &mut Content, sheet: &Scoresheet, page: &Page, top: f32) -> f32 {
    let gap = 12.0;
    let col = (WIDTH - 2.0 * MARGIN - gap) / 2.0;
    let no_w = 24.0;
    let cell_w = (col - no_w) / 2.0;
    let [no, white, black] = sheet.column_heads();
    let no = if no == "№" { "No." } else { no };
    let mut bottom = top;
    c.set_line_width(0.5);
    for (i, rows) in page.columns.iter().enumerate() {
        let x = MARGIN + (col + gap) * i as f32;
        let xs = [x, x + no_w, x + no_w + cell_w, x + col];
        // The head row, shaded.
        c.save_state();
        c.set_fill_gray(0.9);
        c.rect(x, top - ROW, col, ROW);
        c.fill_nonzero();
        c.restore_state();
        text_right(c, BOLD, 9.0, xs[1] - 3.0, top - ROW + 4.5, no);
        text(c, BOLD, 9.0, xs[1] + 3.0, top - ROW + 4.5, white);
        text(c, BOLD, 9.0, xs[2] + 3.0, top - ROW + 4.5, black);
        let mut y = top - ROW;
        for row in rows {
            let base = y - ROW + 4.5;
            text_right(c, REGULAR, 9.0, xs[1] - 3.0, base, &row.number.to_string());
            for (cell, left) in [(&row.white, xs[1]), (&row.black, xs[2])] {
                if let Some(cell) = cell {
                    draw_cell(c, cell, left, cell_w, base);
                }
            }
            y -= ROW;
        }
        // The grid.
        let rows_h = ROW * (rows.len() as f32 + 1.0);
        for k in 0..=rows.len() + 1 {
            let ly = top - ROW * k as f32;
            line(c, x, ly, x + col, ly);
        }
        for lx in xs {
            line(c, lx, top, lx, top - rows_h);
        }
        bottom = bottom.min(top - rows_h);
    }
    bottom
}

fn draw_cell(c: &mut Content, cell: &Cell, left: f32, w: f32, base: f32) {
    let mut s = cell.text.clone();
    if cell.time_trouble {
        s.push_str(super::scoresheet::TIME_TROUBLE_MARK);
    }
    for r in &cell.remarks {
        s.push_str(&format!(" [{r}]"));
    }
    let clock_w = cell.clock.as_deref().map_or(0.0, |k| width(k, 7.0) + 4.0);
    text(
        c,
        REGULAR,
        10.0,
        left + 3.0,
        base,
        &fit(&s, 10.0, w - 6.0 - clock_w),
    );
    if let Some(k) = &cell.clock {
        text_right(c, REGULAR, 7.0, left + w - 3.0, base + 0.5, k);
    }
}

/// Result, legend, remarks and signatures under the moves of the last sheet; remarks that do
/// not fit go on continuation pages, pushed to `more`, and the signatures on the last of them.
fn draw_end(c: &mut Content, sheet: &Scoresheet, top: f32, more: &mut Vec<Content>) {
    let mut y = top - 22.0;
    text(c, REGULAR, 11.0, MARGIN, y, "Result:");
    text(c, BOLD, 13.0, MARGIN + 44.0, y, &sheet.result);
    if let Some(t) = sheet.termination_text() {
        let x = MARGIN + 52.0 + width(&sheet.result, 13.0);
        text(c, REGULAR, 10.0, x, y, &format!("({t})"));
    }
    y -= 16.0;
    let mut lines: Vec<(bool, String)> = Vec::new();
    if sheet.has_time_trouble {
        for l in wrap(&sheet.time_trouble_legend(), 8.0, WIDTH - 2.0 * MARGIN) {
            lines.push((false, l));
        }
    }
    for r in &sheet.remarks {
        let article = r
            .article
            .as_deref()
            .map(|a| format!("Art. {a} "))
            .unwrap_or_default();
        let s = format!("[{}] {article}{}: {}", r.number, r.title, r.text);
        for (i, l) in wrap(&s, 8.0, WIDTH - 2.0 * MARGIN - 10.0)
            .into_iter()
            .enumerate()
        {
            lines.push((i > 0, l));
        }
    }
    let mut pending: Vec<Content> = Vec::new();
    let mut current: Option<Content> = None;
    for (indent, l) in lines {
        if y < SIGNATURES + 12.0 {
            if let Some(done) = current.take() {
                pending.push(done);
            }
            let mut next = Content::new();
            text(
                &mut next,
                BOLD,
                11.0,
                MARGIN,
                HEIGHT - MARGIN - 12.0,
                &format!("Game {}: remarks, continued", sheet.header.game_id),
            );
            current = Some(next);
            y = HEIGHT - MARGIN - 34.0;
        }
        let x = if indent { MARGIN + 10.0 } else { MARGIN };
        let target = current.as_mut().unwrap_or(&mut *c);
        text(target, REGULAR, 8.0, x, y, &l);
        y -= 10.5;
    }
    let target = current.as_mut().unwrap_or(&mut *c);
    draw_signatures(target);
    more.append(&mut pending);
    if let Some(last) = current {
        more.push(last);
    }
}

fn draw_signatures(c: &mut Content) {
    let gap = 20.0;
    let w = (WIDTH - 2.0 * MARGIN - 2.0 * gap) / 3.0;
    c.set_line_width(0.6);
    for (i, who) in ["White", "Black", "Arbiter"].into_iter().enumerate() {
        let x = MARGIN + (w + gap) * i as f32;
        line(c, x, SIGNATURES - 10.0, x + w, SIGNATURES - 10.0);
        text(
            c,
            REGULAR,
            8.5,
            x,
            SIGNATURES - 21.0,
            &format!("Signature of {who}"),
        );
    }
}

/// Words of `s` in lines no wider than `max` at `size`.
fn wrap(s: &str, size: f32, max: f32) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for word in s.split_whitespace() {
        let candidate = if cur.is_empty() {
            word.to_owned()
        } else {
            format!("{cur} {word}")
        };
        if width(&candidate, size) > max && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
            cur = word.to_owned();
        } else {
            cur = candidate;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `s` cut (with `...`) to fit `max` points at `size`.
fn fit(s: &str, size: f32, max: f32) -> String {
    if width(s, size) <= max {
        return s.to_owned();
    }
    let mut out = String::new();
    for ch in s.chars() {
        out.push(ch);
        if width(&out, size) + width("...", size) > max {
            out.pop();
            break;
        }
    }
    out.push_str("...");
    out
}

/// The width of `s` in Helvetica at `size`: exact for digits, punctuation of clocks and the
/// space, an upper bound for letters (good enough to keep text inside its cell).
fn width(s: &str, size: f32) -> f32 {
    let units: u32 = s
        .chars()
        .map(|c| match c {
            '0'..='9' => 556,
            ' ' | ':' | '.' | ',' | 'i' | 'j' | 'l' | '!' | '\'' | '|' => 278,
            'f' | 't' | 'r' | 'I' | '[' | ']' | '(' | ')' | '-' => 333,
            'm' | 'M' | 'W' => 833,
            'w' => 722,
            'A'..='Z' => 722,
            _ => 556,
        })
        .sum();
    units as f32 * size / 1000.0
}

/// `s` in WinAnsiEncoding (the standard fonts' encoding); figurines become letters, an arrow
/// `->`, and other characters outside the encoding `?`.
fn win_ansi(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for ch in s.chars() {
        let b: &[u8] = match ch {
            ' '..='~' => {
                out.push(ch as u8);
                continue;
            }
            '\u{a0}'..='\u{ff}' => {
                out.push(ch as u32 as u8);
                continue;
            }
            '♔' | '♚' => b"K",
            '♕' | '♛' => b"Q",
            '♖' | '♜' => b"R",
            '♗' | '♝' => b"B",
            '♘' | '♞' => b"N",
            '→' => b"->",
            '€' => &[0x80],
            '‚' => &[0x82],
            '„' => &[0x84],
            '…' => &[0x85],
            '†' => &[0x86],
            '‡' => &[0x87],
            '‰' => &[0x89],
            'Š' => &[0x8a],
            'Œ' => &[0x8c],
            'Ž' => &[0x8e],
            '‘' => &[0x91],
            '’' => &[0x92],
            '“' => &[0x93],
            '”' => &[0x94],
            '•' => &[0x95],
            '–' => &[0x96],
            '—' => &[0x97],
            '™' => &[0x99],
            'š' => &[0x9a],
            'œ' => &[0x9c],
            'ž' => &[0x9e],
            'Ÿ' => &[0x9f],
            _ => b"?",
        };
        out.extend_from_slice(b);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn win_ansi_keeps_latin_and_the_marks_of_a_sheet() {
        assert_eq!(win_ansi("Nf3 ½"), b"Nf3 \xbd");
        assert_eq!(win_ansi("1–0/62 †"), b"1\x960/62 \x86");
        assert_eq!(win_ansi("♘f3 ♕xd8"), b"Nf3 Qxd8");
        assert_eq!(win_ansi("Ақ"), b"??");
    }

    #[test]
    fn remarks_that_do_not_fit_continue_on_a_page_with_the_signatures_last() {
        use crate::{
            export::scoresheet::{Header, Remark, RemarkKind},
            game::Kind,
        };
        let remark = |number| Remark {
            number,
            kind: RemarkKind::Irregularity,
            ply: Some(3),
            article: Some("7.4".into()),
            title: "Displaced pieces".into(),
            text: "before move 2 (White); e2 → empty; resolved".into(),
        };
        let mut sheet = Scoresheet {
            kind: Kind::Chess,
            header: Header::default(),
            rows: Vec::new(),
            moves_per_page: 60,
            remarks: Vec::new(),
            result: "1-0".into(),
            termination: None,
            has_time_trouble: false,
            figurine: false,
            lang: crate::lang::Lang::En,
        };
        let pages = |s: &Scoresheet| {
            let doc = lopdf::Document::load_mem(&pdf(s)).unwrap();
            let ids: Vec<u32> = doc.get_pages().keys().copied().collect();
            let last = doc.extract_text(&[*ids.last().unwrap()]).unwrap();
            (ids.len(), last)
        };
        sheet.remarks = (1..=3).map(remark).collect();
        let (n, last) = pages(&sheet);
        assert_eq!(n, 1);
        assert!(last.contains("[3] Art. 7.4") && last.contains("Signature of Arbiter"));
        sheet.remarks = (1..=40).map(remark).collect();
        let (n, last) = pages(&sheet);
        assert_eq!(n, 2, "the remarks continue on a second page");
        assert!(last.contains("[40] Art. 7.4") && last.contains("Signature of Arbiter"));
        assert!(last.contains("e2 -> empty"));
    }

    #[test]
    fn long_text_is_wrapped_and_cut_to_its_room() {
        let s = "a b c ".repeat(100);
        let lines = wrap(&s, 8.0, 200.0);
        assert!(lines.len() > 3);
        assert!(lines.iter().all(|l| width(l, 8.0) <= 200.0));
        let cut = fit("Magnus Carlsen-Nepomniachtchi", 10.0, 60.0);
        assert!(cut.ends_with("...") && width(&cut, 10.0) <= 60.0, "{cut}");
    }
}
