//! The tracker's belief: the positions of the game as the board has shown them ([`Node`]: a
//! position, its key and its successors, computed once), the record and the provisional moves
//! beyond it ([`GameState`]), what the board shows that nothing explains yet ([`Unexplained`]) and
//! a game lost after a gap ([`Lost`]). Plain data and the operations that keep it consistent.

use super::{interpret::find, search::Candidates, *};
use crate::game::{PLIES_RESERVED, list_from_start};

/// A board that fits nothing the tracker knows.
pub(super) struct Unexplained<G: GameKind> {
    pub(super) reading: G::Reading,
    pub(super) since: Millis,
    /// It has been looked at for irregularities (reported or found harmless).
    pub(super) judged: bool,
    /// Not to be judged again before this (pieces missing wait for the longer window).
    pub(super) not_before: Millis,
}

/// A game whose board was not heard for a while (a gap: a reconnect, a restart, a silence):
/// the record is all that is known, and the board is compared with it, and searched from it,
/// until it fits again. Nothing is judged meanwhile: the record lags the board, so a press or a
/// board unexplained is no evidence against a player.
pub(super) struct Lost {
    /// When the gap began.
    pub(super) since: Millis,
    /// Since when the board, heard again, has fitted nothing.
    pub(super) unexplained_since: Option<Millis>,
    /// The `thread_lost` irregularity raised, if any.
    pub(super) reported: Option<u32>,
    /// What the search last found on a board that fitted nothing.
    pub(super) found: Option<GapSearch>,
    /// How deep that search looked, and whether the presses heard since an arbiter's decision
    /// set the depth (else the settings' `gap_plies`).
    pub(super) depth: Option<(usize, bool)>,
    /// The clock showed presses the board does not explain: only the arbiter ends the gap.
    pub(super) clock_disagrees: bool,
    /// The board was heard all along, and went where no move from the record reaches (play
    /// faster than its readings, a run of plies between two): no gap, the record lost track.
    pub(super) heard: bool,
}

/// A position's legal moves with the keys they lead to, and the filter of those keys.
pub(super) type Successors<M> = (Vec<(u64, M)>, KeyFilter);

pub(super) struct Node<G: GameKind> {
    pub(super) pos: G::Position,
    pub(super) key: u64,
    /// Legal moves from `pos` with the keys they lead to, and their keys' filter, computed on
    /// first use.
    pub(super) succ: OnceCell<Successors<G::Move>>,
    /// What the sensors should read for `pos`, computed on first use.
    pub(super) reading: OnceCell<G::Reading>,
}

impl<G: GameKind> Node<G> {
    pub(super) fn new(pos: G::Position, key: u64) -> Self {
        Node {
            pos,
            key,
            succ: OnceCell::new(),
            reading: OnceCell::new(),
        }
    }

    pub(super) fn with_reading(pos: G::Position, key: u64, reading: G::Reading) -> Self {
        Node {
            pos,
            key,
            succ: OnceCell::new(),
            reading: OnceCell::from(reading),
        }
    }

    pub(super) fn successors(&self) -> &[(u64, G::Move)] {
        &self.successors_filtered().0
    }

    /// The successors, if they have been computed (none are computed here).
    pub(super) fn successors_if_computed(&self) -> Option<&[(u64, G::Move)]> {
        self.succ.get().map(|(list, _)| list.as_slice())
    }

    fn successors_filtered(&self) -> &Successors<G::Move> {
        self.succ.get_or_init(|| {
            let mut v = Vec::new();
            G::successors(&self.pos, self.key, &mut v);
            let filter = KeyFilter::of(&v);
            (v, filter)
        })
    }

    /// The first legal move from here that leads to `key` ([`find`] over the successors): most
    /// keys asked for (a piece lifted, a move under way) lead from no successor, and the filter
    /// tells most of them so without a look at the list.
    pub(super) fn successor_to(&self, key: u64) -> Option<G::Move> {
        let (list, filter) = self.successors_filtered();
        if !filter.may_hold(key) {
            return None;
        }
        find(list, key)
    }

    pub(super) fn reading(&self) -> &G::Reading {
        self.reading.get_or_init(|| G::reading(&self.pos))
    }

    /// The legal move from here that leads to `key`, checked against the full reading.
    pub(super) fn move_to<'r>(
        &self,
        key: u64,
        reading: impl FnOnce() -> &'r G::Reading,
    ) -> Option<(G::Move, Node<G>)>
    where
        G::Reading: 'r,
    {
        let mv = self.successor_to(key)?;
        let pos = G::play(&self.pos, &mv);
        let expected = G::reading(&pos);
        (expected == *reading()).then(|| (mv, Node::with_reading(pos, key, expected)))
    }
}

/// A set of keys, summarised in 64 bits: bit `key >> 58` set for each key in it. A key whose
/// bit is clear is not in the set; one whose bit is set may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct KeyFilter(u64);

impl KeyFilter {
    /// The filter of the keys in `list`.
    pub(super) fn of<M>(list: &[(u64, M)]) -> Self {
        KeyFilter(list.iter().fold(0, |f, (k, _)| f | 1 << (k >> 58)))
    }

