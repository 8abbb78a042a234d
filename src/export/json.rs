//! JSON export, in the shape DESIGN.md promises (`{"games": [...]}`).
//!
//! Each game: `id`, `board` (the board's name), `kind`, `orientation`, `date`, `started_at_ms`,
//! `ended_at_ms`, `white`, `black` (the game's names, else its pairing's), `white_player` and
//! `black_player` (name, FIDE id, rating, title, federation), `event`, `site`, `round`,
//! `board_number`, `time_control`, `result`, `termination`, `moves`, `irregularities`; a chess
//! game also `variant` (`"standard"` or `"chess960"`) and `start_fen` (its start position). Each move:
//! `ply`, `notation`, `uci` (chess only), `fen` (chess) or `position` (togyz), `clock_white_ms`,
//! `clock_black_ms` (null when unknown), `time_trouble`, `at_ms`.
//!
//! Irregularities, in the order they happened: those the board or clock showed (`displaced`,
//! `illegal_move`, `clock_without_move`, `wrong_start_position`, `board_rotated`,
//! `clock_mis_set`) with `id`, `ply` (the ply they happened before), `kind`, `article` (of the configured laws), `player`, `detail` (text),
//! `ruling` (what the laws provide, for the arbiter), `at_ms`, `since_ms` (the raw frames from
//! there to `at_ms` show it), `resolved` and `resolution` (`{at_ms, how}` or null), and
//! `reinstate` (`{position_before, clock_white_ms, clock_black_ms}`: the position before it and the
//! clocks recorded with the ply before, for the arbiter reinstating it); and the
//! tracker's audit trail (`takeback`, `revised_move`), with `article` null, `resolved` true and
//! `detail` the stored object. An irregularity the arbiter ruled on also has `ruling_by_arbiter`
//! (the latest ruling: `{decision, at_ms, author, note, ruling}`).
//!
//! Arbiter decisions, when a game has any, are in `decisions`: `{id, at_ms, ply, action, author,
//! note, ...}` with the action's fields (see `store::Action`); `ply` is the move corrected or
//! noted, the ply a ruled irregularity happened before, or null. With the history asked for, each
//! game also has `history`: every event in the order recorded (`{id, at_ms, kind, ply, detail,
//! retracted}`), `retracted` being the move rows that event retracted (a revision, a takeback,
//! a correction).

use serde_json::{Map, Value, json};

use crate::{
    game::{Kind, Variant},
    store::{ArbiterRuling, Audit, Entry, GameRecord, HistoryEntry, IrregularityRecord},
    tracker::{Side, event::RecordedMove},
};

/// `{"games": [...]}` for `games`, in the order given.
pub fn json(games: &[GameRecord]) -> Value {
    json!({ "games": games.iter().map(game).collect::<Vec<_>>() })
}

/// Like [`json`], each game with its `history` (`histories[i]` is the history of `games[i]`).
pub fn json_with_history(games: &[GameRecord], histories: &[Vec<HistoryEntry>]) -> Value {
    let games = games
        .iter()
        .zip(histories)
        .map(|(g, h)| {
            let mut v = game(g);
            if let Value::Object(o) = &mut v {
                o.insert("history".into(), history(g.kind, h).into());
            }
            v
        })
        .collect::<Vec<_>>();
    json!({ "games": games })
}

fn game(g: &GameRecord) -> Value {
    let mut v = game_fields(g);
    let decisions = decisions(g);
    if let (Value::Object(o), false) = (&mut v, decisions.is_empty()) {
        o.insert("decisions".into(), decisions.into());
    }
    v
}

fn game_fields(g: &GameRecord) -> Value {
    let (white, black) = (g.player(Side::White), g.player(Side::Black));
    let mut v = json!({
        "id": g.id.0,
        "board": g.board_name,
        "kind": g.kind.as_str(),
        "orientation": g.orientation.as_str(),
        "date": g.date,
        "started_at_ms": g.started_at_ms,
        "ended_at_ms": g.ended_at_ms,
        "white": white.as_ref().map(|p| &p.name),
        "black": black.as_ref().map(|p| &p.name),
        "white_player": white,
        "black_player": black,
        "event": g.event,
        "site": g.site,
        "round": g.round,
        "board_number": g.board_no,
        "time_control": g.time_control,
        "result": g.result,
        "termination": g.termination,
        "moves": g.moves.iter().map(|m| move_json(g.kind, m)).collect::<Vec<_>>(),
        "irregularities": with_reinstatement(g, irregularities(g)),
    });
    if let (Kind::Chess, Value::Object(o)) = (g.kind, &mut v) {
        let variant = match g.start_position {
            Some(_) => Variant::Chess960,
            None => Variant::Standard,
        };
        o.insert("variant".into(), variant.as_str().into());
        o.insert("start_fen".into(), start_position(g).into());
    }
    v
}

