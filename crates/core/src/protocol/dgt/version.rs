//! DGT_MSG_VERSION (0x93, 5 bytes): major and minor, binary ("1.02" is `01 02`, dgt-notes 1.10).

use nom::{Parser, number::complete::u8 as byte};

use super::{
    Frame, id,
    parse::{FrameError, Mode, PResult, run_payload, split_frame_for},
};

fn version(p: &[u8]) -> PResult<'_, Frame> {
    (byte, byte)
        .map(|(major, minor)| Frame::Version { major, minor })
        .parse(p)
}

pub(crate) fn payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, version)
}

/// Decodes one VERSION frame from the start of `i`.
pub fn parse_version(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::VERSION, Mode::Single)?;
    let frame = payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}
