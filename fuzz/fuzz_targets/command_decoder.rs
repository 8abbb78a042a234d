#![no_main]
//! Fuzzes `decode_command` and `CommandReader`: a decoded command re-encodes to its bytes.

use boardscribe_core::protocol::dgt::{CommandReader, decode_command};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((command, used)) = decode_command(data) {
        assert_eq!(command.to_bytes(), &data[..used]);
    }
    let mut r = CommandReader::new();
    r.push(data);
    let mut steps = 0;
    while r.next_command().is_some() {
        steps += 1;
        assert!(steps <= data.len());
    }
    assert!(r.buffered() <= 260);
});
