//! Exports from the store: PGN and JSON.
