//! Repeated positions as possible draw claims (Chylymov's draw position, [KG 3.7, 13.4]).
//!
//! Flow: the tracker [`Repetitions::push`]es every position after a move; a full position (board,
//! stores, tuz, side to move) seen before with no capture in between is returned as a
//! [`PossibleDraw`] for the arbiter. The rules do not define the position precisely, so it is
//! never scored. Stores only grow, so a capture (or a korgool sown into a tuz) changes every later
//! key: the history is cleared whenever a store changes.

use super::Position;

/// A full position that occurred before with no capture in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PossibleDraw {
    /// The ply of the position's first occurrence.
    pub first_ply: u16,
    /// The ply of this occurrence.
    pub ply: u16,
    /// How many times the position has now occurred.
    pub occurrences: u16,
}

/// The positions since the last change of a store (see the module doc).
#[derive(Clone, Debug, Default)]
pub struct Repetitions {
    stores: [u8; 2],
    /// (key, first ply, occurrences)
    seen: Vec<(u64, u16, u16)>,
}

impl Repetitions {
    /// An empty history.
    pub fn new() -> Repetitions {
        Repetitions::default()
    }

    /// Records `pos`; returns a possible draw claim if it repeats a position since the last capture.
    pub fn push(&mut self, pos: &Position) -> Option<PossibleDraw> {
        let stores = pos.board().stores;
        if stores != self.stores {
            self.seen.clear();
            self.stores = stores;
        }
        let key = pos.key();
        if let Some(entry) = self.seen.iter_mut().find(|e| e.0 == key) {
            entry.2 += 1;
            return Some(PossibleDraw {
                first_ply: entry.1,
                ply: pos.ply(),
                occurrences: entry.2,
            });
        }
        self.seen.push((key, pos.ply(), 1));
        None
    }

    /// Forgets everything (a new game).
    pub fn clear(&mut self) {
        self.seen.clear();
        self.stores = [0; 2];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::togyz::{Board, Rules, Side};

    fn pos(pits: [u8; 18], turn: Side, ply: u16) -> Position {
        let board = Board {
            pits,
            stores: [80, 80],
            tuz: [None; 2],
        };
        Position::from_board(board, turn, ply, Rules::KYRGYZ).unwrap()
    }

    #[test]
    fn repeat_without_capture_is_reported_once_per_recurrence() {
        // Set up directly: the same full position at plies 10 and 14, stores unchanged.
        let mut a = [0u8; 18];
        a[0] = 1;
        a[9] = 1;
        let mut b = a;
        b[0] = 0;
        b[1] = 1;
        let mut r = Repetitions::new();
        assert_eq!(r.push(&pos(a, Side::White, 10)), None);
        assert_eq!(r.push(&pos(b, Side::Black, 11)), None);
        assert_eq!(r.push(&pos(a, Side::Black, 12)), None, "other side to move");
        assert_eq!(
            r.push(&pos(a, Side::White, 14)),
            Some(PossibleDraw {
                first_ply: 10,
                ply: 14,
                occurrences: 2
            })
        );
        assert_eq!(
            r.push(&pos(a, Side::White, 18)).map(|d| d.occurrences),
            Some(3)
        );
    }

    #[test]
    fn a_capture_clears_the_history() {
        let mut r = Repetitions::new();
        let start = Position::new();
        assert_eq!(r.push(&start), None);
        let mut a = [0u8; 18];
        a[0] = 1;
        a[9] = 1;
        let board = Board {
            pits: a,
            stores: [79, 81],
            tuz: [None; 2],
        };
        let p = Position::from_board(board, Side::White, 3, Rules::KYRGYZ).unwrap();
        assert_eq!(r.push(&p), None);
        assert_eq!(r.push(&start), None, "stores changed: history cleared");
    }
}
