//! The event node: every hall's records into one database, and the relay over it.
//!
//! Flow: `boardscribe event --config FILE` ([`event`]) opens its own database (never a hall's),
//! shows what it already holds on the live page, starts the relay (round PGN in slices, the
//! page, folders, Lichess, the delay) and follows each hall of `[cluster] halls` ([`follow`]):
//! a durable consumer on the hall's stream, set to start right after the last record the
//! database holds of that hall, batches what arrives, applies it in one transaction
//! ([`Store::apply_hall_records`]: exactly once, in order), acknowledges it, then shows the
//! games it touched and bumps the change signal the folder and Lichess follow. Any failure
//! drops the consumer and starts it again from the database's position: the database, not the
//! broker, says what was applied. Beside them it hears the halls' statuses and keeps the
//! halls' faults as alerts on the arbiter's console ([`super::health`]: a hall silent or
//! stalled, an outbox growing, a board number two halls use).

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::{Context as _, bail};
use async_nats::jetstream::{
    self,
    consumer::{AckPolicy, DeliverPolicy, pull},
};
use futures_util::{FutureExt as _, StreamExt as _};
use tokio::{sync::watch, task::JoinSet};
use tracing::{Instrument as _, error, info, info_span, warn};

use super::{
    hall_stream,
    health::{self, HallStatus, HallWatch, STATUS_SUBJECTS},
    lock,
};
use crate::{
    config::{ClusterConfig, Config, ConfigOverrides, FileChecks},
    device::serial::now_ms,
    metrics::Metrics,
    relay::{Hub, RelayExtras, Token, alerts::EventAlert, delayed::clock_at, live::Lost},
    services::{self, Publications},
    store::{
        BoardId, GameId, ShownGame, Store, StoreError,
        hall_record::{Envelope, Incoming},
        replica::{Applied, NumberRefused},
    },
};

/// The most records applied in one transaction.
const BATCH: usize = 512;

/// How long a batch waits for more records after its first, at most: a record reaches the
/// event node's database this much later at worst, and a busy hall's records share commits.
const LINGER: Duration = Duration::from_millis(30);

/// How long a delivered record may wait for its acknowledgement before the broker sends it
/// again.
const ACK_WAIT: Duration = Duration::from_secs(30);

/// `boardscribe event`: what it is told.
#[derive(Clone, Debug, Default)]
pub struct EventOptions {
    pub config: PathBuf,
    /// `--db`, `--http`, `--delay`.
    pub overrides: ConfigOverrides,
}

/// `boardscribe event`: follows every hall until SIGINT/SIGTERM.
pub fn event(options: EventOptions) -> anyhow::Result<()> {
    let config = Config::load_with(Some(&options.config), options.overrides, FileChecks::ALL)?;
    let Some(cluster) = config.cluster.clone() else {
        bail!(
            "{}: the event node needs a [cluster] table with url and halls",
            options.config.display()
        );
    };
    if cluster.halls.is_empty() {
        bail!(
            "{}: [cluster] names no halls: the event node follows the halls listed in \
             halls = [\"A\", \"B\"]",
            options.config.display()
        );
    }
    if !config.boards.is_empty() || !config.buses.is_empty() {
        bail!(
            "{}: the event node records no boards itself (each hall does): remove its \
             [[board]] and [[bus]] tables",
            options.config.display()
        );
    }
    let token = config
        .admin
        .as_ref()
        .map(|a| Token::from_file(&a.token_file))
        .transpose()?;
    let mut store = Store::open(&config.database)
        .with_context(|| format!("opening {}", config.database.display()))?;
    if let Some(hall) = store.hall()? {
        bail!(
            "{} is hall {}'s database: the event node keeps a database of its own",
            config.database.display(),
            hall.hall
        );
    }
    // The event's own round and settings (`[tournament]`), as a hall's `run` opens them: the
    // round PGN, the folders and the push follow the event node's current round.
    let round = services::round_info(&config.tournament)?;
    let opened = store.open_event(
        round.as_ref(),
        &services::event_settings(&config.tournament),
        now_ms(),
    )?;
    info!(?opened, "the event");
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(run(config, cluster, store, token))
}

