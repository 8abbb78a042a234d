//! `boardscribe cluster republish`: a replaced hall's old database, published again under a new
//! hall name (issue 32).
//!
//! Flow: [`republish`] reads the old database read-only ([`Store::hall_snapshot`]: its origin,
//! its last record, its whole record as records 1, 2, 3, …), connects with the `[cluster]`
//! settings of the file it is given (the event node's or a hall's), learns what the new name's
//! stream already holds of this copy (a run stopped half-way goes on after it; a stream of
//! another database is refused) and sends the rest in batches, each message with its id and the
//! stream sequence it must follow, as a hall does ([`super::hall`]). It returns once the broker
//! acknowledged every record. The event node maps the copy onto the rows it already holds of
//! that database ([`crate::store::replica`]): no game twice, the moves it never got added.

use std::{path::PathBuf, time::Duration};

use async_nats::jetstream;

use super::{
    ClusterError,
    hall::{PublishFailure, Synced, message_of, stream_last},
    records_subject, stream_name,
};
use crate::{
    config::{ClusterConfig, Config, ConfigOverrides, is_hall_name},
    device::serial::now_ms,
    store::{HallIdentity, HallSnapshot, Store, StoreError, hall_record::RecordKind},
};

/// The most records sent before their acknowledgements are awaited.
const BATCH: usize = 256;

/// How long the broker may take to be reached.
const CONNECT_WITHIN: Duration = Duration::from_secs(30);

/// `boardscribe cluster republish`: what it is told.
#[derive(Clone, Debug)]
pub struct RepublishOptions {
    /// The old hall database (read, never written).
    pub db: PathBuf,
    /// The new hall name its records go under.
    pub hall: String,
    /// A file with the `[cluster]` table (the event node's or a hall's).
    pub config: PathBuf,
}

/// What was published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Republished {
    /// The copy's records already in the stream before this run (a run stopped half-way).
    pub already: u64,
    /// Records sent and acknowledged by this run.
    pub sent: u64,
}

/// Why the old database could not be published again.
#[derive(Debug, thiserror::Error)]
pub enum RepublishError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("{0:?} cannot name a hall: 1 to 32 letters, digits, `_` or `-`")]
    HallName(String),
    #[error("{db}: not a hall's database (it never joined a hall): nothing to publish")]
    NotAHall { db: String },
    #[error(
        "{db} is hall {hall}'s own database: publish it again under a new hall name (e.g. \
         {hall}2, added to the event node's halls); under {hall} the event node takes only \
         what follows what it holds"
    )]
    SameName { db: String, hall: String },
    #[error("{file}: no [cluster] table with the NATS servers' url")]
    NoCluster { file: String },
    #[error("the NATS servers ({urls}) were not reached within {secs} s: {why}")]
    Unreachable {
        urls: String,
        secs: u64,
        why: String,
    },
    #[error(
        "stream {stream} holds {held} records of database {origin}, more than this copy's \
         {copy}: it holds another copy of the database; publish this one under another name"
    )]
    LongerStream {
        stream: String,
        origin: String,
        held: u64,
        copy: u64,
    },
    #[error("stream {stream}: {why}")]
    Publish { stream: String, why: String },
}

