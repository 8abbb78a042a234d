//! Host-to-board commands (dgt-notes 1.3, 1.9, 1.12): typed values, their encoding, and a
//! streaming decoder for the emulator's side of the wire.
//!
//! Flow: the device layer builds a [`Command`] and calls [`Command::encode`]; the emulator pushes
//! received bytes into a [`CommandReader`] (or calls [`decode_command`]) and answers each command.
//! Single-byte commands are below 0x80; bytes from 0x80 up start a 4-byte bus command
//! (`cmd addr_hi addr_lo checksum`).

use nom::{
    Err, IResult, Needed, Parser,
    bytes::streaming::take,
    error::{ErrorKind, ParseError},
    number::streaming::u8 as byte,
};

use super::{ClockTime, bus::bus_checksum, cmd};

/// Sub-commands of CLOCK_MESSAGE (`2b size 03 cmd data.. 00`).
pub mod clock_cmd {
    pub const DISPLAY: u8 = 0x01;
    pub const ICONS: u8 = 0x02;
    pub const END: u8 = 0x03;
    pub const BUTTON: u8 = 0x08;
    pub const VERSION: u8 = 0x09;
    pub const SETNRUN: u8 = 0x0a;
    pub const BEEP: u8 = 0x0b;
    pub const ASCII: u8 = 0x0c;
    pub const REV2_ASCII: u8 = 0x0d;
    /// First byte after the size.
    pub const START_MESSAGE: u8 = 0x03;
    /// Last byte of every clock message.
    pub const END_MESSAGE: u8 = 0x00;
}

/// Further single-byte command codes not in [`cmd`] (draughts and the boot loader).
pub mod cmd_more {
    pub const STARTBOOTLOADER: u8 = 0x4e;
    pub const SEND_BRD_50B: u8 = 0x50;
    pub const SCAN_50B: u8 = 0x51;
    pub const SEND_BRD_50W: u8 = 0x52;
    pub const SCAN_50W: u8 = 0x53;
    pub const SCAN_100: u8 = 0x54;
}

/// A clock command carried in CLOCK_MESSAGE (dgt-notes 1.9).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ClockCommand {
    /// Six 7-segment characters as sent (C, B, A, F, E, D), the dots/ones bitmask, and the
    /// beep byte (0x03 beep, 0x01 silent).
    Display {
        segments: [u8; 6],
        dots: u8,
        beep: u8,
    },
    /// Icon bytes 0-3, the special byte and three reserved bytes.
    Icons([u8; 8]),
    /// Back to showing the clock times.
    End,
    /// Ask which button is pressed.
    Button,
    /// Ask the clock version.
    Version,
    /// Set both times (binary, not BCD) and the run flags (0x01 left counts down, 0x02 right,
    /// 0x04 pause, 0x08 toggle on lever); only in clock mode 23.
    SetNRun {
        left: ClockTime,
        right: ClockTime,
        flags: u8,
    },
    /// Beep for `units` × 64 ms.
    Beep { units: u8 },
    /// Eight ASCII characters and a beep value 0-15 (DGT3000).
    Ascii { text: [u8; 8], beep: u8 },
    /// Eleven ASCII characters and a beep value (Revelation II firmware 3.24H and later).
    Rev2Ascii { text: [u8; 11], beep: u8 },
    /// Any other sub-command, or a known one with an unexpected size. At most 252 data bytes.
    Raw { cmd: u8, data: Vec<u8> },
}

/// Bus-mode command codes (dgt-notes 1.12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BusCommand {
    SendClock,
    SendBoard,
    SendChanges,
    RepeatChanges,
    SetStartGame,
    SendFromStart,
    Ping,
    EndBusMode,
    Reset,
    IgnoreNextBusPing,
    SendVersion,
    SendBoard50B,
    SendAllD,
    /// Another byte >= 0x80 (LiveChess sends an undocumented 0x92).
    Other(u8),
}

