//! The arguments of the daemon's commands (`run`, `demo`) and the Laws flags they share with
//! `replay`, as clap reads them. Flow: clap fills these; [`RunArgs::options`],
//! [`DemoArgs::options`] and [`LawsArgs::flags`] turn them into the plain values the daemon
//! takes ([`RunOptions`], [`DemoOptions`], [`LawsFlags`]), so the daemon knows nothing of the
//! command line.

use std::{net::SocketAddr, path::PathBuf};

use crate::{
    arbiter::{Federation, Laws, Supervision, TimeControl},
    config::{ConfigOverrides, LawsFlags},
    daemon::{BoardMix, DemoOptions, RunOptions},
    game::Variant,
};

/// The Laws the games are played under (shared by `run`, `demo` and `replay`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LawsArgs {
    /// Edition of the FIDE Laws: fide-2001, fide-2009, fide-2014, fide-2018 or fide-2023
    /// (default: the config's, else fide-2023).
    #[arg(long)]
    pub laws: Option<Laws>,
    /// The time control, e.g. 90+30, 40/90+30:30+30, 15+10, 3+2 (minutes + seconds per move;
    /// `N/` a move quota; `dS` a delay). Article 8.4 and the rapid/blitz rules need it.
    #[arg(long)]
    pub time_control: Option<TimeControl>,
    /// Rapid and blitz: full or reduced supervision (the appendices' two sets of rules; default:
    /// the config's, else full).
    #[arg(long, value_enum)]
    pub supervision: Option<Supervision>,
    /// Whose rules: fide (the edition's), or uscf (the US Chess preset over the edition: no
    /// loss ladder, 14E, the director declares fivefold and 75 moves, US Chess categories).
    #[arg(long, value_enum)]
    pub federation: Option<Federation>,
    /// standard or chess960 (any of the 960 start positions begins a game; default: the
    /// config's, else standard).
    #[arg(long, value_enum)]
    pub variant: Option<Variant>,
}

impl LawsArgs {
    /// The flags as values.
    pub fn flags(&self) -> LawsFlags {
        LawsFlags {
            laws: self.laws,
            time_control: self.time_control.clone(),
            supervision: self.supervision,
            federation: self.federation,
            variant: self.variant,
        }
    }
}

/// `boardscribe run`.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// The venue configuration (`boardscribe config example` prints one); flags given win over it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The database (created if missing; default: the config's, else boardscribe.db).
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Serial ports of boards (repeat for several boards), numbered 1, 2, … in order;
    /// replaces the config's boards.
    #[arg(long = "port", value_name = "DEVICE")]
    pub ports: Vec<PathBuf>,
    /// The kind of the boards given with --port.
    #[arg(long, value_enum, default_value_t = crate::kind::BoardKind::Dgt, requires = "ports")]
    pub kind: crate::kind::BoardKind,
    /// Print every move as it is recorded.
    #[arg(long)]
    pub print_moves: bool,
    /// Serve the relay (round PGN, live state, live page, admin API, /metrics) on this address,
    /// e.g. 127.0.0.1:8080 (default: the config's `[http]`, else no server).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Delay every public output (round and game PGN, the public page and events, folders, the
    /// Lichess push) by this much: `15m`, `90s`, `0` (default: the config's `[relay] delay`).
    #[arg(long, value_name = "DELAY", value_parser = crate::export::publish::parse_delay)]
    pub delay: Option<u64>,
    #[command(flatten)]
    pub admin: AdminArgs,
    #[command(flatten)]
    pub laws: LawsArgs,
}

/// The relay's admin API.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AdminArgs {
    /// A file holding the bearer token of the admin API (without it, admin requests are refused).
    #[arg(long, value_name = "FILE")]
    pub admin_token_file: Option<PathBuf>,
}

impl RunArgs {
    /// What `run` is told.
    pub fn options(&self) -> RunOptions {
        RunOptions {
            config: self.config.clone(),
            overrides: ConfigOverrides {
                database: self.db.clone(),
                http: self.http,
                ports: self.ports.clone(),
                port_kind: self.kind,
                delay_ms: self.delay,
            },
            print_moves: self.print_moves,
            admin_token_file: self.admin.admin_token_file.clone(),
            laws: self.laws.flags(),
        }
    }
}

/// `boardscribe demo`.
#[derive(clap::Args, Debug, Clone)]
pub struct DemoArgs {
    /// Number of emulated DGT chessboards.
    #[arg(long = "chess-boards", default_value_t = 2)]
    pub chess_boards: usize,
    /// Number of emulated togyz korgool pit boards (TGZ-1), after the chessboards; 0 for a
    /// chess-only demo.
    #[arg(long, default_value_t = 1)]
    pub togyz_boards: usize,
    /// The boards by kind, in board order: `dgt=4,chesslink=2,togyz=1` (instead of
    /// --chess-boards and --togyz-boards); a bare number is a number of DGT chessboards.
    #[arg(long, value_name = "KIND=N,...", conflicts_with_all = ["chess_boards", "togyz_boards"])]
    pub boards: Option<BoardMix>,
    /// Time multiplier for the emulated players (1 is human speed).
    #[arg(long, default_value_t = 0.04)]
    pub speed: f64,
    /// Where to put the database (default: a new temporary directory).
    #[arg(long)]
    pub db: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Serve the live page and the arbiter's console on this address (default: 127.0.0.1:8080,
    /// or any free port).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// No live page: record, print and exit.
    #[arg(long, conflicts_with = "http")]
    pub no_http: bool,
    /// Keep serving the live page after the games are over, until Ctrl-C (by default the demo
    /// exits when its games end).
    #[arg(long, conflicts_with = "no_http")]
    pub stay: bool,
    #[command(flatten)]
    pub admin: AdminArgs,
    #[command(flatten)]
    pub laws: LawsArgs,
}

impl DemoArgs {
    /// What `demo` is told.
    pub fn options(&self) -> DemoOptions {
        DemoOptions {
            boards: match &self.boards {
                Some(mix) => mix.0.clone(),
                None => BoardMix::dgt_and_togyz(self.chess_boards, self.togyz_boards).0,
            },
            speed: self.speed,
            db: self.db.clone(),
            seed: self.seed,
            http: self.http,
            no_http: self.no_http,
            stay: self.stay,
            admin_token_file: self.admin.admin_token_file.clone(),
            laws: self.laws.flags(),
        }
    }
}
