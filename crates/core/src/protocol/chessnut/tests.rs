//! Chessnut vectors (each names its source), the square and LED orders, the reader on Chessnut
//! streams (garbage, padding, split input), de-duplication, pacing, and round trips.

use proptest::prelude::*;
use shakmaty::{Bitboard, Board, Color, Piece, Role, Square};

use super::placement::{code, piece_code, piece_from_code};
use super::usb::{Model, application_usage_pages, is_chessnut, model};
use super::*;
use crate::protocol::{DecodeWarning, FrameReader, Wire};

/// The start position's 32 square bytes (\[GO\] 2.1; the middle of \[PC\]'s BLE vectors).
const START: [u8; 32] = [
    0x58, 0x23, 0x31, 0x85, 0x44, 0x44, 0x44, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0x77, 0x77, 0x77, 0x77, 0xa6, 0xc9, 0x9b, 0x6a,
];

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A USB position report for the start position: `01 3D`, the squares, 29 bytes (zeros here).
fn usb_start_report() -> Vec<u8> {
    let mut v = vec![0x01, 0x3d];
    v.extend(START);
    v.extend([0; 29]);
    v
}

fn drain<W: Wire>(r: &mut FrameReader<W>) -> Vec<Result<W::Frame, DecodeWarning>> {
    std::iter::from_fn(|| r.next_frame()).collect()
}

fn frames<F: Clone, E>(items: &[Result<F, E>]) -> Vec<F> {
    items
        .iter()
        .filter_map(|i| i.as_ref().ok().cloned())
        .collect()
}

fn skipped<F>(items: &[Result<F, DecodeWarning>]) -> usize {
    items
        .iter()
        .filter_map(|i| i.as_ref().err())
        .map(DecodeWarning::skipped)
        .sum()
}

fn start_placement() -> WirePlacement {
    WirePlacement::from_bytes(&START).unwrap()
}

#[test]
fn start_position_vector() {
    let placement = start_placement();
    assert_eq!(placement.to_board(), Board::new());
    assert_eq!(placement.to_bytes(), START);
    assert_eq!(WirePlacement::from_board(&Board::new()), placement);
    let squares = placement.to_squares();
    for sq in Square::ALL {
        assert_eq!(squares[sq.to_usize()], Board::new().piece_at(sq), "{sq}");
    }
    assert_eq!(WirePlacement::from_squares(&squares), placement);
}

#[test]
fn square_order_h8_first_low_nibble_first() {
    // 0x58: low nibble 8 (black rook) is h8, high nibble 5 (black knight) is g8.
    let p = start_placement();
    let black = |role| {
        Some(Piece {
            color: Color::Black,
            role,
        })
    };
    assert_eq!(p.0[0], black(Role::Rook));
    assert_eq!(p.0[1], black(Role::Knight));
    assert_eq!(p.get(Square::H8), black(Role::Rook));
    assert_eq!(p.get(Square::G8), black(Role::Knight));
    // 0x23: f8 bishop (3), e8 king (2); 0x31: d8 queen (1), c8 bishop (3).
    assert_eq!(p.get(Square::E8), black(Role::King));
    assert_eq!(p.get(Square::D8), black(Role::Queen));
    // 0xA6 0xC9 0x9B 0x6A: h1 R, g1 N, f1 B, e1 K, d1 Q, c1 B, b1 N, a1 R.
    assert_eq!(p.get(Square::E1).map(|q| q.role), Some(Role::King));
    assert_eq!(p.get(Square::D1).map(|q| q.role), Some(Role::Queen));
    assert_eq!(WirePlacement::square_at(0), Some(Square::H8));
    assert_eq!(WirePlacement::square_at(7), Some(Square::A8));
    assert_eq!(WirePlacement::square_at(8), Some(Square::H7));
    assert_eq!(WirePlacement::square_at(63), Some(Square::A1));
    assert_eq!(WirePlacement::square_at(64), None);
    for sq in Square::ALL {
        assert_eq!(WirePlacement::wire_index(sq), 63 - sq.to_usize());
        assert_eq!(
            WirePlacement::square_at(WirePlacement::wire_index(sq)),
            Some(sq)
        );
    }
    // A lone white king on e4: wire index 63 - 28 = 35, byte 17, high nibble.
    let mut bytes = [0; 32];
    bytes[17] = 0xc0;
    let lone = WirePlacement::from_bytes(&bytes).unwrap();
    assert_eq!(
        lone.to_board().iter().collect::<Vec<_>>(),
        vec![(
            Square::E4,
            Piece {
                color: Color::White,
                role: Role::King
            }
        )]
    );
}

