//! `boardscribe demo`: emulated boards play public game scores into a temporary database, with
//! the live page and the arbiter's console, through the same [`record_fleet`] as `run` (the
//! boards on pseudo-terminals): DGT chessboards and togyz korgool pit boards side by side.
//!
//! Flow: each board's game and script (chess from `fixtures/demo.pgn`, or random Chess960;
//! togyz korgool from `fixtures/demo-togyz.pgn`), its clock at the demo's time control; the
//! ptys; the relay with an admin token (the one given, else a new random one in the demo's
//! directory) so that the console can be logged into; what a newcomer opens printed: the live
//! page, the console and how to log in; the daemon until the games are over (or Ctrl-C).

use rand::RngCore as _;

use super::*;

/// What `demo` is told: the command line's flags, parsed ([`crate::cli`] reads them).
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// Number of emulated DGT chessboards.
    pub chess_boards: usize,
    /// Number of emulated togyz korgool pit boards (TGZ-1), numbered after the chessboards.
    pub togyz_boards: usize,
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
    /// The file holding the admin API's bearer token (`None`: a new random one in the demo's
    /// directory).
    pub admin_token_file: Option<PathBuf>,
    pub laws: LawsFlags,
}

/// The demo's time control unless told: 15 minutes and 10 seconds a move.
const DEMO_TIME_CONTROL: &str = "15+10";

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
    // Every emulated clock starts at the demo's time control, as the referee expects it.
    let mut laws = args.laws.setup();
    if laws.time_control.is_none() {
        laws.time_control = Some(DEMO_TIME_CONTROL.parse()?);
    }
    let clock = laws.time_control.as_ref().map(emulator::clock_for);
    let (chess, togyz) = match (args.chess_boards, args.togyz_boards) {
        (0, 0) => (1, 0),
        counts => counts,
    };
    let mut boards = chess_boards(chess, &args, &laws, clock)?;
    boards.extend(togyz_boards(togyz, &args, clock)?);
    let token_file = match (&args.admin_token_file, args.no_http) {
        (Some(file), _) => Some(file.clone()),
        (None, false) => Some(new_token_file(&dir)?),
        (None, true) => None,
    };
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let mut scripts = Vec::new();
        let mut configs = Vec::new();
        for (i, board) in boards.into_iter().enumerate() {
            let number = i as u32 + 1;
            let link = dir.join(format!("board-{number}"));
            println!(
                "board {number} ({}): {} on {}",
                board.kind_name,
                board.players,
                link.display()
            );
            scripts.push((
                board.script,
                PtyOptions {
                    link: Some(link.clone()),
                    ..PtyOptions::default()
                },
            ));
            configs.push(BoardConfig {
                number,
                kind: board.kind,
                name: link.display().to_string(),
                locator: Locator::Port(link),
                clock_layout: ClockLayout::default(),
            });
        }
        // Every pseudo-terminal exists before the daemon opens it.
        let mut emulators = PtyFleet::spawn(scripts).await?;
        let (stop_tx, stop_rx) = watch::channel(false);
        let (relay_stop_tx, relay_stop_rx) = watch::channel(false);
        let fleet = Fleet::new(&db, configs, laws.clone());
        let extras = RelayExtras {
            metrics: fleet.metrics.clone(),
            changes: Some(fleet.changes.clone()),
            token_file: token_file.clone(),
            ..RelayExtras::default()
        };
        let hub = if args.no_http {
            None
        } else {
            let hub = Hub::new();
            let token = admin_token(token_file.as_deref())?;
            // A token the demo made is shown: a newcomer logs in with it.
            let made_token = match (&args.admin_token_file, &token) {
                (None, Some(token)) => Some(token.text().to_owned()),
                _ => None,
            };
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
            println!("live page:         {url}");
            println!("arbiter's console: {url}arbiter");
            if let Some(file) = &token_file {
                println!(
                    "  log in with the admin token in {} and your name{}",
                    file.display(),
                    made_token
                        .map(|t| format!(": the token is {t}"))
                        .unwrap_or_default()
                );
            }
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

/// Chess games the demo boards play (public-domain game scores from the corpus).
const DEMO_PGN: &str = include_str!("../../fixtures/demo.pgn");
/// Togyz korgool games the demo's pit boards play (Kazakh federation events, from the corpus).
const DEMO_TOGYZ: &str = include_str!("../../fixtures/demo-togyz.pgn");

/// One emulated board of the demo: its kind, who plays, its script.
struct DemoBoard {
    kind: BoardKind,
    /// For the demo's lines: `chess`, `togyz korgool`.
    kind_name: &'static str,
    /// `White - Black`.
    players: String,
    script: PtyScript,
}

/// `count` DGT chessboards: the demo's games in turn (or random Chess960 games), every other
/// board set up turned round, with a few irregularities for the arbiter's side.
fn chess_boards(
    count: usize,
    args: &DemoOptions,
    laws: &LawsSetup,
    clock: Option<(u64, u64)>,
) -> anyhow::Result<Vec<DemoBoard>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    // Chess960: a random game from each board's seed (its own start position).
    let games = match laws.variant {
        Variant::Standard => emulator::games_from_pgn(DEMO_PGN)?,
        Variant::Chess960 => (0..count)
            .map(|i| emulator::chess960_game(args.seed + i as u64))
            .collect(),
    };
    let mut boards = Vec::new();
    for (i, game) in games.iter().cycle().take(count).enumerate() {
        let seed = args.seed + i as u64;
        let opts = EmulatorOptions {
            speed: args.speed,
            seed,
            rotated: i % 2 == 1,
            time_control: clock,
            // A few irregularities (a knocked piece, an illegal move, a press without a
            // move...), so that the demo shows the arbiter's side too.
            irregularities: emulator::random_irregularities(seed, game.moves.len(), 0.03),
            ..EmulatorOptions::default()
        };
        boards.push(DemoBoard {
            kind: BoardKind::Dgt,
            kind_name: "chess",
            players: format!(
                "{} - {}",
                game.tag("White").unwrap_or("?"),
                game.tag("Black").unwrap_or("?")
            ),
            script: emulator::script_pgn(game, &opts)?.into(),
        });
    }
    Ok(boards)
}

