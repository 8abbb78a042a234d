//! The JSON files of a LiveChess-style folder, with the field names DGT LiveChess writes (as the
//! Lichess broadcaster's sample tree and lila's reader of LiveChess Cloud show them):
//! `tournament.json` (`id`, `name`, `location`, `timecontrol`, `rounds: [{count, live}]`) and
//! `round-N/index.json` (`pairings: [{white, black, result, live}]`, one per board in board order,
//! each player `{fname, mname, lname, title, federation, fideid}`). Pure.
//!
//! Flow: the folder relay (`broadcast::folder`) reads the event, the rounds, the round's pairings and
//! its games (as a public output shows them: delayed, if the venue delays) into a
//! [`FolderRound`], and writes [`tournament_json`] and [`round_index_json`] beside the PGN files.
//! A player's name `Surname, Given names` is split as LiveChess splits it (`lname`, `fname`); a
//! board with neither a pairing nor a game is an empty pairing, so that the n-th pairing stays
//! board n.

use serde_json::{Value, json};

use super::{pgn::pgn_result, round::broadcast_games};
use crate::{
    pairings::Pairing,
    store::{GameRecord, PlayerRecord, RoundRecord, StoredEvent},
    tracker::Side,
};

/// One round of the folder as its writer reads it.
#[derive(Clone, Debug, Default)]
pub struct FolderRound {
    pub round: u32,
    /// The games of the round as shown (one picked per board by [`broadcast_games`]).
    pub games: Vec<GameRecord>,
    pub event: Option<StoredEvent>,
    /// Every round started, for `tournament.json`.
    pub rounds: Vec<RoundRecord>,
    /// The round's pairings.
    pub pairings: Vec<Pairing>,
}

/// `tournament.json`: the event and, per round, its games (`count`) and those in play (`live`;
/// counted for the round written, whose games are at hand).
pub fn tournament_json(f: &FolderRound) -> Value {
    let live_now = broadcast_games(&f.games, f.round)
        .iter()
        .filter(|g| is_live(g))
        .count();
    let last = f
        .rounds
        .iter()
        .map(|r| r.number)
        .chain([f.round])
        .max()
        .unwrap_or(f.round);
    let rounds: Vec<Value> = (1..=last)
        .map(|n| {
            let r = f.rounds.iter().find(|r| r.number == n);
            let count = r.map_or(0, |r| r.pairings.max(r.games));
            let live = if n == f.round { live_now } else { 0 };
            json!({ "count": count, "live": live })
        })
        .collect();
    let event = f.event.as_ref();
    let name = event
        .map(|e| e.round.event.clone())
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "boardscribe".to_owned());
    json!({
        "id": name,
        "name": name,
        "location": event.map(|e| e.round.site.clone()).filter(|s| !s.trim().is_empty()),
        "timecontrol": event.and_then(|e| e.settings.time_control.clone()),
        "rounds": rounds,
    })
}

/// `round-N/index.json`: one pairing per board, board 1 first.
pub fn round_index_json(f: &FolderRound) -> Value {
    let games = broadcast_games(&f.games, f.round);
    let last = games
        .iter()
        .filter_map(|g| g.board_no)
        .chain(f.pairings.iter().map(|p| p.board))
        .max()
        .unwrap_or(0);
    let pairings: Vec<Value> = (1..=last)
        .map(|board| {
            let game = games.iter().find(|g| g.board_no == Some(board));
            let paired = f.pairings.iter().find(|p| p.board == board);
            let player = |side: Side| {
                game.and_then(|g| g.player(side))
                    .or_else(|| paired.and_then(|p| p.player(side)))
            };
            json!({
                "white": player_json(player(Side::White).as_ref()),
                "black": player_json(player(Side::Black).as_ref()),
                "result": game.map_or("*", |g| pgn_result(&g.result)),
                "live": game.is_some_and(|g| is_live(g)),
            })
        })
        .collect();
    json!({ "pairings": pairings })
}

/// A game in play: moves made, no result yet.
fn is_live(g: &GameRecord) -> bool {
    !g.moves.is_empty() && g.result == "*" && g.ended_at_ms.is_none()
}

/// A player as LiveChess writes one: `Surname, Given` split into `lname` and `fname`.
fn player_json(p: Option<&PlayerRecord>) -> Value {
    let Some(p) = p else {
        return json!({
            "fname": null, "mname": null, "lname": null,
            "title": null, "federation": null, "fideid": null,
        });
    };
    let (lname, fname) = match p.name.split_once(',') {
        Some((last, first)) => (last.trim(), Some(first.trim()).filter(|f| !f.is_empty())),
        None => (p.name.trim(), None),
    };
    json!({
        "fname": fname,
        "mname": null,
        "lname": lname,
        "title": p.title,
        "federation": p.fed,
        "fideid": p.fide,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_as_livechess_writes_them() {
        let p = PlayerRecord {
            name: "Abenov, Arman".into(),
            fide: Some(13_700_001),
            elo: Some(2500),
            title: Some("GM".into()),
            fed: Some("KAZ".into()),
        };
        assert_eq!(
            player_json(Some(&p)),
            json!({"fname": "Arman", "mname": null, "lname": "Abenov", "title": "GM",
                   "federation": "KAZ", "fideid": 13_700_001})
        );
        let one = PlayerRecord {
            name: "Magnus".into(),
            ..PlayerRecord::default()
        };
        assert_eq!(player_json(Some(&one))["lname"], "Magnus");
        assert_eq!(player_json(Some(&one))["fname"], Value::Null);
    }

    #[test]
    fn boards_without_anything_keep_their_place() {
        let f = FolderRound {
            round: 2,
            pairings: vec![
                Pairing::new(1, "A, B", "C, D"),
                Pairing::new(3, "E, F", "G, H"),
            ],
            ..FolderRound::default()
        };
        let index = round_index_json(&f);
        let pairings = index["pairings"].as_array().unwrap();
        assert_eq!(pairings.len(), 3);
        assert_eq!(pairings[1]["white"]["lname"], Value::Null);
        assert_eq!(pairings[2]["black"]["lname"], "G");
        assert_eq!(pairings[2]["result"], "*");
        assert_eq!(pairings[2]["live"], false);
        let t = tournament_json(&f);
        assert_eq!(t["rounds"].as_array().unwrap().len(), 2);
        assert_eq!(t["name"], "boardscribe");
    }
}
