//! DGT_MSG_SERIALNR (0x91; 8 bytes, or 12 in the 1998 header) and DGT_MSG_LONG_SERIALNR
//! (0xa2; 13 bytes, 10 ASCII), dgt-notes 1.10. Both are kept verbatim as ASCII.

use nom::{Parser, combinator::rest};

use super::{
    Frame, id,
    parse::{FrameError, Mode, PResult, run_payload, split_frame_for},
    trademark::ascii,
};

pub(crate) fn serial_payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, |p| rest.map(|s| Frame::SerialNr(ascii(s))).parse(p))
}

pub(crate) fn long_serial_payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, |p| rest.map(|s| Frame::LongSerialNr(ascii(s))).parse(p))
}

/// Decodes one SERIALNR frame (either length) from the start of `i`.
pub fn parse_serial_nr(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::SERIALNR, Mode::Single)?;
    let frame = serial_payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}

/// Decodes one LONG_SERIALNR frame from the start of `i`.
pub fn parse_long_serial_nr(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::LONG_SERIALNR, Mode::Single)?;
    let frame = long_serial_payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}
