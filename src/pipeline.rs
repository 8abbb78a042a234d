//! One board's bytes through frame decoder, sensor state and tracker, into store writes.
//!
//! Flow: [`Pipeline::feed`] takes a timestamped chunk of bytes (from a serial port, a capture or
//! the emulator), keeps it raw, decodes every whole frame, folds it into the sensor state and
//! hands the board and clock to the tracker, whose events the board's [`Judge`] (the chess
//! referee, or the togyz one) annotates. [`Pipeline::take_writes`] yields what to persist, raw
//! bytes first, then the events, for one transaction, so the raw stream is never behind what was
//! decoded from it. `replay` and `run` both drive this type; only the clock and the commit policy
//! differ. One [`Board`] implementation per kind of board: [`Dgt`] chessboards ([`DgtPipeline`])
//! and [`Tgz`] pit boards ([`TgzPipeline`]). Pure: no I/O and no system clock.

use std::fmt::Debug;

use tracing::{debug, warn};

use crate::{
    Millis,
    arbiter::{Judge, LawsSetup, Referee, TogyzReferee},
    device::Direction,
    game::{GameKind, chess::ChessGame, togyz::TogyzGame},
    protocol::{
        FrameReader, Wire,
        dgt::{self, BwTime, Mode},
        tgz,
    },
    sensor::{
        Sensed,
        dgt::{ClockLayout, ClockReading, DgtBoardState},
        tgz::TgzBoardState,
    },
    store::{BoardId, RawBuffer, Write},
    tracker::{Tracker, TrackerEvent, TrackerSettings},
};

/// What a frame did to the sensor state.
pub enum Applied {
    /// The sensed board may have changed: the tracker looks.
    Board,
    /// A clock reading (DGT's BWTIME, which TGZ-1 carries unchanged).
    Clock(BwTime),
    /// Nothing for the tracker (identity replies, unknown messages: logged at debug level).
    Nothing,
}

/// One kind of board, as the pipeline sees it: its wire, sensor state, game and judge.
pub trait Board {
    type Wire: Wire<Frame = Self::Frame>;
    type Frame: Debug;
    type Game: GameKind;
    type Sensor: Sensed<<Self::Game as GameKind>::Reading> + Default;
    type Judge: Judge;

    /// The frame reader's wire.
    fn wire() -> Self::Wire;

    /// Folds `frame` into `sensor`; what it was.
    fn apply(sensor: &mut Self::Sensor, frame: Self::Frame) -> Applied;

    /// Forgets the sensed board (the board went away).
    fn reset(sensor: &mut Self::Sensor);

    /// The frames one decoded frame stands for, applied one by one (a bus update holds many
    /// field changes); most frames stand for themselves.
    fn split(frame: Self::Frame) -> Vec<Self::Frame> {
        vec![frame]
    }
}

/// A DGT electronic chessboard.
pub struct Dgt;

impl Board for Dgt {
    type Wire = Mode;
    type Frame = dgt::Frame;
    type Game = ChessGame;
    type Sensor = DgtBoardState;
    type Judge = Referee;

    fn wire() -> Mode {
        Mode::Single
    }

    fn apply(sensor: &mut DgtBoardState, frame: dgt::Frame) -> Applied {
        match frame {
            dgt::Frame::BoardDump(dump) => {
                sensor.apply_dump(&dump);
                Applied::Board
            }
            dgt::Frame::FieldUpdate { square, piece } => {
                if sensor.apply_field(square, piece) && sensor.is_known() {
                    Applied::Board
                } else {
                    Applied::Nothing
                }
            }
            dgt::Frame::BwTime(t) => Applied::Clock(t),
            // Identity replies (start-up, watchdog probes): worth a line in the log, nothing more.
            dgt::Frame::SerialNr(serial) => {
                debug!(%serial, "board serial number");
                Applied::Nothing
            }
            dgt::Frame::LongSerialNr(serial) => {
                debug!(%serial, "board long serial number");
                Applied::Nothing
            }
            dgt::Frame::Version { major, minor } => {
                debug!(major, minor, "board firmware version");
                Applied::Nothing
            }
            other => {
                debug!(frame = ?other, "frame not used");
                Applied::Nothing
            }
        }
    }

    fn reset(sensor: &mut DgtBoardState) {
        sensor.reset();
    }
}

/// A togyz korgool pit board speaking TGZ-1.
pub struct Tgz;

impl Board for Tgz {
    type Wire = tgz::Tgz;
    type Frame = tgz::Frame;
    type Game = TogyzGame;
    type Sensor = TgzBoardState;
    type Judge = TogyzReferee;

    fn wire() -> tgz::Tgz {
        tgz::Tgz
    }

