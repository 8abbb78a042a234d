//! The event and its rounds: the event's settings beside its name and site, which round is
//! current, and when each round was started and by whom.
//!
//! Flow: the daemon opens the event from its config when it starts ([`Store::open_event`]: the
//! config's round is where the event starts, never a step back); the arbiter starts the next round
//! from the CLI, the admin API or the console ([`Store::start_round`]) without a restart, and a game
//! takes the round current when it begins (in `write_batch`), so a game of round N still going
//! when N+1 starts stays in round N. Readers list the rounds ([`Store::rounds`]) and the event
//! ([`Store::event`]).

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError, pairings::RoundInfo, write::sql_ms};
use crate::Millis;

/// The event's settings that its games and scoresheets show; each optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventSettings {
    /// `YYYY-MM-DD`.
    pub start_date: Option<String>,
    pub end_date: Option<String>,
    /// As the config writes it: `90+30`, `40/90+30:30+30`.
    pub time_control: Option<String>,
    /// The FIDE Laws' edition, e.g. `fide-2023`.
    pub laws: Option<String>,
    /// `standard` or `chess960`.
    pub variant: Option<String>,
    /// The language of the event's sheets and pages (`ru`, `fa`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// How the event's sheets write chess moves (`san`, `figurine`, `local`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notation: Option<String>,
    /// The tie-breaks after points, comma-separated, in order (`buchholz-cut1,buchholz,…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiebreaks: Option<String>,
}

/// The event as stored: its name, site and current round, and its settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredEvent {
    #[serde(flatten)]
    pub round: RoundInfo,
    #[serde(flatten)]
    pub settings: EventSettings,
}

/// One round that was started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundRecord {
    pub number: u32,
    /// Wall-clock milliseconds since the Unix epoch.
    pub started_at_ms: Millis,
    /// Who started it (`config`, `arbiter`, a name).
    pub started_by: String,
    /// Games that began in it.
    pub games: u32,
    /// Boards paired in it.
    pub pairings: u32,
    /// The event's current round.
    pub current: bool,
}

/// A decision of the arbiter on the event rather than on a game: a round started, a round's
/// start undone, a bye given or withdrawn, a round's pairings imported or that undone (the
/// round log, the bye log and the pairings log).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventDecision {
    /// Wall-clock ms since the Unix epoch.
    pub at_ms: Millis,
    /// The round it is about.
    pub round: u32,
    pub author: String,
    pub change: EventChange,
}

/// What an [`EventDecision`] changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventChange {
    /// The round was started; the one current before it.
    RoundStarted {
        previous: Option<u32>,
    },
    /// The start of `undone` was undone: the round is current again.
    RoundStartUndone {
        undone: u32,
    },
    /// The player was given a bye (`U`, `F`, `H`, `Z`).
    ByeGiven {
        name: String,
        code: char,
    },
    ByeWithdrawn {
        name: String,
    },
    /// The round's pairings were imported (`boards` boards), or that import undone (the
    /// round has `boards` boards again).
    PairingsImported {
        boards: u32,
    },
    PairingsImportUndone {
        boards: u32,
    },
}

/// What [`Store::open_event`] did with the config's round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventOpened {
    /// A new event, at the config's round.
    Started { round: u32 },
    /// The config's round is past the stored one: that round was started.
    Advanced { from: u32, to: u32 },
    /// The stored round stands (the config's round is where the event started, or none).
    Kept { round: u32 },
    /// No round in the config and none stored: games take no round.
    NoRound,
}

