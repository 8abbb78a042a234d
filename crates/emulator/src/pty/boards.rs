//! How each kind of emulated board answers on its pseudo-terminal (or socket): a DGT board's
//! modes, dumps, clock and memory replies; a TGZ-1 pit board's; and every other vendor's
//! chessboard through its module's [`Emulated`] answers.

use super::*;
use crate::script::WireFrame;

/// What an emulated DGT board holds: the pieces, and its memory (answered to SEND_EE_MOVES).
pub(super) struct DgtState {
    pub(super) board: [u8; 64],
    pub(super) memory: EeRecorder,
}

impl PtyBoard for BoardScript {
    type State = DgtState;
    type Event = ScriptEvent;
    const DEVICE: &'static str = BoardKind::Dgt.name();
    const NAME: &'static str = "emulated DGT board";

    fn start_state(&self) -> DgtState {
        DgtState {
            board: self.start_dump.0,
            memory: EeRecorder::power_up(&self.start_dump.0),
        }
    }

    fn initial_clock(&self) -> BwTime {
        self.initial_clock
    }

    fn body_start_ms(&self) -> Millis {
        self.body_start_ms
    }

    fn body(&self) -> Vec<&ScriptEvent> {
        self.events
            .iter()
            .filter(|e| e.kind != EventKind::Handshake)
            .collect()
    }

    fn at_ms(e: &ScriptEvent) -> Millis {
        e.at_ms
    }

    fn forget_memory(state: &mut DgtState) {
        state.memory = EeRecorder::power_up(&state.board);
    }

    fn unplug_after(&self, body: &[&ScriptEvent], ply: u32) -> Option<usize> {
        let info = self.plies.iter().find(|p| p.ply == ply)?;
        body.iter().position(|e| {
            e.kind == EventKind::Move
                && e.ply == ply
                && e.payload
                    == Payload::Frame(Frame::FieldUpdate {
                        square: info.from_index,
                        piece: 0,
                    })
        })
    }

    fn play(
        state: &mut DgtState,
        clock: &mut BwTime,
        e: &ScriptEvent,
    ) -> Option<(Vec<u8>, Channel)> {
        let Payload::Frame(f) = &e.payload else {
            return None;
        };
        let channel = match f {
            Frame::FieldUpdate { square, piece } => {
                if let Some(s) = state.board.get_mut(usize::from(*square)) {
                    *s = *piece;
                }
                state.memory.field(e.at_ms, *square, *piece);
                Channel::Board
            }
            Frame::BwTime(t) => {
                *clock = *t;
                state.memory.clock(t);
                Channel::Clock
            }
            _ => Channel::Board,
        };
        Some((f.to_bytes(), channel))
    }

    fn command(&self, buf: &[u8], state: &mut DgtState, clock: &BwTime) -> Option<(usize, Host)> {
        let &c = buf.first()?;
        if c == cmd::CLOCK_MESSAGE || c == cmd::SET_LEDS {
            // `c size data...`: the size byte counts what follows it.
            let &size = buf.get(1)?;
            let total = 2 + usize::from(size);
            if buf.len() < total {
                return None;
            }
            if c == cmd::CLOCK_MESSAGE {
                // Acknowledged as a BWTIME (dgt-notes 1.9): ack0 0x10, ack1 = the command.
                let acked = buf.get(3).copied().unwrap_or(0) & 0x7f;
                let ack = Frame::BwTime(BwTime([0x0a, 0x10, acked, 0x0a, 0, 0, 0]));
                return Some((total, Host::ClockReply(ack.to_bytes())));
            }
            return Some((total, Host::Ignore));
        }
        let serial_number = self.serial.parse::<u32>().unwrap_or(0);
        let reply = match c {
            cmd::SEND_RESET => return Some((1, Host::Reset)),
            cmd::SEND_UPDATE | cmd::SEND_UPDATE_NICE => {
                return Some((1, Host::Updates(Mode::Full)));
            }
            cmd::SEND_UPDATE_BRD => return Some((1, Host::Updates(Mode::Board))),
            cmd::SEND_CLK => Frame::BwTime(*clock),
            cmd::SEND_BRD => Frame::BoardDump(BoardDump(state.board)),
            cmd::SEND_EE_MOVES => state.memory.dump(),
            cmd::RETURN_SERIALNR => Frame::SerialNr(self.serial.clone()),
            cmd::RETURN_LONG_SERIALNR => Frame::LongSerialNr(format!("1.070{}", self.serial)),
            cmd::RETURN_BUSADRES => Frame::BusAddress((serial_number & 0x3fff) as u16),
            cmd::SEND_VERSION => Frame::Version { major: 1, minor: 7 },
            cmd::SEND_TRADEMARK => {
                Frame::Trademark("boardscribe emulator of a DGT e-board".to_string())
            }
            cmd::SEND_BATTERY_STATUS => {
                Frame::Battery(BatteryStatus([100, 0x7f, 0x7f, 0, 0, 0, 0, 0, 0]))
            }
            _ => return Some((1, Host::Ignore)),
        };
        Some((1, Host::Reply(reply.to_bytes())))
    }
}

