//! The EEPROM token format (dgt-notes 1.11): the payload of DGT_MSG_EE_MOVES (0x8f) and the data
//! of the bus replies BUS_UPDATE (0x85) and BUS_FROM_START (0x86).
//!
//! Flow: [`parse_ee_tokens`] runs one nom parser per token over the whole stream; the first
//! byte says the kind: `0x40..=0x5f` a field change (2 bytes: `0t0r nnnn`, `00ii iiii`),
//! `0x60..=0x69` / `0x70..=0x79` a clock reading (3 bytes: `0uuf hhhh`, `0MMMmmmm`, `0SSSssss`,
//! BCD), `0x6a..=0x6f`, `0x7a..=0x7f` and `0x00` one-byte tags. [`encode_ee_tokens`] writes
//! the same bytes back (the emulator's side). No I/O.

use nom::{IResult, Parser};

use super::ClockTime;

/// One token of the EEPROM log format (dgt-notes 1.11), also the payload of bus updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EeToken {
    /// A square changed (`0t0r nnnn` + field): `square` 0..=63 in board numbering, `piece` the
    /// new code 0x00..=0x0f; `quick`: the r bit (under ~250 ms since the previous change).
    Field {
        square: u8,
        piece: u8,
        quick: bool,
    },
    /// A clock reading written at a lever change (`0uuf hhhh` `0MMMmmmm` `0SSSssss`); `left`: f.
    Clock {
        left: bool,
        time: ClockTime,
    },
    Tag(EeTag),
}

/// The one-byte tokens (dgt-notes 1.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EeTag {
    /// 0x6a: the board powered up (after three NOPs; one field token per piece follows).
    PowerUp,
    /// 0x6b: the end of a dump.
    Eof,
    /// 0x6c: 16 pieces on the a, b, g and h rows, not the start position (Chess960 and the like).
    FourRows,
    /// 0x6d: the board was seen empty.
    EmptyBoard,
    /// 0x6e: the log was downloaded here.
    Downloaded,
    /// 0x6f: the start position, white on the connector's left.
    BeginPos,
    /// 0x7a: the start position, white on the connector's right (a rotated board).
    BeginPosRot,
    /// 0x7b: written by bus SET_START_GAME; BUS_FROM_START sends from here.
    StartTag,
    /// 0x7c: the watchdog reset the board (a power-up sequence follows).
    Watchdog,
    /// 0x7f.
    Nop,
    /// 0x00.
    Nop2,
    /// 0x7d or 0x7e: reserved for future use, kept.
    Reserved(u8),
}

/// Why a token stream does not decode; `offset` is the index of the offending byte in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EeTokenError {
    #[error("EEPROM token at byte {offset}: field byte {value:#04x} is beyond square 63")]
    FieldOutOfRange { offset: usize, value: u8 },
    #[error("EEPROM clock token at byte {offset}: {part} byte {value:#04x} is not BCD 00..=59")]
    BadBcd {
        offset: usize,
        part: &'static str,
        value: u8,
    },
    #[error("EEPROM {kind} token at byte {offset} cut short: needs {needed} bytes, {left} left")]
    Truncated {
        offset: usize,
        kind: &'static str,
        needed: usize,
        left: usize,
    },
    #[error("byte {offset} ({value:#04x}) starts no EEPROM token")]
    NoToken { offset: usize, value: u8 },
}

impl EeTokenError {
    /// The index of the offending byte in the input.
    pub fn offset(&self) -> usize {
        match *self {
            EeTokenError::FieldOutOfRange { offset, .. }
            | EeTokenError::BadBcd { offset, .. }
            | EeTokenError::Truncated { offset, .. }
            | EeTokenError::NoToken { offset, .. } => offset,
        }
    }
}

/// Token first bytes (dgt-notes 1.11).
pub mod ee_code {
    pub const FIELD: u8 = 0x40;
    pub const FIELD_QUICK: u8 = 0x10;
    pub const CLOCK: u8 = 0x60;
    pub const CLOCK_LEFT: u8 = 0x10;
    pub const POWERUP: u8 = 0x6a;
    pub const EOF: u8 = 0x6b;
    pub const FOURROWS: u8 = 0x6c;
    pub const EMPTYBOARD: u8 = 0x6d;
    pub const DOWNLOADED: u8 = 0x6e;
    pub const BEGINPOS: u8 = 0x6f;
    pub const BEGINPOS_ROT: u8 = 0x7a;
    pub const START_TAG: u8 = 0x7b;
    pub const WATCHDOG: u8 = 0x7c;
    pub const FUTURE_1: u8 = 0x7d;
    pub const FUTURE_2: u8 = 0x7e;
    pub const NOP: u8 = 0x7f;
    pub const NOP2: u8 = 0x00;
}

