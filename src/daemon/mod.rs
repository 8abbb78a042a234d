//! The daemon: wires the venue config, boards, store writer, relays and systemd; shutdown.
//!
//! Flow: `run` loads the config ([`Config::load`], flags win), sets the round and numbers the
//! boards in the store, then [`record_fleet`] starts one task per board ([`board`], generic over
//! the kind of board) and the single store writer ([`writer`]); a board announces its events only
//! after the writer has committed them, and the writer bumps a change signal that the folder and
//! Lichess relays follow through read-only connections of their own. With `--http` (or
//! `[http]`), the relay ([`crate::relay`]) serves the live state, round PGN, admin API and
//! `/metrics`. Under systemd, [`Notifier`] says READY once the boards are prepared and the writer
//! runs, keeps STATUS current and the watchdog fed, and STOPPING on SIGTERM. SIGINT/SIGTERM stop
//! every task; the store is flushed before exit and open games stay open, so a restart resumes
//! them. `demo` runs the same daemon over emulated boards on pseudo-terminals.

pub mod board;
pub mod bus;
mod demo;
pub mod writer;

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::{Context, bail};
use tokio::{sync::watch, task::JoinSet};
use tracing::{Instrument, error, field, info, info_span, warn};

pub use self::{
    board::BoardKit,
    demo::{DemoArgs, demo},
    writer::{PageLimit, StoreWriter, WriteError, WriterHooks},
};
use crate::{
    Millis,
    arbiter::{Federation, Laws, LawsConfig, LawsSetup, Supervision, TimeControl},
    config::{BoardConfig, BoardKind, BusConfig, Config, ConfigOverrides, Locator},
    emulator::{self, EmulatorOptions, PtyFleet, PtyOptions, PtyScript},
    export::{pgn::ClockFormat, round},
    game::Variant,
    metrics::Metrics,
    notify::{Notifier, status_line},
    pipeline::{Dgt, Tgz},
    relay::{self, Hub, RelayExtras, Token, folder::FolderRelay, lichess::LichessPush},
    sensor::dgt::ClockLayout,
    store::{RoundInfo, Store},
    tracker::TrackerEvent,
};

/// The Laws the games are played under (shared by `run`, `demo` and `replay`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LawsArgs {
    /// Edition of the FIDE Laws: fide-2001, fide-2009, fide-2014, fide-2018 or fide-2023
    /// (default: the config's, else fide-2023).
    #[arg(long)]
    pub laws: Option<Laws>,
    /// The time control, e.g. 90+30, 40/90+30:30+30, 15+10, 3+2 (minutes + seconds per move;
    /// `N/` a move quota; `dS` a delay). Article 8.4 and the rapid/blitz rules need it.
    #[arg(long)]
    pub time_control: Option<TimeControl>,
    /// Rapid and blitz: full or reduced supervision (the appendices' two sets of rules; default:
    /// the config's, else full).
    #[arg(long, value_enum)]
    pub supervision: Option<Supervision>,
    /// Whose rules: fide (the edition's), or uscf (the US Chess preset over the edition: no
    /// loss ladder, 14E, the director declares fivefold and 75 moves, US Chess categories).
    #[arg(long, value_enum)]
    pub federation: Option<Federation>,
    /// standard or chess960 (any of the 960 start positions begins a game; default: the
    /// config's, else standard).
    #[arg(long, value_enum)]
    pub variant: Option<Variant>,
}

impl LawsArgs {
    /// The Laws of these flags alone (the defaults where not given).
    pub fn setup(&self) -> LawsSetup {
        self.apply(LawsSetup {
            cfg: LawsConfig::for_edition(Laws::default()),
            time_control: None,
            variant: Variant::Standard,
        })
    }

    /// `base` (e.g. the config's) with the flags given applied: `--laws` and `--federation`
    /// replace the edition and federation (and the file's `[laws]` overrides with them),
    /// `--supervision` and `--time-control` replace theirs.
    pub fn apply(&self, mut base: LawsSetup) -> LawsSetup {
        if self.laws.is_some() || self.federation.is_some() {
            let supervision = base.cfg.supervision;
            let laws = self.laws.unwrap_or(base.cfg.laws);
            let federation = self.federation.unwrap_or(base.cfg.federation);
            base.cfg = LawsConfig::preset(laws, federation);
            base.cfg.supervision = supervision;
        }
        if let Some(s) = self.supervision {
            base.cfg.supervision = s;
        }
        if let Some(tc) = &self.time_control {
            base.time_control = Some(tc.clone());
        }
        if let Some(v) = self.variant {
            base.variant = v;
        }
        base
    }
}

