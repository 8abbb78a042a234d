//! Who played a stored game: one rule for every output (PGN, JSON, scoresheets, the live page).
//!
//! Flow: a [`GameRecord`] carries the names the game itself has (an imported game's tags) and
//! the pairing of its round and board; [`GameRecord::player`] takes the game's own name, else the
//! pairing's, with the pairing's FIDE id, rating, title and federation when they name the same
//! player. A name that says nothing (blank, `?`, `unknown`, one character) is no name: what is
//! not known stays blank for a pen. Pure.

use serde::Serialize;

use super::GameRecord;
use crate::tracker::Side;

/// A side's player as the outputs show it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlayerRecord {
    pub name: String,
    pub fide: Option<u32>,
    pub elo: Option<u32>,
    pub title: Option<String>,
    pub fed: Option<String>,
}

/// A name worth showing: not blank, not `?` or `unknown`, longer than one character.
pub fn is_usable_name(name: &str) -> bool {
    let name = name.trim();
    name.chars().count() > 1 && !name.eq_ignore_ascii_case("unknown")
}

impl GameRecord {
    /// `side`'s player: the game's own name, else the pairing's; `None` when neither is known.
    pub fn player(&self, side: Side) -> Option<PlayerRecord> {
        let own = match side {
            Side::White => &self.white,
            Side::Black => &self.black,
        };
        let paired = self.pairing.as_ref().map(|p| match side {
            Side::White => PlayerRecord {
                name: p.white.trim().to_owned(),
                fide: p.white_fide,
                elo: p.white_elo,
                title: p.white_title.clone(),
                fed: p.white_fed.clone(),
            },
            Side::Black => PlayerRecord {
                name: p.black.trim().to_owned(),
                fide: p.black_fide,
                elo: p.black_elo,
                title: p.black_title.clone(),
                fed: p.black_fed.clone(),
            },
        });
        let paired = paired.filter(|p| is_usable_name(&p.name));
        match (own.as_deref().filter(|n| is_usable_name(n)), paired) {
            (Some(name), Some(p)) if name.trim() == p.name => Some(p),
            (Some(name), _) => Some(PlayerRecord {
                name: name.trim().to_owned(),
                ..PlayerRecord::default()
            }),
            (None, paired) => paired,
        }
    }
}
