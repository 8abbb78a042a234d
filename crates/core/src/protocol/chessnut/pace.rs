//! Timing rules of the Chessnut wire, kept pure: the de-duplication of the position the board
//! repeats every ~200 ms, and the 200 ms gap between writes.
//!
//! Flow: each decoded position goes through [`Dedup::observe`], which says whether it changed
//! anything; before each write the device layer asks [`Pacer::wait`] how long to hold it, and
//! after writing it tells [`Pacer::wrote`]. Time is an argument ([`Millis`]), never read here.

use super::WirePlacement;
use crate::Millis;

/// The least time between two writes: the vendor's SDK sleeps until 200 ms have passed since
/// the last write (\[EL\] `WRITE_INTERVAL`).
pub const WRITE_GAP_MS: Millis = 200;

/// Keeps the last placement and says whether a report changed anything.
///
/// Only the squares count: the bytes after them may change on their own (over BLE they carry
/// an uptime counter, \[DU\]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dedup {
    last: Option<WirePlacement>,
}

impl Dedup {
    pub fn new() -> Dedup {
        Dedup::default()
    }

    /// Takes a reported placement; `true` when it differs from the last one (or is the first).
    pub fn observe(&mut self, placement: &WirePlacement) -> bool {
        let changed = self.last.as_ref() != Some(placement);
        self.last = Some(*placement);
        changed
    }

    /// The last placement observed.
    pub fn last(&self) -> Option<&WirePlacement> {
        self.last.as_ref()
    }

    /// Forgets the last placement (e.g. after the board was reopened): the next one is new.
    pub fn reset(&mut self) {
        self.last = None;
    }
}

/// Spaces writes at least [`WRITE_GAP_MS`] apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacer {
    last_write: Option<Millis>,
}

impl Pacer {
    pub fn new() -> Pacer {
        Pacer::default()
    }

    /// A pacer whose last write went at `at`.
    pub fn after(at: Millis) -> Pacer {
        Pacer {
            last_write: Some(at),
        }
    }

    /// The earliest time the next write may go (0 before any write).
    pub fn next_at(&self) -> Millis {
        self.last_write
            .map_or(0, |t| t.saturating_add(WRITE_GAP_MS))
    }

    /// How long to hold a write wanted at `now`: 0 when it may go. A clock that stepped back
    /// (`now` before the last write) takes the last write back with it to `now`, so the wait
    /// never exceeds [`WRITE_GAP_MS`] and ends.
    pub fn wait(&mut self, now: Millis) -> Millis {
        if let Some(last) = self.last_write.as_mut() {
            *last = (*last).min(now);
        }
        self.next_at().saturating_sub(now)
    }

    /// Whether a write may go at `now` (see [`Pacer::wait`]).
    pub fn ready(&mut self, now: Millis) -> bool {
        self.wait(now) == 0
    }

    /// Notes that a write went at `at`.
    pub fn wrote(&mut self, at: Millis) {
        self.last_write = Some(at);
    }

    /// When the last write went, if any.
    pub fn last_write(&self) -> Option<Millis> {
        self.last_write
    }
}
