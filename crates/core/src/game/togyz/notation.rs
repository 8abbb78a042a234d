//! Togyz korgool notation: moves (`76`, `45X`), results (`1–0/62`, `1-0`), positions (the
//! PlayStrategy FEN) and the PGN-like records of `shared/corpus/togyz`.
//!
//! Flow: [`parse_records`] cuts a text into [`Record`]s (headers, moves with PlayOK's optional
//! `(k)` store totals, the result, `{...}` comments), each token keeping its line number;
//! [`Record::replay`] plays the moves from the start position and checks every recorded landing
//! digit, `X` and store total against the rules; [`Record::to_pgn`] writes a record back.
//! A move's text is two digits, the pit sown from and the landing pit on the row where it lies
//! (rules summary section 3), `X` when the move made a tuz ([KG 2.9]).

use std::{fmt, str::FromStr};

use super::{
    Board, GameResult, IllegalMove, Move, Position, ResultFormat, Rules, SetupError, Side, Sowing,
};
use crate::game::Outcome;

/// Why a move's text does not fit the position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("not a move: two digits 1-9, then an optional X")]
    Syntax,
    #[error(transparent)]
    Illegal(#[from] IllegalMove),
    #[error("the last korgool lands in pit {actual}, not {recorded}")]
    Landing { recorded: u8, actual: u8 },
    #[error("the move makes a tuz but has no X")]
    MissingTuzMark,
    #[error("the move is marked X but makes no tuz")]
    SpuriousTuzMark,
    #[error("the mover's store holds {actual} after the move, not {recorded}")]
    StoreTotal { recorded: u8, actual: u8 },
}

/// Errors reading records, with where they happened.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotationError {
    #[error("line {line}: {detail}")]
    Syntax { line: usize, detail: String },
    #[error("line {line}, ply {ply} ({text}): {source}")]
    Move {
        line: usize,
        /// 1-based.
        ply: usize,
        text: String,
        source: MoveError,
    },
    #[error("position text: {detail}")]
    Fen { detail: String },
    #[error("position text: {0}")]
    Setup(#[from] SetupError),
}

/// A move as written: from pit, landing pit, tuz mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoveText {
    pub from: u8,
    pub to: u8,
    pub tuz: bool,
}

impl MoveText {
    /// The text of a sowing.
    pub fn from_sowing(s: &Sowing) -> MoveText {
        MoveText {
            from: s.mv.pit(),
            to: s.landing_pit(),
            tuz: s.tuz_created,
        }
    }

    /// The text of `mv` played from `pos`.
    pub fn of(pos: &Position, mv: Move) -> Result<MoveText, IllegalMove> {
        pos.play_with_info(mv)
            .map(|(_, s)| MoveText::from_sowing(&s))
    }

    /// The move this text names in `pos`, checked: legal, the landing digit and the tuz mark.
    pub fn to_move(&self, pos: &Position) -> Result<(Position, Sowing), MoveError> {
        let mv = Move::new(self.from).ok_or(MoveError::Syntax)?;
        let (after, sowing) = pos.play_with_info(mv)?;
        let actual = MoveText::from_sowing(&sowing);
        if actual.to != self.to {
            return Err(MoveError::Landing {
                recorded: self.to,
                actual: actual.to,
            });
        }
        match (actual.tuz, self.tuz) {
            (true, false) => Err(MoveError::MissingTuzMark),
            (false, true) => Err(MoveError::SpuriousTuzMark),
            _ => Ok((after, sowing)),
        }
    }
}

impl FromStr for MoveText {
    type Err = MoveError;

    fn from_str(s: &str) -> Result<MoveText, MoveError> {
        let b = s.as_bytes();
        let digit = |c: u8| (b'1'..=b'9').contains(&c).then(|| c - b'0');
        let (from, to, tuz) = match b {
            [f, t] => (digit(*f), digit(*t), false),
            [f, t, b'X' | b'x'] => (digit(*f), digit(*t), true),
            _ => return Err(MoveError::Syntax),
        };
        match (from, to) {
            (Some(from), Some(to)) => Ok(MoveText { from, to, tuz }),
            _ => Err(MoveError::Syntax),
        }
    }
}

