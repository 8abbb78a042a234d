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
    broadcast::{
        folder::FolderRelay,
        lichess::{Backoff, LichessClient, LichessQueue, LichessTarget, plan::LichessRounds},
    },
    daemon,
    emulator::{self, EmulatorOptions, PgnGame, PtyFleet, PtyOptions, PtyScript},
    export::publish::{BoardRange, Publication},
    metrics::Metrics,
    relay::{Hub, RelayExtras, Token},
    store::{RoundInfo, Store},
};
use tokio::{sync::watch, task::JoinHandle};

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
    /// The relay's own stop (a daemon stopped and started again keeps it serving).
    relay_stop: watch::Sender<bool>,
    daemon: Option<JoinHandle<anyhow::Result<()>>>,
    emulators: Option<PtyFleet>,
    /// The boards' pty links, for a daemon started again.
    ports: Vec<PathBuf>,
    /// The relay outputs the daemon feeds.
    outputs: Outputs,
}

/// What the daemon publishes besides the HTTP relay, as `[relay]` sets it.
#[derive(Clone, Default)]
pub struct Outputs {
    pub publication: Publication,
    /// `[relay.folder] dir`.
    pub folder: Option<PathBuf>,
    /// `[[relay.lichess]]`: (base URL, round id, boards), all with `lichess_token`.
    pub lichess: Vec<(String, String, Option<BoardRange>)>,
    pub lichess_token: Option<String>,
}

impl Bench {
    /// The relay on a free port of 127.0.0.1, over a database that does not exist yet.
    pub async fn new(token: Option<Token>) -> Bench {
        Bench::with_round(token, None).await
    }

    /// [`Bench::new`], the daemon setting `round` (as `[tournament] round` does) if given.
    pub async fn with_round(token: Option<Token>, round: Option<u32>) -> Bench {
        Bench::with_outputs(token, round, Outputs::default()).await
    }

