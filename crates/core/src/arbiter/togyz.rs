//! The togyz korgool referee: the Kyrgyz rules applied to what one pit board's tracker records.
//!
//! Flow: like the chess [`super::Referee`], the pipeline passes every tracker event, with the
//! move it plays, through [`TogyzReferee::review`] and every clock reading through
//! [`TogyzReferee::clock`]. The referee keeps the game's positions (played from the typed moves
//! the tracker hands it; a stored game's read back from their text) and so can: give each
//! irregularity its article of the Kyrgyz rules; note a full position repeated with no capture in
//! between as a possible draw claim (Chylymov's position, [KG 3.7, 13.4]: never scored here, the
//! rules do not define it precisely); and report a flag fall with the result [KG 3.10 → 3.4]
//! gives, both flags with [KG 3.8, 5.9]. Games ending on the board (82, 81:81, atsyrau) are the
//! tracker's. Pure: time comes with the events and readings.

use super::{IrregularityKind, Judge, JudgeNotice};
use crate::{
    Millis,
    game::togyz::{Move, Position, Repetitions, Rules, Side as PitSide, TogyzGame},
    phrase::Phrase,
    sensor::ClockReading,
    tracker::{Played, RecordedMove, Side, TrackerEvent},
};

/// The article of the Kyrgyz rules for an irregularity the pit board shows; `None` where the rules
/// have none.
pub fn togyz_article(kind: IrregularityKind) -> Option<&'static str> {
    Some(match kind {
        // Scattered korgools: restore the position, on the player's own clock.
        IrregularityKind::Displaced => "4.2–4.3",
        // A move is sown as 1.1–1.3 and 2.x say, and ends with the press (1.5).
        IrregularityKind::IllegalMove => "1.5",
        IrregularityKind::ClockWithoutMove => "1.5",
        // Black sits with the clock on his left (5.2); the players check the start position
        // (preamble): no numbered article.
        IrregularityKind::BoardRotated => "5.2",
        IrregularityKind::WrongStartPosition
        | IrregularityKind::ClockMisSet
        | IrregularityKind::IllegalPosition
        | IrregularityKind::Takeback
        | IrregularityKind::RevisedMove
        | IrregularityKind::ThreadLost
        | IrregularityKind::RecoveredFromMemory
        | IrregularityKind::RecoveredBySearch => return None,
    })
}

/// The Kyrgyz (or Kazakh) rules for one pit board.
pub struct TogyzReferee {
    rules: Rules,
    game: Option<Game>,
    notices: Vec<JudgeNotice>,
}

/// What the referee knows of the game in progress.
struct Game {
    /// `positions[i]` is the position after `i` plies.
    positions: Vec<Position>,
    reps: Repetitions,
    flags: [bool; 2],
    ended: bool,
}

impl Game {
    fn new(rules: Rules) -> Game {
        let start = Position::with_rules(rules);
        let mut reps = Repetitions::new();
        reps.push(&start);
        Game {
            positions: vec![start],
            reps,
            flags: [false; 2],
            ended: false,
        }
    }

    fn position(&self) -> &Position {
        // Never empty: it starts with the start position and is never cut below it.
        &self.positions[self.positions.len() - 1]
    }

    fn plies(&self) -> usize {
        self.positions.len() - 1
    }

    /// Back to `plies` plies; the repetition history is rebuilt from the positions kept.
    fn truncate(&mut self, plies: usize) {
        if self.plies() <= plies {
            return;
        }
        self.positions.truncate(plies + 1);
        self.reps.clear();
        for p in &self.positions {
            self.reps.push(p);
        }
    }
}

fn pit_side(side: Side) -> PitSide {
    match side {
        Side::White => PitSide::White,
        Side::Black => PitSide::Black,
    }
}

impl TogyzReferee {
    /// A referee applying `rules` (the Kyrgyz federation's, or the Kazakh practice).
    pub fn new(rules: Rules) -> TogyzReferee {
        TogyzReferee {
            rules,
            game: None,
            notices: Vec::new(),
        }
    }

    /// Plays a recorded move `m`, which is `mv`; false if it does not fit.
    fn play(&mut self, game: &mut Game, m: &RecordedMove, mv: Option<Move>) -> bool {
        let Some(next) = mv.and_then(|mv| game.position().play(mv).ok()) else {
            self.notices.push(JudgeNotice::MoveDoesNotFit {
                ply: m.ply,
                mv: m.notation.clone(),
            });
            return false;
        };
        game.positions.push(next);
        true
    }

    /// A move recorded: a repetition with no capture in between is noted for the arbiter.
    fn after_move(
        &mut self,
        game: &mut Game,
        m: &RecordedMove,
        mv: Option<Move>,
    ) -> Option<TrackerEvent> {
        game.truncate((m.ply as usize).saturating_sub(1).min(game.plies()));
        if !self.play(game, m, mv) || game.ended {
            return None;
        }
        let pos = *game.position();
        let repeated = game.reps.push(&pos)?;
        if !self.rules.repetition_claim {
            return None;
        }
        let chylymov = Phrase::new("togyz.chylymov")
            .number("ply", repeated.first_ply as u64)
            .number("times", repeated.occurrences as u64);
        Some(TrackerEvent::Claimable {
            at_ms: m.at_ms,
            ply: m.ply + 1,
            claim: chylymov.to_string(),
            claim_phrase: Some(chylymov),
            article: "3.7, 13.4".to_string(),
        })
    }