impl fmt::Display for MoveText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)?;
        if self.tuz {
            f.write_str("X")?;
        }
        Ok(())
    }
}

/// A move in a record, with PlayOK's store total (the mover's store after a capture) if given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordedMove {
    pub text: MoveText,
    pub store: Option<u8>,
    /// Line of the text it was read from (0 when built in code).
    pub line: usize,
}

/// A result as written: the outcome (`None` for `*`) and the supplementary index if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResultText {
    pub outcome: Option<Outcome>,
    pub index: Option<u8>,
}

impl ResultText {
    /// Reads `1-0`, `0-1`, `1/2-1/2`, `*`, and the Kyrgyz forms `1–0/62`, `0–1/76/`, `½–½`.
    pub fn parse(s: &str) -> Option<ResultText> {
        let s = s.replace(['–', '—'], "-");
        let s = s.strip_suffix('/').unwrap_or(&s);
        let (head, index) = match s {
            "1/2-1/2" | "½-½" | "*" => (s, None),
            _ => match s.split_once('/') {
                Some((head, idx)) => (head, Some(idx.parse::<u8>().ok()?)),
                None => (s, None),
            },
        };
        let outcome = match head {
            "1-0" => Some(Outcome::WhiteWins),
            "0-1" => Some(Outcome::BlackWins),
            "1/2-1/2" | "½-½" => Some(Outcome::Draw),
            "*" => None,
            _ => return None,
        };
        Some(ResultText { outcome, index })
    }

    /// Writes the result: `1–0/62` (Kyrgyz; en dash, the loser's korgools) or `1-0` (PGN).
    pub fn format(&self, format: ResultFormat) -> String {
        match format {
            ResultFormat::Pgn => self.outcome.map_or("*", Outcome::as_pgn).to_owned(),
            ResultFormat::Kyrgyz => {
                let head = match self.outcome {
                    Some(Outcome::WhiteWins) => "1–0",
                    Some(Outcome::BlackWins) => "0–1",
                    Some(Outcome::Draw) => "½–½",
                    None => return "*".to_owned(),
                };
                match self.index {
                    Some(i) => format!("{head}/{i}"),
                    None => head.to_owned(),
                }
            }
        }
    }
}

impl From<&GameResult> for ResultText {
    fn from(r: &GameResult) -> ResultText {
        ResultText {
            outcome: Some(r.outcome),
            index: r.supplementary_index(),
        }
    }
}

/// The text of a finished game's result in `format`.
pub fn format_result(result: &GameResult, format: ResultFormat) -> String {
    ResultText::from(result).format(format)
}

/// One game of a PGN-like record file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Header tags in file order.
    pub headers: Vec<(String, String)>,
    pub moves: Vec<RecordedMove>,
    /// The result token after the moves (or, failing that, the `Result` header).
    pub result: Option<ResultText>,
    /// `{...}` comments in the move text (PlayOK's `{zero}` marks an atsyrau end).
    pub comments: Vec<String>,
    /// Line the record starts on.
    pub line: usize,
}

/// A record replayed under the rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The start position and the position after every move.
    pub positions: Vec<Position>,
    pub sowings: Vec<Sowing>,
}

impl Replayed {
    /// The final position.
    pub fn last(&self) -> &Position {
        // `positions` always holds the start position.
        &self.positions[self.positions.len() - 1]
    }
}

