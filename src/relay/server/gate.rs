//! Who asks, told from the request's head alone, before any byte of its body is read: the
//! admin key (re-read when its file changes), the slow-down of token guessing, and the checks
//! that a request riding on the console's cookie comes from the console itself.
//!
//! Flow: the guard ([`super::guard`]) asks [`App::caller`] who the request is from. A bearer
//! header is checked against the [`AdminKey`] unless its address is being slowed down
//! ([`Guesses`]: a failed token or login spends from a per-address allowance that refills at a
//! fixed rate; an address without allowance is answered 429 before anything is compared). A
//! cookie naming a live session is the session's arbiter. A cookie-borne request that changes
//! anything must then pass [`same_origin`] (and, to the JSON API, carry JSON): a page of
//! another origin, another port of the same host included, cannot act with the arbiter's
//! cookie. [`AdminKey::current`] re-reads the token file at most once a second; a changed or
//! removed token drops every session.

use std::{
    collections::HashMap,
    net::{IpAddr, Ipv6Addr, SocketAddr},
    path::PathBuf,
    sync::Mutex,
    time::{Duration, Instant},
};

use axum::http::{HeaderMap, header};
use tracing::{info, warn};

use super::{Token, lock, session::Sessions};

/// The peer's address, set on every request by the accept loop ([`crate::relay::listen`]).
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub SocketAddr);

impl Peer {
    /// The address of the request's peer (unspecified when the server was not started by
    /// the accept loop, as in a test serving the router itself).
    pub fn ip_of(peer: Option<&Peer>) -> IpAddr {
        peer.map_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), |p| p.0.ip())
    }
}

/// Who a request is from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// The admin token, as a bearer header: a script, the command line, a pairing program.
    Token,
    /// A console session, by the arbiter's name given at the login.
    Session(String),
    /// Anyone: a spectator.
    Public,
}

/// Why a request is answered from its head alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denied {
    /// A bearer header that is not the token (401).
    WrongToken,
    /// The address is slowed down for wrong guesses: this long yet (429).
    SlowedDown(Duration),
}

impl Caller {
    pub fn is_arbiter(&self) -> bool {
        !matches!(self, Caller::Public)
    }

    /// Who decides, for the record: the session's arbiter, "arbiter" for the token; none for
    /// the public.
    pub fn author(self) -> Option<String> {
        match self {
            Caller::Session(name) => Some(name),
            Caller::Token => Some("arbiter".into()),
            Caller::Public => None,
        }
    }
}

/// How often the token file is looked at again.
const RELOAD_EVERY: Duration = Duration::from_secs(1);

/// The admin token, and the file it comes from: read again when a request comes more than
/// [`RELOAD_EVERY`] after the last look, so that a token changed or removed by the operator is
/// in force at once and the sessions opened with the old one end.
pub struct AdminKey {
    file: Option<PathBuf>,
    state: Mutex<KeyState>,
}

struct KeyState {
    token: Option<Token>,
    looked: Instant,
}

impl AdminKey {
    /// `token`, read from `file` if one is named (`None`: the token never changes).
    pub fn new(token: Option<Token>, file: Option<PathBuf>) -> AdminKey {
        AdminKey {
            file,
            state: Mutex::new(KeyState {
                token,
                looked: Instant::now(),
            }),
        }
    }

    /// The token in force now (the file looked at again if it is time), ending `sessions` when
    /// it changed.
    pub(super) fn current(&self, sessions: &Sessions) -> Option<Token> {
        let mut state = lock(&self.state);
        if let Some(file) = &self.file
            && state.looked.elapsed() >= RELOAD_EVERY
        {
            state.looked = Instant::now();
            let now = match Token::from_file(file) {
                Ok(t) => Some(t),
                Err(e) => {
                    if state.token.is_some() {
                        warn!(cause = %e, "the admin token is gone: the admin API and the console are off, every session ended");
                    }
                    None
                }
            };
            let changed = match (&now, &state.token) {
                (Some(a), Some(b)) => !a.same_as(b),
                (None, None) => false,
                _ => true,
            };
            if changed {
                sessions.end_all();
                if now.is_some() {
                    info!(file = %file.display(), "the admin token file changed: the new token is in force, every session ended");
                }
                state.token = now;
            }
        }
        state.token.clone()
    }
}

