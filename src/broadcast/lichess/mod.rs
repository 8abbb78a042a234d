//! Push to Lichess broadcast rounds: each round's PGN is POSTed when it changes.
//!
//! Flow: the daemon bumps a `tokio::sync::watch` counter after each durable change; a push
//! queue ([`run_queue`], one per token: the API takes one request at a time) wakes, builds every
//! due round's body with the caller's function (on a blocking thread, so a store read never
//! stalls the runtime; which rounds and games is [`plan`]) and POSTs each body that differs from
//! the one Lichess last took to `{base}/api/broadcast/round/{id}/push` (relay notes section 2),
//! one after the other. A body Lichess already has is pushed again only as a keep-alive, every
//! [`KEEP_ALIVE`] while its round has a game without a result. Changes that arrive while a push
//! is under way collapse into one more turn. 5xx answers, 429 and connection errors are retried
//! with exponential backoff and jitter (capped, 60 s by default; a 429 waits its `Retry-After`
//! or the cap), rebuilding the bodies first; any other 4xx, or a round that refuses pushes (one
//! with a source URL), gives up on that body and logs Lichess's answer. Recording never waits
//! for any of this. The token is read from a file and kept in a [`Token`], which never prints.

use std::{
    fmt,
    path::{Path, PathBuf},
    time::Duration,
};

use reqwest::{
    StatusCode,
    header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, RETRY_AFTER},
};
use tokio::sync::watch;

use super::{Output, Turn, Wake};

pub mod plan;

/// Where Lichess is, unless the config says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://lichess.org";

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

/// How often a body Lichess already has is pushed again while its round is in play.
pub const KEEP_ALIVE: Duration = Duration::from_secs(60);

/// A client of the push API with one token: it pushes to any round.
#[derive(Debug)]
pub struct LichessClient {
    base: String,
    authorization: HeaderValue,
    backoff: Backoff,
    keep_alive: Duration,
    client: reqwest::Client,
}

impl LichessClient {
    /// A client of the Lichess at `base_url` (e.g. [`DEFAULT_BASE_URL`]) pushing with `token`.
    pub fn new(base_url: &str, token: &Token) -> Result<LichessClient, PushError> {
        let base = base_url.trim_end_matches('/');
        if !(base.starts_with("https://") || base.starts_with("http://")) || base.contains(' ') {
            return Err(PushError::InvalidBaseUrl(base_url.to_owned()));
        }
        let client = reqwest::Client::builder()
            .user_agent(concat!("boardscribe/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .build()?;
        Ok(LichessClient {
            base: base.to_owned(),
            authorization: token.bearer()?,
            backoff: Backoff::default(),
            keep_alive: KEEP_ALIVE,
            client,
        })
    }

    /// The same client with other retry delays (tests use milliseconds).
    pub fn with_backoff(mut self, backoff: Backoff) -> LichessClient {
        self.backoff = backoff;
        self
    }

    /// The same client with another keep-alive period (tests use seconds).
    pub fn with_keep_alive(mut self, keep_alive: Duration) -> LichessClient {
        self.keep_alive = keep_alive;
        self
    }

    /// The URL round `round_id` is pushed to.
    pub fn url(&self, round_id: &str) -> Result<String, PushError> {
        if round_id.is_empty()
            || round_id.len() > 32
            || !round_id.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            return Err(PushError::InvalidRound(round_id.to_owned()));
        }
        Ok(format!("{}/api/broadcast/round/{round_id}/push", self.base))
    }

    /// One POST of `pgn` to round `round_id`.
    pub async fn push_once(&self, round_id: &str, pgn: String) -> Attempt {
        let url = match self.url(round_id) {
            Ok(url) => url,
            Err(e) => {
                return Attempt::Refused {
                    status: 0,
                    body: e.to_string(),
                };
            }
        };
        let sent = self
            .client
            .post(&url)
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
            match push_report(&body) {
                Report::Games { games, rejected } => Attempt::Accepted { games, rejected },
                Report::RoundRefuses(reason) => Attempt::Refused {
                    status: status.as_u16(),
                    body: format!(
                        "the round takes no push: {reason} (a round with a source URL is \
                         fetched by Lichess, not pushed to: give boardscribe a round without one)"
                    ),
                },
            }
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
}

/// One Lichess round's body in a turn of [`run_queue`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedBody {
    /// The Lichess round id.
    pub round_id: String,
    pub pgn: String,
    /// Every game has a result: no keep-alive.
    pub finished: bool,
}

/// What a round's last push came to.
struct Sent {
    pgn: String,
    at: tokio::time::Instant,
}

/// Pushes the bodies `bodies()` gives, now and after every change on `changes` (and every
/// `tick` if given: a delayed broadcast's window slides), one request at a time, until the
/// sender is dropped: each body that differs from the one its round last took or refused, and
/// a body already taken again after the client's keep-alive while its round is unfinished.
/// `bodies` runs on a blocking thread; an empty body is not pushed. The queue is a pushed
/// output turned by [`crate::broadcast::run`].
pub async fn run_queue<F, E>(
    client: LichessClient,
    changes: watch::Receiver<u64>,
    tick: Option<Duration>,
    bodies: F,
) where
    F: Fn() -> Result<Vec<QueuedBody>, E> + Send + Sync + 'static,
    E: fmt::Display + Send + 'static,
{
    let tick = Some(tick.map_or(client.keep_alive, |t| t.min(client.keep_alive)));
    tracing::info!(base = %client.base, "pushing rounds to Lichess");
    let queue = QueueOutput {
        client,
        bodies,
        sent: std::collections::HashMap::new(),
        attempt: 0,
    };
    super::run(queue, Wake::Changes { changes, tick }).await;
}

/// A push queue as a pushed output: each turn reads the due rounds' bodies and pushes those
/// Lichess does not have.
struct QueueOutput<F> {
    client: LichessClient,
    bodies: F,
    /// By Lichess round id: the last body pushed.
    sent: std::collections::HashMap<String, Sent>,
    /// Failed attempts in a row (the backoff's exponent).
    attempt: u32,
}

impl<F, E> Output for QueueOutput<F>
where
    F: Fn() -> Result<Vec<QueuedBody>, E> + Send + Sync + 'static,
    E: fmt::Display + Send + 'static,
{
    type Body = Vec<QueuedBody>;
    type Error = E;

    fn name(&self) -> &'static str {
        "lichess"
    }