impl EeTag {
    /// The tag for a one-byte token, if `b` is one.
    pub fn from_code(b: u8) -> Option<EeTag> {
        use ee_code::*;
        Some(match b {
            POWERUP => EeTag::PowerUp,
            EOF => EeTag::Eof,
            FOURROWS => EeTag::FourRows,
            EMPTYBOARD => EeTag::EmptyBoard,
            DOWNLOADED => EeTag::Downloaded,
            BEGINPOS => EeTag::BeginPos,
            BEGINPOS_ROT => EeTag::BeginPosRot,
            START_TAG => EeTag::StartTag,
            WATCHDOG => EeTag::Watchdog,
            FUTURE_1 | FUTURE_2 => EeTag::Reserved(b),
            NOP => EeTag::Nop,
            NOP2 => EeTag::Nop2,
            _ => return None,
        })
    }

    /// The byte of this tag (`Reserved(b)` writes `b`).
    pub fn code(self) -> u8 {
        use ee_code::*;
        match self {
            EeTag::PowerUp => POWERUP,
            EeTag::Eof => EOF,
            EeTag::FourRows => FOURROWS,
            EeTag::EmptyBoard => EMPTYBOARD,
            EeTag::Downloaded => DOWNLOADED,
            EeTag::BeginPos => BEGINPOS,
            EeTag::BeginPosRot => BEGINPOS_ROT,
            EeTag::StartTag => START_TAG,
            EeTag::Watchdog => WATCHDOG,
            EeTag::Nop => NOP,
            EeTag::Nop2 => NOP2,
            EeTag::Reserved(b) => b,
        }
    }
}

/// The length in bytes of the token that starts with `first`, or `None` if no token does.
pub fn ee_token_len(first: u8) -> Option<usize> {
    match first {
        0x40..=0x5f => Some(2),
        0x60..=0x69 | 0x70..=0x79 => Some(3),
        _ => EeTag::from_code(first).map(|_| 1),
    }
}

/// A failure inside the token parsers: what went wrong and the input from the offending byte.
#[derive(Debug)]
struct Fault<'a> {
    at: &'a [u8],
    kind: FaultKind,
}

#[derive(Debug)]
enum FaultKind {
    Field(u8),
    Bcd(&'static str, u8),
    Short(&'static str, usize),
    NoToken(u8),
    Nom,
}

impl<'a> nom::error::ParseError<&'a [u8]> for Fault<'a> {
    fn from_error_kind(at: &'a [u8], _kind: nom::error::ErrorKind) -> Self {
        Fault {
            at,
            kind: FaultKind::Nom,
        }
    }

    fn append(_input: &'a [u8], _kind: nom::error::ErrorKind, other: Self) -> Self {
        other
    }
}

type TResult<'a, T> = IResult<&'a [u8], T, Fault<'a>>;

fn fail<'a, T>(at: &'a [u8], kind: FaultKind) -> TResult<'a, T> {
    Err(nom::Err::Error(Fault { at, kind }))
}

/// The whole token (`n` bytes) or a `Short` fault at its first byte.
fn whole<'a>(i: &'a [u8], n: usize, kind: &'static str) -> TResult<'a, &'a [u8]> {
    if i.len() < n {
        return fail(i, FaultKind::Short(kind, n));
    }
    nom::bytes::complete::take(n).parse(i)
}

fn bcd59<'a>(i: &'a [u8], part: &'static str) -> TResult<'a, u8> {
    let (rest, b) = nom::number::complete::u8(i)?;
    if b >> 4 > 5 || b & 0x0f > 9 {
        return fail(i, FaultKind::Bcd(part, b));
    }
    Ok((rest, (b >> 4) * 10 + (b & 0x0f)))
}

/// A field change: `0t0r nnnn`, `00ii iiii`.
fn field(i: &[u8]) -> TResult<'_, EeToken> {
    let (rest, t) = whole(i, 2, "field change")?;
    let (head, square) = (t[0], t[1]);
    if square > 63 {
        return fail(&i[1..], FaultKind::Field(square));
    }
    Ok((
        rest,
        EeToken::Field {
            square,
            piece: head & 0x0f,
            quick: head & ee_code::FIELD_QUICK != 0,
        },
    ))
}

