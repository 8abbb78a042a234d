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
    collections::HashMap,
    path::PathBuf,
    sync::{Arc, Mutex},
    task::{Context, Poll, Waker},
    time::Duration,
};

use anyhow::{Context as _, bail};
use async_nats::jetstream::{
    self,
    consumer::{AckPolicy, DeliverPolicy, pull},
};
use futures_util::StreamExt as _;
use tokio::{
    sync::{mpsc, oneshot, watch},
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
    relay::{
        Hub, RelayExtras, Token, alerts::EventAlert, delayed::clock_at, hub::ShownMark, live::Lost,
    },
    services::{self, Publications},
    store::{
        BoardId, GameId, ShownGame, Store, StoreError,
        hall_record::{Envelope, Incoming},
        replica::{Applied, NumberRefused},
    },
};

/// The most records of one hall applied in one transaction.
const BATCH: usize = 512;

/// How often the applier commits, at most: what every hall delivers meanwhile shares one
/// transaction and one commit, and a record waits this much at worst before it is applied.
/// (30 and 50 ms were measured too: docs/benchmarks.md, the event node per record.)
const LINGER: Duration = Duration::from_millis(40);

/// How long a delivered record may wait for its acknowledgement before the broker sends it
/// again.
const ACK_WAIT: Duration = Duration::from_secs(30);

/// The pages the applier's connection keeps in memory (KiB): it appends every hall's records,
/// and 8 MiB holds the pages its inserts touch (16 MiB, a connection's default, kept the
/// event node's memory near its 100 MiB bound at 1,024 boards: docs/benchmarks.md).
const WRITER_CACHE_KIB: u32 = 8 * 1024;

/// The pages the live page's reader keeps in memory (KiB): it reads only what is new.
const PAGE_READER_CACHE_KIB: u32 = 4 * 1024;

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
    store.set_cache_kib(WRITER_CACHE_KIB)?;
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
    // The followers hand their consumers to the one applier of every hall's records.
    let (sessions, handed) = mpsc::channel(cluster.halls.len().max(1));
    let applier = Applier {
        halls: cluster.halls.clone(),
        store: store.clone(),
        shown: shown.clone(),
        changes: changes.clone(),
        metrics: metrics.clone(),
        health: health.clone(),
    };
    halls.spawn(
        applier
            .run(handed, stop_rx.clone())
            .instrument(info_span!("applier")),
    );
    for (slot, hall) in cluster.halls.iter().enumerate() {
        let follower = Follower {
            hall: hall.clone(),
            slot,
            replicas: cluster.replicas,
            js: js.clone(),
            store: store.clone(),
            sessions: sessions.clone(),
        };
        let span = info_span!("hall", hall = %hall);
        halls.spawn(follow(follower, stop_rx.clone()).instrument(span));
    }
    drop(sessions);
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
    /// Each board's newest game, so that a change to an older game does not replace it, and
    /// the other way round.
    latest: HashMap<BoardId, GameId>,
    newest: HashMap<GameId, BoardId>,
    /// Touched since last shown: games (in order), boards with a new game, boards added or
    /// renumbered, links.
    games: Vec<GameId>,
    new_game: Vec<BoardId>,
    boards: Vec<BoardId>,
    links: Vec<(BoardId, bool)>,
}

impl ShownState {
    /// `game` is `board`'s newest.
    fn newest(&mut self, board: BoardId, game: GameId) {
        if let Some(older) = self.latest.insert(board, game) {
            self.newest.remove(&older);
        }
        self.newest.insert(game, board);
    }
}

