//! The HTTP side of the relay: routes, the SQLite reader with its PGN cache, and the admin API.
//!
//! Flow: [`router`] builds the axum app over a [`Hub`] and the database path. PGN routes read
//! through one read-only connection on a blocking thread; the rendered bodies are cached until
//! `PRAGMA data_version` says another connection committed, and served with a strong `ETag`
//! (`If-None-Match` answers 304). `/api/events` streams the hub's events as SSE; `/` and
//! `/boards/{name-or-number}` render the live page (spectators see no irregularity, alert or
//! note there, nor in the events; `/api/boards` shows each board's alerts with the admin token,
//! and `/api/admin/alerts` all of them: [`alerts`]); `/round.pgn` is the current round (all games
//! while no round is set); `/metrics` is the daemon's [`Metrics`] as Prometheus text. Admin routes
//! check the bearer token in constant time, validate the JSON, then hand the decision, round start
//! or pairings to the [`crate::decider`] (a writing connection of its own); anything refused
//! changes nothing and is answered with the status its kind maps to (`ApiError`'s
//! `From<Refusal>`), anything done bumps the change signal (for the folder and Lichess relays).

use std::{
    collections::HashMap,
    convert::Infallible,
    fmt,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use axum::{
    Json, Router,
    body::Bytes,
    extract::{Path as UrlPath, Query, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{
        Html, IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
    routing::{get, post},
};
use futures_util::stream;
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::json;
use tokio::sync::{broadcast::error::RecvError, watch};
use tracing::{error, warn};

use crate::{
    Millis,
    broadcast::public::{self, Shown},
    decider::{Decider, Refusal, Refused, Route},
    device::serial::now_ms,
    export::{
        pgn::write_pgn,
        publish::{BoardRange, PgnStyle, Publication},
        round,
    },
    metrics::Metrics,
    pairings::{self, Pairing, PairingsFormat},
    relay::{
        alerts::{self, Alert, AlertState, EventAlert},
        hub::Hub,
        listen::HttpLimits,
        live::{BoardSnapshot, OpenIrregularity},
        page,
        view::{BoardView, Seats},
    },
    store::{Decision, GameId, GameRecord, RoundInfo, Store, StoreError},
    tracker::{IrregularityKind, Side},
};

/// Errors of the relay server.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("reading the admin token file {path}: {source}")]
    TokenFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the admin token file {0} holds no token")]
    EmptyToken(PathBuf),
    #[error("a blocking task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
    #[error("http server: {0}")]
    Io(#[from] std::io::Error),
    #[error("the read connection is not open")]
    NoReader,
    #[error("the pairings cannot be scored: {0}")]
    Standings(#[from] crate::standings::FieldError),
    #[error(transparent)]
    Export(#[from] crate::export::ExportError),
}

/// The admin bearer token; never shown (its `Debug` is redacted).
#[derive(Clone)]
pub struct Token(Arc<[u8]>);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// A token from its text (surrounding white space dropped); `None` if empty.
    pub fn new(secret: &str) -> Option<Token> {
        let secret = secret.trim();
        (!secret.is_empty()).then(|| Token(Arc::from(secret.as_bytes())))
    }

    /// The token in `path` (the whole file, trimmed).
    pub fn from_file(path: &Path) -> Result<Token, RelayError> {
        let text = std::fs::read_to_string(path).map_err(|source| RelayError::TokenFile {
            path: path.to_owned(),
            source,
        })?;
        Token::new(&text).ok_or_else(|| RelayError::EmptyToken(path.to_owned()))
    }

    /// Whether an `Authorization` header carries this token as `Bearer` (the scheme in any
    /// case: RFC 9110, section 11.1).
    fn accepts(&self, header: Option<&HeaderValue>) -> bool {
        header
            .and_then(bearer)
            .is_some_and(|given| self.matches(given))
    }

    /// Whether `given` is this token (the console's login form).
    fn matches(&self, given: &[u8]) -> bool {
        constant_time_eq(given, &self.0)
    }

    /// The token's text (as read: a token is made from text), for a strength check.
    pub(crate) fn text(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// Whether two tokens are the same secret.
    fn same_as(&self, other: &Token) -> bool {
        constant_time_eq(&self.0, &other.0)
    }
}

/// The secret an `Authorization` header gives as `Bearer` (the scheme in any case: RFC 9110,
/// section 11.1); `None` for another scheme.
fn bearer(header: &HeaderValue) -> Option<&[u8]> {
    let (scheme, given) = header.as_bytes().split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"Bearer ").then_some(given)
}

/// Equality whose time depends on the lengths only, not on where the bytes differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The reader: a connection of its own behind a lock.
struct Db {
    path: PathBuf,
    reader: Mutex<ReaderState>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic in another request leaves a cache or a connection behind, both still usable.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Db {
    /// Runs `f` on the reader, on a blocking thread, on one snapshot of the database. A read
    /// the database refused is tried once more on a connection opened anew (the cause is
    /// logged), so that a passing refusal (a busy or recovering database on a loaded machine)
    /// costs the asker nothing.
    async fn read<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl Fn(&mut ReaderState, &Path) -> Result<T, RelayError> + Send + 'static,
    ) -> Result<T, RelayError> {
        let db = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut reader = lock(&db.reader);
            match reader.in_snapshot(&db.path, &f) {
                Err(RelayError::Store(cause)) => {
                    warn!(%cause, "a read of the database failed; trying once more on a new connection");
                    reader.in_snapshot(&db.path, &f)
                }
                done => done,
            }
        })
        .await?
    }
}

#[derive(Clone)]
struct App {
    hub: Hub,
    /// What spectators follow: `hub` itself, or with a delay the hub the delayed feed keeps
    /// ([`super::delayed`]).
    public_hub: Hub,
    db: Arc<Db>,
    /// The admin token, re-read when its file changes ([`gate::AdminKey`]).
    key: Arc<gate::AdminKey>,
    /// Failed tokens and logins per address ([`gate::Guesses`]).
    guesses: Arc<gate::Guesses>,
    metrics: Arc<Metrics>,
    /// The arbiter's console sessions ([`session`]).
    sessions: Arc<session::Sessions>,
    /// What the console's last actions said, by the id their redirect names ([`session`]).
    flashes: Arc<session::Flashes>,
    /// The spectators' event streams, under their caps ([`streams`]).
    streams: Arc<streams::Streams>,
    /// Takes the decisions, round starts and pairings ([`crate::decider`]).
    decider: Decider,
    limits: HttpLimits,
    /// Session cookies are `Secure` whatever the request says ([`RelayExtras::secure_cookies`]).
    secure_cookies: bool,
    /// Whether public outputs are delayed (`public_hub` then names the games spectators may
    /// see: [`BoardSnapshot::game`]).
    delayed: bool,
    /// The event's own alerts ([`RelayExtras::event_alerts`]).
    event_alerts: Option<watch::Receiver<Arc<Vec<EventAlert>>>>,
    /// The pages' language by default ([`RelayExtras::language`]).
    language: crate::lang::Lang,
}

impl App {
    /// The event's own alerts as they stand (none outside the event node).
    fn event_alerts(&self) -> Arc<Vec<EventAlert>> {
        self.event_alerts
            .as_ref()
            .map(|rx| rx.borrow().clone())
            .unwrap_or_default()
    }

    /// True when the request comes from the arbiter (the admin token or a console session).
    fn is_arbiter(&self, headers: &HeaderMap) -> bool {
        self.authorize(headers).is_ok()
    }

    /// Who the request is from ([`gate`]): a bearer header is the admin token or refused (401,
    /// the failure counted against the address; 429 while the address is slowed down); else a
    /// live session's cookie; else the public.
    fn caller(
        &self,
        headers: &HeaderMap,
        ip: std::net::IpAddr,
    ) -> Result<gate::Caller, gate::Denied> {
        let token = self.key.current(&self.sessions);
        if let Some(given) = headers.get(header::AUTHORIZATION).and_then(bearer) {
            let now = std::time::Instant::now();
            if let Some(wait) = self.guesses.slowed(ip, now) {
                return Err(gate::Denied::SlowedDown(wait));
            }
            if token.as_ref().is_some_and(|t| t.matches(given)) {
                return Ok(gate::Caller::Token);
            }
            self.guesses.failed(ip, "a bearer header", now);
            return Err(gate::Denied::WrongToken);
        }
        match (&token, self.sessions.name(headers)) {
            (Some(_), Some(name)) => Ok(gate::Caller::Session(name)),
            _ => Ok(gate::Caller::Public),
        }
    }

    /// 401 unless the request carries the admin token, or the cookie of a console session.
    fn authorize(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let authorized = self.key.current(&self.sessions).is_some_and(|t| {
            t.accepts(headers.get(header::AUTHORIZATION)) || self.sessions.accepts(headers)
        });
        if authorized {
            Ok(())
        } else {
            Err(ApiError(
                StatusCode::UNAUTHORIZED,
                "a valid bearer token is required".into(),
            ))
        }
    }
}

/// What the daemon shares with the server besides the hub: its counters, and the change signal
/// bumped after every admin change.
#[derive(Clone, Default)]
pub struct RelayExtras {
    pub metrics: Arc<Metrics>,
    pub changes: Option<Arc<watch::Sender<u64>>>,
    /// How public outputs show the games (delay, comments), and how every PGN served writes
    /// `[%clk]` (`[relay]`).
    pub publication: Publication,
    /// With a delay: the hub the delayed feed keeps, which spectators follow ([`super::delayed`]).
    pub public_hub: Option<Hub>,
    /// Timeouts, body sizes and the cap on connections ([`listen`]).
    pub limits: HttpLimits,
    /// The event node: decisions go to the hall owning the board ([`crate::decider::Route`]).
    pub route: Option<Route>,
    /// The file the admin token was read from: read again when it changes, and the sessions
    /// opened with the old token end.
    pub token_file: Option<PathBuf>,
    /// Session cookies are always `Secure` (TLS is terminated in front of the daemon); else
    /// only when the request says it came over TLS.
    pub secure_cookies: bool,
    /// The event node: the event's own alerts (the halls' faults), kept current.
    pub event_alerts: Option<watch::Receiver<Arc<Vec<EventAlert>>>>,
    /// The pages' language unless a browser asks for another of ours (`[tournament]
    /// language`).
    pub language: crate::lang::Lang,
}

/// An error answer: a status and a message, as JSON `{"error": ...}`.
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

/// A refusal of the decider ([`crate::decider`]) as HTTP says it: the one place a kind of
/// refusal becomes a status.
impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> ApiError {
        ApiError(status_of(r.reason), r.message)
    }
}

/// The status answering a refusal of kind `reason`.
fn status_of(reason: Refused) -> StatusCode {
    match reason {
        Refused::Invalid => StatusCode::BAD_REQUEST,
        Refused::UnknownGame | Refused::UnknownBoard => StatusCode::NOT_FOUND,
        Refused::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        // Sent to the hall, not refused: the console says so without an error.
        Refused::Pending => StatusCode::ACCEPTED,
        Refused::Failed => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<RelayError> for ApiError {
    fn from(e: RelayError) -> ApiError {
        error!(cause = %e, "relay request failed");
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error (see the daemon's log)".into(),
        )
    }
}

/// The relay's routes over `hub` and the database at `db_path`; admin routes need
/// `admin_token` (without one they answer 401).
pub fn router(hub: Hub, db_path: &Path, admin_token: Option<Token>) -> Router {
    router_with(hub, db_path, admin_token, RelayExtras::default())
}

/// [`router`] with the daemon's metrics and change signal.
pub fn router_with(
    hub: Hub,
    db_path: &Path,
    admin_token: Option<Token>,
    extras: RelayExtras,
) -> Router {
    let db = Arc::new(Db {
        path: db_path.to_owned(),
        reader: Mutex::new(ReaderState {
            publication: extras.publication,
            ..ReaderState::default()
        }),
    });
    let decider =
        Decider::new(db_path, hub.clone(), extras.changes.clone()).with_route(extras.route);
    let limits = extras.limits;
    let app = App {
        delayed: extras.publication.delay_ms > 0,
        public_hub: extras.public_hub.unwrap_or_else(|| hub.clone()),
        hub,
        db,
        key: Arc::new(gate::AdminKey::new(admin_token, extras.token_file)),
        guesses: Arc::default(),
        metrics: extras.metrics,
        sessions: Arc::default(),
        flashes: Arc::default(),
        streams: Arc::new(streams::Streams::new(&limits)),
        decider,
        limits,
        secure_cookies: extras.secure_cookies,
        event_alerts: extras.event_alerts,
        language: extras.language,
    };
    routes()
        .into_iter()
        .fold(Router::new(), |router, (spec, handler)| {
            router.route(spec.path, handler)
        })
        .fallback(not_found)
        .with_state(app.clone())
        .layer(axum::middleware::from_fn_with_state(app, guard::guard))
}

/// Who may reach a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Everyone: what it answers a spectator is the public view (the delay, no irregularity,
    /// alert, note, ruling, arbiter's name or recorder's state).
    Public,
    /// Everyone; the arbiter (the admin token or a console session) reads more.
    PublicOrArbiter,
    /// The arbiter only: 401, or the console's login form.
    Arbiter,
    /// The operator: the admin token (or this machine while no token is set).
    Operator,
}

/// One route: its path, its method, who may reach it, and the query parameters it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteSpec {
    pub path: &'static str,
    pub method: &'static str,
    pub access: Access,
    pub queries: &'static [&'static str],
}

