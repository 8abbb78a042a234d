//! One bus board's replies as the single-board frames its pipeline reads.
//!
//! Flow: BUS_BRD_DUMP (64 codes) becomes a BOARD_DUMP, BUS_BWTIME (7 bytes) the same BWTIME,
//! BUS_UPDATE (EEPROM tokens, dgt-notes 1.11) one FIELD_UPDATE per field token in order; a clock
//! token (written on a lever change) asks for the clock, a power-up or watchdog tag or tokens
//! that do not decode put the board in doubt (a dump next). [`DgtBus`] is the pipeline's board
//! kind for a bus board: its raw stream is the bus bytes (`device: dgt-bus` in a capture), its
//! frames these folds. Pure.

use tracing::debug;

use crate::{
    arbiter::Referee,
    game::chess::ChessGame,
    pipeline::{Applied, Board, Dgt},
    protocol::dgt::{
        BoardDump, BusReply, BwTime, EeTag, EeToken, Frame, Mode, bus_id, parse_ee_tokens,
    },
    sensor::dgt::DgtBoardState,
};

/// What one reply means for the board's pipeline and for the master.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folded {
    /// Frames for the pipeline, in order.
    pub frames: Vec<Frame>,
    /// A lever was pressed: read the clock.
    pub clock_changed: bool,
    /// Why the board's state is in doubt (a dump next), if it is.
    pub doubt: Option<String>,
}

/// Folds one good reply (see the module doc).
pub fn fold_reply(reply: &BusReply) -> Folded {
    let mut out = Folded::default();
    match reply.id.0 {
        bus_id::BRD_DUMP => match <[u8; 64]>::try_from(reply.data.as_slice()) {
            Ok(codes) => out.frames.push(Frame::BoardDump(BoardDump(codes))),
            Err(_) => out.doubt = Some(format!("a dump of {} bytes", reply.data.len())),
        },
        bus_id::BWTIME => match <[u8; 7]>::try_from(reply.data.as_slice()) {
            Ok(t) => out.frames.push(Frame::BwTime(BwTime(t))),
            Err(_) => out.doubt = Some(format!("a clock of {} bytes", reply.data.len())),
        },
        bus_id::UPDATE => match parse_ee_tokens(&reply.data) {
            Ok(tokens) => {
                for t in tokens {
                    match t {
                        EeToken::Field { square, piece, .. } => {
                            out.frames.push(Frame::FieldUpdate { square, piece });
                        }
                        EeToken::Clock { .. } => out.clock_changed = true,
                        EeToken::Tag(EeTag::PowerUp | EeTag::Watchdog) => {
                            out.doubt = Some("the board restarted".to_owned());
                        }
                        EeToken::Tag(_) => {}
                    }
                }
            }
            Err(e) => out.doubt = Some(e.to_string()),
        },
        other => debug!(id = other, "bus reply not folded"),
    }
    out
}

/// A DGT chessboard on a bus, as a pipeline sees it: bus replies (Mode::Bus frames) folded into
/// the same sensor state, tracker and referee as a board on its own port. A reply with a bad
/// checksum is not folded (the master asks for it again).
pub struct DgtBus;

impl Board for DgtBus {
    type Wire = Mode;
    type Frame = Frame;
    type Game = ChessGame;
    type Sensor = DgtBoardState;
    type Judge = Referee;

    fn wire() -> Mode {
        Mode::Bus
    }

    fn apply(sensor: &mut DgtBoardState, frame: Frame) -> Applied {
        let Frame::Bus(reply) = frame else {
            return Dgt::apply(sensor, frame);
        };
        if !reply.checksum_ok {
            return Applied::Nothing;
        }
        let mut board = false;
        let mut clock = None;
        for f in fold_reply(&reply).frames {
            match Dgt::apply(sensor, f) {
                Applied::Board => board = true,
                Applied::Clock(t) => clock = Some(t),
                Applied::Nothing => {}
            }
        }
        match clock {
            Some(t) => Applied::Clock(t),
            None if board && sensor.is_known() => Applied::Board,
            None => Applied::Nothing,
        }
    }

    fn reset(sensor: &mut DgtBoardState) {
        sensor.reset();
    }

    /// A good reply becomes its folded frames (each field change observed in turn, as from a
    /// board on its own port); a bad one nothing.
    fn split(frame: Frame) -> Vec<Frame> {
        match frame {
            Frame::Bus(reply) if reply.checksum_ok => fold_reply(&reply).frames,
            Frame::Bus(_) => Vec::new(),
            other => vec![other],
        }
    }
}
