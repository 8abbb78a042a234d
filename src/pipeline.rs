//! One board's bytes through frame decoder, sensor state and tracker, into store writes.
//!
//! Flow: [`Pipeline::feed`] takes a timestamped chunk of bytes (from a serial port, a capture or
//! the emulator), keeps it raw, decodes every whole frame, folds it into the sensor state and
//! hands the board and clock to the tracker, whose events the board's [`Judge`] (the chess
//! referee, or the togyz one) annotates. [`Pipeline::take_writes`] yields what to persist, raw
//! bytes first, then the events, for one transaction, so the raw stream is never behind what was
//! decoded from it. A batch the store refused comes back through [`Pipeline::requeue`]: its
//! events go ahead of newer ones, its raw blocks into a backlog held up to [`RAW_BOUND`] bytes
//! (reads beyond it are dropped, counted and marked; events are never dropped).
//! After a gap ([`Pipeline::disconnected`], or a resumed game) the board's memory, where it keeps
//! one, is asked for ([`Pipeline::wants_memory`]; the I/O edge sends the request) and the plies it
//! holds after the record go through the tracker ([`Board::from_memory`], `Tracker::recover`).
//! `replay` and `run` both drive this type; only the clock and the commit policy differ. One [`Board`] implementation per kind of board: [`Dgt`] chessboards ([`DgtPipeline`])
//! and [`Tgz`] pit boards ([`TgzPipeline`]). Pure: no I/O and no system clock.

use std::fmt::Debug;

use tracing::{debug, info, warn};

