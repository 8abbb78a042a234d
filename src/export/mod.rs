//! Exports from the store: PGN and JSON.
//!
//! Flow: [`export`] reads one game or all games from the [`Store`] and renders them with
//! [`pgn::pgn_all`] or [`json::json`]; the renderers are pure functions of [`GameRecord`]s.

pub mod json;
pub mod pgn;

pub use self::{
    json::json,
    pgn::{pgn, pgn_all},
};
use crate::store::{GameId, GameRecord, Store, StoreError};

/// Output format of [`export`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pgn,
    Json,
}

/// Errors of an export.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no game with id {}", .0.0)]
    UnknownGame(GameId),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
}

/// One game (`Some(id)`) or every game, rendered in `format`; the text ends with a newline.
pub fn export(store: &Store, format: Format, game: Option<GameId>) -> Result<String, ExportError> {
    let games: Vec<GameRecord> = match game {
        Some(id) => vec![store.game(id)?.ok_or(ExportError::UnknownGame(id))?],
        None => store.games()?,
    };
    Ok(match format {
        Format::Pgn => pgn_all(&games),
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&json(&games))?;
            text.push('\n');
            text
        }
    })
}
