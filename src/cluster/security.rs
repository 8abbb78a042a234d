//! NATS TLS and credentials: the files `[cluster]` names, checked before the event, and a
//! connection the servers refuse, told apart by its cause.
//!
//! Flow: [`check_files`] reads `tls_ca_file`, `tls_cert_file`/`tls_key_file` and `creds_file`
//! as the client will (PEM certificates, the key matching the certificate, the validity dates,
//! the user JWT and its seed) and returns every problem naming its file; `config check` prints
//! them and `run`/`event` log them at start (recording goes on: the outbox keeps the records).
//! While connected nothing more happens here. When an attempt to (re)connect fails, async_nats
//! only says the kind of the failure ("IO error"), so [`watch`] connects once more itself, with
//! the same options, to one server at a time and reads the whole error ([`classify`]): a server
//! certificate not signed by the CA file, an expired certificate (the server's or ours), the
//! credentials refused, or the server merely out of reach. Each distinct cause is logged once
//! and published on a watch channel (the hall's `/metrics`) until the client connects again.

use std::{
    error::Error as _,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, SystemTime},
};

use async_nats::{
    ConnectErrorKind, ServerAddr,
    rustls::{
        self, AlertDescription, CertificateError,
        pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject},
    },
};
use data_encoding::BASE64URL_NOPAD;
use jiff::Timestamp;
use tokio::sync::{Notify, watch};
use tracing::{error, info, warn};

use crate::config::ClusterConfig;

/// A certificate that expires within this is warned about (renew it before the event).
pub const EXPIRES_SOON: Duration = Duration::from_secs(14 * 24 * 3600);

/// How long [`watch`] waits between two probes while the client cannot connect.
const PROBE_PAUSE: Duration = Duration::from_secs(10);

/// A problem with a file `[cluster]` names, found before connecting.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FileProblem {
    #[error("{key} {path}: cannot be read: {why}")]
    Unreadable {
        key: &'static str,
        path: PathBuf,
        why: String,
    },
    #[error("{key} {path}: {why}")]
    Unparsable {
        key: &'static str,
        path: PathBuf,
        why: String,
    },
    #[error("{key} {path}: the certificate {subject:?} expired at {not_after}; renew it")]
    Expired {
        key: &'static str,
        path: PathBuf,
        subject: String,
        not_after: Timestamp,
    },
    #[error("{key} {path}: the certificate {subject:?} is not valid before {not_before}")]
    NotYetValid {
        key: &'static str,
        path: PathBuf,
        subject: String,
        not_before: Timestamp,
    },
    #[error(
        "{key} {path}: the certificate {subject:?} expires at {not_after}; renew it before the \
         event"
    )]
    ExpiresSoon {
        key: &'static str,
        path: PathBuf,
        subject: String,
        not_after: Timestamp,
    },
    #[error("tls_key_file {key} is not the key of tls_cert_file {cert}")]
    KeyMismatch { cert: PathBuf, key: PathBuf },
    #[error(
        "creds_file {path}: the user JWT expired at {expired}; have the account issue a new one"
    )]
    CredsExpired { path: PathBuf, expired: Timestamp },
    #[error(
        "creds_file {path}: the seed is not the user JWT's key (the JWT is user {jwt}, the seed \
         user {seed}): the server would refuse it"
    )]
    CredsMismatch {
        path: PathBuf,
        jwt: String,
        seed: String,
    },
}

impl FileProblem {
    /// Whether it works for now (a certificate soon to expire).
    pub fn is_warning(&self) -> bool {
        matches!(self, FileProblem::ExpiresSoon { .. })
    }
}

/// Every problem with the files `cfg` names, as of `now`.
pub fn check_files(cfg: &ClusterConfig, now: SystemTime) -> Vec<FileProblem> {
    let mut found = Vec::new();
    if let Some(ca) = &cfg.tls_ca_file
        && let Some(certs) = read_certs(ca, "tls_ca_file", &mut found)
    {
        for cert in &certs {
            validity(cert, ca, "tls_ca_file", now, &mut found);
        }
    }
    if let (Some(cert), Some(key)) = (&cfg.tls_cert_file, &cfg.tls_key_file) {
        let certs = read_certs(cert, "tls_cert_file", &mut found);
        if let Some(first) = certs.as_ref().and_then(|c| c.first()) {
            validity(first, cert, "tls_cert_file", now, &mut found);
        }
        let key_der = read_key(key, &mut found);
        if let (Some(first), Some(key_der)) = (certs.as_ref().and_then(|c| c.first()), key_der)
            && !key_matches(first, key_der)
        {
            found.push(FileProblem::KeyMismatch {
                cert: cert.clone(),
                key: key.clone(),
            });
        }
    }
    if let Some(creds) = &cfg.creds_file
        && let Err(p) = check_creds(creds, now)
    {
        found.push(p);
    }
    found
}

