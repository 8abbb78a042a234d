//! Tracker tests on hand-made sensor sequences (the real captures and the emulated corpus are
//! exercised in `tests/`).

use shakmaty::Square;

use super::*;
use crate::sensor::dgt::DgtFrames as _;
use crate::{
    game::{Outcome, chess::ChessGame},
    phrase::Arg,
    protocol::dgt::{BoardDump, piece},
    sensor::dgt::ChessSensor,
};

/// A board on the table, driven square by square, feeding a tracker.
struct Table {
    board: ChessSensor,
    tracker: Tracker<ChessGame>,
    t: Millis,
    events: Vec<TrackerEvent>,
    rotated: bool,
}

/// A running clock showing `left_ms` and `right_ms`.
fn clock(left_ms: u64, right_ms: u64, lever_right_high: bool) -> ClockReading {
    ClockReading {
        left_ms,
        right_ms,
        running: true,
        lever_right_high,
        left_flag: false,
        right_flag: false,
    }
}

fn start_codes() -> [u8; 64] {
    let mut d = [0u8; 64];
    d[..8].copy_from_slice(&[8, 9, 10, 12, 11, 10, 9, 8]);
    d[8..16].fill(7);
    d[48..56].fill(1);
    d[56..].copy_from_slice(&[2, 3, 4, 6, 5, 4, 3, 2]);
    d
}

impl Table {
    fn new(rotated: bool) -> Table {
        let mut codes = start_codes();
        if rotated {
            codes.reverse();
        }
        let mut t = Table {
            board: ChessSensor::default(),
            tracker: Tracker::new(TrackerSettings::default()),
            t: 0,
            events: Vec::new(),
            rotated,
        };
        t.board.apply_dump(&BoardDump(codes));
        t.tracker.observe(0, &t.board, &mut t.events);
        t
    }

    fn index(&self, sq: &str) -> u8 {
        let sq: Square = sq.parse().unwrap();
        let i = (7 - sq.rank() as u8) * 8 + sq.file() as u8;
        if self.rotated { i ^ 63 } else { i }
    }

    /// Sets a square after `dt` ms.
    fn set(&mut self, dt: Millis, sq: &str, code: u8) -> &mut Self {
        self.t += dt;
        let i = self.index(sq);
        if self.board.apply_field(i, code) {
            self.tracker.observe(self.t, &self.board, &mut self.events);
        }
        self
    }

    fn wait(&mut self, dt: Millis) -> &mut Self {
        self.t += dt;
        self.tracker.tick(self.t, &mut self.events);
        self
    }

    /// The clock read after `dt` ms.
    fn read_clock(&mut self, dt: Millis, reading: ClockReading) -> &mut Self {
        self.t += dt;
        self.tracker.clock(self.t, reading, &mut self.events);
        self
    }

    fn moves(&self) -> Vec<String> {
        let mut moves: Vec<String> = Vec::new();
        for e in &self.events {
            match e {
                TrackerEvent::Move(m) => moves.push(m.notation.clone()),
                TrackerEvent::Revision { new, .. } => {
                    moves[new.ply as usize - 1] = new.notation.clone();
                }
                TrackerEvent::Takeback { to_ply, .. } => moves.truncate(*to_ply as usize),
                TrackerEvent::GameStarted { .. } => moves.clear(),
                _ => {}
            }
        }
        moves
    }

    fn kinds(&self) -> Vec<&'static str> {
        self.events.iter().map(|e| e.kind()).collect()
    }

    /// Plays a simple move by lifting then placing.
    fn mv(&mut self, from: &str, to: &str, code: u8) -> &mut Self {
        self.set(300, from, 0).set(300, to, code)
    }

    /// Plays `moves`, each left to settle for a second.
    fn play(&mut self, moves: &[(&str, &str, u8)]) -> &mut Self {
        for &(from, to, code) in moves {
            self.mv(from, to, code).wait(1000);
        }
        self
    }

    /// The moves as the tracker emitted them (what a store would hold).
    fn recorded(&self) -> Vec<RecordedMove> {
        self.events
            .iter()
            .filter_map(|e| match e {
                TrackerEvent::Move(m) => Some(m.clone()),
                _ => None,
            })
            .collect()
    }

    /// From the start, with a clock at 5 minutes each (White's on the left): `moves`, each
    /// pressed 20 ms after it with two seconds off the mover's clock. Returns the clocks (left,
    /// right) after the last press.
    fn play_pressed(&mut self, moves: &[(&str, &str, u8)]) -> (u64, u64) {
        let (mut left, mut right) = (300_000, 300_000);
        self.tracker
            .clock(self.t, clock(left, right, false), &mut self.events);
        for (n, &(from, to, code)) in moves.iter().enumerate() {
            self.mv(from, to, code);
            let white = n % 2 == 0;
            if white {
                left -= 2_000;
            } else {
                right -= 2_000;
            }
            self.t += 20;
            self.tracker
                .clock(self.t, clock(left, right, white), &mut self.events);
            self.wait(1000);
        }
        (left, right)
    }
}

/// 1. e4 e5 2. Nf3.
const E4_E5_NF3: [(&str, &str, u8); 3] = [
    ("e2", "e4", piece::WPAWN),
    ("e7", "e5", piece::BPAWN),
    ("g1", "f3", piece::WKNIGHT),
];

#[test]
fn records_moves_after_settling() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN);
    assert_eq!(t.moves(), Vec::<String>::new(), "not settled yet");
    t.wait(1000).mv("e7", "e5", piece::BPAWN).wait(1000);
    assert_eq!(t.moves(), ["e4", "e5"]);
    assert_eq!(t.kinds(), ["game_started", "move", "move"]);
}

#[test]
fn slide_through_legal_squares_is_one_move() {
    let mut t = Table::new(false);
    t.mv("g1", "f3", piece::WKNIGHT).wait(1000);
    t.mv("g8", "f6", piece::BKNIGHT).wait(1000);
    t.mv("g2", "g3", piece::WPAWN).wait(1000);
    t.mv("d7", "d6", piece::BPAWN).wait(1000);
    t.mv("f1", "h3", piece::WBISHOP).wait(1000);
    t.mv("c8", "d7", piece::BBISHOP).wait(1000);
    // The rook slides h1-g1 (legal) on its way... to f1? No: O-O is not a slide; do Rg1 via f1.
    t.set(100, "h1", 0).set(100, "g1", piece::WROOK);
    t.set(100, "g1", 0).set(100, "f1", piece::WROOK).wait(1000);
    assert_eq!(t.moves(), ["Nf3", "Nf6", "g3", "d6", "Bh3", "Bd7", "Rf1"]);
    assert!(!t.kinds().contains(&"revised_move"));
}

#[test]
fn rook_first_castling_is_revised_when_slow() {
    let mut t = Table::new(false);
    t.play(&[
        ("e2", "e4", piece::WPAWN),
        ("e7", "e5", piece::BPAWN),
        ("g1", "f3", piece::WKNIGHT),
        ("b8", "c6", piece::BKNIGHT),
        ("f1", "c4", piece::WBISHOP),
        ("g8", "f6", piece::BKNIGHT),
    ]);
    // Rook first, a long pause, then the king.
    t.set(200, "h1", 0).set(200, "f1", piece::WROOK).wait(1000);
    assert_eq!(t.moves().last().unwrap(), "Rf1");
    t.set(200, "e1", 0).set(200, "g1", piece::WKING).wait(1000);
    assert_eq!(t.moves().last().unwrap(), "O-O");
    assert_eq!(t.moves().len(), 7);
    let revision = t.events.iter().find_map(|e| match e {
        TrackerEvent::Revision { old, new, .. } => Some((old, new)),
        _ => None,
    });
    let (old, new) = revision.expect("a revision");
    assert_eq!((old.ply, old.notation.as_str()), (7, "Rf1"));
    assert_eq!(old.uci.as_deref(), Some("h1f1"));
    assert!(
        old.position
            .starts_with("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQKR2 b")
    );
    assert_eq!((new.ply, new.notation.as_str()), (7, "O-O"));
    assert!(old.at_ms < new.at_ms);
}

#[test]
fn king_first_castling_and_captures() {
    let mut t = Table::new(false);
    t.play(&[("e2", "e4", piece::WPAWN), ("d7", "d5", piece::BPAWN)]);
    // exd5 with the mover set on top of the victim.
    t.set(200, "e4", 0).set(200, "d5", piece::WPAWN).wait(1000);
    // Qxd5 with the victim lifted first.
    t.set(200, "d5", 0)
        .set(200, "d8", 0)
        .set(200, "d5", piece::BQUEEN)
        .wait(1000);
    assert_eq!(t.moves(), ["e4", "d5", "exd5", "Qxd5"]);
}

