#![no_main]
//! Fuzzes the iChessOne decoders: what the wire cuts re-encodes to exactly the bytes it came
//! from; a drop takes at least one byte and never a later `=`; `None` only for the start of a
//! message. `cut_command` re-encodes what it reads. `FrameReader<IChessOne>` on the stream fed
//! in chunks (first byte = chunk size) accounts for every byte, stays bounded and yields the
//! same frames as fed at once (garbage may be dropped in other pieces).

use boardscribe_core::protocol::{
    FrameReader, Wire,
    ichessone::{Frame, IChessOne, LED_COMMAND_LEN, START, cut_command},
};
use libfuzzer_sys::fuzz_target;

/// The longest message: `=p` and 32 square bytes.
const MAX_LEN: usize = 34;

fuzz_target!(|data: &[u8]| {
    let Some((&control, stream)) = data.split_first() else {
        return;
    };
    match IChessOne.cut(stream) {
        Some((Ok(frame), used)) => assert_eq!(frame.to_bytes(), stream[..used]),
        Some((Err(w), skipped)) => {
            assert!((1..=stream.len()).contains(&skipped));
            assert_eq!(w.skipped(), skipped);
            assert!(!stream[1..skipped].contains(&START));
        }
        None => assert!(stream.is_empty() || (stream[0] == START && stream.len() < MAX_LEN)),
    }
    match cut_command(stream) {
        Some((Ok(command), used)) => assert_eq!(command.to_bytes(), stream[..used]),
        Some((Err(b), used)) => assert_eq!((b, used), (stream[0], 1)),
        None => assert!(stream.len() < LED_COMMAND_LEN),
    }

    let step = usize::from(control).max(1);
    let mut whole = FrameReader::with_wire(IChessOne);
    whole.push(stream);
    let expected: Vec<_> = std::iter::from_fn(|| whole.next_frame()).collect();
    let mut r = FrameReader::with_wire(IChessOne);
    let mut got = Vec::new();
    for chunk in stream.chunks(step) {
        r.push(chunk);
        while let Some(item) = r.next_frame() {
            got.push(item);
        }
        assert!(r.buffered() < MAX_LEN);
    }
    let accounted: usize = got
        .iter()
        .map(|item| match item {
            Ok(f) => f.to_bytes().len(),
            Err(w) => w.skipped(),
        })
        .sum();
    assert_eq!(accounted + r.buffered(), stream.len());
    // Garbage may be dropped in other pieces when it comes in pieces; the frames are the same.
    let frames = |items: &[Result<Frame, _>]| {
        items
            .iter()
            .filter_map(|i| i.clone().ok())
            .collect::<Vec<_>>()
    };
    assert_eq!(frames(&got), frames(&expected));
});
