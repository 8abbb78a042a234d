#![no_main]
//! Fuzzes the Chessnut decoders: `parse_report` re-encodes what it decodes to exactly the bytes
//! it came from, `Incomplete` only while a plausible header waits for its payload; the same for
//! commands; `FrameReader` on the `Chessnut` and `ChessnutCommands` wires, fed in chunks,
//! accounts for every byte, stays bounded, and yields the same frames as fed at once; the USB
//! helpers never panic.

use boardscribe_core::protocol::{
    DecodeWarning, FrameReader, Wire,
    chessnut::{
        Chessnut, ChessnutCommands, Frame, MAX_PAYLOAD, MAX_REPORT, ReportError, decode_command,
        parse_report, trim_report,
        usb::{application_usage_pages, is_chessnut},
    },
};
use libfuzzer_sys::fuzz_target;

fn check_report(data: &[u8]) {
    match parse_report(data) {
        Ok((rest, frame)) => {
            let used = &data[..data.len() - rest.len()];
            assert_eq!(frame.to_bytes(), used);
            if let Frame::Position(p) = &frame {
                let pieces = p.placement.0.iter().flatten().count();
                assert_eq!(p.placement.to_board().iter().count(), pieces);
            }
        }
        Err(nom::Err::Incomplete(_)) => match data {
            [] | [_] => {}
            [id, len, rest @ ..] => {
                assert!(*id != 0 && (1..=MAX_PAYLOAD).contains(&usize::from(*len)));
                assert!(rest.len() < usize::from(*len));
            }
        },
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => {
            assert!(matches!(
                e,
                ReportError::PieceCode { .. } | ReportError::NotAReport { .. }
            ));
            assert!(!e.to_string().is_empty());
        }
    }
}

/// Feeds `stream` at once and in chunks of `step`; both ways agree and every byte is counted.
fn check_reader<W: Wire + Copy>(
    wire: W,
    stream: &[u8],
    step: usize,
    len_of: impl Fn(&W::Frame) -> usize,
) where
    W::Frame: Clone + PartialEq + std::fmt::Debug,
{
    let mut whole = FrameReader::with_wire(wire);
    whole.push(stream);
    let expected: Vec<_> = std::iter::from_fn(|| whole.next_frame()).collect();
    let mut r = FrameReader::with_wire(wire);
    let mut got = Vec::new();
    for chunk in stream.chunks(step) {
        r.push(chunk);
        while let Some(item) = r.next_frame() {
            got.push(item);
        }
        assert!(r.buffered() < MAX_REPORT);
    }
    let accounted: usize = got
        .iter()
        .map(|item| match item {
            Ok(f) => len_of(f),
            Err(w) => DecodeWarning::skipped(w),
        })
        .sum();
    assert_eq!(accounted + r.buffered(), stream.len());
    let frames = |items: &[Result<W::Frame, DecodeWarning>]| {
        items
            .iter()
            .filter_map(|i| i.clone().ok())
            .collect::<Vec<_>>()
    };
    assert_eq!(frames(&got), frames(&expected));
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, stream)) = data.split_first() else {
        return;
    };
    check_report(stream);
    if let [id, len, payload @ ..] = stream
        && payload.len() == usize::from(*len)
    {
        let c = decode_command(*id, payload);
        assert_eq!(c.to_bytes(), stream);
    }
    let trimmed = trim_report(stream);
    assert!(stream.starts_with(trimmed));
    if let [id, len, ..] = stream
        && *id != 0
    {
        assert!(trimmed.len() <= 2 + usize::from(*len));
    }

    let step = usize::from(control & 0x7f).max(1);
    check_reader(Chessnut, stream, step, |f| f.to_bytes().len());
    check_reader(ChessnutCommands, stream, step, |c| c.to_bytes().len());

    let _ = application_usage_pages(stream);
    if let [a, b, c, d, e, f, ..] = stream {
        let _ = is_chessnut(
            u16::from_le_bytes([*a, *b]),
            u16::from_le_bytes([*c, *d]),
            u16::from_le_bytes([*e, *f]),
        );
    }
});
