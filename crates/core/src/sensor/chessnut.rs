//! A Chessnut board (Air, Air+, Pro, Evo, Go) over USB HID as the pipeline reads it: every
//! position report is the whole position, which replaces the [`ChessSensor`]'s squares; the
//! board has no clock and no memory.
//!
//! Flow: [`ChessnutBoard`] is the kind's [`Board`]: each hidraw read is cut to its report
//! ([`trim_report`]), the [`Chessnut`] wire decodes it, [`board_codes`] puts the report's
//! squares (h8 first, [`WirePlacement`]) into board numbering (a8 first on a board lying
//! normally) as square codes, and the tracker turns the board round itself if it lies the other
//! way. The board repeats its position about every 200 ms whether or not anything moved (the
//! protocol module's sources): a report that changes nothing is nothing for the tracker. The
//! host switches on the reports with `21 01 00` at every open and asks for the battery (`29 01
//! 00`, for the log), one command per output report, no two writes closer than
//! [`WRITE_GAP_MS`].

use super::chess::ChessSensor;
use crate::{
    arbiter::{LawsSetup, Referee},
    game::chess::{ChessGame, code, code_to_piece, piece_code},
    kind::{BoardKind, Link},
    pipeline::{Applied, Board, Notice},
    protocol::{
        FrameReader,
        chessnut::{
            Chessnut, ChessnutCommands, Command, Frame, WRITE_GAP_MS, WirePlacement, trim_report,
        },
    },
    tracker::TrackerSettings,
};

/// A Chessnut board on USB HID.
pub struct ChessnutBoard;

/// The board's square codes in board numbering (index 0 = a8 … 63 = h1 on a board lying
/// normally) from a report's placement, whose index 0 is h8 (h8, g8 … a8, h7 … a1): the
/// files run the other way in each rank, so wire index `w` is board index `w ^ 7`.
pub fn board_codes(placement: &WirePlacement) -> [u8; 64] {
    std::array::from_fn(|i| placement.0[i ^ 7].map_or(code::EMPTY, piece_code))
}

/// The placement a board showing `codes` (board numbering) reports: the inverse of
/// [`board_codes`].
pub fn placement_of(codes: &[u8; 64]) -> WirePlacement {
    WirePlacement(std::array::from_fn(|w| code_to_piece(codes[w ^ 7])))
}

impl Board for ChessnutBoard {
    type Wire = Chessnut;
    type Frame = Frame;
    type Game = ChessGame;
    type Sensor = ChessSensor;
    type Judge = Referee;
    const KIND: BoardKind = BoardKind::Chessnut;
    const VENDOR: &'static str = "Chessnut";
    /// USB HID, writes 200 ms apart (the vendor's SDK).
    const LINK: Link = Link::Hid {
        write_gap_ms: WRITE_GAP_MS,
    };
    const REPORTS_CLOCK: bool = false;

    fn wire() -> Chessnut {
        Chessnut
    }

    fn apply(sensor: &mut ChessSensor, frame: Frame) -> Applied {
        match frame {
            Frame::Position(report) => {
                let codes = board_codes(&report.placement);
                if sensor.report_whole(&codes) {
                    Applied::Board
                } else {
                    Applied::Nothing
                }
            }
            Frame::Battery(b) => Applied::Noted(Notice::Identity {
                what: "battery",
                value: format!(
                    "{} %{}",
                    b.percent(),
                    if b.charging() { ", charging" } else { "" }
                ),
            }),
            other => Applied::Noted(Notice::FrameNotUsed(Box::new(other))),
        }
    }

    fn reset(sensor: &mut ChessSensor) {
        sensor.reset();
    }

    /// Real-time reports (the position about every 200 ms), and the battery, for the log.
    fn startup() -> Vec<u8> {
        let mut out = Command::start_reporting().to_bytes();
        Command::QueryBattery.encode(&mut out);
        out
    }

    /// The board streams its position whatever happens, so a silent board is one that is not
    /// reporting (powered up again, or put in another mode): told again to report, which it
    /// answers with its position.
    fn probe() -> Vec<u8> {
        Command::start_reporting().to_bytes()
    }

    /// Each command its own output report, as the board's commands frame themselves.
    fn output_reports(commands: &[u8]) -> Vec<Vec<u8>> {
        let mut reader = FrameReader::with_wire(ChessnutCommands);
        reader.push(commands);
        std::iter::from_fn(|| reader.next_frame())
            .filter_map(Result::ok)
            .map(|c| c.to_bytes())
            .collect()
    }

    fn input_report(read: &[u8]) -> &[u8] {
        trim_report(read)
    }

