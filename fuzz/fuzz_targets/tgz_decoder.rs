#![no_main]
//! Fuzzes the TGZ-1 decoders: `parse_frame` and each message parser re-encode what they decode
//! to exactly the bytes they came from, `Incomplete` only while no byte after the id has bit 7
//! set, range-checked fields stay in range; and `FrameReader<Tgz>` on the stream fed in chunks
//! accounts for every byte, stays bounded and yields the same frames as feeding it at once.

use boardscribe_core::protocol::{
    FrameReader,
    dgt::{FrameError, MAX_FRAME_LEN, PResult},
    tgz::{
        Frame, LOCATIONS, MAX_COUNT, MAX_TUZ_PIT, Tgz, parse_board_dump, parse_frame,
        parse_pit_update, parse_tuz_update,
    },
};
use libfuzzer_sys::fuzz_target;

fn check(data: &[u8], parser: fn(&[u8]) -> PResult<'_, Frame>) {
    match parser(data) {
        Ok((rest, frame)) => {
            let used = &data[..data.len() - rest.len()];
            assert_eq!(frame.to_bytes(), used);
            assert_eq!(parse_frame(data), Ok((rest, frame.clone())));
            match frame {
                Frame::BoardDump(d) => {
                    assert!(d.counts.iter().all(|&c| u16::from(c) <= MAX_COUNT));
                    assert!(d.tuz.iter().all(|&t| t <= MAX_TUZ_PIT));
                }
                Frame::PitUpdate { location, count } => {
                    assert!(usize::from(location) < LOCATIONS && u16::from(count) <= MAX_COUNT);
                }
                Frame::TuzUpdate { pit, .. } => assert!(pit <= MAX_TUZ_PIT),
                _ => {}
            }
        }
        Err(nom::Err::Incomplete(_)) => {
            assert!(data.iter().skip(1).all(|&b| b & 0x80 == 0));
        }
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => {
            let _: FrameError = e;
            assert!(!e.to_string().is_empty());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, stream)) = data.split_first() else {
        return;
    };
    for parser in [
        parse_frame,
        parse_board_dump,
        parse_pit_update,
        parse_tuz_update,
    ] {
        check(stream, parser);
    }

    let step = usize::from(control & 0x7f).max(1);
    let mut whole = FrameReader::with_wire(Tgz);
    whole.push(stream);
    let expected: Vec<_> = std::iter::from_fn(|| whole.next_frame()).collect();
    let mut r = FrameReader::with_wire(Tgz);
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
    let frames = |items: &[Result<Frame, _>]| {
        items
            .iter()
            .filter_map(|i| i.clone().ok())
            .collect::<Vec<_>>()
    };
    assert_eq!(frames(&got), frames(&expected));
});
