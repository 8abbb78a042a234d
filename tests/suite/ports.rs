//! Ports for the servers the tests start (a daemon's relay, an event node, `nats-server`,
//! chromedriver), given before the server binds them.
//!
//! A port found by binding port 0 and letting go of it is free only for the moment: the kernel
//! hands the same port to the next `bind(0)`, or to an outgoing connection, and two servers of
//! one test once got the same one (an event node's alerts were asked of a hall's relay). So the
//! ports come from outside the kernel's ephemeral range (`ip_local_port_range`), which neither
//! `bind(0)` nor `connect` uses: below it, or above it when it starts too low. Each is handed out
//! once per test process, walking from a start that depends on the process id (so that two test
//! processes seldom walk the same ports), and only when a bind to it succeeds now. A machine
//! whose ephemeral range leaves no room falls back to `bind(0)`, still never handing out a port
//! twice.

// The benches include this module for its servers' ports and use part of it.
#![allow(dead_code)]

use std::{
    collections::HashSet,
    net::{Ipv4Addr, TcpListener},
    ops::Range,
    sync::Mutex,
};

/// The lowest port handed out (above the well-known and most registered servers' ports).
const LOWEST: u32 = 10_000;

/// The fewest ports a range outside the ephemeral one must hold to be walked.
const ENOUGH: u32 = 2_000;

/// The ports handed out by this process, the ports it walks (read once), and how far the walk
/// has gone.
struct Handed {
    ports: HashSet<u16>,
    walk: Option<Range<u32>>,
    walked: u32,
}

static HANDED: Mutex<Option<Handed>> = Mutex::new(None);

/// The ports outside this machine's ephemeral range to walk (`None`: no room for them).
fn outside_ephemeral() -> Option<Range<u32>> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok();
    outside(range.as_deref())
}

/// The ports outside the ephemeral range `ip_local_port_range` gives (its text, `None` when
/// unread: Linux's default) to walk.
fn outside(ip_local_port_range: Option<&str>) -> Option<Range<u32>> {
    let (start, end) = ip_local_port_range
        .and_then(|s| {
            let mut it = s.split_whitespace().map(|n| n.parse::<u32>().ok());
            Some((it.next()??, it.next()??))
        })
        .unwrap_or((32_768, 60_999));
    if start >= LOWEST + ENOUGH {
        Some(LOWEST..start)
    } else if end + ENOUGH < 65_535 {
        Some(end + 1..65_536)
    } else {
        None
    }
}

/// A port on 127.0.0.1 that no server of this process was given before, outside the kernel's
/// ephemeral range where it leaves room, and free now.
pub fn free() -> u16 {
    let mut handed = HANDED.lock().unwrap_or_else(|e| e.into_inner());
    let handed = handed.get_or_insert_with(|| Handed {
        ports: HashSet::new(),
        walk: outside_ephemeral(),
        walked: 0,
    });
    if let Some(range) = handed.walk.clone() {
        let span = range.end - range.start;
        let offset = std::process::id().wrapping_mul(7_919) % span;
        while handed.walked < span {
            let port = range.start + (offset + handed.walked) % span;
            handed.walked += 1;
            let port = u16::try_from(port).expect("a port number");
            if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() && handed.ports.insert(port) {
                return port;
            }
        }
    }
    // No room outside the ephemeral range (or all of it walked): the kernel's choice.
    loop {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .expect("binding 127.0.0.1:0")
            .port();
        if handed.ports.insert(port) {
            return port;
        }
    }
}

/// [`free`] as an address on 127.0.0.1.
pub fn free_addr() -> std::net::SocketAddr {
    (Ipv4Addr::LOCALHOST, free()).into()
}

#[cfg(test)]
mod tests {
    #[test]
    fn ports_are_outside_the_ephemeral_range_free_and_never_handed_out_twice() {
        let ports: Vec<u16> = (0..200).map(|_| super::free()).collect();
        let distinct: std::collections::HashSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len());
        if let Some(range) = super::outside_ephemeral() {
            for &p in &ports {
                assert!(range.contains(&u32::from(p)), "{p} not in {range:?}");
            }
        }
        // Below the ephemeral range; above it when it starts too low; none when it leaves
        // no room either side.
        assert_eq!(super::outside(Some("32768\t60999\n")), Some(10_000..32_768));
        assert_eq!(super::outside(None), Some(10_000..32_768));
        assert_eq!(super::outside(Some("1024 50000")), Some(50_001..65_536));
        assert_eq!(super::outside(Some("1024 65000")), None);
        // Each can be bound by the server it is for.
        for &p in &ports[..20] {
            std::net::TcpListener::bind(("127.0.0.1", p)).unwrap();
        }
    }
}
