#![no_main]
//! Fuzzes the ChessLink decoders: what `cut_reply` and `cut_command` decode re-encodes to exactly
//! the characters it came from (bit 7 masked off) and decodes again alike; a drop takes at least
//! one byte and never a later letter of its direction; `None` only for the start of a message.
//! `FrameReader<ChessLink>` on the stream fed in chunks (first byte = chunk size) accounts for
//! every byte, stays bounded and yields the same frames as fed at once.

use boardscribe_core::protocol::{
    FrameReader,
    chesslink::{
        ChessLink, Frame, MAX_COMMAND_LEN, MAX_REPLY_LEN, MessageError, cmd, cut_command,
        cut_reply, letter, strip_parity,
    },
};
use libfuzzer_sys::fuzz_target;

fn chars(bytes: &[u8]) -> Vec<u8> {
    bytes.iter().map(|&b| strip_parity(b)).collect()
}

/// The properties of one cut, whichever direction: `encode` gives a value's characters back.
fn check<T: Clone + PartialEq + std::fmt::Debug>(
    stream: &[u8],
    letters: &[u8],
    max_len: usize,
    cut: fn(&[u8]) -> Option<(Result<T, MessageError>, usize)>,
    encode: fn(&T) -> Vec<u8>,
) {
    let is_letter = |b: &u8| letters.contains(&strip_parity(*b));
    match cut(stream) {
        Some((Ok(value), used)) => {
            let again = encode(&value);
            assert_eq!(again, chars(&stream[..used]));
            assert_eq!(cut(&again), Some((Ok(value), used)));
        }
        Some((Err(e), skipped)) => {
            assert!((1..=stream.len()).contains(&skipped));
            assert!(!stream[1..skipped].iter().any(is_letter));
            assert!(!e.to_string().is_empty());
        }
        None => {
            assert!(stream.is_empty() || (stream.len() < max_len && is_letter(&stream[0])));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, stream)) = data.split_first() else {
        return;
    };
    check(
        stream,
        &letter::REPLIES,
        MAX_REPLY_LEN,
        cut_reply,
        Frame::to_bytes,
    );
    check(
        stream,
        &cmd::COMMANDS,
        MAX_COMMAND_LEN,
        cut_command,
        |c| c.to_bytes(),
    );

    let step = usize::from(control).max(1);
    let mut whole = FrameReader::with_wire(ChessLink);
    whole.push(stream);
    let expected: Vec<_> = std::iter::from_fn(|| whole.next_frame()).collect();
    let mut r = FrameReader::with_wire(ChessLink);
    let mut got = Vec::new();
    for chunk in stream.chunks(step) {
        r.push(chunk);
        while let Some(item) = r.next_frame() {
            got.push(item);
        }
        assert!(r.buffered() < MAX_REPLY_LEN);
    }
    let accounted: usize = got
        .iter()
        .map(|item| match item {
            Ok(f) => f.to_bytes().len(),
            Err(w) => w.skipped(),
        })
        .sum();
    assert_eq!(accounted + r.buffered(), stream.len());
    assert_eq!(r.buffered(), whole.buffered());
    let frames = |items: &[Result<Frame, _>]| {
        items
            .iter()
            .filter_map(|i| i.clone().ok())
            .collect::<Vec<_>>()
    };
    assert_eq!(frames(&got), frames(&expected));
});
