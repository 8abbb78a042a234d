//! The halls' health as the event node sees it, and the alerts it gives the arbiter.
//!
//! Flow: each hall's publisher sends its [`HallStatus`] every [`STATUS_EVERY`] on
//! `boardscribe.status.<hall>` (plain NATS, not kept: only the latest matters). The event node
//! gives its [`HallWatch`] those statuses, what its followers did with each hall's records
//! (applied, or refused and why) and the boards it keeps without the number their hall gave
//! them; [`HallWatch::alerts`] says, at `now`, what needs the arbiter: a hall not heard, a
//! hall whose records cannot go on, a hall whose outbox grows, a hall that publishes but is not
//! followed, a board number two halls use. Each alert says what to do, typed
//! ([`EventFault`]: each language words it). Pure: times are the caller's (wall-clock ms).

use std::{collections::BTreeMap, time::Duration};

use serde::{Deserialize, Serialize};

use crate::{
    Millis,
    relay::alerts::{EventAlert, EventFault, StallReason},
    store::replica::NumberRefused,
};

/// How often a hall sends its status.
pub const STATUS_EVERY: Duration = Duration::from_secs(2);

/// How long the oldest record may wait in a hall's outbox, while the hall is heard, before
/// the outbox counts as growing (a record normally leaves it within milliseconds).
pub const OUTBOX_LATE_MS: u64 = 10_000;

/// The subject a hall's status goes to.
pub fn status_subject(hall: &str) -> String {
    format!("boardscribe.status.{hall}")
}

/// Every hall's status subject (the event node's subscription).
pub const STATUS_SUBJECTS: &str = "boardscribe.status.*";

/// The hall a status subject names.
pub fn status_hall(subject: &str) -> Option<&str> {
    subject.strip_prefix("boardscribe.status.")
}

/// What a hall says of itself, every [`STATUS_EVERY`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HallStatus {
    /// The hall database's origin.
    pub origin: String,
    /// The hall's wall clock when it sent this.
    pub at_ms: Millis,
    /// Records committed and not yet taken by the broker.
    pub outbox_depth: u64,
    /// When the oldest of them was committed.
    pub outbox_oldest_ms: Option<Millis>,
    /// Why the outbox is not being published, as the hall's publisher says it.
    pub failure: Option<String>,
    /// The failure needs the operator: it does not pass by itself (another database publishes
    /// as this hall, records removed from the stream).
    pub stalled: bool,
}

/// What the event node knows of one hall.
#[derive(Debug, Default)]
struct Seen {
    /// The latest status of each database publishing as the hall, with when it was heard and
    /// since when it reports a failure.
    statuses: BTreeMap<String, Heard>,
    /// The event node refused the hall's records: why, since when.
    refused: Option<(String, Millis)>,
}

#[derive(Debug)]
struct Heard {
    status: HallStatus,
    at_ms: Millis,
    failing_since_ms: Option<Millis>,
}

/// The halls' health at the event node.
#[derive(Debug)]
pub struct HallWatch {
    /// The halls followed, and what is known of each.
    halls: BTreeMap<String, Seen>,
    /// Halls heard that the event node does not follow: when last heard.
    strangers: BTreeMap<String, Millis>,
    started_ms: Millis,
    silent_after_ms: u64,
}

impl HallWatch {
    /// Following `halls` from `started_ms`; a hall unheard for `silent_after_ms` is alerted.
    pub fn new(halls: &[String], started_ms: Millis, silent_after_ms: u64) -> HallWatch {
        HallWatch {
            halls: halls.iter().map(|h| (h.clone(), Seen::default())).collect(),
            strangers: BTreeMap::new(),
            started_ms,
            silent_after_ms,
        }
    }

    /// Hall `hall` sent `status`, heard at `now_ms`.
    pub fn heard(&mut self, hall: &str, status: HallStatus, now_ms: Millis) {
        let Some(seen) = self.halls.get_mut(hall) else {
            self.strangers.insert(hall.to_owned(), now_ms);
            return;
        };
        let failing_since_ms = match (&status.failure, seen.statuses.get(&status.origin)) {
            (None, _) => None,
            (Some(_), Some(h)) if h.failing_since_ms.is_some() => h.failing_since_ms,
            (Some(_), _) => Some(now_ms),
        };
        seen.statuses.insert(
            status.origin.clone(),
            Heard {
                status,
                at_ms: now_ms,
                failing_since_ms,
            },
        );
    }