/// `boardscribe cluster republish`: publishes the old database, prints what it did.
pub fn republish(options: RepublishOptions) -> anyhow::Result<()> {
    if !is_hall_name(&options.hall) {
        return Err(RepublishError::HallName(options.hall).into());
    }
    let config = Config::load(Some(&options.config), ConfigOverrides::default())?;
    let Some(cluster) = config.cluster.clone() else {
        return Err(RepublishError::NoCluster {
            file: options.config.display().to_string(),
        }
        .into());
    };
    let db = options.db.display().to_string();
    let store = Store::open_hall_copy(&options.db)?;
    let snapshot = store
        .hall_snapshot(now_ms())?
        .ok_or_else(|| RepublishError::NotAHall { db: db.clone() })?;
    drop(store);
    if snapshot.identity.hall == options.hall {
        return Err(RepublishError::SameName {
            db,
            hall: options.hall,
        }
        .into());
    }
    let rt = tokio::runtime::Runtime::new()?;
    let done = rt.block_on(publish(&cluster, &options.hall, &snapshot))?;
    let old = &snapshot.identity;
    println!(
        "republished hall {}'s database {db} (origin {}, its records up to {}) as hall {}: {} \
         records ({} boards, {} games, {} events, {} moves, {} links) in stream {}, {} sent \
         now{}, every one acknowledged",
        old.hall,
        old.origin,
        snapshot.last_seq,
        options.hall,
        snapshot.records.len(),
        snapshot.count(RecordKind::Board),
        snapshot.count(RecordKind::Game),
        snapshot.count(RecordKind::Event),
        snapshot.count(RecordKind::Move),
        snapshot.count(RecordKind::Link),
        stream_name(&options.hall),
        done.sent,
        if done.already > 0 {
            format!(" ({} were there from an earlier run)", done.already)
        } else {
            String::new()
        },
    );
    if !cluster.halls.is_empty() && !cluster.halls.contains(&options.hall) {
        println!(
            "{}: the event node follows {}, not {}: add \"{}\" to its halls and restart it",
            options.config.display(),
            cluster.halls.join(", "),
            options.hall,
            options.hall
        );
    }
    println!(
        "the event node maps them onto hall {}'s boards and games: its boards keep their names \
         ({}/...) and numbers",
        old.hall, old.hall
    );
    Ok(())
}

/// Sends `snapshot` to hall `hall`'s stream, after what the stream already holds of it.
pub async fn publish(
    cluster: &ClusterConfig,
    hall: &str,
    snapshot: &HallSnapshot,
) -> Result<Republished, RepublishError> {
    let connection = super::connect(cluster, &format!("boardscribe republish {hall}")).await?;
    let client = connection.client;
    let deadline = tokio::time::Instant::now() + CONNECT_WITHIN;
    while client.connection_state() != async_nats::connection::State::Connected {
        if tokio::time::Instant::now() >= deadline {
            return Err(RepublishError::Unreachable {
                urls: cluster.urls.join(","),
                secs: CONNECT_WITHIN.as_secs(),
                why: connection
                    .failure
                    .borrow()
                    .as_ref()
                    .map_or_else(|| "no answer".to_owned(), ToString::to_string),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let js = jetstream::new(client.clone());
    // The copy goes under the new name with the old database's origin: the event node knows
    // whose rows they are.
    let identity = HallIdentity {
        hall: hall.to_owned(),
        origin: snapshot.identity.origin.clone(),
    };
    let stream = stream_name(hall);
    let failed = |e: PublishFailure| RepublishError::Publish {
        stream: stream.clone(),
        why: e.to_string(),
    };
    let mut last: Synced = stream_last(&js, &identity, cluster.replicas)
        .await
        .map_err(failed)?;
    let copy = snapshot.records.len() as u64;
    if last.seq > copy {
        return Err(RepublishError::LongerStream {
            stream,
            origin: identity.origin,
            held: last.seq,
            copy,
        });
    }
    let already = last.seq;
    let subject = records_subject(hall);
    while let Some(batch) = snapshot
        .records
        .get(last.seq as usize..)
        .filter(|rest| !rest.is_empty())
    {
        let batch = &batch[..batch.len().min(BATCH)];
        let mut acks = Vec::with_capacity(batch.len());
        for (i, record) in batch.iter().enumerate() {
            let after = last.stream_seq + i as u64;
            let message = message_of(
                &identity,
                record,
                (after > 0).then_some(after),
                Some(snapshot.last_seq),
            )?;
            let ack = js
                .send_publish(subject.clone(), message)
                .await
                .map_err(|e| RepublishError::Publish {
                    stream: stream.clone(),
                    why: format!("record {}: {e}", record.seq),
                })?;
            acks.push((record.seq, ack));
        }
        for (seq, ack) in acks {
            let ack = ack.await.map_err(|e| RepublishError::Publish {
                stream: stream.clone(),
                why: format!("record {seq} not acknowledged: {e}"),
            })?;
            last = Synced {
                seq,
                stream_seq: ack.sequence,
            };
        }
    }
    Ok(Republished {
        already,
        sent: last.seq - already,
    })
}
