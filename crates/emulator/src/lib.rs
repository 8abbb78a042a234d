//! Emulated boards driven by game records.
//!
//! Flow: a PGN becomes [`PgnGame`]s ([`games_from_pgn`]); [`script_game`] turns one game into a
//! [`BoardScript`], the timed bytes a real DGT board with a clock would send (pure: seeded
//! randomness, no I/O, no system clock); [`run_pty`] plays a script on a pseudo-terminal in
//! real time and answers host commands like a board. `handling` is the human hand model (how
//! pieces are lifted and placed), `dgt` the sensor scan, clock and wire timing, `irregular`
//! the scripted irregularities ([`EmulatorOptions::irregularities`], [`random_irregularities`])
//! whose truth each script carries in [`BoardScript::irregularities`]. `togyz` does the same
//! for a togyz korgool pit board: [`script_togyz`] turns a record into a [`TogyzScript`].
//! [`run_bus_pty`] plays many DGT scripts as a bus-mode chain on one pseudo-terminal.
//! [`chess960_game`] makes a seeded random Chess960 game to script like any other.
//! [`chesslink_script`] plays a DGT script's hands on a Millennium ChessLink board,
//! [`chessnut_script`] on a Chessnut board (USB HID, the runner on a socket) and
//! [`certabo_script`] on a Certabo RFID board (a chip per piece, a record every 350 ms),
//! [`ichessone_script`] on an iChessOne board (the position at every change). Every
//! kind of script is one type, [`Script`], over the board's kind ([`ScriptBoard`]).

mod bus;
mod certabo;
mod chess960;
mod chesslink;
mod chessnut;
mod dgt;
mod handling;
mod hardware;
mod ichessone;
mod irregular;
mod pgn;
mod pty;
mod script;
mod series;
mod togyz;
mod vendor;

pub use bus::{BusChainOptions, BusFault, log_tokens, run_bus_pty, script_address};
pub use certabo::{
    CALIBRATION_MS, CertaboBoard, CertaboScript, Chips, RECORD_MS, calibration, certabo_script,
    certabo_script_calibrated,
};
pub use chess960::chess960_game;
pub use chesslink::{ChessLinkBoard, ChessLinkScript, chesslink_script};
pub use chessnut::{ChessnutBoard, ChessnutScript, chessnut_script};
pub use dgt::{script_game, script_game_from, script_pgn};
pub use handling::Style;
pub use ichessone::{IChessOneBoard, IChessOneScript, ichessone_script};
pub use irregular::{
    DEFAULT_HOLD_MS, IllegalKind, IrregularityInfo, IrregularityScript, ScriptedIrregularity,
    WrongStartKind, random_irregularities,
};
pub use pgn::{PgnGame, games_from_pgn};
pub use pty::{PtyEvent, PtyFleet, PtyOptions, PtyScript, VendorScript, run_pty, run_togyz_pty};
pub use script::{DgtBoard, Event, Payload, Script, ScriptBoard, TogyzBoard, WireFrame};
pub use togyz::{
    TogyzAction, TogyzEmulatorOptions, TogyzEvent, TogyzIrregularity, TogyzIrregularityInfo,
    TogyzIrregularityKind, TogyzPayload, TogyzPlyInfo, TogyzScript, TogyzStyle,
    board_location as togyz_board_location, random_togyz_game, script_togyz, togyz_records,
};

use boardscribe_core::{
    Millis,
    arbiter::TimeControl,
    capture::capture_head,
    protocol::dgt::{BoardDump, Frame},
    sensor::dgt::{ClockLayout, ClockReading},
};

/// Errors of the emulator.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("PGN game {game}: {message}")]
    Pgn { game: usize, message: String },
    /// A record of another game given to the togyz emulator.
    #[error("game {game} is not a togyz korgool record: {why} (`emulate --kind dgt` plays chess)")]
    NotTogyz { game: usize, why: String },
    #[error("illegal move {san:?} at ply {ply}")]
    IllegalMove { ply: u32, san: String },
    #[error("bad emulator options: {0}")]
    BadOptions(String),
    /// Two games that cannot follow each other on one board.
    #[error("games in a series: {0}")]
    Series(String),
    /// The hand model tried something physically impossible (a bug in the emulator).
    #[error("impossible handling at ply {ply}: {detail}")]
    Physical { ply: u32, detail: String },
}

/// How a scripted game is played on the board.
#[derive(Clone, Debug, PartialEq)]
pub struct EmulatorOptions {
    /// Time multiplier for every human duration: 1.0 human, 0.3 blitz hands, 3.0 slow hands.
    pub speed: f64,
    /// Time multiplier for the thinking before each move alone (`None`: [`Self::speed`]): a
    /// demo's quick game with hands at a speed the board is made for.
    pub think_speed: Option<f64>,
    pub seed: u64,
    /// Black sits at the connector side: board index = normal index ^ 63.
    pub rotated: bool,
    /// Base and increment in ms; `None` with a clock means 15 min + 10 s.
    pub time_control: Option<(u64, u64)>,
    /// A DGT clock is connected (BWTIME frames, lever presses).
    pub clock: bool,
    /// White's clock is the right-hand one (Black chose that side, Article 6.4): the BWTIME's
    /// sides and its lever are the other way round.
    pub white_clock_right: bool,
    /// After the last move, show a decisive or drawn result with both kings on the centre squares.
    pub result_gesture: bool,
    /// Irregularities to play (at most one before each ply); empty: a clean game.
    pub irregularities: Vec<ScriptedIrregularity>,
}

