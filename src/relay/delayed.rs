//! The delayed feed: what spectators follow on the page and in the public event stream when the
//! venue delays its broadcast (`[relay] delay`).
//!
//! Flow: every half second (a turn, then `TICK`) [`follow`] brings the public [`Hub`] forward
//! to the moment `delay` ago, through a read-only connection of its own (a pushed output turned
//! by [`crate::broadcast::run`]). Each board shows its game as the public view
//! ([`crate::broadcast::public::view`], `Shown::Boards`) gives it at that moment: from stored
//! times only, so a restart inside the window shows nothing newer. The view is followed, not
//! read whole at every turn ([`Flow::Incremental`]); it is kept equal to the full read at every
//! turn (tests/suite/delayed_incremental.rs):
//! - nothing committed since the last turn (`PRAGMA data_version`, read before the turn's read
//!   transaction): only the games whose next change time (the first stored time after the last
//!   moment among their moves made, their retractions' events, their events, their start and
//!   end: [`Store::next_change`]) the moment has reached are read again;
//! - something committed: the rows written since the last turn are found from marks
//!   ([`Store::touched_since`]: move and event rowids past the last ones read, moves retracted
//!   since, told by their count). A game with a new event, a newly retracted move or a new move
//!   made by the moment (a late one: a hall's records reaching the event node late, moves
//!   recovered from a board's memory) is read again; a new move made after the moment only
//!   brings the game's next change time forward. Every board's header (its game then, players,
//!   pairing, result, end; [`Store::board_headers_as_of`]) is read again and compared: a game
//!   whose header changed (an arbiter's result, a correction, pairings imported, a board
//!   renamed, a replica's update) or a board whose game is another is read again. The headers
//!   are also read again once the moment passes a game's start;
//! - the moment went back (the wall clock did), the first turn, a turn that failed: every game.
//!
//! As a backstop, two boards a turn, in turn, are read in full whatever the marks say; a change
//! found so is shown, logged and counted ([`DelayedView::unseen`]). A board is handed to the
//! hub ([`Hub::show_game`], which broadcasts only what changed) only when its game, whether it
//! is named, or its clock changed since it was last handed, so that the hub's state is the one
//! the full flow gives. The clocks are those [`clocks_at`] gives for the moment, from the game
//! kept in memory, every board at every turn. Boards the record's hub knows and the store has
//! no game for yet are shown waiting. The arbiter's hub is never delayed. [`Flow::Full`] (every
//! board's game read and handed at every turn, the flow before) is kept for the benchmark
//! (`benches/delayed.rs`) and the tests.
//!
//! A game's boundary: the board's next game replaces its game here (a `game_started` event)
//! once the next one began the delay ago in stored time; until then the game before it is
//! shown as it stood, over only if it ended by then. That moment ([`crate::store::begun_by`]
//! at the cutoff) is the one every public output first names the next game at: its id in
//! `/api/boards` and the page, `/games/ID.pgn`, the round PGNs.

use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
    time::Duration,
};

use tokio::sync::watch;

use super::{Hub, live::LiveClock};
use crate::{
    Millis,
    broadcast::{
        self, Output, Reader, Turn, Wake,
        public::{self, Shown},
    },
    export::publish::{Publication, clocks_at},
    store::{GameId, GameRecord, Marks, Store, StoreError, Touched, begun_by},
    tracker::Side,
};

/// How often the delayed view is brought forward.
const TICK: Duration = Duration::from_millis(500);

/// Boards read again in full at each turn of the incremental flow, in turn, whatever the marks
/// say: a backstop that would show (and log) a change the marks missed.
const CHECKED_PER_TURN: usize = 2;

/// Keeps `public` showing every board as it stood `publication.delay_ms` ago, until `stop`.
pub async fn follow(
    record: Hub,
    public: Hub,
    db: PathBuf,
    publication: Publication,
    stop: watch::Receiver<bool>,
) {
    let view = DelayedView::new(record, public, &db, publication, Flow::Incremental);
    broadcast::run(view, Wake::Every { every: TICK, stop }).await;
}

