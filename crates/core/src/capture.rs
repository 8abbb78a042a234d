//! Capture files, format v1 (DESIGN.md "Capture files"): timestamped byte chunks as text.
//!
//! Flow: `record` writes a board's bytes through [`CaptureWriter`]; `replay` and the tests read
//! them back with [`parse_capture`] (whole text) or [`CaptureLines`] (line by line from any
//! `BufRead`, without an allocation per chunk via [`CaptureLines::read_chunk`], which reads a
//! line in the form boardscribe writes where the reader's buffer holds it, each byte once). A
//! line is `seconds dir hex..` with `<` from the board and `>` to it; `#` lines are comments, and
//! `# key: value` comments are headers. Times convert to whole milliseconds exactly (rounded to
//! the nearest, ties up) and must never decrease.

use std::io::{self, BufRead, Write};

use crate::{Millis, protocol::Direction};

/// Bytes that travelled one way at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub t_ms: Millis,
    pub dir: Direction,
    pub bytes: Vec<u8>,
}

/// A whole capture file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capture {
    /// `# key: value` lines, in file order.
    pub headers: Vec<(String, String)>,
    pub chunks: Vec<Chunk>,
}

impl Capture {
    /// The `device` header (`dgt` or `togyz`), if any.
    pub fn device(&self) -> Option<&str> {
        header(&self.headers, "device")
    }

    /// The first header named `key`.
    pub fn header(&self, key: &str) -> Option<&str> {
        header(&self.headers, key)
    }

    /// All bytes that travelled in `dir`, concatenated in order.
    pub fn bytes(&self, dir: Direction) -> Vec<u8> {
        self.chunks
            .iter()
            .filter(|c| c.dir == dir)
            .flat_map(|c| c.bytes.iter().copied())
            .collect()
    }
}

fn header<'a>(headers: &'a [(String, String)], key: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// What is wrong with a capture, and on which line (1-based).
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("line {line}: bad time {text:?} (expected decimal seconds such as 1.480)")]
    BadTime { line: usize, text: String },
    #[error("line {line}: time {t_ms} ms is earlier than the previous chunk's {prev_ms} ms")]
    DecreasingTime {
        line: usize,
        t_ms: Millis,
        prev_ms: Millis,
    },
    #[error("line {line}: bad direction {text:?} (expected '<' or '>')")]
    BadDirection { line: usize, text: String },
    #[error("line {line}: bad hex byte {text:?} (expected two hex digits)")]
    BadHex { line: usize, text: String },
    #[error("line {line}: no bytes after the direction")]
    NoBytes { line: usize },
    #[error("line {line}: read failed: {source}")]
    Io {
        line: usize,
        #[source]
        source: io::Error,
    },
}

impl CaptureError {
    /// The 1-based line number the error is about.
    pub fn line(&self) -> usize {
        match self {
            CaptureError::BadTime { line, .. }
            | CaptureError::DecreasingTime { line, .. }
            | CaptureError::BadDirection { line, .. }
            | CaptureError::BadHex { line, .. }
            | CaptureError::NoBytes { line }
            | CaptureError::Io { line, .. } => *line,
        }
    }
}

#[derive(Debug)]
enum Line<'a> {
    Skip,
    Header(&'a str, &'a str),
    Chunk(Millis, Direction),
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// Decimal seconds to milliseconds, exactly: digits beyond the third decimal round half up.
fn parse_time(tok: &[u8]) -> Option<Millis> {
    let (int, frac) = match tok.iter().position(|&b| b == b'.') {
        Some(d) => (&tok[..d], &tok[d + 1..]),
        None => (tok, &[][..]),
    };
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    if int.is_empty() || !digits(int) || !digits(frac) || (frac.is_empty() && int.len() < tok.len())
    {
        return None;
    }
    let mut secs: u64 = 0;
    for &d in int {
        secs = secs.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    let digit = |i: usize| frac.get(i).map_or(0, |&d| u64::from(d - b'0'));
    let mut ms = digit(0) * 100 + digit(1) * 10 + digit(2);
    if digit(3) >= 5 {
        ms += 1;
    }
    secs.checked_mul(1000)?.checked_add(ms)
}

/// The value of each byte as a hex digit; `NOT_HEX` for bytes that are not one.
const HEX_VALUE: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};
const NOT_HEX: u8 = 0xff;

