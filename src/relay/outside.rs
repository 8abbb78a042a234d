//! Decisions taken on the database by another process while the daemon runs (`boardscribe
//! arbiter result` at the command line, for a game already over), shown live as the decider's
//! own: on the console, the live page and every relay.
//!
//! Flow: every [`POLL`], the decisions stored after the last one seen are read
//! ([`Store::decisions_after`], from the latest event at start); each on a board's latest game
//! goes to the hub ([`Hub::decision`], which shows a decision once, whichever way it came), and
//! the change signal tells the relays to write again. A database that cannot be read is tried
//! again at the next poll (and said once in the log until it reads again).

use std::{path::PathBuf, sync::Arc, time::Duration};

use tokio::sync::watch;
use tracing::{debug, warn};

use super::hub::Hub;
use crate::store::Store;

/// How often the database is asked for decisions taken elsewhere.
pub const POLL: Duration = Duration::from_secs(1);

/// Follows the decisions of database `db` onto `hub` until `stop` turns true.
pub async fn follow(
    db: PathBuf,
    hub: Hub,
    changes: Arc<watch::Sender<u64>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut seen: Option<i64> = None;
    let mut failing = false;
    let mut kept: Option<Store> = None;
    loop {
        let path = db.clone();
        let open = kept.take();
        let read = tokio::task::spawn_blocking(move || {
            let store = match open {
                Some(store) => store,
                None => Store::open_read_only(&path).map_err(|e| e.to_string())?,
            };
            let found = match seen {
                // From now on: what was decided before is in the state the boards started with.
                None => (
                    store.last_event_id().map_err(|e| e.to_string())?,
                    Vec::new(),
                ),
                Some(after) => {
                    let found = store.decisions_after(after).map_err(|e| e.to_string())?;
                    (found.last().map_or(after, |(d, _)| d.id), found)
                }
            };
            Ok::<_, String>((store, found))
        })
        .await;
        match read {
            Ok(Ok((store, (last, found)))) => {
                kept = Some(store);
                failing = false;
                seen = Some(last);
                let mut shown = false;
                for (decision, board) in found {
                    if let Some(board) = board {
                        debug!(
                            board,
                            game = decision.game.0,
                            decision = decision.id,
                            "a decision taken on the database"
                        );
                        hub.decision(&board, &decision);
                        shown = true;
                    }
                }
                if shown {
                    changes.send_modify(|n| *n = n.wrapping_add(1));
                }
            }
            Ok(Err(why)) if !failing => {
                failing = true;
                warn!(cause = %why, "decisions taken elsewhere cannot be read now; trying again");
            }
            Ok(Err(_)) => {}
            Err(e) => warn!(cause = %e, "reading decisions taken elsewhere failed"),
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}