    /// `key` may be in the set (it is not, when false).
    pub(super) fn may_hold(&self, key: u64) -> bool {
        self.0 & (1 << (key >> 58)) != 0
    }
}

impl<G: GameKind> Clone for Node<G> {
    fn clone(&self) -> Self {
        Node {
            pos: self.pos.clone(),
            key: self.key,
            succ: self.succ.clone(),
            reading: self.reading.clone(),
        }
    }
}

/// One game in progress: the record (what has been emitted) and the belief (what the board
/// shows now: a prefix of the record plus provisional moves).
pub(super) struct GameState<G: GameKind> {
    pub(super) orientation: Orientation,
    /// `nodes[i]` is the position after `i` plies of the record.
    pub(super) nodes: Vec<Node<G>>,
    pub(super) moves: Vec<G::Move>,
    /// When each recorded ply was recorded, and the clocks it carries (the rest of a
    /// [`RecordedMove`] follows from the positions, and is rebuilt for a revision's `old`).
    pub(super) stamps: Vec<Stamp>,
    /// The belief is `nodes[..=base]` followed by `prov`.
    pub(super) base: usize,
    pub(super) prov: Vec<(G::Move, Node<G>)>,
    pub(super) changed_at: Millis,
    /// When the board first showed something other than the belief's last position since the
    /// belief last changed (`None`: it shows that position still): how long a move stood.
    pub(super) tip_left_at: Option<Millis>,
    /// The board has shown the belief's last position whole since the belief last changed (a
    /// move pushed with the reply under way has not, until it is seen without it).
    pub(super) tip_shown: bool,
    /// Key of the last board for which the two-ply search failed.
    pub(super) failed_search_key: Option<u64>,
    /// The board the sensors show when it fits nothing.
    pub(super) unexplained: Option<Unexplained<G>>,
    /// Irregularities not yet resolved (the board still shows them).
    pub(super) open: Vec<(u32, IrregularityKind)>,
    /// Irregularities reported in this game so far.
    pub(super) irregularities: u32,
    /// The clock has been compared with the time control.
    pub(super) clock_checked: bool,
    /// The start position read the same both ways round: the first move settles the orientation.
    pub(super) orientation_open: bool,
    /// Nodes before this index have had their caches dropped.
    pub(super) trimmed: usize,
    pub(super) gesture_reported: bool,
    pub(super) ended: bool,
    /// Set after a gap until the board fits the record again.
    pub(super) lost: Option<Lost>,
    /// While lost: the run the search found for the board shown since this time, recorded
    /// once the board has stayed so (a hand part-way through a capture can show a board that
    /// two other moves explain).
    pub(super) searched: Option<(Millis, Run<G>)>,
    /// While lost: every run from the record that explains a board more than one run
    /// explains, since the board has shown it (one ply deeper than the search looks for a
    /// second run, so that a run up to a ply longer than the search records can be told).
    pub(super) ambiguous: Option<(Millis, Candidates<G>)>,
    /// Once that board has stayed so for the settle time, its runs: the board is heard all along
    /// after it, and the first other board a move or two from these runs is the one chance
    /// they have to tell which run was played (see [`carry_runs`]).
    pub(super) candidates: Option<Candidates<G>>,
    /// After `thread_lost`: the plies the board's memory brought back since (first, last), said
    /// when the alert is resolved.
    pub(super) read_back: Option<(u32, u32)>,
    /// Since when every board heard has fitted nothing, one of them further from the belief
    /// than displaced pieces are reported (see `Tracker::lose_track`).
    pub(super) astray_since: Option<Millis>,
}

impl<G: GameKind> GameState<G> {
    pub(super) fn new(orientation: Orientation, start: Node<G>, at: Millis) -> Self {
        GameState {
            orientation,
            nodes: list_from_start(start),
            moves: Vec::with_capacity(PLIES_RESERVED),
            stamps: Vec::with_capacity(PLIES_RESERVED),
            base: 0,
            prov: Vec::new(),
            changed_at: at,
            tip_left_at: None,
            tip_shown: false,
            failed_search_key: None,
            searched: None,
            ambiguous: None,
            candidates: None,
            read_back: None,
            astray_since: None,
            unexplained: None,
            open: Vec::new(),
            irregularities: 0,
            clock_checked: false,
            orientation_open: false,
            trimmed: 0,
            gesture_reported: false,
            ended: false,
            lost: None,
        }
    }

    /// The game of `moves` (as stored) played from `start`; `None` if one does not parse.
    pub(super) fn replayed(
        orientation: Orientation,
        start: G::Position,
        moves: &[RecordedMove],
        at: Millis,
    ) -> Option<Self> {
        let key = G::reading_key(&G::reading(&start));
        let mut g = GameState::new(orientation, Node::new(start, key), at);
        for rec in moves {
            let pos = &g.nodes[g.nodes.len() - 1].pos;
            let mv = rec.to_move::<G>(pos)?;
            let next = G::play(pos, &mv);
            let key = G::reading_key(&G::reading(&next));
            g.nodes.push(Node::new(next, key));
            g.moves.push(mv);
            g.stamps.push(Stamp::of(rec));
        }
        g.base = g.moves.len();
        let last = &g.nodes[g.base];
        g.ended = G::outcome(&last.pos, !last.successors().is_empty()).is_some();
        Some(g)
    }

