//! Exports from the store: PGN, JSON and LiveChess-style folders ([`folder`]).
//!
//! Flow: [`export`] reads one game or all games from the [`Store`] and renders them with
//! [`pgn::pgn_all`] or [`json::json`]; the renderers are pure functions of [`GameRecord`]s (and,
//! with [`ExportOptions::history`], of each game's history of retracted moves and events).

pub mod folder;
pub mod json;
pub mod pgn;

pub use self::{
    json::{json, json_with_history},
    pgn::{pgn, pgn_all, pgn_all_with_history, pgn_with_history},
};
use crate::store::{DecisionError, GameId, GameRecord, Store, StoreError};

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
    #[error(transparent)]
    History(#[from] DecisionError),
}

/// What an export shows besides the record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Retracted moves (PGN comments) and every event (a `history` array in JSON).
    pub history: bool,
}

/// One game (`Some(id)`) or every game, rendered in `format`; the text ends with a newline.
pub fn export(store: &Store, format: Format, game: Option<GameId>) -> Result<String, ExportError> {
    export_with(store, format, game, ExportOptions::default())
}

/// Like [`export`], with the [`ExportOptions`].
pub fn export_with(
    store: &Store,
    format: Format,
    game: Option<GameId>,
    options: ExportOptions,
) -> Result<String, ExportError> {
    let games: Vec<GameRecord> = match game {
        Some(id) => vec![store.game(id)?.ok_or(ExportError::UnknownGame(id))?],
        None => store.games()?,
    };
    let histories = if options.history {
        let h = games
            .iter()
            .map(|g| store.history(g.id))
            .collect::<Result<Vec<_>, _>>()?;
        Some(h)
    } else {
        None
    };
    Ok(match (format, &histories) {
        (Format::Pgn, None) => pgn_all(&games),
        (Format::Pgn, Some(h)) => pgn_all_with_history(&games, h),
        (Format::Json, h) => {
            let value = match h {
                None => json(&games),
                Some(h) => json_with_history(&games, h),
            };
            let mut text = serde_json::to_string_pretty(&value)?;
            text.push('\n');
            text
        }
    })
}
