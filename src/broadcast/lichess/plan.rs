//! What goes to which Lichess broadcast round, as lila reads a push: pure, no I/O, no clock.
//!
//! Flow: a `[[relay.lichess]]` entry maps event rounds to Lichess round ids ([`LichessRounds`]).
//! While the event is in round `current`, [`LichessRounds::due`] names every mapped round that
//! has started (a round still in play when the next one starts keeps being pushed to its own
//! Lichess round, never to the next one's). For each, [`round_body`] writes the round's chess
//! games (togyz korgool has no Lichess broadcast) on the entry's boards, at most `slice` of them,
//! in the push's style ([`Publication::lichess_style`](crate::export::publish::Publication::lichess_style):
//! clocks fixed at the last move shown, the time control as Lichess reads it). A game once in a
//! round's push stays in it ([`Pushed`]): lila matches a game to the first chapter any of its
//! rules accept (the same moves so far is one of them), so a game that drops out leaves a
//! chapter the next game may be written into.

use std::collections::{BTreeMap, BTreeSet};

use crate::{
    export::{
        pgn::write_pgn,
        publish::{BoardRange, PgnStyle, game_identity},
        round::broadcast_games,
    },
    game::Kind,
    store::GameRecord,
};

/// The event rounds one entry pushes, and the Lichess round each goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LichessRounds {
    /// `round = "…"`: the event round current when this process first pushes, and no other.
    Current(String),
    /// `rounds = { 1 = "…", 2 = "…" }`: each event round to its own Lichess round.
    Map(BTreeMap<u32, String>),
}

impl LichessRounds {
    /// The (event round, Lichess round id) pairs to push while the event is in round
    /// `current`: every mapped round up to `current`; for [`LichessRounds::Current`], the round
    /// it took first (`pinned`, set on the first call).
    pub fn due(&self, current: u32, pinned: &mut Option<u32>) -> Vec<(u32, &str)> {
        match self {
            LichessRounds::Current(id) => vec![(*pinned.get_or_insert(current), id.as_str())],
            LichessRounds::Map(map) => map
                .range(..=current)
                .map(|(r, id)| (*r, id.as_str()))
                .collect(),
        }
    }

    /// Every Lichess round id named.
    pub fn ids(&self) -> Vec<&str> {
        match self {
            LichessRounds::Current(id) => vec![id.as_str()],
            LichessRounds::Map(map) => map.values().map(String::as_str).collect(),
        }
    }
}

impl std::fmt::Display for LichessRounds {
    /// `round AbCdEfGh (the event round current at start)`, `rounds 1 = AbCdEfGh, 2 = …`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LichessRounds::Current(id) => {
                write!(f, "round {id} (the event round current at start)")
            }
            LichessRounds::Map(map) => {
                f.write_str("rounds ")?;
                for (i, (r, id)) in map.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{r} = {id}")?;
                }
                Ok(())
            }
        }
    }
}

/// Whether `id` reads as a Lichess round id: 8 letters and digits.
pub fn is_round_id(id: &str) -> bool {
    id.len() == 8 && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The games (by [`game_identity`]) already in one Lichess round's push.
pub type Pushed = BTreeSet<String>;

/// One Lichess round's body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundBody {
    /// The round's PGN (empty: nothing to push yet).
    pub pgn: String,
    /// Every game in it has a result.
    pub finished: bool,
    /// Games of the entry's boards that `slice` left out.
    pub left_out: usize,
}

/// Event round `round` as one Lichess round takes it: its chess games on `range`'s boards (all
/// if `None`), by board; every game of `pushed` that is still in the round, then the others by
/// board number up to `slice` games in all. `pushed` gains the games written.
pub fn round_body(
    games: &[GameRecord],
    round: u32,
    range: Option<&BoardRange>,
    slice: usize,
    style: &PgnStyle,
    pushed: &mut Pushed,
) -> RoundBody {
    let mut picked: Vec<&GameRecord> = broadcast_games(games, round)
        .into_iter()
        .filter(|g| g.kind == Kind::Chess)
        .collect();
    if let Some(r) = range {
        picked = r.select(&picked);
    }
    let mut room = slice.saturating_sub(
        picked
            .iter()
            .filter(|g| pushed.contains(&game_identity(g)))
            .count(),
    );
    let total = picked.len();
    picked.retain(|g| {
        pushed.contains(&game_identity(g)) || {
            let take = room > 0;
            room = room.saturating_sub(1);
            take
        }
    });
    pushed.extend(picked.iter().map(|g| game_identity(g)));
    RoundBody {
        pgn: write_pgn(&picked, style),
        finished: !picked.is_empty() && picked.iter().all(|g| g.result != "*"),
        left_out: total - picked.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapped_round_is_pushed_to_its_own_id_once_it_has_started() {
        let map = LichessRounds::Map(BTreeMap::from([
            (1, "RoundOne".to_owned()),
            (2, "RoundTwo".to_owned()),
            (3, "RoundThr".to_owned()),
        ]));
        let mut pinned = None;
        assert_eq!(map.due(1, &mut pinned), [(1, "RoundOne")]);
        assert_eq!(map.due(2, &mut pinned), [(1, "RoundOne"), (2, "RoundTwo")]);
        assert_eq!(map.due(9, &mut pinned).len(), 3);
        assert_eq!(pinned, None);
        let one = LichessRounds::Current("OnlyOne1".to_owned());
        assert_eq!(one.due(4, &mut pinned), [(4, "OnlyOne1")]);
        // The event moves on; the round stays the one taken first.
        assert_eq!(one.due(5, &mut pinned), [(4, "OnlyOne1")]);
    }

    #[test]
    fn round_ids_are_eight_letters_and_digits() {
        assert!(is_round_id("AbCd1234"));
        for bad in ["AbCd123", "AbCd12345", "AbCd-234", "", "AbCd 234"] {
            assert!(!is_round_id(bad), "{bad:?}");
        }
    }
}
