//! The daemon: wires the venue config, boards, store writer, relays and systemd; shutdown.
//!
//! Flow: `run` loads the config ([`Config::load`], flags win), sets the round and numbers the
//! boards in the store, then [`record_fleet`] starts one task per board ([`board`], generic over
//! the kind of board) and the single store writer ([`writer`]); a board announces its events only
//! after the writer has committed them, and the writer bumps a change signal that the folder and
//! Lichess relays follow through read-only connections of their own ([`crate::services`], which
//! the event node starts too). With `--http` (or `[http]`), the relay ([`crate::relay`]) serves the live state, round PGN, admin API and
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
    sync::Arc,
    time::Duration,
};

use anyhow::{Context, bail};
use tokio::{sync::watch, task::JoinSet};
use tracing::{Instrument, error, field, info, info_span, warn};

pub use self::{
    demo::{BoardMix, DemoOptions, demo},
    fleet::{Fleet, port_boards, record_boards, record_fleet},
    print::{pgn_date, print_event},
    writer::{PageLimit, StoreWriter, WriteError, WriterHooks},
};
pub use crate::services::{
    Publications, event_settings, round_info, start_relay, start_relay_with, wait_for_signal,
};
use crate::{
    Millis,
    arbiter::LawsSetup,
    broadcast::{folder::FolderRelay, lichess::LichessQueue},
    config::{BoardConfig, BoardKind, BusConfig, Config, ConfigOverrides, LawsFlags, Locator},
    emulator::{self, EmulatorOptions, PtyFleet, PtyOptions, PtyScript},
    export::publish::Publication,
    game::Variant,
    metrics::Metrics,
    notify::{Notifier, status_line},
    relay::{Hub, RelayExtras, Token},
    sensor::dgt::ClockLayout,
    store::{EventOpened, EventSettings, RoundInfo, Store},
    tracker::TrackerEvent,
};

/// What `run` is told: the command line's flags, parsed ([`crate::cli`] reads them).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The venue configuration; the flags in `overrides` and `laws` win over it.
    pub config: Option<PathBuf>,
    pub overrides: ConfigOverrides,
    /// Print every move as it is recorded.
    pub print_moves: bool,
    /// The file holding the admin API's bearer token (else the config's `[admin]`).
    pub admin_token_file: Option<PathBuf>,
    pub laws: LawsFlags,
}

/// The admin API's token, read from `file` if one is given.
/// A token too easy to guess is refused, as `config check` refuses it.
pub fn admin_token(file: Option<&Path>) -> anyhow::Result<Option<Token>> {
    let Some(file) = file else {
        return Ok(None);
    };
    let token = Token::from_file(file)?;
    if let Some(why) = crate::config::weak_admin_token(&file.display().to_string(), token.text()) {
        bail!("{why}");
    }
    Ok(Some(token))
}