const fn spec(
    method: &'static str,
    path: &'static str,
    access: Access,
    queries: &'static [&'static str],
) -> RouteSpec {
    RouteSpec {
        path,
        method,
        access,
        queries,
    }
}

/// Every route the router answers, with its handler: the router is made of this list and
/// nothing else, so [`route_table`] is the router's own description (a test walks it).
fn routes() -> Vec<(RouteSpec, axum::routing::MethodRouter<App>)> {
    use Access::*;
    vec![
        (spec("GET", "/", Public, &["lang"]), get(index)),
        (spec("GET", "/live.js", Public, &["v"]), get(live_script)),
        (
            spec("GET", "/boards/{key}", Public, &["lang"]),
            get(board_page),
        ),
        (
            spec(
                "GET",
                "/arbiter",
                Arbiter,
                &["fragment", "attention", "flash", "lang"],
            ),
            get(session::arbiter_page),
        ),
        (
            spec("POST", "/arbiter/login", Public, &[]),
            post(session::arbiter_login),
        ),
        (
            spec("POST", "/arbiter/logout", Arbiter, &[]),
            post(session::arbiter_logout),
        ),
        (
            spec("GET", "/arbiter/console.js", Public, &[]),
            get(session::console_script),
        ),
        (
            spec(
                "GET",
                "/arbiter/boards/{key}",
                Arbiter,
                &["fragment", "flash", "lang"],
            ),
            get(session::arbiter_board_page),
        ),
        (
            spec(
                "GET",
                "/arbiter/decisions",
                Arbiter,
                &["board", "round", "author", "lang"],
            ),
            get(session::arbiter_decisions_page),
        ),
        (
            spec("GET", "/arbiter/sheets/{file}", Arbiter, &["lang"]),
            get(session::round_sheets),
        ),
        (
            spec("POST", "/arbiter/boards/{key}/result", Arbiter, &[]),
            post(console_actions::result),
        ),
        (
            spec("POST", "/arbiter/boards/{key}/correct", Arbiter, &[]),
            post(console_actions::correct),
        ),
        (
            spec("POST", "/arbiter/boards/{key}/note", Arbiter, &[]),
            post(console_actions::add_note),
        ),
        (
            spec("POST", "/arbiter/boards/{key}/resume", Arbiter, &[]),
            post(console_actions::resume),
        ),
        (
            spec("POST", "/arbiter/boards/{key}/calibrate", Arbiter, &[]),
            post(console_actions::calibrate),
        ),
        (
            spec("POST", "/arbiter/boards/{key}/undo", Arbiter, &[]),
            post(console_actions::undo),
        ),
        (
            spec("POST", "/arbiter/boards/{key}/forfeit", Arbiter, &[]),
            post(console_actions::forfeit),
        ),
        (
            spec("POST", "/arbiter/rule", Arbiter, &[]),
            post(console_actions::rule),
        ),
        (
            spec("POST", "/arbiter/rounds/undo", Arbiter, &[]),
            post(console_actions::round_undo),
        ),
        (
            spec("POST", "/arbiter/pairings/undo", Arbiter, &[]),
            post(console_actions::pairings_undo),
        ),
        (
            spec("POST", "/arbiter/byes", Arbiter, &[]),
            post(console_actions::give_bye),
        ),
        (
            spec("POST", "/arbiter/byes/withdraw", Arbiter, &[]),
            post(console_actions::withdraw_bye),
        ),
        (
            spec("POST", "/arbiter/rounds/start", Arbiter, &[]),
            post(console_actions::round_start),
        ),
        (
            spec("POST", "/arbiter/pairings", Arbiter, &[]),
            post(console_actions::pairings_upload),
        ),
        (
            spec("GET", "/standings", Public, &["lang"]),
            get(standings_page),
        ),
        (
            spec("GET", "/standings.json", Public, &[]),
            get(standings_json),
        ),
        (
            spec("GET", "/arbiter/standings", Arbiter, &["lang"]),
            get(session::arbiter_standings),
        ),
        (
            spec("GET", "/arbiter/standings.trf", Arbiter, &[]),
            get(session::arbiter_trf),
        ),
        (
            spec("GET", "/round.pgn", PublicOrArbiter, &["boards"]),
            get(round_pgn),
        ),
        (
            spec("GET", "/rounds/{file}", PublicOrArbiter, &["boards"]),
            get(rounds_pgn),
        ),
        (spec("GET", "/api/rounds", Public, &[]), get(api_rounds)),
        (
            spec("POST", "/api/admin/rounds/{n}/start", Arbiter, &[]),
            post(admin_round_start),
        ),
        (
            spec("POST", "/api/admin/rounds/{n}/undo", Arbiter, &[]),
            post(admin_round_undo),
        ),
        (
            spec("POST", "/api/admin/boards/{name}/calibrate", Arbiter, &[]),
            post(admin_board_calibrate),
        ),
        (
            spec("GET", "/games/{file}", PublicOrArbiter, &[]),
            get(game_pgn),
        ),
        (
            spec("GET", "/api/boards", PublicOrArbiter, &[]),
            get(api_boards),
        ),
        (
            spec("GET", "/api/events", PublicOrArbiter, &[]),
            get(api_events),
        ),
        (
            spec("POST", "/api/admin/games/{id}/{action}", Arbiter, &[]),
            post(admin),
        ),
        (
            spec("POST", "/api/admin/pairings", Arbiter, &[]),
            post(admin_pairings),
        ),
        (
            spec("GET", "/api/admin/alerts", Arbiter, &[]),
            get(admin_alerts),
        ),
        (spec("GET", "/metrics", Operator, &[]), get(metrics)),
    ]
}

