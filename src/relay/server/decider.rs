//! Taking an arbiter's decision, a round start or a round's pairings: the one path the admin
//! API, the console and (at a hall of a clustered event) the event node's commands go through.
//!
//! Flow: a [`Decider`] holds the writing connection, the hub (whose desks reach the board
//! tasks) and the change signal. A decision on a game a board is recording is handed to that
//! board's task, which takes it between two reads of its port; otherwise the store takes it
//! alone; then the relays are told and the live page shows it. At the event node, whose boards
//! each belong to a hall, the decider is given a route ([`Route`]): a decision goes to the hall
//! owning the board and is answered once the hall took it and its record came back; a round
//! start and pairings are taken here (the event's own) and sent to every hall.

use super::*;
use admin::decision_error;
use tokio::sync::{mpsc, oneshot};

/// Where the event node's decider sends what it does not take alone: to the hall that owns a
/// board (a decision) or to every hall (a round start, a round's pairings).
/// [`crate::cluster::commands`] carries them over NATS and answers.
pub type Route = mpsc::Sender<Routed>;

/// One thing for the halls.
#[derive(Debug)]
pub enum Routed {
    /// A decision on the event node's game `game`, taken at `at_ms` (wall-clock ms): answered
    /// once the owning hall took it and its record came back, or refused.
    Decision {
        game: GameId,
        action: AdminAction,
        at_ms: Millis,
        answer: oneshot::Sender<RouteAnswer>,
    },
    /// Round `n` started, by `by`, at `at_ms`: every hall starts it too.
    Round { n: u32, by: String, at_ms: Millis },
    /// Round `round`'s pairings: every hall imports them too.
    Pairings { round: u32, rows: Vec<Pairing> },
}

/// What became of a routed decision.
#[derive(Debug)]
pub enum RouteAnswer {
    /// The hall took it; here it is as the event node's record holds it.
    Taken(Box<Decision>),
    Refused(Refusal),
}

/// Takes decisions; see the module.
#[derive(Clone)]
pub struct Decider {
    db: Arc<Db>,
    hub: Hub,
    changes: Option<Arc<watch::Sender<u64>>>,
    route: Option<Route>,
}

/// Why a decision was not taken, as the HTTP answer would say it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub status: u16,
    pub message: String,
}

impl From<ApiError> for Refusal {
    fn from(e: ApiError) -> Refusal {
        Refusal {
            status: e.0.as_u16(),
            message: e.1,
        }
    }
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> ApiError {
        ApiError(
            StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            r.message,
        )
    }
}

impl Decider {
    /// A decider over the database at `db_path` with connections of its own (a hall taking the
    /// event node's commands).
    pub fn new(db_path: &Path, hub: Hub, changes: Option<Arc<watch::Sender<u64>>>) -> Decider {
        Decider::with_db(
            Arc::new(Db {
                path: db_path.to_owned(),
                reader: Mutex::new(ReaderState::default()),
                admin: Mutex::new(None),
            }),
            hub,
            changes,
            None,
        )
    }

    pub(super) fn with_db(
        db: Arc<Db>,
        hub: Hub,
        changes: Option<Arc<watch::Sender<u64>>>,
        route: Option<Route>,
    ) -> Decider {
        Decider {
            db,
            hub,
            changes,
            route,
        }
    }