/// `boardscribe run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The venue configuration (`boardscribe config example` prints one); flags given win over it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The database (created if missing; default: the config's, else boardscribe.db).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Serial ports of DGT boards (repeat for several boards), numbered 1, 2, … in order;
    /// replaces the config's boards.
    #[arg(long = "port", value_name = "DEVICE")]
    pub ports: Vec<PathBuf>,
    /// Print every move as it is recorded.
    #[arg(long)]
    pub print_moves: bool,
    /// Serve the relay (round PGN, live state, live page, admin API, /metrics) on this address,
    /// e.g. 127.0.0.1:8080 (default: the config's `[http]`, else no server).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    #[command(flatten)]
    pub admin: AdminArgs,
    #[command(flatten)]
    pub laws: LawsArgs,
}

/// The relay's admin API.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AdminArgs {
    /// A file holding the bearer token of the admin API (without it, admin requests are refused).
    #[arg(long, value_name = "FILE")]
    pub admin_token_file: Option<PathBuf>,
}

impl AdminArgs {
    /// The token, read from its file.
    pub fn token(&self) -> anyhow::Result<Option<Token>> {
        self.admin_token_file
            .as_deref()
            .map(Token::from_file)
            .transpose()
            .map_err(Into::into)
    }
}

/// `YYYY.MM.DD` (PGN) of a Unix time in ms, UTC.
pub fn pgn_date(ms: Millis) -> String {
    // Days to civil date (Howard Hinnant's algorithm).
    let z = (ms / 86_400_000) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}.{m:02}.{d:02}")
}
/// How the daemon shows recorded events on standard output.
pub fn print_event(board: &str, event: &TrackerEvent) {
    match event {
        TrackerEvent::GameStarted { orientation, .. } => {
            println!("{board}: new game (board {})", orientation.as_str());
        }
        TrackerEvent::Move(m) => {
            let n = m.ply.div_ceil(2);
            let dots = if m.ply % 2 == 1 { "." } else { "..." };
            println!("{board}: {n}{dots} {}", m.notation);
        }
        TrackerEvent::Revision { old, new, .. } => {
            println!(
                "{board}: ply {} revised: {} -> {}",
                new.ply, old.notation, new.notation
            );
        }
        TrackerEvent::Takeback {
            from_ply, to_ply, ..
        } => {
            println!("{board}: takeback from ply {from_ply} to ply {to_ply}");
        }
        TrackerEvent::ResultGesture { proposed, .. } => {
            println!(
                "{board}: result shown with the kings: {}",
                proposed.as_pgn()
            );
        }
        TrackerEvent::GameEnded {
            outcome,
            termination,
            ..
        } => println!("{board}: {} ({termination})", outcome.as_pgn()),
        TrackerEvent::Irregularity {
            kind,
            ply,
            detail,
            article,
            ..
        } => {
            let article = article
                .as_deref()
                .map_or(String::new(), |a| format!(", {a}"));
            println!(
                "{board}: irregularity before ply {ply}: {}{article}: {detail}",
                kind.as_str()
            );
        }
        TrackerEvent::Recovered {
            from_ply,
            to_ply,
            source,
            ..
        } => {
            let from = match source {
                crate::tracker::RecoverySource::Memory => "the board's memory",
                crate::tracker::RecoverySource::Search => "the only moves that fit the board",
            };
            println!(
                "{board}: plies {from_ply} to {to_ply}, missed while the board was not heard, recovered from {from}"
            );
        }
        TrackerEvent::Resolved { id, how, .. } => {
            println!("{board}: irregularity {id} resolved: {how}");
        }
        TrackerEvent::FlagFall {
            side,
            proposed,
            note,
            ..
        } => {
            let note = note.as_deref().map_or(String::new(), |n| format!("; {n}"));
            println!(
                "{board}: {} flag fell: {} for the arbiter to confirm{note}",
                side.as_str(),
                proposed.as_pgn()
            );
        }
        TrackerEvent::Claimable { claim, ply, .. } => {
            println!("{board}: before ply {ply} a draw may be claimed: {claim}");
        }
        TrackerEvent::Reoriented { orientation, .. } => {
            println!("{board}: the board lies {}", orientation.as_str());
        }
    }
}

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
    /// Set in the store at start (`[tournament]`).
    pub round: Option<RoundInfo>,
    /// Where serial numbers are looked up (`/sys`).
    pub sysfs: PathBuf,
    pub metrics: Arc<Metrics>,
    /// Bumped by the store writer after every committed batch that touched games.
    pub changes: Arc<watch::Sender<u64>>,
    /// `[relay.folder]`: kept up to date after every change.
    pub folder: Option<FolderRelay>,
    /// `[relay.lichess]`: pushed after every change.
    pub lichess: Option<LichessPush>,
    /// systemd (does nothing outside systemd).
    pub notifier: Notifier,
    /// How the Lichess push writes `[%clk]` (the folder relay carries its own).
    pub clk: ClockFormat,
    /// Tests only: a cap on the database's pages, to make the disk full ([`PageLimit`]).
    pub page_limit: Option<PageLimit>,
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
            sysfs: PathBuf::from("/sys"),
            metrics: Arc::new(Metrics::new()),
            changes: Arc::new(watch::channel(0).0),
            folder: None,
            lichess: None,
            notifier: Notifier::default(),
            clk: ClockFormat::default(),
            page_limit: None,
        }
    }
}

