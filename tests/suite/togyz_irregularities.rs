//! Scripted irregularities on a togyz board: PlayOK corpus games played by the emulator with
//! random scattered korgools ([KG 4.2–4.3]), sowings skipping a pit completed by a press
//! ([KG 1.5]) and wrong start positions, their captures replayed
//! through `replay_reader` into SQLite. The moves stay exactly the corpus's; each scripted
//! irregularity is recorded before its ply with its kind and the Kyrgyz article; anything else
//! recorded is a false alarm. The rates are printed for the lead's report.

use boardscribe::{
    emulator::{
        TogyzEmulatorOptions, TogyzIrregularity, TogyzIrregularityKind, script_togyz, togyz_records,
    },
    game::togyz::Rules,
    replay::replay_reader,
    store::Store,
    tracker::TrackerEvent,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PLAYOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/playok-2025.pgn"
);

/// Games played, and plies kept of each (the irregularities need plies, not endings).
const GAMES: usize = 40;
const PLIES: usize = 40;

/// A seeded schedule: a wrong start in every fourth game (on boards lying either way round: the
/// corrected start reads the same both ways, so the first move settles the orientation),
/// korgools scattered or a sowing that skips a pit before about one ply in eight.
fn schedule(game: usize, plies: usize, _rotated: bool) -> Vec<TogyzIrregularity> {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7062 + game as u64);
    let mut out = Vec::new();
    if game.is_multiple_of(4) || game % 6 == 5 {
        out.push(TogyzIrregularity {
            before_ply: 1,
            kind: TogyzIrregularityKind::WrongStart,
        });
    }
    for ply in 2..plies as u32 {
        if rng.random_bool(0.125) {
            let kind = if rng.random_bool(0.3) {
                TogyzIrregularityKind::IllegalSowing
            } else if rng.random_bool(0.3) {
                TogyzIrregularityKind::CaptureNotTaken
            } else {
                TogyzIrregularityKind::Scattered {
                    korgools: rng.random_range(1..=3),
                }
            };
            out.push(TogyzIrregularity {
                before_ply: ply,
                kind,
            });
        }
    }
    out
}

/// The kind recorded, and the Kyrgyz article (the rules have none for the start position).
fn expected_kind(kind: TogyzIrregularityKind) -> (&'static str, Option<&'static str>) {
    match kind {
        TogyzIrregularityKind::Scattered { .. } => ("displaced", Some("4.2")),
        TogyzIrregularityKind::WrongStart => ("wrong_start_position", None),
        TogyzIrregularityKind::IllegalSowing => ("illegal_move", Some("1.5")),
        TogyzIrregularityKind::CaptureNotTaken => ("illegal_move", Some("1.5")),
    }
}

