//! One event across several hall PCs, through NATS JetStream (issue 18).
//!
//! Flow: every hall (`run` with `[cluster] hall`) keeps each record it commits in its outbox
//! ([`crate::store::HallIdentity`], the schema's triggers) and [`hall`] publishes it to the
//! hall's own stream (`BOARDSCRIBE_<hall>`, subject `boardscribe.records.<hall>`), each message
//! with an id JetStream de-duplicates and the stream sequence it must follow, so the stream holds
//! the hall's records once each, in the hall's order, whatever the restarts. The event node
//! (`boardscribe event`, [`event`]) follows each hall's stream through a durable consumer into
//! its own database ([`crate::store::replica`]) and serves the relay from it. This module holds
//! what both sides share: the names, the connection (credentials, TLS, reconnecting forever,
//! why it cannot connect: [`security`]) and the stream's settings. [`republish`] publishes a
//! replaced hall's old database again under a new hall name (`boardscribe cluster republish`).

pub mod commands;
pub mod event;
pub mod hall;
pub mod health;
pub mod republish;
pub mod security;

use std::{sync::Arc, time::Duration};

use async_nats::{ConnectOptions, ServerAddr, jetstream};
use tokio::sync::watch;

pub use security::ConnectFailure;

use crate::{config::ClusterConfig, store::Store};

/// How long the broker keeps message ids to drop a duplicate: longer than a hall's restart
/// takes, so a record published again after one is dropped by the broker itself (after that,
/// the hall's resync and the event node's positions drop it).
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(15 * 60);

/// Why the cluster could not be reached or set up.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("NATS server address {url:?}: {why}")]
    Address { url: String, why: String },
    #[error("connecting to NATS: {0}")]
    Connect(#[from] async_nats::ConnectError),
    #[error("JetStream stream {stream}: {why}")]
    Stream { stream: String, why: String },
}

/// The event node's store behind its lock (usable after a panic elsewhere).
pub(crate) fn lock(store: &std::sync::Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(|p| p.into_inner())
}

/// The stream a hall publishes to.
pub fn stream_name(hall: &str) -> String {
    format!("BOARDSCRIBE_{hall}")
}

/// The subject of a hall's records.
pub fn records_subject(hall: &str) -> String {
    format!("boardscribe.records.{hall}")
}

/// The id JetStream de-duplicates a record by: the hall database's origin and the record's seq.
pub fn message_id(origin: &str, seq: u64) -> String {
    format!("{origin}-{seq}")
}

/// A message id read back: origin and seq.
pub fn parse_message_id(id: &str) -> Option<(&str, u64)> {
    let (origin, seq) = id.rsplit_once('-')?;
    Some((origin, seq.parse().ok()?))
}

/// A new database origin: 16 random hex digits.
pub fn new_origin() -> String {
    format!("{:016x}", rand::random::<u64>())
}

/// A client of the event's NATS servers and why it cannot connect, if it cannot.
pub struct Connection {
    pub client: async_nats::Client,
    /// Why the last attempts failed (the servers refuse a file, or are out of reach); `None`
    /// while connected or not yet known.
    pub failure: watch::Receiver<Option<ConnectFailure>>,
}

/// A client of the event's NATS servers, named `name` (shown by the servers' monitoring). It
/// comes back at once and connects in the background, reconnecting forever: a hall records
/// whether the broker is there or not. The TLS and credentials files are checked first (each
/// problem logged, naming its file), and while it cannot connect [`security::watch`] finds out
/// why.
pub async fn connect(cfg: &ClusterConfig, name: &str) -> Result<Connection, ClusterError> {
    let addrs = addresses(cfg)?;
    for problem in security::check_files(cfg, std::time::SystemTime::now()) {
        if problem.is_warning() {
            tracing::warn!(%problem, "NATS");
        } else {
            tracing::error!(
                %problem,
                "NATS: the connection cannot work until this file is fixed (then restart); \
                 records wait in the outbox"
            );
        }
    }
    let (opts, creds_problem) = options(cfg).await;
    let state = Arc::new(security::LinkState::default());
    let (failure_tx, failure) = watch::channel(None);
    let failure_tx = Arc::new(failure_tx);
    let events = (state.clone(), failure_tx.clone());
    let opts = opts
        .name(name)
        .retry_on_initial_connect()
        .max_reconnects(None)
        .connection_timeout(Duration::from_secs(5))
        // Back within a second or two of the broker's return, never hammering it.
        .reconnect_delay_callback(|attempts| {
            Duration::from_millis((attempts as u64 * 250).clamp(100, 2000))
        })
        .event_callback(move |event| {
            let (state, failure) = events.clone();
            async move {
                match event {
                    async_nats::Event::Connected => {
                        state.connected(true);
                        failure.send_replace(None);
                        tracing::info!("NATS connected")
                    }
                    async_nats::Event::Disconnected => {
                        state.connected(false);
                        tracing::warn!("NATS disconnected; reconnecting")
                    }
                    // Each failed attempt: async_nats says only its kind; the watch finds out
                    // the cause and says it once.
                    async_nats::Event::ClientError(e) => {
                        tracing::debug!(cause = %e, "NATS connection attempt failed");
                        state.attempt_failed();
                    }
                    other => tracing::info!(event = %other, "NATS"),
                }
            }
        });
    let client = opts.connect(addrs.clone()).await?;
    tokio::spawn(security::watch(
        cfg.clone(),
        addrs,
        creds_problem,
        state,
        failure_tx,
    ));
    Ok(Connection { client, failure })
}

