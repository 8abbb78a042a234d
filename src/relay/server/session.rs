//! The console's sessions and pages: `POST /arbiter/login` with the admin token (and the
//! arbiter's name, for the record) sets a session cookie (`HttpOnly`, `SameSite=Strict`, 12
//! hours), which then opens `/arbiter`, the boards' pages and the admin API as the bearer
//! header does for scripts; `POST /arbiter/logout` ends it. Sessions live in memory: a restart
//! asks the arbiter to log in again. Flow: [`Sessions`] holds the ids, their expiry and who
//! logged in; the handlers here read the cookie, gather the views, the round and a board's
//! history, and render with `relay::console`; `?fragment=1` gives the part the console's
//! script refreshes. The forms' actions are in [`super::console_actions`].

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use rand::RngCore as _;

use super::*;
use crate::{
    export::{self, ExportOptions, Format, Notation, SheetOptions},
    lang::Lang,
    relay::console::{self, BoardPage, Flash, HallPage, LoginError, RoundLine},
    words::{
        decision_log::{LogFilter, decision_log},
        history,
    },
};

/// The console's language: the one its switch asks for (`?lang=`, kept in the session from
/// then on), else the session's, else the browser's most preferred of ours, else the event's.
pub(super) fn console_language(app: &App, headers: &HeaderMap, asked: Option<&str>) -> Lang {
    if let Some(lang) = asked.and_then(Lang::from_tag) {
        app.sessions.set_lang(headers, lang);
        return lang;
    }
    app.sessions
        .lang(headers)
        .unwrap_or_else(|| browser_language(app, headers))
}

/// The cookie's name.
const COOKIE: &str = "boardscribe_session";
/// How long a session lasts without a new login.
const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Sessions kept at most (the oldest go first): a flood of logins cannot grow memory.
const MAX_SESSIONS: usize = 256;
/// The longest name a session keeps for the record.
const MAX_NAME: usize = 80;

/// One logged-in arbiter.
struct Session {
    expires: Instant,
    /// The name given at the login ("arbiter" when none), the author of what they decide.
    name: String,
    /// The console's language, as the login page or the switch last chose it.
    lang: Option<Lang>,
}

