//! DGT_MSG_BWTIME (0x8d, 10 bytes): both clocks and a status byte, or a clock ACK
//! (dgt-notes 1.8, 1.9). The payload is kept raw in [`BwTime`]; the accessors here decode it.
//!
//! Per clock side: hours byte (low nibble binary hours, bits 4-6 flags from
//! [`super::hour_flags`]), minutes BCD, seconds BCD. Right side first, then left, then status.

use nom::{Parser, bytes::complete::take, combinator::map_res};

use super::{
    BwTime, ClockTime, Frame, id,
    parse::{FrameError, Mode, PResult, run_payload, split_frame_for},
    status,
};

fn bwtime(p: &[u8]) -> PResult<'_, BwTime> {
    map_res(take(7usize), |s: &[u8]| <[u8; 7]>::try_from(s).map(BwTime)).parse(p)
}

pub(crate) fn payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, bwtime).map(Frame::BwTime)
}

/// Decodes one BWTIME frame from the start of `i`.
pub fn parse_bwtime(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::BWTIME, Mode::Single)?;
    let frame = payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}

const fn from_bcd(b: u8) -> u8 {
    (b >> 4) * 10 + (b & 0x0f)
}

const fn bcd_ok(b: u8) -> bool {
    b >> 4 <= 5 && b & 0x0f <= 9
}

/// [`BCD59`]'s mark of a byte that is no BCD value up to 59 (set in no value up to 59).
const NOT_BCD59: u8 = 0x80;

/// Each byte's BCD value when it is valid BCD up to 59 ([`bcd_ok`]), else [`NOT_BCD59`].
static BCD59: [u8; 256] = bcd59_table();

const fn bcd59_table() -> [u8; 256] {
    let mut t = [NOT_BCD59; 256];
    let mut b = 0;
    while b < 256 {
        if bcd_ok(b as u8) {
            t[b] = from_bcd(b as u8);
        }
        b += 1;
    }
    t
}

fn side(b: &[u8]) -> ClockTime {
    ClockTime {
        hours: b[0] & 0x0f,
        minutes: from_bcd(b[1] & 0x7f),
        seconds: from_bcd(b[2] & 0x7f),
    }
}

impl BwTime {
    /// The right-hand clock (payload bytes 0-2). Meaningless if [`Self::is_plausible`] is false.
    pub fn right(&self) -> ClockTime {
        side(&self.0[0..3])
    }

    /// The left-hand clock (payload bytes 3-5).
    pub fn left(&self) -> ClockTime {
        side(&self.0[3..6])
    }

    /// Flag bits of the right hours byte (see [`super::hour_flags`]).
    pub fn right_flags(&self) -> u8 {
        self.0[0] & 0x70
    }

    /// Flag bits of the left hours byte (see [`super::hour_flags`]).
    pub fn left_flags(&self) -> u8 {
        self.0[3] & 0x70
    }

    /// The status byte (see [`super::status`]).
    pub fn status(&self) -> u8 {
        self.0[6]
    }

    /// Status D0: the clock is running.
    pub fn running(&self) -> bool {
        self.status() & status::RUNNING != 0
    }

    /// Status D1: the lever is high on the right-hand side.
    pub fn lever_right_high(&self) -> bool {
        self.status() & status::LEVER_RIGHT_HIGH != 0
    }

    /// Status D2: the clock shows a low battery.
    pub fn battery_low(&self) -> bool {
        self.status() & status::BATTERY_LOW != 0
    }

    /// Status D5: no clock connected, the times are invalid.
    pub fn no_clock(&self) -> bool {
        self.status() & status::NO_CLOCK != 0
    }

    /// A clock ACK rather than times: low nibble 0x0a in either hours byte (dgt-notes 1.9).
    pub fn is_ack(&self) -> bool {
        self.0[0] & 0x0f == 0x0a || self.0[3] & 0x0f == 0x0a
    }

    /// All seven bytes zero: the "null message" some firmware sends after a clock command.
    pub fn is_null(&self) -> bool {
        self.0 == [0; 7]
    }

    /// Both sides read as real times: hours at most 9, minutes and seconds valid BCD up to 59.
    pub fn is_plausible(&self) -> bool {
        self.plausible_millis().is_some()
    }

    /// Both times in milliseconds, `(right, left)` (payload bytes 0-2, then 3-5), when the frame
    /// [`Self::is_plausible`]: what [`Self::right`] and [`Self::left`] give through
    /// [`ClockTime::to_millis`], each byte decoded once through a table (a clock sends a frame a
    /// second and one per press). An ACK is never plausible (its hours nibble is 0x0a).
    pub fn plausible_millis(&self) -> Option<(u64, u64)> {
        let b = &self.0;
        let (m1, s1) = (BCD59[usize::from(b[1])], BCD59[usize::from(b[2])]);
        let (m2, s2) = (BCD59[usize::from(b[4])], BCD59[usize::from(b[5])]);
        let (h1, h2) = (b[0] & 0x0f, b[3] & 0x0f);
        if (m1 | s1 | m2 | s2) & NOT_BCD59 != 0 || h1 > 9 || h2 > 9 {
            return None;
        }
        // At most 9:59:59, 35,999,000 ms: within a u32.
        let ms = |h: u8, m: u8, s: u8| {
            u64::from((u32::from(h) * 3600 + u32::from(m) * 60 + u32::from(s)) * 1000)
        };
        Some((ms(h1, m1, s1), ms(h2, m2, s2)))
    }

