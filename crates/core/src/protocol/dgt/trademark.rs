//! DGT_MSG_TRADEMARK (0x92): 0 to 256 ASCII bytes (dgt-notes 1.10), kept verbatim.

use nom::{Parser, combinator::rest};

use super::{
    Frame, id,
    parse::{FrameError, Mode, PResult, run_payload, split_frame_for},
};

/// Payload bytes have bit 7 clear, so each is one ASCII char.
pub(crate) fn ascii(s: &[u8]) -> String {
    s.iter().map(|&b| char::from(b)).collect()
}

pub(crate) fn payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, |p| rest.map(|s| Frame::Trademark(ascii(s))).parse(p))
}

/// Decodes one TRADEMARK frame from the start of `i`.
pub fn parse_trademark(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::TRADEMARK, Mode::Single)?;
    let frame = payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}
