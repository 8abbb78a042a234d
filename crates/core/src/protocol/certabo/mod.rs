//! Certabo and Tabutronic (Cerno, Cerno Spectrum, Sentio) RFID boards: the ASCII records the
//! board streams, the LED commands the host writes, and the calibration that turns chip ids into
//! pieces. Pure; no I/O, no clock.
//!
//! Flow: bytes from the board go through [`crate::protocol::FrameReader`] with the [`Certabo`]
//! wire; `parse.rs` cuts them into [`Frame`]s (a record of 64 chip ids, a Sentio occupancy
//! record, or an LED reply) and drops what is not one with a
//! [`crate::protocol::DecodeWarning::Dropped`]. A [`Calibration`] (`calibration.rs`), learnt
//! once from a record of the calibration setup and kept by the daemon, reads a [`Record`] into
//! [`SquareContent`]s. `led.rs` builds and decodes what the host writes. `encode.rs` writes
//! frames back (for the emulator and tests).
//!
//! The wire, and where each fact comes from (public sources read for this module; no vendor
//! protocol document was found, for Certabo nor for Tabutronic):
//! - USB serial at 38400 baud, 8N1, through a CP210x bridge (USB id 10c4:ea60): Certabo's own
//!   software (`CERTABO/CERTABO-CHESSBOARDS-SOFTWARE`, `usbtool.py`), picochess
//!   (`tosca07/picochess`, `eboard/certabo/usb_transport.py`), `haklein/certabo-lichess`
//!   (`certabo/serialreader.py`, which matches the USB id); BearChess
//!   (`Programmierbaer/BearChess`, `EChessBoards/CommonUciWrapper/AbstractSerialCommunication.cs`)
//!   opens the Cerno and the Sentio at 38400 without parity too.
//! - The board sends records without being asked, over and over (Certabo's board simulator
//!   `chess_sim/chess_sim.ino` sends one a second): `:` then decimal numbers separated by one
//!   space, then ` \r\n` (Certabo's `usbtool.py` strips the first byte and the last three and
//!   wants 320 numbers). A record holds 64 × 5 numbers, the 5-byte RFID chip id of the piece on
//!   each square, all zero on an empty square, squares a8, b8 … h8, a7 … h1 (Certabo's
//!   `codes.py`, "n_cell from 0 to 63, 0 at left top"; cer2nut's `CertaboBoardMessageParser.cpp`
//!   `toSquare`; BearChess's `Certabo/ChessBoard/EChessBoard.cs`, black rook at numbers 0..5,
//!   white rook at 315..320). There is no checksum: the count of numbers and their range
//!   (0..=255) are all there is to check, so a record of any other count is dropped.
//! - The Tabutronic Cerno sends the same 320-number record and takes the same 8-byte LED
//!   command (BearChess `TabuTronic/Cerno/TabuTronicCernoChessBoard/SerialCommunication.cs` and
//!   `EChessBoard.cs`, same indices, same calibration squares). The Cerno Spectrum takes an RGB
//!   command instead ([`RgbLeds`]). The Tabutronic Sentio has no piece recognition and sends 8
//!   numbers, one occupancy byte per rank ([`Occupancy`]; cer2nut `CertaboParser.cpp`
//!   `parseWithoutPieceInfo` and its tests, picochess `eboard/certabo/parser.py`).
//! - After an LED command the board may answer a line `L` or `D`: cer2nut reads `L` as a board
//!   with one-colour LEDs and `D` as one with RGB LEDs (`CertaboParser.cpp`, `ledsDetected`);
//!   BearChess waits for `D` after each command to a Cerno Spectrum before sending the next. The
//!   letter is decoded as [`LedAck`] and its meaning left to the caller.
//! - A bare LF can fall inside a record, even inside a number: cer2nut's and picochess's test
//!   records (`CertaboParserTest.cpp`, `tests/test_certabo_parser.py`) carry one after every 64th
//!   byte from the `:` (`8\n4` for 84) and one before a trailing `L`. Both drivers delete every CR
//!   and LF of a record before splitting it on spaces; BearChess also turns NUL bytes into spaces.
//!   Whether the LF comes from the board or from how those records were logged is not said; we
//!   delete a bare LF inside a record as they do and read NUL as a space.
//! - Where the drivers disagree: cer2nut and picochess take the first 320 numbers of a longer
//!   record and parse one without its line end; Certabo's `usbtool.py` wants exactly 320 numbers
//!   and a line end. We follow Certabo's: a record ends at CR (or at an `L`/`D` reply, as in
//!   cer2nut's records), and is dropped unless it holds exactly 320 (or 8) numbers.
//!
//! Framing (`parse.rs`): CR, LF, space and NUL between frames are skipped with the frame that
//! follows; a run of [`MAX_FILLER`] of them is dropped. Any other byte before a `:` is dropped up
//! to the next `:`, `L` or `D`, never past one. A record that reaches the next `:` before its
//! CR, or that has no end within [`MAX_RECORD_BODY`] bytes, is dropped.

use std::fmt;

use shakmaty::{Bitboard, Square};

mod calibration;
mod encode;
mod led;
mod parse;

pub use calibration::{
    BLACK_EXTRA_QUEEN, Calibration, CalibrationError, SetupProblems, SquareContent,
    WHITE_EXTRA_QUEEN,
};
pub use led::{
    CommandReader, HostCommand, LED_COMMAND_LEN, LedCommand, LedKind, RGB_COMMAND_LEN, RGB_LEDS,
    RgbLeds, corner_leds, decode_command,
};
pub use parse::{RecordError, cut, decode_body};

