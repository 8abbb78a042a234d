//! A board's outbox: what its pipeline decided and the raw bytes it was decided from, waiting for
//! the store, with the store's back-pressure.
//!
//! Flow: every read is kept raw ([`Outbox::hold_raw`], into a [`RawBuffer`]) and every event the
//! pipeline judged is tagged with the board's id ([`Outbox::push_events`]).
//! [`Outbox::take_writes`] yields what to persist, raw bytes first, then the events, for one
//! transaction, so the raw stream is never behind what was decoded from it. A batch the store
//! refused comes back through [`Outbox::requeue`]: its events go ahead of newer ones, its raw
//! blocks into a backlog held up to [`RAW_BOUND`] bytes (reads beyond it are dropped, counted and
//! marked; events are never dropped). No I/O; the gap in the raw stream is logged here.

use tracing::warn;

use crate::{
    Millis,
    protocol::Direction,
    store::{BoardId, RawBlock, RawBuffer, Write},
    tracker::TrackerEvent,
};

/// Raw bytes a board holds in memory while the store refuses them (a full disk): 8 MiB, hours of
/// a board's bytes (a DGT board sends well under 1 KiB/s), 512 MiB for 64 boards at worst.
///
/// Beyond it the newest reads are dropped, whole, and the oldest kept: what is held joins on to
/// what is already stored, so the stored stream has one gap, at the first dropped read, marked
/// there by an empty read ([`crate::store::raw`]: a port never yields one) and ending when the
/// store has taken the backlog. The moves and events are kept whatever the bound.
pub const RAW_BOUND: usize = 8 << 20;

/// Headroom for one read's varints beyond its bytes, when checking the bound.
const READ_OVERHEAD: usize = 20;

/// A run of raw reads dropped beyond the bound.
#[derive(Clone, Copy, Debug)]
struct Gap {
    from_ms: Millis,
    bytes: u64,
    reads: u64,
}

/// Raw bytes (and reads) dropped beyond the bound while the store refused writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawDropped {
    pub bytes: u64,
    pub reads: u64,
}

/// One board's writes waiting for the store.
pub struct Outbox {
    board: BoardId,
    raw: RawBuffer,
    /// Raw blocks the store refused, oldest first, and their encoded size.
    raw_backlog: Vec<RawBlock>,
    raw_backlog_bytes: usize,
    raw_bound: usize,
    /// The reads being dropped beyond the bound, if any.
    raw_gap: Option<Gap>,
    writes: Vec<Write>,
    dropped: RawDropped,
}

impl Outbox {
    /// An empty outbox for `board`, holding at most [`RAW_BOUND`] raw bytes.
    pub fn new(board: BoardId) -> Outbox {
        Outbox {
            board,
            raw: RawBuffer::new(),
            raw_backlog: Vec::new(),
            raw_backlog_bytes: 0,
            raw_bound: RAW_BOUND,
            raw_gap: None,
            writes: Vec::new(),
            dropped: RawDropped::default(),
        }
    }

    /// Holds at most `bytes` of raw reads while the store refuses them (default [`RAW_BOUND`]).
    pub fn with_raw_bound(mut self, bytes: usize) -> Outbox {
        self.raw_bound = bytes;
        self
    }

    /// Keeps a read raw, unless the bound is reached (see [`RAW_BOUND`]).
    pub fn hold_raw(&mut self, at: Millis, dir: Direction, bytes: &[u8]) {
        if let Some(gap) = self.raw_gap
            && self.raw_backlog.is_empty()
            && self.raw.is_empty()
        {
            // The store took everything held: the gap ends here.
            self.raw_gap = None;
            warn!(
                from_ms = gap.from_ms,
                to_ms = at,
                dropped_bytes = gap.bytes,
                dropped_reads = gap.reads,
                "raw bytes are kept again; the stored capture has a gap (marked by an empty read)"
            );
        }
        let held = self.raw_pending();
        if self.raw_gap.is_none() && held + bytes.len() + READ_OVERHEAD <= self.raw_bound {
            self.raw.push(at, dir, bytes);
            return;
        }
        self.dropped.bytes += bytes.len() as u64;
        self.dropped.reads += 1;
        match &mut self.raw_gap {
            Some(gap) => {
                gap.bytes += bytes.len() as u64;
                gap.reads += 1;
            }
            None => {
                warn!(
                    at_ms = at,
                    bound_bytes = self.raw_bound,
                    "the store refuses writes and this board holds all the raw bytes it may: \
                     newer raw bytes are dropped until the store takes them (moves are kept)"
                );
                self.raw.push(at, Direction::FromBoard, &[]);
                self.raw_gap = Some(Gap {
                    from_ms: at,
                    bytes: bytes.len() as u64,
                    reads: 1,
                });
            }
        }
    }

    /// The pipeline's events, in order, after those already waiting.
    pub fn push_events(&mut self, events: Vec<TrackerEvent>) {
        let board = self.board;
        self.writes.extend(
            events
                .into_iter()
                .map(|event| Write::Event { board, event }),
        );
    }

    /// The board was opened (`connected`) or lost at `at_ms`, after what waits already.
    pub fn push_link(&mut self, at_ms: Millis, connected: bool) {
        self.writes.push(Write::Link {
            board: self.board,
            at_ms,
            connected,
        });
    }

    /// What the board's sensor learnt of it, to keep per board and kind.
    pub fn push_learnt(&mut self, kind: &'static str, what: &'static str, text: String) {
        self.writes.push(Write::Learnt {
            board: self.board,
            kind,
            what,
            text,
        });
    }

    /// Raw bytes held and not yet taken (refused blocks included).
    pub fn raw_pending(&self) -> usize {
        self.raw.len_bytes() + self.raw_backlog_bytes
    }

    /// Number of events waiting to be written.
    pub fn pending_writes(&self) -> usize {
        self.writes.len()
    }

    /// Raw bytes and reads dropped beyond the bound so far.
    pub fn dropped(&self) -> RawDropped {
        self.dropped
    }

    /// Everything to persist: the raw bytes kept so far first (oldest first), then the events
    /// decided from them, for one transaction.
    pub fn take_writes(&mut self) -> Vec<Write> {
        let mut writes = Vec::with_capacity(self.raw_backlog.len() + self.writes.len() + 1);
        self.raw_backlog_bytes = 0;
        for block in self.raw_backlog.drain(..) {
            writes.push(Write::RawBlock {
                board: self.board,
                block,
            });
        }
        if let Some(block) = self.raw.take() {
            writes.push(Write::RawBlock {
                board: self.board,
                block,
            });
        }
        writes.append(&mut self.writes);
        writes
    }

    /// Puts back writes the store refused, ahead of anything newer: raw blocks into the raw
    /// backlog (the next [`Outbox::take_writes`] yields them first), the rest ahead of newer
    /// events.
    pub fn requeue(&mut self, writes: Vec<Write>) {
        let mut kept = Vec::with_capacity(writes.len() + self.writes.len());
        for w in writes {
            match w {
                Write::RawBlock { board, block } if board == self.board => {
                    self.raw_backlog_bytes += block.encoded().len();
                    self.raw_backlog.push(block);
                }
                other => kept.push(other),
            }
        }
        kept.append(&mut self.writes);
        self.writes = kept;
    }
}
