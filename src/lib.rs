//! boardscribe: electronic game boards in, trustworthy tournament records out.
//!
//! The data flow is one way:
//! `device` (serial port, capture replay or emulator) → `protocol` (nom frame decoders) →
//! `sensor` (board state, orientation) → `tracker` (moves, takebacks, revisions over the
//! [`game::GameKind`] interface) → `store` (SQLite) → `export` (PGN, JSON) and `relay` (HTTP:
//! round PGN, live state over SSE, the live page, the admin API).
//! `decider` takes an arbiter's decisions, round starts and pairings for the admin API, the
//! console and the event node's commands, apart from HTTP (its refusals carry a kind, no status).
//! `pipeline` wires one board's bytes through all of it; `replay` and `run` share it.
//! `bus` is DGT bus mode: a master polling a chain of boards on one port, whose replies fold
//! into one pipeline per board.
//! Everything up to the tracker is pure: time is an argument ([`Millis`]), never read here.
//! Around it: `config` (the venue's `boardscribe.toml` → a validated `Config`),
//! `device::discover` (serial ports from sysfs, matched to configured boards), `notify`
//! (systemd readiness, status and watchdog) and `text` (no control character into the record).
#![forbid(unsafe_code)]

/// Every binary built on this crate (the daemon, its tests and benches) allocates through
/// mimalloc: see docs/benchmarks.md, "Seventh step".
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod broadcast;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod daemon;
pub mod decider;
pub mod device;
pub mod export;
pub mod fonts;
pub mod lang;
pub mod metrics;
pub mod notify;
pub mod pairings;
pub mod recorder;
pub mod relay;
pub mod replay;
pub mod services;
pub mod standings;
pub mod store;
pub mod text;
pub mod words;

/// The pure floors, from `boardscribe-core`, under the names the daemon has always used.
pub use boardscribe_core::{
    Millis, arbiter, boards, bus, capture, game, kind, memory, phrase, pipeline, protocol, sensor,
    tracker,
};
/// The emulated boards (`boardscribe-emulator`): `demo`, the tests and the benches play on them.
pub use boardscribe_emulator as emulator;
