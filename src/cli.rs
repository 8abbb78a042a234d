//! The command line: clap definitions and the dispatch to each command.
//!
//! Flow: `main` parses [`Cli`], sets up tracing and calls [`execute`]; each command is a thin
//! wrapper around library functions. `anyhow` lives here and in `main` only.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand, ValueEnum};

use crate::{
    arbiter::{Laws, LawsSetup},
    config::{self, Config, ConfigError, ConfigOverrides},
    daemon,
    device::{self, discover},
    emulator::{self, EmulatorOptions, PtyOptions},
    export::{self, ExportOptions, Format, SheetOptions, pgn::ClockFormat},
    game::Variant,
    pairings::{self, PairingsFormat},
    store::{Action, Decision, GameId, HistoryEntry, ResultReason, Ruling, Store},
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
    /// Write games from the database to standard output (or --out).
    Export {
        #[arg(long)]
        db: PathBuf,
        #[arg(long, value_enum, default_value_t = ExportFormat::Pgn)]
        format: ExportFormat,
        /// Only this game (required for scoresheet and pdf).
        #[arg(long, required_if_eq_any = [("format", "scoresheet"), ("format", "pdf")])]
        game: Option<i64>,
        /// Scoresheet in figurine SAN (♔♕♖♗♘); the PDF always shows letters.
        #[arg(long)]
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
        file: PathBuf,
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
    /// A virtual DGT board with a clock on a pseudo-terminal, playing a game from a PGN file
    /// (or, with `--variant chess960` and no `--pgn`, a random Chess960 game from `--seed`).
    Emulate {
        #[arg(long, required_unless_present = "variant")]
        pgn: Option<PathBuf>,
        /// chess960 without --pgn: a seeded random Chess960 game (start position and moves).
        #[arg(long, value_enum)]
        variant: Option<Variant>,
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
        /// The board's memory is gone when it is plugged in again (as when a long outage
        /// overran its ring): what was played meanwhile must be found without it.
        #[arg(long)]
        memory_lost_on_unplug: bool,
        /// Keep answering this long after the game, in ms (default: forever).
        #[arg(long)]
        linger_ms: Option<u64>,
    },
}

#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Print a documented example boardscribe.toml.
    Example,
    /// Validate a config file: print a summary, or every mistake with its line and column
    /// (exit code 1).
    Check { file: PathBuf },
}

#[derive(Subcommand, Debug)]
pub enum ArbiterCommand {
    /// Set or change a game's result.
    Result {
        #[command(flatten)]
        who: Who,
        /// 1-0, 0-1, 1/2-1/2, *, +/-, -/+ or -/-.
        #[arg(long, allow_hyphen_values = true)]
        result: String,
        /// resignation, agreement, forfeit, decision, or any other word.
        #[arg(long)]
        reason: String,
        /// The Laws the game was played under (a 2023 resignation where the opponent cannot
        /// mate is a draw: 5.1.2).
        #[arg(long, default_value_t = Laws::default())]
        laws: Laws,
    },
    /// Rule on an irregularity (its number within the game).
    Rule {
        #[command(flatten)]
        who: Who,
        #[arg(long)]
        irregularity: u32,
        #[arg(long, value_enum)]
        ruling: RulingArg,
        /// The penalty applied (with `--ruling penalty`).
        #[arg(long)]
        description: Option<String>,
        /// The ply play went on before (with `--ruling reinstated`).
        #[arg(long)]
        ply: Option<u32>,
    },
    /// Correct a mis-sensed move (UCI or SAN); later moves are replayed after it.
    Correct {
        #[command(flatten)]
        who: Who,
        #[arg(long)]
        ply: u32,
        #[arg(long = "move")]
        mv: String,
    },
    /// Resume a game after ply N (after `thread_lost`, or with that position set up again):
    /// later recorded moves are withdrawn, the given ones (the scoresheets', UCI or SAN; pit
    /// numbers for togyz korgool) recorded after it. For a game a running daemon records, use
    /// `POST /api/admin/games/N/resume`: its board then goes on from the new record at once;
    /// here, the next daemon start does.
    Resume {
        #[command(flatten)]
        who: Who,
        /// The last recorded ply that stands (0: the start).
        #[arg(long)]
        after_ply: u32,
        /// Moves played after it, in order, separated by spaces or commas.
        #[arg(long, default_value = "")]
        moves: String,
    },
    /// Add a note to a game, or after the move at a ply.
    Note {
        #[arg(long)]
        game: i64,
        #[arg(long)]
        ply: Option<u32>,
        #[arg(long)]
        text: String,
        /// Who decided (default: $USER, else "arbiter").
        #[arg(long)]
        author: Option<String>,
    },
    /// Print a game's events, decisions included, in the order recorded.
    History {
        #[arg(long)]
        game: i64,
    },
}

