//! TGZ_MSG_TUZ_UPDATE (0xb2, 5 bytes): player (0 white, 1 black), pit (0 none, 1..9 the
//! opponent's pit under the marker).

use nom::{Parser, number::complete::u8 as byte};

use super::{
    Frame, MAX_TUZ_PIT, Side, id,
    parse::{in_range, split_frame_for},
};
use crate::protocol::dgt::{FrameError, PResult, run_payload};

fn update(p: &[u8]) -> PResult<'_, Frame> {
    let (rest, (player, pit)) = (byte, byte).parse(p)?;
    let check = in_range(id::TUZ_UPDATE, "player", player.into(), 1)
        .and_then(|()| in_range(id::TUZ_UPDATE, "tuz pit", pit.into(), MAX_TUZ_PIT.into()));
    check.map_err(nom::Err::Error)?;
    let player = if player == 0 {
        Side::White
    } else {
        Side::Black
    };
    Ok((rest, Frame::TuzUpdate { player, pit }))
}

pub(super) fn payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, update)
}

/// Decodes one TUZ_UPDATE frame from the start of `i`.
pub fn parse_tuz_update(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::TUZ_UPDATE)?;
    let frame = payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}
