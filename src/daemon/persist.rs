//! A board's writes to the store writer and back: a batch sent, its events announced once durable
//! (printed, to the hub, to the metrics), a batch refused (a full disk) put back for a later
//! attempt; and an arbiter's change to a game in progress applied to the store, then to the
//! board's recorder. A game the store closed (the arbiter's final result, from the admin API or
//! from another process) is closed on the board too: the board no longer extends it.

use std::time::{Duration, Instant};

use tracing::{debug, error, info, warn};

use super::context::{Attempt, BoardRef, Ctx, Refusal};
use crate::{
    arbiter::IrregularityKind,
    decider::desk::{Applied, DeskOrder, RecordChange},
    device::serial::now_ms,
    metrics::Metrics,
    phrase::Phrase,
    pipeline::Board,
    recorder::Recorder,
    store::{ClosedGame, GameRecord, Write},
    tracker::TrackerEvent,
};

/// How long a board waits after the store refused its first batch before trying again.
pub(super) const RETRY_FIRST: Duration = Duration::from_secs(1);

/// How long a board waits between later attempts while the store refuses its writes.
pub const RETRY_EVERY: Duration = Duration::from_secs(2);

/// Writes what the recorder has and announces its events once they are durable; a batch the
/// store refused goes back to the recorder, ahead of newer writes, for the next attempt, which
/// waits [`RETRY_FIRST`], then [`RETRY_EVERY`] (unless `attempt` is [`Attempt::Now`]).
pub(super) async fn persist<B: Board>(
    recorder: &mut Recorder<B>,
    board: &mut BoardRef,
    ctx: &Ctx,
    attempt: Attempt,
) {
    report_stats(recorder, board, &ctx.metrics);
    if attempt == Attempt::WhenDue
        && board
            .refused
            .as_ref()
            .is_some_and(|r| Instant::now() < r.next_try)
    {
        return;
    }
    let writes = recorder.take_writes();
    if writes.is_empty() {
        return;
    }
    match ctx.writer.write_games(writes).await {
        Ok((writes, report)) => {
            let games = &report.touched;
            for closed in &report.closed {
                game_closed_in_store(closed, recorder, board, ctx, &writes);
            }
            if let Some(r) = board.refused.take() {
                info!(
                    after_s = r.since.elapsed().as_secs(),
                    refused_batches = r.batches,
                    writes = writes.len(),
                    "the store took what this board kept while it refused; recording resumed"
                );
                if let Some(hub) = &ctx.hub {
                    hub.store_status(&board.name, None);
                }
            }
            for w in &writes {
                let Write::Event { event, .. } = w else {
                    continue;
                };
                match event {
                    TrackerEvent::Move(_) => ctx.metrics.move_recorded(),
                    TrackerEvent::Irregularity { kind, detail, .. } => {
                        if *kind == IrregularityKind::ThreadLost {
                            warn!(%detail, "thread lost: the record does not reach the board");
                        }
                        ctx.metrics.irregularity(kind.as_str())
                    }
                    TrackerEvent::Recovered {
                        from_ply,
                        to_ply,
                        source,
                        ..
                    } => info!(
                        from_ply,
                        to_ply,
                        source = source.kind().as_str(),
                        "plies missed in a gap recovered"
                    ),
                    TrackerEvent::GameStarted { .. } => {
                        // The game it opened is the last one the batch touched first.
                        if let Some(game) = games.last() {
                            tracing::Span::current().record("game", game.0);
                            info!(game = game.0, "game started");
                            board.game = Some(*game);
                        }
                        if !board.playing {
                            board.playing = true;
                            ctx.metrics.game_started();
                        }
                    }
                    TrackerEvent::GameEnded { .. } if board.playing => {
                        board.playing = false;
                        ctx.metrics.game_over();
                    }
                    _ => {}
                }
                (ctx.announce)(&board.name, event);
                if let Some(hub) = &ctx.hub {
                    hub.committed(&board.name, event);
                }
            }
        }
        Err((e, writes)) => {
            let now = Instant::now();
            let why = e.to_string();
            if matches!(e, super::writer::WriteError::WriterGone) {
                error!(cause = %e, "could not store; keeping the writes for the next attempt");
            } else {
                // The writer logs the store's failure once for every board.
                debug!(cause = %e, "could not store; keeping the writes for the next attempt");
            }
            let changed = match board.refused.as_mut() {
                Some(r) => {
                    r.batches += 1;
                    r.next_try = now + RETRY_EVERY;
                    let changed = r.error != why;
                    r.error = why.clone();
                    changed
                }
                None => {
                    board.refused = Some(Refusal {
                        since: now,
                        batches: 1,
                        error: why.clone(),
                        next_try: now + RETRY_FIRST,
                    });
                    true
                }
            };
            if changed && let Some(hub) = &ctx.hub {
                hub.store_status(&board.name, Some(&why));
            }
            if let Some(writes) = writes {
                recorder.requeue(writes);
            }
        }
    }
}

/// Carries out what the board's desk was handed: a decision on its record ([`take_change`]),
/// or the arbiter's request that its sensor learn the board again (answered at once: whether
/// its kind learns anything).
pub(super) async fn take_order<B: Board>(
    order: DeskOrder,
    recorder: &mut Recorder<B>,
    board: &mut BoardRef,
    ctx: &Ctx,
) {
    match order {
        DeskOrder::Change(change) => take_change(change, recorder, board, ctx).await,
        DeskOrder::Relearn { answer, .. } => {
            let learns = recorder.pipeline.relearn_sensor();
            if learns {
                info!("the arbiter asks the board's sensor to learn the board again");
            }
            let _ignored_if_asker_gone = answer.send(learns);
        }
    }
}

