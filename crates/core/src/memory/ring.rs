//! The EEPROM ring itself: what a board writes to it ([`EeRecorder`], the emulator's board and the
//! tests' reference), checking a log read back is whole ([`parse_log`]), and finding it in a
//! stream of board bytes ([`log_from_bytes`]).

use super::*;

/// Bytes of log a board keeps (dgt-notes 1.11: an 8 KB cyclic buffer of 0x1f00 bytes).
pub const EE_LOG_CAPACITY: usize = 0x1f00;

/// A board's memory as the board writes it (the emulator's side): power-up, one field token per
/// piece, BEGINPOS / BEGINPOS_ROT when a start position appears, every field change (quick when
/// under 250 ms after the previous one), the halted clock's time at every lever change, and
/// DOWNLOADED after each dump. The oldest whole tokens give way when the log is full.
#[derive(Clone, Debug)]
pub struct EeRecorder {
    pub(super) tokens: std::collections::VecDeque<EeToken>,
    pub(super) bytes: usize,
    pub(super) board: [u8; 64],
    pub(super) last_field_ms: Option<Millis>,
    /// The lever of the last clock frame: `Some(true)` high on the right.
    pub(super) lever: Option<bool>,
    /// The start position has been tagged and not left by more than two pieces since.
    pub(super) at_start: bool,
}

impl EeRecorder {
    /// A board powered up with `board` on it (board numbering).
    pub fn power_up(board: &[u8; 64]) -> EeRecorder {
        let mut r = EeRecorder {
            tokens: std::collections::VecDeque::new(),
            bytes: 0,
            board: *board,
            last_field_ms: None,
            lever: None,
            at_start: false,
        };
        for _ in 0..3 {
            r.push(EeToken::Tag(EeTag::Nop));
        }
        r.push(EeToken::Tag(EeTag::PowerUp));
        for (square, &piece) in board.iter().enumerate() {
            if piece != piece::EMPTY {
                r.push(EeToken::Field {
                    square: square as u8,
                    piece,
                    quick: false,
                });
            }
        }
        r.check_start();
        r
    }

    /// Writes a token as it is (a bus board's lever change, both clocks; a start tag).
    pub fn write(&mut self, t: EeToken) {
        self.push(t);
    }

    pub(super) fn push(&mut self, t: EeToken) {
        let mut b = Vec::with_capacity(3);
        t.encode(&mut b);
        self.bytes += b.len();
        self.tokens.push_back(t);
        // One byte stays free for the EOF a dump ends with.
        while self.bytes + 1 > EE_LOG_CAPACITY {
            let Some(old) = self.tokens.pop_front() else {
                break;
            };
            let mut b = Vec::with_capacity(3);
            old.encode(&mut b);
            self.bytes -= b.len();
        }
    }

    /// Tags a start position when one appears (either way round); more than two pieces off it
    /// arm the tag again.
    pub(super) fn check_start(&mut self) {
        let start = start_position();
        let mut rotated = start;
        rotated.reverse();
        let off = |s: &[u8; 64]| self.board.iter().zip(s).filter(|(a, b)| a != b).count();
        let (off_normal, off_rotated) = (off(&start), off(&rotated));
        if !self.at_start && off_normal == 0 {
            self.push(EeToken::Tag(EeTag::BeginPos));
            self.at_start = true;
        } else if !self.at_start && off_rotated == 0 {
            self.push(EeToken::Tag(EeTag::BeginPosRot));
            self.at_start = true;
        } else if off_normal.min(off_rotated) > 2 {
            self.at_start = false;
        }
    }

    /// A square changed at `at_ms`.
    pub fn field(&mut self, at_ms: Millis, square: u8, piece: u8) {
        self.field_token(at_ms, square, piece);
    }

    /// [`EeRecorder::field`], with the token written, if the square is one.
    pub fn field_token(&mut self, at_ms: Millis, square: u8, piece: u8) -> Option<EeToken> {
        let slot = self.board.get_mut(usize::from(square))?;
        *slot = piece;
        let quick = self
            .last_field_ms
            .is_some_and(|t| at_ms.saturating_sub(t) < 250);
        self.last_field_ms = Some(at_ms);
        let token = EeToken::Field {
            square,
            piece,
            quick,
        };
        self.push(token);
        self.check_start();
        Some(token)
    }

