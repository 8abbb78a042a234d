//! LiveChess-style folders: `tournament.json`, and a round's games as `round-N/game-M.pgn` and
//! `round-N/games.pgn` with `round-N/index.json` (its pairings, results, live flags: the fields
//! LiveChess writes, [`crate::export::livechess`]), kept up to date for folder-watching uploaders
//! (the Lichess broadcaster app, relay notes section 2). What spectators may see: no internal
//! comments unless the venue publishes them, each game as the delay shows it (the caller reads
//! the games as they stood; [`FolderRelay::run_every`] also runs on a tick while delayed).
//!
//! Flow: after a change, the caller reads the round's games from the store
//! ([`Store::round_games`](crate::store::Store::round_games)) and calls
//! [`FolderRelay::write_round`] (or runs [`FolderRelay::run`], which does so on each change, as a
//! pushed output turned by [`super::run`]); [`broadcast_games`] picks one game per board, each
//! is rendered with [`write_pgn`], and every file whose text changed is replaced atomically (a hidden temporary file
//! in the same folder, fsync, rename, fsync of the folder). Unchanged files are not touched, so
//! watchers see a write only when a game changed.
//!
//! `game-M.pgn` is written for games whose board has a number M; a game on a board without a number
//! is only in `games.pgn` (after the numbered ones, by board name), as watchers that prefer
//! `game-M.pgn` files would mis-number it. `game-M.pgn` files of boards no longer in the round are
//! removed.

use std::{
    fs,
    io::{self, Write as _},
    path::{Path, PathBuf},
    sync::Arc,
};

use serde::Deserialize;
use tokio::sync::watch;

use super::{Output, Turn, Wake};

use crate::{
    export::{
        livechess::{FolderRound, round_index_json, tournament_json},
        pgn::{ClockFormat, write_pgn},
        publish::{Clocks, PgnStyle, Publication, TimeControlTag},
        round::broadcast_games,
    },
    store::GameRecord,
};

/// `[relay.folder]` in the venue config.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FolderConfig {
    /// The folder that holds `round-N/` folders.
    pub dir: PathBuf,
}

/// Errors of the folder writer.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> FolderError + '_ {
    move |source| FolderError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Keeps `dir/round-N/` up to date.
#[derive(Clone, Debug)]
pub struct FolderRelay {
    dir: PathBuf,
    publication: Publication,
}

impl FolderRelay {
    /// A writer into `dir` (created when first written).
    pub fn new(dir: impl Into<PathBuf>) -> FolderRelay {
        FolderRelay {
            dir: dir.into(),
            publication: Publication::default(),
        }
    }

    /// The same writer with clocks written in `clk`.
    pub fn with_clock_format(mut self, clk: ClockFormat) -> FolderRelay {
        self.publication.clk = clk;
        self
    }

    /// The same writer publishing as `publication` says (clocks, comments; the delay is the
    /// caller's: it hands over the games as they stood then).
    pub fn with_publication(mut self, publication: Publication) -> FolderRelay {
        self.publication = publication;
        self
    }

    /// A writer for the `[relay.folder]` config.
    pub fn from_config(config: &FolderConfig) -> FolderRelay {
        FolderRelay::new(&config.dir)
    }

    /// The folder of round `round`.
    pub fn round_dir(&self, round: u32) -> PathBuf {
        self.dir.join(format!("round-{round}"))
    }

    /// Writes the whole folder for `f`: `tournament.json`, and in `round-N/` the games
    /// ([`FolderRelay::write_round`]) and `index.json`; how many files changed.
    pub fn write_folder(&self, f: &FolderRound) -> Result<usize, FolderError> {
        let mut changed = self.write_round(f.round, &f.games)?;
        let dir = self.round_dir(f.round);
        let json = |v: serde_json::Value| {
            let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
            text.push('\n');
            text
        };
        let index = replace(&dir, "index.json", &json(round_index_json(f)))?;
        if index {
            sync_dir(&dir)?;
        }
        fs::create_dir_all(&self.dir).map_err(io_err(&self.dir))?;
        let tournament = replace(&self.dir, "tournament.json", &json(tournament_json(f)))?;
        if tournament {
            sync_dir(&self.dir)?;
        }
        changed += usize::from(index) + usize::from(tournament);
        Ok(changed)
    }

