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
    pipeline::{Board, Dgt, Tgz},
    sensor::{certabo::CertaboBoard, chesslink::ChessLinkBoard},
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
            BoardKind::Certabo => w.run::<CertaboBoard>(),
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
        let Link::Serial(chesslink) = BoardKind::ChessLink.link();
        assert_eq!(chesslink.to_string(), "38400 7O1");
        assert!(!BoardKind::ChessLink.reports_clock() && BoardKind::Dgt.reports_clock());
        assert_eq!(BoardKind::Togyz.game(), Kind::Togyz);
    }
}