#[test]
fn takeback_of_several_plies() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    t.mv("e7", "e5", piece::BPAWN).wait(1000);
    t.mv("g1", "f3", piece::WKNIGHT).wait(1000);
    // Take back Nf3 and e5.
    t.mv("f3", "g1", piece::WKNIGHT)
        .mv("e5", "e7", piece::BPAWN)
        .wait(1000);
    assert_eq!(t.moves(), ["e4"]);
    assert!(t.kinds().contains(&"takeback"));
    t.mv("c7", "c5", piece::BPAWN).wait(1000);
    assert_eq!(t.moves(), ["e4", "c5"]);
}

#[test]
fn repeated_start_position_by_knights_is_not_a_new_game() {
    let mut t = Table::new(false);
    t.mv("g1", "f3", piece::WKNIGHT).wait(1000);
    t.mv("g8", "f6", piece::BKNIGHT).wait(1000);
    t.mv("f3", "g1", piece::WKNIGHT).wait(1000);
    t.mv("f6", "g8", piece::BKNIGHT).wait(1000);
    t.mv("g1", "f3", piece::WKNIGHT).wait(1000);
    assert_eq!(t.moves(), ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3"]);
    assert_eq!(
        t.kinds().iter().filter(|k| **k == "game_started").count(),
        1
    );
}

#[test]
fn rotated_board_is_read_turned_round() {
    let mut t = Table::new(true);
    assert_eq!(t.tracker.orientation(), Some(Orientation::Rotated));
    t.mv("d2", "d4", piece::WPAWN).wait(1000);
    t.mv("g8", "f6", piece::BKNIGHT).wait(1000);
    assert_eq!(t.moves(), ["d4", "Nf6"]);
}

#[test]
fn quick_reply_before_settling_gives_two_plies() {
    let mut t = Table::new(false);
    // White's pawn lands after Black has already lifted a piece (scanning order).
    t.set(100, "e2", 0)
        .set(30, "e7", 0)
        .set(30, "e4", piece::WPAWN);
    t.set(30, "e5", piece::BPAWN).wait(1000);
    assert_eq!(t.moves(), ["e4", "e5"]);
    // Fully out of order: both lifts seen before both placements.
    t.set(100, "g1", 0)
        .set(10, "b8", 0)
        .set(10, "c6", piece::BKNIGHT);
    t.set(10, "f3", piece::WKNIGHT).wait(1000);
    assert_eq!(t.moves(), ["e4", "e5", "Nf3", "Nc6"]);
}

#[test]
fn result_gesture_is_not_a_move() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    t.mv("e7", "e5", piece::BPAWN).wait(1000);
    t.set(100, "e1", 0)
        .set(100, "e8", 0)
        .set(100, "d5", piece::BKING);
    t.set(100, "e4", 0).set(100, "e4", piece::WKING).wait(1000);
    assert_eq!(t.moves(), ["e4", "e5"]);
    assert!(t.events.iter().any(|e| matches!(
        e,
        TrackerEvent::ResultGesture {
            proposed: Outcome::WhiteWins,
            after_ply: 2,
            ..
        }
    )));
}

#[test]
fn a_result_piece_on_the_board_proposes_a_result() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    // The "black wins" piece set on an empty square: one place differs.
    t.set(100, "d5", piece::PIECE3_BLACK_WIN).wait(1000);
    assert_eq!(t.moves(), ["e4"]);
    assert!(t.events.iter().any(|e| matches!(
        e,
        TrackerEvent::ResultGesture {
            proposed: Outcome::BlackWins,
            after_ply: 1,
            ..
        }
    )));
}

fn irregularities(t: &Table) -> Vec<(IrregularityKind, u32, bool)> {
    t.events
        .iter()
        .filter_map(|e| match e {
            TrackerEvent::Irregularity { kind, ply, id, .. } => Some((
                *kind,
                *ply,
                t.events
                    .iter()
                    .any(|r| matches!(r, TrackerEvent::Resolved { id: r_id, .. } if r_id == id)),
            )),
            _ => None,
        })
        .collect()
}

#[test]
fn a_knocked_piece_is_displaced_after_the_settle_window_and_resolved_when_put_back() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    // A white knight knocked from b1 to b3 while Black is to move: no move explains it.
    t.set(100, "b1", 0).set(10, "b3", piece::WKNIGHT);
    t.wait(1000);
    assert!(
        irregularities(&t).is_empty(),
        "not before the settle window"
    );
    t.wait(2000);
    assert_eq!(
        irregularities(&t),
        [(IrregularityKind::Displaced, 2, false)]
    );
    t.set(100, "b3", 0).set(10, "b1", piece::WKNIGHT).wait(500);
    assert_eq!(irregularities(&t), [(IrregularityKind::Displaced, 2, true)]);
    t.mv("e7", "e5", piece::BPAWN).wait(1000);
    assert_eq!(t.moves(), ["e4", "e5"]);
}

#[test]
fn a_lifted_own_piece_waits_the_longer_window_before_it_counts_as_missing() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    // Black holds his queen (or it lies knocked over): 10 s is thinking, 16 s is reported.
    t.set(100, "d8", 0).wait(10_000);
    assert!(irregularities(&t).is_empty());
    t.wait(6_000);
    assert_eq!(
        irregularities(&t),
        [(IrregularityKind::Displaced, 2, false)]
    );
    t.set(100, "d8", piece::BQUEEN).wait(500);
    assert_eq!(irregularities(&t), [(IrregularityKind::Displaced, 2, true)]);
}

#[test]
fn an_illegal_move_counts_at_the_press_and_play_goes_on_from_the_reinstated_position() {
    let mut t = Table::new(false);
    t.tracker
        .clock(t.t, clock(180_000, 180_000, false), &mut t.events);
    // White moves the bishop from f1 to f3, straight over his own pawn (a bishop does not move
    // so), and presses.
    t.mv("f1", "f3", piece::WBISHOP);
    t.t += 500;
    t.tracker
        .clock(t.t, clock(179_000, 180_000, true), &mut t.events);
    t.wait(400);
    assert_eq!(
        irregularities(&t),
        [(IrregularityKind::IllegalMove, 1, false)]
    );
    assert!(t.events.iter().any(|e| matches!(
        e,
        TrackerEvent::Irregularity { player: Some(Side::White), detail, .. } if detail.starts_with("Bf1f3")
    )));
    // The arbiter reinstates the position; White plays e4.
    t.mv("f3", "f1", piece::WBISHOP).wait(500);
    assert_eq!(
        irregularities(&t),
        [(IrregularityKind::IllegalMove, 1, true)]
    );
    t.mv("e2", "e4", piece::WPAWN).wait(4000);
    assert_eq!(t.moves(), ["e4"]);
}

#[test]
fn a_press_with_no_move_is_reported() {
    let mut t = Table::new(false);
    t.tracker
        .clock(t.t, clock(180_000, 180_000, false), &mut t.events);
    t.wait(1000);
    // White (left) presses with nothing moved.
    t.tracker
        .clock(t.t, clock(179_000, 180_000, true), &mut t.events);
    t.wait(400);
    assert_eq!(
        irregularities(&t),
        [(IrregularityKind::ClockWithoutMove, 1, false)]
    );
    assert!(t.moves().is_empty());
}

#[test]
fn a_press_while_the_memory_is_read_is_not_judged() {
    let mut t = Table::new(false);
    t.tracker
        .clock(t.t, clock(180_000, 180_000, false), &mut t.events);
    t.wait(1000);
    // The board's memory is asked for (after a gap, the log since the game's start): the record
    // may lag the board by what the read brings, so a press with nothing moved is no evidence.
    t.tracker.reading_memory(true);
    t.tracker
        .clock(t.t, clock(179_000, 180_000, true), &mut t.events);
    t.wait(400);
    assert!(irregularities(&t).is_empty(), "{:?}", t.kinds());
    // The read done (it brought nothing), such a press is judged again: Black's press gives
    // White the move back, and White presses again with nothing moved.
    t.tracker.reading_memory(false);
    t.tracker
        .clock(t.t, clock(179_000, 179_000, false), &mut t.events);
    t.wait(400);
    t.tracker
        .clock(t.t, clock(178_000, 179_000, true), &mut t.events);
    t.wait(400);
    assert!(
        irregularities(&t)
            .iter()
            .any(|(k, _, _)| *k == IrregularityKind::ClockWithoutMove),
        "{:?}",
        t.kinds()
    );
}

