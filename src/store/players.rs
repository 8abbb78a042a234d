//! Who played a stored game: one rule for every output (PGN, JSON, scoresheets, the live page).
//!
//! Flow: a [`GameRecord`] carries the names the game itself has (an imported game's tags) and
//! the pairing of its round and board; [`GameRecord::player`] takes the game's own name, else the
//! pairing's, with the pairing's FIDE id, rating, title and federation when they name the same
//! player. A name that says nothing (blank, `?`, `unknown`, one character) is no name: what is
//! not known stays blank for a pen. Pure.

use serde::Serialize;

use super::{GameRecord, Pairing};
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

impl PlayerRecord {
    /// The player as a page or a scoresheet writes them: title, name and rating
    /// (`GM Abenov, Arman (2610)`).
    pub fn label(&self) -> String {
        let mut out = String::new();
        if let Some(t) = self.title.as_deref().filter(|t| !t.trim().is_empty()) {
            out.push_str(t.trim());
            out.push(' ');
        }
        out.push_str(&self.name);
        if let Some(elo) = self.elo {
            out.push_str(&format!(" ({elo})"));
        }
        out
    }

    /// [`PlayerRecord::label`] for a page: the title and the name escaped and isolated
    /// (`<bdi>`), so that the title comes first, then the name, then the rating, whichever way
    /// the name and the page run (a title left bare would take the rating into its own
    /// left-to-right run on a right-to-left page: `GM name (2760)` read backwards).
    pub fn label_html(&self) -> String {
        let mut out = String::new();
        if let Some(t) = self.title.as_deref().filter(|t| !t.trim().is_empty()) {
            out.push_str("<bdi>");
            out.push_str(&crate::text::escape_html(t.trim()));
            out.push_str("</bdi> ");
        }
        out.push_str("<bdi>");
        out.push_str(&crate::text::escape_html(&self.name));
        out.push_str("</bdi>");
        if let Some(elo) = self.elo {
            out.push_str(&format!(" ({elo})"));
        }
        out
    }
}

impl Pairing {
    /// `side`'s player of the pairing; `None` when its name says nothing.
    pub fn player(&self, side: Side) -> Option<PlayerRecord> {
        let p = match side {
            Side::White => PlayerRecord {
                name: self.white.trim().to_owned(),
                fide: self.white_fide,
                elo: self.white_elo,
                title: self.white_title.clone(),
                fed: self.white_fed.clone(),
            },
            Side::Black => PlayerRecord {
                name: self.black.trim().to_owned(),
                fide: self.black_fide,
                elo: self.black_elo,
                title: self.black_title.clone(),
                fed: self.black_fed.clone(),
            },
        };
        is_usable_name(&p.name).then_some(p)
    }
}

impl GameRecord {
    /// `side`'s player: the game's own name, else the pairing's; `None` when neither is known.
    pub fn player(&self, side: Side) -> Option<PlayerRecord> {
        let own = match side {
            Side::White => &self.white,
            Side::Black => &self.black,
        };
        let paired = self.pairing.as_ref().and_then(|p| p.player(side));
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
