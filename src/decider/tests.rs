//! The decider on a real SQLite store and a real hub, without HTTP: its refusals are kinds.

use super::*;
use crate::{decider::desk::DeskOrder, game::Kind, lang::Lang, relay::Hub, store::BoardId};

/// A database holding board `b1` with one game begun (no move yet), and a decider over it.
struct Venue {
    _dir: tempfile::TempDir,
    path: PathBuf,
    board: BoardId,
    game: GameId,
    hub: Hub,
    decider: Decider,
}

impl Venue {
    fn new() -> Venue {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("decider.db");
        let mut store = Store::open(&path).unwrap();
        let board = store.board("b1", Kind::Chess).unwrap();
        let game = crate::store::begin_test_game(&mut store, board, 1_000);
        let hub = Hub::new();
        let decider = Decider::new(&path, hub.clone(), None);
        Venue {
            _dir: dir,
            path,
            board,
            game,
            hub,
            decider,
        }
    }

    /// The store as another connection reads it.
    fn store(&self) -> Store {
        Store::open(&self.path).unwrap()
    }
}

fn result(result: &str) -> AdminAction {
    AdminAction::Result(ResultBody {
        result: result.into(),
        reason: "resignation".into(),
        author: Some("Chief".into()),
        note: None,
    })
}

fn note(text: &str) -> AdminAction {
    AdminAction::Note(NoteBody {
        ply: None,
        text: text.into(),
        author: Some("Chief".into()),
    })
}

/// The result the hub shows on board `b1`.
fn shown_result(hub: &Hub) -> Option<String> {
    hub.snapshot()
        .0
        .into_iter()
        .find(|b| b.name == "b1")
        .and_then(|b| b.result)
}

#[tokio::test]
async fn an_unknown_game_is_refused_as_such() {
    let v = Venue::new();
    let unknown = GameId(v.game.0 + 100);
    for action in [note("seen"), result("1-0")] {
        let refused = v.decider.act(unknown, action).await.unwrap_err();
        assert_eq!(refused.reason, Refused::UnknownGame, "{refused:?}");
        assert_eq!(refused.message, format!("no game with id {}", unknown.0));
    }
    let refused = v.decider.take(unknown, note("seen"), 5).await.unwrap_err();
    assert_eq!(refused.reason, Refused::UnknownGame, "{refused:?}");
}

#[tokio::test]
async fn a_wrong_request_is_refused_as_invalid_and_changes_nothing() {
    let v = Venue::new();
    // Not a result (through the board's path: the game is its board's latest).
    let refused = v.decider.act(v.game, result("2-0")).await.unwrap_err();
    assert_eq!(refused.reason, Refused::Invalid, "{refused:?}");
    assert!(
        refused.message.contains("\"2-0\" is not a result"),
        "{refused}"
    );
    // A correction at a ply the game does not have.
    let correct = AdminAction::Correct(CorrectBody {
        ply: 7,
        mv: "e4".into(),
        author: None,
        note: None,
    });
    let refused = v.decider.act(v.game, correct).await.unwrap_err();
    assert_eq!(refused.reason, Refused::Invalid, "{refused:?}");
    assert!(refused.message.contains("has no ply 7"), "{refused}");
    // An empty note.
    let refused = v.decider.act(v.game, note("  ")).await.unwrap_err();
    assert_eq!(refused.reason, Refused::Invalid, "{refused:?}");
    // Round 0, and a round started by a name with a line break in it.
    let refused = v
        .decider
        .start_round_at(0, "Chief".into(), 5)
        .await
        .unwrap_err();
    assert_eq!(
        (refused.reason, refused.message.as_str()),
        (Refused::Invalid, "round must be 1 or more"),
        "round 0"
    );
    assert_eq!(
        refused.in_lang(Lang::Ru),
        Lang::Ru.text("refused.round_zero")
    );
    let refused = v
        .decider
        .start_round_at(1, "Chief\nX".into(), 5)
        .await
        .unwrap_err();
    assert_eq!(refused.reason, Refused::Invalid, "{refused:?}");
    let refused = v.decider.import_rows(0, Vec::new()).await.unwrap_err();
    assert_eq!(refused.reason, Refused::Invalid, "{refused:?}");

    let store = v.store();
    assert!(store.decisions(v.game).unwrap().is_empty());
    assert_eq!(store.round_info().unwrap(), None);
    assert_eq!(shown_result(&v.hub), None);
}