impl Store {
    /// The event from the daemon's config: its name, site and settings are written over the
    /// stored ones; the round is set only for a new event or when the config's round is past the
    /// stored one (an arbiter who edits the config to the next round and restarts), never back.
    pub fn open_event(
        &mut self,
        info: Option<&RoundInfo>,
        settings: &EventSettings,
        at_ms: Millis,
    ) -> Result<EventOpened, StoreError> {
        let stored = self.round_info()?;
        let opened = match (info, &stored) {
            (None, None) => return Ok(EventOpened::NoRound),
            (None, Some(s)) => EventOpened::Kept { round: s.round },
            (Some(i), None) => {
                self.set_round(i)?;
                record_round_start(&self.conn, i.round, "config", at_ms)?;
                EventOpened::Started { round: i.round }
            }
            (Some(i), Some(s)) => {
                let round = i.round.max(s.round);
                self.set_round(&RoundInfo { round, ..i.clone() })?;
                if i.round > s.round {
                    record_round_start(&self.conn, i.round, "config", at_ms)?;
                    EventOpened::Advanced {
                        from: s.round,
                        to: i.round,
                    }
                } else {
                    EventOpened::Kept { round: s.round }
                }
            }
        };
        self.conn
            .prepare_cached(
                "UPDATE tournament SET start_date = ?1, end_date = ?2, time_control = ?3, \
                 laws = ?4, variant = ?5, language = ?6, notation = ?7, tiebreaks = ?8 \
                 WHERE id = 1",
            )?
            .execute((
                &settings.start_date,
                &settings.end_date,
                &settings.time_control,
                &settings.laws,
                &settings.variant,
                &settings.language,
                &settings.notation,
                &settings.tiebreaks,
            ))?;
        Ok(opened)
    }

    /// Makes `round` the current one: games that begin from now on are its games; a game
    /// already going stays in its round. An event not set yet begins with unknown name and site.
    /// Starting the current round again changes nothing; returns the round that was current.
    pub fn start_round(
        &mut self,
        round: u32,
        by: &str,
        at_ms: Millis,
    ) -> Result<Option<u32>, StoreError> {
        if round == 0 {
            return Err(StoreError::InvalidNumber("round", 0));
        }
        crate::text::one_line("name of who started the round", by)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let before: Option<u32> = tx
            .prepare_cached("SELECT round FROM tournament WHERE id = 1")?
            .query_row([], |r| r.get(0))
            .optional()?;
        tx.prepare_cached(
            "INSERT INTO tournament (id, event, site, round) VALUES (1, '?', '?', ?1) \
             ON CONFLICT (id) DO UPDATE SET round = ?1",
        )?
        .execute([round])?;
        record_round_start(&tx, round, by, at_ms)?;
        if before != Some(round) {
            tx.prepare_cached(
                "INSERT INTO round_log (round, previous, action, by, at_ms) \
                 VALUES (?1, ?2, 'start', ?3, ?4)",
            )?
            .execute((round, before, by, sql_ms(at_ms)?))?;
        }
        tx.commit()?;
        Ok(before)
    }

    /// The round start that can be undone now, as (the round, the round current before it): the
    /// latest change of the current round, made by a start from a round before, while no game
    /// has begun in it. `None` otherwise.
    pub fn round_start_to_undo(&self) -> Result<Option<(u32, u32)>, StoreError> {
        Ok(last_round_start(&self.conn)?.and_then(|s| match s.games {
            0 => Some((s.round, s.previous)),
            _ => None,
        }))
    }

    /// Undoes the start of `round` (by `by`, at `at_ms`), the latest change of the current
    /// round: the round current before it is current again, and the log keeps both. Refused
    /// ([`StoreError::RoundStartNotUndoable`]) unless `round` is current, was made so by the
    /// latest start, from an earlier round, and no game has begun in it. A round whose first
    /// start this was is no longer listed as started, so that starting it later records when it
    /// really started. Returns the round current again.
    pub fn undo_round_start(
        &mut self,
        round: u32,
        by: &str,
        at_ms: Millis,
    ) -> Result<u32, StoreError> {
        crate::text::one_line("name of who undid the round's start", by)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let last = last_round_start(&tx)?;
        let start = match last {
            Some(s) if s.round == round && s.games == 0 => s,
            Some(s) if s.round == round => {
                return Err(StoreError::RoundStartNotUndoable {
                    round,
                    games: s.games,
                });
            }
            _ => return Err(StoreError::RoundStartNotUndoable { round, games: 0 }),
        };
        tx.prepare_cached("UPDATE tournament SET round = ?1 WHERE id = 1")?
            .execute([start.previous])?;
        tx.prepare_cached("DELETE FROM rounds WHERE number = ?1 AND started_at_ms = ?2")?
            .execute((round, sql_ms(start.at_ms)?))?;
        tx.prepare_cached(
            "INSERT INTO round_log (round, previous, action, by, at_ms) \
             VALUES (?1, ?2, 'undo', ?3, ?4)",
        )?
        .execute((start.previous, round, by, sql_ms(at_ms)?))?;
        tx.commit()?;
        Ok(start.previous)
    }

