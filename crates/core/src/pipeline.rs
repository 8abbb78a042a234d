//! One board's bytes through frame decoder, sensor state and tracker, into the events of its record.
//!
//! Flow: [`Pipeline::feed`] takes a timestamped chunk of bytes (from a serial port, a capture or
//! the emulator), decodes every whole frame, folds it into the sensor state and hands the board
//! and clock to the tracker, whose events the board's [`Judge`] (the chess referee, or the togyz
//! one) annotates. [`Pipeline::take_events`] yields them, in order; what the record side does with
//! them (keeping the raw bytes beside them, persisting, back-pressure) is not this module's
//! concern. What is worth a log line comes out as [`Notice`] values
//! ([`Pipeline::take_notices`]) for the edge to log: nothing here logs.
//! After a gap ([`Pipeline::disconnected`], or a resumed game) the board's memory, where it keeps
//! one, is asked for ([`Pipeline::wants_memory`]; the I/O edge sends the request) and the plies it
//! holds after the record go through the tracker ([`Board::from_memory`], `Tracker::recover`).
//! `replay` and `run` both drive this type; only the clock and the commit policy differ. One
//! [`Board`] implementation per kind of board: [`Dgt`] chessboards ([`DgtPipeline`]) and [`Tgz`]
//! pit boards ([`TgzPipeline`]). Pure: no I/O and no system clock.

use std::fmt::Debug;

use crate::{
    Millis,
    arbiter::{Judge, JudgeNotice, LawsSetup, Referee, TogyzReferee},
    game::{GameKind, chess::ChessGame, togyz::TogyzGame},
    kind::{BoardKind, Link, SerialSettings},
    memory::{self, Continuation, MemoryError, Recording},
    phrase::Phrase,
    protocol::{
        Direction, FrameReader, Wire,
        dgt::{self, BwTime, Mode},
        tgz,
    },
    sensor::{
        Sensed,
        dgt::{ChessSensor, ClockLayout, ClockReading},
        tgz::TgzBoardState,
    },
    tracker::{RecordedMove, Side, Tracker, TrackerEvent, TrackerSettings},
};

/// What a frame did to the sensor state.
pub enum Applied {
    /// The sensed board may have changed: the tracker looks.
    Board,
    /// A clock reading (DGT's BWTIME, which TGZ-1 carries unchanged).
    Clock(BwTime),
    /// The board's memory (a DGT board's EEPROM log, DGT_MSG_EE_MOVES), asked for after a gap.
    Memory(Vec<u8>),
    /// Nothing for the tracker.
    Nothing,
    /// Nothing for the tracker, but worth a line in the log (identity replies, unknown frames).
    Noted(Notice),
}

/// What a sensor learnt of its board ([`Board::learnt`]): the edge keeps `text` per board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Learnt {
    /// What it is, for the log (`calibration`).
    pub what: &'static str,
    /// An opaque text that [`Board::restore`] reads back.
    pub text: String,
    /// Why it was learnt, for the log (the setup it was learnt from).
    pub how: String,
}

/// Something the pipeline noticed that is not part of the record, for the edge to log, each at
/// the level its variant names.
#[derive(Debug)]
pub enum Notice {
    /// The board told who it is (a serial number, a firmware version): debug.
    Identity { what: &'static str, value: String },
    /// A frame the pipeline has no use for: debug. Kept as it is, so that it is formatted only
    /// where debug lines are written.
    FrameNotUsed(Box<dyn Debug + Send>),
    /// Bytes that did not decode, at most one notice a second (`suppressed` since the last).
    BadInput {
        at_ms: Millis,
        warning: String,
        suppressed: u64,
    },
    /// Board memory came unasked, or when the record did not lag the board: debug.
    MemoryNotNeeded,
    /// Board memory read after a gap, and how many of its plies were recorded: info.
    MemoryRead {
        recorded: usize,
        in_memory: usize,
        in_hand: usize,
        recovered: usize,
    },
    /// Board memory read after a gap that does not help (why); `in_a_row`: how many reads since
    /// the gap (or since the last that helped) have not, this one included. After `thread_lost`
    /// the memory is read again at presses, so only the first says it at the warning's level.
    MemoryUseless { cause: String, in_a_row: u32 },
    /// Board memory asked for at `asked_at_ms` did not come (why).
    MemoryNotRead { asked_at_ms: Millis, why: String },
    /// The judge's own note ([`Judge::take_notices`]).
    Judge(JudgeNotice),
    /// The sensor learnt something of its board ([`Board::learnt`]), for the edge to keep:
    /// info.
    Learnt(Learnt),
}

/// One kind of board, as the pipeline and the edges see it: its wire, sensor state, game and
/// judge, and the commands the host sends it. The seam every vendor plugs into: a new kind of
/// board is a protocol module, a sensor, an implementation of this trait and its line in
/// [`BoardKind`].
pub trait Board: 'static {
    type Wire: Wire<Frame = Self::Frame> + Send;
    type Frame: Debug + Send;
    type Game: GameKind;
    type Sensor: Sensed<<Self::Game as GameKind>::Reading> + Default + Send;
    type Judge: Judge<Game = Self::Game> + Send;