async fn run(
    config: Config,
    cluster: ClusterConfig,
    store: Store,
    token: Option<Token>,
) -> anyhow::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        services::wait_for_signal().await;
        info!("stopping");
        let _ignored_if_all_done = stop_tx.send(true);
    });
    let metrics = Arc::new(Metrics::new());
    let changes = Arc::new(watch::channel(0u64).0);
    let hub = Hub::new();
    let shown = Shown::new(hub.clone());
    let store = Arc::new(Mutex::new(store));
    {
        let s = lock(&store);
        shown.everything(&s)?;
    }
    let publication = config.relay.publication();
    let connection = super::connect(&cluster, "boardscribe event node").await?;
    let client = connection.client;
    // Read by no one here, kept so that why the servers cannot be reached is still logged.
    let _failure = connection.failure;
    // The halls' faults, for the arbiter (the console's alerts).
    let health = Health {
        watch: Arc::new(Mutex::new(HallWatch::new(
            &cluster.halls,
            now_ms(),
            cluster.hall_silent_after_ms,
        ))),
        numbers: Arc::new(Mutex::new(lock(&store).numbers_refused()?)),
    };
    let (alerts_tx, alerts_rx) = watch::channel(Arc::new(Vec::new()));
    tokio::spawn(
        health
            .clone()
            .follow(client.clone(), alerts_tx, stop_rx.clone()),
    );
    // Decisions taken here go to the hall owning the board; rounds and pairings to every hall.
    let (route, routed) = tokio::sync::mpsc::channel(64);
    tokio::spawn(super::commands::route(
        client.clone(),
        store.clone(),
        cluster.halls.clone(),
        cluster.replicas,
        routed,
    ));
    if let Some(addr) = config.http {
        let extras = RelayExtras {
            metrics: metrics.clone(),
            changes: Some(changes.clone()),
            publication,
            public_hub: None,
            route: Some(route.clone()),
            token_file: config.admin.as_ref().map(|a| a.token_file.clone()),
            secure_cookies: config.http_tls == Some(crate::config::HttpTls::Proxy),
            event_alerts: Some(alerts_rx),
            language: config.tournament.language,
            ..RelayExtras::default()
        };
        let url = services::start_relay_with(
            addr,
            &hub,
            &config.database,
            token,
            stop_rx.clone(),
            extras,
        )
        .await?;
        info!(%url, "relay serving the whole event");
    }
    drop(route);
    let mut relays = JoinSet::new();
    let lichess = services::publications::lichess_queues(&config.relay.lichess)?;
    Publications {
        db: config.database.clone(),
        folder: config.relay.folder.as_ref().map(|f| {
            crate::broadcast::folder::FolderRelay::new(&f.dir)
                .with_clock_format(config.relay.clk_format)
        }),
        lichess,
        publication,
        slice: config.relay.slice,
    }
    .spawn(&mut relays, &changes);
    let js = jetstream::new(client.clone());
    let mut halls = JoinSet::new();
    halls.spawn(
        shown
            .clone()
            .follow(config.database.clone(), stop_rx.clone()),
    );
    for hall in &cluster.halls {
        let follower = Follower {
            hall: hall.clone(),
            replicas: cluster.replicas,
            js: js.clone(),
            store: store.clone(),
            shown: shown.clone(),
            metrics: metrics.clone(),
            changes: changes.clone(),
            health: health.clone(),
        };
        let span = info_span!("hall", hall = %hall);
        halls.spawn(follow(follower, stop_rx.clone()).instrument(span));
    }
    println!(
        "event node: following halls {} at {}",
        cluster.halls.join(", "),
        cluster.urls.join(",")
    );
    // systemd: ready once every hall is followed; the watchdog fed until the stop.
    let notifier = crate::notify::Notifier::from_env();
    if let Err(e) = notifier.ready(&format!("following halls {}", cluster.halls.join(", "))) {
        warn!(cause = %e, "readiness not sent to systemd");
    }
    {
        let notifier = notifier.clone();
        let mut stop = stop_rx.clone();
        tokio::spawn(async move {
            notifier
                .watchdog_loop(async move {
                    let _ignored_if_gone = stop.wait_for(|s| *s).await;
                })
                .await;
        });
    }
    while let Some(done) = halls.join_next().await {
        if let Err(e) = done {
            error!(cause = %e, "a hall's follower failed");
        }
    }
    drop(changes);
    let relays_done = async { while relays.join_next().await.is_some() {} };
    if tokio::time::timeout(Duration::from_secs(10), relays_done)
        .await
        .is_err()
    {
        relays.abort_all();
    }
    hub.close();
    let store = lock(&store);
    store.integrity_check()?;
    info!("store closed");
    Ok(())
}