/// Appends the whitespace-separated two-digit hex bytes of `text` to `out`.
fn parse_hex_bytes(text: &[u8], line: usize, out: &mut Vec<u8>) -> Result<(), CaptureError> {
    // At most one byte for every two characters: the pushes below never reallocate.
    out.reserve(text.len() / 2 + 1);
    if spaced_pairs(text, out) {
        return Ok(());
    }
    hex_tokens(text, line, out)
}

/// The hex as boardscribe writes it, pairs of digits each followed by one space but the last
/// (`86 00 43`), decoded three characters at a time into `out`: whether `text` was all of that
/// form (else `out` is left as it was, for [`hex_tokens`] to read or refuse).
fn spaced_pairs(text: &[u8], out: &mut Vec<u8>) -> bool {
    if text.len() < 2 || !(text.len() + 1).is_multiple_of(3) {
        return false;
    }
    let kept = out.len();
    let (spaced, [h, l]) = text.split_at(text.len() - 2) else {
        return false;
    };
    out.resize(kept + spaced.len() / 3 + 1, 0);
    let Some((last, bytes)) = out[kept..].split_last_mut() else {
        return false;
    };
    // Every digit's value and every separator's mismatch are ORed in: NOT_HEX and a wrong
    // separator set the high bits, which no digit has.
    let mut bad = 0u8;
    for (byte, pair) in bytes.iter_mut().zip(spaced.chunks_exact(3)) {
        let (h, l) = (
            HEX_VALUE[usize::from(pair[0])],
            HEX_VALUE[usize::from(pair[1])],
        );
        bad |= h | l | if pair[2] == b' ' { 0 } else { 0xf0 };
        *byte = (h << 4) | (l & 0x0f);
    }
    let (h, l) = (HEX_VALUE[usize::from(*h)], HEX_VALUE[usize::from(*l)]);
    bad |= h | l;
    *last = (h << 4) | (l & 0x0f);
    if bad & 0xf0 != 0 {
        out.truncate(kept);
        return false;
    }
    true
}

/// Appends the whitespace-separated two-digit hex bytes of `text` to `out`, in any spacing
/// the format allows; the first token that is not two hex digits is the error.
fn hex_tokens(text: &[u8], line: usize, out: &mut Vec<u8>) -> Result<(), CaptureError> {
    let mut rest = text;
    loop {
        match rest {
            [] => return Ok(()),
            [b, tail @ ..] if b.is_ascii_whitespace() => rest = tail,
            // Two digits that end their token (the line's end, or whitespace after them).
            [h, l, tail @ ..] if tail.first().is_none_or(u8::is_ascii_whitespace) => {
                let (h, l) = (HEX_VALUE[usize::from(*h)], HEX_VALUE[usize::from(*l)]);
                // NOT_HEX has its high bits set; no digit has.
                if (h | l) & 0xf0 != 0 {
                    break;
                }
                out.push((h << 4) | l);
                rest = tail.get(1..).unwrap_or_default();
            }
            _ => break,
        }
    }
    let len = rest
        .iter()
        .position(u8::is_ascii_whitespace)
        .unwrap_or(rest.len());
    Err(CaptureError::BadHex {
        line,
        text: lossy(&rest[..len]),
    })
}

/// The time and direction of a chunk line as boardscribe writes it (`12.345 < `: whole seconds,
/// a point, three decimals, one space either side of the arrow), and the hex after them; `None`
/// for any other form, which the general reading of [`parse_line`] takes, with the same result.
/// Replay reads every line of a capture: this is most of its reading.
fn written_head(text: &[u8]) -> Option<(Millis, Direction, &[u8])> {
    // Up to 15 digits of seconds, then the point: no overflow below.
    let mut secs: Millis = 0;
    let mut point = 0;
    loop {
        match *text.get(point)? {
            d @ b'0'..=b'9' if point < 15 => secs = secs * 10 + Millis::from(d - b'0'),
            b'.' if point > 0 => break,
            _ => return None,
        }
        point += 1;
    }
    let &[_, a, b, c, b' ', arrow, b' ', ref hex @ ..] = &text[point..] else {
        return None;
    };
    let dir = match arrow {
        b'<' => Direction::FromBoard,
        b'>' => Direction::ToBoard,
        _ => return None,
    };
    let digit = |d: u8| d.is_ascii_digit().then(|| Millis::from(d - b'0'));
    let ms = digit(a)? * 100 + digit(b)? * 10 + digit(c)?;
    Some((secs * 1000 + ms, dir, hex))
}

