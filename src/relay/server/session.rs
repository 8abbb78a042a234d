//! The console's sessions: `POST /arbiter/login` with the admin token sets a session cookie
//! (`HttpOnly`, `SameSite=Strict`, 12 hours), which then opens `/arbiter` and the admin API as
//! the bearer header does for scripts; `POST /arbiter/logout` ends it. Sessions live in memory:
//! a restart asks the arbiter to log in again. Flow: [`Sessions`] holds the ids and their
//! expiry; the handlers here read the form and the cookie and render with `relay::console`.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use rand::RngCore as _;

use super::*;
use crate::relay::console;

/// The cookie's name.
const COOKIE: &str = "boardscribe_session";
/// How long a session lasts without a new login.
const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Sessions kept at most (the oldest go first): a flood of logins cannot grow memory.
const MAX_SESSIONS: usize = 256;

/// The logged-in sessions: random ids and when each expires.
#[derive(Default)]
pub(super) struct Sessions(Mutex<HashMap<String, Instant>>);

impl Sessions {
    /// A new session id, valid for [`LIFETIME`].
    fn open(&self) -> String {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let now = Instant::now();
        let mut all = lock(&self.0);
        all.retain(|_, expires| *expires > now);
        while all.len() >= MAX_SESSIONS {
            let Some(oldest) = all.iter().min_by_key(|(_, e)| **e).map(|(k, _)| k.clone()) else {
                break;
            };
            all.remove(&oldest);
        }
        all.insert(id.clone(), now + LIFETIME);
        id
    }

    fn close(&self, id: &str) {
        lock(&self.0).remove(id);
    }

    /// Whether the request's cookie names a live session.
    pub(super) fn accepts(&self, headers: &HeaderMap) -> bool {
        let Some(id) = session_id(headers) else {
            return false;
        };
        let now = Instant::now();
        let all = lock(&self.0);
        all.iter()
            .any(|(k, expires)| *expires > now && constant_time_eq(k.as_bytes(), id.as_bytes()))
    }
}

/// The session id the `Cookie` headers carry, if any.
fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| {
            c.trim()
                .strip_prefix(&format!("{COOKIE}="))
                .map(str::to_owned)
        })
}

fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        ],
        body,
    )
        .into_response()
}

#[derive(Deserialize)]
pub(super) struct Query {
    attention: Option<u8>,
}

/// `GET /arbiter`: the console for a logged-in arbiter (cookie or bearer), else the login form.
pub(super) async fn arbiter_page(
    State(app): State<App>,
    headers: HeaderMap,
    axum::extract::Query(q): axum::extract::Query<Query>,
) -> Result<Response, ApiError> {
    if app.authorize(&headers).is_err() {
        return Ok(html(StatusCode::OK, console::login_html(None)));
    }
    let (views, _) = views(&app, Audience::Arbiter).await?;
    let body = console::console_html(&views, q.attention.unwrap_or(0) != 0);
    Ok(html(StatusCode::OK, body))
}

#[derive(Deserialize)]
pub(super) struct LoginForm {
    token: String,
}

/// `POST /arbiter/login` (a form with `token`): the session cookie and back to the console, or
/// the form again with why.
pub(super) async fn arbiter_login(
    State(app): State<App>,
    axum::extract::Form(form): axum::extract::Form<LoginForm>,
) -> Response {
    let Some(token) = &app.token else {
        return html(
            StatusCode::FORBIDDEN,
            console::login_html(Some("this server has no admin token: the console is off")),
        );
    };
    if !token.matches(form.token.trim().as_bytes()) {
        warn!("arbiter console: a login with a wrong token");
        return html(
            StatusCode::UNAUTHORIZED,
            console::login_html(Some("wrong token")),
        );
    }
    let id = app.sessions.open();
    let cookie = format!(
        "{COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}",
        LIFETIME.as_secs()
    );
    (
        StatusCode::SEE_OTHER,
        [
            (header::SET_COOKIE, cookie),
            (header::LOCATION, "/arbiter".into()),
        ],
    )
        .into_response()
}

/// `POST /arbiter/logout`: the session ends and its cookie is cleared.
pub(super) async fn arbiter_logout(State(app): State<App>, headers: HeaderMap) -> Response {
    if let Some(id) = session_id(&headers) {
        app.sessions.close(&id);
    }
    let cookie = format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    (
        StatusCode::SEE_OTHER,
        [
            (header::SET_COOKIE, cookie),
            (header::LOCATION, "/arbiter".into()),
        ],
    )
        .into_response()
}
