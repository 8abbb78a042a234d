//! DGT e-board protocol: typed frames (board to host) and commands (host to board).
//!
//! Flow: bytes from the board go through [`crate::protocol::FrameReader`], which finds frame
//! boundaries and calls the nom decoders in this module, one function per message; commands are
//! encoded here for the device layer and decoded here for the emulator. No I/O.
//! Message ids, lengths and layouts follow `shared/protocols/dgt-notes.md` (sections 1.2 to 1.12).

/// A message id byte as it appears on the wire (high bit set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MessageId(pub u8);

/// Message ids, board to host (single-board mode), dgt-notes 1.4.
pub mod id {
    pub const NONE: u8 = 0x80;
    pub const BOARD_DUMP: u8 = 0x86;
    pub const BWTIME: u8 = 0x8d;
    pub const FIELD_UPDATE: u8 = 0x8e;
    pub const EE_MOVES: u8 = 0x8f;
    pub const BUSADRES: u8 = 0x90;
    pub const SERIALNR: u8 = 0x91;
    pub const TRADEMARK: u8 = 0x92;
    pub const VERSION: u8 = 0x93;
    pub const BOARD_DUMP_50B: u8 = 0x94;
    pub const BOARD_DUMP_50W: u8 = 0x95;
    pub const BATTERY_STATUS: u8 = 0xa0;
    pub const LONG_SERIALNR: u8 = 0xa2;
}

/// DGT piece codes (dgt-notes 1.5). Note the order K=5, Q=6.
pub mod piece {
    pub const EMPTY: u8 = 0x00;
    pub const WPAWN: u8 = 0x01;
    pub const WROOK: u8 = 0x02;
    pub const WKNIGHT: u8 = 0x03;
    pub const WBISHOP: u8 = 0x04;
    pub const WKING: u8 = 0x05;
    pub const WQUEEN: u8 = 0x06;
    pub const BPAWN: u8 = 0x07;
    pub const BROOK: u8 = 0x08;
    pub const BKNIGHT: u8 = 0x09;
    pub const BBISHOP: u8 = 0x0a;
    pub const BKING: u8 = 0x0b;
    pub const BQUEEN: u8 = 0x0c;
    /// "Magic" result pieces: draw, white wins, black wins.
    pub const PIECE1_DRAW: u8 = 0x0d;
    pub const PIECE2_WHITE_WIN: u8 = 0x0e;
    pub const PIECE3_BLACK_WIN: u8 = 0x0f;
}

/// Raw 64 piece codes in board numbering (0 = a8 ... 63 = h1 with the connector on the left).
/// An unchecked placement: it becomes a position only in the tracker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BoardDump(pub [u8; 64]);

/// The seven payload bytes of a BWTIME message, kept raw; accessors decode them
/// (dgt-notes 1.8, 1.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BwTime(pub [u8; 7]);

/// A clock time as shown: hours, minutes, seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClockTime {
    pub hours: u8,
    pub minutes: u8,
    pub seconds: u8,
}

impl ClockTime {
    pub fn to_millis(self) -> u64 {
        (u64::from(self.hours) * 3600 + u64::from(self.minutes) * 60 + u64::from(self.seconds))
            * 1000
    }
}

/// Battery status payload (nine bytes, dgt-notes 1.10), kept raw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BatteryStatus(pub [u8; 9]);

/// A reply in bus mode: `id len_hi len_lo addr_hi addr_lo data... checksum` (dgt-notes 1.12).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BusReply {
    pub id: MessageId,
    /// 14-bit bus address.
    pub address: u16,
    pub data: Vec<u8>,
    pub checksum_ok: bool,
}

