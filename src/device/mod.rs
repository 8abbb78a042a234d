//! Devices: serial and HID links, capture files, replay of captures, recording of real boards.
//!
//! Everything here is at the edge: it reads or writes bytes and timestamps them; decoding happens
//! in `protocol`.

pub mod discover;
pub mod holders;
pub mod link;
pub mod memory;
pub mod probe;
pub mod record;
pub mod serial;

/// Which way bytes travelled (the protocol's; here for the devices' callers).
pub use crate::protocol::Direction;
