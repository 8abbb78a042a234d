//! Move numbers as the arbiter says them: `34w`, `34b`, `34.`, `34...`, or `34` alone, turned
//! into plies (34w is ply 67, 34b ply 68).
//!
//! Flow: [`MoveNo::parse`] reads a number and its side (the whole argument), or
//! [`MoveNo::parse_with_move`] a number followed by a move (`34b Nf6`, `34...Nf6`); then
//! [`MoveNo::ply`] gives the ply, taking a number without a side as the one move of that number
//! the game has (a move that is the last of the record), and saying what is missing or
//! ambiguous otherwise.

use crate::tracker::Side;

/// Why a move number does not read, or does not name one ply of the game.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveNoError {
    #[error(
        "{0:?} is not a move number: give the number and the side, e.g. 34w or 34. (white's \
         34th, ply 67), 34b or 34... (black's 34th, ply 68)"
    )]
    Unreadable(String),
    #[error("move numbers count from 1")]
    Zero,
    #[error(
        "{text:?}: give the move number, then the move, e.g. \"34b Nf6\" or \"34... Nf6\" \
         (or --ply N with the move alone)"
    )]
    NoMove { text: String },
    #[error("game {game} has no move {number} yet: its record has {plies} plies{last}")]
    NotYet {
        game: i64,
        number: u32,
        plies: usize,
        last: String,
    },
    #[error(
        "game {game}: move {number} is two plies, white's {white} and black's {black}: say \
         {number}w (ply {white_ply}) or {number}b (ply {black_ply})"
    )]
    Ambiguous {
        game: i64,
        number: u32,
        white: String,
        black: String,
        white_ply: u32,
        black_ply: u32,
    },
}

/// A move number with its side, if given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveNo {
    pub number: u32,
    pub side: Option<Side>,
}

impl MoveNo {
    /// The ply of `side`'s move of `number`.
    pub fn ply_of(number: u32, side: Side) -> u32 {
        match side {
            Side::White => number.saturating_mul(2).saturating_sub(1),
            Side::Black => number.saturating_mul(2),
        }
    }

    /// The move number and side of `ply` (1-based).
    pub fn of_ply(ply: u32) -> MoveNo {
        MoveNo {
            number: ply.div_ceil(2),
            side: Some(Side::of_ply(ply)),
        }
    }

    /// A whole argument: `34`, `34w`, `34b`, `34white`, `34 black`, `34.`, `34...`, `34…`.
    pub fn parse(text: &str) -> Result<MoveNo, MoveNoError> {
        match MoveNo::split(text)? {
            (n, "") => Ok(n),
            _ => Err(MoveNoError::Unreadable(text.to_owned())),
        }
    }

    /// A move number followed by a move: `34b Nf6`, `34... Nf6`, `34.e4`, `34w: e2e4`.
    pub fn parse_with_move(text: &str) -> Result<(MoveNo, String), MoveNoError> {
        let (n, rest) = MoveNo::split(text)?;
        let mv = rest.trim_start_matches(':').trim();
        if mv.is_empty() {
            return Err(MoveNoError::NoMove {
                text: text.to_owned(),
            });
        }
        Ok((n, mv.to_owned()))
    }

    /// The number and side at the start of `text`, and what follows them (trimmed).
    fn split(text: &str) -> Result<(MoveNo, &str), MoveNoError> {
        let t = text.trim();
        let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let number: u32 = t[..digits]
            .parse()
            .map_err(|_| MoveNoError::Unreadable(text.to_owned()))?;
        if number == 0 {
            return Err(MoveNoError::Zero);
        }
        let rest = t[digits..].trim_start();
        // Dots (PGN's "34." and "34...") may touch the move; a letter must stand alone, so
        // that "34 bxc3" is not read as black's move "xc3".
        for (mark, side) in [("...", Side::Black), ("…", Side::Black), (".", Side::White)] {
            if let Some(after) = rest.strip_prefix(mark) {
                return Ok((
                    MoveNo {
                        number,
                        side: Some(side),
                    },
                    after.trim(),
                ));
            }
        }
        let word_end = rest
            .find(|c: char| c.is_whitespace() || c == ':')
            .unwrap_or(rest.len());
        let side = match rest[..word_end].to_ascii_lowercase().as_str() {
            "w" | "white" => Some(Side::White),
            "b" | "black" => Some(Side::Black),
            _ => None,
        };
        match side {
            Some(side) => Ok((
                MoveNo {
                    number,
                    side: Some(side),
                },
                rest[word_end..].trim(),
            )),
            None => Ok((MoveNo { number, side: None }, rest)),
        }
    }

