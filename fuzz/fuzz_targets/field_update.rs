#![no_main]
//! Fuzzes `parse_field_update`: no panic, and every decoded frame re-encodes to its input bytes.

use boardscribe_core::protocol::dgt::{Mode, parse_field_update};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    common::check(data, Mode::Single, parse_field_update);
});
