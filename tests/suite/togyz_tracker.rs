//! The generic tracker following a togyz korgool pit board: hand-made sequences of TGZ-1 pit and
//! tuz updates fed through `TgzBoardState` (korgools sown one at a time, neighbouring pits read
//! out of order, korgools left in a tuz pit, captures carried in handfuls, the tuz marker set),
//! random legal games, and the first games of the PlayOK corpus. The recorded notation must be
//! what the rules give.

use boardscribe::{
    Millis,
    game::{
        GameKind,
        togyz::{Move, Position, Rules, Side, TogyzGame, notation::parse_records},
    },
    protocol::tgz::PitDump,
    sensor::{Orientation, dgt::ClockReading, tgz::TgzBoardState},
    tracker::{Tracker, TrackerEvent, TrackerSettings},
};
use rand::{Rng, SeedableRng, seq::SliceRandom};
use rand_chacha::ChaCha8Rng;

const PLAYOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/playok-2025.pgn"
);

/// How a player handles a sowing.
#[derive(Clone, Copy, Debug, Default)]
struct Hand {
    /// Korgools sown into a tuz stay in the tuz pit (carried to the store later).
    leave_in_tuz: bool,
    /// A capture is carried to the store in two handfuls (else: the pit empties, then the store
    /// rises by all of it).
    handfuls: bool,
    /// Neighbouring pits' updates are read out of order.
    out_of_order: bool,
    /// A new tuz: the marker is set before the three korgools are carried to the store.
    marker_first: bool,
}

/// A pit board on the table, in game numbering, feeding a tracker through its sensor state.
struct Table {
    board: TgzBoardState,
    tracker: Tracker<TogyzGame>,
    /// What lies where, in game numbering (raw: korgools in a tuz pit stay there).
    raw: [u8; 20],
    markers: [u8; 2],
    t: Millis,
    events: Vec<TrackerEvent>,
}

/// One sensor change, in game numbering.
#[derive(Clone, Copy, Debug)]
enum Update {
    Pit(usize, u8),
    Tuz(Side, u8),
}

impl Table {
    fn new() -> Table {
        let mut raw = [9u8; 20];
        raw[18] = 0;
        raw[19] = 0;
        let mut t = Table {
            board: TgzBoardState::default(),
            tracker: Tracker::new(TrackerSettings::default()),
            raw,
            markers: [0, 0],
            t: 0,
            events: Vec::new(),
        };
        t.board.apply_dump(&PitDump {
            counts: raw,
            tuz: [0, 0],
        });
        t.tracker.observe(0, &t.board, &mut t.events);
        assert_eq!(t.tracker.orientation(), Some(Orientation::Normal));
        t
    }

    /// Applies one update after `dt` ms.
    fn apply(&mut self, dt: Millis, u: Update) {
        self.t += dt;
        let changed = match u {
            Update::Pit(loc, n) => {
                self.raw[loc] = n;
                self.board.apply_pit(loc as u8, n)
            }
            Update::Tuz(side, pit) => {
                self.markers[side.index()] = pit;
                self.board.apply_tuz(side, pit)
            }
        };
        if changed {
            self.tracker.observe(self.t, &self.board, &mut self.events);
        }
    }

    fn wait(&mut self, dt: Millis) {
        self.t += dt;
        self.tracker.tick(self.t, &mut self.events);
    }

    /// The recorded notation, revisions and takebacks applied.
    fn moves(&self) -> Vec<String> {
        let mut moves: Vec<String> = Vec::new();
        for e in &self.events {
            match e {
                TrackerEvent::Move(m) => moves.push(m.notation.clone()),
                TrackerEvent::Revision { new, .. } => {
                    moves[new.ply as usize - 1] = new.notation.clone();
                }
                TrackerEvent::Takeback { to_ply, .. } => moves.truncate(*to_ply as usize),
                TrackerEvent::GameStarted { .. } => moves.clear(),
                _ => {}
            }
        }
        moves
    }

