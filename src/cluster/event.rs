//! The event node: every hall's records into one database, and the relay over it.
//!
//! Flow: `boardscribe event --config FILE` ([`event`]) opens its own database (never a hall's),
//! shows what it already holds on the live page, starts the relay (round PGN in slices, the
//! page, folders, Lichess, the delay) and follows each hall of `[cluster] halls` ([`follow`]):
//! a durable consumer on the hall's stream, set to start right after the last record the
//! database holds of that hall, hands what arrives to the one [`Applier`] of every hall, which
//! applies what all the halls handed it, at most every [`LINGER`], in one transaction
//! ([`Store::apply_halls`]: each hall's records exactly once, in order), notes the games they
//! touched for the page and bumps the change signal the folder and Lichess follow; each
//! follower then acknowledges what its hall's result says was taken. Any failure drops the
//! consumer and starts it again from the database's position: the database, not the broker,
//! says what was applied. Beside them it hears the halls' statuses and keeps the
//! halls' faults as alerts on the arbiter's console ([`super::health`]: a hall silent or
//! stalled, an outbox growing, a board number two halls use).

use std::{
    collections::{HashMap, VecDeque},
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
use tokio::{
    sync::{Notify, mpsc, watch},
    task::JoinSet,
};
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

/// The most records of one hall applied in one transaction.
const BATCH: usize = 512;

/// How often the applier commits, at most: what every hall hands it meanwhile shares one
/// transaction and one commit, and a record waits this much at worst before it is applied.
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
    let applier = Applier::new(&cluster.halls);
    halls.spawn(
        applier
            .clone()
            .run(
                ApplyTo {
                    store: store.clone(),
                    shown: shown.clone(),
                    changes: changes.clone(),
                    numbers: health.numbers.clone(),
                },
                stop_rx.clone(),
            )
            .instrument(info_span!("applier")),
    );
    for (slot, hall) in cluster.halls.iter().enumerate() {
        let follower = Follower {
            hall: hall.clone(),
            slot,
            replicas: cluster.replicas,
            js: js.clone(),
            store: store.clone(),
            applier: applier.clone(),
            metrics: metrics.clone(),
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
    /// Its place in the applier's queues.
    slot: usize,
    replicas: usize,
    js: jetstream::Context,
    store: Arc<Mutex<Store>>,
    applier: Applier,
    metrics: Arc<Metrics>,
    health: Health,
}

/// The one applier of every hall's records: each follower queues its hall's records as they
/// arrive ([`Applier::queue`]); at most every [`LINGER`], the applier takes what every hall
/// queued (up to [`BATCH`] records of each), applies it in one transaction and one commit
/// ([`Store::apply_halls`]) and hands each follower its hall's result ([`HallOutcome`]).
#[derive(Clone)]
struct Applier {
    shared: Arc<ApplierShared>,
}

struct ApplierShared {
    /// One per hall, by the follower's slot.
    queues: Mutex<Vec<HallQueue>>,
    /// Records were queued.
    queued: Notify,
}

/// One hall's records waiting for the applier.
struct HallQueue {
    hall: String,
    /// In the hall's stream order.
    records: Vec<Incoming>,
    /// Where the results go: the follower's current consumer (none before its first).
    results: Option<mpsc::UnboundedSender<HallOutcome>>,
}

/// What the applier did with the oldest `sent` records a follower queued and has not had an
/// answer for.
struct HallOutcome {
    sent: usize,
    result: Result<Applied, FollowError>,
}

/// What the applier applies to: the database, and what follows it.
struct ApplyTo {
    store: Arc<Mutex<Store>>,
    shown: Shown,
    changes: Arc<watch::Sender<u64>>,
    /// The boards kept without their hall's number ([`Health::numbers`]).
    numbers: Arc<Mutex<Vec<NumberRefused>>>,
}

impl Applier {
    fn new(halls: &[String]) -> Applier {
        let queues = halls
            .iter()
            .map(|hall| HallQueue {
                hall: hall.clone(),
                records: Vec::new(),
                results: None,
            })
            .collect();
        Applier {
            shared: Arc::new(ApplierShared {
                queues: Mutex::new(queues),
                queued: Notify::new(),
            }),
        }
    }

    fn queues(&self) -> std::sync::MutexGuard<'_, Vec<HallQueue>> {
        self.shared.queues.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new consumer of hall `slot`: what an earlier one queued is dropped, and the answers
    /// for what the applier took of it go nowhere (the database's position says what it did).
    fn session(&self, slot: usize) -> mpsc::UnboundedReceiver<HallOutcome> {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Some(q) = self.queues().get_mut(slot) {
            q.records.clear();
            q.results = Some(tx);
        }
        rx
    }

    /// Hall `slot`'s consumer stopped: what it queued is dropped, and what the applier took of
    /// it is answered to no one.
    fn forget(&self, slot: usize) {
        if let Some(q) = self.queues().get_mut(slot) {
            q.records.clear();
            q.results = None;
        }
    }

    /// Queues hall `slot`'s `records`, which follow what it queued before.
    fn queue(&self, slot: usize, records: Vec<Incoming>) {
        if let Some(q) = self.queues().get_mut(slot) {
            q.records.extend(records);
        }
        self.shared.queued.notify_one();
    }

    /// Every hall's queued records (up to [`BATCH`] of each), and where each hall's result
    /// goes.
    fn take(&self) -> Taken {
        let mut more = false;
        let mut taken = Taken {
            batches: Vec::new(),
            answers: Vec::new(),
        };
        for q in self.queues().iter_mut() {
            let Some(answer) = q.results.clone().filter(|_| !q.records.is_empty()) else {
                continue;
            };
            let records: Vec<Incoming> = if q.records.len() <= BATCH {
                std::mem::take(&mut q.records)
            } else {
                more = true;
                q.records.drain(..BATCH).collect()
            };
            taken.answers.push((records.len(), answer));
            taken.batches.push((q.hall.clone(), records));
        }
        if more {
            self.shared.queued.notify_one();
        }
        taken
    }

    /// Applies what the followers queue, at most every [`LINGER`], until `stop`.
    async fn run(self, to: ApplyTo, mut stop: watch::Receiver<bool>) {
        let to = Arc::new(to);
        let mut last: Option<tokio::time::Instant> = None;
        loop {
            tokio::select! {
                _ = self.shared.queued.notified() => {}
                _ = stop.wait_for(|s| *s) => return,
            }
            if let Some(last) = last {
                tokio::select! {
                    _ = tokio::time::sleep_until(last + LINGER) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
            }
            let Taken { batches, answers } = self.take();
            if batches.is_empty() {
                continue;
            }
            last = Some(tokio::time::Instant::now());
            let applying = to.clone();
            let results = tokio::task::spawn_blocking(move || applying.apply(&batches))
                .await
                .unwrap_or_else(|e| {
                    error!(cause = %e, "the applier failed");
                    let why = format!("the applier failed: {e}");
                    answers
                        .iter()
                        .map(|_| Err(FollowError::Consumer(why.clone())))
                        .collect()
                });
            if results
                .iter()
                .any(|r| r.as_ref().is_ok_and(|a| a.applied > 0))
            {
                to.changes.send_modify(|v| *v += 1);
            }
            for ((sent, answer), result) in answers.into_iter().zip(results) {
                // A follower gone (its consumer started again) reads the database's position.
                let _ignored_if_gone = answer.send(HallOutcome { sent, result });
            }
        }
    }
}

/// What the applier took: each hall's records, and where its result goes with how many
/// records it answers for.
struct Taken {
    batches: Vec<(String, Vec<Incoming>)>,
    answers: Vec<(usize, mpsc::UnboundedSender<HallOutcome>)>,
}

impl ApplyTo {
    /// Applies `batches` in one transaction and notes what they changed: each hall's result.
    fn apply(&self, batches: &[(String, Vec<Incoming>)]) -> Vec<Result<Applied, FollowError>> {
        let halls: Vec<(&str, &[Incoming])> = batches
            .iter()
            .map(|(hall, records)| (hall.as_str(), records.as_slice()))
            .collect();
        let mut s = lock(&self.store);
        let results = match s.apply_halls(&halls, now_ms()) {
            Ok(results) => results,
            Err(e) => {
                let e = Arc::new(e);
                return batches
                    .iter()
                    .map(|_| Err(FollowError::Transaction(e.clone())))
                    .collect();
            }
        };
        let mut boards = false;
        for applied in results.iter().flatten() {
            self.shown.note(applied);
            boards |= !applied.boards.is_empty();
        }
        let refused = if boards {
            s.numbers_refused().map_err(Arc::new)
        } else {
            Ok(Vec::new())
        };
        match refused {
            Ok(refused) if boards => {
                *self.numbers.lock().unwrap_or_else(|p| p.into_inner()) = refused;
            }
            Ok(_) => {}
            Err(e) => {
                // As a hall's batch that changed boards and failed: its follower starts again.
                return results
                    .into_iter()
                    .map(|r| match r {
                        Ok(a) if !a.boards.is_empty() => Err(FollowError::Transaction(e.clone())),
                        r => r.map_err(FollowError::from),
                    })
                    .collect();
            }
        }
        results
            .into_iter()
            .map(|r| r.map_err(FollowError::from))
            .collect()
    }
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
        f.applier.forget(f.slot);
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
    /// What failed every hall's records of one transaction (its commit), or after it.
    #[error("applying the halls' records: {0}")]
    Transaction(Arc<StoreError>),
    #[error("the applier of the halls' records stopped")]
    ApplierGone,
}

/// Runs hall `f.hall`'s durable consumer from the database's position until it fails.
async fn consume(f: &Follower) -> Result<(), FollowError> {
    let stream = hall_stream(&f.js, &f.hall, f.replicas).await?;
    // Before the position is read: what an earlier consumer queued is applied before it, or
    // not at all.
    let mut results = f.applier.session(f.slot);
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
    // Queued and not answered yet, in order: each message with the records pending behind it.
    let mut waiting: VecDeque<(jetstream::Message, u64)> = VecDeque::new();
    loop {
        tokio::select! {
            next = messages.next() => {
                let Some(mut next) = next else {
                    return Ok(());
                };
                // With whatever else has arrived: queued together.
                let mut incoming = Vec::new();
                let mut ended = false;
                loop {
                    let m = next.map_err(|e| FollowError::Consumer(e.to_string()))?;
                    let (record, pending) = read_message(f, &m)?;
                    incoming.push(record);
                    waiting.push_back((m, pending));
                    if incoming.len() >= BATCH {
                        break;
                    }
                    match messages.next().now_or_never() {
                        Some(Some(m)) => next = m,
                        Some(None) => {
                            ended = true;
                            break;
                        }
                        None => break,
                    }
                }
                f.applier.queue(f.slot, incoming);
                if ended {
                    return Ok(());
                }
            }
            outcome = results.recv() => {
                let Some(outcome) = outcome else {
                    return Err(FollowError::ApplierGone);
                };
                answered(f, outcome, &mut waiting).await?;
            }
        }
    }
}

/// A delivered message's record, and how many of the hall's records are pending behind it.
fn read_message(f: &Follower, m: &jetstream::Message) -> Result<(Incoming, u64), FollowError> {
    let info = m.info().map_err(|e| FollowError::Consumer(e.to_string()))?;
    let (pending, stream_seq) = (info.pending, info.stream_sequence);
    let envelope: Envelope = serde_json::from_slice(&m.payload).map_err(|e| {
        FollowError::Refused(format!(
            "hall {}: stream message {stream_seq} is not a boardscribe record this event node \
             reads (a newer hall than this event node?): {e}",
            f.hall
        ))
    })?;
    Ok((
        Incoming {
            envelope,
            stream_seq,
        },
        pending,
    ))
}

/// What the applier did with the oldest of `waiting`: acknowledged up to the last record
/// taken, and said (metrics, the halls' health, the log).
async fn answered(
    f: &Follower,
    outcome: HallOutcome,
    waiting: &mut VecDeque<(jetstream::Message, u64)>,
) -> Result<(), FollowError> {
    let sent = outcome.sent.min(waiting.len());
    let batch: Vec<(jetstream::Message, u64)> = waiting.drain(..sent).collect();
    let applied = outcome.result?;
    let taken = applied.applied + applied.skipped + applied.superseded;
    if let Some((last, _)) = taken.checked_sub(1).and_then(|i| batch.get(i)) {
        // Acknowledges every message up to the last one taken (AckPolicy::All).
        last.ack()
            .await
            .map_err(|e| FollowError::Consumer(e.to_string()))?;
    }
    let pending = batch.last().map_or(0, |(_, pending)| *pending);
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
    let now = now_ms();
    f.metrics.hall(&f.hall, |g| {
        g.applied += applied.applied as u64;
        g.lag_records = Some(if applied.refused.is_some() {
            pending + batch.len().saturating_sub(taken) as u64
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
    Ok(())
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