impl Record {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Plays the moves from the start position under `rules`, checking every landing digit, tuz
    /// mark and store total.
    pub fn replay(&self, rules: Rules) -> Result<Replayed, NotationError> {
        let mut pos = Position::with_rules(rules);
        let mut positions = vec![pos];
        let mut sowings = Vec::with_capacity(self.moves.len());
        for (n, m) in self.moves.iter().enumerate() {
            let err = |source| NotationError::Move {
                line: m.line,
                ply: n + 1,
                text: m.text.to_string(),
                source,
            };
            let (after, sowing) = m.text.to_move(&pos).map_err(err)?;
            if let Some(recorded) = m.store {
                let actual = after.store(sowing.side);
                if recorded != actual {
                    return Err(err(MoveError::StoreTotal { recorded, actual }));
                }
            }
            pos = after;
            positions.push(pos);
            sowings.push(sowing);
        }
        Ok(Replayed { positions, sowings })
    }

    /// Builds a record of `moves` played from the start position under `rules`; `store_totals`
    /// adds PlayOK's `(k)` after every capture.
    pub fn from_moves(
        headers: Vec<(String, String)>,
        rules: Rules,
        moves: &[Move],
        store_totals: bool,
        result: Option<ResultText>,
    ) -> Result<Record, NotationError> {
        let mut pos = Position::with_rules(rules);
        let mut out = Vec::with_capacity(moves.len());
        for (n, &mv) in moves.iter().enumerate() {
            let (after, s) = pos.play_with_info(mv).map_err(|e| NotationError::Move {
                line: 0,
                ply: n + 1,
                text: mv.pit().to_string(),
                source: e.into(),
            })?;
            let store =
                (store_totals && s.captured > 0 && !s.tuz_created).then(|| after.store(s.side));
            out.push(RecordedMove {
                text: MoveText::from_sowing(&s),
                store,
                line: 0,
            });
            pos = after;
        }
        Ok(Record {
            headers,
            moves: out,
            result,
            comments: Vec::new(),
            line: 0,
        })
    }

    /// The record as PGN-like text (headers, moves wrapped at 80 columns, result, comments).
    pub fn to_pgn(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.headers {
            let v = v.replace('\\', "\\\\").replace('"', "\\\"");
            s.push_str(&format!("[{k} \"{v}\"]\n"));
        }
        s.push('\n');
        let mut tokens = Vec::with_capacity(self.moves.len() * 3 / 2 + 2);
        for (n, m) in self.moves.iter().enumerate() {
            let mut t = String::new();
            if n % 2 == 0 {
                t.push_str(&format!("{}. ", n / 2 + 1));
            }
            t.push_str(&m.text.to_string());
            if let Some(k) = m.store {
                t.push_str(&format!("({k})"));
            }
            tokens.push(t);
        }
        // Records carry the plain PGN result; the Kyrgyz index belongs on scoresheets.
        tokens.push(
            self.result
                .map_or("*".to_owned(), |r| r.format(ResultFormat::Pgn)),
        );
        for c in &self.comments {
            tokens.push(format!("{{{c}}}"));
        }
        let mut col = 0;
        for t in tokens {
            // A move number and its move stay on one line.
            if col > 0 && col + 1 + t.len() > 80 {
                s.push('\n');
                col = 0;
            } else if col > 0 {
                s.push(' ');
                col += 1;
            }
            col += t.chars().count();
            s.push_str(&t);
        }
        s.push('\n');
        s
    }
}

