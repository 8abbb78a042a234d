//! The piece letters a language's Laws text gives, for sheets in `local` notation.
//!
//! FIDE Laws, Appendix C: a piece is written by an abbreviation, in English the first letter of
//! its name, and each country may use its own; the squares stay a–h, 1–8. Flow: each table's
//! `notation.pieces` lists the king's, queen's, rook's, bishop's and knight's letters, or nothing
//! when the language's text gives none; [`Lang::piece_letters`] reads them and, when there are
//! none a sheet could print, says why ([`NoPieceLetters`]): none given, or two pieces sharing
//! one letter (a sheet that printed them could not be read back). Nothing is decided per
//! language here: the data decides. Pure.

use super::Lang;

/// The pieces SAN writes with a letter, in the order of `notation.pieces`: their English SAN
/// letter and name.
pub const PIECES: [(char, &str); 5] = [
    ('K', "king"),
    ('Q', "queen"),
    ('R', "rook"),
    ('B', "bishop"),
    ('N', "knight"),
];

/// A language's letters for the king, queen, rook, bishop and knight ([`PIECES`]' order), all
/// different.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieceLetters([&'static str; 5]);

impl PieceLetters {
    /// The letters in [`PIECES`]' order.
    pub fn letters(&self) -> [&'static str; 5] {
        self.0
    }
}

/// Why a language has no piece letters a sheet can print; said after the language's name
/// (`Mongolian's Laws text gives …`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoPieceLetters {
    /// Its table gives none (its Laws text names no piece, or there is no such text).
    #[error("Laws text gives no piece letters")]
    NotGiven,
    /// Its table lists another number of letters than five (a mistake in the table).
    #[error("table lists {0} piece letters instead of five (K Q R B N)")]
    NotFive(usize),
    /// Two pieces have the one letter.
    #[error("Laws text gives the {first} and the {second} the one letter {letter}")]
    Shared {
        letter: &'static str,
        first: &'static str,
        second: &'static str,
    },
}

impl Lang {
    /// The language's piece letters (`notation.pieces`), or why it has none a sheet can print.
    pub fn piece_letters(self) -> Result<PieceLetters, NoPieceLetters> {
        piece_letters(self.text("notation.pieces"))
    }
}

/// The letters of a `notation.pieces` text.
fn piece_letters(text: &'static str) -> Result<PieceLetters, NoPieceLetters> {
    let letters: Vec<&'static str> = text.split_whitespace().collect();
    let letters: [&'static str; 5] = match letters.len() {
        0 => return Err(NoPieceLetters::NotGiven),
        n => letters.try_into().map_err(|_| NoPieceLetters::NotFive(n))?,
    };
    for (i, letter) in letters.iter().enumerate() {
        if let Some(j) = letters[i + 1..].iter().position(|l| l == letter) {
            return Err(NoPieceLetters::Shared {
                letter,
                first: PIECES[i].1,
                second: PIECES[i + 1 + j].1,
            });
        }
    }
    Ok(PieceLetters(letters))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_language_has_letters_only_when_its_text_gives_five_different_ones() {
        let found: Vec<(Lang, Result<[&str; 5], NoPieceLetters>)> = Lang::ALL
            .into_iter()
            .map(|l| (l, l.piece_letters().map(|p| p.letters())))
            .collect();
        assert_eq!(
            found,
            [
                (Lang::En, Ok(["K", "Q", "R", "B", "N"])),
                (Lang::Ru, Ok(["Кр", "Ф", "Л", "С", "К"])),
                (Lang::Uk, Err(NoPieceLetters::NotGiven)),
                (
                    Lang::Mn,
                    Err(NoPieceLetters::Shared {
                        letter: "Т",
                        first: "rook",
                        second: "bishop"
                    })
                ),
                (Lang::Ky, Err(NoPieceLetters::NotGiven)),
                (Lang::Kk, Err(NoPieceLetters::NotGiven)),
                (Lang::Fa, Err(NoPieceLetters::NotGiven)),
            ]
        );
    }

    #[test]
    fn the_computation_reads_any_table_not_a_list_of_languages() {
        assert_eq!(piece_letters("  "), Err(NoPieceLetters::NotGiven));
        assert_eq!(piece_letters("K Q R B"), Err(NoPieceLetters::NotFive(4)));
        assert_eq!(
            piece_letters("K Q R B N P"),
            Err(NoPieceLetters::NotFive(6))
        );
        assert_eq!(
            piece_letters("K D T L S").map(|p| p.letters()),
            Ok(["K", "D", "T", "L", "S"]),
            "German's letters are five different ones"
        );
        assert_eq!(
            piece_letters("К Ф Л С К"),
            Err(NoPieceLetters::Shared {
                letter: "К",
                first: "king",
                second: "knight"
            }),
            "король and конь by their first letter alone (why Russian writes the king Кр)"
        );
        assert_eq!(
            NoPieceLetters::Shared {
                letter: "Т",
                first: "rook",
                second: "bishop"
            }
            .to_string(),
            "Laws text gives the rook and the bishop the one letter Т"
        );
    }
}
