//! The one store writer: a thread owning the SQLite connection that records every board.
//!
//! Flow: boards send batches through a [`StoreWriter`] handle; the thread writes each batch in
//! one transaction (dating new games in it), times the commit into the [`Metrics`], bumps the
//! change signal when the batch touched games, and hands the batch back once it is durable (or
//! with the error, for the board to keep and retry). A store that refuses writes (a full disk)
//! is logged once at error level when it starts and once at info level when it recovers, and
//! shown in the metrics meanwhile. A [`PageLimit`] is how a test makes the disk full.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use tokio::sync::{mpsc, oneshot, watch};
use tracing::{error, info, warn};

use super::pgn_date;
use crate::{
    device::serial::now_ms,
    metrics::Metrics,
    store::{Store, StoreError, Write, WriteReport},
};

/// What the writer says of a batch, handing the batch back (to announce it, or to retry it).
type WriteReply = (Result<WriteReport, StoreError>, Vec<Write>);

/// A batch for the writer and where to say it is durable.
type WriteRequest = (Vec<Write>, oneshot::Sender<WriteReply>);

/// A batch that failed, handed back unless the writer stopped with it.
pub type Refused = (WriteError, Option<Vec<Write>>);

/// Why a batch was not stored.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the store writer has stopped")]
    WriterGone,
}

impl WriteError {
    /// Whether the store refused for lack of space.
    pub fn is_full(&self) -> bool {
        matches!(self, WriteError::Store(e) if e.is_full())
    }
}

/// A cap on the database's size in pages that the writer applies before each batch
/// (`PRAGMA max_page_count` on its connection): the way a test simulates a full disk, and lifts
/// it, with real SQLite throughout. Production leaves it unset; cheap to clone (one shared value).
#[derive(Clone, Debug, Default)]
pub struct PageLimit(Arc<AtomicU64>);

impl PageLimit {
    /// No limit in [`PageLimit::get`]'s encoding.
    const NONE: u64 = 0;
    /// "The database's size when the writer next looks."
    const FREEZE: u64 = u64::MAX;

    pub fn new() -> PageLimit {
        PageLimit::default()
    }

    /// Caps the database at `pages` pages (never below its current size).
    pub fn set(&self, pages: u64) {
        let pages = pages.clamp(1, Self::FREEZE - 1);
        self.0.store(pages, Ordering::SeqCst);
    }

    /// Caps the database at the size it has when the writer next writes: it is full from then on.
    pub fn freeze(&self) {
        self.0.store(Self::FREEZE, Ordering::SeqCst);
    }

    /// Lifts the cap: space has returned.
    pub fn lift(&self) {
        self.0.store(Self::NONE, Ordering::SeqCst);
    }