#[test]
fn code_table() {
    let want = [
        (code::EMPTY, None),
        (code::BLACK_QUEEN, Some((Color::Black, Role::Queen))),
        (code::BLACK_KING, Some((Color::Black, Role::King))),
        (code::BLACK_BISHOP, Some((Color::Black, Role::Bishop))),
        (code::BLACK_PAWN, Some((Color::Black, Role::Pawn))),
        (code::BLACK_KNIGHT, Some((Color::Black, Role::Knight))),
        (code::WHITE_ROOK, Some((Color::White, Role::Rook))),
        (code::WHITE_PAWN, Some((Color::White, Role::Pawn))),
        (code::BLACK_ROOK, Some((Color::Black, Role::Rook))),
        (code::WHITE_BISHOP, Some((Color::White, Role::Bishop))),
        (code::WHITE_KNIGHT, Some((Color::White, Role::Knight))),
        (code::WHITE_QUEEN, Some((Color::White, Role::Queen))),
        (code::WHITE_KING, Some((Color::White, Role::King))),
    ];
    for (i, (c, piece)) in want.into_iter().enumerate() {
        assert_eq!(usize::from(c), i);
        let piece = piece.map(|(color, role)| Piece { color, role });
        assert_eq!(piece_from_code(c), Ok(piece));
        assert_eq!(piece_code(piece), c);
    }
    for c in 13..=15 {
        assert_eq!(piece_from_code(c), Err(c));
    }
    let mut bytes = START;
    bytes[9] = 0xd0; // wire index 19 (e6) gets code 13
    assert_eq!(
        WirePlacement::from_bytes(&bytes),
        Err(ReportError::PieceCode {
            index: 19,
            code: 13
        })
    );
}

#[test]
fn usb_position_report() {
    let bytes = usb_start_report();
    assert_eq!(bytes.len(), 63);
    let want = Frame::usb_position(start_placement());
    assert_eq!(parse_report(&bytes), Ok((&[][..], want.clone())));
    assert_eq!(want.to_bytes(), bytes);
    let mut r = FrameReader::with_wire(Chessnut);
    r.push(&bytes);
    assert_eq!(drain(&mut r), vec![Ok(want)]);
    assert_eq!(r.buffered(), 0);
}

#[test]
fn ble_vectors_from_picochess() {
    // tests/test_chessnut_parser.py: the start position over BLE, four bytes after the squares.
    let bytes = hex("012458233185444444440000000000000000000000000000000077777777A6C99B6AFFFFFFFF");
    let (rest, frame) = parse_report(&bytes).unwrap();
    assert!(rest.is_empty());
    let Frame::Position(ref report) = frame else {
        panic!("{frame:?}")
    };
    assert_eq!(report.placement.to_board(), Board::new());
    assert_eq!(report.extra, [0xff; 4]);
    assert_eq!(frame.to_bytes(), bytes);
    // Its "invalid data" vector: codes 15 among the squares.
    let bad = hex("012458233185444444440000000000000FFFF00000000000000077777777A6C99B6AFFFFFFFF");
    let mut r = FrameReader::with_wire(Chessnut);
    r.push(&bad);
    let items = drain(&mut r);
    assert!(frames(&items).is_empty());
    assert_eq!(skipped(&items), bad.len());
    // Its junk-before vector: five bytes, then the report.
    let mut r = FrameReader::with_wire(Chessnut);
    r.push(&hex("9876543210"));
    r.push(&bytes);
    let items = drain(&mut r);
    assert_eq!(frames(&items), vec![frame]);
    assert_eq!(skipped(&items), 5);
}

