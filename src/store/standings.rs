//! The event's rounds as the standings read them: every round's pairings with each board's
//! result, gathered into a [`Field`] for [`crate::standings`].
//!
//! Flow: [`Store::standings_field`] reads the pairings of rounds 1 to the last paired one and
//! hands them, with the games the caller gives (the record for the arbiter and the exports, the
//! public view for spectators: what the delay lets them see), to [`event_field`], which is pure.
//! A player is known by FIDE id, else by name; a board's result is its round's game on that
//! board (one per board, as a broadcast picks it: [`broadcast_games`]), the arbiter's word
//! included (forfeits `+/-`, `-/+`, `-/-`); no game, or `*`, is pending. A TRF's byes are kept
//! with its round ([`Store::byes`]: `U`, `F`, `H`, `Z`); a player with neither a board nor a bye
//! in a round is absent. A TRF's starting ranks, kept with its pairings, go with each player.

use std::collections::HashMap;

use super::{GameRecord, Pairing, Store, StoreError, broadcast_games};
use crate::{
    pairings::RoundBye,
    standings::{
        BoardOutcome, BoardResult, Bye, ByeKind, Entrant, Field, PlayerIndex, RoundResults,
        TieBreak,
    },
    tracker::Side,
};

/// How a player is told apart from the others: FIDE id, else name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum PlayerKey {
    Fide(u32),
    Name(String),
}

/// `side`'s player of a pairing, as the standings show them.
fn side_entrant(p: &Pairing, side: Side) -> Entrant {
    let (name, fide_id, rating, title, federation, start_rank) = match side {
        Side::White => (
            &p.white,
            p.white_fide,
            p.white_elo,
            &p.white_title,
            &p.white_fed,
            p.white_start,
        ),
        Side::Black => (
            &p.black,
            p.black_fide,
            p.black_elo,
            &p.black_title,
            &p.black_fed,
            p.black_start,
        ),
    };
    let given = |t: &Option<String>| t.clone().filter(|t| !t.trim().is_empty());
    Entrant {
        name: name.trim().to_owned(),
        rating,
        title: given(title),
        federation: given(federation),
        fide_id,
        start_rank,
    }
}

/// The index of `entrant` in `players`, added if new; a player seen before takes the latest
/// round's details (a rating corrected, a title added), keeping a starting rank it had.
fn seat(
    players: &mut Vec<Entrant>,
    index: &mut HashMap<PlayerKey, PlayerIndex>,
    entrant: Entrant,
) -> PlayerIndex {
    let key = match entrant.fide_id {
        Some(id) => PlayerKey::Fide(id),
        None => PlayerKey::Name(entrant.name.clone()),
    };
    match index.get(&key) {
        Some(&i) => {
            let start_rank = entrant.start_rank.or(players[i].start_rank);
            players[i] = Entrant {
                start_rank,
                ..entrant
            };
            i
        }
        None => {
            index.insert(key, players.len());
            players.push(entrant);
            players.len() - 1
        }
    }
}

/// One paired round as the store keeps it: its number, its boards' pairings and its byes.
pub type PairedRound = (u32, Vec<Pairing>, Vec<RoundBye>);

/// A bye's player, as the standings show them.
fn bye_entrant(b: &RoundBye) -> Entrant {
    let given = |t: &Option<String>| t.clone().filter(|t| !t.trim().is_empty());
    Entrant {
        name: b.name.trim().to_owned(),
        rating: b.elo,
        title: given(&b.title),
        federation: given(&b.fed),
        fide_id: b.fide,
        start_rank: b.start,
    }
}

/// The kind of bye of a TRF code.
fn bye_kind(code: char) -> ByeKind {
    match code {
        'U' => ByeKind::PairingAllocated,
        'F' => ByeKind::FullPoint,
        'H' => ByeKind::HalfPoint,
        _ => ByeKind::ZeroPoint,
    }
}

