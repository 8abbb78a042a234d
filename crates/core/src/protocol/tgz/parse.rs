//! TGZ-1 framing: DGT's header and high-bit rules with TGZ-1's lengths, and the dispatch by id.
//!
//! Flow: [`split_frame`] checks `id len_hi len_lo` against [`length_rule`] and returns the
//! payload (streaming); [`decode_payload`] runs the message's parser; [`parse_frame`] does both.

use nom::Err;

use super::{Frame, Tgz, id};
use crate::protocol::{
    dgt::{
        self, FrameError, LenRule, MessageId, Mode, PResult, RawFrame, TRADEMARK_MAX_LEN,
        UNKNOWN_MAX_LEN, split_frame_with,
    },
    frame::{DecodeWarning, Wire},
};

/// The total lengths (header included) a TGZ-1 message id may have.
pub fn length_rule(id: u8) -> LenRule {
    match id {
        id::BOARD_DUMP => LenRule::Exact(45),
        id::PIT_UPDATE => LenRule::Exact(6),
        id::TUZ_UPDATE => LenRule::Exact(5),
        id::BWTIME => LenRule::Exact(10),
        id::SERIALNR => LenRule::Exact(8),
        id::TRADEMARK => LenRule::Range(3, TRADEMARK_MAX_LEN),
        id::VERSION => LenRule::Exact(5),
        _ => LenRule::Range(3, UNKNOWN_MAX_LEN),
    }
}

/// Cuts the next frame off `i`, which must start at a message id.
pub fn split_frame(i: &[u8]) -> PResult<'_, RawFrame<'_>> {
    split_frame_with(i, length_rule)
}

/// [`split_frame`] for one expected id.
pub(super) fn split_frame_for(i: &[u8], want: u8) -> PResult<'_, RawFrame<'_>> {
    match i.first() {
        Some(&b) if b & 0x80 != 0 && b != want => Err(Err::Error(FrameError::WrongId { id: b })),
        _ => split_frame(i),
    }
}

/// Decodes the payload of a frame that [`split_frame`] accepted.
pub fn decode_payload(raw: RawFrame<'_>) -> Result<Frame, FrameError> {
    match raw.id {
        id::BOARD_DUMP => super::board_dump::payload(raw.payload),
        id::PIT_UPDATE => super::pit_update::payload(raw.payload),
        id::TUZ_UPDATE => super::tuz_update::payload(raw.payload),
        id::BWTIME | id::SERIALNR | id::TRADEMARK | id::VERSION => {
            Ok(match dgt::decode_payload(raw, Mode::Single)? {
                dgt::Frame::BwTime(t) => Frame::BwTime(t),
                dgt::Frame::SerialNr(s) => Frame::SerialNr(s),
                dgt::Frame::Trademark(s) => Frame::Trademark(s),
                dgt::Frame::Version { major, minor } => Frame::Version { major, minor },
                _ => unknown(raw),
            })
        }
        _ => Ok(unknown(raw)),
    }
}

fn unknown(raw: RawFrame<'_>) -> Frame {
    Frame::Unknown {
        id: MessageId(raw.id),
        payload: raw.payload.to_vec(),
    }
}

/// Decodes the next frame of any id from `i` (which must start at a message id).
pub fn parse_frame(i: &[u8]) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame(i)?;
    let frame = decode_payload(raw).map_err(Err::Error)?;
    Ok((rest, frame))
}

/// Range check of one payload field.
pub(super) fn in_range(
    id: u8,
    field: &'static str,
    value: u16,
    max: u16,
) -> Result<(), FrameError> {
    if value > max {
        return Err(FrameError::OutOfRange {
            id,
            field,
            value,
            max,
        });
    }
    Ok(())
}

impl Wire for Tgz {
    type Frame = Frame;

    fn cut(&self, buf: &[u8]) -> Option<(Result<Frame, DecodeWarning>, usize)> {
        crate::protocol::frame::dgt_framed(buf, split_frame, decode_payload)
    }
}
