//! Chessnut host-to-board commands: typed values, their encoding, the LED bit layout, and the
//! commands' wire for the emulator.
//!
//! Flow: the device layer writes [`Command::start_reporting`] after every open and
//! [`Command::encode`]s the rest, each write paced by [`super::Pacer`]; the emulator pushes what
//! the host wrote into a [`crate::protocol::FrameReader`] on the [`ChessnutCommands`] wire, which
//! frames commands as reports are framed (`id len payload`) and yields [`Command`]s. A command
//! this module does not know is [`Command::Other`], kept whole.
//!
//! Commands (\[EL\] unless said): `21 01 mode` reporting mode, 0 real time (the position every
//! ~200 ms), 1 upload of stored games (\[EB\], \[GO\], \[CP\] agree on `21 01 00`); `0A 08` and
//! eight LED bytes (\[EB\], \[GO\], \[PC\], \[MD\]; \[EB\] calls it a "34-byte command" while
//! showing ten bytes, which is what everyone sends); `0B 04` a beep, frequency in Hz and duration
//! in ms, big-endian (\[DU\]'s sniffer saw `0B 04 03 E8 00 C8`, EasyLink's default 1000 Hz,
//! 200 ms, and named it "init"); `29 01 00` ask for the battery. Also named, kept as `Other`:
//! `27 01 00`/`27 01 01` the BLE/MCU version (\[EL\]; \[DU\] takes 0x27 for haptics, we follow the
//! vendor's SDK), `31 01 00` count stored games, `33`, `34`, `39` upload and delete them.

use shakmaty::{Bitboard, Square};

use super::{
    ReportId, cmd,
    report::{ReportError, cut_reports, push_report},
};
use crate::protocol::frame::{DecodeWarning, Wire};

/// What the board reports, set by `21 01 mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// 0x00: the position about every 200 ms.
    RealTime,
    /// 0x01: stored games, on request.
    Upload,
}

impl Mode {
    fn byte(self) -> u8 {
        match self {
            Mode::RealTime => 0,
            Mode::Upload => 1,
        }
    }
}

/// The LED state of all 64 squares: byte 0 is rank 8 … byte 7 rank 1; in each byte bit 7 is
/// file a … bit 0 file h (\[GO\]: values 128 … 1 for a … h, rows from the far one; \[EL\]'s
/// `"10000000"` strings with the first character for file a; \[PC\], \[MD\], \[DU\] the same).
/// For a board lying the normal way; a board turned round takes the bits in reverse order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Leds(pub [u8; 8]);

impl Leds {
    /// All LEDs off.
    pub const OFF: Leds = Leds([0; 8]);

    fn spot(sq: Square) -> (usize, u8) {
        (7 - sq.rank().to_usize(), 0x80 >> sq.file().to_usize())
    }

    /// These squares lit, all others off.
    pub fn from_squares(squares: impl IntoIterator<Item = Square>) -> Leds {
        let mut leds = Leds::OFF;
        for sq in squares {
            let (byte, bit) = Leds::spot(sq);
            leds.0[byte] |= bit;
        }
        leds
    }

    /// The squares of `set` lit, all others off.
    pub fn from_bitboard(set: Bitboard) -> Leds {
        Leds::from_squares(set)
    }

    /// The lit squares.
    pub fn to_bitboard(self) -> Bitboard {
        Square::ALL
            .iter()
            .copied()
            .filter(|&sq| self.is_lit(sq))
            .collect()
    }

    /// Whether `sq`'s LED is on.
    pub fn is_lit(self, sq: Square) -> bool {
        let (byte, bit) = Leds::spot(sq);
        self.0[byte] & bit != 0
    }
}

/// One host-to-board command.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// `21 01 mode`.
    SetMode(Mode),
    /// `0A 08` and the eight LED bytes.
    Leds(Leds),
    /// `0B 04 freq_hi freq_lo dur_hi dur_lo`.
    Beep { frequency_hz: u16, duration_ms: u16 },
    /// `29 01 00`, answered by a battery report.
    QueryBattery,
    /// Any other command: its id and payload.
    Other { id: ReportId, bytes: Vec<u8> },
}

impl Command {
    /// `21 01 00`: what the host sends after every open, since the board reports nothing until
    /// told (\[GO\], \[EB\]).
    pub fn start_reporting() -> Command {
        Command::SetMode(Mode::RealTime)
    }

    /// Light these squares, all others off.
    pub fn leds(squares: impl IntoIterator<Item = Square>) -> Command {
        Command::Leds(Leds::from_squares(squares))
    }

    /// Appends the command's bytes to `out`: the whole hidraw write, report id first.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Command::SetMode(mode) => push_report(out, cmd::MODE, &[&[mode.byte()]]),
            Command::Leds(leds) => push_report(out, cmd::LEDS, &[&leds.0]),
            Command::Beep {
                frequency_hz,
                duration_ms,
            } => push_report(
                out,
                cmd::BEEP,
                &[&frequency_hz.to_be_bytes(), &duration_ms.to_be_bytes()],
            ),
            Command::QueryBattery => push_report(out, cmd::BATTERY, &[&[0]]),
            Command::Other { id, bytes } => push_report(out, id.0, &[bytes.as_slice()]),
        }
    }

    /// The command's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(10);
        self.encode(&mut out);
        out
    }
}

/// Reads a command's payload by its id and length; anything else is [`Command::Other`].
pub fn decode_command(id: u8, payload: &[u8]) -> Command {
    match (id, payload) {
        (cmd::MODE, [0]) => Command::SetMode(Mode::RealTime),
        (cmd::MODE, [1]) => Command::SetMode(Mode::Upload),
        (cmd::LEDS, &[a, b, c, d, e, f, g, h]) => Command::Leds(Leds([a, b, c, d, e, f, g, h])),
        (cmd::BEEP, &[f_hi, f_lo, d_hi, d_lo]) => Command::Beep {
            frequency_hz: u16::from_be_bytes([f_hi, f_lo]),
            duration_ms: u16::from_be_bytes([d_hi, d_lo]),
        },
        (cmd::BATTERY, [0]) => Command::QueryBattery,
        _ => Command::Other {
            id: ReportId(id),
            bytes: payload.to_vec(),
        },
    }
}

/// Whether `id len` is a command header the sources document exactly (see the module doc).
pub fn is_documented_command(id: u8, len: u8) -> bool {
    matches!(
        (id, len),
        (cmd::LEDS, 8)
            | (cmd::BEEP, 4)
            | (
                cmd::MODE | cmd::BATTERY | 0x27 | 0x31 | 0x33 | 0x34 | 0x39,
                1
            )
    )
}

/// The commands' wire, host to board, for the emulator's [`crate::protocol::FrameReader`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ChessnutCommands;

impl Wire for ChessnutCommands {
    type Frame = Command;

    fn cut(&self, buf: &[u8]) -> Option<(Result<Command, DecodeWarning>, usize)> {
        cut_reports(buf, is_documented_command, |id, payload| {
            Ok::<_, ReportError>(decode_command(id, payload))
        })
    }
}
