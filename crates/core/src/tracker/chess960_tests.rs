//! Chess960 in the tracker on hand-made sensor sequences: the 960 start positions (either way
//! round) begin games, and castling is reconstructed in every order hands make it — king first,
//! rook first, king or rook not moving, both in the hands, king and rook swapping squares.

use shakmaty::{CastlingMode, Chess, Position, Square, fen::Fen};

use super::*;
use crate::sensor::dgt::DgtFrames as _;
use crate::{
    game::chess::{ChessGame, chess960_start, chess960_starts, piece_code},
    protocol::dgt::{BoardDump, piece},
    sensor::dgt::ChessSensor,
};

fn settings() -> TrackerSettings {
    TrackerSettings {
        variant: Variant::Chess960,
        ..TrackerSettings::default()
    }
}

/// A position in Chess960 castling mode.
fn position(fen: &str) -> Chess {
    fen.parse::<Fen>()
        .expect("fen")
        .into_position(CastlingMode::Chess960)
        .expect("position")
}

/// The board index (0 = a8) of a square, on a board lying normally or turned round.
fn index(sq: Square, rotated: bool) -> u8 {
    let i = (7 - sq.rank() as u8) * 8 + sq.file() as u8;
    if rotated { i ^ 63 } else { i }
}

fn dump(pos: &Chess, rotated: bool) -> BoardDump {
    let mut d = [piece::EMPTY; 64];
    for (sq, p) in pos.board().iter() {
        d[usize::from(index(sq, rotated))] = piece_code(p);
    }
    BoardDump(d)
}

/// A board with a clock (White's on the left), feeding a Chess960 tracker.
struct Table {
    board: ChessSensor,
    tracker: Tracker<ChessGame>,
    t: Millis,
    events: Vec<TrackerEvent>,
    /// White is to move (the lever is low on the right).
    white_to_move: bool,
}

impl Table {
    /// A game resumed at `fen` (as after a restart), White to move, White's clock running.
    fn at(fen: &str) -> Table {
        let pos = position(fen);
        let tracker =
            Tracker::resume(settings(), Orientation::Normal, Some(pos.clone()), &[], 0).unwrap();
        let mut t = Table {
            board: ChessSensor::default(),
            tracker,
            t: 0,
            events: Vec::new(),
            white_to_move: true,
        };
        t.board.apply_dump(&dump(&pos, false));
        t.tracker.observe(0, &t.board, &mut t.events);
        t.clock_reading();
        t
    }

    /// A fresh tracker, the board showing `pos` (turned round or not).
    fn fresh(pos: &Chess, rotated: bool) -> Table {
        let mut t = Table {
            board: ChessSensor::default(),
            tracker: Tracker::new(settings()),
            t: 0,
            events: Vec::new(),
            white_to_move: true,
        };
        t.board.apply_dump(&dump(pos, rotated));
        t.tracker.observe(0, &t.board, &mut t.events);
        t
    }

    fn clock_reading(&mut self) {
        let reading = ClockReading {
            left_ms: 600_000,
            right_ms: 600_000,
            running: true,
            lever_right_high: !self.white_to_move,
            left_flag: false,
            right_flag: false,
        };
        self.tracker.clock(self.t, reading, &mut self.events);
    }

    /// Sets square `sq` to `code` after `dt` ms.
    fn set(&mut self, dt: Millis, sq: &str, code: u8) -> &mut Self {
        self.t += dt;
        let sq: Square = sq.parse().unwrap();
        if self.board.apply_field(index(sq, false), code) {
            self.tracker.observe(self.t, &self.board, &mut self.events);
        }
        self
    }

    /// The mover presses the clock after `dt` ms; then a second passes.
    fn press(&mut self, dt: Millis) -> &mut Self {
        self.t += dt;
        self.white_to_move = !self.white_to_move;
        self.clock_reading();
        self.wait(1000)
    }

    fn wait(&mut self, dt: Millis) -> &mut Self {
        self.t += dt;
        self.tracker.tick(self.t, &mut self.events);
        self
    }

    /// The live record: (SAN, UCI) per ply.
    fn moves(&self) -> Vec<(String, String)> {
        let mut moves = Vec::new();
        for e in &self.events {
            match e {
                TrackerEvent::Move(m) => moves.push(m.clone()),
                TrackerEvent::Revision { new, .. } => moves[new.ply as usize - 1] = new.clone(),
                TrackerEvent::Takeback { to_ply, .. } => moves.truncate(*to_ply as usize),
                TrackerEvent::GameStarted { .. } => moves.clear(),
                _ => {}
            }
        }
        moves
            .into_iter()
            .map(|m| (m.notation, m.uci.unwrap_or_default()))
            .collect()
    }

    fn irregularities(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, TrackerEvent::Irregularity { .. }))
            .count()
    }
}

const K: u8 = piece::WKING;
const R: u8 = piece::WROOK;

