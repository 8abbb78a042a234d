//! `arbiter history` in words: one line per event, for the arbiter to read.
//!
//! Flow: [`in_words`] walks a game's history (its events; the moves are the record) in the
//! order recorded and writes each event as
//! `2026-12-02 15:04:12  board 12 (game 7)  move 34 black  result set to 0-1 (resignation,
//! was *) by Chief: "resigned"`: the local time (the stream's own clock for a replayed
//! capture, whose times start at 0), the board and game, the move it happened at (the move
//! a ply is, or the move to be played next), what happened and by whom. Moves the event
//! withdrew follow on an indented line, and a control character stored before they were
//! refused shows escaped (`\u{1b}`). Nothing here reads the store.

use jiff::{Timestamp, tz::TimeZone};
use serde_json::Value;

use super::moveno::{in_words as move_words, numbered};
use crate::{
    Millis,
    store::{Action, Audit, GameRecord, HistoryEntry, Recorded, Ruling, Shown},
    text::escape_controls,
};

/// Times below this are a stream's own clock (a capture's seconds from 0), not the epoch's.
const EPOCH_FROM_MS: Millis = 100_000_000_000;

/// The machine's local time zone (`TZ`, else `/etc/localtime`); UTC if neither reads.
pub fn local_zone() -> TimeZone {
    TimeZone::try_system().unwrap_or(TimeZone::UTC)
}

/// `2026-12-02 15:04:12` in `zone`, or `capture +0:01:23.450` for a stream's own clock.
pub fn when(at_ms: Millis, zone: &TimeZone) -> String {
    let stamp = i64::try_from(at_ms)
        .ok()
        .filter(|&ms| ms >= EPOCH_FROM_MS as i64)
        .and_then(|ms| Timestamp::from_millisecond(ms).ok());
    match stamp {
        Some(t) => t
            .to_zoned_datetime(zone.clone())
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string(),
        None => format!(
            "capture +{}.{:03}",
            clock(at_ms / 1000 * 1000),
            at_ms % 1000
        ),
    }
}

/// `1:02:03`.
fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The game's history, one line per event (and one per event's withdrawn moves).
pub fn in_words(game: &GameRecord, entries: &[HistoryEntry], zone: &TimeZone) -> Vec<String> {
    let board = match game.board_no {
        Some(n) => format!("board {n}"),
        None => format!("board {:?}", game.board_name),
    };
    let head = format!("{board} (game {})", game.id.0);
    let mut lines = Vec::with_capacity(entries.len());
    for entry in entries {
        let e = &entry.event;
        let at = match &e.what {
            Recorded::Decision(d) => match d.action {
                Action::CorrectMove { ply, .. } | Action::Note { ply: Some(ply) } => ply,
                _ => e.ply.unwrap_or_else(|| plies_at(game, e.at_ms) + 1),
            },
            _ => e.ply.unwrap_or_else(|| plies_at(game, e.at_ms) + 1),
        }
        .max(1);
        let what = what(&e.kind, &e.detail, &e.what);
        // An author or a note written before control characters were refused (an old
        // database) shows them escaped: no line can be forged on the arbiter's terminal.
        let what = escape_controls(&what);
        lines.push(format!(
            "{}  {head}  {:<14} {what}",
            when(e.at_ms, zone),
            move_words(at)
        ));
        if !entry.retracted.is_empty() {
            let moves: Vec<String> = entry
                .retracted
                .iter()
                .map(|m| numbered(m.ply, &m.notation))
                .collect();
            lines.push(format!("    withdrawn: {}", moves.join(" ")));
        }
    }
    lines
}

/// How many plies of the record stood at `at_ms`: the live moves made by then, when the
/// moves and the event are on the same clock (a live board's: the epoch's); else all of them
/// (a replayed capture's moves are on its own clock).
fn plies_at(game: &GameRecord, at_ms: Millis) -> u32 {
    let same_clock = at_ms >= EPOCH_FROM_MS && game.moves.iter().all(|m| m.at_ms >= EPOCH_FROM_MS);
    let n = if same_clock {
        game.moves.iter().filter(|m| m.at_ms <= at_ms).count()
    } else {
        game.moves.len()
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn text<'a>(detail: &'a Value, key: &str) -> Option<&'a str> {
    detail.get(key).and_then(Value::as_str)
}

fn number(detail: &Value, key: &str) -> Option<u32> {
    detail
        .get(key)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
}

/// A kind's name in words: `clock_without_move` → `clock without move`.
fn kind_words(kind: &str) -> String {
    kind.replace('_', " ")
}

