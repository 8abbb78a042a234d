//! Pairings files: which players sit at which board in a round, from a FIDE TRF or a CSV.
//!
//! Flow: the CLI or the console reads a file's bytes, [`decode`] makes them text (UTF-8, UTF-16
//! with a BOM, Windows-1251 or Windows-1252: [`encoding`]), [`PairingsFormat::from_path`] (or
//! `--format`) picks the parser, [`parse`] turns the text into [`Pairing`]s ordered by board, and
//! the store keeps them per round. Pure: bytes or text in, rows out; errors carry the 1-based line
//! they were found on. Every field is NFC-normalised as it is read (a name written decomposed,
//! `И` + U+0306, is kept as `Й`), never transliterated.
//!
//! TRF (FIDE TRF16/TRF26): each `001` player line gives, per round, the opponent's starting-rank
//! number and the player's colour (`w`/`b`) in fixed columns (round `r` at column `92 + 10 (r-1)`).
//! A round's pairs are the `w` entries with an opponent; byes (`0000` or blank) are no board. TRF
//! has no board numbers, so boards are ordered as Swiss pairing programs print them: by the higher
//! score of the pair before the round, then the sum of both scores, then the better (lower)
//! starting rank of the pair; score from rounds before: `1 + W F U` count 1, `= D H` count ½.
//! Names are `Lastname, Firstname` as in the file; a blank or zero FIDE number or rating is none;
//! the title (columns 11-13; TRF-16's codes `g`, `m`, `wg`, … written out: `GM`, `IM`, `WGM`)
//! and the federation (columns 54-56) are kept when not blank.
//!
//! CSV: a header naming the columns (any order, any case): `board`, `white`, `black` required;
//! `white_fide`, `black_fide`, `white_elo`, `black_elo`, `white_title`, `black_title`,
//! `white_fed`, `black_fed` optional. The header's separator is the file's: a comma, a semicolon
//! (Excel where the decimal separator is a comma) or a tab (Excel's "Unicode text"). Fields may
//! be quoted (`"a, b"`, `""` for a quote, line breaks inside quotes); unquoted fields are trimmed.
//! Empty lines, and lines of separators only (Excel's empty rows), are skipped.

use std::{
    collections::HashMap,
    fmt::{self, Write as _},
    path::Path,
};

use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization as _;

use crate::lang::Lang;

pub mod encoding;

pub use self::encoding::{DecodeError, Decoded, Encoding, decode};

/// One board of a round: who plays white and black there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    /// The board's number in the hall (1-based).
    pub board: u32,
    pub white: String,
    pub black: String,
    pub white_fide: Option<u32>,
    pub black_fide: Option<u32>,
    pub white_elo: Option<u32>,
    pub black_elo: Option<u32>,
    /// FIDE title (`GM`, `IM`, `WFM`, ...), as the file writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black_title: Option<String>,
    /// Federation (`KAZ`, `KGZ`, ...), as the file writes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white_fed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black_fed: Option<String>,
    /// The players' starting ranks in the TRF the pairing came from (its `001` numbers), which
    /// the TRF export keeps; none from a CSV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white_start: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black_start: Option<u32>,
}

impl Pairing {
    /// A pairing of two names and nothing else known.
    pub fn new(board: u32, white: &str, black: &str) -> Pairing {
        Pairing {
            board,
            white: white.to_owned(),
            black: black.to_owned(),
            white_fide: None,
            black_fide: None,
            white_elo: None,
            black_elo: None,
            white_title: None,
            black_title: None,
            white_fed: None,
            black_fed: None,
            white_start: None,
            black_start: None,
        }
    }
}

/// The file formats [`parse`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairingsFormat {
    /// FIDE Tournament Report File (TRF16, TRF26, TRFx).
    Trf,
    /// Comma-separated values with a header.
    Csv,
}

impl PairingsFormat {
    /// The format a file name suggests: `.csv`, or `.trf`/`.trfx`/`.txt`.
    pub fn from_path(path: &Path) -> Option<PairingsFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "csv" => Some(PairingsFormat::Csv),
            "trf" | "trfx" | "txt" => Some(PairingsFormat::Trf),
            _ => None,
        }
    }
}

/// Errors of the pairings parsers; `line` is 1-based. Worded by the tables' `pairing` section
/// ([`PairingsError::words`]): its English is the error's `Display`.
#[derive(Debug, PartialEq, Eq)]
pub enum PairingsError {
    NoHeader,
    Delimiter {
        line: usize,
        header: String,
    },
    MissingColumn {
        line: usize,
        column: &'static str,
    },
    UnknownColumn {
        line: usize,
        column: String,
    },
    DuplicateColumn {
        line: usize,
        column: String,
    },
    FieldCount {
        line: usize,
        found: usize,
        expected: usize,
    },
    UnclosedQuote {
        line: usize,
    },
    AfterQuote {
        line: usize,
    },
    BadNumber {
        line: usize,
        field: &'static str,
        value: String,
    },
    BoardZero {
        line: usize,
    },
    EmptyName {
        line: usize,
        field: &'static str,
    },
    NameTooLong {
        line: usize,
        field: &'static str,
        chars: usize,
    },
    ControlCharacter {
        line: usize,
        field: &'static str,
        code: u32,
        at: usize,
    },
    NotPrintable {
        line: usize,
        field: &'static str,
        code: u32,
        at: usize,
    },
    DuplicateBoard {
        line: usize,
        board: u32,
        first: usize,
    },
    DuplicatePlayer {
        line: usize,
        number: u32,
        first: usize,
    },
    BadColour {
        line: usize,
        round: u32,
        colour: char,
    },
    UnknownOpponent {
        line: usize,
        round: u32,
        player: u32,
        opponent: u32,
    },
    Inconsistent {
        line: usize,
        round: u32,
        player: u32,
        opponent: u32,
    },
    RoundZero,
    Empty {
        round: Option<u32>,
    },
}

