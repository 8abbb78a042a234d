//! Calibration: which chip id is which piece. The board reports chip ids, never pieces.
//!
//! Flow: with the pieces in the calibration setup (the start position, plus optionally a white
//! queen on d3 and a black queen on d6), [`Calibration::from_setup`] learns the ids of one record
//! (or [`Calibration::from_setups`] of the steady ids of several); the daemon keeps it per board
//! as [`Calibration::to_text`] (also its serde form) so a power cycle needs no second
//! calibration; [`Calibration::reading`] then reads each record into [`SquareContent`]s.
//!
//! Facts and sources:
//! - The extra queens: white on d3, black on d6, one each and both optional (cer2nut
//!   `CertaboCalibrator.cpp`/`CalibrationSquare.cpp`, board indices 43 and 19; its README "Place
//!   any additional queens on d3 and d6"; picochess `eboard/certabo/parser.py`,
//!   `WHITE_EXTRA_QUEEN_SQUARE = 43`; BearChess `Certabo/ChessBoard/EChessBoard.cs`, numbers
//!   215..220 a white queen and 95..100 a black one, each only when not all zero). No source
//!   calibrates more than one extra queen per colour at once. Certabo's own software learns
//!   only the 32 start squares, but its "calibration" (as opposed to "new setup") keeps the ids
//!   learnt before that the new one lacks (`codes.py`, `calibration(…, new_setup, …)`), so
//!   more pieces are learnt by calibrating again with other pieces: [`Calibration::merge`].
//! - Empty: a chip id with three or more zero bytes, as Certabo's `cell_empty` reads it (see
//!   [`ChipId::is_blank`]). A chip id the calibration does not know is [`SquareContent::Unknown`],
//!   never empty nor a guess. Sources differ here: picochess and cer2nut read an unknown id as an
//!   empty square, Certabo's software rejects the whole reading, BearChess marks it unknown.
//! - Real boards report stray ids on empty squares now and then (cer2nut's calibration records
//!   show many); drivers take, per square, the id seen in most of the last records (cer2nut:
//!   more than half of at least 7; Certabo: the most frequent of 15). [`Calibration::from_setups`]
//!   takes cer2nut's rule; filtering readings over time is the sensor's business.

use std::{collections::BTreeMap, fmt, str::FromStr};

use shakmaty::{Color, Piece, Square};

use super::{ChipId, Record, board_index, square_at};

/// Where the calibration setup's extra white queen stands (board index 43).
pub const WHITE_EXTRA_QUEEN: Square = Square::D3;
/// Where the calibration setup's extra black queen stands (board index 19).
pub const BLACK_EXTRA_QUEEN: Square = Square::D6;

/// What a square holds, as a calibration reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SquareContent {
    Empty,
    Piece(Piece),
    /// A chip id the calibration does not know.
    Unknown(ChipId),
}

impl SquareContent {
    /// The piece, if it is one.
    pub fn piece(self) -> Option<Piece> {
        match self {
            SquareContent::Piece(p) => Some(p),
            _ => None,
        }
    }
}

/// Why a record is not the calibration setup: every square that is wrong.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetupProblems {
    /// Squares of the start position with no chip.
    pub empty: Vec<Square>,
    /// A chip id read on two squares: the id, the first square, the second.
    pub duplicates: Vec<(ChipId, Square, Square)>,
    /// Squares without a steady id over the records ([`Calibration::from_setups`]).
    pub unsteady: Vec<Square>,
}

impl SetupProblems {
    fn is_empty(&self) -> bool {
        self.empty.is_empty() && self.duplicates.is_empty() && self.unsteady.is_empty()
    }
}

impl fmt::Display for SetupProblems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let squares = |v: &[Square]| {
            v.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if !self.empty.is_empty() {
            parts.push(format!("no piece on {}", squares(&self.empty)));
        }
        for (chip, a, b) in &self.duplicates {
            parts.push(format!("{a} and {b} report the same chip {chip}"));
        }
        if !self.unsteady.is_empty() {
            parts.push(format!("no steady reading on {}", squares(&self.unsteady)));
        }
        f.write_str(&parts.join("; "))
    }
}