    /// [`Bench::with_round`], publishing as `outputs` says (delay, folder, Lichess rounds).
    pub async fn with_outputs(token: Option<Token>, round: Option<u32>, outputs: Outputs) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("relay.db");
        let hub = Hub::new();
        let (relay_stop, stop_rx) = watch::channel(false);
        let stop = watch::channel(false).0;
        let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let metrics = Arc::new(Metrics::new());
        let changes = Arc::new(watch::channel(0).0);
        let extras = RelayExtras {
            metrics: metrics.clone(),
            changes: Some(changes.clone()),
            publication: outputs.publication,
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
            relay_stop,
            daemon: None,
            emulators: None,
            ports: Vec::new(),
            outputs,
        }
    }

    /// Another relay over the same database, as a restarted daemon serves it (its own hub,
    /// its delayed view built afresh from the store); served until the bench stops.
    pub async fn second_relay(&self, token: Option<Token>) -> String {
        let extras = RelayExtras {
            publication: self.outputs.publication,
            ..RelayExtras::default()
        };
        let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        daemon::start_relay_with(
            any,
            &Hub::new(),
            &self.db,
            token,
            self.relay_stop.subscribe(),
            extras,
        )
        .await
        .unwrap()
    }

    /// Emulated boards playing `games` (game, seed, rate of scripted irregularities per ply;
    /// speed: the emulator's time multiplier), recorded into the database and fed to the hub.
    pub async fn start(&mut self, games: &[(PgnGame, u64, f64)], speed: f64) {
        self.start_with(games, speed, |_, _| {}).await
    }

    /// [`Bench::start`], `pty` setting each board's emulator options (by index).
    pub async fn start_with(
        &mut self,
        games: &[(PgnGame, u64, f64)],
        speed: f64,
        pty: impl Fn(usize, &mut PtyOptions),
    ) {
        let mut boards = Vec::new();
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
            let mut options = PtyOptions::default();
            pty(i, &mut options);
            boards.push((PtyScript::from(script), options));
        }
        self.start_scripts(boards).await;
    }

    /// Emulated boards playing `boards` (their links are set here, `board-N`), recorded into
    /// the database and fed to the hub.
    pub async fn start_scripts(&mut self, boards: Vec<(PtyScript, PtyOptions)>) {
        let mut ptys = Vec::new();
        for (i, (script, mut options)) in boards.into_iter().enumerate() {
            let link = self.dir.path().join(format!("board-{}", i + 1));
            options.link = Some(link.clone());
            ptys.push((script, options));
            self.boards.push(link.display().to_string());
            self.ports.push(link);
        }
        self.emulators = Some(PtyFleet::spawn(ptys).await.unwrap());
        self.start_daemon();
    }

    /// Records the boards (again, after [`Bench::stop_daemon`]).
    fn start_daemon(&mut self) {
        let laws = LawsSetup {
            time_control: Some("15+10".parse().unwrap()),
            ..LawsSetup::default()
        };
        let db = self.db.clone();
        let stop = self.stop.subscribe();
        let hub = self.hub.clone();
        let mut fleet = daemon::Fleet::new(
            &db,
            daemon::port_boards(&self.ports, boardscribe::kind::BoardKind::Dgt),
            laws,
        );
        fleet.metrics = self.metrics.clone();
        fleet.changes = self.changes.clone();
        fleet.publication = self.outputs.publication;
        fleet.folder = self.outputs.folder.as_ref().map(FolderRelay::new);
        if let Some(token) = &self.outputs.lichess_token {
            let token = boardscribe::broadcast::lichess::Token::new(token).unwrap();
            fleet.lichess = self
                .outputs
                .lichess
                .iter()
                .map(|(base, round, boards)| LichessQueue {
                    client: LichessClient::new(base, &token)
                        .unwrap()
                        .with_backoff(Backoff {
                            initial: Duration::from_millis(50),
                            max: Duration::from_millis(500),
                        }),
                    targets: vec![LichessTarget {
                        rounds: LichessRounds::Current(round.clone()),
                        boards: boards.clone(),
                    }],
                })
                .collect();
        }
        fleet.round = self.round.map(|round| RoundInfo {
            event: "Relay test".into(),
            site: "Here".into(),
            round,
        });
        self.daemon = Some(tokio::spawn(async move {
            daemon::record_fleet(fleet, stop, Some(hub), |_, _| {}).await
        }));
    }

    /// Waits until every board has played its script, then lets the last moves reach the store.
    pub async fn wait_done(&mut self, within: Duration) {
        let fleet = self.emulators.as_mut().unwrap();
        tokio::time::timeout(within, fleet.all_done(|_, _| {}))
            .await
            .expect("the boards did not finish their games in time");
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }

    /// Stops recording (the boards and the relay go on), as a daemon stopping does.
    pub async fn stop_daemon(&mut self) {
        self.stop.send_replace(true);
        if let Some(d) = self.daemon.take() {
            d.await.unwrap().unwrap();
        }
        self.stop = watch::channel(false).0;
    }

    /// Records the boards again after [`Bench::stop_daemon`], on the same database and hub.
    pub fn restart_daemon(&mut self) {
        self.start_daemon();
    }

    /// Waits until every board has played its script (no pause after it).
    pub async fn wait_scripts(&mut self, within: Duration) {
        let fleet = self.emulators.as_mut().unwrap();
        tokio::time::timeout(within, fleet.all_done(|_, _| {}))
            .await
            .expect("the boards did not finish their scripts in time");
    }

    /// Stops recording and serving.
    pub async fn stop(mut self) {
        self.stop.send_replace(true);
        let _ignored_if_relay_ended = self.relay_stop.send(true);
        if let Some(d) = self.daemon.take() {
            d.await.unwrap().unwrap();
        }
        if let Some(mut fleet) = self.emulators.take() {
            fleet.abort();
        }
    }

    /// A read-only look at the database (as another process would have).
    pub fn store(&self) -> Store {
        Store::open_read_only(&self.db).unwrap()
    }
}

/// `GET /api/boards` as the arbiter (the admin token shows the irregularities and alerts; issue
/// 16 took them off the public answer).
pub async fn api_boards_as_arbiter(
    client: &reqwest::Client,
    url: &str,
    token: &str,
) -> serde_json::Value {
    client
        .get(format!("{url}api/boards"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// A `boardscribe serve --db DB --delay …` process; killed when dropped.
pub struct Served {
    child: std::process::Child,
    pub url: String,
}

impl Served {
    /// Starts it on a free port, and waits until it answers; checks that it said its delay.
    pub async fn start(db: &Path, delay_ms: u64) -> Served {
        use std::io::BufRead as _;
        let port = crate::ports::free();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_boardscribe"))
            .args(["serve", "--db", db.to_str().unwrap(), "--http"])
            .arg(format!("127.0.0.1:{port}"))
            .args(["--delay", &format!("{}s", delay_ms / 1000)])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut said = String::new();
        let stdout = child.stdout.take().unwrap();
        tokio::task::block_in_place(|| std::io::BufReader::new(stdout).read_line(&mut said))
            .unwrap();
        assert!(
            delay_ms == 0 || said.contains(&format!("as it stood {} s ago", delay_ms / 1000)),
            "serve said: {said}"
        );
        for _ in 0..100 {
            let answered = reqwest::get(format!("http://127.0.0.1:{port}/api/boards"))
                .await
                .is_ok_and(|r| r.status().is_success());
            if answered {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Served {
            child,
            url: format!("http://127.0.0.1:{port}/"),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