/// Every route the router answers: path, method, who may reach it, the queries it reads.
pub fn route_table() -> Vec<RouteSpec> {
    routes().into_iter().map(|(spec, _)| spec).collect()
}

/// Any other path: 404, with the guard's headers like every answer.
async fn not_found() -> ApiError {
    ApiError(StatusCode::NOT_FOUND, "no such page".into())
}

/// `GET /live.js`: the live page's script (the page names it with its hash, so it may be kept).
async fn live_script() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        page::SCRIPT,
    )
        .into_response()
}

/// A PGN answer: 304 when `If-None-Match` names its tag, else the body.
fn pgn_response(headers: &HeaderMap, r: Rendered) -> Response {
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .map(str::trim)
                .any(|t| t == "*" || t.trim_start_matches("W/") == r.etag)
        });
    let etag = [
        (header::ETAG, r.etag),
        (header::CACHE_CONTROL, "no-cache".into()),
    ];
    if matches {
        (StatusCode::NOT_MODIFIED, etag).into_response()
    } else {
        (
            etag,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            r.body,
        )
            .into_response()
    }
}

/// `?boards=1-64`: a slice of the round by board number.
#[derive(Deserialize)]
struct SliceQuery {
    boards: Option<String>,
}

impl SliceQuery {
    fn range(&self) -> Result<Option<BoardRange>, ApiError> {
        self.boards
            .as_deref()
            .map(str::parse::<BoardRange>)
            .transpose()
            .map_err(|e| ApiError(StatusCode::BAD_REQUEST, e.to_string()))
    }
}

