//! Encoders for board-to-host frames (used by the emulator and by round-trip tests).
//!
//! Every frame is `id len_hi len_lo payload...` with the length counting the 3-byte header
//! (dgt-notes 1.2); payload bytes keep the high bit clear.

use super::{BatteryStatus, BusReply, BwTime, ClockTime, Frame, id};

/// BWTIME status bits (byte 9, dgt-notes 1.8), as seen on real captures.
pub mod status {
    pub const RUNNING: u8 = 0x01;
    /// The lever is high on the right-hand side.
    pub const LEVER_RIGHT_HIGH: u8 = 0x02;
    pub const BATTERY_LOW: u8 = 0x04;
    pub const LEFT_TURN: u8 = 0x08;
    pub const RIGHT_TURN: u8 = 0x10;
    pub const NO_CLOCK: u8 = 0x20;
}

/// Flags in a BWTIME hours byte.
pub mod hour_flags {
    pub const FLAG_FALLEN: u8 = 0x10;
    pub const TIME_PER_MOVE: u8 = 0x20;
    pub const FLAG_INDICATED: u8 = 0x40;
}

fn bcd(v: u8) -> u8 {
    ((v / 10) << 4) | (v % 10)
}

impl BwTime {
    /// Builds a BWTIME payload from both clocks (`*_hour_flags` from [`hour_flags`]) and the status
    /// byte (from [`status`]). Hours are clamped to 9, minutes and seconds to 59.
    pub fn from_parts(
        right: ClockTime,
        right_hour_flags: u8,
        left: ClockTime,
        left_hour_flags: u8,
        status: u8,
    ) -> BwTime {
        let side = |t: ClockTime, flags: u8| {
            [
                (t.hours.min(9) & 0x0f) | (flags & 0x70),
                bcd(t.minutes.min(59)),
                bcd(t.seconds.min(59)),
            ]
        };
        let r = side(right, right_hour_flags);
        let l = side(left, left_hour_flags);
        BwTime([r[0], r[1], r[2], l[0], l[1], l[2], status & 0x7f])
    }
}

impl ClockTime {
    /// Splits milliseconds into the h:mm:ss a clock shows (rounding down; at most 9:59:59).
    pub fn from_millis(ms: u64) -> ClockTime {
        let s = (ms / 1000).min(9 * 3600 + 59 * 60 + 59);
        ClockTime {
            hours: (s / 3600) as u8,
            minutes: ((s / 60) % 60) as u8,
            seconds: (s % 60) as u8,
        }
    }
}

fn header(out: &mut Vec<u8>, id: u8, payload_len: usize) {
    let total = payload_len + 3;
    out.push(id);
    out.push(((total >> 7) & 0x7f) as u8);
    out.push((total & 0x7f) as u8);
}

fn ascii7(s: &str) -> impl Iterator<Item = u8> + '_ {
    s.bytes().map(|b| b & 0x7f)
}

impl Frame {
    /// Appends the wire bytes of this frame to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Frame::BoardDump(dump) => {
                header(out, id::BOARD_DUMP, 64);
                out.extend(dump.0.iter().map(|b| b & 0x7f));
            }
            Frame::FieldUpdate { square, piece } => {
                header(out, id::FIELD_UPDATE, 2);
                out.push(square & 0x7f);
                out.push(piece & 0x7f);
            }
            Frame::BwTime(t) => {
                header(out, id::BWTIME, 7);
                out.extend(t.0.iter().map(|b| b & 0x7f));
            }
            Frame::SerialNr(s) => {
                header(out, id::SERIALNR, s.len());
                out.extend(ascii7(s));
            }
            Frame::LongSerialNr(s) => {
                header(out, id::LONG_SERIALNR, s.len());
                out.extend(ascii7(s));
            }
            Frame::Version { major, minor } => {
                header(out, id::VERSION, 2);
                out.push(major & 0x7f);
                out.push(minor & 0x7f);
            }
            Frame::Trademark(s) => {
                header(out, id::TRADEMARK, s.len());
                out.extend(ascii7(s));
            }
            Frame::Battery(BatteryStatus(b)) => {
                header(out, id::BATTERY_STATUS, b.len());
                out.extend(b.iter().map(|x| x & 0x7f));
            }
            Frame::EeMoves(data) => {
                header(out, id::EE_MOVES, data.len());
                out.extend(data.iter().map(|x| x & 0x7f));
            }
            Frame::BusAddress(addr) => {
                header(out, id::BUSADRES, 2);
                out.push(((addr >> 7) & 0x7f) as u8);
                out.push((addr & 0x7f) as u8);
            }
            Frame::Bus(BusReply {
                id,
                address,
                data,
                checksum_ok: _,
            }) => {
                // id len_hi len_lo addr_hi addr_lo data... checksum; length counts everything.
                let start = out.len();
                header(out, id.0, data.len() + 3);
                out.push(((address >> 7) & 0x7f) as u8);
                out.push((address & 0x7f) as u8);
                out.extend(data.iter().map(|x| x & 0x7f));
                let sum: u32 = out[start..].iter().map(|&b| u32::from(b)).sum();
                out.push((sum & 0x7f) as u8);
            }
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
