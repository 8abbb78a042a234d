//! Board memory: a DGT board's EEPROM log (DGT_MSG_EE_MOVES, dgt-notes 1.11) read back into games.
//!
//! Flow: [`games_from_log`] (pure) folds the log's tokens into a 64-square board and turns them
//! into the frames a live board would have sent, at made-up times (the log has none): the board
//! after power-up as one BOARD_DUMP, every later field token as a FIELD_UPDATE, every clock token
//! as a BWTIME. These go through the same [`DgtPipeline`] (tracker and referee) as a live board,
//! and the events are cut into games at each `GameStarted`. Each game carries a digest of its
//! tokens, so an import can tell a game it already stored. [`read_dump`] and [`fetch_from_port`]
//! are the edges: the reply bytes from a file or capture, or from a board on a serial port.
//! A board writes BEGINPOS only for the standard start (dgt-notes 1.11): a Chess960 set-up is
//! read from its field tokens, by a tracker that knows the 960 starts ([`games_from_log_in`]).

use std::{path::Path, time::Duration};

use crate::{
    Millis,
    arbiter::LawsSetup,
    device::{
        Direction,
        capture::{CaptureError, parse_capture},
        serial,
    },
    game::{GameKind, Variant, chess::ChessGame},
    pipeline::DgtPipeline,
    protocol::{
        FrameReader,
        dgt::{
            BoardDump, BwTime, ClockTime, EeTag, EeToken, EeTokenError, Frame, Mode, cmd, piece,
            status,
        },
    },
    sensor::{Orientation, dgt::DgtBoardState},
    store::{BoardId, Write},
    tracker::{RecordedMove, Side, Tracker, TrackerEvent, TrackerSettings},
};

/// Made-up time from one token to the next: a field token written under ~250 ms after the one
/// before (the r bit) comes 100 ms later, any other token 500 ms later (more than the tracker's
/// settle time, so a move made without a clock is recorded), but the first token after a clock
/// press only 200 ms later, and, when the press came with the move part-way, the presser's own
/// squares right after it (up to [`PRESS_WINDOW_TOKENS`], as many as a castling writes) 50 ms
/// apart: a board writes a press
/// as soon as the lever moves, and the last squares of the move may be scanned just after it (a
/// full scan takes 200-250 ms, dgt-notes 1.1); the tracker records a press one scan (300 ms)
/// after it, with the squares seen by then. A square of the opponent's ends the window: the
/// reply begun (or the kings' gesture) comes after the press is recorded.
const QUICK_MS: Millis = 100;
const STEP_MS: Millis = 500;
const AFTER_PRESS_MS: Millis = 200;
const PRESSER_SQUARE_MS: Millis = 50;
const PRESS_WINDOW_TOKENS: usize = 4;
/// A running clock is shown again (as a live clock reports it) from this long after a press.
const RUNNING_AFTER_MS: Millis = 1_000;

/// Why a dump could not be read or interpreted.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("the board memory does not decode: {0}")]
    Tokens(#[from] EeTokenError),
    #[error("the board memory ends without EE_EOF (0x6b): the dump is cut short")]
    NoEof,
    #[error("no EE_MOVES (0x8f) reply in {0}")]
    NoReply(String),
    #[error("the EE_MOVES reply in {source_name} is damaged: {detail}")]
    BadFrame { source_name: String, detail: String },
    #[error("capture: {0}")]
    Capture(#[from] CaptureError),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Device(#[from] serial::DeviceError),
    #[error("no complete EE_MOVES reply from {port} within {secs} s ({got} bytes received)")]
    Timeout { port: String, secs: u64, got: usize },
    #[error("the game's start position {0:?} does not read as one")]
    BadStart(String),
    #[error("this kind of board keeps no memory")]
    NoMemory,
    #[error(
        "no game in the board memory begins with the {plies} plies recorded (its start written \
         over, or another game)"
    )]
    NotInMemory { plies: usize },
}

/// One game read from board memory.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryGame {
    /// The tracker's events, from `GameStarted` on, at made-up times.
    pub events: Vec<TrackerEvent>,
    /// The live moves (revisions and takebacks applied), with clocks where the log had them.
    pub moves: Vec<RecordedMove>,
    /// `moves[..confirmed]` were recorded while the log went on; the rest only because it
    /// ended (in the hands when the memory was read: the last game's last move, if its press
    /// is not in the log yet).
    pub confirmed: usize,
    pub orientation: Orientation,
    /// The game's tokens: `tokens.start..tokens.end` in the log.
    pub tokens: std::ops::Range<usize>,
    /// FNV-1a (64 bit) over the game's orientation, moves (UCI) and clocks: the same game in a
    /// later dump, with more written after it, has the same digest; two games alike in every
    /// move and every clock reading are taken for one.
    pub digest: u64,
}

/// The DGT start position in board numbering (0 = a8), white at the connector's left.
fn start_position() -> [u8; 64] {
    use piece::*;
    let mut b = [EMPTY; 64];
    let back_black = [
        BROOK, BKNIGHT, BBISHOP, BQUEEN, BKING, BBISHOP, BKNIGHT, BROOK,
    ];
    let back_white = [
        WROOK, WKNIGHT, WBISHOP, WQUEEN, WKING, WBISHOP, WKNIGHT, WROOK,
    ];
    b[..8].copy_from_slice(&back_black);
    b[8..16].fill(BPAWN);
    b[48..56].fill(WPAWN);
    b[56..].copy_from_slice(&back_white);
    b
}

