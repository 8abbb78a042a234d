//! The board, the position, sowing, and game end ([KG 1–3]).
//!
//! Flow: [`Board`] is the unchecked arrangement (locations as in TGZ-1: 0..8 white's pits 1..9,
//! 9..17 black's pits 1..9; sowing runs from location `i` to `i+1 mod 18`). [`Position`] adds the
//! side to move, the ply count and the [`Rules`]; it is valid by construction. Sowing follows the
//! pseudo-code of the rules summary (section 1.3), which replays the whole corpus.

use std::fmt;

use crate::{Millis, game::Outcome};

/// Pits per row.
pub const PITS: usize = 9;
/// Korgools in a game.
pub const TOTAL: u8 = 162;
/// A store holding this many ends the game ([KG 3.1]).
pub const WIN: u8 = 82;

/// A player: white ("ак") moves first (the wire's, `protocol::tgz`).
pub use crate::protocol::tgz::Side;

mod rules;

pub use rules::{FlagRule, ResultFormat, Rules};

impl Side {
    /// The opponent.
    pub fn other(self) -> Side {
        match self {
            Side::White => Side::Black,
            Side::Black => Side::White,
        }
    }

    /// 0 for white, 1 for black (index into `stores` and `tuz`).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The side whose row holds location `loc` (0..18).
    pub fn of_location(loc: usize) -> Side {
        if loc < PITS { Side::White } else { Side::Black }
    }
}

/// What the sensors of a correctly kept board read: pit counts, stores, tuz marks. Unchecked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    /// Locations 0..8 are white's pits 1..9, 9..17 black's pits 1..9.
    pub pits: [u8; 18],
    /// White's store, black's store.
    pub stores: [u8; 2],
    /// Each player's tuz (white's, black's): its pit number on the opponent's row.
    pub tuz: [Option<u8>; 2],
}

impl Board {
    /// Nine korgools in every pit, empty stores, no tuz.
    pub const START: Board = Board {
        pits: [9; 18],
        stores: [0; 2],
        tuz: [None; 2],
    };

    /// The location (0..18) of `side`'s pit `pit` (1..=9).
    pub fn location(side: Side, pit: u8) -> usize {
        side.index() * PITS + usize::from(pit) - 1
    }

    /// The owner of the tuz at location `loc`, if it is one.
    pub fn tuz_owner(&self, loc: usize) -> Option<Side> {
        let pit = (loc % PITS + 1) as u8;
        // A tuz lies on the row of the player who does not own it.
        let owner = Side::of_location(loc).other();
        (self.tuz[owner.index()] == Some(pit)).then_some(owner)
    }

    /// All korgools on the board and in the stores.
    pub fn total(&self) -> u16 {
        self.pits
            .iter()
            .chain(&self.stores)
            .map(|&n| u16::from(n))
            .sum()
    }

    /// A cheap 64-bit key: equal boards have equal keys.
    pub fn key(&self) -> u64 {
        let word = |b: &[u8]| b.iter().fold(0u64, |w, &x| (w << 8) | u64::from(x));
        let extra = [
            self.stores[0],
            self.stores[1],
            self.tuz[0].unwrap_or(0),
            self.tuz[1].unwrap_or(0),
        ];
        let mut h = 0u64;
        for w in [
            word(&self.pits[0..8]),
            word(&self.pits[8..16]),
            (word(&self.pits[16..18]) << 32) | word(&extra),
        ] {
            h = (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        }
        // splitmix64 finaliser
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }
}

/// Why a [`Board`] is not a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("{0} korgools on the board and in the stores, not 162")]
    Total(u16),
    #[error("a pit holds {0} korgools, more than 162")]
    Count(u8),
    #[error("{side:?}'s tuz is on pit {pit}: a tuz is one of pits 1 to 8 (KG 2.2)")]
    TuzPit { side: Side, pit: u8 },
    #[error("both tuzes are on pit {0} (KG 2.5)")]
    SymmetricTuz(u8),
    #[error("{side:?}'s tuz holds {count} korgools: they belong in its owner's store (KG 2.7)")]
    TuzNotEmpty { side: Side, count: u8 },
}

/// A move: the pit (1..=9, on the mover's own row) sown from. The landing pit follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move(u8);

impl Move {
    /// The move from `pit`, if it is 1..=9.
    pub fn new(pit: u8) -> Option<Move> {
        (1..=9).contains(&pit).then_some(Move(pit))
    }

