//! The tracker.
pub mod event;
