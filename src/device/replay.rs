//! Replay: a capture file through exactly the pipeline `run` uses, with the capture's
//! timestamps as the clock.
//!
//! Flow: capture chunks → [`DgtPipeline::feed`] → store writes, committed in batches; at the end
//! the tracker is flushed so a move still in hand is recorded. The same capture always gives the
//! same records.

use std::{io::BufRead, path::Path};

use tracing::info_span;

use super::capture::{CaptureError, CaptureLines};
use crate::{
    Millis,
    arbiter::LawsSetup,
    game::Kind,
    pipeline::{DgtPipeline, PipelineStats},
    store::{GameId, Store, StoreError, Write},
    tracker::{Tracker, TrackerEvent},
};

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Capture { path: String, source: CaptureError },
    #[error("{path}: device {device:?} is not supported by replay yet")]
    Device { path: String, device: String },
    #[error("store: {0}")]
    Store(#[from] StoreError),
}

/// What one replay did.
#[derive(Clone, Debug, Default)]
pub struct ReplaySummary {
    pub board: String,
    pub stats: PipelineStats,
    pub games: Vec<GameId>,
    pub last_ms: Millis,
}

/// Writes are committed when this many are waiting (one transaction each).
const BATCH: usize = 4096;

/// Replays one capture file into `store`, on the board named by the capture's `board` header or
/// the file's stem, under the default Laws. `on_commit` sees every event after it is durable.
pub fn replay_file(
    store: &mut Store,
    path: &Path,
    on_commit: &mut dyn FnMut(&str, &TrackerEvent),
) -> Result<ReplaySummary, ReplayError> {
    replay_file_with(store, path, &LawsSetup::default(), on_commit)
}

/// [`replay_file`] under the given Laws.
pub fn replay_file_with(
    store: &mut Store,
    path: &Path,
    laws: &LawsSetup,
    on_commit: &mut dyn FnMut(&str, &TrackerEvent),
) -> Result<ReplaySummary, ReplayError> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| ReplayError::Io {
        path: shown.clone(),
        source,
    })?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "replay".to_string());
    replay_reader_with(
        store,
        &shown,
        &stem,
        std::io::BufReader::with_capacity(1 << 16, file),
        laws,
        on_commit,
    )
}

/// Replays a capture read from `reader` (named `source` in errors) on the board named by its
/// `board` header, or `default_board`, under the default Laws.
pub fn replay_reader(
    store: &mut Store,
    source: &str,
    default_board: &str,
    reader: impl BufRead,
    on_commit: &mut dyn FnMut(&str, &TrackerEvent),
) -> Result<ReplaySummary, ReplayError> {
    let laws = LawsSetup::default();
    replay_reader_with(store, source, default_board, reader, &laws, on_commit)
}

/// [`replay_reader`] under the given Laws.
pub fn replay_reader_with(
    store: &mut Store,
    source: &str,
    default_board: &str,
    reader: impl BufRead,
    laws: &LawsSetup,
    on_commit: &mut dyn FnMut(&str, &TrackerEvent),
) -> Result<ReplaySummary, ReplayError> {
    let mut lines = CaptureLines::new(reader);
    let mut bytes = Vec::with_capacity(256);
    let capture_err = |source_err| ReplayError::Capture {
        path: source.to_string(),
        source: source_err,
    };
    let mut next = lines.read_chunk(&mut bytes).map_err(capture_err)?;
    if let Some(device) = lines.device()
        && device != "dgt"
    {
        return Err(ReplayError::Device {
            path: source.to_string(),
            device: device.to_string(),
        });
    }
    let name = lines
        .headers()
        .iter()
        .find(|(k, _)| k == "board")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| default_board.to_string());
    let date = lines
        .headers()
        .iter()
        .find(|(k, _)| k == "date")
        .map(|(_, v)| v.clone());
    let span = info_span!("board", board = %name);
    let _enter = span.enter();

    let board = store.board(&name, Kind::Chess)?;
    let mut pipeline =
        DgtPipeline::new(board, Tracker::new(laws.tracker_settings()), laws.referee());
    let mut summary = ReplaySummary {
        board: name.clone(),
        ..ReplaySummary::default()
    };
    while let Some((t_ms, dir)) = next {
        summary.last_ms = t_ms;
        pipeline.feed(t_ms, dir, &bytes);
        if pipeline.pending_writes() >= BATCH || pipeline.raw_pending() >= 1 << 20 {
            let writes = pipeline.take_writes();
            commit(
                store,
                &name,
                writes,
                date.as_deref(),
                &mut summary,
                on_commit,
            )?;
        }
        next = lines.read_chunk(&mut bytes).map_err(capture_err)?;
    }
    pipeline.flush(summary.last_ms);
    let writes = pipeline.take_writes();
    commit(
        store,
        &name,
        writes,
        date.as_deref(),
        &mut summary,
        on_commit,
    )?;
    summary.stats = pipeline.stats();
    Ok(summary)
}

fn commit(
    store: &mut Store,
    name: &str,
    writes: Vec<Write>,
    date: Option<&str>,
    summary: &mut ReplaySummary,
    on_commit: &mut dyn FnMut(&str, &TrackerEvent),
) -> Result<(), ReplayError> {
    if writes.is_empty() {
        return Ok(());
    }
    let games = store.write_batch(&writes)?;
    for game in games {
        if !summary.games.contains(&game) {
            if let Some(date) = date {
                store.set_game_date(game, date)?;
            }
            summary.games.push(game);
        }
    }
    for w in writes {
        if let Write::Event { event, .. } = w {
            on_commit(name, &event);
        }
    }
    Ok(())
}