/// A whole chunk line as boardscribe writes it, from the start of `buf` to its `\n`: the head
/// [`written_head`] reads, then pairs of hex digits each followed by one space, the last by the
/// line's end. Its bytes replace those of `out`; its time, direction and length with the end.
/// `None` for any other form (a `\r`, other spacing, a bad digit, no end in `buf`): the general
/// reading then takes the line, with the same result. The line's end is found as it is read,
/// each byte looked at once (replay reads every line of a capture).
fn written_line(buf: &[u8], out: &mut Vec<u8>) -> Option<(Millis, Direction, usize)> {
    let (t_ms, dir, hex) = written_head(buf)?;
    out.clear();
    for (pairs, pair) in hex.chunks_exact(3).enumerate() {
        let (h, l) = (
            HEX_VALUE[usize::from(pair[0])],
            HEX_VALUE[usize::from(pair[1])],
        );
        // NOT_HEX has its high bits set; no digit has.
        if (h | l) & 0xf0 != 0 {
            return None;
        }
        out.push((h << 4) | l);
        match pair[2] {
            b' ' => {}
            b'\n' => return Some((t_ms, dir, buf.len() - hex.len() + 3 * (pairs + 1))),
            _ => return None,
        }
    }
    None
}

/// Parses one line; chunk bytes are appended to `out` (cleared first).
fn parse_line<'a>(raw: &'a [u8], line: usize, out: &mut Vec<u8>) -> Result<Line<'a>, CaptureError> {
    let text = raw.trim_ascii();
    if text.is_empty() {
        return Ok(Line::Skip);
    }
    if text[0] == b'#' {
        let Ok(comment) = std::str::from_utf8(&text[1..]) else {
            return Ok(Line::Skip);
        };
        return Ok(match comment.split_once(':') {
            Some((k, v)) if !k.trim().is_empty() && k.trim().chars().all(is_key_char) => {
                Line::Header(k.trim(), v.trim())
            }
            _ => Line::Skip,
        });
    }
    match written_head(text) {
        Some((t_ms, dir, hex)) => chunk_line(t_ms, dir, hex, line, out),
        None => parse_chunk_line(text, line, out),
    }
}

/// A chunk line's hex after its time and direction.
fn chunk_line<'a>(
    t_ms: Millis,
    dir: Direction,
    hex: &[u8],
    line: usize,
    out: &mut Vec<u8>,
) -> Result<Line<'a>, CaptureError> {
    out.clear();
    parse_hex_bytes(hex, line, out)?;
    if out.is_empty() {
        return Err(CaptureError::NoBytes { line });
    }
    Ok(Line::Chunk(t_ms, dir))
}

/// A line that is no header nor blank, read in every form the format allows (any whitespace
/// between the fields, times with fewer or more decimals).
fn parse_chunk_line<'a>(
    text: &[u8],
    line: usize,
    out: &mut Vec<u8>,
) -> Result<Line<'a>, CaptureError> {
    let mut rest = text;
    let mut next_token = || {
        let start = rest
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let len = rest[start..]
            .iter()
            .position(u8::is_ascii_whitespace)
            .unwrap_or(rest.len() - start);
        let tok = &rest[start..start + len];
        rest = &rest[start + len..];
        tok
    };
    let time_tok = next_token();
    let t_ms = parse_time(time_tok).ok_or_else(|| CaptureError::BadTime {
        line,
        text: lossy(time_tok),
    })?;
    let dir = match next_token() {
        b"<" => Direction::FromBoard,
        b">" => Direction::ToBoard,
        other => {
            return Err(CaptureError::BadDirection {
                line,
                text: lossy(other),
            });
        }
    };
    chunk_line(t_ms, dir, rest, line, out)
}

/// Reading state shared by [`parse_capture`] and [`CaptureLines`].
#[derive(Debug, Default)]
struct State {
    line: usize,
    prev_ms: Millis,
    headers: Vec<(String, String)>,
}