    /// The pit sown from (1..=9).
    pub fn pit(self) -> u8 {
        self.0
    }
}

/// A set of moves (at most nine), iterated in pit order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MoveList(u16);

impl MoveList {
    pub fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    pub fn contains(&self, mv: Move) -> bool {
        self.0 & (1 << mv.0) != 0
    }
}

impl Iterator for MoveList {
    type Item = Move;

    fn next(&mut self) -> Option<Move> {
        if self.0 == 0 {
            return None;
        }
        let pit = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Some(Move(pit))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }
}

impl ExactSizeIterator for MoveList {}

/// Why a move cannot be played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    #[error("the game is over")]
    GameOver,
    #[error("pit {pit} is empty")]
    EmptyPit { pit: u8 },
    #[error("the first move may not be from pit 1")]
    FirstMoveFromPit1,
}

/// What a sowing did, for notation and for the tracker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sowing {
    pub mv: Move,
    pub side: Side,
    /// Location (0..18) of the last korgool.
    pub landing: u8,
    /// Korgools taken from the landing pit into the mover's store (an even count, or the 3 of
    /// a new tuz).
    pub captured: u8,
    /// The landing pit became the mover's tuz ([KG 2.1]).
    pub tuz_created: bool,
    /// Korgools sown into a tuz and credited to its owner ([KG 2.7]): white's, black's.
    pub into_tuz: [u8; 2],
}

impl Sowing {
    /// The landing pit's number (1..=9) on the row where it lies.
    pub fn landing_pit(&self) -> u8 {
        self.landing % PITS as u8 + 1
    }

    /// The side whose row holds the landing pit.
    pub fn landing_side(&self) -> Side {
        Side::of_location(usize::from(self.landing))
    }
}

/// Why the game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Termination {
    /// A store reached 82 ([KG 3.1–3.2]).
    Store82,
    /// Both stores hold 81 ([KG 3.5]).
    Draw81,
    /// The player to move has no korgool to sow ([KG 3.4]).
    Atsyrau,
    /// One player's flag fell ([KG 3.10]).
    FlagFall,
    /// Both flags fell ([KG 3.8, 5.9]).
    BothFlags,
    /// A player said "I lose" ([KG 3.3]).
    Resignation,
}

impl Termination {
    /// A short name for records (`termination` in exports).
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::Store82 => "store 82",
            Termination::Draw81 => "81:81",
            Termination::Atsyrau => "atsyrau",
            Termination::FlagFall => "flag fall",
            Termination::BothFlags => "both flags",
            Termination::Resignation => "resignation",
        }
    }

    /// The article of the Kyrgyz rules that ends the game this way.
    pub fn article(self) -> &'static str {
        match self {
            Termination::Store82 => "3.1",
            Termination::Draw81 => "3.5",
            Termination::Atsyrau => "3.4",
            Termination::FlagFall => "3.10",
            Termination::BothFlags => "3.8",
            Termination::Resignation => "3.3",
        }
    }
}

/// A finished game: who won, why, and the korgools each side is counted with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameResult {
    pub outcome: Outcome,
    pub termination: Termination,
    /// Korgools counted for white and black under the article that ended the game: the stores,
    /// except on atsyrau and flag fall ([KG 3.4]), where the stuck player keeps his store and the
    /// opponent is counted with everything else.
    pub counted: [u8; 2],
}

impl GameResult {
    /// The winner, if not a draw.
    pub fn winner(&self) -> Option<Side> {
        match self.outcome {
            Outcome::WhiteWins => Some(Side::White),
            Outcome::BlackWins => Some(Side::Black),
            Outcome::Draw => None,
        }
    }

    /// The loser's korgools, written beside a decisive result ([KG 3.2, 7.3]).
    pub fn supplementary_index(&self) -> Option<u8> {
        self.winner().map(|w| self.counted[w.other().index()])
    }
}

/// A legal togyz korgool position: board, side to move, plies played, rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    board: Board,
    turn: Side,
    ply: u16,
    rules: Rules,
}

impl Default for Position {
    fn default() -> Self {
        Position::new()
    }
}

const TURN_KEY: u64 = 0x5be0_cd19_137e_2179;

impl Position {
    /// The start position under the Kyrgyz rules, white to move.
    pub fn new() -> Position {
        Position::with_rules(Rules::KYRGYZ)
    }