    fn apply(sensor: &mut TgzBoardState, frame: tgz::Frame) -> Applied {
        let changed = match frame {
            tgz::Frame::BoardDump(dump) => {
                sensor.apply_dump(&dump);
                true
            }
            tgz::Frame::PitUpdate { location, count } => sensor.apply_pit(location, count),
            tgz::Frame::TuzUpdate { player, pit } => sensor.apply_tuz(player, pit),
            tgz::Frame::BwTime(t) => return Applied::Clock(t),
            tgz::Frame::SerialNr(serial) => {
                debug!(%serial, "board serial number");
                false
            }
            other => {
                debug!(frame = ?other, "frame not used");
                false
            }
        };
        if changed && sensor.is_known() {
            Applied::Board
        } else {
            Applied::Nothing
        }
    }

    fn reset(sensor: &mut TgzBoardState) {
        sensor.reset();
    }
}

/// The pipeline of a DGT chessboard.
pub type DgtPipeline = Pipeline<Dgt>;

/// The pipeline of a togyz korgool pit board.
pub type TgzPipeline = Pipeline<Tgz>;

/// Counters a board keeps for logs and metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipelineStats {
    pub bytes_in: u64,
    pub frames: u64,
    pub decode_warnings: u64,
    pub bytes_skipped: u64,
    pub moves: u64,
}

/// One board's bytes to store writes.
pub struct Pipeline<B: Board> {
    board: BoardId,
    reader: FrameReader<B::Wire>,
    sensor: B::Sensor,
    tracker: Tracker<B::Game>,
    judge: B::Judge,
    raw: RawBuffer,
    events: Vec<TrackerEvent>,
    /// Events before this index have been through the judge.
    reviewed: usize,
    writes: Vec<Write>,
    stats: PipelineStats,
    /// The last clock reading with a usable time (for the live relay).
    last_clock: Option<ClockReading>,
    last_warning_at: Option<Millis>,
    warnings_logged: u64,
    clock_layout: ClockLayout,
}

impl<B: Board> Pipeline<B> {
    /// A pipeline for `board`, with a tracker and a judge (fresh, or resumed from the store).
    pub fn new(board: BoardId, tracker: Tracker<B::Game>, judge: B::Judge) -> Pipeline<B> {
        Pipeline {
            board,
            reader: FrameReader::with_wire(B::wire()),
            sensor: B::Sensor::default(),
            tracker,
            judge,
            raw: RawBuffer::new(),
            events: Vec::new(),
            reviewed: 0,
            writes: Vec::new(),
            stats: PipelineStats::default(),
            last_clock: None,
            last_warning_at: None,
            warnings_logged: 0,
            clock_layout: ClockLayout::default(),
        }
    }

    /// Reads the clock's BWTIME frames in `layout` (the default is [`ClockLayout::H17`]).
    pub fn with_clock_layout(mut self, layout: ClockLayout) -> Pipeline<B> {
        self.clock_layout = layout;
        self
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
                Ok(frame) => {
                    for f in B::split(frame) {
                        self.feed_frame(at, f);
                    }
                }
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

    /// Keeps bytes raw without decoding them: a bus board's share of a shared line, whose
    /// replies the bus task folds through [`Pipeline::feed_frame`].
    pub fn keep_raw(&mut self, at: Millis, dir: Direction, bytes: &[u8]) {
        self.raw.push(at, dir, bytes);
        if dir == Direction::FromBoard {
            self.stats.bytes_in += bytes.len() as u64;
        }
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
        B::reset(&mut self.sensor);
        self.reader.clear();
    }

    /// One decoded frame into the sensor state and the tracker (what `feed` does per frame).
    pub fn feed_frame(&mut self, at: Millis, frame: B::Frame) {
        self.stats.frames += 1;
        match B::apply(&mut self.sensor, frame) {
            Applied::Board => self.tracker.observe(at, &self.sensor, &mut self.events),
            Applied::Clock(t) => {
                if let Some(reading) = ClockReading::from_bwtime_in(&t, self.clock_layout) {
                    self.last_clock = Some(reading);
                    self.tracker.clock(at, reading, &mut self.events);
                    // The judge's board must include what the press just recorded.
                    self.review();
                    let white_on_left = self.tracker.white_on_left();
                    self.judge
                        .clock(at, &reading, white_on_left, &mut self.events);
                    self.reviewed = self.events.len();
                }
            }
            Applied::Nothing => {}
        }
    }

    /// Passes the events not yet seen through the judge.
    fn review(&mut self) {
        self.judge.review(&mut self.events, self.reviewed);
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

impl Pipeline<Dgt> {
    /// A fresh pipeline with default tracker settings and the default Laws (FIDE 2023, no time
    /// control configured).
    pub fn fresh(board: BoardId) -> DgtPipeline {
        Pipeline::new(
            board,
            Tracker::new(TrackerSettings::default()),
            LawsSetup::default().referee(),
        )
    }
}

impl Pipeline<Tgz> {
    /// A fresh pipeline for a pit board under the Kyrgyz rules.
    pub fn fresh_togyz(board: BoardId) -> TgzPipeline {
        Pipeline::new(
            board,
            Tracker::new(TrackerSettings::for_game::<TogyzGame>()),
            TogyzReferee::new(crate::game::togyz::Rules::KYRGYZ),
        )
    }
}
