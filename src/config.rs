//! The venue configuration: `boardscribe.toml` plus command-line flags, validated.
//!
//! Flow: the text is parsed by serde into raw structs that keep each value's position
//! ([`Spanned`]); [`Config::from_toml`] then checks every value and builds the validated
//! [`Config`], collecting every mistake as a [`Diagnostic`] (`file:line:column: what is wrong;
//! what would be valid`). [`Config::load`] reads the file and applies [`ConfigOverrides`] (the
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

use crate::{
    arbiter::{Federation, Laws, LawsConfig, LawsOverrides, LawsSetup, Supervision, TimeControl},
    export::pgn::ClockFormat,
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
    pub tournament: Tournament,
    /// The laws edition with the `[laws]` overrides and the supervision applied.
    pub laws: LawsConfig,
    /// Boards by ascending number (boards on a bus are in `buses`).
    pub boards: Vec<BoardConfig>,
    /// `[[bus]]`: chains of DGT boards on one port each, with their boards.
    pub buses: Vec<BusConfig>,
    pub relay: RelayConfig,
    pub admin: Option<AdminConfig>,
}

/// `[tournament]`: what every game of the round shares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tournament {
    pub event: Option<String>,
    pub site: Option<String>,
    /// The round as PGN writes it (`"3"`, `"3.1"`).
    pub round: Option<String>,
    pub time_control: Option<TimeControl>,
    pub laws: Laws,
    /// Whose rules: FIDE's edition, or the US Chess preset over it.
    pub federation: Federation,
    pub supervision: Supervision,
    /// Standard chess or Chess960 (the chess boards' start positions; togyz boards play their
    /// one game whatever it says).
    pub variant: Variant,
}

/// The game a board is made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoardKind {
    /// A DGT electronic chessboard.
    Dgt,
    /// A togyz korgool pit board (TGZ-1 frames).
    Togyz,
}

impl BoardKind {
    /// The config name: `"dgt"` or `"togyz"`.
    pub fn as_str(self) -> &'static str {
        match self {
            BoardKind::Dgt => "dgt",
            BoardKind::Togyz => "togyz",
        }
    }
}

impl fmt::Display for BoardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// How a configured board is found among the serial ports.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Locator {
    /// The USB serial number (the `serial` attribute in sysfs).
    Serial(String),
    /// A udev symlink, e.g. `/dev/eboard/dgt-12345`, followed to its port.
    Symlink(PathBuf),
    /// A port path, e.g. `/dev/ttyACM0`.
    Port(PathBuf),
}

impl fmt::Display for Locator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Locator::Serial(s) => write!(f, "serial {s}"),
            Locator::Symlink(p) => write!(f, "symlink {}", p.display()),
            Locator::Port(p) => write!(f, "port {}", p.display()),
        }
    }
}

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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RelayConfig {
    pub folder: Option<FolderRelay>,
    pub lichess: Option<LichessRelay>,
    /// `[relay] clk_format`: how every PGN served, written or pushed writes `[%clk]`.
    pub clk_format: ClockFormat,
}

/// `[relay.folder]`: LiveChess-style folders written to a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FolderRelay {
    pub dir: PathBuf,
}