/// FNV-1a over a game's orientation, start (a Chess960 one; none for the standard start, so the
/// digests of standard games stay what they were), moves and clocks, as text.
fn digest(orientation: Orientation, start: Option<&str>, moves: &[RecordedMove]) -> u64 {
    let mut text = String::from(orientation.as_str());
    if let Some(start) = start {
        text.push_str(&format!(" [{start}]"));
    }
    for m in moves {
        let clock = |c: Option<u64>| c.map_or("-".to_owned(), |ms| ms.to_string());
        text.push_str(&format!(
            " {}/{}/{}",
            m.uci.as_deref().unwrap_or(&m.notation),
            clock(m.clock_white_ms),
            clock(m.clock_black_ms)
        ));
    }
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The frames of the log, one step at a time: board state and clocks as the log tells them.
struct Replayer {
    board: [u8; 64],
    /// The board has been sent as a dump since the last power-up.
    dumped: bool,
    /// Between POWERUP and the first token that is not a field: the pieces found at power-up.
    powering_up: bool,
    left: Option<ClockTime>,
    right: Option<ClockTime>,
    /// The lever of the last reading: `Some(true)` high on the right.
    lever: Option<bool>,
    /// The power-up listing ends at the first field token out of its order (a piece lifted, a
    /// square listed again), not only at the next tag: a Chess960 set-up gets no BEGINPOS
    /// (dgt-notes 1.11), so the first move follows the listing directly.
    listing_ends_at_play: bool,
    /// The last square of the power-up listing so far.
    listed: Option<u8>,
}

impl Replayer {
    fn new(variant: Variant) -> Replayer {
        Replayer {
            board: [piece::EMPTY; 64],
            dumped: false,
            powering_up: false,
            left: None,
            right: None,
            lever: None,
            listing_ends_at_play: variant != Variant::Standard,
            listed: None,
        }
    }

    fn dump(&mut self) -> Frame {
        self.dumped = true;
        Frame::BoardDump(BoardDump(self.board))
    }

    /// The frames token `t` stands for.
    fn frames(&mut self, t: &EeToken) -> Vec<Frame> {
        let mut out = Vec::new();
        match *t {
            EeToken::Field { square, piece, .. } => {
                // The board lists its pieces at power-up square by square, each once.
                let played = piece == piece::EMPTY || self.listed.is_some_and(|l| square <= l);
                if self.powering_up && self.listing_ends_at_play && played {
                    self.powering_up = false;
                    if !self.dumped {
                        out.push(self.dump());
                    }
                }
                self.board[usize::from(square & 0x3f)] = piece;
                if self.powering_up {
                    self.listed = Some(square);
                    return out;
                }
                if self.dumped {
                    out.push(Frame::FieldUpdate { square, piece });
                } else {
                    out.push(self.dump());
                }
                return out;
            }
            EeToken::Tag(EeTag::PowerUp | EeTag::Watchdog) => {
                self.board = [piece::EMPTY; 64];
                self.dumped = false;
                self.powering_up = true;
                self.listed = None;
                return out;
            }
            _ => {}
        }
        self.powering_up = false;
        if !self.dumped {
            out.push(self.dump());
        }
        match *t {
            EeToken::Tag(tag @ (EeTag::BeginPos | EeTag::BeginPosRot)) => {
                // The board says where every piece stands: a log whose start the ring buffer
                // overwrote is in step from here on.
                let mut start = start_position();
                if tag == EeTag::BeginPosRot {
                    start.reverse();
                }
                if self.board != start {
                    self.board = start;
                    out.push(self.dump());
                }
            }
            EeToken::Clock { left, time } => {
                // The halted clock's time; the other side keeps its last reading (at the first
                // press of a game, when none is known yet, it is shown as equal).
                if left {
                    self.left = Some(time);
                } else {
                    self.right = Some(time);
                }
                let (l, r) = match (self.left, self.right) {
                    (Some(l), Some(r)) => (l, r),
                    (Some(l), None) => (l, l),
                    (None, Some(r)) => (r, r),
                    (None, None) => return out,
                };
                // The left player pressed: the lever is high on the right, the right clock runs.
                // A token is written at a lever change, so the lever stood the other way before:
                // shown first at the first press in the log, which no reading precedes, as a
                // clock not yet running (which side ran before is not known: a move may already
                // be recorded without a clock).
                let lever = if left { status::LEVER_RIGHT_HIGH } else { 0 };
                let frame = |st| Frame::BwTime(BwTime::from_parts(r, 0, l, 0, st));
                if self.lever.is_none() {
                    out.push(frame(lever ^ status::LEVER_RIGHT_HIGH));
                }
                self.lever = Some(left);
                out.push(frame(status::RUNNING | lever));
            }
            _ => {}
        }
        out
    }
}

/// Interprets an EE_MOVES log (oldest to newest) as games of standard chess, through the chess
/// tracker, starting the made-up clock at `start_ms`. Pure.
pub fn games_from_log(tokens: &[EeToken], start_ms: Millis) -> Vec<MemoryGame> {
    games_from_log_in(tokens, start_ms, Variant::Standard)
}

/// [`games_from_log`] for games of `variant`: under Chess960 any of its start positions set up
/// begins a game.
pub fn games_from_log_in(
    tokens: &[EeToken],
    start_ms: Millis,
    variant: Variant,
) -> Vec<MemoryGame> {
    games_from_log_as(tokens, start_ms, variant, None)
}

/// [`games_from_log_in`], with which clock is White's when it is known (`white_on_left`: the
/// live readings of the game settled it); otherwise the presses in the log decide it.
fn games_from_log_as(
    tokens: &[EeToken],
    start_ms: Millis,
    variant: Variant,
    white_on_left: Option<bool>,
) -> Vec<MemoryGame> {
    let settings = TrackerSettings {
        variant,
        ..TrackerSettings::default()
    };
    let mut tracker = Tracker::new(settings);
    if let Some(left) = white_on_left {
        tracker.settle_clock_side(left);
    }
    let mut pipeline = DgtPipeline::new(BoardId(0), tracker, LawsSetup::default().referee());
    let mut replayer = Replayer::new(variant);
    let mut at = start_ms;
    let mut games: Vec<(usize, Vec<TrackerEvent>)> = Vec::new();
    let collect = |pipeline: &mut DgtPipeline, index: usize, games: &mut Vec<_>| {
        for w in pipeline.take_writes() {
            let Write::Event { event, .. } = w else {
                continue;
            };
            if matches!(event, TrackerEvent::GameStarted { .. }) {
                games.push((index, Vec::new()));
            }
            if let Some((_, events)) = games.last_mut() {
                events.push(event);
            }
        }
    };
    // The last press's reading, shown again before every later token: a clock running with no
    // press, as a live clock reports every second, which tells the tracker whose clock runs.
    let mut running: Option<(Millis, Frame)> = None;
    // After a press: whether White pressed, and how many of the presser's squares may still
    // come within its scan; and whether this is the token right after it.
    let mut press_window: Option<(bool, usize)> = None;
    let mut after_press = false;
    // The last press in the log: whether White made it, how many events the last game had
    // before it (what it recorded comes after), and whether the other side touched a piece
    // since.
    let mut last_press: Option<(bool, usize, bool)> = None;
    for (index, t) in in_hand_order(tokens) {
        // Whose piece a field token puts down or lifts (`Some(true)`: White's).
        let touched = match *t {
            EeToken::Field { square, piece, .. } if piece == piece::EMPTY => {
                side_of(replayer.board[usize::from(square & 0x3f)])
            }
            EeToken::Field { piece, .. } => side_of(piece),
            _ => None,
        };
        let presser_square =
            matches!(press_window, Some((white, left)) if left > 0 && touched == Some(white));
        press_window = match press_window {
            Some((white, left)) if presser_square => Some((white, left - 1)),
            _ => None,
        };
        at += match t {
            _ if presser_square => PRESSER_SQUARE_MS,
            _ if after_press => AFTER_PRESS_MS,
            EeToken::Field { quick: true, .. } => QUICK_MS,
            _ => STEP_MS,
        };
        pipeline.tick(at);
        if let Some((since, again)) = &running
            && at >= since + RUNNING_AFTER_MS
        {
            pipeline.feed_frame(at, again.clone());
        }
        after_press = false;
        if matches!(
            t,
            EeToken::Tag(
                EeTag::BeginPos
                    | EeTag::BeginPosRot
                    | EeTag::EmptyBoard
                    | EeTag::PowerUp
                    | EeTag::Watchdog
            )
        ) {
            // A game is being set up: the last game's clock is not known to run any more.
            running = None;
        }
        match (*t, last_press.as_mut()) {
            (EeToken::Clock { left, .. }, _) => {
                collect(&mut pipeline, index, &mut games);
                let before = games.last().map_or(0, |(_, events)| events.len());
                last_press = Some((left == pipeline.white_on_left(), before, false));
            }
            (EeToken::Field { .. }, Some((white, _, other))) => {
                *other |= touched.is_some_and(|w| w != *white);
            }
            _ => {}
        }
        for frame in replayer.frames(t) {
            if matches!(frame, Frame::BwTime(_)) {
                running = Some((at, frame.clone()));
                after_press = true;
            }
            pipeline.feed_frame(at, frame.clone());
            // A press while the board shows a move part-way (a castling's rook still to come),
            // or before the presser's move shows at all (a fast hand: the board sees the squares
            // after the lever, dgt-notes 1.13; told only once which clock is White's is known,
            // not from a press that starts the clock): the presser's squares that follow come
            // within its scan.
            if let (Frame::BwTime(_), EeToken::Clock { left, .. }) = (&frame, *t) {
                // The lever goes high on the right when the left player presses.
                let white = left == pipeline.white_on_left();
                let presser = if white { Side::White } else { Side::Black };
                let early =
                    pipeline.clock_side().is_some() && pipeline.side_to_move() == Some(presser);
                if !pipeline.board_fits() || early {
                    press_window = Some((white, PRESS_WINDOW_TOKENS));
                }
            }
        }
        // The presser's move shows whole: what follows is a new touch (the kings' gesture
        // lifting the king that just moved), made after the press was recorded.
        if let Some((white, _)) = press_window {
            let presser = if white { Side::White } else { Side::Black };
            if pipeline.board_fits() && pipeline.side_to_move().is_some_and(|s| s != presser) {
                press_window = None;
            }
        }
        collect(&mut pipeline, index, &mut games);
    }
    // Let the last move settle, then record what is still in hand.
    at += RUNNING_AFTER_MS + STEP_MS;
    pipeline.tick(at);
    if let Some((_, again)) = running.take() {
        pipeline.feed_frame(at, again);
    }
    collect(&mut pipeline, tokens.len(), &mut games);
    let mut before_flush = games.last().map_or(0, |(_, events)| events.len());
    // The log read within the last press's scan: the presser's hand may still hold a piece of
    // the move (a slide not yet set down, dgt-notes 1.13). If so, and the other side has not
    // touched a piece since, the press confirms nothing it recorded: those plies are still in
    // hand, and the board as it is now settles them.
    if let (Some((white, before, false)), Some((_, events))) = (last_press, games.last())
        && last_move_in_hand(events, &replayer.board, white)
    {
        before_flush = before_flush.min(before);
    }
    pipeline.flush(at);
    collect(&mut pipeline, tokens.len(), &mut games);

    let last = games.len().saturating_sub(1);
    let starts: Vec<usize> = games.iter().map(|(i, _)| *i).collect();
    games
        .into_iter()
        .enumerate()
        .map(|(n, (start, events))| {
            let end = starts.get(n + 1).copied().unwrap_or(tokens.len());
            let orientation = events
                .iter()
                .find_map(|e| match e {
                    TrackerEvent::GameStarted { orientation, .. } => Some(*orientation),
                    _ => None,
                })
                .unwrap_or(Orientation::Normal);
            let moves = live_moves(&events);
            let confirmed = if n == last {
                live_moves(&events[..before_flush.min(events.len())]).len()
            } else {
                moves.len()
            };
            let begins = events.iter().find_map(|e| match e {
                TrackerEvent::GameStarted { start, .. } => start.clone(),
                _ => None,
            });
            MemoryGame {
                digest: digest(orientation, begins.as_deref(), &moves),
                confirmed: confirmed.min(moves.len()),
                moves,
                orientation,
                tokens: start..end.max(start),
                events,
            }
        })
        .collect()
}

/// Whether the last move of a game's `events`, if `white` (or Black) made it, is not all on
/// `board` (DGT numbering) yet: a square it changed does not hold what the move put there (the
/// piece is still in the presser's hand).
fn last_move_in_hand(events: &[TrackerEvent], board: &[u8; 64], white: bool) -> bool {
    let moves = live_moves(events);
    let Some(last) = moves.last() else {
        return false;
    };
    if (Side::of_ply(last.ply) == Side::White) != white {
        return false;
    }
    let (orientation, start) = events
        .iter()
        .find_map(|e| match e {
            TrackerEvent::GameStarted {
                orientation, start, ..
            } => Some((*orientation, start.clone())),
            _ => None,
        })
        .unwrap_or_default();
    let before = match moves.len().checked_sub(2) {
        Some(i) => ChessGame::parse_start(&moves[i].position),
        None => start.map_or_else(|| Some(ChessGame::start()), |t| ChessGame::parse_start(&t)),
    };
    let (Some(before), Some(after)) = (before, ChessGame::parse_start(&last.position)) else {
        return false;
    };
    let (before, after) = (ChessGame::reading(&before), ChessGame::reading(&after));
    let mut sensed = DgtBoardState::default();
    sensed.apply_dump(&BoardDump(*board));
    let now = sensed.reading(orientation);
    (0..64).any(|sq| {
        after.0[sq] != before.0[sq] && after.0[sq] != piece::EMPTY && now.0[sq] != after.0[sq]
    })
}

/// Whether a DGT piece code is White's (`Some(true)`), Black's, or no piece.
fn side_of(code: u8) -> Option<bool> {
    if (piece::WPAWN..=piece::WQUEEN).contains(&code) {
        Some(true)
    } else if (piece::BPAWN..=piece::BQUEEN).contains(&code) {
        Some(false)
    } else {
        None
    }
}

/// The plies board memory holds beyond a record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Continuation {
    /// Completed while the log went on, with the clocks the log holds.
    pub recorded: Vec<RecordedMove>,
    /// On the board when the memory was read, its press not in the log yet (their clocks are
    /// not theirs: a press still to come will stamp them).
    pub in_hand: Vec<RecordedMove>,
}

