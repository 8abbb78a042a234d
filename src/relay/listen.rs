//! The relay's accept loop: a thin I/O layer under the axum router that a flood of connections
//! cannot starve.
//!
//! Flow: [`serve`] takes a permit from a semaphore sized by [`connection_cap`] (the process's
//! `RLIMIT_NOFILE` minus a reserve of descriptors for the boards, the store and the logs)
//! before each `accept`, so connections beyond the cap wait in the kernel's backlog and never
//! take a descriptor a board needs. Each accepted connection is served by hyper with a
//! header-read timeout: hyper starts it whenever the connection waits for a request head, so it
//! is also the idle keep-alive timeout; its read buffer is bounded ([`READ_BUFFER`]), and every
//! request carries its peer's address. An accept error (`EMFILE` above all) is logged and
//! backed off ([`accept_backoff`]) instead of spinning. On `shutdown` the loop stops accepting,
//! ends the hub's event streams, and lets open requests finish (for at most `drain`).

use std::{future::Future, sync::Arc, time::Duration};

use axum::Router;
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    server::graceful::GracefulShutdown,
    service::TowerToHyperService,
};
use tokio::{net::TcpListener, sync::Semaphore};
use tracing::{debug, info, warn};

use crate::relay::{RelayError, hub::Hub};

/// The HTTP server's limits; [`HttpLimits::default`] is what the daemon uses, tests shrink them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpLimits {
    /// A request head must arrive within this, from the connection's first byte or from the
    /// end of the previous answer (the idle keep-alive wait).
    pub header_read: Duration,
    /// A request body must arrive whole within this, or the answer is 408.
    pub body_read: Duration,
    /// The largest JSON or form body.
    pub json_body: usize,
    /// The largest pairings upload (`/api/admin/pairings`, `/arbiter/pairings`).
    pub upload_body: usize,
    /// Descriptors kept for the boards, the store and the logs, out of `RLIMIT_NOFILE`.
    pub fd_reserve: u64,
    /// The cap on open connections, if set; else computed by [`connection_cap`].
    pub max_connections: Option<usize>,
    /// How long open requests may finish after the stop.
    pub drain: Duration,
    /// Event streams one spectator's address may hold at once.
    pub events_per_address: usize,
    /// How long an event stream lives before the browser is made to come back.
    pub events_lifetime: Duration,
}

impl Default for HttpLimits {
    fn default() -> HttpLimits {
        HttpLimits {
            header_read: Duration::from_secs(10),
            body_read: Duration::from_secs(30),
            json_body: 64 * 1024,
            upload_body: 1024 * 1024,
            fd_reserve: 256,
            max_connections: None,
            drain: Duration::from_secs(10),
            events_per_address: 16,
            events_lifetime: Duration::from_secs(30 * 60),
        }
    }
}

/// The largest buffer a connection reads a request head (and body chunks) into: a head must
/// fit in it (431 if not). With the bodies read only once the head says who asks
/// ([`crate::relay::server::gate`]), a connection from anyone holds at most this, a login form
/// and the answer being written.
pub const READ_BUFFER: usize = 8 * 1024;

/// The fewest connections served, however low the descriptor limit.
const MIN_CONNECTIONS: u64 = 16;

/// The cap on connections for a soft `RLIMIT_NOFILE` of `nofile` (`None`: unlimited) keeping
/// `reserve` descriptors: what is left, at least [`MIN_CONNECTIONS`]; an unlimited limit counts
/// as 65,536 (one port's worth of loopback connections).
pub fn connection_cap(nofile: Option<u64>, reserve: u64) -> usize {
    let nofile = nofile.unwrap_or(65_536);
    let cap = nofile.saturating_sub(reserve).max(MIN_CONNECTIONS);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

/// The wait after `failures` accept errors in a row: 10 ms doubling, at most one second.
pub fn accept_backoff(failures: u32) -> Duration {
    let ms = 10u64.saturating_mul(1 << failures.min(10));
    Duration::from_millis(ms.min(1_000))
}

/// The soft `RLIMIT_NOFILE` of this process (`None`: unlimited).
pub fn nofile_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// The cap [`serve`] applies under `limits` in this process.
pub fn effective_cap(limits: &HttpLimits) -> usize {
    limits
        .max_connections
        .unwrap_or_else(|| connection_cap(nofile_limit(), limits.fd_reserve))
}

/// Serves `app` on `listener` under `limits` until `shutdown` resolves; then ends the event
/// streams of `hub` and waits (at most `limits.drain`) for open requests.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    hub: Hub,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), RelayError> {
    let cap = effective_cap(&limits);
    info!(
        connections = cap,
        nofile = ?nofile_limit(),
        reserve = limits.fd_reserve,
        "relay accepting"
    );
    let slots = Arc::new(Semaphore::new(cap));
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read)
        .max_buf_size(READ_BUFFER)
        .keep_alive(true);
    tokio::pin!(shutdown);
    let mut failures = 0u32;
    let mut at_cap_logged = false;
    loop {
        if slots.available_permits() == 0 && !at_cap_logged {
            warn!(
                connections = cap,
                "the relay is at its cap on connections; new ones wait"
            );
            at_cap_logged = true;
        }
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_closed) => break,
            },
            () = &mut shutdown => break,
        };
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => {
                failures = 0;
                accepted
            }
            Err(e) => {
                let wait = accept_backoff(failures);
                failures = failures.saturating_add(1);
                warn!(cause = %e, wait_ms = wait.as_millis() as u64, "accepting a connection failed; waiting");
                tokio::select! {
                    () = tokio::time::sleep(wait) => continue,
                    () = &mut shutdown => break,
                }
            }
        };
        if slots.available_permits() > 0 {
            at_cap_logged = false;
        }
        // Every request knows its peer: the guard counts failed tokens, and the event streams
        // their places, by address.
        let service = TowerToHyperService::new(
            app.clone()
                .layer(axum::Extension(crate::relay::server::gate::Peer(peer))),
        );
        let conn = http.serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                debug!(cause = %e, "an HTTP connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    hub.close();
    if tokio::time::timeout(limits.drain, graceful.shutdown())
        .await
        .is_err()
    {
        warn!(
            after_ms = limits.drain.as_millis() as u64,
            "open HTTP requests did not finish; stopping anyway"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_keeps_the_reserve() {
        assert_eq!(connection_cap(Some(8192), 256), 7936);
        assert_eq!(connection_cap(Some(1024), 256), 768);
        assert_eq!(connection_cap(Some(100), 256), 16);
        assert_eq!(connection_cap(None, 256), 65_280);
    }

    #[test]
    fn accept_errors_back_off_up_to_a_second() {
        assert_eq!(accept_backoff(0), Duration::from_millis(10));
        assert_eq!(accept_backoff(1), Duration::from_millis(20));
        assert_eq!(accept_backoff(6), Duration::from_millis(640));
        assert_eq!(accept_backoff(7), Duration::from_secs(1));
        assert_eq!(accept_backoff(u32::MAX), Duration::from_secs(1));
    }
}