    /// The start position under `rules`.
    pub fn with_rules(rules: Rules) -> Position {
        Position {
            board: Board::START,
            turn: Side::White,
            ply: 0,
            rules,
        }
    }

    /// A position from a board, checked: 162 korgools, tuzes on pits 1..=8, not symmetric, empty.
    pub fn from_board(
        board: Board,
        turn: Side,
        ply: u16,
        rules: Rules,
    ) -> Result<Position, SetupError> {
        if let Some(&n) = board.pits.iter().chain(&board.stores).find(|&&n| n > TOTAL) {
            return Err(SetupError::Count(n));
        }
        if board.total() != u16::from(TOTAL) {
            return Err(SetupError::Total(board.total()));
        }
        for side in [Side::White, Side::Black] {
            if let Some(pit) = board.tuz[side.index()] {
                if !(1..=8).contains(&pit) {
                    return Err(SetupError::TuzPit { side, pit });
                }
                let count = board.pits[Board::location(side.other(), pit)];
                if count != 0 {
                    return Err(SetupError::TuzNotEmpty { side, count });
                }
            }
        }
        if let [Some(a), Some(b)] = board.tuz
            && a == b
        {
            return Err(SetupError::SymmetricTuz(a));
        }
        Ok(Position {
            board,
            turn,
            ply,
            rules,
        })
    }

    /// What the sensors should read.
    pub fn board(&self) -> &Board {
        &self.board
    }

    pub fn turn(&self) -> Side {
        self.turn
    }

    /// Plies played since the start (or since the set-up position's ply).
    pub fn ply(&self) -> u16 {
        self.ply
    }

    /// The move number shown on a scoresheet (1 for the first pair of moves).
    pub fn fullmove(&self) -> u16 {
        self.ply / 2 + 1
    }

    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// `side`'s store.
    pub fn store(&self, side: Side) -> u8 {
        self.board.stores[side.index()]
    }

    /// `side`'s pit `pit` (1..=9).
    pub fn pit(&self, side: Side, pit: u8) -> u8 {
        self.board.pits[Board::location(side, pit)]
    }

    /// `side`'s tuz: its pit number on the opponent's row.
    pub fn tuz(&self, side: Side) -> Option<u8> {
        self.board.tuz[side.index()]
    }

    /// A cheap 64-bit key of the full position (board and side to move; not the ply).
    pub fn key(&self) -> u64 {
        match self.turn {
            Side::White => self.board.key(),
            Side::Black => self.board.key() ^ TURN_KEY,
        }
    }

    /// Whether a store reached 82 or both hold 81.
    fn decided(&self) -> bool {
        let [w, b] = self.board.stores;
        w >= WIN || b >= WIN || (w == 81 && b == 81)
    }

    /// The pits the player to move could sow from, ignoring whether the game is over.
    fn sowable(&self) -> MoveList {
        let base = Board::location(self.turn, 1);
        let mut bits = 0u16;
        for p in 1..=9u8 {
            if self.board.pits[base + usize::from(p) - 1] > 0 {
                bits |= 1 << p;
            }
        }
        if self.rules.forbid_first_move_from_pit1 && self.ply == 0 {
            bits &= !(1 << 1);
        }
        MoveList(bits)
    }

    /// The legal moves; none once the game is over.
    pub fn legal_moves(&self) -> MoveList {
        if self.decided() {
            MoveList::default()
        } else {
            self.sowable()
        }
    }

    /// Whether `mv` is legal here.
    pub fn is_legal(&self, mv: Move) -> bool {
        self.legal_moves().contains(mv)
    }

    fn check(&self, mv: Move) -> Result<(), IllegalMove> {
        if self.decided() {
            return Err(IllegalMove::GameOver);
        }
        if self.pit(self.turn, mv.pit()) == 0 {
            return Err(IllegalMove::EmptyPit { pit: mv.pit() });
        }
        if !self.sowable().contains(mv) {
            return Err(IllegalMove::FirstMoveFromPit1);
        }
        Ok(())
    }

    /// Plays a legal move.
    pub fn play(&self, mv: Move) -> Result<Position, IllegalMove> {
        self.check(mv)?;
        Ok(self.play_unchecked(mv).0)
    }