#[test]
fn battery_reports() {
    // [PC]/[CP]: level then status, 1 = charging; [PL] saw 2A 02 64 01 over USB.
    for (bytes, percent, charging) in [
        ("2a026401", 100, true),
        ("2a025800", 88, false),
        ("2a020900", 9, false),
        // [EB]: bit 7 of the level = charging, bits 0..6 the percentage.
        ("2a02b200", 50, true),
    ] {
        let bytes = hex(bytes);
        let (_, frame) = parse_report(&bytes).unwrap();
        let Frame::Battery(b) = frame else {
            panic!("{frame:?}")
        };
        assert_eq!((b.percent(), b.charging()), (percent, charging));
        assert_eq!(Frame::Battery(b).to_bytes(), bytes);
    }
}

#[test]
fn every_frame_round_trips() {
    let all = [
        Frame::usb_position(start_placement()),
        Frame::Position(PositionReport {
            placement: WirePlacement::default(),
            extra: vec![0x12, 0x00, 0x00, 0x00],
        }),
        Frame::Battery(Battery {
            level: 0x64,
            status: 1,
        }),
        Frame::Ack { code: 0 },
        Frame::Ack { code: 1 },
        Frame::FileCount(3),
        Frame::Button {
            button: 2,
            rest: vec![],
        },
        Frame::Unknown {
            id: ReportId(0x37),
            bytes: vec![0xbe],
        },
        Frame::Unknown {
            id: ReportId(0x36),
            bytes: vec![1, 2, 3, 4, 5, 6, 7, 8],
        },
    ];
    let mut stream = Vec::new();
    for f in &all {
        let bytes = f.to_bytes();
        assert_eq!(parse_report(&bytes), Ok((&[][..], f.clone())), "{f:?}");
        stream.extend(bytes);
    }
    // Fed one byte at a time, the same frames, no warning.
    let mut r = FrameReader::with_wire(Chessnut);
    let mut got = Vec::new();
    for b in &stream {
        r.push(&[*b]);
        got.extend(drain(&mut r));
    }
    assert_eq!(got, all.iter().cloned().map(Ok).collect::<Vec<_>>());
}

#[test]
fn documented_headers() {
    assert!(is_documented_header(0x01, 0x3d));
    assert!(is_documented_header(0x01, 0x24));
    assert!(is_documented_header(0x2a, 0x02));
    assert!(is_documented_header(0x23, 0x01));
    assert!(is_documented_header(0x32, 0x01));
    assert!(!is_documented_header(0x01, 0x25));
    assert!(!is_documented_header(0x0f, 0x01));
    // A position of another length is still a position, but not protected.
    let mut bytes = vec![0x01, 40];
    bytes.extend(START);
    bytes.extend([9; 8]);
    let (_, f) = parse_report(&bytes).unwrap();
    assert!(matches!(f, Frame::Position(ref p) if p.extra == [9; 8]));
    // A known id with another length is kept as Unknown.
    assert_eq!(
        parse_report(&[0x2a, 0x03, 1, 2, 3]),
        Ok((
            &[][..],
            Frame::Unknown {
                id: ReportId(0x2a),
                bytes: vec![1, 2, 3]
            }
        ))
    );
    // Not a report: id 0, length 0, length 63.
    for h in [[0x00, 0x05], [0x05, 0x00], [0x05, 0x3f]] {
        assert!(matches!(
            parse_report(&h),
            Err(nom::Err::Error(ReportError::NotAReport { .. }))
        ));
    }
    assert!(matches!(
        parse_report(&[0x01, 0x3d, 0x58]),
        Err(nom::Err::Incomplete(_))
    ));
}