/// What the live recording knows of the game its board's memory is read for.
#[derive(Clone, Copy, Debug)]
pub struct Recording<'a> {
    pub orientation: Orientation,
    pub variant: Variant,
    /// Which clock is White's, when the live clock readings have settled it.
    pub white_on_left: Option<bool>,
    /// The game's start position as the store keeps it (`None`: the standard one).
    pub start: Option<&'a str>,
    /// The recorded plies, each as its UCI.
    pub record: &'a [String],
    /// The clocks (White's, Black's) each recorded ply's press showed, where one did: a log
    /// read without the clock side is checked against them.
    pub clocks: &'a [Option<(u64, u64)>],
}

/// What board memory holds beyond a record: the plies after `recording.record` of the latest
/// game in the log, played in its orientation, that begins with every recorded ply. The log is
/// read through the same tracker as a live board ([`games_from_log`]), under the recording's
/// variant and clock side, so a ply found here is one the board showed. Pure.
pub fn continuation(log: &[u8], recording: &Recording) -> Result<Continuation, MemoryError> {
    let Recording {
        orientation,
        variant,
        white_on_left,
        record,
        clocks,
        ..
    } = *recording;
    let tokens = parse_log(log)?;
    let not_in_memory = MemoryError::NotInMemory {
        plies: record.len(),
    };
    let games = games_from_log_as(&tokens, 0, variant, white_on_left);
    let mut game = latest_with_record(&games, orientation, record)
        .ok_or(not_in_memory)?
        .clone();
    // Which clock is White's, if not given, the log's own readings tell. If the game read so
    // does not give the record's press clocks (its presses taken for the other side's, each a
    // move late: a reading that also fits the log), the log is read again with each side, and
    // the one that gives them is taken.
    // (With no press clock recorded there is nothing to tell them apart: no reading again.)
    let pressed = clocks.iter().any(Option::is_some);
    if white_on_left.is_none() && pressed && clocks_agree(&game, clocks) <= 0 {
        let mut best = 0;
        for side in [true, false] {
            let again = games_from_log_as(&tokens, 0, variant, Some(side));
            if let Some(g) = latest_with_record(&again, orientation, record) {
                let agree = clocks_agree(g, clocks);
                if agree > best {
                    best = agree;
                    game = g.clone();
                }
            }
        }
    }
    let split = game.confirmed.max(record.len());
    Ok(Continuation {
        recorded: game.moves[record.len()..split].to_vec(),
        in_hand: game.moves[split..].to_vec(),
    })
}

