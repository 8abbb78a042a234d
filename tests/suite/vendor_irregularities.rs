//! Noisy sets on the other vendors' boards: the scripted irregularities of the DGT tests
//! (`arbiter_articles::scripted_irregularities_on_many_games`: the same games, the same rate)
//! played by the emulator's hands on ChessLink, Chessnut and Certabo boards (and on DGT boards
//! without a clock, the reference), written as each board's capture and replayed through the
//! `replay` path. These boards have no clock, so no one can press without moving; every other
//! kind is played. Held to the DGT test's bars: every game's moves exact, at least 95 % of the
//! irregularities recorded at the right ply with the right kind, false alarms at most 2 %.

use std::collections::BTreeMap;

use boardscribe::{
    arbiter::{Laws, LawsConfig, LawsSetup},
    emulator::{
        self, BoardScript, EmulatorOptions, IrregularityInfo, IrregularityScript, PgnGame,
        ScriptedIrregularity,
    },
    export,
    replay::replay_reader_with,
    store::Store,
};
use serde_json::Value;
use shakmaty::Position;

/// The DGT test's games: every sixth of Capablanca's and London 1851's.
fn games() -> Vec<(String, PgnGame)> {
    crate::corpus_common::named_chess_games()
        .into_iter()
        .filter(|(name, _)| name.starts_with("Capablanca#") || name.starts_with("London1851#"))
        .step_by(6)
        .collect()
}

/// The DGT test's rate of irregularities per ply.
const RATE: f64 = 0.04;

/// How a move taken back may be recorded.
const TAKEN_BACK: [&str; 2] = ["takeback", "revised_move"];

/// What the record should carry for a scripted irregularity on a board with no clock: the kinds
/// it may be recorded as, the plies it may carry, and whether it must be recorded at all.
///
/// - A knock put back within the settle window is, by definition, not displaced (as on DGT).
/// - A knock that is a legal move of the player to move (a rook knocked one square along its
///   rank) is, with no press to tell, a move: put back, it is a move taken back.
/// - A move taken back is a `takeback`, or, where the board never showed the position between
///   (a Certabo record every 350 ms), the move `revised_move` into the one played: both are in
///   the audit trail with the move that was taken back.
/// - An illegal move is completed by a press (7.5.1); with no clock it is never completed, so it
///   is the board out of a legal position: `displaced`, its detail naming the illegal move; and
///   like a knock, one put right within the settle window (2.5 s) need not be recorded.
fn expected(game: &PgnGame, info: &IrregularityInfo) -> (Vec<&'static str>, Vec<u32>, bool) {
    let p = info.before_ply;
    let legal_knock = || {
        let mut pos = game.start.clone();
        for m in &game.moves[..(p - 1) as usize] {
            pos.play_unchecked(*m);
        }
        let (from, to) = (&info.square_names[0], &info.square_names[1]);
        pos.legal_moves()
            .iter()
            .any(|m| m.from().is_some_and(|f| f.to_string() == *from) && m.to().to_string() == *to)
    };
    match info.kind {
        IrregularityScript::Knock { hold_ms } if legal_knock() => {
            (TAKEN_BACK.to_vec(), vec![p, p + 1], hold_ms >= 3_000)
        }
        IrregularityScript::Knock { hold_ms } => (vec!["displaced"], vec![p], hold_ms >= 3_000),
        IrregularityScript::KnockOver { hold_ms } => {
            (vec!["displaced"], vec![p], hold_ms >= 15_500)
        }
        IrregularityScript::IllegalMove { .. } | IrregularityScript::IllegalMoveAnswered { .. } => {
            (
                vec!["displaced", "illegal_move"],
                vec![p],
                info.restore_ms.saturating_sub(info.shown_ms) >= 3_000,
            )
        }
        IrregularityScript::PressWithoutMove => (vec!["clock_without_move"], vec![p], true),
        IrregularityScript::Takeback => (TAKEN_BACK.to_vec(), vec![p, p + 1], true),
        IrregularityScript::WrongStart { .. } => (vec!["wrong_start_position"], vec![1], true),
    }
}

#[derive(Default)]
struct Tally {
    games: usize,
    exact: usize,
    scripted: usize,
    found: usize,
    alarms: usize,
    revisions: usize,
    per_kind: BTreeMap<&'static str, (usize, usize)>,
    notes: Vec<String>,
}

impl Tally {
    fn add(&mut self, o: Tally) {
        self.games += o.games;
        self.exact += o.exact;
        self.scripted += o.scripted;
        self.found += o.found;
        self.alarms += o.alarms;
        self.revisions += o.revisions;
        for (k, (s, f)) in o.per_kind {
            let e = self.per_kind.entry(k).or_default();
            e.0 += s;
            e.1 += f;
        }
        self.notes.extend(o.notes);
    }
}

