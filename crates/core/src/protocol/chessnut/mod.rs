//! Chessnut Air, Air+, Pro and Go boards over USB HID: typed reports (board to host), commands
//! (host to board), the USB matching facts, a de-duplicator for the repeated position reports and
//! a pacer for writes. Pure; no I/O, no clock.
//!
//! Flow: the daemon opens the board's hidraw node ([`usb::is_chessnut`]), writes
//! [`Command::start_reporting`] and from then on pushes each read, cut to its report with
//! [`trim_report`], into a [`crate::protocol::FrameReader`] with the [`Chessnut`] wire, which
//! yields [`Frame`]s. Positions repeat every ~200 ms; [`Dedup`] says which one changed anything.
//! Commands are [`Command::encode`]d and sent no closer than [`WRITE_GAP_MS`] apart ([`Pacer`]).
//! The emulator reads the host's writes with the [`ChessnutCommands`] wire.
//!
//! # Sources
//!
//! - \[EL\] `chessnutech/EasyLinkSDK`, `sdk/EasyLink.cpp` and `README.md`: the vendor's USB SDK
//!   (hidapi). Device matching, the 200 ms write gap, `len + 2` as a report's size, commands.
//! - \[EB\] `chessnutech/Chessnut_eBoards`, `README.md`: the vendor's (BLE) API notes.
//! - \[GO\] Graham O'Neill, "Chessnut chess board communications", a PDF kept as
//!   `Docs/Chessnut_communications.pdf` in `staubsauger/ChessnutPy`: USB and BLE, the start
//!   position vector, the LED example.
//! - \[CP\] `staubsauger/ChessnutPy`, `ChessnutAir.py` and `ChessnutAir_Helpers/constants.py` (BLE).
//! - \[PC\] `JohanSjoblom/picochess`, `eboard/chessnut/{parser,command}.py` and
//!   `tests/test_chessnut_{parser,command}.py` (BLE only; its vectors are BLE reports).
//! - \[MD\] `mono424/chessnutdriver`, `lib/chessnut_board.dart`, `lib/led_pattern.dart` (USB and BLE).
//! - \[PL\] `podlomar/chessnut`, `src/chess-lib/chessnut.ts` (WebHID) and
//!   `testing/board/virtual_board.py` (a uhid stand-in).
//! - \[DU\] `adrian-dybwad/DGTCentaurUniversal`, `src/universalchess/emulators/chessnut.py` and
//!   `tools/dev-tools/sniffers/chessnut_ble.py` (a board emulator and a BLE sniffer).
//!
//! # The wire
//!
//! Every report and every command is `id len payload`, `len` counting the payload bytes that
//! follow it: \[EL\] reads each report's size as `buf[1] + 2`; over BLE the position report is
//! `01 24` and 36 more bytes, 38 in all (\[GO\], \[DU\] "real board analysis", the vectors of
//! \[PC\]). \[EB\] calls it a 36-byte array; we follow the length byte, as the vendor's SDK does.
//! Over USB the position report starts `01 3D` (\[GO\], \[MD\]): 61 payload bytes, the 32 square
//! bytes and 29 more. \[GO\] reads 65 bytes per report and does not know what the 31 after the
//! squares are; by the length byte 29 belong to the report and the last 2 are the padding of a
//! fixed-size HID report. What the trailing bytes mean over USB no source says; over BLE the
//! first two are an uptime counter in seconds, little-endian (\[DU\], \[CP\] reads them as a time
//! stamp), then `00 00`. They are kept, never interpreted ([`PositionReport::extra`]).
//! The board uses numbered HID reports: the id byte is the HID report id (\[GO\]: write report
//! ids 0x21 and 0x0A, read report id 0x01; \[PL\] gets report ids 0x01 and 0x2A from WebHID and
//! sends the init as report 0x21 with data `01 00`). With numbered reports the first byte of a
//! read is the report number and the first byte of a write the report id (hidapi's documentation,
//! docs.rs `hidapi::HidDevice`; its Linux backend is hidraw): so each hidraw read starts with the
//! id, and a write is the command's bytes as they are, with no extra report-id byte in front.
//! \[EL\] writes each command at its own length (3 bytes for `21 01 00`, 10 for the LEDs). A read
//! may carry padding after the report: the daemon cuts each read with [`trim_report`], and an
//! emulator writing to a byte stream sends reports unpadded (zeros between reports are dropped
//! with a warning). \[PL\]'s uhid stand-in sends `01 3D` with only the 32 square bytes; it does
//! not follow the length byte, and a real board (\[GO\]'s 65 bytes) does.
//!
//! Position: 32 bytes, two squares a byte, low nibble first, squares h8, g8 … a8, h7 … a1
//! (\[EB\], \[GO\], \[EL\] `toFen`), codes in [`placement`]. Reports repeat about every 200 ms
//! whether or not anything moved (\[GO\]).
//!
//! Other reports: `2A 02 level status` battery (\[EB\], \[PC\], \[CP\], \[EL\]: answers
//! `29 01 00`, and newer boards send it unprompted); `23 01 code` an acknowledgement, 0 after an
//! accepted command and as a heartbeat, 1 "board not ready" (\[GO\], \[CP\], \[MD\]; seen over BLE
//! only); `32 01 n` the number of games stored (\[CP\], \[EL\] reads byte 2 of the answer to
//! `31 01 00`; \[PC\] takes `32 01` as the sign of a non-Move board); `0F …` a button, its first
//! payload byte the button's number (\[CP\], BLE, length not documented). Seen and not decoded
//! (kept as [`Frame::Unknown`]): `36 08` the size of a stored game, `37 01 BE`/`37 01 ED` the
//! start and end of its upload, `38 04` its checksum (\[CP\], \[EL\]), `21 01 00` echoed over BLE
//! (\[CP\]), and the version strings answering `27 01 00`/`27 01 01` (\[EL\], id not named).
//! No source documents a clock report on the Pro or the Go.
//!
//! Resynchronisation: a report may start at any byte that is not 0x00 (HID reserves report id
//! 0) followed by a length of 1 to [`MAX_PAYLOAD`] (62: a 64-byte report, the largest full-speed
//! interrupt packet; no source shows a longer one, so this cap is ours). Some headers are
//! documented exactly ([`is_documented_header`]): those are taken whole when their payload
//! decodes. Any other header (an unknown id, or a known id with an undocumented length) is taken
//! only if no documented header starts inside it; otherwise the bytes before that header are
//! dropped. A report whose payload does not decode is dropped, never past a documented header
//! inside it. So garbage never swallows a documented report.
//!
//! Several boards on one PC: nothing in the protocol or in the sources names a serial number,
//! so the daemon tells boards apart by their USB port path. Battery: the sources disagree,
//! see [`Battery`].