/// Failed guesses an address may make at once.
pub const GUESS_BURST: f64 = 10.0;
/// Failed guesses an address may make per second after the burst: 1,000 wrong tokens take at
/// least (1,000 − 10) / 15 = 66 s.
pub const GUESS_RATE: f64 = 15.0;
/// Addresses followed at most; beyond, new ones share one allowance.
const MAX_ADDRESSES: usize = 4096;

/// The allowance of failed guesses of one address (a token bucket).
#[derive(Clone, Copy, Debug)]
struct Allowance {
    left: f64,
    at: Instant,
    failures: u64,
    slowed: bool,
}

impl Allowance {
    fn full(now: Instant) -> Allowance {
        Allowance {
            left: GUESS_BURST,
            at: now,
            failures: 0,
            slowed: false,
        }
    }

    fn refill(&mut self, now: Instant) {
        let secs = now.saturating_duration_since(self.at).as_secs_f64();
        self.left = (self.left + secs * GUESS_RATE).min(GUESS_BURST);
        self.at = now;
    }

    /// How long until a guess may be made again (zero: now).
    fn wait(&self) -> Duration {
        if self.left >= 1.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((1.0 - self.left) / GUESS_RATE)
        }
    }
}

/// Failed tokens and logins per address (IPv6 by its /64, which one machine commonly holds
/// whole).
#[derive(Default)]
pub struct Guesses(Mutex<HashMap<IpAddr, Allowance>>);

/// The key an address is counted under.
pub fn address_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        v4 => v4,
    }
}

impl Guesses {
    /// `Some(wait)` when `ip` must wait before it may try a token again.
    pub fn slowed(&self, ip: IpAddr, now: Instant) -> Option<Duration> {
        let mut all = lock(&self.0);
        let a = all.get_mut(&address_key(ip))?;
        a.refill(now);
        let wait = a.wait();
        (!wait.is_zero()).then_some(wait)
    }

    /// Counts a failed guess from `ip` (said at WARN, with the address and its count).
    pub fn failed(&self, ip: IpAddr, what: &str, now: Instant) {
        let mut all = lock(&self.0);
        if all.len() >= MAX_ADDRESSES {
            all.retain(|_, a| {
                a.refill(now);
                a.left < GUESS_BURST
            });
        }
        let key = if all.len() >= MAX_ADDRESSES && !all.contains_key(&address_key(ip)) {
            IpAddr::V6(Ipv6Addr::UNSPECIFIED)
        } else {
            address_key(ip)
        };
        let a = all.entry(key).or_insert_with(|| Allowance::full(now));
        a.refill(now);
        a.left = (a.left - 1.0).max(0.0);
        a.failures += 1;
        warn!(peer = %ip, failures = a.failures, "{what}: wrong admin token");
        if a.left < 1.0 && !a.slowed {
            a.slowed = true;
            warn!(
                peer = %ip,
                failures = a.failures,
                per_second = GUESS_RATE,
                "this address guesses tokens: its tries are slowed down"
            );
        } else if a.left >= 1.0 {
            a.slowed = false;
        }
    }
}

/// Whether a request riding on the console's cookie comes from the console's own pages: the
/// browser's `Sec-Fetch-Site` says `same-origin`, or (a browser without it) the `Origin` is
/// this server as the request names it (`Host`, or `X-Forwarded-Host` behind a proxy). A
/// request that says neither is refused: every browser sends one of them on a `POST`.
pub fn same_origin(headers: &HeaderMap) -> bool {
    match headers.get("sec-fetch-site") {
        Some(site) => site.as_bytes() == b"same-origin",
        None => origin_is_this_server(headers) == Some(true),
    }
}

/// Whether a request says it comes from another site (the login and the logout, which need no
/// session, are refused only then).
pub fn says_cross_site(headers: &HeaderMap) -> bool {
    let site_other = headers
        .get("sec-fetch-site")
        .is_some_and(|s| s.as_bytes() != b"same-origin" && s.as_bytes() != b"none");
    site_other || origin_is_this_server(headers) == Some(false)
}

