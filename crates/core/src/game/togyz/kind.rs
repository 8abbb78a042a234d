//! Togyz korgool as a [`GameKind`]: what the tracker needs to follow a pit-sensor board.
//!
//! A [`TogyzReading`] is what the sensors report, already oriented: the 20 location counts
//! (TGZ-1 numbering) and both tuz markers. Korgools sown into a tuz are its owner's ([KG 2.7])
//! and may lie in the tuz pit for a while before the owner carries them to his store, so a reading
//! is compared by its *effective* counts: a marked tuz pit's korgools are added to its owner's
//! store and the pit counts as empty. The key is a Zobrist-style XOR over (location, effective
//! count) and (player, tuz pit); the key after a move is derived from the sowing's path alone.
//! [`departure`](GameKind::departure) tells a sowing or a capture in progress from an illegal
//! sowing (with the [KG] article) and from korgools knocked out of place ([KG 4.2–4.3]).

use std::{fmt, hash::Hash};

use super::{
    Board, Move, PITS, Position, Side, TOTAL,
    notation::{MoveText, board_fen, to_fen},
};
use crate::game::{Departure, GameKind, Kind, Outcome, Variant};
use crate::phrase::Phrase;

/// Locations a board reports: 18 pits and 2 stores.
pub const LOCATIONS: usize = 20;
/// White's store's location (black's is the next one).
pub const STORE: usize = 18;

/// What the sensors of a pit board read, oriented: counts of locations 0..20 (0..8 white's pits
/// 1..9, 9..17 black's, 18 white's store, 19 black's) and each player's tuz marker (the pit on the
/// opponent's row under it, 0 for none). Equality and the key look at the effective counts
/// ([`TogyzReading::effective`]): korgools lying in a marked tuz pit count as its owner's store.
#[derive(Clone, Copy)]
pub struct TogyzReading {
    pub counts: [u8; LOCATIONS],
    pub tuz: [u8; 2],
}

impl TogyzReading {
    /// The location of the pit under `side`'s tuz marker, if any.
    pub fn tuz_location(&self, side: Side) -> Option<usize> {
        tuz_location(side, self.tuz[side.index()])
    }

    /// The counts as the rules see them: every marked tuz pit's korgools moved into its owner's
    /// store, the tuz pit empty.
    pub fn effective(&self) -> [u16; LOCATIONS] {
        let mut e = self.counts.map(u16::from);
        for side in [Side::White, Side::Black] {
            if let Some(loc) = self.tuz_location(side) {
                e[STORE + side.index()] += e[loc];
                e[loc] = 0;
            }
        }
        e
    }

    /// All korgools the sensors see (fewer than 162 while a hand holds some).
    pub fn total(&self) -> u16 {
        self.counts.iter().map(|&n| u16::from(n)).sum()
    }
}

impl PartialEq for TogyzReading {
    fn eq(&self, other: &Self) -> bool {
        self.tuz == other.tuz && self.effective() == other.effective()
    }
}

impl Eq for TogyzReading {}

impl Hash for TogyzReading {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.tuz.hash(state);
        self.effective().hash(state);
    }
}

impl fmt::Debug for TogyzReading {
    /// `W[9 9 9 9 9 9 9 9 9] B[...] K0-0 T0,0`: pits 1..9 of each row, stores, tuz markers.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = |r: &[u8]| {
            r.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        write!(
            f,
            "W[{}] B[{}] K{}-{} T{},{}",
            row(&self.counts[..PITS]),
            row(&self.counts[PITS..2 * PITS]),
            self.counts[STORE],
            self.counts[STORE + 1],
            self.tuz[0],
            self.tuz[1]
        )
    }
}

/// The location of the pit `pit` (1..=9) of the row opposite `owner`, where his tuz lies.
fn tuz_location(owner: Side, pit: u8) -> Option<usize> {
    (1..=9)
        .contains(&pit)
        .then(|| Board::location(owner.other(), pit))
}

/// Counts at or above this share one key entry (a reading that large fits no position).
const COUNT_CAP: usize = TOTAL as usize + 1;

/// Keys for (location, count), count 0 contributing nothing; then (player, tuz pit) in the last
/// two rows, pit 0 (no marker) contributing nothing.
static ZOBRIST: [[u64; COUNT_CAP + 1]; LOCATIONS + 2] = zobrist_table();

