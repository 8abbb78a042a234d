//! The venue configuration: `boardscribe.toml` plus command-line flags, validated.
//!
//! Flow: the text is parsed into TOML's spanned tree and read by serde into raw structs that
//! keep each value's position ([`Spanned`]), every key serde refuses reported and left out
//! (`collect`); [`Config::from_toml`] then checks every value and builds the validated
//! [`Config`], collecting every mistake as a [`Diagnostic`] (`file:line:column: what is wrong;
//! what would be valid`), and with [`FileChecks`] the token files it names. [`Config::load`] reads the file and applies [`ConfigOverrides`] (the
//! `run` flags), which always win over the file. Nothing here touches a device or the network.

use std::{
    collections::HashMap,
    fmt,
    net::SocketAddr,
    ops::Range,
    path::{Path, PathBuf},
};

use serde::Deserialize;
use serde_spanned::Spanned;

pub use crate::device::discover::Locator;
use crate::{
    arbiter::{Federation, Laws, LawsConfig, LawsOverrides, LawsSetup, Supervision, TimeControl},
    export::{notation::Notation, pgn::ClockFormat},
    game::Variant,
    sensor::dgt::ClockLayout,
};

/// The documented example configuration (`boardscribe config example`).
pub const EXAMPLE: &str = include_str!("../config/boardscribe.example.toml");

/// The HTTP address used when `[http]` is given without `bind`.
pub const DEFAULT_HTTP_BIND: &str = "127.0.0.1:8080";

/// The database used when neither the file nor `--db` names one.
pub const DEFAULT_DATABASE: &str = "boardscribe.db";

/// The Lichess server used when `[relay.lichess]` gives no `base_url`.
pub const DEFAULT_LICHESS_URL: &str = "https://lichess.org";

/// A validated configuration: what `run` needs to start.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The file it was read from, if any.
    pub source: Option<PathBuf>,
    /// The SQLite database (relative paths are relative to the working directory).
    pub database: PathBuf,
    /// Where the HTTP server listens; `None`: no HTTP server.
    pub http: Option<SocketAddr>,
    /// `[http] tls`: how the HTTP server is reached from other machines, as the file says.
    pub http_tls: Option<HttpTls>,
    pub tournament: Tournament,
    /// The laws edition with the `[laws]` overrides and the supervision applied.
    pub laws: LawsConfig,
    /// Boards by ascending number (boards on a bus are in `buses`).
    pub boards: Vec<BoardConfig>,
    /// `[[bus]]`: chains of DGT boards on one port each, with their boards.
    pub buses: Vec<BusConfig>,
    pub relay: RelayConfig,
    pub admin: Option<AdminConfig>,
    /// `[cluster]`: a hall of a clustered event, or the event node.
    pub cluster: Option<ClusterConfig>,
    /// What the file sets up that works but may not be meant (an HTTP address open to the
    /// network with no admin token): `config check` prints them, nothing refuses them.
    pub warnings: Vec<Diagnostic>,
}

/// `[http] tls`: how other machines reach an HTTP server bound to an address they can reach
/// (the daemon itself speaks plain HTTP). Required with such an address; see docs/operations.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpTls {
    /// `"proxy"`: a reverse proxy in front terminates TLS; clients reach the daemon through it.
    Proxy,
    /// `"none"`: plain HTTP on this network, known and accepted (tokens and cookies cross it
    /// readable).
    None,
}

impl HttpTls {
    pub const ALL: [HttpTls; 2] = [HttpTls::Proxy, HttpTls::None];

    /// The config's name: `"proxy"` or `"none"`.
    pub fn as_str(self) -> &'static str {
        match self {
            HttpTls::Proxy => "proxy",
            HttpTls::None => "none",
        }
    }
}

/// Which files a config names are read while it is checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileChecks {
    /// `[admin] token_file`: readable and not empty.
    pub admin_token: bool,
    /// `[relay.lichess] token_file`: readable and not empty.
    pub lichess_token: bool,
}