/// A PGN route's answer: the arbiter (admin token or session) reads the record as it stands,
/// with every comment; anyone else what the public sees ([`ReaderState::public_pgn`]: the
/// delay, no internal comments, the slice asked for).
async fn pgn_answer(
    app: &App,
    headers: &HeaderMap,
    ask: PgnAsk,
    range: Option<BoardRange>,
) -> Result<Option<Rendered>, ApiError> {
    let arbiter = app.is_arbiter(headers) && range.is_none();
    let now: Millis = now_ms();
    let live = live_clocks(&app.hub);
    Ok(app
        .db
        .read(move |r, db| match (arbiter, &ask) {
            (true, PgnAsk::Round) => r.round(db).map(Some),
            (true, PgnAsk::RoundN(n)) => r.round_n(db, *n).map(Some),
            (true, PgnAsk::Game(id)) => r.game(db, *id),
            (false, _) => r.public_pgn(db, &ask, range.as_ref(), now, &live),
        })
        .await?)
}

/// The clocks each board shows now (whole seconds, white and black), by board name: the
/// `WhiteClock`/`BlackClock` of a live broadcast.
fn live_clocks(hub: &Hub) -> HashMap<String, (u64, u64)> {
    hub.snapshot()
        .0
        .into_iter()
        .filter_map(|b| {
            let c = b.clock?;
            Some((b.name, (c.white_ms / 1000 * 1000, c.black_ms / 1000 * 1000)))
        })
        .collect()
}

