//! What the tracker tells the rest of the program: moves, revisions, takebacks, new games.
//!
//! Events are game-agnostic (notation and position as text) so the store, relay and exports
//! serve chess and togyz korgool alike.

use serde::{Deserialize, Serialize};

use super::IrregularityKind;
use crate::{
    Millis,
    game::{GameKind, Outcome},
    phrase::Phrase,
    sensor::Orientation,
};

/// A move as recorded on the scoresheet.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedMove {
    /// 1-based half-move number in the game.
    pub ply: u32,
    /// SAN for chess (`Nxe5`, `O-O`); `76`, `45X` for togyz korgool.
    pub notation: String,
    /// UCI for chess.
    pub uci: Option<String>,
    /// Position after the move (FEN for chess).
    pub position: String,
    /// Stream time when the move was recorded.
    pub at_ms: Millis,
    pub clock_white_ms: Option<u64>,
    pub clock_black_ms: Option<u64>,
    /// Article 8.4: the mover's clock has shown under five minutes in this period (with an
    /// increment under 30 s), so the player need not write; set by the arbiter stage.
    #[serde(default)]
    pub time_trouble: bool,
}

impl RecordedMove {
    /// This move as `G` plays it from `pos` (the position before it): by its UCI, else by its
    /// notation; `None` if neither is legal there.
    pub fn to_move<G: GameKind>(&self, pos: &G::Position) -> Option<G::Move> {
        self.uci
            .as_deref()
            .and_then(|u| G::parse_move(pos, u))
            .or_else(|| G::parse_move(pos, &self.notation))
    }
}

/// What an event plays, typed, for the judges: the start position of a game begun, the move of
/// a move recorded or revised (its new move). The tracker hands one beside each event that
/// [`TrackerEvent::plays`], in the events' order ([`super::Tracker::drain_played`]), so a judge
/// follows the game without reading notation back.
#[derive(Clone, Debug)]
pub enum Played<G: GameKind> {
    Start(G::Position),
    Move(G::Move),
}

/// A player, by colour (the first player is White in togyz korgool too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    White,
    Black,
}

impl Side {
    /// Who makes ply `ply` (1-based).
    pub fn of_ply(ply: u32) -> Side {
        if ply % 2 == 1 {
            Side::White
        } else {
            Side::Black
        }
    }

    /// The other player.
    pub fn other(self) -> Side {
        match self {
            Side::White => Side::Black,
            Side::Black => Side::White,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
        }
    }
}

/// Where moves missed in a gap were found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoverySource {
    /// The board's own log of its field changes and clock presses (DGT EEPROM).
    Memory,
    /// The one run of legal moves from the record that leads to what the board shows.
    Search,
}

impl RecoverySource {
    /// The audit-trail kind its event is stored as.
    pub fn kind(self) -> IrregularityKind {
        match self {
            RecoverySource::Memory => IrregularityKind::RecoveredFromMemory,
            RecoverySource::Search => IrregularityKind::RecoveredBySearch,
        }
    }
}