/// What the live page shows of every board: its newest game, its link.
///
/// Applying a batch only notes what it touched ([`Shown::note`]); [`Shown::follow`] shows it,
/// at most every [`SHOW_EVERY`], through a read-only connection of its own, so that reading
/// games for the page never holds up the records.
#[derive(Clone)]
struct Shown {
    hub: Hub,
    inner: Arc<Mutex<ShownState>>,
}

#[derive(Default)]
struct ShownState {
    /// Each board's newest game, so that a change to an older game does not replace it.
    latest: HashMap<BoardId, GameId>,
    /// Touched since last shown: games (in order), boards with a new game, boards added or
    /// renumbered, links.
    games: Vec<GameId>,
    new_game: Vec<BoardId>,
    boards: Vec<BoardId>,
    links: Vec<(BoardId, bool)>,
}

/// How often what the records changed is shown on the page.
const SHOW_EVERY: Duration = Duration::from_millis(250);

impl Shown {
    fn new(hub: Hub) -> Shown {
        Shown {
            hub,
            inner: Arc::new(Mutex::new(ShownState::default())),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ShownState> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every board of the database, as it stands.
    fn everything(&self, store: &Store) -> Result<(), StoreError> {
        for b in store.boards_shown(None)? {
            self.hub.add_board_kind(&b.name, b.number, b.kind, &[]);
            if let Some(id) = b.latest_game {
                self.state().latest.insert(b.id, id);
                if let Some(g) = store.game_shown(id)? {
                    self.hub.show_game(&g, true, clock_at(&g, now_ms()), true);
                }
            }
            self.link(&b.name, b.connected);
        }
        Ok(())
    }

    fn link(&self, name: &str, connected: Option<bool>) {
        match connected {
            Some(true) => self.hub.board_connected(name),
            Some(false) => self.hub.board_lost(name, Lost::HallLost),
            None => {}
        }
    }

    /// Notes what a batch changed, to be shown.
    fn note(&self, applied: &Applied) {
        let mut st = self.state();
        for &(board, game) in &applied.new_games {
            st.latest.insert(board, game);
            st.new_game.push(board);
        }
        for &g in &applied.games {
            if !st.games.contains(&g) {
                st.games.push(g);
            }
        }
        st.boards.extend_from_slice(&applied.boards);
        st.links.extend_from_slice(&applied.links);
    }

    /// Shows what was noted, every [`SHOW_EVERY`], until `stop`.
    async fn follow(self, db: PathBuf, mut stop: watch::Receiver<bool>) {
        let mut store: Option<Store> = None;
        // Each board's game as last shown, so that only what is new in it is read.
        let mut games: HashMap<BoardId, ShownGame> = HashMap::new();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(SHOW_EVERY) => {}
                _ = stop.wait_for(|s| *s) => return,
            }
            let taken = {
                let mut st = self.state();
                ShownState {
                    latest: st.latest.clone(),
                    games: std::mem::take(&mut st.games),
                    new_game: std::mem::take(&mut st.new_game),
                    boards: std::mem::take(&mut st.boards),
                    links: std::mem::take(&mut st.links),
                }
            };
            if taken.games.is_empty() && taken.boards.is_empty() && taken.links.is_empty() {
                continue;
            }
            let shown = self.clone();
            let path = db.clone();
            let mut kept = store.take();
            let mut held = std::mem::take(&mut games);
            let result = tokio::task::spawn_blocking(move || {
                if kept.is_none() {
                    kept = Some(Store::open_read_only(&path)?);
                }
                let read = match &kept {
                    Some(s) => shown.show(s, &taken, &mut held),
                    None => Ok(()),
                };
                // What a failed read left is read whole next time.
                if read.is_err() {
                    held.clear();
                }
                read.map(|()| (kept, held))
            })
            .await;
            match result {
                Ok(Ok((s, g))) => (store, games) = (s, g),
                Ok(Err(e)) => warn!(cause = %e, "the live page could not read the store"),
                Err(e) => error!(cause = %e, "the live page's reader failed"),
            }
        }
    }

