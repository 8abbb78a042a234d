//! Each kind of board to the code that reads it: [`BoardKind::with_board`], the one match from
//! a kind ([`crate::kind`]) to its pipeline's [`Board`] type, and what a kind is, read off that
//! type (its vendor, game, line, start-up).
//!
//! Flow: the daemon prepares a configured board, `replay` a capture and `record` a port through
//! [`BoardKind::with_board`] with a [`WithBoard`] of their own; a new kind of board adds its
//! line here and nowhere else above the pipeline.

use crate::{
    game::{GameKind, Kind},
    kind::{BoardKind, Link},
    pipeline::{Applied, Board, Dgt, Notice, Tgz},
    protocol::FrameReader,
    sensor::{
        certabo::CertaboBoard, chesslink::ChessLinkBoard, chessnut::ChessnutBoard,
        ichessone::IChessOneBoard,
    },
};

impl BoardKind {
    /// Runs `w` with this kind's pipeline board type: the one match from a kind to the code
    /// that reads it. Everything else a kind is (its line, its game, its commands) comes from
    /// that type's [`Board`] implementation.
    pub fn with_board<W: WithBoard>(self, w: W) -> W::Output {
        match self {
            BoardKind::Dgt => w.run::<Dgt>(),
            BoardKind::Togyz => w.run::<Tgz>(),
            BoardKind::ChessLink => w.run::<ChessLinkBoard>(),
            BoardKind::Chessnut => w.run::<ChessnutBoard>(),
            BoardKind::Certabo => w.run::<CertaboBoard>(),
            BoardKind::IChessOne => w.run::<IChessOneBoard>(),
        }
    }

    /// Who makes it, as `devices` shows it.
    pub fn vendor(self) -> &'static str {
        self.with_board(Facts).vendor
    }

    /// The game its boards are made for.
    pub fn game(self) -> Kind {
        self.with_board(Facts).game
    }

    /// How the host reaches it.
    pub fn link(self) -> Link {
        self.with_board(Facts).link
    }

    /// Whether its frames carry the clocks' times (else a game on it has no `[%clk]` unless
    /// a clock is read some other way).
    pub fn reports_clock(self) -> bool {
        self.with_board(Facts).reports_clock
    }

    /// Whether its boards report the whole position once a change has held for their debounce
    /// (not every square's change as it happens): states the hands leave sooner are never
    /// seen, so hands much faster than a human's can hide a move.
    pub fn reports_whole_positions(self) -> bool {
        struct Whole;
        impl WithBoard for Whole {
            type Output = bool;
            fn run<B: Board>(self) -> bool {
                B::settings(&crate::arbiter::LawsSetup::default()).whole_reports
            }
        }
        self.with_board(Whole)
    }

    /// Sent after every open: what switches on its reports.
    pub fn startup(self) -> Vec<u8> {
        struct Startup;
        impl WithBoard for Startup {
            type Output = Vec<u8>;
            fn run<B: Board>(self) -> Vec<u8> {
                B::startup()
            }
        }
        self.with_board(Startup)
    }

    /// Sent to a port nothing names, to learn whether a board of this kind is behind it
    /// ([`Board::identify`]).
    pub fn identify(self) -> Vec<u8> {
        struct Identify;
        impl WithBoard for Identify {
            type Output = Vec<u8>;
            fn run<B: Board>(self) -> Vec<u8> {
                B::identify()
            }
        }
        self.with_board(Identify)
    }

    /// Whether `answer`, what a port sent back after [`BoardKind::identify`], is a board of
    /// this kind talking: it is when a whole report of the kind's protocol (what the board
    /// senses) decoded; what the board said of itself is kept. Bytes of another protocol, or
    /// noise, are not (a frame's checks and lengths must hold), nor an identity alone: DGT and
    /// TGZ-1 boards answer the same serial-number request alike, and only their reports differ.
    pub fn identified(self, answer: &[u8]) -> Option<Identified> {
        struct Read<'a>(&'a [u8]);
        impl WithBoard for Read<'_> {
            type Output = Option<Identified>;
            fn run<B: Board>(self) -> Option<Identified> {
                let mut reader = FrameReader::with_wire(B::wire());
                reader.push(self.0);
                let mut sensor = B::Sensor::default();
                let mut found = Identified::default();
                while let Some(frame) = reader.next_frame() {
                    let Ok(frame) = frame else { continue };
                    match B::apply(&mut sensor, frame) {
                        Applied::Noted(Notice::Identity { what, value }) => {
                            found.identity.push(format!("{what} {value}"));
                        }
                        Applied::Board | Applied::Clock(_) | Applied::Nothing => {
                            found.reports += 1;
                        }
                        Applied::Memory(_) | Applied::Noted(_) => {}
                    }
                }
                (found.reports > 0).then_some(found)
            }
        }
        self.with_board(Read(answer))
    }
}

