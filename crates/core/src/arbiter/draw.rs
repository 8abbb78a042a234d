//! Game ends the position decides: mate, stalemate, dead position, repetition and move counts.
//!
//! Flow: the tracker pushes every position of the game into [`Repetitions`] (and pops on a
//! takeback); after each move [`automatic_end`] says whether the game is over by itself under the
//! configured edition, and [`claimable`] which draws a player may claim (never an automatic end
//! over the board).
//!
//! "The same position" (9.2; 9.2.2 in 2014–2018, 9.2.3 in 2023) is [`PositionKey`]: the same
//! pieces on the same squares, the same side to move, the same castling rights, and an en passant
//! square only if an en passant capture is legal. So a double pawn step that no pawn can take en
//! passant changes nothing, a legal en passant chance makes the position differ (2001: "an e.p.
//! possibility lost"; 2014+: "at the start of the sequence a pawn could have been captured e.p."),
//! and castling rights lost by a king or rook move make it differ. Castling blocked for the moment
//! does not. One key serves every edition: no edition counts a differently defined position.

use shakmaty::{Bitboard, Board, Chess, Color, EnPassantMode, Position, Square};

use super::{
    articles::{Ending, GameEnd},
    clock::win_for,
    laws::{FivefoldRule, LawsConfig},
};
use crate::game::{Outcome, list_from_start};

/// What makes two positions "the same" for the repetition rules.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PositionKey {
    pub board: Board,
    pub turn: Color,
    /// Castling rights as the rooks that keep them.
    pub castling: Bitboard,
    /// The en passant square only if a legal en passant capture exists.
    pub ep_square: Option<Square>,
}

impl PositionKey {
    pub fn of(pos: &Chess) -> PositionKey {
        PositionKey {
            board: pos.board().clone(),
            turn: pos.turn(),
            castling: pos.castles().castling_rights(),
            ep_square: pos.ep_square(EnPassantMode::Legal),
        }
    }
}

/// The positions of a game so far, for the repetition and move-count rules.
#[derive(Clone, Debug)]
pub struct Repetitions {
    /// Each position's key and its halfmove clock (plies since a pawn move or capture).
    entries: Vec<(PositionKey, u32)>,
}

impl Repetitions {
    /// A game beginning at `start`.
    pub fn new(start: &Chess) -> Repetitions {
        Repetitions {
            entries: list_from_start((PositionKey::of(start), start.halfmoves())),
        }
    }

    /// The position after a move.
    pub fn push(&mut self, pos: &Chess) {
        self.entries.push((PositionKey::of(pos), pos.halfmoves()));
    }

    /// Forgets the last position (a takeback); false if only the start is left.
    pub fn pop(&mut self) -> bool {
        if self.entries.len() > 1 {
            self.entries.pop();
            true
        } else {
            false
        }
    }

    /// Plies pushed since the start.
    pub fn plies(&self) -> usize {
        self.entries.len() - 1
    }

    fn current(&self) -> &(PositionKey, u32) {
        &self.entries[self.entries.len() - 1]
    }

    /// How many times the current position has appeared, this time included.
    pub fn count(&self) -> usize {
        let (key, halfmoves) = self.current();
        // A pawn move or capture cannot be undone: earlier positions cannot match.
        let window = (*halfmoves as usize + 1).min(self.entries.len());
        self.entries[self.entries.len() - window..]
            .iter()
            .filter(|(k, _)| k == key)
            .count()
    }

    /// The current position has appeared at least three times (9.2: claimable).
    pub fn threefold(&self) -> bool {
        self.count() >= 3
    }

    /// Fivefold repetition as `rule` defines it (9.6.1): `Any` counts appearances; `Consecutive`
    /// (2014 [U]) needs the position after each of the mover's last five moves, four plies apart.
    pub fn fivefold(&self, rule: FivefoldRule) -> bool {
        match rule {
            FivefoldRule::None => false,
            FivefoldRule::Any => self.count() >= 5,
            FivefoldRule::Consecutive => {
                let n = self.entries.len();
                n > 16 && (1..5).all(|k| self.entries[n - 1 - 4 * k].0 == self.current().0)
            }
        }
    }

    /// Plies since the last pawn move or capture.
    pub fn halfmoves(&self) -> u32 {
        self.current().1
    }

    /// The last 50 moves by each player had no pawn move and no capture (9.3: claimable).
    pub fn fifty_moves(&self) -> bool {
        self.halfmoves() >= 100
    }

    /// At least 75 moves by each player without a pawn move or capture (9.6.2).
    pub fn seventy_five_moves(&self) -> bool {
        self.halfmoves() >= 150
    }
}

/// The game's end decided by the position alone under `cfg`, if any: checkmate (5.1.1),
/// stalemate (5.2.1), dead position (5.2.2, on the insufficient-material fast path), then from
/// 2014 fivefold repetition (9.6.1) and 75 moves (9.6.2). Mate is looked at first, so a mate
/// on the 75th move prevails. `pos` is the position `reps` was last fed.
pub fn automatic_end(cfg: &LawsConfig, pos: &Chess, reps: &Repetitions) -> Option<Ending> {
    let end = |outcome, end| Some(cfg.ending(outcome, end));
    if pos.is_checkmate() {
        return end(win_for(!pos.turn()), GameEnd::Checkmate);
    }
    if pos.is_stalemate() {
        return end(Outcome::Draw, GameEnd::Stalemate);
    }
    if pos.is_insufficient_material() {
        return end(Outcome::Draw, GameEnd::DeadPosition);
    }
    if reps.fivefold(cfg.fivefold) {
        return end(Outcome::Draw, GameEnd::FivefoldRepetition);
    }
    if cfg.seventy_five_moves && reps.seventy_five_moves() {
        return end(Outcome::Draw, GameEnd::SeventyFiveMoves);
    }
    None
}

/// Draws the player to move may claim now (the position has just appeared; a claim with a
/// written move that is about to repeat is the caller's: play the move, then ask).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Claimable {
    /// Threefold repetition (9.2).
    pub threefold: bool,
    /// 50 moves without a pawn move or capture (9.3).
    pub fifty_moves: bool,
}

impl Claimable {
    pub fn any(self) -> bool {
        self.threefold || self.fifty_moves
    }
}

/// What a player may claim in the current position of `reps`.
pub fn claimable(reps: &Repetitions) -> Claimable {
    Claimable {
        threefold: reps.threefold(),
        fifty_moves: reps.fifty_moves(),
    }
}
