//! DGT_MSG_BATTERY_STATUS (0xa0): nine payload bytes, 12 in total (dgt-notes 1.10).
//!
//! H17 defines the size as 7 but lists nine data bytes; real boards send `a0 00 0c` + 9 bytes,
//! so only 12 is accepted (a 7-byte frame is a bad length and is skipped with a warning).

use nom::{Parser, bytes::complete::take, combinator::map_res};

use super::{
    BatteryStatus, Frame, id,
    parse::{FrameError, Mode, PResult, run_payload, split_frame_for},
};

fn battery(p: &[u8]) -> PResult<'_, BatteryStatus> {
    map_res(take(9usize), |s: &[u8]| {
        <[u8; 9]>::try_from(s).map(BatteryStatus)
    })
    .parse(p)
}

pub(crate) fn payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, battery).map(Frame::Battery)
}

/// Decodes one BATTERY_STATUS frame from the start of `i`.
pub fn parse_battery(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::BATTERY_STATUS, Mode::Single)?;
    let frame = payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}

impl BatteryStatus {
    /// Capacity left, in percent.
    pub fn percent(&self) -> u8 {
        self.0[0]
    }

    /// Bit 0 of the status byte: charging.
    pub fn charging(&self) -> bool {
        self.0[8] & 0x01 != 0
    }

    /// Bit 1 of the status byte: discharging.
    pub fn discharging(&self) -> bool {
        self.0[8] & 0x02 != 0
    }
}
