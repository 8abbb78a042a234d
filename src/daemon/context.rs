//! What every board task shares and keeps: the context (the store writer, the stop signal, the
//! hub, the metrics), a board's own state beside its recorder ([`BoardRef`]: its name, live clock
//! feed, counters, a refusal by the store), and how soon a write is attempted.

use std::{
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use tokio::sync::watch;

use super::writer::StoreWriter;
use crate::{
    config::Locator,
    metrics::Metrics,
    pipeline::Board,
    recorder::{Recorder, RecorderStats},
    relay::Hub,
    sensor::dgt::ClockReading,
    store::GameId,
    tracker::TrackerEvent,
};

/// Sees every event of a board once it is durable.
pub type Announce = Arc<dyn Fn(&str, &TrackerEvent) + Send + Sync>;

/// What every board task shares.
#[derive(Clone)]
pub struct Ctx {
    pub writer: StoreWriter,
    pub stop: watch::Receiver<bool>,
    pub hub: Option<Hub>,
    pub metrics: Arc<Metrics>,
    /// Where serial numbers are looked up (`/sys`).
    pub sysfs: PathBuf,
    pub announce: Announce,
}

/// A board's state besides its recorder.
pub(super) struct BoardRef {
    pub(super) name: String,
    pub(super) locator: Locator,
    pub(super) live: Option<LiveClockFeed>,
    /// Whether its game is in progress (for the games-live gauge).
    pub(super) playing: bool,
    /// The recorder counters already added to the metrics.
    pub(super) reported: RecorderStats,
    /// Set while the store refuses this board's writes.
    pub(super) refused: Option<Refusal>,
    /// The game it records (the one resumed, or the last one started).
    pub(super) game: Option<GameId>,
}

impl BoardRef {
    /// A board found through `locator`, shown on the hub of `ctx` if there is one; `game`: its
    /// game in progress.
    pub(super) fn new(name: String, locator: Locator, ctx: &Ctx, game: Option<GameId>) -> BoardRef {
        BoardRef {
            name,
            locator,
            live: ctx.hub.clone().map(LiveClockFeed::new),
            playing: game.is_some(),
            reported: RecorderStats::default(),
            refused: None,
            game,
        }
    }
}

/// Passes a board's clock to the relay: a new state of the clock (started, stopped, pressed,
/// a flag) at once, a running clock's time at most every [`LiveClockFeed::EVERY`].
pub(super) struct LiveClockFeed {
    pub(super) hub: Hub,
    pub(super) last: Option<(ClockReading, Instant)>,
}

impl LiveClockFeed {
    const EVERY: Duration = Duration::from_millis(250);

    pub(super) fn new(hub: Hub) -> LiveClockFeed {
        LiveClockFeed { hub, last: None }
    }

    pub(super) fn update<B: Board>(&mut self, name: &str, recorder: &Recorder<B>) {
        let Some(reading) = recorder.pipeline.last_clock() else {
            return;
        };
        let due = match &self.last {
            None => true,
            Some((last, _)) if *last == reading => false,
            Some((last, at)) => {
                let state =
                    |r: &ClockReading| (r.running, r.lever_right_high, r.left_flag, r.right_flag);
                state(last) != state(&reading) || at.elapsed() >= Self::EVERY
            }
        };
        if due {
            self.last = Some((reading, Instant::now()));
            self.hub
                .clock(name, &reading, recorder.pipeline.white_on_left());
        }
    }
}

/// The store refusing a board's writes: since when, how often, why, and when to try again.
pub(super) struct Refusal {
    pub(super) since: Instant,
    pub(super) batches: u64,
    pub(super) error: String,
    pub(super) next_try: Instant,
}

/// Whether [`persist`] may wait for the retry time of a refused store.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Attempt {
    /// Only when due (on a frame, a tick).
    WhenDue,
    /// Now, whatever the retry time (stopping).
    Now,
}