/// The latest game of `games` played in `orientation` that begins with every ply of `record`
/// (with nothing recorded yet, only the latest game can be the one).
fn latest_with_record<'g>(
    games: &'g [MemoryGame],
    orientation: Orientation,
    record: &[String],
) -> Option<&'g MemoryGame> {
    let begins_with_record = |g: &&MemoryGame| {
        g.orientation == orientation
            && g.moves.len() >= record.len()
            && g.moves
                .iter()
                .zip(record)
                .all(|(m, r)| m.uci.as_deref().unwrap_or(&m.notation) == r)
    };
    if record.is_empty() {
        games.last().filter(begins_with_record)
    } else {
        games.iter().rev().find(begins_with_record)
    }
}

/// How many of the recorded plies' press clocks the game read from the log gives the same way
/// round, less those it gives swapped.
fn clocks_agree(game: &MemoryGame, clocks: &[Option<(u64, u64)>]) -> i64 {
    game.moves
        .iter()
        .zip(clocks)
        .filter_map(|(m, c)| Some((m.clock_white_ms?, m.clock_black_ms?, (*c)?)))
        .filter(|(w, b, (rw, rb))| w != b && rw != rb)
        .map(|(w, b, (rw, rb))| {
            if (w, b) == (rw, rb) {
                1
            } else if (w, b) == (rb, rw) {
                -1
            } else {
                0
            }
        })
        .sum()
}

