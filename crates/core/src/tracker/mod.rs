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

mod belief;
pub mod event;
mod gap;
mod interpret;
mod irregular;
pub mod irregularity;
mod presses;
mod record;
mod search;

pub use event::{Played, RecordedMove, RecoverySource, Side, TrackerEvent};
pub use irregularity::IrregularityKind;
pub use search::{GapSearch, search_gap};

use belief::{GameState, Lost, Node, Unexplained};
use gap::{GapCheck, Heard};
use interpret::presser_of;
use irregular::report;
use record::Stamp;

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
    /// Fewest differing places for which a two-ply search is tried: 3, or 2 on a board whose
    /// readings come far enough apart (a Certabo board's records) that a capture and its
    /// recapture on one square can fall between two, leaving only the capturers' squares
    /// changed.
    pub two_ply_min_distance: usize,
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
    /// The board reports its whole position once a change has held (a debounce, a scan), not
    /// every place as it changes: a move and the first lift of the reply can come in one
    /// reading, which is then taken as that move with the reply under way.
    pub whole_reports: bool,
    /// With whole reports: a recorded move the board showed whole at least this long before it
    /// left it was made (not a piece resting on its way): a later reading that two plies from
    /// it explain is taken as those plies, not as that move revised with the reply under way.
    /// 0 on a board whose readings come so far apart that any recorded move was made.
    pub move_stood_ms: Millis,
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
            two_ply_min_distance: 3,
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
            whole_reports: false,
            move_stood_ms: 1_000,
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
    /// The last ply was recorded as it settled while no clock was known to run (a first move
    /// before the clock is started, or read before the clock is), and the lever has not changed
    /// since: its mover's press is still to come, and until it does the lever is a move behind
    /// the record.
    press_owed: bool,
    /// Clock readings of this game in which the left-hand clock ran while White was to move,
    /// less those in which it ran while Black was.
    white_on_left_votes: i64,
    /// Which clock is White's was given ([`Tracker::settle_clock_side`]): readings cast no vote.
    clock_side_settled: bool,
    /// After a gap, until two presses are checked: the clocks the record's last press showed.
    gap_check: Option<GapCheck>,
    /// Since an arbiter's decision: the presses heard.
    heard: Option<Heard>,
    /// The board's memory is being read (the I/O edge asked for it): `thread_lost` waits for
    /// what it brings ([`Tracker::reading_memory`]).
    memory_pending: bool,
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
    setup: Option<(Orientation, G::Reading, Millis, crate::phrase::Phrase)>,
    /// Beside each event emitted that plays something, in order, what it plays.
    played: Vec<Played<G>>,
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
            press_owed: false,
            white_on_left_votes: 0,
            clock_side_settled: false,
            gap_check: None,
            heard: None,
            memory_pending: false,
            lever_ahead: false,
            press: None,
            unseen_press: None,
            presses_after_gap: 0,
            pending_gesture: None,
            setup: None,
            sensed_changed_at: 0,
            played: Vec::new(),
        }
    }

    /// How it tracks (as it was made).
    pub fn settings(&self) -> &TrackerSettings {
        &self.settings
    }

    /// What the events emitted since the last call play, one beside each event that
    /// [`TrackerEvent::plays`], in the events' order; the list keeps its buffer for the next
    /// moves (a move recorded is one played value: a new list each time was an allocation a
    /// move).
    pub fn drain_played(&mut self) -> std::vec::Drain<'_, Played<G>> {
        self.played.drain(..)
    }

    /// Whether [`Tracker::drain_played`] has anything to give.
    pub fn has_played(&self) -> bool {
        !self.played.is_empty()
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
        let mut g = GameState::replayed(orientation, start.unwrap_or_else(G::start), moves, at)?;
        // The clock was compared with the time control when the game began: not again.
        g.clock_checked = true;
        t.game = Some(g);
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
        self.press_owed = false;
        self.presses_after_gap = 2;
        self.pending_gesture = None;
        self.heard = None;
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
                depth: None,
                clock_disagrees: false,
                heard: false,
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

    /// The board's memory is asked for (`true`) or has come, or was given up on (`false`):
    /// while it is read, `thread_lost` is not raised (the read may bring the moves missed).
    pub fn reading_memory(&mut self, pending: bool) {
        self.memory_pending = pending;
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
            // The record moved on: what was searched for from where it stood is stale, and the
            // wait before `thread_lost` starts again (the reads are making progress). After
            // `thread_lost`, the plies are kept to say which came back when it is resolved.
            g.failed_search_key = None;
            g.ambiguous = None;
            g.candidates = None;
            if let Some(lost) = g.lost.as_mut() {
                lost.unexplained_since = None;
                lost.found = None;
                // The clock's presses the board did not show are what memory read back.
                lost.clock_disagrees = false;
                if lost.reported.is_some() {
                    let first = g.read_back.map_or(from as u32 + 1, |(a, _)| a);
                    g.read_back = Some((first, (from + n) as u32));
                }
            }
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
            let rec = stamp.rebuild::<G>(&g.nodes[ply], &mv, &node, ply);
            self.played.push(Played::Move(mv.clone()));
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
        self.lose_track(at, out);
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
        // Read before this press (if it is one) pays what was owed.
        let press_owed = self.press_owed;
        if pressed {
            self.press_owed = false;
            self.heard_press(at, out);
        }
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
        // the clock. Nor while a ply recorded as it settled, with no clock known to run, still
        // owes its press: the record is then a move ahead of the lever.
        let fits_record = self.press.is_none()
            && g.lost.is_none()
            && g.unexplained.is_none()
            && g.base == g.moves.len();
        if !pressed {
            if reading.running
                && !press_owed
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
        // From a gap, the first two presses may complete moves made unseen: no vote. The press a
        // settled ply's mover owed, with nothing in hand since, is that mover's: the lever moves
        // only for the player whose clock runs.
        let owed_now = fits_record && g.prov.is_empty() && press_owed;
        if fits_record
            && (g.prov.len() == 1 || owed_now)
            && !self.clock_side_settled
            && self.presses_after_gap == 0
        {
            let white_moved = if owed_now {
                g.moves.len() % 2 == 1
            } else {
                g.base % 2 == 0
            };
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
}

/// Moves with the positions they reach, in order.
type Run<G> = Vec<(<G as GameKind>::Move, Node<G>)>;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod chess960_tests;