/// One castling made with the hands in `steps` (square, code; 150 ms apart) from `fen`, then
/// the clock pressed: the record is `san` with `uci` (king takes rook), and nothing else.
fn castles(fen: &str, steps: &[(&str, u8)], san: &str, uci: &str) -> Table {
    let mut t = Table::at(fen);
    for &(sq, code) in steps {
        t.set(150, sq, code);
    }
    t.press(200);
    assert_eq!(t.moves(), [(san.to_string(), uci.to_string())], "{steps:?}");
    assert_eq!(t.irregularities(), 0, "{:?}", t.events);
    // The position after it is the castled one.
    let mut pos = position(fen);
    let m = ChessGame::parse_move(&pos, uci).unwrap();
    pos.play_unchecked(m);
    let last = t.events.iter().rev().find_map(|e| match e {
        TrackerEvent::Move(m) | TrackerEvent::Revision { new: m, .. } => Some(m.position.clone()),
        _ => None,
    });
    assert_eq!(last, Some(ChessGame::position_text(&pos)));
    t
}

/// King b1, rook a1: O-O-O takes the king to c1 and the rook to d1 (nothing overlaps).
const QUEENSIDE_B1: &str = "rk6/pppppppp/8/8/8/8/PPPPPPPP/RK6 w Aa - 0 1";

#[test]
fn castling_king_first() {
    // Kc1 is a legal king move on its own: the rook's arrival revises it into O-O-O.
    let steps = [("b1", 0), ("c1", K), ("a1", 0), ("d1", R)];
    castles(QUEENSIDE_B1, &steps, "O-O-O", "b1a1");
}

#[test]
fn castling_rook_first() {
    // Ra1-d1 would jump the king: a transitional board until the king is set down.
    let steps = [("a1", 0), ("d1", R), ("b1", 0), ("c1", K)];
    castles(QUEENSIDE_B1, &steps, "O-O-O", "b1a1");
}

#[test]
fn castling_with_both_pieces_in_the_hands() {
    let steps = [("b1", 0), ("a1", 0), ("d1", R), ("c1", K)];
    castles(QUEENSIDE_B1, &steps, "O-O-O", "b1a1");
}

#[test]
fn castling_with_the_king_already_on_g1_moves_the_rook_only() {
    let steps = [("h1", 0), ("f1", R)];
    castles(
        "6kr/pppppppp/8/8/8/8/PPPPPPPP/6KR w Hh - 0 1",
        &steps,
        "O-O",
        "g1h1",
    );
}

#[test]
fn castling_with_the_rook_already_on_f1_moves_the_king_only() {
    // The king passes its own rook.
    let steps = [("e1", 0), ("g1", K)];
    castles(
        "4kr2/pppppppp/8/8/8/8/PPPPPPPP/4KR2 w Ff - 0 1",
        &steps,
        "O-O",
        "e1f1",
    );
}

#[test]
fn queenside_castling_with_the_rook_already_on_d1_moves_the_king_only() {
    let steps = [("e1", 0), ("c1", K)];
    castles(
        "3rk3/pppppppp/8/8/8/8/PPPPPPPP/3RK3 w Dd - 0 1",
        &steps,
        "O-O-O",
        "e1d1",
    );
}

/// King f1, rook g1: O-O puts the king on g1 and the rook on f1.
const SWAP_F1_G1: &str = "5kr1/pppppppp/8/8/8/8/PPPPPPPP/5KR1 w Gg - 0 1";

#[test]
fn king_and_rook_swap_squares_king_set_down_first() {
    let steps = [("f1", 0), ("g1", 0), ("g1", K), ("f1", R)];
    castles(SWAP_F1_G1, &steps, "O-O", "f1g1");
}

#[test]
fn king_and_rook_swap_squares_rook_set_down_first() {
    let steps = [("g1", 0), ("f1", 0), ("f1", R), ("g1", K)];
    castles(SWAP_F1_G1, &steps, "O-O", "f1g1");
}

#[test]
fn queenside_king_and_rook_swap_squares() {
    // King d1, rook c1: O-O-O puts the king on c1 and the rook on d1.
    let steps = [("c1", 0), ("d1", 0), ("c1", K), ("d1", R)];
    castles(
        "2rk4/pppppppp/8/8/8/8/PPPPPPPP/2RK4 w Cc - 0 1",
        &steps,
        "O-O-O",
        "d1c1",
    );
}

/// King e1, rook g1: the king lands on the rook's square, the rook goes to f1.
const KING_TO_ROOK_SQUARE: &str = "4k1r1/pppppppp/8/8/8/8/PPPPPPPP/4K1R1 w Gg - 0 1";

#[test]
fn king_to_the_rooks_square_rook_first() {
    // Rf1 is a legal rook move on its own: the king's arrival revises it into O-O.
    let steps = [("g1", 0), ("f1", R), ("e1", 0), ("g1", K)];
    castles(KING_TO_ROOK_SQUARE, &steps, "O-O", "e1g1");
}

#[test]
fn king_to_the_rooks_square_both_in_the_hands() {
    let steps = [("e1", 0), ("g1", 0), ("g1", K), ("f1", R)];
    castles(KING_TO_ROOK_SQUARE, &steps, "O-O", "e1g1");
}

/// King f1, rook h1: the rook lands on the king's square.
const ROOK_TO_KING_SQUARE: &str = "5k1r/pppppppp/8/8/8/8/PPPPPPPP/5K1R w Hh - 0 1";

