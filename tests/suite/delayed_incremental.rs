//! The delayed view's incremental flow (issue 36, item 4) held to the full read, on a real
//! SQLite file written by one connection and read by the views' own: a store driven through
//! moves, revisions, takebacks, game ends, new games, the arbiter's results and their undoing,
//! pairings imported, and rows arriving late (stored times already behind the delay's
//! moment: a hall's records reaching the event node late, moves recovered from a board's
//! memory); after every write, at a moment moved on by a random step, the incremental view's
//! games must equal `public::view` (`Shown::Boards`) board by board, the public hub it keeps
//! must equal the one the full flow keeps, and its backstop must never have found a change
//! the marks missed.

use std::path::Path;

use boardscribe::{
    Millis,
    broadcast::public::{self, Shown},
    export::publish::Publication,
    game::{Kind, Outcome},
    pairings::Pairing,
    relay::{
        Hub,
        delayed::{DelayedView, Flow},
    },
    sensor::Orientation,
    store::{BoardId, GameId, ResultReason, RoundInfo, Store, Write},
    tracker::{TrackerEvent, event::RecordedMove},
};
use proptest::prelude::*;
use shakmaty::{Chess, EnPassantMode, Position, fen::Fen, san::San, uci::UciMove};

const DELAY_MS: Millis = 20_000;
const BOARDS: usize = 3;
/// The wall clock at the start: far from 0, as the real one is.
const T0: Millis = 1_700_000_000_000;

/// One write, with how far behind "now" its stored time is (`late_ms`: 0, a move as it is
/// made; more than the delay, a row arriving after the public view passed its time).
#[derive(Clone, Debug)]
enum Op {
    Move {
        board: usize,
        pick: usize,
        late_ms: Millis,
    },
    Revise {
        board: usize,
        pick: usize,
        late_ms: Millis,
    },
    Takeback {
        board: usize,
        plies: u32,
        late_ms: Millis,
    },
    End {
        board: usize,
        late_ms: Millis,
    },
    Start {
        board: usize,
        late_ms: Millis,
    },
    SetResult {
        board: usize,
        late_ms: Millis,
    },
    UndoDecision {
        board: usize,
    },
    Pairings {
        names: u8,
    },
}

