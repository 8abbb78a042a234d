//! Framing and decoding of what a Certabo or Tabutronic board sends (rules in the module doc of
//! [`super`]).
//!
//! Flow: [`cut`] skips the filler before a frame, finds the frame's end (a record's CR, or the
//! `L`/`D` that follows it) and hands a record's body to [`decode_body`], which deletes bare LFs,
//! splits the numbers and checks their count and range. A scan rather than nom: the body is
//! split on bytes (LF) that may fall inside a number, which nom's combinators do not model.

use super::{
    Certabo, Frame, LedAck, MAX_FILLER, MAX_RECORD_BODY, OCCUPANCY_NUMBERS, Occupancy,
    RECORD_NUMBERS, Record, START,
};
use crate::protocol::frame::{DecodeWarning, Wire};

/// Why a record was dropped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// A byte that is neither a digit, a space, LF nor NUL (offset from the `:`).
    #[error("record holds byte {byte:#04x} at offset {offset}")]
    UnexpectedByte { byte: u8, offset: usize },
    /// A number above 255 (saturated at `u32::MAX`).
    #[error("record's number {index} is {value}, above 255")]
    OutOfRange { index: usize, value: u32 },
    /// Not 320 numbers (nor a Sentio's 8).
    #[error(
        "record of {count} numbers, not {RECORD_NUMBERS} (or {OCCUPANCY_NUMBERS} from a Sentio)"
    )]
    Count { count: usize },
    /// The next `:` came before the record's CR.
    #[error("record of {len} byte(s) cut short by the next ':'")]
    CutShort { len: usize },
    /// No end within [`MAX_RECORD_BODY`] bytes.
    #[error("record without an end within {MAX_RECORD_BODY} bytes")]
    NoEnd,
}

/// Bytes skipped with the frame that follows them.
fn is_filler(b: u8) -> bool {
    matches!(b, b'\r' | b'\n' | b' ' | 0)
}

/// Bytes that may start a frame: resynchronisation never skips past one.
fn may_start(b: u8) -> bool {
    matches!(b, START | b'L' | b'D')
}

fn dropped(detail: impl Into<String>, skipped: usize) -> (Result<Frame, DecodeWarning>, usize) {
    (
        Err(DecodeWarning::Dropped {
            detail: detail.into(),
            skipped,
        }),
        skipped,
    )
}

/// The frame at the start of `buf` or the warning for the bytes that are not one, with how many
/// bytes it took; `None` while `buf` holds only filler or the start of a frame.
pub fn cut(buf: &[u8]) -> Option<(Result<Frame, DecodeWarning>, usize)> {
    let head = &buf[..buf.len().min(MAX_FILLER)];
    let f = head.iter().take_while(|&&b| is_filler(b)).count();
    if f == MAX_FILLER {
        return Some(dropped(
            format!("{MAX_FILLER} line ends, spaces or NULs in a row"),
            f,
        ));
    }
    let &first = buf.get(f)?;
    match first {
        START => record(buf, f),
        b'L' | b'D' => {
            let &next = buf.get(f + 1)?;
            if is_filler(next) || next == START {
                let ack = if first == b'L' { LedAck::L } else { LedAck::D };
                Some((Ok(Frame::LedAck(ack)), f + 1))
            } else {
                Some(junk(buf, f))
            }
        }
        _ => Some(junk(buf, f)),
    }
}

/// Drops from the start of `buf` up to the next byte after `at` that may start a frame.
fn junk(buf: &[u8], at: usize) -> (Result<Frame, DecodeWarning>, usize) {
    let end = buf[at + 1..]
        .iter()
        .position(|&b| may_start(b))
        .map_or(buf.len(), |p| at + 1 + p);
    dropped(format!("{end} byte(s) before a record's ':'"), end)
}

/// A record whose `:` is at `at`; `None` while its end has not come.
fn record(buf: &[u8], at: usize) -> Option<(Result<Frame, DecodeWarning>, usize)> {
    let start = at + 1;
    let window = &buf[start..buf.len().min(start + MAX_RECORD_BODY)];
    let Some(p) = window
        .iter()
        .position(|&b| matches!(b, b'\r' | START | b'L' | b'D'))
    else {
        let used = start + MAX_RECORD_BODY;
        return (window.len() == MAX_RECORD_BODY)
            .then(|| dropped(RecordError::NoEnd.to_string(), used));
    };
    let body = &window[..p];
    let end = start + p;
    let used = match buf[end] {
        b'\r' => end + 1,
        START => {
            return Some(dropped(
                RecordError::CutShort { len: p + 1 }.to_string(),
                end,
            ));
        }
        _ => end,
    };
    Some(match decode_body(body) {
        Ok(frame) => (Ok(frame), used),
        Err(e) => dropped(e.to_string(), used),
    })
}

/// Decodes a record's body (the bytes between `:` and its CR): 320 numbers make a
/// [`Frame::Pieces`], 8 a [`Frame::Occupancy`]. A bare LF is deleted (the digits around it
/// join), NUL reads as a space.
pub fn decode_body(body: &[u8]) -> Result<Frame, RecordError> {
    let mut numbers = [0u8; RECORD_NUMBERS];
    let mut count = 0usize;
    let mut current: Option<u32> = None;
    let mut finish = |current: &mut Option<u32>, count: &mut usize| {
        if let Some(value) = current.take() {
            let n = u8::try_from(value).map_err(|_| RecordError::OutOfRange {
                index: *count,
                value,
            })?;
            if let Some(slot) = numbers.get_mut(*count) {
                *slot = n;
            }
            *count += 1;
        }
        Ok(())
    };
    for (i, &b) in body.iter().enumerate() {
        match b {
            b'0'..=b'9' => {
                let digit = u32::from(b - b'0');
                current = Some(
                    current
                        .unwrap_or(0)
                        .saturating_mul(10)
                        .saturating_add(digit),
                );
            }
            b'\n' => {}
            b' ' | 0 => finish(&mut current, &mut count)?,
            byte => {
                return Err(RecordError::UnexpectedByte {
                    byte,
                    offset: i + 1,
                });
            }
        }
    }
    finish(&mut current, &mut count)?;
    match count {
        RECORD_NUMBERS => Ok(Frame::Pieces(Record::from_numbers(&numbers))),
        OCCUPANCY_NUMBERS => {
            let mut occupancy = [0u8; OCCUPANCY_NUMBERS];
            occupancy.copy_from_slice(&numbers[..OCCUPANCY_NUMBERS]);
            Ok(Frame::Occupancy(Occupancy(occupancy)))
        }
        count => Err(RecordError::Count { count }),
    }
}

impl Wire for Certabo {
    type Frame = Frame;

    fn cut(&self, buf: &[u8]) -> Option<(Result<Frame, DecodeWarning>, usize)> {
        cut(buf)
    }
}