impl FileChecks {
    /// No file is read (tests of the text alone, `devices`).
    pub const NONE: FileChecks = FileChecks {
        admin_token: false,
        lichess_token: false,
    };
    /// Every file the daemon reads at start (`config check`, `run`).
    pub const ALL: FileChecks = FileChecks {
        admin_token: true,
        lichess_token: true,
    };
}

/// `[tournament]`: what every game of the round shares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tournament {
    pub event: Option<String>,
    pub site: Option<String>,
    /// The round the event starts at: a whole number of 1 or more, as given (`"3"`).
    pub round: Option<String>,
    /// The event's first and last days, `YYYY-MM-DD` (the store's event keeps them).
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    pub time_control: Option<TimeControl>,
    pub laws: Laws,
    /// Whose rules: FIDE's edition, or the US Chess preset over it.
    pub federation: Federation,
    pub supervision: Supervision,
    /// Standard chess or Chess960 (the chess boards' start positions; togyz boards play their
    /// one game whatever it says).
    pub variant: Variant,
    /// The language of the scoresheets, the pages and the console (`en`, `ru`, `uk`, `mn`,
    /// `ky`, `kk`, `fa`); a browser asking for another of them gets that one.
    pub language: crate::lang::Lang,
    /// How the scoresheets write chess moves: `san` (the default), `figurine`, or `local` (the
    /// language's piece letters, figurines where its Laws text gives none to print).
    pub notation: Notation,
    /// The tie-breaks after points, in order (`[tournament] tiebreaks`; FIDE C.07's usual Swiss
    /// list when not given): `buchholz-cut1`, `buchholz`, `sonneborn-berger`,
    /// `direct-encounter`, `wins`.
    pub tiebreaks: Tiebreaks,
}

/// `[tournament] tiebreaks`, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tiebreaks(pub Vec<crate::standings::TieBreak>);

impl Default for Tiebreaks {
    fn default() -> Tiebreaks {
        Tiebreaks(crate::standings::TieBreak::DEFAULT.to_vec())
    }
}

impl fmt::Display for Tiebreaks {
    /// The names, comma-separated, as the event keeps them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|t| t.name()).collect();
        f.write_str(&names.join(","))
    }
}

/// A board's kind (`kind = "dgt"`): the core's one list of them.
pub use crate::kind::BoardKind;

/// One `[[board]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardConfig {
    /// The board number of the pairings (unique, 1 or more).
    pub number: u32,
    pub kind: BoardKind,
    /// Shown in logs and on the live page (default `"board N"`).
    pub name: String,
    pub locator: Locator,
    /// DGT clocks only: which BWTIME layout the clock speaks.
    pub clock_layout: ClockLayout,
}

impl crate::device::discover::Expected for BoardConfig {
    fn locator(&self) -> &Locator {
        &self.locator
    }

    fn number(&self) -> u32 {
        self.number
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn kind_name(&self) -> String {
        self.kind.to_string()
    }
}

/// One `[[bus]]`: DGT boards daisy-chained on one serial port, polled in bus mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BusConfig {
    /// Named by the boards' `bus` key (e.g. `"hall-a"`).
    pub name: String,
    pub locator: Locator,
    /// The `[[board]]`s with `bus = name`, by ascending number.
    pub boards: Vec<BusBoardConfig>,
}

/// A `[[board]]` on a bus: the board (its locator is the bus's) and its bus address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BusBoardConfig {
    pub board: BoardConfig,
    /// `bus_serial`: the board's five-digit serial number.
    pub serial: String,
    /// The bus address its serial gives (dgt-notes 1.10).
    pub address: u16,
}