/// `N` random bytes, in hex: a session's id, a message's.
fn random_id<const N: usize>() -> String {
    let mut bytes = [0u8; N];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The logged-in sessions: random ids, when each expires and who it is.
#[derive(Default)]
pub(super) struct Sessions(Mutex<HashMap<String, Session>>);

impl Sessions {
    /// A new session id for `name`, in `lang`, valid for [`LIFETIME`].
    fn open(&self, name: String, lang: Option<Lang>) -> String {
        let id = random_id::<32>();
        let now = Instant::now();
        let mut all = lock(&self.0);
        all.retain(|_, s| s.expires > now);
        while all.len() >= MAX_SESSIONS {
            let Some(oldest) = all
                .iter()
                .min_by_key(|(_, s)| s.expires)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            all.remove(&oldest);
        }
        all.insert(
            id.clone(),
            Session {
                expires: now + LIFETIME,
                name,
                lang,
            },
        );
        id
    }

    fn close(&self, id: &str) {
        lock(&self.0).remove(id);
    }

    /// `f` on the live session the request's cookie names, if any.
    fn with<T>(&self, headers: &HeaderMap, f: impl FnOnce(&mut Session) -> T) -> Option<T> {
        let id = session_id(headers)?;
        let now = Instant::now();
        let mut all = lock(&self.0);
        all.iter_mut()
            .find(|(k, s)| s.expires > now && constant_time_eq(k.as_bytes(), id.as_bytes()))
            .map(|(_, s)| f(s))
    }

    /// The name of the live session the request's cookie names, if any.
    pub(super) fn name(&self, headers: &HeaderMap) -> Option<String> {
        self.with(headers, |s| s.name.clone())
    }

    /// The language the request's session chose, if any.
    fn lang(&self, headers: &HeaderMap) -> Option<Lang> {
        self.with(headers, |s| s.lang).flatten()
    }

    /// The request's session goes on in `lang`.
    fn set_lang(&self, headers: &HeaderMap, lang: Lang) {
        self.with(headers, |s| s.lang = Some(lang));
    }

    /// Whether the request's cookie names a live session.
    pub(super) fn accepts(&self, headers: &HeaderMap) -> bool {
        self.name(headers).is_some()
    }

    /// Ends every session (the admin token changed).
    pub(super) fn end_all(&self) {
        lock(&self.0).clear();
    }
}

/// Messages kept at most: older ones are forgotten (their page then shows none).
const MAX_FLASHES: usize = 256;

/// What the console's actions said, each under a random id that the redirect after the action
/// names (`?flash=ID`): the banner shows only what the server itself wrote here, never text a
/// link carries.
#[derive(Default)]
pub(super) struct Flashes(Mutex<std::collections::VecDeque<(String, Flash)>>);

impl Flashes {
    /// Keeps `flash`; the id to name it by.
    pub(super) fn keep(&self, flash: Flash) -> String {
        let id = random_id::<12>();
        let mut all = lock(&self.0);
        while all.len() >= MAX_FLASHES {
            all.pop_front();
        }
        all.push_back((id.clone(), flash));
        id
    }

    fn get(&self, id: &str) -> Option<Flash> {
        lock(&self.0)
            .iter()
            .find(|(k, _)| k == id)
            .map(|(_, f)| f.clone())
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

pub(super) fn html(status: StatusCode, body: String) -> Response {
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

/// A redirect to `location` (303: the browser follows with a `GET`).
pub(super) fn see_other(location: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, location.to_owned())],
    )
        .into_response()
}

#[derive(Deserialize, Default)]
pub(super) struct Query {
    attention: Option<u8>,
    /// The `#live` part only (the console's script refreshes it).
    fragment: Option<u8>,
    /// What the last action did, or why it was refused: the id of the server's message
    /// ([`Flashes`]).
    flash: Option<String>,
    /// The console's language, as its switch asks (`?lang=fa`).
    lang: Option<String>,
}

impl Query {
    fn flash(&self, app: &App) -> Option<Flash> {
        app.flashes.get(self.flash.as_deref()?)
    }

    fn fragment(&self) -> bool {
        self.fragment.unwrap_or(0) != 0
    }
}

/// The event's round as the console shows it.
async fn round_line(app: &App, lang: Lang) -> Result<RoundLine, ApiError> {
    let (rounds, info, undo, import_undo) = app
        .db
        .read(|r, db| {
            r.refresh(db)?;
            let store = r.store()?;
            Ok((
                store.rounds()?,
                store.round_info()?,
                store.round_start_to_undo()?,
                store.pairings_import_to_undo()?,
            ))
        })
        .await?;
    let zone = history::local_zone();
    let current = rounds.iter().find(|r| r.current);
    let number = current.map(|r| r.number).or(info.map(|i| i.round));
    Ok(RoundLine {
        current: number,
        started: current.map(|r| {
            (
                history::when_in(r.started_at_ms, &zone, lang),
                r.started_by.clone(),
            )
        }),
        // The round after the current one, never one beyond it (a round's pairings imported
        // before it starts do not move the proposal on).
        next: number.map_or(1, |n| n.saturating_add(1)),
        undo,
        import_undo,
    })
}

/// The live page's address as spectators in the hall reach it: the host the arbiter's own
/// browser asked for (behind a reverse proxy, the one it names in `X-Forwarded-Host`, as the
/// gate takes it), over https when the request came so (or TLS is ended in front of the
/// daemon); none without a usable host.
fn spectators_url(app: &App, headers: &HeaderMap) -> Option<String> {
    spectators_address(headers, app.secure_cookies)
}

/// [`spectators_url`] from the request's headers, `secure` when the daemon's cookies are (TLS in
/// front of it).
fn spectators_address(headers: &HeaderMap, secure: bool) -> Option<String> {
    let usable = |host: &&str| {
        !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
    };
    let named = |name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.split(',').next())
            .map(str::trim)
            .filter(usable)
    };
    let host =
        named(header::HeaderName::from_static("x-forwarded-host")).or(named(header::HOST))?;
    let https = secure
        || headers
            .get("x-forwarded-proto")
            .is_some_and(|p| p.as_bytes().eq_ignore_ascii_case(b"https"));
    Some(format!(
        "{}://{host}/",
        if https { "https" } else { "http" }
    ))
}

/// A console page asked for without a session: the login form (a refresh of the live part:
/// 401, and the script reloads the page).
fn not_logged_in(q: &Query, lang: Lang) -> Result<Response, ApiError> {
    if q.fragment() {
        return Err(ApiError(StatusCode::UNAUTHORIZED, "log in again".into()));
    }
    Ok(html(StatusCode::OK, console::login_html(None, lang)))
}