#[tokio::test]
async fn a_decision_taken_twice_is_recorded_once() {
    let v = Venue::new();
    let first = v.decider.take(v.game, result("1-0"), 5_000).await.unwrap();
    let again = v.decider.take(v.game, result("1-0"), 5_000).await.unwrap();
    assert_eq!(first, again, "the one recorded is given back");
    let decisions = v.store().decisions(v.game).unwrap();
    assert_eq!(decisions, vec![first.clone()]);
    assert_eq!((first.at_ms, first.author.as_str()), (5_000, "Chief"));
    // The board's current game: the hub shows the result.
    assert_eq!(shown_result(&v.hub).as_deref(), Some("1-0"));
    // Another time is another decision.
    let later = v.decider.take(v.game, note("seen"), 6_000).await.unwrap();
    assert_ne!(later.id, first.id);
    assert_eq!(v.store().decisions(v.game).unwrap().len(), 2);
}

#[tokio::test]
async fn only_the_boards_current_game_reaches_the_live_page() {
    let v = Venue::new();
    let mut store = v.store();
    let next = crate::store::begin_test_game(&mut store, v.board, 2_000);
    // The earlier game is decided in the store alone: no board records it any more.
    v.decider.act(v.game, result("0-1")).await.unwrap();
    assert_eq!(shown_result(&v.hub), None);
    v.decider.act(next, result("1-0")).await.unwrap();
    assert_eq!(shown_result(&v.hub).as_deref(), Some("1-0"));
}

#[tokio::test]
async fn the_boards_task_takes_the_decision_or_it_is_unavailable() {
    let v = Venue::new();
    // The board's task takes it between two reads of its port.
    let mut desk = v.hub.desks().open(["b1"]);
    let game = v.game;
    let task = tokio::spawn(async move {
        let Some(DeskOrder::Change(change)) = desk.recv().await else {
            panic!("no change at the desk");
        };
        assert_eq!((change.board.as_str(), change.game), ("b1", game));
        let applied = tokio::task::spawn_blocking(change.apply).await.unwrap();
        (applied, desk)
    });
    let decided = v.decider.act(v.game, result("1-0")).await.unwrap();
    let (applied, mut desk) = task.await.unwrap();
    let applied = applied.unwrap();
    assert!(applied.closed && !applied.record_changed, "{applied:?}");
    assert_eq!(v.store().decisions(v.game).unwrap(), vec![decided]);

    // A task that drops it (its store refuses writes, or it is stopping): refused whole.
    let task = tokio::spawn(async move {
        drop(desk.recv().await);
        desk
    });
    let refused = v.decider.act(v.game, result("0-1")).await.unwrap_err();
    let _desk = task.await.unwrap();
    assert_eq!(refused.reason, Refused::Unavailable, "{refused:?}");
    assert_eq!(
        refused.message,
        "board b1 could not take the decision now (its store refuses writes, or it is \
         stopping); nothing changed: take it again once the store takes writes"
    );
    assert_eq!(v.store().decisions(v.game).unwrap().len(), 1);
}

#[tokio::test]
async fn the_event_node_routes_a_decision_and_carries_the_halls_refusal() {
    let v = Venue::new();
    let (route, mut routed) = mpsc::channel(1);
    let decider = v.decider.clone().with_route(Some(route));
    let hall = tokio::spawn(async move {
        let Some(Routed::Decision { game, answer, .. }) = routed.recv().await else {
            panic!("no decision routed");
        };
        let refusal = Refusal::new(Refused::Pending, format!("sent; game {}", game.0));
        answer.send(RouteAnswer::Refused(refusal)).unwrap();
        routed
    });
    let refused = decider.act(v.game, note("seen")).await.unwrap_err();
    assert_eq!(refused, Refusal::new(Refused::Pending, "sent; game 1"));
    // The event node stopping: nothing sent.
    drop(hall.await.unwrap());
    let refused = decider.act(v.game, note("seen")).await.unwrap_err();
    assert_eq!(refused.reason, Refused::Unavailable, "{refused:?}");
    assert!(v.store().decisions(v.game).unwrap().is_empty());
}

#[test]
fn a_refusal_travels_as_json_with_its_kind() {
    let refusal = Refusal::new(Refused::UnknownGame, "no game with id 9");
    let json = serde_json::to_value(&refusal).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"reason": "unknown_game", "message": "no game with id 9"})
    );
    assert_eq!(serde_json::from_value::<Refusal>(json).unwrap(), refusal);
    assert_eq!(refusal.to_string(), "no game with id 9");
}
