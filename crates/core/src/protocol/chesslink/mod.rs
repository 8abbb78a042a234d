//! Millennium ChessLink (Exclusive, Performance, eONE): typed messages both ways, the wire's
//! framing, and the board's square and LED order. Pure; no I/O.
//!
//! Flow: bytes from the board go through [`crate::protocol::FrameReader`] with the [`ChessLink`]
//! wire: `parse.rs` cuts each message by its letter (streaming nom parsers over the bytes with
//! bit 7 masked off), checks its two check digits and hands back a [`Frame`]; anything else is a
//! [`DecodeWarning::Dropped`] and the reader moves to the next byte that is a reply letter.
//! Host commands are typed in `command.rs` ([`Command`], the register values, [`startup`]) and
//! read back by [`cut_command`] for the emulator; `encode.rs` writes both directions; `board.rs`
//! maps the report's squares and the 81 LEDs to shakmaty's squares.
//!
//! # The wire
//! The sources, and what each gave:
//! - **Spec**: "ChessLink: Magic Chessboard Communications Protocol", Dave Woodfield, 25/10/17,
//!   as transcribed in domschl/python-mchess `mchess/magic-board.md` (the Millennium PDF itself
//!   was not at hand): 38400 baud, 7 data bits, odd parity, 1 stop; printable ASCII; every
//!   message is a letter, its data, and the XOR of the letter and the data as two upper-case hex
//!   digits; replies are the lower-case letter; commands `S V L X T W R`; the registers.
//! - **python-mchess** (domschl/python-mchess `mchess/chess_link.py`, `chess_link_protocol.py`,
//!   `chess_link_usb.py`, `chess_link_agent.py`), which picochess carries on
//!   (JohanSjoblom/picochess `eboard/chesslink/chess_link.py`, whose module doc logs a `V`
//!   exchange over Bluetooth LE: sent `D6 B5 B6`, received `v010374`): the reply lengths
//!   `s` 67, `v` 7, `l` 3, `x` 3, `w` 7, `r` 7; the port opened 8N1, parity added in software,
//!   bit 7 masked on read.
//! - **chesslinkdriver** (mono424/chesslinkdriver, Dart: `lib/ChessLink.dart`,
//!   `lib/ChessLinkMessage.dart`, `lib/protocol/commands/*.dart`,
//!   `lib/protocol/model/LEDPattern.dart`, `EONESettings.dart`): the same framing over any
//!   transport, parity set and checked in software (not for an eONE), register 06 on the eONE,
//!   the board model guessed from the version's first byte (0 Exclusive, 1 Performance, 2 eONE).
//! - **BearChess** (Programmierbaer/BearChess `EChessBoards/MChessLink/MChessLinkChessBoard/
//!   EChessBoard.cs`, `SerialCommunication.cs`, `FenConversions.cs`,
//!   `EChessBoards/CommonUciWrapper/AbstractSerialCommunication.cs`): opens the port 7O1, writes
//!   `W0000 W011E W0203 W030A` after opening, debounce as `W02` + (3 + n), guesses the model
//!   from the version as a number (up to 0x010F Exclusive, up to 0x01FF Performance, above that
//!   eONE), sends `I00` to an eONE and reads the text after `i00` up to a line end.
//! - Emulators, boards that speak ChessLink to apps: Elfacun (inmbolmie/elfacun
//!   `elfacun/board_b.cpp`), Chesstimation (Chesstimation/Chesstimation `src/main.cpp`,
//!   `src/board.cpp`), DGT Centaur mods (EdNekebno/DGTCentaur
//!   `DGTCentaurMods/opt/DGTCentaurMods/game/millenium.py`).
//!
//! Reply lengths, fixed by the letter: `s` 67 (64 squares), `v` 7 (version, two bytes), `l` 3,
//! `x` 3, `w` 7 and `r` 7 (register address and value). `i` (identity) is not in the spec: its
//! shape, `i`, two hex digits, text, a line end, the check, is the emulators' (Centaur
//! `i0055mm\n`, Chesstimation `iFF\n`) and fits BearChess's reading of a real eONE's answer;
//! whether a real board puts check digits after the line end is not confirmed. The spec says
//! `T` (reset) has no reply; only the Centaur emulator sends a `t`, which this decoder drops.
//!
//! Parity: a port opened 7O1 (BearChess) hands the host 7-bit characters; a port opened 8N1
//! (python-mchess) shows the parity bit as bit 7. The decoder masks bit 7 off and does not
//! check it (the block check covers the message); encoders write 7-bit characters, and
//! [`with_odd_parity`] sets bit 7 for a port without hardware parity.
//!
//! Check digits are upper-case hex, as the spec says and the drivers and other emulators write
//! them (python-mchess `hex2`, chesslinkdriver `numToHex`, BearChess `X2`); the
//! Centaur emulator formats them lower-case (`{:02x}`), and its messages with a letter in the
//! check are dropped here: accepting them would break the exact re-encoding of what decodes.
//!
//! Automatic `s` reports may come between a command and its reply (spec, register 02), so the
//! caller matches replies by type ([`Frame::answers`]); an `s` answering `S` looks like any
//! other report.
//!
//! Framing: a message starts at a reply letter; each character is checked against its place as
//! it arrives, so a stray letter is given up at the first character that cannot follow it, and
//! the reader waits only while the bytes so far can still make a message. On a character that
//! does not fit, a bad check, or a byte that is no reply letter, the bytes up to the next reply
//! letter are dropped, never past one. The one shape that can hold later messages back is a
//! stray `i` with two hex digits: its text runs on until a line end or [`IDENTITY_TEXT_MAX`]
//! characters, and then the messages behind it come out whole.
//!
//! Squares and LEDs: see `board.rs` ([`Report`], [`square_leds`]).

