//! Push to a Lichess broadcast round: the round's PGN is POSTed after each change.
//!
//! Flow: the daemon bumps a `tokio::sync::watch` counter after each durable change;
//! [`LichessPush::run`] wakes, builds the round PGN with the caller's function (on a blocking
//! thread, so a store read never stalls the runtime) and POSTs it to
//! `{base}/api/broadcast/round/{id}/push` (relay notes section 2). Changes that arrive while a push
//! is under way collapse into one more push of the newest PGN. 5xx answers, 429 and connection
//! errors are retried with exponential backoff and jitter (capped, 60 s by default; a 429 waits
//! its `Retry-After` or the cap), rebuilding the body if something changed meanwhile; any other
//! 4xx gives up on that body and logs Lichess's answer. Recording never waits for any of this.
//! The token is read from a file and kept in a [`Token`], which never prints.

use std::{
    fmt,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use reqwest::{
    StatusCode,
    header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, RETRY_AFTER},
};
use serde::Deserialize;
use tokio::sync::watch;

use super::folder::FolderConfig;

/// Where Lichess is, unless the config says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://lichess.org";

/// The relay outputs of the venue config: `[relay.folder]` and `[relay.lichess]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelayConfig {
    #[serde(default)]
    pub folder: Option<FolderConfig>,
    #[serde(default)]
    pub lichess: Option<LichessConfig>,
}

/// `[relay.lichess]`: the broadcast round to push to and the file holding the API token.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LichessConfig {
    /// The round's id (the 8 characters after the round's name in its URL).
    pub round: String,
    /// A file holding a token with the `study:write` scope.
    pub token_file: PathBuf,
    #[serde(default = "default_base_url")]
    pub base_url: String,
}

fn default_base_url() -> String {
    DEFAULT_BASE_URL.to_owned()
}

/// Errors setting up the push client.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error("token file {}: {source}", path.display())]
    TokenFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the token is empty or not printable ASCII")]
    InvalidToken,
    #[error("round id {0:?} is not 1 to 32 letters and digits")]
    InvalidRound(String),
    #[error("base URL {0:?} is not an http:// or https:// URL")]
    InvalidBaseUrl(String),
    #[error("http client: {0}")]
    Client(#[from] reqwest::Error),
}

/// An API token: sent in the `Authorization` header and nowhere else; prints as `<redacted>`.
#[derive(Clone)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Token {
    /// A token from its text (surrounding blanks dropped).
    pub fn new(text: &str) -> Result<Token, PushError> {
        let text = text.trim();
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(PushError::InvalidToken);
        }
        Ok(Token(text.to_owned()))
    }

    /// The token in `path` (its first line); warns if others may read the file.
    pub fn from_file(path: &Path) -> Result<Token, PushError> {
        let err = |source| PushError::TokenFile {
            path: path.to_owned(),
            source,
        };
        let text = std::fs::read_to_string(path).map_err(err)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(path).map_err(err)?.permissions().mode();
            if mode & 0o077 != 0 {
                tracing::warn!(path = %path.display(), mode = format!("{:o}", mode & 0o777),
                    "the token file is readable by others; chmod 600 it");
            }
        }
        Token::new(text.lines().next().unwrap_or_default())
    }

    fn bearer(&self) -> Result<HeaderValue, PushError> {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", self.0))
            .map_err(|_| PushError::InvalidToken)?;
        value.set_sensitive(true);
        Ok(value)
    }
}

/// Retry delays: `initial`, doubled after each failure up to `max`, each drawn in `[d/2, d]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(60),
        }
    }
}

impl Backoff {
    /// The delay before retry number `attempt` (0-based), with jitter.
    pub fn delay(&self, attempt: u32, rng: &mut impl rand::Rng) -> Duration {
        let full = self
            .initial
            .saturating_mul(1u32.checked_shl(attempt.min(30)).unwrap_or(u32::MAX))
            .min(self.max);
        let half = full / 2;
        half + full.saturating_sub(half).mul_f64(rng.random::<f64>())
    }
}

/// What one POST came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attempt {
    /// 2xx: Lichess took the PGN; `rejected` games it refused, with its reason.
    Accepted { games: usize, rejected: Vec<String> },
    /// 5xx, 429 or no answer: worth trying again (after `after` if Lichess said so).
    Retry {
        reason: String,
        after: Option<Duration>,
    },
    /// Any other answer: this PGN will not be taken as it is.
    Refused { status: u16, body: String },
}

/// The push client of one broadcast round.
#[derive(Debug)]
pub struct LichessPush {
    url: String,
    authorization: HeaderValue,
    backoff: Backoff,
    client: reqwest::Client,
}

