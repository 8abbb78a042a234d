use proptest::prelude::*;
use shakmaty::{Bitboard, Color, Piece, Role, Square};

use super::*;
use crate::protocol::FrameReader;

/// The start position's message as picochess's parser reads it: rank 8 first, a-file first,
/// high nibble first; 10 8 9 11 12 9 8 10 is r n b q k b n r.
const START: [u8; 34] = [
    0x3d, 0x70, 0xa8, 0x9b, 0xc9, 0x8a, 0x77, 0x77, 0x77, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0x11, 0x11, 0x11, 0x11, 0x42, 0x35, 0x63, 0x24,
];

fn read(chunks: &[&[u8]]) -> (Vec<Frame>, Vec<DecodeWarning>) {
    let mut r = FrameReader::with_wire(IChessOne);
    let (mut frames, mut warnings) = (Vec::new(), Vec::new());
    for c in chunks {
        r.push(c);
        while let Some(f) = r.next_frame() {
            match f {
                Ok(f) => frames.push(f),
                Err(w) => warnings.push(w),
            }
        }
    }
    (frames, warnings)
}

#[test]
fn the_start_position_is_its_bytes_both_ways() {
    assert_eq!(Frame::Position(Placement::start()).to_bytes(), START);
    let (frames, warnings) = read(&[&START]);
    assert_eq!(frames, vec![Frame::Position(Placement::start())]);
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn index_0_is_a8_7_is_h8_and_63_is_h1() {
    assert_eq!(square_of(0), Square::A8);
    assert_eq!(square_of(7), Square::H8);
    assert_eq!(square_of(8), Square::A7);
    assert_eq!(square_of(56), Square::A1);
    assert_eq!(square_of(63), Square::H1);
    let start = Placement::start();
    let rook = Some(Piece {
        color: Color::Black,
        role: Role::Rook,
    });
    let queen = Some(Piece {
        color: Color::White,
        role: Role::Queen,
    });
    assert_eq!(start.0[0], rook);
    // d1, the white queen: index 59, the low nibble of byte 29 (code 5).
    assert_eq!(start.0[59], queen);
    assert_eq!(START[2 + 29] & 0x0f, 5);
}

#[test]
fn codes_are_the_drivers_table() {
    let table = "PNBRQKpnbrqk";
    for (i, ch) in table.chars().enumerate() {
        let c = i as u8 + 1;
        let p = piece(c).ok().flatten().map(|p| p.char());
        assert_eq!(p, Some(ch), "code {c}");
        assert_eq!(code(piece(c).ok().flatten()), c);
    }
    assert_eq!(piece(0), Ok(None));
    for c in 13..=15 {
        assert_eq!(piece(c), Err(c));
    }
}

#[test]
fn a_message_split_anywhere_reads_whole() {
    for cut in 0..=START.len() {
        let (frames, warnings) = read(&[&START[..cut], &START[cut..]]);
        assert_eq!(frames.len(), 1, "cut at {cut}");
        assert!(warnings.is_empty(), "cut at {cut}: {warnings:?}");
    }
}

#[test]
fn bytes_before_a_message_and_a_bad_square_are_dropped_up_to_the_next_equals() {
    let mut bad = START;
    bad[2 + 5] = 0x7d; // the low nibble 13: no piece
    let mut bytes = b"\x00\x55junk".to_vec();
    bytes.extend(bad);
    bytes.extend([0x3d, 0x62, 1, 85]);
    bytes.extend([0x3d, 0x41]);
    bytes.extend(START);
    let (frames, warnings) = read(&[&bytes]);
    assert_eq!(
        frames,
        vec![
            Frame::Battery {
                status: 1,
                percent: 85
            },
            Frame::Position(Placement::start())
        ]
    );
    let skipped: Vec<usize> = warnings.iter().map(DecodeWarning::skipped).collect();
    // The junk; the bad position up to the battery's '='; the stray "=A".
    assert_eq!(skipped, vec![6, 34, 2], "{warnings:?}");
    assert!(
        warnings[1].to_string().contains("d7 has code 13"),
        "{}",
        warnings[1]
    );
}

#[test]
fn a_battery_message_may_carry_an_equals_sign() {
    // 61 % is 0x3d, the start byte: the battery's two bytes are taken as they are.
    let mut bytes = vec![0x3d, 0x62, 0, 0x3d];
    bytes.extend(START);
    let (frames, warnings) = read(&[&bytes]);
    assert_eq!(frames.len(), 2, "{warnings:?}");
    assert_eq!(
        frames[0],
        Frame::Battery {
            status: 0,
            percent: 61
        }
    );
}

#[test]
fn commands_are_the_drivers_bytes() {
    assert_eq!(Command::RequestPosition.to_bytes(), [0x52, 0x50]);
    assert_eq!(
        Command::ReportChanges.to_bytes(),
        [0x43, 0x50, 0x49, 0x52, 0x51]
    );
    assert_eq!(Command::RequestBattery.to_bytes(), [0x52, 0x42]);
    // picochess's set_led_off, byte for byte.
    assert_eq!(
        Command::Leds(Leds::off()).to_bytes(),
        [
            0x45, 0x4c, 0x00, 0x0f, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x01, 0xff
        ]
    );
}

#[test]
fn the_leds_run_from_rank_8_with_the_a_file_in_bit_0() {
    let leds = Leds::on(Bitboard::from(Square::A8) | Bitboard::from(Square::H1));
    let bytes = leds.square_bytes();
    assert_eq!(bytes[0], 0b0000_0001, "a8: byte 0, bit 0");
    assert_eq!(bytes[7], 0b1000_0000, "h1: byte 7, bit 7");
    assert!(bytes[1..7].iter().all(|&b| b == 0));
    // picochess lights e2 and e4 for 1. e4 as rows 1 and 3 (ranks 2 and 4), column 4: square
    // (7 - row) * 8 + 7 - 4, bit 7 - (square % 8) of byte square / 8.
    let e2e4 = Leds::on(Bitboard::from(Square::E2) | Bitboard::from(Square::E4));
    let mut picochess = [0u8; 8];
    for row in [1usize, 3] {
        let square = (7 - row) * 8 + 7 - 4;
        picochess[square / 8] |= 1 << (7 - square % 8);
    }
    assert_eq!(e2e4.square_bytes(), picochess);
    // A board turned round lights the square turned round (the caller's business).
    let turned = Leds::on(Bitboard::from(Square::A8.flip_vertical().flip_horizontal()));
    assert_eq!(turned.square_bytes()[7], 0b1000_0000);
}

#[test]
fn commands_read_back_and_wait_for_their_end() {
    let commands = [
        Command::RequestPosition,
        Command::ReportChanges,
        Command::RequestBattery,
        Command::Leds(Leds::on(Bitboard::from(Square::C6))),
    ];
    let mut bytes = Vec::new();
    for c in commands {
        c.encode(&mut bytes);
    }
    let mut read = Vec::new();
    let mut rest = &bytes[..];
    while let Some((c, used)) = cut_command(rest) {
        read.push(c);
        rest = &rest[used..];
    }
    assert!(rest.is_empty());
    assert_eq!(read, commands.map(Ok).to_vec());
    for cut in 1..bytes.len() {
        let head = &bytes[..cut];
        if let Some((_, used)) = cut_command(head) {
            assert!(used <= cut);
        }
    }
    assert_eq!(cut_command(b"C"), None);
    assert_eq!(cut_command(b"EL\x80"), None);
    assert_eq!(cut_command(b"x"), Some((Err(b'x'), 1)));
}

fn any_piece() -> impl Strategy<Value = Option<Piece>> {
    (0u8..=12).prop_map(|c| piece(c).ok().flatten())
}

proptest! {
    #[test]
    fn any_placement_reads_back(squares in proptest::array::uniform32(any_piece()),
                                more in proptest::array::uniform32(any_piece())) {
        let mut all = [None; 64];
        all[..32].copy_from_slice(&squares);
        all[32..].copy_from_slice(&more);
        let frame = Frame::Position(Placement(all));
        let (frames, warnings) = read(&[&frame.to_bytes()]);
        prop_assert_eq!(frames, vec![frame]);
        prop_assert!(warnings.is_empty());
    }

    #[test]
    fn noise_never_panics_and_loses_no_byte(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut r = FrameReader::with_wire(IChessOne);
        r.push(&bytes);
        let mut used = 0;
        while let Some(f) = r.next_frame() {
            used += match f {
                Ok(f) => f.to_bytes().len(),
                Err(w) => w.skipped(),
            };
        }
        prop_assert!(used <= bytes.len());
        prop_assert!(bytes.len() - used < 34);
    }
}