    /// The arbiter's decisions on the event (round starts and their undoing, byes), in the
    /// order taken.
    pub fn event_decisions(&self) -> Result<Vec<EventDecision>, StoreError> {
        let mut out = Vec::new();
        let mut rounds = self.conn.prepare_cached(
            "SELECT at_ms, round, previous, action, by FROM round_log ORDER BY id",
        )?;
        let rows = rounds.query_map([], |r| {
            let (round, previous, action): (u32, Option<u32>, String) =
                (r.get(1)?, r.get(2)?, r.get(3)?);
            Ok(EventDecision {
                at_ms: super::read::get_ms(r, 0)?,
                round,
                author: r.get(4)?,
                change: match action.as_str() {
                    "undo" => EventChange::RoundStartUndone {
                        undone: previous.unwrap_or(0),
                    },
                    _ => EventChange::RoundStarted { previous },
                },
            })
        })?;
        for row in rows {
            out.push(row?);
        }
        let mut byes = self
            .conn
            .prepare_cached("SELECT at_ms, round, name, code, by FROM bye_log ORDER BY id")?;
        let rows = byes.query_map([], |r| {
            let (name, code): (String, Option<String>) = (r.get(2)?, r.get(3)?);
            Ok(EventDecision {
                at_ms: super::read::get_ms(r, 0)?,
                round: r.get(1)?,
                author: r.get(4)?,
                change: match code.and_then(|c| c.chars().next()) {
                    Some(code) => EventChange::ByeGiven { name, code },
                    None => EventChange::ByeWithdrawn { name },
                },
            })
        })?;
        for row in rows {
            out.push(row?);
        }
        let mut imports = self.conn.prepare_cached(
            "SELECT at_ms, round, action, boards, by FROM pairings_log ORDER BY id",
        )?;
        let rows = imports.query_map([], |r| {
            let (action, boards): (String, u32) = (r.get(2)?, r.get(3)?);
            Ok(EventDecision {
                at_ms: super::read::get_ms(r, 0)?,
                round: r.get(1)?,
                author: r.get(4)?,
                change: match action.as_str() {
                    "undo" => EventChange::PairingsImportUndone { boards },
                    _ => EventChange::PairingsImported { boards },
                },
            })
        })?;
        for row in rows {
            out.push(row?);
        }
        out.sort_by_key(|d| d.at_ms);
        Ok(out)
    }

