//! The scoresheet as PDF, drawn from the same [`Scoresheet`] layout as the HTML page.
//!
//! Flow: [`pdf`] (one game) and [`pdf_sheets`] (a round: every board's sheets in one file, in
//! board order) walk [`Scoresheet::pages`] and draw one A4 page per sheet on a [`Canvas`]: the
//! header with lines to fill in, two columns of numbered rows (`No. | White | Black`, the mover's
//! clock right-aligned in each cell, `†` on time-trouble plies), then on the last sheet the
//! result, the legend, the numbered remarks (continued on further pages when they do not fit)
//! and the signature lines for White, Black and the Arbiter. [`render`] writes the canvases
//! with `krilla`.
//!
//! Direction: one layout for both ways a sheet runs. The layout measures x from the sheet's
//! start edge and the [`Canvas`] mirrors it for a right-to-left language (Persian, [`Flow`]):
//! the labels on the right, the title on the right and the page's number on the left, the
//! first column of moves on the right with its number column rightmost, then White's and
//! Black's cells, the remarks and signatures from the right. Moves, clocks, numbers and results
//! stay left-to-right lines inside their cells; a date in the language's form
//! ([`crate::lang::Lang::stored_date`]) and what a person wrote (the event, the site) run their
//! own way.
//!
//! Text: every string drawn, labels included, goes through one path, [`line::Line`]: the bidi
//! algorithm (a player's title, name and rating are each an isolate, so that each keeps its
//! own order and they stand in the paragraph's, whichever way the name and the sheet run), the
//! fonts of [`fonts::chain`] per character (Noto Sans, Noto Sans
//! Arabic, DejaVu Sans for the figurines), shaping (Arabic joining). Nothing prints as `?`: a
//! character no font covers is written as `[U+XXXX]`, and pairing import refuses such a name
//! ([`fonts::uncovered`]). A figurine sheet prints figurines; a sheet in `local` notation its
//! language's letters (Noto Sans has the Cyrillic ones).
//!
//! Why `krilla`: it embeds TrueType fonts as CID fonts, subset to the glyphs used (tagged
//! `ABCDEF+Name`), with the ToUnicode map (and ActualText where a glyph stands for several
//! characters, as Arabic ligatures do) that copy, search and `pdftotext` need, so the text of a
//! sheet can be read back; it is pure Rust, over the `pdf-writer` this module used before, and
//! takes already shaped glyphs, so shaping (`rustybuzz`), bidi (`unicode-bidi`) and font
//! fallback stay ours and testable. Doing the same on `pdf-writer` alone means writing the
//! subsetting, the CID font dictionaries and the ToUnicode CMaps ourselves.

mod line;

use krilla::{
    Document,
    color::luma,
    geom::{PathBuilder, Point, Rect},
    metadata::Metadata,
    page::PageSettings,
    paint::{Fill, Stroke},
};

use super::{
    fonts::Weight,
    scoresheet::{Cell, Page, Scoresheet},
};
use crate::store::PlayerRecord;
use line::{Dir, Line};

const WIDTH: f32 = 595.28;
const HEIGHT: f32 = 841.89;
const MARGIN: f32 = 40.0;
const ROW: f32 = 15.0;
/// The lowest a remark line may go before the signature lines.
const SIGNATURES: f32 = MARGIN + 40.0;

/// Errors of writing a PDF.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    #[error("no scoresheet to print")]
    Empty,
    #[error("writing the PDF: {0}")]
    Write(String),
}

/// The PDF bytes of `sheet`.
pub fn pdf(sheet: &Scoresheet) -> Result<Vec<u8>, PdfError> {
    let title = sheet.lang.fill(
        "sheet.document",
        &[
            ("game", &sheet.header.game_id.to_string()),
            ("board", sheet.header.board.as_deref().unwrap_or("")),
        ],
    );
    pdf_sheets(std::slice::from_ref(sheet), &title)
}

/// One PDF of several games' sheets, one after the other (a round's boards, for printing).
pub fn pdf_sheets(sheets: &[Scoresheet], title: &str) -> Result<Vec<u8>, PdfError> {
    if sheets.is_empty() {
        return Err(PdfError::Empty);
    }
    let pages: Vec<Canvas> = sheets.iter().flat_map(draw).collect();
    render(&pages, title)
}