/// `[relay.*]`: where games are published besides the HTTP feed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayConfig {
    pub folder: Option<FolderRelay>,
    /// `[relay.lichess]`, or several `[[relay.lichess]]` rounds, each with its boards.
    pub lichess: Vec<LichessRelay>,
    /// `[relay] clk_format`: how every PGN served, written or pushed writes `[%clk]`.
    pub clk_format: ClockFormat,
    /// `[relay] delay` (or `run --delay`): every public output shows each game as it stood this
    /// long ago (0 to 60 minutes; 0: live).
    pub delay_ms: u64,
    /// `[relay] public_comments`: irregularities and the arbiter's decisions as comments in the
    /// public outputs too (default false: moves, clocks and results only).
    pub public_comments: bool,
    /// `[relay] slice`: the most games one push or folder round holds (default 64; Lichess
    /// takes at most 100 per round).
    pub slice: usize,
}

impl Default for RelayConfig {
    fn default() -> RelayConfig {
        RelayConfig {
            folder: None,
            lichess: Vec::new(),
            clk_format: ClockFormat::default(),
            delay_ms: 0,
            public_comments: false,
            slice: crate::export::publish::DEFAULT_SLICE,
        }
    }
}

impl RelayConfig {
    /// How public outputs publish the games.
    pub fn publication(&self) -> crate::export::publish::Publication {
        crate::export::publish::Publication {
            delay_ms: self.delay_ms,
            comments: self.public_comments,
            clk: self.clk_format,
        }
    }
}

/// `[relay.folder]`: LiveChess-style folders written to a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FolderRelay {
    pub dir: PathBuf,
}

/// `[relay.lichess]`: push to a Lichess broadcast round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LichessRelay {
    /// The Lichess round of each event round (`rounds = { 1 = "…" }`), or of the round current
    /// when the daemon starts pushing (`round = "…"`).
    pub rounds: crate::broadcast::lichess::plan::LichessRounds,
    /// The boards pushed to this round (`boards = "1-64"`); all boards when not given.
    pub boards: Option<crate::export::publish::BoardRange>,
    /// A file holding the API token (kept out of the config file).
    pub token_file: PathBuf,
    pub base_url: String,
}

/// `[cluster]`: the event's NATS JetStream, and this process's part in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClusterConfig {
    /// The NATS servers (`nats://` or `tls://`), tried in turn.
    pub urls: Vec<String>,
    /// `run`: the hall this process records for.
    pub hall: Option<String>,
    /// `event`: the halls the event node follows.
    pub halls: Vec<String>,
    /// How many servers keep each stream (1; 3 in a three-node cluster).
    pub replicas: usize,
    /// NATS credentials (a `.creds` file: the user's JWT and seed).
    pub creds_file: Option<PathBuf>,
    /// The CA that signed the servers' certificates (TLS).
    pub tls_ca_file: Option<PathBuf>,
    /// A client certificate and its key, if the servers ask for one.
    pub tls_cert_file: Option<PathBuf>,
    pub tls_key_file: Option<PathBuf>,
    /// `event`: how long a hall may go unheard (no status, no record) before the event node
    /// alerts the arbiter (`hall_silent_after`, default 15 s).
    pub hall_silent_after_ms: u64,
}

/// `[admin]`: the admin API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminConfig {
    /// A file holding the bearer token the admin API accepts.
    pub token_file: PathBuf,
}

/// Command-line flags of `run`; each one given wins over the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigOverrides {
    /// `--db`.
    pub database: Option<PathBuf>,
    /// `--http`: also turns the HTTP server on.
    pub http: Option<SocketAddr>,
    /// `--port` (repeatable): these boards, numbered 1, 2, … in order, replace the file's.
    pub ports: Vec<PathBuf>,
    /// `--kind`: the kind of the boards of `ports`.
    pub port_kind: BoardKind,
    /// `--delay`: the broadcast delay, in ms.
    pub delay_ms: Option<u64>,
}

/// The Laws given on the command line (`run`, `demo`, `replay`); each one given wins over the
/// file's.
#[derive(Clone, Debug, Default)]
pub struct LawsFlags {
    pub laws: Option<Laws>,
    pub time_control: Option<TimeControl>,
    pub supervision: Option<Supervision>,
    pub federation: Option<Federation>,
    pub variant: Option<Variant>,
}