impl PairingsError {
    /// What is wrong, in `lang`'s words: "line 4: …" where a line is at fault.
    pub fn words(&self, lang: Lang) -> String {
        use PairingsError as E;
        let quoted = |s: &str| format!("{s:?}");
        let code = |c: &u32| format!("U+{c:04X}");
        let (line, what) = match self {
            E::NoHeader => (None, lang.text("pairing.no_header").to_owned()),
            E::Delimiter { line, header } => (
                Some(line),
                lang.fill("pairing.delimiter", &[("header", &quoted(header))]),
            ),
            E::MissingColumn { line, column } => (
                Some(line),
                lang.fill("pairing.missing_column", &[("column", &quoted(column))]),
            ),
            E::UnknownColumn { line, column } => (
                Some(line),
                lang.fill(
                    "pairing.unknown_column",
                    &[("column", &quoted(column)), ("known", KNOWN_COLUMNS)],
                ),
            ),
            E::DuplicateColumn { line, column } => (
                Some(line),
                lang.fill("pairing.duplicate_column", &[("column", &quoted(column))]),
            ),
            E::FieldCount {
                line,
                found,
                expected,
            } => (
                Some(line),
                lang.fill(
                    "pairing.field_count",
                    &[
                        ("found", &found.to_string()),
                        ("expected", &expected.to_string()),
                    ],
                ),
            ),
            E::UnclosedQuote { line } => {
                (Some(line), lang.text("pairing.unclosed_quote").to_owned())
            }
            E::AfterQuote { line } => (Some(line), lang.text("pairing.after_quote").to_owned()),
            E::BadNumber { line, field, value } => (
                Some(line),
                lang.fill(
                    "pairing.bad_number",
                    &[("field", field), ("value", &quoted(value))],
                ),
            ),
            E::BoardZero { line } => (Some(line), lang.text("pairing.board_zero").to_owned()),
            E::EmptyName { line, field } => (
                Some(line),
                lang.fill("pairing.empty_name", &[("field", field)]),
            ),
            E::NameTooLong { line, field, chars } => (
                Some(line),
                lang.fill(
                    "pairing.name_too_long",
                    &[
                        ("field", field),
                        ("chars", &chars.to_string()),
                        ("max", &MAX_NAME_CHARS.to_string()),
                    ],
                ),
            ),
            E::ControlCharacter {
                line,
                field,
                code: c,
                at,
            }
            | E::NotPrintable {
                line,
                field,
                code: c,
                at,
            } => (
                Some(line),
                lang.fill(
                    if matches!(self, E::ControlCharacter { .. }) {
                        "pairing.control_character"
                    } else {
                        "pairing.not_printable"
                    },
                    &[
                        ("field", field),
                        ("code", &code(c)),
                        ("at", &at.to_string()),
                    ],
                ),
            ),
            E::DuplicateBoard { line, board, first } => (
                Some(line),
                lang.fill(
                    "pairing.duplicate_board",
                    &[("board", &board.to_string()), ("first", &first.to_string())],
                ),
            ),
            E::DuplicatePlayer {
                line,
                number,
                first,
            } => (
                Some(line),
                lang.fill(
                    "pairing.duplicate_player",
                    &[
                        ("number", &number.to_string()),
                        ("first", &first.to_string()),
                    ],
                ),
            ),
            E::BadColour {
                line,
                round,
                colour,
            } => (
                Some(line),
                lang.fill(
                    "pairing.bad_colour",
                    &[
                        ("colour", &format!("{colour:?}")),
                        ("round", &round.to_string()),
                    ],
                ),
            ),
            E::UnknownOpponent {
                line,
                round,
                player,
                opponent,
            }
            | E::Inconsistent {
                line,
                round,
                player,
                opponent,
            } => (
                Some(line),
                lang.fill(
                    if matches!(self, E::Inconsistent { .. }) {
                        "pairing.inconsistent"
                    } else {
                        "pairing.unknown_opponent"
                    },
                    &[
                        ("player", &player.to_string()),
                        ("opponent", &opponent.to_string()),
                        ("round", &round.to_string()),
                    ],
                ),
            ),
            E::RoundZero => (None, lang.text("pairing.round_zero").to_owned()),
            E::Empty { round: None } => (None, lang.text("pairing.empty").to_owned()),
            E::Empty { round: Some(r) } => (
                None,
                lang.fill("pairing.empty_round", &[("round", &r.to_string())]),
            ),
        };
        at_line(lang, line.copied(), what)
    }
}

/// "line 4: what" in `lang`, or `what` alone for no line.
pub(crate) fn at_line(lang: Lang, line: Option<usize>, what: String) -> String {
    match line {
        Some(line) => lang.fill(
            "pairing.at_line",
            &[("line", &line.to_string()), ("what", &what)],
        ),
        None => what,
    }
}

impl fmt::Display for PairingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words(Lang::En))
    }
}

impl std::error::Error for PairingsError {}

/// The longest name (or title, or federation) a pairing may carry: it goes into every PGN and
/// page.
pub const MAX_NAME_CHARS: usize = 200;

/// A name or other text field of line `line` as a pairing may carry it: at most
/// [`MAX_NAME_CHARS`] characters, no control character (a NUL, a line break, a tab), and every
/// character printable on the PDF scoresheet ([`crate::fonts::uncovered`]).
fn check_text(line: usize, field: &'static str, value: &str) -> Result<(), PairingsError> {
    if let Some((at, c)) = crate::text::first_control(value) {
        return Err(PairingsError::ControlCharacter {
            line,
            field,
            code: u32::from(c),
            at,
        });
    }
    let chars = value.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(PairingsError::NameTooLong { line, field, chars });
    }
    if let Some(c) = crate::fonts::uncovered(value) {
        let at = value.chars().take_while(|&x| x != c).count() + 1;
        return Err(PairingsError::NotPrintable {
            line,
            field,
            code: u32::from(c),
            at,
        });
    }
    Ok(())
}

/// Every column a CSV may have, as [`PairingsError::UnknownColumn`] lists them.
const KNOWN_COLUMNS: &str = "board, white, black, white_fide, black_fide, white_elo, black_elo, \
                             white_title, black_title, white_fed, black_fed";

/// Parses `text` as `format`; `round` picks the round's columns of a TRF (a CSV is one round).
pub fn parse(
    text: &str,
    format: PairingsFormat,
    round: u32,
) -> Result<Vec<Pairing>, PairingsError> {
    match format {
        PairingsFormat::Trf => parse_trf(text, round),
        PairingsFormat::Csv => parse_csv(text),
    }
}

/// A player without a board in a round, as a TRF's pairing program left them out: the kind of
/// bye by its TRF code (`U` allocated by the pairing, `F` full point, `H` half point, `Z` zero
/// point). A player with neither a board nor a bye in a round is absent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundBye {
    pub name: String,
    pub fide: Option<u32>,
    pub elo: Option<u32>,
    pub title: Option<String>,
    pub fed: Option<String>,
    /// The TRF's starting rank.
    pub start: Option<u32>,
    /// `U`, `F`, `H` or `Z`.
    pub code: char,
}