/// DGT boards on `ports`, numbered 1, 2, … in order, each named after its port.
pub fn port_boards(ports: &[PathBuf]) -> Vec<BoardConfig> {
    (1u32..)
        .zip(ports)
        .map(|(number, port)| BoardConfig {
            number,
            kind: BoardKind::Dgt,
            name: port.display().to_string(),
            locator: Locator::Port(port.clone()),
            clock_layout: ClockLayout::default(),
        })
        .collect()
}

/// The store's round from `[tournament]`: `round` must be a positive integer when given.
pub fn round_info(t: &crate::config::Tournament) -> anyhow::Result<Option<RoundInfo>> {
    let Some(round) = t.round.as_deref() else {
        return Ok(None);
    };
    let round = match round.trim().parse::<u32>() {
        Ok(n) if n > 0 => n,
        _ => bail!(
            "[tournament] round {round:?}: run needs the round as a positive integer (1, 2, …)"
        ),
    };
    let unknown = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".to_owned());
    Ok(Some(RoundInfo {
        event: unknown(&t.event),
        site: unknown(&t.site),
        round,
    }))
}

/// `boardscribe run`: records every configured board until SIGINT/SIGTERM.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let overrides = ConfigOverrides {
        database: args.db.clone(),
        http: args.http,
        ports: args.ports.clone(),
    };
    let mut config = Config::load(args.config.as_deref(), overrides)?;
    if !args.ports.is_empty() {
        // Boards given by port keep the port as their name, as before the config existed.
        config.boards = port_boards(&args.ports);
    }
    if config.boards.is_empty() && config.buses.iter().all(|b| b.boards.is_empty()) {
        bail!(
            "no boards to record: give --config FILE (with [[board]] entries) or --port DEVICE \
             (see `boardscribe config example`)"
        );
    }
    let laws = args.laws.apply(config.laws_setup());
    let round = round_info(&config.tournament)?;
    let token = match (&args.admin.admin_token_file, &config.admin) {
        (Some(_), _) => args.admin.token()?,
        (None, Some(admin)) => Some(Token::from_file(&admin.token_file)?),
        (None, None) => None,
    };
    let lichess = config
        .relay
        .lichess
        .as_ref()
        .map(|l| LichessPush::from_token_file(&l.base_url, &l.round, &l.token_file))
        .transpose()?;
    let folder = config
        .relay
        .folder
        .as_ref()
        .map(|f| FolderRelay::new(&f.dir).with_clock_format(config.relay.clk_format));
    let print = args.print_moves;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let (stop_tx, stop_rx) = watch::channel(false);
        tokio::spawn(async move {
            wait_for_signal().await;
            info!("stopping");
            let _ignored_if_all_done = stop_tx.send(true);
        });
        let mut fleet = Fleet::new(&config.database, config.boards.clone(), laws);
        fleet.buses = config.buses.clone();
        fleet.round = round;
        fleet.folder = folder;
        fleet.lichess = lichess;
        fleet.notifier = Notifier::from_env();
        fleet.clk = config.relay.clk_format;
        let hub = match config.http {
            Some(addr) => {
                let hub = Hub::new();
                let extras = RelayExtras {
                    metrics: fleet.metrics.clone(),
                    changes: Some(fleet.changes.clone()),
                    clk: fleet.clk,
                };
                let url =
                    start_relay_with(addr, &hub, &fleet.db, token, stop_rx.clone(), extras).await?;
                info!(%url, "relay serving");
                Some(hub)
            }
            None => None,
        };
        record_fleet(fleet, stop_rx, hub, move |board, e| {
            if print {
                print_event(board, e)
            }
        })
        .await
    })
}

/// Binds `addr` and serves the relay until `stop` turns true; returns the page's URL.
pub async fn start_relay(
    addr: SocketAddr,
    hub: &Hub,
    db: &Path,
    token: Option<Token>,
    stop: watch::Receiver<bool>,
) -> anyhow::Result<String> {
    start_relay_with(addr, hub, db, token, stop, RelayExtras::default()).await
}