use nom::error::ErrorKind;

use super::frame::{DecodeWarning, Wire};

mod board;
mod command;
mod encode;
mod parse;

pub use board::{
    LED_COUNT, LED_ON, Leds, Orientation, Report, led_index, piece_char, piece_from_char,
    square_at, square_leds, wire_index,
};
pub use command::{AutoReport, Command, STARTUP_REPORT, reg, startup};
pub use parse::{cut_command, cut_reply, parse_command, parse_reply};

#[cfg(test)]
mod tests;

/// Reply letters, board to host.
pub mod letter {
    pub const STATUS: u8 = b's';
    pub const VERSION: u8 = b'v';
    pub const LEDS: u8 = b'l';
    pub const LEDS_OFF: u8 = b'x';
    pub const WRITE: u8 = b'w';
    pub const READ: u8 = b'r';
    pub const IDENTITY: u8 = b'i';
    /// Every letter a reply can start with.
    pub const REPLIES: [u8; 7] = [STATUS, VERSION, LEDS, LEDS_OFF, WRITE, READ, IDENTITY];
}

/// Command letters, host to board.
pub mod cmd {
    pub const STATUS: u8 = b'S';
    pub const VERSION: u8 = b'V';
    pub const LEDS: u8 = b'L';
    pub const LEDS_OFF: u8 = b'X';
    pub const RESET: u8 = b'T';
    pub const WRITE: u8 = b'W';
    pub const READ: u8 = b'R';
    pub const IDENTITY: u8 = b'I';
    /// Every letter a command can start with.
    pub const COMMANDS: [u8; 8] = [
        STATUS, VERSION, LEDS, LEDS_OFF, RESET, WRITE, READ, IDENTITY,
    ];
}

/// Length of an `s` report: the letter, 64 squares, two check digits.
pub const STATUS_LEN: usize = 67;
/// Length of an `L` command: the letter, the slot time, 81 LED bytes, the check.
pub const LEDS_LEN: usize = 167;
/// The longest identity text this decoder takes (the real boards' is not documented).
pub const IDENTITY_TEXT_MAX: usize = 40;
/// The longest reply: an `s` report (an `i` reply is at most 46).
pub const MAX_REPLY_LEN: usize = STATUS_LEN;
/// The longest command: `L`.
pub const MAX_COMMAND_LEN: usize = LEDS_LEN;