const fn zobrist_table() -> [[u64; COUNT_CAP + 1]; LOCATIONS + 2] {
    let mut table = [[0u64; COUNT_CAP + 1]; LOCATIONS + 2];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut loc = 0;
    while loc < LOCATIONS + 2 {
        let mut n = 1;
        while n <= COUNT_CAP {
            // splitmix64
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            table[loc][n] = z ^ (z >> 31);
            n += 1;
        }
        loc += 1;
    }
    table
}

/// The key contribution of effective count `count` at location `loc` (0..20).
#[inline]
pub fn zobrist(loc: usize, count: u16) -> u64 {
    ZOBRIST[loc % LOCATIONS][usize::from(count).min(COUNT_CAP)]
}

/// The key contribution of `side`'s tuz marker on pit `pit` (0: none).
#[inline]
pub fn zobrist_tuz(side: Side, pit: u8) -> u64 {
    ZOBRIST[LOCATIONS + side.index()][usize::from(pit).min(COUNT_CAP)]
}

/// Togyz korgool as a [`GameKind`] (Kyrgyz rules).
pub struct TogyzGame;

/// The key of the reading after `mv` (played from `pos`, key `key`), leading to `after`: only the
/// start pit, the pits the sowing reached, both stores and the mover's tuz marker can change.
fn key_after(pos: &Position, key: u64, mv: Move, after: &Position) -> u64 {
    let (b, a) = (pos.board(), after.board());
    let start = Board::location(pos.turn(), mv.pit());
    let n = usize::from(b.pits[start]);
    // Korgools sown on past the start pit; 17 or more reach every pit.
    let sown_on = if n <= 1 { n } else { n - 1 };
    let reach = sown_on.min(2 * PITS - 1);
    let mut k = key;
    for j in 0..=reach {
        let loc = (start + j) % (2 * PITS);
        k ^= zobrist(loc, b.pits[loc].into()) ^ zobrist(loc, a.pits[loc].into());
    }
    for side in 0..2 {
        k ^= zobrist(STORE + side, b.stores[side].into())
            ^ zobrist(STORE + side, a.stores[side].into());
    }
    let us = pos.turn();
    let (old, new) = (b.tuz[us.index()], a.tuz[us.index()]);
    if old != new {
        k ^= zobrist_tuz(us, old.unwrap_or(0)) ^ zobrist_tuz(us, new.unwrap_or(0));
    }
    k
}

impl GameKind for TogyzGame {
    type Position = Position;
    type Move = Move;
    type Reading = TogyzReading;

    const KIND: Kind = Kind::Togyz;
    const MOVE_SPAN: usize = LOCATIONS;
    const REVISABLE_CONFIRMED_PLIES: usize = 0;

    fn start() -> Position {
        Position::new()
    }

    fn reading(pos: &Position) -> TogyzReading {
        let b = pos.board();
        let mut counts = [0u8; LOCATIONS];
        counts[..2 * PITS].copy_from_slice(&b.pits);
        counts[STORE..].copy_from_slice(&b.stores);
        TogyzReading {
            counts,
            tuz: b.tuz.map(|t| t.unwrap_or(0)),
        }
    }

    fn reading_key(reading: &TogyzReading) -> u64 {
        let e = reading.effective();
        let mut k =
            zobrist_tuz(Side::White, reading.tuz[0]) ^ zobrist_tuz(Side::Black, reading.tuz[1]);
        for (loc, &n) in e.iter().enumerate() {
            k ^= zobrist(loc, n);
        }
        k
    }

    fn successors(pos: &Position, key: u64, out: &mut Vec<(u64, Move)>) {
        out.clear();
        for mv in pos.legal_moves() {
            let (after, _) = pos.play_unchecked(mv);
            out.push((key_after(pos, key, mv, &after), mv));
        }
    }

    fn play(pos: &Position, mv: &Move) -> Position {
        pos.play_unchecked(*mv).0
    }

    fn notation(pos: &Position, mv: &Move, _after: &Position, _after_has_moves: bool) -> String {
        MoveText::from_sowing(&pos.play_unchecked(*mv).1).to_string()
    }

    fn uci(_pos: &Position, _mv: &Move) -> Option<String> {
        None
    }

    fn position_text(pos: &Position) -> String {
        to_fen(pos)
    }

