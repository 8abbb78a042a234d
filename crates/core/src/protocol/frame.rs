//! The frame reader: owns the byte buffer of one board and hands its bytes to the board's wire,
//! which cuts frames off them.
//!
//! Flow: the device layer [`FrameReader::push`]es bytes as they arrive and calls
//! [`FrameReader::next_frame`] until it returns `None`. Each call yields a decoded
//! frame or a [`DecodeWarning`] saying which bytes were dropped; after a warning the wire has
//! already put the reader on the byte where the next frame may start, so the caller logs it and
//! calls again. Bytes are consumed by moving an offset; the buffer is compacted on `push`, and
//! after draining it never holds more than one incomplete frame.
//! Each protocol owns its framing through [`Wire::cut`]: DGT's binary frames and TGZ-1's, which
//! share DGT's framing, resynchronise on the next byte with bit 7 set ([`dgt_framed`],
//! dgt-notes 1.2); an ASCII protocol resynchronises on its own start character.

use nom::Err;

use super::dgt::{self, FrameError, MessageId, Mode, PResult, RawFrame};

/// A protocol's framing and decoding: how the next frame is cut off the bytes a board sent.
pub trait Wire {
    type Frame;

    /// The frame at the start of `buf`, or the warning for the bytes that are not one, with how
    /// many bytes it took (at least one); `None` while `buf` holds only the start of a frame.
    fn cut(&self, buf: &[u8]) -> Option<(Result<Self::Frame, DecodeWarning>, usize)>;
}

/// DGT frames in single-board or bus mode.
impl Wire for Mode {
    type Frame = dgt::Frame;

    /// A clock, a field update or a board dump whole at the start of `buf` takes the direct
    /// reading of [`dgt::cut_common`] (single-board mode: bus mode reads those ids otherwise);
    /// everything else, and every warning, the general one.
    fn cut(&self, buf: &[u8]) -> Option<(Result<dgt::Frame, DecodeWarning>, usize)> {
        if *self == Mode::Single
            && let Some((frame, used)) = dgt::cut_common(buf)
        {
            return Some((Ok(frame), used));
        }
        dgt_framed(
            buf,
            |i| dgt::split_frame(i, *self),
            |raw| dgt::decode_payload(raw, *self),
        )
    }
}

/// [`Wire::cut`] for a protocol on DGT's framing (an id byte with bit 7 set, a 14-bit length,
/// a payload of 7-bit bytes): `split` cuts a frame, `decode` reads its payload. Bytes that do
/// not make a frame are skipped up to the next byte with bit 7 set, never past it.
pub fn dgt_framed<F>(
    buf: &[u8],
    split: impl for<'a> Fn(&'a [u8]) -> PResult<'a, RawFrame<'a>>,
    decode: impl Fn(RawFrame<'_>) -> Result<F, FrameError>,
) -> Option<(Result<F, DecodeWarning>, usize)> {
    let &first = buf.first()?;
    match split(buf) {
        Ok((after, raw)) => {
            let used = buf.len() - after.len();
            let result = decode(raw).map_err(|e| DecodeWarning::InvalidPayload {
                id: MessageId(raw.id),
                detail: e.to_string(),
                skipped: used,
            });
            Some((result, used))
        }
        Err(Err::Incomplete(_)) => None,
        Err(Err::Error(e) | Err::Failure(e)) => {
            let id = MessageId(first);
            // Skip to the next byte with bit 7 set, never past it.
            let to_next = || {
                1 + buf[1..]
                    .iter()
                    .position(|&b| b & 0x80 != 0)
                    .unwrap_or(buf.len() - 1)
            };
            let w = match e {
                FrameError::NotAFrameStart { .. } => {
                    let count = buf.iter().position(|&b| b & 0x80 != 0).unwrap_or(buf.len());
                    DecodeWarning::SkippedGarbage { count }
                }
                FrameError::HighBit { offset, .. } => DecodeWarning::HighBitInFrame {
                    id,
                    offset,
                    skipped: offset,
                },
                FrameError::BadLength { len, .. } => DecodeWarning::BadLength {
                    id,
                    len,
                    skipped: to_next(),
                },
                FrameError::Oversize { len, max, .. } => DecodeWarning::Oversize {
                    id,
                    len,
                    max,
                    skipped: to_next(),
                },
                other => DecodeWarning::InvalidPayload {
                    id,
                    detail: other.to_string(),
                    skipped: to_next(),
                },
            };
            let used = w.skipped();
            Some((Err(w), used))
        }
    }
}

