#![no_main]
//! Fuzzes the capture parser: both readers agree, and a parsed capture survives the writer.

use boardscribe_core::capture::{CaptureLines, CaptureWriter, parse_capture};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let streamed: Result<Vec<_>, _> = CaptureLines::new(data).collect();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse_capture(text);
    match (&parsed, &streamed) {
        (Ok(c), Ok(chunks)) => assert_eq!(&c.chunks, chunks),
        (Err(a), Err(b)) => assert_eq!(a.line(), b.line()),
        _ => panic!("readers disagree: {parsed:?} vs {streamed:?}"),
    }
    if let Ok(c) = parsed {
        let Ok(mut w) = CaptureWriter::new(Vec::new(), "dgt", &c.headers) else {
            return;
        };
        for chunk in &c.chunks {
            w.write_chunk(chunk).expect("parsed chunks are valid");
        }
        let out = String::from_utf8(w.into_inner()).expect("the writer writes ASCII");
        let back = parse_capture(&out).expect("the writer's output parses");
        assert_eq!(back.chunks, c.chunks);
    }
});