    /// A FEN of the effective counts (korgools in a marked tuz pit in its owner's store), white
    /// to move: the sensors do not say whose turn it is.
    fn reading_text(reading: &TogyzReading) -> String {
        let e = reading.effective();
        let count = |n: u16| u8::try_from(n).unwrap_or(u8::MAX);
        let board = Board {
            pits: std::array::from_fn(|loc| count(e[loc])),
            stores: [count(e[STORE]), count(e[STORE + 1])],
            tuz: reading.tuz.map(|pit| (pit > 0).then_some(pit)),
        };
        board_fen(&board, Side::White, 1)
    }

    fn parse_move(pos: &Position, text: &str) -> Option<Move> {
        let text: MoveText = text.trim().parse().ok()?;
        text.to_move(pos).ok().map(|(_, s)| s.mv)
    }

    fn outcome(pos: &Position, _has_moves: bool) -> Option<(Outcome, &'static str)> {
        pos.outcome().map(|r| (r.outcome, r.termination.as_str()))
    }

    fn reading_distance(a: &TogyzReading, b: &TogyzReading) -> usize {
        let (ea, eb) = (a.effective(), b.effective());
        let pits = ea.iter().zip(&eb).filter(|(x, y)| x != y).count();
        pits + a.tuz.iter().zip(&b.tuz).filter(|(x, y)| x != y).count()
    }

    fn departure(
        pos: &Position,
        succ: &[(u64, Move)],
        reading: &TogyzReading,
        pressed: bool,
    ) -> Departure {
        departure(pos, succ, reading, pressed)
    }

    fn wrong_setup(reading: &TogyzReading, _variant: Variant) -> Option<Phrase> {
        let start = TogyzGame::reading(&Position::new());
        // Every pit near nine: a miscount while setting up, not a game under way (a game without
        // a capture yet always has a pit sown from, holding one or two).
        let set_up = reading.tuz == [0, 0]
            && reading.counts[STORE..] == [0, 0]
            && reading.total() == u16::from(TOTAL)
            && reading.counts[..2 * PITS]
                .iter()
                .all(|n| (6..=12).contains(n));
        if !set_up || *reading == start {
            return None;
        }
        let wrong: Vec<Phrase> = (0..2 * PITS)
            .filter(|&l| reading.counts[l] != 9)
            .map(|l| {
                Phrase::new("togyz.count")
                    .phrase("pit", pit_name(l))
                    .number("count", reading.counts[l])
            })
            .collect();
        Some(Phrase::new("togyz.wrong_setup").list("pits", wrong))
    }
}

/// `white's pit 4`.
fn pit_name(loc: usize) -> Phrase {
    Phrase::new("togyz.pit")
        .side("side", Side::of_location(loc))
        .number("number", (loc % PITS + 1) as u64)
}

/// How a sensed board relates to one legal move.
enum Progress {
    /// Not this move.
    No,
    /// Part-way: korgools lifted, partly sown, a capture partly carried.
    PartWay,
    /// Sown completely, nothing left in the hand, but the capture (or tuz) not taken.
    CaptureNotTaken,
}

/// The effective counts and tuz markers of the reading of `pos`.
fn expected(pos: &Position) -> ([u16; LOCATIONS], [u8; 2]) {
    let r = TogyzGame::reading(pos);
    (r.effective(), r.tuz)
}

/// The board after `mv`'s sowing, before its capture or tuz.
fn sown(pos: &Position, mv: Move) -> (Position, [u16; LOCATIONS], super::Sowing) {
    let (after, s) = pos.play_unchecked(mv);
    let (mut mid, _) = expected(&after);
    let us = s.side.index();
    mid[usize::from(s.landing)] += u16::from(s.captured);
    mid[STORE + us] -= u16::from(s.captured);
    (after, mid, s)
}