/// Why a calibration could not be made or read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CalibrationError {
    #[error("the pieces are not in the calibration setup: {0}")]
    Setup(SetupProblems),
    /// Merging or reading two entries that give one chip two pieces.
    #[error("chip {chip} is calibrated as {known} and as {new}")]
    Conflict {
        chip: ChipId,
        known: char,
        new: char,
    },
    #[error("not a calibration text: {0}")]
    Text(String),
}

/// The learnt chip ids, each with its piece.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Calibration {
    chips: BTreeMap<ChipId, Piece>,
}

/// The first line of the text form; a later format gets a new one.
const TEXT_VERSION: &str = "certabo-calibration-1";

/// The piece the calibration setup puts on board index `i`, if any: the start position's, and
/// the extra queens on d3 and d6.
fn setup_piece(i: usize) -> Option<Piece> {
    let sq = square_at(i);
    if sq == WHITE_EXTRA_QUEEN {
        Some(Color::White.queen())
    } else if sq == BLACK_EXTRA_QUEEN {
        Some(Color::Black.queen())
    } else {
        shakmaty::Board::new().piece_at(sq)
    }
}

fn is_extra(i: usize) -> bool {
    let sq = square_at(i);
    sq == WHITE_EXTRA_QUEEN || sq == BLACK_EXTRA_QUEEN
}

impl Calibration {
    /// Learns the chip ids of a record read while the pieces stand in the calibration setup:
    /// every square of the start position must hold a chip, d3 and d6 may hold the extra white
    /// and black queen, no chip may show on two of these squares. Other squares are not looked
    /// at (stray ids show there on real boards).
    pub fn from_setup(record: &Record) -> Result<Calibration, CalibrationError> {
        Calibration::learn(&record.0.map(Some))
    }

    /// [`Calibration::from_setup`] on the id each square shows in more than half of `records`
    /// (cer2nut's rule); a setup square without one is reported unsteady.
    pub fn from_setups(records: &[Record]) -> Result<Calibration, CalibrationError> {
        let steady: [Option<ChipId>; 64] = std::array::from_fn(|i| {
            let mut counts: BTreeMap<ChipId, usize> = BTreeMap::new();
            for r in records {
                *counts.entry(r.0[i]).or_default() += 1;
            }
            counts
                .into_iter()
                .find(|&(_, n)| n * 2 > records.len())
                .map(|(chip, _)| chip)
        });
        Calibration::learn(&steady)
    }

    fn learn(chips: &[Option<ChipId>; 64]) -> Result<Calibration, CalibrationError> {
        let mut problems = SetupProblems::default();
        let mut seen: BTreeMap<ChipId, usize> = BTreeMap::new();
        let mut learnt = BTreeMap::new();
        for (i, chip) in chips.iter().enumerate() {
            let Some(piece) = setup_piece(i) else {
                continue;
            };
            let Some(chip) = *chip else {
                problems.unsteady.push(square_at(i));
                continue;
            };
            if chip.is_blank() {
                if !is_extra(i) {
                    problems.empty.push(square_at(i));
                }
                continue;
            }
            if let Some(&first) = seen.get(&chip) {
                problems
                    .duplicates
                    .push((chip, square_at(first), square_at(i)));
                continue;
            }
            seen.insert(chip, i);
            learnt.insert(chip, piece);
        }
        if problems.is_empty() {
            Ok(Calibration { chips: learnt })
        } else {
            Err(CalibrationError::Setup(problems))
        }
    }

    /// Adds `other`'s chips (a calibration with other pieces, e.g. a second set of extra
    /// queens); a chip the two give different pieces is an error and changes nothing.
    pub fn merge(&mut self, other: &Calibration) -> Result<(), CalibrationError> {
        for (&chip, &piece) in &other.chips {
            if let Some(&known) = self.chips.get(&chip)
                && known != piece
            {
                return Err(CalibrationError::Conflict {
                    chip,
                    known: known.char(),
                    new: piece.char(),
                });
            }
        }
        self.chips.extend(other.chips.iter().map(|(&c, &p)| (c, p)));
        Ok(())
    }