/// Carries out an arbiter's decision that changes the record of this board's game (see
/// [`crate::decider::desk`]): once everything the board recorded is durable, the decision is
/// applied to the store, and the recorder goes on from the record it leaves. A board whose
/// store refuses writes does not take it (the API says so; nothing changes).
async fn take_change<B: Board>(
    change: RecordChange,
    recorder: &mut Recorder<B>,
    board: &mut BoardRef,
    ctx: &Ctx,
) {
    persist(recorder, board, ctx, Attempt::Now).await;
    if board.refused.is_some() {
        warn!(
            game = change.game.0,
            "an arbiter's decision on this board's record waits: the store refuses its writes"
        );
        return;
    }
    let game = change.game;
    let applied = match tokio::task::spawn_blocking(change.apply).await {
        Ok(applied) => applied,
        Err(e) => {
            error!(cause = %e, game = game.0, "an arbiter's decision failed");
            return;
        }
    };
    let Some(Applied {
        moves,
        record_changed,
        closed,
        reopened,
    }) = applied
    else {
        return;
    };
    if board.game != Some(game) {
        return;
    }
    if let Some(open) = reopened {
        reopen(&open, recorder, board, ctx);
        return;
    }
    if closed && recorder.pipeline.close_game() {
        info!(
            game = game.0,
            "the arbiter's result closes the game: the board no longer extends it"
        );
        game_over(board, ctx);
    }
    if !record_changed {
        return;
    }
    if !recorder.pipeline.has_game() {
        // The game is over (the board no longer extends it): nothing to track from, but the
        // live page shows the record the arbiter left (a move corrected after the result).
        if let Some(hub) = &ctx.hub {
            hub.record_changed(&board.name, &moves);
        }
        return;
    }
    let how = Phrase::new("resolved.record_set").number("plies", moves.len() as u64);
    if recorder.pipeline.rebase(now_ms(), &moves, how.clone()) {
        info!(game = game.0, plies = moves.len(), "{how}");
        if let Some(hub) = &ctx.hub {
            hub.record_changed(&board.name, &moves);
        }
    } else {
        error!(
            game = game.0,
            "the record the arbiter left does not replay; the board goes on from its own"
        );
    }
    persist(recorder, board, ctx, Attempt::Now).await;
}

/// The arbiter undid the result that closed the board's game `open`: the board records it
/// again from its record, as after a restart, and the live page shows it going on.
fn reopen<B: Board>(
    open: &GameRecord,
    recorder: &mut Recorder<B>,
    board: &mut BoardRef,
    ctx: &Ctx,
) {
    let at = now_ms();
    let taken = recorder.pipeline.reopen(at, |settings, judge| {
        super::board::resume_tracker::<B>(settings, judge, open, at)
    });
    if !taken {
        error!(
            game = open.id.0,
            "the game the arbiter reopened does not replay; the board waits for a new game"
        );
        return;
    }
    info!(
        game = open.id.0,
        plies = open.moves.len(),
        "the arbiter's result undone: the board records the game again"
    );
    if !board.playing {
        board.playing = true;
        ctx.metrics.game_started();
    }
    if let Some(hub) = &ctx.hub {
        hub.record_changed(&board.name, &open.moves);
    }
}

/// The store found `closed` closed when this board wrote to it (a result the arbiter set from
/// another process, or the game's end): if it is the board's game, the board no longer extends
/// it (unless the batch began a new one) and the live page shows the result that stands.
fn game_closed_in_store<B: Board>(
    closed: &ClosedGame,
    recorder: &mut Recorder<B>,
    board: &mut BoardRef,
    ctx: &Ctx,
    writes: &[Write],
) {
    if board.game != Some(closed.game) {
        return;
    }
    let started = writes.iter().any(|w| {
        matches!(
            w,
            Write::Event {
                event: TrackerEvent::GameStarted { .. },
                ..
            }
        )
    });
    if let Some(hub) = &ctx.hub {
        hub.game_closed(&board.name, &closed.result, closed.termination.as_deref());
    }
    if !started && recorder.pipeline.close_game() {
        info!(
            game = closed.game.0,
            result = %closed.result,
            "the game is closed in the store: the board no longer extends it"
        );
        game_over(board, ctx);
    }
}

/// The board's game is over (for the games-live gauge).
fn game_over(board: &mut BoardRef, ctx: &Ctx) {
    if board.playing {
        board.playing = false;
        ctx.metrics.game_over();
    }
}

/// Adds what the recorder decoded since the last report to the metrics.
pub(super) fn report_stats<B: Board>(
    recorder: &Recorder<B>,
    board: &mut BoardRef,
    metrics: &Metrics,
) {
    let now = recorder.stats();
    let was = board.reported;
    if now != was {
        metrics.decoded(
            now.pipeline.frames.saturating_sub(was.pipeline.frames),
            now.pipeline
                .decode_warnings
                .saturating_sub(was.pipeline.decode_warnings),
            now.pipeline
                .bytes_skipped
                .saturating_sub(was.pipeline.bytes_skipped),
        );
        let dropped = now.raw_bytes_dropped.saturating_sub(was.raw_bytes_dropped);
        if dropped > 0 {
            metrics.raw_dropped(dropped);
        }
        board.reported = now;
    }
}
