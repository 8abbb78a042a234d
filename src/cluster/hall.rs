//! A hall's publisher: its outbox, in order, to the hall's JetStream stream.
//!
//! Flow: [`publish`] runs beside the store writer. While connected, it first learns what the
//! stream already holds of this hall (its last message: whose, which seq, where in the stream),
//! lets the outbox drop what is there, then sends the outbox's records in batches, each message
//! with its id (`origin-seq`, which the broker de-duplicates) and the stream sequence it must
//! follow (which the broker checks against the stream's last: a record can never land after a
//! gap or out of order, and the check is the stream's own, kept across the broker's restarts).
//! What the broker acknowledged leaves the outbox. On any failure it learns the stream's state
//! again and goes on from there. Recording never waits for it: the writer commits to SQLite
//! and the outbox keeps what the broker has not taken, for as long as it takes. It ends when
//! the writer is gone (the change signal closes), after one last try at what remains. Every
//! [`STATUS_EVERY`] it tells the event node how the hall stands (its outbox, why it cannot
//! publish: [`super::health::HallStatus`]).

use std::{
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use async_nats::jetstream::{self, context::PublishErrorKind, message::PublishMessage};
use serde_json::value::RawValue;
use tokio::sync::watch;
use tracing::{info, warn};

use super::{
    ClusterError, ConnectFailure, hall_stream,
    health::{HallStatus, STATUS_EVERY, status_subject},
    message_id, parse_message_id, records_subject,
};
use crate::{
    device::serial::now_ms,
    metrics::Metrics,
    store::{HallIdentity, OutboxRecord, OutboxState, Store, StoreError, hall_record::Envelope},
};

/// The most records sent before their acknowledgements are awaited.
const BATCH: usize = 256;

/// How often the outbox is looked at when no change is signalled (links and decisions do not
/// always signal), and the figures refreshed.
const POLL: Duration = Duration::from_millis(200);

/// How long the last try at the outbox may take once the writer is gone.
const LAST_TRY: Duration = Duration::from_secs(5);

/// Why a batch stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PublishFailure {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("the broker refused record {seq}: {why}")]
    Refused { seq: u64, why: String },
    #[error(
        "the stream's last record is not this hall's (origin {found}, this database is \
         {ours}): another database publishes as this hall; give each hall its own name"
    )]
    OtherOrigin { found: String, ours: String },
    #[error("reading the stream's last record: {0}")]
    LastRecord(String),
    #[error(
        "the outbox begins at record {first} but the stream ends at {last}: records between \
         them were removed from the stream"
    )]
    Gap { first: u64, last: u64 },
}

/// The outbox, through a connection of the publisher's own.
struct Outbox {
    store: Arc<Mutex<Store>>,
}

impl Outbox {
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let store = self.store.clone();
        tokio::task::spawn_blocking(move || {
            let mut s = store.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut s)
        })
        .await
        .map_err(|e| StoreError::Corrupt(format!("the outbox reader failed: {e}")))?
    }
}