/// The tokens with their indices, in the order the hands made them: a press written between a
/// piece lifted and a piece put down (the board scans its squares one by one, so the last square
/// of a move may be seen just after the lever, dgt-notes 1.13) comes after the piece put down.
fn in_hand_order(tokens: &[EeToken]) -> Vec<(usize, &EeToken)> {
    let mut order: Vec<(usize, &EeToken)> = tokens.iter().enumerate().collect();
    let mut i = 1;
    while i + 1 < order.len() {
        let lifted = matches!(order[i - 1].1, EeToken::Field { piece: 0, .. });
        let press = matches!(order[i].1, EeToken::Clock { .. });
        let put_down = matches!(order[i + 1].1, EeToken::Field { piece, .. } if *piece != 0);
        if lifted && press && put_down {
            order.swap(i, i + 1);
            i += 2;
        } else {
            i += 1;
        }
    }
    order
}

/// The live moves after every move, revision and takeback of one game.
fn live_moves(events: &[TrackerEvent]) -> Vec<RecordedMove> {
    let mut moves: Vec<RecordedMove> = Vec::new();
    for e in events {
        match e {
            TrackerEvent::Move(mv) => {
                moves.truncate(mv.ply.saturating_sub(1) as usize);
                moves.push(mv.clone());
            }
            TrackerEvent::Revision { new, .. } => {
                moves.truncate(new.ply.saturating_sub(1) as usize);
                moves.push(new.clone());
            }
            TrackerEvent::Takeback { to_ply, .. } => moves.truncate(*to_ply as usize),
            _ => {}
        }
    }
    moves
}

/// Bytes of log a board keeps (dgt-notes 1.11: an 8 KB cyclic buffer of 0x1f00 bytes).
pub const EE_LOG_CAPACITY: usize = 0x1f00;

/// A board's memory as the board writes it (the emulator's side): power-up, one field token per
/// piece, BEGINPOS / BEGINPOS_ROT when a start position appears, every field change (quick when
/// under 250 ms after the previous one), the halted clock's time at every lever change, and
/// DOWNLOADED after each dump. The oldest whole tokens give way when the log is full.
#[derive(Clone, Debug)]
pub struct EeRecorder {
    tokens: std::collections::VecDeque<EeToken>,
    bytes: usize,
    board: [u8; 64],
    last_field_ms: Option<Millis>,
    /// The lever of the last clock frame: `Some(true)` high on the right.
    lever: Option<bool>,
    /// The start position has been tagged and not left by more than two pieces since.
    at_start: bool,
}

