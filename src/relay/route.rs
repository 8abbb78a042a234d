//! The event node's way to the halls: what its admin API and console send to the hall that
//! owns a board (a decision) or to every hall (a round start, a round's pairings), and what comes
//! back. The relay only sends; [`crate::cluster::commands`] carries them over NATS and answers.

use tokio::sync::{mpsc, oneshot};

use crate::{
    Millis,
    pairings::Pairing,
    relay::server::{AdminAction, Refusal},
    store::{Decision, GameId},
};

/// Where the event node's decider sends what it does not take alone.
pub type Route = mpsc::Sender<Routed>;

/// One thing for the halls.
#[derive(Debug)]
pub enum Routed {
    /// A decision on the event node's game `game`, taken at `at_ms` (wall-clock ms): answered
    /// once the owning hall took it and its record came back, or refused.
    Decision {
        game: GameId,
        action: AdminAction,
        at_ms: Millis,
        answer: oneshot::Sender<RouteAnswer>,
    },
    /// Round `n` started, by `by`, at `at_ms`: every hall starts it too.
    Round { n: u32, by: String, at_ms: Millis },
    /// Round `round`'s pairings: every hall imports them too.
    Pairings { round: u32, rows: Vec<Pairing> },
}

/// What became of a routed decision.
#[derive(Debug)]
pub enum RouteAnswer {
    /// The hall took it; here it is as the event node's record holds it.
    Taken(Box<Decision>),
    Refused(Refusal),
}
