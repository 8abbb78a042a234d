//! Several games on one DGT board, one after another, as a tournament plays its rounds: when a
//! game is over the players (or the arbiter) put the pieces back on their start squares, and at
//! the next round the next game is played on the same board, on the same port.
//!
//! Flow: [`BoardScript::followed_by`] takes a game's script and the next game's, lifts every
//! piece that is not where the next game starts and puts the missing ones down (one hand, a
//! piece at a time, from `setup_at_ms` on), then plays the next game's body shifted to begin
//! once the board is set up. The handshake stays the first game's; each game's plies keep their
//! own numbering (from 1), their times shifted with the game. Pure.

use boardscribe_core::{Millis, protocol::dgt::Frame};

use crate::{BoardScript, EmulatorError, EventKind, Payload, ScriptEvent, script::put_on_wire};

/// A hand lifting or setting down one piece while the board is set up.
const SETUP_STEP_MS: Millis = 120;
/// After the last piece is down, before the next game's first event.
const SETUP_SETTLE_MS: Millis = 1_500;

impl BoardScript {
    /// The board plays this game, then is set up for `next` from `setup_at_ms` on (script time;
    /// at the earliest when this game's last event has been played) and plays `next`.
    pub fn followed_by(
        mut self,
        next: &BoardScript,
        setup_at_ms: Millis,
    ) -> Result<BoardScript, EmulatorError> {
        if next.rotated != self.rotated {
            return Err(EmulatorError::Series(
                "the next game is set up the other way round".into(),
            ));
        }
        let end = self.events.last().map_or(0, |e| e.at_ms);
        let mut at = setup_at_ms.max(end + SETUP_STEP_MS);
        // The board as this game leaves it.
        let mut board = self.start_dump.0;
        for e in &self.events {
            if let Payload::Frame(Frame::FieldUpdate { square, piece }) = e.payload
                && let Some(s) = board.get_mut(usize::from(square))
            {
                *s = piece;
            }
        }
        let want = next.start_dump.0;
        let plies_before = self.plies.len() as u32;
        let setup = |square: usize, piece: u8, at: Millis| ScriptEvent {
            at_ms: at,
            dir: boardscribe_core::protocol::Direction::FromBoard,
            payload: Payload::Frame(Frame::FieldUpdate {
                square: square as u8,
                piece,
            }),
            kind: EventKind::Move,
            action: (),
            ply: plies_before,
        };
        let mut events = Vec::new();
        for (square, (&has, &wanted)) in board.iter().zip(&want).enumerate() {
            if has != 0 && has != wanted {
                events.push(setup(square, 0, at));
                at += SETUP_STEP_MS;
            }
        }
        for (square, (&has, &wanted)) in board.iter().zip(&want).enumerate() {
            if wanted != 0 && has != wanted {
                events.push(setup(square, wanted, at));
                at += SETUP_STEP_MS;
            }
        }
        let begin = at + SETUP_SETTLE_MS;
        let shift = |t: Millis| t - next.body_start_ms + begin;
        for e in next.events.iter().filter(|e| e.at_ms >= next.body_start_ms) {
            let mut e = e.clone();
            e.at_ms = shift(e.at_ms);
            events.push(e);
        }
        self.events.extend(events);
        put_on_wire(&mut self.events);
        for p in &next.plies {
            let mut p = p.clone();
            p.start_ms = shift(p.start_ms);
            p.end_ms = shift(p.end_ms);
            p.press_ms = p.press_ms.map(shift);
            self.plies.push(p);
        }
        self.result_gesture = next.result_gesture;
        self.irregularities
            .extend(next.irregularities.iter().cloned());
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EmulatorOptions, games_from_pgn, script_pgn};

    const PGN: &str = "[Event \"?\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *\n\n[Event \"?\"]\n\n1. d4 d5 2. c4 e6 *\n";

    #[test]
    fn the_board_is_set_up_again_and_the_next_game_follows() {
        let games = games_from_pgn(PGN).unwrap();
        let opts = EmulatorOptions::default();
        let first = script_pgn(&games[0], &opts).unwrap();
        let second = script_pgn(&games[1], &opts).unwrap();
        let end = first.events.last().unwrap().at_ms;
        let both = first.clone().followed_by(&second, end + 10_000).unwrap();
        assert_eq!(both.plies.len(), 10);
        assert!(both.events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        // Replayed square by square, the board is at the start when the second game begins,
        // and ends as the second game ends.
        let mut board = both.start_dump.0;
        let second_begins = both.plies[6].start_ms;
        let mut at_start = None;
        for e in &both.events {
            if e.at_ms >= second_begins && at_start.is_none() {
                at_start = Some(board);
            }
            if let Payload::Frame(Frame::FieldUpdate { square, piece }) = e.payload {
                board[usize::from(square)] = piece;
            }
        }
        assert_eq!(at_start, Some(second.start_dump.0));
        assert_eq!(board, second.plies.last().unwrap().board_after.0);
        assert!(both.plies[6].start_ms >= end + 10_000);
    }
}