impl EeRecorder {
    /// A board powered up with `board` on it (board numbering).
    pub fn power_up(board: &[u8; 64]) -> EeRecorder {
        let mut r = EeRecorder {
            tokens: std::collections::VecDeque::new(),
            bytes: 0,
            board: *board,
            last_field_ms: None,
            lever: None,
            at_start: false,
        };
        for _ in 0..3 {
            r.push(EeToken::Tag(EeTag::Nop));
        }
        r.push(EeToken::Tag(EeTag::PowerUp));
        for (square, &piece) in board.iter().enumerate() {
            if piece != piece::EMPTY {
                r.push(EeToken::Field {
                    square: square as u8,
                    piece,
                    quick: false,
                });
            }
        }
        r.check_start();
        r
    }

    /// Writes a token as it is (a bus board's lever change, both clocks; a start tag).
    pub fn write(&mut self, t: EeToken) {
        self.push(t);
    }

    fn push(&mut self, t: EeToken) {
        let mut b = Vec::with_capacity(3);
        t.encode(&mut b);
        self.bytes += b.len();
        self.tokens.push_back(t);
        // One byte stays free for the EOF a dump ends with.
        while self.bytes + 1 > EE_LOG_CAPACITY {
            let Some(old) = self.tokens.pop_front() else {
                break;
            };
            let mut b = Vec::with_capacity(3);
            old.encode(&mut b);
            self.bytes -= b.len();
        }
    }

    /// Tags a start position when one appears (either way round); more than two pieces off it
    /// arm the tag again.
    fn check_start(&mut self) {
        let start = start_position();
        let mut rotated = start;
        rotated.reverse();
        let off = |s: &[u8; 64]| self.board.iter().zip(s).filter(|(a, b)| a != b).count();
        let (off_normal, off_rotated) = (off(&start), off(&rotated));
        if !self.at_start && off_normal == 0 {
            self.push(EeToken::Tag(EeTag::BeginPos));
            self.at_start = true;
        } else if !self.at_start && off_rotated == 0 {
            self.push(EeToken::Tag(EeTag::BeginPosRot));
            self.at_start = true;
        } else if off_normal.min(off_rotated) > 2 {
            self.at_start = false;
        }
    }

    /// A square changed at `at_ms`.
    pub fn field(&mut self, at_ms: Millis, square: u8, piece: u8) {
        self.field_token(at_ms, square, piece);
    }

    /// [`EeRecorder::field`], with the token written, if the square is one.
    pub fn field_token(&mut self, at_ms: Millis, square: u8, piece: u8) -> Option<EeToken> {
        let slot = self.board.get_mut(usize::from(square))?;
        *slot = piece;
        let quick = self
            .last_field_ms
            .is_some_and(|t| at_ms.saturating_sub(t) < 250);
        self.last_field_ms = Some(at_ms);
        let token = EeToken::Field {
            square,
            piece,
            quick,
        };
        self.push(token);
        self.check_start();
        Some(token)
    }

    /// A clock frame: at a lever change the halted clock's time is written.
    pub fn clock(&mut self, t: &BwTime) {
        if t.is_ack() || t.is_null() || t.no_clock() || !t.is_plausible() {
            return;
        }
        let lever = t.lever_right_high();
        let changed = self.lever.is_some_and(|l| l != lever);
        self.lever = Some(lever);
        if changed {
            // Lever now high on the right: the left player pressed, the left clock halted.
            let time = if lever { t.left() } else { t.right() };
            self.push(EeToken::Clock { left: lever, time });
        }
    }

    /// The squares as the board stands now (board numbering).
    pub fn board(&self) -> &[u8; 64] {
        &self.board
    }

    /// The tokens written so far, oldest first.
    pub fn tokens(&self) -> Vec<EeToken> {
        self.tokens.iter().copied().collect()
    }

    /// The BUS_FROM_START data: the log from the last START_TAG on, the tag first (the whole
    /// log when the ring no longer holds one).
    pub fn from_start(&self) -> Vec<u8> {
        let from = self
            .tokens
            .iter()
            .rposition(|t| *t == EeToken::Tag(EeTag::StartTag))
            .unwrap_or(0);
        let mut data = Vec::with_capacity(self.bytes);
        for t in self.tokens.iter().skip(from) {
            t.encode(&mut data);
        }
        data
    }

    /// The EE_MOVES reply (the log and EOF, in a 0x8f frame); DOWNLOADED is written afterwards.
    pub fn dump(&mut self) -> Frame {
        let mut log = Vec::with_capacity(self.bytes + 1);
        for t in &self.tokens {
            t.encode(&mut log);
        }
        EeToken::Tag(EeTag::Eof).encode(&mut log);
        self.push(EeToken::Tag(EeTag::Downloaded));
        Frame::EeMoves(log)
    }
}

