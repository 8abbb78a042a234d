//! Alerts: what needs the arbiter, one per irregularity with its life cycle, a board that is
//! not heard, and the event's own ([`EventAlert`]: a hall's faults, made by the event node,
//! typed as an [`EventFault`] that each language words).
//! Flow: [`game_alerts`] walks a stored game's events in order: an irregularity opens an alert,
//! or counts as a repeat of the open alert of its kind; a resolution on the board resolves it,
//! unless the Laws leave something to the arbiter (a penalty due, a decision to make: then only
//! a ruling closes it); a ruling closes it; an irregularity that the board never holds open (a
//! press without a move, a clock mis-set) is over once play went on; the game's end resolves
//! what needs no ruling. [`board_alert`] makes an alert of a board that is lost (unplugged, or
//! silent: the watchdog), from the live state. Alerts are the arbiter's: the admin API shows
//! them, spectators never. Pure.

use serde::Serialize;
use serde_json::{Value, json};

mod event;

pub use event::{EventAlert, EventFault, StallReason};

use crate::{
    Millis,
    lang::Lang,
    phrase::{Phrase, Words},
    relay::live::{BoardSnapshot, Connection, Lost},
    store::{Action, GameRecord, Recorded, Ruling, worded},
    tracker::{IrregularityKind, Side},
};

/// Where an alert stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertState {
    /// Needs the arbiter (or the board to be put right).
    Open,
    /// Over on the board (the position restored, play went on, the game ended, the board back).
    Resolved,
    /// The arbiter ruled on it.
    Ruled,
}

/// One alert.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Alert {
    /// Unique: `game-G-irregularity-N` (N its first irregularity), `board-B-lost`.
    pub id: String,
    /// The board's number, else its name (as the JSON export names boards).
    pub board: Value,
    pub board_name: String,
    pub game: Option<i64>,
    /// An irregularity's kind, or `board_unplugged`, `board_silent`.
    pub kind: String,
    /// The article of the configured Laws.
    pub article: Option<String>,
    /// The latest occurrence's detail (in English, as recorded).
    pub detail: String,
    /// Why a board is not heard, typed (a board's alert).
    #[serde(skip)]
    pub lost: Option<Lost>,
    /// The detail as a phrase, for the other languages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail_phrase: Option<Phrase>,
    /// What the Laws provide that the arbiter must apply or decide (a penalty due).
    pub penalty_due: Option<String>,
    /// The penalty as a phrase, for the other languages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub penalty_phrase: Option<Phrase>,
    /// When it was first shown (wall-clock ms while recording live).
    pub since_ms: Millis,
    /// How often it was shown (a repeat counts, it does not make another alert).
    pub count: u32,
    pub state: AlertState,
    /// The irregularity a ruling names (its first), and every one it counts.
    pub irregularity: Option<u32>,
    pub irregularities: Vec<u32>,
    /// The ply it came before (its latest occurrence).
    pub ply: Option<u32>,
    pub player: Option<Side>,
    /// The arbiter's ruling, once ruled.
    pub ruling: Option<Ruling>,
    /// How it was resolved on the board.
    pub resolved: Option<String>,
}

impl Alert {
    /// The detail in `lang` (`words`: its words for the record's phrases): a phrase or a
    /// board's loss worded there, else as recorded.
    pub fn detail_in(&self, lang: Lang, words: &impl Words) -> String {
        match (&self.detail_phrase, &self.lost) {
            (Some(p), _) if p.is_known() => p.words(words),
            (None, Some(lost)) => lost.words(lang),
            (_, _) => self.detail.clone(),
        }
    }

    /// The penalty due in `words`, if any (as [`Alert::detail_in`]).
    pub fn penalty_in(&self, words: &impl Words) -> Option<String> {
        worded(&self.penalty_phrase, &self.penalty_due, words)
    }
}

/// The board as alerts name it: its number, else its name.
fn board_key(number: Option<u32>, name: &str) -> Value {
    number.map_or_else(|| json!(name), |n| json!(n))
}