    /// Shows what `t` noted, all of it as one commit left the database; `games` holds each
    /// board's game as last shown, read again only for what is new in it
    /// ([`Store::game_shown_since`]).
    fn show(
        &self,
        store: &Store,
        t: &ShownState,
        games: &mut HashMap<BoardId, ShownGame>,
    ) -> Result<(), StoreError> {
        store.in_snapshot(|store| {
            for &id in &t.boards {
                for b in store.boards_shown(Some(id))? {
                    self.hub.add_board_kind(&b.name, b.number, b.kind, &[]);
                }
            }
            let retracted = store.retractions_count()?;
            // Each game noted, if it is its board's newest.
            let newest: HashMap<GameId, BoardId> = t.latest.iter().map(|(&b, &g)| (g, b)).collect();
            for &id in &t.games {
                let Some(&board) = newest.get(&id) else {
                    continue;
                };
                let kept = games.remove(&board).filter(|k| k.game.id == id);
                let Some(shown) = store.game_shown_since(id, kept, retracted)? else {
                    continue;
                };
                let g = &shown.game;
                let new_game = t.new_game.contains(&g.board);
                self.hub.show_game(g, true, clock_at(g, now_ms()), new_game);
                games.insert(board, shown);
            }
            for &(board, connected) in &t.links {
                if let Some(b) = store.boards_shown(Some(board))?.first() {
                    self.link(&b.name, Some(connected));
                }
            }
            Ok(())
        })
    }
}

/// One hall's follower and what it shares with the others.
struct Follower {
    hall: String,
    replicas: usize,
    js: jetstream::Context,
    store: Arc<Mutex<Store>>,
    shown: Shown,
    metrics: Arc<Metrics>,
    changes: Arc<watch::Sender<u64>>,
    health: Health,
}

/// The halls' health: what the followers and the halls' statuses say, as alerts for the
/// arbiter ([`HallWatch`]).
#[derive(Clone)]
struct Health {
    watch: Arc<Mutex<HallWatch>>,
    /// The boards kept without their hall's number (read again when boards change).
    numbers: Arc<Mutex<Vec<NumberRefused>>>,
}

/// How often the halls' alerts are made again.
const HEALTH_EVERY: Duration = Duration::from_secs(1);

impl Health {
    fn watch(&self) -> std::sync::MutexGuard<'_, HallWatch> {
        self.watch.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hears the halls' statuses and makes the alerts every [`HEALTH_EVERY`] into `alerts`,
    /// logging each alert as it opens and closes, until `stop`.
    async fn follow(
        self,
        client: async_nats::Client,
        alerts: watch::Sender<Arc<Vec<EventAlert>>>,
        mut stop: watch::Receiver<bool>,
    ) {
        let mut statuses = loop {
            match client.subscribe(STATUS_SUBJECTS).await {
                Ok(s) => break s,
                Err(e) => {
                    warn!(cause = %e, "cannot hear the halls' statuses; trying again");
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                        _ = stop.wait_for(|s| *s) => return,
                    }
                }
            }
        };
        let mut tick = tokio::time::interval(HEALTH_EVERY);
        loop {
            tokio::select! {
                m = statuses.next() => {
                    let Some(m) = m else { return };
                    let Some(hall) = health::status_hall(&m.subject) else { continue };
                    match serde_json::from_slice::<HallStatus>(&m.payload) {
                        Ok(s) => self.watch().heard(hall, s, now_ms()),
                        Err(e) => warn!(hall, cause = %e, "a hall's status is not readable"),
                    }
                }
                _ = tick.tick() => {
                    let numbers = self.numbers.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    let now = self.watch().alerts(&numbers, now_ms());
                    let before = alerts.borrow().clone();
                    if *before != now {
                        for a in now.iter().filter(|a| !before.iter().any(|b| b.id == a.id)) {
                            warn!(hall = %a.hall, kind = %a.kind, "{}; {}", a.detail, a.advice);
                        }
                        for a in before.iter().filter(|b| !now.iter().any(|a| a.id == b.id)) {
                            info!(hall = %a.hall, kind = %a.kind, "over: {}", a.detail);
                        }
                        alerts.send_replace(Arc::new(now));
                    }
                }
                _ = stop.wait_for(|s| *s) => return,
            }
        }
    }
}

