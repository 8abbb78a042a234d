//! The decider: takes an arbiter's decision, a round start or a round's pairings; the one path
//! the admin API, the console and (at a hall of a clustered event) the event node's commands go
//! through. It knows no HTTP: what it does not take it refuses with a kind ([`Refused`]) and
//! the arbiter's words, which the HTTP layer turns into a status and the event node carries
//! over NATS.
//!
//! Flow: a [`Decider`] holds the database's path and a writing connection of its own, the live
//! side of the boards ([`Live`]: the relay's hub, whose [`desk`]s reach the board tasks) and the
//! change signal. A decision on a game a board is recording (the board's latest game, asked of
//! the store on that connection) is handed to that board's task through its desk, which takes it
//! between two reads of its port; otherwise the store takes it alone; then the relays are told
//! (the change signal) and, for the board's current game, the live page shows it. At the event node, whose boards each belong to a hall, the decider is
//! given a route ([`Route`]): a decision goes to the hall owning the board and is answered once
//! the hall took it and its record came back; a round start and pairings are taken here (the
//! event's own) and sent to every hall. The actions themselves are in [`action`], the refusals
//! in [`refusal`].

pub mod action;
pub mod desk;
pub mod refusal;
#[cfg(test)]
mod tests;

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex, MutexGuard},
};

use tokio::sync::{mpsc, oneshot, watch};
use tracing::{error, info};

pub use self::{
    action::{
        AdminAction, CorrectBody, NoteBody, ResultBody, ResumeBody, RuleBody, UndoBody, author,
    },
    refusal::{Refusal, Refused},
};
use crate::{
    Millis,
    device::serial::now_ms,
    pairings::{Pairing, RoundBye},
    phrase::Phrase,
    store::{Action, Decision, GameId, GameRecord, Store, StoreError},
    tracker::RecordedMove,
};
use desk::{Applied, Desks, RecordChange};
use refusal::store_refusal;

/// The live side of the boards, as the decider reaches it (the relay's hub): the desks of the
/// boards being recorded, why a board's store refuses writes, and the live page.
pub trait Live: Send + Sync + 'static {
    /// The desks of the boards being recorded.
    fn desks(&self) -> &Desks;
    /// Why board `board`'s store refuses its writes now, if it does.
    fn store_error(&self, board: &str) -> Option<String>;
    /// Shows `decision`, taken on board `board`'s current game, on the live page.
    fn decision(&self, board: &str, decision: &Decision);
}

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
    /// The start of round `n` undone, by `by`, at `at_ms`: every hall undoes it too.
    UndoRound { n: u32, by: String, at_ms: Millis },
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
    writer: Arc<Writer>,
    live: Arc<dyn Live>,
    changes: Option<Arc<watch::Sender<u64>>>,
    route: Option<Route>,
}

/// The decider's writing connection to the database at `path`, opened when first needed (and
/// again after a damaged database refused it).
struct Writer {
    path: PathBuf,
    store: Mutex<Option<Store>>,
}

/// What a decision gave back: the decision, the game's board, its live moves, whether it is
/// closed, and the game whole when the decision reopened it (an undone result).
struct Decided {
    decision: Decision,
    board: Option<String>,
    moves: Vec<RecordedMove>,
    closed: bool,
    reopened: Option<Box<GameRecord>>,
}

impl Decider {
    /// A decider over the database at `db_path`, with a writing connection of its own, reaching
    /// the boards through `live` (the relay's hub).
    pub fn new(
        db_path: &Path,
        live: impl Live,
        changes: Option<Arc<watch::Sender<u64>>>,
    ) -> Decider {
        Decider {
            writer: Arc::new(Writer {
                path: db_path.to_owned(),
                store: Mutex::new(None),
            }),
            live: Arc::new(live),
            changes,
            route: None,
        }
    }

    /// The same decider sending what it does not take alone through `route` (the event node).
    pub fn with_route(mut self, route: Option<Route>) -> Decider {
        self.route = route;
        self
    }

    fn changed(&self) {
        if let Some(changes) = &self.changes {
            changes.send_modify(|n| *n = n.wrapping_add(1));
        }
    }