/// The byte that starts a record.
pub const START: u8 = b':';
/// Bytes in a chip id.
pub const CHIP_LEN: usize = 5;
/// Numbers in a record of chip ids: 64 squares × 5.
pub const RECORD_NUMBERS: usize = 64 * CHIP_LEN;
/// Numbers in a Sentio occupancy record: one per rank.
pub const OCCUPANCY_NUMBERS: usize = 8;
/// The most bytes between a record's `:` and its end we wait for. A record of 320 numbers
/// of at most four bytes each (`255 `), with a bare LF every 64 bytes, is about 1300 bytes.
pub const MAX_RECORD_BODY: usize = 2048;
/// The longest run of line ends, spaces and NULs kept waiting for a frame after it.
pub const MAX_FILLER: usize = 64;
/// The most bytes a [`crate::protocol::FrameReader`] with the [`Certabo`] wire holds after
/// draining: the filler and the start of one record.
pub const MAX_PENDING: usize = MAX_FILLER + 1 + MAX_RECORD_BODY;

/// The RFID chip id a square reports: five bytes, all zero when nothing is read.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct ChipId(pub [u8; CHIP_LEN]);

impl ChipId {
    /// What an empty square reports.
    pub const EMPTY: ChipId = ChipId([0; CHIP_LEN]);

    /// All five bytes are zero.
    pub fn is_empty(self) -> bool {
        self == ChipId::EMPTY
    }

    /// Three or more zero bytes: Certabo's software reads such a square as empty (`codes.py`,
    /// `cell_empty`), and its board simulator sends `0 0 56 0 0` and `201 0 0 0 0` on empty
    /// squares. The chip ids in the public records have at most one zero byte.
    pub fn is_blank(self) -> bool {
        self.0.iter().filter(|&&b| b == 0).count() > 2
    }
}

impl fmt::Display for ChipId {
    /// As the board writes it: `3 0 84 252 153`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d, e] = self.0;
        write!(f, "{a} {b} {c} {d} {e}")
    }
}

/// One record: the chip id on each square, in the board's order (index 0 = a8, 1 = b8 …
/// 7 = h8, 8 = a7 … 63 = h1). Unchecked: [`Calibration::reading`] makes pieces of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Record(pub [ChipId; 64]);

impl Record {
    /// A record of 320 numbers, five per square in the board's order.
    pub fn from_numbers(numbers: &[u8; RECORD_NUMBERS]) -> Record {
        let mut chips = [ChipId::EMPTY; 64];
        for (chip, n) in chips.iter_mut().zip(numbers.chunks_exact(CHIP_LEN)) {
            chip.0.copy_from_slice(n);
        }
        Record(chips)
    }

    /// The chip ids in the board's order.
    pub fn chips(&self) -> &[ChipId; 64] {
        &self.0
    }

    /// The chip id on `sq`.
    pub fn chip(&self, sq: Square) -> ChipId {
        self.0[board_index(sq)]
    }

    /// The 320 numbers in wire order.
    pub fn numbers(&self) -> impl Iterator<Item = u8> + '_ {
        self.0.iter().flat_map(|c| c.0)
    }
}

/// A Tabutronic Sentio record: eight bytes, rank 8 first; in each byte bit 7 is the a-file and
/// bit 0 the h-file (cer2nut `parseWithoutPieceInfo` and its test `…OnePieceMissing`, where
/// `255 254` on ranks 2 and 1 leaves h1 empty). Note the bit order is the LED command's
/// reversed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Occupancy(pub [u8; OCCUPANCY_NUMBERS]);

impl Occupancy {
    /// Whether the board reports something on `sq`.
    pub fn is_occupied(self, sq: Square) -> bool {
        let i = board_index(sq);
        self.0[i / 8] & (0x80 >> (i % 8)) != 0
    }

    /// The occupied squares.
    pub fn to_bitboard(self) -> Bitboard {
        Square::ALL
            .into_iter()
            .filter(|&sq| self.is_occupied(sq))
            .collect()
    }
}

/// The letter a board answers an LED command with (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LedAck {
    /// `L`: cer2nut reads a board with one-colour LEDs.
    L,
    /// `D`: cer2nut reads a board with RGB LEDs; BearChess waits for it from a Cerno Spectrum.
    D,
}

impl LedAck {
    /// The letter on the wire.
    pub fn byte(self) -> u8 {
        match self {
            LedAck::L => b'L',
            LedAck::D => b'D',
        }
    }
}

/// One thing the board sent.
#[allow(clippy::large_enum_variant)] // a few records a second, moved once or twice: no box needed
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Frame {
    /// 320 numbers: the chip id on each square (Certabo, Cerno).
    Pieces(Record),
    /// 8 numbers: which squares are occupied (Sentio).
    Occupancy(Occupancy),
    /// A reply to an LED command.
    LedAck(LedAck),
}

/// The Certabo wire for [`crate::protocol::FrameReader`]: ASCII records resynchronised on `:`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Certabo;

/// The board-order index of `sq` (a8 = 0 … h1 = 63), for a board lying the normal way.
pub fn board_index(sq: Square) -> usize {
    sq.to_usize() ^ 56
}

/// The square at board-order index `i` (taken modulo 64).
pub fn square_at(i: usize) -> Square {
    // i % 64 fits in u32.
    Square::new((i % 64) as u32 ^ 56)
}

/// A board-order array (a8 = 0 … h1 = 63) in shakmaty's square order (a1 = 0 … h8 = 63).
pub fn to_square_order<T: Copy>(board: &[T; 64]) -> [T; 64] {
    std::array::from_fn(|sq| board[sq ^ 56])
}

#[cfg(test)]
mod tests;
