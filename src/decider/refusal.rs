//! Why a decision, a round start or a round's pairings was not taken: a kind ([`Refused`]) that
//! callers act on, and the arbiter's words ([`Refusal::message`]).
//!
//! Flow: the store's refusals ([`DecisionError`], the [`StoreError`]s the decider meets) are
//! sorted into kinds here and in the decider, once; the HTTP layer turns a kind into a status
//! (`relay::server`), the event node and its halls carry a refusal over NATS as JSON
//! (`cluster::commands`). Nothing here knows HTTP.

use std::fmt;

use serde::{Deserialize, Serialize};
use tracing::error;

use crate::store::{DecisionError, StoreError};

/// Why something was not taken, in the arbiter's words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    pub reason: Refused,
    pub message: String,
}

/// The kind of a [`Refusal`]: what the asker may do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refused {
    /// The request is wrong (not a result, no such ply or irregularity, an illegal move, round
    /// 0, a control character in a name): asked the same way, it is refused again.
    Invalid,
    /// No such game.
    UnknownGame,
    /// Nothing can be decided now, and nothing changed: the store refuses writes, the board's
    /// task is stopping, the event node is stopping or cannot reach its broker, the database
    /// is damaged. Taken again later, it may be.
    Unavailable,
    /// Sent to the hall owning the board, whose answer (or the decision's record) has not come
    /// back yet: the hall takes it when it can, and the record shows it then. Not an error in
    /// the arbiter's eyes.
    Pending,
    /// Something failed inside (logged with its cause).
    Failed,
}

/// What the arbiter reads when something failed inside: the cause is in the log.
pub const INTERNAL: &str = "internal error (see the daemon's log)";

impl Refusal {
    pub fn new(reason: Refused, message: impl Into<String>) -> Refusal {
        Refusal {
            reason,
            message: message.into(),
        }
    }

    /// The request is wrong: [`Refused::Invalid`].
    pub fn invalid(message: impl Into<String>) -> Refusal {
        Refusal::new(Refused::Invalid, message)
    }

    /// Nothing can be decided now: [`Refused::Unavailable`].
    pub fn unavailable(message: impl Into<String>) -> Refusal {
        Refusal::new(Refused::Unavailable, message)
    }

    /// Something failed inside: `cause` goes to the log, the arbiter reads [`INTERNAL`].
    pub fn failed(cause: impl fmt::Display) -> Refusal {
        error!(cause = %cause, "a decision failed");
        Refusal::new(Refused::Failed, INTERNAL)
    }
}

/// The store's refusal of a decision: the store failing is logged and said in its own words.
impl From<DecisionError> for Refusal {
    fn from(e: DecisionError) -> Refusal {
        let reason = match e {
            DecisionError::UnknownGame(_) => Refused::UnknownGame,
            DecisionError::Store(_) | DecisionError::Unreadable { .. } => {
                error!(cause = %e, "admin decision failed");
                Refused::Failed
            }
            _ => Refused::Invalid,
        };
        Refusal::new(reason, e.to_string())
    }
}

/// The store's refusal of `e` where only `invalid` says the request is wrong (a round number, a
/// name): anything else failed inside.
pub(super) fn store_refusal(e: StoreError, invalid: fn(&StoreError) -> bool) -> Refusal {
    if invalid(&e) {
        Refusal::invalid(e.to_string())
    } else {
        Refusal::failed(e)
    }
}
