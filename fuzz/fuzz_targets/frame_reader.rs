#![no_main]
//! Fuzzes `FrameReader` on a whole stream fed in chunks: no panic, every byte accounted for,
//! the buffer bounded after each drain, and the same frames (and bytes skipped) as feeding it
//! all at once. Warnings may split differently: a garbage run cut by a chunk boundary is two.

use boardscribe_core::protocol::{
    FrameReader,
    dgt::{MAX_FRAME_LEN, Mode},
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&control, stream)) = data.split_first() else {
        return;
    };
    let mode = if control & 0x80 != 0 {
        Mode::Bus
    } else {
        Mode::Single
    };
    let step = usize::from(control & 0x7f).max(1);

    let mut whole = FrameReader::new(mode);
    whole.push(stream);
    let expected: Vec<_> = std::iter::from_fn(|| whole.next_frame()).collect();

    let mut r = FrameReader::new(mode);
    let mut got = Vec::new();
    for chunk in stream.chunks(step) {
        r.push(chunk);
        while let Some(item) = r.next_frame() {
            got.push(item);
        }
        assert!(r.buffered() <= MAX_FRAME_LEN);
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
    let frames = |items: &[Result<_, _>]| {
        items
            .iter()
            .filter_map(|i| i.clone().ok())
            .collect::<Vec<_>>()
    };
    assert_eq!(frames(&got), frames(&expected));
});