    /// Whole positions, sampled about every 200 ms.
    fn settings(laws: &LawsSetup) -> TrackerSettings {
        TrackerSettings {
            whole_reports: true,
            ..laws.tracker_settings()
        }
    }

    fn judge(laws: &LawsSetup) -> Referee {
        laws.referee()
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Color, Piece, Role, Square};

    use super::*;
    use crate::{game::GameKind, sensor::Orientation};

    /// The start position's 32 square bytes as issue 35 gives them.
    const START_SQUARES: [u8; 32] = [
        0x58, 0x23, 0x31, 0x85, 0x44, 0x44, 0x44, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0x77, 0x77, 0x77, 0x77, 0xa6, 0xc9, 0x9b, 0x6a,
    ];

    /// A USB position report: `01 3D`, the squares, 29 more bytes.
    fn usb_report(squares: &[u8; 32]) -> Vec<u8> {
        let mut out = vec![0x01, 0x3d];
        out.extend_from_slice(squares);
        out.extend((0..29).map(|i| i as u8));
        out
    }

    fn read(bytes: &[u8]) -> Vec<Frame> {
        let mut r = FrameReader::with_wire(Chessnut);
        r.push(ChessnutBoard::input_report(bytes));
        std::iter::from_fn(|| r.next_frame())
            .filter_map(Result::ok)
            .collect()
    }

    #[test]
    fn the_issues_start_vector_reads_as_the_start_position_the_normal_way() {
        // As a hidraw read of a 64-byte report: the report and a padding byte.
        let mut bytes = usb_report(&START_SQUARES);
        bytes.push(0);
        let frames = read(&bytes);
        let [Frame::Position(report)] = frames.as_slice() else {
            panic!("{frames:?}");
        };
        assert_eq!(report.extra.len(), 29);
        let mut sensor = ChessSensor::default();
        assert!(matches!(
            ChessnutBoard::apply(&mut sensor, frames[0].clone()),
            Applied::Board
        ));
        let start = ChessGame::reading(&ChessGame::start());
        // The normal way round, not as a board turned round: a mistake in the square order
        // would pass for a board lying the other way.
        assert_eq!(sensor.reading(Orientation::Normal), start);
        assert_ne!(sensor.reading(Orientation::Rotated), start);
    }

    #[test]
    fn a_repeated_report_is_nothing_and_a_changed_one_is_the_board() {
        let mut sensor = ChessSensor::default();
        let start = read(&usb_report(&START_SQUARES)).remove(0);
        assert!(matches!(
            ChessnutBoard::apply(&mut sensor, start.clone()),
            Applied::Board
        ));
        for _ in 0..5 {
            assert!(matches!(
                ChessnutBoard::apply(&mut sensor, start.clone()),
                Applied::Nothing
            ));
        }
        // e2 lifted: e2 is wire index 8 * 6 + 3 = 51, the high nibble of byte 25.
        let mut lifted = START_SQUARES;
        lifted[25] &= 0x0f;
        let frame = read(&usb_report(&lifted)).remove(0);
        assert!(matches!(
            ChessnutBoard::apply(&mut sensor, frame),
            Applied::Board
        ));
        let reading = sensor.reading(Orientation::Normal);
        assert_eq!(reading.0[Square::E2 as usize], code::EMPTY);
        assert_eq!(reading.0.iter().filter(|&&c| c != code::EMPTY).count(), 31);
    }

    #[test]
    fn wire_index_0_is_h8_and_63_is_a1() {
        let mut placement = WirePlacement::default();
        let king = Piece {
            color: Color::White,
            role: Role::King,
        };
        let rook = Piece {
            color: Color::Black,
            role: Role::Rook,
        };
        placement.0[0] = Some(rook);
        placement.0[63] = Some(king);
        let codes = board_codes(&placement);
        let mut sensor = ChessSensor::default();
        sensor.set_all(&codes);
        let reading = sensor.reading(Orientation::Normal);
        assert_eq!(reading.0[Square::H8 as usize], piece_code(rook));
        assert_eq!(reading.0[Square::A1 as usize], piece_code(king));
        // The protocol module's own mapping agrees, and the two give each other back.
        assert_eq!(placement.get(Square::H8), Some(rook));
        assert_eq!(placement_of(&codes), placement);
    }

    #[test]
    fn startup_probe_and_writes_are_the_vendors_commands() {
        assert_eq!(ChessnutBoard::probe(), [0x21, 0x01, 0x00]);
        // The start-up's two commands are two output reports.
        assert_eq!(
            ChessnutBoard::output_reports(&ChessnutBoard::startup()),
            [vec![0x21, 0x01, 0x00], vec![0x29, 0x01, 0x00]]
        );
        assert_eq!(ChessnutBoard::LINK, Link::Hid { write_gap_ms: 200 });
    }
}