/// How a [`DelayedView`] is brought forward at each turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Every board's game read again ([`public::view`]) and handed to the hub: the flow before
    /// issue 36, kept to measure and to check the other against.
    Full,
    /// Only the games whose view can have changed since the last turn; see the module.
    Incremental,
}

/// The delayed hub as a pushed output; see the module.
pub struct DelayedView {
    record: Hub,
    public: Hub,
    reader: Reader,
    publication: Publication,
    /// By board name: the game shown.
    shown: HashMap<String, i64>,
    /// `None`: the full flow.
    following: Option<Following>,
}

/// What one turn read: every board's game (the full flow), or which of the boards followed to
/// hand the hub again (the incremental one); and the moment shown.
pub enum Turned {
    Full(Vec<GameRecord>, Millis),
    Incremental(Vec<usize>, Millis),
}

impl DelayedView {
    /// A view of the store at `db` for `public`, registering the boards `record` knows.
    pub fn new(
        record: Hub,
        public: Hub,
        db: &Path,
        publication: Publication,
        flow: Flow,
    ) -> DelayedView {
        DelayedView {
            record,
            public,
            reader: Reader::new(db),
            publication,
            shown: HashMap::new(),
            following: (flow == Flow::Incremental).then(Following::default),
        }
    }

    /// One turn at `now_ms` (wall-clock ms), read and shown at once (the benchmark's and the
    /// tests' turn; [`follow`] turns it through [`broadcast::run`]).
    pub fn turn(&mut self, now_ms: Millis) -> Result<(), StoreError> {
        let turned = self.read_turn(now_ms)?;
        self.show_turn(turned);
        Ok(())
    }

    /// The games the incremental flow holds, each board's as of the last turn, in
    /// [`public::view`]'s order (`Shown::Boards`); `None` in the full flow.
    pub fn games(&self) -> Option<Vec<GameRecord>> {
        self.following
            .as_ref()
            .map(|f| f.boards.iter().map(|b| b.game.clone()).collect())
    }

    /// How many games the incremental flow's backstop found changed without the marks having
    /// told of it (0 unless the detection misses a kind of change; the tests hold it to 0).
    pub fn unseen(&self) -> u64 {
        self.following.as_ref().map_or(0, |f| f.unseen)
    }

    fn read_turn(&mut self, now_ms: Millis) -> Result<Turned, StoreError> {
        let cutoff = self.publication.cutoff(now_ms).unwrap_or(now_ms);
        match &mut self.following {
            None => {
                let games = self
                    .reader
                    .with(|s| public::view(s, Shown::Boards, &self.publication, now_ms))?;
                Ok(Turned::Full(games, cutoff))
            }
            Some(following) => {
                let shown = self.reader.with(|s| following.bring_forward(s, cutoff))?;
                Ok(Turned::Incremental(shown, cutoff))
            }
        }
    }

    fn show_turn(&mut self, turned: Turned) {
        match turned {
            Turned::Full(games, cutoff) => {
                register_waiting(&self.record, &self.public, games.iter());
                for g in &games {
                    show(&self.public, g, cutoff, &mut self.shown);
                }
            }
            Turned::Incremental(boards, cutoff) => {
                let Some(following) = &self.following else {
                    return;
                };
                register_waiting(
                    &self.record,
                    &self.public,
                    following.boards.iter().map(|b| &b.game),
                );
                for i in boards {
                    if let Some(b) = following.boards.get(i) {
                        show(&self.public, &b.game, cutoff, &mut self.shown);
                    }
                }
            }
        }
    }
}

impl Output for DelayedView {
    type Body = Turned;
    type Error = StoreError;

