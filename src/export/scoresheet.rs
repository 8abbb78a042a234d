//! Printable scoresheets: one layout model, two renderers (HTML here, PDF in [`super::pdf`]).
//!
//! Flow: [`Scoresheet::from_game`] turns a [`GameRecord`] into a pure layout: the [`Header`]
//! (blank lines for what the record does not know, to be filled in by hand), numbered rows of
//! `white | black` cells with the mover's clock after the move and the time-trouble mark
//! (FIDE Article 8.4; Kyrgyz rules 6.5 for togyz korgool), the [`Remark`]s (irregularities with
//! their article, flag falls, claimable draws, the arbiter's decisions), the result and
//! termination. [`Scoresheet::pages`] cuts the rows into sheets laid out like a FIDE form (two
//! columns of numbered rows a page, the unused rows left empty); [`html`] writes a self-contained
//! A4 page with inline CSS, one `<section class="sheet">` a page, and signature lines for White,
//! Black and the Arbiter under the last one.

use std::fmt::Write as _;

use serde_json::Value;

use super::{escape_html, json};
use crate::{
    arbiter::IrregularityKind,
    game::{
        Kind, Outcome,
        togyz::{
            Rules,
            notation::{ResultText, from_fen},
        },
    },
    store::{Action, DECISION_KIND, GameRecord},
    tracker::event::RecordedMove,
};

/// How a scoresheet is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SheetOptions {
    /// Figurine SAN (♔♕♖♗♘ for K Q R B N; pawns plain) instead of letters (chess only).
    pub figurine: bool,
    /// Numbered rows on one sheet, in two columns; a FIDE form holds 60 (1–30 | 31–60).
    pub moves_per_page: u32,
    /// The time control for the header, when the caller knows it (e.g. `90+30`).
    pub time_control: Option<String>,
}

impl Default for SheetOptions {
    fn default() -> SheetOptions {
        SheetOptions {
            figurine: false,
            moves_per_page: 60,
            time_control: None,
        }
    }
}

/// The header of a sheet; `None` prints as a blank line to fill in by hand.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub game_id: i64,
    pub event: Option<String>,
    pub site: Option<String>,
    pub round: Option<String>,
    /// The board (its name until pairings give a number).
    pub board: Option<String>,
    /// `YYYY.MM.DD` as stored.
    pub date: Option<String>,
    pub white: Option<String>,
    pub black: Option<String>,
    pub time_control: Option<String>,
}

impl Header {
    /// The header fields a [`GameRecord`] has; the rest stay blank.
    pub fn from_game(g: &GameRecord) -> Header {
        Header {
            game_id: g.id.0,
            board: Some(g.board_name.clone()).filter(|b| !b.trim().is_empty()),
            date: g.date.clone(),
            white: g.white.clone().filter(|w| !w.trim().is_empty()),
            black: g.black.clone().filter(|b| !b.trim().is_empty()),
            ..Header::default()
        }
    }
}

/// One half of a row: a ply as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub ply: u32,
    /// SAN (letters or figurines) for chess; `76`, `45X` for togyz korgool.
    pub text: String,
    /// The mover's clock after the move, `h:mm:ss`.
    pub clock: Option<String>,
    /// The mover was exempt from recording (Article 8.4): this ply is the arbiter's record.
    pub time_trouble: bool,
    /// Numbers of the [`Remark`]s about this ply.
    pub remarks: Vec<usize>,
}

/// A numbered row: move `number`, White's and Black's plies (empty when not played).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub number: u32,
    pub white: Option<Cell>,
    pub black: Option<Cell>,
}

/// What a remark reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemarkKind {
    /// Shown by the board or the clock (displaced, illegal move, ...).
    Irregularity,
    /// A flag fell.
    FlagFall,
    /// A draw could be claimed (or the game was drawn by the laws).
    Claim,
    /// A decision by the arbiter (result, ruling, correction, note).
    Decision,
}

/// A numbered remark under the moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remark {
    /// 1-based, in the order listed.
    pub number: usize,
    pub kind: RemarkKind,
    /// The ply it is about (for an irregularity: the ply it happened before).
    pub ply: Option<u32>,
    /// The article of the laws, as stored (`7.4`, `6.9`).
    pub article: Option<String>,
    /// A few words (`Illegal move`, `Arbiter: result`).
    pub title: String,
    /// The rest, one line of text.
    pub text: String,
}

/// One printed sheet: its number (1-based) and its columns of rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub number: usize,
    pub columns: Vec<Vec<Row>>,
}