/// `GET /arbiter`: the console for a logged-in arbiter (cookie or bearer), else the login form.
pub(super) async fn arbiter_page(
    State(app): State<App>,
    headers: HeaderMap,
    axum::extract::Query(q): axum::extract::Query<Query>,
) -> Result<Response, ApiError> {
    let lang = console_language(&app, &headers, q.lang.as_deref());
    if app.authorize(&headers).is_err() {
        return not_logged_in(&q, lang);
    }
    let (views, _) = views(&app, Audience::Arbiter).await?;
    let attention_only = q.attention.unwrap_or(0) != 0;
    let event_alerts = app.event_alerts();
    if q.fragment() {
        return Ok(html(
            StatusCode::OK,
            console::hall_live_html(&views, &event_alerts, attention_only, lang),
        ));
    }
    let body = console::console_html(&HallPage {
        views: &views,
        event_alerts: &event_alerts,
        attention_only,
        round: round_line(&app, lang).await?,
        spectators: spectators_url(&app, &headers),
        flash: q.flash(&app),
        lang,
    });
    Ok(html(StatusCode::OK, body))
}

#[derive(Deserialize)]
pub(super) struct LogQuery {
    board: Option<String>,
    /// A number, or blank (the form's empty field): every round.
    round: Option<String>,
    author: Option<String>,
    lang: Option<String>,
}

/// `GET /arbiter/decisions`: the event's decisions, filtered by board, round and author (the
/// login form when not logged in).
pub(super) async fn arbiter_decisions_page(
    State(app): State<App>,
    headers: HeaderMap,
    axum::extract::Query(q): axum::extract::Query<LogQuery>,
) -> Result<Response, ApiError> {
    let lang = console_language(&app, &headers, q.lang.as_deref());
    if app.authorize(&headers).is_err() {
        return Ok(html(StatusCode::OK, console::login_html(None, lang)));
    }
    let blank = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
    let round = match blank(q.round) {
        None => None,
        Some(r) => Some(r.trim().parse::<u32>().map_err(|_| {
            ApiError(
                StatusCode::BAD_REQUEST,
                lang.fill("refused.not_a_round", &[("text", &r)]),
            )
        })?),
    };
    let filter = LogFilter {
        board: blank(q.board),
        round,
        author: blank(q.author),
    };
    let (games, event) = app
        .db
        .read(|r, db| {
            r.refresh(db)?;
            let store = r.store()?;
            let mut out = Vec::new();
            for game in store.games()? {
                // A history that does not read is left out; the record still is.
                match store.history(game.id) {
                    Ok(h) => out.push((game, h)),
                    Err(e) => warn!(game = game.id.0, cause = %e, "a game's history does not read"),
                }
            }
            Ok((out, store.event_decisions()?))
        })
        .await?;
    let log = decision_log(&games, &event, &filter, &history::local_zone(), lang);
    Ok(html(
        StatusCode::OK,
        console::decisions::decisions_html(&log, &filter, lang),
    ))
}

/// `GET /arbiter/sheets/{N}.html` and `/arbiter/sheets/{N}.pdf`: every scoresheet of round N
/// in one printable file, in the console's language and the event's notation (its
/// `[tournament] notation`, else SAN), as `export --format scoresheet|pdf --round N` writes it.
pub(super) async fn round_sheets(
    State(app): State<App>,
    UrlPath(file): UrlPath<String>,
    headers: HeaderMap,
    axum::extract::Query(q): axum::extract::Query<Query>,
) -> Result<Response, ApiError> {
    let lang = console_language(&app, &headers, q.lang.as_deref());
    if app.authorize(&headers).is_err() {
        return not_logged_in(&q, lang);
    }
    let no_file = || ApiError(StatusCode::NOT_FOUND, format!("no round sheets {file:?}"));
    let (round, format, content_type) = match file.rsplit_once('.') {
        Some((n, "html")) => (n, Format::Scoresheet, "text/html; charset=utf-8"),
        Some((n, "pdf")) => (n, Format::Pdf, "application/pdf"),
        _ => return Err(no_file()),
    };
    let round: u32 = round.parse().ok().filter(|n| *n >= 1).ok_or_else(no_file)?;
    let bytes = app
        .db
        .read(move |r, db| {
            r.refresh(db)?;
            let store = r.store()?;
            let event = store.event()?.map(|e| e.settings);
            let sheet = SheetOptions {
                notation: Notation::of_event(event.as_ref()),
                lang,
                ..SheetOptions::default()
            };
            let options = ExportOptions {
                round: Some(round),
                ..ExportOptions::default()
            };
            Ok(export::export_bytes(store, format, None, options, &sheet))
        })
        .await?
        .map_err(|e| match e {
            export::ExportError::EmptyRound(_) => ApiError(
                StatusCode::NOT_FOUND,
                lang.fill("arbiter.round_no_games", &[("round", &round.to_string())]),
            ),
            other => {
                warn!(round, cause = %other, "the round's sheets could not be written");
                ApiError(StatusCode::INTERNAL_SERVER_ERROR, other.to_string())
            }
        })?;
    Ok((
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_TYPE, content_type),
        ],
        bytes,
    )
        .into_response())
}