/// Whether `r` is `mv` from `pos` under way: the start pit lifted, every other location between
/// where it was and where the sowing takes it (a capture's pit anywhere down to empty, stores
/// between before and after), the tuz markers as before or as after, no korgool more than 162.
fn progress(pos: &Position, mv: Move, r: &TogyzReading) -> Progress {
    let (e, tuz) = expected(pos);
    let (after, mid, s) = sown(pos, mv);
    let (a, tuz_after) = expected(&after);
    let rn = r.effective();
    if r.total() > u16::from(TOTAL) || (r.tuz != tuz && r.tuz != tuz_after) {
        return Progress::No;
    }
    let start = Board::location(s.side, mv.pit());
    let landing = usize::from(s.landing);
    // Once a korgool has been sown, the start pit holds only what the sowing put back into it
    // (the korgools are lifted all at once).
    let sowing_begun = (0..LOCATIONS).any(|l| l != start && rn[l] != e[l]);
    let fits = (0..LOCATIONS).all(|l| {
        let v = rn[l];
        if l == start && sowing_begun {
            v <= mid[l]
        } else if l == start {
            v < e[l]
        } else if l >= STORE {
            e[l] <= v && v <= a[l]
        } else if l == landing && s.captured > 0 {
            v <= mid[l]
        } else {
            e[l] <= v && v <= mid[l]
        }
    });
    if !fits {
        return Progress::No;
    }
    if s.captured > 0 && rn == mid && r.tuz == tuz {
        Progress::CaptureNotTaken
    } else {
        Progress::PartWay
    }
}

fn departure(pos: &Position, succ: &[(u64, Move)], r: &TogyzReading, pressed: bool) -> Departure {
    let (e, tuz) = expected(pos);
    let rn = r.effective();
    if rn == e && r.tuz == tuz {
        return Departure::InProgress;
    }
    for (_, mv) in succ {
        match progress(pos, *mv, r) {
            Progress::No => {}
            Progress::PartWay => return Departure::InProgress,
            Progress::CaptureNotTaken if !pressed => return Departure::InProgress,
            Progress::CaptureNotTaken => {
                let (_, _, s) = sown(pos, *mv);
                let pit = pit_name(usize::from(s.landing));
                let detail = if s.tuz_created {
                    Phrase::new("togyz.tuz_not_taken")
                } else {
                    Phrase::new("togyz.korgools_not_taken").number("count", s.captured)
                };
                let detail = detail
                    .text("move", MoveText::from_sowing(&s))
                    .phrase("pit", pit);
                return Departure::IllegalMove { detail };
            }
        }
    }
    if r.total() == u16::from(TOTAL)
        && let Some(detail) = illegal_sowing(pos, &e, &tuz, r)
    {
        return Departure::IllegalMove { detail };
    }
    Departure::Displaced {
        detail: Phrase::new("togyz.displaced").phrase("changes", describe(&e, &tuz, r)),
    }
}

/// The locations (and markers) where `r` differs from the expected effective counts.
fn describe(e: &[u16; LOCATIONS], tuz: &[u8; 2], r: &TogyzReading) -> Phrase {
    let rn = r.effective();
    let mut parts: Vec<Phrase> = (0..LOCATIONS)
        .filter(|&l| rn[l] != e[l])
        .map(|l| {
            let name = if l >= STORE {
                Phrase::new("togyz.store").side("side", side_of_store(l))
            } else {
                pit_name(l)
            };
            Phrase::new("togyz.change")
                .phrase("place", name)
                .number("was", e[l])
                .number("now", rn[l])
        })
        .collect();
    for side in [Side::White, Side::Black] {
        let i = side.index();
        if r.tuz[i] != tuz[i] {
            parts.push(
                Phrase::new("togyz.tuz_marker")
                    .side("side", side)
                    .number("was", tuz[i])
                    .number("now", r.tuz[i]),
            );
        }
    }
    Phrase::of_list(parts)
}

fn side_of_store(l: usize) -> Side {
    if l == STORE { Side::White } else { Side::Black }
}