/// The field of `rounds` (round number, its pairings and byes; any order) with the results of
/// `games`. Rounds run from 1 to the highest one given; a round without pairings has no boards.
pub fn event_field(rounds: &[PairedRound], games: &[GameRecord]) -> Field {
    let mut index: HashMap<PlayerKey, PlayerIndex> = HashMap::new();
    let mut players: Vec<Entrant> = Vec::new();
    let last = rounds.iter().map(|(r, ..)| *r).max().unwrap_or(0);
    let mut sorted: Vec<&PairedRound> = rounds.iter().collect();
    sorted.sort_by_key(|(r, ..)| *r);
    let mut out = vec![RoundResults::default(); last as usize];
    for (round, pairings, byes) in sorted {
        let Some(slot) = (*round as usize)
            .checked_sub(1)
            .and_then(|i| out.get_mut(i))
        else {
            continue;
        };
        let shown = broadcast_games(games, *round);
        for p in pairings {
            let white = seat(&mut players, &mut index, side_entrant(p, Side::White));
            let black = seat(&mut players, &mut index, side_entrant(p, Side::Black));
            let outcome = shown
                .iter()
                .find(|g| g.board_no == Some(p.board))
                .map_or(BoardOutcome::Pending, |g| {
                    BoardOutcome::from_result(g.confirmed_result())
                });
            slot.boards.push(BoardResult {
                white,
                black,
                outcome,
            });
        }
        for b in byes {
            let player = seat(&mut players, &mut index, bye_entrant(b));
            slot.byes.push(Bye {
                player,
                kind: bye_kind(b.code),
            });
        }
    }
    Field {
        players,
        rounds: out,
    }
}

impl Store {
    /// Every paired round's pairings and byes, by round.
    pub fn paired_rounds(&self) -> Result<Vec<PairedRound>, StoreError> {
        let numbers: Vec<u32> = self
            .conn
            .prepare_cached("SELECT DISTINCT round FROM pairings ORDER BY round")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        numbers
            .into_iter()
            .map(|n| Ok((n, self.pairings(n)?, self.byes(n)?)))
            .collect()
    }

    /// The standings' field: the store's pairings with the results of `games` (see the module).
    pub fn standings_field(&self, games: &[GameRecord]) -> Result<Field, StoreError> {
        Ok(event_field(&self.paired_rounds()?, games))
    }

