//! The DGT board as its sensors see it, and the DGT clock as it reports itself.
//!
//! Flow: a board dump replaces all 64 codes of the [`ChessSensor`], a field update changes one
//! ([`DgtFrames`]: DGT's piece codes are the square codes). BWTIME frames become [`ClockReading`]s; null frames,
//! acknowledgements, implausible times and "no clock" frames are dropped (dgt-notes 1.8, 1.9).

pub use super::{ClockReading, chess::ChessSensor};
use crate::protocol::dgt::{BoardDump, BwTime, hour_flags};

/// Hours-byte bits that show a flag.
const FLAG: u8 = hour_flags::FLAG_FALLEN | hour_flags::FLAG_INDICATED;

/// Which of the two documented BWTIME layouts a clock speaks (dgt-notes 1.8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ClockLayout {
    /// `dgtbrd.h` of 2011-2017 (DGT XL and DGT 3000), which the real captures confirm: the first
    /// time is the right-hand clock's, and status D1 set means the lever is high on the right.
    #[default]
    H17,
    /// `dgtbrd13.h` of 1998: the first time is the left-hand ("A side") clock's, and status D1
    /// set means the lever is high on the left.
    H13,
}

impl ClockReading {
    /// Reads a BWTIME frame in the [`ClockLayout::H17`] layout; `None` when it carries no usable
    /// time.
    pub fn from_bwtime(t: &BwTime) -> Option<ClockReading> {
        ClockReading::from_bwtime_in(t, ClockLayout::H17)
    }

    /// Reads a BWTIME frame in `layout`; `None` when it carries no usable time.
    pub fn from_bwtime_in(t: &BwTime, layout: ClockLayout) -> Option<ClockReading> {
        if t.is_null() || t.no_clock() {
            return None;
        }
        // `first`/`second`: the payload's first and second time (bytes 0-2 and 3-5); `None`
        // for an implausible frame, which an ACK always is.
        let (first, second) = t.plausible_millis()?;
        Some(ClockReading::in_layout(t, first, second, layout))
    }

    /// `t`'s reading in `layout`, its first and second times (bytes 0-2 and 3-5) already read.
    fn in_layout(t: &BwTime, first: u64, second: u64, layout: ClockLayout) -> ClockReading {
        let (first_flag, second_flag) = (t.right_flags() & FLAG != 0, t.left_flags() & FLAG != 0);
        match layout {
            ClockLayout::H17 => ClockReading {
                right_ms: first,
                left_ms: second,
                running: t.running(),
                lever_right_high: t.lever_right_high(),
                left_flag: second_flag,
                right_flag: first_flag,
            },
            ClockLayout::H13 => ClockReading {
                left_ms: first,
                right_ms: second,
                running: t.running(),
                lever_right_high: !t.lever_right_high(),
                left_flag: first_flag,
                right_flag: second_flag,
            },
        }
    }
}

/// The 64 squares as a DGT board reports them: a dump sets all, a field update one, in board
/// numbering (0 = a8 when the board lies normally), DGT's piece codes being the square codes.
pub trait DgtFrames {
    /// Replaces every square from a board dump.
    fn apply_dump(&mut self, dump: &BoardDump);
    /// Changes one square; returns whether the board changed. Out-of-range squares are ignored.
    fn apply_field(&mut self, square: u8, code: u8) -> bool;
    /// The board dump that reproduces this state.
    fn to_dump(&self) -> BoardDump;
}

impl DgtFrames for ChessSensor {
    #[inline]
    fn apply_dump(&mut self, dump: &BoardDump) {
        self.set_all(&dump.0);
    }

    #[inline]
    fn apply_field(&mut self, square: u8, code: u8) -> bool {
        self.set_square(square, code & 0x0f)
    }