/// The PEM certificates of `path` (at least one), or the problem said.
fn read_certs(
    path: &Path,
    key: &'static str,
    found: &mut Vec<FileProblem>,
) -> Option<Vec<CertificateDer<'static>>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            found.push(FileProblem::Unreadable {
                key,
                path: path.to_owned(),
                why: e.to_string(),
            });
            return None;
        }
    };
    let unparsable = |why: String| FileProblem::Unparsable {
        key,
        path: path.to_owned(),
        why,
    };
    match CertificateDer::pem_slice_iter(&bytes).collect::<Result<Vec<_>, _>>() {
        Ok(certs) if certs.is_empty() => {
            found.push(unparsable(
                "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".to_owned(),
            ));
            None
        }
        Ok(certs) => {
            for cert in &certs {
                if let Err(e) = x509_parser::parse_x509_certificate(cert) {
                    found.push(unparsable(format!("a certificate does not parse: {e}")));
                    return None;
                }
            }
            Some(certs)
        }
        Err(e) => {
            found.push(unparsable(format!("not PEM certificates: {e}")));
            None
        }
    }
}

/// The PEM private key of `path`, or the problem said.
fn read_key(path: &Path, found: &mut Vec<FileProblem>) -> Option<PrivateKeyDer<'static>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            found.push(FileProblem::Unreadable {
                key: "tls_key_file",
                path: path.to_owned(),
                why: e.to_string(),
            });
            return None;
        }
    };
    match PrivateKeyDer::from_pem_slice(&bytes) {
        Ok(k) => Some(k),
        Err(e) => {
            found.push(FileProblem::Unparsable {
                key: "tls_key_file",
                path: path.to_owned(),
                why: format!("no PEM private key: {e}"),
            });
            None
        }
    }
}

/// Whether `key` is the private key of `cert`'s public key.
fn key_matches(cert: &CertificateDer<'_>, key: PrivateKeyDer<'static>) -> bool {
    let provider = rustls::crypto::ring::default_provider();
    let Ok(signing) = provider.key_provider.load_private_key(key) else {
        return false;
    };
    let Ok((_, parsed)) = x509_parser::parse_x509_certificate(cert) else {
        return false;
    };
    signing
        .public_key()
        .is_some_and(|spki| spki.as_ref() == parsed.public_key().raw)
}

/// A certificate's validity window against `now`: expired, not yet valid, or soon to expire.
fn validity(
    cert: &CertificateDer<'_>,
    path: &Path,
    key: &'static str,
    now: SystemTime,
    found: &mut Vec<FileProblem>,
) {
    let Ok((_, parsed)) = x509_parser::parse_x509_certificate(cert) else {
        return;
    };
    let now = unix_seconds(now);
    let subject = parsed.subject().to_string();
    let v = parsed.validity();
    let (not_before, not_after) = (v.not_before.timestamp(), v.not_after.timestamp());
    let path = path.to_owned();
    if now > not_after {
        found.push(FileProblem::Expired {
            key,
            path,
            subject,
            not_after: stamp(not_after),
        });
    } else if now < not_before {
        found.push(FileProblem::NotYetValid {
            key,
            path,
            subject,
            not_before: stamp(not_before),
        });
    } else if not_after - now < EXPIRES_SOON.as_secs() as i64 {
        found.push(FileProblem::ExpiresSoon {
            key,
            path,
            subject,
            not_after: stamp(not_after),
        });
    }
}

fn unix_seconds(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64),
    }
}

