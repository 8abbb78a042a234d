//! Cutting messages off the bytes: one streaming nom parser per message, over 7-bit characters.
//!
//! Flow: [`cut_reply`] (the [`super::ChessLink`] wire) and [`cut_command`] (the emulator's side)
//! mask bit 7 off the first bytes, run [`parse_reply`] / [`parse_command`], and on a failure
//! say how many bytes to drop: up to the next letter of their direction, never past it. The
//! parsers check each character against its place as it comes (pieces in `s`, upper-case hex
//! digits, the identity's text), so they answer `Incomplete` only while the characters so far
//! can still make a message; the check digits are compared last.

use nom::{
    Err, IResult, Needed, Parser,
    bytes::streaming::take_while_m_n,
    error::{ErrorKind, ParseError},
    multi::fill,
};
use shakmaty::Piece;

use super::{
    Command, Frame, IDENTITY_TEXT_MAX, LED_COUNT, Leds, MAX_COMMAND_LEN, MAX_REPLY_LEN,
    MessageError, Report, block_check, cmd, letter, piece_from_char,
};

/// Where a parser gave up, before it is told as a [`MessageError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// The first character is no letter of this direction.
    Letter,
    /// The character `rest` characters before the end of the input does not fit.
    Char {
        rest: usize,
        expected: &'static str,
    },
    Check {
        found: u8,
        computed: u8,
    },
    Nom(ErrorKind),
}

impl ParseError<&[u8]> for Fault {
    fn from_error_kind(_input: &[u8], kind: ErrorKind) -> Self {
        Fault::Nom(kind)
    }

    fn append(_input: &[u8], _kind: ErrorKind, other: Self) -> Self {
        other
    }
}

impl Fault {
    /// The fault in words, for the message that starts `chars`.
    fn tell(self, chars: &[u8]) -> MessageError {
        let first = chars.first().copied().unwrap_or(0);
        let letter = char::from(first);
        match self {
            Fault::Letter => MessageError::NotALetter { byte: first },
            Fault::Char { rest, expected } => {
                let offset = chars.len().saturating_sub(rest);
                MessageError::BadCharacter {
                    letter,
                    offset,
                    found: chars.get(offset).copied().unwrap_or(0),
                    expected,
                }
            }
            Fault::Check { found, computed } => MessageError::BadCheck {
                letter,
                found,
                computed,
            },
            Fault::Nom(kind) => MessageError::Nom { letter, kind },
        }
    }
}

type CResult<'a, T> = IResult<&'a [u8], T, Fault>;

/// One character that `ok` accepts.
fn char_where<'a>(
    expected: &'static str,
    ok: impl Fn(u8) -> bool,
) -> impl Fn(&'a [u8]) -> CResult<'a, u8> {
    move |i: &'a [u8]| match i.split_first() {
        None => Err(Err::Incomplete(Needed::new(1))),
        Some((&c, rest)) if ok(c) => Ok((rest, c)),
        Some(_) => Err(Err::Error(Fault::Char {
            rest: i.len(),
            expected,
        })),
    }
}

/// The value of an upper-case hex digit (the spec: "upper-case hex characters").
fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// A byte as two upper-case hex digits, high first.
fn hex_byte<'a>(expected: &'static str) -> impl Fn(&'a [u8]) -> CResult<'a, u8> {
    move |i: &'a [u8]| {
        let digit = |i: &'a [u8]| -> CResult<'a, u8> {
            match i.split_first() {
                None => Err(Err::Incomplete(Needed::new(1))),
                Some((&c, rest)) => match hex_value(c) {
                    Some(v) => Ok((rest, v)),
                    None => Err(Err::Error(Fault::Char {
                        rest: i.len(),
                        expected,
                    })),
                },
            }
        };
        let (i, hi) = digit(i)?;
        let (i, lo) = digit(i)?;
        Ok((i, (hi << 4) | lo))
    }
}

fn square(i: &[u8]) -> CResult<'_, Option<Piece>> {
    match i.split_first() {
        None => Err(Err::Incomplete(Needed::new(1))),
        Some((&c, rest)) => match piece_from_char(c) {
            Some(p) => Ok((rest, p)),
            None => Err(Err::Error(Fault::Char {
                rest: i.len(),
                expected: "a piece letter or '.'",
            })),
        },
    }
}

fn status(i: &[u8]) -> CResult<'_, Frame> {
    let mut squares = [None; 64];
    let (i, ()) = fill(square, &mut squares).parse(i)?;
    Ok((i, Frame::Status(Report(squares))))
}

/// Address and value of a `w` or `r` reply, or of a `W` command.
fn register(i: &[u8]) -> CResult<'_, (u8, u8)> {
    let (i, address) = hex_byte("an address digit")(i)?;
    let (i, value) = hex_byte("a value digit")(i)?;
    Ok((i, (address, value)))
}

fn is_text(c: u8) -> bool {
    (0x20..=0x7e).contains(&c)
}

fn identity(i: &[u8]) -> CResult<'_, Frame> {
    let (i, selector) = hex_byte("a selector digit")(i)?;
    let (i, text) = take_while_m_n(0, IDENTITY_TEXT_MAX, is_text)(i)?;
    let (i, _) = char_where("text or a line end", |c| c == b'\n')(i)?;
    // `is_text` let through printable ASCII only.
    let text = text.iter().map(|&c| char::from(c)).collect();
    Ok((i, Frame::Identity { selector, text }))
}

