//! NATS TLS and credentials (issue 32, item 3): real `nats-server` processes that require TLS
//! with client certificates (a CA and certificates made here with rcgen), or a user `.creds`
//! file (operator mode: operator, account and user keys made here with nkeys, their JWTs signed
//! here), and real hall processes. A hall with the right files reaches the event node. A wrong
//! CA, an expired certificate (the server's, the hall's own), credentials the server does not
//! know and a creds file that does not parse each give an error in the hall's log naming the
//! file and the cause, once, and `boardscribe_cluster_refused` on its `/metrics`; all the while
//! the hall records: its database and its outbox grow. A hall given the right CA after that
//! loses nothing.
//!
//! Run with `cargo test --release --test suite nats_security:: -- --nocapture`.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use data_encoding::{BASE32_NOPAD, BASE64URL_NOPAD};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, date_time_ymd,
};

use crate::{
    cluster_common::{EventNode, Hall, Nats, play},
    fleet_common,
};

/// Twenty times human speed: a few moves in seconds.
const SPEED: f64 = 0.05;

/// One chess board for each of `n` halls, each game's script at most `max_ms`.
fn boards(n: usize, max_ms: u64) -> Vec<Vec<fleet_common::HallBoard>> {
    fleet_common::hall(n, 0, SPEED, max_ms)
        .into_iter()
        .map(|b| vec![b])
        .collect()
}

/// A CA made here, its certificate in `dir/name.pem`.
struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
    pem: PathBuf,
}

impl Ca {
    fn new(dir: &Path, name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, format!("boardscribe test {name}"));
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        params.not_before = date_time_ymd(2020, 1, 1);
        params.not_after = date_time_ymd(2045, 1, 1);
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let pem = dir.join(format!("{name}.pem"));
        std::fs::write(&pem, issuer.pem()).unwrap();
        Ca { issuer, pem }
    }

    /// A certificate for 127.0.0.1 and localhost (server and client use), valid from
    /// `from` to `until` (years, 1 January), in `dir/name.pem` with its key in
    /// `dir/name-key.pem`.
    fn issue(&self, dir: &Path, name: &str, from: i32, until: i32) -> (PathBuf, PathBuf) {
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.not_before = date_time_ymd(from, 1, 1);
        params.not_after = date_time_ymd(until, 1, 1);
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let (cert_path, key_path) = (
            dir.join(format!("{name}.pem")),
            dir.join(format!("{name}-key.pem")),
        );
        std::fs::write(&cert_path, cert.pem()).unwrap();
        std::fs::write(&key_path, key.serialize_pem()).unwrap();
        (cert_path, key_path)
    }
}

/// A `nats-server` that takes only TLS clients with a certificate `ca` signed.
fn tls_server(dir: &Path, ca: &Path, cert: &Path, key: &Path) -> Nats {
    Nats::start_with(
        dir,
        &format!(
            "tls {{\n  cert_file: \"{}\"\n  key_file: \"{}\"\n  ca_file: \"{}\"\n  verify: true\n  \
             timeout: 2\n}}\n",
            cert.display(),
            key.display(),
            ca.display()
        ),
    )
}

fn tls_url(nats: &Nats) -> String {
    format!("tls://127.0.0.1:{}", nats.port)
}

/// A `[cluster]` table's TLS keys.
fn tls_keys(ca: &Path, cert: &Path, key: &Path) -> String {
    format!(
        "tls_ca_file = \"{}\"\ntls_cert_file = \"{}\"\ntls_key_file = \"{}\"\n",
        ca.display(),
        cert.display(),
        key.display()
    )
}