/// Whether the `Origin` header names this server as the request names it (`Host`, or
/// `X-Forwarded-Host` behind a proxy); `None` without an `Origin`.
fn origin_is_this_server(headers: &HeaderMap) -> Option<bool> {
    let origin = headers.get(header::ORIGIN)?;
    let Some(authority) = origin.to_str().ok().and_then(|o| {
        o.strip_prefix("http://")
            .or_else(|| o.strip_prefix("https://"))
    }) else {
        return Some(false);
    };
    let named = |name: &str| {
        headers
            .get(name)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|h| h.trim().eq_ignore_ascii_case(authority))
    };
    Some(!authority.is_empty() && (named("host") || named("x-forwarded-host")))
}

/// Whether the body is declared JSON (`application/json`, any parameters).
pub fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether the request came over TLS, as a proxy in front says (`X-Forwarded-Proto: https`,
/// or `Forwarded: proto=https`).
pub fn over_tls(headers: &HeaderMap) -> bool {
    let forwarded_proto = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"));
    let forwarded = headers
        .get("forwarded")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split([';', ','])
                .any(|p| p.trim().eq_ignore_ascii_case("proto=https"))
        });
    forwarded_proto || forwarded
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn only_this_origin_passes() {
        let host = ("host", "127.0.0.1:8080");
        assert!(same_origin(&headers(&[
            host,
            ("origin", "http://127.0.0.1:8080")
        ])));
        assert!(same_origin(&headers(&[
            host,
            ("sec-fetch-site", "same-origin")
        ])));
        // Another port of the same host is another origin (and the same site).
        assert!(!same_origin(&headers(&[
            host,
            ("origin", "http://127.0.0.1:9090")
        ])));
        assert!(!same_origin(&headers(&[
            host,
            ("origin", "http://127.0.0.1:8080"),
            ("sec-fetch-site", "same-site")
        ])));
        assert!(!same_origin(&headers(&[host, ("origin", "null")])));
        assert!(!same_origin(&headers(&[
            host,
            ("origin", "http://localhost:8080")
        ])));
        assert!(!same_origin(&headers(&[host])), "neither header: refused");
        assert!(same_origin(&headers(&[
            ("host", "127.0.0.1:8080"),
            ("x-forwarded-host", "venue.example"),
            ("origin", "https://venue.example")
        ])));
        assert!(says_cross_site(&headers(&[
            host,
            ("origin", "http://127.0.0.1:9090")
        ])));
        assert!(says_cross_site(&headers(&[
            host,
            ("sec-fetch-site", "cross-site")
        ])));
        assert!(!says_cross_site(&headers(&[host])));
    }

    #[test]
    fn json_is_told_by_its_type() {
        assert!(is_json(&headers(&[(
            "content-type",
            "application/json; charset=utf-8"
        )])));
        assert!(!is_json(&headers(&[("content-type", "text/plain")])));
        assert!(!is_json(&headers(&[(
            "content-type",
            "application/x-www-form-urlencoded"
        )])));
        assert!(!is_json(&HeaderMap::new()));
    }

    #[test]
    fn guesses_slow_down_after_the_burst_and_recover() {
        let g = Guesses::default();
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        let other: IpAddr = "192.0.2.8".parse().unwrap();
        let t0 = Instant::now();
        for _ in 0..GUESS_BURST as usize {
            assert_eq!(g.slowed(ip, t0), None);
            g.failed(ip, "test", t0);
        }
        let wait = g.slowed(ip, t0).expect("slowed after the burst");
        assert!(wait <= Duration::from_secs_f64(1.0 / GUESS_RATE) + Duration::from_millis(1));
        assert_eq!(g.slowed(other, t0), None, "another address is not");
        assert_eq!(g.slowed(ip, t0 + wait), None, "one more try after the wait");
        // 1,000 failures need at least (1,000 - burst) / rate seconds.
        let mut t = t0 + Duration::from_secs(10);
        let start = t;
        let mut failed = 0;
        while failed < 1000 {
            match g.slowed(other, t) {
                Some(w) => t += w,
                None => {
                    g.failed(other, "test", t);
                    failed += 1;
                }
            }
        }
        assert!(t - start >= Duration::from_secs(60), "{:?}", t - start);
    }

    #[test]
    fn an_ipv6_machine_counts_as_its_64() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        assert_eq!(address_key(a), address_key(b));
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(address_key(mapped), "192.0.2.1".parse::<IpAddr>().unwrap());
    }
}
