//! iChessOne boards: typed messages both ways, the wire's framing, and the board's square and
//! LED order. Pure; no I/O.
//!
//! Flow: bytes from the board go through [`crate::protocol::FrameReader`] with the [`IChessOne`]
//! wire: [`IChessOne::cut`] cuts a message at its two header bytes (`=p` a position, `=b` the
//! battery) with streaming nom parsers and hands back a [`Frame`]; anything else is a
//! [`DecodeWarning::Dropped`] up to the next `=`. Host commands are [`Command`]s, written by
//! [`Command::encode`] and read back by [`cut_command`] for the emulator.
//!
//! # The wire
//! The source is picochess's driver (tosca07/picochess and JohanSjoblom/picochess,
//! `eboard/ichessone/parser.py`, `command.py`, `protocol.py`, and `eboard/eboard.py` for the
//! square order); no vendor document was at hand. The board speaks over Bluetooth LE, Nordic's
//! UART service (notifications on `6E400003-…`, writes to `6E400002-…`): a byte stream like a
//! serial line's, which a BLE–UART bridge on the host (ble-serial, for one) offers as a
//! pseudo-terminal. The stream has no check digits and no length bytes; the headers fix the
//! lengths:
//! - `3D 70` (`=p`) and 32 square bytes: the whole position, two squares a byte, high nibble
//!   first, rank 8 first and the a-file first in each rank (a8 b8 | c8 d8 | … | g1 h1).
//!   Codes: 0 empty, 1 P, 2 N, 3 B, 4 R, 5 Q, 6 K, 7 p, 8 n, 9 b, 10 r, 11 q, 12 k; 13..=15
//!   are no piece and make the message a warning.
//! - `3D 62` (`=b`), a status byte (1 charging) and the charge in percent.
//!
//! No square byte of a position is ever `3D` (its low nibble would be 13), so the next `=`
//! after bad bytes is where a message may start; the battery's two bytes may be anything.
//!
//! Host to board: `RP` asks for the position, `CPIRQ` switches on a report at every change,
//! `RB` asks for the battery, `EL` and 14 bytes set the LEDs ([`Leds`]).

use nom::{
    IResult, Parser,
    bytes::streaming::{tag, take},
    number::streaming::u8 as byte,
};
use shakmaty::{Bitboard, Color, Piece, Role, Square};

use super::frame::{DecodeWarning, Wire};

/// A message's first byte, both ways for the board's messages (`=`).
pub const START: u8 = 0x3d;
/// The position message's header (`=p`).
pub const POSITION: [u8; 2] = [START, 0x70];
/// The battery message's header (`=b`).
pub const BATTERY: [u8; 2] = [START, 0x62];
/// Square bytes in a position message.
pub const SQUARE_BYTES: usize = 32;

/// The 64 squares in the message's order: index 0 = a8, 7 = h8, 8 = a7 … 63 = h1, which is
/// the board's numbering on a board lying the normal way (white on the near side).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placement(pub [Option<Piece>; 64]);

impl Placement {
    pub const EMPTY: Placement = Placement([None; 64]);

    /// The start position, white on the near side.
    pub fn start() -> Placement {
        let board = shakmaty::Board::new();
        Placement(std::array::from_fn(|i| board.piece_at(square_of(i))))
    }

    /// The 32 square bytes.
    pub fn to_bytes(&self) -> [u8; SQUARE_BYTES] {
        std::array::from_fn(|b| (code(self.0[2 * b]) << 4) | code(self.0[2 * b + 1]))
    }

    /// The squares of 32 square bytes; `Err((index, code))` for the first square whose code is
    /// no piece.
    pub fn from_bytes(bytes: &[u8; SQUARE_BYTES]) -> Result<Placement, (usize, u8)> {
        let mut squares = [None; 64];
        for (i, s) in squares.iter_mut().enumerate() {
            let b = bytes[i / 2];
            let c = if i % 2 == 0 { b >> 4 } else { b & 0x0f };
            *s = piece(c).map_err(|c| (i, c))?;
        }
        Ok(Placement(squares))
    }
}

/// The square at message index `i` (0 = a8 … 63 = h1).
pub fn square_of(i: usize) -> Square {
    let i = i as u32 & 63;
    Square::new((7 - i / 8) * 8 + i % 8)
}