    fn read(&mut self, _now_ms: crate::Millis) -> Result<Option<Vec<QueuedBody>>, E> {
        (self.bodies)().map(Some)
    }

    async fn publish(&mut self, due: Vec<QueuedBody>) -> Turn {
        let client = &self.client;
        for body in due {
            if body.pgn.trim().is_empty() {
                continue;
            }
            let fresh = match self.sent.get(&body.round_id) {
                None => true,
                Some(s) if s.pgn != body.pgn => true,
                Some(s) => !body.finished && s.at.elapsed() >= client.keep_alive,
            };
            if !fresh {
                continue;
            }
            let round = body.round_id.as_str();
            match client.push_once(round, body.pgn.clone()).await {
                Attempt::Accepted { games, rejected } => {
                    tracing::debug!(round, bytes = body.pgn.len(), games, "round pushed");
                    self.attempt = 0;
                    for reason in rejected {
                        tracing::warn!(round, %reason, "Lichess refused a game of the push");
                    }
                }
                Attempt::Refused {
                    status,
                    body: answer,
                } => {
                    tracing::error!(round, status, answer = %answer,
                        "Lichess refused the push; waiting for the round to change");
                }
                Attempt::Retry { reason, after } => {
                    let delay = after
                        .unwrap_or_else(|| client.backoff.delay(self.attempt, &mut rand::rng()));
                    self.attempt = self.attempt.saturating_add(1);
                    tracing::warn!(round, %reason, retry_in_ms = delay.as_millis() as u64,
                        attempt = self.attempt, "push failed");
                    tokio::time::sleep(delay).await;
                    // Build again (something may have changed meanwhile) and go on from there.
                    return Turn::Again;
                }
            }
            self.sent.insert(
                body.round_id,
                Sent {
                    pgn: body.pgn,
                    at: tokio::time::Instant::now(),
                },
            );
        }
        Turn::Done
    }
}

