//! The event node's commands to the halls: an arbiter's decision goes to the hall that owns the
//! board, a round start (or its undoing) and a round's pairings to every hall. Each hall stays the single writer
//! of its boards: it records the decision first, and the decision comes back to the event node
//! like any record.
//!
//! Flow: the event node's decider ([`crate::decider::Decider`]) hands what it does not
//! take alone to [`route`], which publishes a [`Command`] to the hall's command stream
//! (`BOARDSCRIBE_COMMANDS_<hall>`, durable: a hall that is down takes it when it is back) and,
//! for a decision, waits for the hall's [`Outcome`] on `boardscribe.outcomes.<id>` and then for
//! the decision's record to come back, so the arbiter's answer names the event node's own
//! decision. At the hall, [`take`] follows the command stream through a durable consumer and
//! runs each command through the hall's own decider (the board's task takes a decision between
//! two reads of its port), answers, and acknowledges. The hall holds one command at a time, in
//! the order sent. One its store could not take (it failed or was unavailable: a locked or full
//! disk) is answered as pending and taken again shortly, until it can be: nothing sent is
//! dropped. One held when the hall stops is handed back at once, one held by a hall killed is
//! given again [`ACK_WAIT`] later. A command delivered again finds its decision already recorded
//! (same game, time and author) or its round already started, and is not taken twice.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use async_nats::jetstream::{
    self,
    consumer::{AckPolicy, DeliverPolicy, pull},
    message::{AckKind, PublishMessage},
};
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};
use tracing::{error, info, warn};

use super::{ClusterError, lock};
use crate::{
    Millis,
    decider::{AdminAction, Decider, Refusal, Refused, RouteAnswer, Routed},
    pairings::Pairing,
    store::{GameId, Store, StoreError},
};

/// How long the event node waits for the hall's answer, then for the decision's record.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// A command to a hall.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Command {
    /// Unique; the hall answers on `boardscribe.outcomes.<id>`.
    pub id: String,
    /// When the event node took it (wall-clock ms): the decision's time at the hall too.
    pub at_ms: Millis,
    #[serde(flatten)]
    pub body: CommandBody,
}

/// What a command asks.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum CommandBody {
    /// A decision on the hall's game `game`.
    Decision { game: i64, decision: AdminAction },
    /// Round `round` starts (started by `by`).
    StartRound { round: u32, by: String },
    /// The start of round `round` is undone (by `by`).
    UndoRound { round: u32, by: String },
    /// Round `round`'s pairings.
    Pairings { round: u32, rows: Vec<Pairing> },
}

/// What the hall did with a command.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The decision is recorded as the hall's event `event`.
    Taken {
        event: i64,
    },
    /// Done (a round start, pairings).
    Done,
    Refused {
        refusal: Refusal,
    },
}

/// The stream of hall `hall`'s commands.
pub fn stream_name(hall: &str) -> String {
    format!("BOARDSCRIBE_COMMANDS_{hall}")
}

pub fn subject(hall: &str) -> String {
    format!("boardscribe.commands.{hall}")
}

pub fn outcome_subject(id: &str) -> String {
    format!("boardscribe.outcomes.{id}")
}

/// Hall `hall`'s command stream, created if needed (file storage, `replicas` servers; commands
/// kept a week).
pub async fn command_stream(
    js: &jetstream::Context,
    hall: &str,
    replicas: usize,
) -> Result<jetstream::stream::Stream, ClusterError> {
    js.get_or_create_stream(jetstream::stream::Config {
        name: stream_name(hall),
        subjects: vec![subject(hall)],
        storage: jetstream::stream::StorageType::File,
        num_replicas: replicas,
        max_age: Duration::from_secs(7 * 24 * 3600),
        duplicate_window: super::DUPLICATE_WINDOW,
        description: Some(format!(
            "boardscribe: the event node's commands to hall {hall}"
        )),
        ..Default::default()
    })
    .await
    .map_err(|e| ClusterError::Stream {
        stream: stream_name(hall),
        why: e.to_string(),
    })
}

