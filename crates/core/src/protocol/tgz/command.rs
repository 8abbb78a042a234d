//! TGZ-1 host-to-board commands: one byte each. Typed values, their encoding, and a streaming
//! decoder for the emulator's side of the wire.
//!
//! Flow: the device layer sends [`startup`] after every open and [`Command::encode`]s the rest;
//! the emulator pushes received bytes into a [`CommandReader`]. Any other byte is
//! [`Command::Other`], which the board ignores.

use nom::{Err, IResult, Needed};

use super::cmd;

/// One host-to-board command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// Stop sending updates; no answer.
    Reset,
    /// Answered by DGT_MSG_BWTIME.
    SendClock,
    /// Answered by TGZ_MSG_BOARD_DUMP.
    SendBoard,
    /// From now on, PIT_UPDATE / TUZ_UPDATE on every change.
    SendUpdateBoard,
    /// As [`Command::SendUpdateBoard`], plus BWTIME whenever the clock display changes.
    SendUpdateNice,
    /// Answered by DGT_MSG_SERIALNR.
    ReturnSerialNr,
    /// Answered by DGT_MSG_TRADEMARK.
    SendTrademark,
    /// Answered by DGT_MSG_VERSION.
    SendVersion,
    /// Any other byte; the board ignores it.
    Other(u8),
}

const KNOWN: [(u8, Command); 8] = [
    (cmd::SEND_RESET, Command::Reset),
    (cmd::SEND_CLK, Command::SendClock),
    (cmd::SEND_BRD, Command::SendBoard),
    (cmd::SEND_UPDATE_BRD, Command::SendUpdateBoard),
    (cmd::SEND_UPDATE_NICE, Command::SendUpdateNice),
    (cmd::RETURN_SERIALNR, Command::ReturnSerialNr),
    (cmd::SEND_TRADEMARK, Command::SendTrademark),
    (cmd::SEND_VERSION, Command::SendVersion),
];

impl Command {
    /// The command byte.
    pub fn byte(self) -> u8 {
        match self {
            Command::Other(b) => b,
            known => KNOWN
                .iter()
                .find(|(_, c)| *c == known)
                .map_or(0, |(b, _)| *b),
        }
    }

    /// The command a byte stands for.
    pub fn from_byte(b: u8) -> Command {
        KNOWN
            .iter()
            .find(|(k, _)| *k == b)
            .map_or(Command::Other(b), |(_, c)| *c)
    }

    /// Appends the command's byte to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.byte());
    }
}

/// What the host sends after every open: the board dump, then updates (with the clock if
/// `clock_updates`), since the board powers up silent.
pub fn startup(clock_updates: bool) -> [Command; 2] {
    let updates = if clock_updates {
        Command::SendUpdateNice
    } else {
        Command::SendUpdateBoard
    };
    [Command::SendBoard, updates]
}

/// Decodes one command from the start of `i` (streaming: `Incomplete` when empty).
pub fn decode_command(i: &[u8]) -> IResult<&[u8], Command, ()> {
    match i.split_first() {
        Some((&b, rest)) => Ok((rest, Command::from_byte(b))),
        None => Err(Err::Incomplete(Needed::new(1))),
    }
}

/// Collects command bytes as they arrive and hands out whole commands.
#[derive(Clone, Debug, Default)]
pub struct CommandReader {
    buf: Vec<u8>,
}

impl CommandReader {
    pub fn new() -> CommandReader {
        CommandReader::default()
    }

    /// Appends bytes from the host.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next command, if a byte is buffered.
    pub fn next_command(&mut self) -> Option<Command> {
        let (_, c) = decode_command(&self.buf).ok()?;
        self.buf.remove(0);
        Some(c)
    }
}