/// The pages of one game's sheets.
fn draw(sheet: &Scoresheet) -> Vec<Canvas> {
    let mut pages = Vec::new();
    let sheets = sheet.pages();
    let count = sheets.len();
    let flow = Flow::of(sheet.lang);
    for page in &sheets {
        let mut c = Canvas::new(flow);
        let y = draw_head(&mut c, sheet, page.number, count);
        let y = draw_moves(&mut c, sheet, page, y);
        let mut more = Vec::new();
        if page.number == count {
            draw_end(&mut c, sheet, y, &mut more);
        }
        pages.push(c);
        pages.append(&mut more);
    }
    pages
}

/// Which way a sheet runs: the layout's x is measured from the start edge, the left or (right
/// to left) the right, where the canvas mirrors it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    LeftToRight,
    RightToLeft,
}

impl Flow {
    fn of(lang: crate::lang::Lang) -> Flow {
        if lang.rtl() {
            Flow::RightToLeft
        } else {
            Flow::LeftToRight
        }
    }

    /// The direction of the language's own words.
    fn words(self) -> Dir {
        match self {
            Flow::LeftToRight => Dir::Ltr,
            Flow::RightToLeft => Dir::Rtl,
        }
    }

    /// The page's x of the point `x` from the start edge.
    fn x(self, x: f32) -> f32 {
        match self {
            Flow::LeftToRight => x,
            Flow::RightToLeft => WIDTH - x,
        }
    }

    /// The page's left edge of a box `width` wide beginning at `x` from the start edge.
    fn left(self, x: f32, width: f32) -> f32 {
        match self {
            Flow::LeftToRight => x,
            Flow::RightToLeft => WIDTH - x - width,
        }
    }
}

/// What a page shows, in PDF coordinates (points, from the bottom left), drawn through the
/// layout's coordinates (x from the start edge: [`Flow`]).
struct Canvas {
    flow: Flow,
    ops: Vec<Op>,
}

impl Canvas {
    fn new(flow: Flow) -> Canvas {
        Canvas {
            flow,
            ops: Vec::new(),
        }
    }

    /// `line` beginning at `x` from the start edge (left-aligned there, or right-aligned on a
    /// right-to-left sheet), its baseline at `y`.
    fn put(&mut self, x: f32, y: f32, line: Line) {
        let x = self.flow.left(x, line.width);
        self.ops.push(Op::Text { x, y, line });
    }

    /// `line` ending at `x` from the start edge.
    fn put_end(&mut self, x: f32, y: f32, line: Line) {
        let x = self.flow.left(x - line.width, line.width);
        self.ops.push(Op::Text { x, y, line });
    }

    /// A straight line from `(x1, y1)` to `(x2, y2)`, x from the start edge.
    fn rule(&mut self, width: f32, (x1, y1): (f32, f32), (x2, y2): (f32, f32)) {
        self.ops.push(Op::Stroke {
            from: (self.flow.x(x1), y1),
            to: (self.flow.x(x2), y2),
            width,
        });
    }

    /// A rectangle `[x, y, w, h]` (x from the start edge) filled in grey.
    fn shade(&mut self, [x, y, w, h]: [f32; 4], grey: u8) {
        let x = self.flow.left(x, w);
        self.ops.push(Op::Shade {
            rect: [x, y, w, h],
            grey,
        });
    }
}

enum Op {
    /// A line of text, its baseline starting at `(x, y)`.
    Text { x: f32, y: f32, line: Line },
    /// A straight line.
    Stroke {
        from: (f32, f32),
        to: (f32, f32),
        width: f32,
    },
    /// A rectangle filled in grey (`0` black, `255` white).
    Shade { rect: [f32; 4], grey: u8 },
}

