//! The relay: live state, Server-Sent Events, round PGN for broadcasts, the live page and the
//! arbiter's admin API, over HTTP (axum).
//!
//! Flow: the daemon feeds the [`hub::Hub`] (connections, durable events, clocks); the
//! [`server::router`] serves the hub's snapshots and events, and reads PGN from SQLite through a
//! read-only connection of its own (cached on `PRAGMA data_version`), off the async threads. Admin
//! decisions go to the [`crate::decider`], which has a writing connection of its own to the
//! functions of [`crate::store`]; SQLite's busy timeout serialises them with the recording
//! writer. A decision that changes the moves of a game a board is recording (resume, correct) is
//! handed to that board's task through its desk ([`crate::decider::desk`], which the hub keeps),
//! which applies it between two reads of its port; a decision another process (the CLI) takes
//! on the database is shown live too ([`outside`]). The pushed outputs (the Lichess push,
//! LiveChess-style folders) are [`crate::broadcast`]'s; the delayed hub spectators follow
//! ([`delayed`]) is one of them. [`listen`] accepts the connections under limits that a
//! flood cannot pass (timeouts, a cap keeping descriptors for the boards), and the server's guard
//! caps request bodies and sets the security headers on every answer.

pub mod alerts;
pub mod console;
pub mod delayed;
pub mod hub;
pub mod listen;
pub mod live;
pub mod outside;
pub mod page;
pub mod server;
pub mod standings_page;
pub mod svg;
pub mod view;

pub use self::{
    hub::{Hub, LiveEvent},
    listen::HttpLimits,
    listen::serve,
    live::BoardSnapshot,
    server::{RelayError, RelayExtras, Token, router, router_with},
};