/// The message's letter, its body, and the check digits over both.
fn checked<'a, T>(
    i: &'a [u8],
    body: impl FnOnce(u8, &'a [u8]) -> CResult<'a, T>,
) -> CResult<'a, T> {
    let Some((&first, after)) = i.split_first() else {
        return Err(Err::Incomplete(Needed::new(1)));
    };
    let (rest, value) = body(first, after)?;
    let computed = block_check(&i[..i.len() - rest.len()]);
    let (rest, found) = hex_byte("a check digit")(rest)?;
    if found != computed {
        return Err(Err::Error(Fault::Check { found, computed }));
    }
    Ok((rest, value))
}

fn reply(i: &[u8]) -> CResult<'_, Frame> {
    checked(i, |first, i| match first {
        letter::STATUS => status(i),
        letter::VERSION => {
            let (i, high) = hex_byte("a version digit")(i)?;
            let (i, low) = hex_byte("a version digit")(i)?;
            Ok((i, Frame::Version { high, low }))
        }
        letter::LEDS => Ok((i, Frame::LedsSet)),
        letter::LEDS_OFF => Ok((i, Frame::LedsOff)),
        letter::WRITE => {
            let (i, (address, value)) = register(i)?;
            Ok((i, Frame::RegisterWritten { address, value }))
        }
        letter::READ => {
            let (i, (address, value)) = register(i)?;
            Ok((i, Frame::RegisterRead { address, value }))
        }
        letter::IDENTITY => identity(i),
        _ => Err(Err::Error(Fault::Letter)),
    })
}

fn leds(i: &[u8]) -> CResult<'_, Command> {
    let (i, slot_time) = hex_byte("a slot time digit")(i)?;
    let mut pattern = [0; LED_COUNT];
    let (i, ()) = fill(hex_byte("an LED pattern digit"), &mut pattern).parse(i)?;
    Ok((i, Command::SetLeds(Leds { slot_time, pattern })))
}

fn command(i: &[u8]) -> CResult<'_, Command> {
    checked(i, |first, i| match first {
        cmd::STATUS => Ok((i, Command::Status)),
        cmd::VERSION => Ok((i, Command::Version)),
        cmd::LEDS => leds(i),
        cmd::LEDS_OFF => Ok((i, Command::LedsOff)),
        cmd::RESET => Ok((i, Command::Reset)),
        cmd::WRITE => {
            let (i, (address, value)) = register(i)?;
            Ok((i, Command::WriteRegister { address, value }))
        }
        cmd::READ => {
            let (i, address) = hex_byte("an address digit")(i)?;
            Ok((i, Command::ReadRegister { address }))
        }
        cmd::IDENTITY => {
            let (i, selector) = hex_byte("a selector digit")(i)?;
            Ok((i, Command::Identify { selector }))
        }
        _ => Err(Err::Error(Fault::Letter)),
    })
}

/// Decodes the reply at the start of `chars`, 7-bit characters (bit 7 already masked off).
/// Streaming: `Incomplete` while the characters so far may still make a reply.
pub fn parse_reply(chars: &[u8]) -> IResult<&[u8], Frame, MessageError> {
    reply(chars).map_err(|e| e.map(|f| f.tell(chars)))
}

/// Decodes the command at the start of `chars`, as [`parse_reply`] does replies.
pub fn parse_command(chars: &[u8]) -> IResult<&[u8], Command, MessageError> {
    command(chars).map_err(|e| e.map(|f| f.tell(chars)))
}

/// A whole-message parser over 7-bit characters.
type Parse<T> = fn(&[u8]) -> IResult<&[u8], T, MessageError>;

/// The message at the start of `buf` (any bit 7), or why its first bytes make none, with how
/// many bytes it took: up to the next byte whose character is in `letters`, never past it.
/// `None` while `buf` holds only the start of a message.
fn cut_message<T>(
    buf: &[u8],
    letters: &[u8],
    max_len: usize,
    parse: Parse<T>,
) -> Option<(Result<T, MessageError>, usize)> {
    buf.first()?;
    let to_next = || {
        1 + buf
            .iter()
            .skip(1)
            .position(|&b| letters.contains(&(b & 0x7f)))
            .unwrap_or(buf.len() - 1)
    };
    let mut chars = [0u8; MAX_COMMAND_LEN];
    let n = buf.len().min(max_len).min(chars.len());
    for (c, &b) in chars.iter_mut().zip(buf) {
        *c = b & 0x7f;
    }
    let chars = &chars[..n];
    match parse(chars) {
        Ok((rest, value)) => Some((Ok(value), n - rest.len())),
        Err(Err::Incomplete(_)) => None,
        Err(Err::Error(e) | Err::Failure(e)) => Some((Err(e), to_next())),
    }
}

/// The reply at the start of `buf` as the board sent it (bit 7 may carry parity), or the error
/// for the bytes dropped before the next reply letter, with how many bytes it took (at least
/// one); `None` while `buf` holds only the start of a reply.
pub fn cut_reply(buf: &[u8]) -> Option<(Result<Frame, MessageError>, usize)> {
    cut_message(buf, &letter::REPLIES, MAX_REPLY_LEN, parse_reply)
}

/// The command at the start of `buf` as the host sent it, for the emulator: as [`cut_reply`],
/// resynchronising on the command letters.
pub fn cut_command(buf: &[u8]) -> Option<(Result<Command, MessageError>, usize)> {
    cut_message(buf, &cmd::COMMANDS, MAX_COMMAND_LEN, parse_command)
}
