//! Which rules a togyz korgool game is played under: the Kyrgyz federation's or the Kazakh
//! practice (how a flag fall is counted, how a result is written).

use super::*;

/// How a fallen flag is scored (rules summary section 8, `flag_rule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlagRule {
    /// [KG 3.10 → 3.4]: only the flagged player's store counts: below 81 he loses, 81 is a draw.
    /// The Kazakh text (uncaptured korgools go to the opponent) is the same arithmetic.
    CountStores,
    /// The flagged player loses outright (online play), whatever the stores.
    Forfeit,
}

/// How a result is written (rules summary section 8, `result_format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResultFormat {
    /// `1–0/62`: the loser's korgools as the supplementary index ([KG 3.2, 7.3]).
    Kyrgyz,
    /// `1-0`, `0-1`, `1/2-1/2` as in the Kazakh database and PlayOK.
    Pgn,
}

/// Where the Kyrgyz and Kazakh rules differ (rules summary section 8). Sowing, captures and the
/// tuz restrictions are the same in both and are not switchable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    pub flag_rule: FlagRule,
    pub result_format: ResultFormat,
    /// A repeated position may be claimed as a draw (Chylymov's position, [KG 3.7, 13.4]).
    pub repetition_claim: bool,
    /// At most this many draw offers; the next one loses ([KG 13.2]).
    pub max_draw_offers: Option<u8>,
    /// The game's first move may not be from pit 1 (open.kg; not in the [KG] text).
    pub forbid_first_move_from_pit1: bool,
    /// Arriving later than half the allowance plus 30 s loses ([KG 3.9]).
    pub late_arrival_forfeit: bool,
}

impl Rules {
    /// The Kyrgyz federation's competition rules.
    pub const KYRGYZ: Rules = Rules {
        flag_rule: FlagRule::CountStores,
        result_format: ResultFormat::Kyrgyz,
        repetition_claim: true,
        max_draw_offers: Some(3),
        forbid_first_move_from_pit1: false,
        late_arrival_forfeit: true,
    };

    /// The Kazakh federation's and online practice.
    pub const KAZAKH: Rules = Rules {
        flag_rule: FlagRule::CountStores,
        result_format: ResultFormat::Pgn,
        repetition_claim: false,
        max_draw_offers: None,
        forbid_first_move_from_pit1: false,
        late_arrival_forfeit: false,
    };

    /// Whether a player's `nth` draw offer (1-based) loses the game ([KG 13.2]).
    pub fn draw_offer_loses(&self, nth: u8) -> bool {
        self.max_draw_offers.is_some_and(|max| nth > max)
    }

    /// How late a player may arrive for a game with `allowance` per player ([KG 3.9]).
    pub fn late_arrival_limit(&self, allowance: Millis) -> Option<Millis> {
        self.late_arrival_forfeit.then_some(allowance / 2 + 30_000)
    }
}

impl Default for Rules {
    fn default() -> Self {
        Rules::KYRGYZ
    }
}
