//! JSON export, in the shape DESIGN.md promises (`{"games": [...]}`).
//!
//! Each game: `id`, `board` (the board's name), `kind`, `orientation`, `date`, `started_at_ms`,
//! `ended_at_ms`, `white`, `black`, `result`, `termination`, `moves`, `irregularities`. Each move:
//! `ply`, `notation`, `uci` (chess only), `fen` (chess) or `position` (togyz), `clock_white_ms`,
//! `clock_black_ms` (null when unknown), `time_trouble`, `at_ms`.
//!
//! Until the arbiter work lands, the irregularities are the game's `takeback` and `revised_move`
//! events, with `article` null and `resolved` true (the tracker settled them itself), `ply` the ply
//! they happened before, and `detail` the event's stored detail object. `time_trouble` is false
//! until the tracker's `RecordedMove` carries the Article 8.4 flag.

use serde_json::{Map, Value, json};

use crate::{
    game::Kind,
    store::{EventRecord, GameRecord},
    tracker::event::RecordedMove,
};

/// Event kinds exported as irregularities.
const IRREGULAR_KINDS: &[&str] = &["takeback", "revised_move"];

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
        "irregularities": g.events.iter()
            .filter(|e| IRREGULAR_KINDS.contains(&e.kind.as_str()))
            .map(irregularity)
            .collect::<Vec<_>>(),
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
    o.insert("time_trouble".into(), false.into());
    o.insert("at_ms".into(), m.at_ms.into());
    Value::Object(o)
}

fn irregularity(e: &EventRecord) -> Value {
    json!({
        "ply": e.ply,
        "kind": e.kind,
        "article": null,
        "detail": e.detail,
        "resolved": true,
    })
}