/// A clock reading: `0uuf hhhh`, `0MMMmmmm`, `0SSSssss`.
fn clock(i: &[u8]) -> TResult<'_, EeToken> {
    let (rest, t) = whole(i, 3, "clock")?;
    let head = t[0];
    let (after, minutes) = bcd59(&i[1..], "minutes")?;
    let (_, seconds) = bcd59(after, "seconds")?;
    Ok((
        rest,
        EeToken::Clock {
            left: head & ee_code::CLOCK_LEFT != 0,
            time: ClockTime {
                hours: head & 0x0f,
                minutes,
                seconds,
            },
        },
    ))
}

fn tag(i: &[u8]) -> TResult<'_, EeToken> {
    let (rest, b) = nom::number::complete::u8(i)?;
    match EeTag::from_code(b) {
        Some(t) => Ok((rest, EeToken::Tag(t))),
        None => fail(i, FaultKind::NoToken(b)),
    }
}

/// One token from the start of `i` (complete input: a token cut short is an error).
fn token(i: &[u8]) -> TResult<'_, EeToken> {
    match i.first() {
        Some(0x40..=0x5f) => field(i),
        Some(0x60..=0x69 | 0x70..=0x79) => clock(i),
        _ => tag(i),
    }
}

/// Decodes a whole token stream (an EE_MOVES log, or a bus update's data).
pub fn parse_ee_tokens(input: &[u8]) -> Result<Vec<EeToken>, EeTokenError> {
    let mut out = Vec::with_capacity(input.len() / 2);
    let mut i = input;
    while !i.is_empty() {
        match token(i) {
            Ok((rest, t)) => {
                out.push(t);
                i = rest;
            }
            Err(nom::Err::Error(f) | nom::Err::Failure(f)) => {
                return Err(to_error(input, i, f));
            }
            Err(nom::Err::Incomplete(_)) => {
                // Complete parsers never ask for more; report it as a token cut short.
                return Err(EeTokenError::Truncated {
                    offset: input.len() - i.len(),
                    kind: "EEPROM",
                    needed: ee_token_len(i[0]).unwrap_or(1),
                    left: i.len(),
                });
            }
        }
    }
    Ok(out)
}

fn to_error(input: &[u8], token_start: &[u8], f: Fault<'_>) -> EeTokenError {
    let offset = input.len() - f.at.len();
    match f.kind {
        FaultKind::Field(value) => EeTokenError::FieldOutOfRange { offset, value },
        FaultKind::Bcd(part, value) => EeTokenError::BadBcd {
            offset,
            part,
            value,
        },
        FaultKind::Short(kind, needed) => EeTokenError::Truncated {
            offset,
            kind,
            needed,
            left: f.at.len(),
        },
        FaultKind::NoToken(value) => EeTokenError::NoToken { offset, value },
        FaultKind::Nom => EeTokenError::NoToken {
            offset: input.len() - token_start.len(),
            value: token_start.first().copied().unwrap_or(0),
        },
    }
}

fn bcd(v: u8) -> u8 {
    let v = v.min(59);
    ((v / 10) << 4) | (v % 10)
}

impl EeToken {
    /// Appends the bytes of this token. Out-of-range values are cut to the field widths
    /// (square & 0x3f, piece & 0x0f); hours are clamped to 9, minutes and seconds to 59.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            EeToken::Field {
                square,
                piece,
                quick,
            } => {
                let q = if quick { ee_code::FIELD_QUICK } else { 0 };
                out.extend_from_slice(&[ee_code::FIELD | q | (piece & 0x0f), square & 0x3f]);
            }
            EeToken::Clock { left, time } => {
                let f = if left { ee_code::CLOCK_LEFT } else { 0 };
                out.extend_from_slice(&[
                    ee_code::CLOCK | f | time.hours.min(9),
                    bcd(time.minutes),
                    bcd(time.seconds),
                ]);
            }
            EeToken::Tag(t) => out.push(t.code()),
        }
    }
}

/// Encodes tokens (the emulator's side); `parse_ee_tokens(encode) == tokens` for valid tokens.
pub fn encode_ee_tokens(tokens: &[EeToken], out: &mut Vec<u8>) {
    for t in tokens {
        t.encode(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_first_byte_has_a_length_that_the_parser_agrees_with() {
        for b in 0u8..=0xff {
            let long = [b, 0x00, 0x00, 0x00];
            match ee_token_len(b) {
                Some(n) => {
                    assert_eq!(
                        parse_ee_tokens(&long[..n]).map(|t| t.len()),
                        Ok(1),
                        "{b:#04x}"
                    )
                }
                None => assert_eq!(
                    parse_ee_tokens(&long[..1]),
                    Err(EeTokenError::NoToken {
                        offset: 0,
                        value: b
                    })
                ),
            }
        }
    }
}
