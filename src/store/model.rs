//! The record as read, typed: what each stored event says, so that the exports, the scoresheets
//! and the daemon read values instead of a kind's name and a JSON object.
//!
//! Flow: [`read`](super::read) turns an event row into an [`EventRecord`] (id, time, kind, ply
//! and the detail as stored, which the history shows as it is) and types it here
//! ([`Recorded::read`]); [`GameRecord::irregularities`] joins each irregularity with its
//! resolution and the arbiter's latest ruling on it, [`GameRecord::decisions`] lists the
//! arbiter's decisions. A detail that does not read as its kind says is [`Recorded::Other`]: the
//! history still shows it, nothing else relies on it.

use serde::Deserialize;
use serde_json::Value;

use super::{
    DECISION_KIND, EventRecord, GameId, GameRecord,
    decisions::{Action, Decision, Ruling},
};
use crate::{
    Millis,
    arbiter::IrregularityKind,
    phrase::{Phrase, Words},
    tracker::Side,
    tracker::event::RecordedMove,
};

/// What a stored event says.
#[derive(Clone, Debug, PartialEq)]
pub enum Recorded {
    /// An irregularity the board or clock showed (numbered by `id` within the game), or a gap's
    /// recovery (no `id`).
    Irregularity(Shown),
    /// The tracker's own correction, kept for the audit trail.
    Audit(Audit),
    /// Irregularity `id` is over.
    Resolved {
        id: Option<u32>,
        how: Option<String>,
        /// How, as a phrase, for the other languages.
        how_phrase: Option<Phrase>,
    },
    /// A flag fell (the result the Laws give, proposed to the arbiter).
    FlagFall(FlagFall),
    /// A draw the player to move may claim.
    Claimable {
        claim: Option<String>,
        /// The claim as a phrase, for the other languages.
        claim_phrase: Option<Phrase>,
        article: Option<String>,
    },
    /// The kings showed a result.
    ResultGesture { proposed: Option<String> },
    /// A decision of the arbiter.
    Decision(Decision),
    /// A game's start or end, a move, a reorientation, or a detail that does not read as its
    /// kind says.
    Other,
}

/// An irregularity as stored (its kind is the event's).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Shown {
    pub id: Option<u32>,
    pub since_ms: Option<Millis>,
    pub player: Option<Side>,
    pub detail: Option<String>,
    /// The article of the configured laws.
    pub article: Option<String>,
    /// What the laws provide (a penalty due, the offence count).
    pub ruling: Option<String>,
    /// `detail` and `ruling` as phrases, for the other languages (none in a record made before
    /// they were kept, or if what is kept does not read as one: the English stands).
    #[serde(default, deserialize_with = "phrase_or_none")]
    pub detail_phrase: Option<Phrase>,
    #[serde(default, deserialize_with = "phrase_or_none")]
    pub ruling_phrase: Option<Phrase>,
}

impl Shown {
    /// The detail in `words`: its phrase worded there, else the English as recorded.
    pub fn detail_in(&self, words: &impl Words) -> Option<String> {
        worded(&self.detail_phrase, &self.detail, words)
    }

    /// The ruling in `words`, as [`Shown::detail_in`].
    pub fn ruling_in(&self, words: &impl Words) -> Option<String> {
        worded(&self.ruling_phrase, &self.ruling, words)
    }
}

/// `phrase` in `words` if there is one this version knows every key of, else `english` as
/// recorded (a phrase written with keys since retired reads as its record's English).
pub fn worded(
    phrase: &Option<Phrase>,
    english: &Option<String>,
    words: &impl Words,
) -> Option<String> {
    match phrase {
        Some(p) if p.is_known() => Some(p.words(words)),
        Some(_) | None => english.clone(),
    }
}

/// A stored phrase, or none when what is stored does not read as one (the record's English
/// stands; the irregularity itself is never lost over it).
fn phrase_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Phrase>, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(Phrase::deserialize(v).ok())
}