    /// The event node refused hall `hall`'s records, for `why`.
    pub fn refused(&mut self, hall: &str, why: String, now_ms: Millis) {
        if let Some(seen) = self.halls.get_mut(hall) {
            let since = match &seen.refused {
                Some((old, since)) if *old == why => *since,
                _ => now_ms,
            };
            seen.refused = Some((why, since));
        }
    }

    /// The event node applied hall `hall`'s records again.
    pub fn applied(&mut self, hall: &str) {
        if let Some(seen) = self.halls.get_mut(hall) {
            seen.refused = None;
        }
    }

    /// What needs the arbiter at `now_ms`, hall by hall; `numbers`: the boards kept without
    /// their hall's number.
    pub fn alerts(&self, numbers: &[NumberRefused], now_ms: Millis) -> Vec<EventAlert> {
        let mut out = Vec::new();
        for (hall, seen) in &self.halls {
            self.hall_alerts(hall, seen, now_ms, &mut out);
        }
        for (hall, &at) in &self.strangers {
            if now_ms.saturating_sub(at) < self.silent_after_ms {
                let fault = EventFault::HallNotFollowed { hall: hall.clone() };
                out.push(EventAlert::new(fault, at));
            }
        }
        for n in numbers {
            let fault = EventFault::BoardNumberTaken {
                board: n.board.clone(),
                number: n.number,
                holder: n.holder.clone(),
            };
            out.push(EventAlert::new(fault, 0));
        }
        out
    }

