//! How a printed scoresheet writes chess moves: English SAN, figurines, or the piece letters of
//! the sheet's language (FIDE Laws, Appendix C allows national letters).
//!
//! Flow: a [`Notation`] is chosen by `[tournament] notation` (kept with the event) or `export
//! --notation`; [`Notation::pieces`] turns it, with the sheet's [`Lang`], into the [`PieceSymbols`]
//! the sheet prints, and [`PieceSymbols::write`] rewrites each stored SAN move with them: K Q R
//! B N become the symbols (promotions too: `e8=Q` → `e8=Ф`), while pawns, squares (a–h, 1–8, as
//! Appendix C keeps them), `x`, `+`, `#`, `=` and castling (`O-O`) stay. `local` in a language
//! whose letters are missing or shared prints figurines ([`Notation::local_falls_back`] says
//! why). Only sheets change: the store, PGN, JSON and every relay output keep English SAN, as
//! the PGN standard asks. Pure.

use std::{fmt, str::FromStr};

use crate::{
    lang::{Lang, NoPieceLetters, pieces::PIECES},
    store::EventSettings,
};

/// How a scoresheet writes the pieces of chess moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Notation {
    /// English SAN letters (K Q R B N), as recorded.
    #[default]
    San,
    /// Figurines (♔♕♖♗♘).
    Figurine,
    /// The piece letters of the sheet's language (Russian: Кр Ф Л С К); figurines for a language
    /// whose Laws text gives none, or gives two pieces one letter.
    Local,
}

impl Notation {
    /// Every notation, as the config names them.
    pub const ALL: [Notation; 3] = [Notation::San, Notation::Figurine, Notation::Local];

    /// The event's notation (`[tournament] notation`, kept with the event), else SAN: what a
    /// sheet is written in unless asked otherwise.
    pub fn of_event(event: Option<&EventSettings>) -> Notation {
        event
            .and_then(|e| e.notation.as_deref())
            .and_then(|n| n.parse().ok())
            .unwrap_or_default()
    }

    /// The config name: `"san"`, `"figurine"` or `"local"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Notation::San => "san",
            Notation::Figurine => "figurine",
            Notation::Local => "local",
        }
    }

    /// What a sheet in `lang` prints for the pieces.
    pub fn pieces(self, lang: Lang) -> PieceSymbols {
        match self {
            Notation::San => PieceSymbols::ENGLISH,
            Notation::Figurine => PieceSymbols::FIGURINES,
            Notation::Local => lang
                .piece_letters()
                .map_or(PieceSymbols::FIGURINES, |l| PieceSymbols(l.letters())),
        }
    }

    /// Why `local` prints figurines in `lang` instead of its letters; `None` when it prints
    /// letters, or when the notation is not `local`.
    pub fn local_falls_back(self, lang: Lang) -> Option<NoPieceLetters> {
        match self {
            Notation::Local => lang.piece_letters().err(),
            Notation::San | Notation::Figurine => None,
        }
    }
}

impl fmt::Display for Notation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A name that is not a notation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown notation {0:?}; valid: san, figurine, local")]
pub struct UnknownNotation(pub String);

impl FromStr for Notation {
    type Err = UnknownNotation;

    fn from_str(s: &str) -> Result<Notation, UnknownNotation> {
        Notation::ALL
            .into_iter()
            .find(|n| n.as_str() == s.trim())
            .ok_or_else(|| UnknownNotation(s.to_owned()))
    }
}

impl<'de> serde::Deserialize<'de> for Notation {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Notation, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// What a sheet writes for the king, queen, rook, bishop and knight, in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceSymbols([&'static str; 5]);

impl PieceSymbols {
    /// SAN as recorded.
    pub const ENGLISH: PieceSymbols = PieceSymbols(["K", "Q", "R", "B", "N"]);
    /// The white figurines U+2654–U+2658.
    pub const FIGURINES: PieceSymbols = PieceSymbols(["♔", "♕", "♖", "♗", "♘"]);

    /// The symbols, king first.
    pub fn symbols(&self) -> [&'static str; 5] {
        self.0
    }

