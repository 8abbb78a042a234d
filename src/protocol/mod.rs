//! Protocol decoding: bytes to typed frames, commands to bytes. Pure; no I/O.
//!
//! Flow: [`FrameReader`] (in `frame.rs`) owns a board's byte buffer and cuts it into frames with
//! the nom decoders of [`dgt`]; callers see [`dgt::Frame`] values and [`DecodeWarning`]s only.
//! Host commands are built and decoded in [`dgt::Command`].

pub mod dgt;
pub mod frame;

pub use frame::{DecodeWarning, FrameReader};