    /// Which kind of board it is ([`BoardKind`]).
    const KIND: BoardKind;

    /// Who makes it, as `devices` shows it.
    const VENDOR: &'static str;

    /// How the host reaches it.
    const LINK: Link;

    /// Whether its frames carry the clocks' times.
    const REPORTS_CLOCK: bool;

    /// A capture's `device` for what this pipeline reads (its kind's name, unless it reads
    /// the kind another way, as a DGT board on a bus).
    const DEVICE: &'static str = Self::KIND.name();

    /// The frame reader's wire.
    fn wire() -> Self::Wire;

    /// Sent after every open (boards power up silent): what switches on its reports.
    fn startup() -> Vec<u8>;

    /// Sent when the board falls silent: answered in every mode.
    fn probe() -> Vec<u8>;

    /// Sent to a port nothing names, to learn whether a board of this kind is behind it
    /// (`devices --probe`): a board of the kind answers with a report of what it senses, and
    /// its identity if asked ([`crate::boards::Identified`]). The probe, unless the kind has a
    /// better question.
    fn identify() -> Vec<u8> {
        Self::probe()
    }

    /// The writes that send `commands` (the bytes of [`Board::startup`], [`Board::probe`] …):
    /// on a HID link each write is one output report, so each command goes alone; on a serial
    /// line the bytes go as they are.
    fn output_reports(commands: &[u8]) -> Vec<Vec<u8>> {
        vec![commands.to_vec()]
    }

    /// What one read of a HID link carries: an input report, cut from the padding a fixed-size
    /// report may have after it. Reads of a stream (a serial line, a socket) are not cut.
    fn input_report(read: &[u8]) -> &[u8] {
        read
    }

    /// Asks for the board's memory, after a gap (boards with [`Board::HAS_MEMORY`]).
    fn memory_request() -> Vec<u8> {
        Vec::new()
    }

    /// The tracker's settings under `laws`.
    fn settings(laws: &LawsSetup) -> TrackerSettings;

    /// The judge of its games under `laws`.
    fn judge(laws: &LawsSetup) -> Self::Judge;

    /// Folds `frame` into `sensor`; what it was.
    fn apply(sensor: &mut Self::Sensor, frame: Self::Frame) -> Applied;

    /// Forgets the sensed board (the board went away); what the sensor learnt of the board
    /// itself ([`Board::learnt`]) is kept.
    fn reset(sensor: &mut Self::Sensor);

    /// What the sensor learnt of this board since the last call (a calibration), as text the
    /// edge keeps per board and gives back to a new sensor through [`Board::restore`]. Most
    /// boards learn nothing.
    fn learnt(sensor: &mut Self::Sensor) -> Option<Learnt> {
        let _ = sensor;
        None
    }

    /// Seeds `sensor` with what [`Board::learnt`] gave for this board before (a daemon
    /// restarted, a capture replayed); an error says why the text does not read.
    fn restore(sensor: &mut Self::Sensor, text: &str) -> Result<(), String> {
        let _ = (sensor, text);
        Ok(())
    }

