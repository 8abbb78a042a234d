//! Broadcasting: what spectators are given, and how it reaches them. Every public output reads
//! the record through one function ([`public::view`]: each game as it stood the delay ago),
//! writes it through one PGN entry point ([`write_pgn`](crate::export::pgn::write_pgn)) in the
//! public style ([`Publication`](crate::export::publish::Publication)), and the outputs pushed
//! rather than asked for (the LiveChess-style [`folder`], the [`lichess`] push, the delayed
//! hub spectators follow, `relay::delayed`) all turn in one loop, [`run`].
//!
//! Flow: an [`Output`] says what one turn reads (on a blocking thread, through a read-only
//! connection of its own: [`Reader`]) and how it publishes what it read. [`run`] takes turns
//! when [`Wake`] says (after each change to the store and on a tick, or on a tick until told to
//! stop), reads, publishes, and takes another turn at once when the publishing asks to
//! ([`Turn::Again`]: a push that failed and waited out its backoff). A read that fails is
//! logged once, and again once it reads anew; nothing a turn does can stop recording.

pub mod folder;
pub mod lichess;
pub mod public;

use std::{
    fmt,
    future::Future,
    path::{Path, PathBuf},
    sync::Mutex,
    time::Duration,
};

use tokio::sync::watch;

use crate::{
    Millis,
    device::serial::now_ms,
    store::{Store, StoreError},
};

/// One pushed output, turned by [`run`].
pub trait Output: Send + 'static {
    /// What one turn read and publishes.
    type Body: Send + 'static;
    /// Why a read failed.
    type Error: fmt::Display + Send + 'static;

    /// The output's name in the log.
    fn name(&self) -> &'static str;

    /// What to publish at `now_ms` (wall-clock ms); `None`: nothing this turn. Runs on a
    /// blocking thread.
    fn read(&mut self, now_ms: Millis) -> Result<Option<Self::Body>, Self::Error>;

    /// Publishes `body`.
    fn publish(&mut self, body: Self::Body) -> impl Future<Output = Turn> + Send;
}

/// What a published turn asks for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Wait for the next wake.
    Done,
    /// Read again at once (a push waited out its backoff: something may have changed meanwhile).
    Again,
}

/// When an output takes its turns.
pub enum Wake {
    /// Now, then after each change to the store (`changes`, bumped after every durable write)
    /// and every `tick` if given (a delayed broadcast's window slides with no change), until
    /// the change signal's sender is gone.
    Changes {
        changes: watch::Receiver<u64>,
        tick: Option<Duration>,
    },
    /// Now, then every `every`, until `stop` turns true (or its sender is gone).
    Every {
        every: Duration,
        stop: watch::Receiver<bool>,
    },
}

impl Wake {
    /// Waits for the next turn; false once the output is to stop.
    async fn next(&mut self) -> bool {
        match self {
            Wake::Changes {
                changes,
                tick: None,
            } => changes.changed().await.is_ok(),
            Wake::Changes {
                changes,
                tick: Some(t),
            } => tokio::select! {
                changed = changes.changed() => changed.is_ok(),
                _ = tokio::time::sleep(*t) => changes.has_changed().is_ok(),
            },
            Wake::Every { every, stop } => {
                let stopped = tokio::select! {
                    _ = tokio::time::sleep(*every) => false,
                    _ = stop.wait_for(|s| *s) => true,
                };
                !stopped && !*stop.borrow()
            }
        }
    }

    /// Marks what woke this turn as seen: changes meanwhile make one more turn.
    fn seen(&mut self) {
        if let Wake::Changes { changes, .. } = self {
            changes.borrow_and_update();
        }
    }

    /// Whether the output is still to run (its signal is there and has not said stop).
    fn running(&self) -> bool {
        match self {
            Wake::Changes { changes, .. } => changes.has_changed().is_ok(),
            Wake::Every { stop, .. } => !*stop.borrow() && stop.has_changed().is_ok(),
        }
    }
}

/// Turns `output` as `wake` says until it is to stop: each turn reads on a blocking thread,
/// then publishes; see the module.
pub async fn run<O: Output>(mut output: O, mut wake: Wake) {
    let name = output.name();
    let mut failing = false;
    // The first turn is at once; so is one the publishing asked for.
    let mut at_once = true;
    loop {
        if !std::mem::replace(&mut at_once, false) && !wake.next().await {
            return;
        }
        wake.seen();
        let now = now_ms();
        let read = tokio::task::spawn_blocking(move || {
            let body = output.read(now);
            (output, body)
        })
        .await;
        let body = match read {
            Ok((back, body)) => {
                output = back;
                body
            }
            Err(e) => {
                // The output went with its thread: nothing is left to turn.
                tracing::error!(output = name, cause = %e, "the output's reader failed; it stops");
                return;
            }
        };
        match body {
            Ok(None) => {
                recovered(name, &mut failing);
            }
            Ok(Some(body)) => {
                recovered(name, &mut failing);
                if output.publish(body).await == Turn::Again {
                    if !wake.running() {
                        tracing::warn!(
                            output = name,
                            "stopping before the last turn was published"
                        );
                        return;
                    }
                    at_once = true;
                }
            }
            Err(e) => {
                if !std::mem::replace(&mut failing, true) {
                    tracing::error!(output = name, cause = %e,
                        "the output could not read what to publish; it tries again at each turn");
                }
            }
        }
    }
}

