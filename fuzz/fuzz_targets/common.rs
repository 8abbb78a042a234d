//! Shared property for the single-decoder targets.

use boardscribe_core::protocol::dgt::{Frame, FrameError, Mode, PResult, parse_frame};

/// A decoded frame re-encodes to exactly the bytes it came from, and the generic decoder agrees.
pub fn check(data: &[u8], mode: Mode, parser: fn(&[u8]) -> PResult<'_, Frame>) {
    match parser(data) {
        Ok((rest, frame)) => {
            let used = &data[..data.len() - rest.len()];
            let mut again = frame.to_bytes();
            if let Frame::Bus(reply) = &frame {
                // The encoder always writes a good checksum; a bad one is reported, not fixed.
                let last = again.len() - 1;
                assert_eq!(reply.checksum_ok, again[last] == used[last]);
                again[last] = used[last];
            }
            assert_eq!(again, used);
            assert_eq!(parse_frame(data, mode), Ok((rest, frame)));
        }
        Err(nom::Err::Incomplete(_)) => {
            // Incomplete only while no byte received so far has bit 7 set after the id.
            assert!(data.iter().skip(1).all(|&b| b & 0x80 == 0));
        }
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => {
            let _: FrameError = e;
            assert!(!e.to_string().is_empty());
        }
    }
}