    fn kinds(&self) -> Vec<&'static str> {
        self.events.iter().map(|e| e.kind()).collect()
    }

    /// The updates of `mv` played from `pos` by hand, one korgool at a time.
    fn sowing(&self, pos: &Position, mv: Move, hand: Hand) -> Vec<Update> {
        let (_, s) = pos.play_with_info(mv).unwrap();
        let board = pos.board();
        let mut raw = self.raw;
        let mut out = Vec::new();
        fn set(raw: &mut [u8; 20], loc: usize, n: u8, out: &mut Vec<Update>) {
            raw[loc] = n;
            out.push(Update::Pit(loc, n));
        }
        fn add(raw: &mut [u8; 20], loc: usize, n: u8, out: &mut Vec<Update>) {
            set(raw, loc, raw[loc] + n, out);
        }
        let start = (s.side.index() * 9) + usize::from(mv.pit()) - 1;
        let n = raw[start];
        set(&mut raw, start, 0, &mut out);
        let k = if n == 1 {
            1
        } else {
            set(&mut raw, start, 1, &mut out);
            n - 1
        };
        let mut i = start;
        for _ in 0..k {
            i = (i + 1) % 18;
            let target = match board.tuz_owner(i) {
                Some(owner) if !hand.leave_in_tuz => 18 + owner.index(),
                _ => i,
            };
            add(&mut raw, target, 1, &mut out);
        }
        let landing = usize::from(s.landing);
        let store = 18 + s.side.index();
        if s.tuz_created {
            if hand.marker_first {
                out.push(Update::Tuz(s.side, s.landing_pit()));
            }
            set(&mut raw, landing, 0, &mut out);
            add(&mut raw, store, 3, &mut out);
            if !hand.marker_first {
                out.push(Update::Tuz(s.side, s.landing_pit()));
            }
        } else if s.captured > 0 {
            // The landing pit holds exactly the captured korgools (it is never a tuz).
            let c = s.captured;
            if hand.handfuls && c >= 2 {
                set(&mut raw, landing, c - c / 2, &mut out);
                add(&mut raw, store, c / 2, &mut out);
            }
            set(&mut raw, landing, 0, &mut out);
            let rest = c - if hand.handfuls && c >= 2 { c / 2 } else { 0 };
            add(&mut raw, store, rest, &mut out);
        }
        if hand.out_of_order {
            // Neighbouring pits read the other way round, two at a time.
            let mut j = 1;
            while j + 1 < out.len() {
                if let (Update::Pit(a, _), Update::Pit(b, _)) = (out[j], out[j + 1])
                    && a != b
                {
                    out.swap(j, j + 1);
                }
                j += 3;
            }
        }
        out
    }

    /// Plays `mv` by hand, 80 ms between updates, then waits past the settle window.
    fn play(&mut self, pos: &Position, mv: Move, hand: Hand) -> Position {
        for u in self.sowing(pos, mv, hand) {
            self.apply(80, u);
        }
        self.wait(1000);
        pos.play(mv).unwrap()
    }

    /// Carries the korgools lying in tuz pits to their owners' stores: the pit empties first.
    fn clear_tuzes(&mut self, pos: &Position) {
        for owner in [Side::White, Side::Black] {
            if let Some(pit) = pos.tuz(owner) {
                let loc = owner.other().index() * 9 + usize::from(pit) - 1;
                let n = self.raw[loc];
                if n > 0 {
                    self.apply(150, Update::Pit(loc, 0));
                    let store = 18 + owner.index();
                    self.apply(150, Update::Pit(store, self.raw[store] + n));
                }
            }
        }
        self.wait(1000);
    }

    /// Sets every location and marker that differs from the reading of `pos`, in a random order,
    /// all at one time step, then waits past the settle window.
    fn jump_to(&mut self, pos: &Position, rng: &mut ChaCha8Rng) {
        let r = TogyzGame::reading(pos);
        let mut updates: Vec<Update> = (0..20)
            .filter(|&l| self.raw[l] != r.counts[l])
            .map(|l| Update::Pit(l, r.counts[l]))
            .collect();
        for side in [Side::White, Side::Black] {
            if self.markers[side.index()] != r.tuz[side.index()] {
                updates.push(Update::Tuz(side, r.tuz[side.index()]));
            }
        }
        updates.shuffle(rng);
        self.t += 100;
        for u in updates {
            self.apply(0, u);
        }
        self.wait(1000);
    }
}

