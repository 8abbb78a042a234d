#![no_main]
//! Fuzzes the bus master's input path: arbitrary bytes from the line (a bus-mode frame reader,
//! then `BusMaster::on_reply` and `fold_reply`) between commands and time-outs. Properties: no
//! panic; never two commands in flight; a board reported lost was joined before; a reply is
//! passed on only with a good checksum.

use boardscribe::{
    bus::{BoardInput, BusMaster, MasterSettings, fold_reply},
    protocol::{FrameReader, dgt::Mode},
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut master = BusMaster::new(MasterSettings::default(), [1, 0x401]);
    let mut reader = FrameReader::with_wire(Mode::Bus);
    let mut now = 0u64;
    let mut joined = std::collections::BTreeSet::new();
    for chunk in data.chunks(7) {
        let Some((&op, bytes)) = chunk.split_first() else {
            continue;
        };
        now += u64::from(op & 0x3f);
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
                        let _ = fold_reply(&reply);
                    }
                    BoardInput::Lost { .. } => unreachable!("lost on a reply"),
                }
            }
        }
    }
});
