//! Ports for the servers the tests start (a daemon's relay, an event node, `nats-server`,
//! chromedriver), given before the server binds them.
//!
//! A port found by binding port 0 and letting go of it is free only for the moment: the kernel
//! hands the same port to the next `bind(0)`, or to an outgoing connection, and two servers of
//! one test once got the same one (an event node's alerts were asked of a hall's relay). So the
//! ports come from below the kernel's ephemeral range, which neither `bind(0)` nor `connect`
//! uses; each is handed out once per test process, from a start that depends on the process id
//! (so that two test processes seldom walk the same ports), and only when a bind to it succeeds
//! now.

// The benches include this module for its servers' ports and use part of it.
#![allow(dead_code)]

use std::{
    net::{Ipv4Addr, TcpListener},
    sync::{
        Mutex,
        atomic::{AtomicU32, Ordering},
    },
};

/// The lowest port handed out (above the well-known and most registered servers' ports).
const LOWEST: u32 = 10_000;

/// Ports handed out by this process so far.
static HANDED: AtomicU32 = AtomicU32::new(0);

/// One hand-out at a time, so that two tests never race for the same candidate.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The first port of the kernel's ephemeral range (`ip_local_port_range`; 32768 when unread).
fn ephemeral_start() -> u32 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// A port on 127.0.0.1 that no server of this process was given before, outside the kernel's
/// ephemeral range, and free now.
pub fn free() -> u16 {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let end = ephemeral_start();
    assert!(
        end > LOWEST + 1_000,
        "the ephemeral ports start at {end}: too low for the tests' ports below them"
    );
    let span = end - LOWEST;
    let offset = std::process::id().wrapping_mul(7_919) % span;
    for _ in 0..span {
        let n = HANDED.fetch_add(1, Ordering::Relaxed);
        let port = LOWEST + (offset + n) % span;
        let port = u16::try_from(port).expect("a port below the ephemeral range");
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return port;
        }
    }
    panic!("no free port between {LOWEST} and {end}");
}

/// [`free`] as an address on 127.0.0.1.
pub fn free_addr() -> std::net::SocketAddr {
    (Ipv4Addr::LOCALHOST, free()).into()
}
