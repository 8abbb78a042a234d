//! boardscribe-core: the pure floors of boardscribe, from a board's bytes to the events of its
//! record. Nothing here does I/O, reads a clock or logs: time is an argument ([`Millis`]), and
//! what is worth a log line is a value the edge logs ([`pipeline::Notice`]).
//!
//! The flow is one way:
//! `protocol` (nom frame decoders, the wire's commands) → `sensor` (board state, orientation,
//! clock readings) → `tracker` (moves, takebacks, revisions, irregularities witnessed, over the
//! [`game::GameKind`] interface) → `arbiter` (the Laws: penalties, results, claims) and
//! `pipeline`, which wires one board's bytes through all of it. `bus` is DGT bus mode: a master
//! polling a chain of boards, whose replies fold into one pipeline per board. `memory` reads a
//! board's EEPROM log back into games, and `capture` is the capture file format (timestamped raw
//! bytes, read and written as text). `kind` is the one list of the kinds of board read (a
//! vendor's protocol and its line), which only the pipeline's boards and the edges know;
//! `boards` turns a kind into the pipeline board that reads it.
//! The daemon crate (`boardscribe`) holds the edges: ports, the store, exports, the relay.
#![forbid(unsafe_code)]

pub mod arbiter;
pub mod boards;
pub mod bus;
pub mod capture;
pub mod game;
pub mod kind;
pub mod memory;
pub mod phrase;
pub mod pipeline;
pub mod protocol;
pub mod sensor;
pub mod tracker;

/// Milliseconds on a stream's clock: since the Unix epoch for live boards, since the start of
/// the capture for replays.
pub type Millis = u64;