/// One decoded board-to-host message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Frame {
    /// `s`: the squares, answering `S` or sent on its own as the report mode says.
    Status(Report),
    /// `v`: the firmware version, two bytes (`v010374` is version 01.03). Which model it
    /// means is guessed differently by chesslinkdriver and BearChess (see the module doc);
    /// Chesstimation answers `v0017` to pass for an Exclusive.
    Version { high: u8, low: u8 },
    /// `l`: an `L` pattern was taken.
    LedsSet,
    /// `x`: the LEDs were switched off.
    LedsOff,
    /// `w`: a register was written; the board echoes address and value.
    RegisterWritten { address: u8, value: u8 },
    /// `r`: a register's value.
    RegisterRead { address: u8, value: u8 },
    /// `i`: the identity text (BearChess reads one starting `e-one` from an eONE), with the two
    /// hex digits before it (`00` after `I00` in the Centaur emulator, `FF` in Chesstimation).
    Identity { selector: u8, text: String },
}

impl Frame {
    /// The reply letter this frame starts with.
    pub fn letter(&self) -> u8 {
        match self {
            Frame::Status(_) => letter::STATUS,
            Frame::Version { .. } => letter::VERSION,
            Frame::LedsSet => letter::LEDS,
            Frame::LedsOff => letter::LEDS_OFF,
            Frame::RegisterWritten { .. } => letter::WRITE,
            Frame::RegisterRead { .. } => letter::READ,
            Frame::Identity { .. } => letter::IDENTITY,
        }
    }

    /// Whether this frame is the kind of reply `command` asks for (a `w` or `r` for the same
    /// register). Any `s` answers `S`: a reply and an automatic report look the same.
    pub fn answers(&self, command: &Command) -> bool {
        match (self, command) {
            (
                Frame::RegisterWritten { address, .. },
                Command::WriteRegister { address: asked, .. },
            )
            | (Frame::RegisterRead { address, .. }, Command::ReadRegister { address: asked }) => {
                address == asked
            }
            _ => command.reply_letter() == Some(self.letter()),
        }
    }
}

/// Why bytes make no message. Offsets count from the message's letter (0).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MessageError {
    /// The byte is not a letter a message of this direction starts with.
    #[error("byte {byte:#04x} starts no message")]
    NotALetter { byte: u8 },
    /// A character does not fit its place in the message.
    #[error("character {offset} of message `{letter}` is {found:#04x}, where {expected} belongs")]
    BadCharacter {
        letter: char,
        offset: usize,
        found: u8,
        expected: &'static str,
    },
    /// The check digits disagree with the XOR of the message's characters.
    #[error("message `{letter}` carries check {found:02X}, its characters give {computed:02X}")]
    BadCheck {
        letter: char,
        found: u8,
        computed: u8,
    },
    /// A nom combinator failed in a way the character rules do not name (not expected).
    #[error("message `{letter}` failed to parse ({kind:?})")]
    Nom { letter: char, kind: ErrorKind },
}

/// The ChessLink wire for [`crate::protocol::FrameReader`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ChessLink;

impl Wire for ChessLink {
    type Frame = Frame;

    fn cut(&self, buf: &[u8]) -> Option<(Result<Frame, DecodeWarning>, usize)> {
        let (result, used) = cut_reply(buf)?;
        let result = result.map_err(|e| DecodeWarning::Dropped {
            detail: e.to_string(),
            skipped: used,
        });
        Some((result, used))
    }
}

/// `byte` as a 7-bit character with odd parity in bit 7, for a port opened without hardware
/// parity (8N1); a 7O1 port adds the parity bit itself.
pub fn with_odd_parity(byte: u8) -> u8 {
    let c = byte & 0x7f;
    if c.count_ones().is_multiple_of(2) {
        c | 0x80
    } else {
        c
    }
}

/// The 7-bit character of a received byte (bit 7 is the parity bit on a port opened 8N1).
pub fn strip_parity(byte: u8) -> u8 {
    byte & 0x7f
}

/// The block check: the XOR of the characters (bit 7 masked off).
pub fn block_check(chars: &[u8]) -> u8 {
    chars.iter().fold(0, |acc, &c| acc ^ (c & 0x7f))
}
