//! Interpreting a settled board against the belief: nothing happened, one legal move, a slide or
//! castling revised, a takeback, two quick moves, a new game, the kings' result gesture; a
//! transitional board changes nothing. Also who pressed a clock, and where games begin.

use super::*;
use crate::phrase::Phrase;

pub(super) fn find<M: Clone>(list: &[(u64, M)], key: u64) -> Option<M> {
    list.iter().find(|(k, _)| *k == key).map(|(_, m)| m.clone())
}

/// The one run of up to `depth` legal moves from `from` that leads to the reading `sensed` (key
/// `key`); a depth-first search in which every move but the last must show on the board
/// ([`GameKind::may_show`]). Returns the moves with the positions they reach; `None` when no
/// run does, or when two runs of the same length do (25... h6 26. gxh6 and 25... h5 26. gxh6
/// e.p. read alike once both are done: the board cannot tell which was played, and the record
/// does not guess).
pub(super) fn moves_to<G: GameKind>(
    from: &Node<G>,
    key: u64,
    sensed: &G::Reading,
    depth: usize,
) -> Option<Vec<(G::Move, Node<G>)>> {
    if depth == 0 {
        return None;
    }
    let pos = &from.pos;
    if let Some(mv) = from.successor_to(key) {
        let end = G::play(pos, &mv);
        if G::reading(&end) == *sensed {
            return Some(vec![(mv, Node::with_reading(end, key, sensed.clone()))]);
        }
    }
    if depth == 1 {
        return None;
    }
    let mut found: Option<Vec<(G::Move, Node<G>)>> = None;
    for (k, mv) in from.successors() {
        if !G::may_show(pos, mv, sensed) {
            continue;
        }
        let mid = Node::new(G::play(pos, mv), *k);
        if let Some(rest) = moves_to::<G>(&mid, key, sensed, depth - 1) {
            if found.is_some() {
                return None;
            }
            let mut path = Vec::with_capacity(rest.len() + 1);
            path.push((mv.clone(), mid));
            path.extend(rest);
            found = Some(path);
        }
    }
    found
}

/// The one legal move from `tip` that `sensed` shows whole, and after which `sensed` is
/// part-way through the next move (a piece lifted, or a move under way), when `sensed` is no
/// move in progress from `tip` itself; `None` when no move, or more than one, does so.
pub(super) fn begun_after_one<G: GameKind>(
    tip: &Node<G>,
    sensed: &G::Reading,
) -> Option<(G::Move, Node<G>)> {
    if G::departure(&tip.pos, tip.successors(), sensed, false).is_under_way() {
        return None;
    }
    let to_sensed = G::reading_distance(tip.reading(), sensed);
    let mut found: Option<(G::Move, Node<G>)> = None;
    for (k, mv) in tip.successors() {
        // A king's move may be the start of the kings' result gesture, the other king lifted
        // on its way: that waits for the board to settle (a reply then fits two plies).
        if G::gesture_may_include(&tip.pos, mv) {
            continue;
        }
        let node = Node::new(G::play(&tip.pos, mv), *k);
        let rest = G::reading_distance(node.reading(), sensed);
        // The move shows whole (every place it changed reads as after it: the distances add
        // up), and what differs besides is the next move under way.
        if rest > G::MOVE_SPAN
            || G::reading_distance(tip.reading(), node.reading()) + rest != to_sensed
            || !G::departure(&node.pos, node.successors(), sensed, false).is_under_way()
        {
            continue;
        }
        if found.is_some() {
            return None;
        }
        found = Some((mv.clone(), node));
    }
    found
}

/// Who pressed to leave the lever as `reading` shows it: the left player pressed when the lever
/// went high on the right.
pub(super) fn presser_of(reading: &ClockReading, white_on_left: bool) -> Side {
    if reading.lever_right_high == white_on_left {
        Side::White
    } else {
        Side::Black
    }
}