    fn changed(&self) {
        if let Some(changes) = &self.changes {
            changes.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Takes `action` on `game` at `at` (wall-clock ms): a hall's command. A decision already
    /// taken with this game, time and author (the command delivered again after the hall
    /// stopped before acknowledging it) is not taken twice: the one recorded is given back.
    pub async fn take(
        &self,
        game: GameId,
        action: AdminAction,
        at: Millis,
    ) -> Result<Decision, Refusal> {
        let who = action.author();
        let db = self.db.clone();
        let taken = tokio::task::spawn_blocking(move || {
            with_admin(&db, |store| {
                Ok(store
                    .decisions(game)
                    .map_err(decision_error)?
                    .into_iter()
                    .find(|d| d.at_ms == at && d.author == who))
            })
        })
        .await
        .map_err(|e| Refusal::from(ApiError::from(RelayError::from(e))))??;
        if let Some(d) = taken {
            return Ok(d);
        }
        self.act_at(game, action, at).await.map_err(Refusal::from)
    }

    /// [`Decider::act_at`] now, or through the route to the hall owning the board.
    pub(super) async fn act(
        &self,
        game: GameId,
        action: AdminAction,
    ) -> Result<Decision, ApiError> {
        match &self.route {
            Some(route) => {
                let (answer, answered) = oneshot::channel();
                route
                    .send(Routed::Decision {
                        game,
                        action,
                        at_ms: now_ms(),
                        answer,
                    })
                    .await
                    .map_err(|_| {
                        ApiError(
                            StatusCode::SERVICE_UNAVAILABLE,
                            "the event node is stopping: nothing was sent".into(),
                        )
                    })?;
                let answer = answered.await.map_err(|_| {
                    ApiError(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "the event node is stopping: the decision may reach the hall later".into(),
                    )
                })?;
                match answer {
                    RouteAnswer::Taken(decision) => {
                        self.changed();
                        Ok(*decision)
                    }
                    RouteAnswer::Refused(r) => Err(r.into()),
                }
            }
            None => self.act_at(game, action, now_ms()).await,
        }
    }

    /// Applies `action` to `game` at `at`: through the task of the board recording it, between
    /// two reads of its port (so the board follows a changed record or a final result), else in
    /// the store alone; then tells the relays and, for the board's current game, the live page.
    async fn act_at(
        &self,
        game: GameId,
        action: AdminAction,
        at: Millis,
    ) -> Result<Decision, ApiError> {
        let db = self.db.clone();
        let live_board = match action.for_the_board() {
            true => self.db.read(move |r, db| r.board_playing(db, game)).await?,
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
                        let result = decide(&db, action, game, at);
                        let applied = result.as_ref().ok().map(|(_, _, moves, closed)| Applied {
                            moves: moves.clone(),
                            record_changed,
                            closed: *closed,
                        });
                        let _ignored_if_asker_gone = answer.send(result);
                        applied
                    }),
                };
                if let Err(change) = self.hub.desks().hand(change).await {
                    // No task records the board (any more): the decision is the store's alone.
                    tokio::task::spawn_blocking(move || {
                        (change.apply)();
                    })
                    .await
                    .map_err(RelayError::from)?;
                }
                answered.await.map_err(|_| {
                    // The board's task dropped it: its store refuses writes (say why), or it
                    // is stopping. The decision is refused whole, not kept to be written later:
                    // the arbiter takes it again once the record can hold it.
                    let why = self
                        .hub
                        .snapshot()
                        .0
                        .into_iter()
                        .find(|b| b.name == board)
                        .and_then(|b| b.store_error);
                    let why = why.map_or_else(
                        || "its store refuses writes, or it is stopping".to_owned(),
                        |e| format!("the store refuses writes: {e}"),
                    );
                    ApiError(
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!(
                            "board {board} could not take the decision now ({why}); nothing \
                             changed: take it again once the store takes writes"
                        ),
                    )
                })??
            }
            None => tokio::task::spawn_blocking(move || decide(&db, action, game, at))
                .await
                .map_err(RelayError::from)??,
        };
        self.changed();
        // Only the board's current game is on the live page.
        if let Some(board) = board {
            let current = self.db.read(|r, db| r.boards(db)).await?;
            if current
                .games
                .get(&board)
                .is_some_and(|g| g.id == decided.game.0)
            {
                self.hub.decision(&board, &decided);
            }
        }
        Ok(decided)
    }

    /// Imports round `round`'s pairings (replacing the round's earlier ones): how many boards;
    /// at the event node, every hall gets them too.
    pub(super) async fn import_pairings(
        &self,
        round: u32,
        rows: Vec<Pairing>,
    ) -> Result<usize, ApiError> {
        let imported = self.import_rows(round, rows.clone()).await?;
        if let Some(route) = &self.route {
            let _ignored_if_stopping = route.send(Routed::Pairings { round, rows }).await;
        }
        Ok(imported)
    }

    /// Imports round `round`'s pairings here: a hall's command, or the event node's own.
    pub async fn import_rows(&self, round: u32, rows: Vec<Pairing>) -> Result<usize, Refusal> {
        let db = self.db.clone();
        let imported = tokio::task::spawn_blocking(move || {
            with_admin(&db, |store| {
                store.import_pairings(round, &rows).map_err(|e| match e {
                    StoreError::InvalidNumber(..) => {
                        ApiError(StatusCode::BAD_REQUEST, e.to_string())
                    }
                    e => ApiError::from(RelayError::from(e)),
                })
            })
        })
        .await
        .map_err(|e| Refusal::from(ApiError::from(RelayError::from(e))))??;
        tracing::info!(round, boards = imported, "pairings imported");
        self.changed();
        Ok(imported)
    }

    /// Makes round `n` the current one, started by `by`: the round current before; at the
    /// event node, every hall starts it too.
    pub(super) async fn start_round(&self, n: u32, by: String) -> Result<Option<u32>, ApiError> {
        let at = now_ms();
        let previous = self.start_round_at(n, by.clone(), at).await?;
        if let Some(route) = &self.route {
            let _ignored_if_stopping = route.send(Routed::Round { n, by, at_ms: at }).await;
        }
        Ok(previous)
    }

    /// Makes round `n` the current one here, started by `by` at `at`: a hall's command, or the
    /// event node's own.
    pub async fn start_round_at(
        &self,
        n: u32,
        by: String,
        at: Millis,
    ) -> Result<Option<u32>, Refusal> {
        if n == 0 {
            return Err(Refusal {
                status: 400,
                message: "round must be 1 or more".into(),
            });
        }
        let db = self.db.clone();
        let who = by.clone();
        let previous = tokio::task::spawn_blocking(move || {
            with_admin(&db, |store| {
                store.start_round(n, &who, at).map_err(|e| match e {
                    StoreError::ControlCharacter(_) => {
                        ApiError(StatusCode::BAD_REQUEST, e.to_string())
                    }
                    e => ApiError::from(RelayError::from(e)),
                })
            })
        })
        .await
        .map_err(|e| Refusal::from(ApiError::from(RelayError::from(e))))??;
        tracing::info!(round = n, previous, by = %by, "round started");
        self.changed();
        Ok(previous)
    }
}

