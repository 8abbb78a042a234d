//! Certabo vectors: records built from chip ids, the square order, framing (bare LFs, junk,
//! splits, bad counts), calibration, LED commands pinned to the drivers' vectors, and the real
//! records of cer2nut's tests kept in `fixtures/certabo/` (see its README).

use proptest::prelude::*;
use shakmaty::{Bitboard, Board, Color, Rank, Square};

use super::*;
use crate::protocol::{DecodeWarning, FrameReader};

fn drain(r: &mut FrameReader<Certabo>) -> Vec<Result<Frame, DecodeWarning>> {
    std::iter::from_fn(|| r.next_frame()).collect()
}

fn decode_all(bytes: &[u8]) -> Vec<Result<Frame, DecodeWarning>> {
    let mut r = FrameReader::with_wire(Certabo);
    r.push(bytes);
    drain(&mut r)
}

fn pieces(items: &[Result<Frame, DecodeWarning>]) -> Vec<Record> {
    items
        .iter()
        .filter_map(|i| match i {
            Ok(Frame::Pieces(r)) => Some(*r),
            _ => None,
        })
        .collect()
}

fn warnings(items: &[Result<Frame, DecodeWarning>]) -> Vec<DecodeWarning> {
    items.iter().filter_map(|i| i.clone().err()).collect()
}

/// A chip id of our own for the piece first placed on board index `i`: `3 0 84 i 7`, the
/// shape of the real ids in cer2nut's records.
fn chip(i: usize) -> ChipId {
    ChipId([3, 0, 84, i as u8, 7])
}

/// The calibration setup: the start position with our chips, d3 and d6 as asked.
fn setup(extra_white: bool, extra_black: bool) -> Record {
    let mut chips = [ChipId::EMPTY; 64];
    for i in (0..16).chain(48..64) {
        chips[i] = chip(i);
    }
    if extra_white {
        chips[board_index(Square::D3)] = chip(43);
    }
    if extra_black {
        chips[board_index(Square::D6)] = chip(19);
    }
    Record(chips)
}

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../fixtures/certabo/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

// ---- Records and the square order ----

#[test]
fn start_position_record_decodes() {
    let record = setup(false, false);
    let bytes = Frame::Pieces(record).to_bytes();
    assert!(bytes.starts_with(b":3 0 84 0 7 3 0 84 1 7 "));
    assert!(bytes.ends_with(b" 3 0 84 63 7 \r\n"));
    assert_eq!(decode_all(&bytes), vec![Ok(Frame::Pieces(record))]);
    // The middle four ranks are empty.
    let numbers: Vec<u8> = record.numbers().collect();
    assert_eq!(numbers.len(), RECORD_NUMBERS);
    assert!(numbers[80..240].iter().all(|&n| n == 0));
}

#[test]
fn square_order_first_is_a8_last_is_h1() {
    let mut numbers = [0u8; RECORD_NUMBERS];
    numbers[..5].copy_from_slice(&[1, 2, 3, 4, 5]);
    numbers[5..10].copy_from_slice(&[6, 7, 8, 9, 10]);
    numbers[40..45].copy_from_slice(&[11, 12, 13, 14, 15]);
    numbers[315..].copy_from_slice(&[16, 17, 18, 19, 20]);
    let text: Vec<String> = numbers.iter().map(|n| n.to_string()).collect();
    let bytes = format!(":{} \r\n", text.join(" "));
    let [Ok(Frame::Pieces(r))] = decode_all(bytes.as_bytes())[..] else {
        panic!("not one record")
    };
    assert_eq!(r.chip(Square::A8), ChipId([1, 2, 3, 4, 5]));
    assert_eq!(r.chip(Square::B8), ChipId([6, 7, 8, 9, 10]));
    assert_eq!(r.chip(Square::A7), ChipId([11, 12, 13, 14, 15]));
    assert_eq!(r.chip(Square::H1), ChipId([16, 17, 18, 19, 20]));
    assert_eq!(r.chip(Square::E4), ChipId::EMPTY);
    assert_eq!((board_index(Square::A8), board_index(Square::H1)), (0, 63));
    assert_eq!((square_at(7), square_at(8)), (Square::H8, Square::A7));
    let in_square_order = to_square_order(r.chips());
    assert_eq!(in_square_order[0], r.chip(Square::A1));
    assert_eq!(in_square_order[Square::H1.to_usize()], r.chip(Square::H1));
    assert_eq!(
        in_square_order[Square::A8.to_usize()],
        ChipId([1, 2, 3, 4, 5])
    );
    for sq in Square::ALL {
        assert_eq!(square_at(board_index(sq)), sq);
        assert_eq!(in_square_order[sq.to_usize()], r.chip(sq));
    }
}

