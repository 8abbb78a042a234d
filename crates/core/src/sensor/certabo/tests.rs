//! The sensor on cer2nut's real records (`fixtures/certabo/`) and on records of our own.

use shakmaty::{Color, Square};

use super::*;
use crate::{
    game::chess::ChessReading,
    protocol::{FrameReader, certabo::square_at},
    sensor::Orientation,
};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../fixtures/certabo/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The records of a fixture; cer2nut's calibration records come without their ':'.
fn records(name: &str) -> Vec<Record> {
    let mut bytes = fixture(name);
    if name.starts_with("calibration") {
        let text = String::from_utf8(bytes).unwrap_or_default();
        bytes = text
            .split_terminator("\r\n")
            .flat_map(|line| format!(":{line}\r\n").into_bytes())
            .collect();
    }
    let mut r = FrameReader::with_wire(Certabo);
    r.push(&bytes);
    std::iter::from_fn(|| r.next_frame())
        .filter_map(|f| match f {
            Ok(Frame::Pieces(record)) => Some(record),
            _ => None,
        })
        .collect()
}

fn apply(sensor: &mut CertaboSensor, record: Record) -> Applied {
    CertaboBoard::apply(sensor, Frame::Pieces(record))
}

/// The pieces the sensor reads, as a board FEN (no square may be unknown).
fn fen(sensor: &CertaboSensor) -> String {
    let ChessReading(codes) = sensor.reading(Orientation::Normal);
    let mut board = shakmaty::Board::empty();
    for (sq, &c) in codes.iter().enumerate() {
        assert_ne!(c, code::UNKNOWN, "unknown on {}", Square::new(sq as u32));
        if let Some(p) = crate::game::chess::code_to_piece(c) {
            board.set_piece_at(Square::new(sq as u32), p);
        }
    }
    board.board_fen().to_string()
}

/// Our own chips: `3 0 85 i 9` for the piece first on board index `i`.
fn chip(i: usize) -> ChipId {
    ChipId([3, 0, 85, i as u8, 9])
}