#[test]
fn zero_padding_and_trim() {
    // [GO] reads 65 bytes: the 63 of the report and two more.
    let mut read = usb_start_report();
    read.extend([0, 0]);
    let mut r = FrameReader::with_wire(Chessnut);
    r.push(&read);
    r.push(&read);
    let items = drain(&mut r);
    assert_eq!(frames(&items).len(), 2);
    assert_eq!(skipped(&items), 4);
    // Trimmed per read, no warning.
    assert_eq!(trim_report(&read), &read[..63]);
    let mut r = FrameReader::with_wire(Chessnut);
    r.push(trim_report(&read));
    r.push(trim_report(&read));
    assert!(drain(&mut r).iter().all(Result::is_ok));
    // Short reads and zero-id reads come back whole.
    assert_eq!(trim_report(&[0x23]), &[0x23]);
    assert_eq!(trim_report(&[0, 0, 0]), &[0, 0, 0]);
    assert_eq!(
        trim_report(&[0x2a, 0x02, 0x64, 0x01, 0, 0]),
        &[0x2a, 0x02, 0x64, 0x01]
    );
}

#[test]
fn garbage_never_swallows_a_documented_report() {
    // 0x55 0x10 looks like the header of a 16-byte unknown report; a battery report starts
    // inside it, so only the two bytes before that report are dropped.
    let mut r = FrameReader::with_wire(Chessnut);
    r.push(&[0x55, 0x10, 0x2a, 0x02, 0x50, 0x00, 0x23, 0x01, 0x00]);
    assert_eq!(
        drain(&mut r),
        vec![
            Err(DecodeWarning::Dropped {
                detail: "report 0x55 cut short by a 0x2a report's header at byte 2".to_owned(),
                skipped: 2
            }),
            Ok(Frame::Battery(Battery {
                level: 0x50,
                status: 0
            })),
            Ok(Frame::Ack { code: 0 }),
        ]
    );
    // The same, with the garbage's length reaching past the end of what has come so far.
    let mut r = FrameReader::with_wire(Chessnut);
    r.push(&[0x55, 0x3e, 0x01]);
    assert_eq!(r.next_frame(), None);
    r.push(&[0x3d]);
    assert!(matches!(
        r.next_frame(),
        Some(Err(DecodeWarning::Dropped { skipped: 2, .. }))
    ));
    // A position with a bad code drops only up to a documented header inside it.
    let mut bad = vec![0x01, 0x24, 0xff, 0x2a, 0x02, 0x10, 0x00];
    bad.resize(38, 0);
    let mut r = FrameReader::with_wire(Chessnut);
    r.push(&bad);
    let items = drain(&mut r);
    assert!(matches!(
        items[0],
        Err(DecodeWarning::Dropped { skipped: 3, .. })
    ));
    assert_eq!(
        items[1],
        Ok(Frame::Battery(Battery {
            level: 0x10,
            status: 0
        }))
    );
    // A lone zero is dropped at once; a lone nonzero byte waits.
    let mut r = FrameReader::with_wire(Chessnut);
    r.push(&[0]);
    assert!(matches!(
        r.next_frame(),
        Some(Err(DecodeWarning::Dropped { skipped: 1, .. }))
    ));
    r.push(&[0x01]);
    assert_eq!(r.next_frame(), None);
    assert_eq!(r.buffered(), 1);
}

#[test]
fn split_input_waits() {
    let bytes = usb_start_report();
    let mut r = FrameReader::with_wire(Chessnut);
    r.push(&bytes[..1]);
    assert_eq!(r.next_frame(), None);
    r.push(&bytes[1..40]);
    assert_eq!(r.next_frame(), None);
    assert_eq!(r.buffered(), 40);
    r.push(&bytes[40..]);
    assert!(matches!(r.next_frame(), Some(Ok(Frame::Position(_)))));
    assert_eq!(r.next_frame(), None);
}

