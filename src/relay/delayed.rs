//! The delayed feed: what spectators follow on the page and in the public event stream when the
//! venue delays its broadcast (`[relay] delay`).
//!
//! Flow: every half second [`follow`] reads, through a read-only connection of its own, each
//! board's game as it stood `delay` ago (the public view, [`crate::broadcast::public::view`]:
//! from stored times only, so a restart inside the window shows nothing newer; a pushed output
//! turned by [`crate::broadcast::run`]) and hands it to the public [`Hub`]
//! ([`Hub::show_game`]), which broadcasts only what changed. The clocks are the ones
//! [`clocks_at`] gives for that moment. Boards the record's hub knows and the store has no game
//! for yet are shown waiting. The arbiter's hub is never delayed.
//!
//! A game's boundary: the board's next game replaces its game here (a `game_started` event)
//! once the next one began the delay ago in stored time; until then the game before it is
//! shown as it stood, over only if it ended by then. That moment ([`crate::store::begun_by`]
//! at the cutoff) is the one every public output first names the next game at: its id in
//! `/api/boards` and the page, `/games/ID.pgn`, the round PGNs.

use std::{collections::HashMap, path::PathBuf, time::Duration};

use tokio::sync::watch;

use super::{Hub, live::LiveClock};
use crate::{
    Millis,
    broadcast::{
        self, Output, Reader, Turn, Wake,
        public::{self, Shown},
    },
    export::publish::{Publication, clocks_at},
    store::{GameRecord, StoreError, begun_by},
    tracker::Side,
};

/// How often the delayed view is brought forward.
const TICK: Duration = Duration::from_millis(500);

/// Keeps `public` showing every board as it stood `publication.delay_ms` ago, until `stop`.
pub async fn follow(
    record: Hub,
    public: Hub,
    db: PathBuf,
    publication: Publication,
    stop: watch::Receiver<bool>,
) {
    let view = DelayedView {
        record,
        public,
        reader: Reader::new(&db),
        publication,
        shown: HashMap::new(),
    };
    broadcast::run(view, Wake::Every { every: TICK, stop }).await;
}

/// The delayed hub as a pushed output: each turn reads every board's game as it stood the delay
/// ago ([`public::view`]) and shows it.
struct DelayedView {
    record: Hub,
    public: Hub,
    reader: Reader,
    publication: Publication,
    /// By board name: the game shown.
    shown: HashMap<String, i64>,
}

impl Output for DelayedView {
    /// The games, and the moment they are shown as of.
    type Body = (Vec<GameRecord>, Millis);
    type Error = StoreError;

    fn name(&self) -> &'static str {
        "delayed view"
    }

    fn read(&mut self, now_ms: Millis) -> Result<Option<Self::Body>, StoreError> {
        let cutoff = self.publication.cutoff(now_ms).unwrap_or(now_ms);
        let games = self
            .reader
            .with(|s| public::view(s, Shown::Boards, &self.publication, now_ms))?;
        Ok(Some((games, cutoff)))
    }

    async fn publish(&mut self, (games, cutoff): Self::Body) -> Turn {
        show(&self.record, &self.public, &games, cutoff, &mut self.shown);
        Turn::Done
    }
}

/// Shows `games` (each board's game at `cutoff`) on `public`; the record's boards without a
/// game yet are registered as they are.
fn show(
    record: &Hub,
    public: &Hub,
    games: &[GameRecord],
    cutoff: u64,
    shown: &mut HashMap<String, i64>,
) {
    // Which boards there are, without building every board's snapshot each tick.
    let known = public.boards();
    for (name, number, kind) in record.boards() {
        let has_game = games.iter().any(|g| g.board_name == name);
        if !has_game && !known.iter().any(|(k, ..)| *k == name) {
            public.add_board_kind(&name, number, kind, &[]);
        }
    }
    for g in games {
        let new_game = shown
            .insert(g.board_name.clone(), g.id.0)
            .is_some_and(|before| before != g.id.0);
        // A board's first game is there before it began (the board is shown set up for it),
        // but not named until it began the delay ago.
        let named = begun_by(g, cutoff);
        public.show_game(g, named, clock_at(g, cutoff), new_game);
    }
}

/// The clock a spectator sees at `cutoff`: both sides' times then, the side to move's running
/// until the game is over.
pub fn clock_at(game: &GameRecord, cutoff: u64) -> Option<LiveClock> {
    // Whole seconds: the page counts down between readings, as it does for a board's clock.
    let (white_ms, black_ms) = clocks_at(game, cutoff)?;
    let (white_ms, black_ms) = (white_ms / 1000 * 1000, black_ms / 1000 * 1000);
    let over = game.result != "*" || game.ended_at_ms.is_some();
    let to_move = if game.moves.len() % 2 == 1 {
        Side::Black
    } else {
        Side::White
    };
    let running = (!over && !game.moves.is_empty()).then_some(to_move);
    Some(LiveClock {
        white_ms,
        black_ms,
        running,
        white_flag: white_ms == 0,
        black_flag: black_ms == 0,
    })
}