/// The document of `pages`.
fn render(pages: &[Canvas], title: &str) -> Result<Vec<u8>, PdfError> {
    let mut doc = Document::new();
    doc.set_metadata(
        Metadata::new()
            .title(title.to_owned())
            .creator("boardscribe".to_owned()),
    );
    // A4 (krilla's default is A4 in whole points, should the size ever be refused).
    let size = PageSettings::from_wh(WIDTH, HEIGHT).unwrap_or_default();
    // krilla's y goes down from the top of the page.
    let at = |x: f32, y: f32| Point::from_xy(x, HEIGHT - y);
    for canvas in pages {
        let mut page = doc.start_page_with(size.clone());
        let mut surface = page.surface();
        for op in &canvas.ops {
            match op {
                Op::Text { x, y, line } => {
                    surface.set_stroke(None);
                    surface.set_fill(Some(Fill::default()));
                    let mut x = *x;
                    for run in &line.runs {
                        surface.draw_glyphs(
                            at(x, *y),
                            &run.glyphs,
                            run.face.pdf.clone(),
                            &run.text,
                            line.size,
                            false,
                        );
                        x += run.width;
                    }
                }
                Op::Stroke { from, to, width } => {
                    let mut path = PathBuilder::new();
                    let (a, b) = (at(from.0, from.1), at(to.0, to.1));
                    path.move_to(a.x, a.y);
                    path.line_to(b.x, b.y);
                    if let Some(path) = path.finish() {
                        surface.set_fill(None);
                        surface.set_stroke(Some(Stroke {
                            width: *width,
                            ..Stroke::default()
                        }));
                        surface.draw_path(&path);
                    }
                }
                Op::Shade { rect, grey } => {
                    let [x, y, w, h] = *rect;
                    let mut path = PathBuilder::new();
                    if let Some(r) = Rect::from_xywh(x, HEIGHT - y - h, w, h) {
                        path.push_rect(r);
                    }
                    if let Some(path) = path.finish() {
                        surface.set_stroke(None);
                        surface.set_fill(Some(Fill {
                            paint: luma::Color::new(*grey).into(),
                            ..Fill::default()
                        }));
                        surface.draw_path(&path);
                    }
                }
            }
        }
        surface.finish();
        page.finish();
    }
    doc.finish().map_err(|e| PdfError::Write(e.to_string()))
}

/// The language's words (the sheet's direction) beginning at `x` from the start edge.
fn text(c: &mut Canvas, weight: Weight, size: f32, x: f32, y: f32, s: &str) {
    let line = Line::new(s, weight, size, c.flow.words());
    c.put(x, y, line);
}

/// The language's words ending at `x` from the start edge.
fn text_end(c: &mut Canvas, weight: Weight, size: f32, x: f32, y: f32, s: &str) {
    let line = Line::new(s, weight, size, c.flow.words());
    c.put_end(x, y, line);
}

/// A move, a clock, a number or a result: left to right, whichever way the sheet runs.
fn ltr(s: &str, weight: Weight, size: f32) -> Line {
    Line::new(s, weight, size, Dir::Ltr)
}

/// An isolate (FSI … PDI): text that keeps its own direction inside a line.
fn isolate(s: &str) -> String {
    format!("\u{2068}{s}\u{2069}")
}

/// A player as the header writes them: title, name and rating, each an isolate, so that each
/// keeps its own order and the three stand in the sheet's (a Persian name between a Latin
/// title and its rating, on a sheet running either way).
fn player(p: &PlayerRecord) -> String {
    let mut parts = Vec::new();
    if let Some(t) = p.title.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        parts.push(isolate(t));
    }
    parts.push(isolate(&p.name));
    if let Some(elo) = p.elo {
        parts.push(isolate(&format!("({elo})")));
    }
    parts.join(" ")
}

/// The title and the header fields; returns the y below them.
fn draw_head(c: &mut Canvas, sheet: &Scoresheet, number: usize, count: usize) -> f32 {
    let h = &sheet.header;
    let lang = sheet.lang;
    let top = HEIGHT - MARGIN;
    text(c, Weight::Bold, 14.0, MARGIN, top - 14.0, sheet.title());
    let page = lang.fill(
        "sheet.page",
        &[
            ("game", &h.game_id.to_string()),
            ("page", &number.to_string()),
            ("pages", &count.to_string()),
        ],
    );
    text_end(c, Weight::Regular, 9.0, WIDTH - MARGIN, top - 12.0, &page);
    let half = (WIDTH - 2.0 * MARGIN) / 2.0;
    // What was written or stored runs its own way; the players' parts stand in the sheet's.
    let words = c.flow.words();
    let own = |v: &Option<String>| v.clone().map(|v| (v, Dir::Auto));
    let players = |p: &Option<PlayerRecord>| p.as_ref().map(|p| (player(p), words));
    let date = h.date.as_deref().map(|d| (lang.stored_date(d), Dir::Auto));
    let [_, white_head, black_head] = sheet.column_heads();
    let fields = [
        [
            (lang.text("sheet.event"), own(&h.event)),
            (lang.text("sheet.site"), own(&h.site)),
        ],
        [
            (lang.text("sheet.round"), own(&h.round)),
            (lang.text("sheet.board"), own(&h.board)),
        ],
        [
            (lang.text("sheet.date"), date),
            (lang.text("sheet.time_control"), own(&h.time_control)),
        ],
        [
            (white_head, players(&h.white)),
            (black_head, players(&h.black)),
        ],
    ];
    // Each half's labels get the room its longest takes (62 pt at least: "Time control"), so
    // that a long label (Соревнование, Контроль времени) never runs into its value.
    let label_room = |i: usize| {
        fields
            .iter()
            .map(|pair| width(pair[i].0, Weight::Regular, 9.0) + 6.0)
            .fold(62.0_f32, f32::max)
    };
    let label_w = [label_room(0), label_room(1)];
    let mut y = top - 36.0;
    for pair in fields {
        for (i, (label, value)) in pair.into_iter().enumerate() {
            let x = MARGIN + half * i as f32;
            text(c, Weight::Regular, 9.0, x, y, label);
            let value_x = x + label_w[i];
            let room = half - label_w[i] - 8.0;
            if let Some((v, dir)) = value {
                // Smaller before anything is cut: a player's whole name, title and rating.
                let size = value_size(&v, room - 4.0);
                let v = fit(&v, Weight::Regular, size, room - 4.0);
                c.put(value_x + 2.0, y, Line::new(&v, Weight::Regular, size, dir));
            }
            c.rule(0.6, (value_x, y - 3.0), (value_x + room, y - 3.0));
        }
        y -= 18.0;
    }
    y - 6.0
}

