//! ChessLink host-to-board commands: typed values, the registers the spec documents, and what a
//! host sends after opening the port.
//!
//! Flow: the device layer sends [`startup`] after every open and [`Command::encode`]s the rest
//! (through [`super::with_odd_parity`] on a port without hardware parity); the emulator reads
//! what it receives with [`super::cut_command`]. Replies are matched to commands by type
//! ([`super::Frame::answers`]), since automatic reports may come first.
//!
//! Registers (spec, "E2ROM option bytes"): 00 serial setup (bit 0 set disables the block check,
//! for typing at a terminal; default 0), 01 scan time in units of 2.048 ms (default 20, so
//! 40.96 ms; below 15 the board takes 20), 02 automatic reports ([`AutoReport`], bits 2..0),
//! 03 the interval of timed reports in units of 4.096 ms, 04 LED brightness (0 dim, above 14
//! full). Register 06 is the eONE's settings, known only from chesslinkdriver
//! (`EONESettings.dart`). The spec lets a host keep its own data above 0x10.
//! What the drivers write after opening: BearChess `W0000 W011E W0203 W030A` then `V` and
//! `R00`..`R04`; python-mchess `V`, `W0207` (its `set_debounce(4)`, written 4 + 3), `R01`,
//! `W0130`, `R01`, `S`. python-mchess's docstring takes `W0204`..`W0207` for 1..4 scans of
//! debounce; the spec's table says 2..5 scans, and [`AutoReport`] follows the spec.
//! chesslinkdriver does not wait for `l`, `x` or `w` from a board whose version starts with 1
//! (it takes it for a Performance); whether that board sends them is not documented.

use super::{Leds, cmd, letter};

/// Register addresses (spec, "E2ROM option bytes"; 06 from chesslinkdriver).
pub mod reg {
    /// Bit 0 set: the board does not check the block parity of commands (spec: for testing
    /// with a terminal emulator). 0 is the default.
    pub const SERIAL_SETUP: u8 = 0x00;
    /// Time of a whole board scan, in units of [`SCAN_TICK_MICROS`].
    pub const SCAN_TIME: u8 = 0x01;
    /// The automatic report mode, [`super::AutoReport`].
    pub const AUTO_REPORT: u8 = 0x02;
    /// Interval of [`super::AutoReport::Timed`] reports, in units of [`SLOT_TICK_MICROS`].
    pub const REPORT_TIME: u8 = 0x03;
    /// 0 dim … 15 and above full.
    pub const LED_BRIGHTNESS: u8 = 0x04;
    /// eONE settings (chesslinkdriver `EONESettings.dart`): bit 0 board reversed, 1 LEDs
    /// showing errors, 2 automatic reversal, 3 error LEDs at start-up, 4 error LEDs off on an
    /// `L` command, 5 chess rules. Not in the spec.
    pub const EONE_SETTINGS: u8 = 0x06;
    /// The board's default scan time: 20 × 2.048 ms = 40.96 ms.
    pub const DEFAULT_SCAN_TIME: u8 = 20;
    /// The shortest scan time the board takes; below it the board uses the default.
    pub const MIN_SCAN_TIME: u8 = 15;
    /// Microseconds per unit of [`SCAN_TIME`].
    pub const SCAN_TICK_MICROS: u32 = 2048;
    /// Microseconds per unit of [`REPORT_TIME`] and of an `L` command's slot time.
    pub const SLOT_TICK_MICROS: u32 = 4096;
}

/// Register 02, bits 2..0: when the board sends `s` reports on its own (spec).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AutoReport {
    /// After every scan (the default).
    EveryScan = 0,
    /// Never; the host asks with `S`.
    Off = 1,
    /// Every [`reg::REPORT_TIME`] × 4.096 ms.
    Timed = 2,
    /// On any change.
    OnChange = 3,
    /// On any change that holds for 2 scans.
    Debounce2 = 4,
    /// On any change that holds for 3 scans.
    Debounce3 = 5,
    /// On any change that holds for 4 scans.
    Debounce4 = 6,
    /// On any change that holds for 5 scans.
    Debounce5 = 7,
}