use crate::{
    Millis,
    arbiter::{Judge, LawsSetup, Referee, TogyzReferee},
    device::memory::{self, Continuation, MemoryError, Recording},
    game::{GameKind, chess::ChessGame, togyz::TogyzGame},
    protocol::{
        Direction, FrameReader, Wire,
        dgt::{self, BwTime, Mode},
        tgz,
    },
    sensor::{
        Sensed,
        dgt::{ClockLayout, ClockReading, DgtBoardState},
        tgz::TgzBoardState,
    },
    store::{BoardId, RawBlock, RawBuffer, Write},
    tracker::{RecordedMove, Side, Tracker, TrackerEvent, TrackerSettings},
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

/// What a frame did to the sensor state.
pub enum Applied {
    /// The sensed board may have changed: the tracker looks.
    Board,
    /// A clock reading (DGT's BWTIME, which TGZ-1 carries unchanged).
    Clock(BwTime),
    /// The board's memory (a DGT board's EEPROM log, DGT_MSG_EE_MOVES), asked for after a gap.
    Memory(Vec<u8>),
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

    /// Whether the board keeps a log of what was done on it that [`Board::from_memory`] reads
    /// (asked for after every gap).
    const HAS_MEMORY: bool = false;

    /// The plies the board's memory `log` holds after the recording's plies, with the clocks
    /// memory holds.
    fn from_memory(log: &[u8], recording: &Recording) -> Result<Continuation, MemoryError> {
        let _ = (log, recording);
        Err(MemoryError::NoMemory)
    }

    /// The frames one decoded frame read at `at` stands for, each with the time it is applied
    /// at, one by one (a bus update holds many field changes, and lever changes between them,
    /// read against `sensor` and the clock's `layout`); most frames stand for themselves, at `at`.
    fn split(
        sensor: &mut Self::Sensor,
        layout: ClockLayout,
        at: Millis,
        frame: Self::Frame,
    ) -> Vec<(Millis, Self::Frame)> {
        let _ = (sensor, layout);
        vec![(at, frame)]
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
            dgt::Frame::EeMoves(log) => Applied::Memory(log),
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

    const HAS_MEMORY: bool = true;

    fn from_memory(log: &[u8], recording: &Recording) -> Result<Continuation, MemoryError> {
        memory::continuation(log, recording)
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
    /// Games begun on the board (a game resumed from the store is not one).
    pub games: u64,
    /// Raw bytes (and reads) dropped beyond [`RAW_BOUND`] while the store refused writes.
    pub raw_bytes_dropped: u64,
    pub raw_reads_dropped: u64,
}

/// One board's bytes to store writes.
pub struct Pipeline<B: Board> {
    board: BoardId,
    reader: FrameReader<B::Wire>,
    sensor: B::Sensor,
    tracker: Tracker<B::Game>,
    judge: B::Judge,
    raw: RawBuffer,
    /// Raw blocks the store refused, oldest first, and their encoded size.
    raw_backlog: Vec<RawBlock>,
    raw_backlog_bytes: usize,
    raw_bound: usize,
    /// The reads being dropped beyond the bound, if any.
    raw_gap: Option<Gap>,
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
    /// The latest time the tracker was given: a split frame is never applied before it (a bus
    /// board's changes are stamped with its previous read, which ticks may have passed).
    latest: Millis,
    /// Board memory since the last gap: asked for (when), and whether it came; and how many
    /// times it was read since the gap.
    memory: MemoryRead,
    memory_reads: u32,
}

/// How many times board memory is read after one gap: once when the board is heard again, and
/// again while the board stays lost (the moves made during a read, or a hand still moving).
pub const MEMORY_READS_PER_GAP: u32 = 3;

/// A board still lost this long after it was heard again and after the last read has its
/// memory read again (before `thread_lost` is raised).
const REREAD_AFTER_MS: Millis = 1_000;

/// Board memory, read after each gap (see [`Pipeline::wants_memory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemoryRead {
    /// Not asked for since the last gap.
    Due,
    /// Asked for at this time, not answered yet.
    Asked(Millis),
    /// Answered, or given up on, at this time.
    Done(Millis),
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
            raw_backlog: Vec::new(),
            raw_backlog_bytes: 0,
            raw_bound: RAW_BOUND,
            raw_gap: None,
            events: Vec::new(),
            reviewed: 0,
            writes: Vec::new(),
            stats: PipelineStats::default(),
            last_clock: None,
            last_warning_at: None,
            warnings_logged: 0,
            clock_layout: ClockLayout::default(),
            latest: 0,
            memory: MemoryRead::Due,
            memory_reads: 0,
        }
    }

    /// Reads the clock's BWTIME frames in `layout` (the default is [`ClockLayout::H17`]).
    pub fn with_clock_layout(mut self, layout: ClockLayout) -> Pipeline<B> {
        self.clock_layout = layout;
        self
    }

    /// Holds at most `bytes` of raw reads while the store refuses them (default [`RAW_BOUND`]).
    pub fn with_raw_bound(mut self, bytes: usize) -> Pipeline<B> {
        self.raw_bound = bytes;
        self
    }

    /// Bytes that travelled at `at` in direction `dir`.
    pub fn feed(&mut self, at: Millis, dir: Direction, bytes: &[u8]) {
        self.hold_raw(at, dir, bytes);
        if dir == Direction::ToBoard {
            return;
        }
        self.stats.bytes_in += bytes.len() as u64;
        self.reader.push(bytes);
        while let Some(next) = self.reader.next_frame() {
            match next {
                Ok(frame) => {
                    self.feed_split(at, frame);
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
        self.latest = self.latest.max(at);
        self.tracker.tick(at, &mut self.events);
        self.collect();
    }

    /// Keeps bytes raw without decoding them: a bus board's share of a shared line, whose
    /// replies the bus task folds through [`Pipeline::feed_frame`].
    pub fn keep_raw(&mut self, at: Millis, dir: Direction, bytes: &[u8]) {
        self.hold_raw(at, dir, bytes);
        if dir == Direction::FromBoard {
            self.stats.bytes_in += bytes.len() as u64;
        }
    }

    /// Lets time pass without bytes (timers in `run`; never needed in `replay`).
    pub fn tick(&mut self, at: Millis) {
        self.latest = self.latest.max(at);
        self.tracker.tick(at, &mut self.events);
        self.collect();
    }

    /// Records what the tracker still holds (end of a capture, orderly shutdown).
    pub fn flush(&mut self, at: Millis) {
        self.tracker.flush(at, &mut self.events);
        self.collect();
    }

    /// The board went away at `at`: the sensed board is forgotten until the next dump, and the
    /// game goes on from its record once the board is heard again (a gap: its memory is asked
    /// for, where it has one).
    pub fn disconnected(&mut self, at: Millis) {
        B::reset(&mut self.sensor);
        self.reader.clear();
        self.tracker.gap(at);
        self.memory = MemoryRead::Due;
        self.memory_reads = 0;
    }

    /// The arbiter changed the record of the game in progress (resumed it after a ply, corrected
    /// a move): `moves` are its live moves as the store now holds them. The tracker and the
    /// judge go on from them as after a gap (the board's memory is not read: the arbiter's
    /// record stands). Returns whether the tracker took them.
    pub fn rebase(&mut self, at: Millis, moves: &[RecordedMove], how: &str) -> bool {
        if !self.tracker.rebase(at, moves, how, &mut self.events) {
            return false;
        }
        let start = self.tracker.game_start_text();
        self.judge.rebase(start.as_deref(), moves);
        self.memory = MemoryRead::Done(at);
        self.memory_reads = MEMORY_READS_PER_GAP;
        // The board as it is now, against the new record (a move finished meanwhile is one
        // move from it; it will not change again before it is pressed).
        if self.sensor.is_known() {
            self.tracker.observe(at, &self.sensor, &mut self.events);
        }
        self.collect();
        true
    }

    /// Whether the board has been lost after a gap long enough for `thread_lost` (it waits
    /// for the board to fit the record, or for the arbiter).
    pub fn thread_lost(&self) -> bool {
        self.tracker.thread_lost()
    }

    /// Whether the board's memory should be read now: after a gap (a reconnect, a restart with
    /// an open game) while the record may lag the board, and again while the board stays lost
    /// a second after it was heard and read, up to [`MEMORY_READS_PER_GAP`] times.
    pub fn wants_memory(&self) -> bool {
        B::HAS_MEMORY
            && self.tracker.is_lost()
            && self.memory_reads < MEMORY_READS_PER_GAP
            && match self.memory {
                MemoryRead::Due => true,
                // Lost for a second since the board was heard and the last read: read again
                // before the arbiter is alerted.
                MemoryRead::Done(done) => self
                    .tracker
                    .unexplained_since()
                    .is_some_and(|t| self.latest >= t.max(done).saturating_add(REREAD_AFTER_MS)),
                MemoryRead::Asked(_) => false,
            }
    }

    /// The memory was asked for at `at`.
    pub fn memory_asked(&mut self, at: Millis) {
        self.memory = MemoryRead::Asked(at);
        self.memory_reads += 1;
    }

    /// Whether memory was asked for and has not come yet.
    pub fn awaiting_memory(&self) -> bool {
        matches!(self.memory, MemoryRead::Asked(_))
    }

    /// Memory asked for did not come (the board has none, or the reply was lost): the board is
    /// searched instead.
    pub fn memory_not_read(&mut self, why: &str) {
        if let MemoryRead::Asked(since) = self.memory {
            warn!(
                asked_at_ms = since,
                why, "the board's memory could not be read"
            );
        }
        self.memory = MemoryRead::Done(self.latest);
    }

    /// Whether the sensed board fits what the tracker believes (no piece in the hand, nothing
    /// unexplained).
    pub fn board_fits(&self) -> bool {
        self.tracker.board_fits()
    }

    /// Whether White's clock is the left-hand one, once settled ([`Tracker::clock_side`]).
    pub fn clock_side(&self) -> Option<bool> {
        self.tracker.clock_side()
    }

    /// Who is to move on the board as the tracker believes it ([`Tracker::side_to_move`]).
    pub fn side_to_move(&self) -> Option<Side> {
        self.tracker.side_to_move()
    }

    /// The board's memory came: the plies it holds after the record go through the tracker.
    fn recover_from_memory(&mut self, at: Millis, log: &[u8]) {
        let asked = std::mem::replace(&mut self.memory, MemoryRead::Done(at));
        if !matches!(asked, MemoryRead::Asked(_)) || !self.tracker.is_lost() {
            debug!("board memory not asked for, or not needed: not used");
            return;
        }
        let Some(orientation) = self.tracker.orientation() else {
            return;
        };
        let record = self.tracker.record_text();
        let clocks = self.tracker.record_clocks();
        let start = self.tracker.game_start_text();
        let recording = Recording {
            start: start.as_deref(),
            orientation,
            variant: self.tracker.variant(),
            white_on_left: self.tracker.clock_side(),
            record: &record,
            clocks: &clocks,
        };
        match B::from_memory(log, &recording) {
            Ok(found) => {
                let n = self
                    .tracker
                    .recover(at, &found.recorded, &found.in_hand, &mut self.events);
                info!(
                    recorded = record.len(),
                    in_memory = found.recorded.len(),
                    in_hand = found.in_hand.len(),
                    recovered = n,
                    "board memory read after a gap"
                );
            }
            Err(e) => warn!(cause = %e, "board memory read after a gap does not help"),
        }
    }

    /// One decoded frame, split into the frames it stands for ([`Board::split`]), into the
    /// sensor state and the tracker (what `feed` does per frame).
    pub fn feed_split(&mut self, at: Millis, frame: B::Frame) {
        for (t, f) in B::split(&mut self.sensor, self.clock_layout, at, frame) {
            self.feed_frame(t.max(self.latest), f);
        }
    }

    /// One frame into the sensor state and the tracker, as it is.
    pub fn feed_frame(&mut self, at: Millis, frame: B::Frame) {
        self.latest = self.latest.max(at);
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
            Applied::Memory(log) => self.recover_from_memory(at, &log),
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
            match event {
                TrackerEvent::Move(_) => self.stats.moves += 1,
                TrackerEvent::GameStarted { .. } => self.stats.games += 1,
                _ => {}
            }
            self.writes.push(Write::Event {
                board: self.board,
                event,
            });
        }
    }

    /// Keeps a read raw, unless the bound is reached (see [`RAW_BOUND`]).
    fn hold_raw(&mut self, at: Millis, dir: Direction, bytes: &[u8]) {
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
        self.stats.raw_bytes_dropped += bytes.len() as u64;
        self.stats.raw_reads_dropped += 1;
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

    /// Raw bytes held and not yet taken (refused blocks included).
    pub fn raw_pending(&self) -> usize {
        self.raw.len_bytes() + self.raw_backlog_bytes
    }

    /// Number of decisions waiting to be written.
    pub fn pending_writes(&self) -> usize {
        self.writes.len()
    }

    /// Everything to persist: the raw bytes kept so far first (oldest first), then the decisions
    /// made from them, for one transaction.
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
    /// backlog (the next [`Pipeline::take_writes`] yields them first), the rest ahead of newer
    /// decisions.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::capture::parse_capture;

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
        let mut p = Pipeline::fresh(BoardId(1));
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
