//! Encoders for TGZ-1 board-to-host frames (used by the emulator and by round-trip tests).
//!
//! Every frame is `id len_hi len_lo payload...` (length counting the header); counts go as two
//! 7-bit bytes, high first. The DGT messages are encoded by [`crate::protocol::dgt`].

use super::Side;
use super::{Frame, id};
use crate::protocol::dgt;

fn header(out: &mut Vec<u8>, id: u8, payload_len: usize) {
    let total = payload_len + 3;
    out.push(id);
    out.push(((total >> 7) & 0x7f) as u8);
    out.push((total & 0x7f) as u8);
}

fn pair(out: &mut Vec<u8>, n: u8) {
    out.push(n >> 7);
    out.push(n & 0x7f);
}

impl Frame {
    /// Appends the wire bytes of this frame to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Frame::BoardDump(d) => {
                header(out, id::BOARD_DUMP, 42);
                for &n in &d.counts {
                    pair(out, n);
                }
                out.extend(d.tuz.iter().map(|t| t & 0x7f));
            }
            Frame::PitUpdate { location, count } => {
                header(out, id::PIT_UPDATE, 3);
                out.push(location & 0x7f);
                pair(out, *count);
            }
            Frame::TuzUpdate { player, pit } => {
                header(out, id::TUZ_UPDATE, 2);
                out.push(u8::from(*player == Side::Black));
                out.push(pit & 0x7f);
            }
            Frame::BwTime(t) => dgt::Frame::BwTime(*t).encode(out),
            Frame::SerialNr(s) => dgt::Frame::SerialNr(s.clone()).encode(out),
            Frame::Trademark(s) => dgt::Frame::Trademark(s.clone()).encode(out),
            Frame::Version { major, minor } => dgt::Frame::Version {
                major: *major,
                minor: *minor,
            }
            .encode(out),
            Frame::Unknown { id, payload } => {
                header(out, id.0, payload.len());
                out.extend(payload.iter().map(|x| x & 0x7f));
            }
        }
    }

    /// The wire bytes of this frame.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}