impl State {
    /// Handles the next line: `Some((t, dir))` when it held a chunk (its bytes now in `out`).
    fn feed(
        &mut self,
        raw: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<(Millis, Direction)>, CaptureError> {
        self.line += 1;
        match parse_line(raw, self.line, out)? {
            Line::Skip => Ok(None),
            Line::Header(k, v) => {
                self.headers.push((k.to_owned(), v.to_owned()));
                Ok(None)
            }
            Line::Chunk(t_ms, dir) => self.chunk(t_ms, dir).map(Some),
        }
    }

    /// The line just counted held a chunk at `t_ms`: times never decrease.
    fn chunk(&mut self, t_ms: Millis, dir: Direction) -> Result<(Millis, Direction), CaptureError> {
        if t_ms < self.prev_ms {
            return Err(CaptureError::DecreasingTime {
                line: self.line,
                t_ms,
                prev_ms: self.prev_ms,
            });
        }
        self.prev_ms = t_ms;
        Ok((t_ms, dir))
    }
}

/// Parses a whole capture; the first bad line is the error.
pub fn parse_capture(text: &str) -> Result<Capture, CaptureError> {
    let mut state = State::default();
    let mut chunks = Vec::with_capacity(text.len() / 32);
    let mut buf = Vec::with_capacity(128);
    for raw in text.as_bytes().split(|&b| b == b'\n') {
        if let Some((t_ms, dir)) = state.feed(raw, &mut buf)? {
            chunks.push(Chunk {
                t_ms,
                dir,
                bytes: buf.as_slice().to_vec(),
            });
        }
    }
    Ok(Capture {
        headers: state.headers,
        chunks,
    })
}

/// Reads a capture line by line from any `BufRead` (for big files and live tails).
#[derive(Debug)]
pub struct CaptureLines<R> {
    reader: R,
    line_buf: Vec<u8>,
    state: State,
}

impl<R: BufRead> CaptureLines<R> {
    /// Starts reading at the first line of `reader`.
    pub fn new(reader: R) -> Self {
        CaptureLines {
            reader,
            line_buf: Vec::with_capacity(256),
            state: State::default(),
        }
    }

    /// Headers seen so far.
    pub fn headers(&self) -> &[(String, String)] {
        &self.state.headers
    }

    /// The `device` header, once read.
    pub fn device(&self) -> Option<&str> {
        header(&self.state.headers, "device")
    }

