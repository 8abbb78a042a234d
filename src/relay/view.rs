//! What a browser is sent of a board: its live snapshot (data) with the board drawn (SVG), and
//! the game's players. Flow: the hub's [`BoardSnapshot`]s come in; [`snapshot_json`] is the
//! `snapshot` of a Server-Sent Event, [`BoardView`] a board of `/api/boards` and of the page
//! (the arbiter's, with irregularities and alerts, or the spectators': [`BoardView::public`]).
//! The drawing is made here, from the snapshot's position and last move ([`draw`]), so there is
//! one renderer and the live state holds no markup. Pure.

use serde::Serialize;
use serde_json::{Value, json};

use super::{alerts::Alert, live::BoardSnapshot, svg};
use crate::game::Kind;

/// The snapshot's position as an SVG board, the last move marked.
pub fn draw(b: &BoardSnapshot) -> String {
    match b.kind {
        Kind::Chess => svg::board_svg(&b.fen, b.last_move.as_ref().and_then(|m| m.uci.as_deref())),
        Kind::Togyz => svg::togyz_svg(&b.fen, b.last_move.as_ref().and_then(|m| m.pits)),
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
    pub white: String,
    pub black: String,
    /// The board's alerts and its game's ([`super::alerts`]): for the arbiter only, empty
    /// for spectators ([`BoardView::public`]).
    pub alerts: Vec<Alert>,
}

impl BoardView {
    /// `live` drawn, with the game's id and players.
    pub fn new(live: BoardSnapshot, game_id: Option<i64>, white: String, black: String) -> Self {
        BoardView {
            svg: draw(&live),
            live,
            game_id,
            white,
            black,
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