/// The byes of `round` in a pairings file: a TRF's players with no opponent in that round and a
/// bye's code there (`0000 - U`); a CSV has none.
pub fn parse_byes(
    text: &str,
    format: PairingsFormat,
    round: u32,
) -> Result<Vec<RoundBye>, PairingsError> {
    if format == PairingsFormat::Csv {
        return Ok(Vec::new());
    }
    if round == 0 {
        return Err(PairingsError::RoundZero);
    }
    let mut byes = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if !raw.starts_with("001") {
            continue;
        }
        let p = trf_player(raw, i + 1, round)?;
        let code = p.code.to_ascii_uppercase();
        if p.opponent.is_none() && matches!(code, 'U' | 'F' | 'H' | 'Z') {
            byes.push(RoundBye {
                name: p.name,
                fide: p.fide,
                elo: p.elo,
                title: p.title,
                fed: p.fed,
                start: Some(p.number),
                code,
            });
        }
    }
    Ok(byes)
}

// ---------------------------------------------------------------- TRF

/// A `001` line's fields the pairings need.
struct TrfPlayer {
    line: usize,
    number: u32,
    name: String,
    elo: Option<u32>,
    fide: Option<u32>,
    title: Option<String>,
    fed: Option<String>,
    /// Score from the rounds before the one asked for, in half points.
    halves_before: u32,
    /// Opponent, colour and result code in the round asked for.
    opponent: Option<u32>,
    colour: char,
    code: char,
}

/// The pairings of `round` from a TRF file, ordered and numbered as the module doc says.
pub fn parse_trf(text: &str, round: u32) -> Result<Vec<Pairing>, PairingsError> {
    if round == 0 {
        return Err(PairingsError::RoundZero);
    }
    let mut players: Vec<TrfPlayer> = Vec::new();
    let mut index: HashMap<u32, usize> = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if !raw.starts_with("001") {
            continue;
        }
        let p = trf_player(raw, line, round)?;
        if let Some(&first) = index.get(&p.number) {
            return Err(PairingsError::DuplicatePlayer {
                line,
                number: p.number,
                first: players[first].line,
            });
        }
        index.insert(p.number, players.len());
        players.push(p);
    }
    for p in &players {
        if let Some(opponent) = p.opponent.filter(|o| !index.contains_key(o)) {
            return Err(PairingsError::UnknownOpponent {
                line: p.line,
                round,
                player: p.number,
                opponent,
            });
        }
    }
    let mut pairs: Vec<(&TrfPlayer, &TrfPlayer)> = Vec::new();
    for p in &players {
        let Some(o) = p.opponent.and_then(|o| index.get(&o)) else {
            continue;
        };
        let o = &players[*o];
        let consistent = match p.colour {
            'w' => o.opponent == Some(p.number) && o.colour == 'b',
            'b' => o.opponent == Some(p.number) && o.colour == 'w',
            _ => o.opponent == Some(p.number),
        };
        if !consistent || p.colour == '-' {
            let (white, black) = if p.colour == 'b' { (o, p) } else { (p, o) };
            return Err(PairingsError::Inconsistent {
                line: white.line,
                round,
                player: white.number,
                opponent: black.number,
            });
        }
        if p.colour == 'w' {
            pairs.push((p, o));
        }
    }
    if pairs.is_empty() {
        return Err(PairingsError::Empty { round: Some(round) });
    }
    // Higher score of the pair, then the sum, then the better starting rank; all descending
    // in strength, so board 1 holds the leaders.
    pairs.sort_by_key(|(w, b)| {
        let (hi, lo) = (
            w.halves_before.max(b.halves_before),
            w.halves_before.min(b.halves_before),
        );
        (
            std::cmp::Reverse(hi),
            std::cmp::Reverse(hi + lo),
            w.number.min(b.number),
        )
    });
    Ok(pairs
        .into_iter()
        .zip(1u32..)
        .map(|((w, b), board)| Pairing {
            board,
            white: w.name.clone(),
            black: b.name.clone(),
            white_fide: w.fide,
            black_fide: b.fide,
            white_elo: w.elo,
            black_elo: b.elo,
            white_title: w.title.clone(),
            black_title: b.title.clone(),
            white_fed: w.fed.clone(),
            black_fed: b.fed.clone(),
            white_start: Some(w.number),
            black_start: Some(b.number),
        })
        .collect())
}

/// Columns `from..=to` (1-based, inclusive) of a line, trimmed and NFC-normalised; empty past
/// the end. (Columns count the file's characters, so the line is composed only field by field.)
fn columns(chars: &[char], from: usize, to: usize) -> String {
    let end = to.min(chars.len());
    if from > end {
        return String::new();
    }
    chars[from - 1..end]
        .iter()
        .collect::<String>()
        .trim()
        .nfc()
        .collect()
}

fn trf_number(
    chars: &[char],
    from: usize,
    to: usize,
    line: usize,
    field: &'static str,
) -> Result<Option<u32>, PairingsError> {
    let text = columns(chars, from, to);
    if text.is_empty() {
        return Ok(None);
    }
    match text.parse::<u32>() {
        Ok(0) => Ok(None),
        Ok(n) => Ok(Some(n)),
        Err(_) => Err(PairingsError::BadNumber {
            line,
            field,
            value: text,
        }),
    }
}

/// A title as TRF-16 codes it (`g`, `m`, `wg`, ...) written out (`GM`, `IM`, `WGM`); a title
/// written out already, or anything else, as the file has it.
fn title_from_trf(title: String) -> String {
    let full = match title.as_str() {
        "g" => "GM",
        "m" => "IM",
        "f" => "FM",
        "c" => "CM",
        "wg" => "WGM",
        "wm" => "WIM",
        "wf" => "WFM",
        "wc" => "WCM",
        _ => return title,
    };
    full.to_owned()
}