async fn round_pgn(
    State(app): State<App>,
    Query(q): Query<SliceQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let range = q.range()?;
    let r = pgn_answer(&app, &headers, PgnAsk::Round, range).await?;
    let r = r.ok_or_else(|| ApiError(StatusCode::NOT_FOUND, "no round".into()))?;
    Ok(pgn_response(&headers, r))
}

/// `/rounds/N.pgn`: round N's games, one per board, with the same ETag rules as `/round.pgn`.
async fn rounds_pgn(
    State(app): State<App>,
    UrlPath(file): UrlPath<String>,
    Query(q): Query<SliceQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let n = file
        .strip_suffix(".pgn")
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|n| *n >= 1)
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no round {file:?}")))?;
    let range = q.range()?;
    let r = pgn_answer(&app, &headers, PgnAsk::RoundN(n), range).await?;
    let r = r.ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no round {n}")))?;
    Ok(pgn_response(&headers, r))
}

/// `/api/rounds`: the event and every round started, paired or played.
async fn api_rounds(State(app): State<App>) -> Result<Response, ApiError> {
    let (event, rounds) = app
        .db
        .read(|r, db| {
            r.refresh(db)?;
            let store = r.store()?;
            Ok((store.event()?, store.rounds()?))
        })
        .await?;
    Ok((
        [(header::CACHE_CONTROL, "no-cache")],
        Json(json!({ "event": event, "rounds": rounds })),
    )
        .into_response())
}

async fn game_pgn(
    State(app): State<App>,
    UrlPath(file): UrlPath<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let not_found = || ApiError(StatusCode::NOT_FOUND, format!("no game {file:?}"));
    let id = file
        .strip_suffix(".pgn")
        .and_then(|id| id.parse::<i64>().ok())
        .ok_or_else(not_found)?;
    let r = pgn_answer(&app, &headers, PgnAsk::Game(GameId(id)), None).await?;
    Ok(pgn_response(&headers, r.ok_or_else(not_found)?))
}

/// Who asks: spectators, or the arbiter (the admin token).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Audience {
    Public,
    Arbiter,
}

