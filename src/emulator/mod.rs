//! Emulated boards driven by game records.
