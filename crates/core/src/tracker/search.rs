//! The gap search: every run of legal moves from the record, up to a depth and a number of
//! nodes, that leads to what the board shows ([`search_gap`], [`explain_gap`]), and the runs
//! carried while more than one explains the board ([`Candidates`], [`carry_runs`]). Pure
//! functions of positions and readings: no timing, no events.

use super::*;
use crate::phrase::Phrase;

/// What the search after a gap found for one board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GapSearch {
    /// No run of legal moves within the bound reaches the board.
    Nothing,
    /// Several runs do (two moves made in either order, say): none is recorded.
    Ambiguous,
    /// The search was cut short at its budget of positions.
    CutShort,
    /// Whatever the board shows, the clock shows presses it does not explain.
    ClockDisagrees,
}

impl GapSearch {
    /// In words, for a search `plies` deep; `by_presses`: the depth is what the clock's presses
    /// since the arbiter's decision allow, not the settings' bound.
    pub(super) fn describe(self, plies: usize, by_presses: bool) -> Phrase {
        match self {
            GapSearch::Nothing if by_presses => {
                Phrase::new("gap.nothing_by_presses").number("plies", plies as u64)
            }
            GapSearch::Nothing => Phrase::new("gap.nothing").number("plies", plies as u64),
            GapSearch::Ambiguous => Phrase::new("gap.ambiguous"),
            GapSearch::CutShort => Phrase::new("gap.cut_short"),
            GapSearch::ClockDisagrees => Phrase::new("gap.clock_disagrees"),
        }
    }
}

/// The lengths of run a search looks for: every length, or those the presses heard since an
/// arbiter's decision allow (see `gap::Heard`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Lengths(u64);

impl Lengths {
    /// Any length.
    pub(super) const ANY: Lengths = Lengths(u64::MAX);

    /// No length yet (see [`Lengths::allow`]).
    pub(super) fn none() -> Lengths {
        Lengths(0)
    }

    /// Allows runs of `n` plies (`n` < 64).
    pub(super) fn allow(&mut self, n: usize) {
        self.0 |= 1 << n;
    }

    pub(super) fn allows(self, n: usize) -> bool {
        n < 64 && self.0 >> n & 1 == 1
    }

    /// The longest length allowed, at most `cap`.
    pub(super) fn longest(self, cap: usize) -> usize {
        (0..=cap.min(63))
            .rev()
            .find(|&n| self.allows(n))
            .unwrap_or(0)
    }
}

/// The one run of legal moves from `from` that leads to the reading `sensed` (key `key`) after
/// a gap, of at most `plies` plies and of a length `lengths` allows, in which every move shows
/// on the board
/// ([`GameKind::may_show`]: a piece that went and came back is not seen, and not recorded).
///
/// Every run of up to two plies more than the shortest is looked for, so that a run is recorded
/// only when no other explains the board: two moves made in either order are two runs, and a
/// rook that went a1-a5 in one move or two are two runs. Lines that cannot reach the board in
/// the plies left are pruned ([`GameKind::plies_needed`]); at most `budget` positions are
/// expanded, and a search cut short records nothing.
pub(super) fn explain_gap<G: GameKind>(
    from: &Node<G>,
    key: u64,
    sensed: &G::Reading,
    plies: usize,
    budget: usize,
    lengths: Lengths,
) -> Result<Run<G>, GapSearch> {
    let mut search = GapSearcher::<G>::new(key, sensed, budget, 2);
    search.lengths = lengths;
    let shortest = G::plies_needed(&from.pos, sensed).max(1);
    // Deepen until a run is found; then look two plies past it for any other.
    let mut depth = shortest;
    while depth <= plies && search.found.is_empty() {
        search.dfs(from, depth);
        if search.budget == 0 {
            return Err(GapSearch::CutShort);
        }
        depth += 1;
    }
    let Some(first) = search.found.first() else {
        return Err(GapSearch::Nothing);
    };
    let len = first.len();
    search.found.clear();
    // No run longer than the lengths allow is looked for.
    search.dfs(from, lengths.longest(len + 2));
    if search.budget == 0 {
        return Err(GapSearch::CutShort);
    }
    match search.found.len() {
        0 => Err(GapSearch::Nothing),
        1 => Ok(run_from(from, search.found.remove(0))),
        _ => Err(GapSearch::Ambiguous),
    }
}

/// The moves of `run` played from `from`, each with its node.
pub(super) fn run_from<G: GameKind>(from: &Node<G>, run: Vec<(u64, G::Move)>) -> Run<G> {
    let mut node = from.clone();
    let mut path = Vec::with_capacity(run.len());
    for (k, mv) in run {
        let next = Node::new(G::play(&node.pos, &mv), k);
        path.push((mv, next.clone()));
        node = next;
    }
    path
}

/// At most this many runs are kept as the candidates of an ambiguous board; a board more
/// explain is not followed.
pub(super) const MAX_CANDIDATES: usize = 6;

/// Every run of at most `plies` legal moves from `from` that leads to `sensed` (none of them
/// through it before its end), if there are at most [`MAX_CANDIDATES`] and the search was not
/// cut short by `budget` positions.
pub(super) fn gap_runs<G: GameKind>(
    from: &Node<G>,
    key: u64,
    sensed: &G::Reading,
    plies: usize,
    budget: usize,
    lengths: Lengths,
) -> Option<Vec<Run<G>>> {
    let mut search = GapSearcher::<G>::new(key, sensed, budget, MAX_CANDIDATES + 1);
    search.lengths = lengths;
    search.dfs(from, plies);
    if search.budget == 0 || search.found.len() > MAX_CANDIDATES || search.found.is_empty() {
        return None;
    }
    Some(
        search
            .found
            .into_iter()
            .map(|run| run_from(from, run))
            .collect(),
    )
}