/// Bytes the reader dropped, and why. None of these stop the stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeWarning {
    /// Bytes with bit 7 clear where a message id was expected.
    #[error("skipped {count} byte(s) of garbage before a message id")]
    SkippedGarbage { count: usize },
    /// The length field does not fit the id (e.g. a 7-byte BATTERY_STATUS).
    #[error(
        "dropped message {id}: length {len} is not valid for this id ({skipped} byte(s) skipped)"
    )]
    BadLength {
        id: MessageId,
        len: u16,
        skipped: usize,
    },
    /// The length field exceeds the cap for the id.
    #[error(
        "dropped message {id}: length {len} exceeds the cap of {max} ({skipped} byte(s) skipped)"
    )]
    Oversize {
        id: MessageId,
        len: u16,
        max: u16,
        skipped: usize,
    },
    /// A header or payload byte had bit 7 set: the frame was abandoned and a new one starts there.
    #[error("message {id} cut short: byte {offset} has bit 7 set ({skipped} byte(s) skipped)")]
    HighBitInFrame {
        id: MessageId,
        offset: usize,
        skipped: usize,
    },
    /// The frame was well formed but its content is not (e.g. a field update for square 64).
    #[error("dropped message {id}: {detail} ({skipped} byte(s) skipped)")]
    InvalidPayload {
        id: MessageId,
        detail: String,
        skipped: usize,
    },
    /// A protocol not on DGT's framing dropped bytes that made no message of it (a bad check
    /// digit, a wrong count of numbers, bytes before a message's start), and why.
    #[error("dropped {skipped} byte(s): {detail}")]
    Dropped { detail: String, skipped: usize },
}

impl DecodeWarning {
    /// How many bytes were dropped.
    pub fn skipped(&self) -> usize {
        match self {
            DecodeWarning::SkippedGarbage { count } => *count,
            DecodeWarning::BadLength { skipped, .. }
            | DecodeWarning::Oversize { skipped, .. }
            | DecodeWarning::HighBitInFrame { skipped, .. }
            | DecodeWarning::InvalidPayload { skipped, .. }
            | DecodeWarning::Dropped { skipped, .. } => *skipped,
        }
    }
}

/// Compact the buffer on `push` once this many consumed bytes sit in front of it.
const COMPACT_AT: usize = 4096;

/// Streaming reader of board-to-host frames (see the module doc); DGT frames by default.
#[derive(Debug, Default)]
pub struct FrameReader<W = Mode> {
    buf: Vec<u8>,
    /// Start of the unconsumed bytes in `buf`.
    pos: usize,
    wire: W,
}

impl FrameReader<Mode> {
    /// An empty DGT reader in `mode`.
    pub fn new(mode: Mode) -> Self {
        FrameReader::with_wire(mode)
    }

    /// Changes how ids 0x83..=0x8a are read from the next frame on.
    pub fn set_mode(&mut self, mode: Mode) {
        self.wire = mode;
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.wire
    }
}

impl<W: Wire> FrameReader<W> {
    /// An empty reader of `wire`'s frames.
    pub fn with_wire(wire: W) -> Self {
        FrameReader {
            buf: Vec::with_capacity(256),
            pos: 0,
            wire,
        }
    }