/// Checks that a log is whole: it decodes, and ends with EE_EOF (dgt-notes 1.11).
///
/// A full memory is a ring: its oldest bytes may be the tail of a token written over, so up to
/// two leading bytes are skipped when the log decodes whole from there (and only then).
pub fn parse_log(log: &[u8]) -> Result<Vec<EeToken>, MemoryError> {
    let whole = |log: &[u8]| -> Result<Vec<EeToken>, MemoryError> {
        let tokens = crate::protocol::dgt::parse_ee_tokens(log)?;
        match tokens.last() {
            Some(EeToken::Tag(EeTag::Eof)) => Ok(tokens),
            _ => Err(MemoryError::NoEof),
        }
    };
    let first = whole(log);
    // A ring that has wrapped is full, up to the token that did not fit.
    if first.is_ok() || log.len() + 2 < EE_LOG_CAPACITY {
        return first;
    }
    (1..=2)
        .find_map(|skip| whole(&log[skip..]).ok())
        .ok_or_else(|| first.err().unwrap_or(MemoryError::NoEof))
}

/// The log inside a stream of board bytes: the payload of its first EE_MOVES frame.
pub fn log_from_bytes(bytes: &[u8], source_name: &str) -> Result<Vec<u8>, MemoryError> {
    let mut reader = FrameReader::new(Mode::Single);
    reader.push(bytes);
    let mut warning = None;
    while let Some(next) = reader.next_frame() {
        match next {
            Ok(Frame::EeMoves(log)) => return Ok(log),
            Ok(_) => {}
            Err(w) => {
                warning.get_or_insert(w.to_string());
            }
        }
    }
    // A reply cut short or with a bad byte inside shows as a decode warning, or as bytes left.
    if bytes.contains(&crate::protocol::dgt::id::EE_MOVES) {
        let detail = warning.unwrap_or_else(|| "the frame is cut short".to_owned());
        return Err(MemoryError::BadFrame {
            source_name: source_name.to_owned(),
            detail,
        });
    }
    Err(MemoryError::NoReply(source_name.to_owned()))
}

/// What `--from FILE` holds: a capture v1 file (its bytes from the board), or the raw reply.
/// Returns the bytes from the board.
pub fn read_dump(path: &Path) -> Result<Vec<u8>, MemoryError> {
    let io = |source| MemoryError::Io {
        path: path.display().to_string(),
        source,
    };
    let bytes = std::fs::read(path).map_err(io)?;
    if bytes.starts_with(b"# boardscribe capture") {
        let text = String::from_utf8_lossy(&bytes);
        let capture = parse_capture(&text)?;
        return Ok(capture
            .chunks
            .iter()
            .filter(|c| c.dir == Direction::FromBoard)
            .flat_map(|c| c.bytes.iter().copied())
            .collect());
    }
    Ok(bytes)
}

