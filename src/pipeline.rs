//! One board's bytes through frame decoder, sensor state and tracker, into store writes.
//!
//! Flow: [`DgtPipeline::feed`] takes a timestamped chunk of bytes (from a serial port, a capture
//! or the emulator), keeps it raw, decodes every whole frame, folds it into the sensor state and
//! hands the board and clock to the tracker. [`DgtPipeline::take_writes`] yields what to persist,
//! raw bytes first, then the tracker's events, for one transaction, so the raw stream is never
//! behind what was decoded from it. `replay` and `run` both drive this type; only the clock and the commit policy differ.
//! Pure: no I/O and no system clock.

use tracing::{debug, warn};

use crate::{
    Millis,
    arbiter::{LawsSetup, Referee},
    device::Direction,
    game::chess::ChessGame,
    protocol::{
        FrameReader,
        dgt::{Frame, Mode},
    },
    sensor::dgt::{ClockReading, DgtBoardState},
    store::{BoardId, RawBuffer, Write},
    tracker::{Tracker, TrackerEvent, TrackerSettings},
};

/// Counters a board keeps for logs and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipelineStats {
    pub bytes_in: u64,
    pub frames: u64,
    pub decode_warnings: u64,
    pub bytes_skipped: u64,
    pub moves: u64,
}

/// A DGT board's bytes to store writes.
pub struct DgtPipeline {
    board: BoardId,
    reader: FrameReader,
    sensor: DgtBoardState,
    tracker: Tracker<ChessGame>,
    referee: Referee,
    raw: RawBuffer,
    events: Vec<TrackerEvent>,
    /// Events before this index have been through the referee.
    reviewed: usize,
    writes: Vec<Write>,
    stats: PipelineStats,
    /// The last clock reading with a usable time (for the live relay).
    last_clock: Option<ClockReading>,
    last_warning_at: Option<Millis>,
    warnings_logged: u64,
}

impl DgtPipeline {
    /// A pipeline for `board`, with a tracker and a referee (fresh, or resumed from the store).
    pub fn new(board: BoardId, tracker: Tracker<ChessGame>, referee: Referee) -> DgtPipeline {
        DgtPipeline {
            board,
            reader: FrameReader::new(Mode::Single),
            sensor: DgtBoardState::default(),
            tracker,
            referee,
            raw: RawBuffer::new(),
            events: Vec::new(),
            reviewed: 0,
            writes: Vec::new(),
            stats: PipelineStats::default(),
            last_clock: None,
            last_warning_at: None,
            warnings_logged: 0,
        }
    }

    /// A fresh pipeline with default tracker settings and the default Laws (FIDE 2023, no time
    /// control configured).
    pub fn fresh(board: BoardId) -> DgtPipeline {
        DgtPipeline::new(
            board,
            Tracker::new(TrackerSettings::default()),
            LawsSetup::default().referee(),
        )
    }

    /// Bytes that travelled at `at` in direction `dir`.
    pub fn feed(&mut self, at: Millis, dir: Direction, bytes: &[u8]) {
        self.raw.push(at, dir, bytes);
        if dir == Direction::ToBoard {
            return;
        }
        self.stats.bytes_in += bytes.len() as u64;
        self.reader.push(bytes);
        while let Some(next) = self.reader.next_frame() {
            match next {
                Ok(frame) => self.feed_frame(at, frame),
                Err(warning) => {
                    self.stats.decode_warnings += 1;
                    self.stats.bytes_skipped += warning.skipped() as u64;
                    // At most one line per second: a board talking noise must not flood the log.
                    if self.last_warning_at.is_none_or(|t| at >= t + 1000) {
                        let suppressed = self.stats.decode_warnings - self.warnings_logged - 1;
                        self.warnings_logged = self.stats.decode_warnings;
                        self.last_warning_at = Some(at);
                        warn!(at_ms = at, %warning, suppressed, "bad input from board");
                    }
                }
            }
        }
        self.tracker.tick(at, &mut self.events);
        self.collect();
    }