    /// A clock frame: at a lever change the halted clock's time is written.
    pub fn clock(&mut self, t: &BwTime) {
        if t.is_ack() || t.is_null() || t.no_clock() || !t.is_plausible() {
            return;
        }
        let lever = t.lever_right_high();
        let changed = self.lever.is_some_and(|l| l != lever);
        self.lever = Some(lever);
        if changed {
            // Lever now high on the right: the left player pressed, the left clock halted.
            let time = if lever { t.left() } else { t.right() };
            self.push(EeToken::Clock { left: lever, time });
        }
    }

    /// The squares as the board stands now (board numbering).
    pub fn board(&self) -> &[u8; 64] {
        &self.board
    }

    /// The tokens written so far, oldest first.
    pub fn tokens(&self) -> Vec<EeToken> {
        self.tokens.iter().copied().collect()
    }

    /// The BUS_FROM_START data: the log from the last START_TAG on, the tag first (the whole
    /// log when the ring no longer holds one).
    pub fn from_start(&self) -> Vec<u8> {
        let from = self
            .tokens
            .iter()
            .rposition(|t| *t == EeToken::Tag(EeTag::StartTag))
            .unwrap_or(0);
        let mut data = Vec::with_capacity(self.bytes);
        for t in self.tokens.iter().skip(from) {
            t.encode(&mut data);
        }
        data
    }

    /// The EE_MOVES reply (the log and EOF, in a 0x8f frame); DOWNLOADED is written afterwards.
    pub fn dump(&mut self) -> Frame {
        let mut log = Vec::with_capacity(self.bytes + 1);
        for t in &self.tokens {
            t.encode(&mut log);
        }
        EeToken::Tag(EeTag::Eof).encode(&mut log);
        self.push(EeToken::Tag(EeTag::Downloaded));
        Frame::EeMoves(log)
    }
}

/// Checks that a log is whole: it decodes, and ends with EE_EOF (dgt-notes 1.11).
///
/// A full memory is a ring: its oldest bytes may be the tail of a token written over, so up to
/// two leading bytes are skipped when the log decodes whole from there (and only then).
pub fn parse_log(log: &[u8]) -> Result<Vec<EeToken>, MemoryError> {
    let whole = |log: &[u8]| -> Result<Vec<EeToken>, MemoryError> {
        let tokens = crate::protocol::dgt::parse_ee_tokens(log)?;
        match tokens.last() {
            Some(EeToken::Tag(EeTag::Eof)) => Ok(tokens),
            _ => Err(MemoryError::NoEof),
        }
    };
    let first = whole(log);
    // A ring that has wrapped is full, up to the token that did not fit.
    if first.is_ok() || log.len() + 2 < EE_LOG_CAPACITY {
        return first;
    }
    (1..=2)
        .find_map(|skip| whole(&log[skip..]).ok())
        .ok_or_else(|| first.err().unwrap_or(MemoryError::NoEof))
}

/// The log inside a stream of board bytes: the payload of its first EE_MOVES frame.
pub fn log_from_bytes(bytes: &[u8], source_name: &str) -> Result<Vec<u8>, MemoryError> {
    let mut reader = FrameReader::new(Mode::Single);
    reader.push(bytes);
    let mut warning = None;
    while let Some(next) = reader.next_frame() {
        match next {
            Ok(Frame::EeMoves(log)) => return Ok(log),
            Ok(_) => {}
            Err(w) => {
                warning.get_or_insert(w.to_string());
            }
        }
    }
    // A reply cut short or with a bad byte inside shows as a decode warning, or as bytes left.
    if bytes.contains(&crate::protocol::dgt::id::EE_MOVES) {
        let detail = warning.unwrap_or_else(|| "the frame is cut short".to_owned());
        return Err(MemoryError::BadFrame {
            source_name: source_name.to_owned(),
            detail,
        });
    }
    Err(MemoryError::NoReply(source_name.to_owned()))
}