const ROLES: [Role; 6] = [
    Role::Pawn,
    Role::Knight,
    Role::Bishop,
    Role::Rook,
    Role::Queen,
    Role::King,
];

/// The code of a square holding `piece`.
pub fn code(piece: Option<Piece>) -> u8 {
    piece.map_or(0, |p| {
        let role = ROLES.iter().position(|&r| r == p.role).unwrap_or(0) as u8 + 1;
        if p.color == Color::White {
            role
        } else {
            role + 6
        }
    })
}

/// The piece code `c` stands for; `Err(c)` for 13..=15.
pub fn piece(c: u8) -> Result<Option<Piece>, u8> {
    match c {
        0 => Ok(None),
        1..=6 => Ok(Some(Piece {
            color: Color::White,
            role: ROLES[usize::from(c - 1)],
        })),
        7..=12 => Ok(Some(Piece {
            color: Color::Black,
            role: ROLES[usize::from(c - 7)],
        })),
        _ => Err(c),
    }
}

/// One decoded board-to-host message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Frame {
    /// `=p` and the squares.
    Position(Placement),
    /// `=b`, status (1 charging), percent.
    Battery { status: u8, percent: u8 },
}

impl Frame {
    /// The message's bytes on the wire.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Frame::Position(p) => {
                let mut out = POSITION.to_vec();
                out.extend(p.to_bytes());
                out
            }
            Frame::Battery { status, percent } => {
                let mut out = BATTERY.to_vec();
                out.extend([*status, *percent]);
                out
            }
        }
    }
}

/// The iChessOne wire for [`crate::protocol::FrameReader`]: board-to-host messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IChessOne;

/// What the bytes at the start of a buffer are.
enum Cut {
    Frame(Frame),
    /// A position whose square `index` carries `code`, no piece.
    BadSquare {
        index: usize,
        code: u8,
    },
}

fn position(i: &[u8]) -> IResult<&[u8], Cut> {
    let (i, (_, squares)) = (tag(&POSITION[..]), take(SQUARE_BYTES)).parse(i)?;
    let mut bytes = [0u8; SQUARE_BYTES];
    bytes.copy_from_slice(squares);
    let cut = match Placement::from_bytes(&bytes) {
        Ok(p) => Cut::Frame(Frame::Position(p)),
        Err((index, code)) => Cut::BadSquare { index, code },
    };
    Ok((i, cut))
}

fn battery(i: &[u8]) -> IResult<&[u8], Cut> {
    let (i, (_, status, percent)) = (tag(&BATTERY[..]), byte, byte).parse(i)?;
    Ok((i, Cut::Frame(Frame::Battery { status, percent })))
}

/// Bytes up to the next `=` after the first, never past it.
fn to_next_start(buf: &[u8]) -> usize {
    1 + buf[1..]
        .iter()
        .position(|&b| b == START)
        .unwrap_or(buf.len() - 1)
}

impl Wire for IChessOne {
    type Frame = Frame;

    fn cut(&self, buf: &[u8]) -> Option<(Result<Frame, DecodeWarning>, usize)> {
        let &first = buf.first()?;
        if first != START {
            let skipped = buf.iter().position(|&b| b == START).unwrap_or(buf.len());
            let detail = "bytes before a message's '='".to_owned();
            return Some((Err(DecodeWarning::Dropped { detail, skipped }), skipped));
        }
        let second = *buf.get(1)?;
        let parsed = match second {
            0x70 => position(buf),
            0x62 => battery(buf),
            other => {
                let skipped = to_next_start(buf);
                let detail = format!("'=' followed by {other:#04x}, which starts no message");
                return Some((Err(DecodeWarning::Dropped { detail, skipped }), skipped));
            }
        };
        match parsed {
            Ok((rest, Cut::Frame(f))) => Some((Ok(f), buf.len() - rest.len())),
            Ok((_, Cut::BadSquare { index, code })) => {
                let skipped = to_next_start(buf);
                let detail = format!(
                    "position: square {} has code {code}, no piece",
                    square_of(index)
                );
                Some((Err(DecodeWarning::Dropped { detail, skipped }), skipped))
            }
            Err(nom::Err::Incomplete(_)) => None,
            Err(_) => {
                let skipped = to_next_start(buf);
                let detail = "not a message".to_owned();
                Some((Err(DecodeWarning::Dropped { detail, skipped }), skipped))
            }
        }
    }
}