#[test]
fn rook_to_the_kings_square_king_first() {
    let steps = [("f1", 0), ("g1", K), ("h1", 0), ("f1", R)];
    castles(ROOK_TO_KING_SQUARE, &steps, "O-O", "f1h1");
}

#[test]
fn rook_to_the_kings_square_both_in_the_hands() {
    let steps = [("h1", 0), ("f1", 0), ("f1", R), ("g1", K)];
    castles(ROOK_TO_KING_SQUARE, &steps, "O-O", "f1h1");
}

#[test]
fn king_first_so_slowly_that_the_king_move_was_recorded_is_revised() {
    // No clock: Kg1 settles and is recorded, then the rook comes: the ply is revised to O-O.
    let mut t = Table::at(ROOK_TO_KING_SQUARE);
    t.set(150, "f1", 0).set(150, "g1", K).wait(5_000);
    assert_eq!(t.moves(), [("Kg1".to_string(), "f1g1".to_string())]);
    t.set(150, "h1", 0).set(150, "f1", R).wait(5_000);
    assert_eq!(t.moves(), [("O-O".to_string(), "f1h1".to_string())]);
    assert!(
        t.events
            .iter()
            .any(|e| matches!(e, TrackerEvent::Revision { .. }))
    );
}

#[test]
fn black_castles_too() {
    // 1. a3, then Black (king f8, rook g8) castles by swapping.
    let mut t = Table::at(SWAP_F1_G1);
    t.set(150, "a2", 0).set(150, "a3", piece::WPAWN).press(200);
    let (bk, br) = (piece::BKING, piece::BROOK);
    t.set(150, "g8", 0)
        .set(150, "f8", 0)
        .set(150, "g8", bk)
        .set(150, "f8", br)
        .press(200);
    let moves: Vec<String> = t.moves().into_iter().map(|m| m.1).collect();
    assert_eq!(moves, ["a2a3", "f8g8"]);
    assert_eq!(t.irregularities(), 0);
}

#[test]
fn every_960_start_begins_a_game_either_way_round() {
    for (n, pos) in chess960_starts().iter().enumerate() {
        let rotated = n % 2 == 1;
        let t = Table::fresh(pos, rotated);
        let Some(TrackerEvent::GameStarted {
            orientation, start, ..
        }) = t.events.first()
        else {
            panic!("start {n}: {:?}", t.events);
        };
        let want = if rotated {
            Orientation::Rotated
        } else {
            Orientation::Normal
        };
        assert_eq!(*orientation, want, "start {n}");
        assert_eq!(
            start.as_deref(),
            Some(ChessGame::position_text(pos).as_str())
        );
        assert_eq!(t.irregularities(), 0, "start {n}");
    }
}

#[test]
fn a_960_start_set_up_again_after_two_plies_begins_a_new_game() {
    let first = chess960_start(100).unwrap();
    let mut t = Table::fresh(&first, false);
    t.set(150, "a2", 0).set(150, "a3", piece::WPAWN).wait(1000);
    t.set(150, "a7", 0).set(150, "a6", piece::BPAWN).wait(1000);
    assert_eq!(t.moves().len(), 2);
    // Another start is set up (here all at once, as a dump after a reconnect shows it).
    let second = chess960_start(700).unwrap();
    t.board.apply_dump(&dump(&second, false));
    t.t += 500;
    t.tracker.observe(t.t, &t.board, &mut t.events);
    let starts: Vec<Option<String>> = t
        .events
        .iter()
        .filter_map(|e| match e {
            TrackerEvent::GameStarted { start, .. } => Some(start.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        starts,
        [
            Some(ChessGame::position_text(&first)),
            Some(ChessGame::position_text(&second))
        ]
    );
    assert!(t.moves().is_empty());
}

#[test]
fn another_960_start_before_the_first_move_replaces_the_game() {
    let mut t = Table::fresh(&chess960_start(5).unwrap(), false);
    let second = chess960_start(6).unwrap();
    t.board.apply_dump(&dump(&second, false));
    t.t += 500;
    t.tracker.observe(t.t, &t.board, &mut t.events);
    let games = t
        .events
        .iter()
        .filter(|e| matches!(e, TrackerEvent::GameStarted { .. }))
        .count();
    assert_eq!(games, 2);
}

#[test]
fn standard_chess_takes_a_960_start_for_a_wrong_set_up() {
    let mut t = Table::fresh(&chess960_start(0).unwrap(), false);
    t.tracker = Tracker::new(TrackerSettings::default());
    t.events.clear();
    t.tracker.observe(0, &t.board, &mut t.events);
    t.wait(5_000);
    let kinds: Vec<&str> = t.events.iter().map(|e| e.kind()).collect();
    assert_eq!(kinds, ["game_started", "wrong_start_position"]);
    // And the standard start is no wrong set-up under Chess960 (Scharnagl 518).
    let t = Table::fresh(&Chess::default(), false);
    assert!(matches!(
        t.events.as_slice(),
        [TrackerEvent::GameStarted { start: Some(_), .. }]
    ));
}