    fn name(&self) -> &'static str {
        "delayed view"
    }

    fn read(&mut self, now_ms: Millis) -> Result<Option<Turned>, StoreError> {
        self.read_turn(now_ms).map(Some)
    }

    async fn publish(&mut self, turned: Turned) -> Turn {
        self.show_turn(turned);
        Turn::Done
    }
}

/// What the incremental flow keeps between turns: each board's game as of the last turn, and
/// what tells which can have changed since.
#[derive(Default)]
struct Following {
    /// The store's `data_version` read before the last turn's snapshot.
    version: Option<i64>,
    /// Where the store's rows stood at the last turn.
    marks: Marks,
    /// The last turn's moment.
    at: Option<Millis>,
    /// The first game start after it: a board's game can then be another.
    next_start: Option<Millis>,
    /// Each board's game, in [`public::view`]'s order.
    boards: Vec<Followed>,
    /// The next board the backstop reads again.
    checked: usize,
    /// How many games the backstop found changed that the marks had not told of.
    unseen: u64,
}

/// A board's game as the incremental flow follows it.
struct Followed {
    /// Its header as stored (read as now).
    header: GameRecord,
    /// The game as of the last turn's moment.
    game: GameRecord,
    /// The first stored time after that moment at which the game's view can change.
    next: Option<Millis>,
    /// What the hub was last handed of it besides the game: (named, clock); `None`: the game
    /// changed since, or was never handed.
    handed: Option<(bool, Option<LiveClock>)>,
}

impl Following {
    /// Brings every board's game forward to `at` from `store`; returns the boards whose game,
    /// name or clock the hub is to be handed again.
    fn bring_forward(&mut self, store: &Store, at: Millis) -> Result<Vec<usize>, StoreError> {
        // Read before the snapshot: a commit meanwhile makes the next turn look again.
        let read = store
            .data_version()
            .and_then(|version| store.in_snapshot(|s| self.bring_forward_in(s, version, at)));
        if read.is_err() {
            // A turn that failed halfway (marks moved on, games not read): start again from
            // nothing: every game read and handed again at the next turn (the hub leaves what
            // it already shows as it is).
            let unseen = self.unseen;
            *self = Following {
                unseen,
                ..Following::default()
            };
        }
        read
    }

    fn bring_forward_in(
        &mut self,
        store: &Store,
        version: i64,
        at: Millis,
    ) -> Result<Vec<usize>, StoreError> {
        let plan = plan(self.version, version, self.at, self.next_start, at);
        let touched = if plan.committed {
            store.touched_since(&mut self.marks, at)?
        } else {
            Touched::default()
        };
        let mut fresh: Vec<bool> = vec![false; self.boards.len()];
        if plan.headers {
            let headers = store.board_headers_as_of(at)?;
            self.next_start = store.next_game_start(at)?;
            let mut before: HashMap<GameId, Followed> =
                self.boards.drain(..).map(|b| (b.header.id, b)).collect();
            fresh.clear();
            for header in headers {
                match before.remove(&header.id) {
                    Some(b) if b.header == header => {
                        self.boards.push(b);
                        fresh.push(false);
                    }
                    _ => {
                        let game = store.header_as_of(header.clone(), at)?;
                        let next = store.next_change(&header, at)?;
                        self.boards.push(Followed {
                            header,
                            game,
                            next,
                            handed: None,
                        });
                        fresh.push(true);
                    }
                }
            }
        }
        let checked = backstop(self.checked, self.boards.len());
        self.checked = checked.end;
        let mut handed = Vec::new();
        for (i, b) in self.boards.iter_mut().enumerate() {
            let id = b.header.id;
            if let Some(t) = touched.later.get(&id) {
                b.next = Some(b.next.map_or(*t, |n| n.min(*t)));
            }
            let read =
                !fresh[i] && (plan.everything || touched.now.contains(&id) || due(b.next, at));
            let check = !fresh[i] && !read && checked.contains(&i);
            if read || check {
                let game = store.header_as_of(b.header.clone(), at)?;
                if game != b.game {
                    if check {
                        self.unseen += 1;
                        tracing::warn!(board = %b.header.board_name, game = id.0,
                            "the delayed view's game had changed unseen; shown as it stands");
                    }
                    b.game = game;
                    b.handed = None;
                }
                b.next = store.next_change(&b.header, at)?;
            }
            let now = (begun_by(&b.game, at), clock_at(&b.game, at));
            if b.handed != Some(now) {
                b.handed = Some(now);
                handed.push(i);
            }
        }
        self.version = Some(version);
        self.at = Some(at);
        Ok(handed)
    }
}