/// The rules' notation of `moves` played from the start.
fn notation(moves: &[Move]) -> Vec<String> {
    let mut pos = Position::new();
    moves
        .iter()
        .map(|&mv| {
            let after = pos.play(mv).unwrap();
            let text = TogyzGame::notation(&pos, &mv, &after, true);
            pos = after;
            text
        })
        .collect()
}

fn mv(pit: u8) -> Move {
    Move::new(pit).unwrap()
}

#[test]
fn korgools_sown_one_at_a_time() {
    let mut t = Table::new();
    let pos = Position::new();
    // 76 captures 10 from black's pit 6: the pit empties before white's store rises.
    let pos = t.play(&pos, mv(7), Hand::default());
    assert_eq!(t.moves(), ["76"]);
    let pos = t.play(&pos, mv(7), Hand::default());
    let pos = t.play(&pos, mv(1), Hand::default());
    t.play(&pos, mv(9), Hand::default());
    assert_eq!(t.moves(), notation(&[mv(7), mv(7), mv(1), mv(9)]));
    assert_eq!(t.kinds()[0], "game_started");
    assert!(!t.kinds().contains(&"irregularity"), "{:?}", t.kinds());
}

#[test]
fn neighbouring_pits_out_of_order_and_captures_in_handfuls() {
    let mut t = Table::new();
    let hand = Hand {
        out_of_order: true,
        handfuls: true,
        ..Hand::default()
    };
    let line = [8, 8, 2, 9, 2, 3];
    let mut pos = Position::new();
    for &p in &line {
        pos = t.play(&pos, mv(p), hand);
    }
    let moves: Vec<Move> = line.iter().map(|&p| mv(p)).collect();
    assert_eq!(t.moves(), notation(&moves));
    assert_eq!(t.moves()[..2], ["87", "87"]);
    assert!(!t.kinds().contains(&"revised_move"), "{:?}", t.kinds());
}

#[test]
fn korgools_left_in_a_tuz_then_carried_to_the_store() {
    // The cross-check line of rules summary section 5: 65 65 99 89 23, then black's 45X (tuz on
    // white's pit 5), then 36 which sows a korgool into black's tuz, then 79.
    let mut t = Table::new();
    let mut pos = Position::new();
    for p in [6, 6, 9, 8, 2] {
        pos = t.play(&pos, mv(p), Hand::default());
    }
    // 45X with the marker set first, the three korgools left in the pit for a while.
    let tuz_hand = Hand {
        marker_first: true,
        ..Hand::default()
    };
    let before = pos;
    let updates = t.sowing(&before, mv(4), tuz_hand);
    let marker = updates
        .iter()
        .position(|u| matches!(u, Update::Tuz(..)))
        .unwrap();
    for &u in &updates[..=marker] {
        t.apply(80, u);
    }
    t.wait(1000);
    pos = before.play(mv(4)).unwrap();
    assert_eq!(pos.tuz(Side::Black), Some(5));
    assert_eq!(
        t.moves().last().unwrap(),
        "45X",
        "three korgools lying under the marker"
    );
    for &u in &updates[marker + 1..] {
        t.apply(200, u);
    }
    t.wait(1000);
    // 36 sows one korgool into black's tuz: it stays in the pit.
    let leave = Hand {
        leave_in_tuz: true,
        ..Hand::default()
    };
    pos = t.play(&pos, mv(3), leave);
    assert_eq!(t.raw[4], 1, "the korgool lies in the tuz pit");
    pos = t.play(&pos, mv(7), leave);
    // Black carries it to his store: the pit empties before the store rises.
    t.clear_tuzes(&pos);
    assert_eq!(t.raw[4], 0);
    let played: Vec<Move> = [6, 6, 9, 8, 2, 4, 3, 7].map(mv).to_vec();
    assert_eq!(t.moves(), notation(&played));
    assert_eq!(t.moves()[5..], ["45X", "36", "79"]);
    assert!(!t.kinds().contains(&"irregularity"), "{:?}", t.kinds());
    assert!(!t.kinds().contains(&"takeback"), "{:?}", t.kinds());
}