#[test]
fn dedup_keeps_the_last_placement() {
    let mut d = Dedup::new();
    let start = start_placement();
    assert!(d.observe(&start));
    assert!(!d.observe(&start));
    assert!(!d.observe(&start));
    let mut moved = start;
    moved.0[WirePlacement::wire_index(Square::E2)] = None;
    assert!(d.observe(&moved));
    assert_eq!(d.last(), Some(&moved));
    assert!(d.observe(&start));
    d.reset();
    assert!(d.observe(&start));
    // Only the squares count: reports differing after them are the same placement.
    let a = PositionReport {
        placement: start,
        extra: vec![1, 0, 0, 0],
    };
    let b = PositionReport {
        placement: start,
        extra: vec![2, 0, 0, 0],
    };
    assert!(!d.observe(&a.placement));
    assert!(!d.observe(&b.placement));
}

#[test]
fn pacing() {
    let mut p = Pacer::new();
    assert_eq!(p.next_at(), 0);
    assert!(p.ready(0));
    p.wrote(1_000);
    assert_eq!(p.next_at(), 1_200);
    assert_eq!(p.wait(1_000), 200);
    assert_eq!(p.wait(1_150), 50);
    assert!(!p.ready(1_199));
    assert!(p.ready(1_200));
    assert_eq!(p.wait(5_000), 0);
    // The clock stepped back an hour: one full gap, then writes go again.
    let mut p = Pacer::after(3_600_000);
    assert_eq!(p.wait(10), 200);
    assert_eq!(p.last_write(), Some(10));
    assert_eq!(p.wait(210), 0);
    assert_eq!(Pacer::after(u64::MAX).next_at(), u64::MAX);
}

