//! A chessboard as its sensors see it, whatever its vendor: 64 square codes
//! ([`crate::game::chess::code`]) in board numbering, with a key per orientation.
//!
//! Flow: a kind's sensor sets every square (a whole position, as DGT's dump and every
//! position-reporting board send) or one (a DGT field update); two keys (one per orientation)
//! are kept up to date in O(1) per square so the tracker can compare the board with expected
//! positions without copying it.

use super::Orientation;
use crate::game::{
    GameKind,
    chess::{ChessGame, ChessReading, square_of_board_index, zobrist},
};

/// The 64 squares as sensed, in board numbering (0 = a8 when the board lies normally).
#[derive(Clone, Debug)]
pub struct ChessSensor {
    codes: [u8; 64],
    key_normal: u64,
    key_rotated: u64,
    /// A full dump has been seen since the state was created or reset.
    known: bool,
}

impl Default for ChessSensor {
    fn default() -> Self {
        ChessSensor {
            codes: [0; 64],
            key_normal: 0,
            key_rotated: 0,
            known: false,
        }
    }
}

#[inline]
fn game_square(board_index: usize, o: Orientation) -> usize {
    match o {
        Orientation::Normal => square_of_board_index(board_index),
        Orientation::Rotated => square_of_board_index(board_index ^ 63),
        Orientation::QuarterLeft | Orientation::QuarterRight => {
            let sq = square_of_board_index(board_index);
            let (file, rank) = (sq % 8, sq / 8);
            if o == Orientation::QuarterLeft {
                (7 - file) * 8 + rank
            } else {
                file * 8 + (7 - rank)
            }
        }
    }
}

impl ChessSensor {
    /// Replaces every square (codes in board numbering), as a whole position a board reports.
    pub fn set_all(&mut self, codes: &[u8; 64]) {
        self.codes = *codes;
        self.key_normal = 0;
        self.key_rotated = 0;
        for (i, &code) in self.codes.iter().enumerate() {
            self.key_normal ^= zobrist(game_square(i, Orientation::Normal), code);
            self.key_rotated ^= zobrist(game_square(i, Orientation::Rotated), code);
        }
        self.known = true;
    }

    /// Takes a whole position a board reported (codes in board numbering); returns whether it
    /// changed anything: a board that reports its position again and again (on a watchdog's
    /// request, on a timer, on every scan) repeats what the sensor knows.
    pub fn report_whole(&mut self, codes: &[u8; 64]) -> bool {
        if self.known && self.codes == *codes {
            return false;
        }
        self.set_all(codes);
        true
    }

    /// Changes one square (board numbering) to `code`; returns whether the board changed.
    /// Out-of-range squares and codes are ignored.
    #[inline]
    pub fn set_square(&mut self, square: u8, code: u8) -> bool {
        let i = usize::from(square);
        if i >= 64 || code > 0x0f {
            return false;
        }
        let old = self.codes[i];
        if old == code {
            return false;
        }
        let n = game_square(i, Orientation::Normal);
        let r = game_square(i, Orientation::Rotated);
        self.key_normal ^= zobrist(n, old) ^ zobrist(n, code);
        self.key_rotated ^= zobrist(r, old) ^ zobrist(r, code);
        self.codes[i] = code;
        true
    }

    /// Whether a full dump has been applied (field updates alone do not make a board known).
    pub fn is_known(&self) -> bool {
        self.known
    }

    /// Forgets the board (after a reconnect, until the next dump).
    pub fn reset(&mut self) {
        *self = ChessSensor::default();
    }

    /// Raw codes in board numbering.
    pub fn codes(&self) -> &[u8; 64] {
        &self.codes
    }

    /// The key of the reading in orientation `o` (equal to `ChessGame::reading_key` of it).
    #[inline]
    pub fn key(&self, o: Orientation) -> u64 {
        match o {
            Orientation::Normal => self.key_normal,
            Orientation::Rotated => self.key_rotated,
            // A quarter-turned board is rare (and against 2.1): its key is computed when asked.
            Orientation::QuarterLeft | Orientation::QuarterRight => self.quarter_key(o),
        }
    }

    #[cold]
    #[inline(never)]
    fn quarter_key(&self, o: Orientation) -> u64 {
        ChessGame::reading_key(&self.reading(o))
    }

    /// The reading in game squares for orientation `o`.
    pub fn reading(&self, o: Orientation) -> ChessReading {
        let mut r = [0u8; 64];
        match o {
            // Board numbering runs from a8 rank by rank: lying normally, its rows are the
            // ranks from the eighth down; turned round, from the first up with each rank's
            // files from h to a. Whole ranks are copied (the tracker reads the board this way
            // on every change it compares).
            Orientation::Normal | Orientation::Rotated => {
                for (row, rank) in self.codes.chunks_exact(8).enumerate() {
                    let (to, mut rank_codes) = match o {
                        Orientation::Normal => (7 - row, [0u8; 8]),
                        _ => (row, [0u8; 8]),
                    };
                    rank_codes.copy_from_slice(rank);
                    if o == Orientation::Rotated {
                        rank_codes.reverse();
                    }
                    r[to * 8..to * 8 + 8].copy_from_slice(&rank_codes);
                }
            }
            Orientation::QuarterLeft | Orientation::QuarterRight => {
                for (i, &code) in self.codes.iter().enumerate() {
                    r[game_square(i, o)] = code;
                }
            }
        }
        ChessReading(r)
    }

    /// The squares (board numbering) that show `reading` (game squares) with the board lying
    /// in `o`: the inverse of [`ChessSensor::reading`].
    pub fn codes_showing(reading: &ChessReading, o: Orientation) -> [u8; 64] {
        let mut codes = [0u8; 64];
        for (i, code) in codes.iter_mut().enumerate() {
            *code = reading.0[game_square(i, o)];
        }
        codes
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The reading copied rank by rank is the reading square by square, in every
        /// orientation, and its key is the key kept up to date square by square.
        #[test]
        fn the_reading_puts_every_square_where_the_orientation_says(
            codes in prop::array::uniform32(0u8..=16).prop_flat_map(|a| {
                prop::array::uniform32(0u8..=16).prop_map(move |b| {
                    let mut all = [0u8; 64];
                    all[..32].copy_from_slice(&a);
                    all[32..].copy_from_slice(&b);
                    all
                })
            })
        ) {
            let mut sensor = ChessSensor::default();
            sensor.set_all(&codes);
            for o in [
                Orientation::Normal,
                Orientation::Rotated,
                Orientation::QuarterLeft,
                Orientation::QuarterRight,
            ] {
                let mut want = [0u8; 64];
                for (i, &code) in codes.iter().enumerate() {
                    want[game_square(i, o)] = code;
                }
                let reading = sensor.reading(o);
                prop_assert_eq!(reading.0, want, "{:?}", o);
                prop_assert_eq!(ChessGame::reading_key(&reading), sensor.key(o));
                prop_assert_eq!(ChessSensor::codes_showing(&reading, o), codes);
            }
        }
    }
}