/// Reads every record of a PGN-like text.
pub fn parse_records(text: &str) -> Result<Vec<Record>, NotationError> {
    let mut records = Vec::new();
    let mut cur: Option<Record> = None;
    let mut in_moves = false;
    // An open `{` comment: its text so far.
    let mut comment: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if comment.is_none() && trimmed.starts_with('[') {
            if in_moves || cur.is_none() {
                records.extend(cur.take());
                cur = Some(Record {
                    line,
                    ..Record::default()
                });
                in_moves = false;
            }
            let rec = cur.as_mut().ok_or_else(|| NotationError::Syntax {
                line,
                detail: "header outside a record".to_owned(),
            })?;
            rec.headers.push(parse_header(trimmed, line)?);
            continue;
        }
        if trimmed.is_empty() && comment.is_none() {
            continue;
        }
        let rec = cur.get_or_insert_with(|| Record {
            line,
            ..Record::default()
        });
        in_moves = true;
        let mut rest = trimmed;
        while !rest.is_empty() {
            if let Some(c) = comment.as_mut() {
                match rest.find('}') {
                    Some(end) => {
                        c.push_str(&rest[..end]);
                        rec.comments.push(c.trim().to_owned());
                        comment = None;
                        rest = rest[end + 1..].trim_start();
                    }
                    None => {
                        c.push_str(rest);
                        c.push(' ');
                        rest = "";
                    }
                }
                continue;
            }
            if let Some(r) = rest.strip_prefix('{') {
                comment = Some(String::new());
                rest = r;
                continue;
            }
            let end = rest.find([' ', '\t', '{']).unwrap_or(rest.len());
            let token = &rest[..end];
            rest = rest[end..].trim_start();
            move_token(rec, token, line)?;
        }
    }
    if comment.is_some() {
        return Err(NotationError::Syntax {
            line: text.lines().count(),
            detail: "unterminated { comment".to_owned(),
        });
    }
    records.extend(cur);
    for rec in &mut records {
        if rec.result.is_none() {
            rec.result = rec.header("Result").and_then(ResultText::parse);
        }
    }
    Ok(records)
}

fn parse_header(s: &str, line: usize) -> Result<(String, String), NotationError> {
    let err = |detail: &str| NotationError::Syntax {
        line,
        detail: format!("{detail}: {s}"),
    };
    let inner = s
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .ok_or_else(|| err("a header is [Name \"value\"]"))?;
    let (name, value) = inner
        .split_once(' ')
        .ok_or_else(|| err("a header needs a value"))?;
    let value = value
        .trim()
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .ok_or_else(|| err("a header value is quoted"))?;
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    Ok((name.to_owned(), out))
}

fn move_token(rec: &mut Record, token: &str, line: usize) -> Result<(), NotationError> {
    // A move number, possibly glued to the move: `12.`, `12...`, `12.76`.
    let token = match token.find('.') {
        Some(dot) if token[..dot].bytes().all(|b| b.is_ascii_digit()) && dot > 0 => {
            token[dot..].trim_start_matches('.')
        }
        _ => token,
    };
    if token.is_empty() {
        return Ok(());
    }
    if let Some(r) = ResultText::parse(token) {
        rec.result = Some(r);
        return Ok(());
    }
    let (mv, store) = match token.split_once('(') {
        Some((mv, k)) => {
            let k = k
                .strip_suffix(')')
                .and_then(|k| k.parse::<u8>().ok())
                .ok_or_else(|| NotationError::Syntax {
                    line,
                    detail: format!("bad store total in {token:?}"),
                })?;
            (mv, Some(k))
        }
        None => (token, None),
    };
    let text = mv
        .parse::<MoveText>()
        .map_err(|source| NotationError::Move {
            line,
            ply: rec.moves.len() + 1,
            text: token.to_owned(),
            source,
        })?;
    rec.moves.push(RecordedMove { text, store, line });
    Ok(())
}

/// The position in PlayStrategy's FEN: black's row (pits 9 to 1) `/` white's row (pits 1 to 9),
/// cells `nS` (n korgools), a digit d for d empty pits, `t` for a tuz; then the stores (white,
/// black), `S` (white) or `N` (black) to move, and the move number.
pub fn to_fen(pos: &Position) -> String {
    board_fen(pos.board(), pos.turn(), u32::from(pos.fullmove()))
}