    /// Runs `f` on the writing connection, on a blocking thread.
    async fn on_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<T, Refusal> + Send + 'static,
    ) -> Result<T, Refusal> {
        let writer = self.writer.clone();
        tokio::task::spawn_blocking(move || writer.with(f))
            .await
            .map_err(Refusal::failed)?
    }

    /// The board whose latest game `game` is (its task may be recording it).
    async fn board_of_latest_game(&self, game: GameId) -> Result<Option<String>, Refusal> {
        self.on_store(move |store| store.board_of_latest_game(game).map_err(Refusal::failed))
            .await
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
        let taken = self
            .on_store(move |store| {
                Ok(store
                    .decisions(game)?
                    .into_iter()
                    .find(|d| d.at_ms == at && d.author == who))
            })
            .await?;
        if let Some(d) = taken {
            return Ok(d);
        }
        self.act_at(game, action, at).await
    }

    /// `act_at` now (the decision taken here), or through the route to the hall owning the board.
    pub async fn act(&self, game: GameId, action: AdminAction) -> Result<Decision, Refusal> {
        let Some(route) = &self.route else {
            return self.act_at(game, action, now_ms()).await;
        };
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
                Refusal::worded(Refused::Unavailable, Phrase::new("refused.node_stopping"))
            })?;
        let answer = answered.await.map_err(|_| {
            Refusal::worded(
                Refused::Unavailable,
                Phrase::new("refused.node_stopping_sent"),
            )
        })?;
        match answer {
            RouteAnswer::Taken(decision) => {
                self.changed();
                Ok(*decision)
            }
            RouteAnswer::Refused(r) => Err(r),
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
    ) -> Result<Decision, Refusal> {
        let live_board = match action.for_the_board() {
            true => self.board_of_latest_game(game).await?,
            false => None,
        };
        let writer = self.writer.clone();
        let decided = match live_board {
            Some(board) => {
                // The board recording the game takes the decision between two reads of its port.
                let (answer, answered) = oneshot::channel();
                let change = RecordChange {
                    board: board.clone(),
                    game,
                    apply: Box::new(move || {
                        let result = writer.decide(action, game, at);
                        let applied = result.as_ref().ok().map(|d| Applied {
                            moves: d.moves.clone(),
                            record_changed: d.decision.action.changed_record(),
                            closed: d.closed,
                            reopened: d.reopened.clone(),
                        });
                        let _ignored_if_asker_gone = answer.send(result);
                        applied
                    }),
                };
                if let Err(change) = self.live.desks().hand(change).await {
                    // No task records the board (any more): the decision is the store's alone.
                    tokio::task::spawn_blocking(move || {
                        (change.apply)();
                    })
                    .await
                    .map_err(Refusal::failed)?;
                }
                answered.await.map_err(|_| self.dropped_by(&board))??
            }
            None => tokio::task::spawn_blocking(move || writer.decide(action, game, at))
                .await
                .map_err(Refusal::failed)??,
        };
        self.changed();
        // Only the board's current game is on the live page.
        if let Some(board) = decided.board {
            let current = self.board_of_latest_game(decided.decision.game).await?;
            if current.as_deref() == Some(board.as_str()) {
                self.live.decision(&board, &decided.decision);
            }
        }
        Ok(decided.decision)
    }

    /// The refusal when board `board`'s task dropped a decision: its store refuses writes (said
    /// with the store's reason) or it is stopping. The decision is refused whole, not kept to
    /// be written later: the arbiter takes it again once the record can hold it.
    fn dropped_by(&self, board: &str) -> Refusal {
        let why = self.live.store_error(board).map_or_else(
            || Phrase::new("refused.store_or_stopping"),
            |e| Phrase::new("refused.store_refuses").text("error", e),
        );
        Refusal::worded(
            Refused::Unavailable,
            Phrase::new("refused.board_busy")
                .text("board", board)
                .phrase("why", why),
        )
    }

    /// Imports round `round`'s pairings and byes (replacing the round's earlier ones), by `by`,
    /// logged so that it can be undone: how many boards; at the event node, every hall gets
    /// the boards too (the byes count for the standings, which the event node keeps).
    pub async fn import_pairings(
        &self,
        round: u32,
        rows: Vec<Pairing>,
        byes: Vec<RoundBye>,
        by: String,
    ) -> Result<usize, Refusal> {
        let sent = rows.clone();
        let imported = self
            .on_store(move |store| {
                store
                    .import_round_by(round, &rows, &byes, &by, now_ms())
                    .map_err(|e| {
                        store_refusal(e, |e| {
                            matches!(
                                e,
                                StoreError::InvalidNumber(..) | StoreError::ControlCharacter(_)
                            )
                        })
                    })
            })
            .await?;
        info!(round, boards = imported, "pairings imported");
        self.changed();
        if let Some(route) = &self.route {
            let _ignored_if_stopping = route.send(Routed::Pairings { round, rows: sent }).await;
        }
        Ok(imported)
    }

    /// Undoes the latest import of round `round`'s pairings (by `by`): the round's pairings and
    /// byes before it are back; at the event node every hall gets those boards again. Returns
    /// how many boards the round has now.
    pub async fn undo_pairings_import(&self, round: u32, by: String) -> Result<usize, Refusal> {
        let restored = self
            .on_store(move |store| {
                store
                    .undo_pairings_import(round, &by, now_ms())
                    .map_err(|e| match e {
                        StoreError::ImportNotUndoable { round, games: 0 } => Refusal::worded(
                            Refused::Invalid,
                            Phrase::new("refused.import_undo_not_latest").number("round", round),
                        ),
                        StoreError::ImportNotUndoable { round, games } => Refusal::worded(
                            Refused::Invalid,
                            Phrase::new("refused.import_undo_games")
                                .number("round", round)
                                .number("games", games),
                        ),
                        e => store_refusal(e, |e| matches!(e, StoreError::ControlCharacter(_))),
                    })
            })
            .await?;
        info!(round, boards = restored.len(), "pairings import undone");
        self.changed();
        let boards = restored.len();
        if let Some(route) = &self.route {
            let _ignored_if_stopping = route
                .send(Routed::Pairings {
                    round,
                    rows: restored,
                })
                .await;
        }
        Ok(boards)
    }

    /// Imports round `round`'s pairings here, without byes (the event node keeps those): a
    /// hall's command.
    pub async fn import_rows(&self, round: u32, rows: Vec<Pairing>) -> Result<usize, Refusal> {
        let imported = self
            .on_store(move |store| {
                store
                    .import_pairings(round, &rows)
                    .map_err(|e| store_refusal(e, |e| matches!(e, StoreError::InvalidNumber(..))))
            })
            .await?;
        info!(round, boards = imported, "pairings imported");
        self.changed();
        Ok(imported)
    }

    /// Has the sensor of board `board` learn the board again (a Certabo board's calibration,
    /// from the next calibration setup it shows), through the task recording it: refused if no
    /// task records it here, or if its kind learns nothing.
    pub async fn relearn(&self, board: &str) -> Result<(), Refusal> {
        match self.live.desks().relearn(board).await {
            Some(true) => Ok(()),
            Some(false) => Err(Refusal::learns_nothing(board)),
            None => Err(Refusal::unknown_board(board)),
        }
    }

    /// Makes round `n` the current one, started by `by`: the round current before; at the
    /// event node, every hall starts it too.
    pub async fn start_round(&self, n: u32, by: String) -> Result<Option<u32>, Refusal> {
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
            return Err(Refusal::worded(
                Refused::Invalid,
                Phrase::new("refused.round_zero"),
            ));
        }
        let who = by.clone();
        let previous = self
            .on_store(move |store| {
                store
                    .start_round(n, &who, at)
                    .map_err(|e| store_refusal(e, |e| matches!(e, StoreError::ControlCharacter(_))))
            })
            .await?;
        info!(round = n, previous, by = %by, "round started");
        self.changed();
        Ok(previous)
    }
}

