//! The illegal-move ladder: what a player's n-th completed illegal move costs.
//!
//! Flow: the tracker counts completed illegal moves per player and asks
//! [`illegal_move_penalty`] with that count, the game's [`Category`] and whether the opponent can
//! still mate ([`can_mate`], the insufficient-material fast path). The answer is time for the
//! opponent, a loss, or a draw where a loss would stand but the opponent cannot mate. The arbiter
//! applies it; nothing here changes a clock.
//!
//! By edition: 2001 and 2009 (7.4b): the 1st and 2nd cost 2 minutes to the opponent, the 3rd
//! loses. 2014 (7.5b) and 2017+ (7.5.5): the 1st costs 2 minutes, the 2nd loses. Blitz from
//! 2014 (B.2) and rapid and blitz in 2023 (A.3, B.3): 1 minute instead of 2. In every edition
//! the game is drawn instead of lost if the opponent cannot mate by any series of legal moves.
//! Under the US Chess preset (11D) every completed illegal move costs 2 minutes and none loses;
//! in blitz the opponent may instead claim the game before he moves if he has mating material
//! ([`uscf_mating_material`]), else a draw.

use shakmaty::{Chess, Color, Position};

use super::{
    laws::{Federation, Laws, LawsConfig},
    time_control::Category,
};

/// What an illegal move costs the player who completed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Penalty {
    /// Time added to the opponent's clock.
    AddTimeToOpponent { ms: u64 },
    /// The game is lost.
    Loss,
    /// The game would be lost, but the opponent cannot mate by any legal series: drawn.
    Draw,
    /// US Chess blitz: the opponent may claim the game before his next move.
    OpponentMayClaimWin,
    /// US Chess blitz, the opponent without mating material: he may claim a draw.
    OpponentMayClaimDraw,
}

/// The penalty for a player's `offence`-th completed illegal move (1-based; 0 counts as 1).
/// `opponent_can_mate`: [`can_mate`] under FIDE rules, [`uscf_mating_material`] under US Chess.
pub fn illegal_move_penalty(
    cfg: &LawsConfig,
    category: Category,
    offence: u32,
    opponent_can_mate: bool,
) -> Penalty {
    if cfg.federation == Federation::Uscf && category == Category::Blitz {
        return if opponent_can_mate {
            Penalty::OpponentMayClaimWin
        } else {
            Penalty::OpponentMayClaimDraw
        };
    }
    let offence = offence.max(1);
    match cfg.illegal_strikes_to_lose {
        Some(strikes) if offence >= strikes => {
            if opponent_can_mate {
                Penalty::Loss
            } else {
                Penalty::Draw
            }
        }
        _ => Penalty::AddTimeToOpponent {
            ms: penalty_ms(cfg, category),
        },
    }
}

/// The time an illegal move (or an incorrect claim from 2014) adds to the opponent's clock.
pub fn penalty_ms(cfg: &LawsConfig, category: Category) -> u64 {
    let secs = match category {
        Category::Standard => cfg.penalty_secs_standard,
        Category::Rapid => cfg.penalty_secs_rapid,
        Category::Blitz => cfg.penalty_secs_blitz,
    };
    u64::from(secs) * 1000
}

/// The articles the ladder rests on: the ladder itself, then the appendix that sets the time in
/// rapid or blitz where it differs from standard.
pub fn illegal_move_penalty_article(laws: Laws, category: Category) -> &'static str {
    match (laws, category) {
        (Laws::Fide2001 | Laws::Fide2009, _) => "7.4b",
        (Laws::Fide2014, Category::Blitz) => "7.5b, B.2",
        (Laws::Fide2014, _) => "7.5b",
        (Laws::Fide2018, Category::Blitz) => "7.5.5, B.2",
        (Laws::Fide2018, _) => "7.5.5",
        (Laws::Fide2023, Category::Rapid) => "7.5.5, A.3",
        (Laws::Fide2023, Category::Blitz) => "7.5.5, B.3",
        (Laws::Fide2023, Category::Standard) => "7.5.5",
    }
}

impl LawsConfig {
    /// The article of the illegal-move penalty under these rules: the edition's
    /// ([`illegal_move_penalty_article`]), or US Chess 11D (blitz: its chapter 11).
    pub fn illegal_move_penalty_article(&self, category: Category) -> &'static str {
        match (self.federation, category) {
            (Federation::Fide, _) => illegal_move_penalty_article(self.laws, category),
            (Federation::Uscf, Category::Blitz) => "USCF ch. 11",
            (Federation::Uscf, _) => "USCF 11D",
        }
    }

    /// Whether `color` can still win under these rules' material test: FIDE's [`can_mate`], or
    /// US Chess mating material ([`uscf_mating_material`]).
    pub fn can_win(&self, pos: &Chess, color: Color) -> bool {
        match self.federation {
            Federation::Fide => can_mate(pos, color),
            Federation::Uscf => uscf_mating_material(pos, color),
        }
    }
}

/// US Chess mating material (the blitz rule on an illegal move): a pawn, a rook, a queen, or at
/// least two minor pieces.
pub fn uscf_mating_material(pos: &Chess, color: Color) -> bool {
    let board = pos.board();
    let mine = board.by_color(color);
    let heavy_or_pawn = (mine & (board.pawns() | board.rooks() | board.queens())).any();
    let minors = (mine & (board.knights() | board.bishops())).count();
    heavy_or_pawn || minors >= 2
}

/// Whether `color` could still mate by some series of legal moves, on the fast path: false only
/// for insufficient material (a lone king; a lone knight against at most a queen; bishops all on
/// one colour and no knights or pawns). Other positions count as "can mate"; the full helpmate
/// search (CHA, D3-Chess) is out of scope.
pub fn can_mate(pos: &Chess, color: Color) -> bool {
    !pos.has_insufficient_material(color)
}

/// Article 5.1.2 from 2023: a player who resigns where the opponent cannot mate by any series of
/// legal moves draws the game. For `result` (`1-0` or `0-1`) declared by resignation in `pos`,
/// why the game is drawn instead, if it is; `None` when the resignation stands.
pub fn resignation_draw(laws: Laws, pos: &Chess, result: &str) -> Option<String> {
    let winner = match result {
        "1-0" => Color::White,
        "0-1" => Color::Black,
        _ => return None,
    };
    (laws >= Laws::Fide2023 && !can_mate(pos, winner)).then(|| {
        format!(
            "{} resigned where {} cannot mate by any series of legal moves: the game is drawn \
             (5.1.2)",
            if winner == Color::White {
                "black"
            } else {
                "white"
            },
            if winner == Color::White {
                "white"
            } else {
                "black"
            },
        )
    })
}