fn recovered(name: &str, failing: &mut bool) {
    if std::mem::replace(failing, false) {
        tracing::info!(output = name, "the output reads again");
    }
}

/// A read-only connection to the database at `db` of an output's own, opened when first used
/// and again after a failure (the daemon may be creating the database; a damaged read drops it).
pub struct Reader {
    db: PathBuf,
    store: Mutex<Option<Store>>,
}

impl Reader {
    pub fn new(db: &Path) -> Reader {
        Reader {
            db: db.to_owned(),
            store: Mutex::new(None),
        }
    }

    /// Runs `f` on the connection (blocking).
    pub fn with<T>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut guard = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let store = match guard.take() {
            Some(store) => store,
            None => Store::open_read_only(&self.db)?,
        };
        let result = f(&store);
        if result.is_ok() {
            *guard = Some(store);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    };

    use tokio::sync::mpsc;

    use super::*;

    /// An output whose n-th read is `n`, published to `sent`; the first publish asks for
    /// another turn at once.
    struct Counting {
        reads: Arc<AtomicU64>,
        sent: mpsc::UnboundedSender<u64>,
    }

    impl Output for Counting {
        type Body = u64;
        type Error = String;

        fn name(&self) -> &'static str {
            "counting"
        }

        fn read(&mut self, _now_ms: Millis) -> Result<Option<u64>, String> {
            Ok(Some(self.reads.fetch_add(1, Ordering::SeqCst) + 1))
        }

        async fn publish(&mut self, n: u64) -> Turn {
            let _ = self.sent.send(n);
            if n == 1 { Turn::Again } else { Turn::Done }
        }
    }

    async fn next(rx: &mut mpsc::UnboundedReceiver<u64>) -> Option<u64> {
        tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .ok()
            .flatten()
    }

    #[tokio::test]
    async fn turns_at_once_again_when_asked_after_each_change_and_stop_with_the_signal() {
        let (changes, rx_changes) = watch::channel(0u64);
        let (sent, mut rx) = mpsc::unbounded_channel();
        let reads = Arc::new(AtomicU64::new(0));
        let output = Counting {
            reads: reads.clone(),
            sent,
        };
        let task = tokio::spawn(run(
            output,
            Wake::Changes {
                changes: rx_changes,
                tick: None,
            },
        ));
        // At once, then again at once as the first publish asked.
        assert_eq!(next(&mut rx).await, Some(1));
        assert_eq!(next(&mut rx).await, Some(2));
        // Nothing more until the store changes.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(reads.load(Ordering::SeqCst), 2);
        changes.send_modify(|n| *n += 1);
        assert_eq!(next(&mut rx).await, Some(3));
        drop(changes);
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the output stops once the change signal is gone")
            .unwrap();
        assert_eq!(reads.load(Ordering::SeqCst), 3);
    }

    /// Reads how many games the database holds, through a [`Reader`].
    struct Games {
        reader: Reader,
        sent: mpsc::UnboundedSender<u64>,
    }

    impl Output for Games {
        type Body = u64;
        type Error = StoreError;

        fn name(&self) -> &'static str {
            "games"
        }

        fn read(&mut self, _now_ms: Millis) -> Result<Option<u64>, StoreError> {
            self.reader.with(|s| Ok(Some(s.games()?.len() as u64)))
        }

        async fn publish(&mut self, n: u64) -> Turn {
            let _ = self.sent.send(n);
            Turn::Done
        }
    }

    #[tokio::test]
    async fn a_read_that_fails_is_tried_again_until_the_database_is_there_and_stop_ends_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("later.db");
        let (stop_tx, stop) = watch::channel(false);
        let (sent, mut rx) = mpsc::unbounded_channel();
        let output = Games {
            reader: Reader::new(&path),
            sent,
        };
        let task = tokio::spawn(run(
            output,
            Wake::Every {
                every: Duration::from_millis(20),
                stop,
            },
        ));
        // No database: the turns fail and nothing is published.
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(rx.try_recv().is_err());
        // The daemon creates it: the next turn reads it.
        drop(Store::open(&path).unwrap());
        assert_eq!(next(&mut rx).await, Some(0));
        stop_tx.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("the output stops when told")
            .unwrap();
    }
}
