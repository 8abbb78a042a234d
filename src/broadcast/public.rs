//! The one public view of the record: what any public output (round and game PGN, the folder,
//! the Lichess push, the delayed hub spectators follow) may read of the games at a moment.
//!
//! Flow: an output names what it shows ([`Shown`]) and calls [`view`] with the venue's
//! [`Publication`] and the time; without a delay that is the record as it stands, with one each
//! game as it stood [`Publication::cutoff`] ago, from stored times only (the store's as-of
//! reads), so nothing younger than the delay is ever read for the public. What is then written
//! of each game (no irregularities or notes unless the venue publishes them, which clocks) is
//! the publication's [`PgnStyle`](crate::export::publish::PgnStyle); what the live hubs send
//! spectators is `BoardSnapshot::public`.

use crate::{
    Millis,
    export::publish::Publication,
    store::{GameId, GameRecord, Store, StoreError},
};

/// What a public output shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// Round `n`'s games.
    Round(u32),
    /// Every game (an event without rounds).
    Every,
    /// One game.
    Game(GameId),
    /// Each board's game (the delayed hub's boards).
    Boards,
}

/// `shown` as the public sees it at `now_ms` under `publication`; see the module. A game not
/// begun by the moment shown is not in it.
pub fn view(
    store: &Store,
    shown: Shown,
    publication: &Publication,
    now_ms: Millis,
) -> Result<Vec<GameRecord>, StoreError> {
    let cutoff = publication.cutoff(now_ms);
    match (shown, cutoff) {
        (Shown::Round(n), Some(at)) => store.round_games_as_of(n, at),
        (Shown::Round(n), None) => store.round_games(n),
        (Shown::Every, Some(at)) => store.games_as_of(at),
        (Shown::Every, None) => store.games(),
        (Shown::Game(id), Some(at)) => Ok(store.game_as_of(id, at)?.into_iter().collect()),
        (Shown::Game(id), None) => Ok(store.game(id)?.into_iter().collect()),
        (Shown::Boards, at) => store.boards_as_of(at.unwrap_or(now_ms)),
    }
}
