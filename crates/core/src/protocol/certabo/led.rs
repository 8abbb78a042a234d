//! What the host writes to the board: LED commands. Typed values, their bytes, and a streaming
//! decoder for the emulator's side of the wire.
//!
//! Flow: the device layer builds a [`LedCommand`] (or, for a Cerno Spectrum, [`RgbLeds`]) and
//! writes its bytes; the emulator pushes what it receives into a [`CommandReader`].
//!
//! Facts and sources:
//! - A one-colour command is 8 bytes, byte 0 for rank 8 … byte 7 for rank 1, bit 0 for the
//!   a-file … bit 7 for the h-file, a set bit lighting the square: Certabo's `codes.py`
//!   (`move2led`: byte `8 - rank`, value `2 ** file`), picochess `eboard/certabo/command.py` and
//!   its `tests/test_certabo_command.py` (d2 d4 → `0000000008000800`), `haklein/certabo-lichess`
//!   (`squareset2ledbytes`: python-chess's square set as 8 big-endian bytes), BearChess
//!   (`ColA = 0x1` … `ColH = 0x1 << 7`, `result[8 - rowNumber]`), for Certabo and Cerno alike.
//! - The command has no framing: Certabo's board simulator (`chess_sim/chess_sim.ino`) takes 8
//!   bytes whenever 8 are buffered and discards whatever else came with them. The emulator's
//!   [`CommandReader`] takes 8 at a time; [`CommandReader::clear`] drops a partial one.
//! - A board with RGB LEDs (Tabutronic Cerno Spectrum) takes 247 bytes: `FF 55`, 81 LEDs × 3
//!   bytes (red, green, blue), `0D 0A`. The 81 LEDs sit on the 9 × 9 corners of the squares,
//!   row by row from rank 1's edge, each row from the h-file's edge; a square is lit by its
//!   four corners (cer2nut `RgbLedCommandTranslator.cpp` and its tests, BearChess
//!   `ECernoSpectrumChessBoard.cs`, `InitFieldNamesToLedArray`). Both drivers send the 8-byte
//!   command first when they do not yet know which kind the board is.

use shakmaty::{Bitboard, Square};

use crate::protocol::frame::DecodeWarning;

/// Bytes in a one-colour LED command.
pub const LED_COMMAND_LEN: usize = 8;
/// LEDs of a board with RGB LEDs.
pub const RGB_LEDS: usize = 81;
/// Bytes in an RGB LED command: `FF 55`, 81 × RGB, `0D 0A`.
pub const RGB_COMMAND_LEN: usize = 2 + 3 * RGB_LEDS + 2;
const RGB_HEAD: [u8; 2] = [0xff, 0x55];
const RGB_TAIL: [u8; 2] = [0x0d, 0x0a];

/// A one-colour LED command: byte 0 = rank 8 … byte 7 = rank 1, bit 0 = a-file … bit 7 =
/// h-file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LedCommand(pub [u8; LED_COMMAND_LEN]);

impl LedCommand {
    /// All LEDs off.
    pub const OFF: LedCommand = LedCommand([0; LED_COMMAND_LEN]);
    /// All LEDs on.
    pub const ALL: LedCommand = LedCommand([0xff; LED_COMMAND_LEN]);
    /// The calibration setup's squares: ranks 8, 7, 2, 1 and the extra queens' d6 and d3
    /// (picochess `set_leds_calibrate`, cer2nut `calibrationLeds`).
    pub const CALIBRATION: LedCommand =
        LedCommand([0xff, 0xff, 0x08, 0x00, 0x00, 0x08, 0xff, 0xff]);

    /// Lights `squares`, nothing else.
    pub fn from_squares(squares: impl IntoIterator<Item = Square>) -> LedCommand {
        LedCommand::from_bitboard(squares.into_iter().collect())
    }

    /// Lights the squares of `squares`: the bitboard's 64 bits as 8 big-endian bytes.
    pub fn from_bitboard(squares: Bitboard) -> LedCommand {
        LedCommand(squares.0.to_be_bytes())
    }

    /// The lit squares.
    pub fn to_bitboard(self) -> Bitboard {
        Bitboard(u64::from_be_bytes(self.0))
    }

    /// Whether `sq`'s LED is on.
    pub fn is_lit(self, sq: Square) -> bool {
        self.to_bitboard().contains(sq)
    }

    /// The bytes to write.
    pub fn to_bytes(self) -> [u8; LED_COMMAND_LEN] {
        self.0
    }
}

