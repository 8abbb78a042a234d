//! JSON export, in the shape DESIGN.md promises (`{"games": [...]}`).
//!
//! Each game: `id`, `board` (the board's name), `kind`, `orientation`, `date`, `started_at_ms`,
//! `ended_at_ms`, `white`, `black`, `result`, `termination`, `moves`, `irregularities`. Each move:
//! `ply`, `notation`, `uci` (chess only), `fen` (chess) or `position` (togyz), `clock_white_ms`,
//! `clock_black_ms` (null when unknown), `time_trouble`, `at_ms`.
//!
//! Irregularities, in the order they happened: those the board showed (`displaced`,
//! `illegal_move`, `clock_without_move`, `wrong_start_position`) with `id`, `ply` (the ply they
//! happened before), `kind`, `article` (of the configured laws), `player`, `detail` (text),
//! `ruling` (what the laws provide, for the arbiter), `at_ms`, `since_ms` (the raw frames from
//! there to `at_ms` show it), `resolved` and `resolution` (`{at_ms, how}` or null); and the
//! tracker's audit trail (`takeback`, `revised_move`), with `article` null, `resolved` true and
//! `detail` the stored object.

use serde_json::{Map, Value, json};

use crate::{
    game::Kind,
    store::{EventRecord, GameRecord},
    tracker::event::RecordedMove,
};

/// Irregularities the board showed (stored with an `id`, resolved by a `resolved` event).
const BOARD_KINDS: &[&str] = &[
    "displaced",
    "illegal_move",
    "clock_without_move",
    "wrong_start_position",
    "board_rotated",
];
/// The tracker's own corrections, kept for the audit trail.
const AUDIT_KINDS: &[&str] = &["takeback", "revised_move"];

/// `{"games": [...]}` for `games`, in the order given.
pub fn json(games: &[GameRecord]) -> Value {
    json!({ "games": games.iter().map(game).collect::<Vec<_>>() })
}

fn game(g: &GameRecord) -> Value {
    json!({
        "id": g.id.0,
        "board": g.board_name,
        "kind": g.kind.as_str(),
        "orientation": g.orientation.as_str(),
        "date": g.date,
        "started_at_ms": g.started_at_ms,
        "ended_at_ms": g.ended_at_ms,
        "white": g.white,
        "black": g.black,
        "result": g.result,
        "termination": g.termination,
        "moves": g.moves.iter().map(|m| move_json(g.kind, m)).collect::<Vec<_>>(),
        "irregularities": irregularities(&g.events),
    })
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

/// The game's irregularities, each with its resolution if one came.
pub fn irregularities(events: &[EventRecord]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| {
            if AUDIT_KINDS.contains(&e.kind.as_str()) {
                return Some(json!({
                    "ply": e.ply,
                    "kind": e.kind,
                    "article": null,
                    "detail": e.detail,
                    "at_ms": e.at_ms,
                    "resolved": true,
                }));
            }
            if !BOARD_KINDS.contains(&e.kind.as_str()) {
                return None;
            }
            let id = e.detail.get("id").cloned().unwrap_or(Value::Null);
            let resolution = events
                .iter()
                .find(|r| r.kind == "resolved" && r.detail.get("id") == Some(&id))
                .map(|r| json!({ "at_ms": r.at_ms, "how": r.detail.get("how") }));
            let field = |name: &str| e.detail.get(name).cloned().unwrap_or(Value::Null);
            Some(json!({
                "id": id,
                "ply": e.ply,
                "kind": e.kind,
                "article": field("article"),
                "player": field("player"),
                "detail": field("detail"),
                "ruling": field("ruling"),
                "at_ms": e.at_ms,
                "since_ms": field("since_ms"),
                "resolved": resolution.is_some(),
                "resolution": resolution,
            }))
        })
        .collect()
}