/// [`start_relay`] with the daemon's metrics and change signal.
pub async fn start_relay_with(
    addr: SocketAddr,
    hub: &Hub,
    db: &Path,
    token: Option<Token>,
    mut stop: watch::Receiver<bool>,
    extras: RelayExtras,
) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr} for the relay"))?;
    let bound = listener.local_addr()?;
    let app = relay::router_with(hub.clone(), db, token, extras);
    let shutdown = async move {
        // Stopped, or the daemon is gone: either way, stop serving.
        let _ignored_if_sender_gone = stop.wait_for(|s| *s).await;
    };
    let hub = hub.clone();
    tokio::spawn(async move {
        if let Err(e) = relay::serve(listener, app, hub, shutdown).await {
            error!(cause = %e, "relay server failed");
        }
    });
    Ok(format!("http://{bound}/"))
}
pub(crate) async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ignored = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ignored = tokio::signal::ctrl_c().await;
    }
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
    let fleet = Fleet::new(db, port_boards(ports), laws.clone());
    record_fleet(fleet, stop, hub, announce).await
}

/// A configured board of either kind, prepared.
enum Prepared {
    Dgt(Box<board::BoardSpec<Dgt>>),
    Tgz(Box<board::BoardSpec<Tgz>>),
}

/// A read-only connection of its own, opened when first used and again after a failure.
struct Reader {
    db: PathBuf,
    store: Mutex<Option<Store>>,
}

impl Reader {
    fn new(db: &Path) -> Reader {
        Reader {
            db: db.to_owned(),
            store: Mutex::new(None),
        }
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&Store) -> Result<T, crate::store::StoreError>,
    ) -> Result<T, crate::store::StoreError> {
        let mut guard = self.store.lock().unwrap_or_else(|p| p.into_inner());
        let store = match guard.take() {
            Some(store) => store,
            None => Store::open_read_only(&self.db)?,
        };
        let result = f(&store);
        if result.is_ok() {
            *guard = Some(store);
        }
        result
    }

    /// The current round and its games, `None` while no round is set.
    fn round(
        &self,
    ) -> Result<Option<(u32, Vec<crate::store::GameRecord>)>, crate::store::StoreError> {
        self.with(|s| match s.round_info()? {
            Some(info) => Ok(Some((info.round, s.round_games(info.round)?))),
            None => Ok(None),
        })
    }
}

/// systemd's STATUS line: boards and games, and a full store.
fn fleet_status(metrics: &Metrics) -> String {
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
        sysfs,
        metrics,
        changes,
        folder,
        lichess,
        notifier,
        clk,
        page_limit,
    } = fleet;
    let mut store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
    if let Some(round) = &round {
        store.set_round(round)?;
        info!(
            round = round.round,
            event = %round.event,
            "round set"
        );
    }
    let mut prepared = Vec::new();
    for cfg in &boards {
        prepared.push(match cfg.kind {
            BoardKind::Dgt => Prepared::Dgt(Box::new(board::prepare(&mut store, cfg, &laws)?)),
            BoardKind::Togyz => Prepared::Tgz(Box::new(board::prepare(&mut store, cfg, &laws)?)),
        });
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
            let (name, number, kind, moves) = match p {
                Prepared::Dgt(b) => (&b.name, b.number, crate::game::Kind::Chess, &b.resumed),
                Prepared::Tgz(b) => (&b.name, b.number, crate::game::Kind::Togyz, &b.resumed),
            };
            hub.add_board_kind(name, Some(number), kind, moves);
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
    if let Some(folder) = folder {
        let reader = Reader::new(&db);
        relays.spawn(folder.run(changes.subscribe(), move || reader.round()));
    }
    if let Some(push) = lichess {
        let reader = Reader::new(&db);
        relays.spawn(push.run(changes.subscribe(), move || {
            reader.round().map(|r| {
                r.map_or_else(String::new, |(round, games)| {
                    round::round_pgn_clk(&games, round, clk)
                })
            })
        }));
    }
    drop(changes);
    let ctx = board::Ctx {
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
        match p {
            Prepared::Dgt(b) => {
                let span = info_span!("board", board = %b.name, game = field::Empty);
                tasks.spawn(board::board_task(*b, ctx, seed).instrument(span));
            }
            Prepared::Tgz(b) => {
                let span = info_span!("board", board = %b.name, game = field::Empty);
                tasks.spawn(board::board_task(*b, ctx, seed).instrument(span));
            }
        }
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
