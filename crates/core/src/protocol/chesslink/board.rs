//! The board's own orders: the 64 squares of an `s` report and the 81 corner LEDs, and their
//! mapping to shakmaty's squares (a1 = 0, b1 = 1 … h8 = 63).
//!
//! Squares: the spec labels the report "A8...H8, A7...H7 etc." and LED 1 the "A8 corner", LED 9
//! "A1", LED 73 "H8", LED 81 "H1". Every driver that reads real boards, and two emulators that
//! apps accept, put the board the other way round: report index 0 is h1, then g1 … a1, h2 … a8
//! (python-mchess `chess_link.py` reads index `7 - x + 8y` for file x, rank y; chesslinkdriver's
//! `ChessLink.SQUARES` runs ranks 1..8, files h..a; BearChess takes
//! `sRNBKQBNRPPPPPPPP…pppppppprnbkqbnr` for white in front; Elfacun sends its a8-first squares
//! backwards, `63 - i`; Chesstimation sends `piece[63 - i]`). The LEDs turn with them: LED 0
//! (the spec's LED 1) is the outer corner of h1, LED 8 of h8, LED 72 of a1, LED 80 of a8, each
//! column of nine running from rank 1's edge to rank 8's (python-mchess `_set_mv_led`,
//! chesslinkdriver `LEDPattern.getSquareIndices`, BearChess `_ledToField`). So the spec's labels
//! are the board turned round: rotated half a turn, both orders hold with the labels as printed.
//! This module follows the drivers. Only the Centaur emulator (`millenium.py`) follows the
//! labels (it sends a FEN's a8-first order and maps LED 7, 8, 16, 17 to a1), and
//! chesslinkdriver's comment "LED1 LED2 LED10 LED11 = A8" repeats the labels while its code
//! lights h1 with them.
//!
//! A board can lie either way; python-mchess and BearChess tell which from the start position
//! (python-mchess calls the drivers' way "cable right", the other "cable left"). Turned round,
//! a square becomes its half-turn image (a1 and h8 trade places): [`Orientation::TurnedRound`].

use shakmaty::{Board, Color, Piece, Role, Square};

/// How the board lies in front of white.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Orientation {
    /// The drivers' way: the report starts at h1.
    #[default]
    Normal,
    /// Turned half round: the report starts at a8, as the spec's labels read.
    TurnedRound,
}

/// The square of report index `index` (0..64) on a board lying `orientation`.
pub fn square_at(index: usize, orientation: Orientation) -> Square {
    let normal = (index & 63) ^ 7;
    let turned = match orientation {
        Orientation::Normal => normal,
        Orientation::TurnedRound => normal ^ 63,
    };
    Square::new(turned as u32)
}

/// The report index of `square` on a board lying `orientation` (the inverse of [`square_at`]).
pub fn wire_index(square: Square, orientation: Orientation) -> usize {
    let sq = square.to_usize();
    match orientation {
        Orientation::Normal => sq ^ 7,
        Orientation::TurnedRound => sq ^ 7 ^ 63,
    }
}

/// The report's character for a piece: `KQRBNP` white, `kqrbnp` black.
pub fn piece_char(piece: Option<Piece>) -> u8 {
    piece.map_or(b'.', |p| p.char() as u8)
}

/// The piece a report character stands for: `Some(None)` for `.`, `None` for no report
/// character at all.
pub fn piece_from_char(c: u8) -> Option<Option<Piece>> {
    let color = if c.is_ascii_uppercase() {
        Color::White
    } else {
        Color::Black
    };
    let role = match c.to_ascii_lowercase() {
        b'.' => return Some(None),
        b'k' => Role::King,
        b'q' => Role::Queen,
        b'r' => Role::Rook,
        b'b' => Role::Bishop,
        b'n' => Role::Knight,
        b'p' => Role::Pawn,
        _ => return None,
    };
    Some(Some(Piece { color, role }))
}

/// The 64 squares of an `s` report in the board's own order: index 0 is h1, 1 is g1 … 7 is a1,
/// 8 is h2 … 63 is a8 on a board lying the normal way. An unchecked placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Report(pub [Option<Piece>; 64]);

