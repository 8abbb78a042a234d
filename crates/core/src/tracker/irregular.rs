//! What the tracker witnesses as irregular (Article 7 and its togyz counterparts): pieces
//! displaced, a press without a move, a wrong set-up, a clock not matching the record; raised
//! as events with the player and the ply, and resolved when the board is put right.

use super::*;
use crate::phrase::Phrase;

/// Reports an irregularity on `g`; all but a press without a move stay open until the board fits
/// the game again.
pub(super) fn report<G: GameKind>(
    g: &mut GameState<G>,
    at: Millis,
    since: Millis,
    kind: IrregularityKind,
    player: Option<Side>,
    detail: Phrase,
    out: &mut Vec<TrackerEvent>,
) {
    g.irregularities += 1;
    let id = g.irregularities;
    if !kind.is_instant() {
        g.open.push((id, kind));
    }
    out.push(TrackerEvent::Irregularity {
        at_ms: at,
        since_ms: since,
        id,
        ply: g.belief_plies() as u32 + 1,
        kind,
        player,
        detail: detail.to_string(),
        detail_phrase: Some(detail),
        article: None,
        ruling: None,
        ruling_phrase: None,
    });
}

impl<G: GameKind> Tracker<G> {
    /// Irregularities of a resumed game that its store holds open (`id`, kind): they are
    /// resolved when the board fits the game again, as if they had been seen here.
    pub fn reopen_irregularities(&mut self, open: &[(u32, IrregularityKind)]) {
        if let Some(g) = self.game.as_mut() {
            for &(id, kind) in open {
                if !g.open.iter().any(|(i, _)| *i == id) {
                    g.open.push((id, kind));
                }
            }
        }
    }

    /// Every irregularity still open is over: the board fits the game again.
    pub(super) fn resolve_open(
        &mut self,
        at: Millis,
        how: impl FnOnce() -> Phrase,
        out: &mut Vec<TrackerEvent>,
    ) {
        let Some(g) = self.game.as_mut() else {
            return;
        };
        // The board is explained: it is not astray.
        g.astray_since = None;
        let read_back = g.read_back.take();
        // Worded only when there is something to resolve: this runs at every reading that fits.
        if g.open.is_empty() {
            return;
        }
        let ply = g.belief_plies() as u32 + 1;
        let how = how();
        let how = match read_back {
            Some((first, last)) if first == last => Phrase::new("resolved.read_back_move")
                .phrase("how", how)
                .move_of("at", first),
            Some((first, last)) => Phrase::new("resolved.read_back_moves")
                .phrase("how", how)
                .move_of("first", first)
                .move_of("last", last),
            None => how,
        };
        for (id, _) in g.open.drain(..) {
            out.push(TrackerEvent::Resolved {
                at_ms: at,
                id,
                ply,
                how: how.to_string(),
                how_phrase: Some(how.clone()),
            });
        }
    }

    /// The first clock reading of a game, before any move: both clocks should show the time
    /// control's time (6.10.2); a difference of more than two seconds is reported.
    pub(super) fn check_clock(
        &mut self,
        at: Millis,
        reading: ClockReading,
        out: &mut Vec<TrackerEvent>,
    ) {
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
            let detail = Phrase::new("clock.mis_set")
                .text("left", hms(reading.left_ms))
                .text("right", hms(reading.right_ms))
                .text("each", hms(expected));
            report(g, at, at, IrregularityKind::ClockMisSet, None, detail, out);
        }
    }

    /// Looks at a board that has fitted nothing for the settle window of irregularities:
    /// displaced pieces, or a wrong set-up for the next game.
    pub(super) fn judge(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
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
                Phrase::new("tracker.not_completed").phrase("what", detail)
            }
            // In the hand or knocked over: only the longer wait tells.
            Departure::Missing { .. } if at < since.saturating_add(self.settings.missing_ms) => {
                if let Some(u) = g.unexplained.as_mut() {
                    u.judged = false;
                    u.not_before = since.saturating_add(self.settings.missing_ms);
                }
                return;
            }
            Departure::Missing { detail } => Phrase::new("tracker.missing").phrase("what", detail),
        };
        report(g, at, since, IrregularityKind::Displaced, None, detail, out);
    }

    /// Before the first game: a complete wrong set-up, stable for the settle window, begins the
    /// game with a wrong start position reported.
    pub(super) fn judge_setup(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
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
    pub(super) fn watch_setup(&mut self, at: Millis, sensed: &impl Sensed<G::Reading>) {
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
    pub(super) fn begin_wrong_setup(
        &mut self,
        at: Millis,
        orientation: Orientation,
        reading: G::Reading,
        since: Millis,
        detail: Phrase,
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
        self.played.push(Played::Start(self.start.pos.clone()));
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
    pub(super) fn judge_press(
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
        // While the board's memory is read the record may lag the board by the moves the read
        // brings (a blitz game goes on while a log is read): a press is no evidence either.
        let reading_memory = self.memory_pending;
        let Some(g) = self.game.as_mut() else {
            return;
        };
        // After a gap the record lags the board: a press is no evidence of anything.
        if g.ended || g.lost.is_some() || after_gap || reading_memory {
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
                let detail = Phrase::new("clock.press_without_move");
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
                    Phrase::new("tracker.still_on_board").phrase("what", what),
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
                let pressed = Phrase::new("resolved.illegal_move_pressed");
                for (id, _) in g.open.drain(..) {
                    out.push(TrackerEvent::Resolved {
                        at_ms: at,
                        id,
                        ply,
                        how: pressed.to_string(),
                        how_phrase: Some(pressed.clone()),
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
                    let detail = Phrase::new("tracker.at_press").phrase("what", detail);
                    report(g, at, since, IrregularityKind::Displaced, None, detail, out);
                }
            }
        }
    }
}