impl BusCommand {
    /// The command byte on the wire.
    pub fn byte(self) -> u8 {
        match self {
            BusCommand::SendClock => 0x81,
            BusCommand::SendBoard => 0x82,
            BusCommand::SendChanges => 0x83,
            BusCommand::RepeatChanges => 0x84,
            BusCommand::SetStartGame => 0x85,
            BusCommand::SendFromStart => 0x86,
            BusCommand::Ping => 0x87,
            BusCommand::EndBusMode => 0x88,
            BusCommand::Reset => 0x89,
            BusCommand::IgnoreNextBusPing => 0x8a,
            BusCommand::SendVersion => 0x8b,
            BusCommand::SendBoard50B => 0x8c,
            BusCommand::SendAllD => 0x8d,
            BusCommand::Other(b) => b | 0x80,
        }
    }

    /// The command for a byte >= 0x80.
    pub fn from_byte(b: u8) -> BusCommand {
        match b {
            0x81 => BusCommand::SendClock,
            0x82 => BusCommand::SendBoard,
            0x83 => BusCommand::SendChanges,
            0x84 => BusCommand::RepeatChanges,
            0x85 => BusCommand::SetStartGame,
            0x86 => BusCommand::SendFromStart,
            0x87 => BusCommand::Ping,
            0x88 => BusCommand::EndBusMode,
            0x89 => BusCommand::Reset,
            0x8a => BusCommand::IgnoreNextBusPing,
            0x8b => BusCommand::SendVersion,
            0x8c => BusCommand::SendBoard50B,
            0x8d => BusCommand::SendAllD,
            other => BusCommand::Other(other),
        }
    }
}

/// One host-to-board command.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    Reset,
    SendClock,
    SendBoard,
    SendUpdate,
    SendUpdateBoard,
    ReturnSerialNr,
    ReturnBusAddress,
    SendTrademark,
    SendEeMoves,
    ToBusMode,
    SendUpdateNice,
    SendBatteryStatus,
    SendVersion,
    /// Jumps to the boot loader: never send it to a board in play.
    StartBootloader,
    SendBoard50B,
    Scan50B,
    SendBoard50W,
    Scan50W,
    Scan100,
    ReturnLongSerialNr,
    /// Revelation II LEDs: `60 04 pattern start end 00` (squares 0 = a8 .. 63 = h1).
    SetLeds {
        pattern: u8,
        start: u8,
        end: u8,
    },
    /// `2b size 03 cmd data.. 00`.
    Clock(ClockCommand),
    /// `cmd addr_hi addr_lo checksum`; `address` is 14 bits.
    Bus {
        cmd: BusCommand,
        address: u16,
    },
    /// Another single byte below 0x80 (e.g. P1.0's 0x48 hardware version).
    Other(u8),
}

const SIMPLE: [(u8, Command); 20] = [
    (cmd::SEND_RESET, Command::Reset),
    (cmd::SEND_CLK, Command::SendClock),
    (cmd::SEND_BRD, Command::SendBoard),
    (cmd::SEND_UPDATE, Command::SendUpdate),
    (cmd::SEND_UPDATE_BRD, Command::SendUpdateBoard),
    (cmd::RETURN_SERIALNR, Command::ReturnSerialNr),
    (cmd::RETURN_BUSADRES, Command::ReturnBusAddress),
    (cmd::SEND_TRADEMARK, Command::SendTrademark),
    (cmd::SEND_EE_MOVES, Command::SendEeMoves),
    (cmd::TO_BUSMODE, Command::ToBusMode),
    (cmd::SEND_UPDATE_NICE, Command::SendUpdateNice),
    (cmd::SEND_BATTERY_STATUS, Command::SendBatteryStatus),
    (cmd::SEND_VERSION, Command::SendVersion),
    (cmd_more::STARTBOOTLOADER, Command::StartBootloader),
    (cmd_more::SEND_BRD_50B, Command::SendBoard50B),
    (cmd_more::SCAN_50B, Command::Scan50B),
    (cmd_more::SEND_BRD_50W, Command::SendBoard50W),
    (cmd_more::SCAN_50W, Command::Scan50W),
    (cmd_more::SCAN_100, Command::Scan100),
    (cmd::RETURN_LONG_SERIALNR, Command::ReturnLongSerialNr),
];