#[test]
fn led_bits() {
    // [GO] and [PC] test_set_leds_e2_e4: rank 8 first, file a = 0x80 … h = 0x01.
    let c = Command::leds([Square::E2, Square::E4]);
    assert_eq!(c.to_bytes(), hex("0a080000000008000800"));
    // [PC] test_set_led: c3 alone.
    assert_eq!(
        Command::leds([Square::C3]).to_bytes(),
        hex("0a080000000000200000")
    );
    assert_eq!(
        Leds::from_squares([Square::A8]).0,
        [0x80, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        Leds::from_squares([Square::H8]).0,
        [0x01, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        Leds::from_squares([Square::A1]).0,
        [0, 0, 0, 0, 0, 0, 0, 0x80]
    );
    assert_eq!(
        Leds::from_squares([Square::H1]).0,
        [0, 0, 0, 0, 0, 0, 0, 0x01]
    );
    let set = Bitboard::from_square(Square::B7) | Bitboard::from_square(Square::G2);
    let leds = Leds::from_bitboard(set);
    assert_eq!(leds.0, [0, 0x40, 0, 0, 0, 0, 0x02, 0]);
    assert_eq!(leds.to_bitboard(), set);
    assert!(leds.is_lit(Square::B7) && !leds.is_lit(Square::B2));
    assert_eq!(
        Command::Leds(Leds::OFF).to_bytes(),
        hex("0a080000000000000000")
    );
}

#[test]
fn commands() {
    let vectors = [
        // [GO], [EB], [EL]: switch reporting on.
        (Command::start_reporting(), hex("210100")),
        // [EL] switchUploadMode; [CP] set_otb_upload_mode.
        (Command::SetMode(Mode::Upload), hex("210101")),
        // [EB], [EL], [PC]: ask for the battery.
        (Command::QueryBattery, hex("290100")),
        // [EL] beep(1000, 200); [DU]'s sniffer saw these bytes.
        (
            Command::Beep {
                frequency_hz: 1000,
                duration_ms: 200,
            },
            hex("0b0403e800c8"),
        ),
        // [EL] getMcuVersion.
        (
            Command::Other {
                id: ReportId(0x27),
                bytes: vec![1],
            },
            hex("270101"),
        ),
        (Command::leds([Square::E2]), hex("0a080000000000000800")),
    ];
    let mut stream = Vec::new();
    for (c, bytes) in &vectors {
        assert_eq!(&c.to_bytes(), bytes, "{c:?}");
        assert_eq!(decode_command(bytes[0], &bytes[2..]), *c);
        stream.extend(bytes);
    }
    let mut r = FrameReader::with_wire(ChessnutCommands);
    for chunk in stream.chunks(4) {
        r.push(chunk);
    }
    let got = drain(&mut r);
    assert_eq!(
        got,
        vectors.into_iter().map(|(c, _)| Ok(c)).collect::<Vec<_>>()
    );
    assert!(is_documented_command(0x21, 1));
    assert!(!is_documented_command(0x21, 2));
}

#[test]
fn usb_matching() {
    assert!(is_chessnut(0x2d80, 0x8001, 0xff00));
    assert!(is_chessnut(0x2d80, 0x8002, 0xff00));
    assert!(is_chessnut(0x2d80, 0x86ff, 0xff00));
    assert!(!is_chessnut(0x2d80, 0x8001, 0x0001));
    assert!(!is_chessnut(0x2d80, 0x7fff, 0xff00));
    assert!(!is_chessnut(0x2d80, 0x8700, 0xff00));
    assert!(!is_chessnut(0x2d81, 0x8001, 0xff00));
    assert_eq!(model(0x8001), Some(Model::Air));
    assert_eq!(model(0x8123), Some(Model::Pro));
    assert_eq!(model(0x8200), Some(Model::AirPlus));
    assert_eq!(model(0x8300), Some(Model::Evo));
    assert_eq!(model(0x8402), Some(Model::Unnamed(0x84)));
    assert_eq!(model(0x8500), Some(Model::Go));
    assert_eq!(model(0x0001), None);
    // A vendor-page collection (report 1, 63 bytes in), then a Generic Desktop keyboard with a
    // nested collection; a 2-byte Usage Page, a 1-byte one, a long item.
    let descriptor = [
        0x06, 0x00, 0xff, 0x09, 0x01, 0xa1, 0x01, 0x85, 0x01, 0x75, 0x08, 0x95, 0x3f, 0x81, 0x02,
        0xc0, 0x05, 0x01, 0x09, 0x06, 0xa1, 0x01, 0xa1, 0x00, 0xfe, 0x02, 0x10, 0xaa, 0xbb, 0xc0,
        0xc0,
    ];
    assert_eq!(application_usage_pages(&descriptor), vec![0xff00, 0x0001]);
    assert_eq!(application_usage_pages(&descriptor[..6]), Vec::<u16>::new());
    assert_eq!(application_usage_pages(&[]), Vec::<u16>::new());
}

fn arb_placement() -> impl Strategy<Value = WirePlacement> {
    proptest::array::uniform32(0u8..=12).prop_map(|codes| {
        let mut squares = [None; 64];
        for (i, c) in codes.iter().enumerate() {
            // Two squares from each code, so that both nibbles vary.
            squares[2 * i] = piece_from_code(*c).unwrap_or(None);
            squares[2 * i + 1] = piece_from_code(12 - *c).unwrap_or(None);
        }
        WirePlacement(squares)
    })
}

/// Bytes that start no report and make none with what follows: zero, or 0x40 and up (as a
/// length, over 62; as an id, none the sources document).
fn noise_byte() -> impl Strategy<Value = u8> {
    prop_oneof![Just(0u8), 0x40u8..=0xff]
}

/// Reports whose headers are documented, and unknown reports with ids of 0x40 and up.
fn arb_report() -> impl Strategy<Value = Frame> {
    prop_oneof![
        (
            arb_placement(),
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 4),
                proptest::collection::vec(any::<u8>(), 29),
            ]
        )
            .prop_map(|(placement, extra)| Frame::Position(PositionReport { placement, extra })),
        (any::<u8>(), any::<u8>())
            .prop_map(|(level, status)| Frame::Battery(Battery { level, status })),
        any::<u8>().prop_map(|code| Frame::Ack { code }),
        any::<u8>().prop_map(Frame::FileCount),
        (
            0x40u8..=0xff,
            proptest::collection::vec(noise_byte(), 1..=MAX_PAYLOAD)
        )
            .prop_map(|(id, bytes)| Frame::Unknown {
                id: ReportId(id),
                bytes
            }),
    ]
}

