//! Board memory: a DGT board's EEPROM log (DGT_MSG_EE_MOVES, dgt-notes 1.11) read back into games.
//!
//! Flow: [`games_from_log`] (pure) folds the log's tokens into a 64-square board and turns them
//! into the frames a live board would have sent, at made-up times (the log has none): the board
//! after power-up as one BOARD_DUMP, every later field token as a FIELD_UPDATE, every clock token
//! as a BWTIME. These go through the same [`DgtPipeline`] (tracker and referee) as a live board,
//! and the events are cut into games at each `GameStarted`. Each game carries a digest of its
//! tokens, so an import can tell a game it already stored. Pure: reading the reply from a file, a
//! capture or a board on a serial port is the daemon's (`device::memory`).
//! A board writes BEGINPOS only for the standard start (dgt-notes 1.11): a Chess960 set-up is
//! read from its field tokens, by a tracker that knows the 960 starts ([`games_from_log_in`]).

use crate::sensor::dgt::DgtFrames as _;
use crate::{
    Millis,
    arbiter::LawsSetup,
    game::{GameKind, Variant, chess::ChessGame},
    pipeline::{DgtPipeline, Notice},
    protocol::{
        FrameReader,
        dgt::{
            BoardDump, BwTime, ClockTime, EeTag, EeToken, EeTokenError, Frame, Mode, piece, status,
        },
    },
    sensor::{Orientation, dgt::ChessSensor},
    tracker::{RecordedMove, Side, Tracker, TrackerEvent, TrackerSettings},
};

mod continuation;
mod ring;

use continuation::live_moves;
pub use continuation::{Continuation, Recording, continuation};
pub use ring::{EE_LOG_CAPACITY, EeRecorder, log_from_bytes, parse_log};

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
/// tracker, starting the made-up clock at `start_ms`. Pure. What the reading noticed is not kept
/// ([`games_from_log_in`] hands it out).
pub fn games_from_log(tokens: &[EeToken], start_ms: Millis) -> Vec<MemoryGame> {
    games_from_log_in(tokens, start_ms, Variant::Standard, &mut Vec::new())
}

/// [`games_from_log`] for games of `variant`: under Chess960 any of its start positions set up
/// begins a game. What the pipeline reading it noticed goes into `notices`, for the edge to log.
pub fn games_from_log_in(
    tokens: &[EeToken],
    start_ms: Millis,
    variant: Variant,
    notices: &mut Vec<Notice>,
) -> Vec<MemoryGame> {
    games_from_log_as(tokens, start_ms, variant, None, notices)
}

/// [`games_from_log_in`], with which clock is White's when it is known (`white_on_left`: the
/// live readings of the game settled it); otherwise the presses in the log decide it.
fn games_from_log_as(
    tokens: &[EeToken],
    start_ms: Millis,
    variant: Variant,
    white_on_left: Option<bool>,
    notices: &mut Vec<Notice>,
) -> Vec<MemoryGame> {
    let settings = TrackerSettings {
        variant,
        ..TrackerSettings::default()
    };
    let mut tracker = Tracker::new(settings);
    if let Some(left) = white_on_left {
        tracker.settle_clock_side(left);
    }
    let mut pipeline = DgtPipeline::new(tracker, LawsSetup::default().referee());
    let mut replayer = Replayer::new(variant);
    let mut at = start_ms;
    let mut games: Vec<(usize, Vec<TrackerEvent>)> = Vec::new();
    let collect = |pipeline: &mut DgtPipeline, index: usize, games: &mut Vec<_>| {
        for event in pipeline.take_events() {
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
    notices.append(&mut pipeline.take_notices());

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
    let mut sensed = ChessSensor::default();
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
            let found = continuation(&log, &recording(Some(true)), &mut Vec::new()).unwrap();
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
            &mut Vec::new(),
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