fn late() -> impl Strategy<Value = Millis> {
    prop_oneof![
        4 => Just(0),
        1 => 0..DELAY_MS / 2,
        1 => DELAY_MS..DELAY_MS * 3,
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let b = 0..BOARDS;
    prop_oneof![
        12 => (b.clone(), any::<usize>(), late()).prop_map(|(board, pick, late_ms)| Op::Move { board, pick, late_ms }),
        2 => (b.clone(), any::<usize>(), late()).prop_map(|(board, pick, late_ms)| Op::Revise { board, pick, late_ms }),
        2 => (b.clone(), 1..3u32, late()).prop_map(|(board, plies, late_ms)| Op::Takeback { board, plies, late_ms }),
        1 => (b.clone(), late()).prop_map(|(board, late_ms)| Op::End { board, late_ms }),
        1 => (b.clone(), late()).prop_map(|(board, late_ms)| Op::Start { board, late_ms }),
        1 => (b.clone(), late()).prop_map(|(board, late_ms)| Op::SetResult { board, late_ms }),
        1 => b.prop_map(|board| Op::UndoDecision { board }),
        1 => any::<u8>().prop_map(|names| Op::Pairings { names }),
    ]
}

/// What the test knows of a board besides the store: its id.
struct Board {
    id: BoardId,
    /// Clock readings go down with each move.
    clock: u64,
}

/// The store, the two views and the time.
struct Rig {
    store: Store,
    boards: Vec<Board>,
    now: Millis,
    full: DelayedView,
    incremental: DelayedView,
    full_hub: Hub,
    incremental_hub: Hub,
    reader: Store,
    publication: Publication,
    checks: usize,
}

impl Rig {
    fn new(db: &Path) -> Rig {
        let mut store = Store::open(db).unwrap();
        store
            .set_round(&RoundInfo {
                event: "Test".into(),
                site: "Here".into(),
                round: 1,
            })
            .unwrap();
        let record = Hub::new();
        let mut boards = Vec::new();
        for i in 0..BOARDS {
            let name = format!("b{}", i + 1);
            let id = store.board(&name, Kind::Chess).unwrap();
            store.set_board_number(id, i as u32 + 1).unwrap();
            record.add_board(&name, Some(i as u32 + 1), &[]);
            boards.push(Board {
                id,
                clock: 5_400_000,
            });
        }
        // A board the record knows that never has a game: shown waiting.
        record.add_board("idle", None, &[]);
        let publication = Publication {
            delay_ms: DELAY_MS,
            ..Publication::default()
        };
        let (full_hub, incremental_hub) = (Hub::new(), Hub::new());
        let full = DelayedView::new(
            record.clone(),
            full_hub.clone(),
            db,
            publication,
            Flow::Full,
        );
        let incremental = DelayedView::new(
            record,
            incremental_hub.clone(),
            db,
            publication,
            Flow::Incremental,
        );
        let mut rig = Rig {
            store,
            boards,
            now: T0,
            full,
            incremental,
            full_hub,
            incremental_hub,
            reader: Store::open_read_only(db).unwrap(),
            publication,
            checks: 0,
        };
        for b in 0..BOARDS {
            rig.apply(&Op::Start {
                board: b,
                late_ms: 0,
            });
        }
        rig
    }

    fn event(&mut self, board: usize, event: TrackerEvent) {
        let board = self.boards[board].id;
        self.store
            .write_batch(&[Write::Event { board, event }])
            .unwrap();
    }

    /// The board's newest game.
    fn game(&self, board: usize) -> Option<GameId> {
        let id = self.boards[board].id;
        self.store
            .games()
            .unwrap()
            .into_iter()
            .filter(|g| g.board == id)
            .map(|g| g.id)
            .max()
    }

    /// The positions of the board's open game as the store has it (the start, then after each
    /// live move); `None` without an open game (ended, or closed by the arbiter's result).
    fn line(&self, board: usize) -> Option<Vec<Chess>> {
        let game = self.store.open_game(self.boards[board].id).unwrap()?;
        let mut line = vec![Chess::default()];
        for m in &game.moves {
            let pos = line.last()?.clone();
            let uci: UciMove = m.uci.as_deref()?.parse().ok()?;
            let mv = uci.to_move(&pos).ok()?;
            line.push(pos.play(mv).ok()?);
        }
        Some(line)
    }

    /// A legal move after `line` (the `pick`th), made at `at_ms`.
    fn next_move(
        &mut self,
        board: usize,
        line: &[Chess],
        pick: usize,
        at_ms: Millis,
    ) -> Option<RecordedMove> {
        let b = &mut self.boards[board];
        let pos = line.last()?.clone();
        let legal = pos.legal_moves();
        if legal.is_empty() {
            return None;
        }
        let m = legal[pick % legal.len()];
        let san = San::from_move(&pos, m).to_string();
        let uci = UciMove::from_standard(m).to_string();
        let after = pos.play(m).ok()?;
        let fen = Fen::from_position(&after, EnPassantMode::Legal).to_string();
        let ply = line.len() as u32;
        b.clock = b.clock.saturating_sub(7_000);
        let white = ply % 2 == 1;
        Some(RecordedMove {
            ply,
            notation: san,
            uci: Some(uci),
            position: fen,
            at_ms,
            clock_white_ms: white.then_some(b.clock),
            clock_black_ms: (!white).then_some(b.clock),
            time_trouble: false,
        })
    }

    fn apply(&mut self, op: &Op) {
        let now = self.now;
        let at = |late: &Millis| now.saturating_sub(*late);
        match op {
            Op::Move {
                board,
                pick,
                late_ms,
            } => {
                if let Some(line) = self.line(*board)
                    && let Some(mv) = self.next_move(*board, &line, *pick, at(late_ms))
                {
                    self.event(*board, TrackerEvent::Move(mv));
                }
            }
            Op::Revise {
                board,
                pick,
                late_ms,
            } => {
                let Some(mut line) = self.line(*board).filter(|l| l.len() >= 2) else {
                    return;
                };
                let ply = line.len() as u32 - 1;
                let game = self.store.open_game(self.boards[*board].id).unwrap();
                let Some(old) = game.and_then(|g| g.moves.into_iter().find(|m| m.ply == ply))
                else {
                    return;
                };
                line.pop();
                if let Some(new) = self.next_move(*board, &line, *pick, at(late_ms)) {
                    self.event(
                        *board,
                        TrackerEvent::Revision {
                            at_ms: at(late_ms),
                            old,
                            new,
                        },
                    );
                }
            }
            Op::Takeback {
                board,
                plies,
                late_ms,
            } => {
                let Some(line) = self.line(*board) else {
                    return;
                };
                let played = line.len() as u32 - 1;
                if played < *plies {
                    return;
                }
                self.event(
                    *board,
                    TrackerEvent::Takeback {
                        at_ms: at(late_ms),
                        from_ply: played,
                        to_ply: played - plies,
                    },
                );
            }
            Op::End { board, late_ms } => {
                let Some(line) = self.line(*board) else {
                    return;
                };
                self.event(
                    *board,
                    TrackerEvent::GameEnded {
                        at_ms: at(late_ms),
                        after_ply: line.len() as u32 - 1,
                        outcome: Outcome::WhiteWins,
                        termination: "normal".into(),
                    },
                );
            }
            Op::Start { board, late_ms } => {
                self.boards[*board].clock = 5_400_000;
                self.event(
                    *board,
                    TrackerEvent::GameStarted {
                        at_ms: at(late_ms),
                        orientation: Orientation::Normal,
                        start: None,
                    },
                );
            }
            Op::SetResult { board, late_ms } => {
                if let Some(game) = self.game(*board) {
                    // Refused ones (an invalid state) change nothing.
                    let _ = self.store.set_result(
                        game,
                        "1/2-1/2",
                        ResultReason::Agreement,
                        "arbiter",
                        None,
                        at(late_ms),
                    );
                }
            }
            Op::UndoDecision { board } => {
                if let Some(game) = self.game(*board)
                    && let Some(last) = self.store.decisions(game).unwrap().last().map(|d| d.id)
                {
                    let _ = self
                        .store
                        .undo_decision(game, last, "arbiter", None, self.now);
                }
            }
            Op::Pairings { names } => {
                let rows: Vec<Pairing> = (1..=BOARDS as u32)
                    .map(|board| {
                        Pairing::new(
                            board,
                            &format!("White {names} {board}"),
                            &format!("Black {names} {board}"),
                        )
                    })
                    .collect();
                self.store.import_pairings(1, &rows).unwrap();
            }
        }
    }

    /// Both views turned at `now`, held to each other and to the full read.
    fn check(&mut self) {
        self.checks += 1;
        self.full.turn(self.now).unwrap();
        self.incremental.turn(self.now).unwrap();
        let expected =
            public::view(&self.reader, Shown::Boards, &self.publication, self.now).unwrap();
        let got = self.incremental.games().unwrap();
        assert_eq!(got.len(), expected.len(), "at {}", self.now - T0);
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(g, e, "board {} at {}", e.board_name, self.now - T0);
        }
        let json = |hub: &Hub| serde_json::to_value(hub.snapshot().0).unwrap();
        assert_eq!(
            json(&self.incremental_hub),
            json(&self.full_hub),
            "hubs at {}",
            self.now - T0
        );
        assert_eq!(self.incremental.unseen(), 0, "the backstop found a change");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// At every moment, the incremental view is the full read, board by board.
    #[test]
    fn delayed_incremental_view_is_the_full_read(
        ops in prop::collection::vec((op(), 0..4_000u64, 0..3usize), 1..80),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("delayed.db");
        let mut rig = Rig::new(&db);
        rig.check();
        for (op, step, turns) in &ops {
            rig.apply(op);
            // Some writes are seen together; some moments see no write.
            for _ in 0..*turns {
                rig.now += step;
                rig.check();
            }
        }
        // The window passes over everything written.
        for _ in 0..8 {
            rig.now += DELAY_MS / 4;
            rig.check();
        }
    }
}

/// A move recovered late (its stored time already behind the delay's moment) is shown at the
/// next turn; one arriving in real time only once the delay has passed over it.
#[test]
fn delayed_incremental_view_shows_a_late_move_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut rig = Rig::new(&dir.path().join("late.db"));
    rig.now += DELAY_MS + 1_000;
    rig.check();
    rig.apply(&Op::Move {
        board: 0,
        pick: 3,
        late_ms: 0,
    });
    rig.check();
    assert_eq!(rig.incremental.games().unwrap()[0].moves.len(), 0);
    rig.apply(&Op::Move {
        board: 1,
        pick: 3,
        late_ms: DELAY_MS + 500,
    });
    rig.now += 100;
    rig.check();
    assert_eq!(rig.incremental.games().unwrap()[1].moves.len(), 1);
    rig.now += DELAY_MS;
    rig.check();
    assert_eq!(rig.incremental.games().unwrap()[0].moves.len(), 1);
}
