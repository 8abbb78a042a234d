//! The guard every request passes: who asks before any byte of a body, a body-size cap with a
//! deadline, and the security headers on every answer.
//!
//! Flow: [`guard`] (a layer over the whole router, its fallback included) tells from the head
//! who the request is from ([`super::gate`]) and what it does ([`Kind`]). A read never has its
//! body read. A `POST` other than the login needs the arbiter (401, or the login form for the
//! console's forms, without reading the body); with the console's cookie it must come from
//! this origin, and to the admin API be JSON. Only then is the body read whole under the
//! path's limit ([`body_limit`]: pairings uploads may be larger than JSON and forms; the login
//! form is small) within `body_read` (413 at once when `Content-Length` is over it, 408 when it
//! does not arrive in time), the request handed to the routes with its [`Caller`], and
//! [`SECURITY_HEADERS`] added to what they answer (and `Cache-Control: no-store` to the
//! arbiter's answers). A refusal before the body closes the connection.
//! The pages are written for this policy: no inline script (the live page loads `/live.js`,
//! the console `/arbiter/console.js`), inline styles only.

use std::{
    net::IpAddr,
    time::{Duration, Instant},
};

use axum::{
    body::Body,
    extract::{Request, State},
    http::{HeaderName, HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use tracing::warn;

use super::{
    ApiError, App,
    gate::{self, Caller, Denied, Peer},
    session,
};
use crate::relay::listen::HttpLimits;

/// The largest login form (a token and a name).
pub const LOGIN_BODY: usize = 4 * 1024;

/// The Content-Security-Policy of every answer: nothing from elsewhere, no inline script, no
/// framing.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
                       img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
                       base-uri 'none'; form-action 'self'";

/// The headers added to every answer.
pub const SECURITY_HEADERS: [(HeaderName, &str); 4] = [
    (header::CONTENT_SECURITY_POLICY, CSP),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    // Not `no-referrer`: with it, browsers send `Origin: null` on a form's POST, and the
    // console's forms are refused as cross-site. `same-origin` sends nothing to other sites.
    (header::REFERRER_POLICY, "same-origin"),
    (header::X_FRAME_OPTIONS, "DENY"),
];

/// The paths that take a pairings file.
const UPLOAD_PATHS: [&str; 2] = ["/api/admin/pairings", "/arbiter/pairings"];

/// The largest body a request to `path` may carry.
pub fn body_limit(path: &str, limits: &HttpLimits) -> usize {
    if UPLOAD_PATHS.contains(&path) {
        limits.upload_body
    } else {
        limits.json_body
    }
}

/// What a request's declared `Content-Length` says against `limit`: over it or not (an
/// unreadable length is left to the body read).
fn declared_too_large(headers: &axum::http::HeaderMap, limit: usize) -> bool {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > limit as u64)
}

fn too_large(limit: usize) -> Response {
    closing(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is larger than {limit} bytes"),
    )
}

/// Reads the body of `req` whole (at most `limit` bytes, within `limits.body_read`); the
/// request with its body buffered, or the answer refusing it.
async fn buffered(req: Request, limit: usize, limits: &HttpLimits) -> Result<Request, Response> {
    use axum::body::HttpBody as _;
    if req.body().size_hint().exact() == Some(0) {
        return Ok(req);
    }
    if declared_too_large(req.headers(), limit) {
        return Err(too_large(limit));
    }
    let (parts, body) = req.into_parts();
    let read = Limited::new(body, limit).collect();
    match tokio::time::timeout(limits.body_read, read).await {
        Ok(Ok(collected)) => Ok(Request::from_parts(parts, Body::from(collected.to_bytes()))),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large(limit)),
        Ok(Err(e)) => Err(ApiError(
            StatusCode::BAD_REQUEST,
            format!("the request body did not read: {e}"),
        )
        .into_response()),
        Err(_elapsed) => Err((
            [(header::CONNECTION, "close")],
            ApiError(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within {} s",
                    limits.body_read.as_secs_f64()
                ),
            ),
        )
            .into_response()),
    }
}

/// What a request does, by its method and path: it decides what the guard asks of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Reads (any method but `POST`): no body is ever read.
    Read,
    /// `POST /arbiter/login`: the one body read from anyone, small.
    Login,
    /// `POST /arbiter/logout`: no body.
    Logout,
    /// Any other `POST`: the arbiter's; `json` for the admin API.
    Act { json: bool },
}

impl Kind {
    fn of(method: &Method, path: &str) -> Kind {
        if method != Method::POST {
            Kind::Read
        } else if path == "/arbiter/login" {
            Kind::Login
        } else if path == "/arbiter/logout" {
            Kind::Logout
        } else {
            Kind::Act {
                json: path.starts_with("/api/"),
            }
        }
    }
}

/// An answer that ends the connection (its body, unread, is not waited for).
fn closing(status: StatusCode, why: impl Into<String>) -> Response {
    (
        [(header::CONNECTION, "close")],
        ApiError(status, why.into()),
    )
        .into_response()
}