impl LawsFlags {
    /// The Laws of these flags alone (the defaults where not given).
    pub fn setup(&self) -> LawsSetup {
        self.apply(LawsSetup {
            cfg: LawsConfig::for_edition(Laws::default()),
            time_control: None,
            variant: Variant::Standard,
        })
    }

    /// `base` (e.g. the config's) with the flags given applied: `laws` and `federation`
    /// replace the edition and federation (and the file's `[laws]` overrides with them),
    /// `supervision` and `time_control` replace theirs.
    pub fn apply(&self, mut base: LawsSetup) -> LawsSetup {
        if self.laws.is_some() || self.federation.is_some() {
            let supervision = base.cfg.supervision;
            let laws = self.laws.unwrap_or(base.cfg.laws);
            let federation = self.federation.unwrap_or(base.cfg.federation);
            base.cfg = LawsConfig::preset(laws, federation);
            base.cfg.supervision = supervision;
        }
        if let Some(s) = self.supervision {
            base.cfg.supervision = s;
        }
        if let Some(tc) = &self.time_control {
            base.time_control = Some(tc.clone());
        }
        if let Some(v) = self.variant {
            base.variant = v;
        }
        base
    }
}

/// One mistake in a config file, with its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file as named to the user.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong and what would be valid.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Every mistake found, one per line, in the order of the file.
    #[error("{}", join_lines(.0))]
    Invalid(Vec<Diagnostic>),
}

impl ConfigError {
    /// The mistakes with their places (empty for a read error).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            ConfigError::Read { .. } => &[],
            ConfigError::Invalid(d) => d,
        }
    }
}

