//! Encoders, both directions: the letter, the data as characters, then the XOR of all of them
//! as two upper-case hex digits. They write 7-bit characters; a port without hardware parity
//! takes each through [`super::with_odd_parity`].

use super::{Command, Frame, IDENTITY_TEXT_MAX, block_check, piece_char};

const HEX: &[u8; 16] = b"0123456789ABCDEF";

fn push_hex(out: &mut Vec<u8>, value: u8) {
    out.push(HEX[usize::from(value >> 4)]);
    out.push(HEX[usize::from(value & 0x0f)]);
}

/// Appends the check digits of the message that starts at `out[start]`.
fn finish(out: &mut Vec<u8>, start: usize) {
    let check = block_check(&out[start..]);
    push_hex(out, check);
}

impl Frame {
    /// Appends the wire characters of this frame to `out`. An identity text is written as
    /// printable ASCII (anything else as `?`) and cut at [`IDENTITY_TEXT_MAX`] characters.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.push(self.letter());
        match self {
            Frame::Status(report) => out.extend(report.0.iter().map(|&p| piece_char(p))),
            Frame::Version { high, low } => {
                push_hex(out, *high);
                push_hex(out, *low);
            }
            Frame::LedsSet | Frame::LedsOff => {}
            Frame::RegisterWritten { address, value } | Frame::RegisterRead { address, value } => {
                push_hex(out, *address);
                push_hex(out, *value);
            }
            Frame::Identity { selector, text } => {
                push_hex(out, *selector);
                out.extend(text.chars().take(IDENTITY_TEXT_MAX).map(|c| match c {
                    ' '..='~' => c as u8,
                    _ => b'?',
                }));
                out.push(b'\n');
            }
        }
        finish(out, start);
    }

    /// The wire characters of this frame.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

impl Command {
    /// Appends the wire characters of this command to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.push(self.letter());
        match self {
            Command::Status | Command::Version | Command::LedsOff | Command::Reset => {}
            Command::SetLeds(leds) => {
                push_hex(out, leds.slot_time);
                for &p in &leds.pattern {
                    push_hex(out, p);
                }
            }
            Command::WriteRegister { address, value } => {
                push_hex(out, *address);
                push_hex(out, *value);
            }
            Command::ReadRegister { address } => push_hex(out, *address),
            Command::Identify { selector } => push_hex(out, *selector),
        }
        finish(out, start);
    }

    /// The wire characters of this command.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}
