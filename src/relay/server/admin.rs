//! The admin API: `POST /api/admin/games/{id}/{action}` (a result, a ruling, a corrected move, a
//! resumed game, a note) and `POST /api/admin/pairings`, behind the bearer token. Flow: the body
//! is parsed into an [`AdminAction`], recorded as a decision in the store (the board's task
//! applies a change to the game in progress), and answered with what was recorded.

use super::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ResultBody {
    pub(super) result: String,
    pub(super) reason: String,
    pub(super) author: Option<String>,
    pub(super) note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RuleBody {
    pub(super) irregularity: u32,
    pub(super) ruling: Ruling,
    pub(super) author: Option<String>,
    pub(super) note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CorrectBody {
    pub(super) ply: u32,
    #[serde(rename = "move")]
    pub(super) mv: String,
    pub(super) author: Option<String>,
    pub(super) note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ResumeBody {
    pub(super) after_ply: u32,
    #[serde(default)]
    pub(super) moves: Vec<String>,
    pub(super) author: Option<String>,
    pub(super) note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NoteBody {
    pub(super) ply: Option<u32>,
    pub(super) text: String,
    pub(super) author: Option<String>,
}

/// An admin request, validated.
pub(super) enum AdminAction {
    Result(ResultBody),
    Rule(RuleBody),
    Correct(CorrectBody),
    Resume(ResumeBody),
    Note(NoteBody),
}

pub(super) fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, format!("invalid JSON body: {e}")))
}

/// The author of a decision made over HTTP: the one given, else "arbiter".
pub(super) fn author(given: Option<String>) -> String {
    given
        .filter(|a| !a.trim().is_empty())
        .unwrap_or_else(|| "arbiter".into())
}

impl AdminAction {
    pub(super) fn apply(self, store: &mut Store, game: GameId) -> Result<Decision, DecisionError> {
        let at = now_ms();
        match self {
            AdminAction::Result(b) => store.set_result(
                game,
                &b.result,
                ResultReason::from(b.reason),
                &author(b.author),
                b.note.as_deref(),
                at,
            ),
            AdminAction::Rule(b) => store.rule_on_irregularity(
                game,
                b.irregularity,
                b.ruling,
                &author(b.author),
                b.note.as_deref(),
                at,
            ),
            AdminAction::Correct(b) => {
                store.correct_move(game, b.ply, &b.mv, &author(b.author), b.note.as_deref(), at)
            }
            AdminAction::Resume(b) => store.resume_game(
                game,
                b.after_ply,
                &b.moves,
                &author(b.author),
                b.note.as_deref(),
                at,
            ),
            AdminAction::Note(b) => store.add_note(game, b.ply, &b.text, &author(b.author), at),
        }
    }

    /// Whether it changes the moves of the record (the board recording the game must follow).
    pub(super) fn changes_record(&self) -> bool {
        matches!(self, AdminAction::Correct(_) | AdminAction::Resume(_))
    }

    /// Whether the board recording the game takes it (a changed record, or a result, which
    /// closes the game once final).
    pub(super) fn for_the_board(&self) -> bool {
        self.changes_record() || matches!(self, AdminAction::Result(_))
    }
}

/// Applies `action` to `game` through the relay's writing connection (blocking).
pub(super) fn decide(db: &Db, action: AdminAction, game: GameId) -> Result<Decided, ApiError> {
    let mut admin = lock(&db.admin);
    let store = match admin.take() {
        Some(store) => store,
        None => Store::open(&db.path).map_err(RelayError::from)?,
    };
    let store = admin.insert(store);
    let decided = action.apply(store, game).map_err(decision_error)?;
    // The game exists: the decision was made on it.
    let record = store.game(game).map_err(RelayError::from)?;
    let (board, moves, closed) = record.map_or((None, Vec::new(), false), |g| {
        (Some(g.board_name), g.moves, g.ended_at_ms.is_some())
    });
    Ok((decided, board, moves, closed))
}

pub(super) async fn admin(
    State(app): State<App>,
    UrlPath((id, action)): UrlPath<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    app.authorize(&headers)?;
    let action = match action.as_str() {
        "result" => AdminAction::Result(parse_body(&body)?),
        "rule" => AdminAction::Rule(parse_body(&body)?),
        "correct" => AdminAction::Correct(parse_body(&body)?),
        "resume" => AdminAction::Resume(parse_body(&body)?),
        "note" => AdminAction::Note(parse_body(&body)?),
        other => {
            return Err(ApiError(
                StatusCode::NOT_FOUND,
                format!("no admin action {other:?} (result, rule, correct, resume, note)"),
            ));
        }
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

/// Applies `action` to `game`: through the task of the board recording it, between two reads
/// of its port (so the board follows a changed record or a final result), else in the store
/// alone; then tells the relays and, for the board's current game, the live page.
pub(super) async fn act(
    app: &App,
    game: GameId,
    action: AdminAction,
) -> Result<Decision, ApiError> {
    let db = app.db.clone();
    let live_board = match action.for_the_board() {
        true => app.db.read(move |r, db| r.board_playing(db, game)).await?,
        false => None,
    };
    let record_changed = action.changes_record();
    let (decided, board, _moves, _closed) = match live_board {
        Some(board) => {
            // The board recording the game takes the decision between two reads of its port.
            let (answer, answered) = tokio::sync::oneshot::channel();
            let change = RecordChange {
                board: board.clone(),
                game,
                apply: Box::new(move || {
                    let result = decide(&db, action, game);
                    let applied = result.as_ref().ok().map(|(_, _, moves, closed)| Applied {
                        moves: moves.clone(),
                        record_changed,
                        closed: *closed,
                    });
                    let _ignored_if_asker_gone = answer.send(result);
                    applied
                }),
            };
            if let Err(change) = app.hub.desks().hand(change).await {
                // No task records the board (any more): the decision is the store's alone.
                tokio::task::spawn_blocking(move || {
                    (change.apply)();
                })
                .await
                .map_err(RelayError::from)?;
            }
            answered.await.map_err(|_| {
                ApiError(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "board {board} could not take the decision now (its store refuses \
                         writes, or it is stopping); nothing changed: try again"
                    ),
                )
            })??
        }
        None => tokio::task::spawn_blocking(move || decide(&db, action, game))
            .await
            .map_err(RelayError::from)??,
    };
    app.changed();
    // Only the board's current game is on the live page.
    if let Some(board) = board {
        let current = app.db.read(|r, db| r.boards(db)).await?;
        if current
            .games
            .get(&board)
            .is_some_and(|g| g.id == decided.game.0)
        {
            app.hub.decision(&board, &decided);
        }
    }
    Ok(decided)
}

/// `POST /api/admin/pairings`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PairingsBody {
    pub(super) round: u32,
    pub(super) format: PairingsFormatBody,
    pub(super) text: String,
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
    body: Bytes,
) -> Result<Response, ApiError> {
    app.authorize(&headers)?;
    let body: PairingsBody = parse_body(&body)?;
    let format = match body.format {
        PairingsFormatBody::Csv => PairingsFormat::Csv,
        PairingsFormatBody::Trf => PairingsFormat::Trf,
    };
    let round = body.round;
    let imported = import_pairings(&app, round, format, body.text).await?;
    Ok(Json(json!({ "round": round, "boards": imported })).into_response())
}

/// Imports round `round`'s pairings from `text` (replacing the round's earlier ones): how many
/// boards; nothing changes on a refusal, which says what is wrong and where.
pub(super) async fn import_pairings(
    app: &App,
    round: u32,
    format: PairingsFormat,
    text: String,
) -> Result<usize, ApiError> {
    if round == 0 {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "round must be 1 or more".into(),
        ));
    }
    let rows = pairings::parse(&text, format, round)
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, e.to_string()))?;
    let db = app.db.clone();
    let imported = tokio::task::spawn_blocking(move || -> Result<usize, ApiError> {
        let mut admin = lock(&db.admin);
        let store = match admin.take() {
            Some(store) => store,
            None => Store::open(&db.path).map_err(RelayError::from)?,
        };
        let store = admin.insert(store);
        store.import_pairings(round, &rows).map_err(|e| match e {
            StoreError::InvalidNumber(..) => ApiError(StatusCode::BAD_REQUEST, e.to_string()),
            e => ApiError::from(RelayError::from(e)),
        })
    })
    .await
    .map_err(RelayError::from)??;
    tracing::info!(round, boards = imported, "pairings imported");
    app.changed();
    Ok(imported)
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RoundStartBody {
    pub(super) author: Option<String>,
}