/// The tracker's own corrections.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Audit {
    /// The move at `new.ply` was replaced (a slide, a rook-first castling).
    Revision {
        old: Box<RecordedMove>,
        new: Box<RecordedMove>,
    },
    /// Every ply after `to_ply` was taken back.
    Takeback { from_ply: u32, to_ply: u32 },
}

/// A flag fall as stored.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct FlagFall {
    pub side: Option<Side>,
    pub proposed: Option<String>,
    pub article: Option<String>,
    /// What the Laws provide when both flags are down.
    pub note: Option<String>,
    /// The note as a phrase, for the other languages.
    #[serde(default, deserialize_with = "phrase_or_none")]
    pub note_phrase: Option<Phrase>,
}

#[derive(Deserialize)]
struct ResolvedDetail {
    id: Option<u32>,
    how: Option<String>,
    #[serde(default, deserialize_with = "phrase_or_none")]
    how_phrase: Option<Phrase>,
}

#[derive(Deserialize)]
struct ClaimDetail {
    claim: Option<String>,
    #[serde(default, deserialize_with = "phrase_or_none")]
    claim_phrase: Option<Phrase>,
    article: Option<String>,
}

#[derive(Deserialize)]
struct GestureDetail {
    proposed: Option<String>,
}

impl Recorded {
    /// The event of `game` stored with `kind` and `detail` (row `id`, at `at_ms`).
    pub(super) fn read(game: GameId, id: i64, at_ms: Millis, kind: &str, detail: &Value) -> Self {
        fn typed<T: for<'de> Deserialize<'de>>(detail: &Value) -> Option<T> {
            T::deserialize(detail).ok()
        }
        let recorded = match IrregularityKind::from_str_opt(kind) {
            Some(IrregularityKind::Takeback | IrregularityKind::RevisedMove) => {
                typed(detail).map(Recorded::Audit)
            }
            Some(_) => typed(detail).map(Recorded::Irregularity),
            None => match kind {
                "resolved" => typed(detail).map(|d: ResolvedDetail| Recorded::Resolved {
                    id: d.id,
                    how: d.how,
                    how_phrase: d.how_phrase,
                }),
                "flag_fall" => typed(detail).map(Recorded::FlagFall),
                "claimable" => typed(detail).map(|d: ClaimDetail| Recorded::Claimable {
                    claim: d.claim,
                    claim_phrase: d.claim_phrase,
                    article: d.article,
                }),
                "result_gesture" => typed(detail).map(|d: GestureDetail| Recorded::ResultGesture {
                    proposed: d.proposed,
                }),
                DECISION_KIND => Decision::from_parts(game, id, at_ms, detail)
                    .ok()
                    .map(Recorded::Decision),
                _ => None,
            },
        };
        recorded.unwrap_or(Recorded::Other)
    }
}

/// How an irregularity ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolution {
    pub at_ms: Millis,
    pub how: Option<String>,
}

/// The arbiter's latest ruling on an irregularity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArbiterRuling {
    /// The decision's event id.
    pub decision: i64,
    pub at_ms: Millis,
    pub author: String,
    pub note: Option<String>,
    pub ruling: Ruling,
}

/// An irregularity of a game, in the order recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct IrregularityRecord {
    pub at_ms: Millis,
    /// The ply it happened before.
    pub ply: Option<u32>,
    pub kind: IrregularityKind,
    pub entry: Entry,
}

/// What an irregularity record holds.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)] // a game's few read once for an export: no box needed
pub enum Entry {
    /// The tracker's own correction.
    Audit(Audit),
    /// Shown by the board or clock (or a gap's recovery), with how it ended and the arbiter's
    /// latest ruling.
    Shown {
        shown: Shown,
        resolution: Option<Resolution>,
        ruled: Option<ArbiterRuling>,
    },
}

