//! Printable scoresheets: one layout model, two renderers (HTML here, PDF in [`super::pdf`]).
//!
//! Flow: [`Scoresheet::from_game`] turns a [`GameRecord`] into a pure layout: the [`Header`]
//! (blank lines for what the record does not know, to be filled in by hand), numbered rows of
//! `white | black` cells (chess moves in the [`Notation`] asked for: SAN, figurines or the
//! language's letters, `super::notation`) with the mover's clock after the move and the
//! time-trouble mark (FIDE Article 8.4; Kyrgyz rules 6.5 for togyz korgool), the [`Remark`]s
//! (irregularities with their article, flag falls, claimable draws, the arbiter's decisions),
//! the result and termination. [`Scoresheet::pages`] cuts the rows into sheets laid out like a
//! FIDE form (two columns of numbered rows a page, the unused rows left empty); [`html`] writes
//! a self-contained A4 page with inline CSS, one `<section class="sheet">` a page, and
//! signature lines for White, Black and the Arbiter under the last one.

use std::fmt::Write as _;

use super::{
    escape_html,
    notation::{Notation, PieceSymbols},
};
use crate::{
    game::{
        Kind, Outcome,
        togyz::{
            Rules,
            notation::{ResultText, from_fen},
        },
    },
    lang::Lang,
    store::{Action, GameRecord, PlayerRecord, is_usable_name},
    tracker::{Side, event::RecordedMove},
};

/// How a scoresheet is laid out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SheetOptions {
    /// How chess moves write their pieces: SAN letters, figurines (♔♕♖♗♘), or the letters of
    /// the sheet's language (`[tournament] notation`, `export --notation`).
    pub notation: Notation,
    /// Numbered rows on one sheet, in two columns; a FIDE form holds 60 (1–30 | 31–60).
    pub moves_per_page: u32,
    /// The time control for the header, when the caller knows it (e.g. `90+30`).
    pub time_control: Option<String>,
    /// The language of the labels and remarks (`[tournament] language`, `export --lang`).
    pub lang: Lang,
}

impl Default for SheetOptions {
    fn default() -> SheetOptions {
        SheetOptions {
            notation: Notation::San,
            moves_per_page: 60,
            time_control: None,
            lang: Lang::En,
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
    /// The board's number in the hall (blank without one).
    pub board: Option<String>,
    /// `YYYY.MM.DD` as stored (each renderer writes it in the sheet's language:
    /// [`Lang::stored_date`]).
    pub date: Option<String>,
    /// The players (title, name, rating: [`PlayerRecord::label`]); each renderer writes them.
    pub white: Option<PlayerRecord>,
    pub black: Option<PlayerRecord>,
    pub time_control: Option<String>,
}

impl Header {
    /// The header fields a [`GameRecord`] has: the event, site and time control of its event,
    /// its round and board number, and the players (title, name, rating) of its pairing; what
    /// is not known stays blank for a pen.
    pub fn from_game(g: &GameRecord) -> Header {
        let known = |v: &Option<String>| v.clone().filter(|s| is_usable_name(s));
        Header {
            game_id: g.id.0,
            event: known(&g.event),
            site: known(&g.site),
            round: g.round.map(|r| r.to_string()),
            board: g.board_no.map(|n| n.to_string()),
            date: g.date.clone(),
            white: g.player(Side::White),
            black: g.player(Side::Black),
            time_control: g.time_control.clone().filter(|t| !t.trim().is_empty()),
        }
    }
}

/// One half of a row: a ply as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub ply: u32,
    /// SAN for chess, its pieces as the sheet's [`PieceSymbols`] write them; `76`, `45X` for
    /// togyz korgool.
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
    /// How its chess moves write the pieces (and the moves its remarks name); English SAN on a
    /// togyz korgool sheet, which has no pieces.
    pub pieces: PieceSymbols,
    /// The language of its labels and remarks.
    pub lang: Lang,
}

/// The mark of a time-trouble ply.
pub const TIME_TROUBLE_MARK: &str = "†";

impl Scoresheet {
    /// The layout of `g`.
    pub fn from_game(g: &GameRecord, options: &SheetOptions) -> Scoresheet {
        let pieces = match g.kind {
            Kind::Chess => options.notation.pieces(options.lang),
            Kind::Togyz => PieceSymbols::ENGLISH,
        };
        let remarks = remarks(g, options.lang, &pieces);
        let cell = |m: &RecordedMove| Cell {
            ply: m.ply,
            text: pieces.write(&m.notation),
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
        if options.time_control.is_some() {
            header.time_control = options.time_control.clone();
        }
        Scoresheet {
            kind: g.kind,
            header,
            rows,
            moves_per_page: options.moves_per_page.max(2),
            remarks,
            result: result_text(g),
            termination: g.termination.clone(),
            has_time_trouble: g.moves.iter().any(|m| m.time_trouble),
            pieces,
            lang: options.lang,
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
            Kind::Chess => self.lang.text("sheet.time_trouble_article"),
            Kind::Togyz => self.lang.text("sheet.time_trouble_article_togyz"),
        };
        self.lang.fill(
            "sheet.time_trouble_legend",
            &[("mark", TIME_TROUBLE_MARK), ("article", article)],
        )
    }

    /// The column heads: `No. | White | Black` (`№` for togyz korgool, as on Kazakh sheets;
    /// the sides in togyz korgool's own words).
    pub fn column_heads(&self) -> [&'static str; 3] {
        let number = match self.kind {
            Kind::Chess => self.lang.text("sheet.number"),
            Kind::Togyz => "№",
        };
        let [white, black] = self.lang.sides(self.kind);
        [number, white, black]
    }

    /// The sheet's heading: a scoresheet, or a togyz korgool one.
    pub fn title(&self) -> &'static str {
        match self.kind {
            Kind::Chess => self.lang.text("sheet.title"),
            Kind::Togyz => self.lang.text("sheet.title_togyz"),
        }
    }

    /// The termination in words, if known.
    pub fn termination_text(&self) -> Option<String> {
        self.termination
            .as_deref()
            .map(|t| crate::lang::record::termination_text(t, self.lang))
    }

    /// What each signature line is for: White, Black (togyz korgool's own words) and the
    /// Arbiter, with the signer's stable name (`white`, `black`, `arbiter`).
    pub fn signers(&self) -> [(&'static str, String); 3] {
        let [_, white, black] = self.column_heads();
        [
            (
                "white",
                self.lang.fill("sheet.signature", &[("who", white)]),
            ),
            (
                "black",
                self.lang.fill("sheet.signature", &[("who", black)]),
            ),
            (
                "arbiter",
                self.lang.fill(
                    "sheet.signature",
                    &[("who", self.lang.text("sheet.arbiter"))],
                ),
            ),
        ]
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
    PieceSymbols::FIGURINES.write(san)
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
/* Moves, clocks, numbers and results read left to right on a right-to-left sheet too (a date
   is written in the language's form, isolated by its <bdi>). */
.san, .clk, .value, td.no, td.round, td.board, td.time-control {
  direction: ltr; unicode-bidi: isolate; }
[dir=rtl] table.header th { text-align: right; padding: 1mm 0 1mm 1mm; }
[dir=rtl] .clk { float: left; }
[dir=rtl] table.moves td.no { text-align: left; }
[dir=rtl] ol.remarks { padding-left: 0; padding-right: 6mm; }
";

mod html;
mod remarks;

pub use html::{html, html_sheets};
use remarks::remarks;

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
            pieces: PieceSymbols::ENGLISH,
            lang: crate::lang::Lang::En,
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