/// The smallest size of a header value: a title, a TRF's longest name (33 characters) and a
/// rating fit in a half line at it.
const VALUE_MIN: f32 = 7.0;

/// The size (10 pt at most, [`VALUE_MIN`] at least) at which the header value `s` fits in `room`
/// points; what does not fit at the least is then cut ([`fit`]).
fn value_size(s: &str, room: f32) -> f32 {
    let at_ten = width(s, Weight::Regular, 10.0);
    if at_ten <= room {
        10.0
    } else {
        // A tenth of a point down, so that rounding never leaves it a hair too wide.
        ((100.0 * room / at_ten).floor() / 10.0).max(VALUE_MIN)
    }
}

/// The width of the move-number column.
const NO_WIDTH: f32 = 24.0;

/// The size (9 pt at most, 5 at least) at which the bold head `s` fits in `room` points: the
/// number column's head is a word in some languages (`شماره`).
fn fitting(s: &str, room: f32) -> f32 {
    let at_nine = width(s, Weight::Bold, 9.0);
    if at_nine <= room {
        9.0
    } else {
        (9.0 * room / at_nine).max(5.0)
    }
}

/// The two columns of numbered rows; returns the y below them.
fn draw_moves(c: &mut Canvas, sheet: &Scoresheet, page: &Page, top: f32) -> f32 {
    let gap = 12.0;
    let col = (WIDTH - 2.0 * MARGIN - gap) / 2.0;
    let no_w = NO_WIDTH;
    let cell_w = (col - no_w) / 2.0;
    let [no, white, black] = sheet.column_heads();
    let mut bottom = top;
    for (i, rows) in page.columns.iter().enumerate() {
        let x = MARGIN + (col + gap) * i as f32;
        let xs = [x, x + no_w, x + no_w + cell_w, x + col];
        // The head row, shaded.
        c.shade([x, top - ROW, col, ROW], 230);
        let head = top - ROW + 4.5;
        text_end(
            c,
            Weight::Bold,
            fitting(no, NO_WIDTH - 5.0),
            xs[1] - 3.0,
            head,
            no,
        );
        text(c, Weight::Bold, 9.0, xs[1] + 3.0, head, white);
        text(c, Weight::Bold, 9.0, xs[2] + 3.0, head, black);
        let mut y = top - ROW;
        for row in rows {
            let base = y - ROW + 4.5;
            let number = ltr(&row.number.to_string(), Weight::Regular, 9.0);
            c.put_end(xs[1] - 3.0, base, number);
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
            c.rule(0.5, (x, ly), (x + col, ly));
        }
        for lx in xs {
            c.rule(0.5, (lx, top), (lx, top - rows_h));
        }
        bottom = bottom.min(top - rows_h);
    }
    bottom
}

fn draw_cell(c: &mut Canvas, cell: &Cell, left: f32, w: f32, base: f32) {
    let mut s = cell.text.clone();
    if cell.time_trouble {
        s.push_str(super::scoresheet::TIME_TROUBLE_MARK);
    }
    for r in &cell.remarks {
        s.push_str(&format!(" [{r}]"));
    }
    let clock = cell.clock.as_deref().map(|k| ltr(k, Weight::Regular, 7.0));
    let clock_w = clock.as_ref().map_or(0.0, |k| k.width + 4.0);
    let s = fit(&s, Weight::Regular, 10.0, w - 6.0 - clock_w);
    c.put(left + 3.0, base, ltr(&s, Weight::Regular, 10.0));
    if let Some(k) = clock {
        c.put_end(left + w - 3.0, base + 0.5, k);
    }
}