/// Every board with its players, and the id of the last event the snapshots include; for the
/// arbiter with its alerts and open irregularities, for spectators without. With a delay,
/// spectators see each board's game named as the delayed view names it: a game is not named
/// before it began the delay ago, as that would tell that the game before it is over.
async fn views(app: &App, audience: Audience) -> Result<(Vec<BoardView>, u64), ApiError> {
    let (boards, last_id) = match audience {
        Audience::Arbiter => app.hub.snapshot(),
        Audience::Public => app.public_hub.snapshot(),
    };
    let games = match audience {
        Audience::Public if app.delayed => {
            let named: HashMap<String, i64> = boards
                .iter()
                .filter_map(|b| Some((b.name.clone(), b.game?)))
                .collect();
            app.db
                .read(move |r, db| r.delayed_boards(db, &named))
                .await?
        }
        _ => app.db.read(|r, db| r.boards(db)).await?,
    };
    Ok((
        boards
            .into_iter()
            .map(|b| view(b, &games, audience))
            .collect(),
        last_id,
    ))
}

fn view(live: BoardSnapshot, seating: &Seating, audience: Audience) -> BoardView {
    let game = seating.games.get(&live.name);
    let (game_id, seats) = seating.of(&live);
    // Its game of an earlier round over, the board waits for this round's: no old moves under
    // the new pairing (the old game's open alerts stay the arbiter's).
    // A game recorded as not played (a forfeit): the start position under its result, not
    // the board's earlier game.
    let live = if seating.awaits_round(&live) {
        live.awaiting_next_game()
    } else if let Some((result, termination)) = game.and_then(|g| g.unplayed.clone()) {
        BoardSnapshot {
            result: Some(result),
            result_final: true,
            termination,
            ..live.awaiting_next_game()
        }
    } else {
        live
    };
    let mut alerts: Vec<Alert> = alerts::board_alert(&live, game.map(|g| g.id))
        .into_iter()
        .collect();
    alerts.extend(game.map(|g| g.alerts.clone()).unwrap_or_default());
    let mut live = live;
    // The open irregularities are the store's open alerts (a ruling from another process
    // closes them too); one per alert, its latest.
    live.irregularities = alerts
        .iter()
        .filter(|a| a.state == AlertState::Open)
        .filter_map(|a| {
            Some(OpenIrregularity {
                id: *a.irregularities.last()?,
                ply: a.ply.unwrap_or(0),
                kind: IrregularityKind::from_str_opt(&a.kind)?,
                detail: a.detail.clone(),
                article: a.article.clone(),
            })
        })
        .collect();
    let mut view = BoardView::new(live, game_id, seats);
    view.alerts = alerts;
    match audience {
        Audience::Arbiter => view,
        Audience::Public => view.public(),
    }
}

/// `/api/boards`: public; with the admin token, each board's alerts and open irregularities too.
async fn api_boards(State(app): State<App>, headers: HeaderMap) -> Result<Response, ApiError> {
    let audience = match app.authorize(&headers) {
        Ok(()) => Audience::Arbiter,
        Err(_) => Audience::Public,
    };
    let (boards, last_event_id) = views(&app, audience).await?;
    Ok((
        [(header::CACHE_CONTROL, "no-cache")],
        Json(json!({ "last_event_id": last_event_id, "boards": boards })),
    )
        .into_response())
}

/// `GET /api/events`: the hub's events as SSE. A spectator's stream takes a place under the
/// caps ([`streams`]: 503 with `Retry-After` when there is none) and ends after the streams'
/// lifetime (the browser comes back and reads the boards anew); the arbiter's is not counted.
async fn api_events(
    State(app): State<App>,
    headers: HeaderMap,
    caller: Option<axum::Extension<gate::Caller>>,
    peer: Option<axum::Extension<gate::Peer>>,
) -> Response {
    let arbiter = caller.is_some_and(|c| c.0.is_arbiter());
    let slot = if arbiter {
        None
    } else {
        let ip = gate::Peer::ip_of(peer.as_deref());
        match app.streams.open(ip) {
            Ok(slot) => Some(slot),
            Err(refused) => {
                warn!(peer = %ip, why = %refused, "a spectator's event stream was refused");
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [(header::RETRY_AFTER, "30"), (header::CONNECTION, "close")],
                    ApiError(StatusCode::SERVICE_UNAVAILABLE, refused.to_string()),
                )
                    .into_response();
            }
        }
    };
    // Spectators follow the public hub (delayed, if the venue delays); the arbiter the record.
    let hub = if arbiter { &app.hub } else { &app.public_hub };
    let rx = hub.subscribe();
    let closed = app.hub.closed();
    let held = Held {
        _subscribed: Subscribed::new(app.metrics.clone()),
        _slot: slot,
        until: tokio::time::Instant::now() + app.streams.lifetime,
    };
    // A client coming back after a break has missed events: it reads the boards anew.
    let resync = headers.contains_key("last-event-id");
    let events = stream::unfold(
        (rx, closed, resync, held),
        move |(mut rx, mut closed, resync, held)| async move {
            if resync {
                let e = Event::default().event("resync").data("{}");
                return Some((Ok::<_, Infallible>(e), (rx, closed, false, held)));
            }
            // Events not theirs (an arbiter's note or ruling, to a spectator) are skipped.
            let e = loop {
                let event = tokio::select! {
                    r = rx.recv() => r,
                    _ = closed.wait_for(|c| *c) => return None,
                    () = tokio::time::sleep_until(held.until) => return None,
                };
                match event {
                    Ok(ev) => {
                        if let Some(data) = ev.data_for(arbiter) {
                            break Event::default()
                                .id(ev.id.to_string())
                                .event(ev.kind)
                                .data(data);
                        }
                    }
                    Err(RecvError::Lagged(missed)) => {
                        warn!(missed, "an event subscriber lagged; it resyncs");
                        break Event::default()
                            .event("resync")
                            .data(json!({ "missed": missed }).to_string());
                    }
                    Err(RecvError::Closed) => return None,
                }
            };
            Some((Ok(e), (rx, closed, false, held)))
        },
    );
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// What a stream holds while it lives: its count in the metrics, its place under the caps,
/// and when it ends.
struct Held {
    _subscribed: Subscribed,
    _slot: Option<streams::Slot>,
    until: tokio::time::Instant,
}