/// What is shown at once: the games touched that are their boards' newest (with their
/// boards), boards with a new game, boards added or renumbered, links.
struct ToShow {
    games: Vec<(GameId, BoardId)>,
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
                self.state().newest(b.id, id);
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
            st.newest(board, game);
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
        // Each board's game as last shown, so that only what is new in it is read, and what
        // showing it gave.
        let mut games: HashMap<BoardId, (ShownGame, Option<ShownMark>)> = HashMap::new();
        loop {
            tokio::select! {
                _ = tokio::time::sleep(SHOW_EVERY) => {}
                _ = stop.wait_for(|s| *s) => return,
            }
            let taken = {
                let mut st = self.state();
                let games = std::mem::take(&mut st.games);
                ToShow {
                    // Each game noted, if it is its board's newest.
                    games: games
                        .into_iter()
                        .filter_map(|g| Some((g, *st.newest.get(&g)?)))
                        .collect(),
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
                    let reader = Store::open_read_only(&path)?;
                    reader.set_cache_kib(PAGE_READER_CACHE_KIB)?;
                    kept = Some(reader);
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
        t: &ToShow,
        games: &mut HashMap<BoardId, (ShownGame, Option<ShownMark>)>,
    ) -> Result<(), StoreError> {
        store.in_snapshot(|store| {
            for &id in &t.boards {
                for b in store.boards_shown(Some(id))? {
                    self.hub.add_board_kind(&b.name, b.number, b.kind, &[]);
                }
            }
            let retracted = store.retractions_count()?;
            for &(id, board) in &t.games {
                let (kept, mark) = match games.remove(&board) {
                    Some((k, mark)) if k.game.id == id => (Some(k), mark),
                    _ => (None, None),
                };
                let Some(shown) = store.game_shown_since(id, kept, retracted)? else {
                    continue;
                };
                let g = &shown.game;
                let new_game = t.new_game.contains(&g.board);
                // The moves it showed last are there still, as they were: not compared again.
                let mark = mark.filter(|m| m.plies() <= shown.carried);
                let mark = self
                    .hub
                    .show_game_after(g, true, clock_at(g, now_ms()), new_game, mark);
                games.insert(board, (shown, mark));
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

/// One hall's follower: it keeps a consumer of the hall's stream going, from the database's
/// position, and hands it to the [`Applier`].
struct Follower {
    hall: String,
    /// Its place among the halls the applier reads.
    slot: usize,
    replicas: usize,
    js: jetstream::Context,
    store: Arc<Mutex<Store>>,
    sessions: mpsc::Sender<Session>,
}

/// A hall's consumer, handed to the applier: its messages, and where its follower hears why
/// the applier stopped reading them (`Ok`: the messages ended).
struct Session {
    slot: usize,
    messages: pull::Stream,
    stopped: oneshot::Sender<Result<(), FollowError>>,
}

/// A hall's consumer as the applier reads it.
struct Reading {
    session: Session,
    /// Delivered and not applied yet, in order: each message with how many of the hall's
    /// records are pending behind it.
    delivered: Vec<(jetstream::Message, u64)>,
    /// Their records.
    incoming: Vec<Incoming>,
}

/// The one applier of every hall's records. It reads every hall's consumer ([`Session`]) and,
/// at most every [`LINGER`], applies what all of them delivered meanwhile (up to [`BATCH`]
/// records of each) in one transaction and one commit ([`Store::apply_halls`]), notes what
/// changed for the page, then acknowledges each hall's messages up to the last record taken
/// ([`Applier::answer`]). A hall whose records are refused or fail, or whose consumer fails,
/// stops being read: its follower hears why and starts a consumer again from the database's
/// position. Reading the consumers itself, between its commits, the applier is woken about
/// once a commit rather than once a record.
struct Applier {
    halls: Vec<String>,
    store: Arc<Mutex<Store>>,
    shown: Shown,
    changes: Arc<watch::Sender<u64>>,
    metrics: Arc<Metrics>,
    health: Health,
}

impl Applier {
    /// Reads the consumers the followers hand it and applies their records until `stop`.
    async fn run(self, mut handed: mpsc::Receiver<Session>, mut stop: watch::Receiver<bool>) {
        let mut reading: Vec<Option<Reading>> = self.halls.iter().map(|_| None).collect();
        let mut last: Option<tokio::time::Instant> = None;
        loop {
            // Until some hall delivers a record.
            tokio::select! {
                session = handed.recv() => {
                    let Some(session) = session else { return };
                    self.begin(&mut reading, session);
                    continue;
                }
                () = std::future::poll_fn(|cx| self.deliveries(&mut reading, cx)) => {}
                _ = stop.wait_for(|s| *s) => return,
            }
            // What the other halls deliver meanwhile shares the transaction; read without
            // being woken for it (the wakers the wait left are replaced).
            let _any = self.deliveries(&mut reading, &mut Context::from_waker(Waker::noop()));
            if let Some(last) = last {
                tokio::select! {
                    _ = tokio::time::sleep_until(last + LINGER) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
            }
            // What has arrived since, read without being woken for it again.
            let _any = self.deliveries(&mut reading, &mut Context::from_waker(Waker::noop()));
            last = Some(tokio::time::Instant::now());
            self.apply(&mut reading).await;
        }
    }

    /// A follower's new consumer of its hall (one that stopped before it is gone).
    fn begin(&self, reading: &mut [Option<Reading>], session: Session) {
        if let Some(slot) = reading.get_mut(session.slot) {
            *slot = Some(Reading {
                session,
                delivered: Vec::new(),
                incoming: Vec::new(),
            });
        }
    }

    /// Takes what every consumer has delivered (up to [`BATCH`] records of each); ready once
    /// some hall has records to apply. A consumer that fails or ends, or delivers what is not
    /// a record, is stopped, with what it delivered and was not applied.
    fn deliveries(&self, reading: &mut [Option<Reading>], cx: &mut Context<'_>) -> Poll<()> {
        let mut any = false;
        for (slot, r) in reading.iter_mut().enumerate() {
            let Some(live) = r else { continue };
            let hall = self.halls.get(slot).map_or("", String::as_str);
            let mut failed = None;
            while live.incoming.len() < BATCH {
                match live.session.messages.poll_next_unpin(cx) {
                    Poll::Ready(Some(Ok(m))) => match read_message(hall, &m) {
                        Ok((record, pending)) => {
                            live.incoming.push(record);
                            live.delivered.push((m, pending));
                        }
                        Err(e) => {
                            failed = Some(Err(e));
                            break;
                        }
                    },
                    Poll::Ready(Some(Err(e))) => {
                        failed = Some(Err(FollowError::Consumer(e.to_string())));
                        break;
                    }
                    Poll::Ready(None) => {
                        failed = Some(Ok(()));
                        break;
                    }
                    Poll::Pending => break,
                }
            }
            if let Some(why) = failed {
                stop_reading(r, why);
                continue;
            }
            any |= !live.incoming.is_empty();
        }
        if any { Poll::Ready(()) } else { Poll::Pending }
    }

    /// Applies every hall's records read so far in one transaction, then answers each hall.
    async fn apply(&self, reading: &mut [Option<Reading>]) {
        let mut batches: Vec<(String, Vec<Incoming>)> = Vec::new();
        let mut slots = Vec::new();
        for (slot, r) in reading.iter_mut().enumerate() {
            if let Some(live) = r.as_mut().filter(|live| !live.incoming.is_empty()) {
                let hall = self.halls.get(slot).cloned().unwrap_or_default();
                // The next cycle's records, about as many, without growing again.
                let records = Vec::with_capacity(live.incoming.len());
                batches.push((hall, std::mem::replace(&mut live.incoming, records)));
                slots.push(slot);
            }
        }
        if batches.is_empty() {
            return;
        }
        let store = self.store.clone();
        let shown = self.shown.clone();
        let numbers = self.health.numbers.clone();
        let results =
            tokio::task::spawn_blocking(move || apply_and_note(&store, &shown, &numbers, &batches))
                .await
                .unwrap_or_else(|e| {
                    error!(cause = %e, "the applier failed");
                    let why = format!("the applier failed: {e}");
                    slots
                        .iter()
                        .map(|_| Err(FollowError::Consumer(why.clone())))
                        .collect()
                });
        if results
            .iter()
            .any(|r| r.as_ref().is_ok_and(|a| a.applied > 0))
        {
            self.changes.send_modify(|v| *v += 1);
        }
        for (slot, result) in slots.into_iter().zip(results) {
            let Some(r) = reading.get_mut(slot) else {
                continue;
            };
            let Some(live) = r.as_mut() else { continue };
            let next = Vec::with_capacity(live.delivered.len());
            let delivered = std::mem::replace(&mut live.delivered, next);
            let hall = self.halls.get(slot).map_or("", String::as_str);
            if let Err(why) = self.answer(hall, delivered, result).await {
                stop_reading(r, Err(why));
            }
        }
    }

    /// Acknowledges hall `hall`'s `delivered` messages up to the last record `result` took,
    /// and says what it did (metrics, the halls' health, the log); an error: stop reading it.
    async fn answer(
        &self,
        hall: &str,
        delivered: Vec<(jetstream::Message, u64)>,
        result: Result<Applied, FollowError>,
    ) -> Result<(), FollowError> {
        let applied = result?;
        let taken = applied.applied + applied.skipped + applied.superseded;
        if let Some((last, _)) = taken.checked_sub(1).and_then(|i| delivered.get(i)) {
            // Acknowledges every message up to the last one taken (AckPolicy::All).
            last.ack()
                .await
                .map_err(|e| FollowError::Consumer(e.to_string()))?;
        }
        let pending = delivered.last().map_or(0, |(_, pending)| *pending);
        for w in &applied.warnings {
            warn!(hall, "{w}");
        }
        if applied.superseded > 0 {
            info!(
                hall,
                records = applied.superseded,
                "passed over: a republished copy of the hall's database brought them already"
            );
        }
        let now = now_ms();
        self.metrics.hall(hall, |g| {
            g.applied += applied.applied as u64;
            g.lag_records = Some(if applied.refused.is_some() {
                pending + delivered.len().saturating_sub(taken) as u64
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
            Some(refused) => self
                .health
                .watch()
                .refused(hall, refused.to_string(), now_ms()),
            None if applied.applied > 0 => self.health.watch().applied(hall),
            None => {}
        }
        if let Some(refused) = applied.refused {
            error!(hall, cause = %refused, "the hall's records stop here");
            return Err(FollowError::Refused(refused.to_string()));
        }
        Ok(())
    }
}

/// Stops reading a hall's consumer: its follower hears `why` (what it delivered and was not
/// applied is delivered again to the next one).
fn stop_reading(r: &mut Option<Reading>, why: Result<(), FollowError>) {
    if let Some(live) = r.take() {
        // A follower gone (stopping) needs no answer.
        let _ignored_if_gone = live.session.stopped.send(why);
    }
}

/// Applies `batches` in one transaction and notes what they changed for the page and the
/// halls' health: each hall's result.
fn apply_and_note(
    store: &Mutex<Store>,
    shown: &Shown,
    numbers: &Mutex<Vec<NumberRefused>>,
    batches: &[(String, Vec<Incoming>)],
) -> Vec<Result<Applied, FollowError>> {
    let halls: Vec<(&str, &[Incoming])> = batches
        .iter()
        .map(|(hall, records)| (hall.as_str(), records.as_slice()))
        .collect();
    let mut s = lock(store);
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
        shown.note(applied);
        boards |= !applied.boards.is_empty();
    }
    if boards {
        match s.numbers_refused() {
            Ok(refused) => *numbers.lock().unwrap_or_else(|p| p.into_inner()) = refused,
            Err(e) => {
                // As a hall's batch that changed boards and failed: its follower starts again.
                let e = Arc::new(e);
                return results
                    .into_iter()
                    .map(|r| match r {
                        Ok(a) if !a.boards.is_empty() => Err(FollowError::Transaction(e.clone())),
                        r => r.map_err(FollowError::from),
                    })
                    .collect();
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.map_err(FollowError::from))
        .collect()
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
        // The applier stops with everything else.
        if *stop.borrow() {
            return;
        }
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

/// Runs hall `f.hall`'s durable consumer from the database's position, read by the applier,
/// until it stops.
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
    let messages = consumer
        .messages()
        .await
        .map_err(|e| FollowError::Consumer(e.to_string()))?;
    let (stopped, why) = oneshot::channel();
    f.sessions
        .send(Session {
            slot: f.slot,
            messages,
            stopped,
        })
        .await
        .map_err(|_| FollowError::ApplierGone)?;
    why.await.map_err(|_| FollowError::ApplierGone)?
}

/// A delivered message's record, and how many of hall `hall`'s records are pending behind it.
fn read_message(hall: &str, m: &jetstream::Message) -> Result<(Incoming, u64), FollowError> {
    let info = m.info().map_err(|e| FollowError::Consumer(e.to_string()))?;
    let (pending, stream_seq) = (info.pending, info.stream_sequence);
    let envelope: Envelope = serde_json::from_slice(&m.payload).map_err(|e| {
        FollowError::Refused(format!(
            "hall {hall}: stream message {stream_seq} is not a boardscribe record this event node \
             reads (a newer hall than this event node?): {e}"
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