/// One decoded board-to-host message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Frame {
    BoardDump(BoardDump),
    /// A square changed: `square` in board numbering, `piece` is the new code (0 = emptied).
    FieldUpdate {
        square: u8,
        piece: u8,
    },
    BwTime(BwTime),
    /// Five ASCII digits (newer header), or the 1998 form with " 1.0" appended (kept verbatim).
    SerialNr(String),
    LongSerialNr(String),
    Version {
        major: u8,
        minor: u8,
    },
    Trademark(String),
    Battery(BatteryStatus),
    /// The raw EEPROM log (dgt-notes 1.11); parsed further elsewhere.
    EeMoves(Vec<u8>),
    /// 14-bit bus address in single-board mode (reply to RETURN_BUSADRES).
    BusAddress(u16),
    /// A bus-mode reply.
    Bus(BusReply),
    /// A well-framed message this decoder does not know; kept, never an error.
    Unknown {
        id: MessageId,
        payload: Vec<u8>,
    },
}

mod battery;
mod board_dump;
mod bus;
mod bwtime;
mod command;
mod ee_moves;
mod ee_tokens;
mod encode;
mod field_update;
mod parse;
mod serial;
mod trademark;
mod version;

pub use battery::parse_battery;
pub use board_dump::parse_board_dump;
pub use bus::{bus_checksum, parse_bus_address, parse_bus_reply};
pub use bwtime::parse_bwtime;
pub use command::{
    BusCommand, ClockCommand, Command, CommandError, CommandReader, clock_cmd, cmd_more,
    decode_command,
};
pub use ee_moves::parse_ee_moves;
pub use ee_tokens::{
    EeTag, EeToken, EeTokenError, ee_code, ee_token_len, encode_ee_tokens, parse_ee_tokens,
};
pub use encode::{hour_flags, status};
pub use field_update::parse_field_update;
pub(crate) use parse::run_payload;
pub use parse::{
    EE_MOVES_MAX_LEN, FrameError, LenRule, MAX_FRAME_LEN, Mode, PResult, RawFrame,
    TRADEMARK_MAX_LEN, UNKNOWN_MAX_LEN, bus_id, cut_common, decode_payload, length_rule,
    parse_frame, parse_unknown, split_frame, split_frame_with,
};
pub use serial::{parse_long_serial_nr, parse_serial_nr};
pub use trademark::parse_trademark;
pub use version::parse_version;

/// Host-to-board command bytes (dgt-notes 1.3 and 1.12).
pub mod cmd {
    pub const SEND_RESET: u8 = 0x40;
    pub const SEND_CLK: u8 = 0x41;
    pub const SEND_BRD: u8 = 0x42;
    pub const SEND_UPDATE: u8 = 0x43;
    pub const SEND_UPDATE_BRD: u8 = 0x44;
    pub const RETURN_SERIALNR: u8 = 0x45;
    pub const RETURN_BUSADRES: u8 = 0x46;
    pub const SEND_TRADEMARK: u8 = 0x47;
    pub const SEND_EE_MOVES: u8 = 0x49;
    pub const TO_BUSMODE: u8 = 0x4a;
    pub const SEND_UPDATE_NICE: u8 = 0x4b;
    pub const SEND_BATTERY_STATUS: u8 = 0x4c;
    pub const SEND_VERSION: u8 = 0x4d;
    pub const RETURN_LONG_SERIALNR: u8 = 0x55;
    pub const SET_LEDS: u8 = 0x60;
    pub const CLOCK_MESSAGE: u8 = 0x2b;
}

/// Commands sent after every (re)open: single-board mode (any single-board command leaves bus
/// mode), identity, a full dump, updates with clock times only when they change, the clock.
pub const STARTUP: [u8; 6] = [
    cmd::RETURN_SERIALNR,
    cmd::SEND_VERSION,
    cmd::RETURN_LONG_SERIALNR,
    cmd::SEND_BRD,
    cmd::SEND_UPDATE_NICE,
    cmd::SEND_CLK,
];

/// The watchdog's probe: cheap, answered in every mode.
pub const PROBE: [u8; 1] = [cmd::RETURN_SERIALNR];
