//! boardscribe: electronic game boards in, trustworthy tournament records out.
//!
//! The data flow is one way:
//! `device` (serial port, capture replay or emulator) → `protocol` (nom frame decoders) →
//! `sensor` (board state, orientation) → `tracker` (moves, takebacks, revisions over the
//! [`game::GameKind`] interface) → `store` (SQLite) → `export` (PGN, JSON) and `relay` (HTTP:
//! round PGN, live state over SSE, the live page, the admin API).
//! `pipeline` wires one board's bytes through all of it; `replay` and `run` share it.
//! `bus` is DGT bus mode: a master polling a chain of boards on one port, whose replies fold
//! into one pipeline per board.
//! Everything up to the tracker is pure: time is an argument ([`Millis`]), never read here.
//! Around it: `config` (the venue's `boardscribe.toml` → a validated `Config`),
//! `device::discover` (serial ports from sysfs, matched to configured boards) and `notify`
//! (systemd readiness, status and watchdog).
#![forbid(unsafe_code)]

pub mod arbiter;
pub mod bus;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod device;
pub mod emulator;
pub mod export;
pub mod game;
pub mod metrics;
pub mod notify;
pub mod pairings;
pub mod pipeline;
pub mod protocol;
pub mod relay;
pub mod sensor;
pub mod store;
pub mod tracker;

/// Milliseconds on a stream's clock: since the Unix epoch for live boards, since the start of
/// the capture for replays.
pub type Millis = u64;
