//! `boardscribe emulate`: one emulated board on a pseudo-terminal, a DGT chessboard (`--kind
//! dgt`, the default), a TGZ-1 togyz korgool pit board (`--kind togyz`) or another vendor's
//! chessboard (`--kind chesslink`, `--kind chessnut`, `--kind certabo`: the DGT board's hands
//! on that board, without a clock if it has none; a Chessnut board is on USB HID, and a Unix
//! socket at `--link` stands in for its hidraw node), playing a record from a file or a seeded random
//! game, with its clock set to the event's time control.
//!
//! Flow: the arguments ([`EmulateArgs`]) give the game (read and chosen, or drawn from the
//! seed), the clock ([`clock_setting`]: `--time-control`, else the config's `[tournament]`,
//! else the emulator's default) and the pty's options; the script is made by the emulator crate
//! and played until it is done or the process is told to stop.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::{
    arbiter::TimeControl,
    config::{Config, ConfigOverrides},
    emulator::{self, EmulatorOptions, PtyOptions, PtyScript, TogyzEmulatorOptions},
    game::{Kind, Variant, togyz::Rules},
    kind::BoardKind,
};

/// `boardscribe emulate`.
#[derive(clap::Args, Debug, Clone)]
pub struct EmulateArgs {
    /// The kind of board: dgt (with a clock unless --no-clock), togyz (a TGZ-1 pit board with
    /// its clock), chesslink (a Millennium board: no clock), chessnut (a Chessnut board on USB
    /// HID: no clock; a socket at --link stands in for its hidraw node), certabo (an RFID board
    /// streaming its chips, calibrated at the start with extra queens on d3 and d6: no clock).
    #[arg(long, value_enum, default_value_t = BoardKind::Dgt)]
    pub kind: BoardKind,
    /// The game record: PGN for chess, the corpus's PGN-like text for togyz korgool. Without
    /// it, a seeded random game (`--seed`): togyz korgool, or chess with `--variant chess960`.
    #[arg(long)]
    pub pgn: Option<PathBuf>,
    /// chess960 without --pgn: a seeded random Chess960 game (start position and moves).
    #[arg(long, value_enum)]
    pub variant: Option<Variant>,
    /// Which game of the file (1-based).
    #[arg(long, default_value_t = 1)]
    pub game: usize,
    /// Time multiplier for every human duration (0.3: blitz hands, 3: slow hands).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The clocks' time control, e.g. 90+30 or 3+2: both clocks start at its first period's
    /// time, with its increment (default: the config's `[tournament] time_control`, else 15+10
    /// for chess and 25+10 for togyz korgool).
    #[arg(long)]
    pub time_control: Option<TimeControl>,
    /// The venue configuration: the clocks start at its `[tournament] time_control`.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The board is set up turned round (black at the connector side).
    #[arg(long)]
    pub rotated: bool,
    /// Make (or replace) a symlink to the pseudo-terminal here (chessnut: the socket itself).
    #[arg(long)]
    pub link: Option<PathBuf>,
    /// Also write every byte both ways to this capture file.
    #[arg(long)]
    pub capture_out: Option<PathBuf>,
    /// No clock connected.
    #[arg(long)]
    pub no_clock: bool,
    /// White's clock is the right-hand one, seen from the board's front (Black chose that side
    /// for the clock, Article 6.4): a DGT chessboard's clock only.
    #[arg(long)]
    pub white_clock_right: bool,
    /// Close the pseudo-terminal during this ply (1-based) and open a new one.
    #[arg(long)]
    pub unplug_at_ply: Option<u32>,
    /// How long the board stays unplugged, in ms.
    #[arg(long, default_value_t = 2000)]
    pub unplug_for_ms: u64,
    /// The board's memory is gone when it is plugged in again (as when a long outage
    /// overran its ring): what was played meanwhile must be found without it.
    #[arg(long)]
    pub memory_lost_on_unplug: bool,
    /// A Certabo board calibrated before (--kind certabo): it opens with the game's board, not
    /// with the calibration setup, and its capture says the calibration.
    #[arg(long)]
    pub calibrated: bool,
    /// Keep answering this long after the game, in ms (default: forever).
    #[arg(long)]
    pub linger_ms: Option<u64>,
}