    /// Makes `sensor` forget what it learnt and learn it again from what the board shows next
    /// (the arbiter's request); whether this kind learns anything ([`Board::LEARNS`]).
    fn relearn(sensor: &mut Self::Sensor) -> bool {
        let _ = sensor;
        Self::LEARNS
    }

    /// Whether the sensor learns something of its board itself ([`Board::learnt`]: a Certabo
    /// board's calibration), which the arbiter can have it learn again ([`Board::relearn`]).
    const LEARNS: bool = false;

    /// Whether the board keeps a log of what was done on it that [`Board::from_memory`] reads
    /// (asked for after every gap).
    const HAS_MEMORY: bool = false;

    /// The plies the board's memory `log` holds after the recording's plies, with the clocks
    /// memory holds; what reading it noticed goes into `notices`.
    fn from_memory(
        log: &[u8],
        recording: &Recording,
        notices: &mut Vec<Notice>,
    ) -> Result<Continuation, MemoryError> {
        let _ = (log, recording, notices);
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
    ) -> Split<Self::Frame> {
        let _ = (sensor, layout);
        Split::Itself(at, frame)
    }
}

/// What [`Board::split`] makes of one decoded frame: the frame itself at its time (nearly
/// every frame: no list made for it), or the frames it stands for, in order.
#[derive(Debug)]
pub enum Split<F> {
    Itself(Millis, F),
    Frames(Vec<(Millis, F)>),
}

impl<F> IntoIterator for Split<F> {
    type Item = (Millis, F);
    type IntoIter =
        std::iter::Chain<std::option::IntoIter<(Millis, F)>, std::vec::IntoIter<(Millis, F)>>;

    fn into_iter(self) -> Self::IntoIter {
        let (one, many) = match self {
            Split::Itself(at, frame) => (Some((at, frame)), Vec::new()),
            Split::Frames(frames) => (None, frames),
        };
        one.into_iter().chain(many)
    }
}

/// A DGT electronic chessboard.
pub struct Dgt;

impl Board for Dgt {
    type Wire = Mode;
    type Frame = dgt::Frame;
    type Game = ChessGame;
    type Sensor = ChessSensor;
    type Judge = Referee;
    const KIND: BoardKind = BoardKind::Dgt;
    const VENDOR: &'static str = "DGT";
    const LINK: Link = Link::Serial(SerialSettings::DGT);
    const REPORTS_CLOCK: bool = true;

    fn wire() -> Mode {
        Mode::Single
    }

    fn startup() -> Vec<u8> {
        dgt::STARTUP.to_vec()
    }

    fn probe() -> Vec<u8> {
        dgt::PROBE.to_vec()
    }

    /// The serial number and the board: the dump tells a DGT board from a TGZ-1 one.
    fn identify() -> Vec<u8> {
        vec![dgt::cmd::RETURN_SERIALNR, dgt::cmd::SEND_BRD]
    }

    /// Reset first: a board sending updates could mix them into the reply.
    fn memory_request() -> Vec<u8> {
        vec![dgt::cmd::SEND_RESET, dgt::cmd::SEND_EE_MOVES]
    }

    fn settings(laws: &LawsSetup) -> TrackerSettings {
        laws.tracker_settings()
    }

    fn judge(laws: &LawsSetup) -> Referee {
        laws.referee()
    }

    fn apply(sensor: &mut ChessSensor, frame: dgt::Frame) -> Applied {
        match frame {
            dgt::Frame::BoardDump(dump) => {
                sensor.set_all(&dump.0);
                Applied::Board
            }
            dgt::Frame::FieldUpdate { square, piece } => {
                if sensor.set_square(square, piece & 0x0f) && sensor.is_known() {
                    Applied::Board
                } else {
                    Applied::Nothing
                }
            }
            dgt::Frame::BwTime(t) => Applied::Clock(t),
            dgt::Frame::EeMoves(log) => Applied::Memory(log),
            // Identity replies (start-up, watchdog probes): worth a line in the log, nothing more.
            dgt::Frame::SerialNr(serial) => Applied::Noted(Notice::Identity {
                what: "serial number",
                value: serial.to_string(),
            }),
            dgt::Frame::LongSerialNr(serial) => Applied::Noted(Notice::Identity {
                what: "long serial number",
                value: serial.to_string(),
            }),
            dgt::Frame::Version { major, minor } => Applied::Noted(Notice::Identity {
                what: "firmware version",
                value: format!("{major}.{minor}"),
            }),
            other => Applied::Noted(Notice::FrameNotUsed(Box::new(other))),
        }
    }

