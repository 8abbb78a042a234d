//! Reading the file into the raw tables with every mistake of form found in one pass.
//!
//! serde stops at the first key it cannot read. Flow: [`read_raw`] parses the text into TOML's
//! spanned tree first (a syntax error ends it there: nothing after it can be trusted), then
//! deserializes the raw tables from the tree; each time serde refuses a key (unknown, or a
//! value of the wrong type) the mistake is recorded with its key path and place, that key is
//! taken out of the tree, and the tables are read again, until they read. The keys taken out
//! are remembered, so that a required key dropped for its type is not reported missing too.
//! What is left is checked value by value as before (`check`).

use serde::Deserialize;
use toml::de::{DeTable, DeValue};

use super::*;

/// A key taken out of the tree: the table it was in (by span) and its name.
pub(super) type Dropped = (Range<usize>, String);

/// The raw tables of `text`, with every key serde refused reported to `ck` and left out;
/// `None` after a syntax error (reported too).
pub(super) fn read_raw(text: &str, ck: &mut Checker<'_>) -> Option<RawConfig> {
    let mut tree = match DeTable::parse(text) {
        Ok(tree) => tree,
        Err(e) => {
            let at = e.span().map_or(0, |s| s.start);
            ck.at(at..at, serde_message(e.message()));
            return None;
        }
    };
    loop {
        let error = match RawConfig::deserialize(toml::de::Deserializer::from(tree.clone())) {
            Ok(raw) => return Some(raw),
            Err(e) => e,
        };
        let message = serde_message(error.message());
        let Some(at) = error.span().map(|s| s.start) else {
            ck.at(0..0, message);
            return None;
        };
        let span = tree.span();
        let Some((path, table)) = drop_key_at(tree.get_mut(), span, at) else {
            // Nowhere to take it out: report it, and stop reading (nothing more is sure).
            ck.at(at..at, message);
            return None;
        };
        // Messages that name the key keep their words; the others get its path first.
        let message = if message.starts_with("unknown key") {
            message
        } else {
            format!("{}: {message}", path.join("."))
        };
        ck.at(at..at, message);
        if let Some(key) = path.last() {
            ck.dropped.push((table, key.clone()));
        }
    }
}

/// Takes out of `table` (spanning `span`) the deepest key whose name or value holds byte `at`;
/// returns the key's path and the span of the table it was in.
fn drop_key_at(
    table: &mut DeTable<'_>,
    span: Range<usize>,
    at: usize,
) -> Option<(Vec<String>, Range<usize>)> {
    let holds = |s: Range<usize>| s.start <= at && at < s.end.max(s.start + 1);
    let mut here = None;
    for (key, value) in table.iter_mut() {
        let value_span = value.span();
        let deeper = match value.get_mut() {
            DeValue::Table(inner) => drop_key_at(inner, value_span.clone(), at),
            DeValue::Array(items) => items.iter_mut().find_map(|item| {
                let item_span = item.span();
                match item.get_mut() {
                    DeValue::Table(inner) => drop_key_at(inner, item_span, at),
                    _ => None,
                }
            }),
            _ => None,
        };
        if let Some((mut path, table)) = deeper {
            path.insert(0, key.get_ref().to_string());
            return Some((path, table));
        }
        if here.is_none() && (holds(key.span()) || holds(value_span)) {
            here = Some(key.clone());
        }
    }
    let key = here?;
    table.remove(&key);
    Some((vec![key.get_ref().to_string()], span))
}