/// What a turn of the incremental flow reads, from what the last turn saw and the store's
/// `data_version` now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    /// Something was committed since: look for the rows written ([`Store::touched_since`]).
    committed: bool,
    /// Read the boards' headers again (and each game whose header changed).
    headers: bool,
    /// Read every game again: the first turn, or the moment went back (the wall clock did).
    everything: bool,
}

fn plan(
    seen: Option<i64>,
    version: i64,
    last_at: Option<Millis>,
    next_start: Option<Millis>,
    at: Millis,
) -> Plan {
    let everything = last_at.is_none_or(|before| at < before);
    let committed = everything || seen != Some(version);
    Plan {
        committed,
        headers: committed || due(next_start, at),
        everything,
    }
}

/// Whether the moment `at` reached `next`.
fn due(next: Option<Millis>, at: Millis) -> bool {
    next.is_some_and(|t| t <= at)
}

/// The boards the backstop reads again this turn, from `from`, of `boards`: a range that may
/// run past the end (then it starts again at 0 next turn).
fn backstop(from: usize, boards: usize) -> std::ops::Range<usize> {
    let from = if from >= boards { 0 } else { from };
    from..from + CHECKED_PER_TURN
}

/// Registers on `public` each board `record` knows that has no game in `games` and that
/// `public` does not know yet: shown waiting.
fn register_waiting<'a>(record: &Hub, public: &Hub, games: impl Iterator<Item = &'a GameRecord>) {
    let with_game: HashSet<&str> = games.map(|g| g.board_name.as_str()).collect();
    let known: HashSet<String> = public.boards().into_iter().map(|(n, ..)| n).collect();
    for (name, number, kind) in record.boards() {
        if !with_game.contains(name.as_str()) && !known.contains(&name) {
            public.add_board_kind(&name, number, kind, &[]);
        }
    }
}

/// Shows `g` (its board's game at `cutoff`) on `public`.
fn show(public: &Hub, g: &GameRecord, cutoff: Millis, shown: &mut HashMap<String, i64>) {
    let new_game = shown
        .insert(g.board_name.clone(), g.id.0)
        .is_some_and(|before| before != g.id.0);
    // A board's first game is there before it began (the board is shown set up for it), but
    // not named until it began the delay ago.
    let named = begun_by(g, cutoff);
    public.show_game(g, named, clock_at(g, cutoff), new_game);
}

/// The clock a spectator sees at `cutoff`: both sides' times then, the side to move's running
/// until the game is over.
pub fn clock_at(game: &GameRecord, cutoff: u64) -> Option<LiveClock> {
    // Whole seconds: the page counts down between readings, as it does for a board's clock.
    let (white_ms, black_ms) = clocks_at(game, cutoff)?;
    let (white_ms, black_ms) = (white_ms / 1000 * 1000, black_ms / 1000 * 1000);
    let over = game.result != "*" || game.ended_at_ms.is_some();
    let to_move = if game.moves.len() % 2 == 1 {
        Side::Black
    } else {
        Side::White
    };
    let running = (!over && !game.moves.is_empty()).then_some(to_move);
    Some(LiveClock {
        white_ms,
        black_ms,
        running,
        white_flag: white_ms == 0,
        black_flag: black_ms == 0,
    })
}