/// A game laid out as a scoresheet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scoresheet {
    pub kind: Kind,
    pub header: Header,
    /// Every played move number, in order.
    pub rows: Vec<Row>,
    pub moves_per_page: u32,
    pub remarks: Vec<Remark>,
    /// As written on the sheet: `1-0`, `½-½`; togyz `1–0/62` with the supplementary index.
    pub result: String,
    pub termination: Option<String>,
    /// Whether any ply carries the time-trouble mark (the legend is printed then).
    pub has_time_trouble: bool,
    pub figurine: bool,
}

/// The mark of a time-trouble ply.
pub const TIME_TROUBLE_MARK: &str = "†";

impl Scoresheet {
    /// The layout of `g`.
    pub fn from_game(g: &GameRecord, options: &SheetOptions) -> Scoresheet {
        let remarks = remarks(g);
        let figurine = options.figurine && g.kind == Kind::Chess;
        let cell = |m: &RecordedMove| Cell {
            ply: m.ply,
            text: if figurine {
                to_figurine(&m.notation)
            } else {
                m.notation.clone()
            },
            clock: mover_clock(m).map(hms),
            time_trouble: m.time_trouble,
            remarks: remarks
                .iter()
                .filter(|r| r.ply == Some(m.ply))
                .map(|r| r.number)
                .collect(),
        };
        let mut rows: Vec<Row> = Vec::new();
        for m in &g.moves {
            let number = m.ply.div_ceil(2);
            if rows.last().is_none_or(|r| r.number != number) {
                rows.push(Row {
                    number,
                    white: None,
                    black: None,
                });
            }
            if let Some(row) = rows.last_mut() {
                if m.ply % 2 == 1 {
                    row.white = Some(cell(m));
                } else {
                    row.black = Some(cell(m));
                }
            }
        }
        let mut header = Header::from_game(g);
        header.time_control = options.time_control.clone();
        Scoresheet {
            kind: g.kind,
            header,
            rows,
            moves_per_page: options.moves_per_page.max(2),
            remarks,
            result: result_text(g),
            termination: g.termination.clone(),
            has_time_trouble: g.moves.iter().any(|m| m.time_trouble),
            figurine,
        }
    }

    /// The sheets: as many as the moves need (at least one), each with two columns of
    /// numbered rows, unused rows empty.
    pub fn pages(&self) -> Vec<Page> {
        let per_page = self.moves_per_page;
        let per_column = per_page.div_ceil(2);
        let last = self.rows.last().map_or(0, |r| r.number);
        let count = last.div_ceil(per_page).max(1);
        (0..count)
            .map(|p| {
                let first = p * per_page + 1;
                let columns = (0..2)
                    .map(|c| {
                        let start = first + c * per_column;
                        let end = (first + per_page).min(start + per_column);
                        (start..end).map(|n| self.row(n)).collect()
                    })
                    .collect();
                Page {
                    number: p as usize + 1,
                    columns,
                }
            })
            .collect()
    }

    /// Row `number`, empty if not played.
    fn row(&self, number: u32) -> Row {
        self.rows
            .iter()
            .find(|r| r.number == number)
            .cloned()
            .unwrap_or(Row {
                number,
                white: None,
                black: None,
            })
    }

    /// The legend of the time-trouble mark, citing the article of this game's laws.
    pub fn time_trouble_legend(&self) -> String {
        let article = match self.kind {
            Kind::Chess => "FIDE Article 8.4",
            Kind::Togyz => "Kyrgyz rules 6.5",
        };
        format!(
            "{TIME_TROUBLE_MARK} {article}: the player had under five minutes and was not obliged \
             to record; this move is from the arbiter's record (boardscribe)."
        )
    }

    /// The column heads: `No. | White | Black` (`№` for togyz korgool, as on Kazakh sheets).
    pub fn column_heads(&self) -> [&'static str; 3] {
        match self.kind {
            Kind::Chess => ["No.", "White", "Black"],
            Kind::Togyz => ["№", "White", "Black"],
        }
    }

    /// The termination in words, if known.
    pub fn termination_text(&self) -> Option<String> {
        self.termination.as_ref().map(|t| t.replace('_', " "))
    }
}

/// The HTML page of `g`'s scoresheet.
pub fn scoresheet_html(g: &GameRecord, options: &SheetOptions) -> String {
    html(&Scoresheet::from_game(g, options))
}

