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
pub mod irregularity;
mod presses;

pub use event::{RecordedMove, RecoverySource, Side, TrackerEvent};
pub use irregularity::IrregularityKind;

use std::cell::OnceCell;

use crate::{
    Millis,
    game::{Departure, GameKind, Outcome, Variant},
    sensor::{ClockReading, Orientation, Sensed},
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
    /// After a gap (the board not heard), the longest run of plies the search records from the
    /// last recorded position to what the board shows; it looks two plies further, so that a
    /// run is recorded only when no other run of up to two plies more explains the board.
    pub gap_plies: usize,
    /// At most this many positions are expanded for one board searched after a gap; a search
    /// cut short records nothing.
    pub gap_nodes: usize,
    /// After a gap, a board heard again that no run of moves explains for this long raises
    /// `thread_lost` (a piece in the hand when the board came back has time to be put down).
    pub lost_after_ms: Millis,
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
            gap_plies: 2,
            gap_nodes: 20_000,
            lost_after_ms: 2_000,
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
    reading: G::Reading,
    since: Millis,
    /// It has been looked at for irregularities (reported or found harmless).
    judged: bool,
    /// Not to be judged again before this (pieces missing wait for the longer window).
    not_before: Millis,
}

/// A game whose board was not heard for a while (a gap: a reconnect, a restart, a silence):
/// the record is all that is known, and the board is compared with it, and searched from it,
/// until it fits again. Nothing is judged meanwhile: the record lags the board, so a press or a
/// board unexplained is no evidence against a player.
struct Lost {
    /// When the gap began.
    since: Millis,
    /// Since when the board, heard again, has fitted nothing.
    unexplained_since: Option<Millis>,
    /// The `thread_lost` irregularity raised, if any.
    reported: Option<u32>,
    /// What the search last found on a board that fitted nothing.
    found: Option<GapSearch>,
    /// The clock showed presses the board does not explain: only the arbiter ends the gap.
    clock_disagrees: bool,
}

/// The clocks of the last press heard before a gap, after `plies` plies: a player who has not
/// pressed since still shows them.
#[derive(Clone, Copy, Debug)]
struct GapCheck {
    /// When the gap began.
    since: Millis,
    plies: usize,
    white: u64,
    black: u64,
    /// That press, if it was heard live (its time is when it was made, give or take a scan),
    /// and the increment the record's presses show: with both, the presses since are counted.
    press: Option<presses::Press>,
    increment_ms: Option<i64>,
}