#[test]
fn start_position_again_starts_a_new_game() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    t.mv("e7", "e5", piece::BPAWN).wait(1000);
    t.mv("e4", "e2", piece::WPAWN)
        .mv("e5", "e7", piece::BPAWN)
        .wait(1000);
    assert_eq!(
        t.kinds().iter().filter(|k| **k == "game_started").count(),
        2
    );
    t.mv("d2", "d4", piece::WPAWN).wait(1000);
    assert_eq!(t.moves(), ["d4"]);
}

#[test]
fn clock_press_records_one_scan_later_with_the_clocks_of_the_press() {
    let mut t = Table::new(false);
    t.tracker
        .clock(t.t, clock(180_000, 180_000, false), &mut t.events);
    t.mv("e2", "e4", piece::WPAWN);
    t.t += 50;
    t.tracker
        .clock(t.t, clock(176_000, 180_000, false), &mut t.events);
    assert!(t.moves().is_empty(), "waits for the press");
    t.t += 50;
    t.tracker
        .clock(t.t, clock(178_000, 180_000, true), &mut t.events);
    assert!(t.moves().is_empty(), "one scan for the sensors to catch up");
    t.t += 400;
    t.tracker
        .clock(t.t, clock(178_000, 179_000, true), &mut t.events);
    assert_eq!(t.moves(), ["e4"]);
    let TrackerEvent::Move(m) = t.events.last().unwrap() else {
        panic!("expected a move");
    };
    assert_eq!(
        (m.clock_white_ms, m.clock_black_ms),
        (Some(178_000), Some(180_000))
    );
}

#[test]
fn resume_continues_a_stored_game() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    t.mv("e7", "e5", piece::BPAWN).wait(1000);
    let recorded = t.recorded();
    let mut resumed = Tracker::<ChessGame>::resume(
        TrackerSettings::default(),
        Orientation::Normal,
        None,
        &recorded,
        t.t,
    )
    .unwrap();
    assert_eq!(resumed.recorded_plies(), 2);
    let mut events = Vec::new();
    t.board.apply_field(t.index("g1"), 0);
    t.board.apply_field(t.index("f3"), piece::WKNIGHT);
    resumed.observe(t.t + 10, &t.board, &mut events);
    resumed.flush(t.t + 20, &mut events);
    assert!(matches!(&events[..], [TrackerEvent::Move(m)] if m.notation == "Nf3" && m.ply == 3));
}

#[test]
fn press_before_the_last_square_of_a_slide_is_seen_records_the_whole_slide() {
    let mut t = Table::new(false);
    t.tracker
        .clock(t.t, clock(60_000, 60_000, false), &mut t.events);
    t.mv("d2", "d4", piece::WPAWN);
    t.t += 20;
    t.tracker
        .clock(t.t, clock(59_000, 60_000, true), &mut t.events);
    t.wait(1000).mv("e7", "e5", piece::BPAWN);
    t.t += 20;
    t.tracker
        .clock(t.t, clock(59_000, 59_000, false), &mut t.events);
    t.wait(1000);
    // The queen slides d1-d2-d3; the press lands while the scan still shows it on d2.
    t.set(50, "d1", 0).set(50, "d2", piece::WQUEEN);
    t.t += 20;
    t.tracker
        .clock(t.t, clock(58_000, 59_000, true), &mut t.events);
    t.set(150, "d2", 0).set(30, "d3", piece::WQUEEN).wait(1000);
    assert_eq!(t.moves(), ["d4", "e5", "Qd3"]);
    assert!(!t.kinds().contains(&"revised_move"));
}

impl Table {
    /// The board goes unheard (`gap`), `fields` are changed on it meanwhile, and after `dt` ms it
    /// is dumped as it stands.
    fn gap(&mut self, dt: Millis, fields: &[(&str, u8)]) -> &mut Self {
        self.tracker.gap(self.t);
        let mut after = self.board.clone();
        for (sq, code) in fields {
            after.apply_field(self.index(sq), *code);
        }
        self.t += dt;
        self.board.apply_dump(&after.to_dump());
        self.tracker.observe(self.t, &self.board, &mut self.events);
        self
    }

    fn irregularities(&self) -> Vec<IrregularityKind> {
        self.events
            .iter()
            .filter_map(|e| match e {
                TrackerEvent::Irregularity { kind, .. } => Some(*kind),
                _ => None,
            })
            .collect()
    }
}

/// Unplugged after 1. e4: 1... e5 2. Nf3 Nc6 3. Bb5 are played, then the board is dumped.
const RUY_LOPEZ: [(&str, u8); 8] = [
    ("e7", 0),
    ("e5", piece::BPAWN),
    ("g1", 0),
    ("f3", piece::WKNIGHT),
    ("b8", 0),
    ("c6", piece::BKNIGHT),
    ("f1", 0),
    ("b5", piece::WBISHOP),
];

#[test]
fn moves_in_either_order_after_a_gap_are_not_recorded_but_the_thread_is_lost() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    // 1... Nc6 2. Nf3 e5 and 2. Bb5 before Nf3 lead to the same board: nothing is recorded.
    t.gap(5000, &RUY_LOPEZ);
    assert!(t.tracker.is_lost());
    t.wait(1000);
    assert!(!t.tracker.thread_lost(), "a piece may still be in a hand");
    t.wait(1500);
    assert_eq!(t.moves(), ["e4"]);
    assert!(t.tracker.thread_lost());
    assert_eq!(t.irregularities(), [IrregularityKind::ThreadLost]);
    let (detail, phrase) = t
        .events
        .iter()
        .find_map(|e| match e {
            TrackerEvent::Irregularity {
                detail,
                detail_phrase,
                ..
            } => Some((detail.clone(), detail_phrase.clone().unwrap())),
            _ => None,
        })
        .unwrap();
    // The record's last move by its number and side; the moments as times, not counts of ms.
    assert!(
        detail.contains("stops after e4, move 1 (white)"),
        "{detail}"
    );
    assert!(!detail.contains(" ms"), "{detail}");
    assert!(
        matches!(phrase.args.get("since"), Some(Arg::Time(_))),
        "{phrase:?}"
    );
    // What the board showed is kept for a diagram, as a FEN's placement (the Ruy Lopez after
    // 3. Bb5), not in the sentence.
    let Some(Arg::Text(board)) = phrase.args.get("board") else {
        panic!("{phrase:?}")
    };
    assert_eq!(
        board, "r1bqkbnr/pppp1ppp/2n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R",
        "{phrase:?}"
    );
    assert!(!detail.contains(board.as_str()), "{detail}");
    // Four plies are past what the search records (two), and two orders lead there anyway.
    assert!(detail.contains("no run of up to 2 legal moves"), "{detail}");
    // Play goes on from the board: never judged, never recorded, while lost.
    t.mv("g8", "f6", piece::BKNIGHT).wait(4000);
    assert_eq!(t.moves(), ["e4"]);
    assert_eq!(t.irregularities(), [IrregularityKind::ThreadLost]);
}

#[test]
fn a_board_part_way_through_a_capture_after_a_gap_is_not_taken_for_two_other_moves() {
    let mut t = Table::new(false);
    t.play(&[
        ("e2", "e4", piece::WPAWN),
        ("b8", "c6", piece::BKNIGHT),
        ("e4", "e5", piece::WPAWN),
        ("a7", "a6", piece::BPAWN),
        ("d2", "d4", piece::WPAWN),
    ]);
    assert_eq!(t.moves(), ["e4", "Nc6", "e5", "a6", "d4"]);
    // Heard again with 3... Nxd4 in the hand: the pawn taken off d4 and the knight lifted. That
    // board is also 3... Nxe5 4. dxe5, the only run of moves that reaches it.
    t.gap(3000, &[("d4", 0), ("c6", 0)]);
    t.wait(200);
    t.set(100, "d4", piece::BKNIGHT).wait(1000);
    assert_eq!(t.moves(), ["e4", "Nc6", "e5", "a6", "d4", "Nxd4"]);
    // Never written, not even for a moment (a takeback would not unpublish it).
    let written: Vec<String> = t.recorded().iter().map(|m| m.notation.clone()).collect();
    assert_eq!(written, t.moves());
    assert!(!t.tracker.is_lost());
}

