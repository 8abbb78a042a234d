//! The script of an emulated board, of either kind: timed board traffic (each event's time,
//! direction and bytes, what it is part of and its ply), what each ply was, the board at the
//! start, the handshake's clock and serial number, the result gesture and the scripted
//! irregularities as played.
//!
//! Flow: `dgt` writes a [`Script<DgtBoard>`] ([`crate::BoardScript`]) and `togyz` a
//! [`Script<TogyzBoard>`] ([`crate::TogyzScript`]); the pty runners play them back and
//! [`Script::to_capture_text`] writes them as captures. [`ScriptBoard`] says what differs
//! between the kinds: the frames, what a ply records, the board dump, the irregularities. Pure.

use std::{convert::Infallible, fmt::Debug};

use boardscribe_core::{
    Millis,
    capture::push_line,
    kind::BoardKind,
    protocol::{Direction, dgt, tgz},
};

use super::{EventKind, capture_header};

/// A board-to-host frame as the wire carries it.
pub trait WireFrame: Clone + Debug + PartialEq + Eq {
    fn wire_bytes(&self) -> Vec<u8>;
}

impl WireFrame for dgt::Frame {
    fn wire_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
}

impl WireFrame for tgz::Frame {
    fn wire_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
}

/// What a kind of emulated board brings to its script.
pub trait ScriptBoard: Clone + Debug + PartialEq {
    /// The board's frames.
    type Frame: WireFrame;
    /// What a hand did, per event (`()` where an event's kind says it all).
    type Action: Copy + Debug + PartialEq + Eq;
    /// What happened in one ply.
    type Ply: Clone + Debug + PartialEq + Eq;
    /// The board as a dump reads it.
    type Dump: Clone + Debug + PartialEq + Eq;
    /// The result gesture made on the board (`Infallible`: the kind has none).
    type Gesture: Copy + Debug + PartialEq + Eq;
    /// A scripted irregularity as played.
    type Irregularity: Clone + Debug + PartialEq;
    /// The capture header's `device` and `source`.
    const DEVICE: &'static str;
    const SOURCE: &'static str;
}

/// A DGT chessboard with its clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DgtBoard;

/// A togyz korgool pit board (TGZ-1) with its clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TogyzBoard;

impl ScriptBoard for DgtBoard {
    type Frame = dgt::Frame;
    type Action = ();
    type Ply = crate::PlyInfo;
    type Dump = dgt::BoardDump;
    /// The kings' centre squares (board indices: white king, black king).
    type Gesture = (u8, u8);
    type Irregularity = crate::IrregularityInfo;
    const DEVICE: &'static str = BoardKind::Dgt.name();
    const SOURCE: &'static str = "boardscribe emulator script";
}

impl ScriptBoard for TogyzBoard {
    type Frame = tgz::Frame;
    type Action = crate::TogyzAction;
    type Ply = crate::TogyzPlyInfo;
    type Dump = tgz::PitDump;
    type Gesture = Infallible;
    type Irregularity = crate::TogyzIrregularityInfo;
    const DEVICE: &'static str = BoardKind::Togyz.name();
    const SOURCE: &'static str = "boardscribe togyz emulator script";
}

/// Bytes of one script event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload<F = dgt::Frame> {
    /// Host-to-board command bytes.
    Command(Vec<u8>),
    /// A board-to-host frame.
    Frame(F),
}

/// Puts a script's events in time order, then one frame at a time on the wire
/// ([`crate::hardware::space_on_wire`]: each frame from the board waits for the one before).
pub(crate) fn put_on_wire<B: ScriptBoard>(events: &mut [Event<B>]) {
    events.sort_by_key(|e| e.at_ms);
    crate::hardware::space_on_wire(events, |e| {
        let len = (e.dir == Direction::FromBoard).then(|| e.payload.to_bytes().len());
        (&mut e.at_ms, len)
    });
}

impl<F: WireFrame> Payload<F> {
    /// The wire bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Payload::Command(b) => b.clone(),
            Payload::Frame(f) => f.wire_bytes(),
        }
    }
}

/// One timed chunk of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event<B: ScriptBoard> {
    pub at_ms: Millis,
    pub dir: Direction,
    pub payload: Payload<B::Frame>,
    pub kind: EventKind,
    /// What the hand did (togyz: lift, sow, capture, press ...).
    pub action: B::Action,
    /// 1-based ply for hand events, presses and scripted irregularities (the ply they come
    /// before); the number of plies played so far otherwise (the result gesture is `plies +
    /// 1`); 0 in the handshake.
    pub ply: u32,
}

/// A game as timed board traffic.
#[derive(Clone, Debug, PartialEq)]
pub struct Script<B: ScriptBoard> {
    /// Sorted by time (non-decreasing).
    pub events: Vec<Event<B>>,
    pub plies: Vec<B::Ply>,
    /// The board at the start (board numbering).
    pub start_dump: B::Dump,
    /// The clock before it is started (the reply to SEND_CLK at the start).
    pub initial_clock: dgt::BwTime,
    /// Five ASCII digits.
    pub serial: String,
    pub rotated: bool,
    /// When the handshake is over and the game begins (the pty runner starts here).
    pub body_start_ms: Millis,
    /// The result gesture, if it was made.
    pub result_gesture: Option<B::Gesture>,
    /// The scripted irregularities as played, in ply order.
    pub irregularities: Vec<B::Irregularity>,
}

impl<B: ScriptBoard> Script<B> {
    /// Every event as `(time, direction, bytes)`.
    pub fn to_chunks(&self) -> Vec<(Millis, Direction, Vec<u8>)> {
        self.events
            .iter()
            .map(|e| (e.at_ms, e.dir, e.payload.to_bytes()))
            .collect()
    }

    /// The script as a capture v1 text (see DESIGN.md, "Capture files"), `# device:` the
    /// board's kind.
    pub fn to_capture_text(&self) -> String {
        let mut out = capture_header(B::DEVICE, B::SOURCE);
        for (t, dir, bytes) in self.to_chunks() {
            push_line(&mut out, t, dir, &bytes);
        }
        out
    }
}
