//! The relay: what publishes the record while games are played.
//!
//! [`lichess`] pushes the round PGN to a Lichess broadcast round after each change.

pub mod lichess;