/// `boardscribe run`: records every configured board until SIGINT/SIGTERM.
pub fn run(args: RunOptions) -> anyhow::Result<()> {
    let (ports, kind) = (args.overrides.ports.clone(), args.overrides.port_kind);
    // The token files are read as `config check` reads them (the admin one unless a flag
    // names another), so that both refuse the same config with the same words.
    let files = crate::config::FileChecks {
        admin_token: args.admin_token_file.is_none(),
        ..crate::config::FileChecks::ALL
    };
    let mut config = Config::load_with(args.config.as_deref(), args.overrides, files)?;
    if !ports.is_empty() {
        // Boards given by port keep the port as their name, as before the config existed.
        config.boards = port_boards(&ports, kind);
    }
    if config.boards.is_empty() && config.buses.iter().all(|b| b.boards.is_empty()) {
        bail!(
            "no boards to record: give --config FILE (with [[board]] entries) or --port DEVICE \
             (see `boardscribe config example`)"
        );
    }
    // The file's own bind was checked with it; an address given with --http is held to the
    // same rule, said in the file given with --config.
    if let Some(addr) = config.http.filter(|a| !a.ip().is_loopback())
        && config.http_tls.is_none()
    {
        bail!(
            "{}; --http {addr} is given on the command line: say it in the file given with \
             --config",
            crate::config::plain_http_refusal(addr)
        );
    }
    let laws = args.laws.apply(config.laws_setup());
    let round = round_info(&config.tournament)?;
    // The file is read again whenever it changes ([`crate::relay::server::gate::AdminKey`]).
    let token_file = args
        .admin_token_file
        .clone()
        .or_else(|| config.admin.as_ref().map(|a| a.token_file.clone()));
    let token = admin_token(token_file.as_deref())?;
    if let Some(addr) = config
        .http
        .filter(|a| !a.ip().is_loopback() && token.is_none())
    {
        warn!("{}", crate::config::open_bind_warning(addr));
    }
    let lichess = crate::services::publications::lichess_queues(&config.relay.lichess)?;
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
        fleet.event = event_settings(&config.tournament);
        fleet.folder = folder;
        fleet.lichess = lichess;
        fleet.notifier = Notifier::from_env();
        fleet.publication = config.relay.publication();
        fleet.slice = config.relay.slice;
        fleet.cluster = config.cluster.clone();
        // Migrated before the relay answers its first request.
        fleet.open_store()?;
        let hub = match config.http {
            Some(addr) => {
                let hub = Hub::new();
                let extras = RelayExtras {
                    metrics: fleet.metrics.clone(),
                    changes: Some(fleet.changes.clone()),
                    publication: fleet.publication,
                    public_hub: None,
                    token_file: token_file.clone(),
                    // TLS terminated in front: the console's cookie is never sent in clear.
                    secure_cookies: config.http_tls == Some(crate::config::HttpTls::Proxy),
                    language: config.tournament.language,
                    ..RelayExtras::default()
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

/// `boardscribe serve`: the relay over a database, read-only, with no boards (a finished event,
/// or a copy of a hall's database): each board shows its latest game; the round PGNs, game PGNs,
/// exports of `/rounds/N.pgn` and the page are served until SIGINT/SIGTERM.
pub fn serve(db: &Path, addr: SocketAddr, publication: Publication) -> anyhow::Result<()> {
    if !db.exists() {
        bail!("{}: no such database", db.display());
    }
    let store = Store::open_read_only(db).with_context(|| format!("opening {}", db.display()))?;
    // The pages speak the event's language unless a browser asks for another.
    let language = store
        .event()?
        .and_then(|e| e.settings.language)
        .and_then(|l| l.parse().ok())
        .unwrap_or_default();
    let hub = Hub::new();
    // By id, so each board's latest game is the one it shows.
    let mut latest: Vec<crate::store::GameRecord> = Vec::new();
    for g in store.games()? {
        match latest.iter_mut().find(|l| l.board == g.board) {
            Some(l) => *l = g,
            None => latest.push(g),
        }
    }
    latest.sort_by_key(|g| (g.board_no.is_none(), g.board_no, g.board_name.clone()));
    for g in &latest {
        let ended = g
            .ended_at_ms
            .map(|_| (g.result.as_str(), g.termination.as_deref()));
        hub.add_stored_game(&g.board_name, g.board_no, g.kind, &g.moves, ended);
    }
    drop(store);
    let unfinished = latest.iter().filter(|g| g.result == "*").count();
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let (stop_tx, stop_rx) = watch::channel(false);
        let extras = RelayExtras {
            publication,
            language,
            ..RelayExtras::default()
        };
        let url = start_relay_with(addr, &hub, db, None, stop_rx, extras).await?;
        let shown = serve_says(&publication, unfinished);
        info!(%url, boards = latest.len(), delay_ms = publication.delay_ms, "serving (read-only)");
        if publication.delay_ms == 0 && unfinished > 0 {
            warn!(unfinished, "{shown}");
        }
        println!("serving {} read-only at {url}; {shown}", db.display());
        wait_for_signal().await;
        info!("stopping");
        let _ignored_if_gone = stop_tx.send(true);
        hub.close();
        Ok(())
    })
}

/// What `serve` says at start about what spectators see: the delay it applies, or none, and
/// then whether games still in play would be shown as recorded.
fn serve_says(publication: &Publication, unfinished: usize) -> String {
    if publication.delay_ms > 0 {
        format!(
            "public outputs show each game as it stood {} s ago",
            publication.delay_ms / 1000
        )
    } else if unfinished > 0 {
        format!(
            "no delay: {unfinished} game(s) without a result are shown as recorded; if a \
             daemon is still recording into this database, give the broadcast's delay \
             (--delay 15m, or --config with [relay] delay)"
        )
    } else {
        "no delay: every game is over".to_owned()
    }
}