/// A complete board (162 korgools seen) that one sowing of the side to move explains, but not
/// as the rules sow: what was wrong, with the article.
fn illegal_sowing(
    pos: &Position,
    e: &[u16; LOCATIONS],
    tuz: &[u8; 2],
    r: &TogyzReading,
) -> Option<Phrase> {
    let us = pos.turn();
    let rn = r.effective();
    let b = pos.board();
    let ring = 2 * PITS;
    let own = |l: usize| Side::of_location(l) == us;
    let is_tuz = |l: usize| b.tuz_owner(l).is_some();
    // Korgools taken from the mover's own pits.
    let lifted: Vec<usize> = (0..ring)
        .filter(|&l| own(l) && !is_tuz(l) && rn[l] < e[l])
        .collect();
    if let [start] = lifted[..] {
        let mv = Move::new((start % PITS + 1) as u8)?;
        return wrong_shape(pos, mv, r);
    }
    if !lifted.is_empty() {
        return None;
    }
    // Nothing lifted from the mover's pits: korgools sown on from somewhere else, one into each
    // pit after it (all the korgools that left their place went into the pits that follow).
    let rise = |p: usize| rn[p].saturating_sub(e[p]);
    let fall = |p: usize| e[p].saturating_sub(rn[p]);
    let risen: u16 = (0..ring).map(rise).sum();
    let sown_after = |l: usize| {
        let run = (1..ring).take_while(|j| rise((l + j) % ring) == 1).count();
        run > 0 && usize::from(risen) == run
    };
    for l in 0..ring {
        if !sown_after(l) {
            continue;
        }
        if let Some(owner) = b.tuz_owner(l) {
            if fall(STORE + owner.index()) == risen {
                return Some(Phrase::new("togyz.sowing_from_tuz").phrase("pit", pit_name(l)));
            }
        } else if !own(l) && rn[l] <= 1 && fall(l) == risen {
            return Some(Phrase::new("togyz.sowing_from_opponent").phrase("pit", pit_name(l)));
        } else if own(l) && e[l] == 0 && (0..ring).all(|p| fall(p) == 0) {
            return Some(Phrase::new("togyz.sowing_from_empty").phrase("pit", pit_name(l)));
        }
    }
    if r.tuz != *tuz {
        return Some(Phrase::new("togyz.tuz_marker_no_tuz").phrase("changes", describe(e, tuz, r)));
    }
    None
}