    /// The event, `None` until a round was set.
    pub fn event(&self) -> Result<Option<StoredEvent>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT event, site, round, start_date, end_date, time_control, laws, variant, \
                 language, notation, tiebreaks FROM tournament WHERE id = 1",
            )?
            .query_row([], |r| {
                Ok(StoredEvent {
                    round: RoundInfo {
                        event: r.get(0)?,
                        site: r.get(1)?,
                        round: r.get(2)?,
                    },
                    settings: EventSettings {
                        start_date: r.get(3)?,
                        end_date: r.get(4)?,
                        time_control: r.get(5)?,
                        laws: r.get(6)?,
                        variant: r.get(7)?,
                        language: r.get(8)?,
                        notation: r.get(9)?,
                        tiebreaks: r.get(10)?,
                    },
                })
            })
            .optional()?)
    }

    /// Every round started, paired or played, by number: a round paired ahead of its start is
    /// listed too (started at 0, by nobody).
    pub fn rounds(&self) -> Result<Vec<RoundRecord>, StoreError> {
        let current = self.round_info()?.map(|i| i.round);
        let mut stmt = self.conn.prepare_cached(
            "WITH numbers (n) AS ( \
                 SELECT number FROM rounds \
                 UNION SELECT round FROM pairings \
                 UNION SELECT CAST(round AS INTEGER) FROM games WHERE round IS NOT NULL) \
             SELECT n, r.started_at_ms, r.started_by, \
                 (SELECT count(*) FROM games g WHERE g.round = CAST(n AS TEXT)), \
                 (SELECT count(*) FROM pairings p WHERE p.round = n) \
             FROM numbers LEFT JOIN rounds r ON r.number = n ORDER BY n",
        )?;
        let rows = stmt.query_map([], |r| {
            let number: u32 = r.get(0)?;
            Ok(RoundRecord {
                number,
                started_at_ms: r.get::<_, Option<i64>>(1)?.unwrap_or(0).max(0) as Millis,
                started_by: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                games: r.get(3)?,
                pairings: r.get(4)?,
                current: current == Some(number),
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The latest change of the current round, when it is a start from an earlier round.
struct LastStart {
    round: u32,
    previous: u32,
    at_ms: Millis,
    /// Games begun in it since.
    games: u32,
}

/// The latest change of the current round if it is a start from an earlier round: the round,
/// the one before, when it was started, and how many games began in it since.
fn last_round_start(conn: &Connection) -> Result<Option<LastStart>, StoreError> {
    let current: Option<u32> = conn
        .prepare_cached("SELECT round FROM tournament WHERE id = 1")?
        .query_row([], |r| r.get(0))
        .optional()?;
    let last = conn
        .prepare_cached(
            "SELECT round, previous, action, at_ms, \
             (SELECT count(*) FROM games WHERE round = CAST(l.round AS TEXT)) \
             FROM round_log l ORDER BY id DESC LIMIT 1",
        )?
        .query_row([], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, Option<u32>>(1)?,
                r.get::<_, String>(2)?,
                super::read::get_ms(r, 3)?,
                r.get::<_, u32>(4)?,
            ))
        })
        .optional()?;
    Ok(match last {
        Some((round, Some(previous), action, at_ms, games))
            if action == "start" && current == Some(round) =>
        {
            Some(LastStart {
                round,
                previous,
                at_ms,
                games,
            })
        }
        _ => None,
    })
}

/// Notes that `round` was started (its first start stands: starting it again makes it current,
/// it does not restart it).
fn record_round_start(
    conn: &Connection,
    round: u32,
    by: &str,
    at_ms: Millis,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO rounds (number, started_at_ms, started_by) VALUES (?1, ?2, ?3) \
         ON CONFLICT (number) DO NOTHING",
    )?
    .execute((round, sql_ms(at_ms)?, by))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(round: u32) -> RoundInfo {
        RoundInfo {
            event: "Spring Open".into(),
            site: "Almaty".into(),
            round,
        }
    }

    #[test]
    fn the_configs_round_starts_the_event_and_never_steps_it_back() {
        let mut store = Store::open_in_memory().unwrap();
        let settings = EventSettings {
            time_control: Some("90+30".into()),
            language: Some("ru".into()),
            notation: Some("local".into()),
            ..EventSettings::default()
        };
        assert_eq!(
            store.open_event(None, &settings, 1).unwrap(),
            EventOpened::NoRound
        );
        assert_eq!(
            store.open_event(Some(&info(1)), &settings, 2).unwrap(),
            EventOpened::Started { round: 1 }
        );
        assert_eq!(store.start_round(2, "arbiter", 3).unwrap(), Some(1));
        // A restart with the config still at round 1 keeps round 2.
        assert_eq!(
            store.open_event(Some(&info(1)), &settings, 4).unwrap(),
            EventOpened::Kept { round: 2 }
        );
        assert_eq!(
            store.open_event(Some(&info(3)), &settings, 5).unwrap(),
            EventOpened::Advanced { from: 2, to: 3 }
        );
        let event = store.event().unwrap().unwrap();
        assert_eq!(event.round, info(3));
        assert_eq!(event.settings.time_control.as_deref(), Some("90+30"));
        assert_eq!(
            (
                event.settings.language.as_deref(),
                event.settings.notation.as_deref()
            ),
            (Some("ru"), Some("local"))
        );
        let rounds = store.rounds().unwrap();
        let listed: Vec<(u32, &str, bool)> = rounds
            .iter()
            .map(|r| (r.number, r.started_by.as_str(), r.current))
            .collect();
        assert_eq!(
            listed,
            [
                (1, "config", false),
                (2, "arbiter", false),
                (3, "config", true)
            ]
        );
    }

    #[test]
    fn starting_a_round_without_an_event_and_again_changes_nothing_more() {
        let mut store = Store::open_in_memory().unwrap();
        assert!(matches!(
            store.start_round(0, "arbiter", 1),
            Err(StoreError::InvalidNumber("round", 0))
        ));
        assert_eq!(store.start_round(4, "arbiter", 10).unwrap(), None);
        assert_eq!(store.start_round(4, "someone else", 20).unwrap(), Some(4));
        let rounds = store.rounds().unwrap();
        assert_eq!(rounds.len(), 1);
        assert_eq!(
            (rounds[0].started_at_ms, rounds[0].started_by.as_str()),
            (10, "arbiter")
        );
        assert_eq!(store.round_info().unwrap().unwrap().event, "?");
    }

    #[test]
    fn a_round_started_by_a_name_with_a_control_character_is_refused_and_not_recorded() {
        let mut store = Store::open_in_memory().unwrap();
        for by in ["Chief\u{1b}[2J", "Chief\nround 9 started by X"] {
            let err = store.start_round(2, by, 10).unwrap_err();
            assert!(
                matches!(err, StoreError::ControlCharacter(c) if c.at == 6),
                "{err}"
            );
        }
        assert!(store.rounds().unwrap().is_empty());
        assert_eq!(store.round_info().unwrap(), None);
    }

    #[test]
    fn a_round_started_by_mistake_is_undone_until_a_game_begins_in_it() {
        let mut store = Store::open_in_memory().unwrap();
        store
            .open_event(Some(&info(1)), &EventSettings::default(), 1)
            .unwrap();
        // The config's round is not a start from an earlier one: nothing to undo.
        assert_eq!(store.round_start_to_undo().unwrap(), None);
        store.start_round(3, "Chief", 10).unwrap();
        assert_eq!(store.round_start_to_undo().unwrap(), Some((3, 1)));
        // Only the start that made the current round, by its number.
        assert!(matches!(
            store.undo_round_start(2, "Chief", 11),
            Err(StoreError::RoundStartNotUndoable { round: 2, games: 0 })
        ));
        assert_eq!(store.undo_round_start(3, "Chief", 12).unwrap(), 1);
        assert_eq!(store.round_info().unwrap().unwrap().round, 1);
        let started: Vec<u32> = store.rounds().unwrap().iter().map(|r| r.number).collect();
        assert_eq!(started, [1], "round 3 is no longer listed as started");
        // An undo is not undone: the round is started again, at its own time.
        assert_eq!(store.round_start_to_undo().unwrap(), None);
        assert!(store.undo_round_start(1, "Chief", 13).is_err());
        store.start_round(2, "Chief", 20).unwrap();
        let two = store.rounds().unwrap().pop().unwrap();
        assert_eq!((two.number, two.started_at_ms, two.current), (2, 20, true));
        // A game begun in it: the start stands.
        let board = store.board("b1", crate::game::Kind::Chess).unwrap();
        super::super::begin_test_game(&mut store, board, 21);
        assert_eq!(store.round_start_to_undo().unwrap(), None);
        assert!(matches!(
            store.undo_round_start(2, "Chief", 22),
            Err(StoreError::RoundStartNotUndoable { round: 2, games: 1 })
        ));
        let log: Vec<(u32, Option<u32>, String)> = store
            .conn
            .prepare("SELECT round, previous, action FROM round_log ORDER BY id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            log,
            [
                (3, Some(1), "start".into()),
                (1, Some(3), "undo".into()),
                (2, Some(1), "start".into())
            ]
        );
    }
}