mod command;
mod pace;
pub mod placement;
mod report;
pub mod usb;

#[cfg(test)]
mod tests;

use std::fmt;

pub use command::{ChessnutCommands, Command, Leds, Mode, decode_command, is_documented_command};
pub use pace::{Dedup, Pacer, WRITE_GAP_MS};
pub use placement::WirePlacement;
pub use report::{
    ReportError, decode_report, is_documented_header, parse_header, parse_report, trim_report,
};

/// A report or command id as it appears on the wire: the HID report id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReportId(pub u8);

impl fmt::Display for ReportId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:02x}", self.0)
    }
}

/// Report ids, board to host.
pub mod id {
    pub const POSITION: u8 = 0x01;
    pub const BUTTON: u8 = 0x0f;
    pub const ACK: u8 = 0x23;
    pub const BATTERY: u8 = 0x2a;
    pub const FILE_COUNT: u8 = 0x32;
}

/// Command ids, host to board.
pub mod cmd {
    pub const LEDS: u8 = 0x0a;
    pub const BEEP: u8 = 0x0b;
    pub const MODE: u8 = 0x21;
    pub const BATTERY: u8 = 0x29;
}

/// The most payload bytes a report or command may carry (our cap, see the module doc).
pub const MAX_PAYLOAD: usize = 62;
/// The most bytes a report or command takes on the wire: id, length, payload.
pub const MAX_REPORT: usize = MAX_PAYLOAD + 2;
/// Square bytes in a position report.
pub const SQUARE_BYTES: usize = 32;
/// The position report's length byte over USB (\[GO\], \[MD\]).
pub const POSITION_LEN_USB: u8 = 0x3d;
/// The position report's length byte over BLE (\[GO\], \[PC\], \[DU\]).
pub const POSITION_LEN_BLE: u8 = 0x24;

/// A position report: the squares and whatever the board sends after them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PositionReport {
    /// The 64 squares in the board's order (h8 first).
    pub placement: WirePlacement,
    /// Payload bytes after the 32 square bytes, kept raw: 29 over USB (meaning unknown), 4 over
    /// BLE (uptime in seconds, little-endian, then `00 00`).
    pub extra: Vec<u8>,
}

/// A battery report (`2A 02 level status`), kept raw.
///
/// The sources disagree: \[EB\] (and \[DU\]) read bit 7 of `level` as "charging" and bits 0..6
/// as the percentage, `status` reserved; \[PC\] and \[CP\] read `level` as the percentage and
/// `status == 1` as "charging" (\[PL\] saw `64 01` over USB). The readings do not collide on
/// anything a board following either would send (a percentage never sets bit 7; a reserved byte
/// is 0), so [`Battery::percent`] and [`Battery::charging`] accept both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Battery {
    pub level: u8,
    pub status: u8,
}

impl Battery {
    /// The charge in percent, 0..=100.
    pub fn percent(self) -> u8 {
        (self.level & 0x7f).min(100)
    }

    /// Whether the board says it is charging, by either reading.
    pub fn charging(self) -> bool {
        self.level & 0x80 != 0 || self.status == 1
    }
}

/// One decoded board-to-host report.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Frame {
    /// `01 len`, 32 square bytes and `len - 32` more.
    Position(PositionReport),
    /// `2A 02 level status`.
    Battery(Battery),
    /// `23 01 code`: 0 accepted / heartbeat, 1 board not ready.
    Ack { code: u8 },
    /// `32 01 n`: games stored on the board.
    FileCount(u8),
    /// `0F len button …`: a button, numbered as the board numbers them; `rest` kept raw.
    Button { button: u8, rest: Vec<u8> },
    /// A well-framed report this decoder does not know; kept, never an error. `bytes` is the
    /// payload (after the length byte).
    Unknown { id: ReportId, bytes: Vec<u8> },
}

/// The Chessnut wire for [`crate::protocol::FrameReader`]: board-to-host reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Chessnut;