impl Command {
    /// Appends the wire bytes of this command to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        if let Some((b, _)) = SIMPLE.iter().find(|(_, c)| c == self) {
            out.push(*b);
            return;
        }
        match self {
            Command::SetLeds {
                pattern,
                start,
                end,
            } => out.extend_from_slice(&[cmd::SET_LEDS, 0x04, *pattern, *start, *end, 0x00]),
            Command::Clock(c) => c.encode(out),
            Command::Bus { cmd, address } => {
                let msg = [
                    cmd.byte(),
                    ((address >> 7) & 0x7f) as u8,
                    (address & 0x7f) as u8,
                ];
                out.extend_from_slice(&msg);
                out.push(bus_checksum(&msg));
            }
            Command::Other(b) => out.push(b & 0x7f),
            // The single-byte commands returned above.
            _ => {}
        }
    }

    /// The wire bytes of this command.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8);
        self.encode(&mut out);
        out
    }
}

impl ClockCommand {
    /// Appends `2b size 03 cmd data.. 00` to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let time = |t: &ClockTime| [t.hours, t.minutes, t.seconds];
        let (sub, data): (u8, Vec<u8>) = match self {
            ClockCommand::Display {
                segments,
                dots,
                beep,
            } => {
                let mut d = segments.to_vec();
                d.extend_from_slice(&[*dots, *beep]);
                (clock_cmd::DISPLAY, d)
            }
            ClockCommand::Icons(icons) => (clock_cmd::ICONS, icons.to_vec()),
            ClockCommand::End => (clock_cmd::END, Vec::new()),
            ClockCommand::Button => (clock_cmd::BUTTON, Vec::new()),
            ClockCommand::Version => (clock_cmd::VERSION, Vec::new()),
            ClockCommand::SetNRun { left, right, flags } => {
                let mut d = time(left).to_vec();
                d.extend_from_slice(&time(right));
                d.push(*flags);
                (clock_cmd::SETNRUN, d)
            }
            ClockCommand::Beep { units } => (clock_cmd::BEEP, vec![*units]),
            ClockCommand::Ascii { text, beep } => {
                let mut d = text.to_vec();
                d.push(*beep);
                (clock_cmd::ASCII, d)
            }
            ClockCommand::Rev2Ascii { text, beep } => {
                let mut d = text.to_vec();
                d.push(*beep);
                (clock_cmd::REV2_ASCII, d)
            }
            ClockCommand::Raw { cmd, data } => (*cmd, data[..data.len().min(252)].to_vec()),
        };
        out.extend_from_slice(&[
            cmd::CLOCK_MESSAGE,
            (data.len() + 3) as u8,
            clock_cmd::START_MESSAGE,
            sub,
        ]);
        out.extend_from_slice(&data);
        out.push(clock_cmd::END_MESSAGE);
    }

    fn from_parts(sub: u8, d: &[u8]) -> ClockCommand {
        let time = |t: &[u8]| ClockTime {
            hours: t[0],
            minutes: t[1],
            seconds: t[2],
        };
        match (sub, d.len()) {
            (clock_cmd::DISPLAY, 8) => {
                let mut segments = [0; 6];
                segments.copy_from_slice(&d[..6]);
                ClockCommand::Display {
                    segments,
                    dots: d[6],
                    beep: d[7],
                }
            }
            (clock_cmd::ICONS, 8) => {
                let mut icons = [0; 8];
                icons.copy_from_slice(d);
                ClockCommand::Icons(icons)
            }
            (clock_cmd::END, 0) => ClockCommand::End,
            (clock_cmd::BUTTON, 0) => ClockCommand::Button,
            (clock_cmd::VERSION, 0) => ClockCommand::Version,
            (clock_cmd::SETNRUN, 7) => ClockCommand::SetNRun {
                left: time(&d[0..3]),
                right: time(&d[3..6]),
                flags: d[6],
            },
            (clock_cmd::BEEP, 1) => ClockCommand::Beep { units: d[0] },
            (clock_cmd::ASCII, 9) => {
                let mut text = [0; 8];
                text.copy_from_slice(&d[..8]);
                ClockCommand::Ascii { text, beep: d[8] }
            }
            (clock_cmd::REV2_ASCII, 12) => {
                let mut text = [0; 11];
                text.copy_from_slice(&d[..11]);
                ClockCommand::Rev2Ascii { text, beep: d[11] }
            }
            _ => ClockCommand::Raw {
                cmd: sub,
                data: d.to_vec(),
            },
        }
    }
}