    fn get(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// What the writer tells besides the board: the daemon's counters and the change signal.
#[derive(Clone, Default)]
pub struct WriterHooks {
    pub metrics: Option<Arc<Metrics>>,
    /// Bumped after every committed batch that touched a game.
    pub changes: Option<Arc<watch::Sender<u64>>>,
    /// Tests only: see [`PageLimit`].
    pub page_limit: Option<PageLimit>,
}

/// How long the store must take every batch before it counts as recovered. A nearly full disk
/// still takes a small batch now and then (it fits in a page with room) while the boards that
/// hold a backlog are refused: one recovery, not one per lucky batch. Longer than a board's
/// retry interval ([`super::persist::RETRY_EVERY`]).
const SETTLED: Duration = Duration::from_secs(3);

/// A store refusing writes: since when, how many batches, and the last refusal.
struct Refusing {
    since: Instant,
    batches: u64,
    last: Instant,
}

/// The store's health as the writer thread sees it, to log a change of state once.
#[derive(Default)]
struct Health {
    refusing: Option<Refusing>,
    /// The page limit last applied ([`PageLimit`]'s encoding).
    applied_limit: u64,
}

impl Health {
    fn failed(&mut self, err: &StoreError) {
        let now = Instant::now();
        match &mut self.refusing {
            Some(r) => {
                r.batches += 1;
                r.last = now;
            }
            None => {
                error!(
                    cause = %err,
                    "the store refuses writes; every board keeps its moves in memory and retries"
                );
                self.refusing = Some(Refusing {
                    since: now,
                    batches: 1,
                    last: now,
                });
            }
        }
    }

    /// A batch committed; whether the store counts as taking writes (see [`SETTLED`]).
    fn committed(&mut self) -> bool {
        let Some(r) = &self.refusing else {
            return true;
        };
        if r.last.elapsed() < SETTLED {
            return false;
        }
        info!(
            after_s = r.since.elapsed().as_secs(),
            refused_batches = r.batches,
            "the store accepts writes again; recording resumed"
        );
        self.refusing = None;
        true
    }

    /// Applies the test's page limit when it changed.
    fn apply_limit(&mut self, store: &mut Store, limit: &PageLimit) {
        let want = limit.get();
        if want == self.applied_limit {
            return;
        }
        let pages = match want {
            PageLimit::NONE => Ok(None),
            PageLimit::FREEZE => store.page_count().map(Some),
            n => Ok(Some(n)),
        };
        match pages.and_then(|pages| store.set_max_pages(pages).map(|set| (pages, set))) {
            Ok((pages, set)) => {
                info!(asked = ?pages, pages = set, "test page limit applied to the store");
                self.applied_limit = want;
            }
            Err(e) => warn!(cause = %e, "test page limit not applied"),
        }
    }
}

/// The handle boards use to reach the one store writer.
#[derive(Clone)]
pub struct StoreWriter {
    tx: mpsc::Sender<WriteRequest>,
}

impl StoreWriter {
    /// Starts the writer thread; it owns `store` until every handle is dropped.
    pub fn start(store: Store) -> std::io::Result<(StoreWriter, std::thread::JoinHandle<Store>)> {
        StoreWriter::start_with(store, WriterHooks::default())
    }

    /// [`StoreWriter::start`], telling `hooks` of every commit.
    pub fn start_with(
        mut store: Store,
        hooks: WriterHooks,
    ) -> std::io::Result<(StoreWriter, std::thread::JoinHandle<Store>)> {
        let (tx, mut rx) = mpsc::channel::<WriteRequest>(256);
        let handle = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || {
                let mut health = Health::default();
                while let Some((writes, reply)) = rx.blocking_recv() {
                    if let Some(limit) = &hooks.page_limit {
                        health.apply_limit(&mut store, limit);
                    }
                    let began = Instant::now();
                    let date = pgn_date(now_ms());
                    let result = store.write_batch_report(&writes, Some(&date));
                    let metrics = hooks.metrics.as_deref();
                    if let Some(m) = metrics {
                        m.commit(began.elapsed(), result.is_ok());
                    }
                    match &result {
                        Err(e) => {
                            health.failed(e);
                            if let Some(m) = metrics {
                                m.store_refused(e.is_full());
                            }
                        }
                        Ok(report) => {
                            if health.committed()
                                && let Some(m) = metrics
                            {
                                m.store_ok();
                            }
                            if !report.touched.is_empty()
                                && let Some(changes) = &hooks.changes
                            {
                                changes.send_modify(|n| *n = n.wrapping_add(1));
                            }
                        }
                    }
                    // The board may have gone; nothing to tell then.
                    let _ignored_if_board_gone = reply.send((result, writes));
                }
                store
            })?;
        Ok((StoreWriter { tx }, handle))
    }

    /// Writes a batch in one transaction and hands it back once it is durable; on failure, the
    /// batch comes back with the error (unless the writer has stopped with it).
    pub async fn write(&self, writes: Vec<Write>) -> Result<Vec<Write>, Refused> {
        self.write_games(writes).await.map(|(writes, _)| writes)
    }

    /// [`StoreWriter::write`], with what the batch did: the games it touched (in first-touch
    /// order), the closed games it found.
    pub async fn write_games(
        &self,
        writes: Vec<Write>,
    ) -> Result<(Vec<Write>, WriteReport), Refused> {
        let (reply, done) = oneshot::channel();
        if let Err(mpsc::error::SendError((writes, _))) = self.tx.send((writes, reply)).await {
            return Err((WriteError::WriterGone, Some(writes)));
        }
        match done.await {
            Ok((Ok(report), writes)) => Ok((writes, report)),
            Ok((Err(e), writes)) => Err((e.into(), Some(writes))),
            Err(_) => Err((WriteError::WriterGone, None)),
        }
    }
}