/// Publishes hall `identity`'s outbox from the database at `db` through `client` until
/// `changes` closes (the store writer is gone), then tries once more for [`LAST_TRY`];
/// `failure` (why the client cannot connect) goes to the metrics.
pub async fn publish(
    client: async_nats::Client,
    identity: HallIdentity,
    db: PathBuf,
    replicas: usize,
    metrics: Arc<Metrics>,
    mut changes: watch::Receiver<u64>,
    failure: watch::Receiver<Option<ConnectFailure>>,
) {
    let store = loop {
        match Store::open(&db) {
            Ok(s) => break s,
            Err(e) => {
                warn!(cause = %e, "the hall's publisher cannot open the store; trying again");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    };
    let outbox = Outbox {
        store: Arc::new(Mutex::new(store)),
    };
    let js = jetstream::new(client.clone());
    let hall = identity.hall.clone();
    // What the stream is known to hold of this hall: the last seq, 0 for nothing; `None` until
    // learnt (at start, after a failure).
    let mut synced: Option<Synced> = None;
    let mut said: Option<String> = None;
    let mut stalled = false;
    let mut status_sent: Option<tokio::time::Instant> = None;
    let mut writer_gone = false;
    let mut deadline: Option<tokio::time::Instant> = None;
    loop {
        let state = refresh(&outbox, &metrics, &hall, &client, &failure).await;
        if status_sent.is_none_or(|at| at.elapsed() >= STATUS_EVERY) {
            if let Some(state) = state {
                let status = HallStatus {
                    origin: identity.origin.clone(),
                    at_ms: now_ms(),
                    outbox_depth: state.depth,
                    outbox_oldest_ms: state.oldest_at_ms,
                    failure: said.clone(),
                    stalled,
                };
                send_status(&client, &hall, &status).await;
            }
            status_sent = Some(tokio::time::Instant::now());
        }
        let connected = client.connection_state() == async_nats::connection::State::Connected;
        let step = if connected {
            step(&js, &outbox, &identity, replicas, &mut synced, &metrics).await
        } else {
            synced = None;
            Ok(0)
        };
        let sent = match step {
            Ok(n) => {
                if let Some(why) = said.take() {
                    info!(hall, was = %why, "publishing again");
                    metrics.hall(&hall, |g| g.stalled = None);
                }
                stalled = false;
                n
            }
            Err(e) => {
                synced = None;
                let why = e.to_string();
                if said.as_ref() != Some(&why) {
                    warn!(hall, cause = %why, "the hall's records wait in its outbox");
                }
                stalled = matches!(
                    e,
                    PublishFailure::OtherOrigin { .. } | PublishFailure::Gap { .. }
                );
                if stalled {
                    metrics.hall(&hall, |g| g.stalled = Some(why.clone()));
                }
                said = Some(why);
                0
            }
        };
        if writer_gone {
            let empty = outbox
                .run(|s| s.outbox_state())
                .await
                .map(|st| st.depth == 0)
                .unwrap_or(true);
            let late = deadline.is_some_and(|d| tokio::time::Instant::now() >= d);
            if empty || late {
                if !empty {
                    info!(
                        hall,
                        "stopping with records in the outbox: they go at the next start"
                    );
                }
                return;
            }
        }
        if sent > 0 {
            continue;
        }
        let pause = if said.is_some() {
            Duration::from_millis(500)
        } else {
            POLL
        };
        tokio::select! {
            changed = changes.changed(), if !writer_gone => {
                if changed.is_err() {
                    writer_gone = true;
                    deadline = Some(tokio::time::Instant::now() + LAST_TRY);
                }
            }
            _ = tokio::time::sleep(pause) => {}
        }
    }
}

/// The outbox's figures, and why the servers refuse the hall if they do; the outbox's state.
async fn refresh(
    outbox: &Outbox,
    metrics: &Metrics,
    hall: &str,
    client: &async_nats::Client,
    failure: &watch::Receiver<Option<ConnectFailure>>,
) -> Option<OutboxState> {
    let connected = client.connection_state() == async_nats::connection::State::Connected;
    let refused = failure
        .borrow()
        .as_ref()
        .filter(|f| f.is_refusal())
        .map(|f| (f.cause().to_owned(), f.to_string()));
    metrics.hall(hall, |g| g.refused = refused);
    let state = outbox.run(|s| s.outbox_state()).await.ok()?;
    let now = now_ms();
    metrics.hall(hall, |g| {
        g.outbox_depth = Some(state.depth);
        g.outbox_oldest_ms = Some(state.oldest_at_ms.map_or(0, |t| now.saturating_sub(t)));
        g.connected = Some(connected);
    });
    Some(state)
}

/// Tells the event node how the hall stands ([`super::health`]); a status that cannot go
/// (the broker away) is simply not sent: the event node counts the hall silent.
async fn send_status(client: &async_nats::Client, hall: &str, status: &HallStatus) {
    if client.connection_state() != async_nats::connection::State::Connected {
        return;
    }
    let Ok(payload) = serde_json::to_vec(status) else {
        return;
    };
    if let Err(e) = client.publish(status_subject(hall), payload.into()).await {
        tracing::debug!(cause = %e, "the hall's status was not sent");
    }
}

/// What the stream is known to hold of this hall: its last record's seq and stream sequence
/// (both 0: nothing).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Synced {
    pub(crate) seq: u64,
    pub(crate) stream_seq: u64,
}

/// One round: learn the stream's state if needed, send one batch; how many records went.
async fn step(
    js: &jetstream::Context,
    outbox: &Outbox,
    identity: &HallIdentity,
    replicas: usize,
    synced: &mut Option<Synced>,
    metrics: &Metrics,
) -> Result<usize, PublishFailure> {
    let last = match *synced {
        Some(last) => last,
        None => {
            let last = stream_last(js, identity, replicas).await?;
            if last.seq > 0 {
                outbox.run(move |s| s.outbox_release(last.seq)).await?;
            }
            *synced = Some(last);
            last
        }
    };
    let batch = outbox.run(move |s| s.outbox_after(last.seq, BATCH)).await?;
    let Some(first) = batch.first() else {
        return Ok(0);
    };
    if last.seq > 0 && first.seq != last.seq + 1 {
        return Err(PublishFailure::Gap {
            first: first.seq,
            last: last.seq,
        });
    }
    let subject = records_subject(&identity.hall);
    let mut acks = Vec::with_capacity(batch.len());
    for (i, record) in batch.iter().enumerate() {
        // The stream is the hall's alone: record i of the batch must land right after stream
        // message `last + i` (kept in the stream itself, so the check holds across the
        // broker's restarts); the first record of an empty stream has nothing to follow.
        let after = last.stream_seq + i as u64;
        let message = message(identity, record, (after > 0).then_some(after))?;
        let ack = js
            .send_publish(subject.clone(), message)
            .await
            .map_err(|e| PublishFailure::Refused {
                seq: record.seq,
                why: e.to_string(),
            })?;
        acks.push((record.seq, ack));
    }
    let mut done = None;
    let mut failure = None;
    for (seq, ack) in acks {
        match ack.await {
            Ok(ack) => {
                done = Some(Synced {
                    seq,
                    stream_seq: ack.sequence,
                })
            }
            Err(e) => {
                let why = if e.kind() == PublishErrorKind::WrongLastSequence {
                    "the stream's last record is not the one before it".to_owned()
                } else {
                    e.to_string()
                };
                failure = Some(PublishFailure::Refused { seq, why });
                break;
            }
        }
    }
    let sent = match done {
        Some(now) => {
            outbox.run(move |s| s.outbox_release(now.seq)).await?;
            *synced = Some(now);
            (now.seq - last.seq) as usize
        }
        None => 0,
    };
    metrics.hall(&identity.hall, |g| g.published += sent as u64);
    match failure {
        Some(f) => Err(f),
        None => Ok(sent),
    }
}

/// The record as a message: its envelope, its id and the stream message it must follow.
fn message(
    identity: &HallIdentity,
    record: &OutboxRecord,
    after: Option<u64>,
) -> Result<PublishMessage, PublishFailure> {
    message_of(identity, record, after, None).map_err(PublishFailure::Store)
}

/// [`message`], also for a republished copy (`snapshot_of`: the database's last record).
pub(crate) fn message_of(
    identity: &HallIdentity,
    record: &OutboxRecord,
    after: Option<u64>,
    snapshot_of: Option<u64>,
) -> Result<PublishMessage, StoreError> {
    let row = RawValue::from_string(record.row.clone())?;
    let envelope = Envelope {
        origin: identity.origin.clone(),
        seq: record.seq,
        at_ms: record.at_ms,
        kind: record.kind,
        row,
        snapshot_of,
    };
    let payload = serde_json::to_vec(&envelope)?;
    let mut message = PublishMessage::build()
        .payload(payload.into())
        .message_id(message_id(&identity.origin, record.seq));
    if let Some(after) = after {
        message = message.expected_last_sequence(after);
    }
    Ok(message)
}

/// This hall's last record in its stream (0, 0: the stream is empty), creating the stream if
/// needed.
pub(crate) async fn stream_last(
    js: &jetstream::Context,
    identity: &HallIdentity,
    replicas: usize,
) -> Result<Synced, PublishFailure> {
    let stream = hall_stream(js, &identity.hall, replicas).await?;
    let last = match stream
        .get_last_raw_message_by_subject(&records_subject(&identity.hall))
        .await
    {
        Ok(m) => m,
        Err(e)
            if e.kind()
                == async_nats::jetstream::stream::LastRawMessageErrorKind::NoMessageFound =>
        {
            return Ok(Synced {
                seq: 0,
                stream_seq: 0,
            });
        }
        Err(e) => return Err(PublishFailure::LastRecord(e.to_string())),
    };
    let id = last
        .headers
        .get(async_nats::header::NATS_MESSAGE_ID)
        .map(|v| v.as_str().to_owned())
        .unwrap_or_default();
    match parse_message_id(&id) {
        Some((origin, seq)) if origin == identity.origin => Ok(Synced {
            seq,
            stream_seq: last.sequence,
        }),
        _ => Err(PublishFailure::OtherOrigin {
            found: id,
            ours: identity.origin.clone(),
        }),
    }
}
