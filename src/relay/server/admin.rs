//! The admin API: `POST /api/admin/games/{id}/{action}` (a result, a ruling, a corrected move, a
//! resumed game, a note, an earlier decision undone: `{"decision": ID}`) and `POST /api/admin/pairings`, behind the bearer token (or the
//! console's cookie, from the console's own pages: [`super::gate`]). Flow: the body is parsed
//! into an [`AdminAction`] (its author the session's arbiter when the cookie carried it), handed
//! to the [`crate::decider`] (which records it as a decision in the store; the board's task
//! applies a change to the game in progress), and answered with what was recorded, or with the
//! status of the decider's refusal.

use super::{gate::Caller, *};
use crate::decider::{AdminAction, author};

pub(super) fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("invalid JSON body: {e}")))
}

pub(super) async fn admin(
    State(app): State<App>,
    UrlPath((id, action)): UrlPath<(String, String)>,
    headers: HeaderMap,
    caller: Option<axum::Extension<Caller>>,
    body: Bytes,
) -> Result<Response, ApiError> {
    app.authorize(&headers)?;
    let action = match action.as_str() {
        "result" => AdminAction::Result(parse_body(&body)?),
        "rule" => AdminAction::Rule(parse_body(&body)?),
        "correct" => AdminAction::Correct(parse_body(&body)?),
        "resume" => AdminAction::Resume(parse_body(&body)?),
        "note" => AdminAction::Note(parse_body(&body)?),
        "undo" => AdminAction::Undo(parse_body(&body)?),
        other => {
            return Err(ApiError(
                StatusCode::NOT_FOUND,
                format!("no admin action {other:?} (result, rule, correct, resume, note, undo)"),
            ));
        }
    };
    let action = match session_arbiter(caller) {
        Some(name) => action.by(name),
        None => action,
    };
    let game = id
        .parse::<i64>()
        .map(GameId)
        .map_err(|_| ApiError(StatusCode::BAD_REQUEST, format!("{id:?} is not a game id")))?;
    let decided = act(&app, game, action).await?;
    Ok(Json(json!({
        "decision": decided.id,
        "game": decided.game.0,
        "at_ms": decided.at_ms,
        "author": decided.author,
        "note": decided.note,
        "action": decided.action,
    }))
    .into_response())
}

/// The console session's arbiter when the request came with the console's cookie (not the
/// bearer header): the author of what it decides, whatever the body says.
fn session_arbiter(caller: Option<axum::Extension<Caller>>) -> Option<String> {
    match caller?.0 {
        Caller::Session(name) => Some(name),
        Caller::Token | Caller::Public => None,
    }
}

/// Applies `action` to `game` ([`Decider::act`]).
pub(super) async fn act(
    app: &App,
    game: GameId,
    action: AdminAction,
) -> Result<Decision, ApiError> {
    Ok(app.decider.act(game, action).await?)
}

/// `POST /api/admin/pairings`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PairingsBody {
    pub(super) round: u32,
    pub(super) format: PairingsFormatBody,
    pub(super) text: String,
    /// Who imported them (the console session's arbiter wins; default "arbiter").
    #[serde(default)]
    pub(super) author: Option<String>,
}

#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum PairingsFormatBody {
    Csv,
    Trf,
}

/// Imports a round's pairings (replacing the round's earlier ones); nothing changes on a refusal.
pub(super) async fn admin_pairings(
    State(app): State<App>,
    headers: HeaderMap,
    caller: Option<axum::Extension<Caller>>,
    body: Bytes,
) -> Result<Response, ApiError> {
    app.authorize(&headers)?;
    let body: PairingsBody = parse_body(&body)?;
    let by = session_arbiter(caller).unwrap_or_else(|| author(body.author.clone()));
    let format = match body.format {
        PairingsFormatBody::Csv => PairingsFormat::Csv,
        PairingsFormatBody::Trf => PairingsFormat::Trf,
    };
    let round = body.round;
    let imported = import_pairings(&app, round, format, body.text, by).await?;
    Ok(Json(json!({ "round": round, "boards": imported })).into_response())
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RoundStartBody {
    pub(super) author: Option<String>,
}

/// Who acts on a round: the console session's arbiter, else the body's `author` (an empty
/// body names none).
fn round_author(caller: Option<axum::Extension<Caller>>, body: &[u8]) -> Result<String, ApiError> {
    let body: RoundStartBody = if body.iter().all(u8::is_ascii_whitespace) {
        RoundStartBody::default()
    } else {
        parse_body(body)?
    };
    Ok(session_arbiter(caller).unwrap_or_else(|| author(body.author)))
}

/// `POST /api/admin/rounds/{n}/start`: round `n` becomes the current one (games that begin from
/// now on are its games; a game going on stays in its round). The body may name the author.
pub(super) async fn admin_round_start(
    State(app): State<App>,
    UrlPath(n): UrlPath<u32>,
    headers: HeaderMap,
    caller: Option<axum::Extension<Caller>>,
    body: Bytes,
) -> Result<Response, ApiError> {
    app.authorize(&headers)?;
    let by = round_author(caller, &body)?;
    let previous = start_round(&app, n, by.clone()).await?;
    Ok(Json(json!({ "round": n, "previous": previous, "by": by })).into_response())
}

/// `POST /api/admin/boards/{name}/calibrate`: the board's sensor forgets what it learnt of
/// the board and learns it again from what it shows next (a Certabo board: the start position,
/// with the extra queens on d3 and d6).
pub(super) async fn admin_board_calibrate(
    State(app): State<App>,
    UrlPath(name): UrlPath<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    app.authorize(&headers)?;
    app.decider.relearn(&name).await?;
    Ok(Json(json!({ "board": name, "calibrating": true })).into_response())
}

/// `POST /api/admin/rounds/{n}/undo`: the start of round `n` (the latest) undone; answers the
/// round current again.
pub(super) async fn admin_round_undo(
    State(app): State<App>,
    UrlPath(n): UrlPath<u32>,
    headers: HeaderMap,
    caller: Option<axum::Extension<Caller>>,
    body: Bytes,
) -> Result<Response, ApiError> {
    app.authorize(&headers)?;
    let by = round_author(caller, &body)?;
    let current = app.decider.undo_round_start(n, by.clone()).await?;
    Ok(Json(json!({ "undone": n, "round": current, "by": by })).into_response())
}

/// Imports round `round`'s pairings from `text` (replacing the round's earlier ones): how many
/// boards; nothing changes on a refusal, which says what is wrong and where.
pub(super) async fn import_pairings(
    app: &App,
    round: u32,
    format: PairingsFormat,
    text: String,
    by: String,
) -> Result<usize, ApiError> {
    if round == 0 {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "round must be 1 or more".into(),
        ));
    }
    let rows = pairings::parse(&text, format, round)
        .and_then(|rows| Ok((rows, pairings::parse_byes(&text, format, round)?)))
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, e.to_string()));
    let (rows, byes) = rows?;
    Ok(app.decider.import_pairings(round, rows, byes, by).await?)
}

/// Makes round `n` the current one, recorded as started by `by`: the round current before.
pub(super) async fn start_round(app: &App, n: u32, by: String) -> Result<Option<u32>, ApiError> {
    Ok(app.decider.start_round(n, by).await?)
}
