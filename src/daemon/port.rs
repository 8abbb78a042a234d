//! Finding and opening a board's port: waiting for it to appear (a locator by path, USB serial
//! or USB port path), opening it over its kind's link (a serial line, a hidraw node, or the
//! socket standing in for one), and how long to wait before trying again.

use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

use crate::{
    config::Locator,
    device::{
        discover,
        link::{self, Port},
        serial::Backoff,
    },
    kind::Link,
};

/// A board lost less than this long ago is retried every [`RECENT_RETRY`] at most.
pub(super) const RECENTLY_SEEN: Duration = Duration::from_secs(600);

pub(super) const RECENT_RETRY: Duration = Duration::from_secs(1);

/// The wait before the next attempt to open a port last connected at `last_seen`: a port that
/// was there a moment ago is retried every second at most; one long gone backs off to 10 s.
pub(super) fn retry_delay(backoff: &mut Backoff, last_seen: Option<Instant>) -> Duration {
    let delay = backoff.next_delay();
    if last_seen.is_some_and(|t| t.elapsed() < RECENTLY_SEEN) {
        delay.min(RECENT_RETRY)
    } else {
        delay
    }
}

/// How often a port that is not there is looked for while waiting to retry.
pub(super) const PORT_POLL: Duration = Duration::from_millis(100);

/// Waits `delay`, or until the board's device node appears, if it was not there when the wait
/// began (a replugged board is opened as soon as udev has made its node).
pub(super) async fn wait_for_port(locator: &Locator, sysfs: &std::path::Path, delay: Duration) {
    let present = || matches!(discover::path_to_open(locator, sysfs), Ok(Some(_)));
    let deadline = tokio::time::Instant::now() + delay;
    if present() {
        tokio::time::sleep_until(deadline).await;
        return;
    }
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(PORT_POLL.min(deadline - tokio::time::Instant::now())).await;
        if present() {
            return;
        }
    }
}

/// Why a port could not be opened now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Unavailable {
    /// For the log, and for the arbiter when `busy`.
    pub(super) why: String,
    /// The port is there, but another process holds it (named in `why`): the arbiter is told,
    /// as for a board lost, since only someone at the PC can free it.
    pub(super) busy: bool,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

impl From<Unavailable> for String {
    fn from(u: Unavailable) -> String {
        u.why
    }
}

/// Finds the board's port now and opens it, reached over `link` (its kind's).
pub(super) async fn open(
    locator: &Locator,
    sysfs: &std::path::Path,
    link: Link,
) -> Result<(PathBuf, Port), Unavailable> {
    let plain = |why: String| Unavailable { why, busy: false };
    let path = match discover::path_to_open(locator, sysfs) {
        Ok(Some(path)) => path,
        Ok(None) => return Err(plain(format!("{locator} is not plugged in"))),
        Err(e) => return Err(plain(e.to_string())),
    };
    let port = link::open(&path, link).await.map_err(|e| Unavailable {
        busy: e.is_busy(),
        why: e.to_string(),
    })?;
    Ok((path, port))
}
