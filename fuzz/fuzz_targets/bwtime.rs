#![no_main]
//! Fuzzes `parse_bwtime`: round trip, and the accessors agree with `is_plausible`.

use boardscribe_core::protocol::dgt::{Frame, Mode, parse_bwtime};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    common::check(data, Mode::Single, parse_bwtime);
    if let Ok((_, Frame::BwTime(t))) = parse_bwtime(data) {
        if t.is_plausible() {
            for side in [t.left(), t.right()] {
                assert!(side.hours <= 9 && side.minutes <= 59 && side.seconds <= 59);
            }
            assert!(!t.is_ack());
        }
        assert_eq!(t.ack().is_some(), t.is_ack());
    }
});
