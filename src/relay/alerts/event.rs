//! The event's own alerts ([`EventAlert`]), made by the event node
//! ([`crate::cluster::health`]): what is wrong and what to do, typed ([`EventFault`]: the
//! situation and its values), so that the console words them in its language.
//!
//! Flow: the event node builds an [`EventFault`] and makes it an alert
//! ([`EventAlert::new`]); its `detail` and `advice` are its English (the `event` section of
//! `en.toml`), the words the admin API has always served, and the fault itself goes beside
//! them; the console words it again in its language ([`EventAlert::detail_in`],
//! [`EventAlert::advice_in`]: the same section of that language's table). A failure's own
//! reason (the hall's publisher's, the event node's) is system text: it stays as it is in
//! every language, as do halls, boards, origins, numbers and times (`hh:mm:ss`, UTC). The
//! commands, settings and places of the documentation an advice names are blanks, written as
//! they are in every language. Pure.

use serde::Serialize;

use crate::{Millis, export::publish::utc_date_time, lang::Lang};

/// An alert about the event rather than a game: a hall the event node does not hear, a hall
/// whose records cannot go on, a hall whose outbox grows, a board number two halls use (the
/// event node's, [`crate::cluster::health`]). Open while it lasts; gone when it is over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EventAlert {
    /// Unique while open: `hall-A-silent`, `board-B/B7-number`.
    pub id: String,
    /// `hall_silent`, `hall_stalled`, `hall_outbox_growing`, `hall_not_followed`,
    /// `board_number_taken`.
    pub kind: String,
    /// The hall it is about.
    pub hall: String,
    /// Since when (wall-clock ms).
    pub since_ms: Millis,
    /// What is wrong, in English.
    pub detail: String,
    /// What to do about it, in English.
    pub advice: String,
    /// What is wrong, typed, with its values: each language words it.
    pub fault: EventFault,
}

impl EventAlert {
    /// The alert of `fault`, open since `since_ms`: its id, kind and hall are the fault's, its
    /// detail and advice the fault in English.
    pub fn new(fault: EventFault, since_ms: Millis) -> EventAlert {
        EventAlert {
            id: fault.id(),
            kind: fault.kind().to_owned(),
            hall: fault.hall().to_owned(),
            since_ms,
            detail: fault.detail(Lang::En),
            advice: fault.advice(Lang::En),
            fault,
        }
    }

    /// What is wrong, in `lang`.
    pub fn detail_in(&self, lang: Lang) -> String {
        self.fault.detail(lang)
    }

    /// What to do about it, in `lang`.
    pub fn advice_in(&self, lang: Lang) -> String {
        self.fault.advice(lang)
    }
}

/// What an event alert is about, with its values. In JSON, `kind` names it (the alert's
/// kind) beside its values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventFault {
    /// `hall` has not been heard since `since_ms`: when it was last heard, or (`heard` false:
    /// never) when the event node started.
    HallSilent {
        hall: String,
        since_ms: Millis,
        heard: bool,
    },
    /// `hall`'s records stop reaching the event, for each of `reasons`.
    HallStalled {
        hall: String,
        reasons: Vec<StallReason>,
    },
    /// `hall` holds `records` records the broker has not taken, the oldest from `oldest_ms`,
    /// `waiting_ms` before the hall said so; `failure`: why, as the hall's publisher says it.
    HallOutboxGrowing {
        hall: String,
        records: u64,
        oldest_ms: Millis,
        waiting_ms: u64,
        failure: Option<String>,
    },
    /// `hall` publishes its records, but the event node does not follow it.
    HallNotFollowed { hall: String },
    /// `board` (`hall/name`) has `number` in its hall, but the event node keeps it without:
    /// `holder` has it, or (none) had it and it is free now.
    BoardNumberTaken {
        board: String,
        number: i64,
        holder: Option<String>,
    },
}

/// Why a hall's records stop reaching the event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum StallReason {
    /// More than one database publishes as the hall: their origins.
    Databases { origins: Vec<String> },
    /// The hall cannot publish, and it does not pass by itself: why, as its publisher says it.
    CannotPublish { why: String },
    /// The event node refuses the hall's records: why, as it says it.
    Refused { why: String },
}

/// The command that shows whether a hall's boardscribe runs.
const STATUS_COMMAND: &str = "systemctl status boardscribe";
/// The command that publishes a replaced hall database again.
const REPUBLISH_COMMAND: &str = "boardscribe cluster republish";
/// The setting that names a hall, on its PC.
const HALL_SETTING: &str = "[cluster] hall";
/// The setting that lists the halls the event node follows.
const HALLS_SETTING: &str = "[cluster] halls";
/// Where the documentation says what to do with a replaced hall PC.
const REPLACED_DOC: &str = "docs/operations.md, \"A hall's PC replaced\"";

