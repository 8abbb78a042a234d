//! The kinds of board boardscribe reads: the one list of them, and what each is made of that the
//! edges need to know before a byte is read (its link: the serial line's settings, or USB HID with
//! its gap between writes).
//!
//! Flow: a config's `kind = "..."`, a capture's `device`, `devices` and `emulate --kind` all name
//! a kind by [`BoardKind::name`]; [`crate::boards`] turns a [`BoardKind`] into its pipeline's
//! [`crate::pipeline::Board`] type in one match, and the daemon opens its port with the line
//! that type declares ([`Link`]).
//! Everything past the pipeline (tracker, referee, store, relay) knows the game kind only
//! ([`BoardKind::game`]), never the vendor.

use serde::{Deserialize, Serialize};

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
    /// A Chessnut board (Air, Air+, Pro, Evo, Go) on USB HID: the whole position about every
    /// 200 ms, no clock.
    Chessnut,
    /// A Certabo or Tabutronic Cerno RFID board: every piece's chip on every record, several
    /// records a second, no clock.
    Certabo,
    /// An iChessOne board (Bluetooth LE, through a BLE–UART bridge): the whole position at
    /// every change, no clock.
    #[serde(rename = "ichessone")]
    #[cfg_attr(feature = "clap", value(name = "ichessone"))]
    IChessOne,
}

impl BoardKind {
    /// Every kind, in the order `devices` and the config's error list them.
    pub const ALL: [BoardKind; 6] = [
        BoardKind::Dgt,
        BoardKind::Togyz,
        BoardKind::ChessLink,
        BoardKind::Chessnut,
        BoardKind::Certabo,
        BoardKind::IChessOne,
    ];

    /// The name a config's `kind`, a capture's `device` and the command line use.
    pub const fn name(self) -> &'static str {
        match self {
            BoardKind::Dgt => "dgt",
            BoardKind::Togyz => "togyz",
            BoardKind::ChessLink => "chesslink",
            BoardKind::Chessnut => "chessnut",
            BoardKind::Certabo => "certabo",
            BoardKind::IChessOne => "ichessone",
        }
    }

    /// The kind named `name` ([`BoardKind::name`]).
    pub fn from_name(name: &str) -> Option<BoardKind> {
        BoardKind::ALL.into_iter().find(|k| k.name() == name)
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
    /// USB HID (a hidraw node): each read is one input report and each write one output report
    /// (the kind's [`crate::pipeline::Board::output_reports`]), no two writes closer than
    /// `write_gap_ms`.
    Hid { write_gap_ms: crate::Millis },
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
        assert_eq!(SerialSettings::DGT.to_string(), "9600 8N1");
        let seven_odd = SerialSettings {
            baud: 38_400,
            data_bits: DataBits::Seven,
            parity: Parity::Odd,
            stop_bits: StopBits::One,
        };
        assert_eq!(seven_odd.to_string(), "38400 7O1");
    }
}
