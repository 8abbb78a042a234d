//! Recording a fleet of boards: every configured board and bus chain prepared against the store
//! (open games resumed), one task each, the store writer, the relays and the status line, until
//! a signal stops them. Flow: [`record_boards`] → [`record_fleet`]: prepare, start the writer,
//! start the relays, start the boards, wait, shut down in order (boards, relays, writer).

use super::*;

/// Everything [`record_fleet`] records, and what it tells.
pub struct Fleet {
    pub db: PathBuf,
    /// The boards, each with its number, kind, locator and clock layout.
    pub boards: Vec<BoardConfig>,
    /// Chains of DGT boards on one port each (`[[bus]]`).
    pub buses: Vec<BusConfig>,
    /// How the bus masters pace their lines.
    pub bus_settings: crate::bus::MasterSettings,
    pub laws: LawsSetup,
    /// Where the event starts (`[tournament]`): set in the store at start unless the stored
    /// round is already past it ([`Store::open_event`]).
    pub round: Option<RoundInfo>,
    /// The event's settings (`[tournament]`), written over the stored ones at start.
    pub event: EventSettings,
    /// Where serial numbers are looked up (`/sys`).
    pub sysfs: PathBuf,
    pub metrics: Arc<Metrics>,
    /// Bumped by the store writer after every committed batch that touched games.
    pub changes: Arc<watch::Sender<u64>>,
    /// `[relay.folder]`: kept up to date after every change.
    pub folder: Option<FolderRelay>,
    /// `[relay.lichess]`: one push queue per token, with the rounds and boards it takes.
    pub lichess: Vec<LichessQueue>,
    /// How the folder and Lichess relays publish: delay, comments, clocks.
    pub publication: Publication,
    /// The most games one push holds (`[relay] slice`).
    pub slice: usize,
    /// systemd (does nothing outside systemd).
    pub notifier: Notifier,
    /// Tests only: a cap on the database's pages, to make the disk full ([`PageLimit`]).
    pub page_limit: Option<PageLimit>,
    /// `[cluster] hall`: every record is also published for the event node.
    pub cluster: Option<crate::config::ClusterConfig>,
    /// The database at `db`, opened and migrated already ([`Fleet::open_store`]); else
    /// [`record_fleet`] opens it.
    pub store: Option<Store>,
}

impl Fleet {
    /// `boards` into `db` under `laws`; no round, no relays, no systemd, fresh metrics.
    pub fn new(db: &Path, boards: Vec<BoardConfig>, laws: LawsSetup) -> Fleet {
        Fleet {
            db: db.to_owned(),
            boards,
            buses: Vec::new(),
            bus_settings: crate::bus::MasterSettings::default(),
            laws,
            round: None,
            event: EventSettings::default(),
            sysfs: PathBuf::from("/sys"),
            metrics: Arc::new(Metrics::new()),
            changes: Arc::new(watch::channel(0).0),
            folder: None,
            lichess: Vec::new(),
            publication: Publication::default(),
            slice: crate::export::publish::DEFAULT_SLICE,
            notifier: Notifier::default(),
            page_limit: None,
            cluster: None,
            store: None,
        }
    }

    /// Opens (creating and migrating) the database now. A relay started before recording calls
    /// this first, so that no request it answers meets a file whose schema is still being made.
    pub fn open_store(&mut self) -> anyhow::Result<()> {
        self.store = Some(open_db(&self.db)?);
        Ok(())
    }
}

/// The database at `db`, opened (created and migrated if need be).
fn open_db(db: &Path) -> anyhow::Result<Store> {
    Store::open(db).with_context(|| format!("opening {}", db.display()))
}

/// Boards of `kind` on `ports`, numbered 1, 2, … in order, each named after its port.
pub fn port_boards(ports: &[PathBuf], kind: BoardKind) -> Vec<BoardConfig> {
    (1u32..)
        .zip(ports)
        .map(|(number, port)| BoardConfig {
            number,
            kind,
            name: port.display().to_string(),
            locator: Locator::Port(port.clone()),
            clock_layout: ClockLayout::default(),
        })
        .collect()
}

