//! The guard every request passes: a body-size cap with a deadline, and the security headers
//! on every answer.
//!
//! Flow: [`guard`] (a layer over the whole router, its fallback included) picks the request's
//! body limit by path ([`body_limit`]: pairings uploads may be larger than JSON and forms),
//! answers 413 at once when `Content-Length` is over it, reads the body whole under the limit
//! within `body_read` (408 when it does not arrive in time, 413 when it grows past the limit),
//! hands the buffered request to the routes, and adds [`SECURITY_HEADERS`] to what they answer.
//! The pages are written for this policy: no inline script (the live page loads `/live.js`,
//! the console `/arbiter/console.js`), inline styles only.

use axum::{
    body::Body,
    extract::{Request, State},
    http::{HeaderName, HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use super::ApiError;
use crate::relay::listen::HttpLimits;

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
    ApiError(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is larger than {limit} bytes"),
    )
    .into_response()
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

/// The layer: the body read under its limit, then the route, then the security headers.
pub async fn guard(State(limits): State<HttpLimits>, req: Request, next: Next) -> Response {
    let limit = body_limit(req.uri().path(), &limits);
    let mut response = match buffered(req, limit, &limits).await {
        Ok(req) => next.run(req).await,
        Err(refused) => refused,
    };
    let headers = response.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
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