fn trf_player(raw: &str, line: usize, round: u32) -> Result<TrfPlayer, PairingsError> {
    let chars: Vec<char> = raw.trim_end_matches(['\r', '\n']).chars().collect();
    let number = trf_number(&chars, 5, 8, line, "starting rank")?.ok_or_else(|| {
        PairingsError::BadNumber {
            line,
            field: "starting rank",
            value: columns(&chars, 5, 8),
        }
    })?;
    let name = columns(&chars, 15, 47);
    if name.is_empty() {
        return Err(PairingsError::EmptyName {
            line,
            field: "name",
        });
    }
    check_text(line, "name", &name)?;
    let elo = trf_number(&chars, 49, 52, line, "rating")?;
    let fide = trf_number(&chars, 58, 68, line, "FIDE number")?;
    let text = |from, to| Some(columns(&chars, from, to)).filter(|t| !t.is_empty());
    let (title, fed) = (text(11, 13).map(title_from_trf), text(54, 56));
    check_text(line, "title", title.as_deref().unwrap_or_default())?;
    check_text(line, "federation", fed.as_deref().unwrap_or_default())?;
    let mut halves_before = 0;
    let mut opponent = None;
    let mut colour = '-';
    let mut code = ' ';
    for r in 1..=round {
        let at = 92 + 10 * (r as usize - 1);
        if r < round {
            let result = chars.get(at + 6).copied().unwrap_or(' ');
            halves_before += match result.to_ascii_uppercase() {
                '1' | '+' | 'W' | 'F' | 'U' => 2,
                '=' | 'D' | 'H' => 1,
                _ => 0,
            };
            continue;
        }
        let field = "opponent";
        opponent = trf_number(&chars, at, at + 3, line, field)?;
        code = chars.get(at + 6).copied().unwrap_or(' ');
        colour = match chars.get(at + 4).copied().unwrap_or(' ') {
            ' ' | '-' => '-',
            c if c.eq_ignore_ascii_case(&'w') => 'w',
            c if c.eq_ignore_ascii_case(&'b') => 'b',
            c => {
                return Err(PairingsError::BadColour {
                    line,
                    round,
                    colour: c,
                });
            }
        };
    }
    Ok(TrfPlayer {
        line,
        number,
        name,
        elo,
        fide,
        title,
        fed,
        halves_before,
        opponent,
        colour,
        code,
    })
}

// ---------------------------------------------------------------- CSV

/// The columns a CSV may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Board,
    White,
    Black,
    WhiteFide,
    BlackFide,
    WhiteElo,
    BlackElo,
    WhiteTitle,
    BlackTitle,
    WhiteFed,
    BlackFed,
}

impl Column {
    const ALL: [Column; 11] = [
        Column::Board,
        Column::White,
        Column::Black,
        Column::WhiteFide,
        Column::BlackFide,
        Column::WhiteElo,
        Column::BlackElo,
        Column::WhiteTitle,
        Column::BlackTitle,
        Column::WhiteFed,
        Column::BlackFed,
    ];

    fn name(self) -> &'static str {
        match self {
            Column::Board => "board",
            Column::White => "white",
            Column::Black => "black",
            Column::WhiteFide => "white_fide",
            Column::BlackFide => "black_fide",
            Column::WhiteElo => "white_elo",
            Column::BlackElo => "black_elo",
            Column::WhiteTitle => "white_title",
            Column::BlackTitle => "black_title",
            Column::WhiteFed => "white_fed",
            Column::BlackFed => "black_fed",
        }
    }
}

/// One CSV record: the line it starts on and its fields.
struct Record {
    line: usize,
    fields: Vec<String>,
}

/// The separator of the header (the first line that is not blank): the one of `,`, `;` and tab
/// found most often outside quotes, the file's for every line. `None` when none is, or two are
/// found as often.
fn delimiter(text: &str) -> Option<char> {
    let header = text
        .split('\n')
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    let mut counts = [(',', 0usize), (';', 0), ('\t', 0)];
    let mut quoted = false;
    for c in header.chars() {
        match c {
            '"' => quoted = !quoted,
            c if !quoted => {
                if let Some((_, n)) = counts.iter_mut().find(|(d, _)| *d == c) {
                    *n += 1;
                }
            }
            _ => {}
        }
    }
    counts.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    match counts {
        [(_, 0), ..] => None,
        [(_, a), (_, b), _] if a == b => None,
        [(d, _), ..] => Some(d),
    }
}

/// Splits CSV text into records (RFC 4180 quoting; fields NFC-normalised, unquoted ones trimmed;
/// lines blank or of separators only skipped).
fn records(text: &str, delimiter: char) -> Result<Vec<Record>, PairingsError> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while chars.peek().is_some() {
        let start = line;
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut blank = true;
        loop {
            match chars.next() {
                None => {
                    fields.push(finish_field(&field, quoted));
                    break;
                }
                Some('\n') => {
                    line += 1;
                    fields.push(finish_field(&field, quoted));
                    break;
                }
                Some('\r') if chars.peek() == Some(&'\n') => {}
                Some(c) if c == delimiter => {
                    fields.push(finish_field(&field, quoted));
                    field.clear();
                    quoted = false;
                }
                Some('"') if field.trim().is_empty() && !quoted => {
                    blank = false;
                    quoted = true;
                    field.clear();
                    loop {
                        match chars.next() {
                            None => return Err(PairingsError::UnclosedQuote { line: start }),
                            Some('"') if chars.peek() == Some(&'"') => {
                                chars.next();
                                field.push('"');
                            }
                            Some('"') => break,
                            Some(c) => {
                                if c == '\n' {
                                    line += 1;
                                }
                                field.push(c);
                            }
                        }
                    }
                    // Only blanks may follow the closing quote.
                    while let Some(&c) = chars.peek() {
                        match c {
                            c if c == delimiter => break,
                            ' ' | '\t' => {
                                chars.next();
                            }
                            '\n' | '\r' => break,
                            _ => return Err(PairingsError::AfterQuote { line }),
                        }
                    }
                }
                Some(c) => {
                    if !c.is_whitespace() {
                        blank = false;
                    }
                    field.push(c);
                }
            }
        }
        if !blank {
            out.push(Record {
                line: start,
                fields,
            });
        }
    }
    Ok(out)
}

fn finish_field(field: &str, quoted: bool) -> String {
    if quoted {
        field.nfc().collect()
    } else {
        field.trim().nfc().collect()
    }
}