/// The event node: carries what its decider routes to the halls until the decider is gone.
pub async fn route(
    client: async_nats::Client,
    store: Arc<Mutex<Store>>,
    halls: Vec<String>,
    replicas: usize,
    mut routed: mpsc::Receiver<Routed>,
) {
    let js = jetstream::new(client.clone());
    while let Some(r) = routed.recv().await {
        match r {
            Routed::Decision {
                game,
                action,
                at_ms,
                answer,
            } => {
                let (client, js, store) = (client.clone(), js.clone(), store.clone());
                tokio::spawn(async move {
                    let outcome =
                        decision(&client, &js, &store, replicas, game, action, at_ms).await;
                    let _ignored_if_asker_gone = answer.send(outcome);
                });
            }
            Routed::Round { n, by, at_ms } => {
                let body = CommandBody::StartRound { round: n, by };
                broadcast(&js, &halls, replicas, at_ms, body).await;
            }
            Routed::UndoRound { n, by, at_ms } => {
                let body = CommandBody::UndoRound { round: n, by };
                broadcast(&js, &halls, replicas, at_ms, body).await;
            }
            Routed::Pairings { round, rows } => {
                let body = CommandBody::Pairings { round, rows };
                broadcast(&js, &halls, replicas, crate::device::serial::now_ms(), body).await;
            }
        }
    }
}

/// Sends `body` to every hall, durably; a hall that is down takes it when it is back.
async fn broadcast(
    js: &jetstream::Context,
    halls: &[String],
    replicas: usize,
    at_ms: Millis,
    body: CommandBody,
) {
    for hall in halls {
        let command = Command {
            id: super::new_origin(),
            at_ms,
            body: body.clone(),
        };
        match send(js, hall, replicas, &command).await {
            Ok(()) => info!(hall, id = %command.id, "command sent to the hall"),
            Err(why) => error!(
                hall,
                cause = %why,
                "the command did not reach the broker: the hall does not have it"
            ),
        }
    }
}

/// Publishes `command` to `hall`'s stream and waits for the broker to keep it.
async fn send(
    js: &jetstream::Context,
    hall: &str,
    replicas: usize,
    command: &Command,
) -> Result<(), String> {
    command_stream(js, hall, replicas)
        .await
        .map_err(|e| e.to_string())?;
    let payload = serde_json::to_vec(command).map_err(|e| e.to_string())?;
    js.send_publish(
        subject(hall),
        PublishMessage::build()
            .payload(payload.into())
            .message_id(&command.id),
    )
    .await
    .map_err(|e| e.to_string())?
    .await
    .map_err(|e| e.to_string())?;
    Ok(())
}

fn refused(reason: Refused, message: String) -> RouteAnswer {
    RouteAnswer::Refused(Refusal::new(reason, message))
}