    /// Writes round `round` from `games` (games of other rounds are ignored); returns how many
    /// files were written or removed (0 when nothing changed).
    pub fn write_round(&self, round: u32, games: &[GameRecord]) -> Result<usize, FolderError> {
        let dir = self.round_dir(round);
        fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let selected = broadcast_games(games, round);
        // What spectators may read: no clock tags (files change with the moves only).
        let style = PgnStyle {
            clk: self.publication.clk,
            internal: self.publication.comments,
            clocks: Clocks::Off,
            time_control: TimeControlTag::Standard,
        };
        let mut changed = 0;
        let mut numbers = Vec::new();
        for game in &selected {
            if let Some(n) = game.board_no {
                numbers.push(n);
                changed += usize::from(replace(
                    &dir,
                    &format!("game-{n}.pgn"),
                    &write_pgn([game], &style),
                )?);
            }
        }
        let all = write_pgn(&selected, &style);
        let games_pgn = dir.join("games.pgn");
        if selected.is_empty() {
            changed += usize::from(remove(&games_pgn)?);
        } else {
            changed += usize::from(replace(&dir, "games.pgn", &all)?);
        }
        for entry in fs::read_dir(&dir).map_err(io_err(&dir))? {
            let entry = entry.map_err(io_err(&dir))?;
            let name = entry.file_name();
            let stale = name
                .to_str()
                .and_then(game_file_number)
                .is_some_and(|n| !numbers.contains(&n));
            if stale {
                changed += usize::from(remove(&entry.path())?);
            }
        }
        if changed > 0 {
            sync_dir(&dir)?;
        }
        Ok(changed)
    }
}

impl FolderRelay {
    /// Writes the round now and after every change on `changes`, until the sender is dropped.
    ///
    /// `round_games` reads the current round and its games (e.g. `Store::round_info` and
    /// `Store::round_games`), `None` while no round is set; it and the writing run on a blocking
    /// thread. A failure is logged and the next change tries again.
    pub async fn run<F, E>(self, changes: watch::Receiver<u64>, round_games: F)
    where
        F: Fn() -> Result<Option<(u32, Vec<GameRecord>)>, E> + Send + Sync + 'static,
        E: std::fmt::Display + Send + 'static,
    {
        self.run_every(changes, None, move || {
            round_games().map(|r| {
                r.map(|(round, games)| FolderRound {
                    round,
                    games,
                    ..FolderRound::default()
                })
            })
        })
        .await;
    }

    /// [`FolderRelay::run`], also every `tick` if given (a delayed broadcast: the window slides
    /// with no change to the store); `read` gives the whole folder (event, rounds, pairings).
    pub async fn run_every<F, E>(
        self,
        changes: watch::Receiver<u64>,
        tick: Option<std::time::Duration>,
        read: F,
    ) where
        F: Fn() -> Result<Option<FolderRound>, E> + Send + Sync + 'static,
        E: std::fmt::Display + Send + 'static,
    {
        let output = FolderOutput {
            relay: Arc::new(self),
            read,
        };
        super::run(output, Wake::Changes { changes, tick }).await;
    }
}

/// The folder as a pushed output: each turn reads the round and writes the files that changed.
struct FolderOutput<F> {
    relay: Arc<FolderRelay>,
    read: F,
}

impl<F, E> Output for FolderOutput<F>
where
    F: Fn() -> Result<Option<FolderRound>, E> + Send + Sync + 'static,
    E: std::fmt::Display + Send + 'static,
{
    type Body = FolderRound;
    type Error = E;

    fn name(&self) -> &'static str {
        "folder"
    }

    fn read(&mut self, _now_ms: crate::Millis) -> Result<Option<FolderRound>, E> {
        (self.read)()
    }

    async fn publish(&mut self, round: FolderRound) -> Turn {
        let relay = Arc::clone(&self.relay);
        let n = round.round;
        match tokio::task::spawn_blocking(move || relay.write_folder(&round)).await {
            Ok(Ok(0)) => {}
            Ok(Ok(changed)) => tracing::debug!(round = n, changed, "round folder updated"),
            Ok(Err(e)) => tracing::error!(error = %e, "round folder not updated"),
            Err(e) => tracing::error!(error = %e, "round folder writer failed"),
        }
        Turn::Done
    }
}

/// `M` of a `game-M.pgn` file name.
fn game_file_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("game-")?.strip_suffix(".pgn")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Replaces `dir/name` with `text` atomically unless it already holds it; whether it wrote.
fn replace(dir: &Path, name: &str, text: &str) -> Result<bool, FolderError> {
    let path = dir.join(name);
    match fs::read(&path) {
        Ok(old) if old == text.as_bytes() => return Ok(false),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(&path)(e)),
    }
    // Hidden and not `.pgn`, so watchers never read a half-written file.
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()
    })();
    if let Err(e) = written.and_then(|()| fs::rename(&tmp, &path)) {
        remove_quietly(&tmp);
        return Err(io_err(&path)(e));
    }
    Ok(true)
}

/// Best effort: a temporary file left by a failed write; the failure itself is what is reported.
fn remove_quietly(path: &Path) {
    if let Err(e) = fs::remove_file(path) {
        tracing::debug!(path = %path.display(), error = %e, "temporary file not removed");
    }
}

/// Removes `path` if it exists; whether it did.
fn remove(path: &Path) -> Result<bool, FolderError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err(path)(e)),
    }
}

/// Makes the renames in `dir` durable.
fn sync_dir(dir: &Path) -> Result<(), FolderError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_file_names() {
        assert_eq!(game_file_number("game-12.pgn"), Some(12));
        assert_eq!(game_file_number("game-.pgn"), None);
        assert_eq!(game_file_number("game-1a.pgn"), None);
        assert_eq!(game_file_number("games.pgn"), None);
        assert_eq!(game_file_number(".game-3.pgn.77.tmp"), None);
    }
}