    /// The ply in `game`, whose live moves' notations are `record` (by ply). Without a side,
    /// the number must name the last move of the record when it is white's (the only move of
    /// that number so far); else the error says which plies it could be.
    pub fn ply(self, game: i64, record: &[String]) -> Result<u32, MoveNoError> {
        if let Some(side) = self.side {
            return Ok(MoveNo::ply_of(self.number, side));
        }
        let white_ply = MoveNo::ply_of(self.number, Side::White);
        let black_ply = MoveNo::ply_of(self.number, Side::Black);
        let at = |ply: u32| record.get(ply as usize - 1).cloned();
        match (at(white_ply), at(black_ply)) {
            (Some(_), None) => Ok(white_ply),
            (Some(white), Some(black)) => Err(MoveNoError::Ambiguous {
                game,
                number: self.number,
                white,
                black,
                white_ply,
                black_ply,
            }),
            _ => Err(MoveNoError::NotYet {
                game,
                number: self.number,
                plies: record.len(),
                last: record
                    .last()
                    .map(|m| format!(", the last {}", numbered(record.len() as u32, m)))
                    .unwrap_or_default(),
            }),
        }
    }
}

/// `34. e4` or `34... e5`: a move with its number, as a scoresheet writes it.
pub fn numbered(ply: u32, notation: &str) -> String {
    let n = MoveNo::of_ply(ply);
    match n.side {
        Some(Side::Black) => format!("{}... {notation}", n.number),
        _ => format!("{}. {notation}", n.number),
    }
}

/// `move 34 black`: the move a ply is, in words.
pub fn in_words(ply: u32) -> String {
    let n = MoveNo::of_ply(ply);
    let side = match n.side {
        Some(Side::Black) => "black",
        _ => "white",
    };
    format!("move {} {side}", n.number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(number: u32, side: Option<Side>) -> MoveNo {
        MoveNo { number, side }
    }

    #[test]
    fn numbers_and_sides_read_as_arbiters_write_them() {
        let w = Some(Side::White);
        let b = Some(Side::Black);
        for (text, want) in [
            ("34w", n(34, w)),
            ("34W", n(34, w)),
            ("34 white", n(34, w)),
            ("34.", n(34, w)),
            ("34b", n(34, b)),
            ("34black", n(34, b)),
            ("34...", n(34, b)),
            ("34…", n(34, b)),
            (" 34 ", n(34, None)),
        ] {
            assert_eq!(MoveNo::parse(text), Ok(want), "{text}");
        }
        assert_eq!(MoveNo::ply_of(34, Side::White), 67);
        assert_eq!(MoveNo::ply_of(34, Side::Black), 68);
        assert_eq!(MoveNo::of_ply(68), n(34, b));
        assert_eq!(MoveNo::of_ply(1), n(1, w));
        for bad in ["", "w34", "34x", "34 b Nf6", "-3", "3.5b", "34.."] {
            assert!(MoveNo::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(MoveNo::parse("0b"), Err(MoveNoError::Zero));
    }

    #[test]
    fn a_number_then_a_move() {
        let b = Some(Side::Black);
        let w = Some(Side::White);
        for (text, want, mv) in [
            ("34b Nf6", n(34, b), "Nf6"),
            ("34...Nf6", n(34, b), "Nf6"),
            ("34... Nf6", n(34, b), "Nf6"),
            ("34.e4", n(34, w), "e4"),
            ("34w: e2e4", n(34, w), "e2e4"),
            ("34b bxc3", n(34, b), "bxc3"),
            ("34 bxc3", n(34, None), "bxc3"),
            ("12. 76", n(12, w), "76"),
        ] {
            assert_eq!(
                MoveNo::parse_with_move(text),
                Ok((want, mv.to_owned())),
                "{text}"
            );
        }
        assert!(matches!(
            MoveNo::parse_with_move("34b"),
            Err(MoveNoError::NoMove { .. })
        ));
        assert!(MoveNo::parse_with_move("Nf6").is_err());
    }

    #[test]
    fn a_number_without_a_side_names_the_last_white_move_or_asks() {
        let record: Vec<String> = ["e4", "e5", "Nf3"].map(str::to_owned).into();
        assert_eq!(n(2, None).ply(7, &record), Ok(3));
        assert_eq!(n(2, Some(Side::Black)).ply(7, &record), Ok(4));
        let e = n(1, None).ply(7, &record).unwrap_err();
        assert_eq!(
            e.to_string(),
            "game 7: move 1 is two plies, white's e4 and black's e5: say 1w (ply 1) or 1b (ply 2)"
        );
        let e = n(3, None).ply(7, &record).unwrap_err();
        assert_eq!(
            e.to_string(),
            "game 7 has no move 3 yet: its record has 3 plies, the last 2. Nf3"
        );
        assert_eq!(numbered(68, "Nf6"), "34... Nf6");
        assert_eq!(in_words(67), "move 34 white");
    }
}
