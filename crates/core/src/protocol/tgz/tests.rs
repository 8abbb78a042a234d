//! TGZ-1 vectors written byte by byte from the tables of `shared/protocols/togyz-board.md`,
//! the reader on TGZ-1 streams, and round trips.

use nom::{Err, Needed};
use proptest::prelude::*;

use super::*;
use crate::protocol::{
    DecodeWarning, FrameReader,
    dgt::{ClockTime, FrameError},
};

/// The start position's dump: nine in each pit, empty stores, no markers.
fn start_dump_bytes() -> Vec<u8> {
    let mut v = vec![0xb0, 0x00, 0x2d];
    for _ in 0..18 {
        v.extend([0x00, 0x09]);
    }
    v.extend([0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
    v
}

fn drain(r: &mut FrameReader<Tgz>) -> Vec<Result<Frame, DecodeWarning>> {
    std::iter::from_fn(|| r.next_frame()).collect()
}

#[test]
fn board_dump_start_position() {
    let bytes = start_dump_bytes();
    assert_eq!(bytes.len(), 45);
    let mut counts = [9; LOCATIONS];
    counts[18] = 0;
    counts[19] = 0;
    let want = Frame::BoardDump(PitDump {
        counts,
        tuz: [0, 0],
    });
    assert_eq!(parse_board_dump(&bytes), Ok((&[][..], want.clone())));
    assert_eq!(parse_frame(&bytes), Ok((&[][..], want.clone())));
    assert_eq!(want.to_bytes(), bytes);
}

#[test]
fn board_dump_two_byte_counts_and_tuz() {
    // 162 = 0x01 0x22 in white's store; white's marker on black's 4, black's on white's 6.
    let mut bytes = vec![0xb0, 0x00, 0x2d];
    for _ in 0..18 {
        bytes.extend([0x00, 0x00]);
    }
    bytes.extend([0x01, 0x22, 0x00, 0x00, 0x04, 0x06]);
    let (_, f) = parse_board_dump(&bytes).unwrap();
    let Frame::BoardDump(d) = f else {
        panic!("{f:?}")
    };
    assert_eq!(d.counts[18], 162);
    assert_eq!(d.tuz, [4, 6]);
    assert_eq!(Frame::BoardDump(d).to_bytes(), bytes);
}

#[test]
fn out_of_range_values_are_errors() {
    // Count 163 in a dump.
    let mut bytes = start_dump_bytes();
    bytes[3..5].copy_from_slice(&[0x01, 0x23]);
    assert_eq!(
        parse_board_dump(&bytes),
        Err(Err::Error(FrameError::OutOfRange {
            id: 0xb0,
            field: "count",
            value: 163,
            max: 162
        }))
    );
    // Tuz byte 10.
    let mut bytes = start_dump_bytes();
    bytes[43] = 10;
    assert!(matches!(
        parse_board_dump(&bytes),
        Err(Err::Error(FrameError::OutOfRange {
            field: "tuz pit",
            value: 10,
            ..
        }))
    ));
    // Location 20, player 2.
    assert!(matches!(
        parse_pit_update(&[0xb1, 0x00, 0x06, 20, 0x00, 0x01]),
        Err(Err::Error(FrameError::OutOfRange {
            field: "location",
            ..
        }))
    ));
    assert!(matches!(
        parse_tuz_update(&[0xb2, 0x00, 0x05, 0x02, 0x01]),
        Err(Err::Error(FrameError::OutOfRange {
            field: "player",
            ..
        }))
    ));
}

#[test]
fn pit_and_tuz_updates() {
    // White's store now holds 82.
    let b = [0xb1, 0x00, 0x06, 0x12, 0x00, 0x52];
    let f = Frame::PitUpdate {
        location: WHITE_STORE,
        count: 82,
    };
    assert_eq!(parse_pit_update(&b), Ok((&[][..], f.clone())));
    assert_eq!(f.to_bytes(), b);
    // Black's pit 9 holds 130 = 0x01 0x02.
    let b = [0xb1, 0x00, 0x06, 0x11, 0x01, 0x02];
    assert_eq!(
        parse_frame(&b),
        Ok((
            &[][..],
            Frame::PitUpdate {
                location: 17,
                count: 130
            }
        ))
    );
    // White's marker on black's pit 4; black's lifted.
    let b = [0xb2, 0x00, 0x05, 0x00, 0x04];
    let f = Frame::TuzUpdate {
        player: Side::White,
        pit: 4,
    };
    assert_eq!(parse_tuz_update(&b), Ok((&[][..], f.clone())));
    assert_eq!(f.to_bytes(), b);
    let b = [0xb2, 0x00, 0x05, 0x01, 0x00];
    assert_eq!(
        parse_frame(&b).map(|(_, f)| f),
        Ok(Frame::TuzUpdate {
            player: Side::Black,
            pit: 0
        })
    );
}

#[test]
fn dgt_messages_on_the_pit_board() {
    let serial = [0x91, 0x00, 0x08, b'0', b'4', b'2', b'1', b'7'];
    assert_eq!(
        parse_frame(&serial),
        Ok((&[][..], Frame::SerialNr("04217".to_owned())))
    );
    let mut tm = vec![0x92, 0x00, 3 + 13];
    tm.extend(b"TGZ Pit Board");
    assert_eq!(
        parse_frame(&tm).map(|(_, f)| f),
        Ok(Frame::Trademark("TGZ Pit Board".to_owned()))
    );
    assert_eq!(
        parse_frame(&[0x93, 0x00, 0x05, 0x01, 0x02]),
        Ok((&[][..], Frame::Version { major: 1, minor: 2 }))
    );
    let clock = [0x8d, 0x00, 0x0a, 0x01, 0x25, 0x00, 0x01, 0x24, 0x59, 0x01];
    let (_, f) = parse_frame(&clock).unwrap();
    let Frame::BwTime(t) = f else { panic!("{f:?}") };
    assert_eq!(
        t.left(),
        ClockTime {
            hours: 1,
            minutes: 24,
            seconds: 59
        }
    );
    assert_eq!(Frame::BwTime(t).to_bytes(), clock);
    // The 1998 12-byte SERIALNR is DGT's, not TGZ-1's.
    assert_eq!(
        split_frame(&[0x91, 0x00, 0x0c]),
        Err(Err::Error(FrameError::BadLength { id: 0x91, len: 12 }))
    );
    // A DGT board dump is not a TGZ-1 message: kept as unknown.
    let (_, f) = parse_frame(&[0x86, 0x00, 0x04, 0x01]).unwrap();
    assert_eq!(
        f,
        Frame::Unknown {
            id: MessageId(0x86),
            payload: vec![1]
        }
    );
}

#[test]
fn length_caps_and_streaming() {
    assert_eq!(
        split_frame(&[0xb1, 0x00, 0x05]),
        Err(Err::Error(FrameError::BadLength { id: 0xb1, len: 5 }))
    );
    assert_eq!(
        split_frame(&[0xc0, 0x02, 0x05]),
        Err(Err::Error(FrameError::Oversize {
            id: 0xc0,
            len: 261,
            max: 259
        }))
    );
    let bytes = start_dump_bytes();
    for cut in 0..bytes.len() {
        assert!(
            matches!(parse_frame(&bytes[..cut]), Err(Err::Incomplete(_))),
            "cut at {cut}"
        );
    }
    assert_eq!(
        parse_frame(&bytes[..3]),
        Err(Err::Incomplete(Needed::new(42)))
    );
}

#[test]
fn reader_resynchronises() {
    let mut r = FrameReader::with_wire(Tgz);
    r.push(&[0x09, 0x09]);
    let mut got = drain(&mut r);
    let mut stream = Vec::new();
    // A dump cut short by a pit update, a tuz update with pit 12, then a good update.
    stream.extend(&start_dump_bytes()[..10]);
    stream.extend([0xb1, 0x00, 0x06, 0x00, 0x00, 0x08]);
    stream.extend([0xb2, 0x00, 0x05, 0x00, 0x0c]);
    stream.extend([0xb2, 0x00, 0x05, 0x01, 0x07]);
    // Pushed a byte at a time.
    for b in &stream {
        r.push(std::slice::from_ref(b));
        got.extend(drain(&mut r));
    }
    assert_eq!(got.len(), 5, "{got:?}");
    assert_eq!(got[0], Err(DecodeWarning::SkippedGarbage { count: 2 }));
    assert!(matches!(
        got[1],
        Err(DecodeWarning::HighBitInFrame { skipped: 10, .. })
    ));
    assert_eq!(
        got[2],
        Ok(Frame::PitUpdate {
            location: 0,
            count: 8
        })
    );
    match &got[3] {
        Err(w @ DecodeWarning::InvalidPayload { skipped: 5, .. }) => {
            assert!(w.to_string().contains("tuz pit 12 is out of range"), "{w}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        got[4],
        Ok(Frame::TuzUpdate {
            player: Side::Black,
            pit: 7
        })
    );
    assert_eq!(r.buffered(), 0);
}

#[test]
fn commands() {
    let all = [
        (0x40, Command::Reset),
        (0x41, Command::SendClock),
        (0x42, Command::SendBoard),
        (0x44, Command::SendUpdateBoard),
        (0x4b, Command::SendUpdateNice),
        (0x45, Command::ReturnSerialNr),
        (0x47, Command::SendTrademark),
        (0x4d, Command::SendVersion),
    ];
    for (b, c) in all {
        assert_eq!(c.byte(), b);
        assert_eq!(decode_command(&[b, 0x42]), Ok((&[0x42][..], c)));
    }
    assert_eq!(Command::from_byte(0x43), Command::Other(0x43));
    assert_eq!(decode_command(&[]), Err(Err::Incomplete(Needed::new(1))));
    assert_eq!(startup(true), [Command::SendBoard, Command::SendUpdateNice]);
    let mut r = CommandReader::new();
    r.push(&[0x42, 0x4b]);
    assert_eq!(r.next_command(), Some(Command::SendBoard));
    assert_eq!(r.next_command(), Some(Command::SendUpdateNice));
    assert_eq!(r.next_command(), None);
}

fn arb_frame() -> impl Strategy<Value = Frame> {
    let count = 0u8..=162;
    prop_oneof![
        (
            proptest::array::uniform20(count.clone()),
            proptest::array::uniform2(0u8..=9)
        )
            .prop_map(|(counts, tuz)| Frame::BoardDump(PitDump { counts, tuz })),
        (0u8..20, count).prop_map(|(location, count)| Frame::PitUpdate { location, count }),
        (any::<bool>(), 0u8..=9).prop_map(|(b, pit)| Frame::TuzUpdate {
            player: if b { Side::Black } else { Side::White },
            pit
        }),
        proptest::array::uniform7(0u8..0x80).prop_map(|b| Frame::BwTime(BwTime(b))),
        "[0-9]{5}".prop_map(Frame::SerialNr),
        "[ -~]{0,40}".prop_map(Frame::Trademark),
        (0u8..0x80, 0u8..0x80).prop_map(|(major, minor)| Frame::Version { major, minor }),
        (
            (0xb3u8..=0xff),
            proptest::collection::vec(0u8..0x80, 0..100)
        )
            .prop_map(|(id, payload)| Frame::Unknown {
                id: MessageId(id),
                payload
            }),
    ]
}

proptest! {
    #[test]
    fn frames_round_trip(frames in proptest::collection::vec(arb_frame(), 1..8), step in 1usize..50) {
        let mut bytes = Vec::new();
        for f in &frames {
            let one = f.to_bytes();
            prop_assert_eq!(parse_frame(&one), Ok((&[][..], f.clone())));
            bytes.extend(one);
        }
        let mut r = FrameReader::with_wire(Tgz);
        let mut got = Vec::new();
        for chunk in bytes.chunks(step) {
            r.push(chunk);
            got.extend(drain(&mut r));
        }
        prop_assert_eq!(got, frames.into_iter().map(Ok).collect::<Vec<_>>());
    }

    #[test]
    fn noise_never_stops_the_reader(noise in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut r = FrameReader::with_wire(Tgz);
        r.push(&noise);
        let items = drain(&mut r);
        let accounted: usize = items.iter().map(|i| match i {
            Ok(f) => f.to_bytes().len(),
            Err(w) => w.skipped(),
        }).sum();
        prop_assert_eq!(accounted + r.buffered(), noise.len());
        // After the noise, a good frame still comes through: its id cuts any pending frame.
        r.push(&start_dump_bytes());
        let after = drain(&mut r);
        prop_assert!(matches!(after.last(), Some(Ok(Frame::BoardDump(_)))), "{:?}", after);
        prop_assert_eq!(r.buffered(), 0);
    }
}