/// The servers' addresses, parsed.
fn addresses(cfg: &ClusterConfig) -> Result<Vec<ServerAddr>, ClusterError> {
    cfg.urls
        .iter()
        .map(|url| {
            url.parse()
                .map_err(|e: std::io::Error| ClusterError::Address {
                    url: url.clone(),
                    why: e.to_string(),
                })
        })
        .collect()
}

/// The options `cfg` gives every connection (credentials, TLS), and why the creds file could not
/// be loaded if it could not (then the connection goes without it, and is refused).
async fn options(cfg: &ClusterConfig) -> (ConnectOptions, Option<String>) {
    let mut opts = ConnectOptions::new();
    // A user and password given in a URL (`nats://hall-a:secret@host:4222`).
    let addrs = addresses(cfg).unwrap_or_default();
    if let Some(addr) = addrs.iter().find(|a| a.username().is_some()) {
        opts = opts.user_and_password(
            addr.username().unwrap_or_default().to_owned(),
            addr.password().unwrap_or_default().to_owned(),
        );
    }
    let mut creds_problem = None;
    if let Some(path) = &cfg.creds_file {
        match std::fs::read_to_string(path)
            .and_then(|text| ConnectOptions::new().credentials(&text).map(|_| text))
        {
            Ok(text) => match opts.credentials(&text) {
                Ok(o) => opts = o,
                Err(e) => {
                    creds_problem = Some(e.to_string());
                    opts = ConnectOptions::new();
                }
            },
            Err(e) => creds_problem = Some(e.to_string()),
        }
    }
    if let Some(ca) = &cfg.tls_ca_file {
        opts = opts.add_root_certificates(ca.clone()).require_tls(true);
    }
    if let (Some(cert), Some(key)) = (&cfg.tls_cert_file, &cfg.tls_key_file) {
        opts = opts.add_client_certificate(cert.clone(), key.clone());
    }
    if cfg.urls.iter().any(|u| u.starts_with("tls://")) {
        opts = opts.require_tls(true);
    }
    (opts, creds_problem)
}

/// The settings of a hall's stream: file storage, kept until the operator removes it, ids kept
/// [`DUPLICATE_WINDOW`], on `replicas` servers. Only settings NATS 2.9 knows.
pub fn stream_config(hall: &str, replicas: usize) -> jetstream::stream::Config {
    jetstream::stream::Config {
        name: stream_name(hall),
        subjects: vec![records_subject(hall)],
        storage: jetstream::stream::StorageType::File,
        retention: jetstream::stream::RetentionPolicy::Limits,
        duplicate_window: DUPLICATE_WINDOW,
        num_replicas: replicas,
        description: Some(format!("boardscribe: hall {hall}'s records")),
        ..Default::default()
    }
}

/// Hall `hall`'s stream, created if it is not there yet.
pub async fn hall_stream(
    js: &jetstream::Context,
    hall: &str,
    replicas: usize,
) -> Result<jetstream::stream::Stream, ClusterError> {
    js.get_or_create_stream(stream_config(hall, replicas))
        .await
        .map_err(|e| ClusterError::Stream {
            stream: stream_name(hall),
            why: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_id_reads_back_as_its_origin_and_seq() {
        let id = message_id("9f2c01ab77e4d310", 4096);
        assert_eq!(id, "9f2c01ab77e4d310-4096");
        assert_eq!(parse_message_id(&id), Some(("9f2c01ab77e4d310", 4096)));
        assert_eq!(parse_message_id("no-seq-here"), None);
        assert_eq!(parse_message_id("plain"), None);
    }
}