/// A decision on the event node's game `game`, through the hall that owns it.
async fn decision(
    client: &async_nats::Client,
    js: &jetstream::Context,
    store: &Arc<Mutex<Store>>,
    replicas: usize,
    game: GameId,
    action: AdminAction,
    at_ms: Millis,
) -> RouteAnswer {
    let owner = {
        let store = store.clone();
        tokio::task::spawn_blocking(move || lock(&store).replica_game(game)).await
    };
    let (hall, remote) = match owner {
        Ok(Ok(Some(owner))) => owner,
        Ok(Ok(None)) => {
            return refused(
                Refused::UnknownGame,
                format!("game {} is no hall's game at this event node", game.0),
            );
        }
        Ok(Err(e)) => return refused(Refused::Failed, e.to_string()),
        Err(e) => return refused(Refused::Failed, e.to_string()),
    };
    let command = Command {
        id: super::new_origin(),
        at_ms,
        body: CommandBody::Decision {
            game: remote,
            decision: action,
        },
    };
    // Listening before sending, so that a quick answer is not missed.
    let mut answers = match client.subscribe(outcome_subject(&command.id)).await {
        Ok(s) => s,
        Err(e) => {
            return refused(
                Refused::Unavailable,
                format!("the broker cannot be reached: {e}"),
            );
        }
    };
    if let Err(why) = send(js, &hall, replicas, &command).await {
        return refused(
            Refused::Unavailable,
            format!(
                "the broker did not take the decision for hall {hall} ({why}): nothing was sent; try again"
            ),
        );
    }
    let outcome = match tokio::time::timeout(ANSWER_WITHIN, answers.next()).await {
        Ok(Some(m)) => serde_json::from_slice::<Outcome>(&m.payload),
        _ => {
            return refused(
                Refused::Pending,
                format!(
                    "sent to hall {hall}, which has not answered within {} s: it takes the \
                     decision when it is back, and the record shows it then",
                    ANSWER_WITHIN.as_secs()
                ),
            );
        }
    };
    let event = match outcome {
        Ok(Outcome::Taken { event }) => event,
        Ok(Outcome::Refused { refusal }) => return RouteAnswer::Refused(refusal),
        Ok(Outcome::Done) => {
            return refused(Refused::Failed, format!("hall {hall} answered nothing"));
        }
        Err(e) => {
            return refused(
                Refused::Failed,
                format!("hall {hall}'s answer is unreadable: {e}"),
            );
        }
    };
    // The decision comes back like any record: answered with the event node's own.
    let deadline = tokio::time::Instant::now() + ANSWER_WITHIN;
    loop {
        let found = {
            let (store, hall) = (store.clone(), hall.clone());
            tokio::task::spawn_blocking(move || {
                let s = lock(&store);
                match s.replica_event(&hall, event)? {
                    Some(local) => Ok::<_, StoreError>(
                        s.decisions(game)
                            .map_err(|e| StoreError::Corrupt(e.to_string()))?
                            .into_iter()
                            .find(|d| d.id == local),
                    ),
                    None => Ok(None),
                }
            })
            .await
        };
        match found {
            Ok(Ok(Some(d))) => return RouteAnswer::Taken(Box::new(d)),
            Ok(Ok(None)) => {}
            Ok(Err(e)) => return refused(Refused::Failed, e.to_string()),
            Err(e) => return refused(Refused::Failed, e.to_string()),
        }
        if tokio::time::Instant::now() >= deadline {
            return refused(
                Refused::Pending,
                format!(
                    "hall {hall} took the decision (its event {event}); it has not reached the \
                     event node yet"
                ),
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A hall: takes the event node's commands through `decider` until `stop`.
pub async fn take(
    client: async_nats::Client,
    hall: String,
    replicas: usize,
    decider: Decider,
    mut stop: watch::Receiver<bool>,
) {
    let js = jetstream::new(client.clone());
    let mut said: Option<String> = None;
    loop {
        let result = take_from_stream(&client, &js, &hall, replicas, &decider, &mut stop).await;
        if *stop.borrow() {
            return;
        }
        if let Err(why) = result
            && said.as_ref() != Some(&why)
        {
            warn!(hall, cause = %why, "the event node's commands: following again shortly");
            said = Some(why);
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}

/// How long the broker waits for a hall to acknowledge a command before it gives it again: a
/// hall killed while holding one takes it again this soon after it is back.
const ACK_WAIT: Duration = Duration::from_secs(10);

/// How long a hall waits before taking again a command its store could not take.
const RETRY_AFTER: Duration = Duration::from_secs(3);

async fn take_from_stream(
    client: &async_nats::Client,
    js: &jetstream::Context,
    hall: &str,
    replicas: usize,
    decider: &Decider,
    stop: &mut watch::Receiver<bool>,
) -> Result<(), String> {
    let setup = async {
        let stream = command_stream(js, hall, replicas)
            .await
            .map_err(|e| e.to_string())?;
        follow_commands(&stream, hall).await
    };
    let mut messages = tokio::select! {
        m = setup => m?,
        _ = stop.wait_for(|s| *s) => return Ok(()),
    };
    loop {
        let m = tokio::select! {
            m = messages.next() => m,
            _ = stop.wait_for(|s| *s) => return Ok(()),
        };
        let Some(m) = m else { return Ok(()) };
        let m = m.map_err(|e| e.to_string())?;
        let command: Command = match serde_json::from_slice(&m.payload) {
            Ok(c) => c,
            Err(e) => {
                error!(hall, cause = %e, "an unreadable command: dropped");
                m.ack().await.map_err(|e| e.to_string())?;
                continue;
            }
        };
        let id = command.id.clone();
        let outcome = tokio::select! {
            o = run(hall, decider, command) => Some(o),
            _ = stop.wait_for(|s| *s) => None,
        };
        let Some(outcome) = outcome else {
            // Stopping with the command in hand: given again at once when the hall is back
            // (taken already, it is found recorded and not taken twice).
            let _ignored_if_gone = m.ack_with(AckKind::Nak(None)).await;
            return Ok(());
        };
        // A command its store could not take now is answered as pending and taken again.
        let (answer, retry) = match outcome {
            Outcome::Refused { refusal } if refusal.may_pass_later() => {
                warn!(hall, id = %id, why = %refusal.message, "the event node's command could not be taken now: taking it again shortly");
                let pending = Refusal::new(
                    Refused::Pending,
                    format!(
                        "hall {hall} could not take it now ({}): it takes it again shortly, \
                         and the record shows it then",
                        refusal.message
                    ),
                );
                (Outcome::Refused { refusal: pending }, true)
            }
            Outcome::Refused { refusal } => {
                warn!(hall, id = %id, why = %refusal.message, "the event node's command refused");
                (Outcome::Refused { refusal }, false)
            }
            done => (done, false),
        };
        let answer = serde_json::to_vec(&answer).map_err(|e| e.to_string())?;
        // Nobody may be listening any more (the event node restarted): the answer is a courtesy.
        let _ignored = client.publish(outcome_subject(&id), answer.into()).await;
        if retry {
            m.ack_with(AckKind::Nak(Some(RETRY_AFTER)))
                .await
                .map_err(|e| e.to_string())?;
        } else {
            m.ack().await.map_err(|e| e.to_string())?;
        }
    }
}

/// The hall's durable consumer of its command stream, followed from where it was left.
async fn follow_commands(
    stream: &jetstream::stream::Stream,
    hall: &str,
) -> Result<pull::Stream, String> {
    // Created, or brought to this configuration if an older daemon created it: one command
    // held at a time, in the order sent (a round's start before its decisions), and one held
    // by a hall that was killed is given again after `ACK_WAIT`.
    let consumer = stream
        .create_consumer(pull::Config {
            durable_name: Some(format!("boardscribe-hall-{hall}")),
            description: Some(format!(
                "boardscribe hall {hall}: the event node's commands"
            )),
            deliver_policy: DeliverPolicy::All,
            ack_policy: AckPolicy::Explicit,
            ack_wait: ACK_WAIT,
            max_ack_pending: 1,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    consumer.messages().await.map_err(|e| e.to_string())
}

/// Takes one of the event node's commands through the hall's decider.
async fn run(hall: &str, decider: &Decider, command: Command) -> Outcome {
    match command.body {
        CommandBody::Decision { game, decision } => {
            match decider.take(GameId(game), decision, command.at_ms).await {
                Ok(d) => {
                    info!(
                        hall,
                        game,
                        decision = d.id,
                        "the event node's decision taken"
                    );
                    Outcome::Taken { event: d.id }
                }
                Err(refusal) => Outcome::Refused { refusal },
            }
        }
        CommandBody::StartRound { round, by } => {
            match decider.start_round_at(round, by, command.at_ms).await {
                Ok(_) => Outcome::Done,
                Err(refusal) => Outcome::Refused { refusal },
            }
        }
        CommandBody::UndoRound { round, by } => {
            match decider.undo_round_start_at(round, by, command.at_ms).await {
                Ok(_) => Outcome::Done,
                Err(refusal) => Outcome::Refused { refusal },
            }
        }
        CommandBody::Pairings { round, rows } => match decider.import_rows(round, rows).await {
            Ok(_) => Outcome::Done,
            Err(refusal) => Outcome::Refused { refusal },
        },
    }
}
