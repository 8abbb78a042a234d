//! The event's decisions in one log, for the arbiter: every decision on every game, and on the
//! event (a round started or its start undone, a bye given or withdrawn), in the order taken,
//! filtered by board, round and author.
//!
//! Flow: the caller reads each game with its history ([`crate::store::Store::history`]); the
//! decisions among its events are put in words as the game's history puts them
//! ([`super::history::in_words`]: local time, board and game, move, what, by whom), with the
//! board, round and author each line is filtered by ([`LogFilter`]); the entries of every game
//! are merged by time. Pure: the time zone is an argument.

use jiff::tz::TimeZone;

use super::history::{in_words, when};
use crate::{
    Millis,
    lang::Lang,
    store::{EventChange, EventDecision, GameRecord, HistoryEntry, Recorded},
};

/// Which decisions the log shows; `None` shows all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogFilter {
    /// A board by its number in the hall or its name.
    pub board: Option<String>,
    pub round: Option<u32>,
    /// An author, any case.
    pub author: Option<String>,
}

/// One decision of the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    pub at_ms: Millis,
    /// The row id of its event: decisions taken in one millisecond keep their order.
    pub id: i64,
    pub round: Option<u32>,
    pub author: String,
    /// Its line in words, then the moves it withdrew, if any.
    pub lines: Vec<String>,
    /// A decision on a game that stands (not undone, not an undo): its board (number, else
    /// name), game and decision, for the form that undoes it.
    pub undo: Option<(String, i64, i64)>,
}

impl LogFilter {
    /// Whether it takes a decision on the event of `round` by `author` (none with a board).
    fn takes_event(&self, round: u32, author: &str) -> bool {
        let no_board = self.board.as_deref().is_none_or(|b| b.trim().is_empty());
        no_board && self.round.is_none_or(|r| r == round) && self.author_takes(author)
    }

    fn author_takes(&self, author: &str) -> bool {
        self.author
            .as_deref()
            .map(str::trim)
            .is_none_or(|a| a.is_empty() || a.to_lowercase() == author.trim().to_lowercase())
    }

    fn takes(&self, game: &GameRecord, author: &str) -> bool {
        let board = self.board.as_deref().map(str::trim);
        let board_ok = board.is_none_or(|b| {
            b.is_empty()
                || game.board_name == b
                || game.board_no.is_some_and(|n| b.parse() == Ok(n))
        });
        let round_ok = self.round.is_none_or(|r| game.round == Some(r));
        board_ok && round_ok && self.author_takes(author)
    }
}

/// The decisions of `games` (each with its history) and on the event (`event`) that `filter`
/// takes, in `lang`, in the order taken.
pub fn decision_log(
    games: &[(GameRecord, Vec<HistoryEntry>)],
    event: &[EventDecision],
    filter: &LogFilter,
    zone: &TimeZone,
    lang: Lang,
) -> Vec<LogEntry> {
    let mut log = Vec::new();
    for d in event
        .iter()
        .filter(|d| filter.takes_event(d.round, &d.author))
    {
        log.push(LogEntry {
            at_ms: d.at_ms,
            id: 0,
            round: Some(d.round),
            author: d.author.clone(),
            lines: vec![event_line(d, zone, lang)],
            undo: None,
        });
    }
    for (game, history) in games {
        for entry in history {
            let Recorded::Decision(d) = &entry.event.what else {
                continue;
            };
            if !filter.takes(game, &d.author) {
                continue;
            }
            let standing = d.action.undoes().is_none() && game.undone_by(d.id).is_none();
            let board = game
                .board_no
                .map_or_else(|| game.board_name.clone(), |n| n.to_string());
            log.push(LogEntry {
                at_ms: entry.event.at_ms,
                id: entry.event.id,
                round: game.round,
                author: d.author.clone(),
                lines: in_words(game, std::slice::from_ref(entry), zone, lang),
                undo: standing.then_some((board, game.id.0, d.id)),
            });
        }
    }
    log.sort_by_key(|e| (e.at_ms, e.id));
    log
}

