//! `boardscribe demo`: emulated boards play public game scores into a temporary database, with
//! the live page and the arbiter's console, through the same [`record_fleet`] as `run` (the
//! boards on pseudo-terminals): DGT chessboards and togyz korgool pit boards side by side.
//!
//! Flow: each board's kind (`--boards dgt=2,chesslink=1,togyz=1`: vendors side by side), game
//! and script (chess from `fixtures/demo.pgn`, or random Chess960, each vendor's board with the
//! same hands; togyz korgool from `fixtures/demo-togyz.pgn`), its clock at the demo's time
//! control (boards without a clock play without one); the
//! ptys; the relay with an admin token (the one given, else a new random one in the demo's
//! directory) so that the console can be logged into; what a newcomer opens printed: the live
//! page, the console and how to log in; the daemon until the games are over (or Ctrl-C).

use rand::RngCore as _;

use crate::game::Kind;

use super::*;

/// What `demo` is told: the command line's flags, parsed ([`crate::cli`] reads them).
#[derive(Clone, Debug)]
pub struct DemoOptions {
    /// The emulated boards' kinds, one per board in board order (empty: one DGT board).
    pub boards: Vec<BoardKind>,
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
    let kinds = match args.boards.as_slice() {
        [] => vec![BoardKind::Dgt],
        kinds => kinds.to_vec(),
    };
    let boards = demo_boards(&kinds, &args, &laws, clock)?;
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
            // `board 2 (chess): A - B [Millennium ChessLink, no clock, hands at human
            // speed] on LINK`.
            let clock = if board.kind.reports_clock() {
                ""
            } else {
                ", no clock"
            };
            let hands = if board.kind.reports_whole_positions() && args.speed < 1.0 {
                ", hands at human speed"
            } else {
                ""
            };
            let game = match board.kind.game() {
                Kind::Chess => "chess",
                Kind::Togyz => "togyz korgool",
            };
            println!(
                "board {number} ({game}): {} [{}{clock}{hands}] on {}",
                board.players,
                board.kind.vendor(),
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
        let mut fleet = Fleet::new(&db, configs, laws.clone());
        // Migrated before the relay answers its first request.
        fleet.open_store()?;
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
    /// `White - Black`.
    players: String,
    script: PtyScript,
}

/// The demo's boards, one of each kind in `kinds`: chessboards play the demo's games in turn
/// (or random Chess960 games), every other one set up turned round, with a few irregularities
/// for the arbiter's side, each vendor's board with the same hands (and no clock where it has
/// none); togyz korgool pit boards play the demo's togyz games in turn.
fn demo_boards(
    kinds: &[BoardKind],
    args: &DemoOptions,
    laws: &LawsSetup,
    clock: Option<(u64, u64)>,
) -> anyhow::Result<Vec<DemoBoard>> {
    let chess_count = kinds.iter().filter(|k| k.game() == Kind::Chess).count();
    // Chess960: a random game from each board's seed (its own start position).
    let chess_games = match laws.variant {
        _ if chess_count == 0 => Vec::new(),
        Variant::Standard => emulator::games_from_pgn(DEMO_PGN)?,
        Variant::Chess960 => (0..chess_count)
            .map(|i| emulator::chess960_game(args.seed + i as u64))
            .collect(),
    };
    let togyz_rules = crate::game::togyz::Rules::KYRGYZ;
    let togyz_games = if kinds.len() > chess_count {
        emulator::togyz_records(DEMO_TOGYZ, togyz_rules)?
    } else {
        Vec::new()
    };
    let (mut chess_seen, mut togyz_seen) = (0, 0);
    let mut boards = Vec::new();
    for &kind in kinds {
        let board = match kind.game() {
            Kind::Chess => {
                let i = chess_seen;
                chess_seen += 1;
                let game = &chess_games[i % chess_games.len()];
                let seed = args.seed + i as u64;
                // A board that reports whole positions after its debounce sees only what the
                // hands hold that long: its hands play at human speed at most (what its tests
                // show exact), and only the thinking is the demo's speed.
                let (speed, think_speed) = if kind.reports_whole_positions() {
                    (args.speed.max(1.0), Some(args.speed))
                } else {
                    (args.speed, None)
                };
                let opts = EmulatorOptions {
                    speed,
                    think_speed,
                    seed,
                    rotated: i % 2 == 1,
                    clock: kind.reports_clock(),
                    time_control: clock.filter(|_| kind.reports_clock()),
                    // A few irregularities (a knocked piece, an illegal move, a press without
                    // a move...), so that the demo shows the arbiter's side too.
                    irregularities: emulator::random_irregularities(seed, game.moves.len(), 0.03),
                    ..EmulatorOptions::default()
                };
                let hands = emulator::script_pgn(game, &opts)?;
                DemoBoard {
                    kind,
                    players: format!(
                        "{} - {}",
                        game.tag("White").unwrap_or("?"),
                        game.tag("Black").unwrap_or("?")
                    ),
                    script: PtyScript::chess_hands(kind, hands)
                        .with_context(|| format!("{kind} boards cannot be emulated"))?,
                }
            }
            Kind::Togyz => {
                let i = togyz_seen;
                togyz_seen += 1;
                let (record, moves) = &togyz_games[i % togyz_games.len()];
                let opts = emulator::TogyzEmulatorOptions {
                    speed: args.speed,
                    // Apart from the chessboards' seeds.
                    seed: args.seed.wrapping_add(1000 + i as u64),
                    time_control: clock,
                    rules: togyz_rules,
                    ..emulator::TogyzEmulatorOptions::default()
                };
                DemoBoard {
                    kind,
                    players: format!(
                        "{} - {}",
                        record.header("White").unwrap_or("?"),
                        record.header("Black").unwrap_or("?")
                    ),
                    script: emulator::script_togyz(moves, &opts)?.into(),
                }
            }
        };
        boards.push(board);
    }
    Ok(boards)
}

/// A demo's boards as `--boards` gives them: `dgt=2,chesslink=1,togyz=1` (each kind and how
/// many, in board order), or a number of DGT chessboards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardMix(pub Vec<BoardKind>);

impl BoardMix {
    /// `chess` DGT chessboards, then `togyz` pit boards: the demo's boards unless `--boards`
    /// mixes vendors.
    pub fn dgt_and_togyz(chess: usize, togyz: usize) -> BoardMix {
        let mut kinds = vec![BoardKind::Dgt; chess];
        kinds.extend(std::iter::repeat_n(BoardKind::Togyz, togyz));
        BoardMix(kinds)
    }
}

impl std::str::FromStr for BoardMix {
    type Err = String;