/// `secs` since the epoch as a time to show (the epoch itself if out of range).
fn stamp(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// A `.creds` file: a user JWT and its seed, as the client reads them; the seed is the JWT's
/// user's and the JWT has not expired.
fn check_creds(path: &Path, now: SystemTime) -> Result<(), FileProblem> {
    let text = std::fs::read_to_string(path).map_err(|e| FileProblem::Unreadable {
        key: "creds_file",
        path: path.to_owned(),
        why: e.to_string(),
    })?;
    let unparsable = |why: String| FileProblem::Unparsable {
        key: "creds_file",
        path: path.to_owned(),
        why,
    };
    // The client's own reading first: what it refuses, it says why.
    async_nats::ConnectOptions::new()
        .credentials(&text)
        .map_err(|e| unparsable(format!("not a NATS credentials file: {e}")))?;
    let jwt = after_line(&text, "BEGIN NATS USER JWT")
        .ok_or_else(|| unparsable("no user JWT".to_owned()))?;
    let seed = after_line(&text, "BEGIN USER NKEY SEED")
        .ok_or_else(|| unparsable("no user seed".to_owned()))?;
    let claims = jwt
        .split('.')
        .nth(1)
        .and_then(|c| BASE64URL_NOPAD.decode(c.as_bytes()).ok())
        .and_then(|c| serde_json::from_slice::<serde_json::Value>(&c).ok())
        .ok_or_else(|| unparsable("the user JWT does not decode".to_owned()))?;
    let seed_user = nkeys::KeyPair::from_seed(seed)
        .map_err(|e| unparsable(format!("the seed: {e}")))?
        .public_key();
    let jwt_user = claims["sub"].as_str().unwrap_or_default().to_owned();
    if jwt_user != seed_user {
        return Err(FileProblem::CredsMismatch {
            path: path.to_owned(),
            jwt: jwt_user,
            seed: seed_user,
        });
    }
    if let Some(exp) = claims["exp"].as_i64()
        && exp > 0
        && unix_seconds(now) > exp
    {
        return Err(FileProblem::CredsExpired {
            path: path.to_owned(),
            expired: stamp(exp),
        });
    }
    Ok(())
}

/// The first non-empty line after the line holding `marker`, trimmed.
fn after_line<'t>(text: &'t str, marker: &str) -> Option<&'t str> {
    text.lines()
        .skip_while(|l| !l.contains(marker))
        .skip(1)
        .map(str::trim)
        .find(|l| !l.is_empty())
}

/// Why a connection to the event's NATS servers failed, as far as it can be told.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConnectFailure {
    #[error(
        "NATS server {server}: its certificate is not signed by the CA in tls_ca_file {ca}: \
         give the CA that signed the server's certificate"
    )]
    UnknownCa { server: String, ca: String },
    #[error(
        "NATS server {server}: its certificate expired{at} (checked against tls_ca_file {ca}): \
         the server needs a renewed certificate",
        at = after_at(.not_after)
    )]
    ServerCertExpired {
        server: String,
        ca: String,
        not_after: Option<Timestamp>,
    },
    #[error(
        "NATS server {server}: its certificate is not valid yet (checked against tls_ca_file \
         {ca}): check both machines' clocks"
    )]
    ServerCertNotYetValid { server: String, ca: String },
    #[error(
        "NATS server {server}: its certificate does not name the host of the URL: use the name \
         or address the certificate was made for"
    )]
    ServerName { server: String },
    #[error("NATS server {server} refused the certificate tls_cert_file {cert} ({alert}){why}")]
    ClientCertRefused {
        server: String,
        cert: String,
        alert: String,
        why: String,
    },
    #[error(
        "NATS server {server} requires a client certificate: set tls_cert_file and tls_key_file"
    )]
    ClientCertRequired { server: String },
    #[error(
        "NATS server {server} refused the credentials in creds_file {creds} (authorization \
         violation): the user is not one the server's operator and accounts know, or was revoked"
    )]
    CredentialsRefused { server: String, creds: String },
    #[error(
        "NATS server {server}: the credentials in creds_file {creds} cannot be used ({why}); fix \
         the file and restart"
    )]
    CredentialsUnusable {
        server: String,
        creds: String,
        why: String,
    },
    #[error(
        "NATS server {server} refused the connection (authorization violation): give the user \
         and password in the URL, or a creds_file"
    )]
    Unauthorized { server: String },
    #[error("NATS server {server}: TLS: {why}")]
    Tls { server: String, why: String },
    #[error("NATS server {server}: the TLS files ({files}) cannot be used: {why}")]
    TlsFiles {
        server: String,
        files: String,
        why: String,
    },
    #[error("NATS server {server} is out of reach: {why}")]
    Unreachable { server: String, why: String },
}