/// A decision on the event in words: local time, the round, what, by whom.
fn event_line(d: &EventDecision, zone: &TimeZone, lang: Lang) -> String {
    let round = d.round.to_string();
    let what = match &d.change {
        EventChange::RoundStarted { previous: None } => {
            lang.text("history.round_started").to_owned()
        }
        EventChange::RoundStarted {
            previous: Some(previous),
        } => lang.fill(
            "history.round_started_after",
            &[("previous", &previous.to_string())],
        ),
        EventChange::RoundStartUndone { undone } => lang.fill(
            "history.round_undone",
            &[("undone", &undone.to_string()), ("round", &round)],
        ),
        EventChange::ByeGiven { name, code } => {
            let kind = match code {
                'H' => "arbiter.bye_half",
                'F' => "arbiter.bye_full",
                'U' => "arbiter.bye_pairing",
                _ => "arbiter.bye_zero",
            };
            lang.fill(
                "history.bye_given",
                &[("name", name), ("kind", lang.text(kind))],
            )
        }
        EventChange::ByeWithdrawn { name } => lang.fill("history.bye_withdrawn", &[("name", name)]),
        EventChange::PairingsImported { boards } => lang.fill(
            "history.pairings_imported",
            &[("boards", &boards.to_string())],
        ),
        EventChange::PairingsImportUndone { boards } => lang.fill(
            "history.pairings_undone",
            &[("boards", &boards.to_string())],
        ),
    };
    format!(
        "{}  {}  {what} {}",
        when(d.at_ms, zone),
        lang.fill("history.event_round", &[("round", &round)]),
        lang.fill("history.by", &[("author", &d.author)])
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        game::Kind,
        store::{Store, begin_test_game},
    };

    #[test]
    fn the_log_merges_every_games_decisions_by_time_under_its_filter() {
        let mut store = Store::open_in_memory().unwrap();
        let b1 = store.board("b1", Kind::Chess).unwrap();
        let b2 = store.board("b2", Kind::Chess).unwrap();
        let g1 = begin_test_game(&mut store, b1, 0);
        let g2 = begin_test_game(&mut store, b2, 10);
        store
            .add_note(g2, None, "late start", "Deputy", 2_000)
            .unwrap();
        store
            .add_note(g1, None, "phone rang", "Chief", 1_000)
            .unwrap();
        store.add_note(g1, None, "seen", "chief", 3_000).unwrap();
        let games: Vec<_> = [g1, g2]
            .into_iter()
            .map(|g| (store.game(g).unwrap().unwrap(), store.history(g).unwrap()))
            .collect();
        let log = |filter: LogFilter| {
            decision_log(&games, &[], &filter, &TimeZone::UTC, Lang::En)
                .into_iter()
                .map(|e| (e.author, e.at_ms))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            log(LogFilter::default()),
            [
                ("Chief".to_owned(), 1_000),
                ("Deputy".to_owned(), 2_000),
                ("chief".to_owned(), 3_000)
            ]
        );
        let chief = LogFilter {
            author: Some("CHIEF".into()),
            ..LogFilter::default()
        };
        assert_eq!(log(chief).len(), 2);
        let b2_only = LogFilter {
            board: Some("b2".into()),
            ..LogFilter::default()
        };
        assert_eq!(log(b2_only), [("Deputy".to_owned(), 2_000)]);
        let round = LogFilter {
            round: Some(1),
            ..LogFilter::default()
        };
        assert!(log(round).is_empty(), "the test games have no round");
    }

    #[test]
    fn the_events_own_decisions_join_the_log_by_round_and_author_but_not_by_board() {
        let mut store = Store::open_in_memory().unwrap();
        let info = crate::store::RoundInfo {
            event: "Open".into(),
            site: "Here".into(),
            round: 1,
        };
        store
            .open_event(Some(&info), &crate::store::EventSettings::default(), 0)
            .unwrap();
        store.start_round(3, "Chief", 1_000).unwrap();
        store.undo_round_start(3, "Deputy", 2_000).unwrap();
        store
            .import_pairings(2, &[crate::pairings::Pairing::new(1, "Ann", "Bob")])
            .unwrap();
        store.set_bye(1, "Ann", 'H', "Chief", 3_000).unwrap();
        store.withdraw_bye(1, "Ann", "Chief", 4_000).unwrap();
        let event = store.event_decisions().unwrap();
        let log = |filter: LogFilter| {
            decision_log(&[], &event, &filter, &TimeZone::UTC, Lang::En)
                .into_iter()
                .map(|e| {
                    e.lines[0]
                        .split("  ")
                        .skip(1)
                        .collect::<Vec<_>>()
                        .join("  ")
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            log(LogFilter::default()),
            [
                "round 3  round started (was round 1) by Chief",
                "round 1  start of round 3 undone: round 1 is current again by Deputy",
                "round 1  bye for Ann: ½ point, asked for (H) by Chief",
                "round 1  bye of Ann withdrawn by Chief",
            ]
        );
        let deputy = LogFilter {
            author: Some("deputy".into()),
            ..LogFilter::default()
        };
        assert_eq!(log(deputy).len(), 1);
        let round_3 = LogFilter {
            round: Some(3),
            ..LogFilter::default()
        };
        assert_eq!(log(round_3).len(), 1);
        let board = LogFilter {
            board: Some("1".into()),
            ..LogFilter::default()
        };
        assert!(log(board).is_empty());
    }
}