/// Result, legend, remarks and signatures under the moves of the last sheet; remarks that do
/// not fit go on continuation pages, pushed to `more`, and the signatures on the last of them.
fn draw_end(c: &mut Canvas, sheet: &Scoresheet, top: f32, more: &mut Vec<Canvas>) {
    let mut y = top - 22.0;
    let said = format!("{}:", sheet.lang.text("sheet.result"));
    text(c, Weight::Regular, 11.0, MARGIN, y, &said);
    let result = ltr(&sheet.result, Weight::Bold, 13.0);
    // The result after its label, however long the label is in the sheet's language.
    let at = MARGIN + (width(&said, Weight::Regular, 11.0) + 8.0).max(44.0);
    let after = at + 8.0 + result.width;
    c.put(at, y, result);
    if let Some(t) = sheet.termination_text() {
        text(c, Weight::Regular, 10.0, after, y, &format!("({t})"));
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
            .map(|a| format!("{} ", sheet.lang.fill("sheet.article", &[("article", a)])))
            .unwrap_or_default();
        let s = format!("[{}] {article}{}: {}", r.number, r.title, r.text);
        for (i, l) in wrap(&s, 8.0, WIDTH - 2.0 * MARGIN - 10.0)
            .into_iter()
            .enumerate()
        {
            lines.push((i > 0, l));
        }
    }
    let mut pending: Vec<Canvas> = Vec::new();
    let mut current: Option<Canvas> = None;
    for (indent, l) in lines {
        if y < SIGNATURES + 12.0 {
            if let Some(done) = current.take() {
                pending.push(done);
            }
            let mut next = Canvas::new(c.flow);
            text(
                &mut next,
                Weight::Bold,
                11.0,
                MARGIN,
                HEIGHT - MARGIN - 12.0,
                &sheet.lang.fill(
                    "sheet.remarks_continued",
                    &[("game", &sheet.header.game_id.to_string())],
                ),
            );
            current = Some(next);
            y = HEIGHT - MARGIN - 34.0;
        }
        let x = if indent { MARGIN + 10.0 } else { MARGIN };
        let target = current.as_mut().unwrap_or(&mut *c);
        text(target, Weight::Regular, 8.0, x, y, &l);
        y -= 10.5;
    }
    let target = current.as_mut().unwrap_or(&mut *c);
    draw_signatures(target, sheet);
    more.append(&mut pending);
    if let Some(last) = current {
        more.push(last);
    }
}

fn draw_signatures(c: &mut Canvas, sheet: &Scoresheet) {
    let gap = 20.0;
    let w = (WIDTH - 2.0 * MARGIN - 2.0 * gap) / 3.0;
    for (i, (_, label)) in sheet.signers().into_iter().enumerate() {
        let x = MARGIN + (w + gap) * i as f32;
        c.rule(0.6, (x, SIGNATURES - 10.0), (x + w, SIGNATURES - 10.0));
        text(c, Weight::Regular, 8.5, x, SIGNATURES - 21.0, &label);
    }
}

/// The width of `s` in points, as drawn (whichever way it runs).
fn width(s: &str, weight: Weight, size: f32) -> f32 {
    Line::new(s, weight, size, Dir::Auto).width
}

/// Words of `s` in lines no wider than `max` at `size` (regular).
fn wrap(s: &str, size: f32, max: f32) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for word in s.split_whitespace() {
        let candidate = if cur.is_empty() {
            word.to_owned()
        } else {
            format!("{cur} {word}")
        };
        if width(&candidate, Weight::Regular, size) > max && !cur.is_empty() {
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

/// `s` cut (with `...`) to fit `max` points at `size`: the longest beginning that fits.
fn fit(s: &str, weight: Weight, size: f32, max: f32) -> String {
    if width(s, weight, size) <= max {
        return s.to_owned();
    }
    let chars: Vec<char> = s.chars().collect();
    let cut = |n: usize| {
        let mut out: String = chars[..n].iter().collect();
        out.push_str("...");
        out
    };
    // The longest prefix that fits, by bisection (widths grow with the prefix).
    let (mut lo, mut hi) = (0, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if width(&cut(mid), weight, size) <= max {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    cut(lo)
}

#[cfg(test)]
mod tests;