    /// Plays a legal move and says what it did.
    pub fn play_with_info(&self, mv: Move) -> Result<(Position, Sowing), IllegalMove> {
        self.check(mv)?;
        Ok(self.play_unchecked(mv))
    }

    /// Plays `mv` without checking it (an empty pit sows nothing but passes the turn).
    pub fn play_unchecked(&self, mv: Move) -> (Position, Sowing) {
        let side = self.turn;
        let mut b = self.board;
        let start = Board::location(side, mv.pit());
        let n = b.pits[start];
        // [KG 1.2]: a single korgool moves on; otherwise the first goes back into the start pit.
        let k = if n <= 1 {
            b.pits[start] = 0;
            n
        } else {
            b.pits[start] = 1;
            n - 1
        };
        let mut into_tuz = [0u8; 2];
        let mut i = start;
        for _ in 0..k {
            i = (i + 1) % 18;
            match b.tuz_owner(i) {
                Some(owner) => {
                    b.stores[owner.index()] += 1;
                    into_tuz[owner.index()] += 1;
                }
                None => b.pits[i] += 1,
            }
        }
        let mut captured = 0;
        let mut tuz_created = false;
        if k > 0 && Side::of_location(i) != side && b.tuz_owner(i).is_none() {
            let pit = (i % PITS + 1) as u8;
            let count = b.pits[i];
            // [KG 2.1–2.5]: three, no tuz yet, not pit 9, not symmetric to the opponent's.
            if count == 3
                && b.tuz[side.index()].is_none()
                && pit != 9
                && b.tuz[side.other().index()] != Some(pit)
            {
                b.tuz[side.index()] = Some(pit);
                tuz_created = true;
                captured = 3;
            } else if count.is_multiple_of(2) {
                captured = count;
            }
            b.pits[i] -= captured;
            b.stores[side.index()] += captured;
        }
        let after = Position {
            board: b,
            turn: side.other(),
            ply: self.ply.saturating_add(1),
            rules: self.rules,
        };
        let sowing = Sowing {
            mv,
            side,
            landing: i as u8,
            captured,
            tuz_created,
            into_tuz,
        };
        (after, sowing)
    }

    /// The result if the game is over by the position alone: 82, 81:81 or atsyrau.
    pub fn outcome(&self) -> Option<GameResult> {
        let [w, b] = self.board.stores;
        if w >= WIN || b >= WIN {
            let outcome = if w >= WIN {
                Outcome::WhiteWins
            } else {
                Outcome::BlackWins
            };
            return Some(GameResult {
                outcome,
                termination: Termination::Store82,
                counted: [w, b],
            });
        }
        if w == 81 && b == 81 {
            return Some(GameResult {
                outcome: Outcome::Draw,
                termination: Termination::Draw81,
                counted: [81, 81],
            });
        }
        if self.sowable().is_empty() {
            return Some(self.counted_for(self.turn, Termination::Atsyrau));
        }
        None
    }

    /// [KG 3.4]: only `stuck`'s store counts: below 81 he loses, 81 draws, above 81 wins.
    fn counted_for(&self, stuck: Side, termination: Termination) -> GameResult {
        let own = self.store(stuck);
        let mut counted = [0u8; 2];
        counted[stuck.index()] = own;
        counted[stuck.other().index()] = TOTAL - own;
        let winner = match own {
            0..=80 => Some(stuck.other()),
            81 => None,
            _ => Some(stuck),
        };
        GameResult {
            outcome: outcome_of(winner),
            termination,
            counted,
        }
    }

    /// The result when `flagged`'s flag falls in this position (after [`Position::outcome`]).
    pub fn flag_fall(&self, flagged: Side) -> GameResult {
        match self.rules.flag_rule {
            FlagRule::CountStores => self.counted_for(flagged, Termination::FlagFall),
            FlagRule::Forfeit => GameResult {
                outcome: outcome_of(Some(flagged.other())),
                termination: Termination::FlagFall,
                counted: self.board.stores,
            },
        }
    }

    /// The result when both flags have fallen: a draw unless a store holds 82 ([KG 3.8, 5.9]).
    pub fn both_flags(&self) -> GameResult {
        let [w, b] = self.board.stores;
        let winner = if w >= WIN {
            Some(Side::White)
        } else if b >= WIN {
            Some(Side::Black)
        } else {
            None
        };
        GameResult {
            outcome: outcome_of(winner),
            termination: Termination::BothFlags,
            counted: self.board.stores,
        }
    }

