//! An emulated Chessnut board (Air, Pro, Go) on USB HID: the same hands as the DGT emulator's,
//! on a board that reports its whole position about every 200 ms whether or not it changed,
//! and has no clock.
//!
//! Flow: [`chessnut_script`] takes a DGT board's script (made with or without a clock; its
//! clock frames are left out) and follows its square changes on a board of its own; every
//! [`REPORT_EVERY_MS`] from the handshake on, the board as the hands have left it at that
//! instant is reported (`01 3D`, the 32 square bytes, 29 more, as over USB). A state the hands
//! leave between two reports is never seen. The sources say the board repeats its position
//! about every 200 ms (Graham O'Neill's notes) and none says a change is also reported at once
//! (the BLE emulator of DGTCentaurUniversal sends on change only, over BLE): a change shows in
//! the next periodic report, as here. The handshake is the host's start-up (`21 01 00`, `29 01
//! 00`) and the board's answers. The runner plays the result on a Unix socket standing in for
//! the hidraw node ([`crate::pty`]) and answers the host's commands ([`answer`]). Pure.

use boardscribe_core::{
    Millis,
    kind::BoardKind,
    protocol::{
        Direction,
        chessnut::{Battery, Command, Frame, Mode, PositionReport},
        dgt,
    },
    sensor::chessnut::placement_of,
};

use super::{
    BoardScript, EventKind, IrregularityInfo, PlyInfo,
    pty::{Answer, Emulated},
    script::{Event, Payload, Script, ScriptBoard, WireFrame},
    vendor::{from_hands, handshake},
};

/// How often the board reports its position.
pub const REPORT_EVERY_MS: Millis = 200;

/// What the board reports after the squares over USB (29 bytes; unknown, kept zero here).
const EXTRA: [u8; 29] = [0; 29];

/// The battery the emulated board reports: 85 %, not charging.
const BATTERY: Battery = Battery {
    level: 85,
    status: 0,
};

/// How long the board keeps reporting after the hands' last change.
const TAIL_MS: Millis = 1_000;

/// A Chessnut board, as its script is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChessnutBoard;

impl WireFrame for Frame {
    fn wire_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
}

impl ScriptBoard for ChessnutBoard {
    type Frame = Frame;
    type Action = ();
    type Ply = PlyInfo;
    /// The squares in board numbering (0 = a8 on a board lying normally), square codes.
    type Dump = [u8; 64];
    /// The kings' centre squares (board indices: white king, black king).
    type Gesture = (u8, u8);
    type Irregularity = IrregularityInfo;
    const DEVICE: &'static str = BoardKind::Chessnut.name();
    const SOURCE: &'static str = "boardscribe Chessnut emulator script";
}

/// A chess game as the timed traffic of a Chessnut board.
pub type ChessnutScript = Script<ChessnutBoard>;

/// On its socket (its hidraw node's stand-in), the board answers the host's commands; its
/// position goes out on its own every 200 ms, so no answer needs what it shows.
impl Emulated for ChessnutBoard {
    /// Nothing to answer from.
    type State = ();
    const NAME: &'static str = "emulated Chessnut board";
    const HID: bool = true;

    fn start_state(_script: &ChessnutScript) {}

    fn command(buf: &[u8], _state: &mut ()) -> Option<(usize, Answer)> {
        use boardscribe_core::protocol::Wire;
        let (command, used) = boardscribe_core::protocol::chessnut::ChessnutCommands.cut(buf)?;
        let Ok(command) = command else {
            return Some((used, Answer::NONE));
        };
        let (reply, reports) = answer(&command);
        let reply = reply.map(|f| f.to_bytes());
        Some((used, Answer { reply, reports }))
    }
}

/// The position report of a board showing `codes` (board numbering), as sent over USB.
pub fn report(codes: &[u8; 64]) -> Frame {
    Frame::Position(PositionReport {
        placement: placement_of(codes),
        extra: EXTRA.to_vec(),
    })
}