    /// Adds one chip as `piece` (an extra queen placed after the calibration); a chip known as
    /// another piece is an error and changes nothing.
    pub fn learn_chip(&mut self, chip: ChipId, piece: Piece) -> Result<(), CalibrationError> {
        let mut one = Calibration::default();
        one.chips.insert(chip, piece);
        self.merge(&one)
    }

    /// The piece a chip id stands for.
    pub fn piece(&self, chip: ChipId) -> Option<Piece> {
        self.chips.get(&chip).copied()
    }

    /// How many chips are known.
    pub fn len(&self) -> usize {
        self.chips.len()
    }

    /// No chip is known.
    pub fn is_empty(&self) -> bool {
        self.chips.is_empty()
    }

    /// The known chips with their pieces, by chip id.
    pub fn iter(&self) -> impl Iterator<Item = (ChipId, Piece)> + '_ {
        self.chips.iter().map(|(&c, &p)| (c, p))
    }

    /// What each square of `record` holds, in the board's order (a8 = 0 … h1 = 63; see
    /// [`super::to_square_order`]). A known chip is its piece, a blank one empty, any other
    /// [`SquareContent::Unknown`].
    pub fn reading(&self, record: &Record) -> [SquareContent; 64] {
        record.0.map(|chip| match self.piece(chip) {
            Some(p) => SquareContent::Piece(p),
            None if chip.is_blank() => SquareContent::Empty,
            None => SquareContent::Unknown(chip),
        })
    }

    /// What `sq` of `record` holds.
    pub fn reading_at(&self, record: &Record, sq: Square) -> SquareContent {
        self.reading(record)[board_index(sq)]
    }

    /// The compact text form: a version word, then one entry per chip, `<FEN letter><the chip id
    /// as 10 hex digits>`, separated by spaces, by chip id.
    pub fn to_text(&self) -> String {
        let mut out = String::from(TEXT_VERSION);
        for (chip, piece) in &self.chips {
            out.push(' ');
            out.push(piece.char());
            for b in chip.0 {
                out.push_str(&format!("{b:02x}"));
            }
        }
        out
    }

    /// Reads [`Calibration::to_text`]'s form back.
    pub fn from_text(text: &str) -> Result<Calibration, CalibrationError> {
        let bad = |s: &str| CalibrationError::Text(s.to_owned());
        let mut words = text.split_whitespace();
        if words.next() != Some(TEXT_VERSION) {
            return Err(bad(&format!("the first word is not {TEXT_VERSION}")));
        }
        let mut chips = BTreeMap::new();
        for word in words {
            let mut chars = word.chars();
            let piece = chars
                .next()
                .and_then(Piece::from_char)
                .ok_or_else(|| bad(&format!("{word:?} does not start with a piece letter")))?;
            let hex = chars.as_str();
            if hex.len() != 10 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad(&format!(
                    "{word:?} has no 10 hex digits after the piece"
                )));
            }
            let mut id = [0u8; 5];
            for (k, b) in id.iter_mut().enumerate() {
                *b = u8::from_str_radix(&hex[2 * k..2 * k + 2], 16)
                    .map_err(|_| bad(&format!("{word:?} has a bad hex digit")))?;
            }
            let chip = ChipId(id);
            if let Some(known) = chips.insert(chip, piece) {
                return Err(CalibrationError::Conflict {
                    chip,
                    known: known.char(),
                    new: piece.char(),
                });
            }
        }
        Ok(Calibration { chips })
    }
}

impl fmt::Display for Calibration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl FromStr for Calibration {
    type Err = CalibrationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Calibration::from_text(s)
    }
}

impl From<Calibration> for String {
    fn from(c: Calibration) -> String {
        c.to_text()
    }
}

impl TryFrom<String> for Calibration {
    type Error = CalibrationError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        Calibration::from_text(&s)
    }
}
