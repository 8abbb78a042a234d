//! Exports from the store: PGN, JSON, printable scoresheets (HTML and PDF), and a round as a
//! broadcast reads it ([`round`]; the LiveChess-style folders that write it are `broadcast::folder`).
//!
//! Flow: [`export`] reads one game or all games from the [`Store`] and renders them with
//! [`pgn::write_pgn`] or [`json::json`]; the renderers are pure functions of [`GameRecord`]s (and,
//! with [`ExportOptions::history`], of each game's history of retracted moves and events).
//! A scoresheet is of one game: [`export_bytes`] lays it out with
//! [`scoresheet::Scoresheet::from_game`] and writes it as HTML ([`scoresheet::html`]) or PDF
//! ([`pdf::pdf`], with the fonts of [`fonts`] embedded); a round's PDF is every board's sheet in
//! one file, in board order ([`round::broadcast_games`], [`pdf::pdf_sheets`]). A sheet writes
//! its moves in the [`notation::Notation`] asked for; PGN and JSON are English SAN always.

pub use crate::fonts;
pub mod json;
pub mod livechess;
pub mod notation;
pub mod pdf;
pub mod pgn;
pub mod publish;
pub mod round;
pub mod scoresheet;
pub mod trf;

pub use self::{
    json::{json, json_with_history},
    notation::Notation,
    pgn::{ClockFormat, PgnGame, write_pgn},
    publish::PgnStyle,
    scoresheet::{Scoresheet, SheetOptions, scoresheet_html},
};
use crate::store::{DecisionError, GameId, GameRecord, Store, StoreError};

/// Output format of [`export`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pgn,
    Json,
    /// A print-ready HTML scoresheet of one game.
    Scoresheet,
    /// The same scoresheet as PDF (bytes: see [`export_bytes`]).
    Pdf,
    /// The event's results as a FIDE TRF-16 ([`trf`]): every round's opponents, colours and
    /// results, for the pairing program.
    Trf,
}

impl Format {
    /// The formats that need one game (`--game`); a PDF takes a round instead (`--round`).
    pub fn needs_one_game(self) -> bool {
        matches!(self, Format::Scoresheet | Format::Pdf)
    }
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
    #[error("a {0} is of one game: give the game's id (--game ID)")]
    GameRequired(&'static str),
    #[error(
        "a scoresheet (HTML or PDF) is of one game or one round: give --game ID, or --round N for every board's sheet"
    )]
    GameOrRoundRequired,
    #[error("a PDF is not text: write it as bytes (export_bytes)")]
    NotText,
    #[error("round {0} has no games")]
    EmptyRound(u32),
    #[error(transparent)]
    Pdf(#[from] pdf::PdfError),
    #[error("the pairings cannot be scored: {0}")]
    Standings(#[from] crate::standings::FieldError),
}

/// What an export shows besides the record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// Retracted moves (PGN comments) and every event (a `history` array in JSON).
    pub history: bool,
    /// How PGN writes `[%clk]`.
    pub clk: ClockFormat,
    /// Only the games of this round (every game that began in it, by board).
    pub round: Option<u32>,
}

/// The event's standings from the whole record (the arbiter's and the exports' view), ranked
/// by the event's tie-breaks, with the field they were made of.
pub fn event_standings(
    store: &Store,
) -> Result<(crate::standings::Field, crate::standings::Standings), ExportError> {
    let field = store.standings_field(&store.games()?)?;
    let standings = crate::standings::standings(&field, &store.event_tiebreaks()?)?;
    Ok((field, standings))
}