    /// Lets time pass without bytes (timers in `run`; never needed in `replay`).
    pub fn tick(&mut self, at: Millis) {
        self.tracker.tick(at, &mut self.events);
        self.collect();
    }

    /// Records what the tracker still holds (end of a capture, orderly shutdown).
    pub fn flush(&mut self, at: Millis) {
        self.tracker.flush(at, &mut self.events);
        self.collect();
    }

    /// The board went away: forget the sensed board until the next dump (the game goes on).
    pub fn disconnected(&mut self) {
        self.sensor.reset();
        self.reader.clear();
    }

    /// One decoded frame into the sensor state and the tracker (what `feed` does per frame).
    pub fn feed_frame(&mut self, at: Millis, frame: Frame) {
        self.stats.frames += 1;
        match frame {
            Frame::BoardDump(dump) => {
                self.sensor.apply_dump(&dump);
                self.tracker.observe(at, &self.sensor, &mut self.events);
            }
            Frame::FieldUpdate { square, piece } => {
                if self.sensor.apply_field(square, piece) && self.sensor.is_known() {
                    self.tracker.observe(at, &self.sensor, &mut self.events);
                }
            }
            Frame::BwTime(t) => {
                if let Some(reading) = ClockReading::from_bwtime(&t) {
                    self.last_clock = Some(reading);
                    self.tracker.clock(at, reading, &mut self.events);
                    // The referee's board must include what the press just recorded.
                    self.review();
                    let white_on_left = self.tracker.white_on_left();
                    self.referee
                        .clock(at, &reading, white_on_left, &mut self.events);
                    self.reviewed = self.events.len();
                }
            }
            // Identity replies (start-up, watchdog probes): worth a line in the log, nothing more.
            Frame::SerialNr(serial) => debug!(%serial, "board serial number"),
            Frame::LongSerialNr(serial) => debug!(%serial, "board long serial number"),
            Frame::Version { major, minor } => debug!(major, minor, "board firmware version"),
            other => debug!(board = self.board.0, frame = ?other, "frame not used"),
        }
    }

    /// Passes the events not yet seen through the referee.
    fn review(&mut self) {
        self.referee.review(&mut self.events, self.reviewed);
        self.reviewed = self.events.len();
    }

    fn collect(&mut self) {
        self.review();
        self.reviewed = 0;
        for event in self.events.drain(..) {
            if matches!(event, TrackerEvent::Move(_)) {
                self.stats.moves += 1;
            }
            self.writes.push(Write::Event {
                board: self.board,
                event,
            });
        }
    }

    /// Bytes kept raw and not yet taken.
    pub fn raw_pending(&self) -> usize {
        self.raw.len_bytes()
    }

    /// Number of decisions waiting to be written.
    pub fn pending_writes(&self) -> usize {
        self.writes.len()
    }

    /// Everything to persist: the raw bytes kept so far first, then the decisions made from them,
    /// for one transaction.
    pub fn take_writes(&mut self) -> Vec<Write> {
        let mut writes = Vec::with_capacity(self.writes.len() + 1);
        if let Some(block) = self.raw.take() {
            writes.push(Write::RawBlock {
                board: self.board,
                block,
            });
        }
        writes.append(&mut self.writes);
        writes
    }

    /// Puts back writes the store refused, ahead of anything newer.
    pub fn requeue(&mut self, mut writes: Vec<Write>) {
        writes.append(&mut self.writes);
        self.writes = writes;
    }

    /// The last clock reading with a usable time, if a clock has spoken.
    pub fn last_clock(&self) -> Option<ClockReading> {
        self.last_clock
    }

    /// Whether White's clock is the left-hand one, as the tracker judges it.
    pub fn white_on_left(&self) -> bool {
        self.tracker.white_on_left()
    }

    pub fn stats(&self) -> PipelineStats {
        self.stats
    }
}
