//! The one store writer: a thread owning the SQLite connection that records every board.
//!
//! Flow: boards send batches through a [`StoreWriter`] handle; the thread writes each batch in
//! one transaction, dates new games, times the commit into the [`Metrics`], bumps the change
//! signal when the batch touched games, and hands the batch back once it is durable (or with the
//! error, for the board to retry).

use std::{sync::Arc, time::Instant};

use tokio::sync::{mpsc, oneshot, watch};
use tracing::error;

use super::pgn_date;
use crate::{
    device::serial::now_ms,
    metrics::Metrics,
    store::{GameId, Store, StoreError, Write},
};

/// What the writer says of a batch, handing the batch back (to announce it, or to retry it).
type WriteReply = (Result<Vec<GameId>, StoreError>, Vec<Write>);

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

/// What the writer tells besides the board: the daemon's counters and the change signal.
#[derive(Clone, Default)]
pub struct WriterHooks {
    pub metrics: Option<Arc<Metrics>>,
    /// Bumped after every committed batch that touched a game.
    pub changes: Option<Arc<watch::Sender<u64>>>,
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
                let mut dated: std::collections::HashSet<GameId> = Default::default();
                while let Some((writes, reply)) = rx.blocking_recv() {
                    let began = Instant::now();
                    let result = store.write_batch(&writes).and_then(|games| {
                        for &g in &games {
                            if dated.insert(g) {
                                store.set_game_date(g, &pgn_date(now_ms()))?;
                            }
                        }
                        Ok(games)
                    });
                    if let Some(m) = &hooks.metrics {
                        m.commit(began.elapsed(), result.is_ok());
                    }
                    match &result {
                        Err(e) => error!(cause = %e, "store write failed"),
                        Ok(games) if !games.is_empty() => {
                            if let Some(changes) = &hooks.changes {
                                changes.send_modify(|n| *n = n.wrapping_add(1));
                            }
                        }
                        Ok(_) => {}
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

    /// [`StoreWriter::write`], with the games the batch touched (in first-touch order).
    pub async fn write_games(
        &self,
        writes: Vec<Write>,
    ) -> Result<(Vec<Write>, Vec<GameId>), Refused> {
        let (reply, done) = oneshot::channel();
        if let Err(mpsc::error::SendError((writes, _))) = self.tx.send((writes, reply)).await {
            return Err((WriteError::WriterGone, Some(writes)));
        }
        match done.await {
            Ok((Ok(games), writes)) => Ok((writes, games)),
            Ok((Err(e), writes)) => Err((e.into(), Some(writes))),
            Err(_) => Err((WriteError::WriterGone, None)),
        }
    }
}
