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
mod context;
mod demo;
mod fleet;
mod persist;
mod port;
mod print;
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
    fleet::{Fleet, port_boards, record_boards, record_fleet},
    print::{pgn_date, print_event},
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