/// The event as a TRF-16 ([`trf::write_trf`]), from the whole record.
pub fn event_trf(store: &Store) -> Result<String, ExportError> {
    let (field, standings) = event_standings(store)?;
    let event = store.event()?;
    let header = match event {
        Some(e) => trf::TrfHeader {
            event: e.round.event,
            site: Some(e.round.site).filter(|s| s != "?"),
            start_date: e.settings.start_date,
            end_date: e.settings.end_date,
            time_control: e.settings.time_control,
        },
        None => trf::TrfHeader::default(),
    };
    Ok(trf::write_trf(&header, &field, &standings))
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
    match format {
        Format::Pdf => return Err(ExportError::NotText),
        Format::Trf => return event_trf(store),
        Format::Scoresheet => {
            let g = one_game(store, format, game)?;
            return Ok(scoresheet_html(&g, &SheetOptions::default()));
        }
        Format::Pgn | Format::Json => {}
    }
    let games: Vec<GameRecord> = match (game, options.round) {
        (Some(id), _) => vec![store.game(id)?.ok_or(ExportError::UnknownGame(id))?],
        (None, Some(round)) => store.round_games(round)?,
        (None, None) => store.games()?,
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
        (Format::Pgn, None) => write_pgn(&games, &PgnStyle::internal(options.clk)),
        (Format::Pgn, Some(h)) => write_pgn(
            games.iter().zip(h).map(|(g, h)| (g, h.as_slice())),
            &PgnStyle::internal(options.clk),
        ),
        (Format::Scoresheet | Format::Pdf | Format::Trf, _) => return Err(ExportError::NotText),
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

/// Any format as bytes (UTF-8 text, or the PDF); `sheet` lays out the scoresheet formats.
pub fn export_bytes(
    store: &Store,
    format: Format,
    game: Option<GameId>,
    options: ExportOptions,
    sheet: &SheetOptions,
) -> Result<Vec<u8>, ExportError> {
    match format {
        Format::Pgn | Format::Json | Format::Trf => {
            Ok(export_with(store, format, game, options)?.into_bytes())
        }
        Format::Scoresheet => match (game, options.round) {
            (None, Some(round)) => {
                let sheets = round_sheets(store, round, sheet)?;
                let title = sheet
                    .lang
                    .fill("sheet.round_document", &[("round", &round.to_string())]);
                Ok(scoresheet::html_sheets(&sheets, sheet.lang, &title).into_bytes())
            }
            _ => {
                let g = one_game(store, format, game)?;
                Ok(scoresheet_html(&g, sheet).into_bytes())
            }
        },
        Format::Pdf => match (game, options.round) {
            (None, Some(round)) => Ok(pdf::pdf_sheets(
                &round_sheets(store, round, sheet)?,
                &format!("Scoresheets, round {round}"),
            )?),
            _ => {
                let g = one_game(store, format, game)?;
                Ok(pdf::pdf(&Scoresheet::from_game(&g, sheet))?)
            }
        },
    }
}

/// The sheets of round `round`: each board's game (as the round's broadcast picks them), in
/// board order; one file prints them all (HTML or PDF).
fn round_sheets(
    store: &Store,
    round: u32,
    sheet: &SheetOptions,
) -> Result<Vec<Scoresheet>, ExportError> {
    let games = store.round_games(round)?;
    let sheets: Vec<Scoresheet> = round::broadcast_games(&games, round)
        .into_iter()
        .map(|g| Scoresheet::from_game(g, sheet))
        .collect();
    if sheets.is_empty() {
        return Err(ExportError::EmptyRound(round));
    }
    Ok(sheets)
}

/// The one game a scoresheet format needs.
fn one_game(
    store: &Store,
    format: Format,
    game: Option<GameId>,
) -> Result<GameRecord, ExportError> {
    let name = match format {
        Format::Pdf | Format::Scoresheet if game.is_none() => {
            return Err(ExportError::GameOrRoundRequired);
        }
        Format::Pdf => "PDF scoresheet",
        _ => "scoresheet",
    };
    let id = game.ok_or(ExportError::GameRequired(name))?;
    store.game(id)?.ok_or(ExportError::UnknownGame(id))
}

pub use crate::text::escape_html;