/// The runs of a settled board more than one run explains (see [`GameState::candidates`]).
pub(super) struct Candidates<G: GameKind> {
    /// The board's key.
    pub(super) key: u64,
    /// Every run of at most `depth` plies from the record that leads to the board.
    pub(super) runs: Vec<Run<G>>,
    pub(super) depth: usize,
    /// Since when the board has shown what no run carried on by a move or two explains.
    pub(super) unexplained_since: Option<Millis>,
}

/// What the candidates say of a board.
pub(super) enum Carried<G: GameKind> {
    /// It is their own board again.
    Same,
    /// No candidate carried on by one or two legal moves leads to it.
    Nothing,
    /// None leads to it, but it may be a move under way from one of their boards (a piece in
    /// the hand): not play gone past them, however long it stays so.
    UnderWay,
    /// Exactly one does, and every other candidate has the other side to move (the board's
    /// new move tells whose turn it was), and every run to their board up to two plies longer
    /// than it is among them (as for a run the search finds alone): the run played.
    One(Run<G>),
    /// Several do, or one does and another with the same side to move does not (it differs
    /// only in what the board cannot show, such as castling rights).
    Several,
}

/// The `candidates` carried on to `sensed` (see [`Carried`]).
pub(super) fn carry_runs<G: GameKind>(
    candidates: &Candidates<G>,
    key: u64,
    sensed: &G::Reading,
    budget: usize,
) -> Carried<G> {
    if key == candidates.key {
        return Carried::Same;
    }
    let mut out: Vec<(usize, Run<G>)> = Vec::new();
    for (i, run) in candidates.runs.iter().enumerate() {
        let Some((_, end)) = run.last() else {
            continue;
        };
        for more in gap_runs::<G>(end, key, sensed, 2, budget, Lengths::ANY).unwrap_or_default() {
            let mut longer = run.clone();
            longer.extend(more);
            out.push((i, longer));
        }
    }
    match out.len() {
        0 if candidates.runs.iter().any(|run| {
            run.last().is_some_and(|(_, end)| {
                G::departure(&end.pos, end.successors(), sensed, false).is_under_way()
            })
        }) =>
        {
            Carried::UnderWay
        }
        0 => Carried::Nothing,
        1 => {
            let (i, run) = out.remove(0);
            let parity = candidates.runs[i].len() % 2;
            let told_by_turn = candidates
                .runs
                .iter()
                .enumerate()
                .all(|(k, r)| k == i || r.len() % 2 != parity);
            if told_by_turn && candidates.runs[i].len() + 2 <= candidates.depth {
                Carried::One(run)
            } else {
                Carried::Several
            }
        }
        _ => Carried::Several,
    }
}

/// `explain_gap` from a position: the moves of the one run from `from` that leads to `sensed`,
/// of at most `plies` plies, expanding at most `budget` positions (for benchmarks and tests).
pub fn search_gap<G: GameKind>(
    from: &G::Position,
    sensed: &G::Reading,
    plies: usize,
    budget: usize,
) -> Result<Vec<G::Move>, GapSearch> {
    let key = G::reading_key(&G::reading(from));
    let path = explain_gap::<G>(
        &Node::new(from.clone(), key),
        G::reading_key(sensed),
        sensed,
        plies,
        budget,
        Lengths::ANY,
    )?;
    Ok(path.into_iter().map(|(mv, _)| mv).collect())
}

/// The depth-first search of [`explain_gap`]: runs found (two are enough to know there is no
/// one), the run being tried, and the positions it may still expand.
pub(super) struct GapSearcher<'a, G: GameKind> {
    pub(super) key: u64,
    pub(super) sensed: &'a G::Reading,
    pub(super) budget: usize,
    /// Runs found after which the search stops.
    pub(super) limit: usize,
    /// The lengths of run recorded as found.
    pub(super) lengths: Lengths,
    pub(super) path: Vec<(u64, G::Move)>,
    pub(super) found: Vec<Vec<(u64, G::Move)>>,
}

impl<'a, G: GameKind> GapSearcher<'a, G> {
    /// A search for `sensed` (its key `key`) that expands at most `budget` positions and stops
    /// at `limit` runs found.
    pub(super) fn new(key: u64, sensed: &'a G::Reading, budget: usize, limit: usize) -> Self {
        GapSearcher {
            key,
            sensed,
            budget,
            limit,
            lengths: Lengths::ANY,
            path: Vec::new(),
            found: Vec::new(),
        }
    }

    pub(super) fn dfs(&mut self, node: &Node<G>, left: usize) {
        if self.found.len() >= self.limit || self.budget == 0 || left == 0 {
            return;
        }
        self.budget -= 1;
        for (k, mv) in node.successors() {
            if *k == self.key && G::reading(&G::play(&node.pos, mv)) == *self.sensed {
                if !self.lengths.allows(self.path.len() + 1) {
                    continue;
                }
                let mut run = self.path.clone();
                run.push((*k, mv.clone()));
                self.found.push(run);
                if self.found.len() >= self.limit {
                    return;
                }
                continue;
            }
            if left == 1 || !G::may_show(&node.pos, mv, self.sensed) {
                continue;
            }
            let next = G::play(&node.pos, mv);
            if G::plies_needed(&next, self.sensed) > left - 1 {
                continue;
            }
            self.path.push((*k, mv.clone()));
            self.dfs(&Node::new(next, *k), left - 1);
            self.path.pop();
            if self.found.len() >= self.limit || self.budget == 0 {
                return;
            }
        }
    }
}