impl EventFault {
    /// The alert's kind (its `kind` in JSON).
    pub fn kind(&self) -> &'static str {
        match self {
            EventFault::HallSilent { .. } => "hall_silent",
            EventFault::HallStalled { .. } => "hall_stalled",
            EventFault::HallOutboxGrowing { .. } => "hall_outbox_growing",
            EventFault::HallNotFollowed { .. } => "hall_not_followed",
            EventFault::BoardNumberTaken { .. } => "board_number_taken",
        }
    }

    /// The hall it is about (a board's: the part of its name before `/`).
    pub fn hall(&self) -> &str {
        match self {
            EventFault::HallSilent { hall, .. }
            | EventFault::HallStalled { hall, .. }
            | EventFault::HallOutboxGrowing { hall, .. }
            | EventFault::HallNotFollowed { hall } => hall,
            EventFault::BoardNumberTaken { board, .. } => {
                board.split_once('/').map_or("", |(h, _)| h)
            }
        }
    }

    /// The alert's id, unique while it is open.
    fn id(&self) -> String {
        let hall = self.hall();
        match self {
            EventFault::HallSilent { .. } => format!("hall-{hall}-silent"),
            EventFault::HallStalled { .. } => format!("hall-{hall}-stalled"),
            EventFault::HallOutboxGrowing { .. } => format!("hall-{hall}-outbox"),
            EventFault::HallNotFollowed { .. } => format!("hall-{hall}-not-followed"),
            EventFault::BoardNumberTaken { board, .. } => format!("board-{board}-number"),
        }
    }

    /// What is wrong, in `lang`.
    pub fn detail(&self, lang: Lang) -> String {
        match self {
            EventFault::HallSilent {
                hall,
                since_ms,
                heard,
            } => fill(
                lang,
                if *heard {
                    "event.silent"
                } else {
                    "event.silent_since_start"
                },
                &[("hall", hall), ("time", &time_of_day(*since_ms))],
            ),
            EventFault::HallStalled { hall, reasons } => {
                let reasons: Vec<String> = reasons.iter().map(|r| r.words(hall, lang)).collect();
                fill(
                    lang,
                    "event.stalled",
                    &[
                        ("hall", hall),
                        (
                            "reasons",
                            &reasons.join(lang.text("event.reasons_separator")),
                        ),
                    ],
                )
            }
            EventFault::HallOutboxGrowing {
                hall,
                records,
                oldest_ms,
                waiting_ms,
                failure,
            } => {
                let count = records.to_string();
                let time = time_of_day(*oldest_ms);
                let seconds = (waiting_ms / 1000).to_string();
                let mut args = vec![
                    ("hall", hall.as_str()),
                    ("count", &count),
                    ("time", &time),
                    ("seconds", &seconds),
                ];
                match failure {
                    Some(why) => {
                        args.push(("why", why));
                        fill(lang, "event.outbox_failing", &args)
                    }
                    None => fill(lang, "event.outbox", &args),
                }
            }
            EventFault::HallNotFollowed { hall } => {
                fill(lang, "event.not_followed", &[("hall", hall)])
            }
            EventFault::BoardNumberTaken {
                board,
                number,
                holder,
            } => {
                let number = number.to_string();
                match holder {
                    Some(holder) => fill(
                        lang,
                        "event.number_taken",
                        &[("board", board), ("number", &number), ("holder", holder)],
                    ),
                    None => fill(
                        lang,
                        "event.number_free",
                        &[("board", board), ("number", &number)],
                    ),
                }
            }
        }
    }

    /// What to do about it, in `lang`.
    pub fn advice(&self, lang: Lang) -> String {
        match self {
            EventFault::HallSilent { .. } => {
                fill(lang, "event.silent_advice", &[("command", STATUS_COMMAND)])
            }
            EventFault::HallStalled { .. } => fill(
                lang,
                "event.stalled_advice",
                &[
                    ("setting", HALL_SETTING),
                    ("command", REPUBLISH_COMMAND),
                    ("doc", REPLACED_DOC),
                ],
            ),
            EventFault::HallOutboxGrowing { .. } => lang.text("event.outbox_advice").to_owned(),
            EventFault::HallNotFollowed { hall } => fill(
                lang,
                "event.not_followed_advice",
                &[
                    ("hall", hall),
                    ("halls_setting", HALLS_SETTING),
                    ("setting", HALL_SETTING),
                ],
            ),
            EventFault::BoardNumberTaken {
                holder: Some(_), ..
            } => lang.text("event.number_taken_advice").to_owned(),
            EventFault::BoardNumberTaken { holder: None, .. } => {
                lang.text("event.number_free_advice").to_owned()
            }
        }
    }
}

impl StallReason {
    /// The reason in `lang`, for hall `hall`.
    fn words(&self, hall: &str, lang: Lang) -> String {
        match self {
            StallReason::Databases { origins } => fill(
                lang,
                "event.stalled_databases",
                &[
                    ("count", &origins.len().to_string()),
                    ("hall", hall),
                    ("origins", &origins.join(", ")),
                ],
            ),
            StallReason::CannotPublish { why } => {
                fill(lang, "event.stalled_cannot_publish", &[("why", why)])
            }
            StallReason::Refused { why } => fill(lang, "event.stalled_refused", &[("why", why)]),
        }
    }
}

/// `key`'s text in `lang` with its blanks filled in one pass: a value is never read for blanks
/// (a reason or a board's name that holds braces stays as it is).
fn fill(lang: Lang, key: &'static str, args: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = lang.text(key);
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let blank = after.find('}').and_then(|len| {
            let name = &after[..len];
            args.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, value)| (len, *value))
        });
        match blank {
            Some((len, value)) => {
                out.push_str(value);
                rest = &after[len + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `ms` (wall-clock ms since the Unix epoch) as `hh:mm:ss`, UTC.
fn time_of_day(ms: Millis) -> String {
    utc_date_time(ms).1
}

#[cfg(test)]
mod tests;