/// Runs `f` on the admin's writing connection (opened if needed), on this (blocking) thread.
fn with_admin<T>(db: &Db, f: impl FnOnce(&mut Store) -> Result<T, ApiError>) -> Result<T, Refusal> {
    let mut admin = lock(&db.admin);
    let store = match admin.take() {
        Some(store) => store,
        None => open_admin(&db.path)?,
    };
    let store = admin.insert(store);
    f(store).map_err(Refusal::from)
}

/// The relay's writing connection to `path`: a damaged database (quick_check at open) is
/// refused with its own words, a 503 (nothing can be decided until it is restored).
fn open_admin(path: &Path) -> Result<Store, ApiError> {
    Store::open(path).map_err(|e| match e {
        StoreError::Damaged { .. } => {
            error!(cause = %e, "admin decision refused");
            ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string())
        }
        e => ApiError::from(RelayError::from(e)),
    })
}

/// Applies `action` to `game` at `at` through the relay's writing connection (blocking).
fn decide(db: &Db, action: AdminAction, game: GameId, at: Millis) -> Result<Decided, ApiError> {
    let mut admin = lock(&db.admin);
    let store = match admin.take() {
        Some(store) => store,
        None => open_admin(&db.path)?,
    };
    let store = admin.insert(store);
    let decided = action.apply(store, game, at).map_err(decision_error)?;
    // The game exists: the decision was made on it.
    let record = store.game(game).map_err(RelayError::from)?;
    let (board, moves, closed) = record.map_or((None, Vec::new(), false), |g| {
        (Some(g.board_name), g.moves, g.ended_at_ms.is_some())
    });
    Ok((decided, board, moves, closed))
}
