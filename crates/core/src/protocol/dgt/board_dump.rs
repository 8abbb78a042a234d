//! DGT_MSG_BOARD_DUMP (0x86, 67 bytes): 64 piece codes, a8 first (dgt-notes 1.4-1.6).

use nom::{Parser, bytes::complete::take, combinator::map_res};

use super::{
    BoardDump, Frame, id,
    parse::{FrameError, Mode, PResult, run_payload, split_frame_for},
};

fn dump(p: &[u8]) -> PResult<'_, BoardDump> {
    map_res(take(64usize), |s: &[u8]| {
        <[u8; 64]>::try_from(s).map(BoardDump)
    })
    .parse(p)
}

pub(crate) fn payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, dump).map(Frame::BoardDump)
}

/// Decodes one BOARD_DUMP frame (single-board mode) from the start of `i`.
pub fn parse_board_dump(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::BOARD_DUMP, Mode::Single)?;
    let frame = payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}
