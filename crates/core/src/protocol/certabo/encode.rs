//! Frames back to bytes, as the board writes them: `:`, numbers separated by one space, then
//! ` \r\n` (Certabo's `usbtool.py` strips exactly that); an LED reply as its letter and CR LF.
//! The emulator sends these; tests feed them to the decoder.

use super::{Frame, START};

impl Frame {
    /// The bytes the board sends for this frame.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(1300);
        match self {
            Frame::Pieces(record) => numbers(&mut out, record.numbers()),
            Frame::Occupancy(o) => numbers(&mut out, o.0.iter().copied()),
            Frame::LedAck(ack) => out.extend([ack.byte(), b'\r', b'\n']),
        }
        out
    }
}

fn numbers(out: &mut Vec<u8>, numbers: impl Iterator<Item = u8>) {
    out.push(START);
    for (i, n) in numbers.enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(n.to_string().as_bytes());
    }
    out.extend(b" \r\n");
}