    fn to_dump(&self) -> BoardDump {
        BoardDump(*self.codes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        game::{GameKind, chess::ChessGame},
        protocol::dgt::{ClockTime, hour_flags, status},
        sensor::Orientation,
    };

    fn start_dump() -> BoardDump {
        // a8..h8, a7..h7, ..., a1..h1 (board numbering, normal orientation).
        let mut d = [0u8; 64];
        d[..8].copy_from_slice(&[8, 9, 10, 12, 11, 10, 9, 8]);
        d[8..16].fill(7);
        d[48..56].fill(1);
        d[56..].copy_from_slice(&[2, 3, 4, 6, 5, 4, 3, 2]);
        BoardDump(d)
    }

    #[test]
    fn keys_follow_updates_in_both_orientations() {
        let mut s = ChessSensor::default();
        s.apply_dump(&start_dump());
        let start = ChessGame::reading(&ChessGame::start());
        assert_eq!(s.reading(Orientation::Normal), start);
        assert_eq!(s.key(Orientation::Normal), ChessGame::reading_key(&start));
        // e2 (board index 0x34) lifted, e4 (0x24) placed.
        assert!(s.apply_field(0x34, 0));
        assert!(s.apply_field(0x24, 1));
        assert!(!s.apply_field(0x24, 1));
        for o in [Orientation::Normal, Orientation::Rotated] {
            assert_eq!(s.key(o), ChessGame::reading_key(&s.reading(o)));
        }
        assert!(!s.apply_field(64, 1));
    }

    #[test]
    fn clock_reading_from_real_frame() {
        // 8d 00 0a 20 03 02 20 02 59 09 from a real capture: right 3:02, left 2:59, left running.
        let r =
            ClockReading::from_bwtime(&BwTime([0x20, 0x03, 0x02, 0x20, 0x02, 0x59, 0x09])).unwrap();
        assert_eq!(r.right_ms, 182_000);
        assert_eq!(r.left_ms, 179_000);
        assert!(r.running && !r.lever_right_high);
        assert_eq!(ClockReading::from_bwtime(&BwTime([0; 7])), None);
        // An acknowledgement and an implausible time are not readings.
        assert_eq!(
            ClockReading::from_bwtime(&BwTime([0x0a, 0x10, 0x01, 0x00, 0, 0, 0])),
            None
        );
        assert_eq!(
            ClockReading::from_bwtime(&BwTime([0x00, 0x6a, 0x00, 0x00, 0, 0, 0x01])),
            None
        );
        let t = ClockTime::from_millis(3_723_000);
        let built = BwTime::from_parts(t, hour_flags::TIME_PER_MOVE, t, 0, status::RUNNING);
        let r = ClockReading::from_bwtime(&built).unwrap();
        assert_eq!((r.left_ms, r.right_ms), (3_723_000, 3_723_000));
    }

    /// The reading as it was first written: every filter, then each side decoded through
    /// `ClockTime` (the layouts' mapping is `in_layout`'s, which this module's layout tests
    /// hold).
    fn reference_reading(t: &BwTime, layout: ClockLayout) -> Option<ClockReading> {
        if t.is_null() || t.no_clock() || t.is_ack() || !t.is_plausible() {
            return None;
        }
        let (first, second) = (t.right().to_millis(), t.left().to_millis());
        Some(ClockReading::in_layout(t, first, second, layout))
    }

    proptest::proptest! {
        /// The reading is the reference reading in both layouts, on any seven bytes and on
        /// plausible frames (BCD up to 59, hours up to 9 with any flags, any status).
        #[test]
        fn reading_is_the_reference_reading(
            bytes in proptest::array::uniform7(proptest::num::u8::ANY),
            hours in proptest::array::uniform2(0u8..10),
            flags in proptest::array::uniform2(0u8..8),
            times in proptest::array::uniform4(0u8..60),
            status in proptest::num::u8::ANY,
        ) {
            let bcd = |v: u8| ((v / 10) << 4) | (v % 10);
            let plausible = BwTime([
                hours[0] | (flags[0] << 4), bcd(times[0]), bcd(times[1]),
                hours[1] | (flags[1] << 4), bcd(times[2]), bcd(times[3]),
                status,
            ]);
            for t in [BwTime(bytes), plausible] {
                for layout in [ClockLayout::H17, ClockLayout::H13] {
                    proptest::prop_assert_eq!(
                        ClockReading::from_bwtime_in(&t, layout),
                        reference_reading(&t, layout)
                    );
                }
            }
        }
    }

    #[test]
    fn the_1998_layout_reads_the_first_time_as_the_left_clock_and_d1_as_left_high() {
        // 3:02 with its flag shown first, 2:59 second; running, D1 set.
        let frame = BwTime([0x20 | 0x40, 0x03, 0x02, 0x20, 0x02, 0x59, 0x03]);
        let h17 = ClockReading::from_bwtime_in(&frame, ClockLayout::H17).unwrap();
        assert_eq!((h17.right_ms, h17.left_ms), (182_000, 179_000));
        assert!(h17.lever_right_high && h17.right_flag && !h17.left_flag);
        let h13 = ClockReading::from_bwtime_in(&frame, ClockLayout::H13).unwrap();
        assert_eq!((h13.left_ms, h13.right_ms), (182_000, 179_000));
        assert!(!h13.lever_right_high && h13.left_flag && !h13.right_flag);
        assert!(h13.running);
        // The same filters: an ACK is no reading in either layout.
        let ack = BwTime([0x0a, 0x10, 0x01, 0x00, 0, 0, 0]);
        assert_eq!(ClockReading::from_bwtime_in(&ack, ClockLayout::H13), None);
    }
}
