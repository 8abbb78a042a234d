//! The pushed publications, the same at a hall's `run` and at the event node: the LiveChess
//! folder and the Lichess push queues, each following the change signal (and a tick while the
//! broadcast is delayed) through a read-only connection of its own, publishing the current
//! round as the public sees it (as it stood the delay ago).

use std::{
    collections::{HashMap, HashSet},
    path::PathBuf,
    sync::Mutex,
    time::Duration,
};

use tokio::{sync::watch, task::JoinSet};
use tracing::warn;

use crate::{
    broadcast::{
        Reader,
        folder::FolderRelay,
        lichess::{
            LichessClient, LichessQueue, LichessTarget, PushError, QueuedBody, Token,
            plan::{self, LichessRounds},
        },
        public::{self, Shown},
    },
    config::LichessRelay,
    export::{livechess::FolderRound, publish::Publication},
};

/// What the folder writes at `now_ms`, read through `reader`: the current round's games as
/// the public sees them then, its pairings, the event and its rounds; `None` while no round is
/// set.
fn folder_round(
    reader: &Reader,
    publication: &Publication,
    now_ms: u64,
) -> Result<Option<FolderRound>, crate::store::StoreError> {
    reader.with(|s| {
        let Some(round) = s.round_info()?.map(|i| i.round) else {
            return Ok(None);
        };
        Ok(Some(FolderRound {
            round,
            games: public::view(s, Shown::Round(round), publication, now_ms)?,
            event: s.event()?,
            rounds: s.rounds()?,
            pairings: s.pairings(round)?,
        }))
    })
}

/// The queues of `[relay.lichess]`: the entries with the same Lichess and token file share
/// one (Lichess asks for one request at a time per token).
pub fn lichess_queues(entries: &[LichessRelay]) -> Result<Vec<LichessQueue>, PushError> {
    let mut queues: Vec<(String, PathBuf, LichessQueue)> = Vec::new();
    for e in entries {
        let target = LichessTarget {
            rounds: e.rounds.clone(),
            boards: e.boards.clone(),
        };
        match queues
            .iter_mut()
            .find(|(base, file, _)| *base == e.base_url && *file == e.token_file)
        {
            Some((_, _, q)) => q.targets.push(target),
            None => {
                let client = LichessClient::new(&e.base_url, &Token::from_file(&e.token_file)?)?;
                for id in target.rounds.ids() {
                    client.url(id)?;
                }
                queues.push((
                    e.base_url.clone(),
                    e.token_file.clone(),
                    LichessQueue {
                        client,
                        targets: vec![target],
                    },
                ));
            }
        }
    }
    Ok(queues.into_iter().map(|(_, _, q)| q).collect())
}

/// What the folder and Lichess relays publish, and how: the same at a hall's `run` and at the
/// event node.
pub struct Publications {
    pub db: PathBuf,
    pub folder: Option<FolderRelay>,
    pub lichess: Vec<LichessQueue>,
    pub publication: Publication,
    pub slice: usize,
}

impl Publications {
    /// Starts each relay on `relays`: each follows `changes` (and a tick while the broadcast
    /// is delayed) through a read-only connection of its own.
    pub fn spawn(self, relays: &mut JoinSet<()>, changes: &watch::Sender<u64>) {
        let Publications {
            db,
            folder,
            lichess,
            publication,
            slice,
        } = self;
        // A delayed broadcast moves on with time, not only with the store.
        let tick = (publication.delay_ms > 0).then_some(Duration::from_secs(1));
        if let Some(folder) = folder {
            let reader = Reader::new(&db);
            relays.spawn(folder.with_publication(publication).run_every(
                changes.subscribe(),
                tick,
                move || folder_round(&reader, &publication, crate::device::serial::now_ms()),
            ));
        }
        for queue in lichess {
            let reader = Reader::new(&db);
            relays.spawn(crate::broadcast::lichess::run_queue(
                queue.client,
                changes.subscribe(),
                tick,
                lichess_bodies(reader, queue.targets, publication, slice),
            ));
        }
    }
}

/// What a push queue's `targets` push at each turn: each due round's body as the public sees
/// it (as it stood the delay ago), by [`plan::round_body`]; the games once pushed to a round
/// stay in its body while this process runs.
fn lichess_bodies(
    reader: Reader,
    targets: Vec<LichessTarget>,
    publication: Publication,
    slice: usize,
) -> impl Fn() -> Result<Vec<QueuedBody>, crate::store::StoreError> + Send + Sync + 'static {
    #[derive(Default)]
    struct State {
        /// Per target: the event round `round = "…"` took first.
        pinned: Vec<Option<u32>>,
        /// Per (target, event round): the games pushed.
        pushed: HashMap<(usize, u32), plan::Pushed>,
        /// Warned of: (target, event round) left out by `slice` or by a `round = "…"`.
        warned: HashSet<(usize, u32)>,
    }
    let state = Mutex::new(State {
        pinned: vec![None; targets.len()],
        ..State::default()
    });
    move || {
        let now = crate::device::serial::now_ms();
        let style = publication.lichess_style();
        let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
        let State {
            pinned,
            pushed,
            warned,
        } = &mut *state;
        reader.with(|s| {
            let Some(current) = s.round_info()?.map(|i| i.round) else {
                return Ok(Vec::new());
            };
            let mut out = Vec::new();
            for (i, target) in targets.iter().enumerate() {
                let due = target.rounds.due(current, &mut pinned[i]);
                if let (LichessRounds::Current(id), [(taken, _)]) = (&target.rounds, due.as_slice())
                    && *taken != current
                    && warned.insert((i, current))
                {
                    warn!(lichess_round = %id, taken, current,
                        "round {current} started: it is not pushed, as `round = \"{id}\"` is \
                         round {taken}'s; map each event round to its Lichess round: \
                         rounds = {{ {taken} = \"{id}\", {current} = \"…\" }}");
                }
                for (round, id) in due {
                    let games = public::view(s, Shown::Round(round), &publication, now)?;
                    let body = plan::round_body(
                        &games,
                        round,
                        target.boards.as_ref(),
                        slice,
                        &style,
                        pushed.entry((i, round)).or_default(),
                    );
                    if body.left_out > 0 && warned.insert((i, round)) {
                        warn!(lichess_round = %id, round, left_out = body.left_out, slice,
                            "a Lichess round takes at most `slice` games: the rest are not \
                             pushed; give each [[relay.lichess]] its boards (boards = \"1-64\")");
                    }
                    out.push(QueuedBody {
                        round_id: id.to_owned(),
                        pgn: body.pgn,
                        finished: body.finished,
                    });
                }
            }
            Ok(out)
        })
    }
}