/// Every alert of `game`, in the order first shown.
pub fn game_alerts(game: &GameRecord) -> Vec<Alert> {
    let mut alerts: Vec<Alert> = Vec::new();
    // Per alert: its irregularities still open on the board.
    let mut open_ids: Vec<Vec<u32>> = Vec::new();
    for e in &game.events {
        match &e.what {
            Recorded::Irregularity(shown) => {
                let (Some(id), Some(kind)) = (shown.id, IrregularityKind::from_str_opt(&e.kind))
                else {
                    continue;
                };
                let detail = shown.detail.clone().unwrap_or_default();
                let open = alerts
                    .iter()
                    .position(|a| a.state == AlertState::Open && a.kind == kind.as_str());
                let i = match open {
                    Some(i) => {
                        let a = &mut alerts[i];
                        a.count += 1;
                        a.irregularities.push(id);
                        a.detail = detail;
                        a.detail_phrase = shown.detail_phrase.clone();
                        a.ply = e.ply;
                        a.player = shown.player.or(a.player);
                        a.article = shown.article.clone().or(a.article.take());
                        if shown.ruling.is_some() {
                            a.penalty_due = shown.ruling.clone();
                            a.penalty_phrase = shown.ruling_phrase.clone();
                        }
                        i
                    }
                    None => {
                        alerts.push(Alert {
                            id: format!("game-{}-irregularity-{id}", game.id.0),
                            board: board_key(game.board_no, &game.board_name),
                            board_name: game.board_name.clone(),
                            game: Some(game.id.0),
                            kind: kind.as_str().to_owned(),
                            article: shown.article.clone(),
                            detail,
                            detail_phrase: shown.detail_phrase.clone(),
                            lost: None,
                            penalty_due: shown.ruling.clone(),
                            penalty_phrase: shown.ruling_phrase.clone(),
                            since_ms: shown.since_ms.unwrap_or(e.at_ms).min(e.at_ms),
                            count: 1,
                            state: AlertState::Open,
                            irregularity: Some(id),
                            irregularities: vec![id],
                            ply: e.ply,
                            player: shown.player,
                            ruling: None,
                            resolved: None,
                        });
                        open_ids.push(Vec::new());
                        alerts.len() - 1
                    }
                };
                if !kind.is_instant() {
                    open_ids[i].push(id);
                }
            }
            Recorded::Resolved {
                id: Some(id), how, ..
            } => {
                let Some(i) = alerts.iter().position(|a| a.irregularities.contains(id)) else {
                    continue;
                };
                open_ids[i].retain(|x| x != id);
                let a = &mut alerts[i];
                if a.state == AlertState::Open && open_ids[i].is_empty() {
                    a.resolved = how.clone();
                    if a.penalty_due.is_none() {
                        a.state = AlertState::Resolved;
                    }
                }
            }
            // An undone ruling never counts: its alert stands as the board left it.
            Recorded::Decision(d) => {
                if let Action::Rule {
                    irregularity,
                    ruling,
                } = &d.action
                    && game.undone_by(d.id).is_none()
                    && let Some(a) = alerts
                        .iter_mut()
                        .find(|a| a.irregularities.contains(irregularity))
                {
                    a.state = AlertState::Ruled;
                    a.ruling = Some(ruling.clone());
                }
            }
            _ => {}
        }
    }
    for a in &mut alerts {
        if a.state != AlertState::Open {
            continue;
        }
        let Some(kind) = IrregularityKind::from_str_opt(&a.kind) else {
            continue;
        };
        if let Some(over) = game.over_unresolved(kind, a.ply, a.penalty_due.is_some()) {
            a.state = AlertState::Resolved;
            a.resolved.get_or_insert_with(|| over.as_str().into());
        }
    }
    alerts
}

/// The alert of a board that is not heard (unplugged, or silent: the watchdog gave up on it),
/// while it is away; `game`: the game it shows.
pub fn board_alert(board: &BoardSnapshot, game: Option<i64>) -> Option<Alert> {
    if board.connection != Connection::Lost {
        return None;
    }
    let reason = board.lost_reason.clone().unwrap_or_default();
    let kind = board
        .lost
        .as_ref()
        .map_or("board_unplugged", Lost::alert_kind);
    Some(Alert {
        id: format!(
            "board-{}-lost",
            board
                .number
                .map_or_else(|| board.name.clone(), |n| n.to_string())
        ),
        board: board_key(board.number, &board.name),
        board_name: board.name.clone(),
        game,
        kind: kind.to_owned(),
        article: None,
        lost: board.lost.clone(),
        detail: reason,
        detail_phrase: None,
        penalty_due: None,
        penalty_phrase: None,
        since_ms: board.lost_since_ms.unwrap_or(0),
        count: board.losses.max(1),
        state: AlertState::Open,
        irregularity: None,
        irregularities: Vec::new(),
        ply: None,
        player: None,
        ruling: None,
        resolved: None,
    })
}