/// The start position with our chips, and the extra queens if asked.
fn setup(queens: bool) -> Record {
    let start = shakmaty::Board::new();
    Record(std::array::from_fn(|i| {
        let sq = square_at(i);
        if start.piece_at(sq).is_some() || (queens && (sq == Square::D3 || sq == Square::D6)) {
            chip(i)
        } else {
            ChipId::EMPTY
        }
    }))
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";

#[test]
fn cer2nut_records_calibrate_the_sensor_and_read_as_the_positions_they_show() {
    let mut sensor = CertaboSensor::default();
    let a = records("calibration-a.txt");
    assert_eq!(a.len(), 8);
    // The first record alone teaches nothing: one record tells no stray from a chip (this one
    // has a stray on d3, which would be learnt as an extra white queen).
    assert!(matches!(apply(&mut sensor, a[0]), Applied::Nothing));
    assert!(CertaboBoard::learnt(&mut sensor).is_none());
    // The second, without it: the stray was not steady, the rest is learnt.
    assert!(matches!(apply(&mut sensor, a[1]), Applied::Board));
    let learnt = CertaboBoard::learnt(&mut sensor).expect("learnt at the second record");
    assert_eq!(learnt.what, "calibration");
    let calibration = Calibration::from_text(&learnt.text).expect("its text reads back");
    assert_eq!(calibration.len(), 32);
    assert_eq!(calibration.piece(a[0].chip(Square::D3)), None);
    assert_eq!(fen(&sensor), START);
    // Said once.
    for r in &a[2..] {
        apply(&mut sensor, *r);
        assert!(CertaboBoard::learnt(&mut sensor).is_none());
        assert_eq!(fen(&sensor), START, "strays read as empty squares");
    }
    // The other set of the same board: nothing changes for the tracker.
    for r in records("calibration-b.txt") {
        assert!(matches!(apply(&mut sensor, r), Applied::Nothing));
    }
    let e4 = records("parser-junk-in-front.txt")[0];
    assert!(matches!(apply(&mut sensor, e4), Applied::Board));
    assert_eq!(
        fen(&sensor),
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"
    );
    let later = records("parser-one-record.txt")[0];
    apply(&mut sensor, later);
    assert_eq!(
        fen(&sensor),
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/4P2P/8/PPPP1PP1/RNBQKBNR"
    );
    // The same record again: a real board never repeats a stray, so its ten stray ids now
    // read as pieces the board cannot name; a third time is nothing new.
    assert!(matches!(apply(&mut sensor, later), Applied::Board));
    let unknown = sensor
        .codes()
        .iter()
        .filter(|&&c| c == code::UNKNOWN)
        .count();
    assert_eq!(unknown, 10);
    assert!(matches!(apply(&mut sensor, later), Applied::Nothing));
}

#[test]
fn extra_queens_put_down_after_the_start_position_are_learnt() {
    let mut sensor = CertaboSensor::default();
    apply(&mut sensor, setup(false));
    apply(&mut sensor, setup(false));
    assert_eq!(
        CertaboBoard::learnt(&mut sensor).map(|l| !l.text.is_empty()),
        Some(true)
    );
    let mut white = setup(false);
    white.0[board_index(Square::D3)] = chip(43);
    apply(&mut sensor, white);
    assert!(
        CertaboBoard::learnt(&mut sensor).is_none(),
        "a stray until seen twice"
    );
    apply(&mut sensor, white);
    let learnt = CertaboBoard::learnt(&mut sensor).expect("the white queen");
    let calibration = Calibration::from_text(&learnt.text).unwrap_or_default();
    assert_eq!(calibration.len(), 33);
    assert_eq!(calibration.piece(chip(43)), Some(Color::White.queen()));
    assert_eq!(
        fen(&sensor),
        "rnbqkbnr/pppppppp/8/8/8/3Q4/PPPPPPPP/RNBQKBNR"
    );
    // Not beside anything but the start position: a game's unknown chip on d6 stays unknown.
    let mut game = setup(false);
    game.0
        .swap(board_index(Square::E2), board_index(Square::E4));
    game.0[board_index(Square::D6)] = chip(19);
    apply(&mut sensor, game);
    apply(&mut sensor, game);
    assert!(CertaboBoard::learnt(&mut sensor).is_none());
    assert_eq!(sensor.codes()[board_index(Square::D6)], code::UNKNOWN);
}

#[test]
fn nothing_is_reported_before_the_calibration_setup() {
    let mut sensor = CertaboSensor::default();
    let mut moved = setup(false);
    moved
        .0
        .swap(board_index(Square::E2), board_index(Square::E4));
    for _ in 0..3 {
        assert!(matches!(apply(&mut sensor, moved), Applied::Nothing));
    }
    assert!(!sensor.is_known());
    assert!(sensor.calibration().is_none());
    // A piece more than the setup, away from d3 and d6: not the setup either.
    let mut extra = setup(false);
    extra.0[board_index(Square::E5)] = chip(99);
    for _ in 0..3 {
        assert!(matches!(apply(&mut sensor, extra), Applied::Nothing));
    }
    // The setup with both extra queens, just put down: the start position's 32 chips (the
    // queens are new on their squares), then the queens beside it. 34 chips, read as they
    // stand.
    assert!(matches!(apply(&mut sensor, setup(true)), Applied::Board));
    let learnt = CertaboBoard::learnt(&mut sensor).expect("learnt");
    assert!(learnt.how.contains("no extra queen"), "{}", learnt.how);
    assert!(matches!(apply(&mut sensor, setup(true)), Applied::Board));
    let learnt = CertaboBoard::learnt(&mut sensor).expect("learnt");
    assert!(learnt.how.starts_with("34 chips"), "{}", learnt.how);
    // Both together, as a board already set up shows them.
    let mut at_once = CertaboSensor::default();
    apply(&mut at_once, setup(true));
    apply(&mut at_once, setup(true));
    let learnt = CertaboBoard::learnt(&mut at_once).expect("learnt");
    assert!(learnt.how.contains("d3 and d6"), "{}", learnt.how);
    let calibration = sensor.calibration().cloned().unwrap_or_default();
    assert_eq!(calibration.len(), 34);
    assert_eq!(
        calibration.piece(chip(board_index(Square::D6))),
        Some(Color::Black.queen())
    );
    assert_eq!(
        fen(&sensor),
        "rnbqkbnr/pppppppp/3q4/8/8/3Q4/PPPPPPPP/RNBQKBNR"
    );
    // The queens taken off: the start position.
    assert!(matches!(apply(&mut sensor, setup(false)), Applied::Board));
    let start = ChessGame::reading(&ChessGame::start());
    assert_eq!(sensor.reading(Orientation::Normal), start);
    assert!(matches!(apply(&mut sensor, setup(false)), Applied::Nothing));
}

#[test]
fn a_chip_the_calibration_does_not_know_is_neither_empty_nor_a_piece() {
    let mut sensor = CertaboSensor::default();
    apply(&mut sensor, setup(false));
    apply(&mut sensor, setup(false));
    assert!(sensor.calibration().is_some());
    // e2-e4 played with a pawn whose chip was never learnt (a piece from another set).
    let mut stranger = setup(false);
    stranger.0[board_index(Square::E2)] = ChipId::EMPTY;
    stranger.0[board_index(Square::E4)] = ChipId([9, 9, 9, 9, 9]);
    // First seen: a stray for all the sensor knows, so e4 reads empty.
    assert!(matches!(apply(&mut sensor, stranger), Applied::Board));
    let lifted = sensor.reading(Orientation::Normal);
    assert_eq!(lifted.0[Square::E4 as usize], code::EMPTY);
    // Seen again on its square: a piece the board cannot name.
    assert!(matches!(apply(&mut sensor, stranger), Applied::Board));
    let unknown = sensor.reading(Orientation::Normal);
    assert_eq!(unknown.0[Square::E4 as usize], code::UNKNOWN);
    // It fits neither the board with e4 empty nor the board after 1. e4, by value or by key.
    let mut after_e4 = ChessGame::reading(&ChessGame::start());
    after_e4.0[Square::E2 as usize] = code::EMPTY;
    after_e4.0[Square::E4 as usize] = code::WPAWN;
    for other in [lifted, after_e4] {
        assert_ne!(unknown, other);
        assert_ne!(
            ChessGame::reading_key(&unknown),
            ChessGame::reading_key(&other)
        );
    }
    assert_eq!(
        sensor.key(Orientation::Normal),
        ChessGame::reading_key(&unknown)
    );
    // The known pawn put there instead: 1. e4.
    let mut known = setup(false);
    known
        .0
        .swap(board_index(Square::E2), board_index(Square::E4));
    apply(&mut sensor, known);
    assert_eq!(sensor.reading(Orientation::Normal), after_e4);
}

#[test]
fn a_calibration_restored_reads_at_once_and_relearn_forgets_it() {
    let mut first = CertaboSensor::default();
    apply(&mut first, setup(true));
    apply(&mut first, setup(true));
    let text = CertaboBoard::learnt(&mut first)
        .map(|l| l.text)
        .unwrap_or_default();

    let mut sensor = CertaboSensor::default();
    assert!(CertaboBoard::restore(&mut sensor, "not a calibration").is_err());
    assert!(CertaboBoard::restore(&mut sensor, &text).is_ok());
    // No second calibration: the first record reads, with no setup shown.
    let mut moved = setup(false);
    moved
        .0
        .swap(board_index(Square::G1), board_index(Square::F3));
    assert!(matches!(apply(&mut sensor, moved), Applied::Board));
    assert_eq!(
        fen(&sensor),
        "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R"
    );
    assert!(CertaboBoard::learnt(&mut sensor).is_none());
    // A power cycle (the board heard again) keeps the calibration.
    CertaboBoard::reset(&mut sensor);
    assert!(!sensor.is_known());
    assert!(matches!(apply(&mut sensor, moved), Applied::Board));

    // Relearn: nothing until the setup, then the new pieces' chips.
    assert!(CertaboBoard::relearn(&mut sensor));
    assert!(matches!(apply(&mut sensor, moved), Applied::Nothing));
    let mut other_set = setup(false);
    for c in other_set.0.iter_mut().filter(|c| !c.is_blank()) {
        c.0[0] = 4;
    }
    apply(&mut sensor, other_set);
    assert!(matches!(apply(&mut sensor, other_set), Applied::Board));
    assert_eq!(fen(&sensor), START);
    let relearnt = CertaboBoard::learnt(&mut sensor).expect("learnt again");
    assert_ne!(relearnt.text, text);
    // The old set's chips are unknown now.
    assert!(
        sensor
            .calibration()
            .is_some_and(|c| c.piece(chip(0)).is_none())
    );
}

#[test]
fn line_and_kind() {
    let Link::Serial(line) = CertaboBoard::LINK else {
        panic!("a Certabo board is on a serial line");
    };
    assert_eq!(line.to_string(), "38400 8N1");
    assert_eq!(BoardKind::Certabo.vendor(), "Certabo / Tabutronic");
    assert!(!BoardKind::Certabo.reports_clock());
    assert_eq!(CertaboBoard::startup(), [0u8; 8]);
}

#[test]
fn cer2nut_records_through_the_pipeline_record_the_move_they_show() {
    use crate::{
        arbiter::LawsSetup,
        pipeline::Pipeline,
        protocol::Direction,
        tracker::{Tracker, TrackerEvent},
    };
    let laws = LawsSetup::default();
    let mut p = Pipeline::<CertaboBoard>::new(
        Tracker::new(CertaboBoard::settings(&laws)),
        CertaboBoard::judge(&laws),
    );
    // Both calibration sets (the start position, with their strays), then 1. e4 as a real
    // board read it (junk before its ':', nine strays), a record every 350 ms.
    let mut t = 0;
    let mut feed = |p: &mut Pipeline<CertaboBoard>, bytes: &[u8]| {
        p.feed(t, Direction::FromBoard, bytes);
        t += 350;
    };
    for r in records("calibration-a.txt")
        .into_iter()
        .chain(records("calibration-b.txt"))
    {
        feed(&mut p, &Frame::Pieces(r).to_bytes());
    }
    feed(&mut p, &fixture("parser-junk-in-front.txt"));
    p.tick(t + 5_000);
    p.flush(t + 5_000);
    let learnt = p
        .take_notices()
        .into_iter()
        .filter(|n| matches!(n, Notice::Learnt(_)))
        .count();
    assert_eq!(learnt, 1);
    let moves: Vec<String> = p
        .take_events()
        .into_iter()
        .filter_map(|e| match e {
            TrackerEvent::Move(m) => m.uci,
            _ => None,
        })
        .collect();
    assert_eq!(moves, ["e2e4"]);
}