impl AutoReport {
    /// Every mode, by register value.
    pub const ALL: [AutoReport; 8] = [
        AutoReport::EveryScan,
        AutoReport::Off,
        AutoReport::Timed,
        AutoReport::OnChange,
        AutoReport::Debounce2,
        AutoReport::Debounce3,
        AutoReport::Debounce4,
        AutoReport::Debounce5,
    ];

    /// The register value.
    pub fn value(self) -> u8 {
        self as u8
    }

    /// The mode a register value sets (bits 7..3 are unused).
    pub fn from_value(value: u8) -> AutoReport {
        Self::ALL[usize::from(value & 0x07)]
    }
}

/// The report mode [`startup`] sets by default: on change with a 2-scan debounce (`W0204`).
pub const STARTUP_REPORT: AutoReport = AutoReport::Debounce2;

/// One host-to-board command.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// `S`: answered by an `s` report.
    Status,
    /// `V`: answered by `v` and the version.
    Version,
    /// `L`: the slot time and 81 LED patterns; answered by `l`.
    SetLeds(Leds),
    /// `X`: all LEDs off; answered by `x`.
    LedsOff,
    /// `T`: a hardware reset, no answer; the board scans again after about 3 s with its
    /// status and LEDs cleared (spec).
    Reset,
    /// `W`: writes a register; answered by `w` with address and value.
    WriteRegister { address: u8, value: u8 },
    /// `R`: reads a register; answered by `r` with address and value.
    ReadRegister { address: u8 },
    /// `I`: asks for the identity text (not in the spec; BearChess sends `I00` to an eONE),
    /// answered by `i`.
    Identify { selector: u8 },
}

impl Command {
    /// The command's letter.
    pub fn letter(&self) -> u8 {
        match self {
            Command::Status => cmd::STATUS,
            Command::Version => cmd::VERSION,
            Command::SetLeds(_) => cmd::LEDS,
            Command::LedsOff => cmd::LEDS_OFF,
            Command::Reset => cmd::RESET,
            Command::WriteRegister { .. } => cmd::WRITE,
            Command::ReadRegister { .. } => cmd::READ,
            Command::Identify { .. } => cmd::IDENTITY,
        }
    }

    /// The letter of the reply that answers this command; `None` for `T`.
    pub fn reply_letter(&self) -> Option<u8> {
        Some(match self {
            Command::Status => letter::STATUS,
            Command::Version => letter::VERSION,
            Command::SetLeds(_) => letter::LEDS,
            Command::LedsOff => letter::LEDS_OFF,
            Command::Reset => return None,
            Command::WriteRegister { .. } => letter::WRITE,
            Command::ReadRegister { .. } => letter::READ,
            Command::Identify { .. } => letter::IDENTITY,
        })
    }

    /// `W02..`: sets the automatic report mode.
    pub fn set_auto_report(mode: AutoReport) -> Command {
        Command::WriteRegister {
            address: reg::AUTO_REPORT,
            value: mode.value(),
        }
    }

    /// `W01..`: sets the scan time in units of 2.048 ms (below 15 the board uses 20).
    pub fn set_scan_time(ticks: u8) -> Command {
        Command::WriteRegister {
            address: reg::SCAN_TIME,
            value: ticks,
        }
    }

    /// `W03..`: sets the interval of timed reports in units of 4.096 ms.
    pub fn set_report_time(ticks: u8) -> Command {
        Command::WriteRegister {
            address: reg::REPORT_TIME,
            value: ticks,
        }
    }

    /// `W04..`: sets the LED brightness (0 dim, above 14 full).
    pub fn set_led_brightness(level: u8) -> Command {
        Command::WriteRegister {
            address: reg::LED_BRIGHTNESS,
            value: level,
        }
    }

    /// `W00..`: has the board check the block parity of commands (`true`, the default) or not.
    pub fn set_block_check(enabled: bool) -> Command {
        Command::WriteRegister {
            address: reg::SERIAL_SETUP,
            value: u8::from(!enabled),
        }
    }
}

/// What the host sends after every open: the version probe (`V`), the block check on
/// (`W0000`, as BearChess does, since the decoder relies on check digits), the report mode
/// (`W02..`, [`STARTUP_REPORT`] unless the caller wants another), and a status request (`S`)
/// for the position at once.
pub fn startup(report: AutoReport) -> [Command; 4] {
    [
        Command::Version,
        Command::set_block_check(true),
        Command::set_auto_report(report),
        Command::Status,
    ]
}
