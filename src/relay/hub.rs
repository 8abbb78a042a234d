//! The live state of every board, and the numbered stream of what happens on them.
//!
//! Flow: the daemon tells the [`Hub`] when a board connects or is lost, each tracker event once
//! the store writer has made it durable ([`Hub::committed`]), and the clock as its pipeline reads
//! it ([`Hub::clock`]). The hub folds each into the board's [`BoardSnapshot`] (a pure fold over
//! the events) and broadcasts one [`LiveEvent`] (what spectators may see: irregularities are
//! folded in but not sent, snapshots go out [`BoardSnapshot::public`]); while the store refuses a board's writes (a full
//! disk, [`Hub::store_status`]) its snapshot says that recording is suspended, and why, serialised once, with an id that only grows.
//! Subscribers never slow the daemon: a subscriber that lags behind the broadcast buffer loses
//! events and must resync from [`Hub::snapshot`].
//! A board plays chess or togyz korgool ([`Hub::add_board_kind`]): a togyz board keeps the
//! togyz FEN of each move, and its snapshot shows the stores and tuz marks and a 2×9 board.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
};

use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};

use super::{
    live::{BoardLive, BoardSnapshot, Connection, LiveClock, Lost, NOT_PUBLIC},
    view,
};
use crate::{
    decider::{Live, desk::Desks},
    device::serial::now_ms,
    game::Kind,
    sensor::ClockReading,
    store::{Action, Decision, GameRecord},
    tracker::{RecordedMove, Side, TrackerEvent},
};

/// Events a subscriber may fall behind by before it must resync.
const BROADCAST_CAPACITY: usize = 4096;

/// One event for subscribers: its id, its SSE event name and its JSON (with the board's new
/// snapshot when the event changed the position).
#[derive(Clone, Debug)]
pub struct LiveEvent {
    pub id: u64,
    /// `move`, `revision`, `takeback`, `result`, `flag_fall`, `claimable`, `game_end`,
    /// `game_started`, `clock`, `board_connected`, `board_lost`, `decision`, `store`, `record`
    /// (spectators' events: an irregularity and its resolution are folded in, not sent).
    pub kind: &'static str,
    /// What spectators read; `None`: an event for the arbiter only.
    pub json: Option<String>,
    /// What the arbiter reads when it says more than `json` (a decision's author and note).
    pub arbiter_json: Option<String>,
}

impl LiveEvent {
    /// The event's data as `arbiter` or a spectator reads it; `None`: not theirs.
    pub fn data_for(&self, arbiter: bool) -> Option<&str> {
        match (arbiter, &self.arbiter_json) {
            (true, Some(a)) => Some(a),
            _ => self.json.as_deref(),
        }
    }
}

struct State {
    boards: Vec<BoardLive>,
    /// Each board's place in `boards`, by name (boards are only ever added).
    by_name: HashMap<String, usize>,
    /// Each board's version, by place: how many times it was reached to be changed (a
    /// [`ShownMark`] holds while it stays).
    versions: Vec<u64>,
    /// Id of the last event sent.
    last_id: u64,
}

impl State {
    /// Board `name`'s place in `boards`.
    fn find(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Board `name`, if registered, to be changed.
    fn board_mut(&mut self, name: &str) -> Option<&mut BoardLive> {
        let i = self.find(name)?;
        self.board_at(i)
    }

    /// The board at place `i`, to be changed.
    fn board_at(&mut self, i: usize) -> Option<&mut BoardLive> {
        if let Some(v) = self.versions.get_mut(i) {
            *v += 1;
        }
        self.boards.get_mut(i)
    }

    /// Registers `board`: its place.
    fn push(&mut self, board: BoardLive) -> usize {
        let i = self.boards.len();
        self.by_name.insert(board.name.clone(), i);
        self.boards.push(board);
        self.versions.push(0);
        i
    }
}

/// What [`Hub::show_game_after`] hands its caller of a board it showed: the board shows the
/// game's first [`ShownMark::plies`] moves, as they were given, for as long as nothing else
/// changes the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShownMark {
    version: u64,
    plies: usize,
}

impl ShownMark {
    /// How many of the game's moves the board showed.
    pub fn plies(&self) -> usize {
        self.plies
    }
}

struct Inner {
    state: Mutex<State>,
    tx: broadcast::Sender<Arc<LiveEvent>>,
    /// True once the relay shuts down: event streams end.
    closed: watch::Sender<bool>,
    desks: Desks,
}

/// The live state of every board; cheap to clone (one shared state).
#[derive(Clone)]
pub struct Hub {
    inner: Arc<Inner>,
}

/// What the decider reaches of the boards: their desks, their store's refusal, the live page.
impl Live for Hub {
    fn desks(&self) -> &Desks {
        Hub::desks(self)
    }

    fn store_error(&self, board: &str) -> Option<String> {
        self.snapshot()
            .0
            .into_iter()
            .find(|b| b.name == board)
            .and_then(|b| b.store_error)
    }

    fn decision(&self, board: &str, decision: &Decision) {
        Hub::decision(self, board, decision);
    }
}

impl Default for Hub {
    fn default() -> Self {
        Hub::new()
    }
}

