//! Gaps: a game lost after a stretch in which the board was not heard, and how the thread is
//! found again. Flow: [`Tracker::gap`] marks the game lost; every settled board while lost goes
//! through `interpret_lost`, which searches for the runs of legal moves from the record that
//! explain it (`search`, bounded by depth and nodes), carries candidates while one is not
//! unique, and accepts a run only when exactly one explains the board and the clocks agree
//! (`accept_search`, [`presses_agree`]); `raise_lost` raises `thread_lost` when none does.
//! After an arbiter's decision ([`Tracker::rebase`]) the board was heard all along: the presses
//! since are counted as they come ([`Heard`]), and that count bounds, filters and confirms the
//! runs the search finds, and a press searches a board it left unexplained again.

use super::{
    search::{Candidates, Carried, Lengths, carry_runs, explain_gap, gap_runs},
    *,
};
use crate::phrase::Phrase;

/// The clocks of the last press heard before a gap, after `plies` plies: a player who has not
/// pressed since still shows them.
#[derive(Clone, Copy, Debug)]
pub(super) struct GapCheck {
    /// When the gap began.
    pub(super) since: Millis,
    pub(super) plies: usize,
    pub(super) white: u64,
    pub(super) black: u64,
    /// That press, if it was heard live (its time is when it was made, give or take a scan),
    /// and the increment the record's presses show: with both, the presses since are counted.
    pub(super) press: Option<presses::Press>,
    pub(super) increment_ms: Option<i64>,
}

impl GapCheck {
    pub(super) fn time_of(&self, side: Side) -> u64 {
        match side {
            Side::White => self.white,
            Side::Black => self.black,
        }
    }
}

/// After an arbiter's decision: the board was heard all along, so every press since it was
/// heard, and is counted as it comes (the clocks may have been stopped or set for the
/// decision: they count nothing). Runs longer than the count allows are never looked for.
#[derive(Clone, Copy, Debug)]
pub(super) struct Heard {
    /// The record's plies at the decision.
    pub(super) plies: usize,
    /// The presses heard since.
    pub(super) presses: u32,
}

/// How long after the board was heard unexplained `thread_lost` waits for a memory read under
/// way: within the 5 s an arbiter is promised, and longer than a read of a game's log takes.
const READ_HOLD_MS: Millis = 4_000;

/// The longest run the search looks for after a decision, however many presses were heard
/// since (a longer one is cut short by the search's budget anyway).
const HEARD_PLIES_MAX: usize = 8;

impl Heard {
    /// Whether the presses heard fit a belief `plies` plies past the decision's record, as
    /// [`presses_agree`] has it for a count of exactly that many presses.
    pub(super) fn agrees(
        &self,
        reading: &ClockReading,
        plies: usize,
        white_on_left: Option<bool>,
    ) -> bool {
        let heard = f64::from(self.presses);
        count_fits(heard, heard, self.plies, reading, plies, white_on_left)
    }

    /// The lengths of the runs from the record the count allows (and the longest).
    fn lengths(&self, reading: &ClockReading, white_on_left: Option<bool>) -> Lengths {
        let mut lengths = Lengths::none();
        for n in 1..=HEARD_PLIES_MAX {
            if self.agrees(reading, n, white_on_left) {
                lengths.allow(n);
            }
        }
        lengths
    }
}

/// After a gap, whether the clock counts, since the check's press (see [`presses`]), the
/// presses of the `plies` the belief has since, give or take the one press a move on the board
/// may still wait for, or a press its move may not have shown for yet; `None` if it counts
/// nothing (no increment the record shows, no live press to count from). `white_on_left` is
/// which clock is White's, when known.
pub(super) fn presses_agree(
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
    Some(count_fits(
        least,
        most,
        check.plies,
        reading,
        plies,
        white_on_left,
    ))
}

/// Whether between `least` and `most` presses since the record stood at `from_plies` plies fit
/// `plies` plies since, give or take the one press a move on the board may still wait for, or
/// a press its move may not have shown for yet; with the parity the lever shows once which
/// clock is White's is known.
fn count_fits(
    least: f64,
    most: f64,
    from_plies: usize,
    reading: &ClockReading,
    plies: usize,
    white_on_left: Option<bool>,
) -> bool {
    let near = |k: i64| k >= 0 && least - 1.0 < k as f64 && (k as f64) < most + 1.0;
    let plies = plies as i64;
    let Some(white_left) = white_on_left else {
        // Which clock runs tells nothing yet: any count within a press of the belief's.
        return (plies - 1..=plies + 1).any(near);
    };
    // After an even number of presses since the record's last, the clock of the side to move
    // after its ply runs (its mover pressed); the count must have the parity the lever shows.
    let running = presser_of(reading, white_left).other();
    let even = running == Side::of_ply(from_plies as u32 + 1);
    if (plies % 2 == 0) == even {
        near(plies)
    } else {
        near(plies - 1) || near(plies + 1)
    }
}