/// The pairings of a CSV file with a header, ordered by board.
pub fn parse_csv(text: &str) -> Result<Vec<Pairing>, PairingsError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(PairingsError::NoHeader);
    }
    let Some(delimiter) = delimiter(text) else {
        let (i, header) = text
            .lines()
            .enumerate()
            .find(|(_, l)| !l.trim().is_empty())
            .unwrap_or_default();
        return Err(PairingsError::Delimiter {
            line: i + 1,
            header: header.trim().to_owned(),
        });
    };
    let mut records = records(text, delimiter)?.into_iter();
    let header = records.next().ok_or(PairingsError::NoHeader)?;
    let mut layout: Vec<Column> = Vec::new();
    for name in &header.fields {
        let column = Column::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| PairingsError::UnknownColumn {
                line: header.line,
                column: name.clone(),
            })?;
        if layout.contains(&column) {
            return Err(PairingsError::DuplicateColumn {
                line: header.line,
                column: name.clone(),
            });
        }
        layout.push(column);
    }
    for required in [Column::Board, Column::White, Column::Black] {
        if !layout.contains(&required) {
            return Err(PairingsError::MissingColumn {
                line: header.line,
                column: required.name(),
            });
        }
    }
    let mut rows: Vec<(usize, Pairing)> = Vec::new();
    for record in records {
        let line = record.line;
        if record.fields.len() != layout.len() {
            return Err(PairingsError::FieldCount {
                line,
                found: record.fields.len(),
                expected: layout.len(),
            });
        }
        let mut p = Pairing::new(0, "", "");
        let text = |value: String| Some(value.trim().to_owned()).filter(|v| !v.is_empty());
        for (&column, value) in layout.iter().zip(record.fields) {
            let number = |value: &str| -> Result<Option<u32>, PairingsError> {
                if value.trim().is_empty() {
                    return Ok(None);
                }
                value
                    .trim()
                    .parse::<u32>()
                    .map(Some)
                    .map_err(|_| PairingsError::BadNumber {
                        line,
                        field: column.name(),
                        value: value.to_owned(),
                    })
            };
            match column {
                Column::Board => {
                    p.board = number(&value)?.ok_or(PairingsError::BadNumber {
                        line,
                        field: "board",
                        value: value.clone(),
                    })?;
                }
                Column::White => p.white = value,
                Column::Black => p.black = value,
                Column::WhiteFide => p.white_fide = number(&value)?,
                Column::BlackFide => p.black_fide = number(&value)?,
                Column::WhiteElo => p.white_elo = number(&value)?,
                Column::BlackElo => p.black_elo = number(&value)?,
                Column::WhiteTitle => p.white_title = text(value),
                Column::BlackTitle => p.black_title = text(value),
                Column::WhiteFed => p.white_fed = text(value),
                Column::BlackFed => p.black_fed = text(value),
            }
        }
        if p.board == 0 {
            return Err(PairingsError::BoardZero { line });
        }
        for (field, name) in [("white", &p.white), ("black", &p.black)] {
            if name.trim().is_empty() {
                return Err(PairingsError::EmptyName { line, field });
            }
            check_text(line, field, name)?;
        }
        for (field, text) in [
            ("white_title", &p.white_title),
            ("black_title", &p.black_title),
            ("white_fed", &p.white_fed),
            ("black_fed", &p.black_fed),
        ] {
            check_text(line, field, text.as_deref().unwrap_or_default())?;
        }
        if let Some((first, _)) = rows.iter().find(|(_, r)| r.board == p.board) {
            return Err(PairingsError::DuplicateBoard {
                line,
                board: p.board,
                first: *first,
            });
        }
        rows.push((line, p));
    }
    if rows.is_empty() {
        return Err(PairingsError::Empty { round: None });
    }
    let mut rows: Vec<Pairing> = rows.into_iter().map(|(_, p)| p).collect();
    rows.sort_by_key(|p| p.board);
    Ok(rows)
}

/// The pairings as CSV with every column, which [`parse_csv`] reads back unchanged.
pub fn to_csv(rows: &[Pairing]) -> String {
    let mut out = String::new();
    let names: Vec<&str> = Column::ALL.iter().map(|c| c.name()).collect();
    out.push_str(&names.join(","));
    out.push('\n');
    let opt = |n: Option<u32>| n.map(|n| n.to_string()).unwrap_or_default();
    let text = |t: &Option<String>| t.as_deref().map(csv_field).unwrap_or_default();
    for p in rows {
        let fields = [
            p.board.to_string(),
            csv_field(&p.white),
            csv_field(&p.black),
            opt(p.white_fide),
            opt(p.black_fide),
            opt(p.white_elo),
            opt(p.black_elo),
            text(&p.white_title),
            text(&p.black_title),
            text(&p.white_fed),
            text(&p.black_fed),
        ];
        let _ = writeln!(out, "{}", fields.join(","));
    }
    out
}

/// A field quoted when it must be: separators, quotes, line breaks or blanks at its ends.
fn csv_field(value: &str) -> String {
    let needs = value.contains([',', '"', '\n', '\r']) || value.trim() != value || value.is_empty();
    if needs {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_owned()
    }
}

impl DecodeError {
    /// What is wrong and what to do, in `lang`'s words.
    pub fn words(&self, lang: Lang) -> String {
        let (line, what) = match self {
            DecodeError::NotText { line, byte } => (
                line,
                lang.fill("pairing.not_text", &[("byte", &format!("0x{byte:02X}"))]),
            ),
            DecodeError::Malformed { line, encoding } => (
                line,
                lang.fill("pairing.malformed", &[("encoding", encoding.name())]),
            ),
        };
        at_line(lang, Some(*line), what)
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words(Lang::En))
    }
}