fn join_lines(d: &[Diagnostic]) -> String {
    d.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

// ---- raw stage: what serde reads, with positions ----

impl Config {
    /// Reads `path` (if any), validates it and applies `overrides`; reads no file it names.
    pub fn load(path: Option<&Path>, overrides: ConfigOverrides) -> Result<Config, ConfigError> {
        Config::load_with(path, overrides, FileChecks::NONE)
    }

    /// [`Config::load`], also reading the files the config names that `files` says: what
    /// `config check` and `run` take, so that both refuse the same files.
    pub fn load_with(
        path: Option<&Path>,
        overrides: ConfigOverrides,
        files: FileChecks,
    ) -> Result<Config, ConfigError> {
        let mut config = match path {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_owned(),
                    source,
                })?;
                let mut c = Config::from_toml_with(&text, &path.display().to_string(), files)?;
                c.source = Some(path.to_owned());
                c
            }
            None => Config::default(),
        };
        config.apply(overrides);
        Ok(config)
    }

    /// Validates `text`; `file` names it in the diagnostics. Reads no file it names.
    pub fn from_toml(text: &str, file: &str) -> Result<Config, ConfigError> {
        Config::from_toml_with(text, file, FileChecks::NONE)
    }

    /// Validates `text`, reading the files it names that `files` says (a token file that is
    /// missing or empty is a mistake too). Every mistake is reported, in the order of the file.
    pub fn from_toml_with(
        text: &str,
        file: &str,
        files: FileChecks,
    ) -> Result<Config, ConfigError> {
        let mut ck = Checker {
            file,
            text,
            files,
            found: Vec::new(),
            warnings: Vec::new(),
            dropped: Vec::new(),
        };
        let config = collect::read_raw(text, &mut ck).map(|raw| validate(raw, &mut ck));
        match config {
            Some(mut config) if ck.found.is_empty() => {
                ck.warnings.sort_by_key(|(at, _)| *at);
                config.warnings = ck.warnings.into_iter().map(|(_, d)| d).collect();
                Ok(config)
            }
            _ => {
                ck.found.sort_by_key(|(at, _)| *at);
                Err(ConfigError::Invalid(
                    ck.found.into_iter().map(|(_, d)| d).collect(),
                ))
            }
        }
    }

    /// Applies the command-line flags.
    pub fn apply(&mut self, o: ConfigOverrides) {
        if let Some(db) = o.database {
            self.database = db;
        }
        if let Some(http) = o.http {
            self.http = Some(http);
        }
        if let Some(d) = o.delay_ms {
            self.relay.delay_ms = d;
        }
        if !o.ports.is_empty() {
            self.boards = (1u32..)
                .zip(o.ports)
                .map(|(number, port)| BoardConfig {
                    number,
                    kind: o.port_kind,
                    name: format!("board {number}"),
                    locator: Locator::Port(port),
                    clock_layout: ClockLayout::default(),
                })
                .collect();
        }
    }

    /// The laws and time control every board's referee gets.
    pub fn laws_setup(&self) -> LawsSetup {
        LawsSetup {
            cfg: self.laws.clone(),
            time_control: self.tournament.time_control.clone(),
            variant: self.tournament.variant,
        }
    }

    /// A few lines for `config check`: what the file sets up.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let t = &self.tournament;
        out.push_str(&format!("database: {}\n", self.database.display()));
        match self.http {
            Some(a) => match self.http_tls {
                Some(HttpTls::Proxy) => {
                    out.push_str(&format!("http: {a} (TLS at a reverse proxy in front)\n"))
                }
                Some(HttpTls::None) => out.push_str(&format!("http: {a} (plain HTTP, as said)\n")),
                None => out.push_str(&format!("http: {a}\n")),
            },
            None => out.push_str("http: off\n"),
        }
        let or_none = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
        out.push_str(&format!(
            "tournament: event {}, site {}, round {}\n",
            or_none(&t.event),
            or_none(&t.site),
            or_none(&t.round)
        ));
        let tc = t
            .time_control
            .as_ref()
            .map_or_else(|| "none".to_owned(), ToString::to_string);
        out.push_str(&format!(
            "laws: {}{}, supervision {}, time control {tc}\n",
            t.laws,
            match t.federation {
                Federation::Fide => "",
                Federation::Uscf => " with the US Chess preset",
            },
            self.laws.supervision.as_str()
        ));
        if t.variant != Variant::Standard {
            out.push_str(&format!("variant: {}\n", t.variant));
        }
        if t.language != crate::lang::Lang::En {
            out.push_str(&format!(
                "language: {} ({})\n",
                t.language,
                t.language.name()
            ));
        }
        if t.notation != Notation::San {
            let printed = t.notation.pieces(t.language).symbols().join(" ");
            let why = t
                .notation
                .local_falls_back(t.language)
                .map(|reason| format!(": {}'s {reason}", t.language.english_name()))
                .unwrap_or_default();
            out.push_str(&format!(
                "notation: {} on the sheets ({printed}{why})\n",
                t.notation
            ));
        }
        if t.tiebreaks != Tiebreaks::default() {
            out.push_str(&format!("tiebreaks: {}\n", t.tiebreaks));
        }
        out.push_str(&format!("boards: {}\n", self.boards.len()));
        for b in &self.boards {
            out.push_str(&format!(
                "  {:>3}  {:<5}  {:<12}  {}\n",
                b.number, b.kind, b.name, b.locator
            ));
        }
        for bus in &self.buses {
            out.push_str(&format!(
                "bus {}: {}, {} boards\n",
                bus.name,
                bus.locator,
                bus.boards.len()
            ));
            for b in &bus.boards {
                out.push_str(&format!(
                    "  {:>3}  {:<5}  {:<12}  bus serial {} (address {})\n",
                    b.board.number, b.board.kind, b.board.name, b.serial, b.address
                ));
            }
        }
        if let Some(f) = &self.relay.folder {
            out.push_str(&format!("relay folder: {}\n", f.dir.display()));
        }
        for l in &self.relay.lichess {
            out.push_str(&format!(
                "relay lichess: {} at {}{}\n",
                l.rounds,
                l.base_url,
                l.boards
                    .as_ref()
                    .map(|b| format!(", boards {b}"))
                    .unwrap_or_default()
            ));
        }
        if self.relay.delay_ms > 0 {
            out.push_str(&format!(
                "relay delay: {} s on every public output\n",
                self.relay.delay_ms / 1000
            ));
        }
        if let Some(a) = &self.admin {
            out.push_str(&format!("admin token: {}\n", a.token_file.display()));
        }
        if let Some(c) = &self.cluster {
            match &c.hall {
                Some(hall) => out.push_str(&format!(
                    "cluster: hall {hall}, publishing to {}\n",
                    c.urls.join(",")
                )),
                None => out.push_str(&format!(
                    "cluster: event node following halls {} at {}\n",
                    c.halls.join(", "),
                    c.urls.join(",")
                )),
            }
        }
        out
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            source: None,
            database: PathBuf::from(DEFAULT_DATABASE),
            http: None,
            http_tls: None,
            tournament: Tournament::default(),
            laws: LawsConfig::for_edition(Laws::default()),
            boards: Vec::new(),
            buses: Vec::new(),
            relay: RelayConfig::default(),
            admin: None,
            cluster: None,
            warnings: Vec::new(),
        }
    }
}

