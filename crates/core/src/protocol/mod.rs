//! Protocol decoding: bytes to typed frames, commands to bytes. Pure; no I/O.
//!
//! Flow: [`FrameReader`] (in `frame.rs`) owns a board's byte buffer and cuts it into frames with
//! the nom decoders of [`dgt`] (or, with the [`tgz::Tgz`] wire, of [`tgz`], the pit board on the
//! same framing; with the [`certabo::Certabo`] wire, of [`certabo`], the ASCII records of
//! Certabo and Tabutronic RFID boards); callers see [`dgt::Frame`] / [`tgz::Frame`] /
//! [`certabo::Frame`] values and [`DecodeWarning`]s only.
//! Host commands are built and decoded in [`dgt::Command`], [`tgz::Command`] and
//! [`certabo::HostCommand`].

pub mod certabo;
pub mod dgt;
pub mod frame;
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
