//! EEPROM token vectors (dgt-notes 1.11, the bit layout of dgtbrd.h): every token kind byte by
//! byte, every error with its offset, an EE_MOVES frame and a bus update carrying tokens, and a
//! round-trip property (tokens -> bytes -> tokens).

use boardscribe::protocol::{
    FrameReader,
    dgt::{
        BusReply, ClockTime, EeTag, EeToken, EeTokenError, Frame, MessageId, Mode,
        encode_ee_tokens, parse_ee_tokens,
    },
};
use proptest::prelude::*;

fn enc(tokens: &[EeToken]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_ee_tokens(tokens, &mut out);
    out
}

fn t(hours: u8, minutes: u8, seconds: u8) -> ClockTime {
    ClockTime {
        hours,
        minutes,
        seconds,
    }
}

/// Byte-exact vectors, both directions.
fn vector(bytes: &[u8], tokens: &[EeToken]) {
    assert_eq!(
        parse_ee_tokens(bytes).as_deref(),
        Ok(tokens),
        "{bytes:02x?}"
    );
    assert_eq!(enc(tokens), bytes, "{tokens:?}");
}

#[test]
fn field_change_vectors() {
    // White pawn (0x01) on e2 (field 52), not quick: 0100 0001, 0011 0100.
    vector(
        &[0x41, 0x34],
        &[EeToken::Field {
            square: 52,
            piece: 0x01,
            quick: false,
        }],
    );
    // e2 emptied, quick (r bit 0x10): 0101 0000.
    vector(
        &[0x50, 0x34],
        &[EeToken::Field {
            square: 52,
            piece: 0x00,
            quick: true,
        }],
    );
    // The range ends: black-wins piece (0x0f) on h1 (63), quick; the black queen on a8 (0).
    vector(
        &[0x5f, 0x3f, 0x4c, 0x00],
        &[
            EeToken::Field {
                square: 63,
                piece: 0x0f,
                quick: true,
            },
            EeToken::Field {
                square: 0,
                piece: 0x0c,
                quick: false,
            },
        ],
    );
}

#[test]
fn clock_vectors() {
    // Right clock (f = 0) 1:30:00: 0110 0001, BCD 0x30, 0x00.
    vector(
        &[0x61, 0x30, 0x00],
        &[EeToken::Clock {
            left: false,
            time: t(1, 30, 0),
        }],
    );
    // Left clock (f = 1) 0:03:02, then 9:59:59 on the right, the largest reading.
    vector(
        &[0x70, 0x03, 0x02, 0x69, 0x59, 0x59],
        &[
            EeToken::Clock {
                left: true,
                time: t(0, 3, 2),
            },
            EeToken::Clock {
                left: false,
                time: t(9, 59, 59),
            },
        ],
    );
    assert_eq!(
        parse_ee_tokens(&[0x79, 0x00, 0x00]),
        Ok(vec![EeToken::Clock {
            left: true,
            time: t(9, 0, 0)
        }])
    );
}

#[test]
fn tag_vectors() {
    let tags = [
        (0x6a, EeTag::PowerUp),
        (0x6b, EeTag::Eof),
        (0x6c, EeTag::FourRows),
        (0x6d, EeTag::EmptyBoard),
        (0x6e, EeTag::Downloaded),
        (0x6f, EeTag::BeginPos),
        (0x7a, EeTag::BeginPosRot),
        (0x7b, EeTag::StartTag),
        (0x7c, EeTag::Watchdog),
        (0x7d, EeTag::Reserved(0x7d)),
        (0x7e, EeTag::Reserved(0x7e)),
        (0x7f, EeTag::Nop),
        (0x00, EeTag::Nop2),
    ];
    for (byte, tag) in tags {
        vector(&[byte], &[EeToken::Tag(tag)]);
        assert_eq!(EeTag::from_code(byte), Some(tag));
        assert_eq!(tag.code(), byte);
    }
}

#[test]
fn a_power_up_log() {
    // What a board writes at power-up (three NOPs, POWERUP, one token per piece), then the start
    // position tag, 1. e4 with the right clock reading at the lever, and the end of the dump.
    let bytes = [
        0x7f, 0x7f, 0x7f, 0x6a, // NOP NOP NOP POWERUP
        0x45, 0x3c, // white king e1
        0x4b, 0x04, // black king e8
        0x6f, // BEGINPOS
        0x40, 0x34, 0x41, 0x24, // e2 empty, pawn on e4
        0x60, 0x04, 0x59, // right clock 0:04:59
        0x6e, 0x6b, // DOWNLOADED EOF
    ];
    let f = |square, piece| EeToken::Field {
        square,
        piece,
        quick: false,
    };
    let tag = EeToken::Tag;
    vector(
        &bytes,
        &[
            tag(EeTag::Nop),
            tag(EeTag::Nop),
            tag(EeTag::Nop),
            tag(EeTag::PowerUp),
            f(60, 0x05),
            f(4, 0x0b),
            tag(EeTag::BeginPos),
            f(52, 0x00),
            f(36, 0x01),
            EeToken::Clock {
                left: false,
                time: t(0, 4, 59),
            },
            tag(EeTag::Downloaded),
            tag(EeTag::Eof),
        ],
    );
}