/// `POST /api/admin/rounds/{n}/start`: round `n` becomes the current one (games that begin from
/// now on are its games; a game going on stays in its round). The body may name the author.
pub(super) async fn admin_round_start(
    State(app): State<App>,
    UrlPath(n): UrlPath<u32>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    app.authorize(&headers)?;
    let body: RoundStartBody = if body.iter().all(u8::is_ascii_whitespace) {
        RoundStartBody::default()
    } else {
        parse_body(&body)?
    };
    let by = author(body.author);
    let previous = start_round(&app, n, by.clone()).await?;
    Ok(Json(json!({ "round": n, "previous": previous, "by": by })).into_response())
}

/// Makes round `n` the current one, recorded as started by `by`: the round current before.
pub(super) async fn start_round(app: &App, n: u32, by: String) -> Result<Option<u32>, ApiError> {
    if n == 0 {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "round must be 1 or more".into(),
        ));
    }
    let db = app.db.clone();
    let who = by.clone();
    let previous = tokio::task::spawn_blocking(move || -> Result<Option<u32>, ApiError> {
        let mut admin = lock(&db.admin);
        let store = match admin.take() {
            Some(store) => store,
            None => Store::open(&db.path).map_err(RelayError::from)?,
        };
        let store = admin.insert(store);
        store
            .start_round(n, &who, now_ms())
            .map_err(|e| ApiError::from(RelayError::from(e)))
    })
    .await
    .map_err(RelayError::from)??;
    tracing::info!(round = n, previous, by = %by, "round started");
    app.changed();
    Ok(previous)
}

pub(super) fn decision_error(e: DecisionError) -> ApiError {
    match e {
        DecisionError::UnknownGame(_) => ApiError(StatusCode::NOT_FOUND, e.to_string()),
        DecisionError::Store(_) | DecisionError::Unreadable { .. } => {
            error!(cause = %e, "admin decision failed");
            ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
        }
        e => ApiError(StatusCode::BAD_REQUEST, e.to_string()),
    }
}