    fn hall_alerts(&self, hall: &str, seen: &Seen, now_ms: Millis, out: &mut Vec<EventAlert>) {
        let last_heard = seen.statuses.values().map(|h| h.at_ms).max();
        let unheard_since = last_heard.unwrap_or(self.started_ms);
        if now_ms.saturating_sub(unheard_since) >= self.silent_after_ms {
            let fault = EventFault::HallSilent {
                hall: hall.to_owned(),
                since_ms: unheard_since,
                heard: last_heard.is_some(),
            };
            out.push(EventAlert::new(fault, unheard_since));
        }
        // Databases heard recently: more than one publishing as the hall is a fault.
        let recent: Vec<&Heard> = seen
            .statuses
            .values()
            .filter(|h| now_ms.saturating_sub(h.at_ms) < self.silent_after_ms)
            .collect();
        let mut stalled: Vec<(StallReason, Millis)> = Vec::new();
        if recent.len() > 1 {
            let origins = recent.iter().map(|h| h.status.origin.clone()).collect();
            let since = recent.iter().map(|h| h.at_ms).min().unwrap_or(now_ms);
            stalled.push((StallReason::Databases { origins }, since));
        }
        for h in &recent {
            if let (true, Some(why)) = (h.status.stalled, &h.status.failure) {
                stalled.push((
                    StallReason::CannotPublish { why: why.clone() },
                    h.failing_since_ms.unwrap_or(h.at_ms),
                ));
            }
        }
        if let Some((why, since)) = &seen.refused {
            stalled.push((StallReason::Refused { why: why.clone() }, *since));
        }
        if !stalled.is_empty() {
            let since = stalled.iter().map(|s| s.1).min().unwrap_or(now_ms);
            let reasons = stalled.into_iter().map(|s| s.0).collect();
            let fault = EventFault::HallStalled {
                hall: hall.to_owned(),
                reasons,
            };
            out.push(EventAlert::new(fault, since));
            return;
        }
        for h in &recent {
            let s = &h.status;
            let Some(oldest) = s.outbox_oldest_ms else {
                continue;
            };
            let waiting = s.at_ms.saturating_sub(oldest);
            if s.outbox_depth == 0 || waiting < OUTBOX_LATE_MS {
                continue;
            }
            let fault = EventFault::HallOutboxGrowing {
                hall: hall.to_owned(),
                records: s.outbox_depth,
                oldest_ms: oldest,
                waiting_ms: waiting,
                failure: s.failure.clone(),
            };
            out.push(EventAlert::new(fault, oldest));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SILENT: u64 = 15_000;

    fn status(origin: &str, at_ms: Millis) -> HallStatus {
        HallStatus {
            origin: origin.into(),
            at_ms,
            outbox_depth: 0,
            outbox_oldest_ms: None,
            failure: None,
            stalled: false,
        }
    }

    fn kinds(alerts: &[EventAlert]) -> Vec<(&str, &str)> {
        alerts
            .iter()
            .map(|a| (a.hall.as_str(), a.kind.as_str()))
            .collect()
    }

    fn halls() -> Vec<String> {
        vec!["A".into(), "B".into()]
    }

    #[test]
    fn a_hall_unheard_for_longer_than_allowed_is_silent_and_back_when_heard() {
        let mut w = HallWatch::new(&halls(), 1_000, SILENT);
        // Both halls get the whole allowance after the event node starts.
        assert_eq!(kinds(&w.alerts(&[], 15_999)), vec![]);
        w.heard("A", status("a1", 10_000), 10_000);
        let alerts = w.alerts(&[], 16_000);
        assert_eq!(kinds(&alerts), vec![("B", "hall_silent")]);
        assert!(alerts[0].detail.contains("since the event node started"));
        assert_eq!(alerts[0].since_ms, 1_000);
        // A heard every 2 s stays quiet; B heard once is back.
        w.heard("A", status("a1", 24_000), 24_000);
        w.heard("B", status("b1", 24_500), 24_500);
        assert_eq!(kinds(&w.alerts(&[], 25_000)), vec![]);
        // A stops: silent once the allowance is over, since it was last heard.
        w.heard("B", status("b1", 38_000), 38_000);
        let alerts = w.alerts(&[], 39_000);
        assert_eq!(kinds(&alerts), vec![("A", "hall_silent")]);
        assert_eq!(alerts[0].since_ms, 24_000);
        assert!(
            alerts[0].detail.contains("00:00:24 UTC"),
            "{}",
            alerts[0].detail
        );
    }

    #[test]
    fn two_databases_as_one_hall_or_a_refusal_stall_it_and_a_late_outbox_is_growing() {
        let mut w = HallWatch::new(&halls(), 0, SILENT);
        w.heard("A", status("a1", 1_000), 1_000);
        w.heard("A", status("a2", 1_500), 1_500);
        w.heard("B", status("b1", 1_500), 1_500);
        let alerts = w.alerts(&[], 2_000);
        assert_eq!(kinds(&alerts), vec![("A", "hall_stalled")]);
        assert!(alerts[0].detail.contains("a1, a2"), "{}", alerts[0].detail);
        // The second database gone: over once it is no longer heard.
        for t in [10_000, 20_000] {
            w.heard("A", status("a1", t), t);
            w.heard("B", status("b1", t), t);
        }
        assert_eq!(kinds(&w.alerts(&[], 20_000)), vec![]);
        // The event node refuses B's records until it applies them again.
        w.refused("B", "record 9 of hall B is missing".into(), 20_100);
        let alerts = w.alerts(&[], 21_000);
        assert_eq!(kinds(&alerts), vec![("B", "hall_stalled")]);
        assert_eq!(alerts[0].since_ms, 20_100);
        w.applied("B");
        assert_eq!(kinds(&w.alerts(&[], 21_000)), vec![]);
        // A's outbox: records waiting 9 s are not yet late; 12 s with a failure are.
        let mut late = status("a1", 30_000);
        late.outbox_depth = 40;
        late.outbox_oldest_ms = Some(21_000);
        late.failure = Some("maximum messages exceeded".into());
        w.heard("A", late.clone(), 30_000);
        assert_eq!(kinds(&w.alerts(&[], 30_000)), vec![]);
        late.at_ms = 33_000;
        w.heard("A", late, 33_000);
        let alerts = w.alerts(&[], 33_000);
        assert_eq!(kinds(&alerts), vec![("A", "hall_outbox_growing")]);
        assert!(alerts[0].detail.contains("40 records"));
        assert!(alerts[0].detail.contains("maximum messages exceeded"));
    }

    #[test]
    fn a_hall_not_followed_and_a_board_number_taken_are_alerts() {
        let mut w = HallWatch::new(&halls(), 0, SILENT);
        w.heard("A", status("a1", 1_000), 1_000);
        w.heard("B", status("b1", 1_000), 1_000);
        w.heard("C", status("c1", 1_000), 1_000);
        let numbers = [NumberRefused {
            board: "B/B7".into(),
            number: 7,
            holder: Some("A/A7".into()),
        }];
        let alerts = w.alerts(&numbers, 2_000);
        assert_eq!(
            kinds(&alerts),
            vec![("C", "hall_not_followed"), ("B", "board_number_taken")]
        );
        assert!(alerts[1].detail.contains("A/A7"));
        // Both over: C no longer heard, nothing refused.
        w.heard("A", status("a1", 16_000), 16_000);
        w.heard("B", status("b1", 16_000), 16_000);
        assert_eq!(kinds(&w.alerts(&[], 16_500)), vec![]);
    }
}
