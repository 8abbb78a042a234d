//! Which article of which edition an irregularity or a game end falls under.
//!
//! [`IrregularityKind`] (the tracker's) names what the tracker can witness; [`article`] gives its
//! article for an edition, [`IrregularityKind::note`] why it may have none, [`game_end_article`] the
//! article of each way a game ends, and [`Ending`] bundles a ruled game end for the record.
//! Editions up to 2014 use lettered numbers (`7.4b`), 2017 on decimal ones (`7.5.1`).

use serde::{Deserialize, Serialize};

pub use crate::tracker::IrregularityKind;

use super::{
    laws::{Federation, Laws, LawsConfig},
    time_control::{Category, TimeControl},
};
use crate::game::Outcome;

impl IrregularityKind {
    /// Why a kind has no article in some or all editions.
    pub fn note(self) -> Option<&'static str> {
        match self {
            IrregularityKind::ClockWithoutMove => Some(
                "a press without a move is an illegal move from 2017 (7.5.3); \
                 earlier editions have no article for it",
            ),
            IrregularityKind::Takeback
            | IrregularityKind::RevisedMove
            | IrregularityKind::RecoveredFromMemory
            | IrregularityKind::RecoveredBySearch => {
                Some("recorded for the audit trail; not an irregularity under the Laws")
            }
            IrregularityKind::ThreadLost => Some(
                "the recorder's own alert: moves were made while the board was not heard; \
                 not an irregularity under the Laws",
            ),
            _ => None,
        }
    }
}

/// The article for an irregularity under `laws`; `None` where that edition has none.
///
/// Wrong initial position: 7.1a (2001, 2009), 7.2a (2014), 7.2.1 (2017+). Board mis-oriented:
/// 7.1b, 7.2b, 7.2.2. Displaced pieces: 7.3 (2001, 2009), 7.4 (2014+). Illegal move: 7.4 (2001,
/// 2009), 7.5 (2014), 7.5.1 (2017+). Clock pressed without a move: 7.5.3 from 2017 only.
pub fn article(kind: IrregularityKind, laws: Laws) -> Option<&'static str> {
    use IrregularityKind as K;
    use Laws::*;
    Some(match (kind, laws) {
        (K::Displaced, Fide2001 | Fide2009) => "7.3",
        (K::Displaced, Fide2014 | Fide2018 | Fide2023) => "7.4",
        (K::IllegalMove, Fide2001 | Fide2009) => "7.4",
        (K::IllegalMove, Fide2014) => "7.5",
        (K::IllegalMove, Fide2018 | Fide2023) => "7.5.1",
        (K::ClockWithoutMove, Fide2018 | Fide2023) => "7.5.3",
        (K::ClockWithoutMove, Fide2001 | Fide2009 | Fide2014) => return None,
        (K::WrongStartPosition, Fide2001 | Fide2009) => "7.1a",
        (K::WrongStartPosition, Fide2014) => "7.2a",
        (K::WrongStartPosition, Fide2018 | Fide2023) => "7.2.1",
        (K::BoardRotated, Fide2001 | Fide2009) => "7.1b",
        (K::BoardRotated, Fide2014) => "7.2b",
        (K::BoardRotated, Fide2018 | Fide2023) => "7.2.2",
        // 6.10.2 from 2017; the earlier numbering is not in the brief.
        // An appendix rule (rapid and blitz); 2001 is taken to be as 2009 [U].
        (K::IllegalPosition, Fide2001 | Fide2009) => "A.4c",
        (K::IllegalPosition, Fide2014 | Fide2018) => "A.4.4",
        (K::IllegalPosition, Fide2023) => "A.5.4",
        (K::ClockMisSet, Fide2018 | Fide2023) => "6.10.2",
        (K::ClockMisSet, Fide2001 | Fide2009 | Fide2014) => return None,
        (
            K::Takeback
            | K::RevisedMove
            | K::ThreadLost
            | K::RecoveredFromMemory
            | K::RecoveredBySearch,
            _,
        ) => return None,
    })
}

/// The US Chess rule an irregularity falls under, where the brief records one (section 6):
/// an illegal move is 11A (reinstated if among the last ten moves). The others have no rule
/// number on record here, so none is cited rather than a FIDE one under US Chess rules.
pub fn uscf_article(kind: IrregularityKind) -> Option<&'static str> {
    match kind {
        IrregularityKind::IllegalMove => Some("USCF 11A"),
        _ => None,
    }
}

/// The US Chess rule for a game end, where the brief records one: a flag fall 13C1 (a player
/// calls it), no win on time 14E, threefold 14C, fifty moves 14F, fivefold and 75 moves 14K.
pub fn uscf_game_end_article(end: GameEnd) -> Option<&'static str> {
    Some(match end {
        GameEnd::TimeForfeit => "USCF 13C1",
        GameEnd::TimeForfeitCannotMate => "USCF 14E",
        GameEnd::ThreefoldRepetition => "USCF 14C",
        GameEnd::FiftyMoves => "USCF 14F",
        GameEnd::FivefoldRepetition | GameEnd::SeventyFiveMoves => "USCF 14K",
        GameEnd::Checkmate | GameEnd::Stalemate | GameEnd::DeadPosition => return None,
    })
}

