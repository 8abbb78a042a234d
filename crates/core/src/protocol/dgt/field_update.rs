//! DGT_MSG_FIELD_UPDATE (0x8e, 5 bytes): `field piece` (dgt-notes 1.7).
//!
//! A square beyond 63 is rejected here, so every decoded update indexes a real square.

use nom::{Parser, number::complete::u8 as byte};

use super::{
    Frame, id,
    parse::{FrameError, Mode, PResult, run_payload, split_frame_for},
};

fn update(p: &[u8]) -> PResult<'_, Frame> {
    let (rest, (square, piece)) = (byte, byte).parse(p)?;
    if square > 63 {
        return Err(nom::Err::Error(FrameError::SquareOutOfRange { square }));
    }
    Ok((rest, Frame::FieldUpdate { square, piece }))
}

pub(crate) fn payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, update)
}

/// Decodes one FIELD_UPDATE frame from the start of `i`.
pub fn parse_field_update(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::FIELD_UPDATE, Mode::Single)?;
    let frame = payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}
