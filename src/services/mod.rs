//! What `run` (a hall, or a single PC) and `event` (the event node) both start around their
//! records: the event's round and settings from `[tournament]`, the relay's HTTP server (with
//! its delayed view), the pushed publications (the folder, Lichess: [`publications`]) and the
//! wait for the signal that stops them. Flow: each command reads its config, opens its store,
//! then calls these in turn; none of them knows which command called it.

pub mod publications;

use std::{net::SocketAddr, path::Path};

use anyhow::{Context as _, bail};
use tokio::sync::watch;
use tracing::error;

pub use publications::Publications;

use crate::{
    relay::{self, Hub, RelayExtras, Token},
    store::{EventSettings, RoundInfo},
};

/// The store's round from `[tournament]`: `round` must be a positive integer when given.
pub fn round_info(t: &crate::config::Tournament) -> anyhow::Result<Option<RoundInfo>> {
    let Some(round) = t.round.as_deref() else {
        return Ok(None);
    };
    let round = match round.trim().parse::<u32>() {
        Ok(n) if n > 0 => n,
        _ => bail!(
            "[tournament] round {round:?}: run needs the round as a positive integer (1, 2, …)"
        ),
    };
    let unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".to_owned());
    Ok(Some(RoundInfo {
        event: unknown(&t.event),
        site: unknown(&t.site),
        round,
    }))
}

/// The event's settings from `[tournament]`, as games and scoresheets show them.
pub fn event_settings(t: &crate::config::Tournament) -> EventSettings {
    EventSettings {
        start_date: t.start_date.clone(),
        end_date: t.end_date.clone(),
        time_control: t.time_control.as_ref().map(|tc| tc.to_string()),
        laws: Some(t.laws.to_string()),
        variant: Some(t.variant.to_string()),
        language: Some(t.language.to_string()),
        notation: Some(t.notation.to_string()),
        tiebreaks: Some(t.tiebreaks.to_string()),
    }
}

/// Binds `addr` and serves the relay until `stop` turns true; returns the page's URL.
pub async fn start_relay(
    addr: SocketAddr,
    hub: &Hub,
    db: &Path,
    token: Option<Token>,
    stop: watch::Receiver<bool>,
) -> anyhow::Result<String> {
    start_relay_with(addr, hub, db, token, stop, RelayExtras::default()).await
}

/// [`start_relay`] with the daemon's metrics and change signal.
pub async fn start_relay_with(
    addr: SocketAddr,
    hub: &Hub,
    db: &Path,
    token: Option<Token>,
    mut stop: watch::Receiver<bool>,
    extras: RelayExtras,
) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr} for the relay"))?;
    let bound = listener.local_addr()?;
    let mut extras = extras;
    if extras.publication.delay_ms > 0 && extras.public_hub.is_none() {
        // Spectators follow a hub kept as the boards stood the delay ago.
        let public = Hub::new();
        tokio::spawn(relay::delayed::follow(
            hub.clone(),
            public.clone(),
            db.to_owned(),
            extras.publication,
            stop.clone(),
        ));
        extras.public_hub = Some(public);
    }
    let limits = extras.limits;
    let app = relay::router_with(hub.clone(), db, token, extras);
    let shutdown = async move {
        // Stopped, or the daemon is gone: either way, stop serving.
        let _ignored_if_sender_gone = stop.wait_for(|s| *s).await;
    };
    let hub = hub.clone();
    tokio::spawn(async move {
        if let Err(e) = relay::serve(listener, app, hub, limits, shutdown).await {
            error!(cause = %e, "relay server failed");
        }
    });
    Ok(format!("http://{bound}/"))
}
/// Until SIGTERM or SIGINT (Ctrl-C).
pub async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ignored = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ignored = tokio::signal::ctrl_c().await;
    }
}
