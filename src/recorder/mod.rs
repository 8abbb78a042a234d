//! The record side of one board: its pure [`Pipeline`] and its [`Outbox`] to the store.
//!
//! Flow: a read goes into the outbox raw and through the pipeline; what the pipeline judged is
//! tagged with the board's id in the outbox when the writes are taken
//! ([`Recorder::take_writes`]), and what it noticed is logged here, in the board's span
//! ([`log_notice`]). The board task, the bus task, `replay` and the board-memory import all
//! record through this type; everything else is the pipeline's (a recorder derefs to it).

pub mod outbox;

use tracing::{debug, info, warn};

pub use outbox::{Outbox, RAW_BOUND, RawDropped};

use crate::{
    Millis,
    pipeline::{Board, Dgt, Notice, Pipeline, PipelineStats, Tgz},
    protocol::Direction,
    store::{BoardId, Write},
};

/// One board's pipeline and its outbox.
pub struct Recorder<B: Board> {
    /// The board's pipeline: ticks, gaps, memory and what the tracker believes go straight to it.
    pub pipeline: Pipeline<B>,
    outbox: Outbox,
}

/// What a board's recorder counted: the pipeline's counters and the raw bytes the outbox dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecorderStats {
    pub pipeline: PipelineStats,
    pub raw_bytes_dropped: u64,
    pub raw_reads_dropped: u64,
}

impl<B: Board> Recorder<B> {
    /// The recorder of `board`, through `pipeline`.
    pub fn new(board: BoardId, pipeline: Pipeline<B>) -> Recorder<B> {
        Recorder {
            pipeline,
            outbox: Outbox::new(board),
        }
    }

    /// Holds at most `bytes` of raw reads while the store refuses them (default [`RAW_BOUND`]).
    pub fn with_raw_bound(mut self, bytes: usize) -> Recorder<B> {
        self.outbox = self.outbox.with_raw_bound(bytes);
        self
    }

    /// Bytes that travelled at `at` in direction `dir`: kept raw, and decoded.
    pub fn feed(&mut self, at: Millis, dir: Direction, bytes: &[u8]) {
        self.outbox.hold_raw(at, dir, bytes);
        self.pipeline.feed(at, dir, bytes);
        self.log_notices();
    }

    /// Keeps bytes raw without decoding them: a bus board's share of a shared line, whose
    /// replies the bus task folds through [`Pipeline::feed_frame`].
    pub fn keep_raw(&mut self, at: Millis, dir: Direction, bytes: &[u8]) {
        self.outbox.hold_raw(at, dir, bytes);
        self.pipeline.count_raw(dir, bytes);
    }

    /// Everything to persist: the raw bytes kept so far first (oldest first), then the events
    /// judged from them, for one transaction.
    pub fn take_writes(&mut self) -> Vec<Write> {
        self.log_notices();
        self.outbox.push_events(self.pipeline.take_events());
        self.outbox.take_writes()
    }

    /// The board was opened (`connected`) or lost at `at_ms`: kept with the record, after the
    /// events judged so far (a hall tells the event node; the store keeps each board's links).
    pub fn link(&mut self, at_ms: Millis, connected: bool) {
        self.outbox.push_events(self.pipeline.take_events());
        self.outbox.push_link(at_ms, connected);
    }

    /// Puts back writes the store refused, ahead of anything newer ([`Outbox::requeue`]).
    pub fn requeue(&mut self, writes: Vec<Write>) {
        self.outbox.requeue(writes);
    }

    /// Number of events waiting to be written.
    pub fn pending_writes(&self) -> usize {
        self.pipeline.pending_events() + self.outbox.pending_writes()
    }

    /// Raw bytes held and not yet taken (refused blocks included).
    pub fn raw_pending(&self) -> usize {
        self.outbox.raw_pending()
    }

    pub fn stats(&self) -> RecorderStats {
        let dropped = self.outbox.dropped();
        RecorderStats {
            pipeline: self.pipeline.stats(),
            raw_bytes_dropped: dropped.bytes,
            raw_reads_dropped: dropped.reads,
        }
    }

    /// Logs the pipeline's notices; what the sensor learnt of the board also goes to the store.
    fn log_notices(&mut self) {
        // Most reads notice nothing: their list is not taken (nor given back empty).
        if !self.pipeline.has_notices() {
            return;
        }
        for notice in self.pipeline.take_notices() {
            log_notice(&notice);
            if let Notice::Learnt(l) = notice {
                self.outbox.push_events(self.pipeline.take_events());
                self.outbox.push_learnt(B::KIND.name(), l.what, l.text);
            }
        }
    }
}