/// `GET /arbiter/standings`: the standings with every result (no delay) and the TRF link.
pub(super) async fn arbiter_standings(
    State(app): State<App>,
    headers: HeaderMap,
    axum::extract::Query(q): axum::extract::Query<Query>,
) -> Result<Response, ApiError> {
    let lang = console_language(&app, &headers, q.lang.as_deref());
    if app.authorize(&headers).is_err() {
        return not_logged_in(&q, lang);
    }
    let standings = app.db.read(|r, db| r.standings(db, None)).await?;
    let (byes, round) = app
        .db
        .read(|r, db| {
            r.refresh(db)?;
            let store = r.store()?;
            let byes: Vec<_> = store
                .paired_rounds()?
                .into_iter()
                .flat_map(|(round, _, byes)| byes.into_iter().map(move |b| (round, b)))
                .collect();
            Ok((byes, store.round_info()?.map_or(1, |i| i.round)))
        })
        .await?;
    let panel = console::ByesPanel { byes: &byes, round };
    Ok(html(
        StatusCode::OK,
        console::standings_html(&standings, &panel, q.flash(&app).as_ref(), lang),
    ))
}

/// `GET /arbiter/standings.trf`: the event as a TRF-16, to download for the pairing program.
pub(super) async fn arbiter_trf(
    State(app): State<App>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    app.authorize(&headers)?;
    let trf = app.db.read(|r, db| r.trf(db)).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"standings.trf\"",
            ),
            (header::CACHE_CONTROL, "no-store"),
        ],
        trf,
    )
        .into_response())
}

/// The view of the board `key` names: its number, else its name.
pub(super) fn find_board<'a>(views: &'a [BoardView], key: &str) -> Option<&'a BoardView> {
    let number = key.parse::<u32>().ok();
    views
        .iter()
        .find(|b| number.is_some() && b.live.number == number)
        .or_else(|| views.iter().find(|b| b.live.name == key))
}

/// `GET /arbiter/boards/{key}`: one board's page (the login form when not logged in).
pub(super) async fn arbiter_board_page(
    State(app): State<App>,
    UrlPath(key): UrlPath<String>,
    headers: HeaderMap,
    axum::extract::Query(q): axum::extract::Query<Query>,
) -> Result<Response, ApiError> {
    let lang = console_language(&app, &headers, q.lang.as_deref());
    if app.authorize(&headers).is_err() {
        return not_logged_in(&q, lang);
    }
    let (views, _) = views(&app, Audience::Arbiter).await?;
    let view = find_board(&views, &key)
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no board {key:?}")))?;
    // A board paired in its round with no game in it yet: its game can be recorded unplayed.
    let unplayed_round = match (view.game_id, view.round, view.live.number) {
        (None, Some(round), Some(number)) => app
            .db
            .read(move |r, db| {
                r.refresh(db)?;
                Ok(r.store()?.pairing(round, number)?.map(|_| round))
            })
            .await
            .unwrap_or(None),
        _ => None,
    };
    let (game, entries) = match view.game_id {
        Some(id) => {
            app.db
                .read(move |r, db| {
                    r.refresh(db)?;
                    let store = r.store()?;
                    let game = store.game(GameId(id))?;
                    // A history that does not read is shown as none; the record still is.
                    let entries = store.history(GameId(id)).unwrap_or_else(|e| {
                        warn!(game = id, cause = %e, "the console cannot read a game's history");
                        Vec::new()
                    });
                    Ok((game, entries))
                })
                .await?
        }
        None => (None, Vec::new()),
    };
    let zone = history::local_zone();
    let lines = game
        .as_ref()
        .map(|g| history::in_words(g, &entries, &zone, lang))
        .unwrap_or_default();
    // The decisions that stand, each in the history's words, to be undone.
    let standing: Vec<(i64, String)> = game.as_ref().map_or_else(Vec::new, |g| {
        g.decisions()
            .filter_map(|(d, _)| {
                let entry = entries.iter().find(|e| e.event.id == d.id)?;
                let words = history::in_words(g, std::slice::from_ref(entry), &zone, lang);
                Some((d.id, words.into_iter().next()?))
            })
            .collect()
    });
    let page = BoardPage {
        view,
        game: game.as_ref(),
        history: &lines,
        standing: &standing,
        unplayed_round,
        flash: q.flash(&app),
        lang,
    };
    let body = if q.fragment() {
        console::board::board_live_html(&page)
    } else {
        console::board_html(&page)
    };
    Ok(html(StatusCode::OK, body))
}

