//! The command line: clap definitions and the dispatch to each command.
//!
//! Flow: `main` parses [`Cli`], sets up tracing and calls [`execute`]; each command is a thin
//! wrapper around library functions; the daemon's arguments ([`args`]) become the plain options
//! it takes.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};

use crate::{
    arbiter::LawsSetup,
    config::{self, Config, ConfigError, ConfigOverrides, FileChecks},
    daemon,
    device::{self, discover, probe},
    emulator::{PtyOptions, PtyScript},
    export::{self, ExportOptions, Format, Notation, SheetOptions, pgn::ClockFormat},
    game::Variant,
    kind::BoardKind,
    pairings::{self, PairingsFormat},
    store::{GameId, Store},
    tracker::TrackerEvent,
};

mod arbiter;
pub mod args;
mod calibrate;
mod commands;
pub mod emulate;
pub mod logging;
mod round;

pub use args::{AdminArgs, DemoArgs, LawsArgs, RunArgs};
pub use emulate::EmulateArgs;

use arbiter::arbiter;
pub use arbiter::{ArbiterCommand, RulingArg, Who};
use commands::{config_command, devices, import_memory, open_to_read, replay};
use round::round_command;

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
    Run(RunArgs),
    /// Emulated boards play real games into a temporary database.
    Demo(DemoArgs),
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
        laws: LawsArgs,
    },
    /// Write games from the database to standard output (or --out).
    Export {
        #[arg(long)]
        db: PathBuf,
        #[arg(long, value_enum, default_value_t = ExportFormat::Pgn)]
        format: ExportFormat,
        /// Only this game (for scoresheet and pdf: this game or --round).
        #[arg(long)]
        game: Option<i64>,
        /// Only the games of this round: every game that began in it, by board (pgn and json);
        /// with scoresheet or pdf, one file with a sheet per board of the round, in board order.
        #[arg(long, conflicts_with = "game")]
        round: Option<u32>,
        /// How the scoresheet (HTML or PDF) writes the pieces: san (K Q R B N), figurine
        /// (♔♕♖♗♘) or local (the sheet language's letters, e.g. Кр Ф Л С К; figurines where its
        /// Laws text gives none). Default: the event's `[tournament] notation`, else san. PGN and
        /// JSON stay English SAN.
        #[arg(long, value_enum)]
        notation: Option<Notation>,
        /// The same as --notation figurine.
        #[arg(long, conflicts_with = "notation")]
        figurine: bool,
        /// Write to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also show what was retracted and every event (PGN comments; a JSON `history` array).
        #[arg(long)]
        history: bool,
        /// How PGN writes `[%clk]`: h:mm:ss (the default) or hh:mm:ss (as DGT LiveChess).
        #[arg(long, value_enum, default_value = "h:mm:ss")]
        clk_format: ClockFormat,
        /// The scoresheet's language: en, ru, uk, mn, ky, kk or fa (default: the event's
        /// `[tournament] language`, else en). PGN and JSON stay English SAN.
        #[arg(long)]
        lang: Option<crate::lang::Lang>,
    },
    /// Arbiter decisions: results, rulings, corrected moves and notes (each kept with its time
    /// and author; nothing recorded is overwritten).
    Arbiter {
        #[arg(long)]
        db: PathBuf,
        #[command(subcommand)]
        command: ArbiterCommand,
    },
    /// Import a round's pairings (FIDE TRF or CSV with a header); replaces the round's earlier ones.
    Pairings {
        /// The database (created if missing).
        #[arg(long)]
        db: PathBuf,
        /// The round (1-based); picks the round's columns of a TRF file.
        #[arg(long)]
        round: u32,
        /// trf or csv; default: from the file's extension (.trf/.trfx/.txt, .csv).
        #[arg(long, value_enum)]
        format: Option<PairingsFormatArg>,
        /// Who imported them, for the decisions log (default: $USER, else "arbiter"); `--by` is
        /// the same, as for `round start`.
        #[arg(long, visible_alias = "by")]
        author: Option<String>,
        file: PathBuf,
    },
    /// The event's rounds: start the next one (a running daemon needs no restart: games that
    /// begin from now on are its games), or list them.
    Round {
        #[command(subcommand)]
        command: RoundCommand,
    },
    /// The event node of an event played in several halls: follows every hall's records
    /// through NATS JetStream (`[cluster] url` and `halls`) into its own database and serves
    /// the whole event's relay (round PGN, the live page, folders, Lichess, the delay).
    Event {
        /// The event node's configuration: `[cluster]`, `database`, `[http]`, `[relay]`.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// The event node's database (default: the config's).
        #[arg(long)]
        db: Option<PathBuf>,
        /// Serve the relay on this address (default: the config's `[http]`).
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Delay every public output by this much: `15m`, `90s`, `0` (default: the config's).
        #[arg(long, value_name = "DELAY", value_parser = crate::export::publish::parse_delay)]
        delay: Option<u64>,
    },
    /// An event played in several halls: what the operator does beside the halls and the event
    /// node.
    Cluster {
        #[command(subcommand)]
        command: ClusterCommand,
    },
    /// Serve a database read-only, with no boards (a finished event): the live page with each
    /// board's latest game, /round.pgn, /rounds/N.pgn, /games/ID.pgn, /api/boards.
    /// Pointed at a database still being written (a `run` beside it), give the broadcast's
    /// delay: `--delay`, or `--config` with the venue's `[relay]`.
    Serve {
        #[arg(long)]
        db: PathBuf,
        /// The address to serve on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        http: std::net::SocketAddr,
        /// Delay every public output by this much: `15m`, `90s`, `0` (default: the config's
        /// `[relay] delay`, else none).
        #[arg(long, value_name = "DELAY", value_parser = crate::export::publish::parse_delay)]
        delay: Option<u64>,
        /// The venue configuration: its `[relay]` (delay, public comments, clock format).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// The venue configuration file: print an example, or check one.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// List serial ports: USB IDs, serial number, product string, what they look like, and
    /// which configured board each one is.
    Devices {
        /// The venue configuration, to say which board each port is.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Ask every USB serial port that neither looks like a known board nor is configured
        /// which kind of board is behind it (each kind's question, with its line settings):
        /// how boards on generic USB serial chips (Millennium ChessLink) are found. It writes
        /// to those ports: leave it off where other serial devices are plugged in.
        #[arg(long)]
        probe: bool,
        /// Ask this port too (a Bluetooth serial port, a pseudo-terminal); repeatable.
        #[arg(long, value_name = "PATH")]
        probe_port: Vec<PathBuf>,
        /// The sysfs root to read.
        #[arg(long, default_value = "/sys", hide = true)]
        sysfs: PathBuf,
    },
    /// Write a capture of a real board's stream, both directions.
    Record(device::record::RecordArgs),
    /// Read the games a DGT board kept in its own memory (EE_MOVES) into the database, for
    /// boards that recorded while no PC was listening. A game already imported is not stored
    /// again.
    ImportMemory {
        /// The database (created if missing).
        #[arg(long)]
        db: PathBuf,
        /// Ask the board on this serial port (DGT_SEND_EE_MOVES; about 8 s for a full memory).
        #[arg(long, required_unless_present = "from", conflicts_with = "from")]
        port: Option<PathBuf>,
        /// Read the board's reply from a file: the raw bytes, or a capture v1 file.
        #[arg(long)]
        from: Option<PathBuf>,
        /// The board's number in the hall (default: a board named after the port or file).
        #[arg(long)]
        board: Option<u32>,
        /// How long to wait for the board's reply, in seconds.
        #[arg(long, default_value_t = 30)]
        timeout: u64,
        /// standard or chess960: which start positions begin a game in the memory.
        #[arg(long, value_enum, default_value_t = Variant::Standard)]
        variant: Variant,
    },
    /// A virtual board with a clock on a pseudo-terminal: a DGT chessboard playing a game from a
    /// PGN file (or, with `--variant chess960` and no `--pgn`, a random Chess960 game from
    /// `--seed`), or with `--kind togyz` a togyz korgool pit board (TGZ-1) playing a record
    /// from a file (or a random togyz game from `--seed`). The clocks start at the time
    /// control (`--time-control`, or `--config`'s `[tournament]`).
    Emulate(EmulateArgs),
    /// Ask the running daemon to calibrate a board again (a Certabo board: from the next start
    /// position it shows, with the extra queens on d3 and d6), through its admin API.
    Calibrate {
        /// The board's name, as the daemon records it.
        board: String,
        /// The daemon's HTTP address.
        #[arg(long, default_value = "127.0.0.1:8080")]
        http: std::net::SocketAddr,
        /// A file holding the admin API's bearer token.
        #[arg(long)]
        token_file: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum RoundCommand {
    /// Make round N the current one.
    Start {
        round: u32,
        #[arg(long)]
        db: PathBuf,
        /// Who started it (default: $USER, else "arbiter"); `--by` is the same, as before.
        #[arg(long, visible_alias = "by")]
        author: Option<String>,
    },
    /// Undo the start of round N, the latest round start (started by mistake): the round before
    /// it is current again. Refused once a game has begun in it. Both stay in the round log.
    Undo {
        round: u32,
        #[arg(long)]
        db: PathBuf,
        /// Who undid it (default: $USER, else "arbiter").
        #[arg(long, visible_alias = "by")]
        author: Option<String>,
    },
    /// The event and its rounds: when each was started and by whom, its games and pairings.
    List {
        #[arg(long)]
        db: PathBuf,
        /// JSON for machines.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum ClusterCommand {
    /// Publish a replaced hall's old database again under a new hall name (its PC died, its
    /// disk was swapped, its stream was lost): the event node adds what it never got and maps
    /// the rest onto the games it holds, no game twice. Exits once the broker has every record.
    Republish {
        /// The old hall database (read, never written).
        #[arg(long)]
        db: PathBuf,
        /// The new hall name (not the database's own; add it to the event node's halls).
        #[arg(long)]
        hall: String,
        /// A file with the `[cluster]` table: the event node's or a hall's.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Print a documented example boardscribe.toml.
    Example,
    /// Validate config files: print a summary of each, or every mistake with its line and
    /// column (exit code 1). Given the event node's file and the halls' files together, also
    /// a board number two halls both use, and a hall the event node does not follow. The
    /// `[cluster]` TLS and credentials files are read too: unreadable, not parsing, expired.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PairingsFormatArg {
    Trf,
    Csv,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ExportFormat {
    Pgn,
    Json,
    /// A print-ready A4 HTML scoresheet of one game.
    Scoresheet,
    /// The same scoresheet as PDF (fonts embedded: any script), of one game or of a round.
    Pdf,
    /// The event's results as a FIDE TRF-16 file, every round's opponents, colours and results
    /// (Swiss-Manager, JaVaFo and bbpPairings read it).
    Trf,
}

/// Runs one command.
pub fn execute(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(args) => daemon::run(args.options()),
        Command::Demo(args) => daemon::demo(args.options()),
        Command::Replay {
            captures,
            db,
            quiet,
            laws,
        } => replay(&captures, &db, quiet, &laws.flags().setup()),
        Command::Export {
            db,
            format,
            game,
            round,
            notation,
            figurine,
            out,
            history,
            clk_format,
            lang,
        } => {
            let store = open_to_read(&db)?;
            let event = store.event()?.map(|e| e.settings);
            let lang = match lang {
                Some(l) => l,
                None => event
                    .as_ref()
                    .and_then(|e| e.language.as_deref())
                    .and_then(|l| l.parse().ok())
                    .unwrap_or_default(),
            };
            let notation = match (notation, figurine) {
                (Some(n), _) => n,
                (None, true) => Notation::Figurine,
                (None, false) => Notation::of_event(event.as_ref()),
            };
            let format = match format {
                ExportFormat::Pgn => Format::Pgn,
                ExportFormat::Json => Format::Json,
                ExportFormat::Scoresheet => Format::Scoresheet,
                ExportFormat::Pdf => Format::Pdf,
                ExportFormat::Trf => Format::Trf,
            };
            let options = ExportOptions {
                history,
                clk: clk_format,
                round,
            };
            if matches!(format, Format::Scoresheet | Format::Pdf)
                && let Some(reason) = notation.local_falls_back(lang)
            {
                eprintln!(
                    "note: notation local: {}'s {reason}; the sheet prints figurines",
                    lang.english_name()
                );
            }
            let sheet = SheetOptions {
                notation,
                lang,
                ..SheetOptions::default()
            };
            let bytes = export::export_bytes(&store, format, game.map(GameId), options, &sheet)?;
            match out {
                Some(path) => std::fs::write(&path, &bytes)
                    .with_context(|| format!("writing {}", path.display()))?,
                None => {
                    use std::io::Write as _;
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(&bytes)?;
                    stdout.flush()?;
                }
            }
            Ok(())
        }
        Command::Arbiter { db, command } => arbiter(&db, command),
        Command::Pairings {
            db,
            round,
            format,
            author,
            file,
        } => {
            let format = match format {
                Some(PairingsFormatArg::Trf) => PairingsFormat::Trf,
                Some(PairingsFormatArg::Csv) => PairingsFormat::Csv,
                None => PairingsFormat::from_path(&file).with_context(|| {
                    format!(
                        "{}: say --format trf or --format csv (the extension does not tell)",
                        file.display()
                    )
                })?,
            };
            let bytes =
                std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let decoded = pairings::decode(&bytes).with_context(|| file.display().to_string())?;
            // Said when it was not UTF-8, so that a misread file shows where it came from.
            let read_as = match decoded.encoding {
                pairings::Encoding::Utf8 => String::new(),
                other => format!(" (read as {other})"),
            };
            let rows = pairings::parse(&decoded.text, format, round)
                .with_context(|| format!("{}{read_as}", file.display()))?;
            let mut store =
                Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
            let byes = pairings::parse_byes(&decoded.text, format, round)
                .with_context(|| format!("{}{read_as}", file.display()))?;
            let n = store.import_round_by(
                round,
                &rows,
                &byes,
                &commands::author(author),
                commands::now_ms()?,
            )?;
            println!("round {round}: {n} boards imported{read_as}");
            Ok(())
        }
        Command::Round { command } => round_command(command),
        Command::Serve {
            db,
            http,
            delay,
            config,
        } => {
            let mut publication = match &config {
                Some(path) => Config::load(Some(path), ConfigOverrides::default())?
                    .relay
                    .publication(),
                None => crate::export::publish::Publication::default(),
            };
            if let Some(ms) = delay {
                publication.delay_ms = ms;
            }
            daemon::serve(&db, http, publication)
        }
        Command::Event {
            config,
            db,
            http,
            delay,
        } => crate::cluster::event::event(crate::cluster::event::EventOptions {
            config,
            overrides: ConfigOverrides {
                database: db,
                http,
                ports: Vec::new(),
                port_kind: crate::kind::BoardKind::Dgt,
                delay_ms: delay,
            },
        }),
        Command::Cluster {
            command: ClusterCommand::Republish { db, hall, config },
        } => crate::cluster::republish::republish(crate::cluster::republish::RepublishOptions {
            db,
            hall,
            config,
        }),
        Command::Config { command } => config_command(command),
        Command::Devices {
            config,
            probe,
            probe_port,
            sysfs,
        } => devices(config.as_deref(), &sysfs, probe, &probe_port),
        Command::Record(args) => device::record::record(args),
        Command::ImportMemory {
            db,
            port,
            from,
            board,
            timeout,
            variant,
        } => import_memory(
            &db,
            port.as_deref(),
            from.as_deref(),
            board,
            timeout,
            variant,
        ),
        Command::Emulate(args) => emulate::emulate(args),
        Command::Calibrate {
            board,
            http,
            token_file,
        } => calibrate::calibrate(&board, http, &token_file),
    }
}

/// Plays `script` on a pty until it is done, or the process is told to stop (SIGTERM, SIGINT,
/// SIGHUP): then the board's link goes with it, as a device node goes with its device, so that
/// no host follows it later to a pty another board has been given since.
async fn emulate_until_stopped(script: &PtyScript, pty: &PtyOptions) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut hup = signal(SignalKind::hangup())?;
    tokio::select! {
        played = script.run(pty, None) => Ok(played?),
        _ = tokio::signal::ctrl_c() => stopped(pty),
        _ = term.recv() => stopped(pty),
        _ = hup.recv() => stopped(pty),
    }
}

/// The emulated board was told to stop: its link is removed.
fn stopped(pty: &PtyOptions) -> anyhow::Result<()> {
    if let Some(link) = &pty.link
        && std::fs::symlink_metadata(link).is_ok_and(|m| m.file_type().is_symlink())
    {
        std::fs::remove_file(link).with_context(|| format!("removing {}", link.display()))?;
    }
    Ok(())
}