#[test]
fn bare_lf_inside_a_number_is_deleted() {
    let record = setup(true, true);
    let bytes = Frame::Pieces(record).to_bytes();
    // `:3 0 84 0 7 …`: cut "84" as "8\n4", as in cer2nut's records.
    let mut cut = bytes[..6].to_vec();
    cut.push(b'\n');
    cut.extend(&bytes[6..]);
    assert!(cut.starts_with(b":3 0 8\n4 0 7"));
    assert_eq!(decode_all(&cut), vec![Ok(Frame::Pieces(record))]);
    // A bare LF after every 64th byte from the ':', as all of cer2nut's records have.
    let mut wrapped = Vec::new();
    for chunk in bytes[..bytes.len() - 2].chunks(64) {
        wrapped.extend(chunk);
        wrapped.push(b'\n');
    }
    wrapped.extend(b"\r\n");
    assert_eq!(decode_all(&wrapped), vec![Ok(Frame::Pieces(record))]);
}

#[test]
fn junk_before_the_colon_is_dropped() {
    let record = setup(false, true);
    let mut bytes = b"xxxx 12 9\x01\xff".to_vec();
    bytes.extend(Frame::Pieces(record).to_bytes());
    assert_eq!(
        decode_all(&bytes),
        vec![
            Err(DecodeWarning::Dropped {
                detail: "11 byte(s) before a record's ':'".into(),
                skipped: 11
            }),
            Ok(Frame::Pieces(record))
        ]
    );
}

#[test]
fn line_ends_between_records_are_no_warning() {
    let record = setup(false, false);
    let mut bytes = b"\r\n\r\n".to_vec();
    bytes.extend(Frame::Pieces(record).to_bytes());
    bytes.extend(b"\0\r\n");
    bytes.extend(Frame::Pieces(record).to_bytes());
    assert_eq!(
        decode_all(&bytes),
        vec![Ok(Frame::Pieces(record)), Ok(Frame::Pieces(record))]
    );
}

#[test]
fn record_split_at_every_point() {
    let record = setup(true, false);
    let bytes = Frame::Pieces(record).to_bytes();
    for at in 0..=bytes.len() {
        let mut r = FrameReader::with_wire(Certabo);
        r.push(&bytes[..at]);
        let mut got = drain(&mut r);
        r.push(&bytes[at..]);
        got.extend(drain(&mut r));
        assert_eq!(got, vec![Ok(Frame::Pieces(record))], "split at {at}");
    }
}

#[test]
fn short_and_long_records_dropped_next_survives() {
    let record = setup(true, true);
    let good = Frame::Pieces(record).to_bytes();
    // 319 numbers: the last one gone.
    let text = String::from_utf8(good.clone()).unwrap();
    let short = text.trim_end().rsplit_once(' ').unwrap().0.to_string() + " \r\n";
    // 321 numbers.
    let long = text.trim_end().to_string() + " 9 \r\n";
    let mut bytes = short.clone().into_bytes();
    bytes.extend(long.as_bytes());
    bytes.extend(&good);
    let got = decode_all(&bytes);
    assert_eq!(
        got,
        vec![
            Err(DecodeWarning::Dropped {
                detail: "record of 319 numbers, not 320 (or 8 from a Sentio)".into(),
                skipped: short.len() - 1
            }),
            Err(DecodeWarning::Dropped {
                detail: "record of 321 numbers, not 320 (or 8 from a Sentio)".into(),
                skipped: long.len() - 1 + 1
            }),
            Ok(Frame::Pieces(record))
        ]
    );
}

#[test]
fn record_cut_by_the_next_colon_is_dropped() {
    let record = setup(false, false);
    let good = Frame::Pieces(record).to_bytes();
    let mut bytes = good[..200].to_vec();
    bytes.extend(&good);
    let got = decode_all(&bytes);
    assert_eq!(
        got,
        vec![
            Err(DecodeWarning::Dropped {
                detail: "record of 200 byte(s) cut short by the next ':'".into(),
                skipped: 200
            }),
            Ok(Frame::Pieces(record))
        ]
    );
}

