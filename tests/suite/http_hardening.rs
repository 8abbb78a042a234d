//! The relay's server against misbehaving clients (issue 17, item 5), over real HTTP on
//! 127.0.0.1: the security headers on every route (the route list is the router's own table,
//! `route_table`, so a route added later is requested too), a lower-case `bearer` scheme, a
//! `Content-Length` far over the limit answered 413 at once, a body that never arrives answered
//! 408, a request head that never completes closed after the header timeout, the cap on
//! connections, and pairing names with control characters or of 20 MB refused with their line
//! (admin API and command line).

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
    time::{Duration, Instant},
};

use boardscribe::{
    daemon,
    relay::{HttpLimits, Hub, RelayExtras, Token},
    store::Store,
};
use reqwest::{StatusCode, header};
use tokio::sync::watch;

const TOKEN: &str = "hardening-token";

/// Every route of the router, as its own table says: (method, path).
fn routes() -> Vec<(String, String)> {
    boardscribe::relay::server::route_table()
        .into_iter()
        .map(|r| (r.method.to_lowercase(), r.path.to_owned()))
        .collect()
}

/// `path` with each `{param}` given a placeholder.
fn placeholders(path: &str) -> String {
    path.replace("{key}", "1")
        .replace("{file}", "1.pgn")
        .replace("{n}", "1")
        .replace("{id}", "1")
        .replace("{action}", "note")
}

/// The relay over a fresh database, with the admin token, under `limits`.
struct Server {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    url: String,
    addr: SocketAddr,
    _stop: watch::Sender<bool>,
}

async fn server(limits: HttpLimits) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("relay.db");
    drop(Store::open(&db).unwrap());
    let (stop, stop_rx) = watch::channel(false);
    let extras = RelayExtras {
        limits,
        ..RelayExtras::default()
    };
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    let url = daemon::start_relay_with(any, &Hub::new(), &db, Token::new(TOKEN), stop_rx, extras)
        .await
        .unwrap();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    Server {
        _dir: dir,
        db,
        url,
        addr,
        _stop: stop,
    }
}

fn assert_guarded(what: &str, headers: &header::HeaderMap) {
    let csp = headers
        .get(header::CONTENT_SECURITY_POLICY)
        .unwrap_or_else(|| panic!("{what}: no Content-Security-Policy"))
        .to_str()
        .unwrap();
    assert!(
        csp.contains("script-src 'self';") && csp.contains("frame-ancestors 'none'"),
        "{what}: {csp}"
    );
    assert!(!csp.contains("unsafe-eval"), "{what}: {csp}");
    for (name, value) in [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "same-origin"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        assert_eq!(
            headers.get(&name).map(|v| v.to_str().unwrap()),
            Some(value),
            "{what}: {name}"
        );
    }
}