mod boards;
mod check;
mod cluster;
mod collect;
mod raw;
mod relay;

use boards::{boards, buses};
use check::{Checker, LAYOUTS, line_column, list, serde_message, validate};
pub use check::{open_bind_warning, plain_http_refusal, weak_admin_token};
use cluster::cluster_config;
pub use cluster::is_hall_name;
use raw::{
    LichessEntries, PendingBusBoard, RawBoard, RawBus, RawCluster, RawConfig, RawHttp, RawLichess,
    RawRelay, RawTournament,
};
use relay::relay_config;

#[cfg(test)]
mod tests;

/// What `config check` finds across the files of one event (`config check event.toml
/// hall-a.toml …`): a board number two halls both use (the event node keeps the first hall's
/// games of that number and drops the other's), a hall file whose hall the event node does not
/// follow, and two files for one hall. Each named by its file; pure: the configs are read.
pub fn event_mistakes(files: &[(&Path, &Config)]) -> Vec<String> {
    let mut out = Vec::new();
    let hall_of = |c: &Config| c.cluster.as_ref().and_then(|k| k.hall.clone());
    let followed: Vec<(&Path, Vec<String>)> = files
        .iter()
        .filter_map(|(p, c)| {
            let k = c.cluster.as_ref()?;
            (!k.halls.is_empty()).then(|| (*p, k.halls.clone()))
        })
        .collect();
    // (number, hall, file) of every board of every hall.
    let mut numbers: Vec<(u32, String, &Path)> = Vec::new();
    let mut halls: Vec<(String, &Path)> = Vec::new();
    for (path, config) in files {
        let Some(hall) = hall_of(config) else {
            continue;
        };
        if let Some((_, first)) = halls.iter().find(|(h, _)| *h == hall) {
            out.push(format!(
                "{} and {}: both record for hall {hall:?}; give each hall PC its own hall name",
                first.display(),
                path.display()
            ));
        }
        halls.push((hall.clone(), path));
        for (event, names) in &followed {
            if !names.contains(&hall) {
                out.push(format!(
                    "{}: hall {hall:?} is not in {}'s [cluster] halls ({}); the event node would \
                     not follow it",
                    path.display(),
                    event.display(),
                    names.join(", ")
                ));
            }
        }
        let bus_boards = config
            .buses
            .iter()
            .flat_map(|b| b.boards.iter().map(|m| &m.board));
        for board in config.boards.iter().chain(bus_boards) {
            numbers.push((board.number, hall.clone(), path));
        }
    }
    numbers.sort_by_key(|(n, _, _)| *n);
    for pair in numbers.windows(2) {
        let ((n, hall_a, file_a), (m, hall_b, file_b)) = (&pair[0], &pair[1]);
        if n == m && hall_a != hall_b {
            out.push(format!(
                "board {n} is in hall {hall_a:?} ({}) and in hall {hall_b:?} ({}): the event node \
                 keeps one hall's games of board {n} and drops the other's; give each hall its \
                 own board numbers (e.g. 1-50 and 51-100)",
                file_a.display(),
                file_b.display()
            ));
        }
    }
    out
}