/// One `[[relay.lichess]]` entry as a queue pushes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LichessTarget {
    pub rounds: plan::LichessRounds,
    /// The boards it takes (all if `None`).
    pub boards: Option<crate::export::publish::BoardRange>,
}

/// A push queue: one token's client and every entry pushed with it.
#[derive(Debug)]
pub struct LichessQueue {
    pub client: LichessClient,
    pub targets: Vec<LichessTarget>,
}

/// The push to one broadcast round of a body the caller builds.
#[derive(Debug)]
pub struct LichessPush {
    client: LichessClient,
    round_id: String,
}

impl LichessPush {
    /// A client for round `round_id` at `base_url` (e.g. [`DEFAULT_BASE_URL`]).
    pub fn new(base_url: &str, round_id: &str, token: &Token) -> Result<LichessPush, PushError> {
        let client = LichessClient::new(base_url, token)?;
        client.url(round_id)?;
        Ok(LichessPush {
            client,
            round_id: round_id.to_owned(),
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

    /// The same client with other retry delays (tests use milliseconds).
    pub fn with_backoff(mut self, backoff: Backoff) -> LichessPush {
        self.client = self.client.with_backoff(backoff);
        self
    }

    /// The URL pushed to.
    pub fn url(&self) -> String {
        self.client.url(&self.round_id).unwrap_or_default()
    }

    /// One POST of `pgn`.
    pub async fn push_once(&self, pgn: String) -> Attempt {
        self.client.push_once(&self.round_id, pgn).await
    }

    /// Pushes `body()` now and after every change on `changes`, until the sender is dropped
    /// ([`run_queue`] with this one round, never finished).
    pub async fn run<F, E>(self, changes: watch::Receiver<u64>, body: F)
    where
        F: Fn() -> Result<String, E> + Send + Sync + 'static,
        E: fmt::Display + Send + 'static,
    {
        let round_id = self.round_id;
        run_queue(self.client, changes, None, move || {
            body().map(|pgn| {
                vec![QueuedBody {
                    round_id: round_id.clone(),
                    pgn,
                    finished: false,
                }]
            })
        })
        .await;
    }
}

/// What Lichess's push answer says.
#[derive(Debug, PartialEq, Eq)]
enum Report {
    /// Games taken and the reasons for games refused.
    Games { games: usize, rejected: Vec<String> },
    /// The round itself refuses pushes: an error with no game's tags (a round with a source
    /// URL answers `{"games":[{"tags":{},"error":"The relay has an upstream URL…"}]}`).
    RoundRefuses(String),
}

/// [`Report`] of Lichess's push answer
/// (`{"games":[{"tags":{…},"moves":N} | {"tags":{…},"error":"…"}]}`).
fn push_report(body: &str) -> Report {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(body) else {
        return Report::Games {
            games: 0,
            rejected: Vec::new(),
        };
    };
    if let Some(error) = value.get("error").and_then(|e| e.as_str()) {
        return Report::RoundRefuses(error.to_owned());
    }
    let games = value
        .get("games")
        .and_then(|g| g.as_array())
        .cloned()
        .unwrap_or_default();
    let untagged = |g: &serde_json::Value| {
        g.get("tags")
            .and_then(|t| t.as_object())
            .is_none_or(|t| t.is_empty())
    };
    if let [only] = games.as_slice()
        && untagged(only)
        && let Some(error) = only.get("error").and_then(|e| e.as_str())
    {
        return Report::RoundRefuses(error.to_owned());
    }
    let rejected = games
        .iter()
        .filter_map(|g| {
            let error = g.get("error")?.as_str()?;
            if untagged(g) {
                return Some(format!("a game without tags: {error}"));
            }
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
    Report::Games {
        games: games.len(),
        rejected,
    }
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
            Report::Games {
                games: 2,
                rejected: vec!["round 1.2 C - D: illegal move".to_owned()]
            }
        );
        assert_eq!(
            push_report("not json"),
            Report::Games {
                games: 0,
                rejected: Vec::new()
            }
        );
        // lila's answer for a round with a source URL.
        let upstream = r#"{"games":[{"tags":{},"error":"The relay has an upstream URL, and cannot be pushed to."}]}"#;
        assert!(matches!(push_report(upstream), Report::RoundRefuses(e) if e.contains("upstream")));
    }
}