    /// Appends bytes read from the board.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos >= COMPACT_AT || self.pos >= self.buf.len() - self.pos {
            // Amortised O(1): at most as many bytes move as were consumed since the last move.
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Drops everything buffered (e.g. after the port was reopened).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.pos = 0;
    }

    /// Bytes received but not yet returned as a frame or a warning.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The next frame; `None` when more bytes are needed; `Err` when bytes were skipped.
    pub fn next_frame(&mut self) -> Option<Result<W::Frame, DecodeWarning>> {
        let rest = &self.buf[self.pos..];
        if rest.is_empty() {
            return None;
        }
        let (result, used) = self.wire.cut(rest)?;
        // A wire that took nothing would be asked the same again: every answer moves on.
        self.pos += used.clamp(1, rest.len());
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::dgt::Frame;
    use proptest::prelude::*;

    fn drain(r: &mut FrameReader) -> Vec<Result<Frame, DecodeWarning>> {
        std::iter::from_fn(|| r.next_frame()).collect()
    }

    /// The general path of [`Wire::cut`] for DGT frames, without [`dgt::cut_common`].
    fn general_cut(mode: Mode, buf: &[u8]) -> Option<(Result<Frame, DecodeWarning>, usize)> {
        dgt_framed(
            buf,
            |i| dgt::split_frame(i, mode),
            |raw| dgt::decode_payload(raw, mode),
        )
    }

    /// Bytes near the frames the fast cut reads: the three ids and others, their lengths and
    /// others, payloads with a high bit now and then, squares beyond 63, garbage between.
    fn near_frames() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            prop::collection::vec(any::<u8>(), 0..6),
            (
                prop::sample::select(vec![0x8du8, 0x8e, 0x86, 0x93, 0xa0, 0x8f, 0x00]),
                prop_oneof![Just(0u8), Just(0u8), Just(0u8), any::<u8>()],
                prop_oneof![Just(None), any::<u8>().prop_map(Some)],
                prop::collection::vec(prop_oneof![8 => 0u8..0x80, 1 => any::<u8>()], 0..70,),
            )
                .prop_map(|(id, hi, lo, payload)| {
                    let lo = lo.unwrap_or(match id {
                        0x8d => 10,
                        0x8e => 5,
                        0x86 => 67,
                        _ => 5,
                    });
                    let mut f = vec![id, hi, lo];
                    f.extend(payload);
                    f
                }),
            // Whole frames of the three kinds, squares up to 70.
            (0u8..71, 0u8..0x80).prop_map(|(sq, p)| vec![0x8e, 0, 5, sq, p]),
            prop::collection::vec(0u8..0x80, 7).prop_map(|p| {
                let mut f = vec![0x8d, 0, 10];
                f.extend(p);
                f
            }),
            prop::collection::vec(0u8..0x10, 64).prop_map(|p| {
                let mut f = vec![0x86, 0, 67];
                f.extend(p);
                f
            }),
        ];
        prop::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        /// The DGT wire's cut (fast for whole clock, field update and board dump frames) gives
        /// what the general path gives, on every prefix of every point of the stream: the same
        /// frame or warning, the same bytes taken, the same wait for more.
        #[test]
        fn common_frames_cut_as_the_general_path_cuts_them(
            stream in near_frames(),
            bus in any::<bool>(),
        ) {
            let mode = if bus { Mode::Bus } else { Mode::Single };
            let mut at = 0;
            while at < stream.len() {
                let rest = &stream[at..];
                for end in 0..=rest.len() {
                    let prefix = &rest[..end];
                    prop_assert_eq!(mode.cut(prefix), general_cut(mode, prefix), "{:02x?}", prefix);
                }
                at += general_cut(mode, rest).map_or(rest.len(), |(_, used)| used.max(1));
            }
        }
    }

    #[test]
    fn garbage_then_frame() {
        let mut r = FrameReader::new(Mode::Single);
        r.push(&[0x01, 0x02, 0x03, 0x8e, 0x00, 0x05, 0x34, 0x00]);
        assert_eq!(
            drain(&mut r),
            vec![
                Err(DecodeWarning::SkippedGarbage { count: 3 }),
                Ok(Frame::FieldUpdate {
                    square: 0x34,
                    piece: 0
                })
            ]
        );
        assert_eq!(r.buffered(), 0);
    }

    #[test]
    fn high_bit_restarts_frame() {
        let mut r = FrameReader::new(Mode::Single);
        // A board dump cut after two payload bytes by a field update.
        r.push(&[0x86, 0x00, 0x43, 0x08, 0x09, 0x8e, 0x00, 0x05, 0x24, 0x01]);
        assert_eq!(
            drain(&mut r),
            vec![
                Err(DecodeWarning::HighBitInFrame {
                    id: MessageId(0x86),
                    offset: 5,
                    skipped: 5
                }),
                Ok(Frame::FieldUpdate {
                    square: 0x24,
                    piece: 1
                })
            ]
        );
    }

    #[test]
    fn bad_length_skips_to_next_id() {
        let mut r = FrameReader::new(Mode::Single);
        // A battery frame with H17's size 7 (4 payload bytes), then a version frame.
        r.push(&[
            0xa0, 0x00, 0x07, 0x58, 0x01, 0x02, 0x03, 0x93, 0x00, 0x05, 0x01, 0x02,
        ]);
        assert_eq!(
            drain(&mut r),
            vec![
                Err(DecodeWarning::BadLength {
                    id: MessageId(0xa0),
                    len: 7,
                    skipped: 7
                }),
                Ok(Frame::Version { major: 1, minor: 2 })
            ]
        );
    }

    #[test]
    fn incomplete_waits() {
        let mut r = FrameReader::new(Mode::Single);
        r.push(&[0x8d, 0x00]);
        assert_eq!(r.next_frame(), None);
        r.push(&[0x0a, 0x20, 0x03, 0x02, 0x20, 0x03]);
        assert_eq!(r.next_frame(), None);
        assert_eq!(r.buffered(), 8);
        r.push(&[0x02, 0x08]);
        assert!(matches!(r.next_frame(), Some(Ok(Frame::BwTime(_)))));
        assert_eq!(r.next_frame(), None);
    }

    #[test]
    fn square_out_of_range_is_a_warning() {
        let mut r = FrameReader::new(Mode::Single);
        r.push(&[0x8e, 0x00, 0x05, 0x40, 0x01]);
        assert!(matches!(
            r.next_frame(),
            Some(Err(DecodeWarning::InvalidPayload { skipped: 5, .. }))
        ));
        assert_eq!(r.next_frame(), None);
    }
}