/// `[relay.lichess]`: push to a Lichess broadcast round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LichessRelay {
    /// The broadcast round id.
    pub round: String,
    /// A file holding the API token (kept out of the config file).
    pub token_file: PathBuf,
    pub base_url: String,
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
    /// `--port` (repeatable): these DGT boards, numbered 1, 2, … in order, replace the file's.
    pub ports: Vec<PathBuf>,
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    database: Option<Spanned<String>>,
    http: Option<Spanned<RawHttp>>,
    tournament: Option<RawTournament>,
    laws: Option<Spanned<LawsOverrides>>,
    #[serde(default)]
    board: Vec<Spanned<RawBoard>>,
    #[serde(default)]
    bus: Vec<Spanned<RawBus>>,
    relay: Option<RawRelay>,
    admin: Option<Spanned<RawAdmin>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    bind: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTournament {
    event: Option<String>,
    site: Option<String>,
    round: Option<Spanned<toml::Value>>,
    time_control: Option<Spanned<String>>,
    laws: Option<Spanned<String>>,
    federation: Option<Spanned<String>>,
    supervision: Option<Spanned<String>>,
    variant: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoard {
    number: Spanned<i64>,
    kind: Spanned<String>,
    name: Option<Spanned<String>>,
    serial: Option<Spanned<String>>,
    symlink: Option<Spanned<String>>,
    port: Option<Spanned<String>>,
    clock_layout: Option<Spanned<String>>,
    bus: Option<Spanned<String>>,
    bus_serial: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBus {
    name: Spanned<String>,
    serial: Option<Spanned<String>>,
    symlink: Option<Spanned<String>>,
    port: Option<Spanned<String>>,
}

/// A board that names a bus, before the buses are read.
struct PendingBusBoard {
    bus: Spanned<String>,
    board: BoardConfig,
    serial: String,
    address: u16,
    /// Where `bus_serial` is.
    at: Range<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRelay {
    clk_format: Option<Spanned<String>>,
    folder: Option<Spanned<RawFolder>>,
    lichess: Option<Spanned<RawLichess>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFolder {
    dir: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLichess {
    round: Option<Spanned<String>>,
    token_file: Option<Spanned<String>>,
    base_url: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAdmin {
    token_file: Option<Spanned<String>>,
}

/// Collects diagnostics against one text.
struct Checker<'a> {
    file: &'a str,
    text: &'a str,
    found: Vec<(usize, Diagnostic)>,
}

impl Checker<'_> {
    fn at(&mut self, span: Range<usize>, message: String) {
        let d = diagnostic(self.file, self.text, span.start, message);
        self.found.push((span.start, d));
    }

    /// A value that must not be empty.
    fn non_empty(&mut self, v: &Spanned<String>, what: &str, example: &str) -> Option<String> {
        let s = v.get_ref().trim();
        if s.is_empty() {
            self.at(
                v.span(),
                format!("{what} is empty; give one, e.g. {example}"),
            );
            return None;
        }
        Some(s.to_owned())
    }

    /// A required key of a table.
    fn required<'v>(
        &mut self,
        v: &'v Option<Spanned<String>>,
        table: Range<usize>,
        name: &str,
        key: &str,
        example: &str,
    ) -> Option<&'v Spanned<String>> {
        if v.is_none() {
            self.at(
                table,
                format!("{name} needs `{key}`; add e.g. {key} = {example}"),
            );
        }
        v.as_ref()
    }
}

/// A diagnostic at byte `offset` of `text`.
fn diagnostic(file: &str, text: &str, offset: usize, message: String) -> Diagnostic {
    let (line, column) = line_column(text, offset);
    Diagnostic {
        file: file.to_owned(),
        line,
        column,
        message,
    }
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

fn list<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> String {
    all.iter().map(|&t| name(t)).collect::<Vec<_>>().join(", ")
}

const KINDS: [BoardKind; 2] = [BoardKind::Dgt, BoardKind::Togyz];
const SUPERVISIONS: [Supervision; 2] = [Supervision::Full, Supervision::Reduced];
const LAYOUTS: [(ClockLayout, &str); 2] = [(ClockLayout::H17, "h17"), (ClockLayout::H13, "h13")];

impl Config {
    /// Reads `path` (if any), validates it and applies `overrides`.
    pub fn load(path: Option<&Path>, overrides: ConfigOverrides) -> Result<Config, ConfigError> {
        let mut config = match path {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_owned(),
                    source,
                })?;
                let mut c = Config::from_toml(&text, &path.display().to_string())?;
                c.source = Some(path.to_owned());
                c
            }
            None => Config::default(),
        };
        config.apply(overrides);
        Ok(config)
    }

    /// Validates `text`; `file` names it in the diagnostics.
    pub fn from_toml(text: &str, file: &str) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            ConfigError::Invalid(vec![diagnostic(
                file,
                text,
                offset,
                serde_message(e.message()),
            )])
        })?;
        let mut ck = Checker {
            file,
            text,
            found: Vec::new(),
        };
        let config = validate(raw, &mut ck);
        if ck.found.is_empty() {
            Ok(config)
        } else {
            ck.found.sort_by_key(|(at, _)| *at);
            Err(ConfigError::Invalid(
                ck.found.into_iter().map(|(_, d)| d).collect(),
            ))
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
        if !o.ports.is_empty() {
            self.boards = (1u32..)
                .zip(o.ports)
                .map(|(number, port)| BoardConfig {
                    number,
                    kind: BoardKind::Dgt,
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
            Some(a) => out.push_str(&format!("http: {a}\n")),
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
        if let Some(l) = &self.relay.lichess {
            out.push_str(&format!(
                "relay lichess: round {} at {}\n",
                l.round, l.base_url
            ));
        }
        if let Some(a) = &self.admin {
            out.push_str(&format!("admin token: {}\n", a.token_file.display()));
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
            tournament: Tournament::default(),
            laws: LawsConfig::for_edition(Laws::default()),
            boards: Vec::new(),
            buses: Vec::new(),
            relay: RelayConfig::default(),
            admin: None,
        }
    }
}

/// serde's messages in this file's words: "key" for field, the valid values listed plainly.
fn serde_message(m: &str) -> String {
    let m = m.trim_end();
    if let Some(rest) = m.strip_prefix("unknown field ") {
        return match rest.split_once(", expected ") {
            Some((key, valid)) => format!(
                "unknown key {key}; valid: {}",
                valid.trim_start_matches("one of ")
            ),
            None => format!("unknown key {rest}"),
        };
    }
    if let Some(rest) = m.strip_prefix("unknown variant ")
        && let Some((value, valid)) = rest.split_once(", expected ")
    {
        return format!(
            "unknown value {value}; valid: {}",
            valid.trim_start_matches("one of ")
        );
    }
    if let Some(key) = m.strip_prefix("missing field ") {
        return format!("missing key {key}; add it to this table");
    }
    m.replace("expected i64", "expected a whole number")
        .replace("expected u32", "expected a whole number of 0 or more")
        .replace("expected u64", "expected a whole number of 0 or more")
}

fn validate(raw: RawConfig, ck: &mut Checker<'_>) -> Config {
    let mut config = Config::default();
    if let Some(db) = &raw.database
        && let Some(db) = ck.non_empty(db, "database", "\"/var/lib/boardscribe/boardscribe.db\"")
    {
        config.database = PathBuf::from(db);
    }
    if let Some(http) = &raw.http {
        config.http = http_bind(http, ck);
    }
    if let Some(t) = &raw.tournament {
        config.tournament = tournament(t, ck);
    }
    config.laws = laws(&config.tournament, raw.tournament.as_ref(), &raw.laws, ck);
    let mut on_bus = Vec::new();
    config.boards = boards(&raw.board, &mut on_bus, ck);
    config.buses = buses(&raw.bus, on_bus, &config.boards, ck);
    if let Some(relay) = &raw.relay {
        config.relay = relay_config(relay, ck);
    }
    if let Some(admin) = &raw.admin {
        config.admin = ck
            .required(
                &admin.get_ref().token_file,
                admin.span(),
                "[admin]",
                "token_file",
                "\"/etc/boardscribe/admin.token\"",
            )
            .and_then(|v| ck.non_empty(v, "token_file", "\"/etc/boardscribe/admin.token\""))
            .map(|p| AdminConfig {
                token_file: PathBuf::from(p),
            });
    }
    config
}

fn http_bind(http: &Spanned<RawHttp>, ck: &mut Checker<'_>) -> Option<SocketAddr> {
    let Some(bind) = &http.get_ref().bind else {
        return DEFAULT_HTTP_BIND.parse().ok();
    };
    match bind.get_ref().trim().parse::<SocketAddr>() {
        Ok(a) => Some(a),
        Err(_) => {
            ck.at(
                bind.span(),
                format!(
                    "invalid bind address {:?}; valid: an IP address and port such as \
                     127.0.0.1:8080, 0.0.0.0:80 or [::]:8080",
                    bind.get_ref()
                ),
            );
            None
        }
    }
}

fn tournament(t: &RawTournament, ck: &mut Checker<'_>) -> Tournament {
    let mut out = Tournament {
        event: t.event.clone(),
        site: t.site.clone(),
        ..Tournament::default()
    };
    if let Some(round) = &t.round {
        out.round = match round.get_ref() {
            toml::Value::Integer(n) if *n >= 1 => Some(n.to_string()),
            toml::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            _ => {
                ck.at(
                    round.span(),
                    "round must be a number of 1 or more or a text such as \"3.1\"".to_owned(),
                );
                None
            }
        };
    }
    if let Some(tc) = &t.time_control {
        match tc.get_ref().parse::<TimeControl>() {
            Ok(tc) => out.time_control = Some(tc),
            Err(e) => ck.at(tc.span(), e.to_string()),
        }
    }
    if let Some(laws) = &t.laws {
        match laws.get_ref().parse::<Laws>() {
            Ok(l) => out.laws = l,
            Err(_) => ck.at(
                laws.span(),
                format!(
                    "unknown laws edition {:?}; valid: {}",
                    laws.get_ref(),
                    list(&Laws::ALL, Laws::as_str)
                ),
            ),
        }
    }
    if let Some(f) = &t.federation {
        match Federation::ALL
            .iter()
            .find(|v| v.as_str() == f.get_ref().trim().to_ascii_lowercase())
        {
            Some(&v) => out.federation = v,
            None => ck.at(
                f.span(),
                format!(
                    "unknown federation {:?}; valid: {}",
                    f.get_ref(),
                    list(&Federation::ALL, Federation::as_str)
                ),
            ),
        }
    }
    if let Some(v) = &t.variant {
        match v.get_ref().parse::<Variant>() {
            Ok(v) => out.variant = v,
            Err(_) => ck.at(
                v.span(),
                format!(
                    "unknown variant {:?}; valid: {}",
                    v.get_ref(),
                    list(&Variant::ALL, Variant::as_str)
                ),
            ),
        }
    }
    if let Some(s) = &t.supervision {
        match SUPERVISIONS
            .iter()
            .find(|v| v.as_str() == s.get_ref().trim())
        {
            Some(&v) => out.supervision = v,
            None => ck.at(
                s.span(),
                format!(
                    "unknown supervision {:?}; valid: {}",
                    s.get_ref(),
                    list(&SUPERVISIONS, Supervision::as_str)
                ),
            ),
        }
    }
    out
}

fn laws(
    t: &Tournament,
    raw_t: Option<&RawTournament>,
    overrides: &Option<Spanned<LawsOverrides>>,
    ck: &mut Checker<'_>,
) -> LawsConfig {
    let mut cfg = match overrides {
        Some(o) => {
            let supervision_in_tournament = raw_t.and_then(|r| r.supervision.as_ref());
            if let (Some(_), Some(s)) = (o.get_ref().supervision, supervision_in_tournament) {
                ck.at(
                    s.span(),
                    "supervision is set both here and in [laws]; keep one of the two".to_owned(),
                );
            }
            LawsConfig::preset_with_overrides(t.laws, t.federation, o.get_ref())
        }
        None => LawsConfig::preset(t.laws, t.federation),
    };
    if raw_t.is_some_and(|r| r.supervision.is_some()) {
        cfg.supervision = t.supervision;
    }
    cfg
}

fn boards(
    raw: &[Spanned<RawBoard>],
    on_bus: &mut Vec<PendingBusBoard>,
    ck: &mut Checker<'_>,
) -> Vec<BoardConfig> {
    let mut out = Vec::new();
    // Where each number, name and locator was first used.
    let mut numbers: HashMap<u32, usize> = HashMap::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut locators: HashMap<Locator, (u32, usize)> = HashMap::new();
    for rb in raw {
        let b = rb.get_ref();
        let n = *b.number.get_ref();
        let number = match u32::try_from(n) {
            Ok(n) if n >= 1 => n,
            _ => {
                ck.at(
                    b.number.span(),
                    format!("board number {n} is not valid; valid: a whole number of 1 or more"),
                );
                continue;
            }
        };
        let repeated_number = numbers.contains_key(&number);
        if let Some(&first) = numbers.get(&number) {
            let (line, _) = line_column(ck.text, first);
            ck.at(
                b.number.span(),
                format!(
                    "board number {number} is already used at line {line}; give each board its own number"
                ),
            );
        } else {
            numbers.insert(number, b.number.span().start);
        }
        let kind = match KINDS.iter().find(|k| k.as_str() == b.kind.get_ref().trim()) {
            Some(&k) => Some(k),
            None => {
                ck.at(
                    b.kind.span(),
                    format!(
                        "unknown board kind {:?}; valid: {}",
                        b.kind.get_ref(),
                        list(&KINDS, BoardKind::as_str)
                    ),
                );
                None
            }
        };
        let name = match &b.name {
            Some(n) => ck.non_empty(n, "name", "\"Board 1 (top table)\""),
            None => Some(format!("board {number}")),
        };
        // A repeated number also repeats the default name: said once is enough.
        if let Some(name) = name.as_ref().filter(|_| !repeated_number) {
            let at = b.name.as_ref().map_or(rb.span().start, |n| n.span().start);
            if let Some(&first) = names.get(name) {
                let (line, _) = line_column(ck.text, first);
                ck.at(
                    b.name.as_ref().map_or(rb.span(), Spanned::span),
                    format!("board name {name:?} is already used at line {line}; give each board its own name"),
                );
            } else {
                names.insert(name.clone(), at);
            }
        }
        if let Some(bus) = &b.bus {
            if let Some(v) = [&b.serial, &b.symlink, &b.port]
                .into_iter()
                .flatten()
                .next()
            {
                ck.at(
                    v.span(),
                    format!(
                        "board {number} is on bus {:?} and is found through it; remove serial, symlink and port from this board",
                        bus.get_ref()
                    ),
                );
            }
            if kind == Some(BoardKind::Togyz) {
                ck.at(
                    b.kind.span(),
                    "only dgt boards can be on a bus; remove bus from this togyz board".to_owned(),
                );
            }
            let serial = match &b.bus_serial {
                None => {
                    ck.at(
                        rb.span(),
                        format!("board {number} is on a bus and needs `bus_serial`; add e.g. bus_serial = \"01025\" (the board's serial number)"),
                    );
                    None
                }
                Some(v) => match crate::bus::address_from_serial(v.get_ref()) {
                    Some(address) => Some((v.get_ref().trim().to_owned(), address, v.span())),
                    None => {
                        ck.at(
                            v.span(),
                            format!("bus_serial {:?} is not a board serial number; valid: 1 to 5 digits, not all 0, e.g. \"01025\"", v.get_ref()),
                        );
                        None
                    }
                },
            };
            if let (Some(kind), Some(name), Some((serial, address, at))) = (kind, name, serial) {
                on_bus.push(PendingBusBoard {
                    bus: bus.clone(),
                    board: BoardConfig {
                        number,
                        kind,
                        name,
                        // The bus's, once the buses are read.
                        locator: Locator::Port(PathBuf::new()),
                        clock_layout: board_clock_layout(b, kind, ck),
                    },
                    serial,
                    address,
                    at,
                });
            }
            continue;
        }
        if let Some(v) = &b.bus_serial {
            ck.at(
                v.span(),
                format!("board {number}: bus_serial is for boards on a bus; add bus = \"…\" (a [[bus]] name) or remove it"),
            );
        }
        let locator = board_locator(number, rb, ck);
        if let Some(l) = &locator {
            let span = [&b.serial, &b.symlink, &b.port]
                .into_iter()
                .flatten()
                .next()
                .map_or(rb.span(), Spanned::span);
            if let Some(&(other, first)) = locators.get(l) {
                let (line, _) = line_column(ck.text, first);
                ck.at(
                    span,
                    format!("board {number} has the same {l} as board {other} (line {line}); each board needs its own device"),
                );
            } else {
                locators.insert(l.clone(), (number, span.start));
            }
        }
        let clock_layout = match kind {
            Some(kind) => board_clock_layout(b, kind, ck),
            None => ClockLayout::default(),
        };
        if let (Some(kind), Some(name), Some(locator)) = (kind, name, locator) {
            out.push(BoardConfig {
                number,
                kind,
                name,
                locator,
                clock_layout,
            });
        }
    }
    out.sort_by_key(|b| b.number);
    out
}

/// A board's `clock_layout` (dgt boards only).
fn board_clock_layout(b: &RawBoard, kind: BoardKind, ck: &mut Checker<'_>) -> ClockLayout {
    let Some(cl) = &b.clock_layout else {
        return ClockLayout::default();
    };
    match LAYOUTS.iter().find(|(_, s)| *s == cl.get_ref().trim()) {
        Some(&(layout, _)) if kind != BoardKind::Togyz => return layout,
        Some(_) => ck.at(
            cl.span(),
            "clock_layout is for dgt boards; remove it from this togyz board".to_owned(),
        ),
        None => ck.at(
            cl.span(),
            format!(
                "unknown clock_layout {:?}; valid: h17 (dgtbrd.h 2011-2017, the default), h13 (dgtbrd13.h 1998)",
                cl.get_ref()
            ),
        ),
    }
    ClockLayout::default()
}

/// The `[[bus]]` tables, each with the boards that name it.
fn buses(
    raw: &[Spanned<RawBus>],
    on_bus: Vec<PendingBusBoard>,
    boards: &[BoardConfig],
    ck: &mut Checker<'_>,
) -> Vec<BusConfig> {
    let mut out: Vec<BusConfig> = Vec::new();
    // Where each bus name and locator was first given.
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut locators: HashMap<Locator, usize> = HashMap::new();
    for rb in raw {
        let b = rb.get_ref();
        let Some(name) = ck.non_empty(&b.name, "bus name", "\"hall-a\"") else {
            continue;
        };
        if let Some(&first) = names.get(&name) {
            let (line, _) = line_column(ck.text, first);
            ck.at(
                b.name.span(),
                format!(
                    "bus name {name:?} is already used at line {line}; give each bus its own name"
                ),
            );
            continue;
        }
        names.insert(name.clone(), b.name.span().start);
        let what = format!("bus {name:?}");
        let Some(locator) = locator_from(
            &what,
            [
                ("serial", &b.serial),
                ("symlink", &b.symlink),
                ("port", &b.port),
            ],
            rb.span(),
            ck,
        ) else {
            continue;
        };
        let at = [&b.serial, &b.symlink, &b.port]
            .into_iter()
            .flatten()
            .next()
            .map_or(rb.span(), Spanned::span);
        if let Some(&first) = locators.get(&locator) {
            let (line, _) = line_column(ck.text, first);
            ck.at(
                at.clone(),
                format!("bus {name:?} has the same {locator} as the bus at line {line}; each bus needs its own device"),
            );
        } else if let Some(board) = boards.iter().find(|x| x.locator == locator) {
            ck.at(
                at.clone(),
                format!(
                    "bus {name:?} has the same {locator} as board {}; a port is a bus or one board",
                    board.number
                ),
            );
        }
        locators.insert(locator.clone(), at.start);
        out.push(BusConfig {
            name,
            locator,
            boards: Vec::new(),
        });
    }
    for p in on_bus {
        let wanted = p.bus.get_ref().trim();
        let Some(i) = out.iter().position(|b| b.name == wanted) else {
            let valid = if out.is_empty() {
                "no [[bus]] is defined; add one with name and port".to_owned()
            } else {
                format!(
                    "valid: {}",
                    out.iter()
                        .map(|b| format!("{:?}", b.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            ck.at(
                p.bus.span(),
                format!(
                    "board {}: bus {:?} is not defined; {valid}",
                    p.board.number,
                    p.bus.get_ref()
                ),
            );
            continue;
        };
        let bus = &mut out[i];
        if let Some(other) = bus.boards.iter().find(|o| o.address == p.address) {
            ck.at(
                p.at.clone(),
                format!(
                    "board {}: bus_serial {:?} gives bus address {} like board {} on bus {:?}; each board on a bus needs its own serial",
                    p.board.number, p.serial, p.address, other.board.number, bus.name
                ),
            );
            continue;
        }
        let mut board = p.board;
        board.locator = bus.locator.clone();
        bus.boards.push(BusBoardConfig {
            board,
            serial: p.serial,
            address: p.address,
        });
    }
    for bus in &mut out {
        bus.boards.sort_by_key(|b| b.board.number);
    }
    out
}

fn board_locator(number: u32, rb: &Spanned<RawBoard>, ck: &mut Checker<'_>) -> Option<Locator> {
    let b = rb.get_ref();
    locator_from(
        &format!("board {number}"),
        [
            ("serial", &b.serial),
            ("symlink", &b.symlink),
            ("port", &b.port),
        ],
        rb.span(),
        ck,
    )
}

/// The one locator of `what` (a board, a bus) among its serial, symlink and port keys.
fn locator_from(
    what: &str,
    keys: [(&str, &Option<Spanned<String>>); 3],
    table: Range<usize>,
    ck: &mut Checker<'_>,
) -> Option<Locator> {
    let given: Vec<(&str, &Spanned<String>)> = keys
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
        .collect();
    match given.as_slice() {
        [] => {
            ck.at(
                table,
                format!(
                    "{what} says nowhere how to find it; give exactly one of serial = \"…\" \
                     (USB serial number), symlink = \"/dev/eboard/…\" or port = \"/dev/ttyACM0\""
                ),
            );
            None
        }
        [(key, v)] => {
            let example = match *key {
                "serial" => "\"12345\"",
                "symlink" => "\"/dev/eboard/dgt-12345\"",
                _ => "\"/dev/ttyACM0\"",
            };
            let s = ck.non_empty(v, key, example)?;
            match *key {
                "serial" => Some(Locator::Serial(s)),
                "symlink" if !s.starts_with('/') => {
                    ck.at(
                        v.span(),
                        format!("symlink {s:?} is not an absolute path; valid: e.g. \"/dev/eboard/dgt-12345\""),
                    );
                    None
                }
                "symlink" => Some(Locator::Symlink(PathBuf::from(s))),
                _ => Some(Locator::Port(PathBuf::from(s))),
            }
        }
        [(first, _), (second, v), ..] => {
            ck.at(
                v.span(),
                format!(
                    "{what} gives both {first} and {second}; give exactly one of serial, symlink or port"
                ),
            );
            None
        }
    }
}

fn relay_config(relay: &RawRelay, ck: &mut Checker<'_>) -> RelayConfig {
    let mut out = RelayConfig::default();
    if let Some(c) = &relay.clk_format {
        match ClockFormat::ALL
            .iter()
            .find(|v| v.as_str() == c.get_ref().trim())
        {
            Some(&v) => out.clk_format = v,
            None => ck.at(
                c.span(),
                format!(
                    "unknown clk_format {:?}; valid: {}",
                    c.get_ref(),
                    list(&ClockFormat::ALL, ClockFormat::as_str)
                ),
            ),
        }
    }
    if let Some(f) = &relay.folder {
        out.folder = ck
            .required(
                &f.get_ref().dir,
                f.span(),
                "[relay.folder]",
                "dir",
                "\"/var/lib/boardscribe/relay\"",
            )
            .and_then(|d| ck.non_empty(d, "dir", "\"/var/lib/boardscribe/relay\""))
            .map(|d| FolderRelay {
                dir: PathBuf::from(d),
            });
    }
    if let Some(l) = &relay.lichess {
        let raw = l.get_ref();
        let round = ck
            .required(
                &raw.round,
                l.span(),
                "[relay.lichess]",
                "round",
                "\"AbCdEfGh\"",
            )
            .and_then(|r| ck.non_empty(r, "round", "\"AbCdEfGh\""));
        let token = ck
            .required(
                &raw.token_file,
                l.span(),
                "[relay.lichess]",
                "token_file",
                "\"/etc/boardscribe/lichess.token\"",
            )
            .and_then(|t| ck.non_empty(t, "token_file", "\"/etc/boardscribe/lichess.token\""));
        let base_url = match &raw.base_url {
            Some(u) => {
                let s = u.get_ref().trim().trim_end_matches('/');
                if s.starts_with("https://") || s.starts_with("http://") {
                    Some(s.to_owned())
                } else {
                    ck.at(
                        u.span(),
                        format!(
                            "base_url {:?} is not an http(s) URL; valid: e.g. \"{DEFAULT_LICHESS_URL}\"",
                            u.get_ref()
                        ),
                    );
                    None
                }
            }
            None => Some(DEFAULT_LICHESS_URL.to_owned()),
        };
        if let (Some(round), Some(token), Some(base_url)) = (round, token, base_url) {
            out.lichess = Some(LichessRelay {
                round,
                token_file: PathBuf::from(token),
                base_url,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
