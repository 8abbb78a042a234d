//! A Millennium ChessLink board as the pipeline reads it: every `s` report is the whole
//! position, which replaces the [`ChessSensor`]'s squares; the board has no clock and no memory.
//!
//! Flow: [`ChessLinkBoard`] is the kind's [`Board`]: the [`ChessLink`] wire cuts the reports,
//! [`board_codes`] puts a report's squares (h1 first, [`crate::protocol::chesslink::Report`])
//! into board numbering (a8 first on a board lying normally) as square codes, and the tracker
//! turns the board round itself if it lies the other way. A report that changes nothing (the
//! answer to the watchdog's status request) is nothing for the tracker. The host switches on
//! reports on change (with the board's debounce) and asks for the position at every open.

use super::chess::ChessSensor;
use crate::{
    arbiter::{LawsSetup, Referee},
    game::chess::{ChessGame, code, code_to_piece, piece_code},
    kind::{BoardKind, DataBits, Link, Parity, SerialSettings, StopBits},
    pipeline::{Applied, Board, Notice},
    protocol::chesslink::{ChessLink, Command, Frame, Report, STARTUP_REPORT, startup},
    tracker::TrackerSettings,
};

/// A Millennium ChessLink board (Exclusive, Performance, eONE).
pub struct ChessLinkBoard;

/// The board's square codes in board numbering (index 0 = a8 ... 63 = h1 on a board lying
/// normally) from a report, whose index 0 is h1: report index `i` is board index `63 - i`.
pub fn board_codes(report: &Report) -> [u8; 64] {
    std::array::from_fn(|i| report.0[63 - i].map_or(code::EMPTY, piece_code))
}

/// The report a board showing `codes` (board numbering) sends: the inverse of [`board_codes`].
pub fn report_of(codes: &[u8; 64]) -> Report {
    Report(std::array::from_fn(|i| code_to_piece(codes[63 - i])))
}

impl Board for ChessLinkBoard {
    type Wire = ChessLink;
    type Frame = Frame;
    type Game = ChessGame;
    type Sensor = ChessSensor;
    type Judge = Referee;
    const KIND: BoardKind = BoardKind::ChessLink;
    const VENDOR: &'static str = "Millennium ChessLink";
    /// The spec's line: 38400 baud, 7 data bits, odd parity, 1 stop bit.
    const LINK: Link = Link::Serial(SerialSettings {
        baud: 38_400,
        data_bits: DataBits::Seven,
        parity: Parity::Odd,
        stop_bits: StopBits::One,
    });
    const REPORTS_CLOCK: bool = false;

    fn wire() -> ChessLink {
        ChessLink
    }

    fn apply(sensor: &mut ChessSensor, frame: Frame) -> Applied {
        match frame {
            Frame::Status(report) => {
                let codes = board_codes(&report);
                if sensor.report_whole(&codes) {
                    Applied::Board
                } else {
                    Applied::Nothing
                }
            }
            Frame::Version { high, low } => Applied::Noted(Notice::Identity {
                what: "firmware version",
                value: format!("{high:02x}.{low:02x}"),
            }),
            Frame::Identity { text, .. } => Applied::Noted(Notice::Identity {
                what: "identity",
                value: text,
            }),
            other => Applied::Noted(Notice::FrameNotUsed(Box::new(other))),
        }
    }

    fn reset(sensor: &mut ChessSensor) {
        sensor.reset();
    }

    /// The version, the board checking our commands' check digits, reports on every change
    /// held for two scans, and the position now.
    fn startup() -> Vec<u8> {
        let mut out = Vec::new();
        for c in startup(STARTUP_REPORT) {
            c.encode(&mut out);
        }
        out
    }

    /// The position: any answer tells the board is there, and a change the board did not
    /// report would show.
    fn probe() -> Vec<u8> {
        Command::Status.to_bytes()
    }