impl GapCheck {
    fn time_of(&self, side: Side) -> u64 {
        match side {
            Side::White => self.white,
            Side::Black => self.black,
        }
    }
}

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
    fn describe(self, plies: usize) -> String {
        match self {
            GapSearch::Nothing => {
                format!("no run of up to {plies} legal moves from it leads to the board")
            }
            GapSearch::Ambiguous => {
                "more than one run of legal moves from it leads to the board".to_string()
            }
            GapSearch::CutShort => "the search for the moves was cut short".to_string(),
            GapSearch::ClockDisagrees => "the clock shows presses that the board does not \
                 explain (a piece moved and moved back, or a position came again): moves were \
                 missed"
                .to_string(),
        }
    }
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
    /// Set after a gap until the board fits the record again.
    lost: Option<Lost>,
    /// While lost: the run the search found for the board shown since this time, recorded
    /// once the board has stayed so (a hand part-way through a capture can show a board that
    /// two other moves explain).
    searched: Option<(Millis, Run<G>)>,
    /// While lost: every run from the record that explains a board more than one run
    /// explains, since the board has shown it (one ply deeper than the search looks for a
    /// second run, so that a run up to a ply longer than the search records can be told).
    ambiguous: Option<(Millis, Candidates<G>)>,
    /// Once that board has stayed so for the settle time, its runs: the board is heard all along
    /// after it, and the first other board a move or two from these runs is the one chance
    /// they have to tell which run was played (see [`carry_runs`]).
    candidates: Option<Candidates<G>>,
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
            searched: None,
            ambiguous: None,
            candidates: None,
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
    fn replayed(
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

    /// The record's last position, when the belief has been cut back below it (a provisional
    /// takeback, not yet pressed).
    fn record_tip(&self) -> Option<&Node<G>> {
        (self.base < self.moves.len())
            .then(|| self.nodes.get(self.moves.len()))
            .flatten()
    }

    /// The belief back on the record (a takeback it took for one was a hand passing by).
    fn back_to_record(&mut self, at: Millis) {
        self.base = self.moves.len();
        self.prov.clear();
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

/// How long the kings' gesture must stand with no clock press before it is reported.
const GESTURE_CONFIRM_MS: Millis = 800;

/// What a press that completes the one move in hand counts for in the vote on which clock is
/// White's, against one running-clock reading.
const PRESS_VOTE: i64 = 8;

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
    /// When `clock` was read.
    clock_at: Millis,
    /// Clock readings of this game in which the left-hand clock ran while White was to move,
    /// less those in which it ran while Black was.
    white_on_left_votes: i64,
    /// Which clock is White's was given ([`Tracker::settle_clock_side`]): readings cast no vote.
    clock_side_settled: bool,
    /// After a gap, until two presses are checked: the clocks the record's last press showed.
    gap_check: Option<GapCheck>,
    /// A press judged irregular recorded no move, and no move was recorded since: the
    /// running clock is not the record's side to move.
    lever_ahead: bool,
    /// When the sensed board last changed.
    sensed_changed_at: Millis,
    /// A clock press waiting for the sensors to show the move it completes (and whether a clock
    /// was running when it came).
    press: Option<(Millis, ClockReading, bool)>,
    /// A press its move has not come with yet: made while the board was not heard (the first
    /// reading after a gap showed the side to move's clock stopped), or before the move showed
    /// on the board; the move is recorded with this reading.
    unseen_press: Option<(Side, ClockReading)>,
    /// Presses still to come after a gap that are not judged.
    presses_after_gap: u8,
    /// The kings' gesture shown (when, and the result it proposes), reported once no press
    /// has followed it for [`GESTURE_CONFIRM_MS`].
    pending_gesture: Option<(Millis, Outcome)>,
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
            clock_at: 0,
            white_on_left_votes: 0,
            clock_side_settled: false,
            gap_check: None,
            lever_ahead: false,
            press: None,
            unseen_press: None,
            presses_after_gap: 0,
            pending_gesture: None,
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
        t.game = Some(GameState::replayed(
            orientation,
            start.unwrap_or_else(G::start),
            moves,
            at,
        )?);
        // The board played on, or not, while nobody listened.
        t.gap(at);
        Some(t)
    }

    /// Irregularities of this game are numbered after `n` (the highest its store holds: a
    /// game resumed after a restart goes on numbering them).
    pub fn number_irregularities_after(&mut self, n: u32) {
        if let Some(g) = self.game.as_mut() {
            g.irregularities = g.irregularities.max(n);
        }
    }

    /// The arbiter decided the game goes on from `moves` (its record now, as the store holds
    /// it): the game is played again from its start to their end, the irregularities still
    /// open are resolved (`how`), and tracking goes on from there as after a gap: until the
    /// board fits the new record it is searched from it and never judged (but the clock read
    /// last is kept: the stream was not broken, only the record). Returns `false`
    /// (and changes nothing) if there is no game or a move does not parse.
    pub fn rebase(
        &mut self,
        at: Millis,
        moves: &[RecordedMove],
        how: &str,
        out: &mut Vec<TrackerEvent>,
    ) -> bool {
        let Some(g) = self.game.as_ref() else {
            return false;
        };
        let start = g.nodes[0].pos.clone();
        let Some(mut next) = GameState::replayed(g.orientation, start, moves, at) else {
            return false;
        };
        self.resolve_open(at, how, out);
        let Some(g) = self.game.as_mut() else {
            return false;
        };
        next.irregularities = g.irregularities;
        next.clock_checked = g.clock_checked;
        *g = next;
        // The board was heard all along: its last clock reading stands, so the next lever
        // change is a press (the players go on while the arbiter enters the decision).
        let clock = self.clock;
        self.gap(at);
        self.clock = clock;
        // The arbiter decided at the board, where the clocks are often stopped, or set (two
        // minutes for an illegal move, 7.5.5): the clock is not held against the record.
        self.gap_check = None;
        true
    }

    /// The game's start position as the store keeps it (see [`TrackerEvent::GameStarted`]).
    pub fn game_start_text(&self) -> Option<String> {
        let g = self.game.as_ref()?;
        self.start_text(&g.nodes[0].pos)
    }

    /// The board was not heard from `at` on (it went away, the daemon restarts, it fell
    /// silent): what was done on it meanwhile is unknown. The belief goes back to the record,
    /// a press waiting its scan is dropped and the clock forgotten (its lever may move
    /// meanwhile, which is no press), and until the board fits the record again it is searched
    /// from the record and never judged.
    pub fn gap(&mut self, at: Millis) {
        if let Some(g) = self.game.as_mut() {
            g.searched = None;
            g.ambiguous = None;
            g.candidates = None;
        }
        self.press = None;
        self.clock = None;
        self.unseen_press = None;
        self.presses_after_gap = 2;
        self.pending_gesture = None;
        self.sensed_changed_at = at;
        let Some(g) = self.game.as_mut() else {
            return;
        };
        let gesture_reported = g.gesture_reported;
        g.truncate(g.moves.len(), at);
        g.gesture_reported = gesture_reported;
        if !g.ended && g.lost.is_none() {
            g.lost = Some(Lost {
                since: at,
                unexplained_since: None,
                reported: None,
                found: None,
                clock_disagrees: false,
            });
        }
        // The clocks of the last press heard: what the players' clocks show until they press
        // again.
        // The latest run of plies each pressed live tells the increment.
        let run_from = g
            .stamps
            .iter()
            .rposition(|s| s.live_press().is_none())
            .map_or(0, |i| i + 1);
        let live: Vec<presses::Press> = g.stamps[run_from..]
            .iter()
            .filter_map(Stamp::live_press)
            .collect();
        let increment_ms = presses::increment_ms(&live);
        self.gap_check = g
            .stamps
            .last()
            .filter(|s| s.pressed)
            .and_then(|s| Some((s.clock_white_ms?, s.clock_black_ms?, s.live_press())))
            .map(|(white, black, press)| GapCheck {
                since: at,
                plies: g.moves.len(),
                white,
                black,
                press,
                increment_ms,
            });
    }

    /// The result gesture after the record's last move was reported before (a restart): it is
    /// not reported again while the board shows it.
    pub fn gesture_already_reported(&mut self) {
        if let Some(g) = self.game.as_mut() {
            g.gesture_reported = true;
        }
    }

    /// Whether the board has not fitted the record since a gap: the record may lag the board.
    pub fn is_lost(&self) -> bool {
        self.game.as_ref().is_some_and(|g| g.lost.is_some())
    }

    /// Whether the sensed board is one the belief explains (nothing in the hands, nothing
    /// unexplained).
    pub fn board_fits(&self) -> bool {
        self.game.as_ref().is_none_or(|g| g.unexplained.is_none())
    }

    /// Since when the board, heard again after a gap, has fitted nothing (while lost).
    pub fn unexplained_since(&self) -> Option<Millis> {
        self.game
            .as_ref()
            .and_then(|g| g.lost.as_ref())
            .and_then(|l| l.unexplained_since)
    }

    /// Whether the board has been lost long enough for `thread_lost` to be raised.
    pub fn thread_lost(&self) -> bool {
        self.game
            .as_ref()
            .and_then(|g| g.lost.as_ref())
            .is_some_and(|l| l.reported.is_some())
    }

    /// Moves read from the board's own memory after a gap: `recorded` follow the record, in
    /// order, each with the clocks memory holds, and `in_hand` follow them, their presses still
    /// to come. The first are recorded as they are (at `at`: when they were made is not known,
    /// their clocks say), with a `recovered_from_memory` event ahead of them; the others join
    /// the belief, for their presses to record. Each is checked to be legal where it is played.
    /// Returns how many were recorded: none if they do not follow the record, up to the first
    /// that is not legal.
    pub fn recover(
        &mut self,
        at: Millis,
        recorded: &[RecordedMove],
        in_hand: &[RecordedMove],
        out: &mut Vec<TrackerEvent>,
    ) -> usize {
        let Some(g) = self.game.as_mut() else {
            return 0;
        };
        let from = g.moves.len();
        // What the search found from the record before is not what memory says.
        g.searched = None;
        let plies = recorded.iter().chain(in_hand);
        if recorded
            .first()
            .or(in_hand.first())
            .is_none_or(|p| p.ply as usize != from + 1)
        {
            return 0;
        }
        let mut path = Vec::new();
        let mut node = g.nodes[from].clone();
        for rec in plies {
            let Some(mv) = rec.to_move::<G>(&node.pos) else {
                break;
            };
            let next = G::play(&node.pos, &mv);
            let key = G::reading_key(&G::reading(&next));
            node = Node::new(next, key);
            path.push((mv, node.clone(), Stamp::of(rec)));
        }
        let n = path.len().min(recorded.len());
        let hand = path.split_off(n);
        g.truncate(from, at);
        if n > 0 {
            out.push(TrackerEvent::Recovered {
                at_ms: at,
                since_ms: g.lost.as_ref().map_or(at, |l| l.since),
                from_ply: from as u32 + 1,
                to_ply: (from + n) as u32,
                source: RecoverySource::Memory,
            });
        }
        for (mv, node, stamp) in path {
            let ply = g.moves.len();
            let stamp = Stamp {
                at_ms: at,
                live: false,
                ..stamp
            };
            let rec = stamp.rebuild::<G>(&g.nodes[ply].pos, &mv, &node, ply);
            g.moves.push(mv);
            g.nodes.push(node);
            g.stamps.push(stamp);
            out.push(TrackerEvent::Move(rec));
        }
        g.base = g.moves.len();
        for (mv, node, _) in hand {
            g.push(mv, node, at);
        }
        self.after_record(at, out);
        n
    }

    /// Orientation of the game being recorded.
    pub fn orientation(&self) -> Option<Orientation> {
        self.game.as_ref().map(|g| g.orientation)
    }

    /// The recorded plies of the current game, each as its UCI (or its notation, for a game
    /// without UCI): what board memory is matched against.
    pub fn record_text(&self) -> Vec<String> {
        let Some(g) = self.game.as_ref() else {
            return Vec::new();
        };
        g.moves
            .iter()
            .enumerate()
            .map(|(i, mv)| {
                let (before, after) = (&g.nodes[i].pos, &g.nodes[i + 1].pos);
                G::uci(before, mv).unwrap_or_else(|| G::notation(before, mv, after, true))
            })
            .collect()
    }

    /// The clocks (White's, Black's) each recorded ply's press showed, where a press stamped it.
    pub fn record_clocks(&self) -> Vec<Option<(u64, u64)>> {
        let Some(g) = self.game.as_ref() else {
            return Vec::new();
        };
        g.stamps
            .iter()
            .map(|s| s.clock_white_ms.zip(s.clock_black_ms).filter(|_| s.pressed))
            .collect()
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

    /// Whether White's clock is the left-hand one, once it was given or the readings have
    /// settled it (at least one press's vote); `None` before.
    pub fn clock_side(&self) -> Option<bool> {
        (self.clock_side_settled || self.white_on_left_votes.abs() >= PRESS_VOTE)
            .then(|| self.white_on_left())
    }

    /// Which clock is White's is known (a board's memory read with what the live readings
    /// settled): it no longer follows the votes of this tracker's own readings.
    pub fn settle_clock_side(&mut self, white_on_left: bool) {
        self.clock_side_settled = true;
        self.white_on_left_votes = if white_on_left { 1 } else { -1 };
    }

    /// Who is to move on the board as the tracker believes it (the record and the moves in
    /// hand after it); `None` before a game.
    pub fn side_to_move(&self) -> Option<Side> {
        let g = self.game.as_ref()?;
        Some(Side::of_ply(g.belief_plies() as u32 + 1))
    }

    /// The variant whose games this tracker records.
    pub fn variant(&self) -> Variant {
        self.settings.variant
    }

    /// Lets time pass: records a belief that has been stable long enough.
    pub fn tick(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        if let Some((pressed_at, clock, was_running)) = self.press
            && at >= pressed_at.saturating_add(self.settings.scan_ms)
        {
            self.press = None;
            self.record_press(at, clock, was_running, out);
        }
        if let Some((since, proposed)) = self.pending_gesture
            && at >= since.saturating_add(GESTURE_CONFIRM_MS)
        {
            self.pending_gesture = None;
            // Still on the board, with no press since.
            if self.sensed_changed_at <= since {
                self.report_gesture(at, since, proposed, out);
            }
        }
        self.accept_search(at, out);
        self.raise_lost(at, out);
        self.judge(at, out);
        let running = self.clock.is_some_and(|c| c.running);
        let Some(g) = self.game.as_ref() else {
            return;
        };
        // The kings' gesture shown: what the belief holds now is settled by its report, or by
        // the press that cancels it.
        if g.is_settled() || self.pending_gesture.is_some() {
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

    /// After a gap, a board heard again that has fitted nothing for `lost_after_ms` raises
    /// `thread_lost`: the record stops where it stops, and says so.
    fn raise_lost(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        let wait = self.settings.lost_after_ms;
        let plies = self.settings.gap_plies;
        let Some(g) = self.game.as_mut() else {
            return;
        };
        let Some(lost) = g.lost.as_ref() else {
            return;
        };
        let Some(heard) = lost.unexplained_since else {
            return;
        };
        // A run found for the board is recorded once the board stays: nothing is lost yet.
        if g.searched.is_some() {
            return;
        }
        if lost.reported.is_some() || at < heard.saturating_add(wait) {
            return;
        }
        let (since, found) = (lost.since, lost.found.unwrap_or(GapSearch::Nothing));
        let n = g.moves.len();
        let last = match (g.moves.last(), n.checked_sub(1)) {
            (Some(mv), Some(i)) => {
                let (before, after) = (&g.nodes[i], &g.nodes[n]);
                let text = G::notation(&before.pos, mv, &after.pos, true);
                format!("ply {n} ({text})")
            }
            _ => "the start (no move recorded)".to_string(),
        };
        let board = g
            .unexplained
            .as_ref()
            .map_or_else(String::new, |u| format!(" {:?}", u.reading));
        let detail = format!(
            "the board was not heard from {since} ms; heard again from {heard} ms it shows{board}, \
             which the record does not reach: it stops after {last}, and {}; \
             recording waits for the board to fit the record again, or for the arbiter",
            found.describe(plies)
        );
        report(
            g,
            at,
            since,
            IrregularityKind::ThreadLost,
            None,
            detail,
            out,
        );
        let id = g.irregularities;
        if let Some(lost) = g.lost.as_mut() {
            lost.reported = Some(id);
        }
    }

    /// A board seen while lost (after a gap) that neither the record's position nor one move
    /// from it explains: searched for the run of moves that leads to it, recorded when exactly
    /// one does. A result shown right after the record ends the gap (the game is over, it is
    /// reported as ever). Returns whether the board was dealt with here.
    fn interpret_lost(
        &mut self,
        at: Millis,
        key: u64,
        reading: &G::Reading,
        out: &mut Vec<TrackerEvent>,
    ) -> bool {
        let (plies, nodes) = (self.settings.gap_plies, self.settings.gap_nodes);
        let Some(g) = self.game.as_mut() else {
            return false;
        };
        if g.lost.is_none() {
            return false;
        }
        g.searched = None;
        let unexplained = |g: &mut GameState<G>| {
            g.unexplained = Some(Unexplained {
                reading: reading.clone(),
                since: at,
                judged: true,
                not_before: 0,
            });
        };
        // The clock said moves were missed: no board tells which, the arbiter does.
        if g.lost.as_ref().is_some_and(|l| l.clock_disagrees) {
            unexplained(g);
            return true;
        }
        let shown = G::result_token(reading).or_else(|| G::result_gesture(reading));
        // Both kings moved to the centre, or a result piece put down, and nothing else.
        if shown.is_some() && G::shows_only_result(g.tip().reading(), reading) {
            g.lost = None;
            return false;
        }
        if let Some(lost) = g.lost.as_mut() {
            lost.unexplained_since.get_or_insert(at);
        }
        if g.failed_search_key == Some(key) && g.candidates.is_none() {
            unexplained(g);
            return true;
        }
        // From the record: moves memory found in the hands may have been changed since.
        if !g.prov.is_empty() {
            g.truncate(g.moves.len(), at);
        }
        let mut found = explain_gap::<G>(g.tip(), key, reading, plies, nodes);
        // The runs of a settled board seen before, carried on to this one, say more than a
        // search from the record: the run played passes through that board.
        if let Some(c) = g.candidates.as_mut() {
            match carry_runs::<G>(c, key, reading, nodes) {
                Carried::Same => c.unexplained_since = None,
                Carried::Nothing => {
                    c.unexplained_since.get_or_insert(at);
                }
                Carried::One(run) => {
                    found = Ok(run);
                    g.candidates = None;
                }
                Carried::Several => {
                    found = Err(GapSearch::Ambiguous);
                    g.candidates = None;
                }
            }
        }
        g.ambiguous = match &found {
            Err(GapSearch::Ambiguous) => gap_runs::<G>(g.tip(), key, reading, plies + 3, nodes)
                .map(|runs| {
                    let candidates = Candidates {
                        key,
                        runs,
                        depth: plies + 3,
                        unexplained_since: None,
                    };
                    (at, candidates)
                }),
            _ => None,
        };
        let Some(lost) = g.lost.as_mut() else {
            return false;
        };
        let run_found = found.is_ok();
        match found {
            Ok(path) => g.searched = Some((at, path)),
            Err(found) => {
                lost.found = Some(found);
                g.failed_search_key = Some(key);
            }
        }
        unexplained(g);
        if run_found {
            self.accept_search(at, out);
        }
        true
    }

    /// The run the search found after a gap, once the board has shown it for the settle time
    /// (while a clock runs and the run leaves its mover's clock running, as long as a move waits
    /// for its press), and if the clock counts as many presses since the gap as it has plies:
    /// recorded, and the gap is over.
    fn accept_search(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        let (changed, settle_ms) = (self.sensed_changed_at, self.settings.settle_ms);
        if let Some(g) = self.game.as_mut() {
            if let Some((since, _)) = &g.ambiguous
                && (changed > *since || at >= since.saturating_add(settle_ms))
                && let Some((since, candidates)) = g.ambiguous.take()
                && changed <= since
            {
                // Settled: its runs are the candidates the next boards are explained by.
                g.candidates = Some(candidates);
            }
            // A board that has stayed so, which they do not explain: play went past them.
            if let Some(since) = g.candidates.as_ref().and_then(|c| c.unexplained_since)
                && changed <= since
                && at >= since.saturating_add(settle_ms)
            {
                g.candidates = None;
            }
        }
        if self.game.as_ref().is_none_or(|g| g.searched.is_none()) {
            return;
        }
        let (gap_check, clock_side) = (self.gap_check, self.clock_side());
        let clock = self.clock.map(|r| (self.clock_at, r));
        let presser = self.clock.map(|r| self.presser(&r));
        let changed = self.sensed_changed_at;
        let Some(g) = self.game.as_mut() else {
            return;
        };
        let Some((since, path)) = g.searched.as_ref() else {
            return;
        };
        if changed > *since || g.lost.is_none() {
            g.searched = None;
            return;
        }
        let belief = g.moves.len() + path.len();
        // The run found must have as many presses as the clock counts since the gap: if not,
        // it is not recorded (a hand part-way through a move can stay that long), and the board
        // stays unexplained until it changes. If so, it is recorded at once (play may not pause).
        let counted = match (gap_check, clock) {
            (Some(check), Some((read_at, r))) if belief >= check.plies => {
                presses_agree(&check, read_at, &r, belief - check.plies, clock_side)
            }
            _ => None,
        };
        if counted == Some(false) {
            g.searched = None;
            if let Some(lost) = g.lost.as_mut() {
                lost.found = Some(GapSearch::ClockDisagrees);
            }
            return;
        }
        // The run's last mover pressed (or the clock tells nothing).
        let pressed_for = match (clock, presser) {
            (Some((_, r)), Some(p)) => {
                !r.running || clock_side.is_none() || p == Side::of_ply(belief as u32)
            }
            _ => true,
        };
        let wait = match (counted, pressed_for) {
            (Some(true), true) => 0,
            (_, true) => self.settings.settle_ms,
            (_, false) => self.settings.press_wait_ms,
        };
        if at < since.saturating_add(wait) {
            return;
        }
        let Some((_, path)) = g.searched.take() else {
            return;
        };
        let Some(lost) = g.lost.take() else {
            return;
        };
        let from = g.moves.len() as u32;
        out.push(TrackerEvent::Recovered {
            at_ms: at,
            since_ms: lost.since,
            from_ply: from + 1,
            to_ply: from + path.len() as u32,
            source: RecoverySource::Search,
        });
        g.unexplained = None;
        for (mv, node) in path {
            g.push(mv, node, at);
        }
        // When the moves were made is not known: they carry no clock.
        self.record_upto(at, None, false, usize::MAX, out);
        self.resolve_open(
            at,
            "the moves missed were found: the board fits the game",
            out,
        );
    }

    /// Records whatever the belief holds now (end of a capture, an orderly shutdown), and the
    /// kings' gesture still on the board.
    pub fn flush(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        if let Some((since, proposed)) = self.pending_gesture.take()
            && self.sensed_changed_at <= since
        {
            self.report_gesture(at, since, proposed, out);
        }
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
        let first = self.clock.is_none();
        if pressed {
            // The kings moved as a move: the press judges it.
            self.pending_gesture = None;
        }
        // After a gap, the first reading and the first two presses are checked against the
        // clocks of the last press heard.
        if self.presses_after_gap > 0 && (first || pressed) {
            let presser = pressed.then(|| self.presser(&reading));
            if self.clock_disagrees(at, &reading, presser) {
                self.clock = Some(reading);
                self.clock_at = at;
                self.lose_to_clock(at);
                return;
            }
        } else if self.presses_after_gap == 0 && !self.is_lost() {
            // While lost, the presses counted since the gap still check what the search finds.
            self.gap_check = None;
        }
        self.clock = Some(reading);
        self.clock_at = at;
        if first && reading.running {
            self.note_unseen_press(reading);
        }
        self.check_clock(at, reading, out);
        let Some(g) = self.game.as_ref() else {
            return;
        };
        // Which clock is White's is a vote over the game (unless it was given), cast only where
        // the record cannot lag the clock. A press that completes the one move in hand was made
        // by its mover (the lever goes high on the right when the left player presses): a
        // strong vote, cast only while the board shows nothing the record does not explain. A
        // running clock votes for the record's side to move, but not while a press waits its
        // scan, nor after a press judged irregular that recorded no move (an illegal move
        // pressed and taken back) until a move is recorded, nor from a gap until two presses
        // after it: a press made while the board was not heard leaves the record a move behind
        // the clock.
        let fits_record = self.press.is_none()
            && g.lost.is_none()
            && g.unexplained.is_none()
            && g.base == g.moves.len();
        if !pressed {
            if reading.running
                && self.press.is_none()
                && g.lost.is_none()
                && self.presses_after_gap == 0
                && !self.lever_ahead
                && !self.clock_side_settled
            {
                let white_to_move = g.moves.len() % 2 == 0;
                let left_runs = !reading.lever_right_high;
                self.white_on_left_votes += if left_runs == white_to_move { 1 } else { -1 };
            }
            return;
        }
        // From a gap, the first two presses may complete moves made unseen: no vote.
        if fits_record
            && g.prov.len() == 1
            && !self.clock_side_settled
            && self.presses_after_gap == 0
        {
            let white_moved = g.base % 2 == 0;
            let left_pressed = reading.lever_right_high;
            self.white_on_left_votes += if white_moved == left_pressed {
                PRESS_VOTE
            } else {
                -PRESS_VOTE
            };
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

    /// After a gap, whether a clock reading (a press by `presser`, or the first reading) shows
    /// presses the belief does not explain: a player who has not moved since the last press
    /// heard (as the belief has it) still shows that press's time, on their clock while it
    /// stands (the first reading, nothing played since) or as it starts (at a press by the other
    /// player; both checked once which clock is White's is known, or on a stopped clock). A
    /// piece that went and came back, or a position that came again, leaves the board as the
    /// record has it: the clock tells.
    fn clock_disagrees(&self, at: Millis, reading: &ClockReading, presser: Option<Side>) -> bool {
        let (Some(check), Some(g)) = (self.gap_check, self.game.as_ref()) else {
            return false;
        };
        // A board past the belief is for memory or the search; the count checks what they find.
        if check.plies == 0 || g.moves.len() < check.plies || g.ended || !self.shows_belief(g) {
            return false;
        }
        // (A belief taken back past the last press heard is not counted against.)
        if let Some(plies) = g.belief_plies().checked_sub(check.plies)
            && presses_agree(&check, at, reading, plies, self.clock_side()) == Some(false)
        {
            return true;
        }
        let moved = |side: Side| {
            (check.plies + 1..=g.belief_plies()).any(|p| Side::of_ply(p as u32) == side)
        };
        let side_known = self.clock_side().is_some();
        let white_left = self.white_on_left();
        let shown = |side: Side| {
            if (side == Side::White) == white_left {
                reading.left_ms
            } else {
                reading.right_ms
            }
        };
        match presser {
            Some(p) => {
                let other = p.other();
                side_known && !moved(other) && shown(other) != check.time_of(other)
            }
            None => {
                if g.belief_plies() != check.plies {
                    return false;
                }
                // The last mover's clock, if it stands (its opponent has not pressed since), is
                // at that press; when it runs, the opponent pressed, and their move is still to
                // show. Without knowing which clock is White's, only a stopped clock tells.
                let last = Side::of_ply(check.plies as u32);
                let want = check.time_of(last);
                if side_known {
                    let last_on_left = (last == Side::White) == white_left;
                    let standing = !reading.running || reading.lever_right_high == last_on_left;
                    standing && shown(last) != want
                } else {
                    !reading.running && reading.left_ms != want && reading.right_ms != want
                }
            }
        }
    }

    /// Whether the sensed board is the belief's, or the result shown beside it (the kings in
    /// the centre): only then is the clock held against the belief after a gap. A board that
    /// fits nothing else (a piece in the hand, moves the search cannot tell yet) may be a move
    /// or more past it.
    fn shows_belief(&self, g: &GameState<G>) -> bool {
        g.unexplained.is_none() || self.pending_gesture.is_some()
    }

    /// The clock disagreed with the board after a gap: what the belief holds beyond the record
    /// is dropped, and the gap stays open until the arbiter resumes the game (`thread_lost` is
    /// raised as for a board that fits nothing).
    fn lose_to_clock(&mut self, at: Millis) {
        let Some(check) = self.gap_check.take() else {
            return;
        };
        self.press = None;
        self.unseen_press = None;
        let Some(g) = self.game.as_mut() else {
            return;
        };
        g.truncate(g.moves.len(), at);
        let reading = g.tip().reading().clone();
        g.unexplained = Some(Unexplained {
            reading,
            since: at,
            judged: true,
            not_before: 0,
        });
        let reported = g.lost.as_ref().and_then(|l| l.reported);
        g.lost = Some(Lost {
            since: check.since,
            unexplained_since: Some(at),
            reported,
            found: Some(GapSearch::ClockDisagrees),
            clock_disagrees: true,
        });
    }

    /// Who pressed to leave the lever as `reading` shows it: the left player pressed when the
    /// lever went high on the right.
    fn presser(&self, reading: &ClockReading) -> Side {
        presser_of(reading, self.white_on_left())
    }

    /// The first clock reading of a game or after a gap: if it shows the side to move's clock
    /// stopped, that side pressed unseen (see [`Tracker::unseen_press`]).
    fn note_unseen_press(&mut self, reading: ClockReading) {
        let presser = self.presser(&reading);
        let Some(g) = self.game.as_ref() else {
            return;
        };
        if !g.ended && presser == Side::of_ply(g.base as u32 + 1) {
            self.unseen_press = Some((presser, reading));
        }
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
        self.count_presses_on_board(at);
    }

    /// After a gap, a board the belief explains again (one heard first with a piece in the
    /// hand, say) is held against the presses the clock counts since the gap, as the first
    /// reading would have been had the board shown it then (with the last reading: the moves
    /// made since may be pressed or not).
    fn count_presses_on_board(&mut self, at: Millis) {
        let (Some(check), Some(reading)) = (self.gap_check, self.clock) else {
            return;
        };
        let Some(g) = self.game.as_ref() else {
            return;
        };
        if !self.shows_belief(g)
            || g.ended
            || g.moves.len() < check.plies
            || g.lost.as_ref().is_some_and(|l| l.clock_disagrees)
        {
            return;
        }
        // The moves not yet recorded may not be pressed yet (a quick reply begun before the
        // press): any count from the record's plies to the belief's will do.
        let side = self.clock_side();
        let (Some(most), Some(least)) = (
            g.belief_plies().checked_sub(check.plies),
            g.base.min(g.moves.len()).checked_sub(check.plies),
        ) else {
            return;
        };
        let disagrees = (least..=most)
            .all(|p| presses_agree(&check, self.clock_at, &reading, p, side) == Some(false));
        if disagrees {
            self.lose_to_clock(at);
        }
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
        // After a gap the clock showed presses the board does not explain: nothing the board
        // shows is taken as play until the arbiter decides (or a new game is set up).
        let clock_lost = self
            .game
            .as_ref()
            .and_then(|g| g.lost.as_ref())
            .is_some_and(|l| l.clock_disagrees);
        if !clock_lost && key == self.game.as_ref().map_or(0, |g| g.tip().key) {
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
            if let Some(g) = self.game.as_mut() {
                g.lost = None;
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
        if !clock_lost
            && let Some(g) = self.game.as_mut()
            && let Some((mv, node)) = g.tip().move_to(key, reading)
        {
            g.push(mv, node, at);
            g.lost = None;
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
        // After a gap nothing is taken back or revised: what was recorded before it stands,
        // and what came after it is searched for.
        if self.game.as_ref().is_some_and(|g| g.lost.is_some())
            && self.interpret_lost(at, key, reading(), out)
        {
            return;
        }
        let Some(g) = self.game.as_mut() else {
            return;
        };
        // The belief taken back below the record, and the board on the record again, or one
        // legal move on: a hand passing by showed the earlier position (a pawn knocked back
        // to where it stood); what presses confirmed stands.
        if let Some(tip) = g.record_tip() {
            if tip.key == key && tip.reading() == reading() {
                g.back_to_record(at);
                self.resolve_open(at, "the board fits the game again", out);
                return;
            }
            if let Some((mv, node)) = tip.move_to(key, reading) {
                g.back_to_record(at);
                g.push(mv, node, at);
                self.resolve_open(at, "the board fits the game again", out);
                return;
            }
        }
        if g.failed_search_key == Some(key) {
            g.unexplained = Some(Unexplained {
                reading: reading().clone(),
                since: at,
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
        // Recorded plies are revised only for a board no move from the belief explains part-way:
        // a board part-way through a legal move (a capture slid in, its victim lifted first)
        // keeps what presses confirmed.
        let depth = (g.prov.len() + self.settings.revise_depth).min(plies);
        for back in (plies - depth..plies.saturating_sub(1)).rev() {
            if let Some((mv, node)) = g.belief_node(back).move_to(key, reading) {
                let tip = g.tip();
                if back < g.moves.len()
                    && matches!(
                        G::departure(&tip.pos, tip.successors(), reading(), false),
                        Departure::InProgress | Departure::Missing { .. }
                    )
                {
                    break;
                }
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
            reading: sensed_reading.clone(),
            since: at,
            judged: false,
            not_before: 0,
        });
        // A result piece set on the board (reported at once), or the kings' gesture (it moves
        // both kings: at least two places differ), reported once no press followed it: a king
        // moved to the centre where the other already stands, then pressed, is a move (an
        // illegal one, judged at the press), not the gesture.
        if g.gesture_reported {
            return;
        }
        if let Some(proposed) = G::result_token(sensed_reading) {
            self.report_gesture(at, at, proposed, out);
        } else if distance >= 2
            && let Some(proposed) = G::result_gesture(sensed_reading)
        {
            self.pending_gesture = Some((at, proposed));
        }
    }

    /// Reports the result shown at `shown_at` (now `at`): moves the gesture may have begun are
    /// dropped, the belief recorded, and the result proposed.
    fn report_gesture(
        &mut self,
        at: Millis,
        shown_at: Millis,
        proposed: Outcome,
        out: &mut Vec<TrackerEvent>,
    ) {
        {
            // A press waiting its scan completed the presser's move before the kings moved:
            // that move stands.
            if let Some((_, clock, running)) = self.press.take() {
                self.record_press(at, clock, running, out);
            }
            let Some(g) = self.game.as_mut() else {
                return;
            };
            // On their way to the centre the kings may have shown an earlier position (a king
            // put back where it stood before its last move) or a sibling of the last move: no
            // takeback, no revision, the record stands. A revision the kings cannot have made
            // (a queen's slide completed after its press, before the kings moved) stands.
            if g.base < g.moves.len() {
                let mut parent = g.nodes[g.base].pos.clone();
                let by_kings = g.prov.is_empty()
                    || g.prov.iter().any(|(mv, node)| {
                        let kings = G::gesture_may_include(&parent, mv);
                        parent = node.pos.clone();
                        kings
                    });
                if by_kings {
                    g.base = g.moves.len();
                    g.prov.clear();
                }
            }
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
                    at_ms: shown_at,
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
        if g.clock_checked || g.lost.is_some() {
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
        if g.ended || g.gesture_reported || !g.open.is_empty() || g.lost.is_some() {
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
            reading,
            since,
            judged: true,
            not_before: 0,
        });
        if !self.clock_side_settled {
            self.white_on_left_votes = 0;
        }
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
        // The first press of each side after a gap may complete a move made, or pressed for,
        // while the board was not heard: it is not judged.
        let after_gap = self.presses_after_gap > 0;
        self.presses_after_gap = self.presses_after_gap.saturating_sub(1);
        let Some(g) = self.game.as_mut() else {
            return;
        };
        // After a gap the record lags the board: a press is no evidence of anything.
        if g.ended || g.lost.is_some() || after_gap {
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
                if !self.clock_side_settled {
                    self.white_on_left_votes = 0;
                }
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
        let presser = self.presser(&clock);
        let judged_before = self.game.as_ref().map_or(0, |g| g.irregularities);
        self.judge_press(at, presser, was_running, out);
        let Some(g) = self.game.as_ref() else {
            return;
        };
        let judged = g.irregularities > judged_before;
        // The press completes the presser's earliest move not yet recorded; anything after it
        // (the opponent's reply, even the presser's next move) waits for its own press.
        let pending =
            (g.base + 1..=g.belief_plies()).find(|&ply| Side::of_ply(ply as u32) == presser);
        // A press by the side to move before its move shows on the board (slow hands still
        // setting it down): its move is stamped with this press when it is recorded.
        if pending.is_none() && !g.ended && presser == Side::of_ply(g.moves.len() as u32 + 1) {
            self.unseen_press = Some((presser, clock));
        }
        let before = g.moves.len();
        if !g.is_settled() {
            self.record_upto(at, Some(clock), true, pending.unwrap_or(g.base), out);
        }
        // A press judged irregular that recorded no move (an illegal move pressed, a press
        // with no move) leaves the lever a move ahead of the record until a move is recorded.
        if self.recorded_plies() > before {
            self.lever_ahead = false;
        } else if judged {
            self.lever_ahead = true;
        }
    }

    /// Makes the belief the record, emitting the difference.
    fn record_belief(
        &mut self,
        at: Millis,
        press: Option<ClockReading>,
        out: &mut Vec<TrackerEvent>,
    ) {
        let before = self.recorded_plies();
        self.record_upto(at, press.or(self.clock), press.is_some(), usize::MAX, out);
        if self.recorded_plies() > before {
            self.lever_ahead = false;
        }
    }

    /// Makes the first `limit` plies of the belief the record, with `clock` (`None`: not
    /// known; `pressed`: as a press showed it); later moves stay provisional. A ply revised
    /// after its press keeps the press's clocks.
    fn record_upto(
        &mut self,
        at: Millis,
        clock: Option<ClockReading>,
        pressed: bool,
        limit: usize,
        out: &mut Vec<TrackerEvent>,
    ) {
        self.press = None;
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
                let mut new = recorded::<G>(parent, &mv, &node, keep, at, clock, white_on_left);
                let was = g.stamps[keep];
                // A ply is pressed once: a later press (the opponent's, completing the next
                // move) or the settle time re-stamps it no better.
                if was.pressed {
                    new.clock_white_ms = was.clock_white_ms;
                    new.clock_black_ms = was.clock_black_ms;
                }
                let stamp = std::mem::replace(
                    &mut g.stamps[keep],
                    Stamp {
                        pressed: pressed || was.pressed,
                        ..Stamp::of(&new)
                    },
                );
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
            // A move made after its press was seen (or pressed while the board was not heard)
            // carries that press, unless a press of its own records it now.
            let clock = match self.unseen_press {
                Some((side, reading)) if side == Side::of_ply(ply as u32 + 1) => {
                    self.unseen_press = None;
                    if pressed { clock } else { Some(reading) }
                }
                _ => clock,
            };
            let rec = recorded::<G>(&g.nodes[ply].pos, &mv, &node, ply, at, clock, white_on_left);
            g.moves.push(mv);
            g.nodes.push(node);
            g.stamps.push(Stamp {
                pressed: pressed && clock.is_some(),
                ..Stamp::of(&rec)
            });
            out.push(TrackerEvent::Move(rec));
        }
        g.base = g.moves.len();
        g.prov = rest;
        self.after_record(at, out);
    }

    /// What follows a change of the record: old positions lose their caches, and a position
    /// that ends the game ends it.
    fn after_record(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        let Some(g) = self.game.as_mut() else {
            return;
        };
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

/// Moves with the positions they reach, in order.
type Run<G> = Vec<(<G as GameKind>::Move, Node<G>)>;

/// The one run of legal moves from `from` that leads to the reading `sensed` (key `key`) after
/// a gap, of at most `plies` plies, in which every move shows on the board
/// ([`GameKind::may_show`]: a piece that went and came back is not seen, and not recorded).
///
/// Every run of up to two plies more than the shortest is looked for, so that a run is recorded
/// only when no other explains the board: two moves made in either order are two runs, and a
/// rook that went a1-a5 in one move or two are two runs. Lines that cannot reach the board in
/// the plies left are pruned ([`GameKind::plies_needed`]); at most `budget` positions are
/// expanded, and a search cut short records nothing.
fn explain_gap<G: GameKind>(
    from: &Node<G>,
    key: u64,
    sensed: &G::Reading,
    plies: usize,
    budget: usize,
) -> Result<Run<G>, GapSearch> {
    let mut search = GapSearcher::<G>::new(key, sensed, budget, 2);
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
    search.dfs(from, len + 2);
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
fn run_from<G: GameKind>(from: &Node<G>, run: Vec<(u64, G::Move)>) -> Run<G> {
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
const MAX_CANDIDATES: usize = 6;

/// Every run of at most `plies` legal moves from `from` that leads to `sensed` (none of them
/// through it before its end), if there are at most [`MAX_CANDIDATES`] and the search was not
/// cut short by `budget` positions.
fn gap_runs<G: GameKind>(
    from: &Node<G>,
    key: u64,
    sensed: &G::Reading,
    plies: usize,
    budget: usize,
) -> Option<Vec<Run<G>>> {
    let mut search = GapSearcher::<G>::new(key, sensed, budget, MAX_CANDIDATES + 1);
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
struct Candidates<G: GameKind> {
    /// The board's key.
    key: u64,
    /// Every run of at most `depth` plies from the record that leads to the board.
    runs: Vec<Run<G>>,
    depth: usize,
    /// Since when the board has shown what no run carried on by a move or two explains.
    unexplained_since: Option<Millis>,
}

/// What the candidates say of a board.
enum Carried<G: GameKind> {
    /// It is their own board again.
    Same,
    /// No candidate carried on by one or two legal moves leads to it.
    Nothing,
    /// Exactly one does, and every other candidate has the other side to move (the board's
    /// new move tells whose turn it was), and every run to their board up to two plies longer
    /// than it is among them (as for a run the search finds alone): the run played.
    One(Run<G>),
    /// Several do, or one does and another with the same side to move does not (it differs
    /// only in what the board cannot show, such as castling rights).
    Several,
}

/// The `candidates` carried on to `sensed` (see [`Carried`]).
fn carry_runs<G: GameKind>(
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
        for more in gap_runs::<G>(end, key, sensed, 2, budget).unwrap_or_default() {
            let mut longer = run.clone();
            longer.extend(more);
            out.push((i, longer));
        }
    }
    match out.len() {
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

/// [`explain_gap`] from a position: the moves of the one run from `from` that leads to `sensed`,
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
    )?;
    Ok(path.into_iter().map(|(mv, _)| mv).collect())
}

/// The depth-first search of [`explain_gap`]: runs found (two are enough to know there is no
/// one), the run being tried, and the positions it may still expand.
struct GapSearcher<'a, G: GameKind> {
    key: u64,
    sensed: &'a G::Reading,
    budget: usize,
    /// Runs found after which the search stops.
    limit: usize,
    path: Vec<(u64, G::Move)>,
    found: Vec<Vec<(u64, G::Move)>>,
}

impl<'a, G: GameKind> GapSearcher<'a, G> {
    /// A search for `sensed` (its key `key`) that expands at most `budget` positions and stops
    /// at `limit` runs found.
    fn new(key: u64, sensed: &'a G::Reading, budget: usize, limit: usize) -> Self {
        GapSearcher {
            key,
            sensed,
            budget,
            limit,
            path: Vec::new(),
            found: Vec::new(),
        }
    }

    fn dfs(&mut self, node: &Node<G>, left: usize) {
        if self.found.len() >= self.limit || self.budget == 0 || left == 0 {
            return;
        }
        self.budget -= 1;
        for (k, mv) in node.successors() {
            if *k == self.key && G::reading(&G::play(&node.pos, mv)) == *self.sensed {
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

/// Who pressed to leave the lever as `reading` shows it: the left player pressed when the lever
/// went high on the right.
fn presser_of(reading: &ClockReading, white_on_left: bool) -> Side {
    if reading.lever_right_high == white_on_left {
        Side::White
    } else {
        Side::Black
    }
}

/// After a gap, whether the clock counts, since the check's press (see [`presses`]), the
/// presses of the `plies` the belief has since, give or take the one press a move on the board
/// may still wait for, or a press its move may not have shown for yet; `None` if it counts
/// nothing (no increment the record shows, no live press to count from). `white_on_left` is
/// which clock is White's, when known.
fn presses_agree(
    check: &GapCheck,
    at: Millis,
    reading: &ClockReading,
    plies: usize,
    white_on_left: Option<bool>,
) -> Option<bool> {
    let (Some(from), Some(inc)) = (check.press, check.increment_ms) else {
        return None;
    };
    if at < from.at_ms {
        return None;
    }
    // A running clock counts the presses; a stopped one stopped some time between the press
    // heard and now: it bounds them.
    let clocks = reading.left_ms + reading.right_ms;
    let most = presses::presses_between(inc, from, at, clocks);
    let least = if reading.running {
        most
    } else {
        presses::presses_between(inc, from, from.at_ms, clocks)
    };
    let near = |k: i64| k >= 0 && least - 1.0 < k as f64 && (k as f64) < most + 1.0;
    let plies = plies as i64;
    let Some(white_left) = white_on_left else {
        // Which clock runs tells nothing yet: any count within a press of the belief's.
        return Some((plies - 1..=plies + 1).any(near));
    };
    // After an even number of presses since the check's, the clock of the side to move after
    // its ply runs (its mover pressed); the count must have the parity the lever shows.
    let running = presser_of(reading, white_left).other();
    let even = running == Side::of_ply(check.plies as u32 + 1);
    Some(if (plies % 2 == 0) == even {
        near(plies)
    } else {
        near(plies - 1) || near(plies + 1)
    })
}

/// The time and clocks of a recorded ply.
#[derive(Clone, Copy, Debug)]
struct Stamp {
    at_ms: Millis,
    clock_white_ms: Option<u64>,
    clock_black_ms: Option<u64>,
    /// The clocks are those a press showed (stored, or from memory: a press's, when known).
    pressed: bool,
    /// `at_ms` is when the ply was recorded live (or stored): not a memory read's time.
    live: bool,
}

impl Stamp {
    fn of(rec: &RecordedMove) -> Stamp {
        Stamp {
            pressed: rec.clock_white_ms.is_some(),
            at_ms: rec.at_ms,
            clock_white_ms: rec.clock_white_ms,
            clock_black_ms: rec.clock_black_ms,
            live: true,
        }
    }

    /// This ply's press, if it was heard live.
    fn live_press(&self) -> Option<presses::Press> {
        let (white, black) = self.clock_white_ms.zip(self.clock_black_ms)?;
        (self.pressed && self.live).then_some(presses::Press {
            at_ms: self.at_ms,
            clocks_ms: white + black,
        })
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
        pressed: false,
        live: true,
    }
    .rebuild::<G>(before, mv, after, plies_before)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod chess960_tests;