fn arb_command() -> impl Strategy<Value = Command> {
    prop_oneof![
        Just(Command::start_reporting()),
        Just(Command::SetMode(Mode::Upload)),
        Just(Command::QueryBattery),
        proptest::array::uniform8(any::<u8>()).prop_map(|b| Command::Leds(Leds(b))),
        (any::<u16>(), any::<u16>()).prop_map(|(frequency_hz, duration_ms)| Command::Beep {
            frequency_hz,
            duration_ms
        }),
        (
            0x40u8..=0xff,
            proptest::collection::vec(noise_byte(), 1..=8)
        )
            .prop_map(|(id, bytes)| Command::Other {
                id: ReportId(id),
                bytes
            }),
    ]
}

proptest! {
    #[test]
    fn reports_survive_splits_and_noise(
        reports in proptest::collection::vec(
            (proptest::collection::vec(noise_byte(), 0..6), arb_report()),
            1..8,
        ),
        cuts in proptest::collection::vec(1usize..70, 0..20),
    ) {
        let mut stream = Vec::new();
        for (noise, report) in &reports {
            stream.extend(noise);
            stream.extend(report.to_bytes());
        }
        let mut r = FrameReader::with_wire(Chessnut);
        let mut items = Vec::new();
        let mut at = 0;
        for step in cuts.iter().chain(std::iter::repeat(&70)) {
            if at >= stream.len() {
                break;
            }
            let end = (at + step).min(stream.len());
            r.push(&stream[at..end]);
            at = end;
            items.extend(drain(&mut r));
            prop_assert!(r.buffered() < MAX_REPORT);
        }
        let want: Vec<Frame> = reports.into_iter().map(|(_, f)| f).collect();
        prop_assert_eq!(frames(&items), want);
        let made: usize = frames(&items).iter().map(|f| f.to_bytes().len()).sum();
        prop_assert_eq!(made + skipped(&items) + r.buffered(), stream.len());
    }

    #[test]
    fn report_round_trip(report in arb_report()) {
        let bytes = report.to_bytes();
        prop_assert_eq!(parse_report(&bytes), Ok((&[][..], report)));
    }

    #[test]
    fn command_round_trip(c in arb_command()) {
        let bytes = c.to_bytes();
        prop_assert_eq!(decode_command(bytes[0], &bytes[2..]), c.clone());
        let mut r = FrameReader::with_wire(ChessnutCommands);
        r.push(&bytes);
        prop_assert_eq!(drain(&mut r), vec![Ok(c)]);
    }

    #[test]
    fn placement_orders_agree(p in arb_placement()) {
        prop_assert_eq!(WirePlacement::from_bytes(&p.to_bytes()), Ok(p));
        prop_assert_eq!(WirePlacement::from_squares(&p.to_squares()), p);
        prop_assert_eq!(WirePlacement::from_board(&p.to_board()), p);
        let squares = p.to_squares();
        for sq in Square::ALL {
            prop_assert_eq!(squares[sq.to_usize()], p.get(sq));
        }
    }

    #[test]
    fn leds_round_trip(bits in any::<u64>()) {
        let set = Bitboard(bits);
        prop_assert_eq!(Leds::from_bitboard(set).to_bitboard(), set);
    }

    #[test]
    fn any_bytes_are_accounted(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut r = FrameReader::with_wire(Chessnut);
        r.push(&data);
        let items = drain(&mut r);
        let made: usize = frames(&items).iter().map(|f| f.to_bytes().len()).sum();
        prop_assert_eq!(made + skipped(&items) + r.buffered(), data.len());
        prop_assert!(r.buffered() < MAX_REPORT);
    }
}
