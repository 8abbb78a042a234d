//! TGZ_MSG_PIT_UPDATE (0xb1, 6 bytes): location (0..19), count hi, count lo (at most 162).

use nom::{Parser, number::complete::u8 as byte};

use super::{
    Frame, LOCATIONS, MAX_COUNT,
    board_dump::pair,
    id,
    parse::{in_range, split_frame_for},
};
use crate::protocol::dgt::{FrameError, PResult, run_payload};

fn update(p: &[u8]) -> PResult<'_, Frame> {
    let (rest, (location, count)) = (byte, pair).parse(p)?;
    let check = in_range(
        id::PIT_UPDATE,
        "location",
        location.into(),
        LOCATIONS as u16 - 1,
    )
    .and_then(|()| in_range(id::PIT_UPDATE, "count", count, MAX_COUNT));
    check.map_err(nom::Err::Error)?;
    Ok((
        rest,
        Frame::PitUpdate {
            location,
            count: count as u8,
        },
    ))
}

pub(super) fn payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, update)
}

/// Decodes one PIT_UPDATE frame from the start of `i`.
pub fn parse_pit_update(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::PIT_UPDATE)?;
    let frame = payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}
