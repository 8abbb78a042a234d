//! `boardscribe demo`: emulated boards play public-domain games into a temporary database, with
//! the live page, through the same [`record_fleet`] as `run` (the boards on pseudo-terminals).

use super::*;

/// What `demo` is told: the command line's flags, parsed ([`crate::cli`] reads them).
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// Number of emulated boards.
    pub boards: usize,
    /// Time multiplier for the emulated players (1 is human speed).
    pub speed: f64,
    /// Where to put the database (`None`: a new temporary directory).
    pub db: Option<PathBuf>,
    pub seed: u64,
    /// Serve the live page on this address (`None`: 127.0.0.1:8080, or any free port).
    pub http: Option<SocketAddr>,
    /// No live page: record, print and exit.
    pub no_http: bool,
    /// Keep serving the live page after the games are over, until Ctrl-C.
    pub stay: bool,
    /// The file holding the admin API's bearer token.
    pub admin_token_file: Option<PathBuf>,
    pub laws: LawsFlags,
}

/// The emulated clock for `laws`' time control: the first period's base and increment.
fn emulated_clock(laws: &LawsSetup) -> (u64, u64) {
    laws.time_control
        .as_ref()
        .and_then(|tc| tc.periods().first())
        .map_or((15 * 60_000, 10_000), |p| {
            (u64::from(p.base_secs) * 1000, p.increment_ms())
        })
}

/// `boardscribe demo`: emulated boards play corpus games into a temporary database.
pub fn demo(args: DemoOptions) -> anyhow::Result<()> {
    let dir = match &args.db {
        Some(db) => db
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(".")),
        None => {
            let d = std::env::temp_dir().join(format!("boardscribe-demo-{}", std::process::id()));
            std::fs::create_dir_all(&d)?;
            d
        }
    };
    let db = args.db.clone().unwrap_or_else(|| dir.join("demo.db"));
    // The emulated clocks run the configured time control (15+10 unless told).
    let mut laws = args.laws.setup();
    // Chess960: a random game from each board's seed (its own start position).
    let games = match laws.variant {
        Variant::Standard => emulator::games_from_pgn(DEMO_PGN)?,
        Variant::Chess960 => (0..args.boards.max(1))
            .map(|i| emulator::chess960_game(args.seed + i as u64))
            .collect(),
    };
    if laws.time_control.is_none() {
        laws.time_control = Some("15+10".parse()?);
    }
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let mut boards = Vec::new();
        let mut ports = Vec::new();
        for i in 0..args.boards.max(1) {
            let game = &games[i % games.len()];
            let seed = args.seed + i as u64;
            let opts = EmulatorOptions {
                speed: args.speed,
                seed,
                rotated: i % 2 == 1,
                time_control: Some(emulated_clock(&laws)),
                // A few irregularities (a knocked piece, an illegal move, a press without a
                // move...), so that the demo shows the arbiter's side too.
                irregularities: emulator::random_irregularities(seed, game.moves.len(), 0.03),
                ..EmulatorOptions::default()
            };
            let script = emulator::script_pgn(game, &opts)?;
            let link = dir.join(format!("board-{}", i + 1));
            let pty = PtyOptions {
                link: Some(link.clone()),
                ..PtyOptions::default()
            };
            boards.push((PtyScript::from(script), pty));
            println!(
                "board {}: {} - {} on {}",
                i + 1,
                game.tag("White").unwrap_or("?"),
                game.tag("Black").unwrap_or("?"),
                link.display()
            );
            ports.push(link);
        }
        // Every pseudo-terminal exists before the daemon opens it.
        let mut emulators = PtyFleet::spawn(boards).await?;
        let (stop_tx, stop_rx) = watch::channel(false);
        let (relay_stop_tx, relay_stop_rx) = watch::channel(false);
        let fleet = Fleet::new(&db, port_boards(&ports), laws.clone());
        let extras = RelayExtras {
            metrics: fleet.metrics.clone(),
            changes: Some(fleet.changes.clone()),
            token_file: args.admin_token_file.clone(),
            ..RelayExtras::default()
        };
        let hub = if args.no_http {
            None
        } else {
            let hub = Hub::new();
            let token = admin_token(args.admin_token_file.as_deref())?;
            let default = SocketAddr::from(([127, 0, 0, 1], 8080));
            let url = match start_relay_with(
                args.http.unwrap_or(default),
                &hub,
                &db,
                token.clone(),
                relay_stop_rx.clone(),
                extras.clone(),
            )
            .await
            {
                Ok(url) => url,
                // 8080 is taken: any free port will do.
                Err(e) if args.http.is_none() => {
                    warn!(cause = %e, "trying another port");
                    let any = SocketAddr::from(([127, 0, 0, 1], 0));
                    start_relay_with(any, &hub, &db, token, relay_stop_rx, extras).await?
                }
                Err(e) => return Err(e),
            };
            println!("live page: {url}");
            Some(hub)
        };
        let daemon = tokio::spawn({
            let hub = hub.clone();
            async move { record_fleet(fleet, stop_rx, hub, print_event).await }
        });
        let all_done = async {
            emulators.all_done(|_, _| {}).await;
            // Let the last moves settle and reach the store.
            tokio::time::sleep(Duration::from_secs(1)).await;
        };
        let interrupted = tokio::select! {
            _ = all_done => false,
            _ = wait_for_signal() => true,
        };
        if interrupted {
            println!("interrupted");
        }
        let _ignored_if_daemon_ended = stop_tx.send(true);
        daemon.await??;
        emulators.abort();
        if hub.is_some() && !interrupted && args.stay {
            println!("games over; the live page stays up until Ctrl-C");
            wait_for_signal().await;
        }
        let _ignored_if_relay_ended = relay_stop_tx.send(true);
        anyhow::Ok(())
    })?;
    println!();
    println!("database: {}", db.display());
    println!(
        "export:   boardscribe export --db {} --format pgn",
        db.display()
    );
    println!(
        "    (or:  cargo run --release -- export --db {} --format json)",
        db.display()
    );
    Ok(())
}

/// Games the demo boards play (public-domain game scores from the corpus).
const DEMO_PGN: &str = include_str!("../../fixtures/demo.pgn");