impl IrregularityRecord {
    /// The stored facts when the board or clock showed it (or a gap was recovered).
    pub fn shown(&self) -> Option<&Shown> {
        match &self.entry {
            Entry::Shown { shown, .. } => Some(shown),
            Entry::Audit(_) => None,
        }
    }
}

/// How an irregularity the board never showed put right is over all the same: what the
/// arbiter's alerts and the PGN export both say of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverUnresolved {
    /// An instant kind ([`IrregularityKind::is_instant`]) whose ply was played.
    PlayWentOn,
    /// The game ended.
    GameOver,
}

impl OverUnresolved {
    /// In the record's words (English, as the alerts and exports have said it).
    pub fn as_str(self) -> &'static str {
        match self {
            OverUnresolved::PlayWentOn => "play went on",
            OverUnresolved::GameOver => "the game is over",
        }
    }
}

impl GameRecord {
    /// How an irregularity of `kind` before `ply`, with no resolution on the board, is over
    /// all the same: the game ended, or play went on past an instant kind. `None` while it is
    /// open, and always when `penalty_due` (then only the arbiter's ruling closes it).
    pub fn over_unresolved(
        &self,
        kind: IrregularityKind,
        ply: Option<u32>,
        penalty_due: bool,
    ) -> Option<OverUnresolved> {
        if penalty_due {
            return None;
        }
        let plies = self.moves.len() as u32;
        if self.ended_at_ms.is_some() {
            Some(OverUnresolved::GameOver)
        } else if kind.is_instant() && ply.is_some_and(|p| plies >= p) {
            Some(OverUnresolved::PlayWentOn)
        } else {
            None
        }
    }

    /// The game's irregularities, in the order recorded, each shown one with its resolution
    /// (the first `resolved` of its id) and the arbiter's latest ruling on it.
    pub fn irregularities(&self) -> Vec<IrregularityRecord> {
        self.events
            .iter()
            .filter_map(|e| self.irregularity(e))
            .collect()
    }

    /// Event `e` of the game as an irregularity, if it is one (see [`Self::irregularities`]).
    pub fn irregularity(&self, e: &EventRecord) -> Option<IrregularityRecord> {
        let kind = IrregularityKind::from_str_opt(&e.kind)?;
        let entry = match &e.what {
            Recorded::Audit(audit) => Entry::Audit(audit.clone()),
            Recorded::Irregularity(shown) => Entry::Shown {
                resolution: shown.id.and_then(|id| resolution(&self.events, id)),
                ruled: shown.id.and_then(|id| ruled(&self.events, id)),
                shown: shown.clone(),
            },
            _ => return None,
        };
        Some(IrregularityRecord {
            at_ms: e.at_ms,
            ply: e.ply,
            kind,
            entry,
        })
    }

    /// The arbiter's decisions on the game that stand, in the order made, each with its event's
    /// ply: none undone, and no undo (the history keeps both: [`GameRecord::all_decisions`]).
    pub fn decisions(&self) -> impl Iterator<Item = (&Decision, Option<u32>)> {
        let undone = undone_ids(&self.events);
        self.all_decisions()
            .filter(move |(d, _)| d.action.undoes().is_none() && !undone.contains(&d.id))
    }

    /// Every decision taken on the game, undone or not, undos too, in the order made, each
    /// with its event's ply.
    pub fn all_decisions(&self) -> impl Iterator<Item = (&Decision, Option<u32>)> {
        self.events.iter().filter_map(|e| match &e.what {
            Recorded::Decision(d) => Some((d, e.ply)),
            _ => None,
        })
    }