    /// The version (`V`), as the drivers find a ChessLink board among serial ports, and the
    /// position.
    fn identify() -> Vec<u8> {
        let mut out = Command::Version.to_bytes();
        Command::Status.encode(&mut out);
        out
    }

    /// Whole positions, each once it held for the debounce.
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
    use crate::{
        game::GameKind,
        protocol::{FrameReader, chesslink::Orientation as Lies},
        sensor::Orientation,
    };

    /// The start position's report as the issue gives it: h1 first, check 73.
    const START: &[u8] = b"sRNBKQBNRPPPPPPPP................................pppppppprnbkqbnr73";

    fn read(bytes: &[u8]) -> Vec<Frame> {
        let mut r = FrameReader::with_wire(ChessLink);
        r.push(bytes);
        std::iter::from_fn(|| r.next_frame())
            .filter_map(Result::ok)
            .collect()
    }

    #[test]
    fn the_start_report_reads_as_the_start_position_the_normal_way() {
        let frames = read(START);
        let [Frame::Status(report)] = frames.as_slice() else {
            panic!("{frames:?}");
        };
        let mut sensor = ChessSensor::default();
        assert!(matches!(
            ChessLinkBoard::apply(&mut sensor, Frame::Status(*report)),
            Applied::Board
        ));
        let start = ChessGame::reading(&ChessGame::start());
        // Read the normal way round, not as a board turned round: the h1-first order is the
        // drivers', and a mistake here would pass for a board lying the other way.
        assert_eq!(sensor.reading(Orientation::Normal), start);
        assert_ne!(sensor.reading(Orientation::Rotated), start);
        // The same report again changes nothing.
        assert!(matches!(
            ChessLinkBoard::apply(&mut sensor, Frame::Status(*report)),
            Applied::Nothing
        ));
    }

    #[test]
    fn report_index_0_is_h1_and_63_is_a8() {
        let mut report = Report::EMPTY;
        let king = Piece {
            color: Color::White,
            role: Role::King,
        };
        let rook = Piece {
            color: Color::Black,
            role: Role::Rook,
        };
        report.0[0] = Some(king);
        report.0[63] = Some(rook);
        let mut sensor = ChessSensor::default();
        ChessLinkBoard::apply(&mut sensor, Frame::Status(report));
        let reading = sensor.reading(Orientation::Normal);
        assert_eq!(reading.0[Square::H1 as usize], piece_code(king));
        assert_eq!(reading.0[Square::A8 as usize], piece_code(rook));
        assert_eq!(reading.0.iter().filter(|&&c| c != code::EMPTY).count(), 2);
        // The protocol module's own mapping agrees.
        assert_eq!(report.piece_at(Square::H1, Lies::Normal), Some(king));
    }

    #[test]
    fn a_report_and_its_board_codes_give_each_other_back() {
        let report = Report::start(Lies::TurnedRound);
        assert_eq!(report_of(&board_codes(&report)), report);
        let codes = board_codes(&Report::start(Lies::Normal));
        assert_eq!(board_codes(&report_of(&codes)), codes);
    }

    #[test]
    fn a_board_turned_round_reads_as_the_rotated_start() {
        let report = Report::start(Lies::TurnedRound);
        let mut sensor = ChessSensor::default();
        ChessLinkBoard::apply(&mut sensor, Frame::Status(report));
        let start = ChessGame::reading(&ChessGame::start());
        assert_eq!(sensor.reading(Orientation::Rotated), start);
        assert_ne!(sensor.reading(Orientation::Normal), start);
    }

    #[test]
    fn startup_and_probe_are_the_specs_commands() {
        let startup = String::from_utf8(ChessLinkBoard::startup()).unwrap_or_default();
        assert_eq!(startup, "V56W000057W020451S53");
        assert_eq!(ChessLinkBoard::probe(), b"S53");
        let Link::Serial(line) = ChessLinkBoard::LINK else {
            panic!("a ChessLink board is on a serial line");
        };
        assert_eq!(line.to_string(), "38400 7O1");
    }
}