impl<G: GameKind> Tracker<G> {
    /// Reads a settled board against the belief ([`Tracker::interpret_reading`]), and notes
    /// whether the board now shows the belief's last position whole.
    pub(super) fn interpret(
        &mut self,
        at: Millis,
        sensed: &impl Sensed<G::Reading>,
        out: &mut Vec<TrackerEvent>,
    ) {
        self.interpret_reading(at, sensed, out);
        if let Some(g) = self.game.as_mut()
            && sensed.key(g.orientation) == g.tip().key
        {
            g.tip_shown = true;
        }
    }

    fn interpret_reading(
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
            self.resolve_open(at, || Phrase::new("resolved.position_restored"), out);
            return;
        }
        if let Some(g) = self.game.as_mut() {
            g.tip_left_at.get_or_insert(at);
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
            self.resolve_open(at, || Phrase::new("resolved.play_went_on"), out);
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
                self.resolve_open(at, || Phrase::new("resolved.play_went_on"), out);
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
                self.resolve_open(at, || Phrase::new("resolved.board_fits"), out);
                return;
            }
            if let Some((mv, node)) = tip.move_to(key, reading) {
                g.back_to_record(at);
                g.push(mv, node, at);
                self.resolve_open(at, || Phrase::new("resolved.board_fits"), out);
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
            self.resolve_open(at, || Phrase::new("resolved.board_fits"), out);
            return;
        }
        // An earlier position: a takeback (the most recent identical position wins).
        if let Some(p) = g.find_earlier(key)
            && g.belief_node(p).reading() == reading()
        {
            g.truncate(p, at);
            self.resolve_open(at, || Phrase::new("resolved.board_fits"), out);
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
                self.resolve_open(at, || Phrase::new("resolved.board_fits"), out);
                return;
            }
        }
        // Two plies before the board settled, or a transitional board.
        let sensed_reading = reading();
        let distance = G::reading_distance(g.tip().reading(), sensed_reading);
        // With whole reports ([`TrackerSettings::whole_reports`]): the belief's last move
        // revised, a piece slid on from where it rested while the reply began, in one reading.
        // Before two plies from the belief while that move is not yet recorded: a rook to f1
        // with the other rook lifted reads as a rook to g1, a rook to f1 and its capture too,
        // which needs a piece placed and taken in less than the board's debounce. A recorded
        // move that stood on the board `move_stood_ms` (a resting square stands a few hundred
        // ms) was made: it is not revised into one with pieces still missing when two plies
        // from it read whole and the board is no move under way from it (37... Rh2 38. Kg3
        // Re2 read as 37... Rf2+). On a board whose readings come far apart (Certabo, whose
        // `move_stood_ms` is 0) a capture and its recapture on one square do fall between two
        // readings, after any recorded move (two pieces lifted for a capture also read as a
        // capture and its recapture, hence the departure).
        // The departure from the tip is worked out only on such a board, after a recorded move.
        let two_plies_first = self.settings.whole_reports
            && plies
                .checked_sub(1)
                .is_some_and(|back| back < g.moves.len())
            && g.tip_stood_ms(at) >= self.settings.move_stood_ms
            && !matches!(
                G::departure(&g.tip().pos, g.tip().successors(), sensed_reading, false),
                Departure::InProgress | Departure::Missing { .. }
            );
        let two_plies = |g: &GameState<G>| {
            if (self.settings.two_ply_min_distance..=self.settings.two_ply_max_distance)
                .contains(&distance)
            {
                moves_to::<G>(g.tip(), key, sensed_reading, 2)
            } else {
                None
            }
        };
        let mut path = if two_plies_first { two_plies(g) } else { None };
        if path.is_none()
            && self.settings.whole_reports
            && let Some(back) = plies.checked_sub(1)
            && G::reading_distance(g.belief_node(back).reading(), sensed_reading)
                <= self.settings.two_ply_max_distance
            && let Some((mv, node)) = begun_after_one(g.belief_node(back), sensed_reading)
            // On a board whose readings come so far apart that a move shown whole was made
            // (`move_stood_ms` 0), a move the board showed whole is revised only into its
            // piece going on its way (a slide, a castling begun with the rook): 38... Qa7
            // shown whole, then 39. Re4 Qa2 in one reading, is not 38... Qa2 with 39. Re4.
            && (node.key == g.tip().key
                || self.settings.move_stood_ms > 0
                || !g.tip_shown
                || g.prov.last().is_none_or(|(tip_move, _)| G::continues(tip_move, &mv)))
        {
            // The belief's own last move with the reply under way changes nothing (the move
            // still stood until now).
            if node.key != g.tip().key {
                g.truncate(back, at);
                g.push(mv, node, at);
            }
            self.resolve_open(at, || Phrase::new("resolved.board_fits"), out);
            return;
        }
        if path.is_none() && !two_plies_first {
            path = two_plies(g);
        }
        if let Some(path) = path {
            for (mv, node) in path {
                g.push(mv, node, at);
            }
            self.resolve_open(at, || Phrase::new("resolved.board_fits"), out);
            return;
        }
        // A move completed and the next begun in one reading ([`TrackerSettings::whole_reports`]):
        // a board that reports its whole position once a change has held (a debounce, a scan),
        // not every square as it changes, shows a quick reply's piece already lifted when the
        // move before it is first seen whole. Taken only when the board is no move in progress from the belief, and
        // one legal move alone leaves it part-way through the next.
        if self.settings.whole_reports
            && distance <= self.settings.two_ply_max_distance
            && let Some((mv, node)) = begun_after_one(g.tip(), sensed_reading)
        {
            g.push(mv, node, at);
            self.resolve_open(at, || Phrase::new("resolved.board_fits"), out);
            return;
        }
        // Far from the belief (more than displaced pieces): if nothing explains the boards for
        // a while, the record has lost track ([`Tracker::lose_track`]).
        if !g.ended
            && g.lost.is_none()
            && distance > self.settings.displaced_max_distance
            && G::result_token(sensed_reading).is_none()
            && G::result_gesture(sensed_reading).is_none()
        {
            g.astray_since.get_or_insert(at);
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
    pub(super) fn report_gesture(
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

    /// Who pressed to leave the lever as `reading` shows it: the left player pressed when the
    /// lever went high on the right.
    pub(super) fn presser(&self, reading: &ClockReading) -> Side {
        presser_of(reading, self.white_on_left())
    }

    /// The first clock reading of a game or after a gap: if it shows the side to move's clock
    /// stopped, that side pressed unseen (see [`Tracker::unseen_press`]).
    pub(super) fn note_unseen_press(&mut self, reading: ClockReading) {
        let presser = self.presser(&reading);
        let Some(g) = self.game.as_ref() else {
            return;
        };
        if !g.ended && presser == Side::of_ply(g.base as u32 + 1) {
            self.unseen_press = Some((presser, reading));
        }
    }

    /// Starts a game if the board shows the start position (in `prefer` orientation first).
    pub(super) fn try_start(
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
                self.played.push(Played::Start(start.pos.clone()));
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
                    let detail = crate::phrase::Phrase::new("chess.board_rotated");
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
    pub(super) fn start_node(&self, key: u64) -> Option<&Node<G>> {
        let i = self.start_keys.partition_point(|&(k, _)| k < key);
        match self.start_keys.get(i) {
            Some(&(k, n)) if k == key => self.starts.get(n),
            _ => None,
        }
    }

    /// What a game's start event says of its start position: its text when the variant has
    /// more than the standard one (so that the store can resume and export it), else nothing.
    pub(super) fn start_text(&self, pos: &G::Position) -> Option<String> {
        (self.settings.variant != Variant::Standard).then(|| G::position_text(pos))
    }
}