#[test]
fn out_of_range_and_foreign_bytes_drop_the_record() {
    assert_eq!(
        decode_body(b"1 256 3"),
        Err(RecordError::OutOfRange {
            index: 1,
            value: 256
        })
    );
    assert_eq!(
        decode_body(b"1 2x 3"),
        Err(RecordError::UnexpectedByte {
            byte: b'x',
            offset: 4
        })
    );
    assert_eq!(
        decode_body(b"99999999999999"),
        Err(RecordError::OutOfRange {
            index: 0,
            value: u32::MAX
        })
    );
    // Leading zeros and doubled spaces are numbers all the same.
    assert_eq!(
        decode_body(b"255  000 0 0 0 0 255 007 "),
        Ok(Frame::Occupancy(Occupancy([255, 0, 0, 0, 0, 0, 255, 7])))
    );
}

#[test]
fn record_without_end_is_dropped_and_buffer_stays_bounded() {
    let mut r = FrameReader::with_wire(Certabo);
    let mut got = Vec::new();
    r.push(b":");
    for _ in 0..2000 {
        r.push(b"12 ");
        got.extend(drain(&mut r));
        assert!(r.buffered() < MAX_PENDING);
    }
    assert!(matches!(
        got.first(),
        Some(Err(DecodeWarning::Dropped { skipped, .. })) if *skipped == 1 + MAX_RECORD_BODY
    ));
    // Line ends alone: dropped in runs of MAX_FILLER.
    let mut r = FrameReader::with_wire(Certabo);
    r.push(&[b'\n'; 3 * MAX_FILLER + 5]);
    assert_eq!(warnings(&drain(&mut r)).len(), 3);
    assert_eq!(r.buffered(), 5);
}

#[test]
fn led_replies_and_sentio_records() {
    let bytes = b":255 255 0 0 0 0 255 254\nL\r\nD\r\n:1 2 3 4 5 6 7 8 \r\n";
    assert_eq!(
        decode_all(bytes),
        vec![
            Ok(Frame::Occupancy(Occupancy([
                255, 255, 0, 0, 0, 0, 255, 254
            ]))),
            Ok(Frame::LedAck(LedAck::L)),
            Ok(Frame::LedAck(LedAck::D)),
            Ok(Frame::Occupancy(Occupancy([1, 2, 3, 4, 5, 6, 7, 8]))),
        ]
    );
    // A letter that is not a reply is junk, up to the next frame start.
    assert_eq!(
        decode_all(b"Lx:1 2 3 4 5 6 7 8\r"),
        vec![
            Err(DecodeWarning::Dropped {
                detail: "2 byte(s) before a record's ':'".into(),
                skipped: 2
            }),
            Ok(Frame::Occupancy(Occupancy([1, 2, 3, 4, 5, 6, 7, 8]))),
        ]
    );
    for f in [
        Frame::LedAck(LedAck::L),
        Frame::LedAck(LedAck::D),
        Frame::Occupancy(Occupancy([9, 8, 7, 6, 5, 4, 3, 2])),
    ] {
        assert_eq!(decode_all(&f.to_bytes()), vec![Ok(f)]);
    }
}

// ---- Calibration ----

#[test]
fn calibration_from_start_setup_with_extra_queens() {
    let cal = Calibration::from_setup(&setup(true, true)).unwrap();
    assert_eq!(cal.len(), 34);
    assert_eq!(cal.piece(chip(43)), Some(Color::White.queen()));
    assert_eq!(cal.piece(chip(19)), Some(Color::Black.queen()));
    assert_eq!(cal.piece(chip(59)), Some(Color::White.queen()));
    assert_eq!(cal.piece(chip(3)), Some(Color::Black.queen()));
    assert_eq!(cal.piece(chip(0)), Some(Color::Black.rook()));
    assert_eq!(cal.piece(chip(60)), Some(Color::White.king()));
    assert_eq!(cal.piece(chip(8)), Some(Color::Black.pawn()));

    // The setup itself reads as the start position plus the two queens.
    let reading = cal.reading(&setup(true, true));
    let mut want = Board::new();
    want.set_piece_at(Square::D3, Color::White.queen());
    want.set_piece_at(Square::D6, Color::Black.queen());
    for (i, sq) in to_square_order(&reading).iter().enumerate() {
        assert_eq!(sq.piece(), want.piece_at(Square::new(i as u32)));
    }

    // Later: white's extra queen on e4 (a promotion), a stray id, a blank id.
    let mut record = setup(false, false);
    record.0[board_index(Square::E4)] = chip(43);
    record.0[board_index(Square::F5)] = ChipId([118, 144, 181, 62, 197]);
    record.0[board_index(Square::G5)] = ChipId([201, 0, 0, 0, 0]);
    let reading = cal.reading(&record);
    assert_eq!(
        reading[board_index(Square::E4)],
        SquareContent::Piece(Color::White.queen())
    );
    assert_eq!(
        cal.reading_at(&record, Square::F5),
        SquareContent::Unknown(ChipId([118, 144, 181, 62, 197]))
    );
    assert_eq!(cal.reading_at(&record, Square::G5), SquareContent::Empty);
    assert_eq!(cal.reading_at(&record, Square::D3), SquareContent::Empty);
}