    /// The event's tie-breaks (`[tournament] tiebreaks`, kept with the event), else FIDE's usual
    /// Swiss list. A stored list that no longer reads is replaced by the usual one.
    pub fn event_tiebreaks(&self) -> Result<Vec<TieBreak>, StoreError> {
        let stored = self.event()?.and_then(|e| e.settings.tiebreaks);
        let names: Vec<&str> = stored
            .as_deref()
            .map(|s| s.split(',').filter(|n| !n.trim().is_empty()).collect())
            .unwrap_or_default();
        Ok(match crate::standings::parse_tiebreaks(&names) {
            Ok(list) if stored.is_some() => list,
            _ => TieBreak::DEFAULT.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::standings::{TieBreak, standings};
    use crate::store::EventRecord;

    #[test]
    fn a_round_reads_its_boards_confirmed_results_and_a_proposed_one_is_pending() {
        let mut store = Store::open_in_memory().unwrap();
        let r1 = vec![Pairing::new(1, "Ann", "Bob"), Pairing::new(2, "Cid", "Dee")];
        let r2 = vec![Pairing::new(1, "Dee", "Ann"), Pairing::new(2, "Bob", "Cid")];
        store.import_pairings(1, &r1).unwrap();
        store.import_pairings(2, &r2).unwrap();
        let game = |round: u32, board: u32, result: &str| GameRecord {
            id: crate::store::GameId(i64::from(round * 10 + board)),
            board: crate::store::BoardId(i64::from(board)),
            board_name: format!("board {board}"),
            kind: crate::game::Kind::Chess,
            orientation: crate::sensor::Orientation::Normal,
            start_position: None,
            date: None,
            started_at_ms: 0,
            ended_at_ms: None,
            white: None,
            black: None,
            result: result.to_owned(),
            termination: None,
            event: None,
            site: None,
            round: Some(round),
            time_control: None,
            board_no: Some(board),
            pairing: None,
            moves: Vec::new(),
            events: Vec::new(),
        };
        // A game the board ended with its result (by the rules).
        let ended = |round: u32, board: u32, result: &str| GameRecord {
            events: vec![EventRecord {
                id: 1,
                at_ms: 0,
                kind: "game_ended".into(),
                ply: None,
                detail: serde_json::json!({ "result": result }),
                what: crate::store::Recorded::Other,
            }],
            ..game(round, board, result)
        };
        // A togyz korgool game scores as a chess game does (the togyz rules' 7.1: 1, ½, 0).
        let togyz = |round, board, result| GameRecord {
            kind: crate::game::Kind::Togyz,
            ..ended(round, board, result)
        };
        // A result the arbiter set (a forfeit).
        let decided = |round: u32, board: u32, result: &str| {
            let decision = crate::store::Decision {
                id: 2,
                game: crate::store::GameId(0),
                at_ms: 0,
                author: "Chief".into(),
                note: None,
                action: crate::store::Action::SetResult {
                    result: result.into(),
                    reason: crate::store::ResultReason::Forfeit,
                    previous_result: "*".into(),
                    previous_termination: None,
                },
            };
            GameRecord {
                events: vec![EventRecord {
                    id: 2,
                    at_ms: 0,
                    kind: "decision".into(),
                    ply: None,
                    detail: decision.fields(),
                    what: crate::store::Recorded::Decision(decision),
                }],
                ..game(round, board, result)
            }
        };
        // Round 2, board 2: the kings showed 1-0, which no one has confirmed: pending.
        let games = vec![
            togyz(1, 1, "1-0"),
            decided(1, 2, "-/+"),
            ended(2, 1, "1/2-1/2"),
            game(2, 2, "1-0"),
        ];
        let field = store.standings_field(&games).unwrap();
        let names: Vec<&str> = field.players.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Ann", "Bob", "Cid", "Dee"]);
        let outcomes: Vec<Vec<BoardOutcome>> = field
            .rounds
            .iter()
            .map(|r| r.boards.iter().map(|b| b.outcome).collect())
            .collect();
        assert_eq!(
            outcomes,
            [
                [BoardOutcome::WhiteWins, BoardOutcome::BlackForfeitWin],
                [BoardOutcome::Draw, BoardOutcome::Pending]
            ]
        );
        // Ann 1.5, Dee 1.5 (a forfeit win and a draw), Bob 0 and Cid 0 with a game pending.
        let s = standings(&field, &[TieBreak::Wins]).unwrap();
        let table: Vec<(&str, u32, String)> = s
            .rows
            .iter()
            .map(|r| (r.entrant.name.as_str(), r.rank, r.points.to_string()))
            .collect();
        assert_eq!(
            table,
            [
                ("Ann", 1, "1.5".into()),
                ("Dee", 2, "1.5".into()),
                ("Bob", 3, "0".into()),
                ("Cid", 3, "0".into())
            ]
        );
    }

    #[test]
    fn the_event_keeps_its_tiebreaks() {
        let mut store = Store::open_in_memory().unwrap();
        assert_eq!(store.event_tiebreaks().unwrap(), TieBreak::DEFAULT.to_vec());
        let info = crate::store::RoundInfo {
            event: "Open".into(),
            site: "Bishkek".into(),
            round: 1,
        };
        let settings = crate::store::EventSettings {
            tiebreaks: Some("wins,sonneborn-berger".into()),
            ..Default::default()
        };
        store.open_event(Some(&info), &settings, 0).unwrap();
        assert_eq!(
            store.event_tiebreaks().unwrap(),
            [TieBreak::Wins, TieBreak::SonnebornBerger]
        );
    }
}