/// The sowing from `mv`'s pit as the board shows it, compared with the rules' sowing: the first
/// pit along the path that holds too few or too many korgools, a capture the rules do not give,
/// or a tuz marker where no tuz was won.
fn wrong_shape(pos: &Position, mv: Move, r: &TogyzReading) -> Option<Phrase> {
    let (e, tuz) = expected(pos);
    let (after, mid, s) = sown(pos, mv);
    let (a, tuz_after) = expected(&after);
    let rn = r.effective();
    let b = pos.board();
    let ring = 2 * PITS;
    let start = Board::location(s.side, mv.pit());
    let n = b.pits[start];
    // The korgools were lifted out of the start pit (at most one put back too many).
    if rn[start] > mid[start] + 1 {
        return None;
    }
    let sowing = |what: Phrase| {
        Phrase::new("togyz.sowing")
            .phrase("pit", pit_name(start))
            .phrase("what", what)
    };
    let store = STORE + s.side.index();
    // A pit emptied into the mover's store that the rules do not capture.
    let gained = rn[store].saturating_sub(a[store].max(mid[store]));
    if gained > 0
        && let Some(x) = (0..ring).find(|&x| {
            x != start && rn[x] == 0 && mid[x] > 0 && (mid[x] == gained || mid[x] + 3 == gained)
        })
    {
        let why = if Side::of_location(x) == s.side {
            "togyz.taken_own_side"
        } else if usize::from(s.landing) != x {
            "togyz.taken_not_last"
        } else {
            "togyz.taken_odd"
        };
        return Some(sowing(Phrase::new(why).phrase("pit", pit_name(x))));
    }
    if r.tuz != tuz && r.tuz != tuz_after {
        return Some(sowing(
            Phrase::new("togyz.tuz_marker_no_tuz").phrase("changes", describe(&e, &tuz, r)),
        ));
    }
    for j in 0..ring {
        let l = (start + j) % ring;
        if b.tuz_owner(l).is_some() {
            continue;
        }
        let (v, want) = (rn[l], mid[l]);
        let taken = l == usize::from(s.landing) && s.captured > 0 && v == a[l];
        if v == want || taken {
            continue;
        }
        return Some(sowing(if j == 0 && v < want {
            Phrase::new("togyz.first_not_put_back").phrase("pit", pit_name(l))
        } else if j == 0 && n == 1 {
            Phrase::new("togyz.single_goes_on")
        } else if v < want {
            Phrase::new("togyz.skipped").phrase("pit", pit_name(l))
        } else {
            Phrase::new("togyz.two_put").phrase("pit", pit_name(l))
        }));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(pos: &Position, pits: &[u8]) -> Position {
        pits.iter()
            .fold(*pos, |p, &m| p.play(Move::new(m).unwrap()).unwrap())
    }

    fn key_of(pos: &Position) -> u64 {
        TogyzGame::reading_key(&TogyzGame::reading(pos))
    }

    #[test]
    fn successor_keys_match_played_readings() {
        // Random games from the start, seeded: every successor's key is the key of its reading.
        let mut seed = 0x1234_5678_u64;
        // Sowings that go round the board (a bai of 18 or more) touch every pit.
        let mut wraps = 0;
        for _ in 0..60 {
            let mut pos = Position::new();
            let mut succ = Vec::new();
            for _ in 0..150 {
                let key = key_of(&pos);
                TogyzGame::successors(&pos, key, &mut succ);
                if succ.is_empty() {
                    break;
                }
                for (k, mv) in &succ {
                    wraps += usize::from(pos.pit(pos.turn(), mv.pit()) >= 18);
                    let after = TogyzGame::play(&pos, mv);
                    assert_eq!(*k, key_of(&after), "{} {mv:?}", to_fen(&pos));
                }
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                pos = TogyzGame::play(&pos, &succ[(seed >> 33) as usize % succ.len()].1);
            }
        }
        assert!(wraps > 0);
    }

    #[test]
    fn tuz_pit_and_store_are_one_quantity() {
        // The cross-check vector `45X` (rules summary section 5): black's tuz on white's pit 5.
        let pos = play(&Position::new(), &[6, 6, 9, 8, 2, 4]);
        assert_eq!(pos.tuz(Side::Black), Some(5));
        let r = TogyzGame::reading(&pos);
        // Two korgools sown into the tuz, left there instead of in black's store.
        let mut left = r;
        left.counts[Board::location(Side::White, 5)] = 2;
        left.counts[STORE + 1] -= 2;
        assert_eq!(left, r);
        assert_eq!(TogyzGame::reading_key(&left), TogyzGame::reading_key(&r));
        assert_eq!(TogyzGame::reading_distance(&left, &r), 0);
        // The same korgools in any other pit are a different board; so is a missing marker.
        let mut other = r;
        other.counts[Board::location(Side::White, 4)] += 2;
        other.counts[STORE + 1] -= 2;
        assert_ne!(other, r);
        assert_ne!(TogyzGame::reading_key(&other), TogyzGame::reading_key(&r));
        let mut unmarked = left;
        unmarked.tuz[1] = 0;
        assert_ne!(unmarked, r);
        assert_eq!(TogyzGame::reading_distance(&unmarked, &r), 3);
    }

    #[test]
    fn notation_parse_and_outcome() {
        let pos = Position::new();
        let mv = TogyzGame::parse_move(&pos, "76").unwrap();
        let after = TogyzGame::play(&pos, &mv);
        assert_eq!(TogyzGame::notation(&pos, &mv, &after, true), "76");
        assert_eq!(
            TogyzGame::parse_move(&pos, "77"),
            None,
            "wrong landing digit"
        );
        assert_eq!(TogyzGame::parse_move(&pos, "7"), None);
        assert_eq!(TogyzGame::uci(&pos, &mv), None);
        assert_eq!(
            TogyzGame::position_text(&after),
            "9S,9S,9S,1,10S,10S,10S,10S,10S/9S,9S,9S,9S,9S,9S,1S,10S,10S 10 0 N 1"
        );
        let tuz = play(&pos, &[6, 6, 9, 8, 2]);
        let mv = TogyzGame::parse_move(&tuz, "45X").unwrap();
        assert_eq!(TogyzGame::parse_move(&tuz, "45"), None, "the X is required");
        let after = TogyzGame::play(&tuz, &mv);
        assert_eq!(TogyzGame::notation(&tuz, &mv, &after, true), "45X");
        assert_eq!(TogyzGame::outcome(&pos, true), None);
    }

    #[test]
    fn outcome_at_82_and_atsyrau() {
        // The atsyrau draw of rules summary section 5 (PlayOK 9283413).
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/corpus/togyz/playok-2025.pgn"
        ))
        .unwrap();
        let records = super::super::notation::parse_records(&text).unwrap();
        let mut seen = [false; 2];
        for rec in &records {
            let replayed = rec.replay(super::super::Rules::KYRGYZ).unwrap();
            let last = replayed.last();
            let has_moves = !last.legal_moves().is_empty();
            let Some((outcome, term)) = TogyzGame::outcome(last, has_moves) else {
                continue;
            };
            assert_eq!(Some(outcome), rec.result.and_then(|r| r.outcome));
            match term {
                "store 82" => seen[0] = true,
                "atsyrau" => seen[1] = true,
                t => assert_eq!(t, "81:81"),
            }
        }
        assert_eq!(seen, [true, true]);
    }

    #[test]
    fn wrong_setup_is_a_full_board_not_nine_each() {
        let start = TogyzGame::reading(&Position::new());
        assert_eq!(TogyzGame::wrong_setup(&start, Variant::Standard), None);
        let mut r = start;
        r.counts[2] = 8;
        r.counts[12] = 10;
        let detail = TogyzGame::wrong_setup(&r, Variant::Standard).unwrap();
        assert!(detail.to_string().contains("white's pit 3: 8"), "{detail}");
        assert!(detail.to_string().contains("black's pit 4: 10"), "{detail}");
        // Not complete (a hand holds one), or a game under way: not a set-up.
        r.counts[12] = 9;
        assert_eq!(TogyzGame::wrong_setup(&r, Variant::Standard), None);
        let played = TogyzGame::reading(&play(&Position::new(), &[7]));
        assert_eq!(TogyzGame::wrong_setup(&played, Variant::Standard), None);
        // 19 then 99: no capture, stores empty, but white's pit 1 was sown from.
        let played = TogyzGame::reading(&play(&Position::new(), &[1, 9]));
        assert_eq!(played.counts[STORE..], [0, 0]);
        assert_eq!(TogyzGame::wrong_setup(&played, Variant::Standard), None);
    }

    fn depart(pos: &Position, r: &TogyzReading, pressed: bool) -> Departure {
        let mut succ = Vec::new();
        TogyzGame::successors(pos, key_of(pos), &mut succ);
        TogyzGame::departure(pos, &succ, r, pressed)
    }

    fn illegal(d: Departure) -> String {
        match d {
            Departure::IllegalMove { detail } => detail.to_string(),
            d => panic!("not an illegal move: {d:?}"),
        }
    }

    #[test]
    fn sowing_and_capture_in_progress() {
        let pos = Position::new();
        let mut r = TogyzGame::reading(&pos);
        // 76: pit 7 lifted, two korgools sown, the rest in the hand.
        r.counts[6] = 0;
        assert_eq!(depart(&pos, &r, false), Departure::InProgress);
        r.counts[6] = 1;
        r.counts[7] = 10;
        r.counts[8] = 10;
        assert_eq!(depart(&pos, &r, true), Departure::InProgress);
        // Sown completely: black's pit 6 holds 10, not yet taken.
        r.counts[9..14].fill(10);
        r.counts[14] = 10;
        assert_eq!(r.total(), 162);
        assert_eq!(depart(&pos, &r, false), Departure::InProgress);
        // Carried in handfuls: the pit empty before the store rises, then the store rises.
        r.counts[14] = 0;
        assert_eq!(depart(&pos, &r, false), Departure::InProgress);
        r.counts[STORE] = 6;
        assert_eq!(depart(&pos, &r, false), Departure::InProgress);
        // At a press with nothing taken: the capture was not taken.
        r.counts[14] = 10;
        r.counts[STORE] = 0;
        let detail = illegal(depart(&pos, &r, true));
        assert_eq!(
            detail,
            "76: the 10 korgools of black's pit 6 not taken (KG 1.3)"
        );
    }

    #[test]
    fn tuz_not_taken_at_a_press() {
        let pos = play(&Position::new(), &[6, 6, 9, 8, 2]);
        let (after, mid, _) = sown(&pos, Move::new(4).unwrap());
        assert_eq!(after.tuz(Side::Black), Some(5));
        let mut r = TogyzGame::reading(&pos);
        for (c, &m) in r.counts.iter_mut().zip(&mid) {
            *c = m as u8;
        }
        let detail = illegal(depart(&pos, &r, true));
        assert!(
            detail
                .to_string()
                .starts_with("45X: the tuz on white's pit 5 not taken (KG 2.1, 2.6")
        );
        // The marker set on the three korgools: the tuz is taken (they count as black's store).
        r.tuz[1] = 5;
        assert_eq!(r, TogyzGame::reading(&after));
    }

    #[test]
    fn illegal_sowing_shapes() {
        let pos = Position::new();
        let start = TogyzGame::reading(&pos);
        // 76 with black's pit 2 skipped: the sowing ends in black's pit 7 (10), taken.
        let mut r = start;
        r.counts[6] = 1;
        r.counts[7] = 10;
        r.counts[8] = 10;
        r.counts[9] = 10;
        r.counts[11..15].fill(10);
        r.counts[15] = 0;
        r.counts[STORE] = 10;
        let d = illegal(depart(&pos, &r, true));
        assert_eq!(
            d,
            "sowing from white's pit 7: black's pit 2 skipped (KG 1.1: one korgool into each pit)"
        );
        // Two korgools into black's pit 1, the sowing ending one pit short (pit 5 even: 10).
        let mut r = start;
        r.counts[6] = 1;
        r.counts[7] = 10;
        r.counts[8] = 10;
        r.counts[9] = 11;
        r.counts[10..13].fill(10);
        r.counts[13] = 0;
        r.counts[STORE] = 10;
        let d = illegal(depart(&pos, &r, true));
        assert!(d.contains("two korgools put into black's pit 1"), "{d}");
        // The first korgool not put back: white's pit 7 empty, one more pit sown.
        let mut r = start;
        r.counts[6] = 0;
        r.counts[7] = 10;
        r.counts[8] = 10;
        r.counts[9..16].fill(10);
        r.counts[15] = 0;
        r.counts[STORE] = 10;
        let d = illegal(depart(&pos, &r, true));
        assert!(
            d.contains("first korgool not put back into white's pit 7 (KG 1.2)"),
            "{d}"
        );
        // Sowing from the opponent's pit: black's pit 1 taken and sown on by white.
        let mut r = start;
        r.counts[9] = 1;
        r.counts[10..18].fill(10);
        let d = illegal(depart(&pos, &r, true));
        assert!(
            d.contains("sowing from black's pit 1, the opponent's pit (KG 1.1"),
            "{d}"
        );
    }

    #[test]
    fn sowing_from_a_tuz_and_from_an_empty_pit() {
        // Black's tuz on white's pit 5 (45X); white to move. Two korgools left in the tuz pit are
        // black's; white sows them on (pits 6 and 7).
        let pos = play(&Position::new(), &[6, 6, 9, 8, 2, 4]);
        assert_eq!(pos.turn(), Side::White);
        let mut r = TogyzGame::reading(&pos);
        r.counts[STORE + 1] -= 2;
        r.counts[5] += 1;
        r.counts[6] += 1;
        let d = illegal(depart(&pos, &r, true));
        assert!(d.starts_with("sowing from the tuz on white's pit 5"), "{d}");
        assert!(d.contains("KG 2.7"), "{d}");
        // 76 76 leaves white's pit 6 empty (black took its 10); white "sows" from it with two
        // korgools taken from his store.
        let pos = play(&Position::new(), &[7, 7]);
        assert_eq!(pos.pit(Side::White, 6), 0);
        let mut r = TogyzGame::reading(&pos);
        r.counts[STORE] -= 2;
        r.counts[6] += 1;
        r.counts[7] += 1;
        let d = illegal(depart(&pos, &r, true));
        assert!(d.contains("white's pit 6, which is empty (KG 1.2)"), "{d}");
    }

    #[test]
    fn knocked_korgools_are_displaced() {
        let pos = play(&Position::new(), &[7, 7]);
        let mut r = TogyzGame::reading(&pos);
        // A korgool knocked from black's pit 3 into black's pit 4 (black is not to move).
        r.counts[11] -= 1;
        r.counts[12] += 1;
        match depart(&pos, &r, false) {
            Departure::Displaced { detail } => {
                assert!(
                    detail.to_string().contains("black's pit 3: 10 → 9"),
                    "{detail}"
                );
                assert!(detail.to_string().contains("KG 4.2–4.3"), "{detail}");
            }
            d => panic!("{d:?}"),
        }
        // A korgool off the board altogether, nothing lifted: displaced too.
        let mut r = TogyzGame::reading(&pos);
        r.counts[STORE] -= 1;
        assert!(matches!(
            depart(&pos, &r, false),
            Departure::Displaced { .. }
        ));
    }
}
