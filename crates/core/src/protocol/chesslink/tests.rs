//! ChessLink vectors: the `V` exchange logged in picochess's `chess_link.py`, the start position
//! in the drivers' h1-first order (BearChess's `sRNBKQBNR…` string, check worked out by hand),
//! the LED corners as python-mchess, chesslinkdriver and BearChess number them; the reader on
//! noisy, split and parity-carrying streams; round trips both ways.

use nom::Err;
use proptest::prelude::*;
use shakmaty::{Board, Color, Piece, Role, Square};

use super::*;
use crate::protocol::{DecodeWarning, FrameReader};

/// The start position as a board lying normally reports it, check digits included.
const START: &[u8] = b"sRNBKQBNRPPPPPPPP................................pppppppprnbkqbnr73";

fn drain(r: &mut FrameReader<ChessLink>) -> Vec<Result<Frame, DecodeWarning>> {
    std::iter::from_fn(|| r.next_frame()).collect()
}

fn parity(chars: &[u8]) -> Vec<u8> {
    chars.iter().map(|&c| with_odd_parity(c)).collect()
}

fn piece(color: Color, role: Role) -> Option<Piece> {
    Some(Piece { color, role })
}

#[test]
fn version_request_vector() {
    let v = Command::Version.to_bytes();
    assert_eq!(v, b"V56");
    assert_eq!(parity(&v), [0xd6, 0xb5, 0xb6]);
    // The emulator reads it either way.
    assert_eq!(
        cut_command(&[0xd6, 0xb5, 0xb6]),
        Some((Ok(Command::Version), 3))
    );
    assert_eq!(cut_command(b"V56"), Some((Ok(Command::Version), 3)));
}

#[test]
fn version_reply_as_logged() {
    // picochess `chess_link.py`: "BLE: Handle: 55, data: b'v\xb01\xb0\xb374'".
    let wire = [b'v', 0xb0, b'1', 0xb0, 0xb3, b'7', b'4'];
    let want = Frame::Version { high: 1, low: 3 };
    assert_eq!(cut_reply(&wire), Some((Ok(want.clone()), 7)));
    assert_eq!(want.to_bytes(), b"v010374");
    assert_eq!(parity(&want.to_bytes()), wire);
}

#[test]
fn start_position_vector() {
    assert_eq!(START.len(), STATUS_LEN);
    let Some((Ok(Frame::Status(report)), 67)) = cut_reply(START) else {
        panic!("{:?}", cut_reply(START));
    };
    assert_eq!(report, Report::start(Orientation::Normal));
    assert_eq!(report.to_board(Orientation::Normal), Board::new());
    let squares = report.to_squares(Orientation::Normal);
    assert_eq!(squares[0], piece(Color::White, Role::Rook)); // a1
    assert_eq!(squares[3], piece(Color::White, Role::Queen)); // d1
    assert_eq!(squares[4], piece(Color::White, Role::King)); // e1
    assert_eq!(squares[60], piece(Color::Black, Role::King)); // e8
    assert_eq!(squares[63], piece(Color::Black, Role::Rook)); // h8
    assert_eq!(Frame::Status(report).to_bytes(), START);
    // The same characters with the parity bit in bit 7.
    assert_eq!(
        cut_reply(&parity(START)),
        Some((Ok(Frame::Status(report)), 67))
    );
}

#[test]
fn report_order_is_h1_first() {
    let n = Orientation::Normal;
    // The white king on e1 is character 3 of the squares (4 of the message).
    assert_eq!(START[1 + 3], b'K');
    assert_eq!(square_at(3, n), Square::E1);
    assert_eq!(wire_index(Square::E1, n), 3);
    assert_eq!(square_at(0, n), Square::H1);
    assert_eq!(square_at(7, n), Square::A1);
    assert_eq!(square_at(8, n), Square::H2);
    assert_eq!(square_at(63, n), Square::A8);
    assert_eq!(START[1 + 63], b'r');
    let report = Report::start(n);
    assert_eq!(
        report.piece_at(Square::A8, n),
        piece(Color::Black, Role::Rook)
    );
    assert_eq!(
        report.piece_at(Square::D8, n),
        piece(Color::Black, Role::Queen)
    );
    for i in 0..64 {
        for o in [Orientation::Normal, Orientation::TurnedRound] {
            assert_eq!(wire_index(square_at(i, o), o), i);
        }
    }
    // Turned round, the report reads as the spec labels it: a8 first. BearChess knows this
    // start position as the board with black in front.
    let t = Orientation::TurnedRound;
    assert_eq!(square_at(0, t), Square::A8);
    assert_eq!(square_at(63, t), Square::H1);
    let turned = Frame::Status(Report::start(t)).to_bytes();
    assert_eq!(
        &turned[..65],
        b"srnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR"
    );
    let back = Report::start(t).to_squares(t);
    assert_eq!(back, Report::start(n).to_squares(n));
}