/// `boardscribe emulate`: the board plays until its game is done (and its linger), or the
/// process is told to stop.
pub fn emulate(args: EmulateArgs) -> anyhow::Result<()> {
    let clock = clock_setting(args.time_control.as_ref(), args.config.as_deref())?;
    let script = match args.kind.game() {
        Kind::Togyz if args.white_clock_right => {
            bail!("--white-clock-right is for a DGT chessboard's clock, not a togyz korgool board")
        }
        Kind::Togyz => PtyScript::Togyz(togyz_script(&args, clock)?),
        // A DGT board's hands, on a board of the kind asked for (without a clock, if the kind
        // has none).
        Kind::Chess => {
            if args.white_clock_right && (args.no_clock || !args.kind.reports_clock()) {
                bail!(
                    "--white-clock-right needs a clock: {} without --no-clock",
                    BoardKind::Dgt
                );
            }
            let hands = if args.kind.reports_clock() {
                chess_script(&args, clock)?
            } else {
                let no_clock = EmulateArgs {
                    no_clock: true,
                    ..args.clone()
                };
                chess_script(&no_clock, None)?
            };
            let kind = args.kind;
            if args.calibrated {
                PtyScript::chess_hands_learnt(kind, hands).with_context(|| {
                    format!("--calibrated is for boards that learn (a certabo), not {kind}")
                })?
            } else {
                PtyScript::chess_hands(kind, hands)
                    .with_context(|| format!("{kind} boards cannot be emulated"))?
            }
        }
    };
    let pty = PtyOptions {
        link: args.link,
        capture_out: args.capture_out,
        unplug_at_ply: args.unplug_at_ply,
        unplug_for_ms: args.unplug_for_ms,
        memory_lost_on_unplug: args.memory_lost_on_unplug,
        linger_ms: args.linger_ms,
        print_path: true,
        ..PtyOptions::default()
    };
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(super::emulate_until_stopped(&script, &pty))
}

/// The emulated clock's base and increment in ms: `--time-control`, else the config's
/// `[tournament] time_control`, else `None` (the emulator's default for the kind).
pub fn clock_setting(
    time_control: Option<&TimeControl>,
    config: Option<&Path>,
) -> anyhow::Result<Option<(u64, u64)>> {
    if let Some(tc) = time_control {
        return Ok(Some(emulator::clock_for(tc)));
    }
    let Some(path) = config else {
        return Ok(None);
    };
    let config = Config::load(Some(path), ConfigOverrides::default())?;
    Ok(config
        .tournament
        .time_control
        .as_ref()
        .map(emulator::clock_for))
}

/// The chess game asked for, as a DGT board's script.
fn chess_script(
    args: &EmulateArgs,
    clock: Option<(u64, u64)>,
) -> anyhow::Result<emulator::BoardScript> {
    let chosen = match (&args.pgn, args.variant) {
        (Some(pgn), _) => {
            let text = read(pgn)?;
            let games = emulator::games_from_pgn(&text)?;
            chosen(pgn, &games, args.game)?.clone()
        }
        (None, Some(Variant::Chess960)) => {
            let chosen = emulator::chess960_game(args.seed);
            eprintln!(
                "Chess960, seed {}: {} ({} plies)",
                args.seed,
                chosen.tag("FEN").unwrap_or("?"),
                chosen.moves.len()
            );
            chosen
        }
        (None, _) => bail!(
            "say --pgn FILE, or --variant chess960 for a random game (or --kind togyz for a \
             random togyz korgool game)"
        ),
    };
    let opts = EmulatorOptions {
        speed: args.speed,
        seed: args.seed,
        rotated: args.rotated,
        clock: !args.no_clock,
        white_clock_right: args.white_clock_right,
        time_control: clock,
        ..EmulatorOptions::default()
    };
    Ok(emulator::script_pgn(&chosen, &opts)?)
}

/// The togyz korgool game asked for (a record of the file, or a seeded random game), as a
/// TGZ-1 pit board's script.
fn togyz_script(
    args: &EmulateArgs,
    clock: Option<(u64, u64)>,
) -> anyhow::Result<emulator::TogyzScript> {
    if let Some(variant) = args.variant {
        bail!("--variant {variant} is a chess variant: --kind togyz plays togyz korgool");
    }
    let rules = Rules::KYRGYZ;
    let moves = match &args.pgn {
        Some(pgn) => {
            let text = read(pgn)?;
            let records = emulator::togyz_records(&text, rules)
                .with_context(|| format!("reading {}", pgn.display()))?;
            let (record, moves) = chosen(pgn, &records, args.game)?;
            eprintln!(
                "togyz korgool, {} game {}: {} - {} ({} plies)",
                pgn.display(),
                args.game,
                record.header("White").unwrap_or("?"),
                record.header("Black").unwrap_or("?"),
                moves.len()
            );
            moves.clone()
        }
        None => {
            let moves = emulator::random_togyz_game(args.seed, rules);
            eprintln!(
                "togyz korgool, a random game from seed {} ({} plies)",
                args.seed,
                moves.len()
            );
            moves
        }
    };
    let opts = TogyzEmulatorOptions {
        speed: args.speed,
        seed: args.seed,
        rotated: args.rotated,
        clock: !args.no_clock,
        time_control: clock,
        rules,
        ..TogyzEmulatorOptions::default()
    };
    Ok(emulator::script_togyz(&moves, &opts)?)
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// Game `n` (1-based) of the games read from `file`.
fn chosen<'a, T>(file: &Path, games: &'a [T], n: usize) -> anyhow::Result<&'a T> {
    match n.checked_sub(1).and_then(|i| games.get(i)) {
        Some(game) => Ok(game),
        None => bail!(
            "{} has {} game(s); --game {n} is not one of them",
            file.display(),
            games.len()
        ),
    }
}
