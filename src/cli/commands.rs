//! The commands that are not the daemon: `config`, `devices`, `arbiter`, `replay` and
//! `import-memory`, each reading its arguments, doing its work through the library and printing
//! what it did (errors as `anyhow` at this edge).

use super::*;

pub(super) fn config_command(command: ConfigCommand) -> anyhow::Result<()> {
    match command {
        ConfigCommand::Example => {
            print!("{}", config::EXAMPLE);
            Ok(())
        }
        ConfigCommand::Check { files } => {
            // The same reading as `run`'s, token files included: what one refuses, so does
            // the other.
            let mut errors = 0;
            let mut read = Vec::new();
            for file in &files {
                match Config::load_with(Some(file), ConfigOverrides::default(), FileChecks::ALL) {
                    Ok(c) => {
                        for w in &c.warnings {
                            eprintln!("{w}");
                        }
                        // The NATS TLS and credentials files, read as the client reads them.
                        // `run` logs these and records all the same; here they are mistakes.
                        let nats = c.cluster.as_ref().map_or_else(Vec::new, |cluster| {
                            crate::cluster::security::check_files(
                                cluster,
                                std::time::SystemTime::now(),
                            )
                        });
                        for p in &nats {
                            let level = if p.is_warning() { "warning: " } else { "" };
                            eprintln!("{}: [cluster] {level}{p}", file.display());
                        }
                        let bad = nats.iter().filter(|p| !p.is_warning()).count();
                        errors += bad;
                        if bad == 0 {
                            println!("{}: ok", file.display());
                            print!("{}", c.summary());
                        } else if files.len() > 1 {
                            eprintln!("{}: {bad} error(s)", file.display());
                        }
                        read.push((file.as_path(), c));
                    }
                    Err(ConfigError::Invalid(found)) => {
                        for d in &found {
                            eprintln!("{d}");
                        }
                        if files.len() > 1 {
                            eprintln!("{}: {} error(s)", file.display(), found.len());
                        }
                        errors += found.len();
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            let together: Vec<(&std::path::Path, &Config)> =
                read.iter().map(|(p, c)| (*p, c)).collect();
            let across = config::event_mistakes(&together);
            for m in &across {
                eprintln!("{m}");
            }
            errors += across.len();
            match (errors, files.as_slice()) {
                (0, _) => Ok(()),
                (n, [one]) if across.is_empty() => bail!("{}: {n} error(s)", one.display()),
                (n, _) => bail!("{n} error(s) in {} files", files.len()),
            }
        }
    }
}

pub(super) fn devices(
    config: Option<&std::path::Path>,
    sysfs: &std::path::Path,
    probe: bool,
    probe_ports: &[PathBuf],
) -> anyhow::Result<()> {
    let (boards, buses) = match config {
        Some(path) => {
            let c = Config::load(Some(path), ConfigOverrides::default())?;
            (c.boards, c.buses)
        }
        None => (Vec::new(), Vec::new()),
    };
    let ports = discover::list_ports(sysfs)?;
    print!("{}", discover::describe(&ports, &boards));
    print!("{}", busy_ports(&ports, &boards, &buses));
    let rt = tokio::runtime::Runtime::new()?;
    // Unclaimed USB ports when asked, and the ports named: (path, USB serial number).
    let unclaimed = ports.iter().filter(|p| {
        p.usb.as_ref().is_some_and(|u| {
            matches!(
                discover::classify(u),
                discover::Looks::Other | discover::Looks::MaybeDgt
            )
        }) && discover::configured_board(&boards, p).is_none()
    });
    let to_probe: Vec<(PathBuf, Option<String>)> = unclaimed
        .filter(|_| probe)
        .map(|p| {
            (
                p.path.clone(),
                p.usb.as_ref().and_then(|u| u.serial.clone()),
            )
        })
        .chain(probe_ports.iter().map(|p| (p.clone(), None)))
        .collect();
    for (path, serial) in &to_probe {
        let shown = path.display();
        match rt.block_on(probe::probe_port(path, probe::ANSWER_WAIT)) {
            Ok(Some(found)) => {
                println!("{shown}: {found}");
                if let Some(serial) = serial {
                    println!(
                        "  to name it in udev/70-boardscribe.rules: {}",
                        probe::udev_line(found.kind, serial)
                    );
                }
            }
            Ok(None) => {
                let asked: Vec<&str> = BoardKind::ALL.iter().map(|k| k.name()).collect();
                println!("{shown}: no board answered (asked as {})", asked.join(", "));
            }
            Err(e) => println!("{shown}: not asked: {e}"),
        }
    }
    if !buses.is_empty() {
        // A quick broadcast ping on every configured bus.
        let settings = crate::bus::MasterSettings::default();
        for bus in &buses {
            let found = rt.block_on(crate::daemon::bus::ping_bus(bus, sysfs, &settings));
            print!("{}", crate::daemon::bus::describe_bus(bus, &found));
        }
    }
    Ok(())
}

pub(super) fn open_existing(db: &std::path::Path) -> anyhow::Result<Store> {
    if !db.exists() {
        bail!("{}: no such database", db.display());
    }
    Store::open(db).with_context(|| format!("opening {}", db.display()))
}

/// An existing database to read from: as [`open_existing`], but a damaged one (which no
/// command may write to) is still read, as far as it reads, with a warning, so that what is
/// left can be exported or looked at.
pub(super) fn open_to_read(db: &std::path::Path) -> anyhow::Result<Store> {
    match open_existing(db) {
        Err(e)
            if matches!(
                e.downcast_ref(),
                Some(crate::store::StoreError::Damaged { .. })
            ) =>
        {
            eprintln!("boardscribe: warning: {e:#}");
            eprintln!("boardscribe: warning: reading what still reads; nothing is written");
            Store::open_read_only(db).with_context(|| format!("opening {}", db.display()))
        }
        other => other,
    }
}

/// The author of a decision: the one given, else `$USER`, else "arbiter".
pub(super) fn author(given: Option<String>) -> String {
    given
        .or_else(|| std::env::var("USER").ok())
        .filter(|a| !a.trim().is_empty())
        .unwrap_or_else(|| "arbiter".to_owned())
}

/// Wall-clock ms since the Unix epoch: the time of a decision, read here at the binary's edge.
pub(super) fn now_ms() -> anyhow::Result<u64> {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .context("the system clock is before 1970")?;
    Ok(u64::try_from(since.as_millis())?)
}

pub(super) fn replay(
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
        let summary = crate::replay::replay_file_with(&mut store, path, laws, &mut print)?;
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
pub(super) fn import_memory(
    db: &std::path::Path,
    port: Option<&std::path::Path>,
    from: Option<&std::path::Path>,
    number: Option<u32>,
    timeout: u64,
    variant: Variant,
) -> anyhow::Result<()> {
    use crate::{
        device::{self, Direction},
        game::Kind,
        memory,
        store::{ImportedGame, RawBuffer},
    };
    let (source, bytes, sent) = match (port, from) {
        (Some(port), _) => {
            let rt = tokio::runtime::Runtime::new()?;
            let wait = std::time::Duration::from_secs(timeout);
            let bytes = rt.block_on(device::memory::fetch_from_port(port, wait))?;
            (port.display().to_string(), bytes, true)
        }
        (None, Some(file)) => (
            file.display().to_string(),
            device::memory::read_dump(file)?,
            false,
        ),
        (None, None) => bail!("say --port or --from"),
    };
    let log = memory::log_from_bytes(&bytes, &source)?;
    let tokens = memory::parse_log(&log).with_context(|| format!("{source}: board memory"))?;
    let at = now_ms()?;
    let mut notices = Vec::new();
    let games = memory::games_from_log_in(&tokens, at, variant, &mut notices);
    for notice in &notices {
        crate::recorder::log_notice(notice);
    }

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

/// One line per port that another process holds (the listed ports, and the configured boards'
/// and buses' own paths): who holds it, so that it can be freed before the round.
fn busy_ports(
    ports: &[discover::PortInfo],
    boards: &[crate::config::BoardConfig],
    buses: &[crate::config::BusConfig],
) -> String {
    use crate::{config::Locator, device::holders};
    let configured = boards
        .iter()
        .map(|b| &b.locator)
        .chain(buses.iter().map(|b| &b.locator))
        .filter_map(|l| match l {
            Locator::Port(p) | Locator::Symlink(p) => Some(p.clone()),
            Locator::Serial(_) | Locator::UsbPort(_) => None,
        });
    let mut seen = std::collections::BTreeSet::new();
    let mut out = String::new();
    for path in ports.iter().map(|p| p.path.clone()).chain(configured) {
        let node = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if !seen.insert(node) {
            continue;
        }
        if let Some(held) = holders::describe(&holders::holders_of(&path)) {
            out.push_str(&format!("{}: busy, {held}\n", path.display()));
        }
    }
    out
}