/// The mover's clock after the move.
fn mover_clock(m: &RecordedMove) -> Option<u64> {
    if m.ply % 2 == 1 {
        m.clock_white_ms
    } else {
        m.clock_black_ms
    }
}

/// `h:mm:ss`, whole seconds shown (as the clock shows them).
pub fn hms(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// SAN with figurines for K Q R B N (promotions too: `e8=♕`); pawns and castling stay.
pub fn to_figurine(san: &str) -> String {
    san.chars()
        .map(|c| match c {
            'K' => '♔',
            'Q' => '♕',
            'R' => '♖',
            'B' => '♗',
            'N' => '♘',
            c => c,
        })
        .collect()
}

/// The result as written on the sheet; for togyz korgool the Kyrgyz form with the loser's
/// korgools as the supplementary index ([KG 3.2, 3.3]), from the position after the last move.
fn result_text(g: &GameRecord) -> String {
    let outcome = match g.result.as_str() {
        "1-0" => Some(Outcome::WhiteWins),
        "0-1" => Some(Outcome::BlackWins),
        "1/2-1/2" => Some(Outcome::Draw),
        _ => None,
    };
    match (g.kind, outcome) {
        (Kind::Chess, Some(Outcome::Draw)) => "½-½".to_owned(),
        (Kind::Chess, _) => g.result.clone(),
        (Kind::Togyz, None) => g.result.clone(),
        (Kind::Togyz, Some(outcome)) => {
            let index = (outcome != Outcome::Draw)
                .then(|| togyz_index(g, outcome))
                .flatten();
            ResultText {
                outcome: Some(outcome),
                index,
            }
            .format(crate::game::togyz::ResultFormat::Kyrgyz)
        }
    }
}

/// The loser's korgools: what the rules count for him when they end the game with this
/// outcome, else (a resignation, a decision) his store ([KG 3.3]).
fn togyz_index(g: &GameRecord, outcome: Outcome) -> Option<u8> {
    use crate::game::togyz::Side;
    let last = g.moves.last()?;
    let pos = from_fen(&last.position, Rules::KYRGYZ).ok()?;
    let loser = if outcome == Outcome::WhiteWins {
        Side::Black
    } else {
        Side::White
    };
    let flag = g.termination.as_deref().is_some_and(|t| t.contains("flag"));
    let counted = if flag {
        Some(pos.flag_fall(loser))
    } else {
        pos.outcome().filter(|r| r.outcome == outcome)
    };
    Some(counted.map_or(pos.store(loser), |r| r.counted[loser.index()]))
}

/// An irregularity kind in words.
fn kind_title(kind: &str) -> String {
    match kind {
        "displaced" => "Displaced pieces".to_owned(),
        "illegal_move" => "Illegal move".to_owned(),
        "clock_without_move" => "Clock pressed without a move".to_owned(),
        "wrong_start_position" => "Wrong start position".to_owned(),
        "board_rotated" => "Board turned".to_owned(),
        "clock_mis_set" => "Clock set against the time control".to_owned(),
        other => {
            let mut s = other.replace('_', " ");
            if let Some(first) = s.get(..1) {
                let up = first.to_uppercase();
                s.replace_range(..1, &up);
            }
            s
        }
    }
}

fn str_field<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
    v.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// "before move 6 (Black)" for the ply an event happened before.
fn before_ply(ply: Option<u32>) -> String {
    match ply {
        Some(p) if p > 0 => {
            let side = if p % 2 == 1 { "White" } else { "Black" };
            format!("before move {} ({side})", p.div_ceil(2))
        }
        _ => "before the game".to_owned(),
    }
}

/// The remarks of `g`, in the order recorded: what the board and clock showed (irregularities,
/// flag falls, claimable draws), then the arbiter's decisions. The tracker's own corrections
/// (takebacks, revised moves) are left to the PGN and JSON history.
fn remarks(g: &GameRecord) -> Vec<Remark> {
    let mut out: Vec<Remark> = Vec::new();
    let mut irregular = json::irregularities(&g.events).into_iter();
    let mut push = |kind, ply, article: Option<String>, title: String, text: String| {
        let number = out.len() + 1;
        out.push(Remark {
            number,
            kind,
            ply,
            article,
            title,
            text,
        });
    };
    for e in &g.events {
        if let Some(kind) = IrregularityKind::from_str_opt(&e.kind) {
            let Some(v) = irregular.next() else { break };
            if kind.is_audit_trail() {
                continue;
            }
            let mut text = before_ply(e.ply);
            for part in [str_field(&v, "detail"), str_field(&v, "ruling")]
                .into_iter()
                .flatten()
            {
                let _ = write!(text, "; {part}");
            }
            if v["resolved"] == Value::Bool(true) {
                text.push_str("; resolved");
            }
            if let Some(r) = v.get("ruling_by_arbiter") {
                let ruling = r.get("ruling").map(ruling_text).unwrap_or_default();
                let author = str_field(r, "author").unwrap_or("arbiter");
                let _ = write!(text, "; arbiter ({author}): {ruling}");
            }
            let article = str_field(&v, "article").map(str::to_owned);
            push(
                RemarkKind::Irregularity,
                e.ply,
                article,
                kind_title(&e.kind),
                text,
            );
        } else if e.kind == "flag_fall" {
            let d = &e.detail;
            let side = str_field(d, "side").unwrap_or("a player");
            let mut text = format!("{side}'s flag fell {}", before_ply(e.ply));
            if let Some(p) = str_field(d, "proposed") {
                let _ = write!(text, "; result {p}");
            }
            if let Some(n) = str_field(d, "note") {
                let _ = write!(text, "; {n}");
            }
            let article = str_field(d, "article").map(str::to_owned);
            push(
                RemarkKind::FlagFall,
                e.ply,
                article,
                "Flag fall".to_owned(),
                text,
            );
        } else if e.kind == "claimable" {
            let d = &e.detail;
            let claim = str_field(d, "claim").unwrap_or("a draw claim");
            let text = format!("{claim} ({})", before_ply(e.ply));
            let article = str_field(d, "article").map(str::to_owned);
            push(
                RemarkKind::Claim,
                e.ply,
                article,
                "Claim possible".to_owned(),
                text,
            );
        }
    }
    for e in g.events.iter().filter(|e| e.kind == DECISION_KIND) {
        let d = &e.detail;
        let author = str_field(d, "author").unwrap_or("arbiter");
        let note = str_field(d, "note");
        let action: Option<Action> = serde_json::from_value(d.clone()).ok();
        let (title, mut text, ply) = match action {
            Some(Action::SetResult {
                result,
                reason,
                previous_result,
                ..
            }) => (
                "Result",
                format!(
                    "{result} ({}), was {previous_result}",
                    reason.as_str().replace('_', " ")
                ),
                None,
            ),
            Some(Action::Rule {
                irregularity,
                ruling,
            }) => (
                "Ruling",
                format!(
                    "on irregularity {irregularity}: {}",
                    ruling_text(&serde_json::to_value(&ruling).unwrap_or(Value::Null))
                ),
                None,
            ),
            Some(Action::CorrectMove {
                ply,
                old_notation,
                new_notation,
                ..
            }) => (
                "Correction",
                format!("move {ply} (ply) recorded as {old_notation}, corrected to {new_notation}"),
                Some(ply),
            ),
            Some(Action::Note { ply }) => ("Note", String::new(), ply),
            Some(Action::Resume {
                after_ply,
                moves,
                retracted,
            }) => (
                "Resumed",
                resume_text(after_ply, &moves, retracted),
                Some(after_ply),
            ),
            None => ("Decision", d.to_string(), None),
        };
        if let Some(n) = note {
            if !text.is_empty() {
                text.push_str("; ");
            }
            text.push_str(n);
        }
        let _ = write!(text, " — {author}");
        push(
            RemarkKind::Decision,
            ply.or(e.ply.filter(|_| title == "Note")),
            None,
            format!("Arbiter: {}", title.to_lowercase()),
            text,
        );
    }
    out
}

/// A stored ruling (a string, or a [`crate::store::Ruling`] as JSON) in words.
/// What a resume decision did, in words.
fn resume_text(after_ply: u32, moves: &[String], retracted: u32) -> String {
    let mut text = format!("the game goes on after ply {after_ply}");
    if !moves.is_empty() {
        text.push_str(&format!(", followed by {}", moves.join(" ")));
    }
    if retracted > 0 {
        text.push_str(&format!(" ({retracted} recorded move(s) withdrawn)"));
    }
    text
}

fn ruling_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.replace('_', " "),
        Value::Object(o) => {
            let name = o
                .get("ruling")
                .or_else(|| o.get("kind"))
                .and_then(Value::as_str)
                .map(|s| s.replace('_', " "));
            let extra: Vec<String> = o
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "ruling" | "kind"))
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{}: {s}", k.replace('_', " ")),
                    v => format!("{}: {v}", k.replace('_', " ")),
                })
                .collect();
            match name {
                Some(n) if extra.is_empty() => n,
                Some(n) => format!("{n} ({})", extra.join(", ")),
                None => extra.join(", "),
            }
        }
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

