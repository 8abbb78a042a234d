//! Replay: a capture file through exactly the recorder `run` uses, with the capture's
//! timestamps as the clock.
//!
//! Flow: capture chunks → [`Pipeline::feed`] (a DGT chessboard's, or a togyz pit board's for a
//! capture whose `device` is `togyz`) → store writes, committed in batches; at the end the tracker
//! is flushed so a move still in hand is recorded. The same capture always gives the same records.

use std::{io::BufRead, path::Path};

use tracing::info_span;

use crate::capture::{CaptureError, CaptureLines, LEARNT_HEADER};
use crate::{
    Millis,
    arbiter::LawsSetup,
    boards::WithBoard,
    device::Direction,
    game::GameKind,
    kind::BoardKind,
    pipeline::{Board, Pipeline, PipelineStats},
    recorder::Recorder,
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
    #[error("{path}: device {device:?} is not a kind of board replay reads; it reads: {known}")]
    Device {
        path: String,
        device: String,
        /// Every device name replay reads.
        known: String,
    },
    #[error("store: {0}")]
    Store(#[from] StoreError),
    #[error("{path}: the `learnt` header does not read: {why}")]
    Learnt { path: String, why: String },
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
    let next = lines.read_chunk(&mut bytes).map_err(capture_err)?;
    let header = |key: &str| {
        lines
            .headers()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let name = header("board").unwrap_or_else(|| default_board.to_string());
    let date = header("date");
    let span = info_span!("board", board = %name);
    let _enter = span.enter();
    let run = Run {
        store,
        lines,
        bytes,
        next,
        source,
        date,
        summary: ReplaySummary {
            board: name.clone(),
            ..ReplaySummary::default()
        },
        on_commit,
    };
    match run.lines.device() {
        Some("dgt-bus") => {
            // One board's share of a bus: the commands to its address and its bus replies.
            run.with::<crate::bus::DgtBus>(laws)
        }
        // A capture without a device is a DGT board's (the first captures named none).
        None => run.with::<crate::pipeline::Dgt>(laws),
        Some(device) => match BoardKind::from_name(device) {
            Some(kind) => kind.with_board(Replay { run, laws }),
            None => Err(ReplayError::Device {
                path: source.to_string(),
                device: device.to_string(),
                known: BoardKind::ALL
                    .iter()
                    .map(|k| k.name())
                    .chain(["dgt-bus"])
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        },
    }
}

/// A replay of a board of the kind [`BoardKind::with_board`] gives.
struct Replay<'a, R> {
    run: Run<'a, R>,
    laws: &'a LawsSetup,
}

impl<R: BufRead> WithBoard for Replay<'_, R> {
    type Output = Result<ReplaySummary, ReplayError>;

    fn run<B: Board>(self) -> Self::Output {
        self.run.with::<B>(self.laws)
    }
}

/// A replay under way: the capture still to read and what was committed so far.
struct Run<'a, R> {
    store: &'a mut Store,
    lines: CaptureLines<R>,
    bytes: Vec<u8>,
    next: Option<(Millis, Direction)>,
    source: &'a str,
    date: Option<String>,
    summary: ReplaySummary,
    on_commit: &'a mut dyn FnMut(&str, &TrackerEvent),
}

impl<R: BufRead> Run<'_, R> {
    /// Replays the capture on a `B` board under `laws`.
    fn with<B: Board>(self, laws: &LawsSetup) -> Result<ReplaySummary, ReplayError> {
        let board = self
            .store
            .board(&self.summary.board, <B::Game as GameKind>::KIND)?;
        let tracker = Tracker::new(B::settings(laws));
        let mut pipeline = Pipeline::<B>::new(tracker, B::judge(laws));
        // What the board's sensor had learnt when the capture began (a calibration), as the
        // daemon gives it back to a board it opens.
        let learnt = self
            .lines
            .headers()
            .iter()
            .find(|(k, _)| k == LEARNT_HEADER);
        if let Some((_, text)) = learnt {
            pipeline
                .restore_sensor(text)
                .map_err(|why| ReplayError::Learnt {
                    path: self.source.to_string(),
                    why,
                })?;
        }
        self.drive(Recorder::new(board, pipeline))
    }

    /// Feeds the rest of the capture through `recorder`, committing in batches.
    fn drive<B: Board>(mut self, mut recorder: Recorder<B>) -> Result<ReplaySummary, ReplayError> {
        while let Some((t_ms, dir)) = self.next {
            self.summary.last_ms = t_ms;
            recorder.feed(t_ms, dir, &self.bytes);
            if recorder.pending_writes() >= BATCH || recorder.raw_pending() >= 1 << 20 {
                self.commit(recorder.take_writes())?;
            }
            self.next =
                self.lines
                    .read_chunk(&mut self.bytes)
                    .map_err(|source| ReplayError::Capture {
                        path: self.source.to_string(),
                        source,
                    })?;
        }
        recorder.pipeline.flush(self.summary.last_ms);
        self.commit(recorder.take_writes())?;
        self.summary.stats = recorder.stats().pipeline;
        Ok(self.summary)
    }

    fn commit(&mut self, writes: Vec<Write>) -> Result<(), ReplayError> {
        let name = self.summary.board.clone();
        commit(
            self.store,
            &name,
            writes,
            self.date.as_deref(),
            &mut self.summary,
            self.on_commit,
        )
    }
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