impl std::error::Error for DecodeError {}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_trfs_byes_are_read_with_their_code_and_a_csv_has_none() {
        let line = |n: u32, name: &str, cell: &str| {
            let mut l = format!("001 {n:>4}      {name:<33}");
            l.push_str(&" ".repeat(91 - l.chars().count()));
            l.push_str(cell);
            l
        };
        let text = [
            line(1, "Abenov, Arman", "   2 w  "),
            line(2, "Batyrov, Bolot", "   1 b  "),
            line(3, "Chen, Wei", "0000 - u"),
            line(4, "Dosova, Dana", "0000 - F"),
            line(5, "Erdene, Bat", "        "),
        ]
        .join("\n");
        let byes = parse_byes(&text, PairingsFormat::Trf, 1).unwrap();
        let read: Vec<(&str, char, Option<u32>)> = byes
            .iter()
            .map(|b| (b.name.as_str(), b.code, b.start))
            .collect();
        assert_eq!(
            read,
            [("Chen, Wei", 'U', Some(3)), ("Dosova, Dana", 'F', Some(4))]
        );
        // The boards are read as ever; the absent player is neither.
        assert_eq!(parse_trf(&text, 1).unwrap().len(), 1);
        assert!(
            parse_byes("board,white,black\n", PairingsFormat::Csv, 1)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            parse_byes(&text, PairingsFormat::Trf, 0),
            Err(PairingsError::RoundZero)
        );
    }

    /// Six players after two rounds, round 3 paired: written by hand in TRF16 columns.
    const TRF: &str = "\
012 Almaty Open\n\
001    1 m GM Abenov, Arman                     2610 KAZ    13700001 1990/01/01  2.0    1     4 w 1     2 b 1     3 w\n\
001    2 m IM Bekova, Dana                      2450 KAZ    13700002 1995/02/02  1.0    3     5 b 1     1 w 0     6 b\n\
001    3 w    Chen, Li                          2300 CHN     8600003 2000/03/03  1.5    2     6 w =     4 b 1     1 b\n\
001    4 m    Dosov, Erlan                      2200 KAZ    13700004 2001/04/04  0.0    6     1 b 0     3 w 0  0000 - U\n\
001    5 m    Esimov, Farid                        0 KAZ           0 2002/05/05  0.0    5     2 w 0  0000 - Z\n\
001    6 w    Fazylova, Gulnara                 1900 KAZ    13700006 2003/06/06  0.5    4     3 b =  0000 - H     2 w\n";

    #[test]
    fn trf_round_three_pairs_by_score_then_rank() {
        let rows = parse_trf(TRF, 3).unwrap();
        // Before round 3: Abenov 2, Chen 1.5, Bekova 1, Fazylova 1 (½ + bye ½); Dosov 0 (bye now).
        assert_eq!(
            rows,
            vec![
                Pairing {
                    board: 1,
                    white: "Abenov, Arman".into(),
                    black: "Chen, Li".into(),
                    white_fide: Some(13700001),
                    black_fide: Some(8600003),
                    white_elo: Some(2610),
                    black_elo: Some(2300),
                    white_title: Some("GM".into()),
                    black_title: None,
                    white_fed: Some("KAZ".into()),
                    black_fed: Some("CHN".into()),
                    white_start: Some(1),
                    black_start: Some(3),
                },
                Pairing {
                    board: 2,
                    white: "Fazylova, Gulnara".into(),
                    black: "Bekova, Dana".into(),
                    white_fide: Some(13700006),
                    black_fide: Some(13700002),
                    white_elo: Some(1900),
                    black_elo: Some(2450),
                    white_title: None,
                    black_title: Some("IM".into()),
                    white_fed: Some("KAZ".into()),
                    black_fed: Some("KAZ".into()),
                    white_start: Some(6),
                    black_start: Some(2),
                },
            ]
        );
    }

    #[test]
    fn trf_round_one_and_its_byes() {
        let rows = parse_trf(TRF, 2).unwrap();
        let boards: Vec<(&str, &str)> = rows
            .iter()
            .map(|p| (p.white.as_str(), p.black.as_str()))
            .collect();
        // After round 1: Abenov 1, Bekova 1 (pair score 1+1), Chen ½ v Dosov 0.
        assert_eq!(
            boards,
            [
                ("Bekova, Dana", "Abenov, Arman"),
                ("Dosov, Erlan", "Chen, Li")
            ]
        );
        // Esimov has no rating and no FIDE number.
        let r1 = parse_trf(TRF, 1).unwrap();
        let e = r1.iter().find(|p| p.white.starts_with("Esimov")).unwrap();
        assert_eq!((e.white_elo, e.white_fide), (None, None));
        assert_eq!(r1.len(), 3);
        assert_eq!(
            parse_trf(TRF, 4),
            Err(PairingsError::Empty { round: Some(4) })
        );
        assert_eq!(parse_trf(TRF, 0), Err(PairingsError::RoundZero));
    }

    #[test]
    fn trf_errors_name_the_line() {
        let broken = TRF.replace("5 b 1     1 w 0", "5 b 1     1 b 0");
        assert_eq!(
            parse_trf(&broken, 2),
            Err(PairingsError::Inconsistent {
                line: 3,
                round: 2,
                player: 2,
                opponent: 1
            })
        );
        let unknown = TRF.replace("     2 w\n", "     9 w\n");
        assert_eq!(
            parse_trf(&unknown, 3),
            Err(PairingsError::UnknownOpponent {
                line: 7,
                round: 3,
                player: 6,
                opponent: 9
            })
        );
        let colour = TRF.replace("     4 w 1", "     4 x 1");
        assert_eq!(
            parse_trf(&colour, 1),
            Err(PairingsError::BadColour {
                line: 2,
                round: 1,
                colour: 'x'
            })
        );
        let rating = TRF.replace("2300 CHN", "23x0 CHN");
        assert!(matches!(
            parse_trf(&rating, 1),
            Err(PairingsError::BadNumber {
                line: 4,
                field: "rating",
                ..
            })
        ));
        let twice = format!("{TRF}{}\n", TRF.lines().nth(2).unwrap());
        assert_eq!(
            parse_trf(&twice, 1),
            Err(PairingsError::DuplicatePlayer {
                line: 8,
                number: 2,
                first: 3
            })
        );
    }

    #[test]
    fn trf_accepts_crlf_and_latin1() {
        let crlf = TRF.replace('\n', "\r\n");
        assert_eq!(parse_trf(&crlf, 3), parse_trf(TRF, 3));
        let mut bytes = TRF.replace("Chen, Li", "Chén, Li").into_bytes();
        // As Latin-1: é is one byte, so the columns stay where they are.
        let at = bytes.windows(2).position(|w| w == "é".as_bytes()).unwrap();
        bytes.splice(at..at + 2, [0xe9]);
        let decoded = decode(&bytes).unwrap();
        assert_eq!(decoded.encoding, Encoding::Windows1252);
        let rows = parse_trf(&decoded.text, 3).unwrap();
        assert_eq!(rows[0].black, "Chén, Li");
        assert_eq!(rows[0].black_elo, Some(2300));
    }

    const CSV: &str = "Board,White,Black,white_fide,black_fide,white_elo,black_elo\r\n\
2,\"Bekova, Dana\",Abenov Arman,13700002,,2450,\r\n\
\r\n\
1, \"Chen \"\"Lily\"\" Li\" , Dosov ,8600003,13700004,,2200\r\n";

    #[test]
    fn csv_with_quotes_and_blanks() {
        let rows = parse_csv(CSV).unwrap();
        assert_eq!(
            rows,
            vec![
                Pairing {
                    board: 1,
                    white: "Chen \"Lily\" Li".into(),
                    black: "Dosov".into(),
                    white_fide: Some(8600003),
                    black_fide: Some(13700004),
                    white_elo: None,
                    black_elo: Some(2200),
                    ..Pairing::new(0, "", "")
                },
                Pairing {
                    board: 2,
                    white: "Bekova, Dana".into(),
                    black: "Abenov Arman".into(),
                    white_fide: Some(13700002),
                    black_fide: None,
                    white_elo: Some(2450),
                    black_elo: None,
                    ..Pairing::new(0, "", "")
                },
            ]
        );
        let minimal = "black,board,white\nB1,7,W1\n";
        let rows = parse_csv(minimal).unwrap();
        assert_eq!((rows[0].board, rows[0].white.as_str()), (7, "W1"));
    }

    #[test]
    fn csv_errors_name_the_line() {
        use PairingsError as E;
        let cases: &[(&str, PairingsError)] = &[
            ("", E::NoHeader),
            (
                "board,white\n1,a\n",
                E::MissingColumn {
                    line: 1,
                    column: "black",
                },
            ),
            (
                "board,white,black,club\n",
                E::UnknownColumn {
                    line: 1,
                    column: "club".into(),
                },
            ),
            (
                "board,white,black,White\n",
                E::DuplicateColumn {
                    line: 1,
                    column: "White".into(),
                },
            ),
            (
                "board,white,black\n1,a,b\n\n2,a\n",
                E::FieldCount {
                    line: 4,
                    found: 2,
                    expected: 3,
                },
            ),
            (
                "board,white,black\n1,\"a\nb,c\n",
                E::UnclosedQuote { line: 2 },
            ),
            ("board,white,black\n1,\"a\"x,b\n", E::AfterQuote { line: 2 }),
            (
                "board,white,black\none,a,b\n",
                E::BadNumber {
                    line: 2,
                    field: "board",
                    value: "one".into(),
                },
            ),
            ("board,white,black\n0,a,b\n", E::BoardZero { line: 2 }),
            (
                "board,white,black\n1,a,\"  \"\n",
                E::EmptyName {
                    line: 2,
                    field: "black",
                },
            ),
            (
                "board,white,black\n\"1\n\",a,c\n1,d,e\n",
                E::DuplicateBoard {
                    line: 4,
                    board: 1,
                    first: 2,
                },
            ),
            ("board,white,black\n\n", E::Empty { round: None }),
        ];
        for (text, want) in cases {
            assert_eq!(parse_csv(text).as_ref(), Err(want), "{text:?}");
        }
        assert_eq!(
            E::FieldCount {
                line: 4,
                found: 2,
                expected: 3
            }
            .to_string(),
            "line 4: 2 fields, the header has 3"
        );
    }

    #[test]
    fn names_with_control_characters_or_too_long_are_refused_with_their_line() {
        use PairingsError as E;
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        let cases: Vec<(String, PairingsError)> = vec![
            (
                "board,white,black\n1,a,b\n2,c,d\0e\n".into(),
                E::ControlCharacter {
                    line: 3,
                    field: "black",
                    code: 0,
                    at: 2,
                },
            ),
            (
                "board,white,black\n1,\"a\nb\",c\n".into(),
                E::ControlCharacter {
                    line: 2,
                    field: "white",
                    code: 10,
                    at: 2,
                },
            ),
            (
                format!("board,white,black\n1,a,{long}\n"),
                E::NameTooLong {
                    line: 2,
                    field: "black",
                    chars: MAX_NAME_CHARS + 1,
                },
            ),
            (
                "board,white,black,white_fed\n1,a,b,K\tZ\n".into(),
                E::ControlCharacter {
                    line: 2,
                    field: "white_fed",
                    code: 9,
                    at: 2,
                },
            ),
        ];
        for (text, want) in &cases {
            assert_eq!(parse_csv(text).as_ref(), Err(want));
        }
        let ok = format!("board,white,black\n1,{},b\n", "é".repeat(MAX_NAME_CHARS));
        assert!(parse_csv(&ok).is_ok(), "200 characters, not bytes");
        assert_eq!(
            cases[0].1.to_string(),
            "line 3: black holds a control character (U+0000) at character 2"
        );
        assert_eq!(
            cases[2].1.to_string(),
            "line 2: black is 201 characters long (at most 200)"
        );
        let trf = TRF.replace("Chen, Li  ", "Chen,\u{1}Li  ");
        assert_eq!(
            parse_trf(&trf, 3),
            Err(E::ControlCharacter {
                line: 4,
                field: "name",
                code: 1,
                at: 6
            })
        );
    }

    /// Cyrillic names as a Russian-locale Excel saves them: Windows-1251, semicolons, CRLF,
    /// an empty row of separators at the end.
    const CYRILLIC_CSV: &str = "Board;White;Black;White_Elo;Black_Elo;White_Title;White_Fed\r\n\
1;Иванов, Иван;Ёлкина, Юлия;2410;2380;IM;RUS\r\n\
2;\"Шевченко; Ігор\";Абенов Арман;;2200;;UKR\r\n\
;;;;;;\r\n";

    fn cyrillic_rows() -> Vec<Pairing> {
        vec![
            Pairing {
                white_elo: Some(2410),
                black_elo: Some(2380),
                white_title: Some("IM".into()),
                white_fed: Some("RUS".into()),
                ..Pairing::new(1, "Иванов, Иван", "Ёлкина, Юлия")
            },
            Pairing {
                black_elo: Some(2200),
                white_fed: Some("UKR".into()),
                ..Pairing::new(2, "Шевченко; Ігор", "Абенов Арман")
            },
        ]
    }

    #[test]
    fn a_windows_1251_semicolon_csv_reads_its_names_exactly() {
        let (bytes, _, unmappable) = encoding_rs::WINDOWS_1251.encode(CYRILLIC_CSV);
        assert!(!unmappable);
        // The bytes are Windows-1251's: И is 0xC8, в 0xE2; not UTF-8.
        assert!(bytes.starts_with(b"Board;White;"));
        assert!(bytes.windows(3).any(|w| w == b";\xc8\xe2"));
        let decoded = decode(&bytes).unwrap();
        assert_eq!(decoded.encoding, Encoding::Windows1251);
        assert_eq!(parse_csv(&decoded.text), Ok(cyrillic_rows()));
        // The same file in UTF-8, and in UTF-16 LE with its BOM and tabs (Excel's "Unicode
        // text"), reads the same.
        assert_eq!(parse_csv(CYRILLIC_CSV), Ok(cyrillic_rows()));
        let tabs = CYRILLIC_CSV
            .replace(';', "\t")
            .replace("\"Шевченко\t", "\"Шевченко;");
        let le: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain(tabs.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let decoded = decode(&le).unwrap();
        assert_eq!(decoded.encoding, Encoding::Utf16Le);
        assert_eq!(parse_csv(&decoded.text), Ok(cyrillic_rows()));
    }

    #[test]
    fn the_delimiter_is_the_headers() {
        use PairingsError as E;
        let rows = |text: &str| parse_csv(text).map(|r| (r[0].white.clone(), r[0].black.clone()));
        let want = Ok(("a, b".to_owned(), "c; d".to_owned()));
        assert_eq!(rows("board,white,black\n1,\"a, b\",c; d\n"), want);
        assert_eq!(rows("board;white;black\n1;a, b;\"c; d\"\n"), want);
        assert_eq!(rows("board\twhite\tblack\n1\t\"a, b\"\t c; d \n"), want);
        // A quoted header, blank lines before it; a closing quote then the tab.
        assert_eq!(
            rows("\n \n\"board\";\"white\";\"black\"\n1;\"a, b\" ;c; d\n"),
            Err(E::FieldCount {
                line: 4,
                found: 4,
                expected: 3
            })
        );
        assert_eq!(rows("board\twhite\tblack\n1\t\"a, b\"\tc; d\n"), want);
        for (text, line, header) in [
            ("board white black\n1 a b\n", 1, "board white black"),
            ("\nboard,white;black\n", 2, "board,white;black"),
            ("board|white|black\n", 1, "board|white|black"),
        ] {
            let err = parse_csv(text).unwrap_err();
            assert_eq!(
                err,
                E::Delimiter {
                    line,
                    header: header.into()
                }
            );
            assert!(
                err.to_string().contains("commas, semicolons or tabs"),
                "{err}"
            );
        }
    }

    #[test]
    fn the_unknown_column_error_lists_every_column() {
        let names: Vec<&str> = Column::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(KNOWN_COLUMNS, names.join(", "));
        let err = parse_csv("board;white;black;club\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1: unknown column \"club\" (known: board, white, black, white_fide, \
             black_fide, white_elo, black_elo, white_title, black_title, white_fed, black_fed)"
        );
    }

    #[test]
    fn names_are_composed_never_transliterated() {
        // Й written as И + combining breve, ё as е + diaeresis, Ә as Ә (already one), Persian
        // as it is: composed (NFC), nothing else changed.
        let csv = "board,white,black,white_title\n1,\"Пе\u{308}тр Найденов\",И\u{306}ылдыз,\"Ә\"\n";
        let rows = parse_csv(csv).unwrap();
        assert_eq!(rows[0].white, "Пётр Найденов");
        assert_eq!(rows[0].black, "Йылдыз");
        assert_eq!(rows[0].white_title.as_deref(), Some("Ә"));
        let persian = "board,white,black\n1,پژمان گلچین,Өлзий Үүрцайх\n";
        let rows = parse_csv(persian).unwrap();
        assert_eq!(
            (rows[0].white.as_str(), rows[0].black.as_str()),
            ("پژمان گلچین", "Өлзий Үүрцайх")
        );
        // A TRF's columns count the file's characters: the decomposed name keeps its columns,
        // and its rating still reads.
        let trf = TRF.replace("Chen, Li  ", "Chen, Li\u{306} ");
        let rows = parse_trf(&trf, 3).unwrap();
        assert_eq!(rows[0].black, "Chen, Lĭ");
        assert_eq!(rows[0].black_elo, Some(2300));
    }

    #[test]
    fn random_bytes_are_refused_with_the_line_of_the_first_bad_byte() {
        let mut bytes = b"board,white,black\n1,a,b\n2,c,".to_vec();
        bytes.extend([0x00, 0x9f, 0x13, 0xff, 0x80, 0x0a, 0xc3, 0x28, 0xfe, 0x01]);
        let err = decode(&bytes).unwrap_err();
        assert_eq!(
            err,
            DecodeError::NotText {
                line: 3,
                byte: 0x9f
            }
        );
        assert!(err.to_string().contains("save it as CSV UTF-8"), "{err}");
    }

    #[test]
    fn names_no_font_prints_are_refused_with_their_line_and_character() {
        let csv = "board,white,black\n1,Әсел Қасымова,پرویز چمران\n2,Li 李,Ivanov\n";
        let err = parse_csv(csv).unwrap_err();
        assert_eq!(
            err,
            PairingsError::NotPrintable {
                line: 3,
                field: "white",
                code: 0x674e,
                at: 4
            }
        );
        assert_eq!(
            err.to_string(),
            "line 3: white holds U+674E at character 4, which no font of the printed scoresheet has"
        );
        let trf = TRF.replace("Chen, Li  ", "Chen, \u{1f980}i  ");
        assert!(matches!(
            parse_trf(&trf, 3),
            Err(PairingsError::NotPrintable {
                line: 4,
                field: "name",
                code: 0x1f980,
                ..
            })
        ));
    }

    #[test]
    fn formats_from_file_names() {
        let f = |p: &str| PairingsFormat::from_path(Path::new(p));
        assert_eq!(f("r3.CSV"), Some(PairingsFormat::Csv));
        assert_eq!(f("open.trf"), Some(PairingsFormat::Trf));
        assert_eq!(f("open.trfx"), Some(PairingsFormat::Trf));
        assert_eq!(f("pairings"), None);
    }

    fn pairing() -> impl Strategy<Value = Pairing> {
        // Names: any text that has a non-blank character (blank names are refused), in
        // characters the scoresheet's fonts print (others are refused).
        let name = || {
            "\\PC{0,3}[^\\s\\pC]\\PC{0,12}|[ ,\"a-z]{0,4}x[ ,\"]{0,3}".prop_map(|s: String| {
                let printable = crate::fonts::is_covered;
                s.chars()
                    .map(|c| if printable(c) { c } else { 'ж' })
                    .collect::<String>()
            })
        };
        (
            1u32..10_000,
            name(),
            name(),
            proptest::option::of(any::<u32>()),
            proptest::option::of(any::<u32>()),
            proptest::option::of(0u32..3500),
            proptest::option::of(0u32..3500),
            proptest::option::of("[A-Z]{1,3}"),
            proptest::option::of("[A-Z]{3}"),
        )
            .prop_map(
                |(board, white, black, wf, bf, we, be, title, fed)| Pairing {
                    board,
                    white,
                    black,
                    white_fide: wf,
                    black_fide: bf,
                    white_elo: we,
                    black_elo: be,
                    white_title: title.clone(),
                    black_title: title,
                    white_fed: fed.clone(),
                    black_fed: fed,
                    white_start: None,
                    black_start: None,
                },
            )
    }

    proptest! {
        #[test]
        fn csv_round_trips(rows in proptest::collection::vec(pairing(), 1..12)) {
            let mut rows = rows;
            rows.sort_by_key(|p| p.board);
            rows.dedup_by_key(|p| p.board);
            let text = to_csv(&rows);
            // Read back composed (NFC), as every import is.
            for p in &mut rows {
                p.white = p.white.nfc().collect();
                p.black = p.black.nfc().collect();
            }
            prop_assert_eq!(parse_csv(&text), Ok(rows));
        }
    }
}