#[test]
fn scripted_irregularities_are_recorded_at_their_ply_with_the_kyrgyz_article() {
    let text = std::fs::read_to_string(PLAYOK).expect("corpus");
    let mut games = togyz_records(&text, Rules::KYRGYZ).expect("records");
    games.truncate(GAMES);
    let (mut scripted, mut found, mut false_alarms, mut plies) = (0usize, 0usize, 0usize, 0usize);
    let mut by_kind = std::collections::BTreeMap::<&str, (usize, usize)>::new();
    let mut failures = Vec::new();
    for (g, (rec, moves)) in games.iter().enumerate() {
        let n = moves.len().min(PLIES);
        let opts = TogyzEmulatorOptions {
            seed: 900 + g as u64,
            rotated: g % 3 == 2,
            irregularities: schedule(g, n, g % 3 == 2),
            ..TogyzEmulatorOptions::default()
        };
        let script = script_togyz(&moves[..n], &opts).expect("script");
        // A scattering needs a pit with korgools to spare, a skipped pit a sowing of three or
        // more: not every scheduled one can be played.
        assert!(script.irregularities.len() <= opts.irregularities.len());
        for i in &script.irregularities {
            if let TogyzIrregularityKind::Scattered { .. } = i.kind {
                assert!(i.restore_ms >= i.shown_ms + 4_000, "held at least 4 s");
            }
        }
        let (mut recorded, mut details) = (Vec::new(), Vec::new());
        let mut store = Store::open_in_memory().expect("store");
        let summary = replay_reader(
            &mut store,
            "togyz capture",
            "pit board 1",
            script.to_capture_text().as_bytes(),
            &mut |_, e| {
                if let TrackerEvent::Irregularity {
                    ply,
                    kind,
                    article,
                    detail,
                    ..
                } = e
                {
                    recorded.push((*ply, kind.as_str().to_owned(), article.clone()));
                    details.push(detail.clone());
                }
            },
        )
        .expect("replay");
        let got: Vec<String> = summary
            .games
            .last()
            .and_then(|id| store.game(*id).expect("read"))
            .map(|game| game.moves.iter().map(|m| m.notation.clone()).collect())
            .unwrap_or_default();
        let want: Vec<String> = rec.moves[..n].iter().map(|m| m.text.to_string()).collect();
        if got != want || summary.games.len() != 1 {
            failures.push(format!(
                "game {g} ({:?}, {details:?}): {} games, {} of {} moves, differ at {:?}",
                script.irregularities.first(),
                summary.games.len(),
                got.len(),
                want.len(),
                got.iter().zip(&want).position(|(a, b)| a != b)
            ));
        }
        plies += n;
        let mut matched = vec![false; recorded.len()];
        for s in &script.irregularities {
            scripted += 1;
            let (kind, article) = expected_kind(s.kind);
            let label = match s.kind {
                TogyzIrregularityKind::Scattered { .. } => "scattered",
                TogyzIrregularityKind::IllegalSowing => "pit skipped",
                TogyzIrregularityKind::CaptureNotTaken => "capture not taken",
                TogyzIrregularityKind::WrongStart => "wrong start",
            };
            let entry = by_kind.entry(label).or_default();
            entry.0 += 1;
            let hit = recorded.iter().enumerate().position(|(j, (ply, k, a))| {
                !matched[j]
                    && *ply == s.before_ply
                    && k == kind
                    && article.is_none_or(|want| a.as_deref().is_some_and(|a| a.contains(want)))
            });
            if let Some(j) = hit {
                matched[j] = true;
                found += 1;
                entry.1 += 1;
            } else {
                eprintln!("game {g}: {s:?} not found in {recorded:?}");
            }
        }
        false_alarms += matched.iter().filter(|m| !**m).count();
    }
    eprintln!(
        "togyz irregularities: {found}/{scripted} found ({:.1} %), by kind (scripted, found) \
         {by_kind:?}, {false_alarms} false alarms in {plies} plies",
        100.0 * found as f64 / scripted.max(1) as f64
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(scripted >= 100, "a real sample: {scripted}");
    // Measured: 134/136 found; the two missed are single korgools knocked one pit on, which
    // can pass for part of a sowing. No false alarm in 1556 plies.
    assert!(found * 100 >= scripted * 95, "{found}/{scripted} found");
    assert!(
        false_alarms * 200 <= plies,
        "{false_alarms} false alarms in {plies} plies"
    );
}

#[test]
fn a_script_without_irregularities_is_unchanged() {
    let text = std::fs::read_to_string(PLAYOK).expect("corpus");
    let (_, moves) = togyz_records(&text, Rules::KYRGYZ)
        .expect("records")
        .swap_remove(7);
    let plain = script_togyz(&moves, &TogyzEmulatorOptions::default()).expect("script");
    let with = TogyzEmulatorOptions {
        irregularities: vec![TogyzIrregularity {
            before_ply: 9,
            kind: TogyzIrregularityKind::Scattered { korgools: 2 },
        }],
        ..TogyzEmulatorOptions::default()
    };
    let scattered = script_togyz(&moves, &with).expect("script");
    assert!(plain.irregularities.is_empty());
    // Up to the scattering, the same bytes at the same times.
    let cut = scattered.irregularities[0].start_ms;
    let before = |s: &boardscribe::emulator::TogyzScript| -> Vec<_> {
        s.to_chunks().into_iter().filter(|c| c.0 < cut).collect()
    };
    assert_eq!(before(&plain), before(&scattered));
    assert_eq!(
        plain.plies.last().map(|p| p.board_after),
        scattered.plies.last().map(|p| p.board_after)
    );
}