/// `dgt` played on a Chessnut board (see the module doc).
pub fn chessnut_script(dgt: &BoardScript) -> ChessnutScript {
    let mut events = Vec::new();
    let mut board = dgt.start_dump.0;
    let t0 = dgt.events.first().map_or(0, |e| e.at_ms);
    let mut startup = Command::start_reporting().to_bytes();
    startup.extend(Command::QueryBattery.to_bytes());
    events.push(handshake(t0, Direction::ToBoard, Payload::Command(startup)));
    events.push(handshake(
        t0 + 5,
        Direction::FromBoard,
        Payload::Frame(report(&board)),
    ));
    events.push(handshake(
        t0 + 6,
        Direction::FromBoard,
        Payload::Frame(Frame::Battery(BATTERY)),
    ));
    // The body: every REPORT_EVERY_MS, the board as the hands left it by then.
    let changes: Vec<_> = dgt
        .events
        .iter()
        .filter(|e| e.kind != EventKind::Handshake)
        .filter_map(|e| match &e.payload {
            Payload::Frame(f @ (dgt::Frame::FieldUpdate { .. } | dgt::Frame::BoardDump(_))) => {
                Some((e, f))
            }
            _ => None,
        })
        .collect();
    let end = changes.last().map_or(t0, |(e, _)| e.at_ms) + TAIL_MS;
    let (mut kind, mut ply) = (EventKind::Move, 0);
    let mut next = 0;
    let mut at = t0 + 5 + REPORT_EVERY_MS;
    while at <= end {
        while let Some((e, f)) = changes.get(next).filter(|(e, _)| e.at_ms <= at) {
            match f {
                dgt::Frame::FieldUpdate { square, piece } => {
                    if let Some(s) = board.get_mut(usize::from(*square)) {
                        *s = *piece;
                    }
                }
                dgt::Frame::BoardDump(d) => board = d.0,
                _ => {}
            }
            (kind, ply) = (e.kind, e.ply);
            next += 1;
        }
        events.push(Event {
            at_ms: at,
            dir: Direction::FromBoard,
            payload: Payload::Frame(report(&board)),
            kind,
            action: (),
            ply,
        });
        at += REPORT_EVERY_MS;
    }
    from_hands(dgt, events)
}

/// What the board does with a host's command: the frame it answers (if any), and whether it
/// reports its position from now on (`Some(true)`), stops (`Some(false)`) or goes on as it was.
pub(crate) fn answer(command: &Command) -> (Option<Frame>, Option<bool>) {
    match command {
        Command::SetMode(Mode::RealTime) => (None, Some(true)),
        Command::SetMode(Mode::Upload) => (None, Some(false)),
        Command::QueryBattery => (Some(Frame::Battery(BATTERY)), None),
        Command::Leds(_) | Command::Beep { .. } | Command::Other { .. } => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use boardscribe_core::{
        protocol::{FrameReader, chessnut::Chessnut},
        sensor::chessnut::board_codes,
    };

    use super::*;

    use crate::vendor::test_hands as script;

    #[test]
    fn reports_come_every_200_ms_and_every_ply_ends_in_a_report_of_its_board() {
        for speed in [0.3, 1.0, 3.0] {
            let dgt = script(speed);
            let cn = chessnut_script(&dgt);
            let reports: Vec<(Millis, [u8; 64])> = cn
                .events
                .iter()
                .filter(|e| e.kind != EventKind::Handshake)
                .filter_map(|e| match &e.payload {
                    Payload::Frame(Frame::Position(r)) => {
                        Some((e.at_ms, board_codes(&r.placement)))
                    }
                    _ => None,
                })
                .collect();
            assert!(
                reports
                    .windows(2)
                    .all(|w| w[1].0 - w[0].0 == REPORT_EVERY_MS),
                "x{speed}"
            );
            // Repeated whether or not anything moved: most reports repeat the one before.
            let repeats = reports.windows(2).filter(|w| w[0].1 == w[1].1).count();
            assert!(repeats * 2 > reports.len(), "x{speed}: {repeats}");
            for p in &dgt.plies {
                assert!(
                    reports
                        .iter()
                        .any(|(t, b)| *b == p.board_after.0 && *t >= p.end_ms),
                    "ply {} at x{speed}",
                    p.ply
                );
            }
            let capture = cn.to_capture_text();
            assert!(capture.contains("device: chessnut"), "{capture}");
        }
    }

    #[test]
    fn a_report_on_the_wire_is_the_usb_report_and_reads_back() {
        let board = script(1.0).start_dump.0;
        let bytes = report(&board).to_bytes();
        assert_eq!(bytes.len(), 2 + 32 + 29);
        assert_eq!(bytes[..2], [0x01, 0x3d]);
        let mut reader = FrameReader::with_wire(Chessnut);
        reader.push(&bytes);
        let Some(Ok(Frame::Position(r))) = reader.next_frame() else {
            panic!("no position");
        };
        assert_eq!(board_codes(&r.placement), board);
    }

    #[test]
    fn the_board_answers_the_startup_as_the_daemon_expects() {
        assert_eq!(answer(&Command::start_reporting()), (None, Some(true)));
        assert_eq!(answer(&Command::SetMode(Mode::Upload)), (None, Some(false)));
        assert_eq!(
            answer(&Command::QueryBattery),
            (Some(Frame::Battery(BATTERY)), None)
        );
        assert_eq!(answer(&Command::leds([])), (None, None));
    }
}
