//! An emulated iChessOne board: the same hands as the DGT emulator's, on a board that sends its
//! whole position at every change its scan sees, and has no clock.
//!
//! Flow: [`ichessone_script`] takes a DGT board's script (made with or without a clock; its
//! clock frames are left out, since an iChessOne board has none) and follows its square changes
//! on a board of its own: the board state after each instant's changes is sent once it has held
//! for a scan ([`SCAN_MS`]); a state the hands leave sooner is never seen, as on the real board.
//! The handshake is the host's start-up (`CPIRQ`, `RP`, `RB`) and the board's answers (the
//! position, the battery). On its pty the board answers `RP` and `RB` from what it shows and
//! sends changes once `CPIRQ` came ([`Emulated`]). Pure, but for the pty.

use boardscribe_core::{
    Millis,
    kind::BoardKind,
    protocol::{
        Direction,
        ichessone::{Command, Frame, cut_command},
    },
    sensor::ichessone::{board_codes, placement_of},
};

use super::{
    BoardScript, IrregularityInfo, PlyInfo,
    pty::{Answer, Emulated},
    script::{Payload, Script, ScriptBoard, WireFrame},
    vendor::{from_hands, handshake, held_states},
};

/// How long a state must hold to be seen: one scan of the board's sensors, and the Bluetooth
/// LE notification that carries it (a connection interval of 7.5 to 50 ms). An assumption: no
/// source gives the real board's rate (picochess waits 350 ms for a position to settle).
pub const SCAN_MS: Millis = 30;

/// The battery the emulated board reports: 85 %, not charging.
pub const BATTERY: Frame = Frame::Battery {
    status: 0,
    percent: 85,
};

/// An iChessOne board, as its script is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IChessOneBoard;

impl WireFrame for Frame {
    fn wire_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
}

impl ScriptBoard for IChessOneBoard {
    type Frame = Frame;
    type Action = ();
    type Ply = PlyInfo;
    /// The squares in board numbering (0 = a8 on a board lying normally), square codes.
    type Dump = [u8; 64];
    /// The kings' centre squares (board indices: white king, black king).
    type Gesture = (u8, u8);
    type Irregularity = IrregularityInfo;
    const DEVICE: &'static str = BoardKind::IChessOne.name();
    const SOURCE: &'static str = "boardscribe iChessOne emulator script";
}

/// A chess game as the timed traffic of an iChessOne board.
pub type IChessOneScript = Script<IChessOneBoard>;

/// On its pty, the board answers from the squares it last sent.
impl Emulated for IChessOneBoard {
    /// The squares in board numbering, as the board senses them.
    type State = [u8; 64];
    const NAME: &'static str = "emulated iChessOne board";

    fn start_state(script: &IChessOneScript) -> [u8; 64] {
        script.start_dump
    }

    fn played(board: &mut [u8; 64], frame: &Frame) {
        if let Frame::Position(placement) = frame {
            *board = board_codes(placement);
        }
    }

    fn command(buf: &[u8], board: &mut [u8; 64]) -> Option<(usize, Answer)> {
        let (command, used) = cut_command(buf)?;
        let answer = match command {
            Ok(Command::RequestPosition) => Answer {
                reply: Some(Frame::Position(placement_of(board)).to_bytes()),
                reports: None,
            },
            Ok(Command::RequestBattery) => Answer {
                reply: Some(BATTERY.to_bytes()),
                reports: None,
            },
            Ok(Command::ReportChanges) => Answer {
                reply: None,
                reports: Some(true),
            },
            Ok(Command::Leds(_)) | Err(_) => Answer::NONE,
        };
        Some((used, answer))
    }
}

/// `dgt` played on an iChessOne board (see the module doc).
pub fn ichessone_script(dgt: &BoardScript) -> IChessOneScript {
    let mut events = Vec::new();
    let board = dgt.start_dump.0;
    let t0 = dgt.events.first().map_or(0, |e| e.at_ms);
    let startup = boardscribe_core::kind::BoardKind::IChessOne.startup();
    events.push(handshake(t0, Direction::ToBoard, Payload::Command(startup)));
    let answers = [Frame::Position(placement_of(&board)), BATTERY];
    for (i, f) in answers.into_iter().enumerate() {
        events.push(handshake(
            t0 + 5 + i as Millis,
            Direction::FromBoard,
            Payload::Frame(f),
        ));
    }
    // The body: the board after each instant's changes, once it held.
    events.extend(held_states(dgt, SCAN_MS, |state| {
        Frame::Position(placement_of(state))
    }));
    from_hands(dgt, events)
}

#[cfg(test)]
mod tests {
    use boardscribe_core::protocol::ichessone::Placement;

    use super::*;

    #[test]
    fn every_ply_ends_in_a_message_of_its_board_and_nothing_is_sent_early() {
        crate::vendor::assert_sends_held_states(ichessone_script, SCAN_MS, |board| {
            Frame::Position(placement_of(board))
        });
    }

    #[test]
    fn the_board_answers_the_hosts_commands_from_what_it_shows() {
        let mut board = [0u8; 64];
        board[0] = boardscribe_core::game::chess::code::BROOK;
        let (used, answer) = IChessOneBoard::command(b"RPRB", &mut board).unwrap_or_default();
        assert_eq!(used, 2);
        let mut expected = Placement::EMPTY;
        expected.0[0] = boardscribe_core::game::chess::code_to_piece(board[0]);
        assert_eq!(answer.reply, Some(Frame::Position(expected).to_bytes()));
        let (_, answer) = IChessOneBoard::command(b"CPIRQ", &mut board).unwrap_or_default();
        assert_eq!((answer.reply, answer.reports), (None, Some(true)));
        assert!(IChessOneBoard::command(b"CPI", &mut board).is_none());
    }
}
