//! An iChessOne board as the pipeline reads it: every position message is the whole position,
//! which replaces the [`ChessSensor`]'s squares; the board has no clock and no memory.
//!
//! Flow: [`IChessOneBoard`] is the kind's [`Board`]: the [`IChessOne`] wire cuts the messages,
//! whose squares already run in board numbering (a8 first on a board lying normally,
//! [`Placement`]); [`board_codes`] makes them square codes, and the tracker turns the board
//! round itself if it lies the other way. A message that changes nothing (the answer to the
//! watchdog's request) is nothing for the tracker; the battery is logged. The host switches on
//! a message at every change (`CPIRQ`) and asks for the position (`RP`) and the battery (`RB`)
//! at every open. The board is reached through a BLE–UART bridge's pseudo-terminal (the
//! protocol module's doc), whose line settings change nothing.

use super::chess::ChessSensor;
use crate::{
    arbiter::{LawsSetup, Referee},
    game::chess::{ChessGame, code, code_to_piece, piece_code},
    kind::{BoardKind, DataBits, Link, Parity, SerialSettings, StopBits},
    pipeline::{Applied, Board, Notice},
    protocol::ichessone::{Command, Frame, IChessOne, Placement},
    tracker::TrackerSettings,
};

/// An iChessOne board.
pub struct IChessOneBoard;

/// The board's square codes in board numbering (index 0 = a8 … 63 = h1 on a board lying
/// normally) from a message's squares, which run in that order.
pub fn board_codes(placement: &Placement) -> [u8; 64] {
    std::array::from_fn(|i| placement.0[i].map_or(code::EMPTY, piece_code))
}

/// The squares a board showing `codes` (board numbering) sends: the inverse of
/// [`board_codes`].
pub fn placement_of(codes: &[u8; 64]) -> Placement {
    Placement(std::array::from_fn(|i| code_to_piece(codes[i])))
}

impl Board for IChessOneBoard {
    type Wire = IChessOne;
    type Frame = Frame;
    type Game = ChessGame;
    type Sensor = ChessSensor;
    type Judge = Referee;
    const KIND: BoardKind = BoardKind::IChessOne;
    const VENDOR: &'static str = "iChessOne";
    /// A BLE–UART bridge's pseudo-terminal: any settings do; these are a serial adapter's
    /// usual ones, should the bridge be a real line.
    const LINK: Link = Link::Serial(SerialSettings {
        baud: 115_200,
        data_bits: DataBits::Eight,
        parity: Parity::None,
        stop_bits: StopBits::One,
    });
    const REPORTS_CLOCK: bool = false;

    fn wire() -> IChessOne {
        IChessOne
    }

    fn apply(sensor: &mut ChessSensor, frame: Frame) -> Applied {
        match frame {
            Frame::Position(placement) => {
                if sensor.report_whole(&board_codes(&placement)) {
                    Applied::Board
                } else {
                    Applied::Nothing
                }
            }
            Frame::Battery { status, percent } => Applied::Noted(Notice::Identity {
                what: "battery",
                value: format!(
                    "{} %{}",
                    percent.min(100),
                    if status == 1 { ", charging" } else { "" }
                ),
            }),
        }
    }

    fn reset(sensor: &mut ChessSensor) {
        sensor.reset();
    }

    /// A message at every change, the position now, and the battery (for the log).
    fn startup() -> Vec<u8> {
        let mut out = Vec::new();
        for c in [
            Command::ReportChanges,
            Command::RequestPosition,
            Command::RequestBattery,
        ] {
            c.encode(&mut out);
        }
        out
    }

    /// The position: any answer tells the board is there, and a change it did not report
    /// would show.
    fn probe() -> Vec<u8> {
        Command::RequestPosition.to_bytes()
    }

    /// Whole positions, each as the board's scan saw it.
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
    use crate::{game::GameKind, protocol::FrameReader, sensor::Orientation};

    fn read(bytes: &[u8]) -> Vec<Frame> {
        let mut r = FrameReader::with_wire(IChessOne);
        r.push(bytes);
        std::iter::from_fn(|| r.next_frame())
            .filter_map(Result::ok)
            .collect()
    }

    #[test]
    fn the_start_message_reads_as_the_start_position_the_normal_way() {
        let frames = read(&Frame::Position(Placement::start()).to_bytes());
        let [frame] = frames.as_slice() else {
            panic!("{frames:?}");
        };
        let mut sensor = ChessSensor::default();
        assert!(matches!(
            IChessOneBoard::apply(&mut sensor, frame.clone()),
            Applied::Board
        ));
        let start = ChessGame::reading(&ChessGame::start());
        // The normal way round, not as a board turned round: a mistake in the square order
        // would pass for a board lying the other way.
        assert_eq!(sensor.reading(Orientation::Normal), start);
        assert_ne!(sensor.reading(Orientation::Rotated), start);
        // The same message again (the answer to the watchdog's request) changes nothing.
        assert!(matches!(
            IChessOneBoard::apply(&mut sensor, frame.clone()),
            Applied::Nothing
        ));
    }

    #[test]
    fn message_index_0_is_a8_and_63_is_h1() {
        let mut placement = Placement::EMPTY;
        let rook = Piece {
            color: Color::Black,
            role: Role::Rook,
        };
        let king = Piece {
            color: Color::White,
            role: Role::King,
        };
        placement.0[0] = Some(rook);
        placement.0[63] = Some(king);
        let mut sensor = ChessSensor::default();
        IChessOneBoard::apply(&mut sensor, Frame::Position(placement));
        let reading = sensor.reading(Orientation::Normal);
        assert_eq!(reading.0[Square::A8 as usize], piece_code(rook));
        assert_eq!(reading.0[Square::H1 as usize], piece_code(king));
        assert_eq!(reading.0.iter().filter(|&&c| c != code::EMPTY).count(), 2);
        assert_eq!(placement_of(&board_codes(&placement)), placement);
    }

    #[test]
    fn a_board_turned_round_reads_as_the_rotated_start() {
        let start = Placement::start();
        let turned = Placement(std::array::from_fn(|i| start.0[63 - i]));
        let mut sensor = ChessSensor::default();
        IChessOneBoard::apply(&mut sensor, Frame::Position(turned));
        let reading = ChessGame::reading(&ChessGame::start());
        assert_eq!(sensor.reading(Orientation::Rotated), reading);
        assert_ne!(sensor.reading(Orientation::Normal), reading);
    }

    #[test]
    fn the_battery_is_noted_and_startup_is_the_drivers_commands() {
        let noted = IChessOneBoard::apply(
            &mut ChessSensor::default(),
            Frame::Battery {
                status: 1,
                percent: 85,
            },
        );
        let Applied::Noted(Notice::Identity { what, value }) = noted else {
            panic!("not noted");
        };
        assert_eq!((what, value.as_str()), ("battery", "85 %, charging"));
        assert_eq!(IChessOneBoard::startup(), b"CPIRQRPRB");
        assert_eq!(IChessOneBoard::probe(), b"RP");
        assert_eq!(BoardKind::IChessOne.vendor(), "iChessOne");
        assert!(!BoardKind::IChessOne.reports_clock());
        assert!(BoardKind::IChessOne.reports_whole_positions());
    }
}