/// Why bytes could not be read as a command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// More bytes are needed (at least `needed`).
    #[error("incomplete command: {needed} more byte(s) needed")]
    Incomplete { needed: usize },
    /// A bus command whose checksum does not match; the board ignores it.
    #[error("bus command {cmd:#04x}: checksum {got:#04x}, expected {expected:#04x}")]
    BadChecksum { cmd: u8, got: u8, expected: u8 },
    /// A command whose framing is wrong (`what` names the rule broken).
    #[error("malformed command {byte:#04x}: {what}")]
    Malformed { byte: u8, what: &'static str },
}

impl CommandError {
    /// How many bytes a reader drops before trying again.
    pub fn skip(&self) -> usize {
        match self {
            CommandError::Incomplete { .. } => 0,
            CommandError::BadChecksum { .. } => 4,
            CommandError::Malformed { .. } => 1,
        }
    }
}

#[derive(Debug)]
struct CmdErr(CommandError);

impl<I> ParseError<I> for CmdErr {
    fn from_error_kind(_: I, _: ErrorKind) -> Self {
        CmdErr(CommandError::Malformed {
            byte: 0,
            what: "parser error",
        })
    }
    fn append(_: I, _: ErrorKind, other: Self) -> Self {
        other
    }
}

fn malformed<I, T>(byte: u8, what: &'static str) -> IResult<I, T, CmdErr> {
    Err(Err::Error(CmdErr(CommandError::Malformed { byte, what })))
}

fn command(i: &[u8]) -> IResult<&[u8], Command, CmdErr> {
    let (rest, first) = byte(i)?;
    if first & 0x80 != 0 {
        let (rest, (hi, lo, sum)) = (byte, byte, byte).parse(rest)?;
        if hi & 0x80 != 0 || lo & 0x80 != 0 {
            return malformed(first, "bus address byte has bit 7 set");
        }
        let expected = bus_checksum(&[first, hi, lo]);
        if sum != expected {
            return Err(Err::Error(CmdErr(CommandError::BadChecksum {
                cmd: first,
                got: sum,
                expected,
            })));
        }
        let address = (u16::from(hi) << 7) | u16::from(lo);
        let cmd = BusCommand::from_byte(first);
        return Ok((rest, Command::Bus { cmd, address }));
    }
    match first {
        cmd::SET_LEDS => {
            let (rest, body) = take(5usize).parse(rest)?;
            if body[0] != 0x04 || body[4] != 0x00 {
                return malformed(first, "SET_LEDS is not `60 04 pattern start end 00`");
            }
            let (pattern, start, end) = (body[1], body[2], body[3]);
            Ok((
                rest,
                Command::SetLeds {
                    pattern,
                    start,
                    end,
                },
            ))
        }
        cmd::CLOCK_MESSAGE => {
            let (rest, size) = byte(rest)?;
            if size < 3 {
                return malformed(first, "clock message size below 3");
            }
            let (rest, body) = take(usize::from(size)).parse(rest)?;
            let n = body.len();
            if body[0] != clock_cmd::START_MESSAGE || body[n - 1] != clock_cmd::END_MESSAGE {
                return malformed(first, "clock message not framed by 03 .. 00");
            }
            Ok((
                rest,
                Command::Clock(ClockCommand::from_parts(body[1], &body[2..n - 1])),
            ))
        }
        b => Ok((
            rest,
            SIMPLE
                .iter()
                .find(|(code, _)| *code == b)
                .map_or(Command::Other(b), |(_, c)| c.clone()),
        )),
    }
}