/// Counts an SSE subscriber in the metrics while its stream lives.
struct Subscribed(Arc<Metrics>);

impl Subscribed {
    fn new(metrics: Arc<Metrics>) -> Subscribed {
        metrics.subscriber_joined();
        Subscribed(metrics)
    }
}

impl Drop for Subscribed {
    fn drop(&mut self) {
        self.0.subscriber_left();
    }
}

/// `GET /metrics`: the operator's. The counters run ahead of the broadcast delay and name
/// internal kinds, so spectators never read them: with an admin token, only with it (bearer,
/// or a console session); a server without one (no arbiter, nothing to log in with) answers
/// a connection from this machine only (loopback), as a scraper on the venue PC makes.
async fn metrics(
    State(app): State<App>,
    headers: HeaderMap,
    peer: Option<axum::Extension<gate::Peer>>,
) -> Result<Response, ApiError> {
    if app.key.current(&app.sessions).is_some() {
        app.authorize(&headers)?;
    } else if !gate::Peer::ip_of(peer.as_deref()).is_loopback() {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            "/metrics is served on this machine only while no admin token is set".into(),
        ));
    }
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        app.metrics.render(),
    )
        .into_response())
}

/// `GET /api/admin/alerts`: every alert of every game (open first, then by time), and the
/// boards not heard; the arbiter's console reads them. At the event node `event` holds the
/// event's own alerts (the halls' faults), each open while it lasts, and `open` counts them.
async fn admin_alerts(State(app): State<App>, headers: HeaderMap) -> Result<Response, ApiError> {
    app.authorize(&headers)?;
    let (boards, last_event_id) = app.hub.snapshot();
    let games = app.db.read(|r, db| r.games(db)).await?;
    let current = app.db.read(|r, db| r.boards(db)).await?;
    let mut all: Vec<Alert> = boards
        .iter()
        .filter_map(|b| alerts::board_alert(b, current.games.get(&b.name).map(|g| g.id)))
        .collect();
    all.extend(games.iter().flat_map(alerts::game_alerts));
    all.sort_by_key(|a| (a.state != AlertState::Open, a.since_ms));
    let event = app.event_alerts();
    let open = all.iter().filter(|a| a.state == AlertState::Open).count() + event.len();
    Ok((
        [(header::CACHE_CONTROL, "no-cache")],
        Json(json!({
            "last_event_id": last_event_id,
            "open": open,
            "alerts": all,
            "event": *event,
        })),
    )
        .into_response())
}

/// `?lang=fa`: the page's language, as its switch asks.
#[derive(Deserialize)]
struct LangQuery {
    lang: Option<String>,
}

/// The language a page is written in: the one its switch asked for, else the browser's most
/// preferred of ours (`Accept-Language`), else the event's.
fn page_language(app: &App, q: &LangQuery, headers: &HeaderMap) -> crate::lang::Lang {
    q.lang
        .as_deref()
        .and_then(crate::lang::Lang::from_tag)
        .unwrap_or_else(|| browser_language(app, headers))
}

/// The browser's most preferred language of ours (`Accept-Language`), else the event's.
fn browser_language(app: &App, headers: &HeaderMap) -> crate::lang::Lang {
    headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .and_then(crate::lang::Lang::from_accept_language)
        .unwrap_or(app.language)
}

async fn index(
    State(app): State<App>,
    Query(q): Query<LangQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (boards, _) = views(&app, Audience::Public).await?;
    let lang = page_language(&app, &q, &headers);
    let event = event_info(&app).await?;
    Ok((
        [(header::VARY, "Accept-Language")],
        Html(page::index_html(&boards, event.as_ref(), lang)),
    )
        .into_response())
}