impl Recorder<Dgt> {
    /// A fresh DGT chessboard's recorder ([`Pipeline::fresh`]).
    pub fn fresh(board: BoardId) -> Recorder<Dgt> {
        Recorder::new(board, Pipeline::fresh())
    }
}

impl Recorder<Tgz> {
    /// A fresh pit board's recorder ([`Pipeline::fresh_togyz`]).
    pub fn fresh_togyz(board: BoardId) -> Recorder<Tgz> {
        Recorder::new(board, Pipeline::fresh_togyz())
    }
}

/// A recorder is its board's pipeline with an outbox beside it: what is not about the outbox
/// (ticks, gaps, memory, what the tracker believes) is the pipeline's.
impl<B: Board> std::ops::Deref for Recorder<B> {
    type Target = Pipeline<B>;

    fn deref(&self) -> &Pipeline<B> {
        &self.pipeline
    }
}

impl<B: Board> std::ops::DerefMut for Recorder<B> {
    fn deref_mut(&mut self) -> &mut Pipeline<B> {
        &mut self.pipeline
    }
}

/// The recorder of a DGT chessboard.
pub type DgtRecorder = Recorder<Dgt>;

/// Logs one notice at its level, with its values as fields.
pub fn log_notice(notice: &Notice) {
    match notice {
        Notice::Identity { what, value } => debug!(%value, "board {what}"),
        Notice::FrameNotUsed(frame) => debug!(?frame, "frame not used"),
        Notice::BadInput {
            at_ms,
            warning,
            suppressed,
        } => warn!(at_ms, %warning, suppressed, "bad input from board"),
        Notice::MemoryNotNeeded => debug!("board memory not asked for, or not needed: not used"),
        Notice::MemoryRead {
            recorded,
            in_memory,
            in_hand,
            recovered,
        } => info!(
            recorded,
            in_memory, in_hand, recovered, "board memory read after a gap"
        ),
        Notice::MemoryUseless { cause, in_a_row: 1 } => {
            warn!(%cause, "board memory read after a gap does not help")
        }
        Notice::MemoryUseless { cause, in_a_row } => {
            debug!(%cause, in_a_row, "board memory read again after a gap: no help yet")
        }
        Notice::MemoryNotRead { asked_at_ms, why } => {
            warn!(asked_at_ms, %why, "the board's memory could not be read")
        }
        Notice::Judge(n) => warn!("{n}"),
        Notice::Learnt(l) => info!(what = l.what, how = %l.how, "the board's {} learnt", l.what),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{capture::parse_capture, store::RawBlock, tracker::TrackerEvent};

    const CAPTURE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/captures/dgt-arnsholt/1.capture"
    );

    /// The raw chunks and the moves (UCI) of `writes`, in order.
    fn split(writes: &[Write]) -> (Vec<RawBlock>, Vec<String>) {
        let mut raw = Vec::new();
        let mut moves = Vec::new();
        for w in writes {
            match w {
                Write::RawBlock { block, .. } => raw.push(block.clone()),
                Write::Event {
                    event: TrackerEvent::Move(m),
                    ..
                } => moves.push(m.uci.clone().unwrap()),
                _ => {}
            }
        }
        (raw, moves)
    }

    #[test]
    fn refused_writes_come_back_first_raw_oldest_first() {
        let capture = parse_capture(&std::fs::read_to_string(CAPTURE).unwrap()).unwrap();
        let (first, second) = capture.chunks.split_at(capture.chunks.len() / 2);
        let mut p = Recorder::fresh(BoardId(1));
        for c in first {
            p.feed(c.t_ms, c.dir, &c.bytes);
        }
        let refused = p.take_writes();
        let (refused_raw, refused_moves) = split(&refused);
        assert!(!refused_moves.is_empty());
        p.requeue(refused);
        for c in second {
            p.feed(c.t_ms, c.dir, &c.bytes);
        }
        let newer = p.take_writes();
        let (raw, moves) = split(&newer);
        // Raw blocks first, the refused one ahead; then the refused moves ahead of newer ones.
        assert!(matches!(newer[0], Write::RawBlock { .. }));
        assert!(matches!(newer[1], Write::RawBlock { .. }));
        assert_eq!(raw[0], refused_raw[0]);
        assert_eq!(raw[1].t_ms(), second[0].t_ms);
        assert_eq!(moves[..refused_moves.len()], refused_moves[..]);
        assert!(moves.len() > refused_moves.len());
        assert_eq!(p.raw_pending(), 0);
        assert_eq!(p.stats().raw_bytes_dropped, 0);
    }
}