    fn reset(sensor: &mut ChessSensor) {
        sensor.reset();
    }

    const HAS_MEMORY: bool = true;

    fn from_memory(
        log: &[u8],
        recording: &Recording,
        notices: &mut Vec<Notice>,
    ) -> Result<Continuation, MemoryError> {
        memory::continuation(log, recording, notices)
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
    const KIND: BoardKind = BoardKind::Togyz;
    const VENDOR: &'static str = "togyz korgool pit board (TGZ-1)";
    /// DGT's line, which TGZ-1 keeps.
    const LINK: Link = Link::Serial(SerialSettings::DGT);
    const REPORTS_CLOCK: bool = true;

    fn wire() -> tgz::Tgz {
        tgz::Tgz
    }

    /// Identity, a full dump, updates with the clock, and the clock now.
    fn startup() -> Vec<u8> {
        let mut out = vec![tgz::cmd::RETURN_SERIALNR];
        for c in tgz::startup(true) {
            c.encode(&mut out);
        }
        out.push(tgz::cmd::SEND_CLK);
        out
    }

    fn probe() -> Vec<u8> {
        vec![tgz::cmd::RETURN_SERIALNR]
    }

    /// The serial number and the board: the dump tells a TGZ-1 board from a DGT one.
    fn identify() -> Vec<u8> {
        vec![tgz::cmd::RETURN_SERIALNR, tgz::cmd::SEND_BRD]
    }

    fn settings(_laws: &LawsSetup) -> TrackerSettings {
        TrackerSettings::for_game::<TogyzGame>()
    }

    fn judge(_laws: &LawsSetup) -> TogyzReferee {
        TogyzReferee::new(crate::game::togyz::Rules::KYRGYZ)
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
                return Applied::Noted(Notice::Identity {
                    what: "serial number",
                    value: serial.to_string(),
                });
            }
            other => return Applied::Noted(Notice::FrameNotUsed(Box::new(other))),
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
}

/// One board's bytes to the events of its record.
pub struct Pipeline<B: Board> {
    reader: FrameReader<B::Wire>,
    sensor: B::Sensor,
    tracker: Tracker<B::Game>,
    judge: B::Judge,
    /// What the tracker said, not yet judged.
    observed: Vec<TrackerEvent>,
    /// What the judge made of it, since the last [`Pipeline::collect`].
    events: Vec<TrackerEvent>,
    /// Events judged, for [`Pipeline::take_events`].
    judged: Vec<TrackerEvent>,
    notices: Vec<Notice>,
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
    /// After `thread_lost`: a press was heard, so the memory is read again (it may now hold
    /// the moves that explain the board).
    press_reread: bool,
    /// The last read brought plies: if the board still does not fit, the memory is read again
    /// at once (the game went on while it was read).
    catching_up: bool,
    /// Reads in a row since the gap, or since the last that brought plies, that did not help.
    useless_reads: u32,
}

/// How many times board memory is read after one gap without bringing a ply: once when the
/// board is heard again, and again while the board stays lost (the moves made during a read, or
/// a hand still moving). A read that brings plies starts the count again (the reads are
/// catching up with a game played on meanwhile); after `thread_lost`, every press is read for.
pub const MEMORY_READS_PER_GAP: u32 = 3;

/// A board still lost this long after it was heard again and after the last read has its
/// memory read again (before `thread_lost` is raised).
const REREAD_AFTER_MS: Millis = 1_000;

/// After `thread_lost`, the memory is read at a press at most this often: a read holds the
/// line (a bus's, shared with other boards) for a second or two.
const PRESS_REREAD_GAP_MS: Millis = 3_000;

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
    /// A pipeline with a tracker and a judge (fresh, or resumed from the store).
    pub fn new(tracker: Tracker<B::Game>, judge: B::Judge) -> Pipeline<B> {
        Pipeline {
            reader: FrameReader::with_wire(B::wire()),
            sensor: B::Sensor::default(),
            tracker,
            judge,
            observed: Vec::new(),
            events: Vec::new(),
            judged: Vec::new(),
            notices: Vec::new(),
            stats: PipelineStats::default(),
            last_clock: None,
            last_warning_at: None,
            warnings_logged: 0,
            clock_layout: ClockLayout::default(),
            latest: 0,
            memory: MemoryRead::Due,
            memory_reads: 0,
            press_reread: false,
            catching_up: false,
            useless_reads: 0,
        }
    }

