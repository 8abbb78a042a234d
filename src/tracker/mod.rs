//! The tracker: from sensor readings and clock readings to the moves actually played.
//!
//! Flow: every change of the sensed board is compared (by key, then by value) with what the
//! current *belief* explains, in this order: the belief itself (nothing happened), one legal move
//! from it, a sibling of its last move (a slide or a rook-first castling: revise), an earlier
//! position (a takeback), two legal moves (a quick reply before the board settled). Anything else
//! is a transitional board (a piece in the hand) and changes nothing. The belief becomes the
//! record, and events are emitted, one sensor scan after the clock is pressed, or when the belief
//! has been stable for the settle window (longer while a clock runs and a press is expected). The start position
//! begins a game, in either orientation; set up again after a game, it begins a new one. Which
//! positions are start positions is the variant's ([`TrackerSettings::variant`]: Chess960 has 960).
//! Pure: time is an argument; the same inputs always give the same events.

pub mod event;

pub use event::{RecordedMove, Side, TrackerEvent};

use std::cell::OnceCell;

use crate::{
    Millis,
    arbiter::IrregularityKind,
    game::{Departure, GameKind, Variant},
    sensor::{Orientation, Sensed, dgt::ClockReading},
};

/// Timing and policy knobs of the tracker. `Default` is for chess;
/// [`TrackerSettings::for_game`] scales the distances to another game.
#[derive(Clone, Debug)]
pub struct TrackerSettings {
    /// A belief stable this long is recorded (no clock running).
    pub settle_ms: Millis,
    /// While a clock runs, a new move waits this long for the clock press that completes it.
    pub press_wait_ms: Millis,
    /// The start position set up again after at least this many plies starts a new game (fewer:
    /// a takeback to the start).
    pub new_game_min_plies: usize,
    /// Largest number of differing places for which a two-ply search is tried.
    pub two_ply_max_distance: usize,
    /// After a clock press, the move is recorded this much later: the sensors may still be
    /// reporting it (a full scan of the board takes 200-250 ms).
    pub scan_ms: Millis,
    /// A board that fits nothing for this long is searched for `resync_depth` moves.
    pub resync_ms: Millis,
    /// How many moves the resynchronising search looks for.
    pub resync_depth: usize,
    /// How many recorded plies back (besides the moves not yet recorded) a different move is
    /// looked for when the board fits nothing else.
    pub revise_depth: usize,
    /// A board that no move in progress explains, stable this long, is reported as displaced
    /// pieces (a complete wrong set-up, as a wrong start position).
    pub displaced_ms: Millis,
    /// Pieces missing that a move in progress could have lifted (in the hand, or knocked over:
    /// the sensors cannot tell) are reported as displaced after this long.
    pub missing_ms: Millis,
    /// What both clocks should show before the first move (the time control's first period);
    /// `None`: not checked.
    pub expected_clock_ms: Option<u64>,
    /// Boards further than this many places from the position are not reported as displaced
    /// (pieces being cleared or set up, not knocked).
    pub displaced_max_distance: usize,
    /// Which start positions begin a game ([`GameKind::starts`]).
    pub variant: Variant,
}

impl TrackerSettings {
    /// The defaults, with the distances scaled to how many places one move of `G` changes.
    pub fn for_game<G: GameKind>() -> TrackerSettings {
        TrackerSettings {
            two_ply_max_distance: 2 * G::MOVE_SPAN,
            displaced_max_distance: G::MOVE_SPAN,
            revise_depth: G::REVISABLE_CONFIRMED_PLIES,
            ..TrackerSettings::default()
        }
    }
}

impl Default for TrackerSettings {
    fn default() -> Self {
        TrackerSettings {
            settle_ms: 400,
            press_wait_ms: 3_000,
            new_game_min_plies: 2,
            two_ply_max_distance: 8,
            scan_ms: 300,
            resync_ms: 1_500,
            resync_depth: 4,
            revise_depth: 2,
            displaced_ms: 2_500,
            missing_ms: 15_000,
            expected_clock_ms: None,
            displaced_max_distance: 4,
            variant: Variant::Standard,
        }
    }
}

/// A board that fits nothing the tracker knows.
struct Unexplained<G: GameKind> {
    key: u64,
    reading: G::Reading,
    since: Millis,
    /// The deep search has been tried on it.
    searched: bool,
    /// It has been looked at for irregularities (reported or found harmless).
    judged: bool,
    /// Not to be judged again before this (pieces missing wait for the longer window).
    not_before: Millis,
}

struct Node<G: GameKind> {
    pos: G::Position,
    key: u64,
    /// Legal moves from `pos` with the keys they lead to, computed on first use.
    succ: OnceCell<Vec<(u64, G::Move)>>,
    /// What the sensors should read for `pos`, computed on first use.
    reading: OnceCell<G::Reading>,
}

impl<G: GameKind> Node<G> {
    fn new(pos: G::Position, key: u64) -> Self {
        Node {
            pos,
            key,
            succ: OnceCell::new(),
            reading: OnceCell::new(),
        }
    }

    fn with_reading(pos: G::Position, key: u64, reading: G::Reading) -> Self {
        Node {
            pos,
            key,
            succ: OnceCell::new(),
            reading: OnceCell::from(reading),
        }
    }

    fn successors(&self) -> &[(u64, G::Move)] {
        self.succ.get_or_init(|| {
            let mut v = Vec::new();
            G::successors(&self.pos, self.key, &mut v);
            v
        })
    }