/// The four LEDs (indices into [`RgbLeds`]) at the corners of `sq`.
pub fn corner_leds(sq: Square) -> [usize; 4] {
    let base = sq.rank().to_usize() * 9 + (7 - sq.file().to_usize());
    [base, base + 1, base + 9, base + 10]
}

/// An RGB LED command: the colour of each of the 81 LEDs (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RgbLeds(pub [[u8; 3]; RGB_LEDS]);

impl Default for RgbLeds {
    fn default() -> Self {
        RgbLeds([[0; 3]; RGB_LEDS])
    }
}

impl RgbLeds {
    /// All LEDs off.
    pub fn off() -> RgbLeds {
        RgbLeds::default()
    }

    /// Sets the four LEDs around `sq` to `rgb`.
    pub fn light(&mut self, sq: Square, rgb: [u8; 3]) {
        for i in corner_leds(sq) {
            self.0[i] = rgb;
        }
    }

    /// The squares of a one-colour command in `rgb`, as cer2nut translates one.
    pub fn from_command(command: LedCommand, rgb: [u8; 3]) -> RgbLeds {
        let mut leds = RgbLeds::off();
        for sq in command.to_bitboard() {
            leds.light(sq, rgb);
        }
        leds
    }

    /// The bytes to write.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(RGB_COMMAND_LEN);
        out.extend(RGB_HEAD);
        out.extend(self.0.iter().flatten());
        out.extend(RGB_TAIL);
        out
    }
}

/// Which LED commands the board takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LedKind {
    /// One-colour LEDs: 8-byte commands (Certabo, Cerno).
    #[default]
    Single,
    /// RGB LEDs: 247-byte commands (Cerno Spectrum).
    Rgb,
}

/// One command from the host.
#[allow(clippy::large_enum_variant)] // a command every few hundred ms, moved once: no box needed
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HostCommand {
    Leds(LedCommand),
    Rgb(RgbLeds),
}

impl HostCommand {
    /// The bytes the host writes.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            HostCommand::Leds(c) => c.to_bytes().to_vec(),
            HostCommand::Rgb(c) => c.to_bytes(),
        }
    }
}

/// The command at the start of `i` for a board of `kind`, or the warning for bytes that are not
/// one, with how many bytes it took; `None` while `i` holds only the start of a command. For
/// [`LedKind::Rgb`], bytes before `FF 55` are dropped up to the next `FF`.
pub fn decode_command(
    i: &[u8],
    kind: LedKind,
) -> Option<(Result<HostCommand, DecodeWarning>, usize)> {
    match kind {
        LedKind::Single => {
            let bytes: [u8; LED_COMMAND_LEN] = i.get(..LED_COMMAND_LEN)?.try_into().ok()?;
            Some((Ok(HostCommand::Leds(LedCommand(bytes))), LED_COMMAND_LEN))
        }
        LedKind::Rgb => {
            let head_ok = match i {
                [] | [0xff] => return None,
                [a, b, ..] => [*a, *b] == RGB_HEAD,
                [_] => false,
            };
            if head_ok {
                let frame = i.get(..RGB_COMMAND_LEN)?;
                if frame[RGB_COMMAND_LEN - 2..] == RGB_TAIL {
                    let mut leds = RgbLeds::off();
                    for (led, rgb) in leds.0.iter_mut().zip(frame[2..].chunks_exact(3)) {
                        led.copy_from_slice(rgb);
                    }
                    return Some((Ok(HostCommand::Rgb(leds)), RGB_COMMAND_LEN));
                }
            }
            let skipped = 1 + i[1..]
                .iter()
                .position(|&b| b == 0xff)
                .unwrap_or(i.len() - 1);
            Some((
                Err(DecodeWarning::Dropped {
                    detail: format!("{skipped} byte(s) before an RGB LED command's FF 55"),
                    skipped,
                }),
                skipped,
            ))
        }
    }
}

/// Collects the bytes the host writes and hands out whole commands.
#[derive(Clone, Debug, Default)]
pub struct CommandReader {
    buf: Vec<u8>,
    kind: LedKind,
}

impl CommandReader {
    /// An empty reader for a board of `kind`.
    pub fn new(kind: LedKind) -> CommandReader {
        CommandReader {
            buf: Vec::new(),
            kind,
        }
    }

    /// Appends bytes from the host.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Drops a partial command (the simulator discards leftovers after each command).
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// Bytes received but not yet returned.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next command; `None` when more bytes are needed; `Err` when bytes were dropped.
    pub fn next_command(&mut self) -> Option<Result<HostCommand, DecodeWarning>> {
        let (result, used) = decode_command(&self.buf, self.kind)?;
        self.buf.drain(..used.clamp(1, self.buf.len()));
        Some(result)
    }
}
