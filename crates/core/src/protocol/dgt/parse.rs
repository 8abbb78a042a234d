//! Framing shared by every board-to-host decoder: header, length rules per id, payload checks.
//!
//! Flow: [`split_frame`] reads `id len_hi len_lo`, checks the length against [`length_rule`] and
//! that no payload byte has bit 7 set, and returns the payload slice (streaming: `Incomplete` on
//! short input). [`decode_payload`] then hands the payload to the message's own nom parser.
//! [`parse_frame`] does both; the `parse_<message>` functions do both for one id.

use std::fmt;

use nom::{Err, IResult, Needed, error::ErrorKind};

use super::{Frame, MessageId, id};

/// How ids 0x83..=0x8a are read: single-board replies, or bus-mode replies (dgt-notes 1.12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Single-board mode: 0x86 is BOARD_DUMP.
    #[default]
    Single,
    /// Bus mode: 0x83..=0x8a are bus replies with address and checksum (0x86 = BUS_FROM_START).
    Bus,
}

/// Why a decoder rejected its input (the nom error type of this module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The first byte has bit 7 clear, so it cannot start a frame.
    NotAFrameStart { byte: u8 },
    /// The id is not the one this parser reads.
    WrongId { id: u8 },
    /// Byte `offset` of the frame (header or payload) has bit 7 set: the frame ends there.
    HighBit { id: u8, offset: usize },
    /// The length field is not valid for this id.
    BadLength { id: u8, len: u16 },
    /// The length field exceeds the cap for this id.
    Oversize { id: u8, len: u16, max: u16 },
    /// A field update names a square beyond 63.
    SquareOutOfRange { square: u8 },
    /// A payload field holds a value its message does not allow (TGZ-1: a location beyond 19,
    /// a count beyond 162, a tuz pit beyond 9).
    OutOfRange {
        id: u8,
        field: &'static str,
        value: u16,
        max: u16,
    },
    /// A nom combinator failed inside a payload (a length rule and a parser disagree).
    Nom(ErrorKind),
}

impl<I> nom::error::ParseError<I> for FrameError {
    fn from_error_kind(_input: I, kind: ErrorKind) -> Self {
        FrameError::Nom(kind)
    }

    fn append(_input: I, _kind: ErrorKind, other: Self) -> Self {
        other
    }
}

impl<I, E> nom::error::FromExternalError<I, E> for FrameError {
    fn from_external_error(_input: I, kind: ErrorKind, _e: E) -> Self {
        FrameError::Nom(kind)
    }
}

/// Result of the decoders in this module.
pub type PResult<'a, T> = IResult<&'a [u8], T, FrameError>;

/// A frame cut out of the stream but not yet decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawFrame<'a> {
    pub id: u8,
    /// Bytes after the 3-byte header.
    pub payload: &'a [u8],
}

/// The total lengths (header included) a message id may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LenRule {
    Exact(u16),
    /// One of two lengths (SERIALNR: 8, or 12 in the 1998 header).
    Either(u16, u16),
    /// Any length in `min..=max`; above `max` is [`FrameError::Oversize`].
    Range(u16, u16),
}

/// Total length of an EE_MOVES frame at most: 0x1F00 bytes of log plus the header (H17).
pub const EE_MOVES_MAX_LEN: u16 = 0x1f03;
/// Total length of a TRADEMARK frame at most: 256 ASCII bytes plus the header (H17).
pub const TRADEMARK_MAX_LEN: u16 = 259;
/// Total length of a frame with an id this crate does not know, at most.
pub const UNKNOWN_MAX_LEN: u16 = 259;
/// The longest frame any id may have; a reader never holds more than this of one frame.
pub const MAX_FRAME_LEN: usize = 0x1f00 + 6;

/// Bus replies (dgt-notes 1.12): `id len_hi len_lo addr_hi addr_lo data.. checksum`.
pub mod bus_id {
    pub const BRD_DUMP: u8 = 0x83;
    pub const BWTIME: u8 = 0x84;
    pub const UPDATE: u8 = 0x85;
    pub const FROM_START: u8 = 0x86;
    pub const PING: u8 = 0x87;
    pub const START_GAME_WRITTEN: u8 = 0x88;
    pub const VERSION: u8 = 0x89;
    pub const BRD_DUMP_50B: u8 = 0x8a;
}