    fn reading(&self) -> &G::Reading {
        self.reading.get_or_init(|| G::reading(&self.pos))
    }

    /// The legal move from here that leads to `key`, checked against the full reading.
    fn move_to<'r>(
        &self,
        key: u64,
        reading: impl FnOnce() -> &'r G::Reading,
    ) -> Option<(G::Move, Node<G>)>
    where
        G::Reading: 'r,
    {
        let mv = find(self.successors(), key)?;
        let pos = G::play(&self.pos, &mv);
        let expected = G::reading(&pos);
        (expected == *reading()).then(|| (mv, Node::with_reading(pos, key, expected)))
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
struct GameState<G: GameKind> {
    orientation: Orientation,
    /// `nodes[i]` is the position after `i` plies of the record.
    nodes: Vec<Node<G>>,
    moves: Vec<G::Move>,
    /// When each recorded ply was recorded, and the clocks it carries (the rest of a
    /// [`RecordedMove`] follows from the positions, and is rebuilt for a revision's `old`).
    stamps: Vec<Stamp>,
    /// The belief is `nodes[..=base]` followed by `prov`.
    base: usize,
    prov: Vec<(G::Move, Node<G>)>,
    changed_at: Millis,
    /// Key of the last board for which the two-ply search failed.
    failed_search_key: Option<u64>,
    /// The board the sensors show when it fits nothing.
    unexplained: Option<Unexplained<G>>,
    /// Irregularities not yet resolved (the board still shows them).
    open: Vec<(u32, IrregularityKind)>,
    /// Irregularities reported in this game so far.
    irregularities: u32,
    /// The clock has been compared with the time control.
    clock_checked: bool,
    /// The start position read the same both ways round: the first move settles the orientation.
    orientation_open: bool,
    /// Nodes before this index have had their caches dropped.
    trimmed: usize,
    gesture_reported: bool,
    ended: bool,
}

impl<G: GameKind> GameState<G> {
    fn new(orientation: Orientation, start: Node<G>, at: Millis) -> Self {
        GameState {
            orientation,
            nodes: vec![start],
            moves: Vec::new(),
            stamps: Vec::new(),
            base: 0,
            prov: Vec::new(),
            changed_at: at,
            failed_search_key: None,
            unexplained: None,
            open: Vec::new(),
            irregularities: 0,
            clock_checked: false,
            orientation_open: false,
            trimmed: 0,
            gesture_reported: false,
            ended: false,
        }
    }

    fn tip(&self) -> &Node<G> {
        self.prov.last().map_or(&self.nodes[self.base], |p| &p.1)
    }

    /// The node before the tip, if any.
    fn parent(&self) -> Option<&Node<G>> {
        match self.prov.len() {
            0 => self.base.checked_sub(1).map(|i| &self.nodes[i]),
            1 => Some(&self.nodes[self.base]),
            n => Some(&self.prov[n - 2].1),
        }
    }

    fn belief_plies(&self) -> usize {
        self.base + self.prov.len()
    }

    fn is_settled(&self) -> bool {
        self.prov.is_empty() && self.base == self.moves.len()
    }

    fn changed(&mut self, at: Millis) {
        self.changed_at = at;
        self.failed_search_key = None;
        self.unexplained = None;
        self.gesture_reported = false;
    }

    fn push(&mut self, mv: G::Move, node: Node<G>, at: Millis) {
        self.prov.push((mv, node));
        self.changed(at);
    }

    /// Cuts the belief back to `plies` plies.
    fn truncate(&mut self, plies: usize, at: Millis) {
        if plies <= self.base {
            self.base = plies;
            self.prov.clear();
        } else {
            self.prov.truncate(plies - self.base);
        }
        self.changed(at);
    }

    /// The most recent belief position before the tip whose reading has `key`, as a ply count.
    fn find_earlier(&self, key: u64) -> Option<usize> {
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
    fn belief_node(&self, plies: usize) -> &Node<G> {
        if plies <= self.base {
            &self.nodes[plies]
        } else {
            &self.prov[plies - self.base - 1].1
        }
    }
}

/// Follows one board: waits for a start position, then records the game played on it.
pub struct Tracker<G: GameKind> {
    settings: TrackerSettings,
    /// The variant's first start position (a game begun on a wrong set-up is compared with it).
    start: Node<G>,
    /// Every start position of the variant, with its reading, and their keys (sorted, each with
    /// its index in `starts`).
    starts: Vec<Node<G>>,
    start_keys: Vec<(u64, usize)>,
    game: Option<GameState<G>>,
    clock: Option<ClockReading>,
    /// Clock readings of this game in which the left-hand clock ran while White was to move,
    /// less those in which it ran while Black was.
    white_on_left_votes: i64,
    /// When the sensed board last changed.
    sensed_changed_at: Millis,
    /// A clock press waiting for the sensors to show the move it completes (and whether a clock
    /// was running when it came).
    press: Option<(Millis, ClockReading, bool)>,
    /// Before the first game: a complete set-up that is not the start position, and since when.
    setup: Option<(Orientation, G::Reading, Millis, String)>,
}

impl<G: GameKind> Tracker<G> {
    pub fn new(settings: TrackerSettings) -> Self {
        let starts: Vec<Node<G>> = G::starts(settings.variant)
            .into_iter()
            .map(|pos| {
                let reading = G::reading(&pos);
                Node::with_reading(pos, G::reading_key(&reading), reading)
            })
            .collect();
        let mut start_keys: Vec<(u64, usize)> =
            starts.iter().enumerate().map(|(i, n)| (n.key, i)).collect();
        start_keys.sort_unstable();
        let start = match starts.first() {
            Some(n) => n.clone(),
            None => {
                let pos = G::start();
                let key = G::reading_key(&G::reading(&pos));
                Node::new(pos, key)
            }
        };
        Tracker {
            settings,
            start,
            starts,
            start_keys,
            game: None,
            clock: None,
            white_on_left_votes: 0,
            press: None,
            setup: None,
            sensed_changed_at: 0,
        }
    }

    /// Continues a game that was recorded before (after a restart): `moves` as stored, played
    /// from `start` (the game's stored start position; `None`: the kind's standard start).
    /// Returns `None` if a stored move does not parse (the caller starts fresh).
    pub fn resume(
        settings: TrackerSettings,
        orientation: Orientation,
        start: Option<G::Position>,
        moves: &[RecordedMove],
        at: Millis,
    ) -> Option<Self> {
        let mut t = Tracker::new(settings);
        let pos = start.unwrap_or_else(G::start);
        let key = G::reading_key(&G::reading(&pos));
        let mut g = GameState::new(orientation, Node::new(pos, key), at);
        for rec in moves {
            let pos = &g.nodes[g.nodes.len() - 1].pos;
            let mv = rec
                .uci
                .as_deref()
                .and_then(|u| G::parse_move(pos, u))
                .or_else(|| G::parse_move(pos, &rec.notation))?;
            let next = G::play(pos, &mv);
            let key = G::reading_key(&G::reading(&next));
            g.nodes.push(Node::new(next, key));
            g.moves.push(mv);
            g.stamps.push(Stamp::of(rec));
        }
        g.base = g.moves.len();
        let last = &g.nodes[g.base];
        g.ended = G::outcome(&last.pos, !last.successors().is_empty()).is_some();
        t.game = Some(g);
        Some(t)
    }

    /// Orientation of the game being recorded.
    pub fn orientation(&self) -> Option<Orientation> {
        self.game.as_ref().map(|g| g.orientation)
    }

    /// Plies recorded in the current game.
    pub fn recorded_plies(&self) -> usize {
        self.game.as_ref().map_or(0, |g| g.moves.len())
    }

    /// Whether White's clock is the left-hand one (as in the real captures, until the clock
    /// readings say otherwise).
    pub fn white_on_left(&self) -> bool {
        self.white_on_left_votes >= 0
    }

    /// Lets time pass: records a belief that has been stable long enough.
    pub fn tick(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        if let Some((pressed_at, clock, was_running)) = self.press
            && at >= pressed_at.saturating_add(self.settings.scan_ms)
        {
            self.press = None;
            self.record_press(at, clock, was_running, out);
        }
        self.resync(at);
        self.judge(at, out);
        let running = self.clock.is_some_and(|c| c.running);
        let Some(g) = self.game.as_ref() else {
            return;
        };
        if g.is_settled() {
            return;
        }
        let wait = if g.prov.is_empty() || !running {
            self.settings.settle_ms
        } else {
            self.settings.press_wait_ms
        };
        // Stable means: neither the belief nor the sensed board changed for `wait` (a hand still
        // sliding a piece keeps the belief open).
        let since = g.changed_at.max(self.sensed_changed_at);
        if at >= since.saturating_add(wait) {
            self.record_belief(at, None, out);
        }
    }

    /// A board that has fitted nothing for `resync_ms` (after a reconnect, or moves made while
    /// the sensors were not heard) is searched for deeper: up to `resync_depth` moves.
    fn resync(&mut self, at: Millis) {
        let depth = self.settings.resync_depth;
        let wait = self.settings.resync_ms;
        let Some(g) = self.game.as_mut() else {
            return;
        };
        let Some(u) = g.unexplained.as_mut() else {
            return;
        };
        if u.searched || at < u.since.saturating_add(wait) {
            return;
        }
        u.searched = true;
        let (key, reading) = (u.key, u.reading.clone());
        // Each move changes at most `MOVE_SPAN` places.
        if G::reading_distance(g.tip().reading(), &reading) > G::MOVE_SPAN * depth {
            return;
        }
        if let Some(path) = moves_to::<G>(g.tip(), key, &reading, depth) {
            for (mv, node) in path {
                g.push(mv, node, at);
            }
        }
    }

    /// Records whatever the belief holds now (end of a capture, an orderly shutdown).
    pub fn flush(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        if self.game.as_ref().is_some_and(|g| !g.is_settled()) {
            self.record_belief(at, None, out);
        }
    }

    /// A clock reading: a lever change is a clock press, which completes the move in hand.
    pub fn clock(&mut self, at: Millis, reading: ClockReading, out: &mut Vec<TrackerEvent>) {
        self.tick(at, out);
        let pressed = self
            .clock
            .is_some_and(|prev| prev.lever_right_high != reading.lever_right_high);
        let was_running = self.clock.is_some_and(|prev| prev.running);
        self.clock = Some(reading);
        self.check_clock(at, reading, out);
        let Some(g) = self.game.as_ref() else {
            return;
        };
        if !pressed {
            // Which clock is White's: the one that runs while the record says White is to move
            // (a vote over the game, so a move recorded late or early does not decide it). The
            // right-hand clock runs when the lever is high on the right. While a press waits its
            // scan, the record lacks the move it completes: such a reading does not vote.
            if reading.running && self.press.is_none() {
                let white_to_move = g.moves.len() % 2 == 0;
                let left_runs = !reading.lever_right_high;
                self.white_on_left_votes += if left_runs == white_to_move { 1 } else { -1 };
            }
            return;
        }
        // The sensors may still be reporting the move (a full scan takes 200-250 ms,
        // dgt-notes 1.1, so a blitz hand can press before its last square is seen): the move is
        // recorded one scan after the press, with the clocks as the press showed them. A second
        // press before that records the first one at once.
        if let Some((_, clock, running)) = self.press.take() {
            self.record_press(at, clock, running, out);
        }
        self.press = Some((at, reading, was_running));
    }

    /// The sensed board changed (or was dumped).
    pub fn observe(
        &mut self,
        at: Millis,
        sensed: &impl Sensed<G::Reading>,
        out: &mut Vec<TrackerEvent>,
    ) {
        self.tick(at, out);
        self.sensed_changed_at = at;
        self.setup = None;
        if let Some(g) = self.game.as_mut() {
            g.unexplained = None;
        }
        self.interpret(at, sensed, out);
    }

    fn interpret(
        &mut self,
        at: Millis,
        sensed: &impl Sensed<G::Reading>,
        out: &mut Vec<TrackerEvent>,
    ) {
        let Some(orientation) = self.game.as_ref().map(|g| g.orientation) else {
            if !self.try_start(at, sensed, None, out) {
                self.watch_setup(at, sensed);
            }
            return;
        };
        let key = sensed.key(orientation);
        if key == self.game.as_ref().map_or(0, |g| g.tip().key) {
            // A wrong set-up corrected into a start position that reads the same both ways
            // round (a pit board): which way the board lies is open until the first move, as for
            // a game that began on the right set-up.
            if let Some(g) = self.game.as_mut()
                && g.belief_plies() == 0
                && g.moves.is_empty()
                && !g.orientation_open
                && sensed.key(orientation.flipped()) == key
            {
                g.orientation_open = true;
            }
            self.resolve_open(at, "position restored", out);
            return;
        }
        // The full reading is built only when a key matches (or nothing does).
        let cell = OnceCell::new();
        let reading = || cell.get_or_init(|| sensed.reading(orientation));
        let flipped_cell = OnceCell::new();
        // One legal move from the belief (it wins over everything else: kings shuffling repeat
        // earlier boards, knights can even return to the start position).
        if let Some(g) = self.game.as_mut()
            && let Some((mv, node)) = g.tip().move_to(key, reading)
        {
            g.push(mv, node, at);
            self.resolve_open(at, "position restored; play went on", out);
            return;
        }
        // Before the first move, a start position that reads the same both ways round (a pit
        // board) leaves the orientation open: the first move settles it.
        if let Some(g) = self.game.as_mut()
            && g.orientation_open
            && g.belief_plies() == 0
            && g.moves.is_empty()
        {
            let flipped = orientation.flipped();
            let flipped_reading = || flipped_cell.get_or_init(|| sensed.reading(flipped));
            if let Some((mv, node)) = g.tip().move_to(sensed.key(flipped), flipped_reading) {
                g.orientation = flipped;
                out.push(TrackerEvent::Reoriented {
                    at_ms: at,
                    orientation: flipped,
                });
                g.push(mv, node, at);
                self.resolve_open(at, "position restored; play went on", out);
                return;
            }
        }
        // The start position, set up again (or turned round): a new game. With several start
        // positions (Chess960), another one set up before the first move begins a game too.
        let plies = self.game.as_ref().map_or(0, |g| g.belief_plies());
        let restart = self.start_node(sensed.key(orientation.flipped())).is_some()
            || (self.start_node(key).is_some()
                && (plies >= self.settings.new_game_min_plies || plies == 0));
        if restart && self.try_start(at, sensed, Some(orientation), out) {
            return;
        }
        let Some(g) = self.game.as_mut() else {
            return;
        };
        if g.failed_search_key == Some(key) {
            g.unexplained = Some(Unexplained {
                key,
                reading: reading().clone(),
                since: at,
                searched: false,
                judged: false,
                not_before: 0,
            });
            return;
        }
        // A sibling of the belief's last move: the move is revised (a slide, a rook-first
        // castling).
        if let Some(back) = plies.checked_sub(1)
            && let Some((mv, node)) = g.belief_node(back).move_to(key, reading)
        {
            g.truncate(back, at);
            g.push(mv, node, at);
            self.resolve_open(at, "the board fits the game again", out);
            return;
        }
        // An earlier position: a takeback (the most recent identical position wins).
        if let Some(p) = g.find_earlier(key)
            && g.belief_node(p).reading() == reading()
        {
            g.truncate(p, at);
            self.resolve_open(at, "the board fits the game again", out);
            return;
        }
        // A different move a few plies back: what was believed was a misreading (a hand
        // resting on a neighbour made a transitional board look like moves).
        let depth = (g.prov.len() + self.settings.revise_depth).min(plies);
        for back in (plies - depth..plies.saturating_sub(1)).rev() {
            if let Some((mv, node)) = g.belief_node(back).move_to(key, reading) {
                g.truncate(back, at);
                g.push(mv, node, at);
                self.resolve_open(at, "the board fits the game again", out);
                return;
            }
        }
        // Two plies before the board settled, or a transitional board.
        let sensed_reading = reading();
        let distance = G::reading_distance(g.tip().reading(), sensed_reading);
        if (3..=self.settings.two_ply_max_distance).contains(&distance)
            && let Some(path) = moves_to::<G>(g.tip(), key, sensed_reading, 2)
        {
            for (mv, node) in path {
                g.push(mv, node, at);
            }
            self.resolve_open(at, "the board fits the game again", out);
            return;
        }
        g.failed_search_key = Some(key);
        g.unexplained = Some(Unexplained {
            key,
            reading: sensed_reading.clone(),
            since: at,
            searched: false,
            judged: false,
            not_before: 0,
        });
        // A result piece set on the board, or the kings' gesture (it moves both kings: at least
        // two places differ).
        let shown = G::result_token(sensed_reading).or_else(|| {
            (distance >= 2)
                .then(|| G::result_gesture(sensed_reading))
                .flatten()
        });
        if !g.gesture_reported
            && let Some(proposed) = shown
        {
            while let Some((mv, _)) = g.prov.last() {
                let parent = g.parent().map(|p| p.pos.clone());
                match parent {
                    Some(parent) if G::gesture_may_include(&parent, mv) => {
                        g.prov.pop();
                    }
                    _ => break,
                }
            }
            g.changed(at);
            g.gesture_reported = true;
            self.flush(at, out);
            if let Some(g) = self.game.as_ref() {
                out.push(TrackerEvent::ResultGesture {
                    at_ms: at,
                    after_ply: g.moves.len() as u32,
                    proposed,
                });
            }
        }
    }

    /// Every irregularity still open is over: the board fits the game again.
    fn resolve_open(&mut self, at: Millis, how: &str, out: &mut Vec<TrackerEvent>) {
        let Some(g) = self.game.as_mut() else {
            return;
        };
        let ply = g.belief_plies() as u32 + 1;
        for (id, _) in g.open.drain(..) {
            out.push(TrackerEvent::Resolved {
                at_ms: at,
                id,
                ply,
                how: how.to_string(),
            });
        }
    }

    /// The first clock reading of a game, before any move: both clocks should show the time
    /// control's time (6.10.2); a difference of more than two seconds is reported.
    fn check_clock(&mut self, at: Millis, reading: ClockReading, out: &mut Vec<TrackerEvent>) {
        let Some(expected) = self.settings.expected_clock_ms else {
            return;
        };
        let Some(g) = self.game.as_mut() else {
            return;
        };
        if g.clock_checked {
            return;
        }
        g.clock_checked = true;
        // A clock already running (the board was connected late) has spent time no one saw.
        if reading.running || !g.moves.is_empty() || g.belief_plies() > 0 {
            return;
        }
        let off = |ms: u64| ms.abs_diff(expected) > 2_000;
        if off(reading.left_ms) || off(reading.right_ms) {
            let hms = |ms: u64| {
                let s = ms / 1000;
                format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
            };
            let detail = format!(
                "the clocks show {} and {}; the time control gives {} each",
                hms(reading.left_ms),
                hms(reading.right_ms),
                hms(expected)
            );
            report(g, at, at, IrregularityKind::ClockMisSet, None, detail, out);
        }
    }

    /// Looks at a board that has fitted nothing for the settle window of irregularities:
    /// displaced pieces, or a wrong set-up for the next game.
    fn judge(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        let wait = self.settings.displaced_ms;
        let Some(g) = self.game.as_mut() else {
            self.judge_setup(at, out);
            return;
        };
        let Some(u) = g.unexplained.as_mut() else {
            return;
        };
        if u.judged || at < u.since.saturating_add(wait).max(u.not_before) {
            return;
        }
        u.judged = true;
        let (reading, since) = (u.reading.clone(), u.since);
        if let Some(detail) = G::wrong_setup(&reading, self.settings.variant) {
            let plies = g.belief_plies();
            if plies == 0 {
                if g.open.is_empty() {
                    report(
                        g,
                        at,
                        since,
                        IrregularityKind::WrongStartPosition,
                        None,
                        detail,
                        out,
                    );
                }
                return;
            }
            if g.ended || plies >= self.settings.new_game_min_plies {
                let orientation = g.orientation;
                self.begin_wrong_setup(at, orientation, reading, since, detail, out);
                return;
            }
        }
        if g.ended || g.gesture_reported || !g.open.is_empty() {
            return;
        }
        let tip = g.tip();
        if G::reading_distance(tip.reading(), &reading) > self.settings.displaced_max_distance {
            return;
        }
        let mut departure = G::departure(&tip.pos, tip.successors(), &reading, false);
        // The last move may still be under way (a slide recorded at a square it crossed): the
        // board is then part-way through a sibling of it.
        if matches!(
            departure,
            Departure::Displaced { .. } | Departure::IllegalMove { .. }
        ) && let Some(parent) = g.parent()
            && matches!(
                G::departure(&parent.pos, parent.successors(), &reading, false),
                Departure::InProgress | Departure::Missing { .. }
            )
        {
            departure = Departure::InProgress;
        }
        let detail = match departure {
            Departure::InProgress => return,
            Departure::Displaced { detail } => detail,
            Departure::IllegalMove { detail } => {
                format!("{detail}; not completed (no clock press)")
            }
            // In the hand or knocked over: only the longer wait tells.
            Departure::Missing { .. } if at < since.saturating_add(self.settings.missing_ms) => {
                if let Some(u) = g.unexplained.as_mut() {
                    u.judged = false;
                    u.not_before = since.saturating_add(self.settings.missing_ms);
                }
                return;
            }
            Departure::Missing { detail } => format!("{detail} (missing: knocked over?)"),
        };
        report(g, at, since, IrregularityKind::Displaced, None, detail, out);
    }

    /// Before the first game: a complete wrong set-up, stable for the settle window, begins the
    /// game with a wrong start position reported.
    fn judge_setup(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        let Some((_, _, since, _)) = &self.setup else {
            return;
        };
        if at < since.saturating_add(self.settings.displaced_ms) {
            return;
        }
        if let Some((orientation, reading, since, detail)) = self.setup.take() {
            self.begin_wrong_setup(at, orientation, reading, since, detail, out);
        }
    }

    /// Remembers a complete wrong set-up seen while no game is on the board.
    fn watch_setup(&mut self, at: Millis, sensed: &impl Sensed<G::Reading>) {
        for o in [Orientation::Normal, Orientation::Rotated] {
            let reading = sensed.reading(o);
            if let Some(detail) = G::wrong_setup(&reading, self.settings.variant) {
                self.setup = Some((o, reading, at, detail));
                return;
            }
        }
    }

    /// A new game begins on a wrong set-up (7.2.1): it is reported, and resolved once the start
    /// position stands on the board.
    fn begin_wrong_setup(
        &mut self,
        at: Millis,
        orientation: Orientation,
        reading: G::Reading,
        since: Millis,
        detail: String,
        out: &mut Vec<TrackerEvent>,
    ) {
        self.flush(at, out);
        let mut g = GameState::new(orientation, self.start.clone(), at);
        g.unexplained = Some(Unexplained {
            key: G::reading_key(&reading),
            reading,
            since,
            searched: true,
            judged: true,
            not_before: 0,
        });
        self.white_on_left_votes = 0;
        out.push(TrackerEvent::GameStarted {
            at_ms: at,
            orientation,
            start: self.start_text(&self.start.pos),
        });
        report(
            &mut g,
            at,
            since,
            IrregularityKind::WrongStartPosition,
            None,
            detail,
            out,
        );
        self.game = Some(g);
    }

    /// What a clock press shows: an illegal move completed (7.5.1, 7.5.2), displaced pieces at
    /// the press, or a press with no move made (7.5.3).
    fn judge_press(
        &mut self,
        at: Millis,
        presser: Side,
        was_running: bool,
        out: &mut Vec<TrackerEvent>,
    ) {
        let max_distance = self.settings.displaced_max_distance;
        let Some(g) = self.game.as_mut() else {
            return;
        };
        if g.ended {
            return;
        }
        // A press that completes a move of the presser's not yet recorded is what presses are for
        // (the board may already show the opponent's reply in the hand).
        let pending =
            (g.base + 1..=g.belief_plies()).any(|ply| Side::of_ply(ply as u32) == presser);
        if pending {
            return;
        }
        let to_move = Side::of_ply(g.belief_plies() as u32 + 1);
        let Some(u) = g.unexplained.as_mut() else {
            if was_running && presser == to_move && g.is_settled() && g.open.is_empty() {
                let detail = "the clock was pressed with no move on the board".to_string();
                report(
                    g,
                    at,
                    at,
                    IrregularityKind::ClockWithoutMove,
                    Some(presser),
                    detail,
                    out,
                );
            }
            return;
        };
        let illegal_open = g
            .open
            .iter()
            .any(|(_, k)| *k == IrregularityKind::IllegalMove);
        let illegal_position_open = g
            .open
            .iter()
            .any(|(_, k)| *k == IrregularityKind::IllegalPosition);
        // After an illegal move the opponent completed a move of his own on that board: an
        // illegal position still standing is for the arbiter (A.5.4: a draw in rapid and blitz
        // without full supervision).
        if illegal_open && presser != to_move && !illegal_position_open {
            if let Some(what) = G::illegal_position(&u.reading) {
                let (since, detail) = (
                    u.since,
                    format!("{what}, still on the board after a move by the opponent"),
                );
                report(
                    g,
                    at,
                    since,
                    IrregularityKind::IllegalPosition,
                    None,
                    detail,
                    out,
                );
            }
            return;
        }
        if presser != to_move || illegal_open {
            return;
        }
        u.judged = true;
        let (reading, since) = (u.reading.clone(), u.since);
        let tip = g.tip();
        if G::reading_distance(tip.reading(), &reading) > max_distance {
            return;
        }
        match G::departure(&tip.pos, tip.successors(), &reading, true) {
            Departure::InProgress | Departure::Missing { .. } => {}
            Departure::IllegalMove { detail } => {
                let ply = g.belief_plies() as u32 + 1;
                for (id, _) in g.open.drain(..) {
                    out.push(TrackerEvent::Resolved {
                        at_ms: at,
                        id,
                        ply,
                        how: "completed by a clock press: an illegal move".to_string(),
                    });
                }
                report(
                    g,
                    at,
                    since,
                    IrregularityKind::IllegalMove,
                    Some(presser),
                    detail,
                    out,
                );
            }
            Departure::Displaced { detail } => {
                if g.open.is_empty() {
                    let detail = format!("{detail} (at a clock press)");
                    report(g, at, since, IrregularityKind::Displaced, None, detail, out);
                }
            }
        }
    }

    /// Starts a game if the board shows the start position (in `prefer` orientation first).
    fn try_start(
        &mut self,
        at: Millis,
        sensed: &impl Sensed<G::Reading>,
        current: Option<Orientation>,
        out: &mut Vec<TrackerEvent>,
    ) -> bool {
        // Before the first game a board turned a quarter is looked for too (it is rare, and
        // costs a key computed in full).
        let order: &[Orientation] = match current {
            Some(o) => &[o, o.flipped()],
            None => &[
                Orientation::Normal,
                Orientation::Rotated,
                Orientation::QuarterLeft,
                Orientation::QuarterRight,
            ],
        };
        for &o in order {
            let key = sensed.key(o);
            if let Some(start) = self.start_node(key)
                && sensed.reading(o) == *start.reading()
            {
                let start = start.clone();
                self.flush(at, out);
                let begins = self.start_text(&start.pos);
                let mut g = GameState::new(o, start, at);
                g.orientation_open = sensed.key(o.flipped()) == key;
                self.white_on_left_votes = 0;
                out.push(TrackerEvent::GameStarted {
                    at_ms: at,
                    orientation: o,
                    start: begins,
                });
                if !o.is_regular() {
                    let detail = "the pieces stand along the board's files: h1 is not a light \
                                  square on White's right (2.1); the game goes on"
                        .to_string();
                    report(
                        &mut g,
                        at,
                        at,
                        IrregularityKind::BoardRotated,
                        None,
                        detail,
                        out,
                    );
                }
                self.game = Some(g);
                return true;
            }
        }
        false
    }

    /// The start position whose reading has `key`, if one has.
    fn start_node(&self, key: u64) -> Option<&Node<G>> {
        let i = self.start_keys.partition_point(|&(k, _)| k < key);
        match self.start_keys.get(i) {
            Some(&(k, n)) if k == key => self.starts.get(n),
            _ => None,
        }
    }

    /// What a game's start event says of its start position: its text when the variant has
    /// more than the standard one (so that the store can resume and export it), else nothing.
    fn start_text(&self, pos: &G::Position) -> Option<String> {
        (self.settings.variant != Variant::Standard).then(|| G::position_text(pos))
    }

    /// Records what a clock press completed: the belief up to the presser's earliest move not
    /// yet recorded. A reply the opponent has begun before the press landed stays provisional.
    fn record_press(
        &mut self,
        at: Millis,
        clock: ClockReading,
        was_running: bool,
        out: &mut Vec<TrackerEvent>,
    ) {
        // The left player pressed when the lever went high on the right.
        let white_pressed = clock.lever_right_high == self.white_on_left();
        let presser = if white_pressed {
            Side::White
        } else {
            Side::Black
        };
        self.judge_press(at, presser, was_running, out);
        let Some(g) = self.game.as_ref() else {
            return;
        };
        if g.is_settled() {
            return;
        }
        // The press completes the presser's earliest move not yet recorded; anything after it
        // (the opponent's reply, even the presser's next move) waits for its own press.
        let limit = (g.base + 1..=g.belief_plies())
            .find(|ply| (ply % 2 == 1) == white_pressed)
            .unwrap_or(g.base);
        self.record_upto(at, Some(clock), limit, out);
    }

    /// Makes the belief the record, emitting the difference.
    fn record_belief(
        &mut self,
        at: Millis,
        press: Option<ClockReading>,
        out: &mut Vec<TrackerEvent>,
    ) {
        self.record_upto(at, press, usize::MAX, out);
    }

    /// Makes the first `limit` plies of the belief the record; later moves stay provisional.
    fn record_upto(
        &mut self,
        at: Millis,
        press: Option<ClockReading>,
        limit: usize,
        out: &mut Vec<TrackerEvent>,
    ) {
        self.press = None;
        let clock = press.or(self.clock);
        let white_on_left = self.white_on_left();
        let Some(g) = self.game.as_mut() else {
            return;
        };
        let mut prov = std::mem::take(&mut g.prov);
        let rest = prov.split_off(limit.saturating_sub(g.base).min(prov.len()));
        let mut keep = g.base;
        // A takeback followed by the same move again changes nothing.
        let mut same = 0;
        while keep < g.moves.len() && same < prov.len() && prov[same].0 == g.moves[keep] {
            keep += 1;
            same += 1;
        }
        prov.drain(..same);
        let mut prov = prov.into_iter();
        let old_len = g.moves.len();
        if keep < old_len {
            if keep + 1 == old_len
                && let Some((mv, node)) = prov.next()
            {
                let parent = &g.nodes[keep].pos;
                let new = recorded::<G>(parent, &mv, &node, keep, at, clock, white_on_left);
                let stamp = std::mem::replace(&mut g.stamps[keep], Stamp::of(&new));
                let old = stamp.rebuild::<G>(parent, &g.moves[keep], &g.nodes[keep + 1], keep);
                g.moves[keep] = mv;
                g.nodes[keep + 1] = node;
                out.push(TrackerEvent::Revision {
                    at_ms: at,
                    old,
                    new,
                });
            } else {
                g.moves.truncate(keep);
                g.stamps.truncate(keep);
                g.nodes.truncate(keep + 1);
                out.push(TrackerEvent::Takeback {
                    at_ms: at,
                    from_ply: old_len as u32,
                    to_ply: keep as u32,
                });
            }
            g.ended = false;
        }
        for (mv, node) in prov {
            let ply = g.moves.len();
            let rec = recorded::<G>(&g.nodes[ply].pos, &mv, &node, ply, at, clock, white_on_left);
            g.moves.push(mv);
            g.nodes.push(node);
            g.stamps.push(Stamp::of(&rec));
            out.push(TrackerEvent::Move(rec));
        }
        g.base = g.moves.len();
        g.prov = rest;
        // Positions far behind the record are only compared by key (takebacks): their move
        // lists and readings go, so a long game keeps a few kilobytes per board, not a megabyte.
        let keep_from = g.base.saturating_sub(self.settings.revise_depth + 2);
        if keep_from > g.trimmed {
            for node in &mut g.nodes[g.trimmed..keep_from] {
                node.succ = OnceCell::new();
                node.reading = OnceCell::new();
            }
            g.trimmed = keep_from;
        }
        if !g.ended
            && let Some((outcome, termination)) = G::outcome(
                &g.nodes[g.base].pos,
                !g.nodes[g.base].successors().is_empty(),
            )
        {
            g.ended = true;
            out.push(TrackerEvent::GameEnded {
                at_ms: at,
                after_ply: g.base as u32,
                outcome,
                termination: termination.to_string(),
            });
        }
    }
}

/// Reports an irregularity on `g`; all but a press without a move stay open until the board fits
/// the game again.
fn report<G: GameKind>(
    g: &mut GameState<G>,
    at: Millis,
    since: Millis,
    kind: IrregularityKind,
    player: Option<Side>,
    detail: String,
    out: &mut Vec<TrackerEvent>,
) {
    g.irregularities += 1;
    let id = g.irregularities;
    if !matches!(
        kind,
        IrregularityKind::ClockWithoutMove
            | IrregularityKind::BoardRotated
            | IrregularityKind::ClockMisSet
    ) {
        g.open.push((id, kind));
    }
    out.push(TrackerEvent::Irregularity {
        at_ms: at,
        since_ms: since,
        id,
        ply: g.belief_plies() as u32 + 1,
        kind,
        player,
        detail,
        article: None,
        ruling: None,
    });
}

fn find<M: Clone>(list: &[(u64, M)], key: u64) -> Option<M> {
    list.iter().find(|(k, _)| *k == key).map(|(_, m)| m.clone())
}

/// Up to `depth` legal moves from `from` that lead to the reading `sensed` (key `key`); a depth-first search in which every move but the last must show
/// on the board ([`GameKind::may_show`]). Returns the moves with the positions they reach.
fn moves_to<G: GameKind>(
    from: &Node<G>,
    key: u64,
    sensed: &G::Reading,
    depth: usize,
) -> Option<Vec<(G::Move, Node<G>)>> {
    if depth == 0 {
        return None;
    }
    let (pos, succ) = (&from.pos, from.successors());
    if let Some(mv) = find(succ, key) {
        let end = G::play(pos, &mv);
        if G::reading(&end) == *sensed {
            return Some(vec![(mv, Node::with_reading(end, key, sensed.clone()))]);
        }
    }
    if depth == 1 {
        return None;
    }
    for (k, mv) in succ {
        if !G::may_show(pos, mv, sensed) {
            continue;
        }
        let mid = Node::new(G::play(pos, mv), *k);
        if let Some(rest) = moves_to::<G>(&mid, key, sensed, depth - 1) {
            let mut path = Vec::with_capacity(rest.len() + 1);
            path.push((mv.clone(), mid));
            path.extend(rest);
            return Some(path);
        }
    }
    None
}

/// The time and clocks of a recorded ply.
#[derive(Clone, Copy, Debug)]
struct Stamp {
    at_ms: Millis,
    clock_white_ms: Option<u64>,
    clock_black_ms: Option<u64>,
}

impl Stamp {
    fn of(rec: &RecordedMove) -> Stamp {
        Stamp {
            at_ms: rec.at_ms,
            clock_white_ms: rec.clock_white_ms,
            clock_black_ms: rec.clock_black_ms,
        }
    }

    /// The recorded move this stamp belongs to, rebuilt from its positions.
    fn rebuild<G: GameKind>(
        self,
        before: &G::Position,
        mv: &G::Move,
        after: &Node<G>,
        plies_before: usize,
    ) -> RecordedMove {
        RecordedMove {
            ply: plies_before as u32 + 1,
            notation: G::notation(before, mv, &after.pos, !after.successors().is_empty()),
            uci: G::uci(before, mv),
            position: G::position_text(&after.pos),
            at_ms: self.at_ms,
            clock_white_ms: self.clock_white_ms,
            clock_black_ms: self.clock_black_ms,
            time_trouble: false,
        }
    }
}

fn recorded<G: GameKind>(
    before: &G::Position,
    mv: &G::Move,
    after: &Node<G>,
    plies_before: usize,
    at: Millis,
    clock: Option<ClockReading>,
    white_on_left: bool,
) -> RecordedMove {
    let (clock_white_ms, clock_black_ms) = match clock {
        Some(c) if white_on_left => (Some(c.left_ms), Some(c.right_ms)),
        Some(c) => (Some(c.right_ms), Some(c.left_ms)),
        None => (None, None),
    };
    Stamp {
        at_ms: at,
        clock_white_ms,
        clock_black_ms,
    }
    .rebuild::<G>(before, mv, after, plies_before)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod chess960_tests;