#[test]
fn a_tuz_marker_set_after_the_korgools_are_carried() {
    let mut t = Table::new();
    let mut pos = Position::new();
    let hand = Hand {
        out_of_order: true,
        ..Hand::default()
    };
    // KCL's line (rules summary section 5): 32 43 66 77 34 56X, black's tuz on white's pit 6.
    for p in [3, 4, 6, 7, 3, 5] {
        pos = t.play(&pos, mv(p), hand);
    }
    assert_eq!(pos.tuz(Side::Black), Some(6));
    assert_eq!(t.moves(), ["32", "43", "66", "77", "34", "56X"]);
}

/// A random legal game from the start, seeded.
fn random_game(rng: &mut ChaCha8Rng, plies: usize) -> Vec<Move> {
    let mut pos = Position::new();
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal: Vec<Move> = pos.legal_moves().collect();
        if legal.is_empty() {
            break;
        }
        let m = legal[rng.random_range(0..legal.len())];
        pos = pos.play(m).unwrap();
        moves.push(m);
    }
    moves
}

#[test]
fn random_games_jumped_to_each_position_record_exactly_their_moves() {
    for seed in 0..40u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let moves = random_game(&mut rng, 40);
        let mut t = Table::new();
        let mut pos = Position::new();
        for &m in &moves {
            pos = pos.play(m).unwrap();
            t.jump_to(&pos, &mut rng);
        }
        assert_eq!(t.moves(), notation(&moves), "seed {seed}");
    }
}

#[test]
fn random_games_sown_by_hand_record_exactly_their_moves() {
    for seed in 100..120u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let moves = random_game(&mut rng, 40);
        let mut t = Table::new();
        let mut pos = Position::new();
        for &m in &moves {
            let hand = Hand {
                leave_in_tuz: rng.random_bool(0.5),
                handfuls: rng.random_bool(0.5),
                out_of_order: rng.random_bool(0.5),
                marker_first: rng.random_bool(0.5),
            };
            pos = t.play(&pos, m, hand);
            if rng.random_bool(0.3) {
                t.clear_tuzes(&pos);
            }
        }
        assert_eq!(t.moves(), notation(&moves), "seed {seed}");
    }
}

#[test]
fn playok_games_record_exactly_their_notation() {
    let text = std::fs::read_to_string(PLAYOK).unwrap();
    let records = parse_records(&text).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2025);
    for rec in records.iter().take(20) {
        let replayed = rec.replay(Rules::KYRGYZ).unwrap();
        let want: Vec<String> = rec.moves.iter().map(|m| m.text.to_string()).collect();
        // Jumped to each position, locations in a random order.
        let mut t = Table::new();
        for pos in &replayed.positions[1..] {
            t.jump_to(pos, &mut rng);
        }
        assert_eq!(t.moves(), want, "{:?} jumped", rec.header("Event"));
        // Sown by hand, one korgool at a time.
        let mut t = Table::new();
        for (pos, s) in replayed.positions.iter().zip(&replayed.sowings) {
            let hand = Hand {
                leave_in_tuz: rng.random_bool(0.5),
                handfuls: rng.random_bool(0.5),
                out_of_order: rng.random_bool(0.5),
                marker_first: rng.random_bool(0.5),
            };
            t.play(pos, s.mv, hand);
        }
        assert_eq!(t.moves(), want, "{:?} sown", rec.header("Event"));
        let ended = t
            .events
            .iter()
            .any(|e| matches!(e, TrackerEvent::GameEnded { .. }));
        let over = replayed.last().outcome().is_some();
        assert_eq!(ended, over, "{:?}", rec.header("Event"));
    }
}

/// A running clock; the lever high on the right after the left (white) player pressed.
fn clock(lever_right_high: bool) -> ClockReading {
    ClockReading {
        left_ms: 600_000,
        right_ms: 600_000,
        running: true,
        lever_right_high,
        left_flag: false,
        right_flag: false,
    }
}

/// Settings for a pit board: a sowing changes up to all 20 locations, not four squares.
fn pit_settings() -> TrackerSettings {
    TrackerSettings::for_game::<TogyzGame>()
}