fn play_one(
    name: &str,
    game: &PgnGame,
    seed: u64,
    rotated: bool,
    capture: fn(&BoardScript) -> String,
) -> Tally {
    let irregularities: Vec<ScriptedIrregularity> =
        emulator::random_irregularities(seed, game.moves.len(), RATE)
            .into_iter()
            .filter(|s| !matches!(s.kind, IrregularityScript::PressWithoutMove))
            .collect();
    let opts = EmulatorOptions {
        seed,
        rotated,
        clock: false,
        irregularities,
        ..EmulatorOptions::default()
    };
    let script = emulator::script_pgn(game, &opts).unwrap();
    let text = capture(&script);
    let mut store = Store::open_in_memory().unwrap();
    let laws = LawsSetup {
        cfg: LawsConfig::for_edition(Laws::Fide2023),
        time_control: None,
        ..LawsSetup::default()
    };
    let summary = replay_reader_with(
        &mut store,
        name,
        name,
        text.as_bytes(),
        &laws,
        &mut |_, _| {},
    )
    .unwrap();
    let mut t = Tally {
        games: 1,
        ..Tally::default()
    };
    let records: Vec<_> = summary
        .games
        .iter()
        .map(|g| store.game(*g).unwrap().unwrap())
        .collect();
    let Some(record) = records.last() else {
        t.notes
            .push(format!("{name} seed {seed}: no game recorded"));
        return t;
    };
    let expected_uci: Vec<&str> = script.plies.iter().map(|p| p.uci.as_str()).collect();
    let got: Vec<&str> = record
        .moves
        .iter()
        .map(|m| m.uci.as_deref().unwrap_or(""))
        .collect();
    if got == expected_uci && records.len() == 1 {
        t.exact += 1;
    } else {
        let first = got.iter().zip(&expected_uci).position(|(a, b)| a != b);
        t.notes.push(format!(
            "{name} seed {seed}: {} games, {} of {} plies, first difference {:?}; scripted {:?}",
            records.len(),
            got.len(),
            expected_uci.len(),
            first.map(|p| (p + 1, got[p], expected_uci[p])),
            script
                .irregularities
                .iter()
                .map(|i| (i.before_ply, i.kind))
                .collect::<Vec<_>>()
        ));
    }
    let mut recorded: Vec<Value> = export::json::irregularities(record);
    for info in &script.irregularities {
        let (kinds, plies, must) = expected(game, info);
        let kind = kinds[0];
        // The kinds in order of preference: a takeback before a revision at the same plies.
        // A revision stands for a move taken back only if the move it revised is that move.
        let taken_back = info.uci.clone().or_else(|| {
            (info.square_names.len() == 2)
                .then(|| format!("{}{}", info.square_names[0], info.square_names[1]))
        });
        let hit = kinds.iter().find_map(|k| {
            recorded.iter().position(|x| {
                x["kind"] == *k
                    && x["ply"]
                        .as_u64()
                        .is_some_and(|p| plies.contains(&(p as u32)))
                    && (*k != "revised_move"
                        || taken_back.as_deref() == x["detail"]["old"]["uci"].as_str())
            })
        });
        if let Some(k) = hit {
            recorded.remove(k);
        }
        if !must {
            continue;
        }
        t.scripted += 1;
        let e = t.per_kind.entry(kind).or_default();
        e.0 += 1;
        if hit.is_some() {
            t.found += 1;
            e.1 += 1;
        } else {
            t.notes.push(format!(
                "{name} seed {seed}: missed {kind} before ply {} ({:?})",
                info.before_ply, info.kind
            ));
        }
    }
    // A slide's resting square recorded, then revised into the move's target, is the tracker's
    // own correction on a board with no press to end a move: counted, not an alarm.
    let (revisions, alarms): (Vec<Value>, Vec<Value>) = recorded
        .into_iter()
        .partition(|r| r["kind"] == "revised_move");
    t.revisions += revisions.len();
    for r in &alarms {
        t.notes.push(format!(
            "{name} seed {seed}: alarm {} at ply {} ({})",
            r["kind"], r["ply"], r["detail"]
        ));
    }
    t.alarms += alarms.len();
    t
}

fn run(vendor: &str, capture: fn(&BoardScript) -> String) -> Tally {
    let games = games();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = games.len().div_ceil(threads);
    let parts: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = games
            .chunks(chunk)
            .enumerate()
            .map(|(part, games)| {
                s.spawn(move || {
                    let mut t = Tally::default();
                    for (i, (name, game)) in games.iter().enumerate() {
                        let index = part * chunk + i;
                        t.add(play_one(
                            name,
                            game,
                            1000 + index as u64,
                            index % 7 == 3,
                            capture,
                        ));
                    }
                    t
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all = Tally::default();
    for p in parts {
        all.add(p);
    }
    eprintln!(
        "{vendor}: {} games, {} exact; {} scripted, {} found ({:.1} %), {} alarms, {} moves revised; \
         per kind (scripted, found): {:?}",
        all.games,
        all.exact,
        all.scripted,
        all.found,
        100.0 * all.found as f64 / all.scripted.max(1) as f64,
        all.alarms,
        all.revisions,
        all.per_kind
    );
    for n in &all.notes {
        eprintln!("{vendor}: {n}");
    }
    all
}

fn check(vendor: &str, capture: fn(&BoardScript) -> String) {
    let t = run(vendor, capture);
    assert!(
        t.scripted > 100,
        "enough irregularities scripted: {}",
        t.scripted
    );
    assert_eq!(t.exact, t.games, "{vendor}: every game's moves stay exact");
    assert!(
        t.found * 100 >= t.scripted * 95,
        "{vendor}: at least 95 % found: {} of {}",
        t.found,
        t.scripted
    );
    assert!(
        t.alarms * 100 <= t.scripted * 2,
        "{vendor}: false alarms at most 2 %: {}",
        t.alarms
    );
}

#[test]
fn dgt_without_a_clock() {
    check("dgt", |s| s.to_capture_text());
}

#[test]
fn chesslink() {
    check("chesslink", |s| {
        emulator::chesslink_script(s).to_capture_text()
    });
}

#[test]
fn chessnut() {
    check("chessnut", |s| {
        emulator::chessnut_script(s).to_capture_text()
    });
}

#[test]
fn certabo() {
    check("certabo", |s| emulator::certabo_script(s).to_capture_text());
}

#[test]
fn ichessone() {
    check("ichessone", |s| {
        emulator::ichessone_script(s).to_capture_text()
    });
}