async fn board_page(
    State(app): State<App>,
    UrlPath(key): UrlPath<String>,
    Query(q): Query<LangQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (boards, _) = views(&app, Audience::Public).await?;
    let number = key.parse::<u32>().ok();
    let board = boards
        .iter()
        .find(|b| number.is_some() && b.live.number == number)
        .or_else(|| boards.iter().find(|b| b.live.name == key))
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no board {key:?}")))?;
    let lang = page_language(&app, &q, &headers);
    let event = event_info(&app).await?;
    Ok((
        [(header::VARY, "Accept-Language")],
        Html(page::board_page_html(board, event.as_ref(), lang)),
    )
        .into_response())
}

/// The standings as spectators may see them: only results the public view already shows
/// (the delay), ranked by the event's tie-breaks.
async fn public_standings(app: &App) -> Result<Arc<crate::standings::Standings>, ApiError> {
    let now = now_ms();
    Ok(app.db.read(move |r, db| r.standings(db, Some(now))).await?)
}

/// `GET /standings`: the public standings page, in the page's language.
async fn standings_page(
    State(app): State<App>,
    Query(q): Query<LangQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let standings = public_standings(&app).await?;
    let lang = page_language(&app, &q, &headers);
    let event = event_info(&app).await?;
    Ok((
        [
            (header::VARY, "Accept-Language"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Html(crate::relay::standings_page::public_html(
            &standings,
            event.as_ref(),
            lang,
        )),
    )
        .into_response())
}

/// `GET /standings.json`: the public standings as data (the contract: docs/architecture.md).
async fn standings_json(State(app): State<App>) -> Result<Response, ApiError> {
    let standings = public_standings(&app).await?;
    Ok((
        [(header::CACHE_CONTROL, "no-cache")],
        Json(standings.as_ref()),
    )
        .into_response())
}

/// The event's name and current round, as the store keeps them (none before it names them).
async fn event_info(app: &App) -> Result<Option<RoundInfo>, ApiError> {
    Ok(app
        .db
        .read(|r, db| {
            r.refresh(db)?;
            Ok(r.store()?.round_info()?)
        })
        .await?)
}

mod admin;
mod console_actions;
pub mod gate;
mod guard;
mod reader;
mod session;
mod streams;

use admin::{admin, admin_board_calibrate, admin_pairings, admin_round_start, admin_round_undo};
use reader::{PgnAsk, ReaderState, Rendered, Seating};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole_and_never_show() {
        let t = Token::new(" s3cret\n").unwrap();
        assert!(t.accepts(Some(&HeaderValue::from_static("Bearer s3cret"))));
        assert!(t.accepts(Some(&HeaderValue::from_static("bearer s3cret"))));
        assert!(t.accepts(Some(&HeaderValue::from_static("BEARER s3cret"))));
        assert!(!t.accepts(Some(&HeaderValue::from_static("Basic  s3cret"))));
        assert!(!t.accepts(Some(&HeaderValue::from_static("Bearers3cret"))));
        assert!(!t.accepts(Some(&HeaderValue::from_static("Bearer s3cre"))));
        assert!(!t.accepts(Some(&HeaderValue::from_static("Bearer s3cretx"))));
        assert!(!t.accepts(Some(&HeaderValue::from_static("s3cret"))));
        assert!(!t.accepts(None));
        assert!(!format!("{t:?}").contains("s3cret"));
        assert!(Token::new("  \n").is_none());
    }

    #[test]
    fn each_kind_of_refusal_has_its_status() {
        let answer = |reason| ApiError::from(Refusal::new(reason, "why"));
        for (reason, status) in [
            (Refused::Invalid, StatusCode::BAD_REQUEST),
            (Refused::UnknownGame, StatusCode::NOT_FOUND),
            (Refused::UnknownBoard, StatusCode::NOT_FOUND),
            (Refused::Unavailable, StatusCode::SERVICE_UNAVAILABLE),
            (Refused::Pending, StatusCode::ACCEPTED),
            (Refused::Failed, StatusCode::INTERNAL_SERVER_ERROR),
        ] {
            let ApiError(got, message) = answer(reason);
            assert_eq!((got, message.as_str()), (status, "why"), "{reason:?}");
        }
    }

    #[test]
    fn entity_tags_follow_the_body() {
        let a = Rendered::new("[Event \"?\"]\n\n1. e4 *\n".into());
        let b = Rendered::new("[Event \"?\"]\n\n1. d4 *\n".into());
        assert_ne!(a.etag, b.etag);
        assert_eq!(
            a.etag,
            Rendered::new("[Event \"?\"]\n\n1. e4 *\n".into()).etag
        );
        assert!(a.etag.starts_with('"') && a.etag.ends_with('"'));
    }
}