/// Follows `f.hall` until `stop`; every failure starts the consumer again from the database's
/// position.
async fn follow(f: Follower, mut stop: watch::Receiver<bool>) {
    let mut said: Option<String> = None;
    loop {
        let result = tokio::select! {
            r = consume(&f) => r,
            _ = stop.wait_for(|s| *s) => return,
        };
        let why = match result {
            Ok(()) => "the consumer's messages ended".to_owned(),
            Err(e) => e.to_string(),
        };
        if said.as_ref() != Some(&why) {
            warn!(hall = %f.hall, cause = %why, "following the hall again shortly");
            said = Some(why);
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}

/// Why following a hall stopped.
#[derive(Debug, thiserror::Error)]
enum FollowError {
    #[error(transparent)]
    Cluster(#[from] super::ClusterError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the hall's consumer: {0}")]
    Consumer(String),
    #[error("{0}")]
    Refused(String),
}

/// Runs hall `f.hall`'s durable consumer from the database's position until it fails.
async fn consume(f: &Follower) -> Result<(), FollowError> {
    let stream = hall_stream(&f.js, &f.hall, f.replicas).await?;
    let position = {
        let store = f.store.clone();
        let hall = f.hall.clone();
        tokio::task::spawn_blocking(move || lock(&store).replica_position(&hall))
            .await
            .map_err(|e| FollowError::Consumer(e.to_string()))??
    };
    let after = position.as_ref().map_or(0, |p| p.stream_seq);
    let consumer = durable_consumer(&stream, &f.hall, after).await?;
    let mut messages = consumer
        .messages()
        .await
        .map_err(|e| FollowError::Consumer(e.to_string()))?;
    loop {
        let Some(first) = messages.next().await else {
            return Ok(());
        };
        let mut batch = vec![first.map_err(|e| FollowError::Consumer(e.to_string()))?];
        // What else arrives within LINGER joins the batch: one transaction, one commit and one
        // page update for all of it.
        let until = tokio::time::Instant::now() + LINGER;
        while batch.len() < BATCH {
            let next = match messages.next().now_or_never() {
                Some(next) => next,
                None => match tokio::time::timeout_at(until, messages.next()).await {
                    Ok(next) => next,
                    Err(_) => break,
                },
            };
            match next {
                Some(m) => batch.push(m.map_err(|e| FollowError::Consumer(e.to_string()))?),
                None => break,
            }
        }
        let mut incoming = Vec::with_capacity(batch.len());
        let mut pending = 0;
        for m in &batch {
            let info = m.info().map_err(|e| FollowError::Consumer(e.to_string()))?;
            pending = info.pending;
            let stream_seq = info.stream_sequence;
            let envelope: Envelope = serde_json::from_slice(&m.payload).map_err(|e| {
                FollowError::Refused(format!(
                    "hall {}: stream message {stream_seq} is not a boardscribe record this event \
                     node reads (a newer hall than this event node?): {e}",
                    f.hall
                ))
            })?;
            incoming.push(Incoming {
                envelope,
                stream_seq,
            });
        }
        let store = f.store.clone();
        let hall = f.hall.clone();
        let shown = f.shown.clone();
        let numbers = f.health.numbers.clone();
        let applied = tokio::task::spawn_blocking(move || {
            let mut s = lock(&store);
            let applied = s.apply_hall_records(&hall, &incoming, now_ms())?;
            shown.note(&applied);
            if !applied.boards.is_empty() {
                let refused = s.numbers_refused()?;
                *numbers.lock().unwrap_or_else(|p| p.into_inner()) = refused;
            }
            Ok::<_, StoreError>(applied)
        })
        .await
        .map_err(|e| FollowError::Consumer(e.to_string()))??;
        let taken = applied.applied + applied.skipped + applied.superseded;
        if taken > 0 {
            // Acknowledges every message up to the last one taken (AckPolicy::All).
            batch[taken - 1]
                .ack()
                .await
                .map_err(|e| FollowError::Consumer(e.to_string()))?;
        }
        for w in &applied.warnings {
            warn!(hall = %f.hall, "{w}");
        }
        if applied.superseded > 0 {
            info!(
                hall = %f.hall,
                records = applied.superseded,
                "passed over: a republished copy of the hall's database brought them already"
            );
        }
        if applied.applied > 0 {
            f.changes.send_modify(|v| *v += 1);
        }
        let now = now_ms();
        f.metrics.hall(&f.hall, |g| {
            g.applied += applied.applied as u64;
            g.lag_records = Some(if applied.refused.is_some() {
                pending + (batch.len() - taken) as u64
            } else {
                pending
            });
            if let Some(p) = &applied.position {
                g.latency_ms = Some(p.applied_at_ms.saturating_sub(p.at_ms));
                g.lag_ms = Some(if pending > 0 {
                    now.saturating_sub(p.at_ms)
                } else {
                    0
                });
            }
            g.stalled = applied.refused.as_ref().map(ToString::to_string);
        });
        match &applied.refused {
            Some(refused) => f
                .health
                .watch()
                .refused(&f.hall, refused.to_string(), now_ms()),
            None if applied.applied > 0 => f.health.watch().applied(&f.hall),
            None => {}
        }
        if let Some(refused) = applied.refused {
            error!(hall = %f.hall, cause = %refused, "the hall's records stop here");
            return Err(FollowError::Refused(refused.to_string()));
        }
    }
}

/// The hall's durable consumer, set to deliver what follows stream message `after` (0: from
/// the start). A consumer left elsewhere (the database restored from a copy, a commit lost
/// after its acknowledgement) is made again from the database's position.
async fn durable_consumer(
    stream: &jetstream::stream::Stream,
    hall: &str,
    after: u64,
) -> Result<jetstream::consumer::Consumer<pull::Config>, FollowError> {
    let name = format!("boardscribe-event-{hall}");
    let config = pull::Config {
        durable_name: Some(name.clone()),
        description: Some(format!("boardscribe event node: hall {hall}'s records")),
        deliver_policy: if after == 0 {
            DeliverPolicy::All
        } else {
            DeliverPolicy::ByStartSequence {
                start_sequence: after + 1,
            }
        },
        ack_policy: AckPolicy::All,
        ack_wait: ACK_WAIT,
        ..Default::default()
    };
    if let Ok(mut existing) = stream.get_consumer::<pull::Config>(&name).await {
        let (floor, delivered) = existing
            .info()
            .await
            .map(|i| (i.ack_floor.stream_sequence, i.delivered.stream_sequence))
            .map_err(|e| FollowError::Consumer(e.to_string()))?;
        // Taken as it is only with nothing delivered and unacknowledged: such records would
        // come again only after ACK_WAIT, behind newer ones.
        if floor == after && delivered == after {
            return Ok(existing);
        }
        info!(
            hall,
            consumer_at = floor,
            database_at = after,
            "the consumer is not where the database is: starting it again from the database"
        );
        stream
            .delete_consumer(&name)
            .await
            .map_err(|e| FollowError::Consumer(e.to_string()))?;
    }
    stream
        .create_consumer(config)
        .await
        .map_err(|e| FollowError::Consumer(e.to_string()))
}