impl LichessPush {
    /// A client for round `round_id` at `base_url` (e.g. [`DEFAULT_BASE_URL`]).
    pub fn new(base_url: &str, round_id: &str, token: &Token) -> Result<LichessPush, PushError> {
        let base = base_url.trim_end_matches('/');
        if !(base.starts_with("https://") || base.starts_with("http://")) || base.contains(' ') {
            return Err(PushError::InvalidBaseUrl(base_url.to_owned()));
        }
        if round_id.is_empty()
            || round_id.len() > 32
            || !round_id.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            return Err(PushError::InvalidRound(round_id.to_owned()));
        }
        let client = reqwest::Client::builder()
            .user_agent(concat!("boardscribe/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .build()?;
        Ok(LichessPush {
            url: format!("{base}/api/broadcast/round/{round_id}/push"),
            authorization: token.bearer()?,
            backoff: Backoff::default(),
            client,
        })
    }

    /// A client whose token is read from `token_file`.
    pub fn from_token_file(
        base_url: &str,
        round_id: &str,
        token_file: &Path,
    ) -> Result<LichessPush, PushError> {
        LichessPush::new(base_url, round_id, &Token::from_file(token_file)?)
    }

    /// A client for the `[relay.lichess]` config.
    pub fn from_config(config: &LichessConfig) -> Result<LichessPush, PushError> {
        LichessPush::from_token_file(&config.base_url, &config.round, &config.token_file)
    }

    /// The same client with other retry delays (tests use milliseconds).
    pub fn with_backoff(mut self, backoff: Backoff) -> LichessPush {
        self.backoff = backoff;
        self
    }

    /// The URL pushed to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// One POST of `pgn`.
    pub async fn push_once(&self, pgn: String) -> Attempt {
        let sent = self
            .client
            .post(&self.url)
            .header(AUTHORIZATION, self.authorization.clone())
            .header(CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(pgn)
            .send()
            .await;
        let response = match sent {
            Ok(r) => r,
            Err(e) => {
                return Attempt::Retry {
                    reason: error_chain(&e),
                    after: None,
                };
            }
        };
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = match response.text().await {
            Ok(body) => body,
            Err(e) if status.is_success() => {
                // The PGN arrived; only the report on it was lost.
                tracing::debug!(error = %error_chain(&e), "push answer unreadable");
                String::new()
            }
            Err(e) => {
                return Attempt::Retry {
                    reason: format!("{status}, answer unreadable: {}", error_chain(&e)),
                    after: None,
                };
            }
        };
        if status.is_success() {
            let (games, rejected) = push_report(&body);
            Attempt::Accepted { games, rejected }
        } else if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
            let after = (status == StatusCode::TOO_MANY_REQUESTS)
                .then(|| retry_after.unwrap_or(self.backoff.max));
            Attempt::Retry {
                reason: format!("{status}: {}", excerpt(&body)),
                after,
            }
        } else {
            Attempt::Refused {
                status: status.as_u16(),
                body: excerpt(&body),
            }
        }
    }

    /// Pushes `body()` now and after every change on `changes`, until the sender is dropped.
    ///
    /// `body` reads the round (e.g. [`round_pgn`](crate::export::round::round_pgn) of
    /// `Store::round_games`); it runs on a blocking thread. An empty body is not pushed.
    pub async fn run<F, E>(self, changes: watch::Receiver<u64>, body: F)
    where
        F: Fn() -> Result<String, E> + Send + Sync + 'static,
        E: fmt::Display + Send + 'static,
    {
        self.run_every(changes, None, body).await;
    }

    /// [`LichessPush::run`], also rebuilding the body every `tick` if given (the clocks run
    /// between moves, a delayed broadcast's window slides): a body the same as the last one
    /// Lichess took is not pushed again.
    pub async fn run_every<F, E>(
        self,
        mut changes: watch::Receiver<u64>,
        tick: Option<Duration>,
        body: F,
    ) where
        F: Fn() -> Result<String, E> + Send + Sync + 'static,
        E: fmt::Display + Send + 'static,
    {
        let body = Arc::new(body);
        tracing::info!(url = %self.url, "pushing the round to Lichess");
        let mut first = true;
        let mut last_taken: Option<String> = None;
        loop {
            if !first && !super::folder::next_turn(&mut changes, tick).await {
                return;
            }
            first = false;
            changes.borrow_and_update();
            let Some(mut text) = build(&body).await else {
                continue;
            };
            if last_taken.as_deref() == Some(text.as_str()) {
                continue;
            }
            let mut attempt = 0;
            loop {
                if text.trim().is_empty() {
                    tracing::debug!("no games in the round yet; nothing pushed");
                    break;
                }
                match self.push_once(text.clone()).await {
                    Attempt::Accepted { games, rejected } => {
                        tracing::debug!(bytes = text.len(), games, "round pushed");
                        last_taken = Some(text.clone());
                        for reason in rejected {
                            tracing::warn!(%reason, "Lichess refused a game of the push");
                        }
                        break;
                    }
                    Attempt::Refused { status, body } => {
                        tracing::error!(status, answer = %body, "Lichess refused the push; waiting for the next change");
                        break;
                    }
                    Attempt::Retry { reason, after } => {
                        let delay =
                            after.unwrap_or_else(|| self.backoff.delay(attempt, &mut rand::rng()));
                        attempt = attempt.saturating_add(1);
                        tracing::warn!(%reason, retry_in_ms = delay.as_millis() as u64, attempt, "push failed");
                        tokio::time::sleep(delay).await;
                        match changes.has_changed() {
                            Err(_) => {
                                tracing::warn!("shutting down before Lichess took the last push");
                                return;
                            }
                            Ok(true) => {
                                changes.borrow_and_update();
                                if let Some(newer) = build(&body).await {
                                    text = newer;
                                }
                            }
                            Ok(false) => {}
                        }
                    }
                }
            }
        }
    }
}

/// Runs `body` on a blocking thread; `None` (logged) when it fails.
async fn build<F, E>(body: &Arc<F>) -> Option<String>
where
    F: Fn() -> Result<String, E> + Send + Sync + 'static,
    E: fmt::Display + Send + 'static,
{
    let body = Arc::clone(body);
    match tokio::task::spawn_blocking(move || body()).await {
        Ok(Ok(text)) => Some(text),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "the round PGN could not be built");
            None
        }
        Err(e) => {
            tracing::error!(error = %e, "the round PGN builder failed");
            None
        }
    }
}

