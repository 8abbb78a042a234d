//! The boards' desks: how an arbiter's decision that changes the record of a game in progress
//! (resuming it after a ply, correcting a move) reaches the board task that records the game.
//!
//! Flow: a board task opens its desk under the board's name ([`Desks::open`]) and keeps the
//! receiving end. The decider ([`super::Decider`]: the admin API's, the console's, a hall's
//! commands') hands a [`RecordChange`] to the desk of the game's board ([`Desks::hand`]): a
//! closure that applies the decision to the store and answers the decider. The board task runs
//! it between two reads of its port, once everything it recorded is durable, so no write of its
//! own can cross the decision; with the record the closure returns, it sets its pipeline on the
//! new record. A board that no task records has no desk: the decider applies the decision
//! itself. A change the board cannot take (its store refuses writes) is dropped, and the
//! decider, seeing its answer channel closed, says so. A result the arbiter sets goes through
//! the desk too: once it is final the board's task ends its game ([`Applied::closed`]); an
//! undone result may reopen it ([`Applied::reopened`]).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
};

use tokio::sync::mpsc;

use crate::{
    store::{GameId, GameRecord},
    tracker::RecordedMove,
};

/// Changes a desk holds before the decider waits (decisions come one at a time from people).
const DESK_CAPACITY: usize = 8;

/// A decision on the record of `game` on board `board`, to run on the board's task.
pub struct RecordChange {
    pub board: String,
    pub game: GameId,
    /// Applies the decision to the store and answers the asker. Returns what it did, or `None`
    /// if the decision was refused (nothing changed).
    pub apply: Box<dyn FnOnce() -> Option<Applied> + Send>,
}

/// What a decision did to the game, for the board's task to follow.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The game's live moves after it.
    pub moves: Vec<RecordedMove>,
    /// The moves changed (a resumed game, a corrected move): the board goes on from them.
    pub record_changed: bool,
    /// The game is closed (the arbiter's final result): the board no longer extends it.
    pub closed: bool,
    /// The game, closed before, is open again (the arbiter's result undone): the board
    /// records it again from its record, as after a restart.
    pub reopened: Option<Box<GameRecord>>,
}

/// What a board's task is handed at its desk.
pub enum DeskOrder {
    /// A decision on the record of its game.
    Change(RecordChange),
    /// The arbiter asks the board's sensor to learn the board again (a Certabo board's
    /// calibration, from the next calibration setup it shows): answered whether its kind
    /// learns anything.
    Relearn {
        board: String,
        answer: tokio::sync::oneshot::Sender<bool>,
    },
}

impl DeskOrder {
    /// The board it is for.
    pub fn board(&self) -> &str {
        match self {
            DeskOrder::Change(c) => &c.board,
            DeskOrder::Relearn { board, .. } => board,
        }
    }
}

/// The desks of the boards being recorded, by board name; cheap to clone.
#[derive(Clone, Default)]
pub struct Desks {
    open: Arc<Mutex<HashMap<String, mpsc::Sender<DeskOrder>>>>,
}

impl Desks {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, mpsc::Sender<DeskOrder>>> {
        self.open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Opens one desk for the boards `names` (one board, or the boards of a bus; replacing
    /// earlier ones): the task that records them keeps the receiver for as long as it does.
    pub fn open<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> mpsc::Receiver<DeskOrder> {
        let (tx, rx) = mpsc::channel(DESK_CAPACITY);
        let mut open = self.lock();
        for name in names {
            open.insert(name.to_owned(), tx.clone());
        }
        rx
    }

    /// Hands `change` to the desk of its board; gives it back if no task records the board.
    pub async fn hand(&self, change: RecordChange) -> Result<(), RecordChange> {
        let desk = self.lock().get(&change.board).cloned();
        match desk {
            Some(tx) => match tx.send(DeskOrder::Change(change)).await {
                Err(mpsc::error::SendError(DeskOrder::Change(c))) => Err(c),
                _ => Ok(()),
            },
            None => Err(change),
        }
    }

    /// Asks the task recording `board` to have its sensor learn the board again: whether its
    /// kind learns anything; `None` if no task records the board (or it stopped meanwhile).
    pub async fn relearn(&self, board: &str) -> Option<bool> {
        let tx = self.lock().get(board).cloned()?;
        let (answer, answered) = tokio::sync::oneshot::channel();
        tx.send(DeskOrder::Relearn {
            board: board.to_owned(),
            answer,
        })
        .await
        .ok()?;
        answered.await.ok()
    }
}

/// The next change on `desk`; never, without a desk (no relay) or once its senders are gone.
pub async fn next_change(desk: &mut Option<mpsc::Receiver<DeskOrder>>) -> DeskOrder {
    if let Some(rx) = desk.as_mut()
        && let Some(change) = rx.recv().await
    {
        return change;
    }
    *desk = None;
    std::future::pending().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(board: &str, game: i64) -> RecordChange {
        RecordChange {
            board: board.into(),
            game: GameId(game),
            apply: Box::new(|| None),
        }
    }

    #[tokio::test]
    async fn a_change_reaches_the_open_desk_and_comes_back_without_one() {
        let desks = Desks::default();
        let back = desks.hand(change("b1", 1)).await;
        assert!(back.is_err_and(|c| c.game == GameId(1)), "no desk yet");
        let mut rx = desks.open(["b1", "b2"]);
        assert!(desks.hand(change("b2", 2)).await.is_ok());
        assert!(
            desks.hand(change("b3", 3)).await.is_err(),
            "not on the desk"
        );
        let got = rx.recv().await.and_then(|o| match o {
            DeskOrder::Change(c) => Some((c.board, c.game)),
            DeskOrder::Relearn { .. } => None,
        });
        assert_eq!(got, Some(("b2".to_owned(), GameId(2))));
        drop(rx);
        // The task ended: the change comes back for the decider to apply.
        assert!(desks.hand(change("b1", 4)).await.is_err());
    }

    #[tokio::test]
    async fn a_request_to_relearn_reaches_the_boards_task_and_is_answered() {
        let desks = Desks::default();
        assert_eq!(desks.relearn("b1").await, None, "no task records b1");
        let mut rx = desks.open(["b1", "b2"]);
        // The task answers whether its kind learns anything (here: b2's does, b1's not).
        let task = tokio::spawn(async move {
            let mut asked = Vec::new();
            while let Some(order) = rx.recv().await {
                if let DeskOrder::Relearn { board, answer } = order {
                    let learns = board == "b2";
                    asked.push(board);
                    let _ignored = answer.send(learns);
                }
                if asked.len() == 2 {
                    break;
                }
            }
            asked
        });
        assert_eq!(desks.relearn("b2").await, Some(true));
        assert_eq!(desks.relearn("b1").await, Some(false));
        assert_eq!(task.await.unwrap_or_default(), ["b2", "b1"]);
        // The task is gone: nobody answers.
        assert_eq!(desks.relearn("b2").await, None);
    }
}
