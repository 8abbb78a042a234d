//! Shared by tests/http_relay.rs and tests/live_page.rs: the relay served on 127.0.0.1:0 over a
//! hub, and emulated boards on pseudo-terminals recorded by `daemon::record_boards` (as `demo`
//! does), so that the tests talk to the real server over real HTTP.
#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use boardscribe::{
    arbiter::LawsSetup,
    daemon,
    emulator::{self, EmulatorOptions, PgnGame, PtyEvent, PtyOptions},
    metrics::Metrics,
    relay::{Hub, RelayExtras, Token},
    store::{RoundInfo, Store},
};
use tokio::{
    sync::{mpsc, watch},
    task::{JoinHandle, JoinSet},
};

pub const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/chess");

/// Game `n` (1-based) of a corpus file.
pub fn corpus_game(file: &str, n: usize) -> PgnGame {
    let text = std::fs::read_to_string(Path::new(CORPUS).join(format!("{file}.pgn"))).unwrap();
    emulator::games_from_pgn(&text).unwrap().swap_remove(n - 1)
}

/// The relay and the boards it shows.
pub struct Bench {
    pub dir: tempfile::TempDir,
    pub db: PathBuf,
    /// `http://127.0.0.1:PORT/`
    pub url: String,
    pub hub: Hub,
    /// The board names (their pty links), in board-number order.
    pub boards: Vec<String>,
    /// The daemon's counters, as `/metrics` serves them.
    pub metrics: Arc<Metrics>,
    changes: Arc<watch::Sender<u64>>,
    round: Option<u32>,
    stop: watch::Sender<bool>,
    daemon: Option<JoinHandle<anyhow::Result<()>>>,
    emulators: JoinSet<Result<(), emulator::EmulatorError>>,
    done: Option<mpsc::UnboundedReceiver<usize>>,
}

impl Bench {
    /// The relay on a free port of 127.0.0.1, over a database that does not exist yet.
    pub async fn new(token: Option<Token>) -> Bench {
        Bench::with_round(token, None).await
    }

    /// [`Bench::new`], the daemon setting `round` (as `[tournament] round` does) if given.
    pub async fn with_round(token: Option<Token>, round: Option<u32>) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("relay.db");
        let hub = Hub::new();
        let (stop, stop_rx) = watch::channel(false);
        let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let metrics = Arc::new(Metrics::new());
        let changes = Arc::new(watch::channel(0).0);
        let extras = RelayExtras {
            metrics: metrics.clone(),
            changes: Some(changes.clone()),
            ..RelayExtras::default()
        };
        let url = daemon::start_relay_with(any, &hub, &db, token, stop_rx, extras)
            .await
            .unwrap();
        Bench {
            dir,
            db,
            url,
            hub,
            boards: Vec::new(),
            metrics,
            changes,
            round,
            stop,
            daemon: None,
            emulators: JoinSet::new(),
            done: None,
        }
    }

    /// Emulated boards playing `games` (game, seed, rate of scripted irregularities per ply;
    /// speed: the emulator's time multiplier), recorded into the database and fed to the hub.
    pub async fn start(&mut self, games: &[(PgnGame, u64, f64)], speed: f64) {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        let mut ports = Vec::new();
        for (i, (game, seed, rate)) in games.iter().enumerate() {
            let opts = EmulatorOptions {
                speed,
                seed: *seed,
                rotated: i % 2 == 1,
                time_control: Some((15 * 60_000, 10_000)),
                irregularities: emulator::random_irregularities(*seed, game.moves.len(), *rate),
                ..EmulatorOptions::default()
            };
            let script = emulator::script_pgn(game, &opts).unwrap();
            let link = self.dir.path().join(format!("board-{}", i + 1));
            let pty = PtyOptions {
                link: Some(link.clone()),
                ..PtyOptions::default()
            };
            let (tx, mut rx) = mpsc::unbounded_channel();
            self.emulators
                .spawn(async move { emulator::run_pty(&script, &pty, Some(tx)).await });
            while let Some(ev) = rx.recv().await {
                if matches!(ev, PtyEvent::Ready(_)) {
                    break;
                }
            }
            let done_tx = done_tx.clone();
            tokio::spawn(async move {
                while let Some(ev) = rx.recv().await {
                    if ev == PtyEvent::ScriptDone {
                        let _ = done_tx.send(i);
                    }
                }
            });
            self.boards.push(link.display().to_string());
            ports.push(link);
        }
        let laws = LawsSetup {
            time_control: Some("15+10".parse().unwrap()),
            ..LawsSetup::default()
        };
        let db = self.db.clone();
        let stop = self.stop.subscribe();
        let hub = self.hub.clone();
        let mut fleet = daemon::Fleet::new(&db, daemon::port_boards(&ports), laws);
        fleet.metrics = self.metrics.clone();
        fleet.changes = self.changes.clone();
        fleet.round = self.round.map(|round| RoundInfo {
            event: "Relay test".into(),
            site: "Here".into(),
            round,
        });
        self.daemon = Some(tokio::spawn(async move {
            daemon::record_fleet(fleet, stop, Some(hub), |_, _| {}).await
        }));
        self.done = Some(done_rx);
    }

    /// Waits until every board has played its script, then lets the last moves reach the store.
    pub async fn wait_done(&mut self, within: Duration) {
        let n = self.boards.len();
        let done = self.done.as_mut().unwrap();
        tokio::time::timeout(within, async {
            for _ in 0..n {
                done.recv().await.unwrap();
            }
        })
        .await
        .expect("the boards did not finish their games in time");
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }

    /// Stops recording and serving.
    pub async fn stop(mut self) {
        self.stop.send(true).unwrap();
        if let Some(d) = self.daemon.take() {
            d.await.unwrap().unwrap();
        }
        self.emulators.abort_all();
    }

    /// A read-only look at the database (as another process would have).
    pub fn store(&self) -> Store {
        Store::open_read_only(&self.db).unwrap()
    }
}