#[test]
fn one_run_of_moves_after_a_gap_is_recorded_without_clocks() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    // 1... Nc6 2. Nf3: knights cannot get there any other way in four plies.
    t.gap(
        3000,
        &[
            ("b8", 0),
            ("c6", piece::BKNIGHT),
            ("g1", 0),
            ("f3", piece::WKNIGHT),
        ],
    );
    // Recorded once the board has stayed so for the settle time.
    assert_eq!(t.moves(), ["e4"]);
    t.wait(500);
    assert_eq!(t.moves(), ["e4", "Nc6", "Nf3"]);
    assert!(!t.tracker.is_lost());
    let recovered: Vec<_> = t
        .events
        .iter()
        .filter_map(|e| match e {
            TrackerEvent::Recovered {
                from_ply,
                to_ply,
                source,
                ..
            } => Some((*from_ply, *to_ply, *source)),
            _ => None,
        })
        .collect();
    assert_eq!(recovered, [(2, 3, RecoverySource::Search)]);
    let clocks: Vec<_> = t
        .events
        .iter()
        .filter_map(|e| match e {
            TrackerEvent::Move(m) if m.ply > 1 => Some((m.clock_white_ms, m.clock_black_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(clocks, [(None, None), (None, None)]);
    // Tracking goes on as ever.
    t.mv("g8", "f6", piece::BKNIGHT).wait(1000);
    assert_eq!(t.moves(), ["e4", "Nc6", "Nf3", "Nf6"]);
    assert!(t.irregularities().is_empty());
}

#[test]
fn a_pawn_that_may_have_gone_one_square_at_a_time_is_not_recorded_after_a_gap() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    // 1... e5 2. Nf3, or 1... e6 2. Nf3 e5: the board cannot tell.
    t.gap(
        3000,
        &[
            ("e7", 0),
            ("e5", piece::BPAWN),
            ("g1", 0),
            ("f3", piece::WKNIGHT),
        ],
    );
    t.wait(3000);
    assert_eq!(t.moves(), ["e4"]);
    assert!(t.tracker.thread_lost());
    assert!(
        t.events
            .iter()
            .any(|e| matches!(e, TrackerEvent::Irregularity { detail, .. }
            if detail.contains("more than one run"))),
        "{:?}",
        t.events
    );
}

#[test]
fn without_a_gap_a_board_far_ahead_of_the_record_is_not_explained_away_but_said() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    let recorded = t.board.clone();
    t.board.apply_dump(&{
        let mut after = t.board.clone();
        for (sq, code) in RUY_LOPEZ {
            after.apply_field(t.index(sq), code);
        }
        after.to_dump()
    });
    t.t += 100;
    t.tracker.observe(t.t, &t.board, &mut t.events);
    t.wait(5000);
    // Four plies on: longer than any run recorded without the board heard in between.
    assert_eq!(t.moves(), ["e4"]);
    // The record stops, and says so: the arbiter sees where (no gap: the board was heard).
    assert!(t.tracker.thread_lost());
    let said: Vec<&str> = t
        .events
        .iter()
        .filter_map(|e| match e {
            TrackerEvent::Irregularity { kind, detail, .. }
                if *kind == IrregularityKind::ThreadLost =>
            {
                Some(detail.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(said.len(), 1, "{:?}", t.events);
    assert!(
        said[0].contains("no run of moves from the record reaches"),
        "{said:?}"
    );
    assert!(!said[0].contains("not heard"), "{said:?}");
    // The board put back as recorded: the game goes on from the record.
    t.board.apply_dump(&recorded.to_dump());
    t.t += 100;
    t.tracker.observe(t.t, &t.board, &mut t.events);
    t.wait(1000);
    assert!(!t.tracker.is_lost());
    t.play(&[("e7", "e5", piece::BPAWN)]);
    assert_eq!(t.moves(), ["e4", "e5"]);
}

#[test]
fn after_a_gap_the_board_as_recorded_ends_it_and_a_lever_moved_meanwhile_is_no_press() {
    let mut t = Table::new(false);
    t.tracker
        .clock(t.t, clock(60_000, 60_000, false), &mut t.events);
    t.mv("e2", "e4", piece::WPAWN);
    t.t += 20;
    t.tracker
        .clock(t.t, clock(59_000, 60_000, true), &mut t.events);
    t.wait(1000);
    assert_eq!(t.moves(), ["e4"]);
    t.gap(4000, &[]);
    assert!(!t.tracker.is_lost(), "the board shows the record");
    // The lever moved while nobody listened: no press, no press without a move.
    t.tracker
        .clock(t.t, clock(58_000, 59_000, false), &mut t.events);
    t.wait(1000);
    t.tracker
        .clock(t.t, clock(58_000, 58_000, false), &mut t.events);
    t.wait(4000);
    assert!(t.irregularities().is_empty(), "{:?}", t.events);
}

#[test]
fn a_piece_held_in_the_hand_is_not_explained_by_moves() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    t.mv("e7", "e5", piece::BPAWN).wait(1000);
    // White lifts the knight and thinks for ten seconds before putting it back.
    t.set(100, "g1", 0)
        .wait(10_000)
        .set(100, "g1", piece::WKNIGHT)
        .wait(1000);
    assert_eq!(t.moves(), ["e4", "e5"]);
    assert_eq!(t.kinds(), ["game_started", "move", "move"]);
}

#[test]
fn a_reply_before_the_first_press_does_not_swap_the_clocks() {
    let mut t = Table::new(false);
    t.tracker
        .clock(t.t, clock(300_000, 300_000, false), &mut t.events);
    // 1. e4 e5, Black's reply on the board before White's press lands.
    t.mv("e2", "e4", piece::WPAWN).mv("e7", "e5", piece::BPAWN);
    t.t += 20;
    t.tracker
        .clock(t.t, clock(298_000, 300_000, true), &mut t.events);
    t.wait(400);
    assert_eq!(t.moves(), ["e4"], "the press completes White's move only");
    t.t += 20;
    t.tracker
        .clock(t.t, clock(298_000, 299_000, false), &mut t.events);
    t.wait(400);
    assert_eq!(t.moves(), ["e4", "e5"]);
    let clocks: Vec<_> = t
        .events
        .iter()
        .filter_map(|e| match e {
            TrackerEvent::Move(m) => Some((m.clock_white_ms, m.clock_black_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(
        clocks,
        [
            (Some(298_000), Some(300_000)),
            (Some(298_000), Some(299_000))
        ]
    );
}

mod properties {
    use proptest::prelude::*;
    use shakmaty::{Chess, Position};

    use super::*;
    use crate::game::{GameKind, chess::square_of_board_index};

    /// Board index (a8 = 0) of a game square (a1 = 0), on a board lying normally.
    fn board_index(sq: usize) -> u8 {
        (0..64)
            .find(|&i| square_of_board_index(i) == sq)
            .map(|i| i as u8)
            .unwrap_or(0)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whatever legal moves are played, and in whatever order the changed squares are
        /// reported (vacated squares first or last), the tracker records exactly those moves.
        #[test]
        fn every_legal_move_is_recovered_from_its_board_diff(
            choices in proptest::collection::vec(any::<u16>(), 1..60),
            orders in proptest::collection::vec(any::<bool>(), 60),
        ) {
            let mut t = Table::new(false);
            let mut pos = Chess::default();
            let mut played = Vec::new();
            for (i, c) in choices.iter().enumerate() {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m = moves[usize::from(*c) % moves.len()];
                let before = ChessGame::reading(&pos);
                played.push(ChessGame::notation(&pos, &m, &ChessGame::play(&pos, &m), true)
                    .trim_end_matches(['+', '#']).to_string());
                pos.play_unchecked(m);
                let after = ChessGame::reading(&pos);
                let mut changed: Vec<usize> = (0..64).filter(|&s| before.0[s] != after.0[s]).collect();
                // Vacated squares first, or placed squares first (scanning order).
                changed.sort_by_key(|&s| (after.0[s] == 0) != orders[i]);
                for s in changed {
                    t.t += 40;
                    t.board.apply_field(board_index(s), after.0[s]);
                    t.tracker.observe(t.t, &t.board, &mut t.events);
                }
                t.wait(1000);
            }
            let got: Vec<String> = t
                .moves()
                .into_iter()
                .map(|m| m.trim_end_matches(['+', '#']).to_string())
                .collect();
            prop_assert_eq!(got, played);
        }
    }
}

#[test]
fn a_long_takeback_then_a_new_move() {
    let mut t = Table::new(false);
    let line = [
        ("e2", "e4", piece::WPAWN),
        ("e7", "e5", piece::BPAWN),
        ("g1", "f3", piece::WKNIGHT),
        ("b8", "c6", piece::BKNIGHT),
        ("f1", "b5", piece::WBISHOP),
        ("a7", "a6", piece::BPAWN),
        ("b5", "a4", piece::WBISHOP),
        ("g8", "f6", piece::BKNIGHT),
        ("d2", "d3", piece::WPAWN),
        ("f8", "e7", piece::BBISHOP),
    ];
    let mut after_two = None;
    for (i, (from, to, code)) in line.iter().enumerate() {
        t.mv(from, to, *code).wait(1000);
        if i == 1 {
            after_two = Some(t.board.to_dump());
        }
    }
    assert_eq!(t.moves().len(), 10);
    // Everything after 1. e4 e5 is put back at once (the arbiter resets the position).
    t.board.apply_dump(&after_two.unwrap());
    t.t += 100;
    t.tracker.observe(t.t, &t.board, &mut t.events);
    t.wait(1000);
    assert_eq!(t.moves(), ["e4", "e5"]);
    t.mv("d2", "d4", piece::WPAWN).wait(1000);
    t.mv("e5", "d4", piece::BPAWN).wait(1000);
    assert_eq!(t.moves(), ["e4", "e5", "d4", "exd4"]);
}

#[test]
fn a_restart_does_not_report_the_kings_gesture_again() {
    let mut t = Table::new(false);
    t.mv("e2", "e4", piece::WPAWN).wait(1000);
    t.mv("e7", "e5", piece::BPAWN).wait(1000);
    t.set(100, "e1", 0)
        .set(100, "e8", 0)
        .set(100, "d5", piece::BKING);
    t.set(100, "e4", 0).set(100, "e4", piece::WKING).wait(1000);
    let recorded = t.recorded();
    let gestures = |events: &[TrackerEvent]| {
        events
            .iter()
            .filter(|e| matches!(e, TrackerEvent::ResultGesture { .. }))
            .count()
    };
    assert_eq!(gestures(&t.events), 1);
    for reported in [true, false] {
        let mut resumed = Tracker::<ChessGame>::resume(
            TrackerSettings::default(),
            Orientation::Normal,
            None,
            &recorded,
            t.t + 5_000,
        )
        .unwrap();
        if reported {
            resumed.gesture_already_reported();
        }
        let mut events = Vec::new();
        // The board is dumped as it stands: the kings still on the centre squares.
        resumed.observe(t.t + 5_100, &t.board, &mut events);
        resumed.tick(t.t + 9_000, &mut events);
        assert_eq!(gestures(&events), usize::from(!reported), "{events:?}");
        assert!(!resumed.is_lost(), "the gesture follows the record");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, TrackerEvent::Irregularity { .. })),
            "{events:?}"
        );
    }
}

#[test]
fn a_king_moved_next_to_the_other_on_the_centre_and_pressed_is_an_illegal_move_not_the_gesture() {
    let mut t = Table::new(false);
    let mut lever = false;
    let mut press = |t: &mut Table| {
        t.t += 300;
        lever = !lever;
        t.tracker
            .clock(t.t, clock(170_000, 170_000, lever), &mut t.events);
        t.wait(600);
    };
    t.tracker
        .clock(t.t, clock(180_000, 180_000, false), &mut t.events);
    for (from, to, code) in [
        ("e2", "e3", piece::WPAWN),
        ("e7", "e6", piece::BPAWN),
        ("e1", "e2", piece::WKING),
        ("e8", "e7", piece::BKING),
        ("e2", "f3", piece::WKING),
        ("e7", "f6", piece::BKING),
        ("f3", "e4", piece::WKING),
    ] {
        t.mv(from, to, code);
        press(&mut t);
    }
    assert_eq!(t.moves(), ["e3", "e6", "Ke2", "Ke7", "Kf3", "Kf6", "Ke4"]);
    // Black puts his king on e5, next to White's on e4: both kings stand on the centre squares.
    t.mv("f6", "e5", piece::BKING);
    press(&mut t);
    t.wait(2000);
    assert!(
        !t.events
            .iter()
            .any(|e| matches!(e, TrackerEvent::ResultGesture { .. })),
        "{:?}",
        t.events
    );
    assert!(
        t.events.iter().any(|e| matches!(
            e,
            TrackerEvent::Irregularity {
                kind: IrregularityKind::IllegalMove,
                player: Some(Side::Black),
                ..
            }
        )),
        "{:?}",
        t.events
    );
}

#[test]
fn after_a_restart_a_clock_running_for_a_move_pressed_unseen_does_not_swap_the_clocks() {
    // 1. e4 e5 2. Nf3 recorded, White's clock on the left; the daemon is killed.
    let mut t = Table::new(false);
    let (left, _) = t.play_pressed(&E4_E5_NF3);
    assert_eq!(t.moves(), ["e4", "e5", "Nf3"]);
    let recorded = t.recorded();
    // Meanwhile 2... Nc6 is played and pressed: the restarted daemon sees the knight on c6 and
    // White's clock running, a move ahead of its record.
    t.board.apply_field(t.index("b8"), 0);
    t.board.apply_field(t.index("c6"), piece::BKNIGHT);
    let at = t.t + 5_000;
    let mut resumed = Tracker::<ChessGame>::resume(
        TrackerSettings::default(),
        Orientation::Normal,
        None,
        &recorded,
        at,
    )
    .unwrap();
    let mut events = Vec::new();
    resumed.observe(at, &t.board, &mut events);
    for s in 0..4 {
        resumed.clock(
            at + s * 1000,
            clock(left - s * 1000, 297_000, false),
            &mut events,
        );
    }
    assert!(
        resumed.white_on_left(),
        "the running clock of a record a move behind swapped the clocks"
    );
    // 3. Bb5, pressed by White (the left player): no irregularity, and its clocks are White's.
    let mut board = t.board.clone();
    let at = at + 4_000;
    board.apply_field(t.index("f1"), 0);
    resumed.observe(at, &board, &mut events);
    board.apply_field(t.index("b5"), piece::WBISHOP);
    resumed.observe(at + 300, &board, &mut events);
    resumed.clock(at + 400, clock(left - 5_000, 297_000, true), &mut events);
    resumed.tick(at + 1_400, &mut events);
    let moves: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            TrackerEvent::Move(m) => Some((m.notation.clone(), m.clock_white_ms, m.clock_black_ms)),
            _ => None,
        })
        .collect();
    // 2... Nc6 carries the first reading after the restart (Black's clock as the unseen press
    // left it), 3. Bb5 its press.
    assert_eq!(
        moves,
        [
            ("Nc6".to_string(), Some(left), Some(297_000)),
            ("Bb5".to_string(), Some(left - 5_000), Some(297_000))
        ]
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, TrackerEvent::Irregularity { .. })),
        "{events:?}"
    );
}

/// The kings walk to the centre: 1. e3 e6 2. Ke2 Ke7 3. Kd3 Kd6, then `then`.
fn kings_walk(t: &mut Table, then: &[(&str, &str, u8)]) {
    let walk = [
        ("e2", "e3", piece::WPAWN),
        ("e7", "e6", piece::BPAWN),
        ("e1", "e2", piece::WKING),
        ("e8", "e7", piece::BKING),
        ("e2", "d3", piece::WKING),
        ("e7", "d6", piece::BKING),
    ];
    t.play(&walk).play(then);
}

#[test]
fn kings_passing_an_earlier_position_on_their_way_to_the_centre_take_nothing_back() {
    let mut t = Table::new(false);
    // 4. Kc3 Kd5 5. Kb3 Kc6: the black king came from d5.
    kings_walk(
        &mut t,
        &[
            ("d3", "c3", piece::WKING),
            ("d6", "d5", piece::BKING),
            ("c3", "b3", piece::WKING),
            ("d5", "c6", piece::BKING),
        ],
    );
    assert_eq!(t.moves().len(), 10, "{:?}", t.moves());
    // The draw shown with the kings on d4 and d5, as the scan sees it: the black king back on
    // d5 (the board after 5. Kb3) before the white king leaves b3.
    t.set(300, "c6", 0)
        .set(30, "d5", piece::BKING)
        .set(30, "d4", piece::WKING)
        .set(30, "b3", 0)
        .wait(3000);
    assert_eq!(t.moves().len(), 10, "{:?}", t.kinds());
    assert!(!t.kinds().contains(&"takeback"), "{:?}", t.kinds());
    assert!(t.kinds().contains(&"result_gesture"), "{:?}", t.kinds());
}

#[test]
fn a_king_moved_on_from_its_last_square_to_show_the_result_revises_nothing() {
    let mut t = Table::new(false);
    // 4. Kd4, then the white king goes on to e4 and the black one to d5 (1-0): Ke4 is a
    // sibling of Kd4 from d3.
    kings_walk(&mut t, &[("d3", "d4", piece::WKING)]);
    assert_eq!(t.moves().last().map(String::as_str), Some("Kd4"));
    t.set(300, "d4", 0)
        .set(30, "e4", piece::WKING)
        .set(200, "d6", 0)
        .set(30, "d5", piece::BKING)
        .wait(3000);
    assert_eq!(t.moves().last().map(String::as_str), Some("Kd4"));
    assert!(!t.kinds().contains(&"revised_move"), "{:?}", t.kinds());
    assert!(t.kinds().contains(&"result_gesture"), "{:?}", t.kinds());
}

#[test]
fn a_result_shown_after_a_gap_in_which_other_moves_were_played_does_not_end_the_gap() {
    let mut t = Table::new(false);
    kings_walk(&mut t, &[("d3", "d4", piece::WKING)]);
    // Unheard: 4... Nf6, then the kings show the draw on d4 and d5 (the black king from d6).
    // Four squares differ from the record, as for the kings alone.
    t.gap(
        3000,
        &[
            ("g8", 0),
            ("f6", piece::BKNIGHT),
            ("d6", 0),
            ("d5", piece::BKING),
        ],
    );
    t.wait(1000).wait(1000).wait(1000);
    assert!(!t.kinds().contains(&"result_gesture"), "{:?}", t.kinds());
    assert_eq!(t.irregularities(), [IrregularityKind::ThreadLost]);
}

#[test]
fn a_position_that_came_again_during_a_gap_is_told_by_the_clock_and_the_thread_is_lost() {
    let mut t = Table::new(false);
    let (left, right) = t.play_pressed(&E4_E5_NF3);
    assert_eq!(t.moves(), ["e4", "e5", "Nf3"]);
    // Unheard: 2... Nf6 3. Ng1 Ng8 4. Nf3, each pressed: the board is as recorded, Black to
    // move, but White's clock (standing) is not at 2. Nf3's press any more.
    t.gap(8000, &[]);
    t.tracker
        .clock(t.t, clock(left - 3_000, right - 4_000, true), &mut t.events);
    t.wait(1000).wait(1000).wait(1000);
    assert_eq!(t.irregularities(), [IrregularityKind::ThreadLost]);
    // 4... Nc6, pressed: nothing is recorded until the arbiter decides.
    t.mv("b8", "c6", piece::BKNIGHT);
    t.t += 20;
    t.tracker.clock(
        t.t,
        clock(left - 3_000, right - 6_000, false),
        &mut t.events,
    );
    t.wait(1000).wait(1000);
    assert_eq!(t.moves(), ["e4", "e5", "Nf3"]);
}

/// Ten plies of an Italian game at 15 minutes + 10 s, White's clock on the left, each pressed
/// 20 ms after it, with 0.7 to 1.5 s between moves.
const ITALIAN: [(&str, &str, u8); 10] = [
    ("e2", "e4", piece::WPAWN),
    ("e7", "e5", piece::BPAWN),
    ("g1", "f3", piece::WKNIGHT),
    ("b8", "c6", piece::BKNIGHT),
    ("f1", "c4", piece::WBISHOP),
    ("f8", "c5", piece::BBISHOP),
    ("c2", "c3", piece::WPAWN),
    ("g8", "f6", piece::BKNIGHT),
    ("d2", "d3", piece::WPAWN),
    ("d7", "d6", piece::BPAWN),
];
const INCREMENT: u64 = 10_000;

impl Table {
    /// Plays `moves` from the start, pressed as [`ITALIAN`] says; returns White's and Black's
    /// clocks and when the last press came.
    fn play_with_increment(&mut self, moves: &[(&str, &str, u8)]) -> (u64, u64, Millis) {
        let (mut white, mut black) = (900_000u64, 900_000u64);
        self.tracker
            .clock(self.t, clock(white, black, false), &mut self.events);
        let mut last_press = self.t;
        for (n, &(from, to, code)) in moves.iter().enumerate() {
            self.wait(700 + 400 * (n as u64 % 3));
            self.mv(from, to, code);
            self.t += 20;
            let white_pressed = n % 2 == 0;
            press_unheard(
                white_pressed,
                self.t - last_press,
                INCREMENT,
                &mut white,
                &mut black,
            );
            last_press = self.t;
            self.tracker
                .clock(self.t, clock(white, black, white_pressed), &mut self.events);
        }
        (white, black, last_press)
    }
}

#[test]
fn after_a_gap_pieces_moved_and_moved_back_are_told_by_the_presses_the_increment_counts() {
    let mut t = Table::new(false);
    let (mut white, mut black, last_press) = t.play_with_increment(&ITALIAN);
    t.wait(1_000);
    assert_eq!(t.moves().len(), 10);
    // Unplugged. Meanwhile 6. Nh4 Nh5 7. Nf3 Nf6 8. h3, each pressed two seconds after the one
    // before: the knights are back, and the board is one move past the record.
    let unplugged = t.t;
    for n in 0..5 {
        press_unheard(n % 2 == 0, 2_000, INCREMENT, &mut white, &mut black);
    }
    let pressed = last_press + 5 * 2_000;
    t.gap(
        pressed + 500 - unplugged,
        &[("h2", 0), ("h3", piece::WPAWN)],
    );
    // Black's clock has run half a second since 8. h3 was pressed.
    t.tracker
        .clock(t.t, clock(white, black - 500, true), &mut t.events);
    t.wait(3_000);
    assert_eq!(
        t.moves().len(),
        10,
        "8. h3 taken for the only move since the gap"
    );
    assert!(t.tracker.thread_lost());
    assert_eq!(t.irregularities(), [IrregularityKind::ThreadLost]);
}

#[test]
fn the_clock_is_not_held_against_a_record_the_arbiter_set_with_the_clocks_stopped_and_set() {
    let mut t = Table::new(false);
    let (white, black, _) = t.play_with_increment(&ITALIAN);
    t.wait(1_000);
    // The arbiter stops the clocks for a minute and confirms the record as it stands.
    let stopped = ClockReading {
        running: false,
        ..clock(white, black, false)
    };
    t.tracker.clock(t.t, stopped, &mut t.events);
    t.wait(60_000);
    let record = t.recorded();
    assert!(t.tracker.rebase(
        t.t,
        &record,
        crate::phrase::Phrase::new("resolved.record_set"),
        &mut t.events
    ));
    // The clocks go again, two minutes added to Black's, and 6. h3 is played and pressed.
    let black = black + 120_000;
    t.tracker
        .clock(t.t + 100, clock(white, black, false), &mut t.events);
    t.wait(1_000);
    t.mv("h2", "h3", piece::WPAWN);
    t.t += 20;
    t.tracker.clock(
        t.t,
        clock(white - 1_600 + INCREMENT, black, true),
        &mut t.events,
    );
    t.wait(1_000);
    assert_eq!(t.moves().len(), 11, "{:?}", t.events);
    assert!(!t.tracker.thread_lost());
}

/// A press made while the board was not heard: `used` off the presser's clock, the increment on.
fn press_unheard(white_pressed: bool, used: u64, inc: u64, white: &mut u64, black: &mut u64) {
    if white_pressed {
        *white = *white - used + inc;
    } else {
        *black = *black - used + inc;
    }
}

#[test]
fn a_slide_completed_after_its_press_stands_when_the_kings_then_show_the_result() {
    let mut t = Table::new(false);
    let (left, right) = t.play_pressed(&E4_E5_NF3[..2]);
    // 2. Qg4, pressed, recorded one scan later; then the queen slides on to h5 (a revision
    // waiting for the next press), and the kings go to d4 and d5 before it comes.
    t.set(300, "d1", 0).set(300, "g4", piece::WQUEEN);
    t.t += 20;
    t.tracker
        .clock(t.t, clock(left - 2_000, right, true), &mut t.events);
    t.wait(350);
    assert_eq!(t.moves(), ["e4", "e5", "Qg4"]);
    t.set(100, "g4", 0).set(100, "h5", piece::WQUEEN).wait(500);
    t.set(300, "e1", 0)
        .set(200, "e8", 0)
        .set(300, "d4", piece::WKING)
        .set(200, "d5", piece::BKING)
        .wait(3_000);
    assert_eq!(t.moves(), ["e4", "e5", "Qh5"]);
    assert!(
        t.events
            .iter()
            .any(|e| matches!(e, TrackerEvent::ResultGesture { after_ply: 3, .. })),
        "{:?}",
        t.events
    );
}

/// What a gap after 1. e4 changed: the board of 1... e5 2. Nf3, and of 1... e6 2. Nf3 e5.
const TWO_RUNS_GAP: [(&str, u8); 4] = [
    ("e7", 0),
    ("e5", piece::BPAWN),
    ("g1", 0),
    ("f3", piece::WKNIGHT),
];

#[test]
fn a_board_two_runs_explain_after_a_gap_is_told_by_the_next_move_seen() {
    // 1... e5 2. Nf3, or 1... e6 2. Nf3 e5: the board cannot tell, until the next move shows
    // who is to move. A black move: the two-ply run; a white one: the three-ply run.
    for (next, want) in [
        (
            ("b8", "c6", piece::BKNIGHT),
            &["e4", "e5", "Nf3", "Nc6"][..],
        ),
        (
            ("f1", "c4", piece::WBISHOP),
            &["e4", "e6", "Nf3", "e5", "Bc4"][..],
        ),
    ] {
        let mut t = Table::new(false);
        t.mv("e2", "e4", piece::WPAWN).wait(1000);
        t.gap(3000, &TWO_RUNS_GAP);
        t.wait(3000);
        assert_eq!(t.moves(), ["e4"]);
        assert!(t.tracker.thread_lost());
        let (from, to, code) = next;
        t.mv(from, to, code).wait(1000);
        assert_eq!(t.moves(), want);
        assert!(!t.tracker.is_lost());
        assert!(!t.tracker.thread_lost());
        let recovered: Vec<_> = t
            .events
            .iter()
            .filter_map(|e| match e {
                TrackerEvent::Recovered {
                    from_ply, to_ply, ..
                } => Some((*from_ply, *to_ply)),
                _ => None,
            })
            .collect();
        assert_eq!(recovered, [(2, want.len() as u32)]);
        // Tracking goes on as ever.
        let more = if want.len() % 2 == 0 {
            ("d2", "d4", piece::WPAWN)
        } else {
            ("d7", "d6", piece::BPAWN)
        };
        t.mv(more.0, more.1, more.2).wait(1000);
        assert_eq!(t.moves().len(), want.len() + 1);
    }
}

#[test]
fn a_piece_held_in_the_hand_on_a_board_two_runs_explain_keeps_both_until_it_is_put_down() {
    // The board two runs explain (TWO_RUNS_GAP), settled; then the next move is made by a hand
    // that holds the knight a while, the board read all along. A piece in the hand is not play
    // gone past the two runs: however long it is held, where it lands tells which run was
    // played, as when it is put down at once.
    for held_ms in [300, 2_300, 10_000] {
        let mut t = Table::new(false);
        t.mv("e2", "e4", piece::WPAWN).wait(1000);
        t.gap(3000, &TWO_RUNS_GAP);
        t.wait(3000);
        assert!(t.tracker.thread_lost());
        t.set(100, "b8", 0);
        for _ in 0..held_ms / 100 {
            t.wait(100);
        }
        t.set(0, "c6", piece::BKNIGHT).wait(1000);
        assert_eq!(
            t.moves(),
            ["e4", "e5", "Nf3", "Nc6"],
            "the knight held {held_ms} ms"
        );
        assert!(!t.tracker.is_lost(), "the knight held {held_ms} ms");
        assert!(!t.tracker.thread_lost(), "the knight held {held_ms} ms");
    }
}

#[test]
fn a_pawn_knocked_back_to_its_earlier_square_before_the_next_move_takes_nothing_back() {
    let mut t = Table::new(false);
    // 1. e4 Nf6 2. e5 Ng8: the board after 1. e4 differs only by the e-pawn's square.
    let (mut left, right) = t.play_pressed(&[
        ("e2", "e4", piece::WPAWN),
        ("g8", "f6", piece::BKNIGHT),
        ("e4", "e5", piece::WPAWN),
        ("f6", "g8", piece::BKNIGHT),
    ]);
    assert_eq!(t.moves(), ["e4", "Nf6", "e5", "Ng8"]);
    // 3. d4, the hand knocking the e-pawn back to e4 on its way and setting it right after.
    t.set(200, "e5", 0).set(30, "e4", piece::WPAWN);
    t.set(200, "d2", 0).set(100, "d4", piece::WPAWN);
    t.set(200, "e4", 0).set(30, "e5", piece::WPAWN);
    left -= 2_000;
    t.t += 100;
    t.tracker
        .clock(t.t, clock(left, right, true), &mut t.events);
    t.wait(1000);
    assert_eq!(t.moves(), ["e4", "Nf6", "e5", "Ng8", "d4"]);
    assert!(!t.kinds().contains(&"takeback"), "{:?}", t.kinds());
}

#[test]
fn after_the_arbiters_decision_play_faster_than_the_settle_time_is_followed_by_its_presses() {
    let mut t = Table::new(false);
    let (mut left, mut right) = t.play_pressed(&E4_E5_NF3[..2]);
    // 2. Nf3 made, not yet pressed, and Black's knight in the hand when the arbiter's decision
    // (the game goes on after 1... e5) is entered.
    t.set(300, "g1", 0)
        .set(300, "f3", piece::WKNIGHT)
        .set(300, "b8", 0);
    let record = t.recorded();
    assert_eq!(record.len(), 2);
    assert!(t.tracker.rebase(
        t.t,
        &record,
        crate::phrase::Phrase::new("resolved.record_set"),
        &mut t.events
    ));
    // Blitz: every move pressed at once, and the next hand on its way before any board has
    // stood for the settle time; the board is three, then four plies past the record.
    let presses = [
        (("c6", piece::BKNIGHT), None),
        (("b5", piece::WBISHOP), Some("f1")),
        (("a6", piece::BPAWN), Some("a7")),
        (("a4", piece::WBISHOP), Some("b5")),
    ];
    left -= 2_000;
    t.t += 50;
    t.tracker
        .clock(t.t, clock(left, right, true), &mut t.events);
    for (n, ((to, code), from)) in presses.into_iter().enumerate() {
        if let Some(from) = from {
            t.set(150, from, 0);
        }
        t.set(150, to, code);
        let white = n % 2 == 1;
        if white {
            left -= 2_000;
        } else {
            right -= 2_000;
        }
        t.t += 50;
        t.tracker
            .clock(t.t, clock(left, right, white), &mut t.events);
    }
    t.wait(3_000);
    assert_eq!(t.moves(), ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4"]);
    assert!(!t.tracker.is_lost());
    assert!(t.irregularities().is_empty(), "{:?}", t.events);
}

#[test]
fn after_the_arbiters_decision_the_presses_heard_tell_runs_of_other_lengths_apart() {
    let mut t = Table::new(false);
    let (left, mut right) = t.play_pressed(&E4_E5_NF3[..1]);
    // 1... e5 made, not yet pressed, and White's knight in the hand when the arbiter's decision
    // (the game goes on after 1. e4) is entered.
    t.set(300, "e7", 0)
        .set(300, "e5", piece::BPAWN)
        .set(300, "g1", 0);
    let record = t.recorded();
    assert!(t.tracker.rebase(
        t.t,
        &record,
        crate::phrase::Phrase::new("resolved.record_set"),
        &mut t.events
    ));
    right -= 2_000;
    t.t += 50;
    t.tracker
        .clock(t.t, clock(left, right, false), &mut t.events);
    // 1... e5 2. Nf3, or 1... e6 2. Nf3 e5: the board cannot tell, the presses heard can (two,
    // not three).
    t.set(150, "f3", piece::WKNIGHT);
    t.t += 50;
    t.tracker
        .clock(t.t, clock(left - 2_000, right, true), &mut t.events);
    t.wait(3_000);
    assert_eq!(t.moves(), ["e4", "e5", "Nf3"]);
    assert!(!t.tracker.is_lost());
    assert!(t.irregularities().is_empty(), "{:?}", t.events);
}

#[test]
fn after_the_arbiters_decision_the_thread_lost_text_says_how_deep_the_presses_let_it_look() {
    let mut t = Table::new(false);
    let (left, mut right) = t.play_pressed(&E4_E5_NF3[..1]);
    // The decision (the game goes on after 1. e4) is entered with 1... e5 on the board, not
    // yet pressed; then White's rook turns up on a5, where no run of moves from the record can
    // take it (its pawn is still on a2).
    t.set(300, "e7", 0).set(300, "e5", piece::BPAWN);
    let record = t.recorded();
    assert!(t.tracker.rebase(
        t.t,
        &record,
        crate::phrase::Phrase::new("resolved.record_set"),
        &mut t.events
    ));
    right -= 2_000;
    t.t += 50;
    t.tracker
        .clock(t.t, clock(left, right, false), &mut t.events);
    t.set(150, "a1", 0).set(150, "a5", piece::WROOK);
    t.t += 50;
    t.tracker
        .clock(t.t, clock(left - 2_000, right, true), &mut t.events);
    t.wait(3_000).wait(3_000).wait(3_000);
    assert_eq!(t.moves(), ["e4"]);
    let detail = t
        .events
        .iter()
        .find_map(|e| match e {
            TrackerEvent::Irregularity {
                kind: IrregularityKind::ThreadLost,
                detail,
                ..
            } => Some(detail.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no thread_lost: {:?}", t.events));
    assert!(
        detail.contains("as long as the clock's presses since the arbiter's decision allow"),
        "{detail}"
    );
    assert!(!detail.contains("up to 2 legal moves"), "{detail}");
}

/// A board reporting whole positions once a change has held: `changes` (square, code) all in
/// one report after `dt` ms.
fn report(t: &mut Table, dt: Millis, changes: &[(&str, u8)]) {
    t.t += dt;
    for &(sq, code) in changes {
        let i = t.index(sq);
        t.board.apply_field(i, code);
    }
    t.tracker.observe(t.t, &t.board, &mut t.events);
}

fn whole_reports_table(whole_reports: bool) -> Table {
    let mut t = Table::new(false);
    t.tracker = Tracker::new(TrackerSettings {
        whole_reports,
        ..TrackerSettings::default()
    });
    t.tracker.observe(0, &t.board, &mut t.events);
    t
}

#[test]
fn a_move_and_the_replys_lift_in_one_whole_report_are_that_move_with_the_reply_under_way() {
    for whole_reports in [true, false] {
        let mut t = whole_reports_table(whole_reports);
        // 1. e4, lifted and put down in one report, and Black's e-pawn already in the hand.
        report(&mut t, 500, &[("e2", 0), ("e4", piece::WPAWN), ("e7", 0)]);
        t.wait(1000);
        if whole_reports {
            assert_eq!(t.moves(), ["e4"], "{:?}", t.kinds());
        } else {
            // Every square as it changes (DGT): a board no move explains waits.
            assert!(t.moves().is_empty(), "{:?}", t.moves());
        }
        // 1... e5 put down: the game goes on either way.
        report(&mut t, 100, &[("e5", piece::BPAWN)]);
        t.wait(1000);
        assert_eq!(t.moves(), ["e4", "e5"], "whole reports: {whole_reports}");
    }
}

#[test]
fn a_slide_finished_while_the_reply_began_revises_the_resting_square() {
    let mut t = whole_reports_table(true);
    t.play(&[("e2", "e4", piece::WPAWN), ("e7", "e5", piece::BPAWN)]);
    // 2. Qh5, the queen resting on g4 on its way.
    report(&mut t, 300, &[("d1", 0), ("g4", piece::WQUEEN)]);
    t.wait(200);
    // The queen on h5 and Black's knight lifted from b8, in one report.
    report(&mut t, 100, &[("g4", 0), ("h5", piece::WQUEEN), ("b8", 0)]);
    report(&mut t, 200, &[("c6", piece::BKNIGHT)]);
    t.wait(1000);
    assert_eq!(t.moves(), ["e4", "e5", "Qh5", "Nc6"], "{:?}", t.kinds());
}

#[test]
fn a_kings_step_with_the_other_king_lifted_waits_for_the_gesture() {
    let mut t = whole_reports_table(true);
    t.play(&[("e2", "e4", piece::WPAWN), ("e7", "e5", piece::BPAWN)]);
    // 2. Ke2 with Black's king already in the hand: a king's move may start the kings'
    // gesture, so nothing is taken until the board settles.
    report(&mut t, 300, &[("e1", 0), ("e2", piece::WKING), ("e8", 0)]);
    assert_eq!(t.moves(), ["e4", "e5"], "{:?}", t.kinds());
    // 2... Ke7: both plies at once.
    report(&mut t, 100, &[("e7", piece::BKING)]);
    t.wait(1000);
    assert_eq!(t.moves(), ["e4", "e5", "Ke2", "Ke7"], "{:?}", t.kinds());
}

#[test]
fn a_capture_and_its_recapture_between_two_records_after_a_recorded_capture_are_both_played() {
    let mut t = Table::new(false);
    t.tracker = Tracker::new(TrackerSettings {
        whole_reports: true,
        two_ply_min_distance: 2,
        ..TrackerSettings::default()
    });
    t.tracker.observe(0, &t.board, &mut t.events);
    // 1. d4 Nf6 2. Nc3 d5 3. e4 dxe4, recorded.
    t.play(&[
        ("d2", "d4", piece::WPAWN),
        ("g8", "f6", piece::BKNIGHT),
        ("b1", "c3", piece::WKNIGHT),
        ("d7", "d5", piece::BPAWN),
        ("e2", "e4", piece::WPAWN),
        ("d5", "e4", piece::BPAWN),
    ]);
    t.wait(2000);
    assert_eq!(t.moves().len(), 6, "{:?}", t.kinds());
    // 4. Nxe4 Nxe4 between records: the knight lifted, the pawn taken off, then (the white
    // knight put down and taken off again unseen) the black knight lifted and put down on e4.
    report(&mut t, 350, &[("c3", 0)]);
    report(&mut t, 350, &[("e4", 0)]);
    report(&mut t, 350, &[("f6", 0)]);
    report(&mut t, 350, &[("e4", piece::BKNIGHT)]);
    t.wait(2000);
    assert_eq!(
        t.moves(),
        ["d4", "Nf6", "Nc3", "d5", "e4", "dxe4", "Nxe4", "Nxe4"],
        "{:?}",
        t.kinds()
    );
    assert!(
        t.kinds()
            .iter()
            .all(|k| ["game_started", "move"].contains(k)),
        "{:?}",
        t.kinds()
    );
}

/// A clock read only now and then (a bus polled a second apart), White's on either side (Black
/// chooses, Article 6.4): the first move settles before any running reading, so it owes its
/// press. The clock seen running before that press casts no vote (the lever is a move behind the
/// record), and the press, read late with nothing in hand, is White's: no press is put on the
/// wrong player, and Black's reply is stamped with the clocks of Black's press.
#[test]
fn a_first_move_settled_before_the_clock_ran_owes_its_press_on_either_clock_side() {
    for white_left in [true, false] {
        // The left player's press puts the lever high on the right; White's side is up first.
        let lever_white_to_move = !white_left;
        let reading = |white_ms: u64, black_ms: u64, lever_right_high: bool, running: bool| {
            let (left_ms, right_ms) = if white_left {
                (white_ms, black_ms)
            } else {
                (black_ms, white_ms)
            };
            ClockReading {
                running,
                ..clock(left_ms, right_ms, lever_right_high)
            }
        };
        let mut t = Table::new(false);
        t.read_clock(10, reading(900_000, 900_000, lever_white_to_move, false))
            .play(&[("e2", "e4", piece::WPAWN)]);
        assert_eq!(t.moves(), ["e4"], "White's clock left: {white_left}");
        // Started by now, White's clock running: read before White's press.
        t.read_clock(500, reading(897_000, 900_000, lever_white_to_move, true));
        // White's press (the lever the other way), then Black's clock running.
        t.read_clock(700, reading(906_000, 900_000, !lever_white_to_move, true));
        for k in 1..=3 {
            t.read_clock(
                1000,
                reading(906_000, 900_000 - k * 1000, !lever_white_to_move, true),
            );
        }
        t.mv("e7", "e5", piece::BPAWN)
            .read_clock(200, reading(906_000, 906_000, lever_white_to_move, true))
            .wait(1000);
        assert_eq!(t.moves(), ["e4", "e5"], "White's clock left: {white_left}");
        let irregular: Vec<&TrackerEvent> = t
            .events
            .iter()
            .filter(|e| matches!(e, TrackerEvent::Irregularity { .. }))
            .collect();
        assert!(
            irregular.is_empty(),
            "White's clock left: {white_left}: {irregular:?}"
        );
        let e5 = &t.recorded()[1];
        assert_eq!(
            (e5.clock_white_ms, e5.clock_black_ms),
            (Some(906_000), Some(906_000)),
            "White's clock left: {white_left}"
        );
        assert_eq!(t.tracker.clock_side(), Some(white_left));
    }
}