/// Sends `bytes` on a new connection and reads until the server closes it (or `within`
/// passes): what came back, and how long it took.
fn raw_exchange(addr: SocketAddr, bytes: &[u8], within: Duration) -> (String, Duration) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(within)).unwrap();
    let start = Instant::now();
    s.write_all(bytes).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => panic!(
                "no close within {within:?} ({e}); got {:?}",
                String::from_utf8_lossy(&out)
            ),
        }
    }
    (String::from_utf8_lossy(&out).into_owned(), start.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_answers_with_the_security_headers() {
    let routes = routes();
    assert!(routes.len() >= 25, "{routes:?}");
    assert!(routes.contains(&("get".into(), "/live.js".into())));
    assert!(routes.contains(&("post".into(), "/api/admin/pairings".into())));
    let srv = server(HttpLimits::default()).await;
    let client = reqwest::Client::new();
    let mut asked = vec![("get".to_owned(), "/no/such/page".to_owned())];
    asked.extend(routes);
    for (method, path) in &asked {
        let url = format!("{}{}", srv.url, &placeholders(path)[1..]);
        for auth in [None, Some(TOKEN)] {
            let mut req = match method.as_str() {
                "get" => client.get(&url),
                _ => client.post(&url).body("{}"),
            };
            if let Some(t) = auth {
                req = req.bearer_auth(t);
            }
            let r = req.send().await.unwrap();
            let what = format!("{method} {path} (token: {})", auth.is_some());
            assert_guarded(&what, r.headers());
        }
    }
    // The live page names its script, which is served as JavaScript; no inline script.
    let page = client.get(&srv.url).send().await.unwrap();
    assert_guarded("the live page", page.headers());
    let html = page.text().await.unwrap();
    assert!(!html.contains("<script>"), "an inline script");
    let src = html
        .split("<script src=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("the page loads its script");
    assert!(src.starts_with("/live.js?v="), "{src}");
    let js = client
        .get(format!("{}{}", srv.url, &src[1..]))
        .send()
        .await
        .unwrap();
    assert_eq!(js.status(), StatusCode::OK);
    assert_eq!(
        js.headers()[header::CONTENT_TYPE],
        "text/javascript; charset=utf-8"
    );
    assert!(js.text().await.unwrap().contains("/api/events"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bearer_scheme_is_case_insensitive() {
    let srv = server(HttpLimits::default()).await;
    let client = reqwest::Client::new();
    let alerts = format!("{}api/admin/alerts", srv.url);
    for (auth, want) in [
        (format!("bearer {TOKEN}"), StatusCode::OK),
        (format!("BEARER {TOKEN}"), StatusCode::OK),
        (format!("Bearer {TOKEN}"), StatusCode::OK),
        ("bearer wrong".to_owned(), StatusCode::UNAUTHORIZED),
        (format!("Basic {TOKEN}"), StatusCode::UNAUTHORIZED),
    ] {
        let r = client
            .get(&alerts)
            .header(header::AUTHORIZATION, &auth)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), want, "{auth}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_limit_are_refused_at_once_and_slow_ones_time_out() {
    // A long body deadline: the 413 must not wait for it.
    let limits = HttpLimits {
        body_read: Duration::from_secs(30),
        ..HttpLimits::default()
    };
    let srv = server(limits).await;
    let addr = srv.addr;
    let huge = format!(
        "POST /api/admin/games/1/note HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 99999999999\r\n\r\nabc"
    );
    let (answer, took) = tokio::task::spawn_blocking(move || {
        raw_exchange(addr, huge.as_bytes(), Duration::from_secs(20))
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("x-frame-options: deny"),
        "{answer}"
    );
    assert!(took < Duration::from_secs(10), "413 after {took:?}");

    // Over the JSON limit without a declared length (chunked): 413 once the limit is crossed.
    let client = reqwest::Client::new();
    let chunks =
        futures_util::stream::iter((0..80).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1024])));
    let r = client
        .post(format!("{}api/admin/games/1/note", srv.url))
        .bearer_auth(TOKEN)
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    // A pairings upload may be larger than a JSON body: 200 KiB is read (and then judged).
    let mut csv = String::from("board,white,black\n");
    for b in 1..=4000 {
        csv.push_str(&format!("{b},White Player {b},Black Player {b}\n"));
    }
    let body = serde_json::json!({ "round": 1, "format": "csv", "text": csv }).to_string();
    assert!(body.len() > 100 * 1024 && body.len() < 1024 * 1024);
    let r = client
        .post(format!("{}api/admin/pairings", srv.url))
        .bearer_auth(TOKEN)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK, "{}", r.text().await.unwrap());

    // A body that does not arrive: 408 after the (short) body deadline.
    let srv = server(HttpLimits {
        body_read: Duration::from_secs(1),
        ..HttpLimits::default()
    })
    .await;
    let addr = srv.addr;
    let slow = format!(
        "POST /api/admin/games/1/note HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{{\"t"
    );
    let (answer, took) = tokio::task::spawn_blocking(move || {
        raw_exchange(addr, slow.as_bytes(), Duration::from_secs(20))
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-security-policy:"),
        "{answer}"
    );
    assert!(took >= Duration::from_millis(900), "408 after {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_head_that_never_completes_is_closed_after_the_header_timeout() {
    let srv = server(HttpLimits {
        header_read: Duration::from_secs(1),
        ..HttpLimits::default()
    })
    .await;
    let addr = srv.addr;
    let (answer, took) = tokio::task::spawn_blocking(move || {
        raw_exchange(
            addr,
            b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ",
            Duration::from_secs(20),
        )
    })
    .await
    .unwrap();
    assert!(!answer.contains("200 OK"), "{answer}");
    assert!(took >= Duration::from_millis(900), "closed after {took:?}");
    assert!(took < Duration::from_secs(10), "closed after {took:?}");
    // A connection that says nothing at all is closed too (the idle keep-alive wait).
    let (answer, took) =
        tokio::task::spawn_blocking(move || raw_exchange(addr, b"", Duration::from_secs(20)))
            .await
            .unwrap();
    assert!(answer.is_empty() || !answer.contains("200 OK"), "{answer}");
    assert!(took < Duration::from_secs(10), "closed after {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_wait_until_one_closes() {
    let srv = server(HttpLimits {
        max_connections: Some(2),
        ..HttpLimits::default()
    })
    .await;
    // Two idle connections take both slots.
    let idle: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(srv.addr).unwrap())
        .collect();
    let client = reqwest::Client::new();
    let metrics = format!("{}live.js", srv.url);
    let waiting = client
        .get(&metrics)
        .timeout(Duration::from_millis(1500))
        .send()
        .await;
    assert!(waiting.is_err(), "served over the cap: {waiting:?}");
    drop(idle);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = client
            .get(&metrics)
            .timeout(Duration::from_secs(5))
            .send()
            .await;
        if let Ok(r) = r {
            assert_eq!(r.status(), StatusCode::OK);
            break;
        }
        assert!(Instant::now() < deadline, "never served after the close");
    }
}

/// A round's CSV whose line 3 has `black` as the black player's name.
fn csv_with(black: &str) -> String {
    format!("board,white,black\n1,Tal,Petrosian\n2,Smyslov,{black}\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairing_names_with_control_characters_or_too_long_are_refused_with_their_line() {
    let srv = server(HttpLimits::default()).await;
    let client = reqwest::Client::new();
    let post = |text: String| {
        client
            .post(format!("{}api/admin/pairings", srv.url))
            .header(header::AUTHORIZATION, format!("bearer {TOKEN}"))
            .json(&serde_json::json!({ "round": 1, "format": "csv", "text": text }))
            .send()
    };
    let r = post(csv_with("Bot\0vinnik")).await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let err = r.text().await.unwrap();
    assert!(
        err.contains("line 3: black holds a control character (U+0000)"),
        "{err}"
    );
    let r = post(csv_with(&"B".repeat(300))).await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let err = r.text().await.unwrap();
    assert!(
        err.contains("line 3: black is 300 characters long (at most 200)"),
        "{err}"
    );
    // 20 MB is over the upload limit: refused on its declared length, before it is read.
    let body = serde_json::json!({ "round": 1, "format": "csv", "text": csv_with(&"B".repeat(20_000_000)) })
        .to_string();
    let head = format!(
        "POST /api/admin/pairings HTTP/1.1\r\nHost: x\r\nAuthorization: bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
        body.len(),
        &body[..1024]
    );
    let addr = srv.addr;
    let (answer, _) = tokio::task::spawn_blocking(move || {
        raw_exchange(addr, head.as_bytes(), Duration::from_secs(20))
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // Nothing was imported.
    assert!(
        Store::open_read_only(&srv.db)
            .unwrap()
            .pairings(1)
            .unwrap()
            .is_empty()
    );

    // The command line reads any size: it names the line and the field too.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    for (name, black, want) in [
        (
            "nul",
            "Bot\0vinnik".to_owned(),
            "line 3: black holds a control character (U+0000)",
        ),
        (
            "huge",
            "B".repeat(20_000_000),
            "line 3: black is 20000000 characters long (at most 200)",
        ),
    ] {
        let file = dir.path().join(format!("{name}.csv"));
        std::fs::write(&file, csv_with(&black)).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_boardscribe"))
            .args(["pairings", "--db"])
            .arg(&db)
            .args(["--round", "1"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{name}: {err}");
        assert!(err.len() < 2_000, "{name}: the error repeats the name");
    }
}