/// Asks the board on `port` for its memory (DGT_SEND_EE_MOVES, 0x49) and reads the reply; it
/// takes about 8 s at 9600 baud for a full log. Returns the bytes read.
pub async fn fetch_from_port(port: &Path, wait: Duration) -> Result<Vec<u8>, MemoryError> {
    let mut stream = serial::open(port)?;
    // A board in update mode would mix field updates into the reply: reset it first.
    serial::send(&mut stream, port, &[cmd::SEND_RESET, cmd::SEND_EE_MOVES]).await?;
    let deadline = tokio::time::Instant::now() + wait;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if log_from_bytes(&got, "").is_ok() {
            return Ok(got);
        }
        let n = tokio::select! {
            read = serial::read(&mut stream, port, &mut buf) => read?,
            _ = tokio::time::sleep_until(deadline) => {
                let shown = port.display().to_string();
                return Err(match log_from_bytes(&got, &shown) {
                    Err(e @ MemoryError::BadFrame { .. }) => e,
                    _ => MemoryError::Timeout { port: shown, secs: wait.as_secs(), got: got.len() },
                });
            }
        };
        if n == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        got.extend_from_slice(&buf[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full memory from a recorder that moved a knight back and forth until the ring wrapped.
    fn full_log() -> Vec<u8> {
        let mut r = EeRecorder::power_up(&start_position());
        // 2 bytes a token: 8000 of them are twice what the ring holds.
        for n in 0..2000 {
            let at = n * 1000;
            r.field(at, 62, piece::EMPTY);
            r.field(at + 300, 45, piece::WKNIGHT);
            r.field(at + 600, 45, piece::EMPTY);
            r.field(at + 900, 62, piece::WKNIGHT);
        }
        match r.dump() {
            Frame::EeMoves(log) => log,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_ring_cut_mid_token_is_read_from_the_next_token() {
        let log = full_log();
        assert!(log.len() + 2 >= EE_LOG_CAPACITY, "{}", log.len());
        let whole = parse_log(&log).unwrap();
        // The oldest bytes are the tails of tokens written over: a field byte, or a clock's
        // minutes and seconds.
        for tail in [&[0x3e][..], &[0x14, 0x59]] {
            let cut: Vec<u8> = tail.iter().chain(&log).copied().collect();
            assert_eq!(parse_log(&cut).unwrap(), whole, "{tail:02x?}");
        }
        // Damage further in is an error, whatever the size.
        let mut bad = log.clone();
        // 0x3e starts no token: one of the two is a token's first byte.
        bad[100] = 0x3e;
        bad[101] = 0x3e;
        assert!(parse_log(&bad).is_err());
        // A short log is never trimmed: a bad first byte is an error.
        assert!(matches!(
            parse_log(&[0x3e, 0x6b]),
            Err(MemoryError::Tokens(EeTokenError::NoToken { offset: 0, .. }))
        ));
    }

    /// A running clock reading: the left and right clocks (seconds), the lever high on the
    /// right when the left player has pressed.
    fn clock(left_s: u64, right_s: u64, left_pressed: bool) -> BwTime {
        let lever = if left_pressed {
            status::LEVER_RIGHT_HIGH
        } else {
            0
        };
        BwTime::from_parts(
            ClockTime::from_millis(right_s * 1000),
            0,
            ClockTime::from_millis(left_s * 1000),
            0,
            status::RUNNING | lever,
        )
    }

    /// Plays plies on a recorder, White's clock on the left: each ply is its squares (DGT
    /// numbering, piece put or EMPTY) and the mover's clock after the press; `press_first`:
    /// the press is written before the squares (a hand so fast that the board scans them after
    /// the lever).
    fn played(plies: &[(&[(u8, u8)], u64)], press_first: bool) -> (EeRecorder, Vec<u64>) {
        let mut r = EeRecorder::power_up(&start_position());
        let (mut left, mut right) = (300, 300);
        let mut at = 1_000;
        r.clock(&clock(left, right, false));
        let mut presses = Vec::new();
        for (n, (squares, time)) in plies.iter().enumerate() {
            let white = n % 2 == 0;
            if white {
                left = *time;
            } else {
                right = *time;
            }
            let press = clock(left, right, white);
            if press_first {
                r.clock(&press);
            }
            for &(sq, piece) in squares.iter() {
                at += 150;
                r.field(at, sq, piece);
            }
            if !press_first {
                r.clock(&press);
            }
            at += 2_000;
            presses.push(*time * 1000);
        }
        (r, presses)
    }

    fn log_of(mut r: EeRecorder) -> Vec<u8> {
        match r.dump() {
            Frame::EeMoves(log) => log,
            other => panic!("{other:?}"),
        }
    }

    /// The mover's clock of each recorded move.
    fn movers_clocks(moves: &[RecordedMove]) -> Vec<Option<u64>> {
        moves
            .iter()
            .map(|m| {
                if m.ply % 2 == 1 {
                    m.clock_white_ms
                } else {
                    m.clock_black_ms
                }
            })
            .collect()
    }

    use piece::{BKNIGHT, BPAWN, EMPTY, WBISHOP, WKNIGHT, WPAWN};
    // 1. e4 e5 2. Nf3 Nc6 3. Bb5, in DGT numbering (a8 = 0 ... h1 = 63).
    const E2: u8 = 52;
    const RUY: [(&[(u8, u8)], u64); 5] = [
        (&[(E2, EMPTY), (36, WPAWN)], 298),
        (&[(12, EMPTY), (28, BPAWN)], 297),
        (&[(62, EMPTY), (45, WKNIGHT)], 295),
        (&[(1, EMPTY), (18, BKNIGHT)], 294),
        (&[(61, EMPTY), (25, WBISHOP)], 292),
    ];

    #[test]
    fn presses_written_before_their_squares_stamp_their_own_moves() {
        let record = ["e2e4".to_string()];
        let recording = |white_on_left| Recording {
            orientation: Orientation::Normal,
            start: None,
            variant: Variant::Standard,
            white_on_left,
            record: &record,
            clocks: &[],
        };
        for press_first in [false, true] {
            let (r, presses) = played(&RUY, press_first);
            let log = log_of(r);
            // Which clock is White's, as the live readings of the game settled it.
            let found = continuation(&log, &recording(Some(true))).unwrap();
            let ucis: Vec<_> = found.recorded.iter().map(|m| m.uci.clone()).collect();
            assert_eq!(
                ucis,
                ["e7e5", "g1f3", "b8c6", "f1b5"].map(|u| Some(u.to_string())),
                "press first: {press_first}"
            );
            assert!(found.in_hand.is_empty(), "{:?}", found.in_hand);
            let want: Vec<_> = presses[1..].iter().map(|&t| Some(t)).collect();
            assert_eq!(
                movers_clocks(&found.recorded),
                want,
                "press first: {press_first}"
            );
        }
    }

    #[test]
    fn a_press_read_before_its_slide_is_set_down_records_nothing_of_it() {
        // 3. Bf1 slid over e2 towards d3, pressed: the memory is read before the board has
        // seen the bishop set down on d3 (dgt-notes 1.13).
        let mut plies = RUY;
        plies[4] = (&[(61, EMPTY), (E2, WBISHOP), (E2, EMPTY)], 292);
        let (r, _) = played(&plies, false);
        let log = log_of(r);
        let record = ["e2e4".to_string()];
        let found = continuation(
            &log,
            &Recording {
                orientation: Orientation::Normal,
                start: None,
                variant: Variant::Standard,
                white_on_left: Some(true),
                record: &record,
                clocks: &[],
            },
        )
        .unwrap();
        let recorded: Vec<_> = found.recorded.iter().map(|m| m.uci.clone()).collect();
        assert_eq!(
            recorded,
            ["e7e5", "g1f3", "b8c6"].map(|u| Some(u.to_string())),
            "the bishop's move is not recorded from memory: {:?}",
            found.in_hand
        );
    }
}