/// Who may go on, and with what body, decided from the head: the request to run, or the
/// answer refusing it.
async fn admit(app: &App, mut req: Request, ip: IpAddr) -> Result<(Request, Caller), Response> {
    let caller = match app.caller(req.headers(), ip) {
        Ok(caller) => caller,
        Err(Denied::SlowedDown(wait)) => return Err(slow_down(wait)),
        Err(Denied::WrongToken) => {
            return Err(closing(
                StatusCode::UNAUTHORIZED,
                "a valid bearer token is required",
            ));
        }
    };
    let kind = Kind::of(req.method(), req.uri().path());
    let limits = &app.limits;
    match (kind, &caller) {
        (Kind::Read | Kind::Logout, _) => {
            if kind == Kind::Logout && gate::says_cross_site(req.headers()) {
                return Err(closing(
                    StatusCode::FORBIDDEN,
                    "a form from another site: refused",
                ));
            }
            *req.body_mut() = Body::empty();
            Ok((req, caller))
        }
        (Kind::Login, _) => {
            if gate::says_cross_site(req.headers()) {
                warn!(peer = %ip, "arbiter console: a login from another site was refused");
                return Err(closing(
                    StatusCode::FORBIDDEN,
                    "a form from another site: refused",
                ));
            }
            if let Some(wait) = app.guesses.slowed(ip, Instant::now()) {
                return Err(slow_down(wait));
            }
            Ok((buffered(req, LOGIN_BODY, limits).await?, caller))
        }
        (Kind::Act { json }, Caller::Public) => Err(if json {
            closing(StatusCode::UNAUTHORIZED, "a valid bearer token is required")
        } else {
            // A console form without a session: to the login form.
            let mut to_login = session::see_other("/arbiter");
            to_login
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            to_login
        }),
        (Kind::Act { json }, Caller::Session(_)) => {
            if !gate::same_origin(req.headers()) {
                warn!(peer = %ip, path = req.uri().path(), "a request with the console's cookie from another origin was refused");
                return Err(closing(
                    StatusCode::FORBIDDEN,
                    "a request from another origin: refused",
                ));
            }
            if json && !gate::is_json(req.headers()) {
                return Err(closing(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "the admin API takes application/json",
                ));
            }
            let limit = body_limit(req.uri().path(), limits);
            Ok((buffered(req, limit, limits).await?, caller))
        }
        (Kind::Act { .. }, Caller::Token) => {
            let limit = body_limit(req.uri().path(), limits);
            Ok((buffered(req, limit, limits).await?, caller))
        }
    }
}

/// 429 with the wait in `Retry-After` (whole seconds, at least one).
fn slow_down(wait: Duration) -> Response {
    let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
    (
        StatusCode::TOO_MANY_REQUESTS,
        [
            (header::RETRY_AFTER, secs.to_string()),
            (header::CONNECTION, "close".to_owned()),
        ],
        ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            format!("too many wrong tokens from this address: try again in {secs} s"),
        ),
    )
        .into_response()
}

/// The layer: who asks, from the head ([`admit`]); the body read under its limit when the
/// request may have one; then the route; then the security headers, and `no-store` on what
/// the arbiter is answered.
pub async fn guard(State(app): State<App>, req: Request, next: Next) -> Response {
    let ip = Peer::ip_of(req.extensions().get::<Peer>());
    let (mut response, arbiter) = match admit(&app, req, ip).await {
        Ok((mut req, caller)) => {
            let arbiter = caller.is_arbiter();
            req.extensions_mut().insert(caller);
            (next.run(req).await, arbiter)
        }
        Err(refused) => (refused, false),
    };
    let headers = response.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if arbiter {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uploads_may_be_larger_than_json() {
        let l = HttpLimits::default();
        assert_eq!(body_limit("/api/admin/pairings", &l), 1024 * 1024);
        assert_eq!(body_limit("/arbiter/pairings", &l), 1024 * 1024);
        assert_eq!(body_limit("/api/admin/games/1/result", &l), 64 * 1024);
        assert_eq!(body_limit("/arbiter/login", &l), 64 * 1024);
    }

    #[test]
    fn a_declared_length_over_the_limit_is_refused_before_reading() {
        let mut h = axum::http::HeaderMap::new();
        h.insert(
            header::CONTENT_LENGTH,
            HeaderValue::from_static("99999999999"),
        );
        assert!(declared_too_large(&h, 65_536));
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("65536"));
        assert!(!declared_too_large(&h, 65_536));
        assert!(!declared_too_large(&axum::http::HeaderMap::new(), 65_536));
    }

    #[test]
    fn the_policy_allows_no_inline_script() {
        let script = CSP
            .split(';')
            .map(str::trim)
            .find(|d| d.starts_with("script-src"))
            .unwrap();
        assert_eq!(script, "script-src 'self'");
        assert!(CSP.contains("frame-ancestors 'none'"));
    }
}
