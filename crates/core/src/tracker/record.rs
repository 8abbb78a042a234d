//! The record: what the belief holds becomes recorded moves (at a press, or once the belief has
//! settled), each with the clocks of its press, emitted as events in order.

use super::*;

pub(super) fn recorded<G: GameKind>(
    before: &Node<G>,
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

/// The time and clocks of a recorded ply.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stamp {
    pub(super) at_ms: Millis,
    pub(super) clock_white_ms: Option<u64>,
    pub(super) clock_black_ms: Option<u64>,
    /// The clocks are those a press showed (stored, or from memory: a press's, when known).
    pub(super) pressed: bool,
    /// `at_ms` is when the ply was recorded live (or stored): not a memory read's time.
    pub(super) live: bool,
}

impl Stamp {
    pub(super) fn of(rec: &RecordedMove) -> Stamp {
        Stamp {
            pressed: rec.clock_white_ms.is_some(),
            at_ms: rec.at_ms,
            clock_white_ms: rec.clock_white_ms,
            clock_black_ms: rec.clock_black_ms,
            live: true,
        }
    }

    /// This ply's press, if it was heard live.
    pub(super) fn live_press(&self) -> Option<presses::Press> {
        let (white, black) = self.clock_white_ms.zip(self.clock_black_ms)?;
        (self.pressed && self.live).then_some(presses::Press {
            at_ms: self.at_ms,
            clocks_ms: white + black,
        })
    }

    /// The recorded move this stamp belongs to, rebuilt from its positions.
    pub(super) fn rebuild<G: GameKind>(
        self,
        before: &Node<G>,
        mv: &G::Move,
        after: &Node<G>,
        plies_before: usize,
    ) -> RecordedMove {
        let after_has_moves = !after.successors().is_empty();
        // The move was found among `before`'s successors, which are then still there to write
        // its notation from (a position trimmed of them is asked its moves again).
        let notation = match before.successors_if_computed() {
            Some(legal) => G::notation_among(&before.pos, mv, legal, &after.pos, after_has_moves),
            None => G::notation(&before.pos, mv, &after.pos, after_has_moves),
        };
        RecordedMove {
            ply: plies_before as u32 + 1,
            notation,
            uci: G::uci(&before.pos, mv),
            position: G::position_text(&after.pos),
            at_ms: self.at_ms,
            clock_white_ms: self.clock_white_ms,
            clock_black_ms: self.clock_black_ms,
            time_trouble: false,
        }
    }
}

impl<G: GameKind> Tracker<G> {
    /// The game is over by a decision the board did not show (the arbiter's final result), or
    /// the store closed it: nothing the board does extends it any more, and the next start
    /// position set up begins a new game. Returns whether there was a game.
    pub fn close(&mut self) -> bool {
        self.press = None;
        self.unseen_press = None;
        self.pending_gesture = None;
        self.gap_check = None;
        self.lever_ahead = false;
        self.press_owed = false;
        self.setup = None;
        self.game.take().is_some()
    }

    /// Whether a game is being followed.
    pub fn has_game(&self) -> bool {
        self.game.is_some()
    }

    /// Records what a clock press completed: the belief up to the presser's earliest move not
    /// yet recorded. A reply the opponent has begun before the press landed stays provisional.
    pub(super) fn record_press(
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
    pub(super) fn record_belief(
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
    pub(super) fn record_upto(
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
        // The first `to_record` provisional moves are drained from the list, the rest stay in it:
        // the list keeps its buffer, so the next provisional move is not an allocation.
        let mut rest = std::mem::take(&mut g.prov);
        let to_record = limit.saturating_sub(g.base).min(rest.len());
        let mut keep = g.base;
        // A takeback followed by the same move again changes nothing.
        let mut same = 0;
        while keep < g.moves.len() && same < to_record && rest[same].0 == g.moves[keep] {
            keep += 1;
            same += 1;
        }
        rest.drain(..same);
        let mut prov = rest.drain(..to_record - same);
        let old_len = g.moves.len();
        if keep < old_len {
            if keep + 1 == old_len
                && let Some((mv, node)) = prov.next()
            {
                let parent = &g.nodes[keep];
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
                self.played.push(Played::Move(mv.clone()));
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
        // A ply recorded as it settles, with no press seen for it and no clock known to run:
        // the lever has not moved for it yet.
        let clock_runs = self.clock.is_some_and(|c| c.running);
        for (mv, node) in prov {
            let ply = g.moves.len();
            // A move made after its press was seen (or pressed while the board was not heard)
            // carries that press, unless a press of its own records it now.
            let (clock, press_seen) = match self.unseen_press {
                Some((side, reading)) if side == Side::of_ply(ply as u32 + 1) => {
                    self.unseen_press = None;
                    (if pressed { clock } else { Some(reading) }, true)
                }
                _ => (clock, pressed),
            };
            self.press_owed = !press_seen && !clock_runs;
            let rec = recorded::<G>(&g.nodes[ply], &mv, &node, ply, at, clock, white_on_left);
            self.played.push(Played::Move(mv.clone()));
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
    pub(super) fn after_record(&mut self, at: Millis, out: &mut Vec<TrackerEvent>) {
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