/// [`to_fen`] of a board that need not be a position the rules reach (a board's sensors read in
/// the middle of a sowing, korgools in a hand): `turn` to move at move `fullmove`.
pub fn board_fen(b: &Board, turn: Side, fullmove: u32) -> String {
    let row = |side: Side, pits: &mut dyn Iterator<Item = u8>| {
        let mut cells: Vec<String> = Vec::new();
        let mut empty = 0;
        for p in pits {
            let loc = Board::location(side, p);
            let cell = if b.tuz_owner(loc).is_some() {
                Some("t".to_owned())
            } else if b.pits[loc] > 0 {
                Some(format!("{}S", b.pits[loc]))
            } else {
                None
            };
            match cell {
                Some(c) => {
                    if empty > 0 {
                        cells.push(empty.to_string());
                        empty = 0;
                    }
                    cells.push(c);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            cells.push(empty.to_string());
        }
        cells.join(",")
    };
    format!(
        "{}/{} {} {} {} {}",
        row(Side::Black, &mut (1..=9).rev()),
        row(Side::White, &mut (1..=9)),
        b.stores[0],
        b.stores[1],
        match turn {
            Side::White => 'S',
            Side::Black => 'N',
        },
        fullmove
    )
}

/// Reads a position written by [`to_fen`].
pub fn from_fen(s: &str, rules: Rules) -> Result<Position, NotationError> {
    let err = |detail: String| NotationError::Fen { detail };
    let (board, fields) = fen_board(s)?;
    let [turn, fullmove] = fields[..] else {
        return Err(err(format!("expected 5 fields, got {}", fields.len() + 3)));
    };
    let num = |t: &str| {
        t.parse::<u16>()
            .map_err(|_| err(format!("bad number {t:?}")))
    };
    let turn = match turn {
        "S" => Side::White,
        "N" => Side::Black,
        t => return Err(err(format!("bad side to move {t:?}"))),
    };
    let fullmove = num(fullmove)?.max(1);
    let ply = (fullmove - 1) * 2 + u16::from(turn == Side::Black);
    Ok(Position::from_board(board, turn, ply, rules)?)
}

/// The board of a FEN written by [`to_fen`] or [`board_fen`], as it is (no rule checks it: a
/// board read in the middle of a sowing draws as read), and the fields after the stores.
pub fn fen_board(s: &str) -> Result<(Board, Vec<&str>), NotationError> {
    let err = |detail: String| NotationError::Fen { detail };
    let fields: Vec<&str> = s.split_whitespace().collect();
    let [rows, white, black, ref rest @ ..] = fields[..] else {
        return Err(err(format!("expected 5 fields, got {}", fields.len())));
    };
    let (black_row, white_row) = rows
        .split_once('/')
        .ok_or_else(|| err("expected two rows".to_owned()))?;
    let mut board = Board {
        pits: [0; 18],
        stores: [0; 2],
        tuz: [None; 2],
    };
    for (side, text, reversed) in [
        (Side::Black, black_row, true),
        (Side::White, white_row, false),
    ] {
        let mut cells: Vec<Option<u8>> = Vec::new(); // None = tuz
        for cell in text.split(',') {
            if cell == "t" {
                cells.push(None);
            } else if let Some(n) = cell.strip_suffix('S') {
                cells.push(Some(
                    n.parse().map_err(|_| err(format!("bad cell {cell:?}")))?,
                ));
            } else {
                let d: usize = cell
                    .parse()
                    .map_err(|_| err(format!("bad cell {cell:?}")))?;
                cells.extend(std::iter::repeat_n(Some(0), d));
            }
        }
        if cells.len() != 9 {
            return Err(err(format!("{side}'s row has {} pits", cells.len())));
        }
        if reversed {
            cells.reverse();
        }
        for (i, c) in cells.into_iter().enumerate() {
            let pit = i as u8 + 1;
            match c {
                Some(n) => board.pits[Board::location(side, pit)] = n,
                None => {
                    let owner = side.other().index();
                    if board.tuz[owner].is_some() {
                        return Err(err(format!("two tuz marks on {side}'s row")));
                    }
                    board.tuz[owner] = Some(pit);
                }
            }
        }
    }
    let store = |t: &str| t.parse::<u8>().map_err(|_| err(format!("bad store {t:?}")));
    board.stores = [store(white)?, store(black)?];
    Ok((board, rest.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_text_round_trip() {
        for s in ["76", "45X", "19"] {
            assert_eq!(s.parse::<MoveText>().unwrap().to_string(), s);
        }
        assert_eq!("45x".parse::<MoveText>().unwrap().to_string(), "45X");
        for bad in ["", "7", "06", "70", "4X5", "123", "45Y"] {
            assert_eq!(bad.parse::<MoveText>(), Err(MoveError::Syntax), "{bad}");
        }
    }

    #[test]
    fn results() {
        let r = ResultText::parse("1–0/62").unwrap();
        assert_eq!(r.outcome, Some(Outcome::WhiteWins));
        assert_eq!(r.index, Some(62));
        assert_eq!(r.format(ResultFormat::Kyrgyz), "1–0/62");
        assert_eq!(r.format(ResultFormat::Pgn), "1-0");
        let r = ResultText::parse("0–1/76/").unwrap();
        assert_eq!((r.outcome, r.index), (Some(Outcome::BlackWins), Some(76)));
        let r = ResultText::parse("1/2-1/2").unwrap();
        assert_eq!((r.outcome, r.index), (Some(Outcome::Draw), None));
        assert_eq!(r.format(ResultFormat::Kyrgyz), "½–½");
        assert_eq!(ResultText::parse("*").unwrap().outcome, None);
        assert_eq!(ResultText::parse("76"), None);
        assert_eq!(ResultText::parse("2-0"), None);
    }

    #[test]
    fn landing_digit_and_mark_are_checked() {
        let pos = Position::new();
        let t: MoveText = "76".parse().unwrap();
        assert!(t.to_move(&pos).is_ok());
        let t: MoveText = "75".parse().unwrap();
        assert_eq!(
            t.to_move(&pos).map(|_| ()),
            Err(MoveError::Landing {
                recorded: 5,
                actual: 6
            })
        );
        let t: MoveText = "76X".parse().unwrap();
        assert_eq!(t.to_move(&pos).map(|_| ()), Err(MoveError::SpuriousTuzMark));
    }

    #[test]
    fn errors_carry_line_and_ply() {
        let text = "[Event \"x\"]\n\n1. 76(10) 76(10)\n2. 98 99\n";
        let recs = parse_records(text).unwrap();
        assert_eq!(recs.len(), 1);
        match recs[0].replay(Rules::KYRGYZ) {
            Err(NotationError::Move { line, ply, .. }) => assert_eq!((line, ply), (4, 3)),
            other => panic!("{other:?}"),
        }
        match parse_records("[Event \"x\"]\n\n1. 76 7a\n") {
            Err(NotationError::Move {
                line: 3, ply: 2, ..
            }) => {}
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_records("[Event x]\n"),
            Err(NotationError::Syntax { line: 1, .. })
        ));
    }

    #[test]
    fn record_round_trip() {
        let text = "[Event \"a \\\"b\\\"\"]\n[Variant \"togyz\"]\n\n1. 87(10) 87(10) 2. 22 99(22) 0-1 {zero}\n";
        let recs = parse_records(text).unwrap();
        assert_eq!(recs[0].header("Event"), Some("a \"b\""));
        assert_eq!(recs[0].comments, vec!["zero".to_owned()]);
        let again = parse_records(&recs[0].to_pgn()).unwrap();
        let strip = |r: &Record| {
            let mut r = r.clone();
            r.line = 0;
            r.moves.iter_mut().for_each(|m| m.line = 0);
            r
        };
        assert_eq!(strip(&again[0]), strip(&recs[0]));
    }

    #[test]
    fn fen_start() {
        let pos = Position::new();
        let fen = to_fen(&pos);
        assert_eq!(
            fen,
            "9S,9S,9S,9S,9S,9S,9S,9S,9S/9S,9S,9S,9S,9S,9S,9S,9S,9S 0 0 S 1"
        );
        assert_eq!(from_fen(&fen, Rules::KYRGYZ).unwrap(), pos);
    }
}
