//! How each kind of emulated board answers on its pseudo-terminal (or socket): a DGT board's
//! modes, dumps, clock and memory replies; a TGZ-1 pit board's; a ChessLink board's; a
//! Chessnut board's; a Certabo board's.

use super::*;

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

impl PtyBoard for ChessLinkScript {
    /// The squares in board numbering, as the board senses them.
    type State = [u8; 64];
    type Event = Event<ChessLinkBoard>;
    const DEVICE: &'static str = BoardKind::ChessLink.name();
    const NAME: &'static str = "emulated ChessLink board";

    fn start_state(&self) -> [u8; 64] {
        self.start_dump
    }

    fn initial_clock(&self) -> BwTime {
        self.initial_clock
    }

    fn body_start_ms(&self) -> Millis {
        self.body_start_ms
    }

    fn body(&self) -> Vec<&Event<ChessLinkBoard>> {
        self.events
            .iter()
            .filter(|e| e.kind != EventKind::Handshake)
            .collect()
    }

    fn at_ms(e: &Event<ChessLinkBoard>) -> Millis {
        e.at_ms
    }

    /// After the first report of `ply` (the piece lifted, or the move whole).
    fn unplug_after(&self, body: &[&Event<ChessLinkBoard>], ply: u32) -> Option<usize> {
        body.iter()
            .position(|e| e.kind == EventKind::Move && e.ply == ply)
    }

    fn play(
        board: &mut [u8; 64],
        _clock: &mut BwTime,
        e: &Event<ChessLinkBoard>,
    ) -> Option<(Vec<u8>, Channel)> {
        let Payload::Frame(f) = &e.payload else {
            return None;
        };
        if let cl::Frame::Status(report) = f {
            *board = boardscribe_core::sensor::chesslink::board_codes(report);
        }
        Some((f.to_bytes(), Channel::Board))
    }

    fn command(&self, buf: &[u8], board: &mut [u8; 64], _clock: &BwTime) -> Option<(usize, Host)> {
        let (command, used) = cl::cut_command(buf)?;
        let Ok(command) = command else {
            return Some((used, Host::Ignore));
        };
        let (reply, reports) = crate::chesslink::answer(&command, board);
        let host = match (reply, reports) {
            (Some(f), Some(true)) => Host::ReplyAndUpdates(f.to_bytes(), Mode::Board),
            (Some(f), Some(false)) => Host::ReplyAndReset(f.to_bytes()),
            (Some(f), None) => Host::Reply(f.to_bytes()),
            (None, Some(false)) => Host::Reset,
            (None, Some(true)) => Host::Updates(Mode::Board),
            (None, None) => Host::Ignore,
        };
        Some((used, host))
    }
}

impl PtyBoard for ChessnutScript {
    /// The squares in board numbering, as the board senses them.
    type State = [u8; 64];
    type Event = Event<ChessnutBoard>;
    const DEVICE: &'static str = BoardKind::Chessnut.name();
    const NAME: &'static str = "emulated Chessnut board";
    const HID: bool = true;

    fn start_state(&self) -> [u8; 64] {
        self.start_dump
    }

    fn initial_clock(&self) -> BwTime {
        self.initial_clock
    }

    fn body_start_ms(&self) -> Millis {
        self.body_start_ms
    }

    fn body(&self) -> Vec<&Event<ChessnutBoard>> {
        self.events
            .iter()
            .filter(|e| e.kind != EventKind::Handshake)
            .collect()
    }

    fn at_ms(e: &Event<ChessnutBoard>) -> Millis {
        e.at_ms
    }

    /// After the first report that shows a hand of `ply`.
    fn unplug_after(&self, body: &[&Event<ChessnutBoard>], ply: u32) -> Option<usize> {
        body.iter()
            .position(|e| e.kind == EventKind::Move && e.ply == ply)
    }

    fn play(
        board: &mut [u8; 64],
        _clock: &mut BwTime,
        e: &Event<ChessnutBoard>,
    ) -> Option<(Vec<u8>, Channel)> {
        let Payload::Frame(f) = &e.payload else {
            return None;
        };
        if let cn::Frame::Position(report) = f {
            *board = boardscribe_core::sensor::chessnut::board_codes(&report.placement);
        }
        Some((f.to_bytes(), Channel::Board))
    }

    fn command(&self, buf: &[u8], _board: &mut [u8; 64], _clock: &BwTime) -> Option<(usize, Host)> {
        use boardscribe_core::protocol::Wire;
        let (command, used) = cn::ChessnutCommands.cut(buf)?;
        let Ok(command) = command else {
            return Some((used, Host::Ignore));
        };
        let host = match crate::chessnut::answer(&command) {
            (Some(f), Some(true)) => Host::ReplyAndUpdates(f.to_bytes(), Mode::Board),
            (Some(f), Some(false)) => Host::ReplyAndReset(f.to_bytes()),
            (Some(f), None) => Host::Reply(f.to_bytes()),
            (None, Some(false)) => Host::Reset,
            (None, Some(true)) => Host::Updates(Mode::Board),
            (None, None) => Host::Ignore,
        };
        Some((used, host))
    }
}

impl PtyBoard for CertaboScript {
    /// Nothing to answer from: the records are the script's.
    type State = ();
    type Event = Event<CertaboBoard>;
    const DEVICE: &'static str = BoardKind::Certabo.name();
    const NAME: &'static str = "emulated Certabo board";

    fn start_state(&self) {}

    fn initial_clock(&self) -> BwTime {
        self.initial_clock
    }

    fn body_start_ms(&self) -> Millis {
        self.body_start_ms
    }

    fn body(&self) -> Vec<&Event<CertaboBoard>> {
        self.events
            .iter()
            .filter(|e| {
                e.dir == Direction::FromBoard
                    && matches!(e.payload, Payload::Frame(ct::Frame::Pieces(_)))
            })
            .collect()
    }

    fn at_ms(e: &Event<CertaboBoard>) -> Millis {
        e.at_ms
    }

    /// A board calibrated before the script (it opens without the calibration setup): its
    /// calibration, as a daemon that kept it gives it back.
    fn capture_extra(&self) -> Vec<(String, String)> {
        if self.opens_calibrating() {
            return Vec::new();
        }
        vec![(
            boardscribe_core::capture::LEARNT_HEADER.to_owned(),
            crate::certabo::calibration().to_text(),
        )]
    }

    /// After the first record of `ply` (the piece lifted, or the move whole).
    fn unplug_after(&self, body: &[&Event<CertaboBoard>], ply: u32) -> Option<usize> {
        body.iter()
            .position(|e| e.kind == EventKind::Move && e.ply == ply)
    }

    fn play(
        _state: &mut (),
        _clock: &mut BwTime,
        e: &Event<CertaboBoard>,
    ) -> Option<(Vec<u8>, Channel)> {
        let Payload::Frame(f) = &e.payload else {
            return None;
        };
        Some((f.to_bytes(), Channel::Board))
    }

    /// An LED command (8 bytes, no framing): answered `L` (one-colour LEDs), as cer2nut reads
    /// a Certabo board; the board streams from then on (a real one streams from power-up: the
    /// host's start-up is what starts the script's clock here).
    fn command(&self, buf: &[u8], _state: &mut (), _clock: &BwTime) -> Option<(usize, Host)> {
        if buf.len() < ct::LED_COMMAND_LEN {
            return None;
        }
        let ack = ct::Frame::LedAck(ct::LedAck::L).to_bytes();
        Some((ct::LED_COMMAND_LEN, Host::ReplyAndUpdates(ack, Mode::Board)))
    }
}
