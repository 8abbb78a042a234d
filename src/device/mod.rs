//! Devices: serial transport, capture files, replay of captures, recording of real boards.
//!
//! Everything here is at the edge: it reads or writes bytes and timestamps them; decoding happens
//! in `protocol`.

pub mod capture;
pub mod discover;
pub mod memory;
pub mod record;
pub mod replay;
pub mod serial;

use serde::{Deserialize, Serialize};

/// Which way bytes travelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    /// From the board to the host (`<` in a capture).
    FromBoard,
    /// From the host to the board (`>` in a capture).
    ToBoard,
}
