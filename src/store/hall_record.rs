//! A hall's record on the wire: what travels from a hall's outbox to the event node, typed once
//! for both sides.
//!
//! Flow: the triggers write each record's row as JSON into the hall's outbox, with its
//! [`RecordKind`]; each kind's row is written once here, as a struct ([`BoardRow`], [`GameRow`],
//! …) from whose fields the outbox's views and triggers are made ([`outbox_sql`]); the hall's publisher ([`crate::cluster::hall`]) sends each as an
//! [`Envelope`] (the database's origin, the record's place in the hall's order, when it was
//! committed, its kind, its row); the event node reads it back ([`Incoming`]: with its place in
//! the broker's stream) into the same structs and applies it ([`super::replica`]). Pure data.

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

    /// The kinds that are a whole row of their table, in the order a database's whole record is
    /// sent (a database joining a hall, a hall's snapshot): each row comes after the rows it
    /// names (a move's retraction names an event).
    pub const WHOLE_ROWS: [RecordKind; 5] = [
        RecordKind::Board,
        RecordKind::Game,
        RecordKind::Event,
        RecordKind::Move,
        RecordKind::Link,
    ];

    /// The view giving this kind's row as JSON.
    pub fn view(self) -> &'static str {
        shapes()
            .into_iter()
            .find(|s| s.kind == self)
            .map_or("", |s| s.view)
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

// Each kind's row, written once: the outbox's views and triggers are made from these structs'
// fields ([`outbox_sql`]), and the event node reads the rows back with them, refusing a column
// it does not know rather than dropping it. A field is the table's column of the same name.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardRow {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub number: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardNumberRow {
    pub id: i64,
    pub number: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameRow {
    pub id: i64,
    pub board_id: i64,
    pub kind: String,
    pub orientation: String,
    pub date: Option<String>,
    pub started_at_ms: i64,
    pub ended_at_ms: Option<i64>,
    pub white: Option<String>,
    pub black: Option<String>,
    pub result: String,
    pub termination: Option<String>,
    pub event: Option<String>,
    pub site: Option<String>,
    pub round: Option<String>,
    pub board_no: Option<i64>,
    pub start_position: Option<String>,
    pub time_control: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveRow {
    pub id: i64,
    pub game_id: i64,
    pub ply: i64,
    pub notation: String,
    pub uci: Option<String>,
    pub position: String,
    pub at_ms: i64,
    pub clock_white_ms: Option<i64>,
    pub clock_black_ms: Option<i64>,
    pub time_trouble: i64,
    pub retracted_by: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetractedRow {
    pub id: i64,
    pub retracted_by: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventRow {
    pub id: i64,
    pub game_id: Option<i64>,
    pub board_id: i64,
    pub at_ms: i64,
    pub kind: String,
    pub ply: Option<i64>,
    pub detail: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkRow {
    pub id: i64,
    pub board_id: i64,
    pub at_ms: i64,
    pub connected: i64,
}

/// Where a kind's row comes from and when the hall's outbox takes it.
struct Shape {
    kind: RecordKind,
    /// The record table.
    table: &'static str,
    /// The view giving the kind's row as JSON (the backfill and a hall's snapshot read it too).
    view: &'static str,
    /// The row's fields, the table's columns of those names.
    fields: &'static [&'static str],
    /// The change that writes it: `INSERT`, `UPDATE`, `UPDATE OF column`.
    on: &'static str,
}

/// Every kind's [`Shape`], in [`RecordKind::ALL`]'s order.
fn shapes() -> [Shape; 8] {
    let shape = |kind, table, view, fields, on| Shape {
        kind,
        table,
        view,
        fields,
        on,
    };
    [
        shape(
            RecordKind::Board,
            "boards",
            "outbox_boards",
            fields_of::<BoardRow>(),
            "INSERT",
        ),
        shape(
            RecordKind::BoardNumber,
            "boards",
            "outbox_board_numbers",
            fields_of::<BoardNumberRow>(),
            "UPDATE OF number",
        ),
        shape(
            RecordKind::Game,
            "games",
            "outbox_games",
            fields_of::<GameRow>(),
            "INSERT",
        ),
        shape(
            RecordKind::GameUpdate,
            "games",
            "outbox_games",
            fields_of::<GameRow>(),
            "UPDATE",
        ),
        shape(
            RecordKind::Move,
            "moves",
            "outbox_moves",
            fields_of::<MoveRow>(),
            "INSERT",
        ),
        shape(
            RecordKind::MoveRetracted,
            "moves",
            "outbox_moves_retracted",
            fields_of::<RetractedRow>(),
            "UPDATE OF retracted_by",
        ),
        shape(
            RecordKind::Event,
            "events",
            "outbox_events",
            fields_of::<EventRow>(),
            "INSERT",
        ),
        shape(
            RecordKind::Link,
            "board_links",
            "outbox_links",
            fields_of::<LinkRow>(),
            "INSERT",
        ),
    ]
}

/// One schema object of the outbox: a view or a trigger, its name and the statement making it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboxObject {
    /// `view` or `trigger`, as `sqlite_master` names the type.
    pub kind: &'static str,
    pub name: String,
    pub sql: String,
}

/// The outbox's views (one per row shape), then its triggers (one per kind: `outbox_<kind>`,
/// writing the row into the outbox in the same transaction), all made from the row structs; the
/// store keeps the database's the same ([`super::schema::follow_outbox_shapes`]). The triggers
/// exist only in a database that joined a hall: elsewhere a write does no outbox work at all.
pub fn outbox_sql() -> Vec<OutboxObject> {
    let shapes = shapes();
    let mut out: Vec<OutboxObject> = Vec::new();
    for s in &shapes {
        if out.iter().any(|o| o.name == s.view) {
            continue;
        }
        let pairs: Vec<String> = s.fields.iter().map(|f| format!("'{f}', {f}")).collect();
        out.push(OutboxObject {
            kind: "view",
            name: s.view.to_owned(),
            sql: format!(
                "CREATE VIEW {} AS SELECT id, json_object({}) AS row FROM {}",
                s.view,
                pairs.join(", "),
                s.table
            ),
        });
    }
    for s in &shapes {
        let kind = s.kind.as_str();
        out.push(OutboxObject {
            kind: "trigger",
            name: format!("outbox_{kind}"),
            sql: format!(
                "CREATE TRIGGER outbox_{kind} AFTER {} ON {}\n\
                 BEGIN INSERT INTO outbox (at_ms, kind, row) SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER),\n    \
                 '{kind}', row FROM {} WHERE id = NEW.id;\nEND",
                s.on, s.table, s.view
            ),
        });
    }
    out
}

/// The fields of a row struct, as serde names them (what `deny_unknown_fields` accepts).
fn fields_of<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    let mut names = FieldNames(&[]);
    // The struct's deserializer asks for a struct with its fields and is refused at once.
    let _refused = T::deserialize(&mut names);
    names.0
}

/// A deserializer that only learns the fields a struct asks for.
struct FieldNames(&'static [&'static str]);

impl<'de> serde::Deserializer<'de> for &mut FieldNames {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom("only a struct's fields are read"))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0 = fields;
        Err(serde::de::Error::custom("fields read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
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