impl LawsConfig {
    /// The article of `kind` under these rules: the edition's, or the US Chess rule.
    pub fn article(&self, kind: IrregularityKind) -> Option<&'static str> {
        match self.federation {
            Federation::Fide => article(kind, self.laws),
            Federation::Uscf => uscf_article(kind),
        }
    }

    /// The article of a game end under these rules.
    pub fn game_end_article(&self, end: GameEnd) -> Option<&'static str> {
        match self.federation {
            Federation::Fide => game_end_article(end, self.laws),
            Federation::Uscf => uscf_game_end_article(end),
        }
    }

    /// A game end ruled under these rules, ready for the record.
    pub fn ending(&self, outcome: Outcome, end: GameEnd) -> Ending {
        Ending {
            outcome,
            end,
            termination: end.termination(),
            article: self.game_end_article(end).unwrap_or(""),
        }
    }

    /// The category of a game played at `tc`: the edition's appendices, or US Chess's limits.
    pub fn category(&self, tc: &TimeControl) -> Category {
        match self.federation {
            Federation::Fide => tc.category(self.laws),
            Federation::Uscf => tc.uscf_category(),
        }
    }
}

/// A way a game ends over the board, or a draw a player may claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameEnd {
    Checkmate,
    Stalemate,
    /// Neither side can mate by any series of legal moves.
    DeadPosition,
    /// Automatic from 2014.
    FivefoldRepetition,
    /// 75 moves by each player without a pawn move or capture; automatic from 2014.
    SeventyFiveMoves,
    /// A flag fell: the player loses.
    TimeForfeit,
    /// A flag fell but the opponent cannot mate by any series of legal moves: a draw.
    TimeForfeitCannotMate,
    /// Claimable only (9.2): never an automatic end over the board.
    ThreefoldRepetition,
    /// Claimable only (9.3).
    FiftyMoves,
}

impl GameEnd {
    /// The stored termination (`checkmate`, `stalemate`, `dead_position`, `fivefold_repetition`,
    /// `seventy_five_moves`, `time_forfeit`, `time_forfeit_cannot_mate`, `threefold_repetition`,
    /// `fifty_moves`).
    pub fn termination(self) -> &'static str {
        match self {
            GameEnd::Checkmate => "checkmate",
            GameEnd::Stalemate => "stalemate",
            GameEnd::DeadPosition => "dead_position",
            GameEnd::FivefoldRepetition => "fivefold_repetition",
            GameEnd::SeventyFiveMoves => "seventy_five_moves",
            GameEnd::TimeForfeit => "time_forfeit",
            GameEnd::TimeForfeitCannotMate => "time_forfeit_cannot_mate",
            GameEnd::ThreefoldRepetition => "threefold_repetition",
            GameEnd::FiftyMoves => "fifty_moves",
        }
    }

    /// The PGN `Termination` tag value: `time forfeit` for a flag, `normal` otherwise.
    pub fn pgn_termination(self) -> &'static str {
        match self {
            GameEnd::TimeForfeit | GameEnd::TimeForfeitCannotMate => "time forfeit",
            _ => "normal",
        }
    }
}

/// The article for a game end under `laws`; `None` where the edition has no such rule.
///
/// Checkmate 5.1a / 5.1.1; stalemate 5.2a / 5.2.1; dead position 5.2b / 5.2.2; threefold 9.2;
/// fifty moves 9.3; fivefold and 75 moves from 2014 only (9.6a/9.6b [U] in 2014, 9.6.1/9.6.2
/// later); flag fall 6.10 in 2001, 6.9 from 2009.
pub fn game_end_article(end: GameEnd, laws: Laws) -> Option<&'static str> {
    let decimal = laws.decimal_articles();
    Some(match end {
        GameEnd::Checkmate if decimal => "5.1.1",
        GameEnd::Checkmate => "5.1a",
        GameEnd::Stalemate if decimal => "5.2.1",
        GameEnd::Stalemate => "5.2a",
        GameEnd::DeadPosition if decimal => "5.2.2",
        GameEnd::DeadPosition => "5.2b",
        GameEnd::FivefoldRepetition | GameEnd::SeventyFiveMoves if laws < Laws::Fide2014 => {
            return None;
        }
        GameEnd::FivefoldRepetition if decimal => "9.6.1",
        GameEnd::FivefoldRepetition => "9.6a",
        GameEnd::SeventyFiveMoves if decimal => "9.6.2",
        GameEnd::SeventyFiveMoves => "9.6b",
        GameEnd::TimeForfeit | GameEnd::TimeForfeitCannotMate if laws == Laws::Fide2001 => "6.10",
        GameEnd::TimeForfeit | GameEnd::TimeForfeitCannotMate => "6.9",
        GameEnd::ThreefoldRepetition => "9.2",
        GameEnd::FiftyMoves => "9.3",
    })
}

/// A game end ruled over the board, ready for the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ending {
    pub outcome: Outcome,
    pub end: GameEnd,
    /// `end.termination()`.
    pub termination: &'static str,
    /// The article under the configured edition ("" if it has none, which no automatic end
    /// produces).
    pub article: &'static str,
}

impl Ending {
    pub fn new(outcome: Outcome, end: GameEnd, laws: Laws) -> Ending {
        Ending {
            outcome,
            end,
            termination: end.termination(),
            article: game_end_article(end, laws).unwrap_or(""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_keep_their_contract_names() {
        let names: Vec<_> = IrregularityKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "displaced",
                "illegal_move",
                "clock_without_move",
                "wrong_start_position",
                "board_rotated",
                "illegal_position",
                "clock_mis_set",
                "takeback",
                "revised_move",
                "thread_lost",
                "recovered_from_memory",
                "recovered_by_search"
            ]
        );
        for k in IrregularityKind::ALL {
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.as_str())
            );
            assert_eq!(IrregularityKind::from_str_opt(k.as_str()), Some(k));
        }
    }

    #[test]
    fn audit_kinds_have_no_article_but_a_note() {
        for laws in Laws::ALL {
            assert_eq!(article(IrregularityKind::Takeback, laws), None);
            assert_eq!(article(IrregularityKind::RevisedMove, laws), None);
        }
        assert!(IrregularityKind::Takeback.note().is_some());
        assert!(IrregularityKind::Displaced.note().is_none());
    }
}