const CSS: &str = "\
@page { size: A4; margin: 12mm; }
* { box-sizing: border-box; }
body { font-family: 'DejaVu Sans', 'Noto Sans', 'Noto Sans Symbols 2', 'Segoe UI Symbol', sans-serif;
  font-size: 10pt; color: #000; margin: 0; }
.sheet { width: 186mm; margin: 0 auto; padding: 4mm 0; page-break-after: always; break-after: page; }
.sheet:last-child { page-break-after: auto; break-after: auto; }
h1 { font-size: 14pt; margin: 0 0 3mm; display: flex; justify-content: space-between; }
h1 .page { font-size: 9pt; font-weight: normal; }
table.header { width: 100%; border-collapse: collapse; margin-bottom: 3mm; }
table.header th { text-align: left; font-weight: normal; width: 16%; padding: 1mm 1mm 1mm 0; }
table.header td { border-bottom: 0.3mm solid #000; padding: 1mm; width: 34%; }
.columns { display: flex; gap: 4mm; }
table.moves { flex: 1; border-collapse: collapse; }
table.moves th, table.moves td { border: 0.3mm solid #000; height: 6.2mm; padding: 0 1.2mm; }
table.moves th { font-weight: bold; background: #eee; }
table.moves td.no { width: 9mm; text-align: right; }
table.moves td.w, table.moves td.b { width: 40%; }
.san { font-size: 10.5pt; }
.clk { float: right; font-size: 7.5pt; color: #333; font-variant-numeric: tabular-nums; padding-top: 0.8mm; }
.tt { font-weight: bold; }
.ref { font-size: 7pt; vertical-align: super; }
.result { margin-top: 4mm; font-size: 11pt; }
.result .value { font-weight: bold; font-size: 13pt; border: 0.3mm solid #000; padding: 0.5mm 3mm; }
.legend { font-size: 8pt; margin-top: 2mm; }
ol.remarks { font-size: 8.5pt; margin: 2mm 0 0; padding-left: 6mm; }
ol.remarks .art { font-weight: bold; }
.signatures { display: flex; gap: 8mm; margin-top: 12mm; }
.signature { flex: 1; border-top: 0.3mm solid #000; padding-top: 1mm; font-size: 8.5pt; }
";

/// The sheet as a self-contained HTML page (inline CSS, A4, print-ready).
///
/// Structure (stable, tests and tools may read it): one `section.sheet` a page; a
/// `table.header`; two `table.moves` a page, each row `tr.row` with `td.no`, `td.w`, `td.b`;
/// in a played cell `span.san` (the move), `span.clk` (`h:mm:ss`), `span.tt` (the time-trouble
/// mark); `ol.remarks` with `li.remark` (`span.art` the article); `.result .value`; and
/// `div.signature` lines for White, Black and the Arbiter.
pub fn html(sheet: &Scoresheet) -> String {
    let mut out = String::new();
    let title = format!(
        "Scoresheet — game {} — {}",
        sheet.header.game_id,
        sheet.header.board.as_deref().unwrap_or("")
    );
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
        escape_html(&title)
    );
    let pages = sheet.pages();
    let count = pages.len();
    for page in &pages {
        html_page(&mut out, sheet, page, count);
    }
    out.push_str("</body>\n</html>\n");
    out
}

fn html_page(out: &mut String, sheet: &Scoresheet, page: &Page, count: usize) {
    let h = &sheet.header;
    let heading = match sheet.kind {
        Kind::Chess => "Scoresheet",
        Kind::Togyz => "Togyz korgool scoresheet",
    };
    let _ = writeln!(
        out,
        "<section class=\"sheet\" data-page=\"{}\">\n<h1><span>{heading}</span>\
         <span class=\"page\">Game {} · sheet {} of {count}</span></h1>",
        page.number, h.game_id, page.number
    );
    let field = |v: &Option<String>| v.as_deref().map(escape_html).unwrap_or_default();
    let _ = writeln!(
        out,
        "<table class=\"header\">\n\
         <tr><th>Event</th><td class=\"event\">{}</td><th>Site</th><td class=\"site\">{}</td></tr>\n\
         <tr><th>Round</th><td class=\"round\">{}</td><th>Board</th><td class=\"board\">{}</td></tr>\n\
         <tr><th>Date</th><td class=\"date\">{}</td><th>Time control</th><td class=\"time-control\">{}</td></tr>\n\
         <tr><th>White</th><td class=\"white\">{}</td><th>Black</th><td class=\"black\">{}</td></tr>\n\
         </table>",
        field(&h.event),
        field(&h.site),
        field(&h.round),
        field(&h.board),
        field(&h.date),
        field(&h.time_control),
        field(&h.white),
        field(&h.black),
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
                html_cell(row.white.as_ref()),
                html_cell(row.black.as_ref())
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

fn html_cell(cell: Option<&Cell>) -> String {
    let Some(c) = cell else {
        return String::new();
    };
    let mut s = format!("<span class=\"san\">{}</span>", escape_html(&c.text));
    if c.time_trouble {
        let _ = write!(
            s,
            "<span class=\"tt\" title=\"time trouble\">{TIME_TROUBLE_MARK}</span>"
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

fn html_end(out: &mut String, sheet: &Scoresheet) {
    let termination = sheet
        .termination_text()
        .map(|t| format!(" <span class=\"termination\">({})</span>", escape_html(&t)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<div class=\"result\">Result: <span class=\"value\">{}</span>{termination}</div>",
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
                .map(|a| format!("<span class=\"art\">Art. {}</span> ", escape_html(a)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "<li class=\"remark\" value=\"{}\" data-ply=\"{}\">{article}<span class=\"title\">{}</span>: {}</li>",
                r.number,
                r.ply.map(|p| p.to_string()).unwrap_or_default(),
                escape_html(&r.title),
                escape_html(&r.text)
            );
        }
        out.push_str("</ol>\n");
    }
    out.push_str("<div class=\"signatures\">\n");
    for who in ["White", "Black", "Arbiter"] {
        let _ = writeln!(
            out,
            "<div class=\"signature\" data-signer=\"{}\">Signature of {who}</div>",
            who.to_lowercase()
        );
    }
    out.push_str("</div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sheet(plies: u32, per_page: u32) -> Scoresheet {
        let rows = (1..=plies.div_ceil(2))
            .map(|n| {
                let cell = |ply: u32| Cell {
                    ply,
                    text: format!("m{ply}"),
                    clock: None,
                    time_trouble: false,
                    remarks: Vec::new(),
                };
                Row {
                    number: n,
                    white: Some(cell(2 * n - 1)),
                    black: (2 * n <= plies).then(|| cell(2 * n)),
                }
            })
            .collect();
        Scoresheet {
            kind: Kind::Chess,
            header: Header::default(),
            rows,
            moves_per_page: per_page,
            remarks: Vec::new(),
            result: "*".into(),
            termination: None,
            has_time_trouble: false,
            figurine: false,
        }
    }

    #[test]
    fn pages_hold_two_columns_of_numbered_rows_and_grow_with_the_game() {
        let empty = sheet(0, 60).pages();
        assert_eq!(empty.len(), 1, "an empty form is one sheet");
        let p = sheet(121, 60).pages();
        assert_eq!(p.len(), 2, "move 61 needs a second sheet");
        let numbers: Vec<u32> = p
            .iter()
            .flat_map(|page| page.columns.iter().flatten().map(|r| r.number))
            .collect();
        assert_eq!(numbers, (1..=120).collect::<Vec<_>>());
        assert_eq!(p[0].columns[0].len(), 30);
        assert_eq!(p[1].columns[0][0].white.as_ref().unwrap().text, "m121");
        assert!(p[1].columns[0][0].black.is_none());
        assert!(p[1].columns[1].iter().all(|r| r.white.is_none()));
        assert_eq!(sheet(120, 60).pages().len(), 1, "60 moves fill one sheet");
    }

    #[test]
    fn figurines_clocks_and_escaping() {
        assert_eq!(to_figurine("Nbxd7+"), "♘bxd7+");
        assert_eq!(to_figurine("exd8=Q#"), "exd8=♕#");
        assert_eq!(to_figurine("O-O-O"), "O-O-O");
        assert_eq!(to_figurine("Kxe2"), "♔xe2");
        assert_eq!(hms(0), "0:00:00");
        assert_eq!(hms(5_399_999), "1:29:59");
        assert_eq!(hms(61_000), "0:01:01");
        assert_eq!(escape_html("<b>&\"'"), "&lt;b&gt;&amp;&quot;&#39;");
    }
}
