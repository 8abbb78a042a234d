#![no_main]
//! Fuzzes `parse_ee_tokens`: no panic; a decoded stream re-encodes to exactly its input bytes;
//! an error names an offset inside the input, and the tokens before the failing one decode alone.

use boardscribe_core::protocol::dgt::{encode_ee_tokens, parse_ee_tokens};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match parse_ee_tokens(data) {
        Ok(tokens) => {
            let mut again = Vec::new();
            encode_ee_tokens(&tokens, &mut again);
            assert_eq!(again, data);
        }
        Err(e) => {
            let offset = e.offset();
            assert!(offset < data.len());
            assert!(!e.to_string().is_empty());
            // The failing token starts at most two bytes before the offset; all before it is good.
            assert!(
                (offset.saturating_sub(2)..=offset).any(|s| parse_ee_tokens(&data[..s]).is_ok())
            );
        }
    }
});