fn after_at(t: &Option<Timestamp>) -> String {
    t.map(|t| format!(" at {t}")).unwrap_or_default()
}

impl ConnectFailure {
    /// Whether the server refused this client (a file to fix), rather than being out of reach.
    pub fn is_refusal(&self) -> bool {
        !matches!(self, ConnectFailure::Unreachable { .. })
    }

    /// A short name of the cause, for `/metrics`.
    pub fn cause(&self) -> &'static str {
        match self {
            ConnectFailure::UnknownCa { .. } => "unknown_ca",
            ConnectFailure::ServerCertExpired { .. } => "server_certificate_expired",
            ConnectFailure::ServerCertNotYetValid { .. } => "server_certificate_not_yet_valid",
            ConnectFailure::ServerName { .. } => "server_name",
            ConnectFailure::ClientCertRefused { .. } => "client_certificate_refused",
            ConnectFailure::ClientCertRequired { .. } => "client_certificate_required",
            ConnectFailure::CredentialsRefused { .. } => "credentials_refused",
            ConnectFailure::CredentialsUnusable { .. } => "credentials_unusable",
            ConnectFailure::Unauthorized { .. } => "unauthorized",
            ConnectFailure::Tls { .. } => "tls",
            ConnectFailure::TlsFiles { .. } => "tls_files",
            ConnectFailure::Unreachable { .. } => "unreachable",
        }
    }
}

/// The rustls error somewhere in `err`'s chain (io errors looked into).
fn rustls_error<'e>(err: &'e (dyn std::error::Error + 'static)) -> Option<&'e rustls::Error> {
    let mut at: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = at {
        if let Some(r) = e.downcast_ref::<rustls::Error>() {
            return Some(r);
        }
        if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            && let Some(r) = rustls_error(inner)
        {
            return Some(r);
        }
        at = e.source();
    }
    None
}

/// What `err`, a failed connection to `server` with `cfg`'s files, means. `creds_problem`: why
/// the creds file could not be loaded at start, if it could not.
pub fn classify(
    err: &async_nats::ConnectError,
    server: &str,
    cfg: &ClusterConfig,
    creds_problem: Option<&str>,
    now: SystemTime,
) -> ConnectFailure {
    let server = server.to_owned();
    let ca = cfg.tls_ca_file.as_ref().map_or_else(
        || "(none: the machine's own CAs)".to_owned(),
        |p| p.display().to_string(),
    );
    let cert = cfg.tls_cert_file.as_ref().map(|p| p.display().to_string());
    match err.kind() {
        ConnectErrorKind::AuthorizationViolation | ConnectErrorKind::Authentication => {
            return match (&cfg.creds_file, creds_problem) {
                (Some(creds), Some(why)) => ConnectFailure::CredentialsUnusable {
                    server,
                    creds: creds.display().to_string(),
                    why: why.to_owned(),
                },
                (Some(creds), None) => ConnectFailure::CredentialsRefused {
                    server,
                    creds: creds.display().to_string(),
                },
                (None, _) => ConnectFailure::Unauthorized { server },
            };
        }
        ConnectErrorKind::Tls => {
            let files: Vec<String> = [
                ("tls_ca_file", &cfg.tls_ca_file),
                ("tls_cert_file", &cfg.tls_cert_file),
                ("tls_key_file", &cfg.tls_key_file),
            ]
            .into_iter()
            .filter_map(|(key, p)| p.as_ref().map(|p| format!("{key} {}", p.display())))
            .collect();
            return ConnectFailure::TlsFiles {
                server,
                files: files.join(", "),
                why: err
                    .source()
                    .map_or_else(|| err.to_string(), |s| s.to_string()),
            };
        }
        _ => {}
    }
    let Some(tls) = rustls_error(err) else {
        return ConnectFailure::Unreachable {
            server,
            why: err.to_string(),
        };
    };
    match tls {
        rustls::Error::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                ConnectFailure::UnknownCa { server, ca }
            }
            CertificateError::Expired => ConnectFailure::ServerCertExpired {
                server,
                ca,
                not_after: None,
            },
            CertificateError::ExpiredContext { not_after, .. } => {
                ConnectFailure::ServerCertExpired {
                    server,
                    ca,
                    not_after: Some(stamp(not_after.as_secs() as i64)),
                }
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                ConnectFailure::ServerCertNotYetValid { server, ca }
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                ConnectFailure::ServerName { server }
            }
            other => ConnectFailure::Tls {
                server,
                why: format!("the server's certificate: {other:?}"),
            },
        },
        rustls::Error::AlertReceived(alert) => match (alert, cert) {
            (AlertDescription::CertificateRequired, None) => {
                ConnectFailure::ClientCertRequired { server }
            }
            (
                AlertDescription::BadCertificate
                | AlertDescription::CertificateExpired
                | AlertDescription::CertificateRevoked
                | AlertDescription::CertificateUnknown
                | AlertDescription::UnsupportedCertificate
                | AlertDescription::UnknownCA
                | AlertDescription::AccessDenied
                | AlertDescription::CertificateRequired,
                Some(cert),
            ) => {
                // Our own certificate's dates, read again now: the likeliest cause, said.
                let own = ClusterConfig {
                    tls_ca_file: None,
                    creds_file: None,
                    ..cfg.clone()
                };
                let why = check_files(&own, now)
                    .into_iter()
                    .find(|p| !p.is_warning())
                    .map_or_else(
                        || {
                            ": it is not signed by a CA the server trusts, or the server's \
                             tls verify refuses it"
                                .to_owned()
                        },
                        |p| format!(": {p}"),
                    );
                ConnectFailure::ClientCertRefused {
                    server,
                    cert,
                    alert: format!("TLS alert {alert:?}"),
                    why,
                }
            }
            (alert, _) => ConnectFailure::Tls {
                server,
                why: format!("the server sent TLS alert {alert:?}"),
            },
        },
        other => ConnectFailure::Tls {
            server,
            why: other.to_string(),
        },
    }
}