impl Decider {
    /// Gives `name` a bye of kind `code` in `round` ([`Store::set_bye`]): the event's, kept
    /// here (at the event node too, whose standings count it).
    pub async fn set_bye(
        &self,
        round: u32,
        name: String,
        code: char,
        by: String,
    ) -> Result<(), Refusal> {
        let who = name.clone();
        self.on_store(move |store| {
            store
                .set_bye(round, &who, code, &by, now_ms())
                .map_err(bye_refusal)
        })
        .await?;
        info!(round, name = %name, code = %code, "bye given");
        self.changed();
        Ok(())
    }

    /// Withdraws `name`'s bye in `round` ([`Store::withdraw_bye`]).
    pub async fn withdraw_bye(&self, round: u32, name: String, by: String) -> Result<(), Refusal> {
        let who = name.clone();
        self.on_store(move |store| {
            store
                .withdraw_bye(round, &who, &by, now_ms())
                .map_err(bye_refusal)
        })
        .await?;
        info!(round, name = %name, "bye withdrawn");
        self.changed();
        Ok(())
    }

    /// Records board number `board`'s game of round `round` as not played (`result`: a forfeit)
    /// here, in this hall's store ([`Store::record_forfeit`]): the game is the board's, so at
    /// the event node, which holds no board of its own, it is refused (take it at the hall).
    pub async fn record_forfeit(
        &self,
        board: u32,
        round: u32,
        result: String,
        author: String,
        note: Option<String>,
    ) -> Result<Decision, Refusal> {
        if self.route.is_some() {
            return Err(Refusal::worded(
                Refused::Invalid,
                Phrase::new("refused.forfeit_at_hall").number("board", board),
            ));
        }
        let at = now_ms();
        let decision = self
            .on_store(move |store| {
                store
                    .record_forfeit(board, round, &result, &author, note.as_deref(), at)
                    .map_err(Refusal::from)
            })
            .await?;
        info!(board, round, game = decision.game.0, "forfeit recorded");
        self.changed();
        Ok(decision)
    }

