//! Chessnut framing and reports: `id len payload`, the resynchronisation rules of the module doc,
//! one nom parser per report, and the encoder.
//!
//! Flow: [`cut_reports`] (behind [`Chessnut`]'s [`Wire::cut`], and the commands' wire) reads a
//! header with [`parse_header`], decides where the report ends or which bytes to drop, and hands
//! the payload to [`decode_report`], which dispatches by id and length to the message parsers.
//! [`parse_report`] does the same for input that must start at a report. `Frame::to_bytes`
//! writes a frame back byte for byte.

use nom::{
    Err, IResult, Parser,
    bytes::{complete::take as take_complete, streaming::take},
    combinator::rest,
    error::{ErrorKind, ParseError},
    number::{complete::u8 as byte_complete, streaming::u8 as byte},
};

use super::{
    Battery, Chessnut, Frame, MAX_PAYLOAD, POSITION_LEN_BLE, POSITION_LEN_USB, PositionReport,
    ReportId, SQUARE_BYTES, WirePlacement, id,
};
use crate::protocol::frame::{DecodeWarning, Wire};

/// Why bytes made no report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    /// A square code of 13..=15.
    #[error("square {index} (wire order, 0 = h8) has code {code}; codes run 0 to 12")]
    PieceCode { index: usize, code: u8 },
    /// A header no report has: id 0, or a length of 0 or over [`MAX_PAYLOAD`].
    #[error("{id} {len:#04x} starts no report (ids are nonzero, lengths 1 to 62)")]
    NotAReport { id: ReportId, len: u8 },
    /// A parser's structural error (not produced for lengths the framing checked).
    #[error("malformed report")]
    Malformed,
}

impl<I> ParseError<I> for ReportError {
    fn from_error_kind(_input: I, _kind: ErrorKind) -> Self {
        ReportError::Malformed
    }

    fn append(_input: I, _kind: ErrorKind, other: Self) -> Self {
        other
    }
}

type PResult<'a, T> = IResult<&'a [u8], T, ReportError>;

/// Whether `id len` can start a report: a nonzero id (HID reserves report id 0) and 1 to
/// [`MAX_PAYLOAD`] payload bytes.
pub(super) fn plausible(id: u8, len: u8) -> bool {
    id != 0 && (1..=MAX_PAYLOAD).contains(&usize::from(len))
}

/// Whether `id len` is a board-to-host header the sources document exactly (see the module
/// doc): such a report is taken whole when its payload decodes.
pub fn is_documented_header(id: u8, len: u8) -> bool {
    matches!(
        (id, len),
        (id::POSITION, POSITION_LEN_USB | POSITION_LEN_BLE)
            | (id::BATTERY, 2)
            | (id::ACK, 1)
            | (id::FILE_COUNT, 1)
    )
}

/// Reads a header, `id len` (streaming).
pub fn parse_header(i: &[u8]) -> PResult<'_, (u8, u8)> {
    (byte, byte).parse(i)
}

/// Decodes one report from the start of `i`, which must start at a report (streaming:
/// `Incomplete` until the whole report is there). No resynchronisation: that is the wire's.
pub fn parse_report(i: &[u8]) -> PResult<'_, Frame> {
    let (after, (id, len)) = parse_header(i)?;
    if !plausible(id, len) {
        return Err(Err::Error(ReportError::NotAReport {
            id: ReportId(id),
            len,
        }));
    }
    let (rest, payload) = take(len).parse(after)?;
    let frame = decode_report(id, payload).map_err(Err::Error)?;
    Ok((rest, frame))
}

/// Decodes a report's payload by its id and length; unknown ids and undocumented lengths
/// become [`Frame::Unknown`] (a position of 32 square bytes or more is decoded whatever follows).
pub fn decode_report(id: u8, payload: &[u8]) -> Result<Frame, ReportError> {
    let run = |parser: fn(&[u8]) -> PResult<'_, Frame>| match parser(payload) {
        Ok((_, frame)) => Ok(frame),
        Err(Err::Error(e) | Err::Failure(e)) => Err(e),
        Err(Err::Incomplete(_)) => Err(ReportError::Malformed),
    };
    match (id, payload.len()) {
        (id::POSITION, n) if n >= SQUARE_BYTES => run(position),
        (id::BATTERY, 2) => run(battery),
        (id::ACK, 1) => run(ack),
        (id::FILE_COUNT, 1) => run(file_count),
        (id::BUTTON, n) if n >= 1 => run(button),
        _ => Ok(Frame::Unknown {
            id: ReportId(id),
            bytes: payload.to_vec(),
        }),
    }
}

/// POSITION (0x01): 32 square bytes, then bytes kept raw.
fn position(p: &[u8]) -> PResult<'_, Frame> {
    let (after, squares) = take_complete(SQUARE_BYTES).parse(p)?;
    let squares: &[u8; SQUARE_BYTES] = squares.try_into().map_err(|_| malformed())?;
    let placement = WirePlacement::from_bytes(squares).map_err(Err::Error)?;
    let (after, extra) = rest(after)?;
    Ok((
        after,
        Frame::Position(PositionReport {
            placement,
            extra: extra.to_vec(),
        }),
    ))
}

/// BATTERY (0x2A): level, status.
fn battery(p: &[u8]) -> PResult<'_, Frame> {
    let (after, (level, status)) = (byte_complete, byte_complete).parse(p)?;
    Ok((after, Frame::Battery(Battery { level, status })))
}