/// What an event says, in words.
fn what(kind: &str, detail: &Value, recorded: &Recorded) -> String {
    match recorded {
        Recorded::Decision(d) => {
            let mut out = match &d.action {
                Action::SetResult {
                    result,
                    reason,
                    previous_result,
                    ..
                } => format!(
                    "result set to {result} ({}, was {previous_result})",
                    reason.as_str()
                ),
                Action::Rule {
                    irregularity,
                    ruling,
                } => format!(
                    "irregularity {irregularity} ruled: {}",
                    ruling_words(ruling)
                ),
                Action::CorrectMove {
                    ply,
                    old_notation,
                    new_notation,
                    retracted,
                    ..
                } => format!(
                    "move corrected: {} -> {new_notation} ({retracted} move(s) re-recorded)",
                    numbered(*ply, old_notation)
                ),
                Action::Note { .. } => "note".to_owned(),
                Action::Resume {
                    after_ply,
                    moves,
                    retracted,
                } => {
                    let mut s = match after_ply {
                        0 => "game resumed from the start".to_owned(),
                        p => format!("game resumed after {}", move_words(*p)),
                    };
                    if !moves.is_empty() {
                        s.push_str(&format!(" with {}", moves.join(" ")));
                    }
                    if *retracted > 0 {
                        s.push_str(&format!(" ({retracted} move(s) withdrawn)"));
                    }
                    s
                }
            };
            out.push_str(&format!(" by {}", d.author));
            if let Some(note) = &d.note {
                out.push_str(&format!(": {note:?}"));
            }
            out
        }
        Recorded::Irregularity(shown) => irregularity(kind, detail, shown),
        Recorded::Audit(Audit::Revision { old, new }) => format!(
            "move revised on the board: {} -> {}",
            numbered(old.ply, &old.notation),
            new.notation
        ),
        Recorded::Audit(Audit::Takeback { from_ply, to_ply }) => match to_ply {
            0 => format!("taken back to the start ({from_ply} plies)"),
            p => format!(
                "taken back to after {} ({} plies)",
                move_words(*p),
                from_ply.saturating_sub(*p)
            ),
        },
        Recorded::Resolved { id, how } => {
            let id = id.map(|i| format!(" {i}")).unwrap_or_default();
            match how {
                Some(how) => format!("irregularity{id} resolved: {how}"),
                None => format!("irregularity{id} resolved"),
            }
        }
        Recorded::FlagFall(f) => {
            let side = f.side.map_or("a", |s| s.as_str());
            let mut s = format!("{side}'s flag fell");
            if let Some(p) = &f.proposed {
                s.push_str(&format!(": {p} proposed"));
            }
            if let Some(a) = &f.article {
                s.push_str(&format!(" (article {a})"));
            }
            if let Some(n) = &f.note {
                s.push_str(&format!("; {n}"));
            }
            s
        }
        Recorded::Claimable { claim, article } => {
            let claim = claim.as_deref().map_or("a draw".to_owned(), kind_words);
            match article {
                Some(a) => format!("{claim} may be claimed (article {a})"),
                None => format!("{claim} may be claimed"),
            }
        }
        Recorded::ResultGesture { proposed } => format!(
            "the kings showed {}: a result for the arbiter to confirm",
            proposed.as_deref().unwrap_or("a result")
        ),
        Recorded::Other => other(kind, detail),
    }
}

fn ruling_words(r: &Ruling) -> String {
    match r {
        Ruling::PenaltyApplied { description } => format!("penalty applied: {description}"),
        Ruling::MoveStands => "the move stands".to_owned(),
        Ruling::PositionReinstated { ply } => {
            format!("position reinstated before {}", move_words(*ply))
        }
        Ruling::NoAction => "no action".to_owned(),
    }
}

fn irregularity(kind: &str, detail: &Value, shown: &Shown) -> String {
    let mut s = match shown.id {
        Some(id) => format!("irregularity {id}: {}", kind_words(kind)),
        // A gap's recovery has no number.
        None => match (number(detail, "from_ply"), number(detail, "to_ply")) {
            (Some(from), Some(to)) => format!(
                "{}: plies {from} to {to}, made while the board was not heard",
                kind_words(kind)
            ),
            _ => kind_words(kind),
        },
    };
    if let Some(side) = shown.player {
        s.push_str(&format!(" by {}", side.as_str()));
    }
    if let Some(d) = shown.detail.as_deref().filter(|d| !d.is_empty()) {
        s.push_str(&format!(": {d}"));
    }
    if let Some(a) = &shown.article {
        s.push_str(&format!(" (article {a})"));
    }
    if let Some(r) = &shown.ruling {
        s.push_str(&format!("; {r}"));
    }
    s
}

/// Events the typed record keeps no value for: a game's start and end, a reorientation;
/// anything else as stored.
fn other(kind: &str, detail: &Value) -> String {
    match kind {
        "game_started" => match text(detail, "start") {
            Some(fen) => format!("game started from {fen}"),
            None => "game started".to_owned(),
        },
        "game_ended" => format!(
            "game ended {} ({})",
            text(detail, "result").unwrap_or("?"),
            text(detail, "termination").unwrap_or("?")
        ),
        "reoriented" => format!(
            "board read {}",
            text(detail, "orientation").map_or("?".to_owned(), kind_words)
        ),
        _ => format!("{} {detail}", kind_words(kind)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_local_or_the_streams_own() {
        let almaty = TimeZone::get("Asia/Almaty").unwrap_or_else(|_| {
            TimeZone::posix("<+05>-5").expect("a POSIX zone reads without the tzdb")
        });
        // 2026-12-02 10:04:12.345 UTC
        assert_eq!(when(1_796_205_852_345, &almaty), "2026-12-02 15:04:12");
        assert_eq!(
            when(1_796_205_852_345, &TimeZone::UTC),
            "2026-12-02 10:04:12"
        );
        assert_eq!(when(83_450, &TimeZone::UTC), "capture +0:01:23.450");
        assert_eq!(clock(3_723_000), "1:02:03");
    }
}