impl Hub {
    pub fn new() -> Hub {
        let (tx, _) = broadcast::channel(BROADCAST_CAPACITY);
        Hub {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    boards: Vec::new(),
                    by_name: HashMap::new(),
                    versions: Vec::new(),
                    last_id: 0,
                }),
                tx,
                closed: watch::Sender::new(false),
                desks: Desks::default(),
            }),
        }
    }

    /// The desks of the boards being recorded (decisions that change a record reach them).
    pub fn desks(&self) -> &Desks {
        &self.inner.desks
    }

    /// The arbiter changed the record of board `name`'s game: it shows `moves` now.
    pub fn record_changed(&self, name: &str, moves: &[RecordedMove]) {
        self.update(name, true, |b| {
            b.plies.clear();
            for mv in moves {
                b.push_move(mv);
            }
            Some(("record", json!({ "plies": moves.len() })))
        });
    }

    /// Ends every event stream (the server is shutting down).
    pub fn close(&self) {
        self.inner.closed.send_replace(true);
    }

    /// Turns true when [`Hub::close`] is called.
    pub fn closed(&self) -> watch::Receiver<bool> {
        self.inner.closed.subscribe()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind, still worth showing.
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a chess board (number, if known; the moves of its open game, if resumed).
    pub fn add_board(&self, name: &str, number: Option<u32>, moves: &[RecordedMove]) {
        self.add_board_kind(name, number, Kind::Chess, moves);
    }

    /// Registers a board of `kind` (number, if known; the moves of its open game, if resumed).
    pub fn add_board_kind(
        &self,
        name: &str,
        number: Option<u32>,
        kind: Kind,
        moves: &[RecordedMove],
    ) {
        let mut state = self.lock();
        let mut board = BoardLive::with_kind(name, number, kind, moves);
        match state.board_mut(name) {
            Some(old) => {
                board.learns = old.learns;
                *old = board;
            }
            None => {
                state.push(board);
            }
        }
    }

    /// Board `name`'s sensor learns the board itself (a Certabo board's calibration): the
    /// console offers to have it learn again.
    pub fn set_learns(&self, name: &str) {
        if let Some(b) = self.lock().board_mut(name) {
            b.learns = true;
        }
    }

    /// Registers a board of `kind` showing a stored game (`boardscribe serve`): its moves and,
    /// once it ended, its result as final.
    pub fn add_stored_game(
        &self,
        name: &str,
        number: Option<u32>,
        kind: Kind,
        moves: &[RecordedMove],
        ended: Option<(&str, Option<&str>)>,
    ) {
        self.add_board_kind(name, number, kind, moves);
        if let Some((result, termination)) = ended {
            let mut state = self.lock();
            if let Some(b) = state.board_mut(name) {
                b.result = Some(result.to_owned());
                b.result_final = true;
                b.termination = termination.map(str::to_owned);
            }
        }
    }

    /// Board `name` shows `game` as a delayed broadcast shows it ([`super::delayed`]): its
    /// moves, its result (final once the game ended), `clock`, connected. Broadcast only on a
    /// change: `game_started` when `new_game`, `record` with the snapshot when the game changed,
    /// `clock` when only the clock did. `named`: whether views may name the game by its id
    /// ([`BoardSnapshot::game`]; not while a delayed view shows a game not yet begun).
    pub fn show_game(
        &self,
        game: &GameRecord,
        named: bool,
        clock: Option<LiveClock>,
        new_game: bool,
    ) {
        self.show_game_after(game, named, clock, new_game, None);
    }

    /// [`Hub::show_game`] for a caller that showed the board before and kept what that gave it
    /// (`before`), given that the game's first `before.plies()` moves are the very moves it
    /// gave then (the same stored rows: moves are never rewritten). While nothing else changed
    /// the board since, those moves are not compared again, one by one, with the plies the
    /// board shows. What it gives back holds for the next call, if the board now shows exactly
    /// the game's moves.
    pub fn show_game_after(
        &self,
        game: &GameRecord,
        named: bool,
        clock: Option<LiveClock>,
        new_game: bool,
        before: Option<ShownMark>,
    ) -> Option<ShownMark> {
        let name = game.board_name.as_str();
        // The board as the game makes it, before its moves.
        let mut shown = BoardLive::with_kind(name, game.board_no, game.kind, &[]);
        shown.game = named.then_some(game.id.0);
        if game.kind == Kind::Chess {
            shown.start_fen = game.start_position.clone();
        }
        shown.connection = Connection::Connected;
        if game.result != "*" {
            shown.result = Some(game.result.clone());
            shown.result_final = game.ended_at_ms.is_some();
            shown.termination = game.termination.clone();
        }
        let mut replaced = false;
        // Whether the board shows exactly the game's moves once changed.
        let mut exact = false;
        let changed = self.update_seen(name, true, |b, seen| {
            // A board whose link is known (the event node hears it from the hall) keeps it.
            if b.connection != Connection::Waiting {
                shown.connection = b.connection;
                shown.lost_reason = b.lost_reason.clone();
                shown.lost_since_ms = b.lost_since_ms;
                shown.losses = b.losses;
            }
            // The same game with moves added (or none): only those are pushed, as a board
            // built whole would have them. The plies shown with `known` and untouched since
            // are the game's first moves already.
            let known = before.is_some_and(|m| m.version == seen && m.plies == b.plies.len());
            if !new_game && b.extends(&shown, &game.moves, known) {
                exact = true;
                if b.plies.len() == game.moves.len() {
                    return None;
                }
                for mv in &game.moves[b.plies.len()..] {
                    b.push_move(mv);
                }
                b.clock = clock;
                replaced = true;
                return Some(("record", Some(json!({ "plies": b.plies.len() })), None));
            }
            for mv in &game.moves {
                shown.push_move(mv);
            }
            // Compared without the drawing (the position is in the snapshot) and the clock.
            let without_clock = |board: &BoardLive| {
                let mut v = json!(board.snapshot().public());
                v["clock"] = Value::Null;
                v
            };
            if !new_game && b.game == shown.game && without_clock(b) == without_clock(&shown) {
                return None;
            }
            *b = shown;
            b.clock = clock;
            replaced = true;
            exact = true;
            let kind = if new_game { "game_started" } else { "record" };
            Some((kind, Some(json!({ "plies": b.plies.len() })), None))
        });
        let mut version = changed;
        if !replaced {
            version = self.update_seen(name, false, |b, seen| {
                // Changed by another meanwhile: what it shows is not known.
                exact &= seen == changed;
                if b.clock == clock {
                    return None;
                }
                b.clock = clock;
                clock.map(|c| ("clock", Some(clock_json(&c)), None))
            });
        }
        exact.then_some(ShownMark {
            version,
            plies: game.moves.len(),
        })
    }

    /// Applies `change` to board `name` (registered on first sight) and broadcasts the event it
    /// returns, with the board's snapshot if `with_snapshot`.
    fn update(
        &self,
        name: &str,
        with_snapshot: bool,
        change: impl FnOnce(&mut BoardLive) -> Option<(&'static str, Value)>,
    ) {
        self.update_for(name, with_snapshot, |b| {
            change(b).map(|(kind, value)| (kind, Some(value), None))
        });
    }

    /// [`Hub::update`] with what spectators read (`None`: nothing) and, when it says more, what
    /// the arbiter reads, apart.
    fn update_for(
        &self,
        name: &str,
        with_snapshot: bool,
        change: impl FnOnce(&mut BoardLive) -> Option<(&'static str, Option<Value>, Option<Value>)>,
    ) {
        self.update_seen(name, with_snapshot, |b, _| change(b));
    }

    /// [`Hub::update_for`], `change` told the board's version before it: the board's version
    /// after it.
    fn update_seen(
        &self,
        name: &str,
        with_snapshot: bool,
        change: impl FnOnce(&mut BoardLive, u64) -> Option<(&'static str, Option<Value>, Option<Value>)>,
    ) -> u64 {
        let mut state = self.lock();
        let i = match state.find(name) {
            Some(i) => i,
            None => state.push(BoardLive::new(name, None, &[])),
        };
        let seen = state.versions.get(i).copied().unwrap_or_default();
        let Some(board) = state.board_at(i) else {
            return seen;
        };
        let changed = change(board, seen);
        let version = state.versions.get(i).copied().unwrap_or_default();
        let Some((kind, public, arbiter)) = changed else {
            return version;
        };
        state.last_id += 1;
        let id = state.last_id;
        // No one follows the events now (a stream subscribes first, then reads the boards):
        // nothing to write.
        if self.inner.tx.receiver_count() == 0 {
            return version;
        }
        let board = &state.boards[i];
        let snapshot = with_snapshot.then(|| view::snapshot_json(&board.snapshot().public()));
        let finish = |mut value: Value| {
            if let Some(s) = &snapshot {
                value["snapshot"] = s.clone();
            }
            value["id"] = json!(id);
            value["type"] = json!(kind);
            value["board"] = json!(name);
            value.to_string()
        };
        let event = LiveEvent {
            id,
            kind,
            json: public.map(finish),
            arbiter_json: arbiter.map(finish),
        };
        // Sent under the lock, so ids reach every subscriber in order; no subscriber: dropped.
        let _ignored_if_nobody_listens = self.inner.tx.send(Arc::new(event));
        version
    }

    /// The daemon opened the board.
    pub fn board_connected(&self, name: &str) {
        self.update(name, true, |b| {
            b.connection = Connection::Connected;
            b.lost_reason = None;
            b.lost_since_ms = None;
            Some(("board_connected", json!({})))
        });
    }

    /// The board went away (`why`: for the arbiter): its clock is shown stopped (nobody reads
    /// it), and the board is an alert until it is back.
    pub fn board_lost(&self, name: &str, why: Lost) {
        let now = now_ms();
        self.update(name, true, |b| {
            b.connection = Connection::Lost;
            let reason = why.to_string();
            b.lost_reason = Some(why);
            if b.lost_since_ms.is_none() {
                b.lost_since_ms = Some(now);
                b.losses += 1;
            }
            if let Some(clock) = b.clock.as_mut() {
                clock.running = None;
            }
            Some(("board_lost", json!({ "reason": reason })))
        });
    }

    /// The store closed the game board `name` shows (the arbiter's result, set from another
    /// process, or the game's end): `result` stands, and nothing the board does extends it.
    pub fn game_closed(&self, name: &str, result: &str, termination: Option<&str>) {
        self.update(name, true, |b| {
            if b.result_final && b.result.as_deref() == Some(result) {
                return None;
            }
            b.result = Some(result.to_owned());
            b.result_final = true;
            b.termination = termination.map(str::to_owned);
            stop_clock(b);
            Some(("result", json!({ "result": result, "final": true })))
        });
    }

    /// The store refuses board `name`'s writes (`Some(why)`: recording is suspended) or takes
    /// them again (`None`); broadcast only on a change.
    pub fn store_status(&self, name: &str, error: Option<&str>) {
        self.update(name, true, |b| {
            if b.store_error.as_deref() == error {
                return None;
            }
            b.store_error = error.map(str::to_owned);
            let recording = match error {
                Some(_) => "suspended",
                None => "ok",
            };
            Some(("store", json!({ "recording": recording, "error": error })))
        });
    }

    /// An event of board `name` that the store has made durable. Irregularities are folded
    /// in but not sent to spectators ([`NOT_PUBLIC`]).
    pub fn committed(&self, name: &str, event: &TrackerEvent) {
        self.update(name, true, |b| {
            let (kind, value) = b.apply(event);
            (!NOT_PUBLIC.contains(&kind)).then_some((kind, value))
        });
    }

    /// An arbiter's decision on the game board `name` has now (made through the admin API): a
    /// result set is final from now on (`*` is none); a ruling closes its irregularity.
    /// Spectators read a result or a correction without its author or note, and a ruling or a
    /// note not at all (they see results, not rulings); the arbiter reads each whole.
    pub fn decision(&self, name: &str, decision: &Decision) {
        self.update_for(name, true, |b| {
            // Shown once, whichever way it came (the decider, or another process's: outside).
            if decision.id <= b.last_decision {
                return None;
            }
            b.last_decision = decision.id;
            let mut value = json!({
                "game": decision.game.0, "decision": decision.id,
                "action": decision.action.as_str(),
            });
            let mut public = true;
            match &decision.action {
                Action::SetResult { result, reason, .. } => {
                    let set = result != "*";
                    b.result = set.then(|| result.clone());
                    b.result_final = set;
                    b.termination = set.then(|| reason.as_str().to_owned());
                    if set {
                        stop_clock(b);
                    }
                    value["result"] = json!(result);
                }
                Action::Rule { irregularity, .. } => {
                    if let Some(i) = b.irregularities.iter().position(|i| i.id == *irregularity) {
                        let ruled = b.irregularities.remove(i);
                        b.ruled.push((decision.id, ruled));
                    }
                    public = false;
                }
                Action::Note { .. } => public = false,
                Action::CorrectMove { .. } | Action::Resume { .. } => {}
                Action::Undo {
                    decision: undone,
                    undone: what,
                    result,
                    termination,
                    ..
                } => {
                    value["undone"] = json!(undone);
                    // An undone ruling's irregularity is open again (when this hub saw it ruled).
                    if let Some(i) = b.ruled.iter().position(|(d, _)| d == undone) {
                        let (_, open) = b.ruled.remove(i);
                        b.irregularities.push(open);
                    }
                    if let Some(result) = result {
                        let set = result != "*";
                        b.result = set.then(|| result.clone());
                        b.result_final = set;
                        b.termination = termination.clone().filter(|_| set);
                        value["result"] = json!(result);
                    }
                    public = what == "set_result" || what == "correct_move" || what == "resume";
                }
            }
            let public = public.then(|| value.clone());
            let mut arbiter = value;
            arbiter["author"] = json!(decision.author);
            arbiter["note"] = json!(decision.note);
            if let Action::Rule { irregularity, .. } = &decision.action {
                arbiter["irregularity"] = json!(irregularity);
            }
            Some(("decision", public, Some(arbiter)))
        });
    }

    /// The board's clock as read now; broadcast only when it shows something new.
    pub fn clock(&self, name: &str, reading: &ClockReading, white_on_left: bool) {
        let mut clock = LiveClock::from_reading(reading, white_on_left);
        self.update(name, false, |b| {
            // After the final result the game's clocks stand, whatever the board's clock does.
            if b.result_final {
                clock.running = None;
            }
            if b.clock == Some(clock) {
                return None;
            }
            b.clock = Some(clock);
            Some(("clock", clock_json(&clock)))
        });
    }

    /// Every board, in the order registered, and the id of the last event they include.
    pub fn snapshot(&self) -> (Vec<BoardSnapshot>, u64) {
        let state = self.lock();
        let boards = state.boards.iter().map(BoardLive::snapshot).collect();
        (boards, state.last_id)
    }

    /// Every board's name, number and kind, in the order registered.
    pub fn boards(&self) -> Vec<(String, Option<u32>, Kind)> {
        self.lock()
            .boards
            .iter()
            .map(|b| (b.name.clone(), b.number, b.kind))
            .collect()
    }

    /// A subscription to every event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<LiveEvent>> {
        self.inner.tx.subscribe()
    }
}

/// The game is over: its clocks stand as they are.
fn stop_clock(b: &mut BoardLive) {
    if let Some(c) = b.clock.as_mut() {
        c.running = None;
    }
}

/// A `clock` event's fields.
fn clock_json(clock: &LiveClock) -> Value {
    json!({
        "white_ms": clock.white_ms, "black_ms": clock.black_ms,
        "running": clock.running.map(Side::as_str),
        "white_flag": clock.white_flag, "black_flag": clock.black_flag,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relay::live::{Recording, START_FEN, TogyzLive};
    use crate::{
        arbiter::IrregularityKind,
        game::{
            Outcome,
            togyz::{self, notation as tnotation},
        },
    };

    fn mv(ply: u32, san: &str, uci: &str, fen: &str, tt: bool) -> RecordedMove {
        RecordedMove {
            ply,
            notation: san.into(),
            uci: Some(uci.into()),
            position: fen.into(),
            at_ms: 0,
            clock_white_ms: Some(600_000),
            clock_black_ms: Some(590_000),
            time_trouble: tt,
        }
    }

    const E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    const E5: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    const C5: &str = "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";

    #[test]
    fn moves_revisions_and_takebacks_fold_into_the_position() {
        let mut b = BoardLive::new("b1", Some(1), &[]);
        assert_eq!(b.snapshot().fen, START_FEN);
        b.apply(&TrackerEvent::Move(mv(1, "e4", "e2e4", E4, false)));
        let (kind, v) = b.apply(&TrackerEvent::Move(mv(2, "e5", "e7e5", E5, true)));
        assert_eq!(kind, "move");
        assert_eq!(v["san"], "e5");
        let s = b.snapshot();
        assert_eq!(
            (s.ply, s.side_to_move, s.fen.as_str()),
            (2, Side::White, E5)
        );
        assert_eq!(s.moves, ["e4", "e5"]);
        assert!(s.time_trouble.black && !s.time_trouble.white);
        b.apply(&TrackerEvent::Revision {
            at_ms: 1,
            old: mv(2, "e5", "e7e5", E5, true),
            new: mv(2, "c5", "c7c5", C5, false),
        });
        let s = b.snapshot();
        assert_eq!(s.moves, ["e4", "c5"]);
        assert_eq!(s.last_move.unwrap().uci.as_deref(), Some("c7c5"));
        b.apply(&TrackerEvent::Takeback {
            at_ms: 2,
            from_ply: 2,
            to_ply: 1,
        });
        let s = b.snapshot();
        assert_eq!(
            (s.ply, s.fen.as_str(), s.side_to_move),
            (1, E4, Side::Black)
        );
    }

    #[test]
    fn irregularities_stay_open_until_resolved_and_a_game_end_is_final() {
        let mut b = BoardLive::new("b1", None, &[]);
        b.apply(&TrackerEvent::Irregularity {
            at_ms: 5,
            since_ms: 1,
            id: 1,
            ply: 1,
            kind: IrregularityKind::Displaced,
            player: None,
            detail: "e2 empty".into(),
            article: Some("7.4".into()),
            ruling: None,
            ruling_phrase: None,
            detail_phrase: None,
        });
        assert_eq!(b.snapshot().irregularities.len(), 1);
        b.apply(&TrackerEvent::Resolved {
            at_ms: 6,
            id: 1,
            ply: 1,
            how: "position restored".into(),
            how_phrase: None,
        });
        assert!(b.snapshot().irregularities.is_empty());
        b.apply(&TrackerEvent::GameEnded {
            at_ms: 7,
            after_ply: 0,
            outcome: Outcome::Draw,
            termination: "agreed".into(),
        });
        b.apply(&TrackerEvent::ResultGesture {
            at_ms: 8,
            after_ply: 0,
            proposed: Outcome::WhiteWins,
        });
        let s = b.snapshot();
        assert_eq!(
            (s.result.as_deref(), s.result_final),
            (Some("1/2-1/2"), true)
        );
    }

    #[test]
    fn the_running_clock_is_told_by_colour() {
        let reading = ClockReading {
            left_ms: 100_000,
            right_ms: 200_000,
            running: true,
            lever_right_high: true,
            left_flag: false,
            right_flag: true,
        };
        // White on the left, the right-hand clock runs: Black's.
        let c = LiveClock::from_reading(&reading, true);
        assert_eq!(
            (c.white_ms, c.black_ms, c.running),
            (100_000, 200_000, Some(Side::Black))
        );
        assert!(c.black_flag && !c.white_flag);
        let c = LiveClock::from_reading(&reading, false);
        assert_eq!(
            (c.white_ms, c.black_ms, c.running),
            (200_000, 100_000, Some(Side::White))
        );
        let stopped = ClockReading {
            running: false,
            ..reading
        };
        assert_eq!(LiveClock::from_reading(&stopped, true).running, None);
    }

    /// Togyz moves as the tracker records them: notation and the FEN after, from the rules.
    fn togyz_moves(pits: &[u8]) -> Vec<RecordedMove> {
        let mut pos = togyz::Position::new();
        pits.iter()
            .enumerate()
            .map(|(i, &p)| {
                let (next, s) = pos.play_with_info(togyz::Move::new(p).unwrap()).unwrap();
                pos = next;
                RecordedMove {
                    ply: i as u32 + 1,
                    notation: tnotation::MoveText::from_sowing(&s).to_string(),
                    uci: None,
                    position: tnotation::to_fen(&pos),
                    at_ms: 0,
                    clock_white_ms: None,
                    clock_black_ms: None,
                    time_trouble: false,
                }
            })
            .collect()
    }

    /// A stored game of `kind` on board `b1` with `moves`.
    fn stored(id: i64, kind: Kind, moves: &[RecordedMove], result: u8) -> GameRecord {
        let (result, ended) = match result {
            0 => ("*", None),
            1 => ("1-0", Some(9)),
            2 => ("1/2-1/2", None),
            _ => ("0-1", Some(7)),
        };
        GameRecord {
            id: crate::store::GameId(id),
            board: crate::store::BoardId(1),
            board_name: "b1".into(),
            kind,
            orientation: crate::sensor::Orientation::Normal,
            start_position: None,
            date: None,
            started_at_ms: 0,
            ended_at_ms: ended,
            white: None,
            black: None,
            result: result.into(),
            termination: ended.map(|_| "normal".into()),
            event: None,
            site: None,
            round: None,
            time_control: None,
            board_no: Some(1),
            pairing: None,
            moves: moves.to_vec(),
            events: Vec::new(),
        }
    }

    /// A clock showing White `clock_s` seconds (none for 0), stopped.
    fn test_clock(clock_s: u64) -> Option<LiveClock> {
        (clock_s > 0).then_some(LiveClock {
            white_ms: clock_s * 1000,
            black_ms: 5000,
            running: None,
            white_flag: false,
            black_flag: false,
        })
    }

    /// The kinds of the events `rx` has been sent since it was last read.
    fn kinds_sent(rx: &mut broadcast::Receiver<Arc<LiveEvent>>) -> Vec<&'static str> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| e.kind)
            .collect()
    }

    /// What `show_game` did before it pushed only a game's new moves: the board built whole
    /// from the game, kept if its public snapshot (clock aside) is the same; the event sent.
    fn shown_whole(
        b: &BoardLive,
        game: &GameRecord,
        named: bool,
        clock: Option<LiveClock>,
        new_game: bool,
    ) -> (BoardLive, Option<&'static str>) {
        let mut shown = BoardLive::with_kind(&game.board_name, game.board_no, game.kind, &[]);
        shown.game = named.then_some(game.id.0);
        for mv in &game.moves {
            shown.push_move(mv);
        }
        shown.connection = Connection::Connected;
        if game.result != "*" {
            shown.result = Some(game.result.clone());
            shown.result_final = game.ended_at_ms.is_some();
            shown.termination = game.termination.clone();
        }
        if b.connection != Connection::Waiting {
            shown.connection = b.connection;
            shown.lost_reason = b.lost_reason.clone();
            shown.lost_since_ms = b.lost_since_ms;
            shown.losses = b.losses;
        }
        let without_clock = |board: &BoardLive| {
            let mut v = json!(board.snapshot().public());
            v["clock"] = Value::Null;
            v
        };
        let mut out = b.clone();
        if !new_game && b.game == shown.game && without_clock(b) == without_clock(&shown) {
            if out.clock != clock {
                out.clock = clock;
                return (out, clock.map(|_| "clock"));
            }
            return (out, None);
        }
        shown.clock = clock;
        (
            shown,
            Some(if new_game { "game_started" } else { "record" }),
        )
    }

    proptest::proptest! {
        /// Pushing only a game's new moves gives the very board, and the very events, that
        /// building it whole gave: over games that grow, shrink (takebacks), change a move,
        /// end, start again, lose and regain their link, with time-trouble marks and clocks.
        #[test]
        fn a_game_shown_move_by_move_is_the_game_shown_whole(
            pits in proptest::collection::vec(1u8..=9, 1..40),
            steps in proptest::collection::vec(
                (0usize..45, 0u8..4, 0u8..8, proptest::bool::ANY, 0u8..6, 0u64..3),
                1..30,
            ),
        ) {
            let base = togyz_legal_moves(&pits);
            let hub = Hub::new();
            hub.add_board_kind("b1", Some(1), Kind::Togyz, &[]);
            let mut rx = hub.subscribe();
            let mut game_id = 1;
            for (len, result, tweak, named, what, clock_s) in steps {
                let mut moves: Vec<RecordedMove> = base[..len.min(base.len())].to_vec();
                // A mark of time trouble on some move, or a move the arbiter changed.
                if let Some(m) = moves.get_mut(usize::from(tweak)) {
                    m.time_trouble = true;
                }
                if tweak == 7 && let Some(m) = moves.last_mut() {
                    m.notation.push('x');
                }
                let new_game = what == 0;
                if new_game {
                    game_id += 1;
                }
                match what {
                    1 => hub.board_lost("b1", Lost::HallLost),
                    2 => hub.board_connected("b1"),
                    _ => {}
                }
                while rx.try_recv().is_ok() {}
                let game = stored(game_id, Kind::Togyz, &moves, result);
                let clock = test_clock(clock_s);
                let before = hub.lock().boards[0].clone();
                let (want, event) = shown_whole(&before, &game, named, clock, new_game);
                hub.show_game(&game, named, clock, new_game);
                let got = hub.lock().boards[0].clone();
                proptest::prop_assert_eq!(&got, &want);
                let sent = kinds_sent(&mut rx);
                proptest::prop_assert_eq!(sent, event.into_iter().collect::<Vec<_>>());
            }
        }
    }

    proptest::proptest! {
        /// Showing a game after what the last showing gave ([`Hub::show_game_after`]) gives
        /// the very board and events that building it whole gives, whatever changed the board
        /// in between (its link, a record the arbiter changed): the mark is taken at its word
        /// only while nothing else has changed the board.
        #[test]
        fn a_game_shown_after_its_mark_is_the_game_shown_whole(
            pits in proptest::collection::vec(1u8..=9, 1..40),
            steps in proptest::collection::vec((0usize..45, 0u8..4, 0u8..8, 0u64..3), 1..30),
        ) {
            let base = togyz_legal_moves(&pits);
            let hub = Hub::new();
            hub.add_board_kind("b1", Some(1), Kind::Togyz, &[]);
            let mut rx = hub.subscribe();
            let mut game_id = 1;
            let mut mark: Option<ShownMark> = None;
            let mut given: Vec<RecordedMove> = Vec::new();
            for (len, result, what, clock_s) in steps {
                let moves: Vec<RecordedMove> = base[..len.min(base.len())].to_vec();
                let new_game = what == 0;
                if new_game {
                    game_id += 1;
                }
                match what {
                    1 => hub.board_lost("b1", Lost::HallLost),
                    2 => hub.board_connected("b1"),
                    // The same number of plies, one of them another move.
                    3 => {
                        let mut other = hub.lock().boards[0].plies.len();
                        other = other.min(base.len());
                        let mut changed = base[..other].to_vec();
                        if let Some(m) = changed.first_mut() {
                            m.notation.push('x');
                        }
                        hub.record_changed("b1", &changed);
                    }
                    _ => {}
                }
                while rx.try_recv().is_ok() {}
                let game = stored(game_id, Kind::Togyz, &moves, result);
                let clock = test_clock(clock_s);
                // What the caller can say: its first moves are the ones it gave last time.
                let said = mark.filter(|m| {
                    moves.len() >= m.plies() && moves[..m.plies()] == given[..m.plies()]
                });
                let before = hub.lock().boards[0].clone();
                let (want, event) = shown_whole(&before, &game, true, clock, new_game);
                mark = hub.show_game_after(&game, true, clock, new_game, said);
                given = moves;
                let got = hub.lock().boards[0].clone();
                proptest::prop_assert_eq!(&got, &want);
                let sent = kinds_sent(&mut rx);
                proptest::prop_assert_eq!(sent, event.into_iter().collect::<Vec<_>>());
            }
        }
    }

    /// Togyz moves from `pits`, each taken from the first pit with korgools at or after it.
    fn togyz_legal_moves(pits: &[u8]) -> Vec<RecordedMove> {
        let mut pos = togyz::Position::new();
        let mut chosen = Vec::new();
        for &p in pits {
            let legal = (0..9)
                .map(|i| (p - 1 + i) % 9 + 1)
                .find(|&q| togyz::Move::new(q).is_some_and(|m| pos.play_with_info(m).is_ok()));
            let Some(q) = legal else { break };
            let m = togyz::Move::new(q).unwrap();
            pos = pos.play_with_info(m).unwrap().0;
            chosen.push(q);
        }
        togyz_moves(&chosen)
    }

    #[test]
    fn a_togyz_board_shows_stores_tuz_and_the_last_pits() {
        // Rules summary section 5: 65(10) 65(10) 99 89(12) 23(22) 45X, black's tuz on white's 5.
        let moves = togyz_moves(&[6, 6, 9, 8, 2, 4]);
        let names: Vec<&str> = moves.iter().map(|m| m.notation.as_str()).collect();
        assert_eq!(names, ["65", "65", "99", "89", "23", "45X"]);
        let mut b = BoardLive::with_kind("t1", Some(3), Kind::Togyz, &[]);
        let s = b.snapshot();
        assert_eq!(s.kind, Kind::Togyz);
        assert_eq!(s.fen, tnotation::to_fen(&togyz::Position::new()));
        assert!(view::draw(&s).contains(r#"class="togyzboard""#));
        for mv in &moves {
            b.apply(&TrackerEvent::Move(mv.clone()));
        }
        let s = b.snapshot();
        assert_eq!((s.ply, s.side_to_move), (6, Side::White));
        assert_eq!(s.last_move.as_ref().unwrap().san, "45X");
        assert_eq!(
            s.togyz,
            Some(TogyzLive {
                white_store: 22,
                black_store: 15,
                white_tuz: None,
                black_tuz: Some(5),
            })
        );
        // 45X: black's pit 4 (location 12) to white's pit 5 (location 4), the new tuz.
        assert!(view::draw(&s).contains(
            r#"class="pit tuz last" data-side="white" data-pit="5" data-count="0" data-tuz="black""#
        ));
        assert!(
            view::draw(&s)
                .contains(r#"class="pit last" data-side="black" data-pit="4" data-count="1""#)
        );
        assert!(view::draw(&s).contains(r#"data-store="white" data-count="22""#));
        // A takeback shows the position before, a new game the start, still togyz.
        b.apply(&TrackerEvent::Takeback {
            at_ms: 1,
            from_ply: 6,
            to_ply: 5,
        });
        let s = b.snapshot();
        assert_eq!(s.togyz.unwrap().black_tuz, None);
        assert_eq!(s.togyz.unwrap().white_store, 22);
        b.apply(&TrackerEvent::GameStarted {
            at_ms: 2,
            orientation: crate::sensor::Orientation::Normal,
            start: None,
        });
        assert_eq!(b.snapshot().kind, Kind::Togyz);
        assert_eq!(b.snapshot().ply, 0);
        // The hub keeps the kind of a registered board, resumed with its moves.
        let hub = Hub::new();
        hub.add_board_kind("t1", None, Kind::Togyz, &moves[..3]);
        hub.add_board("c1", None, &[]);
        let (boards, _) = hub.snapshot();
        assert_eq!(boards[0].moves, ["65", "65", "99"]);
        assert_eq!(boards[0].togyz.unwrap().white_store, 10);
        assert_eq!((boards[1].kind, boards[1].togyz), (Kind::Chess, None));
    }

    #[tokio::test]
    async fn events_are_numbered_in_order_and_an_unchanged_clock_is_not_sent() {
        let hub = Hub::new();
        hub.add_board("b1", Some(1), &[]);
        let mut rx = hub.subscribe();
        hub.board_connected("b1");
        hub.committed("b1", &TrackerEvent::Move(mv(1, "e4", "e2e4", E4, false)));
        let reading = ClockReading {
            left_ms: 1,
            right_ms: 2,
            running: false,
            lever_right_high: false,
            left_flag: false,
            right_flag: false,
        };
        hub.clock("b1", &reading, true);
        hub.clock("b1", &reading, true);
        let ids: Vec<(u64, &str)> = (0..3)
            .map(|_| rx.try_recv().map(|e| (e.id, e.kind)).unwrap())
            .collect();
        assert_eq!(ids, [(1, "board_connected"), (2, "move"), (3, "clock")]);
        assert!(rx.try_recv().is_err());
        let (boards, last) = hub.snapshot();
        assert_eq!(last, 3);
        assert_eq!(boards[0].connection, Connection::Connected);
        assert_eq!(boards[0].fen, E4);
    }

    #[test]
    fn after_the_final_result_the_clocks_stand() {
        let hub = Hub::new();
        hub.add_board("b1", Some(1), &[]);
        let running = ClockReading {
            left_ms: 60_000,
            right_ms: 50_000,
            running: true,
            lever_right_high: false,
            left_flag: false,
            right_flag: false,
        };
        let runs = |hub: &Hub| hub.snapshot().0[0].clock.and_then(|c| c.running);
        hub.clock("b1", &running, true);
        assert!(runs(&hub).is_some());
        hub.game_closed("b1", "1-0", Some("resignation"));
        assert_eq!(runs(&hub), None);
        // The board's clock goes on; the game's does not.
        hub.clock(
            "b1",
            &ClockReading {
                left_ms: 59_000,
                ..running
            },
            true,
        );
        assert_eq!(runs(&hub), None);
        assert_eq!(hub.snapshot().0[0].clock.map(|c| c.white_ms), Some(59_000));
    }

    #[tokio::test]
    async fn a_refusing_store_suspends_recording_until_it_takes_writes_again() {
        let hub = Hub::new();
        hub.add_board("b1", Some(1), &[]);
        let mut rx = hub.subscribe();
        let why = "the disk holding /x.db is full: free space there; recording resumes by itself";
        hub.store_status("b1", Some(why));
        hub.store_status("b1", Some(why));
        let (boards, _) = hub.snapshot();
        assert_eq!(boards[0].recording, Some(Recording::Suspended));
        assert_eq!(boards[0].store_error.as_deref(), Some(why));
        // A new game keeps the suspension: only the store lifts it.
        hub.committed(
            "b1",
            &TrackerEvent::GameStarted {
                at_ms: 1,
                orientation: crate::sensor::Orientation::Normal,
                start: None,
            },
        );
        assert_eq!(hub.snapshot().0[0].recording, Some(Recording::Suspended));
        hub.store_status("b1", None);
        let s = &hub.snapshot().0[0];
        assert_eq!(
            (s.recording, s.store_error.as_deref()),
            (Some(Recording::Ok), None)
        );
        let kinds: Vec<&str> = std::iter::from_fn(|| rx.try_recv().ok().map(|e| e.kind)).collect();
        assert_eq!(
            kinds,
            ["store", "game_started", "store"],
            "a repeat is not sent"
        );
    }
}