/// The LEDs under the squares, and their colour (picochess's `set_led`): `EL`, red level with
/// brightness, blue and green levels, the indicators beside rank 8, the squares (8 bytes, byte
/// 0 = rank 8 … byte 7 = rank 1, bit 0 = the a-file), the indicators beside rank 1, a flags
/// byte (1: no flashing, the previous pattern cleared) and how long (`FF` for good).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Leds {
    pub red_brightness: u8,
    pub blue_green: u8,
    /// The indicators beside rank 8 (picochess's "row 9"), kept raw.
    pub beyond_rank_8: u8,
    pub squares: Bitboard,
    /// The indicators beside rank 1 (picochess's "row 0"), kept raw.
    pub beyond_rank_1: u8,
    pub flags: u8,
    pub duration: u8,
}

impl Leds {
    /// `squares` lit as picochess lights them (half brightness, for good).
    pub fn on(squares: Bitboard) -> Leds {
        Leds {
            red_brightness: 0x80,
            blue_green: 0x0f,
            beyond_rank_8: 0,
            squares,
            beyond_rank_1: 0,
            flags: 0x01,
            duration: 0xff,
        }
    }

    /// Every LED off.
    pub fn off() -> Leds {
        Leds {
            red_brightness: 0,
            ..Leds::on(Bitboard::EMPTY)
        }
    }

    /// The 8 square bytes: byte `r` is rank `8 - r`, bit `f` file `f` (picochess's `set_led`,
    /// whose rows are ranks 1 to 8, read through its `(7 - row) * 8 + 7 - file` bit numbering,
    /// most significant bit first): shakmaty's numbering, big-endian.
    pub fn square_bytes(&self) -> [u8; 8] {
        u64::from(self.squares).to_be_bytes()
    }
}

/// The LED command's length: `EL` and 14 bytes.
pub const LED_COMMAND_LEN: usize = 16;

/// A host-to-board command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// `RP`: the position now.
    RequestPosition,
    /// `CPIRQ`: a position message at every change from now on.
    ReportChanges,
    /// `RB`: the battery.
    RequestBattery,
    /// `EL` …: the LEDs.
    Leds(Leds),
}

impl Command {
    /// Appends the command's bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Command::RequestPosition => out.extend(b"RP"),
            Command::ReportChanges => out.extend(b"CPIRQ"),
            Command::RequestBattery => out.extend(b"RB"),
            Command::Leds(l) => {
                out.extend(b"EL");
                out.extend([l.red_brightness, l.blue_green, l.beyond_rank_8]);
                out.extend(l.square_bytes());
                out.extend([l.beyond_rank_1, l.flags, l.duration]);
            }
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

/// The command at the start of `buf` (what a board reads), with how many bytes it took; a
/// byte that starts no command is an error of one byte. `None` while incomplete.
pub fn cut_command(buf: &[u8]) -> Option<(Result<Command, u8>, usize)> {
    let fixed: [(&[u8], Command); 3] = [
        (b"RP", Command::RequestPosition),
        (b"CPIRQ", Command::ReportChanges),
        (b"RB", Command::RequestBattery),
    ];
    for (bytes, c) in fixed {
        if buf.starts_with(bytes) {
            return Some((Ok(c), bytes.len()));
        }
        if bytes.starts_with(buf) {
            return None;
        }
    }
    if buf.starts_with(b"EL") {
        let b = buf.get(..LED_COMMAND_LEN)?;
        let mut squares = [0u8; 8];
        squares.copy_from_slice(&b[5..13]);
        let leds = Leds {
            red_brightness: b[2],
            blue_green: b[3],
            beyond_rank_8: b[4],
            squares: Bitboard(u64::from_be_bytes(squares)),
            beyond_rank_1: b[13],
            flags: b[14],
            duration: b[15],
        };
        return Some((Ok(Command::Leds(leds)), LED_COMMAND_LEN));
    }
    if buf == b"E" {
        return None;
    }
    buf.first().map(|&b| (Err(b), 1))
}

#[cfg(test)]
mod tests;
