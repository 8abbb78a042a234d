//! The kinds of board boardscribe reads: the one list of them, and what each is made of that the
//! edges need to know before a byte is read (its link: the serial line's settings, or USB HID).
//!
//! Flow: a config's `kind = "..."`, a capture's `device`, `devices` and `emulate --kind` all name
//! a kind by [`BoardKind::name`]; the daemon turns a [`BoardKind`] into its pipeline's
//! [`crate::pipeline::Board`] type in one match, and opens its port with [`BoardKind::link`].
//! Everything past the pipeline (tracker, referee, store, relay) knows the game kind only
//! ([`BoardKind::game`]), never the vendor.

use serde::{Deserialize, Serialize};

use crate::{
    game::{GameKind, Kind},
    pipeline::{Board, Dgt, Tgz},
    sensor::chesslink::ChessLinkBoard,
};

/// A kind of board: a vendor's protocol and the game it is made for.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum BoardKind {
    /// A DGT electronic chessboard (USB, Bluetooth serial or a bus), often with a DGT clock.
    #[default]
    Dgt,
    /// A togyz korgool pit board speaking TGZ-1 (DGT's framing), with its clock.
    Togyz,
    /// A Millennium ChessLink board (Exclusive, Performance, eONE): the whole position on
    /// every change, no clock.
    #[serde(rename = "chesslink")]
    #[cfg_attr(feature = "clap", value(name = "chesslink"))]
    ChessLink,
}

impl BoardKind {
    /// Every kind, in the order `devices` and the config's error list them.
    pub const ALL: [BoardKind; 3] = [BoardKind::Dgt, BoardKind::Togyz, BoardKind::ChessLink];

    /// The name a config's `kind`, a capture's `device` and the command line use.
    pub const fn name(self) -> &'static str {
        match self {
            BoardKind::Dgt => "dgt",
            BoardKind::Togyz => "togyz",
            BoardKind::ChessLink => "chesslink",
        }
    }

    /// The kind named `name` ([`BoardKind::name`]).
    pub fn from_name(name: &str) -> Option<BoardKind> {
        BoardKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Runs `w` with this kind's pipeline board type: the one match from a kind to the code
    /// that reads it. Everything else a kind is (its line, its game, its commands) comes from
    /// that type's [`Board`] implementation.
    pub fn with_board<W: WithBoard>(self, w: W) -> W::Output {
        match self {
            BoardKind::Dgt => w.run::<Dgt>(),
            BoardKind::Togyz => w.run::<Tgz>(),
            BoardKind::ChessLink => w.run::<ChessLinkBoard>(),
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
        self.with_board(Facts).startup
    }
}

/// Something done with a kind's pipeline board type ([`BoardKind::with_board`]).
pub trait WithBoard {
    type Output;
    fn run<B: Board>(self) -> Self::Output;
}

/// A kind's facts, read off its board type.
struct Facts;

struct KindFacts {
    vendor: &'static str,
    game: Kind,
    link: Link,
    reports_clock: bool,
    startup: Vec<u8>,
}

impl WithBoard for Facts {
    type Output = KindFacts;

    fn run<B: Board>(self) -> KindFacts {
        KindFacts {
            vendor: B::VENDOR,
            game: <B::Game as GameKind>::KIND,
            link: B::LINK,
            reports_clock: B::REPORTS_CLOCK,
            startup: B::startup(),
        }
    }
}

impl std::fmt::Display for BoardKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// How a kind of board is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// A serial line (USB CDC or FTDI, Bluetooth SPP, a pseudo-terminal) with these settings.
    Serial(SerialSettings),
}

/// A serial line's framing of characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SerialSettings {
    pub baud: u32,
    pub data_bits: DataBits,
    pub parity: Parity,
    pub stop_bits: StopBits,
}

impl SerialSettings {
    /// DGT's line (dgt-notes 1.1), which TGZ-1 keeps: 9600 baud, 8 data bits, no parity, 1 stop.
    pub const DGT: SerialSettings = SerialSettings {
        baud: 9_600,
        data_bits: DataBits::Eight,
        parity: Parity::None,
        stop_bits: StopBits::One,
    };
}

impl std::fmt::Display for SerialSettings {
    /// As a terminal program writes it: `9600 8N1`, `38400 7O1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bits = match self.data_bits {
            DataBits::Seven => 7,
            DataBits::Eight => 8,
        };
        let parity = match self.parity {
            Parity::None => 'N',
            Parity::Odd => 'O',
            Parity::Even => 'E',
        };
        let stop = match self.stop_bits {
            StopBits::One => 1,
            StopBits::Two => 2,
        };
        write!(f, "{} {bits}{parity}{stop}", self.baud)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataBits {
    Seven,
    Eight,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parity {
    None,
    Odd,
    Even,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopBits {
    One,
    Two,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_are_distinct() {
        for k in BoardKind::ALL {
            assert_eq!(BoardKind::from_name(k.name()), Some(k));
            let json = serde_json::to_string(&k).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", k.name()));
        }
        assert_eq!(BoardKind::from_name("DGT"), None);
    }

    #[test]
    fn lines_are_written_as_terminals_write_them() {
        let Link::Serial(dgt) = BoardKind::Dgt.link();
        assert_eq!(dgt.to_string(), "9600 8N1");
        let seven_odd = SerialSettings {
            baud: 38_400,
            data_bits: DataBits::Seven,
            parity: Parity::Odd,
            stop_bits: StopBits::One,
        };
        assert_eq!(seven_odd.to_string(), "38400 7O1");
    }
}