/// The length rule for `id` in `mode` (dgt-notes 1.4, 1.12; H17 sizes).
pub fn length_rule(id: u8, mode: Mode) -> LenRule {
    use LenRule::*;
    if mode == Mode::Bus && (bus_id::BRD_DUMP..=bus_id::BRD_DUMP_50B).contains(&id) {
        return match id {
            bus_id::BRD_DUMP => Exact(6 + 64),
            bus_id::BWTIME => Exact(6 + 7),
            bus_id::PING | bus_id::START_GAME_WRITTEN => Exact(6),
            // 8 since firmware 1.2; 6 before.
            bus_id::VERSION => Either(8, 6),
            bus_id::BRD_DUMP_50B => Exact(6 + 50),
            _ => Range(6, MAX_FRAME_LEN as u16),
        };
    }
    match id {
        id::BOARD_DUMP => Exact(67),
        id::BWTIME => Exact(10),
        id::FIELD_UPDATE => Exact(5),
        id::EE_MOVES => Range(3, EE_MOVES_MAX_LEN),
        id::BUSADRES => Exact(5),
        id::SERIALNR => Either(8, 12),
        id::TRADEMARK => Range(3, TRADEMARK_MAX_LEN),
        id::VERSION => Exact(5),
        id::BOARD_DUMP_50B | id::BOARD_DUMP_50W => Exact(53),
        id::BATTERY_STATUS => Exact(12),
        id::LONG_SERIALNR => Exact(13),
        _ => Range(3, UNKNOWN_MAX_LEN),
    }
}

impl LenRule {
    /// Checks a total length against this rule.
    pub fn check(self, id: u8, len: u16) -> Result<(), FrameError> {
        match self {
            LenRule::Exact(n) if len == n => Ok(()),
            LenRule::Either(a, b) if len == a || len == b => Ok(()),
            LenRule::Range(_, max) if len > max => Err(FrameError::Oversize { id, len, max }),
            LenRule::Range(min, _) if len >= min => Ok(()),
            _ => Err(FrameError::BadLength { id, len }),
        }
    }
}

fn fail<T>(e: FrameError) -> Result<T, Err<FrameError>> {
    Err(Err::Error(e))
}

/// Cuts the next frame off `i`, which must start at a message id.
///
/// Errors in the order the bytes arrive: a high bit in the header or the payload received so far
/// is reported before `Incomplete`, so a reader never waits for a frame that cannot complete.
pub fn split_frame(i: &[u8], mode: Mode) -> PResult<'_, RawFrame<'_>> {
    split_frame_with(i, |id| length_rule(id, mode))
}

/// [`split_frame`] with the length rules of another protocol on the same framing (TGZ-1).
pub fn split_frame_with(i: &[u8], rule: impl Fn(u8) -> LenRule) -> PResult<'_, RawFrame<'_>> {
    let Some(&id) = i.first() else {
        return Err(Err::Incomplete(Needed::new(3)));
    };
    if id & 0x80 == 0 {
        return fail(FrameError::NotAFrameStart { byte: id });
    }
    let header = &i[..i.len().min(3)];
    if let Some(offset) = header.iter().skip(1).position(|&b| b & 0x80 != 0) {
        return fail(FrameError::HighBit {
            id,
            offset: offset + 1,
        });
    }
    if i.len() < 3 {
        return Err(Err::Incomplete(Needed::new(3 - i.len())));
    }
    let len = (u16::from(i[1]) << 7) | u16::from(i[2]);
    rule(id).check(id, len).map_err(Err::Error)?;
    let total = usize::from(len);
    let got = &i[3..i.len().min(total)];
    if got.iter().fold(0u8, |acc, &b| acc | b) & 0x80 != 0 {
        let offset = got.iter().position(|&b| b & 0x80 != 0).unwrap_or(0);
        return fail(FrameError::HighBit {
            id,
            offset: offset + 3,
        });
    }
    if i.len() < total {
        return Err(Err::Incomplete(Needed::new(total - i.len())));
    }
    Ok((
        &i[total..],
        RawFrame {
            id,
            payload: &i[3..total],
        },
    ))
}