impl<G: GameKind> Tracker<G> {
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
        how: Phrase,
        out: &mut Vec<TrackerEvent>,
    ) -> bool {
        let Some(g) = self.game.as_ref() else {
            return false;
        };
        let start = g.nodes[0].pos.clone();
        let Some(mut next) = GameState::replayed(g.orientation, start, moves, at) else {
            return false;
        };
        self.resolve_open(at, || how, out);
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
        // minutes for an illegal move, 7.5.5): the clock is not held against the record, but
        // every press from now on is heard, and counted.
        self.gap_check = None;
        self.heard = self.game.as_ref().map(|g| Heard {
            plies: g.moves.len(),
            presses: 0,
        });
        true
    }

    /// A press heard after an arbiter's decision: counted; and a board it left unexplained
    /// while lost is searched again with the count it has now (the press may complete the
    /// run that leads to it).
    pub(super) fn heard_press(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        let Some(heard) = self.heard.as_mut() else {
            return;
        };
        heard.presses += 1;
        let Some(g) = self.game.as_mut() else {
            return;
        };
        if g.lost.is_none() || g.searched.is_some() {
            return;
        }
        let Some(u) = g.unexplained.as_ref() else {
            return;
        };
        let (reading, since) = (u.reading.clone(), u.since);
        g.failed_search_key = None;
        self.interpret_lost(at, G::reading_key(&reading), &reading, out);
        if let Some(u) = self.game.as_mut().and_then(|g| g.unexplained.as_mut()) {
            u.since = since;
        }
    }

    /// A board heard all along whose readings have fitted nothing for `lost_after_ms`, one of
    /// them further from the belief than displaced pieces are reported
    /// (`displaced_max_distance`): several plies made between two readings, or pieces moved
    /// about. Nothing else would report it (it is not displaced pieces, and play goes on past
    /// it), so the game is lost as after a gap: the board is searched from the record (a run
    /// found is recorded, and says it was found), and `thread_lost` follows if none is.
    pub(super) fn lose_track(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        let wait = self.settings.lost_after_ms;
        let Some(g) = self.game.as_mut() else {
            return;
        };
        let Some(since) = g.astray_since else {
            return;
        };
        if g.ended || g.lost.is_some() {
            g.astray_since = None;
            return;
        }
        if at < since.saturating_add(wait) {
            return;
        }
        let Some(reading) = g.unexplained.as_ref().map(|u| u.reading.clone()) else {
            return;
        };
        g.astray_since = None;
        // Unexplained that long already: `thread_lost` is raised at once if the search finds
        // no run.
        g.lost = Some(Lost {
            since,
            unexplained_since: Some(since),
            reported: None,
            found: None,
            depth: None,
            clock_disagrees: false,
            heard: true,
        });
        g.failed_search_key = None;
        // No gap: the presses heard before it count nothing for what the search finds.
        self.gap_check = None;
        self.interpret_lost(at, G::reading_key(&reading), &reading, out);
    }

    /// After a gap, a board heard again that has fitted nothing for `lost_after_ms` raises
    /// `thread_lost`: the record stops where it stops, and says so.
    pub(super) fn raise_lost(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
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
        // A memory read under way may bring the moves missed: the alert waits for it, but not
        // for a read that does not end (a reply lost while the board talks on).
        let wait = if self.memory_pending {
            wait.max(READ_HOLD_MS)
        } else {
            wait
        };
        if lost.reported.is_some() || at < heard.saturating_add(wait) {
            return;
        }
        let (since, found) = (lost.since, lost.found.unwrap_or(GapSearch::Nothing));
        let (plies, by_presses) = lost.depth.unwrap_or((plies, false));
        let n = g.moves.len();
        let last = match (g.moves.last(), n.checked_sub(1)) {
            (Some(mv), Some(i)) => {
                let (before, after) = (&g.nodes[i], &g.nodes[n]);
                let text = G::notation(&before.pos, mv, &after.pos, true);
                Phrase::new("tracker.after_move")
                    .move_of("at", n as u32)
                    .text("move", text)
            }
            _ => Phrase::new("tracker.at_start"),
        };
        // What the board showed, in the game's own position text: not in the sentence, but
        // kept in the phrase for a diagram beside the record's last position.
        let board = g
            .unexplained
            .as_ref()
            .map_or_else(String::new, |u| G::reading_text(&u.reading));
        let detail = if lost.heard {
            Phrase::new("tracker.lost_track").time("since", since)
        } else {
            Phrase::new("tracker.lost_thread")
                .time("since", since)
                .time("heard", heard)
        };
        let detail = detail
            .text("board", board)
            .phrase("last", last)
            .phrase("found", found.describe(plies, by_presses));
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
    pub(super) fn interpret_lost(
        &mut self,
        at: Millis,
        key: u64,
        reading: &G::Reading,
        out: &mut Vec<TrackerEvent>,
    ) -> bool {
        let (mut plies, nodes) = (self.settings.gap_plies, self.settings.gap_nodes);
        // After a decision, the presses heard since tell how long the run is: it is looked
        // for as deep as they allow, and no run of another length is.
        let (lengths, by_presses) = match (self.heard, self.clock) {
            (Some(heard), Some(clock)) => {
                let lengths = heard.lengths(&clock, self.clock_side());
                plies = lengths.longest(usize::MAX);
                (lengths, true)
            }
            _ => (Lengths::ANY, false),
        };
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
        let mut found = explain_gap::<G>(g.tip(), key, reading, plies, nodes, lengths);
        // The runs of a settled board seen before, carried on to this one, say more than a
        // search from the record: the run played passes through that board.
        if let Some(c) = g.candidates.as_mut() {
            match carry_runs::<G>(c, key, reading, nodes) {
                Carried::Same | Carried::UnderWay => c.unexplained_since = None,
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
        // The same board searched again (a press heard since) has shown since it was first.
        let shown_since = match &g.ambiguous {
            Some((since, c)) if c.key == key => *since,
            _ => at,
        };
        g.ambiguous = match &found {
            Err(GapSearch::Ambiguous) => {
                gap_runs::<G>(g.tip(), key, reading, plies + 3, nodes, lengths).map(|runs| {
                    let candidates = Candidates {
                        key,
                        runs,
                        depth: plies + 3,
                        unexplained_since: None,
                    };
                    (shown_since, candidates)
                })
            }
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
                lost.depth = Some((plies, by_presses));
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
    ///
    /// Every tick asks; with no game, or none of an ambiguous search, its candidates or a run
    /// found held, there is nothing to look at (each step below begins with one of them), and
    /// the answer is given here, inline, without the call.
    #[inline]
    pub(super) fn accept_search(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
        if self.game.as_ref().is_some_and(|g| {
            g.ambiguous.is_some() || g.candidates.is_some() || g.searched.is_some()
        }) {
            self.accept_search_held(at, out);
        }
    }

    /// [`Tracker::accept_search`] with something held to look at.
    #[inline(never)]
    fn accept_search_held(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
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
        let (gap_check, heard, clock_side) = (self.gap_check, self.heard, self.clock_side());
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
        let counted = match (gap_check, heard, clock) {
            (Some(check), _, Some((read_at, r))) if belief >= check.plies => {
                presses_agree(&check, read_at, &r, belief - check.plies, clock_side)
            }
            (None, Some(heard), Some((_, r))) if belief >= heard.plies => {
                Some(heard.agrees(&r, belief - heard.plies, clock_side))
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
        self.resolve_open(at, || Phrase::new("resolved.moves_found"), out);
    }

    /// After a gap, whether a clock reading (a press by `presser`, or the first reading) shows
    /// presses the belief does not explain: a player who has not moved since the last press
    /// heard (as the belief has it) still shows that press's time, on their clock while it
    /// stands (the first reading, nothing played since) or as it starts (at a press by the other
    /// player; both checked once which clock is White's is known, or on a stopped clock). A
    /// piece that went and came back, or a position that came again, leaves the board as the
    /// record has it: the clock tells.
    pub(super) fn clock_disagrees(
        &self,
        at: Millis,
        reading: &ClockReading,
        presser: Option<Side>,
    ) -> bool {
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
    pub(super) fn shows_belief(&self, g: &GameState<G>) -> bool {
        g.unexplained.is_none() || self.pending_gesture.is_some()
    }

    /// The clock disagreed with the board after a gap: what the belief holds beyond the record
    /// is dropped, and the gap stays open until the arbiter resumes the game (`thread_lost` is
    /// raised as for a board that fits nothing).
    pub(super) fn lose_to_clock(&mut self, at: Millis) {
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
            depth: None,
            clock_disagrees: true,
            heard: false,
        });
    }

    /// After a gap, a board the belief explains again (one heard first with a piece in the
    /// hand, say) is held against the presses the clock counts since the gap, as the first
    /// reading would have been had the board shown it then (with the last reading: the moves
    /// made since may be pressed or not).
    pub(super) fn count_presses_on_board(&mut self, at: Millis) {
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
}