/// One thing the tracker decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrackerEvent {
    /// A game begins (the start position was set up), on a board read in `orientation`.
    GameStarted {
        at_ms: Millis,
        orientation: Orientation,
        /// The start position (FEN for chess) when the variant has several (Chess960); `None`:
        /// the kind's standard start.
        start: Option<String>,
    },
    /// A move is added at `mv.ply`.
    Move(RecordedMove),
    /// The move at `new.ply` is replaced (a slide, a rook-first castling).
    Revision {
        at_ms: Millis,
        old: RecordedMove,
        new: RecordedMove,
    },
    /// Every ply after `to_ply` is taken back (`from_ply` was the last one).
    Takeback {
        at_ms: Millis,
        from_ply: u32,
        to_ply: u32,
    },
    /// Both kings were put on the centre squares: a result the arbiter confirms; never a move.
    ResultGesture {
        at_ms: Millis,
        after_ply: u32,
        proposed: Outcome,
    },
    /// An irregularity seen on the board; `id` numbers them within the game.
    Irregularity {
        at_ms: Millis,
        /// When the board first showed it (the raw frames from here to `at_ms` show it).
        since_ms: Millis,
        id: u32,
        /// The ply it happened before (plies played so far + 1).
        ply: u32,
        kind: IrregularityKind,
        /// Who did it, when the board says (the side to move, the presser).
        player: Option<Side>,
        /// What the board shows, in English (`detail_phrase` worded as the record keeps it).
        detail: String,
        /// The detail as a phrase, for the other languages.
        detail_phrase: Option<Phrase>,
        /// The article of the configured laws, and what the laws provide (a penalty due, the
        /// offence count): filled in by the arbiter stage, not by the tracker. `ruling` is in
        /// English, `ruling_phrase` the same for the other languages.
        article: Option<String>,
        ruling: Option<String>,
        ruling_phrase: Option<Phrase>,
    },
    /// Irregularity `id` is over: the position was restored, or play went on from it.
    Resolved {
        at_ms: Millis,
        id: u32,
        /// The ply play goes on before.
        ply: u32,
        /// How, in English (`how_phrase` the same for the other languages).
        how: String,
        how_phrase: Option<Phrase>,
    },
    /// A clock showed a player's flag (Article 6.9): the result the Laws give, proposed to the
    /// arbiter (a game end follows only when the daemon counts as an observer, 6.8).
    FlagFall {
        at_ms: Millis,
        after_ply: u32,
        side: Side,
        proposed: Outcome,
        termination: String,
        article: Option<String>,
        /// Both flags are down now; `note` says what the Laws provide for that (in English;
        /// `note_phrase` the same for the other languages).
        both: bool,
        note: Option<String>,
        note_phrase: Option<Phrase>,
    },
    /// A draw the player to move may claim (9.2 threefold repetition, 9.3 fifty moves): never
    /// an automatic end over the board.
    Claimable {
        at_ms: Millis,
        /// The ply the claimant would play next.
        ply: u32,
        /// What may be claimed, in English (`claim_phrase` the same for the other languages).
        claim: String,
        claim_phrase: Option<Phrase>,
        article: String,
    },
    /// The start position read the same both ways round, and the first move showed the board
    /// the other way round than guessed at the start (togyz korgool): the game's orientation.
    Reoriented {
        at_ms: Millis,
        orientation: Orientation,
    },
    /// Plies `from_ply..=to_ply`, made while the board was not heard (from `since_ms`), are
    /// recorded from `source`: the moves follow this event.
    Recovered {
        at_ms: Millis,
        since_ms: Millis,
        from_ply: u32,
        to_ply: u32,
        source: RecoverySource,
    },
    /// The position alone ends the game (mate, stalemate).
    GameEnded {
        at_ms: Millis,
        after_ply: u32,
        outcome: Outcome,
        termination: String,
    },
}

impl TrackerEvent {
    /// The event plays something ([`Played`]): a game begun, a move recorded or revised.
    pub fn plays(&self) -> bool {
        matches!(
            self,
            TrackerEvent::GameStarted { .. }
                | TrackerEvent::Move(_)
                | TrackerEvent::Revision { .. }
        )
    }

    /// Stable name of the event kind, as stored.
    pub fn kind(&self) -> &'static str {
        match self {
            TrackerEvent::GameStarted { .. } => "game_started",
            TrackerEvent::Move(_) => "move",
            TrackerEvent::Revision { .. } => "revised_move",
            TrackerEvent::Takeback { .. } => "takeback",
            TrackerEvent::ResultGesture { .. } => "result_gesture",
            TrackerEvent::GameEnded { .. } => "game_ended",
            TrackerEvent::Irregularity { kind, .. } => kind.as_str(),
            TrackerEvent::Resolved { .. } => "resolved",
            TrackerEvent::FlagFall { .. } => "flag_fall",
            TrackerEvent::Claimable { .. } => "claimable",
            TrackerEvent::Reoriented { .. } => "reoriented",
            TrackerEvent::Recovered { source, .. } => source.kind().as_str(),
        }
    }
}