/// `GET /arbiter/console.js`: the console's script.
pub(super) async fn console_script() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        console::SCRIPT,
    )
        .into_response()
}

#[derive(Deserialize)]
pub(super) struct LoginForm {
    token: String,
    name: Option<String>,
    /// The login page's language, kept in the session.
    lang: Option<String>,
}

/// The name a login gives, fit for the record: trimmed, control characters dropped, at most
/// [`MAX_NAME`] characters; "arbiter" when none.
fn login_name(given: Option<&str>) -> String {
    let name: String = given
        .unwrap_or("")
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME)
        .collect();
    let name = name.trim();
    if name.is_empty() {
        "arbiter".into()
    } else {
        name.to_owned()
    }
}

/// `POST /arbiter/login` (a form with `token`, and `name`): the session cookie and back to the
/// console, or the form again with why.
pub(super) async fn arbiter_login(
    State(app): State<App>,
    peer: Option<axum::Extension<gate::Peer>>,
    headers: HeaderMap,
    axum::extract::Form(form): axum::extract::Form<LoginForm>,
) -> Response {
    let lang = form
        .lang
        .as_deref()
        .and_then(Lang::from_tag)
        .unwrap_or_else(|| browser_language(&app, &headers));
    let Some(token) = app.key.current(&app.sessions) else {
        return html(
            StatusCode::FORBIDDEN,
            console::login_html(Some(LoginError::NoToken), lang),
        );
    };
    if !token.matches(form.token.trim().as_bytes()) {
        let ip = gate::Peer::ip_of(peer.as_deref());
        app.guesses
            .failed(ip, "arbiter console login", std::time::Instant::now());
        return html(
            StatusCode::UNAUTHORIZED,
            console::login_html(Some(LoginError::WrongToken), lang),
        );
    }
    let name = login_name(form.name.as_deref());
    tracing::info!(arbiter = %name, "arbiter console: logged in");
    let id = app.sessions.open(name, Some(lang));
    let secure = if app.secure_cookies || gate::over_tls(&headers) {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!(
        "{COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}{secure}",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spectators_address_is_the_host_the_arbiter_reached_even_behind_a_proxy() {
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut h = HeaderMap::new();
            for (name, value) in pairs {
                h.insert(*name, value.parse().unwrap());
            }
            h
        };
        let direct = headers(&[("host", "10.0.0.5:8080")]);
        assert_eq!(
            spectators_address(&direct, false).as_deref(),
            Some("http://10.0.0.5:8080/")
        );
        // A reverse proxy reaching the daemon on 127.0.0.1 names the venue's host and TLS.
        let proxied = headers(&[
            ("host", "127.0.0.1:8080"),
            ("x-forwarded-host", "live.venue.example, inner.proxy"),
            ("x-forwarded-proto", "https"),
        ]);
        assert_eq!(
            spectators_address(&proxied, false).as_deref(),
            Some("https://live.venue.example/")
        );
        // A forwarded host that is not a host name is not used; nor is a Host that is not.
        let odd = headers(&[("host", "10.0.0.5"), ("x-forwarded-host", "a b<c>")]);
        assert_eq!(
            spectators_address(&odd, true).as_deref(),
            Some("https://10.0.0.5/")
        );
        assert_eq!(
            spectators_address(&headers(&[("host", "x/y")]), false),
            None
        );
        assert_eq!(spectators_address(&HeaderMap::new(), false), None);
    }

    #[test]
    fn login_names_are_trimmed_cleaned_and_bounded() {
        assert_eq!(login_name(None), "arbiter");
        assert_eq!(login_name(Some("  \n ")), "arbiter");
        assert_eq!(login_name(Some(" Chief\0 Arbiter ")), "Chief Arbiter");
        assert_eq!(login_name(Some(&"x".repeat(500))).len(), MAX_NAME);
    }
}