    /// The result as it stands for the event (the standings, the TRF for the pairing program):
    /// the arbiter's, or the one the game ended with on the board by the rules (a mate, a
    /// draw by the rules, togyz korgool's count); `*` while the result is only proposed (the
    /// kings' gesture, a flag fallen: the arbiter has to confirm it) or there is none.
    pub fn confirmed_result(&self) -> &str {
        if self.result == "*" {
            return "*";
        }
        let arbiter = self
            .decisions()
            .filter_map(|(d, _)| match &d.action {
                Action::SetResult { result, .. } => Some(result.as_str()),
                _ => None,
            })
            .last();
        let ended = || {
            self.events.iter().any(|e| {
                e.kind == "game_ended"
                    && e.detail.get("result").and_then(|r| r.as_str()) == Some(self.result.as_str())
            })
        };
        match arbiter {
            Some(r) if r == self.result => &self.result,
            _ if ended() => &self.result,
            _ => "*",
        }
    }

    /// The decision that undid decision `id`, if one did.
    pub fn undone_by(&self, id: i64) -> Option<i64> {
        self.all_decisions()
            .find(|(d, _)| d.action.undoes() == Some(id))
            .map(|(d, _)| d.id)
    }

    /// The highest number an irregularity of the game was given, 0 if none.
    pub fn last_irregularity_id(&self) -> u32 {
        self.events
            .iter()
            .filter_map(|e| match &e.what {
                Recorded::Irregularity(shown) => shown.id,
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// The irregularities the board showed that nothing has resolved yet (`id`, kind): a
    /// resumed game's tracker resolves them when the board fits the game again.
    pub fn open_irregularities(&self) -> Vec<(u32, IrregularityKind)> {
        self.irregularities()
            .iter()
            .filter_map(|i| match &i.entry {
                Entry::Shown {
                    shown,
                    resolution: None,
                    ..
                } if !i.kind.is_instant() => shown.id.map(|id| (id, i.kind)),
                _ => None,
            })
            .collect()
    }

    /// What the referee counted in this game that its moves do not show: the sides whose flag
    /// was reported fallen, and the player of each completed illegal move, in order.
    pub fn judged_counts(&self) -> (Vec<Side>, Vec<Side>) {
        let flags = self
            .events
            .iter()
            .filter_map(|e| match &e.what {
                Recorded::FlagFall(f) => f.side,
                _ => None,
            })
            .collect();
        let illegal = self
            .events
            .iter()
            .filter_map(|e| match &e.what {
                Recorded::Irregularity(shown)
                    if e.kind == IrregularityKind::IllegalMove.as_str() =>
                {
                    shown.player
                }
                _ => None,
            })
            .collect();
        (flags, illegal)
    }

    /// Whether the kings showed a result right before ply `ply`.
    pub fn gesture_before(&self, ply: u32) -> bool {
        self.events
            .iter()
            .any(|e| matches!(e.what, Recorded::ResultGesture { .. }) && e.ply == Some(ply))
    }
}

fn resolution(events: &[EventRecord], id: u32) -> Option<Resolution> {
    events.iter().find_map(|r| match &r.what {
        Recorded::Resolved {
            id: Some(i), how, ..
        } if *i == id => Some(Resolution {
            at_ms: r.at_ms,
            how: how.clone(),
        }),
        _ => None,
    })
}

/// The decisions of `events` that a later one undid.
pub fn undone_ids(events: &[EventRecord]) -> Vec<i64> {
    events
        .iter()
        .filter_map(|e| match &e.what {
            Recorded::Decision(d) => d.action.undoes(),
            _ => None,
        })
        .collect()
}

fn ruled(events: &[EventRecord], id: u32) -> Option<ArbiterRuling> {
    let undone = undone_ids(events);
    events.iter().rev().find_map(|e| match &e.what {
        Recorded::Decision(d) if undone.contains(&d.id) => None,
        Recorded::Decision(d) => match &d.action {
            Action::Rule {
                irregularity,
                ruling,
            } if *irregularity == id => Some(ArbiterRuling {
                decision: d.id,
                at_ms: d.at_ms,
                author: d.author.clone(),
                note: d.note.clone(),
                ruling: ruling.clone(),
            }),
            _ => None,
        },
        _ => None,
    })
}
