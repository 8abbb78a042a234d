#![no_main]
//! Fuzzes the Certabo decoders: `decode_body` on any bytes, and what it decodes re-encodes to a
//! body it decodes the same; `FrameReader<Certabo>` on the stream fed in chunks yields the same
//! frames as fed at once, each warning's count is the bytes it took, the buffer stays under
//! `MAX_PENDING` after each drain, and every frame re-encoded decodes to itself alone; the host
//! command reader takes any bytes for both kinds of LEDs and stays bounded.

use boardscribe_core::protocol::{
    FrameReader,
    certabo::{
        Certabo, CommandReader, Frame, LedKind, MAX_PENDING, RGB_COMMAND_LEN, decode_body,
        decode_command,
    },
};
use libfuzzer_sys::fuzz_target;

fn drain(r: &mut FrameReader<Certabo>) -> Vec<Result<Frame, String>> {
    let mut out = Vec::new();
    loop {
        let before = r.buffered();
        let Some(item) = r.next_frame() else {
            return out;
        };
        let used = before - r.buffered();
        assert!(used >= 1);
        out.push(item.map_err(|w| {
            assert_eq!(w.skipped(), used, "{w}");
            assert!(!w.to_string().is_empty());
            w.to_string()
        }));
    }
}

fn frames(items: &[Result<Frame, String>]) -> Vec<Frame> {
    items.iter().filter_map(|i| i.clone().ok()).collect()
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, stream)) = data.split_first() else {
        return;
    };
    if let Ok(f) = decode_body(stream) {
        let bytes = f.to_bytes();
        assert_eq!(decode_body(&bytes[1..bytes.len() - 3]), Ok(f));
    }

    let step = usize::from(control & 0x7f).max(1);
    let mut whole = FrameReader::with_wire(Certabo);
    whole.push(stream);
    let expected = drain(&mut whole);
    let mut r = FrameReader::with_wire(Certabo);
    let mut got = Vec::new();
    for chunk in stream.chunks(step) {
        r.push(chunk);
        got.extend(drain(&mut r));
        assert!(r.buffered() < MAX_PENDING);
    }
    assert_eq!(frames(&got), frames(&expected));
    for f in frames(&got) {
        let mut one = FrameReader::with_wire(Certabo);
        one.push(&f.to_bytes());
        assert_eq!(drain(&mut one), vec![Ok(f)]);
    }

    let kind = if control & 0x80 != 0 {
        LedKind::Rgb
    } else {
        LedKind::Single
    };
    let mut c = CommandReader::new(kind);
    for chunk in stream.chunks(step) {
        c.push(chunk);
        while let Some(item) = c.next_command() {
            if let Ok(cmd) = item {
                let bytes = cmd.to_bytes();
                let (again, used) = decode_command(&bytes, kind).expect("a whole command");
                assert_eq!((again, used), (Ok(cmd), bytes.len()));
            }
        }
        assert!(c.buffered() < RGB_COMMAND_LEN);
    }
});
