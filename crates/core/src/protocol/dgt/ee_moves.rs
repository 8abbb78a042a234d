//! DGT_MSG_EE_MOVES (0x8f): the EEPROM log, up to 0x1F00 bytes (dgt-notes 1.11), kept raw.

use nom::{Parser, combinator::rest};

use super::{
    Frame, id,
    parse::{FrameError, Mode, PResult, run_payload, split_frame_for},
};

pub(crate) fn payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, |p| {
        rest.map(|log: &[u8]| Frame::EeMoves(log.to_vec())).parse(p)
    })
}

/// Decodes one EE_MOVES frame from the start of `i`.
pub fn parse_ee_moves(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::EE_MOVES, Mode::Single)?;
    let frame = payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}