/// Records `ports` (DGT boards, named after their ports, numbered in order) into the database at
/// `db` until `stop` turns true; `announce` sees every event once it is durable, and so does
/// `hub` (with connections and clocks) if given.
pub async fn record_boards(
    db: &Path,
    ports: &[PathBuf],
    laws: &LawsSetup,
    stop: watch::Receiver<bool>,
    hub: Option<Hub>,
    announce: impl Fn(&str, &TrackerEvent) + Send + Sync + 'static,
) -> anyhow::Result<()> {
    let fleet = Fleet::new(db, port_boards(ports, BoardKind::Dgt), laws.clone());
    record_fleet(fleet, stop, hub, announce).await
}

/// systemd's STATUS line: boards and games, and a full store.
pub(super) fn fleet_status(metrics: &Metrics) -> String {
    let line = status_line(
        metrics.boards_connected() as usize,
        metrics.games_live() as usize,
    );
    if metrics.store_full() {
        format!("{line}; store full: recording suspended")
    } else {
        line
    }
}

/// Records the boards of `fleet` until `stop` turns true: one task per board, one store writer,
/// the folder and Lichess relays, systemd notifications; `announce` and `hub` (if given) see
/// every event once it is durable.
pub async fn record_fleet(
    fleet: Fleet,
    mut stop: watch::Receiver<bool>,
    hub: Option<Hub>,
    announce: impl Fn(&str, &TrackerEvent) + Send + Sync + 'static,
) -> anyhow::Result<()> {
    let Fleet {
        db,
        boards,
        buses,
        bus_settings,
        laws,
        round,
        event,
        sysfs,
        metrics,
        changes,
        folder,
        lichess,
        publication,
        slice,
        notifier,
        page_limit,
        cluster,
        store,
    } = fleet;
    // A hall takes the event node's decisions through its boards' desks, served or not.
    let hub = match (hub, &cluster) {
        (None, Some(c)) if c.hall.is_some() => Some(Hub::new()),
        (hub, _) => hub,
    };
    let mut store = match store {
        Some(store) => store,
        None => open_db(&db)?,
    };
    // A hall keeps every record in its outbox from before its first write on.
    let cluster = match cluster
        .as_ref()
        .and_then(|c| c.hall.as_ref().map(|h| (c, h)))
    {
        Some((cfg, hall)) => {
            let identity = store.join_hall(hall, &crate::cluster::new_origin())?;
            info!(hall = %identity.hall, origin = %identity.origin, "recording for the event's hall");
            let connection =
                crate::cluster::connect(cfg, &format!("boardscribe hall {hall}")).await?;
            Some((connection, identity, cfg.replicas))
        }
        None => None,
    };
    match store.open_event(round.as_ref(), &event, crate::device::serial::now_ms())? {
        EventOpened::NoRound => {}
        EventOpened::Started { round } => info!(round, "event started"),
        EventOpened::Advanced { from, to } => {
            info!(
                from,
                to, "round started (the config's round is past the stored one)"
            )
        }
        EventOpened::Kept { round } => info!(round, "event resumed at the stored round"),
    }
    let mut prepared = Vec::new();
    for cfg in &boards {
        prepared.push(cfg.kind.with_board(board::Prepare {
            store: &mut store,
            cfg,
            laws: &laws,
        })?);
    }
    let mut bus_specs = Vec::new();
    for bus in &buses {
        let mut on_bus = Vec::new();
        for b in &bus.boards {
            on_bus.push((b.address, board::prepare(&mut store, &b.board, &laws)?));
        }
        bus_specs.push(bus::BusSpec {
            name: bus.name.clone(),
            locator: bus.locator.clone(),
            boards: on_bus,
            settings: bus_settings.clone(),
        });
    }
    if let Some(hub) = &hub {
        for spec in &bus_specs {
            for (_, b) in &spec.boards {
                hub.add_board_kind(
                    &b.name,
                    Some(b.number),
                    crate::game::Kind::Chess,
                    &b.resumed,
                );
            }
        }
        for p in &prepared {
            hub.add_board_kind(p.name(), Some(p.number()), p.game(), p.resumed());
            if p.learns() {
                hub.set_learns(p.name());
            }
        }
    }
    metrics.set_boards_configured(
        prepared.len() + bus_specs.iter().map(|b| b.boards.len()).sum::<usize>(),
    );
    let hooks = WriterHooks {
        metrics: Some(metrics.clone()),
        changes: Some(changes.clone()),
        page_limit,
    };
    let (writer, writer_thread) =
        StoreWriter::start_with(store, hooks).context("starting the store writer thread")?;
    let mut relays = JoinSet::new();
    Publications {
        db: db.clone(),
        folder,
        lichess,
        publication,
        slice,
    }
    .spawn(&mut relays, &changes);
    // What the command line decides on this database while the daemon runs, shown live.
    if let Some(hub) = &hub {
        relays.spawn(crate::relay::outside::follow(
            db.clone(),
            hub.clone(),
            changes.clone(),
            stop.clone(),
        ));
    }
    if let Some((connection, identity, replicas)) = cluster {
        let crate::cluster::Connection { client, failure } = connection;
        // The event node's decisions, rounds and pairings, taken as the hall's own.
        let decider = crate::decider::Decider::new(
            &db,
            hub.clone().unwrap_or_default(),
            Some(changes.clone()),
        );
        relays.spawn(crate::cluster::commands::take(
            client.clone(),
            identity.hall.clone(),
            replicas,
            decider,
            stop.clone(),
        ));
        relays.spawn(crate::cluster::hall::publish(
            client,
            identity,
            db.clone(),
            replicas,
            metrics.clone(),
            changes.subscribe(),
            failure,
        ));
    }
    drop(changes);
    let ctx = super::context::Ctx {
        writer: writer.clone(),
        stop: stop.clone(),
        hub: hub.clone(),
        metrics: metrics.clone(),
        sysfs,
        announce: Arc::new(announce),
    };
    drop(writer);
    let mut tasks = JoinSet::new();
    for (i, p) in prepared.into_iter().enumerate() {
        let ctx = ctx.clone();
        let seed = i as u64;
        let span = info_span!("board", board = %p.name(), game = field::Empty);
        tasks.spawn(p.run(ctx, seed).instrument(span));
    }
    bus::spawn_buses(&mut tasks, bus_specs, &ctx, 1000);
    drop(ctx);
    // systemd: ready now that the boards are prepared and the writer runs.
    if let Err(e) = notifier.ready(&fleet_status(&metrics)) {
        warn!(cause = %e, "readiness not sent to systemd");
    }
    let mut services = JoinSet::new();
    {
        let notifier = notifier.clone();
        let mut stop = stop.clone();
        services.spawn(async move {
            notifier
                .watchdog_loop(async move {
                    let _ignored_if_gone = stop.wait_for(|s| *s).await;
                })
                .await;
        });
    }
    {
        let notifier = notifier.clone();
        let metrics = metrics.clone();
        let mut stop = stop.clone();
        services.spawn(async move {
            let status = || fleet_status(&metrics);
            let mut shown = status();
            let mut every = tokio::time::interval(Duration::from_millis(500));
            loop {
                tokio::select! {
                    _ = every.tick() => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
                let now = status();
                if now != shown {
                    if let Err(e) = notifier.status(&now) {
                        warn!(cause = %e, "status not sent to systemd");
                    }
                    shown = now;
                }
            }
        });
    }
    let stopping = {
        let notifier = notifier.clone();
        let mut stop = stop.clone();
        tokio::spawn(async move {
            if stop.wait_for(|s| *s).await.is_ok()
                && let Err(e) = notifier.stopping("stopping: flushing the store")
            {
                warn!(cause = %e, "stopping not sent to systemd");
            }
        })
    };
    while let Some(res) = tasks.join_next().await {
        if let Err(e) = res {
            error!(cause = %e, "board task failed");
        }
    }
    let store = tokio::task::spawn_blocking(move || writer_thread.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the store writer panicked"))?;
    store.integrity_check()?;
    drop(store);
    info!("store closed");
    // The relays write what the last batches changed, then end with the change signal.
    let relays_done = async { while relays.join_next().await.is_some() {} };
    if tokio::time::timeout(Duration::from_secs(10), relays_done)
        .await
        .is_err()
    {
        warn!("a relay did not finish in time; stopping it");
        relays.abort_all();
    }
    services.abort_all();
    if stop.wait_for(|s| *s).await.is_ok() {
        let _ignored_if_cancelled = stopping.await;
    } else {
        stopping.abort();
    }
    Ok(())
}
