//! The squares of a position report: the piece codes and the board's own square order.
//!
//! Flow: 32 square bytes → [`WirePlacement::from_bytes`] (two squares a byte, low nibble first,
//! h8, g8 … a8, h7 … a1: \[EB\], \[GO\], \[EL\] `toFen`) → [`WirePlacement::to_squares`] or
//! [`WirePlacement::to_board`] in shakmaty's order (a1 = 0 … h8 = 63) for a board lying the
//! normal way, white on the near side. Wire index `w` is then square `63 - w`. A board turned
//! round (black on the near side) reads reversed: wire index `w` is square `w`; which way a
//! board lies is the sensor's business (picochess guesses it from the start position).

use shakmaty::{Board, Color, Piece, Role, Square};

use super::{ReportError, SQUARE_BYTES};

/// Piece codes (\[EB\]'s table `'', q, k, b, p, n, R, P, r, B, N, Q, K`; \[GO\] the same).
pub mod code {
    pub const EMPTY: u8 = 0;
    pub const BLACK_QUEEN: u8 = 1;
    pub const BLACK_KING: u8 = 2;
    pub const BLACK_BISHOP: u8 = 3;
    pub const BLACK_PAWN: u8 = 4;
    pub const BLACK_KNIGHT: u8 = 5;
    pub const WHITE_ROOK: u8 = 6;
    pub const WHITE_PAWN: u8 = 7;
    pub const BLACK_ROOK: u8 = 8;
    pub const WHITE_BISHOP: u8 = 9;
    pub const WHITE_KNIGHT: u8 = 10;
    pub const WHITE_QUEEN: u8 = 11;
    pub const WHITE_KING: u8 = 12;
    /// The largest code a square may carry; 13..=15 are not pieces.
    pub const MAX: u8 = WHITE_KING;
}

const fn p(color: Color, role: Role) -> Option<Piece> {
    Some(Piece { color, role })
}

/// The piece each code stands for, by code.
const PIECES: [Option<Piece>; 13] = [
    None,
    p(Color::Black, Role::Queen),
    p(Color::Black, Role::King),
    p(Color::Black, Role::Bishop),
    p(Color::Black, Role::Pawn),
    p(Color::Black, Role::Knight),
    p(Color::White, Role::Rook),
    p(Color::White, Role::Pawn),
    p(Color::Black, Role::Rook),
    p(Color::White, Role::Bishop),
    p(Color::White, Role::Knight),
    p(Color::White, Role::Queen),
    p(Color::White, Role::King),
];

/// The piece a square code stands for; `Err(code)` for 13..=15.
pub fn piece_from_code(code: u8) -> Result<Option<Piece>, u8> {
    PIECES.get(usize::from(code)).copied().ok_or(code)
}

/// The code of a square holding `piece` (0 when empty).
pub fn piece_code(piece: Option<Piece>) -> u8 {
    PIECES
        .iter()
        .position(|&q| q == piece)
        .map_or(code::EMPTY, |i| i as u8)
}

/// The 64 squares of a report in the board's order: index 0 = h8, 1 = g8 … 7 = a8, 8 = h7 …
/// 63 = a1. An unchecked placement; it becomes a position only in the tracker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WirePlacement(pub [Option<Piece>; 64]);

impl Default for WirePlacement {
    fn default() -> Self {
        WirePlacement([None; 64])
    }
}

impl WirePlacement {
    /// Decodes the 32 square bytes; the first byte's low nibble is h8.
    pub fn from_bytes(bytes: &[u8; SQUARE_BYTES]) -> Result<WirePlacement, ReportError> {
        let mut squares = [None; 64];
        for (i, &b) in bytes.iter().enumerate() {
            for (half, code) in [(0, b & 0x0f), (1, b >> 4)] {
                let index = 2 * i + half;
                squares[index] =
                    piece_from_code(code).map_err(|code| ReportError::PieceCode { index, code })?;
            }
        }
        Ok(WirePlacement(squares))
    }

    /// The 32 square bytes.
    pub fn to_bytes(&self) -> [u8; SQUARE_BYTES] {
        let mut out = [0; SQUARE_BYTES];
        for (b, pair) in out.iter_mut().zip(self.0.chunks_exact(2)) {
            *b = piece_code(pair[0]) | piece_code(pair[1]) << 4;
        }
        out
    }

    /// The wire index of `sq` on a board lying the normal way.
    pub fn wire_index(sq: Square) -> usize {
        63 - sq.to_usize()
    }

    /// The square at wire index `index` (0..64) on a board lying the normal way.
    pub fn square_at(index: usize) -> Option<Square> {
        63usize
            .checked_sub(index)
            .and_then(|i| Square::ALL.get(i).copied())
    }

    /// The piece on `sq`, the board lying the normal way.
    pub fn get(&self, sq: Square) -> Option<Piece> {
        self.0[Self::wire_index(sq)]
    }

    /// The squares in shakmaty's order (a1 = 0 … h8 = 63), the board lying the normal way.
    pub fn to_squares(&self) -> [Option<Piece>; 64] {
        let mut out = self.0;
        out.reverse();
        out
    }

    /// The placement a board lying the normal way reports for `squares` (a1 = 0).
    pub fn from_squares(squares: &[Option<Piece>; 64]) -> WirePlacement {
        let mut out = *squares;
        out.reverse();
        WirePlacement(out)
    }

    /// The placement as a shakmaty board, the board lying the normal way.
    pub fn to_board(&self) -> Board {
        Square::ALL
            .iter()
            .filter_map(|&sq| self.get(sq).map(|piece| (sq, piece)))
            .collect()
    }

    /// The placement a board lying the normal way reports for `board`.
    pub fn from_board(board: &Board) -> WirePlacement {
        let mut out = WirePlacement::default();
        for (sq, piece) in board.iter() {
            out.0[Self::wire_index(sq)] = Some(piece);
        }
        out
    }
}