    /// One event, with what it plays: annotated in place; what it causes is returned. A game
    /// begins at the start of the referee's rules (a pit board has one start).
    fn look_at(
        &mut self,
        event: &mut TrackerEvent,
        played: Option<Played<TogyzGame>>,
    ) -> Option<TrackerEvent> {
        if let TrackerEvent::GameStarted { .. } = event {
            self.game = Some(Game::new(self.rules));
            return None;
        }
        let mv = match played {
            Some(Played::Move(mv)) => Some(mv),
            _ => None,
        };
        let mut game = self.game.take()?;
        let extra = match event {
            TrackerEvent::Move(m) => self.after_move(&mut game, m, mv),
            TrackerEvent::Revision { new, .. } => self.after_move(&mut game, new, mv),
            TrackerEvent::Takeback { to_ply, .. } => {
                game.truncate(*to_ply as usize);
                game.ended = false;
                None
            }
            TrackerEvent::Irregularity { kind, article, .. } => {
                *article = togyz_article(*kind).map(str::to_string);
                None
            }
            TrackerEvent::GameEnded { .. } => {
                game.ended = true;
                None
            }
            _ => None,
        };
        self.game = Some(game);
        extra
    }
}

impl Judge for TogyzReferee {
    type Game = TogyzGame;

    fn take_notices(&mut self) -> Vec<JudgeNotice> {
        std::mem::take(&mut self.notices)
    }

    /// A pit board has one start position: `start` is never set.
    fn resume(&mut self, _start: Option<&str>, moves: &[RecordedMove]) {
        let mut game = Game::new(self.rules);
        for m in moves {
            // A stored move is read back from its text.
            let mv = m.to_move::<TogyzGame>(game.position());
            if !self.play(&mut game, m, mv) {
                break;
            }
            let pos = *game.position();
            game.reps.push(&pos);
        }
        self.game = Some(game);
    }

    fn review(
        &mut self,
        mut event: TrackerEvent,
        played: Option<Played<TogyzGame>>,
        out: &mut Vec<TrackerEvent>,
    ) {
        let caused = self.look_at(&mut event, played);
        out.push(event);
        out.extend(caused);
    }

    /// A flag that has just shown is reported with the result the rules give: only the flagged
    /// player's store counts ([KG 3.10 → 3.4]); both flags: a draw unless a store holds 82.
    fn clock(
        &mut self,
        at: Millis,
        reading: &ClockReading,
        white_on_left: bool,
        out: &mut Vec<TrackerEvent>,
    ) {
        let Some(game) = self.game.as_mut() else {
            return;
        };
        let now = if white_on_left {
            [reading.left_flag, reading.right_flag]
        } else {
            [reading.right_flag, reading.left_flag]
        };
        if game.ended || now == game.flags {
            game.flags = now;
            return;
        }
        let both = now[0] && now[1];
        for (i, &flag) in now.iter().enumerate() {
            if !flag || game.flags[i] {
                continue;
            }
            let flagged = if i == 0 { Side::White } else { Side::Black };
            let result = if both {
                game.position().both_flags()
            } else {
                game.position().flag_fall(pit_side(flagged))
            };
            let [w, b] = result.counted;
            let counted = Phrase::new("togyz.counted")
                .number("white", w as u64)
                .number("black", b as u64);
            out.push(TrackerEvent::FlagFall {
                at_ms: at,
                after_ply: game.plies() as u32,
                side: flagged,
                proposed: result.outcome,
                termination: result.termination.as_str().to_string(),
                article: Some(result.termination.article().to_string()),
                both,
                note: Some(counted.to_string()),
                note_phrase: Some(counted),
            });
            if both {
                break;
            }
        }
        game.flags = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Outcome;

    fn mv(ply: u32, notation: &str) -> RecordedMove {
        RecordedMove {
            ply,
            notation: notation.to_string(),
            uci: None,
            position: String::new(),
            at_ms: 0,
            clock_white_ms: None,
            clock_black_ms: None,
            time_trouble: false,
        }
    }

    #[test]
    fn irregularities_get_the_kyrgyz_articles() {
        let mut r = TogyzReferee::new(Rules::KYRGYZ);
        let events = vec![
            TrackerEvent::GameStarted {
                at_ms: 0,
                orientation: crate::sensor::Orientation::Normal,
                start: None,
            },
            TrackerEvent::Irregularity {
                at_ms: 5,
                since_ms: 1,
                id: 1,
                ply: 1,
                kind: IrregularityKind::Displaced,
                player: None,
                detail: String::new(),
                detail_phrase: None,
                article: None,
                ruling: None,
                ruling_phrase: None,
            },
        ];
        let mut judged = Vec::new();
        for e in events {
            r.review(e, None, &mut judged);
        }
        let events = judged;
        let TrackerEvent::Irregularity { article, .. } = &events[1] else {
            panic!("{events:?}")
        };
        assert_eq!(article.as_deref(), Some("4.2–4.3"));
    }

    #[test]
    fn a_flag_counts_only_the_flagged_players_store() {
        // After 76 (White takes 10), White's flag falls: White's store is 10, below 81: a loss.
        let mut r = TogyzReferee::new(Rules::KYRGYZ);
        r.resume(None, &[mv(1, "76")]);
        let reading = ClockReading {
            left_ms: 0,
            right_ms: 60_000,
            running: false,
            lever_right_high: false,
            left_flag: true,
            right_flag: false,
        };
        let mut out = Vec::new();
        r.clock(10, &reading, true, &mut out);
        match &out[..] {
            [
                TrackerEvent::FlagFall {
                    side: Side::White,
                    proposed: Outcome::BlackWins,
                    article: Some(a),
                    note: Some(n),
                    ..
                },
            ] => {
                assert_eq!(a, "3.10");
                assert_eq!(n, "counted 10:152");
            }
            other => panic!("{other:?}"),
        }
        // Reported once.
        out.clear();
        r.clock(11, &reading, true, &mut out);
        assert!(out.is_empty());
    }
}
