//! TGZ_MSG_BOARD_DUMP (0xb0, 45 bytes): 20 counts as 7-bit pairs (locations 0..19), then white's
//! and black's tuz bytes. A count above 162 or a tuz byte above 9 is rejected.

use nom::{Parser, multi::count, number::complete::u8 as byte};

use super::{
    Frame, LOCATIONS, MAX_COUNT, MAX_TUZ_PIT, PitDump, id,
    parse::{in_range, split_frame_for},
};
use crate::protocol::dgt::{FrameError, PResult, run_payload};

/// A 14-bit number sent as two 7-bit bytes, high first.
pub(super) fn pair(p: &[u8]) -> PResult<'_, u16> {
    (byte, byte)
        .map(|(hi, lo)| (u16::from(hi) << 7) | u16::from(lo))
        .parse(p)
}

fn dump(p: &[u8]) -> PResult<'_, PitDump> {
    let (rest, (counts, white, black)) = (count(pair, LOCATIONS), byte, byte).parse(p)?;
    let mut dump = PitDump {
        counts: [0; LOCATIONS],
        tuz: [white, black],
    };
    for (slot, n) in dump.counts.iter_mut().zip(counts) {
        in_range(id::BOARD_DUMP, "count", n, MAX_COUNT).map_err(nom::Err::Error)?;
        *slot = n as u8;
    }
    for t in dump.tuz {
        in_range(id::BOARD_DUMP, "tuz pit", t.into(), MAX_TUZ_PIT.into())
            .map_err(nom::Err::Error)?;
    }
    Ok((rest, dump))
}

pub(super) fn payload(p: &[u8]) -> Result<Frame, FrameError> {
    run_payload(p, dump).map(Frame::BoardDump)
}

/// Decodes one BOARD_DUMP frame from the start of `i`.
pub fn parse_board_dump(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame_for(i, id::BOARD_DUMP)?;
    let frame = payload(raw.payload).map_err(nom::Err::Error)?;
    Ok((rest, frame))
}