impl PtyBoard for TogyzScript {
    type State = PitDump;
    type Event = TogyzEvent;
    const DEVICE: &'static str = BoardKind::Togyz.name();
    const NAME: &'static str = "emulated togyz pit board";

    fn start_state(&self) -> PitDump {
        self.start_dump
    }

    fn initial_clock(&self) -> BwTime {
        self.initial_clock
    }

    fn body_start_ms(&self) -> Millis {
        self.body_start_ms
    }

    fn body(&self) -> Vec<&TogyzEvent> {
        self.events
            .iter()
            .filter(|e| e.kind != EventKind::Handshake)
            .collect()
    }

    fn at_ms(e: &TogyzEvent) -> Millis {
        e.at_ms
    }

    /// Right after the start pit of `ply` reads empty.
    fn unplug_after(&self, body: &[&TogyzEvent], ply: u32) -> Option<usize> {
        body.iter()
            .position(|e| e.ply == ply && e.action == TogyzAction::Lift)
    }

    fn play(dump: &mut PitDump, clock: &mut BwTime, e: &TogyzEvent) -> Option<(Vec<u8>, Channel)> {
        let TogyzPayload::Frame(f) = &e.payload else {
            return None;
        };
        let channel = match f {
            tgz::Frame::PitUpdate { location, count } => {
                if let Some(c) = dump.counts.get_mut(usize::from(*location)) {
                    *c = *count;
                }
                Channel::Board
            }
            tgz::Frame::TuzUpdate { player, pit } => {
                dump.tuz[player.index()] = *pit;
                Channel::Board
            }
            tgz::Frame::BwTime(t) => {
                *clock = *t;
                Channel::Clock
            }
            _ => Channel::Board,
        };
        Some((f.to_bytes(), channel))
    }

    fn command(&self, buf: &[u8], dump: &mut PitDump, clock: &BwTime) -> Option<(usize, Host)> {
        let &c = buf.first()?;
        let reply = match tgz::Command::from_byte(c) {
            tgz::Command::Reset => return Some((1, Host::Reset)),
            tgz::Command::SendUpdateBoard => return Some((1, Host::Updates(Mode::Board))),
            tgz::Command::SendUpdateNice => return Some((1, Host::Updates(Mode::Full))),
            tgz::Command::SendClock => tgz::Frame::BwTime(*clock),
            tgz::Command::SendBoard => tgz::Frame::BoardDump(*dump),
            tgz::Command::ReturnSerialNr => tgz::Frame::SerialNr(self.serial.clone()),
            tgz::Command::SendTrademark => {
                tgz::Frame::Trademark("TGZ Pit Board (boardscribe emulator)".to_string())
            }
            tgz::Command::SendVersion => tgz::Frame::Version { major: 1, minor: 0 },
            tgz::Command::Other(_) => return Some((1, Host::Ignore)),
        };
        Some((1, Host::Reply(reply.to_bytes())))
    }
}

/// Every vendor's chessboard ([`Emulated`]): the script's events after the handshake, played
/// as they come; the answers its module gives.
impl<B: Emulated> PtyBoard for Script<B> {
    type State = B::State;
    type Event = Event<B>;
    const DEVICE: &'static str = B::DEVICE;
    const NAME: &'static str = B::NAME;
    const HID: bool = B::HID;

    fn start_state(&self) -> B::State {
        B::start_state(self)
    }

    fn initial_clock(&self) -> BwTime {
        self.initial_clock
    }

    fn body_start_ms(&self) -> Millis {
        self.body_start_ms
    }

    fn body(&self) -> Vec<&Event<B>> {
        self.events.iter().filter(|e| B::in_body(e)).collect()
    }

    fn at_ms(e: &Event<B>) -> Millis {
        e.at_ms
    }

    fn capture_extra(&self) -> Vec<(String, String)> {
        B::capture_extra(self)
    }

    /// After the first report of `ply` (a piece lifted, or the move whole).
    fn unplug_after(&self, body: &[&Event<B>], ply: u32) -> Option<usize> {
        body.iter()
            .position(|e| e.kind == EventKind::Move && e.ply == ply)
    }

    fn play(state: &mut B::State, _clock: &mut BwTime, e: &Event<B>) -> Option<(Vec<u8>, Channel)> {
        let Payload::Frame(f) = &e.payload else {
            return None;
        };
        B::played(state, f);
        Some((f.wire_bytes(), Channel::Board))
    }

    fn command(&self, buf: &[u8], state: &mut B::State, _clock: &BwTime) -> Option<(usize, Host)> {
        let (used, answer) = B::command(buf, state)?;
        let host = match (answer.reply, answer.reports) {
            (Some(f), Some(true)) => Host::ReplyAndUpdates(f, Mode::Board),
            (Some(f), Some(false)) => Host::ReplyAndReset(f),
            (Some(f), None) => Host::Reply(f),
            (None, Some(false)) => Host::Reset,
            (None, Some(true)) => Host::Updates(Mode::Board),
            (None, None) => Host::Ignore,
        };
        Some((used, host))
    }
}
