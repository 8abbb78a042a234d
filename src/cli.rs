//! The command line: clap definitions and the dispatch to each command.
//!
//! Flow: `main` parses [`Cli`], sets up tracing and calls [`execute`]; each command is a thin
//! wrapper around library functions. `anyhow` lives here and in `main` only.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};

use crate::{
    arbiter::LawsSetup,
    daemon, device,
    emulator::{self, EmulatorOptions, PtyOptions},
    export::{self, Format},
    store::{GameId, Store},
    tracker::TrackerEvent,
};

#[derive(Parser, Debug)]
#[command(
    name = "boardscribe",
    version,
    about = "Electronic game boards in, tournament records out"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Record live boards (the daemon).
    Run(daemon::RunArgs),
    /// Emulated boards play real games into a temporary database.
    Demo(daemon::DemoArgs),
    /// Feed captures through the same pipeline as `run`, with their timestamps as the clock.
    Replay {
        /// Capture files (capture v1).
        #[arg(required = true)]
        captures: Vec<PathBuf>,
        /// The database to write.
        #[arg(long)]
        db: PathBuf,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
        #[command(flatten)]
        laws: daemon::LawsArgs,
    },
    /// Write games from the database to standard output.
    Export {
        #[arg(long)]
        db: PathBuf,
        #[arg(long, value_enum, default_value_t = ExportFormat::Pgn)]
        format: ExportFormat,
        /// Only this game.
        #[arg(long)]
        game: Option<i64>,
    },
    /// Write a capture of a real board's stream, both directions.
    Record(device::record::RecordArgs),
    /// A virtual DGT board with a clock on a pseudo-terminal, playing a game from a PGN file.
    Emulate {
        #[arg(long)]
        pgn: PathBuf,
        /// Which game of the file (1-based).
        #[arg(long, default_value_t = 1)]
        game: usize,
        /// Time multiplier for every human duration (0.3: blitz hands, 3: slow hands).
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// The board is set up turned round (black at the connector side).
        #[arg(long)]
        rotated: bool,
        /// Make (or replace) a symlink to the pseudo-terminal here.
        #[arg(long)]
        link: Option<PathBuf>,
        /// Also write every byte both ways to this capture file.
        #[arg(long)]
        capture_out: Option<PathBuf>,
        /// No clock connected.
        #[arg(long)]
        no_clock: bool,
        /// Close the pseudo-terminal during this ply (1-based) and open a new one.
        #[arg(long)]
        unplug_at_ply: Option<u32>,
        /// How long the board stays unplugged, in ms.
        #[arg(long, default_value_t = 2000)]
        unplug_for_ms: u64,
        /// Keep answering this long after the game, in ms (default: forever).
        #[arg(long)]
        linger_ms: Option<u64>,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ExportFormat {
    Pgn,
    Json,
}

/// Runs one command.
pub fn execute(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(args) => daemon::run(args),
        Command::Demo(args) => daemon::demo(args),
        Command::Replay {
            captures,
            db,
            quiet,
            laws,
        } => replay(&captures, &db, quiet, &laws.setup()),
        Command::Export { db, format, game } => {
            if !db.exists() {
                bail!("{}: no such database", db.display());
            }
            let store = Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
            let format = match format {
                ExportFormat::Pgn => Format::Pgn,
                ExportFormat::Json => Format::Json,
            };
            let text = export::export(&store, format, game.map(GameId))?;
            print!("{text}");
            Ok(())
        }
        Command::Record(args) => device::record::record(args),
        Command::Emulate {
            pgn,
            game,
            speed,
            seed,
            rotated,
            link,
            capture_out,
            no_clock,
            unplug_at_ply,
            unplug_for_ms,
            linger_ms,
        } => {
            let text = std::fs::read_to_string(&pgn)
                .with_context(|| format!("reading {}", pgn.display()))?;
            let games = emulator::games_from_pgn(&text)?;
            let Some(chosen) = game.checked_sub(1).and_then(|i| games.get(i)) else {
                bail!(
                    "{} has {} game(s); --game {game} is not one of them",
                    pgn.display(),
                    games.len()
                );
            };
            let opts = EmulatorOptions {
                speed,
                seed,
                rotated,
                clock: !no_clock,
                ..EmulatorOptions::default()
            };
            let script = emulator::script_pgn(chosen, &opts)?;
            let pty = PtyOptions {
                link,
                capture_out,
                unplug_at_ply,
                unplug_for_ms,
                linger_ms,
                print_path: true,
                ..PtyOptions::default()
            };
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(emulator::run_pty(&script, &pty, None))?;
            Ok(())
        }
    }
}

fn replay(
    captures: &[PathBuf],
    db: &std::path::Path,
    quiet: bool,
    laws: &LawsSetup,
) -> anyhow::Result<()> {
    let mut store = Store::open(db).with_context(|| format!("opening {}", db.display()))?;
    for path in captures {
        let mut print = |board: &str, event: &TrackerEvent| {
            if !quiet {
                daemon::print_event(board, event);
            }
        };
        let summary = device::replay::replay_file_with(&mut store, path, laws, &mut print)?;
        if !quiet {
            println!(
                "{}: {} frames, {} moves, {} decode warnings, games {:?}",
                path.display(),
                summary.stats.frames,
                summary.stats.moves,
                summary.stats.decode_warnings,
                summary.games.iter().map(|g| g.0).collect::<Vec<_>>()
            );
        }
    }
    Ok(())
}
