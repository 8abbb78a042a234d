//! A hall's record on the wire: what travels from a hall's outbox to the event node, typed once
//! for both sides.
//!
//! Flow: the schema's triggers write each record's row as JSON into the hall's outbox, with its
//! [`RecordKind`]; the hall's publisher ([`crate::cluster::hall`]) sends each as an
//! [`Envelope`] (the database's origin, the record's place in the hall's order, when it was
//! committed, its kind, its row); the event node reads it back ([`Incoming`]: with its place in
//! the broker's stream) and applies it ([`super::replica`]). Pure data.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// What a hall's record is: a new row of a record table, or a change to one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    Board,
    BoardNumber,
    Game,
    GameUpdate,
    Move,
    MoveRetracted,
    Event,
    Link,
}

impl RecordKind {
    pub const ALL: [RecordKind; 8] = [
        RecordKind::Board,
        RecordKind::BoardNumber,
        RecordKind::Game,
        RecordKind::GameUpdate,
        RecordKind::Move,
        RecordKind::MoveRetracted,
        RecordKind::Event,
        RecordKind::Link,
    ];

    /// As the outbox's `kind` column and the envelope name it.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Board => "board",
            RecordKind::BoardNumber => "board_number",
            RecordKind::Game => "game",
            RecordKind::GameUpdate => "game_update",
            RecordKind::Move => "move",
            RecordKind::MoveRetracted => "move_retracted",
            RecordKind::Event => "event",
            RecordKind::Link => "link",
        }
    }

    /// The kind the outbox's `kind` column names, if it is one.
    pub fn parse(text: &str) -> Option<RecordKind> {
        RecordKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

impl rusqlite::types::FromSql for RecordKind {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let text = value.as_str()?;
        RecordKind::parse(text).ok_or_else(|| {
            rusqlite::types::FromSqlError::Other(
                format!("the outbox holds a record of unknown kind {text:?}").into(),
            )
        })
    }
}

/// One record of a hall, as it travels from the hall's outbox to the event node.
#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope {
    /// The hall database's origin ([`super::HallIdentity::origin`]).
    pub origin: String,
    /// The record's place in the hall's order: 1, 2, 3, … with no gap.
    pub seq: u64,
    /// When the hall committed it: wall-clock ms since the Unix epoch.
    pub at_ms: u64,
    pub kind: RecordKind,
    /// The row as the hall wrote it.
    pub row: Box<RawValue>,
    /// Set on a copy of the whole database published again under another hall name
    /// (`cluster republish`): the database's last record, which the copy stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_of: Option<u64>,
}

/// An envelope with its place in the broker's stream.
#[derive(Debug)]
pub struct Incoming {
    pub envelope: Envelope,
    pub stream_seq: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_reads_back_as_the_outbox_and_the_wire_name_it() {
        for kind in RecordKind::ALL {
            assert_eq!(RecordKind::parse(kind.as_str()), Some(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
        assert_eq!(RecordKind::parse("moves"), None);
        let newer = r#"{"origin":"o","seq":1,"at_ms":2,"kind":"clock","row":{}}"#;
        assert!(serde_json::from_str::<Envelope>(newer).is_err());
    }
}