/// The game, the author and the note of a decision.
#[derive(clap::Args, Debug)]
pub struct Who {
    #[arg(long)]
    game: i64,
    /// Who decided (default: $USER, else "arbiter").
    #[arg(long)]
    author: Option<String>,
    #[arg(long)]
    note: Option<String>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RulingArg {
    /// A penalty was applied (`--description` says which).
    Penalty,
    /// The move stands.
    Stands,
    /// The position was reinstated (`--ply` says before which ply).
    Reinstated,
    /// No action.
    None,
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
    /// The same scoresheet as PDF.
    Pdf,
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
        Command::Export {
            db,
            format,
            game,
            figurine,
            out,
            history,
            clk_format,
        } => {
            let store = open_existing(&db)?;
            let format = match format {
                ExportFormat::Pgn => Format::Pgn,
                ExportFormat::Json => Format::Json,
                ExportFormat::Scoresheet => Format::Scoresheet,
                ExportFormat::Pdf => Format::Pdf,
            };
            let options = ExportOptions {
                history,
                clk: clk_format,
            };
            let sheet = SheetOptions {
                figurine,
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
            let rows = pairings::parse(&pairings::decode_text(&bytes), format, round)
                .with_context(|| file.display().to_string())?;
            let mut store =
                Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
            let n = store.import_pairings(round, &rows)?;
            println!("round {round}: {n} boards imported");
            Ok(())
        }
        Command::Config { command } => config_command(command),
        Command::Devices { config, sysfs } => devices(config.as_deref(), &sysfs),
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
        Command::Emulate {
            pgn,
            variant,
            game,
            speed,
            seed,
            rotated,
            link,
            capture_out,
            no_clock,
            unplug_at_ply,
            unplug_for_ms,
            memory_lost_on_unplug,
            linger_ms,
        } => {
            let chosen = match (&pgn, variant) {
                (Some(pgn), _) => {
                    let text = std::fs::read_to_string(pgn)
                        .with_context(|| format!("reading {}", pgn.display()))?;
                    let games = emulator::games_from_pgn(&text)?;
                    let Some(chosen) = game.checked_sub(1).and_then(|i| games.get(i)) else {
                        bail!(
                            "{} has {} game(s); --game {game} is not one of them",
                            pgn.display(),
                            games.len()
                        );
                    };
                    chosen.clone()
                }
                (None, Some(Variant::Chess960)) => {
                    let chosen = emulator::chess960_game(seed);
                    eprintln!(
                        "Chess960, seed {seed}: {} ({} plies)",
                        chosen.tag("FEN").unwrap_or("?"),
                        chosen.moves.len()
                    );
                    chosen
                }
                (None, _) => bail!("say --pgn FILE, or --variant chess960 for a random game"),
            };
            let opts = EmulatorOptions {
                speed,
                seed,
                rotated,
                clock: !no_clock,
                ..EmulatorOptions::default()
            };
            let script = emulator::script_pgn(&chosen, &opts)?;
            let pty = PtyOptions {
                link,
                capture_out,
                unplug_at_ply,
                unplug_for_ms,
                memory_lost_on_unplug,
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

fn config_command(command: ConfigCommand) -> anyhow::Result<()> {
    match command {
        ConfigCommand::Example => {
            print!("{}", config::EXAMPLE);
            Ok(())
        }
        ConfigCommand::Check { file } => {
            match Config::load(Some(&file), ConfigOverrides::default()) {
                Ok(c) => {
                    println!("{}: ok", file.display());
                    print!("{}", c.summary());
                    Ok(())
                }
                Err(ConfigError::Invalid(found)) => {
                    for d in &found {
                        eprintln!("{d}");
                    }
                    bail!("{}: {} error(s)", file.display(), found.len())
                }
                Err(e) => Err(e.into()),
            }
        }
    }
}

fn devices(config: Option<&std::path::Path>, sysfs: &std::path::Path) -> anyhow::Result<()> {
    let (boards, buses) = match config {
        Some(path) => {
            let c = Config::load(Some(path), ConfigOverrides::default())?;
            (c.boards, c.buses)
        }
        None => (Vec::new(), Vec::new()),
    };
    let ports = discover::list_ports(sysfs)?;
    print!("{}", discover::describe(&ports, &boards));
    if !buses.is_empty() {
        // A quick broadcast ping on every configured bus.
        let rt = tokio::runtime::Runtime::new()?;
        let settings = crate::bus::MasterSettings::default();
        for bus in &buses {
            let found = rt.block_on(crate::daemon::bus::ping_bus(bus, sysfs, &settings));
            print!("{}", crate::daemon::bus::describe_bus(bus, &found));
        }
    }
    Ok(())
}

fn open_existing(db: &std::path::Path) -> anyhow::Result<Store> {
    if !db.exists() {
        bail!("{}: no such database", db.display());
    }
    Store::open(db).with_context(|| format!("opening {}", db.display()))
}

/// The author of a decision: the one given, else `$USER`, else "arbiter".
fn author(given: Option<String>) -> String {
    given
        .or_else(|| std::env::var("USER").ok())
        .filter(|a| !a.trim().is_empty())
        .unwrap_or_else(|| "arbiter".to_owned())
}

/// Wall-clock ms since the Unix epoch: the time of a decision, read here at the binary's edge.
fn now_ms() -> anyhow::Result<u64> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .context("the system clock is before 1970")?;
    Ok(u64::try_from(since.as_millis())?)
}

fn arbiter(db: &std::path::Path, command: ArbiterCommand) -> anyhow::Result<()> {
    let mut store = open_existing(db)?;
    let decision = match command {
        ArbiterCommand::Result {
            who,
            result,
            reason,
            laws,
        } => {
            let (decision, changed) = store.declare_result(
                GameId(who.game),
                &result,
                ResultReason::from(reason),
                laws,
                &author(who.author),
                who.note.as_deref(),
                now_ms()?,
            )?;
            if let Some(why) = changed {
                println!("recorded as 1/2-1/2: {why}");
            }
            decision
        }
        ArbiterCommand::Rule {
            who,
            irregularity,
            ruling,
            description,
            ply,
        } => {
            let ruling = match (ruling, description, ply) {
                (RulingArg::Penalty, Some(description), None) => {
                    Ruling::PenaltyApplied { description }
                }
                (RulingArg::Penalty, None, _) => bail!("--ruling penalty needs --description"),
                (RulingArg::Reinstated, None, Some(ply)) => Ruling::PositionReinstated { ply },
                (RulingArg::Reinstated, _, None) => bail!("--ruling reinstated needs --ply"),
                (RulingArg::Stands, None, None) => Ruling::MoveStands,
                (RulingArg::None, None, None) => Ruling::NoAction,
                (r, ..) => bail!("--ruling {r:?} takes no --description or --ply besides its own"),
            };
            store.rule_on_irregularity(
                GameId(who.game),
                irregularity,
                ruling,
                &author(who.author),
                who.note.as_deref(),
                now_ms()?,
            )?
        }
        ArbiterCommand::Correct { who, ply, mv } => store.correct_move(
            GameId(who.game),
            ply,
            &mv,
            &author(who.author),
            who.note.as_deref(),
            now_ms()?,
        )?,
        ArbiterCommand::Resume {
            who,
            after_ply,
            moves,
        } => store.resume_game(
            GameId(who.game),
            after_ply,
            &split_moves(&moves),
            &author(who.author),
            who.note.as_deref(),
            now_ms()?,
        )?,
        ArbiterCommand::Note {
            game,
            ply,
            text,
            author: who,
        } => store.add_note(GameId(game), ply, &text, &author(who), now_ms()?)?,
        ArbiterCommand::History { game } => {
            for entry in store.history(GameId(game))? {
                print_history_entry(&entry);
            }
            return Ok(());
        }
    };
    print_decision(&decision);
    Ok(())
}

/// Moves given as one argument: separated by spaces or commas, move numbers (`12.`, `12...`)
/// dropped (togyz korgool moves are digits without a dot).
fn split_moves(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .map(|t| t.rsplit('.').next().unwrap_or(t))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

fn print_decision(d: &Decision) {
    let what = match &d.action {
        Action::SetResult {
            result,
            reason,
            previous_result,
            ..
        } => format!(
            "result {result} ({}), was {previous_result}",
            reason.as_str()
        ),
        Action::Rule {
            irregularity,
            ruling,
        } => format!("irregularity {irregularity}: {}", ruling.as_str()),
        Action::CorrectMove {
            ply,
            old_notation,
            new_notation,
            retracted,
            ..
        } => {
            format!("ply {ply}: {old_notation} -> {new_notation} ({retracted} move(s) re-recorded)")
        }
        Action::Note { ply: Some(ply) } => format!("note after ply {ply}"),
        Action::Note { ply: None } => "note".to_owned(),
        Action::Resume {
            after_ply,
            moves,
            retracted,
        } => format!(
            "resumed after ply {after_ply}{}{}",
            if moves.is_empty() {
                String::new()
            } else {
                format!(" with {}", moves.join(" "))
            },
            if *retracted > 0 {
                format!(" ({retracted} move(s) withdrawn)")
            } else {
                String::new()
            }
        ),
    };
    println!(
        "decision {} on game {} by {}: {what}",
        d.id, d.game.0, d.author
    );
}

fn print_history_entry(h: &HistoryEntry) {
    let e = &h.event;
    let ply = e.ply.map(|p| format!(" ply {p}")).unwrap_or_default();
    println!("#{} at_ms {} {}{ply} {}", e.id, e.at_ms, e.kind, e.detail);
    if !h.retracted.is_empty() {
        let moves: Vec<String> = h
            .retracted
            .iter()
            .map(|m| format!("{}:{}", m.ply, m.notation))
            .collect();
        println!("    retracted: {}", moves.join(" "));
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

/// `boardscribe import-memory`: the dump is read and interpreted whole before anything is
/// stored; the new games, the raw bytes and an import note per game go in one transaction.
fn import_memory(
    db: &std::path::Path,
    port: Option<&std::path::Path>,
    from: Option<&std::path::Path>,
    number: Option<u32>,
    timeout: u64,
    variant: Variant,
) -> anyhow::Result<()> {
    use crate::{
        device::{Direction, memory},
        game::Kind,
        store::{ImportedGame, RawBuffer},
    };
    let (source, bytes, sent) = match (port, from) {
        (Some(port), _) => {
            let rt = tokio::runtime::Runtime::new()?;
            let wait = std::time::Duration::from_secs(timeout);
            let bytes = rt.block_on(memory::fetch_from_port(port, wait))?;
            (port.display().to_string(), bytes, true)
        }
        (None, Some(file)) => (file.display().to_string(), memory::read_dump(file)?, false),
        (None, None) => bail!("say --port or --from"),
    };
    let log = memory::log_from_bytes(&bytes, &source)?;
    let tokens = memory::parse_log(&log).with_context(|| format!("{source}: board memory"))?;
    let at = now_ms()?;
    let games = memory::games_from_log_in(&tokens, at, variant);

    let mut store = Store::open(db).with_context(|| format!("opening {}", db.display()))?;
    let board = match number {
        Some(n) => match store.board_with_number(n)? {
            Some(id) => id,
            None => {
                let id = store.board(&format!("board {n}"), Kind::Chess)?;
                store.set_board_number(id, n)?;
                id
            }
        },
        None => store.board(&format!("memory {source}"), Kind::Chess)?,
    };
    let known = store.imported_digests(board)?;
    let total = games.len();
    let new: Vec<ImportedGame> = games
        .iter()
        .enumerate()
        // A start position set up with no move yet is no game to store (it may be one later).
        .filter(|(_, g)| !g.moves.is_empty() && !known.contains(&g.digest))
        .map(|(i, g)| ImportedGame {
            events: g.events.clone(),
            digest: g.digest,
            detail: format!(
                "game {} of {total} in the dump, tokens {}..{}, {} plies",
                i + 1,
                g.tokens.start,
                g.tokens.end,
                g.moves.len()
            ),
        })
        .collect();
    if new.is_empty() {
        println!(
            "{source}: {total} game(s) in the board memory, none new (imported before, or \
             no move yet); nothing added"
        );
        return Ok(());
    }
    let mut raw = RawBuffer::new();
    if sent {
        raw.push(
            at,
            Direction::ToBoard,
            &[crate::protocol::dgt::cmd::SEND_EE_MOVES],
        );
    }
    raw.push(at, Direction::FromBoard, &bytes);
    let block = raw.take();
    let written = store.import_games(board, block.as_ref(), &new, &author(None), at)?;
    println!(
        "{source}: {total} game(s) in the board memory, {} new: games {:?}",
        written.len(),
        written.iter().map(|g| g.0).collect::<Vec<_>>()
    );
    Ok(())
}