impl Default for EmulatorOptions {
    fn default() -> Self {
        EmulatorOptions {
            speed: 1.0,
            think_speed: None,
            seed: 0,
            rotated: false,
            time_control: None,
            clock: true,
            white_clock_right: false,
            result_gesture: true,
            irregularities: Vec::new(),
        }
    }
}

/// The emulated clock of time control `tc`: its first period's base and increment in ms, what
/// [`EmulatorOptions::time_control`] and [`TogyzEmulatorOptions::time_control`] take (a delay
/// is not emulated: the clock counts down from the base).
pub fn clock_for(tc: &TimeControl) -> (u64, u64) {
    tc.periods().first().map_or((0, 0), |p| {
        (u64::from(p.base_secs) * 1000, p.increment_ms())
    })
}

/// What a script event is part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// The host's start-up commands and the board's replies (played back only in captures).
    Handshake,
    /// A FIELD_UPDATE caused by the hands during a ply.
    Move,
    /// A BWTIME frame: a clock tick, a lever press, the clock started or stopped.
    Clock,
    /// A FIELD_UPDATE of the kings-on-centre result gesture.
    ResultGesture,
    /// A FIELD_UPDATE of a scripted irregularity (its `ply` is the ply it happens before).
    Irregularity,
}

/// The events of a DGT board's script.
pub type ScriptEvent = Event<DgtBoard>;

/// What happened in one ply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlyInfo {
    /// 1-based.
    pub ply: u32,
    pub san: String,
    pub uci: String,
    pub styles: Vec<Style>,
    /// First hand action.
    pub start_ms: Millis,
    /// Last hand action.
    pub end_ms: Millis,
    /// The lever press, if a clock is connected (after an illegal move's press the lever is
    /// already down, so this press does not switch the clock).
    pub press_ms: Option<Millis>,
    /// Board index of the moving piece's origin (the king's for castling).
    pub from_index: u8,
    /// Board index of the moving piece's target (the king's for castling).
    pub to_index: u8,
    /// The board (board numbering) once the ply has settled.
    pub board_after: BoardDump,
}

/// A chess game as the timed traffic of a DGT board.
pub type BoardScript = Script<DgtBoard>;

impl BoardScript {
    /// The clock as each ply's press showed it (the first reading at or after the press whose
    /// lever moved): what a record of the game must carry; `None` for a ply without a press.
    pub fn press_clocks(&self) -> Vec<Option<ClockReading>> {
        let mut presses = Vec::new();
        let mut lever = None;
        for e in &self.events {
            if let Payload::Frame(Frame::BwTime(b)) = &e.payload
                && let Some(c) = ClockReading::from_bwtime_in(b, ClockLayout::default())
            {
                if lever.is_some_and(|l| l != c.lever_right_high) {
                    presses.push((e.at_ms, c));
                }
                lever = Some(c.lever_right_high);
            }
        }
        self.plies
            .iter()
            .map(|p| {
                let at = p.press_ms?;
                presses.iter().find(|(t, _)| *t >= at).map(|(_, c)| *c)
            })
            .collect()
    }

    /// Multiplies every time in the script by `f` (order is kept; `f` must be finite and >= 0).
    pub fn scale_times(&mut self, f: f64) {
        let s = |t: Millis| -> Millis {
            let v = (t as f64 * f).round();
            if v.is_finite() && v > 0.0 {
                v as Millis
            } else {
                0
            }
        };
        for e in &mut self.events {
            e.at_ms = s(e.at_ms);
        }
        for p in &mut self.plies {
            p.start_ms = s(p.start_ms);
            p.end_ms = s(p.end_ms);
            p.press_ms = p.press_ms.map(s);
        }
        self.body_start_ms = s(self.body_start_ms);
        for i in &mut self.irregularities {
            i.start_ms = s(i.start_ms);
            i.shown_ms = s(i.shown_ms);
            i.restore_ms = s(i.restore_ms);
            i.resolved_ms = s(i.resolved_ms);
            i.press_ms = i.press_ms.map(s);
            i.answer_press_ms = i.answer_press_ms.map(s);
        }
        // Rounding can never reorder, but keep the promise explicit.
        let mut last = 0;
        for e in &mut self.events {
            e.at_ms = e.at_ms.max(last);
            last = e.at_ms;
        }
    }

    /// How often each handling style occurs in this script.
    pub fn style_counts(&self) -> std::collections::BTreeMap<Style, usize> {
        let mut m = std::collections::BTreeMap::new();
        for p in &self.plies {
            for s in &p.styles {
                *m.entry(*s).or_insert(0) += 1;
            }
        }
        if self.result_gesture.is_some() {
            *m.entry(Style::ResultGesture).or_insert(0) += 1;
        }
        m
    }
}

/// The header of a capture the emulator writes, for `device` (`dgt`, `togyz`).
pub(crate) fn capture_header(device: &str, source: &str) -> String {
    capture_head(device, &[("source".to_string(), source.to_string())])
        .expect("the emulator's header keys are plain words and its sources single lines")
}
