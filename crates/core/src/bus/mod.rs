//! DGT bus mode: a chain of boards on one serial port (dgt-notes 1.12).
//!
//! Flow: the [`master::BusMaster`] decides which 4-byte bus command goes on the line next
//! (discovery by broadcast ping, then round-robin SEND_CHANGES with dumps, clocks, repeats and
//! re-probes), and turns each reply into per-board inputs; [`fold`] turns one board's reply into
//! the same single-board frames (board dump, field updates, BWTIME) its pipeline already reads;
//! [`from_start`] turns a board's log since the game's start tag into the log its memory reader
//! reads after a gap.
//! Pure: no I/O and no system clock; time is an argument. The I/O edge is `daemon::bus`.

pub mod fold;
pub mod from_start;
pub mod master;

pub use fold::{BusBoardState, DgtBus, Folded, clock_after_lever, fold_in_order, fold_reply};
pub use master::{BoardInput, BusMaster, MasterSettings, MasterStats, wire_ms};

/// A bus address from a board's five-digit serial number: the decimal number in 14 bits
/// (dgt-notes 1.10: `"01025"` -> `0x401`, sent as `08 01`). `None` if it is not 1 to 5 decimal
/// digits or gives address 0 (the broadcast address).
pub fn address_from_serial(serial: &str) -> Option<u16> {
    let s = serial.trim();
    if s.is_empty() || s.len() > 5 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v = s.parse::<u32>().ok()? & 0x3fff;
    u16::try_from(v).ok().filter(|&a| a != 0)
}

/// The five-digit serial below 16384 that gives `address` (the inverse of
/// [`address_from_serial`]).
pub fn serial_from_address(address: u16) -> String {
    format!("{:05}", address & 0x3fff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_from_serials() {
        assert_eq!(address_from_serial("01025"), Some(0x401));
        assert_eq!(address_from_serial("00001"), Some(1));
        assert_eq!(address_from_serial("00000"), None);
        assert_eq!(address_from_serial("1a025"), None);
        assert_eq!(address_from_serial("123456"), None);
        // 14 bits: 20000 = 0x4e20, cut to 0x0e20.
        assert_eq!(address_from_serial("20000"), Some(0x0e20));
        assert_eq!(serial_from_address(0x401), "01025");
    }
}