    /// Undoes the start of round `n` (by `by`): the round before it is current again. At the
    /// event node every hall undoes it too. Returns the round current again.
    pub async fn undo_round_start(&self, n: u32, by: String) -> Result<u32, Refusal> {
        let at = now_ms();
        let current = self.undo_round_start_at(n, by.clone(), at).await?;
        if let Some(route) = &self.route {
            let _ignored_if_stopping = route.send(Routed::UndoRound { n, by, at_ms: at }).await;
        }
        Ok(current)
    }

    /// Undoes the start of round `n` here, by `by` at `at`: a hall's command, or the event
    /// node's own.
    pub async fn undo_round_start_at(
        &self,
        n: u32,
        by: String,
        at: Millis,
    ) -> Result<u32, Refusal> {
        let who = by.clone();
        let current = self
            .on_store(move |store| {
                store.undo_round_start(n, &who, at).map_err(|e| match e {
                    StoreError::RoundStartNotUndoable { round, games: 0 } => Refusal::worded(
                        Refused::Invalid,
                        Phrase::new("refused.round_undo_not_latest").number("round", round),
                    ),
                    StoreError::RoundStartNotUndoable { round, games } => Refusal::worded(
                        Refused::Invalid,
                        Phrase::new("refused.round_undo_games")
                            .number("round", round)
                            .number("games", games),
                    ),
                    e => store_refusal(e, |e| matches!(e, StoreError::ControlCharacter(_))),
                })
            })
            .await?;
        info!(round = n, current, by = %by, "round start undone");
        self.changed();
        Ok(current)
    }
}

/// The store's refusal of a bye, in the arbiter's words where the arbiter can mend it.
fn bye_refusal(e: StoreError) -> Refusal {
    let worded = |phrase| Refusal::worded(Refused::Invalid, phrase);
    match e {
        StoreError::UnknownPlayer(name) => {
            worded(Phrase::new("refused.unknown_player").text("name", &name))
        }
        StoreError::PlayerPaired { round, name, board } => worded(
            Phrase::new("refused.player_paired")
                .text("name", &name)
                .number("board", board)
                .number("round", round),
        ),
        StoreError::NotAByeCode(code) => {
            worded(Phrase::new("refused.not_a_bye").text("code", code.to_string()))
        }
        StoreError::NoBye { round, name } => worded(
            Phrase::new("refused.no_bye")
                .text("name", &name)
                .number("round", round),
        ),
        e => store_refusal(e, |e| {
            matches!(
                e,
                StoreError::ControlCharacter(_) | StoreError::InvalidNumber(..)
            )
        }),
    }
}

impl Writer {
    fn lock(&self) -> MutexGuard<'_, Option<Store>> {
        // A panic while deciding leaves the connection behind, still usable.
        self.store
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the connection (opened if needed), on this (blocking) thread.
    fn with<T>(&self, f: impl FnOnce(&mut Store) -> Result<T, Refusal>) -> Result<T, Refusal> {
        let mut slot = self.lock();
        let store = match slot.take() {
            Some(store) => store,
            None => self.open()?,
        };
        f(slot.insert(store))
    }

    /// The connection to `path`: a damaged database (quick_check at open) is refused with its
    /// own words, as unavailable (nothing can be decided until it is restored).
    fn open(&self) -> Result<Store, Refusal> {
        Store::open(&self.path).map_err(|e| match e {
            StoreError::Damaged { .. } => {
                error!(cause = %e, "admin decision refused");
                Refusal::unavailable(e.to_string())
            }
            e => Refusal::failed(e),
        })
    }

    /// Applies `action` to `game` at `at` (blocking).
    fn decide(&self, action: AdminAction, game: GameId, at: Millis) -> Result<Decided, Refusal> {
        self.with(|store| {
            let decision = action.apply(store, game, at)?;
            // The game exists: the decision was made on it.
            let record = store.game(game).map_err(Refusal::failed)?;
            let reopened = match &decision.action {
                Action::Undo { reopened: true, .. } => record.clone().map(Box::new),
                _ => None,
            };
            let (board, moves, closed) = record.map_or((None, Vec::new(), false), |g| {
                (Some(g.board_name), g.moves, g.ended_at_ms.is_some())
            });
            Ok(Decided {
                decision,
                board,
                moves,
                closed,
                reopened,
            })
        })
    }
}