    /// The result when `side` resigns: only his store is written ([KG 3.3]).
    pub fn resign(&self, side: Side) -> GameResult {
        GameResult {
            outcome: outcome_of(Some(side.other())),
            termination: Termination::Resignation,
            counted: self.board.stores,
        }
    }
}

fn outcome_of(winner: Option<Side>) -> Outcome {
    match winner {
        Some(Side::White) => Outcome::WhiteWins,
        Some(Side::Black) => Outcome::BlackWins,
        None => Outcome::Draw,
    }
}

/// Leaf count of the move tree to `depth` plies; a finished game is a leaf.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return 1;
    }
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .map(|mv| perft(&pos.play_unchecked(mv).0, depth - 1))
        .sum()
}

impl From<Side> for crate::tracker::Side {
    fn from(side: Side) -> crate::tracker::Side {
        match side {
            Side::White => crate::tracker::Side::White,
            Side::Black => crate::tracker::Side::Black,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::White => "white",
            Side::Black => "black",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perft_shallow() {
        let start = Position::new();
        assert_eq!(perft(&start, 1), 9);
        assert_eq!(perft(&start, 2), 73);
        assert_eq!(perft(&start, 3), 613);
    }

    #[test]
    fn single_korgool_leaves_pit_empty() {
        // 19 from the start, then black 19: white's pit 1 holds one korgool.
        let pos = Position::new();
        let pos = pos.play(Move(1)).and_then(|p| p.play(Move(1))).unwrap();
        assert_eq!(pos.pit(Side::White, 1), 1);
        let (after, sowing) = pos.play_with_info(Move(1)).unwrap();
        assert_eq!(after.pit(Side::White, 1), 0);
        assert_eq!(after.pit(Side::White, 2), 11);
        assert_eq!(
            (sowing.landing_side(), sowing.landing_pit()),
            (Side::White, 2)
        );
    }

    #[test]
    fn first_move_rule_switch() {
        let rules = Rules {
            forbid_first_move_from_pit1: true,
            ..Rules::KYRGYZ
        };
        let pos = Position::with_rules(rules);
        assert_eq!(pos.legal_moves().len(), 8);
        assert_eq!(pos.play(Move(1)), Err(IllegalMove::FirstMoveFromPit1));
        // 32 leaves black's pit 1 full (21 would capture it): black may play it.
        let pos = pos.play(Move(3)).unwrap();
        assert!(pos.is_legal(Move(1)));
    }

    #[test]
    fn keys_differ_by_turn_and_board() {
        let a = Position::new();
        let b = a.play(Move(1)).unwrap();
        assert_ne!(a.key(), b.key());
        assert_ne!(a.board().key(), b.board().key());
        let mut c = Position::new();
        c.turn = Side::Black;
        assert_ne!(a.key(), c.key());
        assert_eq!(a.board().key(), c.board().key());
    }

    #[test]
    fn setup_errors() {
        let mut b = Board::START;
        b.pits[0] = 8;
        assert_eq!(
            Position::from_board(b, Side::White, 0, Rules::KYRGYZ),
            Err(SetupError::Total(161))
        );
        let mut b = Board::START;
        b.pits[9 + 8] = 0;
        b.stores[0] = 9;
        b.tuz[0] = Some(9);
        assert!(matches!(
            Position::from_board(b, Side::White, 0, Rules::KYRGYZ),
            Err(SetupError::TuzPit { .. })
        ));
        let mut b = Board::START;
        b.pits[9 + 3] = 0;
        b.pits[3] = 0;
        b.stores = [9, 9];
        b.tuz = [Some(4), Some(4)];
        assert_eq!(
            Position::from_board(b, Side::White, 0, Rules::KYRGYZ),
            Err(SetupError::SymmetricTuz(4))
        );
    }

    #[test]
    fn rules_helpers() {
        assert!(Rules::KYRGYZ.draw_offer_loses(4));
        assert!(!Rules::KYRGYZ.draw_offer_loses(3));
        assert!(!Rules::KAZAKH.draw_offer_loses(10));
        assert_eq!(Rules::KYRGYZ.late_arrival_limit(3_600_000), Some(1_830_000));
        assert_eq!(Rules::KAZAKH.late_arrival_limit(3_600_000), None);
    }
}