#[test]
fn calibration_without_extra_queens_and_with_stray_ids() {
    let mut record = setup(false, false);
    // Stray ids off the setup squares are not looked at.
    record.0[board_index(Square::A6)] = ChipId([118, 144, 181, 62, 197]);
    let cal = Calibration::from_setup(&record).unwrap();
    assert_eq!(cal.len(), 32);
    assert_eq!(cal.piece(ChipId([118, 144, 181, 62, 197])), None);
}

#[test]
fn calibration_errors_name_every_bad_square() {
    let mut record = setup(true, true);
    record.0[board_index(Square::E2)] = ChipId::EMPTY;
    record.0[board_index(Square::F7)] = ChipId([0, 0, 56, 0, 0]);
    record.0[board_index(Square::B2)] = record.0[board_index(Square::A2)];
    record.0[board_index(Square::D3)] = record.0[board_index(Square::H8)];
    let Err(CalibrationError::Setup(p)) = Calibration::from_setup(&record) else {
        panic!("calibrated a bad setup")
    };
    assert_eq!(p.empty, vec![Square::F7, Square::E2]);
    assert_eq!(
        p.duplicates,
        vec![
            (chip(7), Square::H8, Square::D3),
            (chip(48), Square::A2, Square::B2)
        ]
    );
    assert_eq!(
        CalibrationError::Setup(p).to_string(),
        "the pieces are not in the calibration setup: no piece on f7, e2; h8 and d3 report the \
         same chip 3 0 84 7 7; a2 and b2 report the same chip 3 0 84 48 7"
    );
}

#[test]
fn calibration_from_several_records_takes_the_steady_ids() {
    let stray = |k: u8| {
        let mut r = setup(true, true);
        r.0[board_index(Square::C5)] = ChipId([k, 1, 2, 3, 4]);
        r.0[board_index(Square::E2)] = ChipId([k, 9, 9, 9, 9]);
        r
    };
    // e2 differs in every record: no steady id there.
    let records = [stray(1), stray(2), stray(3)];
    assert_eq!(
        Calibration::from_setups(&records),
        Err(CalibrationError::Setup(SetupProblems {
            unsteady: vec![Square::E2],
            ..Default::default()
        }))
    );
    let records = [setup(true, true), stray(1), setup(true, true)];
    assert_eq!(
        Calibration::from_setups(&records),
        Calibration::from_setup(&setup(true, true))
    );
}

#[test]
fn calibration_text_and_serde_round_trip() {
    let cal = Calibration::from_setup(&setup(true, true)).unwrap();
    let text = cal.to_text();
    assert!(text.starts_with("certabo-calibration-1 r0300540007 n0300540107 "));
    assert_eq!(text.split(' ').count(), 35);
    assert_eq!(Calibration::from_text(&text), Ok(cal.clone()));
    assert_eq!(text.parse::<Calibration>(), Ok(cal.clone()));
    let json = serde_json::to_string(&cal).unwrap();
    assert_eq!(json, format!("\"{text}\""));
    assert_eq!(serde_json::from_str::<Calibration>(&json).unwrap(), cal);
    assert_eq!(
        Calibration::from_text("certabo-calibration-1"),
        Ok(Calibration::default())
    );
    for bad in [
        "",
        "calibration r0300540007",
        "certabo-calibration-1 x0300540007",
        "certabo-calibration-1 r03005400",
        "certabo-calibration-1 r03005400zz",
    ] {
        assert!(
            matches!(Calibration::from_text(bad), Err(CalibrationError::Text(_))),
            "{bad}"
        );
    }
    assert!(matches!(
        Calibration::from_text("certabo-calibration-1 r0300540007 Q0300540007"),
        Err(CalibrationError::Conflict {
            known: 'r',
            new: 'Q',
            ..
        })
    ));
}

