//! Protocol decoding: bytes to typed frames, commands to bytes. Pure; no I/O.
//!
//! Flow: [`FrameReader`] (in `frame.rs`) owns a board's byte buffer and cuts it into frames with
//! the nom decoders of [`dgt`] (or, with the [`tgz::Tgz`] wire, of [`tgz`], the pit board on the
//! same framing); callers see [`dgt::Frame`] / [`tgz::Frame`] values and [`DecodeWarning`]s only.
//! Host commands are built and decoded in [`dgt::Command`] and [`tgz::Command`]. The other
//! vendors' protocols own their framing: [`chesslink`] is the Millennium boards' ASCII protocol
//! ([`chesslink::ChessLink`] wire), [`chessnut`] the Chessnut boards' USB HID reports
//! ([`chessnut::Chessnut`] wire), [`certabo`] the ASCII records of Certabo and Tabutronic RFID
//! boards ([`certabo::Certabo`] wire, [`certabo::HostCommand`]), [`ichessone`] the iChessOne
//! boards' position messages ([`ichessone::IChessOne`] wire), commands included. [`hid`]
//! reads a USB HID report descriptor, for every HID kind.

pub mod certabo;
pub mod chesslink;
pub mod chessnut;
pub mod dgt;
pub mod frame;
pub mod hid;
pub mod ichessone;
pub mod tgz;

pub use frame::{DecodeWarning, FrameReader, Wire};

use serde::{Deserialize, Serialize};

/// Which way bytes travelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    /// From the board to the host (`<` in a capture).
    FromBoard,
    /// From the host to the board (`>` in a capture).
    ToBoard,
}
