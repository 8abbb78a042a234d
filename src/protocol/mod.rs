//! Protocol decoding: bytes to typed frames, commands to bytes. Pure; no I/O.

pub mod dgt;
