//! An emulated Millennium ChessLink board: the same hands as the DGT emulator's, on a board that
//! reports its whole position once a change has held for its debounce, and has no clock.
//!
//! Flow: [`chesslink_script`] takes a DGT board's script (made with or without a clock; its
//! clock frames are left out, since a ChessLink board has none) and follows its square changes
//! on a board of its own: the board state after each scan of changes is reported as an `s`
//! report once it has held for [`DEBOUNCE_MS`] (two scans, the mode the daemon sets with
//! `W0204`); a state the hands leave sooner is never reported, as on the real board. The
//! handshake is the host's start-up (`V`, `W0000`, `W0204`, `S`) and the board's answers. The
//! pty runner plays the result like any other script and answers the host's commands
//! ([`crate::pty`]). Pure.

use boardscribe_core::{
    Millis,
    protocol::{
        Direction,
        chesslink::{Command, Frame, reg},
    },
    sensor::chesslink::{board_codes, report_of},
};

use super::{
    BoardScript, IrregularityInfo, PlyInfo,
    pty::{Answer, Emulated},
    script::{Payload, Script, ScriptBoard, WireFrame},
    vendor::{from_hands, handshake, held_states},
};

/// How long a change must hold before the board reports it: two scans of 40.96 ms (register 02
/// set to 4, `W0204`, as the daemon sets it).
pub const DEBOUNCE_MS: Millis = 82;

/// The board's firmware version in its `v` reply (`v010374`: 01.03, as picochess logs a real
/// board's).
pub const VERSION: (u8, u8) = (0x01, 0x03);

/// A Millennium ChessLink board, as its script is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChessLinkBoard;

impl WireFrame for Frame {
    fn wire_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
}

impl ScriptBoard for ChessLinkBoard {
    type Frame = Frame;
    type Action = ();
    type Ply = PlyInfo;
    /// The squares in board numbering (0 = a8 on a board lying normally), square codes.
    type Dump = [u8; 64];
    /// The kings' centre squares (board indices: white king, black king).
    type Gesture = (u8, u8);
    type Irregularity = IrregularityInfo;
    const DEVICE: &'static str = boardscribe_core::kind::BoardKind::ChessLink.name();
    const SOURCE: &'static str = "boardscribe ChessLink emulator script";
}

/// A chess game as the timed traffic of a ChessLink board.
pub type ChessLinkScript = Script<ChessLinkBoard>;

/// On its pty, the board answers from the squares it last reported.
impl Emulated for ChessLinkBoard {
    /// The squares in board numbering, as the board senses them.
    type State = [u8; 64];
    const NAME: &'static str = "emulated ChessLink board";

    fn start_state(script: &ChessLinkScript) -> [u8; 64] {
        script.start_dump
    }

    fn played(board: &mut [u8; 64], frame: &Frame) {
        if let Frame::Status(report) = frame {
            *board = board_codes(report);
        }
    }

    fn command(buf: &[u8], board: &mut [u8; 64]) -> Option<(usize, Answer)> {
        let (command, used) = boardscribe_core::protocol::chesslink::cut_command(buf)?;
        let Ok(command) = command else {
            return Some((used, Answer::NONE));
        };
        let (reply, reports) = answer(&command, board);
        let reply = reply.map(|f| f.to_bytes());
        Some((used, Answer { reply, reports }))
    }
}

/// The host's start-up commands, as the daemon sends them.
fn startup_bytes() -> Vec<u8> {
    let mut out = Vec::new();
    for c in boardscribe_core::protocol::chesslink::startup(
        boardscribe_core::protocol::chesslink::STARTUP_REPORT,
    ) {
        c.encode(&mut out);
    }
    out
}

/// `dgt` played on a ChessLink board (see the module doc).
pub fn chesslink_script(dgt: &BoardScript) -> ChessLinkScript {
    let mut events = Vec::new();
    let board = dgt.start_dump.0;
    // The handshake: the host's start-up, then the board's answers (the version, the two
    // register writes echoed, the position).
    let t0 = dgt.events.first().map_or(0, |e| e.at_ms);
    events.push(handshake(
        t0,
        Direction::ToBoard,
        Payload::Command(startup_bytes()),
    ));
    let answers = [
        Frame::Version {
            high: VERSION.0,
            low: VERSION.1,
        },
        Frame::RegisterWritten {
            address: reg::SERIAL_SETUP,
            value: 0,
        },
        Frame::RegisterWritten {
            address: reg::AUTO_REPORT,
            value: boardscribe_core::protocol::chesslink::STARTUP_REPORT.value(),
        },
        Frame::Status(report_of(&board)),
    ];
    for (i, f) in answers.into_iter().enumerate() {
        events.push(handshake(
            t0 + 5 + i as Millis,
            Direction::FromBoard,
            Payload::Frame(f),
        ));
    }
    // The body: the board after each instant's changes, once it held.
    events.extend(held_states(dgt, DEBOUNCE_MS, |state| {
        Frame::Status(report_of(state))
    }));
    from_hands(dgt, events)
}

/// What the board answers to a command, and whether it switches automatic reports on or off.
pub(crate) fn answer(command: &Command, board: &[u8; 64]) -> (Option<Frame>, Option<bool>) {
    match command {
        Command::Status => (Some(Frame::Status(report_of(board))), None),
        Command::Version => (
            Some(Frame::Version {
                high: VERSION.0,
                low: VERSION.1,
            }),
            None,
        ),
        Command::SetLeds(_) => (Some(Frame::LedsSet), None),
        Command::LedsOff => (Some(Frame::LedsOff), None),
        Command::WriteRegister { address, value } => {
            let reports = (*address == reg::AUTO_REPORT).then(|| {
                boardscribe_core::protocol::chesslink::AutoReport::from_value(*value)
                    != boardscribe_core::protocol::chesslink::AutoReport::Off
            });
            (
                Some(Frame::RegisterWritten {
                    address: *address,
                    value: *value,
                }),
                reports,
            )
        }
        Command::ReadRegister { address } => (
            Some(Frame::RegisterRead {
                address: *address,
                value: 0,
            }),
            None,
        ),
        // Reset: no reply (spec); the report mode goes back to the board's default.
        Command::Reset => (None, Some(false)),
        Command::Identify { .. } => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ply_ends_in_a_report_of_its_board_and_nothing_is_reported_early() {
        crate::vendor::assert_sends_held_states(chesslink_script, DEBOUNCE_MS, |board| {
            Frame::Status(report_of(board))
        });
    }

    #[test]
    fn the_board_answers_the_startup_as_the_daemon_expects() {
        let start = [0u8; 64];
        let (reply, reports) = answer(
            &Command::set_auto_report(boardscribe_core::protocol::chesslink::STARTUP_REPORT),
            &start,
        );
        assert_eq!(reports, Some(true));
        assert!(matches!(
            reply,
            Some(Frame::RegisterWritten {
                address: 2,
                value: 4
            })
        ));
        let (off, reports) = answer(
            &Command::set_auto_report(boardscribe_core::protocol::chesslink::AutoReport::Off),
            &start,
        );
        assert!(off.is_some());
        assert_eq!(reports, Some(false));
    }
}
