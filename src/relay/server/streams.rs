//! The spectators' event streams under their caps: an event stream holds its connection for
//! as long as it lives, so spectators could otherwise take every connection the server has and
//! lock the arbiter out.
//!
//! Flow: `/api/events` asks [`Streams::open`] for a [`Slot`] before it streams to a spectator
//! (the arbiter's streams are not counted). A slot is refused (503, `Retry-After`) when the
//! address already holds `events_per_address` streams (IPv6 counted by its /64), or when the
//! spectators' streams together hold every connection but the arbiter's share
//! ([`arbiter_share`] of the connection cap). A stream ends after `events_lifetime` (the
//! browser's `EventSource` comes back at once and reads the boards anew), so a stream whose
//! reader went away without closing frees its place. The slot is given back when its stream
//! is dropped.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use super::{gate, lock};
use crate::relay::listen::{self, HttpLimits};

/// The connections kept for the arbiter out of `cap`: an eighth, at least 32 (all of them but
/// one when the cap is smaller).
pub fn arbiter_share(cap: usize) -> usize {
    (cap / 8).max(32).min(cap.saturating_sub(1))
}

/// Why a spectator's stream is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("this address already follows {0} event streams")]
    PerAddress(usize),
    #[error("the server follows as many event streams as it serves ({0})")]
    Full(usize),
}

/// The spectators' streams open now: in all, and by address.
pub struct Streams {
    cap: usize,
    per_address: usize,
    pub(super) lifetime: Duration,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    all: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// One spectator's stream, counted until dropped.
pub struct Slot {
    streams: Arc<Streams>,
    address: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = lock(&self.streams.open);
        open.all = open.all.saturating_sub(1);
        if let Some(n) = open.by_address.get_mut(&self.address) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.by_address.remove(&self.address);
            }
        }
    }
}

impl Streams {
    /// The caps for the server `limits` describe.
    pub fn new(limits: &HttpLimits) -> Streams {
        let cap = listen::effective_cap(limits);
        Streams {
            cap: cap.saturating_sub(arbiter_share(cap)).max(1),
            per_address: limits.events_per_address.max(1),
            lifetime: limits.events_lifetime,
            open: Mutex::default(),
        }
    }

    /// A place for one more stream from `ip`, or why not.
    pub fn open(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, Refused> {
        let address = gate::address_key(ip);
        let mut open = lock(&self.open);
        if open.all >= self.cap {
            return Err(Refused::Full(self.cap));
        }
        let mine = open.by_address.entry(address).or_insert(0);
        if *mine >= self.per_address {
            return Err(Refused::PerAddress(self.per_address));
        }
        *mine += 1;
        open.all += 1;
        Ok(Slot {
            streams: self.clone(),
            address,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streams(cap: usize, per_address: usize) -> Arc<Streams> {
        Arc::new(Streams::new(&HttpLimits {
            max_connections: Some(cap),
            events_per_address: per_address,
            ..HttpLimits::default()
        }))
    }

    #[test]
    fn the_arbiters_share_is_kept_out_of_every_cap() {
        assert_eq!(arbiter_share(7936), 992);
        assert_eq!(arbiter_share(768), 96);
        assert_eq!(arbiter_share(100), 32);
        assert_eq!(arbiter_share(16), 15);
        assert_eq!(arbiter_share(1), 0);
    }

    #[test]
    fn streams_are_capped_per_address_and_in_all_and_given_back() {
        let s = streams(64, 4);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let held: Vec<Slot> = (0..4).map(|_| s.open(a).unwrap()).collect();
        assert_eq!(s.open(a).err(), Some(Refused::PerAddress(4)));
        drop(held);
        // 64 connections, 32 kept for the arbiter: 32 streams from eight addresses.
        let mut all = Vec::new();
        for i in 0..8u8 {
            for _ in 0..4 {
                all.push(s.open(IpAddr::from([192, 0, 2, i])).unwrap());
            }
        }
        assert_eq!(
            s.open(IpAddr::from([192, 0, 2, 99])).err(),
            Some(Refused::Full(32))
        );
        all.pop();
        assert!(s.open(IpAddr::from([192, 0, 2, 99])).is_ok());
    }
}