    /// `san` (a chess move as stored) with these symbols for K Q R B N, in Russian `Nbd7` →
    /// `Кbd7` (К is конь, the knight; С is слон, the bishop) and `exd8=Q#` → `exd8=Ф#`;
    /// everything else as it is.
    pub fn write(&self, san: &str) -> String {
        let mut out = String::with_capacity(san.len() + 4);
        for c in san.chars() {
            match PIECES.iter().position(|(letter, _)| *letter == c) {
                Some(i) => out.push_str(self.0[i]),
                None => out.push(c),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn russian(san: &str) -> String {
        Notation::Local.pieces(Lang::Ru).write(san)
    }

    #[test]
    fn local_russian_writes_each_piece_with_its_letter_and_leaves_the_rest() {
        // король, ферзь, ладья, слон (bishop: С), конь (knight: К).
        assert_eq!(russian("Ke2"), "Крe2");
        assert_eq!(russian("Qxd8+"), "Фxd8+");
        assert_eq!(russian("Rfe1"), "Лfe1");
        assert_eq!(russian("Bb5+"), "Сb5+");
        assert_eq!(russian("Nf3"), "Кf3");
        // Disambiguation keeps its file or rank, in Latin letters.
        assert_eq!(
            russian("Nbd7"),
            "Кbd7",
            "a knight is К (конь), not С (слон)"
        );
        assert_eq!(russian("Bbd7"), "Сbd7", "a bishop is С (слон)");
        assert_eq!(russian("R1a3"), "Л1a3");
        assert_eq!(russian("Qh4xe1#"), "Фh4xe1#");
        // Promotions, captures, checks and mates.
        assert_eq!(russian("e8=Q"), "e8=Ф");
        assert_eq!(russian("exf8=N+"), "exf8=К+");
        assert_eq!(russian("bxa1=R#"), "bxa1=Л#");
        assert_eq!(russian("g1=B"), "g1=С");
        // Pawns and castling stay as they are.
        assert_eq!(russian("e4"), "e4");
        assert_eq!(russian("dxe5"), "dxe5");
        assert_eq!(russian("O-O"), "O-O");
        assert_eq!(russian("O-O-O+"), "O-O-O+");
    }

    #[test]
    fn san_is_as_recorded_and_figurines_are_figurines() {
        for san in ["Nbd7", "exd8=Q#", "O-O-O", "Kxe2", "a3"] {
            assert_eq!(Notation::San.pieces(Lang::Ru).write(san), san);
        }
        let figurines = Notation::Figurine.pieces(Lang::Ru);
        assert_eq!(figurines.write("Nbxd7+"), "♘bxd7+");
        assert_eq!(figurines.write("exd8=Q#"), "exd8=♕#");
        assert_eq!(figurines.write("Rxb2"), "♖xb2");
        assert_eq!(figurines.write("Bc4"), "♗c4");
        assert_eq!(figurines.write("O-O-O"), "O-O-O");
        assert_eq!(figurines.write("Kxe2"), "♔xe2");
        assert_eq!(
            Notation::Local.pieces(Lang::En).write("Nbd7"),
            "Nbd7",
            "English's own letters are SAN's"
        );
    }

    #[test]
    fn local_falls_back_to_figurines_where_the_text_gives_no_letters_to_print() {
        for lang in Lang::ALL {
            let pieces = Notation::Local.pieces(lang);
            let reason = Notation::Local.local_falls_back(lang);
            match lang {
                Lang::En | Lang::Ru => {
                    assert_eq!(reason, None, "{lang}");
                    assert_ne!(pieces, PieceSymbols::FIGURINES, "{lang}");
                }
                Lang::Mn => {
                    assert!(
                        matches!(reason, Some(NoPieceLetters::Shared { letter: "Т", .. })),
                        "{reason:?}"
                    );
                    assert_eq!(pieces, PieceSymbols::FIGURINES);
                }
                Lang::Uk | Lang::Ky | Lang::Kk | Lang::Fa => {
                    assert_eq!(reason, Some(NoPieceLetters::NotGiven), "{lang}");
                    assert_eq!(pieces, PieceSymbols::FIGURINES, "{lang}");
                }
            }
            // The other notations never fall back and never depend on the language.
            assert_eq!(Notation::San.local_falls_back(lang), None);
            assert_eq!(Notation::Figurine.local_falls_back(lang), None);
            assert_eq!(Notation::San.pieces(lang), PieceSymbols::ENGLISH);
            assert_eq!(Notation::Figurine.pieces(lang), PieceSymbols::FIGURINES);
        }
        assert_eq!(Notation::Local.pieces(Lang::Mn).write("Nbd7"), "♘bd7");
    }

    #[test]
    fn notations_read_as_the_config_and_the_command_line_write_them() {
        for n in Notation::ALL {
            assert_eq!(n.as_str().parse::<Notation>(), Ok(n));
            assert_eq!(n.to_string(), n.as_str());
            let clap_name = <Notation as clap::ValueEnum>::to_possible_value(&n)
                .map(|v| v.get_name().to_owned());
            assert_eq!(clap_name.as_deref(), Some(n.as_str()));
        }
        assert_eq!(Notation::default(), Notation::San);
        assert_eq!(
            "Figurines".parse::<Notation>().unwrap_err().to_string(),
            "unknown notation \"Figurines\"; valid: san, figurine, local"
        );
    }
}