/// A board of a kind heard on a port ([`BoardKind::identified`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identified {
    /// What the board said of itself: `firmware version 01.02`, `serial number 12345`.
    pub identity: Vec<String>,
    /// How many of its reports (a position, a square, a clock) came.
    pub reports: usize,
}

/// Something done with a kind's pipeline board type ([`BoardKind::with_board`]).
pub trait WithBoard {
    type Output;
    fn run<B: Board>(self) -> Self::Output;
}

/// A kind's facts, read off its board type's constants (nothing built).
struct Facts;

struct KindFacts {
    vendor: &'static str,
    game: Kind,
    link: Link,
    reports_clock: bool,
}

impl WithBoard for Facts {
    type Output = KindFacts;

    fn run<B: Board>(self) -> KindFacts {
        KindFacts {
            vendor: B::VENDOR,
            game: <B::Game as GameKind>::KIND,
            link: B::LINK,
            reports_clock: B::REPORTS_CLOCK,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::SerialSettings;

    #[test]
    fn each_kind_is_read_by_a_board_of_that_kind() {
        struct KindOf;
        impl WithBoard for KindOf {
            type Output = BoardKind;
            fn run<B: Board>(self) -> BoardKind {
                B::KIND
            }
        }
        for k in BoardKind::ALL {
            assert_eq!(k.with_board(KindOf), k);
        }
        assert_eq!(BoardKind::Dgt.link(), Link::Serial(SerialSettings::DGT));
        let Link::Serial(chesslink) = BoardKind::ChessLink.link() else {
            panic!("a ChessLink board is on a serial line");
        };
        assert_eq!(chesslink.to_string(), "38400 7O1");
        assert!(!BoardKind::ChessLink.reports_clock() && BoardKind::Dgt.reports_clock());
        assert!(BoardKind::ChessLink.reports_whole_positions());
        assert!(!BoardKind::Dgt.reports_whole_positions());
        assert_eq!(BoardKind::Togyz.game(), Kind::Togyz);
        assert_eq!(BoardKind::Chessnut.link(), Link::Hid { write_gap_ms: 200 });
        assert!(!BoardKind::Chessnut.reports_clock());
    }

    /// What a ChessLink board answers to `V` and `S` (version 1.2, the start position), and a
    /// DGT board to a serial number and board request (an empty board).
    fn answers() -> (Vec<u8>, Vec<u8>) {
        use crate::protocol::{chesslink, dgt};
        let mut chesslink = chesslink::Frame::Version { high: 1, low: 2 }.to_bytes();
        chesslink.extend(
            chesslink::Frame::Status(chesslink::Report::start(chesslink::Orientation::Normal))
                .to_bytes(),
        );
        let mut dgt = dgt::Frame::SerialNr("12345".into()).to_bytes();
        dgt.extend(dgt::Frame::BoardDump(dgt::BoardDump([0; 64])).to_bytes());
        (chesslink, dgt)
    }

    #[test]
    fn a_board_is_identified_by_its_own_answer_and_no_other_kinds() {
        let (chesslink, dgt) = answers();
        assert_eq!(BoardKind::ChessLink.identify(), b"V56S53");
        let found = BoardKind::ChessLink.identified(&chesslink);
        assert_eq!(
            found.map(|f| f.identity),
            Some(vec!["firmware version 01.02".to_owned()])
        );
        let found = BoardKind::Dgt.identified(&dgt);
        assert_eq!(
            found.map(|f| f.identity),
            Some(vec!["serial number 12345".to_owned()])
        );
        // An identity alone is not a board: a TGZ-1 board answers DGT's serial number request.
        let serial_only = crate::protocol::dgt::Frame::SerialNr("12345".into()).to_bytes();
        assert_eq!(BoardKind::Dgt.identified(&serial_only), None);
        // Each answer is only its own kind's.
        for k in BoardKind::ALL {
            if k != BoardKind::ChessLink {
                assert_eq!(k.identified(&chesslink), None, "{k}");
            }
            if k != BoardKind::Dgt {
                assert_eq!(k.identified(&dgt), None, "{k}");
            }
        }
    }

    #[test]
    fn a_report_identifies_a_board_and_noise_identifies_none() {
        use crate::protocol::chesslink::{Frame, Orientation, Report};
        // Noise before the answer (what the port held) does not hide it.
        let mut heard = b"\x00\xffgarbage 17 ".to_vec();
        heard.extend(Frame::Status(Report::start(Orientation::Normal)).to_bytes());
        let found = BoardKind::ChessLink.identified(&heard);
        assert_eq!(found.map(|f| f.reports), Some(1));
        let noise: Vec<u8> = (0..2000u32).map(|i| (i * 7919 % 251) as u8).collect();
        for k in BoardKind::ALL {
            assert_eq!(k.identified(&noise), None, "{k}");
            assert_eq!(k.identified(&[]), None, "{k}");
        }
    }
}