/// The commonest frames of single-board mode whole and well formed at the start of `buf` (a
/// clock's BWTIME, a FIELD_UPDATE, a BOARD_DUMP), decoded in one look, with their length: what
/// [`split_frame`] then [`decode_payload`] give for them. `None` for anything else (another id,
/// another length, a high bit, a square beyond 63, a frame not whole yet), which the general
/// path reads with its warnings. Why: nearly every frame a board sends is one of these three,
/// and the general path's `Result`s and nom's incomplete/error machinery cost several times the
/// work (replay cuts every frame of a capture). Held to the general path by
/// `common_frames_cut_as_the_general_path_cuts_them`.
pub fn cut_common(buf: &[u8]) -> Option<(Frame, usize)> {
    let &[id, hi, lo, ..] = buf else {
        return None;
    };
    let total = match id {
        id::BWTIME => 10,
        id::FIELD_UPDATE => 5,
        id::BOARD_DUMP => 67,
        _ => return None,
    };
    // Every total is below 0x80: the length field is `00 total` and nothing else.
    if hi != 0 || usize::from(lo) != total {
        return None;
    }
    let payload = buf.get(3..total)?;
    if payload.iter().fold(0u8, |acc, &b| acc | b) & 0x80 != 0 {
        return None;
    }
    let frame = match (id, payload) {
        (id::FIELD_UPDATE, &[square, piece]) if square <= 63 => {
            Frame::FieldUpdate { square, piece }
        }
        (id::BWTIME, p) => Frame::BwTime(super::BwTime(p.try_into().ok()?)),
        (id::BOARD_DUMP, p) => Frame::BoardDump(super::BoardDump(p.try_into().ok()?)),
        _ => return None,
    };
    Some((frame, total))
}

/// [`split_frame`] for one expected id.
pub(crate) fn split_frame_for(i: &[u8], want: u8, mode: Mode) -> PResult<'_, RawFrame<'_>> {
    match i.first() {
        Some(&b) if b & 0x80 != 0 && b != want => fail(FrameError::WrongId { id: b }),
        _ => split_frame(i, mode),
    }
}

/// Runs a payload parser over a whole payload (complete input; leftovers are an error).
pub(crate) fn run_payload<'a, T>(
    payload: &'a [u8],
    mut parser: impl FnMut(&'a [u8]) -> PResult<'a, T>,
) -> Result<T, FrameError> {
    match parser(payload) {
        Ok(([], v)) => Ok(v),
        Ok(_) => Err(FrameError::Nom(ErrorKind::Eof)),
        Err(Err::Error(e) | Err::Failure(e)) => Err(e),
        Err(Err::Incomplete(_)) => Err(FrameError::Nom(ErrorKind::Complete)),
    }
}

/// Decodes the payload of a frame that [`split_frame`] accepted.
pub fn decode_payload(raw: RawFrame<'_>, mode: Mode) -> Result<Frame, FrameError> {
    let RawFrame { id, payload } = raw;
    if mode == Mode::Bus && (bus_id::BRD_DUMP..=bus_id::BRD_DUMP_50B).contains(&id) {
        return super::bus::bus_reply_payload(id, payload);
    }
    match id {
        id::BOARD_DUMP => super::board_dump::payload(payload),
        id::BWTIME => super::bwtime::payload(payload),
        id::FIELD_UPDATE => super::field_update::payload(payload),
        id::EE_MOVES => super::ee_moves::payload(payload),
        id::BUSADRES => super::bus::bus_address_payload(payload),
        id::SERIALNR => super::serial::serial_payload(payload),
        id::TRADEMARK => super::trademark::payload(payload),
        id::VERSION => super::version::payload(payload),
        id::BATTERY_STATUS => super::battery::payload(payload),
        id::LONG_SERIALNR => super::serial::long_serial_payload(payload),
        _ => Ok(Frame::Unknown {
            id: MessageId(id),
            payload: payload.to_vec(),
        }),
    }
}

