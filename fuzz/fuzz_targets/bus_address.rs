#![no_main]
//! Fuzzes `parse_bus_address`: no panic, and every decoded frame re-encodes to its input bytes.

use boardscribe_core::protocol::dgt::{Mode, parse_bus_address};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    common::check(data, Mode::Single, parse_bus_address);
});
