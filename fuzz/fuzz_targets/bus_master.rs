#![no_main]
//! Fuzzes the bus master's input path: arbitrary bytes from the line (a bus-mode frame reader,
//! then `BusMaster::on_reply`, `fold_reply` and `fold_in_order`) between commands and time-outs.
//! Properties: no panic; never two commands in flight; a board reported lost was joined before; a
//! reply is passed on only with a good checksum; memory is reported unread only for a board it
//! was asked of; read in order against a known clock, a reply gives the same board frames, with
//! presses between them.

use boardscribe_core::{
    bus::{BoardInput, BusMaster, MasterSettings, fold_in_order, fold_reply},
    protocol::{
        FrameReader,
        dgt::{BwTime, Frame, Mode},
    },
    sensor::dgt::ClockLayout,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut master = BusMaster::new(MasterSettings::default(), [1, 0x401]);
    let mut reader = FrameReader::with_wire(Mode::Bus);
    let mut now = 0u64;
    let mut joined = std::collections::BTreeSet::new();
    let mut asked = std::collections::BTreeSet::new();
    for chunk in data.chunks(7) {
        let Some((&op, bytes)) = chunk.split_first() else {
            continue;
        };
        now += u64::from(op & 0x3f);
        if op & 0x80 != 0 {
            // After a gap the daemon asks for a board's log since its start tag.
            let address = if op & 0x01 != 0 { 0x401 } else { 1 };
            if master.want_memory(address) {
                asked.insert(address);
            }
        }
        if op & 0x40 != 0 {
            if let Some(d) = master.deadline() {
                now = now.max(d);
                for input in master.on_timeout(now) {
                    if let BoardInput::Lost { address } = input {
                        assert!(joined.remove(&address), "lost before joined: {address}");
                    }
                }
            }
        }
        if master.in_flight().is_some() {
            assert_eq!(master.next_command(now), None, "two commands in flight");
        } else {
            master.next_command(now);
        }
        reader.push(bytes);
        while let Some(next) = reader.next_frame() {
            let Ok(frame) = next else { continue };
            for input in master.on_reply(now, frame) {
                match input {
                    BoardInput::Joined { address } => {
                        joined.insert(address);
                    }
                    BoardInput::Reply { reply, .. } => {
                        assert!(reply.checksum_ok);
                        let folded = fold_reply(&reply).frames;
                        // A clock at 0:15:00 each side, the left running.
                        let clock = BwTime([0, 0x15, 0, 0, 0x15, 0, 0x09]);
                        for layout in [ClockLayout::H17, ClockLayout::H13] {
                            let in_order = fold_in_order(&reply, Some(clock), layout);
                            let board: Vec<_> = in_order
                                .into_iter()
                                .filter(|f| !matches!(f, Frame::BwTime(_)) || folded.contains(&f))
                                .collect();
                            assert_eq!(board, folded);
                        }
                    }
                    BoardInput::Lost { .. } => unreachable!("lost on a reply"),
                    BoardInput::MemoryNotRead { address } => {
                        assert!(asked.contains(&address), "memory not asked for: {address}");
                    }
                }
            }
        }
    }
});