#[test]
fn led_order() {
    let n = Orientation::Normal;
    // LED 0 is h1's outer corner; each column of nine runs from rank 1's edge to rank 8's.
    assert_eq!(led_index(8, 0, n), 0);
    assert_eq!(led_index(8, 8, n), 8);
    assert_eq!(led_index(7, 0, n), 9);
    assert_eq!(led_index(0, 0, n), 72);
    assert_eq!(led_index(0, 8, n), 80);
    let mut h1 = square_leds(Square::H1, n);
    h1.sort_unstable();
    assert_eq!(h1, [0, 1, 9, 10]);
    let mut a1 = square_leds(Square::A1, n);
    a1.sort_unstable();
    assert_eq!(a1, [63, 64, 72, 73]);
    let mut a8 = square_leds(Square::A8, n);
    a8.sort_unstable();
    assert_eq!(a8, [70, 71, 79, 80]);
    let mut e2 = square_leds(Square::E2, n);
    e2.sort_unstable();
    assert_eq!(e2, [28, 29, 37, 38]);
    // Turned round, the spec's labels hold: LED 1 (index 0) at the a8 corner, 9 at a1, 73 at
    // h8, 81 at h1.
    let t = Orientation::TurnedRound;
    assert_eq!(led_index(0, 8, t), 0);
    assert_eq!(led_index(0, 0, t), 8);
    assert_eq!(led_index(8, 8, t), 72);
    assert_eq!(led_index(8, 0, t), 80);
    for sq in Square::ALL {
        let mut a = square_leds(sq, n);
        let mut b = square_leds(sq.rotate_180(), t);
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}

#[test]
fn leds_command() {
    let mut leds = Leds::off(0x22);
    leds.light_square(Square::H1, LED_ON, Orientation::Normal);
    leds.light_square(Square::G1, 0x0f, Orientation::Normal);
    let c = Command::SetLeds(leds);
    let bytes = c.to_bytes();
    assert_eq!(bytes.len(), LEDS_LEN);
    assert_eq!(&bytes[..3], b"L22");
    let led = |i: usize| &bytes[3 + 2 * i..5 + 2 * i];
    assert_eq!(led(0), b"FF");
    assert_eq!(led(2), b"00");
    // The corners h1 and g1 share.
    assert_eq!(led(9), b"FF");
    assert_eq!(led(18), b"0F");
    assert_eq!(cut_command(&bytes), Some((Ok(c), LEDS_LEN)));
    assert_eq!(Command::LedsOff.to_bytes(), b"X58");
}

#[test]
fn parity_set_and_stripped() {
    assert_eq!(with_odd_parity(b'V'), 0xd6);
    assert_eq!(with_odd_parity(b'1'), b'1');
    for c in 0u8..0x80 {
        let p = with_odd_parity(c);
        assert_eq!(p.count_ones() % 2, 1, "{c:#04x}");
        assert_eq!(strip_parity(p), c);
        assert_eq!(with_odd_parity(p), p);
    }
}

#[test]
fn every_reply_round_trips() {
    let frames = [
        Frame::Status(Report::start(Orientation::Normal)),
        Frame::Status(Report::EMPTY),
        Frame::Version { high: 0, low: 0x17 },
        Frame::LedsSet,
        Frame::LedsOff,
        Frame::RegisterWritten {
            address: 2,
            value: 4,
        },
        Frame::RegisterRead {
            address: 0xff,
            value: 0xea,
        },
        Frame::Identity {
            selector: 0,
            text: "e-one".to_owned(),
        },
        Frame::Identity {
            selector: 0xff,
            text: String::new(),
        },
    ];
    let expected: [&[u8]; 9] = [
        START,
        b"s................................................................73",
        b"v001770",
        b"l6C",
        b"x78",
        b"w020471",
        b"rFFEA76",
        b"i00e-one\n4F",
        b"iFF\n63",
    ];
    for (f, want) in frames.iter().zip(expected) {
        let bytes = f.to_bytes();
        assert_eq!(bytes, want, "{f:?}");
        assert_eq!(parse_reply(&bytes), Ok((&[][..], f.clone())));
        assert_eq!(cut_reply(&bytes), Some((Ok(f.clone()), bytes.len())));
        // Every proper prefix waits for more.
        for cut in 0..bytes.len() {
            assert_eq!(cut_reply(&bytes[..cut]), None, "{f:?} cut at {cut}");
        }
    }
}

#[test]
fn every_command_round_trips() {
    let mut leds = Leds::off(0x7a);
    leds.light_square(Square::E4, 0xc4, Orientation::Normal);
    let commands = [
        (Command::Status, &b"S53"[..]),
        (Command::Version, b"V56"),
        (Command::LedsOff, b"X58"),
        (Command::Reset, b"T54"),
        (Command::set_auto_report(AutoReport::OnChange), b"W020356"),
        (Command::set_auto_report(AutoReport::Debounce2), b"W020451"),
        (Command::ReadRegister { address: 2 }, b"R0250"),
        (Command::Identify { selector: 0 }, b"I0049"),
    ];
    for (c, want) in commands {
        assert_eq!(c.to_bytes(), want, "{c:?}");
        assert_eq!(parse_command(want), Ok((&[][..], c.clone())));
        assert_eq!(cut_command(&parity(want)), Some((Ok(c), want.len())));
    }
    let l = Command::SetLeds(leds);
    assert_eq!(cut_command(&l.to_bytes()), Some((Ok(l.clone()), LEDS_LEN)));
    for cut in 0..LEDS_LEN {
        assert_eq!(cut_command(&l.to_bytes()[..cut]), None);
    }
}

#[test]
fn startup_sequence() {
    let s = startup(STARTUP_REPORT);
    let bytes: Vec<Vec<u8>> = s.iter().map(Command::to_bytes).collect();
    assert_eq!(
        bytes,
        [&b"V56"[..], b"W000057", b"W020451", b"S53"].map(<[u8]>::to_vec)
    );
    assert_eq!(
        startup(AutoReport::OnChange)[2],
        Command::WriteRegister {
            address: reg::AUTO_REPORT,
            value: 3
        }
    );
    for (i, mode) in AutoReport::ALL.iter().enumerate() {
        assert_eq!(usize::from(mode.value()), i);
        assert_eq!(AutoReport::from_value(mode.value() | 0xf8), *mode);
    }
}

#[test]
fn replies_match_commands_by_type() {
    let w = Frame::RegisterWritten {
        address: 2,
        value: 4,
    };
    assert!(w.answers(&Command::set_auto_report(AutoReport::Debounce2)));
    assert!(!w.answers(&Command::set_scan_time(30)));
    assert!(!w.answers(&Command::ReadRegister { address: 2 }));
    let r = Frame::RegisterRead {
        address: 1,
        value: 20,
    };
    assert!(r.answers(&Command::ReadRegister { address: 1 }));
    let report = Frame::Status(Report::EMPTY);
    assert!(report.answers(&Command::Status));
    assert!(!report.answers(&Command::Version));
    assert!(Frame::LedsSet.answers(&Command::SetLeds(Leds::off(0))));
    assert!(Frame::LedsOff.answers(&Command::LedsOff));
    assert!(Frame::Version { high: 1, low: 3 }.answers(&Command::Version));
    let id = Frame::Identity {
        selector: 0xff,
        text: String::new(),
    };
    assert!(id.answers(&Command::Identify { selector: 0 }));
    assert_eq!(Command::Reset.reply_letter(), None);
}

#[test]
fn bad_check_digits_are_dropped() {
    // One off in the check.
    assert_eq!(
        cut_reply(b"v010375"),
        Some((
            Err(MessageError::BadCheck {
                letter: 'v',
                found: 0x75,
                computed: 0x74
            }),
            7
        ))
    );
    // Not a hex digit where the check belongs.
    assert_eq!(
        cut_reply(b"v0103G4x78"),
        Some((
            Err(MessageError::BadCharacter {
                letter: 'v',
                offset: 5,
                found: b'G',
                expected: "a check digit"
            }),
            7
        ))
    );
    // Lower-case check digits (the Centaur emulator's) are not the spec's.
    assert!(matches!(
        cut_reply(b"l6c"),
        Some((Err(MessageError::BadCharacter { offset: 2, .. }), 3))
    ));
    // A report with a bad square character.
    let mut bad = START.to_vec();
    bad[10] = b'X';
    assert!(matches!(
        cut_reply(&bad),
        Some((
            Err(MessageError::BadCharacter {
                offset: 10,
                found: b'X',
                ..
            }),
            _
        ))
    ));
}

#[test]
fn reader_drops_garbage_and_resynchronises() {
    let mut r = FrameReader::with_wire(ChessLink);
    let mut stream = Vec::new();
    stream.extend([0x00, 0xff, b'A', b'7']); // noise
    stream.extend(b"t74"); // the Centaur's reset reply, not a real board's
    stream.extend(b"v010375"); // bad check
    stream.extend(parity(b"w020471"));
    stream.extend(&START[..20]); // a report cut short…
    stream.extend(b"x78"); // …by a reply
    stream.extend(START);
    // At once: one warning for each run of bytes that makes no message.
    r.push(&stream);
    let got = drain(&mut r);
    let skipped: Vec<usize> = got
        .iter()
        .filter_map(|g| g.as_ref().err().map(DecodeWarning::skipped))
        .collect();
    assert_eq!(skipped, [7, 7, 20], "{got:?}");
    let want = [
        Frame::RegisterWritten {
            address: 2,
            value: 4,
        },
        Frame::LedsOff,
        Frame::Status(Report::start(Orientation::Normal)),
    ];
    let frames: Vec<Frame> = got.into_iter().filter_map(Result::ok).collect();
    assert_eq!(frames, want);
    // A byte at a time: garbage goes as it comes, the same bytes in all, the same frames.
    let mut got = Vec::new();
    for b in &stream {
        r.push(std::slice::from_ref(b));
        got.extend(drain(&mut r));
    }
    let skipped: usize = got
        .iter()
        .filter_map(|g| g.as_ref().err().map(DecodeWarning::skipped))
        .sum();
    assert_eq!(skipped, 34);
    let frames: Vec<Frame> = got.into_iter().filter_map(Result::ok).collect();
    assert_eq!(frames, want);
    assert_eq!(r.buffered(), 0);
}

#[test]
fn warnings_say_what_was_wrong() {
    let mut r = FrameReader::with_wire(ChessLink);
    r.push(b"v010375l6C");
    let Some(Err(w)) = r.next_frame() else {
        panic!()
    };
    assert_eq!(
        w.to_string(),
        "dropped 7 byte(s): message `v` carries check 75, its characters give 74"
    );
    assert_eq!(r.next_frame(), Some(Ok(Frame::LedsSet)));
    r.push(b"Q");
    let Some(Err(w)) = r.next_frame() else {
        panic!()
    };
    assert_eq!(
        w.to_string(),
        "dropped 1 byte(s): byte 0x51 starts no message"
    );
}

#[test]
fn stray_letters_lose_nothing() {
    // A stray `s` gives up at the next character that is no square.
    let mut r = FrameReader::with_wire(ChessLink);
    r.push(b"sv010374");
    let got = drain(&mut r);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].as_ref().map_err(DecodeWarning::skipped), Err(1));
    assert_eq!(got[1], Ok(Frame::Version { high: 1, low: 3 }));
    // A stray `r` inside a broken report.
    r.push(b"sRNr0204");
    r.push(b"74");
    let got = drain(&mut r);
    assert_eq!(
        got.last(),
        Some(&Ok(Frame::RegisterRead {
            address: 2,
            value: 4
        }))
    );
    // A stray `i` with two hex digits takes text until its cap, then gives it up: the reply
    // behind it waits, and comes out whole.
    r.push(b"iABv010374");
    assert_eq!(drain(&mut r), []);
    r.push(START);
    let got = drain(&mut r);
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got[0].is_err());
    assert_eq!(got[1], Ok(Frame::Version { high: 1, low: 3 }));
    assert_eq!(
        got[2],
        Ok(Frame::Status(Report::start(Orientation::Normal)))
    );
}