#[test]
fn a_capture_not_taken_at_a_press_is_an_illegal_move_with_its_article() {
    let mut t = Table::new();
    t.tracker = Tracker::new(pit_settings());
    t.tracker.observe(0, &t.board, &mut t.events);
    t.tracker.clock(10, clock(false), &mut t.events);
    let pos = Position::new();
    // 76 sown, but the ten korgools of black's pit 6 stay there; white presses.
    let updates = t.sowing(&pos, mv(7), Hand::default());
    let sown = updates.len() - 2;
    for &u in &updates[..sown] {
        t.apply(80, u);
    }
    t.wait(500);
    t.tracker.clock(t.t, clock(true), &mut t.events);
    t.wait(1000);
    let irregular = t.events.iter().find_map(|e| match e {
        TrackerEvent::Irregularity { kind, detail, .. } => Some((kind.as_str(), detail.clone())),
        _ => None,
    });
    assert_eq!(
        irregular,
        Some((
            "illegal_move",
            "76: the 10 korgools of black's pit 6 not taken (KG 1.3)".to_string()
        ))
    );
    assert_eq!(t.moves(), Vec::<String>::new());
    // Taken after all: the move is recorded and the irregularity resolved.
    for &u in &updates[sown..] {
        t.apply(80, u);
    }
    t.wait(4000);
    assert_eq!(t.moves(), ["76"]);
    assert!(t.kinds().contains(&"resolved"), "{:?}", t.kinds());
}

#[test]
fn korgools_knocked_into_a_neighbouring_pit_are_displaced() {
    let mut t = Table::new();
    t.tracker = Tracker::new(pit_settings());
    t.tracker.observe(0, &t.board, &mut t.events);
    let pos = t.play(&Position::new(), mv(7), Hand::default());
    // A korgool knocked from black's pit 3 into pit 4 while white waits for black's move.
    t.apply(100, Update::Pit(11, 9));
    t.apply(100, Update::Pit(12, 11));
    t.wait(3000);
    let detail = t.events.iter().find_map(|e| match e {
        TrackerEvent::Irregularity { kind, detail, .. } if kind.as_str() == "displaced" => {
            Some(detail.clone())
        }
        _ => None,
    });
    let detail = detail.expect("a displaced irregularity");
    assert!(detail.contains("black's pit 3: 10 → 9"), "{detail}");
    assert!(detail.contains("KG 4.2–4.3"), "{detail}");
    // Put back (4.2): resolved, and play goes on.
    t.apply(100, Update::Pit(12, 10));
    t.apply(100, Update::Pit(11, 10));
    t.wait(1000);
    t.play(&pos, mv(7), Hand::default());
    assert_eq!(t.moves(), ["76", "76"]);
    assert!(t.kinds().contains(&"resolved"), "{:?}", t.kinds());
}

#[test]
fn a_skipped_pit_at_a_press_is_an_illegal_move_with_its_article() {
    let mut t = Table::new();
    t.tracker = Tracker::new(pit_settings());
    t.tracker.observe(0, &t.board, &mut t.events);
    t.tracker.clock(10, clock(false), &mut t.events);
    // 76 sown skipping black's pit 2: the last korgool lands in black's pit 7 (10), taken.
    for (loc, n) in [(6, 0), (6, 1), (7, 10), (8, 10), (9, 10)] {
        t.apply(80, Update::Pit(loc, n));
    }
    for loc in 11..=15 {
        t.apply(80, Update::Pit(loc, 10));
    }
    t.apply(150, Update::Pit(15, 0));
    t.apply(150, Update::Pit(18, 10));
    t.wait(300);
    t.tracker.clock(t.t, clock(true), &mut t.events);
    t.wait(1000);
    let irregular = t.events.iter().find_map(|e| match e {
        TrackerEvent::Irregularity {
            kind, detail, ply, ..
        } => Some((kind.as_str(), *ply, detail.clone())),
        _ => None,
    });
    assert_eq!(
        irregular,
        Some((
            "illegal_move",
            1,
            "sowing from white's pit 7: black's pit 2 skipped (KG 1.1: one korgool into each pit)"
                .to_string()
        ))
    );
    assert_eq!(t.moves(), Vec::<String>::new());
}