/// ACK (0x23): one code.
fn ack(p: &[u8]) -> PResult<'_, Frame> {
    let (after, code) = byte_complete(p)?;
    Ok((after, Frame::Ack { code }))
}

/// FILE_COUNT (0x32): games stored.
fn file_count(p: &[u8]) -> PResult<'_, Frame> {
    let (after, n) = byte_complete(p)?;
    Ok((after, Frame::FileCount(n)))
}

/// BUTTON (0x0F): the button's number, then bytes kept raw.
fn button(p: &[u8]) -> PResult<'_, Frame> {
    let (after, button) = byte_complete(p)?;
    let (after, more) = rest(after)?;
    Ok((
        after,
        Frame::Button {
            button,
            rest: more.to_vec(),
        },
    ))
}

fn malformed() -> Err<ReportError> {
    Err::Error(ReportError::Malformed)
}

/// [`Wire::cut`] for `id len payload` framing (reports and commands alike): `documented` says
/// which headers are taken whole, `decode` reads a payload. See the module doc for the rules.
pub(super) fn cut_reports<F>(
    buf: &[u8],
    documented: fn(u8, u8) -> bool,
    decode: impl Fn(u8, &[u8]) -> Result<F, ReportError>,
) -> Option<(Result<F, DecodeWarning>, usize)> {
    let &first = buf.first()?;
    let Some(&len) = buf.get(1) else {
        // A lone nonzero byte may be the start of a report; a zero never is.
        return if first == 0 { garbage(1) } else { None };
    };
    if !plausible(first, len) {
        let could_start = |r: &[u8]| match r {
            [0, ..] | [] => false,
            [_] => true,
            [id, len, ..] => plausible(*id, *len),
        };
        let skip = (1..buf.len())
            .find(|&p| could_start(&buf[p..]))
            .unwrap_or(buf.len());
        return garbage(skip);
    }
    let total = 2 + usize::from(len);
    // The first documented header wholly inside this report, among the bytes there are.
    let inner = (1..total - 1)
        .take_while(|&k| k + 1 < buf.len())
        .find(|&k| documented(buf[k], buf[k + 1]));
    if !documented(first, len)
        && let Some(k) = inner
    {
        let detail = format!(
            "report {} cut short by a {} report's header at byte {k}",
            ReportId(first),
            ReportId(buf[k])
        );
        return Some((Err(DecodeWarning::Dropped { detail, skipped: k }), k));
    }
    let payload = buf.get(2..total)?;
    match decode(first, payload) {
        Ok(frame) => Some((Ok(frame), total)),
        Err(e) => {
            let skipped = inner.unwrap_or(total);
            let detail = format!("report {}: {e}", ReportId(first));
            Some((Err(DecodeWarning::Dropped { detail, skipped }), skipped))
        }
    }
}

fn garbage<F>(count: usize) -> Option<(Result<F, DecodeWarning>, usize)> {
    let detail = format!(
        "{count} byte(s) that start no report (a nonzero id and a length of 1 to {MAX_PAYLOAD}; \
         zeros may be a fixed-size HID report's padding)"
    );
    Some((
        Err(DecodeWarning::Dropped {
            detail,
            skipped: count,
        }),
        count,
    ))
}

/// One hidraw read cut to the report it carries (`2 + len` bytes), dropping the padding of a
/// fixed-size HID report (\[GO\] reads 65 bytes for a report of 63). Reads that start no report
/// are returned whole, for the wire to warn about.
pub fn trim_report(read: &[u8]) -> &[u8] {
    match read {
        [id, len, ..] if *id != 0 => &read[..read.len().min(2 + usize::from(*len))],
        _ => read,
    }
}

/// Appends `id len payload`, the payload cut to 255 bytes (no report is longer than 62).
pub(super) fn push_report(out: &mut Vec<u8>, id: u8, payload: &[&[u8]]) {
    let len_at = out.len();
    out.extend([id, 0]);
    let mut room = usize::from(u8::MAX);
    for part in payload {
        let n = part.len().min(room);
        out.extend_from_slice(&part[..n]);
        room -= n;
    }
    out[len_at + 1] = (usize::from(u8::MAX) - room) as u8;
}

impl Frame {
    /// Appends the wire bytes of this frame to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Frame::Position(r) => push_report(
                out,
                id::POSITION,
                &[&r.placement.to_bytes(), r.extra.as_slice()],
            ),
            Frame::Battery(b) => push_report(out, id::BATTERY, &[&[b.level, b.status]]),
            Frame::Ack { code } => push_report(out, id::ACK, &[&[*code]]),
            Frame::FileCount(n) => push_report(out, id::FILE_COUNT, &[&[*n]]),
            Frame::Button { button, rest } => {
                push_report(out, id::BUTTON, &[&[*button], rest.as_slice()])
            }
            Frame::Unknown { id, bytes } => push_report(out, id.0, &[bytes.as_slice()]),
        }
    }

    /// The wire bytes of this frame.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(SQUARE_BYTES + 8);
        self.encode(&mut out);
        out
    }

    /// The position report a board lying the normal way sends over USB for `placement`, with
    /// `extra` zeros after the squares (what they hold on a real board no source says).
    pub fn usb_position(placement: WirePlacement) -> Frame {
        Frame::Position(PositionReport {
            placement,
            extra: vec![0; usize::from(POSITION_LEN_USB) - SQUARE_BYTES],
        })
    }
}

impl Wire for Chessnut {
    type Frame = Frame;

    fn cut(&self, buf: &[u8]) -> Option<(Result<Frame, DecodeWarning>, usize)> {
        cut_reports(buf, is_documented_header, decode_report)
    }
}