    /// Reads the clock's BWTIME frames in `layout` (the default is [`ClockLayout::H17`]).
    pub fn with_clock_layout(mut self, layout: ClockLayout) -> Pipeline<B> {
        self.clock_layout = layout;
        self
    }

    /// Bytes that travelled at `at` in direction `dir` (only the board's are decoded).
    pub fn feed(&mut self, at: Millis, dir: Direction, bytes: &[u8]) {
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
                        self.notices.push(Notice::BadInput {
                            at_ms: at,
                            warning: warning.to_string(),
                            suppressed,
                        });
                    }
                }
            }
        }
        self.latest = self.latest.max(at);
        self.tracker.tick(at, &mut self.observed);
        self.collect();
    }

    /// Counts bytes without decoding them: a bus board's share of a shared line, whose
    /// replies the bus task folds through [`Pipeline::feed_frame`].
    pub fn count_raw(&mut self, dir: Direction, bytes: &[u8]) {
        if dir == Direction::FromBoard {
            self.stats.bytes_in += bytes.len() as u64;
        }
    }

    /// Lets time pass without bytes (timers in `run`; never needed in `replay`).
    pub fn tick(&mut self, at: Millis) {
        self.latest = self.latest.max(at);
        self.tracker.tick(at, &mut self.observed);
        self.collect();
    }

    /// Records what the tracker still holds (end of a capture, orderly shutdown).
    pub fn flush(&mut self, at: Millis) {
        self.tracker.flush(at, &mut self.observed);
        self.collect();
    }

    /// The board went away at `at`: the sensed board is forgotten until the next dump, and the
    /// game goes on from its record once the board is heard again (a gap: its memory is asked
    /// for, where it has one).
    pub fn disconnected(&mut self, at: Millis) {
        B::reset(&mut self.sensor);
        self.reader.clear();
        self.tracker.gap(at);
        self.tracker.reading_memory(false);
        self.memory = MemoryRead::Due;
        self.memory_reads = 0;
        self.useless_reads = 0;
        self.press_reread = false;
        self.catching_up = false;
    }

    /// The arbiter changed the record of the game in progress (resumed it after a ply, corrected
    /// a move): `moves` are its live moves as the store now holds them. The tracker and the
    /// judge go on from them as after a gap (the board's memory is not read: the arbiter's
    /// record stands). Returns whether the tracker took them.
    pub fn rebase(&mut self, at: Millis, moves: &[RecordedMove], how: Phrase) -> bool {
        if !self.tracker.rebase(at, moves, how, &mut self.observed) {
            return false;
        }
        let start = self.tracker.game_start_text();
        self.judge.rebase(start.as_deref(), moves);
        self.memory = MemoryRead::Done(at);
        self.memory_reads = MEMORY_READS_PER_GAP;
        self.press_reread = false;
        self.catching_up = false;
        self.tracker.reading_memory(false);
        // The board as it is now, against the new record (a move finished meanwhile is one
        // move from it; it will not change again before it is pressed).
        if self.sensor.is_known() {
            self.tracker.observe(at, &self.sensor, &mut self.observed);
        }
        self.collect();
        true
    }

    /// The arbiter undid the final result that closed the game: the board records it again.
    /// `resume` makes the tracker that goes on with it from the tracker's settings, and sets the
    /// judge on it; the board is then followed as after a restart (lost until it fits the
    /// record, its memory read after the gap). Returns whether the game was taken: not while
    /// another game is followed, nor when `resume` gives none.
    pub fn reopen(
        &mut self,
        at: Millis,
        resume: impl FnOnce(TrackerSettings, &mut B::Judge) -> Option<Tracker<B::Game>>,
    ) -> bool {
        if self.tracker.has_game() {
            return false;
        }
        let Some(tracker) = resume(self.tracker.settings().clone(), &mut self.judge) else {
            return false;
        };
        self.tracker = tracker;
        self.memory = MemoryRead::Due;
        self.memory_reads = 0;
        self.useless_reads = 0;
        self.press_reread = false;
        self.catching_up = false;
        if self.sensor.is_known() {
            self.tracker.observe(at, &self.sensor, &mut self.observed);
        }
        self.collect();
        true
    }

    /// The game on the board is over by a decision it did not show (the arbiter's final
    /// result), or its store closed it: the board no longer extends it; the next start position
    /// begins a new game ([`Tracker::close`]). Returns whether a game was followed.
    pub fn close_game(&mut self) -> bool {
        self.tracker.close()
    }

    /// Whether the tracker follows a game.
    pub fn has_game(&self) -> bool {
        self.tracker.has_game()
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
            && (self.memory_reads < MEMORY_READS_PER_GAP || self.press_reread)
            && match self.memory {
                MemoryRead::Due => true,
                // Lost for a second since the board was heard and the last read: read again
                // before the arbiter is alerted; at once after a read that brought plies; after
                // the alert, at every press.
                MemoryRead::Done(done) => {
                    let unexplained = self.tracker.unexplained_since();
                    (self.press_reread && self.latest >= done.saturating_add(PRESS_REREAD_GAP_MS))
                        || (self.catching_up && unexplained.is_some())
                        || unexplained.is_some_and(|t| {
                            self.latest >= t.max(done).saturating_add(REREAD_AFTER_MS)
                        })
                }
                MemoryRead::Asked(_) => false,
            }
    }

    /// The memory was asked for at `at`: `thread_lost` waits for what it brings.
    pub fn memory_asked(&mut self, at: Millis) {
        self.memory = MemoryRead::Asked(at);
        self.memory_reads += 1;
        self.press_reread = false;
        self.catching_up = false;
        self.tracker.reading_memory(true);
    }

    /// Whether memory was asked for and has not come yet.
    pub fn awaiting_memory(&self) -> bool {
        matches!(self.memory, MemoryRead::Asked(_))
    }

    /// Memory asked for did not come (the board has none, or the reply was lost): the board is
    /// searched instead.
    pub fn memory_not_read(&mut self, why: &str) {
        if let MemoryRead::Asked(since) = self.memory {
            self.notices.push(Notice::MemoryNotRead {
                asked_at_ms: since,
                why: why.to_owned(),
            });
        }
        self.memory = MemoryRead::Done(self.latest);
        self.tracker.reading_memory(false);
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
        self.tracker.reading_memory(false);
        if !matches!(asked, MemoryRead::Asked(_)) || !self.tracker.is_lost() {
            self.notices.push(Notice::MemoryNotNeeded);
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
        match B::from_memory(log, &recording, &mut self.notices) {
            Ok(found) => {
                let n =
                    self.tracker
                        .recover(at, &found.recorded, &found.in_hand, &mut self.observed);
                if n > 0 {
                    // Progress: the reads go on while they bring plies, and the board as it is
                    // now is held against the record it brought (it may fit it again).
                    self.memory_reads = 0;
                    self.useless_reads = 0;
                    self.catching_up = true;
                    if self.sensor.is_known() {
                        self.tracker.observe(at, &self.sensor, &mut self.observed);
                    }
                }
                self.notices.push(Notice::MemoryRead {
                    recorded: record.len(),
                    in_memory: found.recorded.len(),
                    in_hand: found.in_hand.len(),
                    recovered: n,
                });
            }
            Err(e) => {
                self.useless_reads += 1;
                self.notices.push(Notice::MemoryUseless {
                    cause: e.to_string(),
                    in_a_row: self.useless_reads,
                });
            }
        }
    }

    /// One decoded frame, split into the frames it stands for ([`Board::split`]), into the
    /// sensor state and the tracker (what `feed` does per frame).
    pub fn feed_split(&mut self, at: Millis, frame: B::Frame) {
        match B::split(&mut self.sensor, self.clock_layout, at, frame) {
            Split::Itself(t, f) => self.feed_frame(t.max(self.latest), f),
            Split::Frames(frames) => {
                for (t, f) in frames {
                    self.feed_frame(t.max(self.latest), f);
                }
            }
        }
    }

    /// One frame into the sensor state and the tracker, as it is.
    pub fn feed_frame(&mut self, at: Millis, frame: B::Frame) {
        self.latest = self.latest.max(at);
        self.stats.frames += 1;
        match B::apply(&mut self.sensor, frame) {
            Applied::Board => self.tracker.observe(at, &self.sensor, &mut self.observed),
            Applied::Clock(t) => {
                if let Some(reading) = ClockReading::from_bwtime_in(&t, self.clock_layout) {
                    // A press while the thread is lost: the memory may now explain the board.
                    let pressed = self
                        .last_clock
                        .is_some_and(|c| c.lever_right_high != reading.lever_right_high);
                    if pressed && self.tracker.thread_lost() {
                        self.press_reread = true;
                    }
                    self.last_clock = Some(reading);
                    self.tracker.clock(at, reading, &mut self.observed);
                    // The judge's board must include what the press just recorded.
                    self.review();
                    let white_on_left = self.tracker.white_on_left();
                    self.judge
                        .clock(at, &reading, white_on_left, &mut self.events);
                }
            }
            Applied::Memory(log) => self.recover_from_memory(at, &log),
            Applied::Noted(notice) => self.notices.push(notice),
            Applied::Nothing => {}
        }
        if let Some(learnt) = B::learnt(&mut self.sensor) {
            self.notices.push(Notice::Learnt(learnt));
        }
    }

    /// Seeds the sensor with what it learnt of this board before ([`Board::restore`]).
    pub fn restore_sensor(&mut self, text: &str) -> Result<(), String> {
        B::restore(&mut self.sensor, text)
    }

    /// Makes the sensor learn its board again from what it shows next ([`Board::relearn`]);
    /// whether this kind learns anything.
    pub fn relearn_sensor(&mut self) -> bool {
        B::relearn(&mut self.sensor)
    }

    /// Passes what the tracker said through the judge, each event with what it plays.
    fn review(&mut self) {
        // Most frames change nothing: nothing to pass, no lists taken and given back empty.
        if self.observed.is_empty() && !self.tracker.has_played() {
            return;
        }
        let mut played = self.tracker.drain_played();
        for event in self.observed.drain(..) {
            let plays = if event.plays() { played.next() } else { None };
            self.judge.review(event, plays, &mut self.events);
        }
        debug_assert!(played.next().is_none(), "a played value without its event");
    }

    fn collect(&mut self) {
        self.review();
        self.notices
            .extend(self.judge.take_notices().into_iter().map(Notice::Judge));
        for event in &self.events {
            match event {
                TrackerEvent::Move(_) => self.stats.moves += 1,
                TrackerEvent::GameStarted { .. } => self.stats.games += 1,
                _ => {}
            }
        }
        self.judged.append(&mut self.events);
    }

    /// The events judged so far, in order (the record side persists them).
    pub fn take_events(&mut self) -> Vec<TrackerEvent> {
        std::mem::take(&mut self.judged)
    }

    /// Number of events waiting to be taken.
    pub fn pending_events(&self) -> usize {
        self.judged.len()
    }

    /// Whether anything worth a log line happened since the last [`Pipeline::take_notices`].
    pub fn has_notices(&self) -> bool {
        !self.notices.is_empty()
    }

    /// What is worth a log line since the last call, in order.
    pub fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
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
    pub fn fresh() -> DgtPipeline {
        Pipeline::new(
            Tracker::new(TrackerSettings::default()),
            LawsSetup::default().referee(),
        )
    }
}

impl Pipeline<Tgz> {
    /// A fresh pipeline for a pit board under the Kyrgyz rules.
    pub fn fresh_togyz() -> TgzPipeline {
        Pipeline::new(
            Tracker::new(TrackerSettings::for_game::<TogyzGame>()),
            TogyzReferee::new(crate::game::togyz::Rules::KYRGYZ),
        )
    }
}