/// `count` togyz korgool pit boards playing the demo's togyz games in turn.
fn togyz_boards(
    count: usize,
    args: &DemoOptions,
    clock: Option<(u64, u64)>,
) -> anyhow::Result<Vec<DemoBoard>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let rules = crate::game::togyz::Rules::KYRGYZ;
    let records = emulator::togyz_records(DEMO_TOGYZ, rules)?;
    let mut boards = Vec::new();
    for (i, (record, moves)) in records.iter().cycle().take(count).enumerate() {
        let opts = emulator::TogyzEmulatorOptions {
            speed: args.speed,
            // Apart from the chessboards' seeds.
            seed: args.seed.wrapping_add(1000 + i as u64),
            time_control: clock,
            rules,
            ..emulator::TogyzEmulatorOptions::default()
        };
        boards.push(DemoBoard {
            kind: BoardKind::Togyz,
            kind_name: "togyz korgool",
            players: format!(
                "{} - {}",
                record.header("White").unwrap_or("?"),
                record.header("Black").unwrap_or("?")
            ),
            script: emulator::script_togyz(moves, &opts)?.into(),
        });
    }
    Ok(boards)
}

/// A new random admin token (256 bits, hex) in `dir/admin.token`, readable by its owner only:
/// what the demo's console is logged into with when no token file is given.
fn new_token_file(dir: &Path) -> anyhow::Result<PathBuf> {
    use std::{io::Write as _, os::unix::fs::OpenOptionsExt as _};
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let path = dir.join("admin.token");
    // Replaced, not rewritten: a token file left by another demo may be anyone's.
    let _absent_is_fine = std::fs::remove_file(&path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("writing {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