#[test]
fn calibrations_merge() {
    let mut cal = Calibration::from_setup(&setup(true, true)).unwrap();
    // A second calibration with another pair of extra queens.
    let mut second = setup(false, false);
    second.0[board_index(Square::D3)] = ChipId([3, 0, 85, 1, 1]);
    second.0[board_index(Square::D6)] = ChipId([3, 0, 85, 1, 2]);
    let second = Calibration::from_setup(&second).unwrap();
    cal.merge(&second).unwrap();
    assert_eq!(cal.len(), 36);
    assert_eq!(
        cal.piece(ChipId([3, 0, 85, 1, 1])),
        Some(Color::White.queen())
    );
    // A chip moved to another piece's square: conflict, nothing changed.
    let mut swapped = setup(false, false);
    swapped
        .0
        .swap(board_index(Square::A1), board_index(Square::B1));
    let swapped = Calibration::from_setup(&swapped).unwrap();
    let before = cal.clone();
    assert!(matches!(
        cal.merge(&swapped),
        Err(CalibrationError::Conflict { .. })
    ));
    assert_eq!(cal, before);
}

// ---- LEDs ----

#[test]
fn led_byte_0_is_rank_8_and_bit_0_the_a_file() {
    assert_eq!(
        LedCommand::from_squares([Square::A8]).to_bytes(),
        [0x01, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        LedCommand::from_squares([Square::H1]).to_bytes(),
        [0, 0, 0, 0, 0, 0, 0, 0x80]
    );
    // picochess tests/test_certabo_command.py: d2 d4 → 0000000008000800, e2 e4 → 0000000010001000.
    assert_eq!(
        LedCommand::from_squares([Square::D2, Square::D4]).to_bytes(),
        [0, 0, 0, 0, 0x08, 0, 0x08, 0]
    );
    assert_eq!(
        LedCommand::from_squares([Square::E2, Square::E4]).to_bytes(),
        [0, 0, 0, 0, 0x10, 0, 0x10, 0]
    );
    // cer2nut: the centre (d4 e4 d5 e5) and the calibration squares.
    assert_eq!(
        LedCommand::from_squares([Square::D4, Square::E4, Square::D5, Square::E5]).to_bytes(),
        [0, 0, 0, 0x18, 0x18, 0, 0, 0]
    );
    let cal_squares = Bitboard::from_rank(Rank::First)
        | Bitboard::from_rank(Rank::Second)
        | Bitboard::from_rank(Rank::Seventh)
        | Bitboard::from_rank(Rank::Eighth)
        | Bitboard::from_square(Square::D3)
        | Bitboard::from_square(Square::D6);
    assert_eq!(
        LedCommand::from_bitboard(cal_squares),
        LedCommand::CALIBRATION
    );
    assert_eq!(LedCommand::CALIBRATION.to_bitboard(), cal_squares);
    assert!(LedCommand::CALIBRATION.is_lit(Square::D6));
    assert!(!LedCommand::CALIBRATION.is_lit(Square::E6));
    assert_eq!(LedCommand::from_squares([]), LedCommand::OFF);
    assert_eq!(LedCommand::from_bitboard(Bitboard::FULL), LedCommand::ALL);
}

#[test]
fn rgb_command_matches_cer2nut() {
    // cer2nut RgbLedCommandTranslatorTest: brightness 0x40 in the blue byte; the offsets of the
    // non-zero bytes in the 247-byte command.
    let blue = [0, 0, 0x40];
    let lit = |c: &RgbLeds| -> Vec<usize> {
        let b = c.to_bytes();
        assert_eq!(b.len(), RGB_COMMAND_LEN);
        assert_eq!((&b[..2], &b[245..]), (&[0xff, 0x55][..], &[0x0d, 0x0a][..]));
        (2..245).filter(|&i| b[i] != 0).collect()
    };
    let e2e4 = RgbLeds::from_command(LedCommand([0, 0, 0, 0, 0x10, 0, 0x10, 0]), blue);
    assert_eq!(lit(&e2e4), vec![40, 43, 67, 70, 94, 97, 121, 124]);
    let centre = RgbLeds::from_command(LedCommand([0, 0, 0, 0x18, 0x18, 0, 0, 0]), blue);
    assert_eq!(
        lit(&centre),
        vec![94, 97, 100, 121, 124, 127, 148, 151, 154]
    );
    assert!(lit(&RgbLeds::off()).is_empty());
    // BearChess numbers the LEDs from 1 with h1's corner first: h1 = 1, 2, 10, 11.
    assert_eq!(corner_leds(Square::H1), [0, 1, 9, 10]);
    assert_eq!(corner_leds(Square::A8), [70, 71, 79, 80]);
}

#[test]
fn host_commands_decode() {
    let leds = LedCommand::from_squares([Square::E2, Square::E4]);
    let mut rgb = RgbLeds::off();
    rgb.light(Square::G7, [255, 0, 255]);
    let mut r = CommandReader::new(LedKind::Single);
    r.push(&leds.to_bytes()[..5]);
    assert_eq!(r.next_command(), None);
    r.push(&leds.to_bytes()[5..]);
    r.push(&LedCommand::OFF.to_bytes());
    assert_eq!(r.next_command(), Some(Ok(HostCommand::Leds(leds))));
    assert_eq!(
        r.next_command(),
        Some(Ok(HostCommand::Leds(LedCommand::OFF)))
    );
    assert_eq!(r.next_command(), None);

    let mut r = CommandReader::new(LedKind::Rgb);
    // cer2nut and BearChess may send the one-colour command first: dropped.
    r.push(&leds.to_bytes());
    r.push(&HostCommand::Rgb(rgb).to_bytes());
    let got: Vec<_> = std::iter::from_fn(|| r.next_command()).collect();
    assert!(matches!(got[..], [.., Ok(HostCommand::Rgb(c))] if c == rgb));
    assert_eq!(r.buffered(), 0);
}

// ---- Real records: cer2nut's tests (fixtures/certabo/README.md) ----

/// The chip id on a8 in all of cer2nut's records.
const A8: ChipId = ChipId([3, 0, 84, 252, 153]);

#[test]
fn cer2nut_one_record() {
    let got = decode_all(&fixture("parser-one-record.txt"));
    let [Ok(Frame::Pieces(r))] = got[..] else {
        panic!("{got:?}")
    };
    assert_eq!(r.chip(Square::A8), A8);
    assert_eq!(r.chip(Square::H1), ChipId([3, 0, 84, 252, 15]));
}

#[test]
fn cer2nut_invalid_record() {
    let got = decode_all(&fixture("parser-invalid.txt"));
    assert!(pieces(&got).is_empty());
    assert!(matches!(
        &got[..],
        [Err(DecodeWarning::Dropped { detail, .. })] if detail.contains("0x58")
    ));
}

#[test]
fn cer2nut_two_records_and_a_reply() {
    let bytes = fixture("parser-two-records.txt");
    let mut r = FrameReader::with_wire(Certabo);
    r.push(&bytes);
    let got = drain(&mut r);
    // cer2nut parses both; the second lacks its line end, which we wait for.
    assert!(matches!(
        got[..],
        [Ok(Frame::Pieces(_)), Ok(Frame::LedAck(LedAck::L))]
    ));
    r.push(b"\r\n");
    let more = drain(&mut r);
    let [Ok(Frame::Pieces(second))] = more[..] else {
        panic!("{more:?}")
    };
    assert_ne!(Ok(Frame::Pieces(second)), got[0]);
}

#[test]
fn cer2nut_junk_in_front() {
    let got = decode_all(&fixture("parser-junk-in-front.txt"));
    let [
        Err(DecodeWarning::Dropped { skipped: 18, .. }),
        Ok(Frame::Pieces(r)),
    ] = &got[..]
    else {
        panic!("{got:?}")
    };
    // picochess's copy of this test checks the last square.
    assert_eq!(r.chip(Square::H1), ChipId([3, 0, 84, 252, 15]));
}

#[test]
fn cer2nut_record_in_two_parts() {
    let mut r = FrameReader::with_wire(Certabo);
    r.push(&fixture("parser-two-parts-1.txt"));
    assert_eq!(drain(&mut r), vec![]);
    r.push(&fixture("parser-two-parts-2.txt"));
    let got = drain(&mut r);
    let [Ok(Frame::Pieces(rec)), Ok(Frame::LedAck(LedAck::L))] = got[..] else {
        panic!("{got:?}")
    };
    // picochess's copy checks the last square: 3 0 84 252 170, its 170 cut as "17\n" + "0".
    assert_eq!(rec.chip(Square::H1), ChipId([3, 0, 84, 252, 170]));
}

#[test]
fn cer2nut_sentio() {
    let got = decode_all(&fixture("parser-sentio.txt"));
    assert_eq!(
        got,
        vec![Ok(Frame::Occupancy(Occupancy([
            255, 255, 0, 0, 0, 0, 255, 255
        ])))]
    );
    let got = decode_all(&fixture("parser-sentio-one-missing.txt"));
    let [Ok(Frame::Occupancy(o)), Ok(Frame::LedAck(LedAck::L))] = got[..] else {
        panic!("{got:?}")
    };
    let want = (Bitboard::from_rank(Rank::First)
        | Bitboard::from_rank(Rank::Second)
        | Bitboard::from_rank(Rank::Seventh)
        | Bitboard::from_rank(Rank::Eighth))
    .without(Square::H1);
    assert_eq!(o.to_bitboard(), want);
    let got = decode_all(&fixture("parser-sentio-rgb.txt"));
    assert!(matches!(
        got[..],
        [Ok(Frame::Occupancy(_)), Ok(Frame::LedAck(LedAck::D))]
    ));
}

/// cer2nut's calibrator tests feed records without their ':'; we give it back.
fn calibration_records(name: &str) -> Vec<Record> {
    let bytes = fixture(name);
    let text = String::from_utf8(bytes).unwrap();
    let lines: Vec<&str> = text.split_terminator("\r\n").collect();
    assert_eq!(lines.len(), 8);
    let mut with_colon = Vec::new();
    for line in &lines {
        with_colon.extend(format!(":{line}\r\n").into_bytes());
    }
    let got = decode_all(&with_colon);
    assert!(warnings(&got).is_empty(), "{got:?}");
    pieces(&got)
}

/// The pieces of a reading as a board FEN, and its unknown squares.
fn placement(reading: &[SquareContent; 64]) -> (String, Vec<Square>) {
    let mut board = Board::empty();
    let mut unknown = Vec::new();
    for (k, c) in reading.iter().enumerate() {
        match c {
            SquareContent::Piece(p) => board.set_piece_at(square_at(k), *p),
            SquareContent::Unknown(_) => unknown.push(square_at(k)),
            SquareContent::Empty => {}
        }
    }
    (board.board_fen().to_string(), unknown)
}

#[test]
fn cer2nut_calibration_records() {
    let a = calibration_records("calibration-a.txt");
    let b = calibration_records("calibration-b.txt");
    assert_eq!((a.len(), b.len()), (8, 8));
    // cer2nut: calibration completes on each set (its rule: each square's id in more than half
    // of at least 7 records). No extra queen stands on d3 or d6; both sets are the same board.
    let cal = Calibration::from_setups(&a).unwrap();
    assert_eq!(cal.len(), 32);
    assert_eq!(Calibration::from_setups(&b), Ok(cal.clone()));
    assert_eq!(cal.piece(A8), Some(Color::Black.rook()));
    assert_eq!(
        cal.piece(ChipId([3, 0, 84, 252, 15])),
        Some(Color::White.rook())
    );
    assert_eq!(
        cal.iter()
            .filter(|(_, p)| p.role == shakmaty::Role::Queen)
            .count(),
        2
    );
    // Every record alone shows the 32 pieces, but stray ids too: the first record of set A has
    // one on d3, which a calibration from that record alone takes for a white queen.
    for r in a.iter().chain(&b) {
        assert!(Calibration::from_setup(r).unwrap().len() >= 32);
    }
    let stray = ChipId([170, 11, 16, 170, 222]);
    assert_eq!(a[0].chip(Square::D3), stray);
    assert_eq!(
        Calibration::from_setup(&a[0]).unwrap().piece(stray),
        Some(Color::White.queen())
    );
    assert_eq!(
        cal.reading_at(&a[0], Square::D3),
        SquareContent::Unknown(stray)
    );
    let (fen, unknown) = placement(&cal.reading(&a[0]));
    assert_eq!(fen, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR");
    assert_eq!(unknown.len(), 12);
}

#[test]
fn cer2nut_records_read_with_its_calibration() {
    // The parser tests' records come from the board of the calibrator tests (same chip ids).
    let cal = Calibration::from_setups(&calibration_records("calibration-a.txt")).unwrap();
    let read = |name: &str| {
        let got = decode_all(&fixture(name));
        placement(&cal.reading(&pieces(&got)[0]))
    };
    let (fen, unknown) = read("parser-junk-in-front.txt");
    assert_eq!(fen, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR");
    assert_eq!(unknown.len(), 9);
    let (fen, unknown) = read("parser-one-record.txt");
    assert_eq!(fen, "r1bqkb1r/pppp1ppp/2n2n2/4p3/4P2P/8/PPPP1PP1/RNBQKBNR");
    assert_eq!(
        unknown,
        [
            Square::B8,
            Square::G8,
            Square::D6,
            Square::H6,
            Square::F5,
            Square::G5,
            Square::A4,
            Square::B4,
            Square::C4,
            Square::F4
        ]
    );
}

// ---- Properties ----

fn arb_chip() -> impl Strategy<Value = ChipId> {
    prop_oneof![Just(ChipId::EMPTY), any::<[u8; 5]>().prop_map(ChipId),]
}

fn arb_record() -> impl Strategy<Value = Record> {
    proptest::collection::vec(arb_chip(), 64).prop_map(|v| {
        let mut chips = [ChipId::EMPTY; 64];
        chips.copy_from_slice(&v);
        Record(chips)
    })
}

fn arb_frame() -> impl Strategy<Value = Frame> {
    prop_oneof![
        4 => arb_record().prop_map(Frame::Pieces),
        1 => any::<[u8; 8]>().prop_map(|b| Frame::Occupancy(Occupancy(b))),
        1 => prop_oneof![Just(LedAck::L), Just(LedAck::D)].prop_map(Frame::LedAck),
    ]
}

/// Noise that starts no frame.
fn quiet_noise() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        any::<u8>().prop_filter("no frame start", |b| !matches!(b, b':' | b'L' | b'D')),
        0..40,
    )
}

fn feed(bytes: &[u8], mut cuts: Vec<usize>) -> (Vec<Result<Frame, DecodeWarning>>, usize) {
    cuts.iter_mut().for_each(|c| *c %= bytes.len() + 1);
    cuts.sort_unstable();
    let mut r = FrameReader::with_wire(Certabo);
    let mut got = Vec::new();
    let mut from = 0;
    for c in cuts.into_iter().chain([bytes.len()]) {
        r.push(&bytes[from..c]);
        from = c;
        got.extend(drain(&mut r));
        assert!(r.buffered() < MAX_PENDING);
    }
    (got, r.buffered())
}

proptest! {
    #[test]
    fn frames_survive_splits_and_noise(
        items in proptest::collection::vec((quiet_noise(), arb_frame()), 1..6),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let mut bytes = Vec::new();
        for (noise, frame) in &items {
            bytes.extend(noise);
            bytes.extend(frame.to_bytes());
        }
        let (got, _) = feed(&bytes, cuts);
        let frames: Vec<Frame> = got.into_iter().filter_map(Result::ok).collect();
        prop_assert_eq!(frames, items.into_iter().map(|(_, f)| f).collect::<Vec<_>>());
    }

    #[test]
    fn records_survive_any_noise(
        items in proptest::collection::vec(
            (proptest::collection::vec(any::<u8>(), 0..40), arb_record()), 1..5),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let mut bytes = Vec::new();
        for (noise, record) in &items {
            bytes.extend(noise);
            bytes.extend(Frame::Pieces(*record).to_bytes());
        }
        let (got, _) = feed(&bytes, cuts);
        prop_assert_eq!(pieces(&got), items.into_iter().map(|(_, r)| r).collect::<Vec<_>>());
    }

    #[test]
    fn chunked_equals_whole(data in proptest::collection::vec(
        prop_oneof![Just(b':'), Just(b' '), Just(b'\n'), Just(b'\r'), Just(b'L'), b'0'..=b'9', any::<u8>()],
        0..600), cuts in proptest::collection::vec(any::<usize>(), 0..12)) {
        let whole = decode_all(&data);
        let (chunked, _) = feed(&data, cuts);
        let ok = |v: Vec<Result<Frame, DecodeWarning>>| v.into_iter().filter_map(Result::ok).collect::<Vec<_>>();
        prop_assert_eq!(ok(chunked), ok(whole));
    }

    #[test]
    fn calibration_text_round_trips(record in arb_record()) {
        if let Ok(cal) = Calibration::from_setup(&record) {
            prop_assert_eq!(Calibration::from_text(&cal.to_text()), Ok(cal));
        }
    }

    #[test]
    fn led_command_round_trips(bytes in any::<[u8; 8]>()) {
        let c = LedCommand(bytes);
        prop_assert_eq!(LedCommand::from_squares(c.to_bitboard()), c);
        for sq in Square::ALL {
            let i = board_index(sq);
            prop_assert_eq!(c.is_lit(sq), bytes[i / 8] & (1 << (i % 8)) != 0);
        }
    }
}