/// Decodes the command at the start of `i`: the command and how many bytes it took.
pub fn decode_command(i: &[u8]) -> Result<(Command, usize), CommandError> {
    match command(i) {
        Ok((rest, c)) => Ok((c, i.len() - rest.len())),
        Err(Err::Incomplete(n)) => Err(CommandError::Incomplete {
            needed: match n {
                Needed::Size(s) => s.get(),
                Needed::Unknown => 1,
            },
        }),
        Err(Err::Error(CmdErr(e)) | Err::Failure(CmdErr(e))) => Err(e),
    }
}

/// Buffers host-to-board bytes and yields whole commands (the emulator's reader).
#[derive(Debug, Default)]
pub struct CommandReader {
    buf: Vec<u8>,
    pos: usize,
}

impl CommandReader {
    /// An empty reader.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next command; `None` when more bytes are needed; `Err` when bytes were dropped.
    pub fn next_command(&mut self) -> Option<Result<Command, CommandError>> {
        let rest = &self.buf[self.pos..];
        if rest.is_empty() {
            return None;
        }
        match decode_command(rest) {
            Ok((c, n)) => {
                self.pos += n;
                Some(Ok(c))
            }
            Err(CommandError::Incomplete { .. }) => None,
            Err(e) => {
                self.pos += e.skip().min(rest.len());
                Some(Err(e))
            }
        }
    }

    /// Bytes held, waiting for the rest of a command.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors() {
        // H17: "message code 0x81 0x10 0x06 will carry checksum byte 0x17".
        let c = Command::Bus {
            cmd: BusCommand::SendClock,
            address: (0x10 << 7) | 0x06,
        };
        assert_eq!(c.to_bytes(), [0x81, 0x10, 0x06, 0x17]);
        assert_eq!(decode_command(&[0x81, 0x10, 0x06, 0x17]), Ok((c, 4)));
        assert_eq!(
            decode_command(&[0x81, 0x10, 0x06, 0x18]),
            Err(CommandError::BadChecksum {
                cmd: 0x81,
                got: 0x18,
                expected: 0x17
            })
        );
        assert_eq!(
            Command::Clock(ClockCommand::End).to_bytes(),
            [0x2b, 0x03, 0x03, 0x03, 0x00]
        );
        assert_eq!(
            Command::Clock(ClockCommand::Beep { units: 16 }).to_bytes(),
            [0x2b, 0x04, 0x03, 0x0b, 0x10, 0x00]
        );
        // BearChess's "all LEDs off".
        assert_eq!(
            decode_command(&[0x60, 0x04, 0x00, 0x40, 0x40, 0x00]),
            Ok((
                Command::SetLeds {
                    pattern: 0,
                    start: 0x40,
                    end: 0x40
                },
                6
            ))
        );
        assert_eq!(
            decode_command(&[0x2b, 0x0a, 0x03, 0x0a, 0x00]),
            Err(CommandError::Incomplete { needed: 7 })
        );
        assert_eq!(decode_command(&[0x4b]), Ok((Command::SendUpdateNice, 1)));
    }

    #[test]
    fn reader_skips_bad_bytes() {
        let mut r = CommandReader::new();
        r.push(&[0x2b, 0x01, 0x42, 0x81]);
        assert!(matches!(
            r.next_command(),
            Some(Err(CommandError::Malformed { byte: 0x2b, .. }))
        ));
        assert_eq!(r.next_command(), Some(Ok(Command::Other(0x01))));
        assert_eq!(r.next_command(), Some(Ok(Command::SendBoard)));
        assert_eq!(r.next_command(), None);
        r.push(&[0x10, 0x06, 0x17]);
        assert!(matches!(r.next_command(), Some(Ok(Command::Bus { .. }))));
        assert_eq!(r.buffered(), 0);
    }
}