    fn from_str(s: &str) -> Result<BoardMix, String> {
        if let Ok(chess) = s.trim().parse::<usize>() {
            return Ok(BoardMix::dgt_and_togyz(chess, 0));
        }
        let mut kinds = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, count) = part.split_once('=').unwrap_or((part, "1"));
            let names = || {
                let all: Vec<&str> = BoardKind::ALL.iter().map(|k| k.name()).collect();
                all.join(", ")
            };
            let kind = BoardKind::from_name(name.trim())
                .ok_or_else(|| format!("unknown board kind {name:?}; valid: {}", names()))?;
            if !PtyScript::can_emulate(kind) {
                return Err(format!("{kind} boards cannot be emulated"));
            }
            let count: usize = count
                .trim()
                .parse()
                .map_err(|_| format!("{part:?}: the count after = is not a number"))?;
            kinds.extend(std::iter::repeat_n(kind, count));
        }
        Ok(BoardMix(kinds))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_names_each_kind_and_count_in_board_order() {
        let mix: BoardMix = "dgt=2, chesslink=1,togyz".parse().unwrap();
        use BoardKind::*;
        assert_eq!(mix.0, vec![Dgt, Dgt, ChessLink, Togyz]);
        // A bare number: that many DGT chessboards.
        let chess: BoardMix = "3".parse().unwrap();
        assert_eq!(chess.0, vec![Dgt; 3]);
        assert_eq!(BoardMix::dgt_and_togyz(1, 2).0, vec![Dgt, Togyz, Togyz]);
        let err = "dgt=2,chess=1".parse::<BoardMix>().unwrap_err();
        assert!(
            err.contains("\"chess\"") && err.contains("chesslink"),
            "{err}"
        );
        assert!("dgt=two".parse::<BoardMix>().is_err());
    }
}
