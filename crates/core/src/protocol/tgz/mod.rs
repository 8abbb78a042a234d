//! TGZ-1, the togyz korgool pit board's protocol (`shared/protocols/togyz-board.md`): typed frames
//! (board to host) and commands (host to board), on DGT's framing.
//!
//! Flow: bytes from the board go through [`crate::protocol::FrameReader`] with the [`Tgz`] wire:
//! [`split_frame`] cuts frames with DGT's header and high-bit rules and TGZ-1's lengths, then
//! [`decode_payload`] hands the payload to one nom parser per message (the clock, serial number,
//! trademark and version messages are DGT's, decoded by [`crate::protocol::dgt`]). Frames are
//! encoded in `encode.rs`, commands in `command.rs`. Counts and tuz bytes are checked for range
//! here; whether they make a position is the sensor's and the tracker's business. No I/O.

use crate::protocol::dgt::{BwTime, MessageId};

/// A player, as TUZ_UPDATE names one: white ("ак") moves first. The game's rules about sides
/// are `game::togyz`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    White,
    Black,
}

/// Message ids, board to host.
pub mod id {
    pub const BOARD_DUMP: u8 = 0xb0;
    pub const PIT_UPDATE: u8 = 0xb1;
    pub const TUZ_UPDATE: u8 = 0xb2;
    pub use crate::protocol::dgt::id::{BWTIME, SERIALNR, TRADEMARK, VERSION};
}

/// Host-to-board command bytes.
pub mod cmd {
    pub const SEND_RESET: u8 = 0x40;
    pub const SEND_CLK: u8 = 0x41;
    pub const SEND_BRD: u8 = 0x42;
    pub const SEND_UPDATE_BRD: u8 = 0x44;
    pub const RETURN_SERIALNR: u8 = 0x45;
    pub const SEND_TRADEMARK: u8 = 0x47;
    pub const SEND_UPDATE_NICE: u8 = 0x4b;
    pub const SEND_VERSION: u8 = 0x4d;
}

/// Locations: 0..8 white's pits 1..9, 9..17 black's pits 1..9, 18 white's store, 19 black's.
pub const LOCATIONS: usize = 20;
/// White's store's location.
pub const WHITE_STORE: u8 = 18;
/// Black's store's location.
pub const BLACK_STORE: u8 = 19;
/// The largest count a location can report (all korgools of the game).
pub const MAX_COUNT: u16 = 162;
/// The largest tuz byte: 0 no marker, 1..9 the opponent's pit under the marker.
pub const MAX_TUZ_PIT: u8 = 9;

/// A BOARD_DUMP: the count of every location and both tuz bytes, range-checked only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PitDump {
    /// Locations 0..20 in order.
    pub counts: [u8; LOCATIONS],
    /// White's and black's tuz byte: the opponent's pit under the marker, 0 for none.
    pub tuz: [u8; 2],
}

/// One decoded board-to-host message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Frame {
    BoardDump(PitDump),
    /// A location's count changed.
    PitUpdate {
        location: u8,
        count: u8,
    },
    /// A player's tuz marker moved: `pit` on the opponent's row, 0 when lifted.
    TuzUpdate {
        player: Side,
        pit: u8,
    },
    /// DGT_MSG_BWTIME unchanged.
    BwTime(BwTime),
    /// Five ASCII digits.
    SerialNr(String),
    /// ASCII text starting `TGZ Pit Board`.
    Trademark(String),
    Version {
        major: u8,
        minor: u8,
    },
    /// A well-framed message this decoder does not know; kept, never an error.
    Unknown {
        id: MessageId,
        payload: Vec<u8>,
    },
}

/// The TGZ-1 wire for [`crate::protocol::FrameReader`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Tgz;

mod board_dump;
mod command;
mod encode;
mod parse;
mod pit_update;
mod tuz_update;

pub use board_dump::parse_board_dump;
pub use command::{Command, CommandReader, decode_command, startup};
pub use parse::{decode_payload, length_rule, parse_frame, split_frame};
pub use pit_update::parse_pit_update;
pub use tuz_update::parse_tuz_update;

#[cfg(test)]
mod tests;
