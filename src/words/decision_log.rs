//! The event's decisions in one log, for the arbiter: every decision on every game, in the
//! order taken, filtered by board, round and author.
//!
//! Flow: the caller reads each game with its history ([`crate::store::Store::history`]); the
//! decisions among its events are put in words as the game's history puts them
//! ([`super::history::in_words`]: local time, board and game, move, what, by whom), with the
//! board, round and author each line is filtered by ([`LogFilter`]); the entries of every game
//! are merged by time. Pure: the time zone is an argument.

use jiff::tz::TimeZone;

use super::history::in_words;
use crate::{
    Millis,
    lang::Lang,
    store::{GameRecord, HistoryEntry, Recorded},
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
}

impl LogFilter {
    fn takes(&self, game: &GameRecord, author: &str) -> bool {
        let board = self.board.as_deref().map(str::trim);
        let board_ok = board.is_none_or(|b| {
            b.is_empty()
                || game.board_name == b
                || game.board_no.is_some_and(|n| b.parse() == Ok(n))
        });
        let round_ok = self.round.is_none_or(|r| game.round == Some(r));
        let author_ok = self
            .author
            .as_deref()
            .map(str::trim)
            .is_none_or(|a| a.is_empty() || a.to_lowercase() == author.trim().to_lowercase());
        board_ok && round_ok && author_ok
    }
}

/// The decisions of `games` (each with its history) that `filter` takes, in `lang`, in the
/// order taken.
pub fn decision_log(
    games: &[(GameRecord, Vec<HistoryEntry>)],
    filter: &LogFilter,
    zone: &TimeZone,
    lang: Lang,
) -> Vec<LogEntry> {
    let mut log = Vec::new();
    for (game, history) in games {
        for entry in history {
            let Recorded::Decision(d) = &entry.event.what else {
                continue;
            };
            if !filter.takes(game, &d.author) {
                continue;
            }
            log.push(LogEntry {
                at_ms: entry.event.at_ms,
                id: entry.event.id,
                round: game.round,
                author: d.author.clone(),
                lines: in_words(game, std::slice::from_ref(entry), zone, lang),
            });
        }
    }
    log.sort_by_key(|e| (e.at_ms, e.id));
    log
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
            decision_log(&games, &filter, &TimeZone::UTC, Lang::En)
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
}