#[test]
fn identity_text() {
    assert_eq!(
        cut_reply(b"i00e-one\n4F"),
        Some((
            Ok(Frame::Identity {
                selector: 0,
                text: "e-one".to_owned()
            }),
            11
        ))
    );
    // Text past the cap is no identity.
    let mut long = b"i00".to_vec();
    long.extend([b'a'; IDENTITY_TEXT_MAX + 1]);
    assert!(matches!(
        cut_reply(&long),
        Some((Err(MessageError::BadCharacter { offset, .. }), _)) if offset == 3 + IDENTITY_TEXT_MAX
    ));
    // Written text is printable ASCII, cut at the cap.
    let f = Frame::Identity {
        selector: 1,
        text: format!("é{}", "x".repeat(50)),
    };
    let bytes = f.to_bytes();
    assert_eq!(bytes.len(), 1 + 2 + IDENTITY_TEXT_MAX + 1 + 2);
    assert_eq!(bytes[3], b'?');
}

#[test]
fn command_reader_resynchronises() {
    let mut stream = b"\x00\x00W0204".to_vec(); // a write cut short
    stream.extend(parity(b"S53"));
    stream.extend(b"R02");
    stream.extend(b"51"); // bad check
    stream.extend(b"X58");
    let mut got = Vec::new();
    let mut rest = &stream[..];
    while let Some((item, used)) = cut_command(rest) {
        got.push((item, used));
        rest = &rest[used..];
    }
    assert!(rest.is_empty());
    let used: Vec<usize> = got.iter().map(|(_, u)| *u).collect();
    assert_eq!(used, [2, 5, 3, 5, 3]);
    assert_eq!(got[2].0, Ok(Command::Status));
    assert_eq!(got[4].0, Ok(Command::LedsOff));
    assert!(matches!(
        got[3].0,
        Err(MessageError::BadCheck { letter: 'R', .. })
    ));
}