    pub(super) fn tip(&self) -> &Node<G> {
        self.prov.last().map_or(&self.nodes[self.base], |p| &p.1)
    }

    /// The node before the tip, if any.
    pub(super) fn parent(&self) -> Option<&Node<G>> {
        match self.prov.len() {
            0 => self.base.checked_sub(1).map(|i| &self.nodes[i]),
            1 => Some(&self.nodes[self.base]),
            n => Some(&self.prov[n - 2].1),
        }
    }

    pub(super) fn belief_plies(&self) -> usize {
        self.base + self.prov.len()
    }

    pub(super) fn is_settled(&self) -> bool {
        self.prov.is_empty() && self.base == self.moves.len()
    }

    pub(super) fn changed(&mut self, at: Millis) {
        self.changed_at = at;
        self.tip_left_at = None;
        self.tip_shown = false;
        self.failed_search_key = None;
        self.unexplained = None;
        self.gesture_reported = false;
    }

    /// How long the board showed the belief's last position whole before leaving it (up to
    /// `at` if it still does).
    pub(super) fn tip_stood_ms(&self, at: Millis) -> Millis {
        self.tip_left_at
            .unwrap_or(at)
            .saturating_sub(self.changed_at)
    }

    pub(super) fn push(&mut self, mv: G::Move, node: Node<G>, at: Millis) {
        self.prov.push((mv, node));
        self.changed(at);
    }

    /// Cuts the belief back to `plies` plies.
    pub(super) fn truncate(&mut self, plies: usize, at: Millis) {
        if plies <= self.base {
            self.base = plies;
            self.prov.clear();
        } else {
            self.prov.truncate(plies - self.base);
        }
        self.changed(at);
    }

    /// The record's last position, when the belief has been cut back below it (a provisional
    /// takeback, not yet pressed).
    pub(super) fn record_tip(&self) -> Option<&Node<G>> {
        (self.base < self.moves.len())
            .then(|| self.nodes.get(self.moves.len()))
            .flatten()
    }

    /// The belief back on the record (a takeback it took for one was a hand passing by).
    pub(super) fn back_to_record(&mut self, at: Millis) {
        self.base = self.moves.len();
        self.prov.clear();
        self.changed(at);
    }

    /// The most recent belief position before the tip whose reading has `key`, as a ply count.
    pub(super) fn find_earlier(&self, key: u64) -> Option<usize> {
        let provisional = self.prov.len().saturating_sub(1);
        if let Some(i) = self.prov[..provisional]
            .iter()
            .rposition(|(_, n)| n.key == key)
        {
            return Some(self.base + 1 + i);
        }
        let end = if self.prov.is_empty() {
            self.base
        } else {
            self.base + 1
        };
        self.nodes[..end].iter().rposition(|n| n.key == key)
    }

    /// The node after `plies` plies of the belief.
    pub(super) fn belief_node(&self, plies: usize) -> &Node<G> {
        if plies <= self.base {
            &self.nodes[plies]
        } else {
            &self.prov[plies - self.base - 1].1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::chess::ChessGame;
    use shakmaty::{Chess, Position};

    proptest::proptest! {
        /// The filter holds every key of its list; a key it rules out is in no pair.
        #[test]
        fn the_filter_holds_its_keys(
            keys in proptest::collection::vec(proptest::num::u64::ANY, 0..80),
            asked in proptest::collection::vec(proptest::num::u64::ANY, 0..80),
        ) {
            let list: Vec<(u64, usize)> = keys.iter().copied().zip(0..).collect();
            let filter = KeyFilter::of(&list);
            for &k in &keys {
                proptest::prop_assert!(filter.may_hold(k));
            }
            for k in asked {
                if !filter.may_hold(k) {
                    proptest::prop_assert!(list.iter().all(|(key, _)| *key != k));
                }
            }
        }

        /// The move to a key through the filter is the scan's (`find` over the successors),
        /// for every successor's key, keys near them and random keys, in every position of
        /// random games.
        #[test]
        fn successor_to_is_the_scans_move(
            picks in proptest::collection::vec(0usize..1000, 0..120),
            asked in proptest::collection::vec(proptest::num::u64::ANY, 0..40),
        ) {
            let mut pos = Chess::default();
            for pick in picks {
                let key = ChessGame::reading_key(&ChessGame::reading(&pos));
                let node = Node::<ChessGame>::new(pos.clone(), key);
                let succ = node.successors().to_vec();
                let near = succ.iter().flat_map(|(k, _)| [*k, k ^ 1, k ^ (1 << 58), k ^ (1 << 63)]);
                for k in near.chain(asked.iter().copied()) {
                    proptest::prop_assert_eq!(node.successor_to(k), find(&succ, k));
                }
                if succ.is_empty() {
                    break;
                }
                pos.play_unchecked(succ[pick % succ.len()].1);
            }
        }
    }
}