/// Waits until `hall`'s log holds every one of `needles` (at most `within`).
fn wait_log(hall: &Hall, needles: &[&str], within: Duration) -> String {
    let start = Instant::now();
    loop {
        let log = hall.daemon.as_ref().unwrap().log();
        if needles.iter().all(|n| log.contains(n)) {
            return log;
        }
        assert!(
            start.elapsed() < within,
            "hall {}: the log never said {needles:?}:\n{log}",
            hall.name
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The lines of `log` that hold `needle`.
fn lines_with<'l>(log: &'l str, needle: &str) -> Vec<&'l str> {
    log.lines().filter(|l| l.contains(needle)).collect()
}

/// Asserts that `hall` records while the broker refuses it: its outbox (its database's last
/// record) grows over `over`, nothing of it is published, and `/metrics` says why.
fn assert_records_while_refused(hall: &Hall, cause: &str, over: Duration) -> (u64, u64) {
    let before = hall.last_seq();
    std::thread::sleep(over);
    let after = hall.last_seq();
    assert!(
        after > before,
        "hall {}: recorded nothing while refused ({before} → {after})",
        hall.name
    );
    // The gauge follows the outbox when the publisher wakes to a commit: on a loaded machine
    // it may be a commit behind the database for a moment, never for long.
    let depth_name = format!("boardscribe_cluster_outbox_depth{{hall=\"{}\"}}", hall.name);
    let asked = Instant::now();
    let metrics = loop {
        let metrics = fleet_common::http_get(hall.http, "/metrics").unwrap();
        let depth = fleet_common::metric(&metrics, &depth_name);
        if depth.is_some_and(|d| d as u64 >= after) {
            break metrics;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(3),
            "hall {}: the outbox holds {depth:?} of {after} records",
            hall.name
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        fleet_common::metric(
            &metrics,
            &format!(
                "boardscribe_cluster_refused{{hall=\"{}\",cause=\"{cause}\"}}",
                hall.name
            )
        ),
        Some(1.0),
        "{metrics}"
    );
    (before, after)
}

/// Asserts that each of `halls`, refused for longer than two probes take (since `started`),
/// said why once, and logged nothing at each retry.
fn assert_said_once(halls: &[&Hall], started: Instant) {
    assert!(started.elapsed() > Duration::from_secs(11));
    for h in halls {
        let log = h.daemon.as_ref().unwrap().log();
        assert_eq!(lines_with(&log, "NATS refuses").len(), 1, "{log}");
        // What async_nats says of each failed attempt ("nats: IO error"), kept out of the log.
        assert_eq!(lines_with(&log, "nats: ").len(), 0, "{log}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_a_hall_reaches_the_event_node_and_a_wrong_ca_or_an_expired_certificate_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    std::fs::create_dir_all(&pki).unwrap();
    let ca = Ca::new(&pki, "event-ca");
    let other_ca = Ca::new(&pki, "other-ca");
    let (server_cert, server_key) = ca.issue(&pki, "nats-server", 2020, 2045);
    let (old_server_cert, old_server_key) = ca.issue(&pki, "nats-server-old", 2020, 2021);
    let (hall_cert, hall_key) = ca.issue(&pki, "hall", 2020, 2045);
    let (old_hall_cert, old_hall_key) = ca.issue(&pki, "hall-old", 2020, 2021);
    let (event_cert, event_key) = ca.issue(&pki, "event", 2020, 2045);
    let nats = tls_server(&dir.path().join("good"), &ca.pem, &server_cert, &server_key);
    let old_nats = tls_server(
        &dir.path().join("old"),
        &ca.pem,
        &old_server_cert,
        &old_server_key,
    );
    let b = boards(4, 60_000);
    // A: the right files. W: the server's certificate checked against another CA. X: its own
    // certificate expired. Y: the server's certificate expired.
    let mut a = Hall::new(
        dir.path(),
        "A",
        &tls_url(&nats),
        b[0].clone(),
        1,
        &tls_keys(&ca.pem, &hall_cert, &hall_key),
    );
    let mut w = Hall::new(
        dir.path(),
        "W",
        &tls_url(&nats),
        b[1].clone(),
        101,
        &tls_keys(&other_ca.pem, &hall_cert, &hall_key),
    );
    let mut x = Hall::new(
        dir.path(),
        "X",
        &tls_url(&nats),
        b[2].clone(),
        201,
        &tls_keys(&ca.pem, &old_hall_cert, &old_hall_key),
    );
    let mut y = Hall::new(
        dir.path(),
        "Y",
        &tls_url(&old_nats),
        b[3].clone(),
        301,
        &tls_keys(&ca.pem, &hall_cert, &hall_key),
    );
    let mut event = EventNode::new(
        dir.path(),
        &tls_url(&nats),
        &["A", "W"],
        &tls_keys(&ca.pem, &event_cert, &event_key),
    );
    // `config check` reads the files before the event: X's certificate has expired.
    let check = std::process::Command::new(fleet_common::BIN)
        .args(["config", "check"])
        .arg(&x.config)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stderr);
    assert!(!check.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "[cluster] tls_cert_file {}: the certificate \"CN=hall-old\" expired at \
             2021-01-01T00:00:00Z; renew it",
            old_hall_cert.display()
        )),
        "{said}"
    );
    event.start();
    for h in [&mut a, &mut w, &mut x, &mut y] {
        h.start();
    }
    let started = Instant::now();
    let fleet = play(&[&a, &w, &x, &y]).await;
    tokio::task::block_in_place(|| {
        let within = Duration::from_secs(20);
        let w_log = wait_log(
            &w,
            &[&format!(
                "its certificate is not signed by the CA in tls_ca_file {}",
                other_ca.pem.display()
            )],
            within,
        );
        let x_log = wait_log(
            &x,
            &[
                &format!(
                    "tls_cert_file {}: the certificate \"CN=hall-old\" expired at \
                     2021-01-01T00:00:00Z",
                    old_hall_cert.display()
                ),
                &format!(
                    "refused the certificate tls_cert_file {}",
                    old_hall_cert.display()
                ),
            ],
            within,
        );
        let y_log = wait_log(
            &y,
            &[&format!(
                "its certificate expired at 2021-01-01T00:00:00Z (checked against tls_ca_file \
                 {})",
                ca.pem.display()
            )],
            within,
        );
        println!(
            "causes found within {:.1} s of the start:\n  W: {}\n  X: {}\n  Y: {}",
            started.elapsed().as_secs_f64(),
            lines_with(&w_log, "refuses").join("\n"),
            lines_with(&x_log, "refuses").join("\n"),
            lines_with(&y_log, "refuses").join("\n"),
        );
        // The halls refused go on recording.
        for (h, cause) in [
            (&w, "unknown_ca"),
            (&x, "client_certificate_refused"),
            (&y, "server_certificate_expired"),
        ] {
            let (before, after) = assert_records_while_refused(h, cause, Duration::from_secs(6));
            println!(
                "hall {}: records {before} → {after} while refused ({cause})",
                h.name
            );
        }
        // Hall A's records reach the event node over TLS.
        assert!(a.last_seq() > 0);
        event.wait_caught_up(&[&a], Duration::from_secs(20));
        assert_eq!(a.metric("boardscribe_cluster_connected"), Some(1.0));
        assert_said_once(&[&x, &y], started);
        // W given the right CA: what it recorded while refused goes too.
        let waiting = w.last_seq();
        w.terminate();
        let text = std::fs::read_to_string(&w.config).unwrap().replace(
            &other_ca.pem.display().to_string(),
            &ca.pem.display().to_string(),
        );
        std::fs::write(&w.config, text).unwrap();
        w.start();
        event.wait_caught_up(&[&a, &w], Duration::from_secs(30));
        assert!(event.seq("W") >= waiting);
        println!(
            "hall W with the right CA: its {waiting} records waiting arrived ({} now)",
            event.seq("W")
        );
        // The refused halls killed (a clean stop would try its outbox for 5 s more).
        x.kill();
        y.kill();
        a.terminate();
        w.terminate();
        event.wait_caught_up(&[&a, &w], Duration::from_secs(20));
        crate::cluster_common::assert_event_holds_halls(&event, &[&a, &w]);
        event.terminate();
        drop((nats, old_nats));
    });
    drop(fleet);
}

/// An nkey's JWT: `claims` (with `iss`, `iat`, `jti` added) signed by `issuer`.
fn jwt(issuer: &nkeys::KeyPair, mut claims: serde_json::Value) -> String {
    claims["iss"] = issuer.public_key().into();
    claims["iat"] = 1_700_000_000.into();
    claims["jti"] = BASE32_NOPAD.encode(&rand::random::<[u8; 32]>()).into();
    let header = BASE64URL_NOPAD.encode(br#"{"typ":"JWT","alg":"ed25519-nkey"}"#);
    let body = BASE64URL_NOPAD.encode(claims.to_string().as_bytes());
    let signed = format!("{header}.{body}");
    let signature = issuer.sign(signed.as_bytes()).unwrap();
    format!("{signed}.{}", BASE64URL_NOPAD.encode(&signature))
}

/// An account's JWT, JetStream enabled without limits if `jetstream` (never for the system
/// account: the server refuses it).
fn account_jwt(
    operator: &nkeys::KeyPair,
    account: &nkeys::KeyPair,
    name: &str,
    jetstream: bool,
) -> String {
    let js = if jetstream { -1 } else { 0 };
    jwt(
        operator,
        serde_json::json!({
            "sub": account.public_key(),
            "name": name,
            "nats": {
                "limits": {
                    "subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1,
                    "wildcards": true, "conn": -1, "leaf": -1,
                    "mem_storage": js, "disk_storage": js, "streams": js, "consumer": js
                },
                "default_permissions": { "pub": {}, "sub": {} },
                "type": "account",
                "version": 2
            }
        }),
    )
}

/// A user of `account` as a `.creds` file at `path`.
fn creds(account: &nkeys::KeyPair, name: &str, path: &Path) {
    let user = nkeys::KeyPair::new_user();
    let token = jwt(
        account,
        serde_json::json!({
            "sub": user.public_key(),
            "name": name,
            "nats": {
                "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1,
                "type": "user", "version": 2
            }
        }),
    );
    std::fs::write(
        path,
        format!(
            "-----BEGIN NATS USER JWT-----\n{token}\n------END NATS USER JWT------\n\n\
             ************************* IMPORTANT *************************\n\
             NKEY Seed printed below can be used to sign and prove identity.\n\
             NKEYs are sensitive and should be treated as secrets.\n\n\
             -----BEGIN USER NKEY SEED-----\n{}\n------END USER NKEY SEED------\n\n\
             *************************************************************\n",
            user.seed().unwrap()
        ),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creds_a_hall_reaches_the_event_node_and_unknown_or_broken_credentials_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("creds");
    std::fs::create_dir_all(&keys).unwrap();
    // Operator mode: the operator signs the accounts, the event's account signs its users.
    let operator = nkeys::KeyPair::new_operator();
    let system = nkeys::KeyPair::new_account();
    let account = nkeys::KeyPair::new_account();
    let stranger = nkeys::KeyPair::new_account();
    let operator_jwt = jwt(
        &operator,
        serde_json::json!({
            "sub": operator.public_key(),
            "name": "boardscribe test operator",
            "nats": { "system_account": system.public_key(), "type": "operator", "version": 2 }
        }),
    );
    let nats = Nats::start_with(
        dir.path(),
        &format!(
            "operator: {operator_jwt}\nsystem_account: {}\nresolver: MEMORY\n\
             resolver_preload: {{\n  {}: {}\n  {}: {}\n}}\n",
            system.public_key(),
            system.public_key(),
            account_jwt(&operator, &system, "SYS", false),
            account.public_key(),
            account_jwt(&operator, &account, "EVENT", true),
        ),
    );
    let (hall_creds, event_creds, stranger_creds, broken_creds) = (
        keys.join("hall.creds"),
        keys.join("event.creds"),
        keys.join("stranger.creds"),
        keys.join("broken.creds"),
    );
    creds(&account, "hall", &hall_creds);
    creds(&account, "event", &event_creds);
    // A user of an account the server does not know.
    creds(&stranger, "stranger", &stranger_creds);
    std::fs::write(&broken_creds, "-----BEGIN NATS USER JWT-----\nnot a jwt\n").unwrap();
    let creds_key = |p: &Path| format!("creds_file = \"{}\"\n", p.display());
    let b = boards(3, 60_000);
    let mut a = Hall::new(
        dir.path(),
        "A",
        &nats.url(),
        b[0].clone(),
        1,
        &creds_key(&hall_creds),
    );
    let mut s = Hall::new(
        dir.path(),
        "S",
        &nats.url(),
        b[1].clone(),
        101,
        &creds_key(&stranger_creds),
    );
    let mut k = Hall::new(
        dir.path(),
        "K",
        &nats.url(),
        b[2].clone(),
        201,
        &creds_key(&broken_creds),
    );
    let mut event = EventNode::new(dir.path(), &nats.url(), &["A"], &creds_key(&event_creds));
    event.start();
    for h in [&mut a, &mut s, &mut k] {
        h.start();
    }
    let started = Instant::now();
    let fleet = play(&[&a, &s, &k]).await;
    tokio::task::block_in_place(|| {
        let within = Duration::from_secs(20);
        let s_log = wait_log(
            &s,
            &[&format!(
                "refused the credentials in creds_file {} (authorization violation)",
                stranger_creds.display()
            )],
            within,
        );
        let k_log = wait_log(
            &k,
            &[
                &format!(
                    "creds_file {}: not a NATS credentials file",
                    broken_creds.display()
                ),
                &format!(
                    "the credentials in creds_file {} cannot be used",
                    broken_creds.display()
                ),
            ],
            within,
        );
        println!(
            "causes found within {:.1} s of the start:\n  S: {}\n  K: {}",
            started.elapsed().as_secs_f64(),
            lines_with(&s_log, "refuses").join("\n"),
            lines_with(&k_log, "creds_file").join("\n"),
        );
        for (h, cause) in [(&s, "credentials_refused"), (&k, "credentials_unusable")] {
            let (before, after) = assert_records_while_refused(h, cause, Duration::from_secs(6));
            println!(
                "hall {}: records {before} → {after} while refused ({cause})",
                h.name
            );
        }
        assert_said_once(&[&s, &k], started);
        // Hall A's records reach the event node, both logged in with their user's creds.
        assert!(a.last_seq() > 0);
        event.wait_caught_up(&[&a], Duration::from_secs(20));
        s.kill();
        k.kill();
        a.terminate();
        event.wait_caught_up(&[&a], Duration::from_secs(20));
        crate::cluster_common::assert_event_holds_halls(&event, &[&a]);
        event.terminate();
    });
    drop(fleet);
}