/// What the connection's events tell [`watch`]: whether connected, and that an attempt failed.
#[derive(Debug, Default)]
pub struct LinkState {
    connected: AtomicBool,
    failed: Notify,
}

impl LinkState {
    pub fn connected(&self, yes: bool) {
        self.connected.store(yes, Ordering::Relaxed);
    }

    pub fn attempt_failed(&self) {
        self.failed.notify_one();
    }
}

/// While the client cannot connect, finds out why (a probe of its own to each server, at most
/// every [`PROBE_PAUSE`]), logs each new cause once and publishes it on `failure`; ends when no
/// one reads `failure` any more.
pub async fn watch(
    cfg: ClusterConfig,
    addrs: Vec<ServerAddr>,
    creds_problem: Option<String>,
    state: Arc<LinkState>,
    failure: Arc<watch::Sender<Option<ConnectFailure>>>,
) {
    loop {
        state.failed.notified().await;
        if failure.is_closed() {
            return;
        }
        if state.connected.load(Ordering::Relaxed) {
            continue;
        }
        let mut found = None;
        for addr in &addrs {
            let server = addr.as_url_str().to_owned();
            let opts = super::options(&cfg)
                .await
                .0
                .connection_timeout(Duration::from_secs(5));
            match opts.connect(addr.clone()).await {
                Ok(_probe) => {
                    found = None;
                    break;
                }
                Err(e) => {
                    let f = classify(
                        &e,
                        &server,
                        &cfg,
                        creds_problem.as_deref(),
                        SystemTime::now(),
                    );
                    // A refusal says more than another server out of reach.
                    let better = match &found {
                        None => true,
                        Some(old) => f.is_refusal() && !ConnectFailure::is_refusal(old),
                    };
                    if better {
                        found = Some(f);
                    }
                }
            }
        }
        // Connected meanwhile: nothing to say.
        if state.connected.load(Ordering::Relaxed) {
            continue;
        }
        failure.send_if_modified(|now| {
            if *now == found {
                return false;
            }
            match &found {
                Some(f) if f.is_refusal() => error!(
                    cause = %f,
                    "NATS refuses this client; records wait in the outbox"
                ),
                Some(f) => warn!(cause = %f, "NATS cannot be reached; records wait in the outbox"),
                None => info!("NATS answers again"),
            }
            *now = found.clone();
            true
        });
        tokio::time::sleep(PROBE_PAUSE).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_named() {
        let cfg = ClusterConfig {
            urls: vec!["tls://127.0.0.1:4222".to_owned()],
            tls_ca_file: Some(PathBuf::from("/nonexistent/ca.pem")),
            creds_file: Some(PathBuf::from("/nonexistent/hall.creds")),
            ..ClusterConfig::default()
        };
        let found = check_files(&cfg, SystemTime::now());
        let text: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert_eq!(found.len(), 2, "{text:?}");
        assert!(text[0].starts_with("tls_ca_file /nonexistent/ca.pem: cannot be read"));
        assert!(text[1].starts_with("creds_file /nonexistent/hall.creds: cannot be read"));
    }

    /// A `.creds` file for a JWT naming user `sub` (expiring at `exp`) and `seed`; the JWT's
    /// signature is not checked here (the server checks it).
    fn creds_file(dir: &Path, sub: &str, seed: &str, exp: Option<i64>) -> PathBuf {
        let mut claims = serde_json::json!({ "sub": sub, "nats": { "type": "user" } });
        if let Some(exp) = exp {
            claims["exp"] = exp.into();
        }
        let jwt = format!(
            "{}.{}.{}",
            BASE64URL_NOPAD.encode(br#"{"typ":"JWT","alg":"ed25519-nkey"}"#),
            BASE64URL_NOPAD.encode(claims.to_string().as_bytes()),
            BASE64URL_NOPAD.encode(b"signature")
        );
        let path = dir.join("user.creds");
        std::fs::write(
            &path,
            format!(
                "-----BEGIN NATS USER JWT-----\n{jwt}\n------END NATS USER JWT------\n\n\
                 -----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"
            ),
        )
        .unwrap();
        path
    }

    #[test]
    fn a_creds_file_is_its_jwts_user_and_not_expired() {
        let dir = tempfile::tempdir().unwrap();
        let (user, other) = (nkeys::KeyPair::new_user(), nkeys::KeyPair::new_user());
        let seed = user.seed().unwrap();
        let now = SystemTime::now();
        let good = creds_file(dir.path(), &user.public_key(), &seed, None);
        assert_eq!(check_creds(&good, now), Ok(()));
        let mismatch = creds_file(dir.path(), &other.public_key(), &seed, None);
        assert!(matches!(
            check_creds(&mismatch, now),
            Err(FileProblem::CredsMismatch { .. })
        ));
        let expired = creds_file(dir.path(), &user.public_key(), &seed, Some(1_600_000_000));
        let err = check_creds(&expired, now).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "creds_file {}: the user JWT expired at 2020-09-13T12:26:40Z; have the account \
                 issue a new one",
                expired.display()
            )
        );
    }

    #[test]
    fn a_key_not_the_certificates_and_a_certificate_soon_to_expire_are_said() {
        use rcgen::{CertificateParams, KeyPair, date_time_ymd};
        let dir = tempfile::tempdir().unwrap();
        let soon = jiff::tz::Offset::UTC
            .to_datetime(
                Timestamp::now()
                    .checked_add(jiff::SignedDuration::from_hours(3 * 24))
                    .unwrap(),
            )
            .date();
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
        params.not_before = date_time_ymd(2020, 1, 1);
        params.not_after =
            date_time_ymd(i32::from(soon.year()), soon.month() as u8, soon.day() as u8);
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        let (cert_path, key_path) = (dir.path().join("hall.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert_path, cert.pem()).unwrap();
        std::fs::write(&key_path, KeyPair::generate().unwrap().serialize_pem()).unwrap();
        let cfg = ClusterConfig {
            tls_cert_file: Some(cert_path.clone()),
            tls_key_file: Some(key_path),
            ..ClusterConfig::default()
        };
        let found = check_files(&cfg, SystemTime::now());
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].is_warning(), "{}", found[0]);
        assert!(
            matches!(found[1], FileProblem::KeyMismatch { .. }),
            "{}",
            found[1]
        );
        // The right key: only the warning.
        std::fs::write(dir.path().join("key.pem"), key.serialize_pem()).unwrap();
        let found = check_files(&cfg, SystemTime::now());
        assert_eq!(found.len(), 1, "{found:?}");
    }

    #[test]
    fn a_creds_file_without_a_jwt_is_unparsable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.creds");
        std::fs::write(&path, "not credentials\n").unwrap();
        let err = check_creds(&path, SystemTime::now()).unwrap_err();
        assert!(
            matches!(
                err,
                FileProblem::Unparsable {
                    key: "creds_file",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains(&path.display().to_string()));
    }
}