    /// The four ACK bytes (dgt-notes 1.9), if this is an ACK: `[ack0, ack1, ack2, ack3]`;
    /// ack0 0x10 ok / 0x40 error, ack1 the acknowledged command (bit 7: an automatic ack).
    pub fn ack(&self) -> Option<[u8; 4]> {
        if !self.is_ack() {
            return None;
        }
        // Payload index = absolute byte index - 3.
        let b = |abs: usize| self.0[abs - 3];
        Some([
            (b(4) & 0x7f) | ((b(6) << 3) & 0x80),
            (b(5) & 0x7f) | ((b(6) << 2) & 0x80),
            (b(7) & 0x7f) | ((b(3) << 3) & 0x80),
            (b(8) & 0x7f) | ((b(3) << 2) & 0x80),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_frame_fields() {
        // `8d 00 0a 20 03 02 20 03 01 13` from 1.capture: after the lever, increment shown.
        let t = BwTime([0x20, 0x03, 0x02, 0x20, 0x03, 0x01, 0x13]);
        assert_eq!(
            t.right(),
            ClockTime {
                hours: 0,
                minutes: 3,
                seconds: 2
            }
        );
        assert_eq!(
            t.left(),
            ClockTime {
                hours: 0,
                minutes: 3,
                seconds: 1
            }
        );
        assert_eq!(t.right_flags(), super::super::hour_flags::TIME_PER_MOVE);
        assert!(t.running() && t.lever_right_high() && !t.no_clock());
        assert!(t.is_plausible() && !t.is_ack() && !t.is_null());
        assert_eq!(t.ack(), None);
    }

    #[test]
    fn bcd_decoding_and_plausibility() {
        let t = BwTime([0x09, 0x59, 0x58, 0x01, 0x30, 0x00, 0x00]);
        assert_eq!(
            t.right(),
            ClockTime {
                hours: 9,
                minutes: 59,
                seconds: 58
            }
        );
        assert_eq!(
            t.left(),
            ClockTime {
                hours: 1,
                minutes: 30,
                seconds: 0
            }
        );
        assert!(t.is_plausible());
        assert!(!BwTime([0x00, 0x60, 0x00, 0, 0, 0, 0]).is_plausible());
        assert!(!BwTime([0x00, 0x0a, 0x00, 0, 0, 0, 0]).is_plausible());
        assert!(!BwTime([0x0b, 0x00, 0x00, 0, 0, 0, 0]).is_plausible());
        assert!(BwTime([0; 7]).is_null());
    }

    #[test]
    fn ack_decoding() {
        // Version ack from a DGT3000: ack0 0x10, ack1 0x09 (VERSION), ack2 0x20 = v2.0.
        // Byte 3 carries bit 7 of ack2 and ack3 in its bits 4 and 5; here both zero.
        let t = BwTime([0x0a, 0x10, 0x09, 0x0a, 0x20, 0x00, 0x00]);
        assert!(t.is_ack());
        assert_eq!(t.ack(), Some([0x10, 0x09, 0x20, 0x00]));
        // An automatic "button" ack: ack1 0x88 needs bit 7 from byte 6 bit 5.
        let t = BwTime([0x0a, 0x10, 0x08, 0x2a, 0x00, 0x31, 0x00]);
        assert_eq!(t.ack(), Some([0x10, 0x88, 0x00, 0x31]));
        assert!(!t.is_plausible());
    }

    /// Both sides of `bytes` readable, side by side: hours a digit, minutes and seconds BCD up
    /// to 59 (the per-side reading's condition, apart from the table `is_plausible` reads).
    fn both_sides_readable(bytes: &[u8; 7]) -> bool {
        let side_ok = |s: &[u8]| s[0] & 0x0f <= 9 && bcd_ok(s[1]) && bcd_ok(s[2]);
        side_ok(&bytes[0..3]) && side_ok(&bytes[3..6])
    }

    proptest::proptest! {
        /// The table-read times are the per-side reading's, exactly when both sides are
        /// readable, on any seven bytes.
        #[test]
        fn plausible_millis_is_the_per_side_reading(
            bytes in proptest::array::uniform7(proptest::num::u8::ANY),
        ) {
            let t = BwTime(bytes);
            let expected = both_sides_readable(&bytes)
                .then(|| (t.right().to_millis(), t.left().to_millis()));
            proptest::prop_assert_eq!(t.plausible_millis(), expected);
        }

        /// Plausible is each side's hours a digit and its minutes and seconds BCD up to 59,
        /// as the per-side reading says, on any seven bytes.
        #[test]
        fn plausible_is_both_sides_readable(
            bytes in proptest::array::uniform7(proptest::num::u8::ANY),
        ) {
            proptest::prop_assert_eq!(BwTime(bytes).is_plausible(), both_sides_readable(&bytes));
        }
    }
}