fn arb_piece() -> impl Strategy<Value = Option<Piece>> {
    prop::sample::select(b"KQRBNPkqrbnp.".to_vec()).prop_map(|c| piece_from_char(c).flatten())
}

fn arb_frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        proptest::array::uniform32(arb_piece()).prop_flat_map(|a| {
            proptest::array::uniform32(arb_piece()).prop_map(move |b| {
                let mut sq = [None; 64];
                sq[..32].copy_from_slice(&a);
                sq[32..].copy_from_slice(&b);
                Frame::Status(Report(sq))
            })
        }),
        (any::<u8>(), any::<u8>()).prop_map(|(high, low)| Frame::Version { high, low }),
        Just(Frame::LedsSet),
        Just(Frame::LedsOff),
        (any::<u8>(), any::<u8>())
            .prop_map(|(address, value)| Frame::RegisterWritten { address, value }),
        (any::<u8>(), any::<u8>())
            .prop_map(|(address, value)| Frame::RegisterRead { address, value }),
        (any::<u8>(), "[ -~]{0,40}")
            .prop_map(|(selector, text)| Frame::Identity { selector, text }),
    ]
}

/// Bytes that start no reply, with any bit 7.
fn arb_noise() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        any::<u8>().prop_filter("no reply letter", |b| {
            !letter::REPLIES.contains(&(b & 0x7f))
        }),
        0..12,
    )
}