/// Decodes the next frame of any id from `i` (which must start at a message id).
pub fn parse_frame(i: &[u8], mode: Mode) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame(i, mode)?;
    let frame = decode_payload(raw, mode).map_err(Err::Error)?;
    Ok((rest, frame))
}

/// Decodes a frame whose id has no typed decoder, as [`Frame::Unknown`].
pub fn parse_unknown(i: &[u8], mode: Mode) -> PResult<'_, Frame> {
    let (rest, raw) = split_frame(i, mode)?;
    match decode_payload(raw, mode) {
        Ok(frame @ Frame::Unknown { .. }) => Ok((rest, frame)),
        Ok(_) => fail(FrameError::WrongId { id: raw.id }),
        Err(e) => fail(e),
    }
}

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#04x}", self.0)
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FrameError::NotAFrameStart { byte } => {
                write!(f, "byte {byte:#04x} cannot start a frame (bit 7 clear)")
            }
            FrameError::WrongId { id } => write!(f, "unexpected message id {id:#04x}"),
            FrameError::HighBit { id, offset } => {
                write!(f, "frame {id:#04x} cut short: byte {offset} has bit 7 set")
            }
            FrameError::BadLength { id, len } => {
                write!(f, "length {len} is not valid for message id {id:#04x}")
            }
            FrameError::Oversize { id, len, max } => write!(
                f,
                "length {len} exceeds the cap of {max} for message id {id:#04x}"
            ),
            FrameError::SquareOutOfRange { square } => {
                write!(f, "field update names square {square}, beyond 63")
            }
            FrameError::OutOfRange {
                id,
                field,
                value,
                max,
            } => write!(
                f,
                "message {id:#04x}: {field} {value} is out of range (at most {max})"
            ),
            FrameError::Nom(kind) => write!(f, "payload parser failed ({kind:?})"),
        }
    }
}

impl std::error::Error for FrameError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_high_bit_beats_incomplete() {
        assert_eq!(
            split_frame(&[0x8e, 0x8d], Mode::Single),
            Err(Err::Error(FrameError::HighBit {
                id: 0x8e,
                offset: 1
            }))
        );
        assert_eq!(
            split_frame(&[0x8e, 0x00], Mode::Single),
            Err(Err::Incomplete(Needed::new(1)))
        );
    }

    #[test]
    fn payload_high_bit_beats_incomplete() {
        assert_eq!(
            split_frame(&[0x86, 0x00, 0x43, 0x01, 0x8e], Mode::Single),
            Err(Err::Error(FrameError::HighBit {
                id: 0x86,
                offset: 4
            }))
        );
        assert_eq!(
            split_frame(&[0x86, 0x00, 0x43, 0x01, 0x0e], Mode::Single),
            Err(Err::Incomplete(Needed::new(62)))
        );
    }

    #[test]
    fn length_rules() {
        let bad = |id, len| length_rule(id, Mode::Single).check(id, len);
        assert!(bad(id::SERIALNR, 8).is_ok());
        assert!(bad(id::SERIALNR, 12).is_ok());
        assert_eq!(
            bad(id::SERIALNR, 10),
            Err(FrameError::BadLength { id: 0x91, len: 10 })
        );
        assert_eq!(
            bad(id::BATTERY_STATUS, 7),
            Err(FrameError::BadLength { id: 0xa0, len: 7 })
        );
        assert!(bad(id::EE_MOVES, 0x1f03).is_ok());
        assert_eq!(
            bad(id::EE_MOVES, 0x1f04),
            Err(FrameError::Oversize {
                id: 0x8f,
                len: 0x1f04,
                max: 0x1f03
            })
        );
        assert_eq!(
            bad(0xa5, 2),
            Err(FrameError::BadLength { id: 0xa5, len: 2 })
        );
        assert_eq!(
            length_rule(0x86, Mode::Bus),
            LenRule::Range(6, MAX_FRAME_LEN as u16)
        );
        assert_eq!(length_rule(0x86, Mode::Single), LenRule::Exact(67));
    }
}