/// Games taken and the reasons for games refused, from Lichess's push answer
/// (`{"games":[{"tags":{…},"moves":N} | {"tags":{…},"error":"…"}]}`).
fn push_report(body: &str) -> (usize, Vec<String>) {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(body) else {
        return (0, Vec::new());
    };
    let games = value
        .get("games")
        .and_then(|g| g.as_array())
        .cloned()
        .unwrap_or_default();
    let rejected = games
        .iter()
        .filter_map(|g| {
            let error = g.get("error")?.as_str()?;
            let tag = |k: &str| {
                g.get("tags")
                    .and_then(|t| t.get(k))
                    .and_then(|v| v.as_str())
                    .unwrap_or("?")
                    .to_owned()
            };
            Some(format!(
                "round {} {} - {}: {error}",
                tag("Round"),
                tag("White"),
                tag("Black")
            ))
        })
        .collect();
    (games.len(), rejected)
}

/// An error with its causes (reqwest's own message is often just "error sending request").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

/// The start of an answer, for the log.
fn excerpt(body: &str) -> String {
    const MAX: usize = 500;
    match body.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &body[..i]),
        None => body.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng as _;

    use super::*;

    #[test]
    fn tokens_never_print() {
        let t = Token::new("  lip_secret123\n").unwrap();
        assert_eq!(format!("{t:?}"), "<redacted>");
        let push = LichessPush::new("https://lichess.org/", "AbCd1234", &t).unwrap();
        let shown = format!("{push:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert_eq!(
            push.url(),
            "https://lichess.org/api/broadcast/round/AbCd1234/push"
        );
        assert!(matches!(Token::new(" \n"), Err(PushError::InvalidToken)));
        assert!(matches!(Token::new("a b"), Err(PushError::InvalidToken)));
        assert!(matches!(
            LichessPush::new("https://lichess.org", "../x", &t),
            Err(PushError::InvalidRound(_))
        ));
        assert!(matches!(
            LichessPush::new("lichess.org", "AbCd1234", &t),
            Err(PushError::InvalidBaseUrl(_))
        ));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter() {
        let b = Backoff::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for attempt in 0..40 {
            let full = Duration::from_secs(1 << attempt.min(6)).min(b.max);
            let d = b.delay(attempt, &mut rng);
            assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?}");
        }
    }

    #[test]
    fn push_answers_name_refused_games() {
        let body = r#"{"games":[{"tags":{"White":"A","Black":"B","Round":"1.1"},"moves":3},
            {"tags":{"White":"C","Black":"D","Round":"1.2"},"error":"illegal move"}]}"#;
        assert_eq!(
            push_report(body),
            (2, vec!["round 1.2 C - D: illegal move".to_owned()])
        );
        assert_eq!(push_report("not json"), (0, Vec::new()));
    }

    #[test]
    fn config_reads_with_the_default_base() {
        let c: RelayConfig = serde_json::from_str(
            r#"{"folder":{"dir":"/srv/relay"},"lichess":{"round":"AbCd1234","token_file":"/etc/t"}}"#,
        )
        .unwrap();
        let l = c.lichess.unwrap();
        assert_eq!(l.base_url, DEFAULT_BASE_URL);
        assert_eq!(c.folder.unwrap().dir, PathBuf::from("/srv/relay"));
        assert!(serde_json::from_str::<RelayConfig>(r#"{"lichess":{"round":"x"}}"#).is_err());
        assert_eq!(
            serde_json::from_str::<RelayConfig>("{}").unwrap(),
            RelayConfig::default()
        );
    }
}