proptest! {
    #[test]
    fn frames_survive_noise_splits_and_parity(
        items in proptest::collection::vec((arb_frame(), arb_noise(), any::<bool>()), 1..8),
        cuts in proptest::collection::vec(1usize..80, 1..20),
    ) {
        let mut stream = Vec::new();
        for (f, noise, with_parity) in &items {
            stream.extend(noise);
            let bytes = f.to_bytes();
            prop_assert_eq!(parse_reply(&bytes), Ok((&[][..], f.clone())));
            stream.extend(if *with_parity { parity(&bytes) } else { bytes });
        }
        let mut r = FrameReader::with_wire(ChessLink);
        let mut got = Vec::new();
        let mut rest = &stream[..];
        for &n in cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (chunk, tail) = rest.split_at(n.min(rest.len()));
            rest = tail;
            r.push(chunk);
            got.extend(drain(&mut r));
            prop_assert!(r.buffered() < MAX_REPLY_LEN);
        }
        let frames: Vec<Frame> = got.into_iter().filter_map(Result::ok).collect();
        let want: Vec<Frame> = items.into_iter().map(|(f, _, _)| f).collect();
        prop_assert_eq!(frames, want);
        prop_assert_eq!(r.buffered(), 0);
    }

    #[test]
    fn any_bytes_are_accounted_for(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut r = FrameReader::with_wire(ChessLink);
        r.push(&bytes);
        let mut used = 0;
        while let Some(item) = r.next_frame() {
            used += match item {
                Ok(f) => f.to_bytes().len(),
                Err(w) => w.skipped(),
            };
        }
        prop_assert_eq!(used + r.buffered(), bytes.len());
        prop_assert!(r.buffered() < MAX_REPLY_LEN);
    }

    #[test]
    fn what_decodes_re_encodes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Some((Ok(f), used)) = cut_reply(&bytes) {
            let chars: Vec<u8> = bytes[..used].iter().map(|&b| strip_parity(b)).collect();
            prop_assert_eq!(f.to_bytes(), chars);
        }
        if let Some((Ok(c), used)) = cut_command(&bytes) {
            let chars: Vec<u8> = bytes[..used].iter().map(|&b| strip_parity(b)).collect();
            prop_assert_eq!(c.to_bytes(), chars);
        }
    }
}

#[test]
fn nom_parsers_stream() {
    assert!(matches!(parse_reply(b"s"), Err(Err::Incomplete(_))));
    assert!(matches!(
        parse_reply(b"q"),
        Err(Err::Error(MessageError::NotALetter { byte: b'q' }))
    ));
    assert!(matches!(parse_command(b"W02"), Err(Err::Incomplete(_))));
}