impl Report {
    /// No piece on the board.
    pub const EMPTY: Report = Report([None; 64]);

    /// The standard start position, as a board lying `orientation` reports it.
    pub fn start(orientation: Orientation) -> Report {
        Report::from_squares(&start_squares(), orientation)
    }

    /// The pieces in shakmaty's square order (a1 = 0) for a board lying `orientation`.
    pub fn to_squares(&self, orientation: Orientation) -> [Option<Piece>; 64] {
        let mut out = [None; 64];
        for (i, p) in self.0.iter().enumerate() {
            out[square_at(i, orientation).to_usize()] = *p;
        }
        out
    }

    /// The report a board lying `orientation` sends for pieces in shakmaty's square order.
    pub fn from_squares(squares: &[Option<Piece>; 64], orientation: Orientation) -> Report {
        let mut out = [None; 64];
        for (sq, p) in squares.iter().enumerate() {
            out[wire_index(Square::new(sq as u32), orientation)] = *p;
        }
        Report(out)
    }

    /// The piece on `square` of a board lying `orientation`.
    pub fn piece_at(&self, square: Square, orientation: Orientation) -> Option<Piece> {
        self.0[wire_index(square, orientation)]
    }

    /// The placement as a shakmaty board (a placement only: no side to move, no rights).
    pub fn to_board(&self, orientation: Orientation) -> Board {
        self.0
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.map(|p| (square_at(i, orientation), p)))
            .collect()
    }
}

/// The standard start position in shakmaty's square order.
fn start_squares() -> [Option<Piece>; 64] {
    let board = Board::new();
    std::array::from_fn(|i| board.piece_at(Square::new(i as u32)))
}

/// The LEDs at the corners of the squares: a 9 × 9 grid.
pub const LED_COUNT: usize = 81;
/// An LED pattern byte that stays on: bit 7 is the first time slot, bit 0 the eighth, and the
/// pattern repeats (spec, command `L`: `C4` is on, on, off, off, off, on, off, off).
pub const LED_ON: u8 = 0xff;

/// The LED index (0..81; the spec counts 1..=81) at the crossing of `file_line` and
/// `rank_line`, each 0..=8: file line 0 is the a-file's outer edge, 8 the h-file's; rank line 0
/// is rank 1's outer edge, 8 rank 8's; on a board lying `orientation`. Lines above 8 are taken
/// as 8.
pub fn led_index(file_line: u8, rank_line: u8, orientation: Orientation) -> usize {
    let f = usize::from(file_line.min(8));
    let r = usize::from(rank_line.min(8));
    let normal = (8 - f) * 9 + r;
    match orientation {
        Orientation::Normal => normal,
        Orientation::TurnedRound => 80 - normal,
    }
}

/// The four LEDs at the corners of `square`, on a board lying `orientation`.
pub fn square_leds(square: Square, orientation: Orientation) -> [usize; 4] {
    let f = square.file().to_u32() as u8;
    let r = square.rank().to_u32() as u8;
    [(f, r), (f + 1, r), (f, r + 1), (f + 1, r + 1)].map(|(f, r)| led_index(f, r, orientation))
}

/// The data of an `L` command: the slot time (units of 4.096 ms) and a pattern byte per LED,
/// in LED order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Leds {
    pub slot_time: u8,
    pub pattern: [u8; LED_COUNT],
}

impl Leds {
    /// All LEDs off, patterns to come stepping every `slot_time` × 4.096 ms.
    pub fn off(slot_time: u8) -> Leds {
        Leds {
            slot_time,
            pattern: [0; LED_COUNT],
        }
    }

    /// Adds `pattern` to the four corner LEDs of `square` (OR: a corner shared with a square
    /// already lit keeps both patterns).
    pub fn light_square(&mut self, square: Square, pattern: u8, orientation: Orientation) {
        for i in square_leds(square, orientation) {
            self.pattern[i] |= pattern;
        }
    }
}
