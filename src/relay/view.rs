//! What a browser is sent of a board: its live snapshot (data) with the board drawn (SVG), and
//! the game's players. Flow: the hub's [`BoardSnapshot`]s come in; [`snapshot_json`] is the
//! `snapshot` of a Server-Sent Event, [`BoardView`] a board of `/api/boards` and of the page
//! (the arbiter's, with irregularities and alerts, or the spectators': [`BoardView::public`]).
//! The drawing is made here, from the snapshot's position and last move ([`draw`]), so there is
//! one renderer and the live state holds no markup. Pure.

use serde::Serialize;
use serde_json::{Value, json};

use super::{alerts::Alert, live::BoardSnapshot, svg};
use crate::{game::Kind, lang::Lang, store::PlayerRecord};

/// The snapshot's position as an SVG board, the last move marked, its words in English (the
/// page names them again in its language: [`draw_in`]).
pub fn draw(b: &BoardSnapshot) -> String {
    draw_in(b, Lang::En)
}

/// [`draw`] with the board's words (a togyz korgool board's stores) in `lang`.
pub fn draw_in(b: &BoardSnapshot, lang: Lang) -> String {
    match b.kind {
        Kind::Chess => svg::board_svg(&b.fen, b.last_move.as_ref().and_then(|m| m.uci.as_deref())),
        Kind::Togyz => svg::togyz_svg(&b.fen, b.last_move.as_ref().and_then(|m| m.pits), lang),
    }
}

/// The snapshot as an event carries it: its fields and `svg`, the drawing.
pub fn snapshot_json(b: &BoardSnapshot) -> Value {
    let mut value = json!(b);
    value["svg"] = Value::String(draw(b));
    value
}

/// A board as the page and `/api/boards` show it: the live snapshot, its drawing and the game's
/// players.
#[derive(Clone, Debug, Serialize)]
pub struct BoardView {
    #[serde(flatten)]
    pub live: BoardSnapshot,
    /// The position drawn ([`draw`]).
    pub svg: String,
    /// The game on the board in the store, if it has one.
    pub game_id: Option<i64>,
    /// The round of that game, else the current round (whose pairing names the players).
    pub round: Option<u32>,
    /// The players' names ("White"/"Black" when the pairing is not known).
    pub white: String,
    pub black: String,
    /// What else the pairing tells of each player (FIDE id, rating, title, federation).
    pub white_player: Option<PlayerRecord>,
    pub black_player: Option<PlayerRecord>,
    /// What the page writes for each side: title, name and rating (`GM Abenov, Arman (2610)`).
    pub white_label: String,
    pub black_label: String,
    /// The board's alerts and its game's ([`super::alerts`]): for the arbiter only, empty
    /// for spectators ([`BoardView::public`]).
    pub alerts: Vec<Alert>,
}

/// Who sits at a board: the round and both players, as far as they are known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Seats {
    pub round: Option<u32>,
    pub white: Option<PlayerRecord>,
    pub black: Option<PlayerRecord>,
}

impl BoardView {
    /// `live` drawn, with the game's id and who plays it.
    pub fn new(live: BoardSnapshot, game_id: Option<i64>, seats: Seats) -> Self {
        let name = |p: &Option<PlayerRecord>, default: &str| {
            p.as_ref()
                .map_or_else(|| default.to_owned(), |p| p.name.clone())
        };
        BoardView {
            svg: draw(&live),
            live,
            game_id,
            round: seats.round,
            white: name(&seats.white, "White"),
            black: name(&seats.black, "Black"),
            white_label: label(seats.white.as_ref(), "White"),
            black_label: label(seats.black.as_ref(), "Black"),
            white_player: seats.white,
            black_player: seats.black,
            alerts: Vec::new(),
        }
    }

    /// What spectators see: no irregularities, no alerts.
    pub fn public(mut self) -> Self {
        self.live = self.live.public();
        self.alerts.clear();
        self
    }
}

/// A player as the page writes them ([`PlayerRecord::label`]), `unknown` when not known.
fn label(player: Option<&PlayerRecord>, unknown: &str) -> String {
    player.map_or_else(|| unknown.to_owned(), PlayerRecord::label)
}