    /// Reads up to the next chunk; its bytes replace the contents of `bytes`.
    /// `Ok(None)` at the end of the input. After an error, reading goes on with the next line.
    pub fn read_chunk(
        &mut self,
        bytes: &mut Vec<u8>,
    ) -> Result<Option<(Millis, Direction)>, CaptureError> {
        loop {
            // A whole line in the reader's buffer is read where it lies, and consumed with its
            // end: no copy (replay reads every line of a capture). A line the buffer holds only
            // the start of, or the last line without its end, is gathered as before.
            let Self { reader, state, .. } = self;
            match reader.fill_buf() {
                Ok(buf) => {
                    if let Some((t_ms, dir, len)) = written_line(buf, bytes) {
                        reader.consume(len);
                        state.line += 1;
                        return state.chunk(t_ms, dir).map(Some);
                    }
                    if let Some(end) = memchr::memchr(b'\n', buf) {
                        let fed = state.feed(&buf[..=end], bytes);
                        reader.consume(end + 1);
                        match fed? {
                            Some(found) => return Ok(Some(found)),
                            None => continue,
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(CaptureError::Io {
                        line: self.state.line + 1,
                        source,
                    });
                }
            }
            self.line_buf.clear();
            let n = self
                .reader
                .read_until(b'\n', &mut self.line_buf)
                .map_err(|source| CaptureError::Io {
                    line: self.state.line + 1,
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            if let Some(found) = self.state.feed(&self.line_buf, bytes)? {
                return Ok(Some(found));
            }
        }
    }
}

impl<R: BufRead> Iterator for CaptureLines<R> {
    type Item = Result<Chunk, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut bytes = Vec::new();
        match self.read_chunk(&mut bytes) {
            Ok(Some((t_ms, dir))) => Some(Ok(Chunk { t_ms, dir, bytes })),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// The header that carries what a board's sensor had learnt of it when the capture began (a
/// calibration: `crate::pipeline::Board::learnt`), which `replay` gives back to the sensor as
/// the daemon does to a board it opens.
pub const LEARNT_HEADER: &str = "learnt";

/// Writes a capture v1: the header lines at creation, then one line per chunk.
/// The header lines of a capture: `# boardscribe capture v1`, `# device: {device}` and each
/// extra `# key: value` (an extra named `device` is left out: the argument wins). Keys must be
/// `[A-Za-z0-9_.-]+` and values single lines.
pub fn capture_head(device: &str, extra: &[(String, String)]) -> io::Result<String> {
    let mut head = String::from("# boardscribe capture v1\n");
    let all = std::iter::once(("device", device)).chain(
        extra
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .filter(|(k, _)| *k != "device"),
    );
    for (k, v) in all {
        if k.is_empty() || !k.chars().all(is_key_char) {
            return Err(invalid(format!(
                "capture header key {k:?} is not a plain word"
            )));
        }
        if v.contains(['\n', '\r']) {
            return Err(invalid(format!("capture header {k:?} has a line break")));
        }
        head.push_str(&format!("# {k}: {}\n", v.trim()));
    }
    Ok(head)
}

/// Appends one capture line, `{s}.{ms:03} {<|>} hex..`, to `out`.
pub fn push_line(out: &mut String, t_ms: Millis, dir: Direction, bytes: &[u8]) {
    use std::fmt::Write as _;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // Writing to a String cannot fail.
    let _ = write!(out, "{}.{:03} ", t_ms / 1000, t_ms % 1000);
    out.push(match dir {
        Direction::FromBoard => '<',
        Direction::ToBoard => '>',
    });
    for &b in bytes {
        out.push(' ');
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out.push('\n');
}

#[derive(Debug)]
pub struct CaptureWriter<W: Write> {
    out: W,
    line: String,
    prev_ms: Millis,
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

impl<W: Write> CaptureWriter<W> {
    /// Writes `# boardscribe capture v1`, `# device: {device}` and each extra `# key: value`
    /// (an extra named `device` is left out: the argument wins). Keys must be `[A-Za-z0-9_.-]+`
    /// and values single lines.
    pub fn new(mut out: W, device: &str, extra: &[(String, String)]) -> io::Result<Self> {
        out.write_all(capture_head(device, extra)?.as_bytes())?;
        Ok(CaptureWriter {
            out,
            line: String::with_capacity(256),
            prev_ms: 0,
        })
    }

    /// Writes one chunk (see [`Self::write`]).
    pub fn write_chunk(&mut self, chunk: &Chunk) -> io::Result<()> {
        self.write(chunk.t_ms, chunk.dir, &chunk.bytes)
    }

    /// Writes `{s}.{ms:03} {<|>} hex..`; refuses an empty chunk or a time earlier than the last.
    pub fn write(&mut self, t_ms: Millis, dir: Direction, bytes: &[u8]) -> io::Result<()> {
        if bytes.is_empty() {
            return Err(invalid("a capture chunk needs at least one byte".into()));
        }
        if t_ms < self.prev_ms {
            return Err(invalid(format!(
                "capture time {t_ms} ms is earlier than the previous {} ms",
                self.prev_ms
            )));
        }
        self.prev_ms = t_ms;
        self.line.clear();
        push_line(&mut self.line, t_ms, dir, bytes);
        self.out.write_all(self.line.as_bytes())
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Gives the underlying writer back.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The fast reading of the lines boardscribe writes gives what the general one gives, on
        /// those lines and on lines near them (other spacing, decimals, digits, arrows, hex).
        #[test]
        fn written_lines_read_as_the_general_reading_reads_them(
            secs in "[0-9]{0,17}",
            frac in "[0-9]{0,4}",
            arrow in prop::sample::select(vec!["<", ">", "=", "<<"]),
            gaps in prop::collection::vec(prop::sample::select(vec![" ", "  ", "\t"]), 3),
            bytes in prop::collection::vec("[0-9a-fA-F]{2}|[0-9a-gx]{1,3}", 0..12),
        ) {
            let text = format!(
                "{secs}.{frac}{}{arrow}{}{}",
                gaps[0],
                gaps[1],
                bytes.join(gaps[2])
            );
            let (mut fast, mut general) = (Vec::new(), Vec::new());
            let got = format!("{:?}", parse_line(text.as_bytes(), 7, &mut fast));
            let want = format!(
                "{:?}",
                parse_chunk_line(text.as_bytes().trim_ascii(), 7, &mut general)
            );
            prop_assert_eq!(got, want, "{:?}", text);
            prop_assert_eq!(fast, general);
        }
    }

    proptest! {
        /// Reading line by line through a reader's buffer of any size (lines cut anywhere,
        /// the last without its end, blank lines, headers, bad lines, CRLF, lines nearly as
        /// boardscribe writes them) gives, read for read, what feeding each line whole gives:
        /// the same chunks, the same errors at the same lines, and reading goes on after an
        /// error. Whole written lines in the buffer take [`written_line`]; the rest the
        /// general reading.
        #[test]
        fn lines_read_through_any_buffer_read_as_whole_lines(
            lines in prop::collection::vec(
                "[0-9]{1,3}\\.[0-9]{3} [<>] ([0-9a-f]{2} ){0,6}[0-9a-f]{2}|[0-9]{1,3}\\.[0-9]{3} [<>] ([0-9a-gA-F]{2} ){0,3}[0-9a-gA-F]{1,3} ?|# [a-z]{1,5}: [a-z ]{0,8}|[0-9 .<>a-z]{0,12}|",
                0..20,
            ),
            crlf in any::<bool>(),
            last_ended in any::<bool>(),
            capacity in 1usize..64,
        ) {
            let end = if crlf { "\r\n" } else { "\n" };
            let mut text = lines.join(end);
            if last_ended {
                text.push_str(end);
            }
            // Each line fed whole, as a reader that copies every line gives it.
            let mut state = State::default();
            let mut want = Vec::new();
            let mut buf = Vec::new();
            for raw in text.as_bytes().split_inclusive(|&b| b == b'\n') {
                match state.feed(raw, &mut buf) {
                    Ok(Some((t_ms, dir))) => want.push(Ok((t_ms, dir, buf.clone()))),
                    Ok(None) => {}
                    Err(e) => want.push(Err(e.to_string())),
                }
            }
            let mut reader = CaptureLines::new(io::BufReader::with_capacity(capacity, text.as_bytes()));
            let mut got = Vec::new();
            let mut bytes = Vec::new();
            loop {
                match reader.read_chunk(&mut bytes) {
                    Ok(Some((t_ms, dir))) => got.push(Ok((t_ms, dir, bytes.clone()))),
                    Ok(None) => break,
                    Err(e) => got.push(Err(e.to_string())),
                }
            }
            prop_assert_eq!(got, want, "{:?}", text);
        }
    }

    proptest! {
        /// Hex as boardscribe writes it is read three characters at a time, and any text at
        /// all (other spacing, odd digits, other bytes) reads as the token by token reading
        /// reads it: the same bytes, or the same error.
        #[test]
        fn spaced_pairs_read_as_the_tokens_read(
            text in "([0-9a-fA-F]{2} ){0,10}[0-9a-fA-F]{2}|[0-9a-fA-Fg \t\u{e9}]{0,30}",
        ) {
            let (mut fast, mut tokens) = (vec![7u8], vec![7u8]);
            let got = format!("{:?}", parse_hex_bytes(text.as_bytes(), 3, &mut fast));
            let want = format!("{:?}", hex_tokens(text.as_bytes(), 3, &mut tokens));
            prop_assert_eq!(got, want, "{:?}", text);
            prop_assert_eq!(fast, tokens, "{:?}", text);
        }
    }

    #[test]
    fn times_convert_exactly() {
        let t = |s: &str| parse_time(s.as_bytes());
        assert_eq!(t("0.120"), Some(120));
        assert_eq!(t("1.480"), Some(1480));
        assert_eq!(t("12"), Some(12_000));
        assert_eq!(t("0.1"), Some(100));
        assert_eq!(t("0.0004999"), Some(0));
        assert_eq!(t("0.0005"), Some(1));
        assert_eq!(t("2.9996"), Some(3000));
        // 0.1 + 0.2 style float error cannot happen: 100000.3 s is exact.
        assert_eq!(t("100000.3"), Some(100_000_300));
        for bad in [
            "",
            ".5",
            "1.",
            "-1.0",
            "1.2.3",
            "1e3",
            "0x10",
            "99999999999999999999",
        ] {
            assert_eq!(t(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn errors_name_the_line() {
        let e = |s: &str| parse_capture(s).err().map(|e| (e.line(), e.to_string()));
        let (line, msg) = e("# boardscribe capture v1\n\n0.5 < 8e\nx < 00\n").unwrap_or_default();
        assert_eq!(line, 4);
        assert!(msg.contains("bad time"), "{msg}");
        // No whole seconds before the point, in what is otherwise the form boardscribe writes:
        // refused by the whole-text reading and line by line alike.
        let text = "0.400 < 00\n.500 < 00\n";
        assert!(matches!(
            parse_capture(text),
            Err(CaptureError::BadTime { line: 2, .. })
        ));
        let (mut lines, mut bytes) = (CaptureLines::new(text.as_bytes()), Vec::new());
        assert!(matches!(
            lines.read_chunk(&mut bytes),
            Ok(Some((400, Direction::FromBoard)))
        ));
        assert!(matches!(
            lines.read_chunk(&mut bytes),
            Err(CaptureError::BadTime { line: 2, .. })
        ));
        assert!(matches!(
            parse_capture("1.000 < 01\n0.999 < 02\n"),
            Err(CaptureError::DecreasingTime {
                line: 2,
                t_ms: 999,
                prev_ms: 1000
            })
        ));
        assert!(matches!(
            parse_capture("1.000 = 01\n"),
            Err(CaptureError::BadDirection { line: 1, .. })
        ));
        assert!(matches!(
            parse_capture("1.000 < 0g\n"),
            Err(CaptureError::BadHex { line: 1, .. })
        ));
        assert!(matches!(
            parse_capture("1.000 < 123\n"),
            Err(CaptureError::BadHex { line: 1, .. })
        ));
        assert!(matches!(
            parse_capture("\n\n1.000 <\n"),
            Err(CaptureError::NoBytes { line: 3 })
        ));
    }

    #[test]
    fn headers_and_chunks() {
        let text = "# boardscribe capture v1\r\n# device: dgt\n# source: a: b\n# a free comment\n\
                    0.000 > 42\n0.015 < 86 00\t43\n0.015 < 8E 00 05 34 00\n";
        let c = parse_capture(text).expect("valid capture");
        assert_eq!(c.device(), Some("dgt"));
        assert_eq!(c.header("source"), Some("a: b"));
        assert_eq!(c.headers.len(), 2);
        assert_eq!(
            c.chunks,
            vec![
                Chunk {
                    t_ms: 0,
                    dir: Direction::ToBoard,
                    bytes: vec![0x42]
                },
                Chunk {
                    t_ms: 15,
                    dir: Direction::FromBoard,
                    bytes: vec![0x86, 0x00, 0x43]
                },
                Chunk {
                    t_ms: 15,
                    dir: Direction::FromBoard,
                    bytes: vec![0x8e, 0, 5, 0x34, 0]
                },
            ]
        );
        let streamed: Vec<Chunk> = CaptureLines::new(text.as_bytes())
            .collect::<Result<_, _>>()
            .expect("valid capture");
        assert_eq!(streamed, c.chunks);
    }

    #[test]
    fn writer_round_trips() {
        let extra = vec![
            ("source".to_owned(), "test".to_owned()),
            ("device".to_owned(), "x".to_owned()),
        ];
        let mut w = CaptureWriter::new(Vec::new(), "dgt", &extra).expect("in memory");
        let chunks = vec![
            Chunk {
                t_ms: 0,
                dir: Direction::ToBoard,
                bytes: vec![0x4b],
            },
            Chunk {
                t_ms: 1480,
                dir: Direction::FromBoard,
                bytes: vec![0x8e, 0, 5, 0x34, 0],
            },
            Chunk {
                t_ms: 61_005,
                dir: Direction::FromBoard,
                bytes: vec![0xff, 0x0a],
            },
        ];
        for c in &chunks {
            w.write_chunk(c).expect("in memory");
        }
        assert!(w.write(60_000, Direction::FromBoard, &[1]).is_err());
        assert!(w.write(70_000, Direction::FromBoard, &[]).is_err());
        let text = String::from_utf8(w.into_inner()).expect("ascii");
        assert_eq!(
            text,
            "# boardscribe capture v1\n# device: dgt\n# source: test\n0.000 > 4b\n\
             1.480 < 8e 00 05 34 00\n61.005 < ff 0a\n"
        );
        let back = parse_capture(&text).expect("own output parses");
        assert_eq!(back.chunks, chunks);
        assert_eq!(back.device(), Some("dgt"));
        assert!(CaptureWriter::new(Vec::new(), "dgt", &[("bad key".into(), "v".into())]).is_err());
    }
}