/// Each irregularity the board showed gets what reinstating the position before it needs (FIDE
/// 7.4-7.6, 8.5.3; KG 4.2): `position_before` (the FEN, or the togyz position, after ply
/// `ply - 1`) and the clocks recorded with that ply (`clock_white_ms`, `clock_black_ms`; null
/// before the first move or when unknown: the arbiter sets the clocks, 7.1).
fn with_reinstatement(g: &GameRecord, mut list: Vec<Value>) -> Vec<Value> {
    for v in &mut list {
        let Value::Object(o) = v else { continue };
        if o.get("id").is_none_or(Value::is_null) {
            continue;
        }
        let Some(ply) = o.get("ply").and_then(Value::as_u64) else {
            continue;
        };
        let before = (ply as usize)
            .checked_sub(2)
            .and_then(|i| g.moves.iter().find(|m| m.ply as usize == i + 1));
        let position = match before {
            Some(m) => m.position.clone(),
            None => start_position(g),
        };
        o.insert(
            "reinstate".into(),
            json!({
                "position_before": position,
                "clock_white_ms": before.and_then(|m| m.clock_white_ms),
                "clock_black_ms": before.and_then(|m| m.clock_black_ms),
            }),
        );
    }
    list
}

/// The game's start position as the moves' `position` writes it (a Chess960 game's own).
fn start_position(g: &GameRecord) -> String {
    if let Some(start) = &g.start_position {
        return start.clone();
    }
    match g.kind {
        Kind::Chess => shakmaty::fen::Fen::from_position(
            &shakmaty::Chess::default(),
            shakmaty::EnPassantMode::Legal,
        )
        .to_string(),
        Kind::Togyz => crate::game::togyz::notation::to_fen(&crate::game::togyz::Position::new()),
    }
}

fn move_json(kind: Kind, m: &RecordedMove) -> Value {
    let mut o = Map::new();
    o.insert("ply".into(), m.ply.into());
    o.insert("notation".into(), m.notation.clone().into());
    match kind {
        Kind::Chess => {
            o.insert("uci".into(), m.uci.clone().into());
            o.insert("fen".into(), m.position.clone().into());
        }
        Kind::Togyz => {
            o.insert("position".into(), m.position.clone().into());
        }
    }
    o.insert("clock_white_ms".into(), m.clock_white_ms.into());
    o.insert("clock_black_ms".into(), m.clock_black_ms.into());
    o.insert("time_trouble".into(), m.time_trouble.into());
    o.insert("at_ms".into(), m.at_ms.into());
    Value::Object(o)
}

/// The arbiter's decisions on `g`, in the order made, the undone ones and the undos too: each
/// decision's stored fields with its event's `id`, `at_ms` and `ply` (the decision's own `ply`,
/// the move's, wins over the event's), and `undone_by` (the undo's id) for one undone.
pub fn decisions(g: &GameRecord) -> Vec<Value> {
    g.all_decisions()
        .map(|(d, ply)| {
            let mut o = Map::new();
            o.insert("id".into(), d.id.into());
            o.insert("at_ms".into(), d.at_ms.into());
            o.insert("ply".into(), ply.into());
            if let Value::Object(fields) = d.fields() {
                o.extend(fields);
            }
            if let Some(by) = g.undone_by(d.id) {
                o.insert("undone_by".into(), by.into());
            }
            Value::Object(o)
        })
        .collect()
}

/// The arbiter's latest ruling on an irregularity.
fn ruling_by_arbiter(r: &ArbiterRuling) -> Value {
    json!({
        "decision": r.decision,
        "at_ms": r.at_ms,
        "author": r.author,
        "note": r.note,
        "ruling": r.ruling,
    })
}

fn history(kind: Kind, entries: &[HistoryEntry]) -> Vec<Value> {
    entries
        .iter()
        .map(|h| {
            json!({
                "id": h.event.id,
                "at_ms": h.event.at_ms,
                "kind": h.event.kind,
                "ply": h.event.ply,
                "detail": h.event.detail,
                "retracted": h.retracted.iter().map(|m| move_json(kind, m)).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The game's irregularities, each with its resolution if one came.
pub fn irregularities(g: &GameRecord) -> Vec<Value> {
    g.irregularities().iter().map(irregularity).collect()
}

fn irregularity(i: &IrregularityRecord) -> Value {
    match &i.entry {
        // Takebacks and revisions are the tracker's own corrections, kept for the audit trail;
        // every other kind was shown by the board or clock, stored with an `id` and resolved by
        // a `resolved` event.
        Entry::Audit(audit) => json!({
            "ply": i.ply,
            "kind": i.kind.as_str(),
            "article": null,
            "detail": audit_detail(audit),
            "at_ms": i.at_ms,
            "resolved": true,
        }),
        Entry::Shown {
            shown,
            resolution,
            ruled,
        } => {
            let resolution = resolution
                .as_ref()
                .map(|r| json!({ "at_ms": r.at_ms, "how": r.how }));
            let mut v = json!({
                "id": shown.id,
                "ply": i.ply,
                "kind": i.kind.as_str(),
                "article": shown.article,
                "player": shown.player.map(|p| p.as_str()),
                "detail": shown.detail,
                "ruling": shown.ruling,
                "at_ms": i.at_ms,
                "since_ms": shown.since_ms,
                "resolved": resolution.is_some(),
                "resolution": resolution,
            });
            if let (Value::Object(o), Some(ruled)) = (&mut v, ruled) {
                o.insert("ruling_by_arbiter".into(), ruling_by_arbiter(ruled));
            }
            v
        }
    }
}

/// An audit entry's detail, as stored.
fn audit_detail(audit: &Audit) -> Value {
    match audit {
        Audit::Revision { old, new } => json!({ "old": old, "new": new }),
        Audit::Takeback { from_ply, to_ply } => json!({ "from_ply": from_ply, "to_ply": to_ply }),
    }
}