#[test]
fn errors_name_the_offset_and_the_fault() {
    // Field byte 0x40 (64) after a good NOP: the offending byte is at 2.
    assert_eq!(
        parse_ee_tokens(&[0x7f, 0x41, 0x40]),
        Err(EeTokenError::FieldOutOfRange {
            offset: 2,
            value: 0x40
        })
    );
    // Minutes 0x60 (tens 6) and seconds 0x0a (units 10).
    assert_eq!(
        parse_ee_tokens(&[0x60, 0x60, 0x00]),
        Err(EeTokenError::BadBcd {
            offset: 1,
            part: "minutes",
            value: 0x60
        })
    );
    assert_eq!(
        parse_ee_tokens(&[0x6b, 0x71, 0x00, 0x0a]),
        Err(EeTokenError::BadBcd {
            offset: 3,
            part: "seconds",
            value: 0x0a
        })
    );
    // Cut short at the end: a clock with one of its three bytes, a field change with one of two.
    assert_eq!(
        parse_ee_tokens(&[0x6f, 0x61]),
        Err(EeTokenError::Truncated {
            offset: 1,
            kind: "clock",
            needed: 3,
            left: 1
        })
    );
    assert_eq!(
        parse_ee_tokens(&[0x41, 0x34, 0x42]),
        Err(EeTokenError::Truncated {
            offset: 2,
            kind: "field change",
            needed: 2,
            left: 1
        })
    );
    // Bytes that start no token: 0x01..=0x3f, and anything with bit 7 set.
    for b in (0x01..=0x3f).chain(0x80..=0xff) {
        assert_eq!(
            parse_ee_tokens(&[0x6a, b]),
            Err(EeTokenError::NoToken {
                offset: 1,
                value: b
            })
        );
    }
    let msg = parse_ee_tokens(&[0x60, 0x60, 0x00])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(msg.contains("byte 1") && msg.contains("minutes"), "{msg}");
}

#[test]
fn tokens_inside_an_ee_moves_frame_and_a_bus_update() {
    let tokens = [
        EeToken::Tag(EeTag::BeginPosRot),
        EeToken::Field {
            square: 11,
            piece: 0,
            quick: false,
        },
        EeToken::Field {
            square: 27,
            piece: 0x01,
            quick: true,
        },
        EeToken::Clock {
            left: true,
            time: t(0, 14, 58),
        },
        EeToken::Tag(EeTag::Eof),
    ];
    let log = enc(&tokens);
    // 0x8f frame: 3-byte header (length counts the header) + the log.
    let mut frame = vec![0x8f, 0x00, (log.len() + 3) as u8];
    frame.extend_from_slice(&log);
    let mut r = FrameReader::new(Mode::Single);
    r.push(&frame);
    match r.next_frame() {
        Some(Ok(Frame::EeMoves(got))) => {
            assert_eq!(parse_ee_tokens(&got).as_deref(), Ok(&tokens[..]))
        }
        other => panic!("{other:?}"),
    }
    // Bus update 0x85 from board 0x0801: id, length, address, the tokens, checksum.
    let data = &log[..log.len() - 1];
    let mut bus = vec![0x85, 0x00, (data.len() + 6) as u8, 0x08, 0x01];
    bus.extend_from_slice(data);
    bus.push((bus.iter().map(|&b| u32::from(b)).sum::<u32>() & 0x7f) as u8);
    let mut r = FrameReader::new(Mode::Bus);
    r.push(&bus);
    match r.next_frame() {
        Some(Ok(Frame::Bus(BusReply {
            id: MessageId(0x85),
            address: 0x0401,
            data: got,
            checksum_ok: true,
        }))) => assert_eq!(parse_ee_tokens(&got).as_deref(), Ok(&tokens[..4])),
        other => panic!("{other:?}"),
    }
}

fn any_tag() -> impl Strategy<Value = EeTag> {
    prop_oneof![
        Just(EeTag::PowerUp),
        Just(EeTag::Eof),
        Just(EeTag::FourRows),
        Just(EeTag::EmptyBoard),
        Just(EeTag::Downloaded),
        Just(EeTag::BeginPos),
        Just(EeTag::BeginPosRot),
        Just(EeTag::StartTag),
        Just(EeTag::Watchdog),
        Just(EeTag::Nop),
        Just(EeTag::Nop2),
        (0x7du8..=0x7e).prop_map(EeTag::Reserved),
    ]
}

fn any_token() -> impl Strategy<Value = EeToken> {
    prop_oneof![
        (0u8..64, 0u8..16, any::<bool>()).prop_map(|(square, piece, quick)| EeToken::Field {
            square,
            piece,
            quick
        }),
        (any::<bool>(), 0u8..10, 0u8..60, 0u8..60).prop_map(|(left, h, m, s)| EeToken::Clock {
            left,
            time: t(h, m, s)
        }),
        any_tag().prop_map(EeToken::Tag),
    ]
}

proptest! {
    #[test]
    fn tokens_round_trip(tokens in prop::collection::vec(any_token(), 0..300)) {
        let bytes = enc(&tokens);
        prop_assert!(bytes.iter().all(|&b| b & 0x80 == 0), "bit 7 set in {bytes:02x?}");
        prop_assert_eq!(parse_ee_tokens(&bytes), Ok(tokens));
    }

    #[test]
    fn any_bytes_decode_or_fail_inside_the_input(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        match parse_ee_tokens(&bytes) {
            Ok(tokens) => prop_assert_eq!(enc(&tokens), bytes),
            Err(e) => {
                let offset = e.offset();
                prop_assert!(offset < bytes.len());
            }
        }
    }
}
