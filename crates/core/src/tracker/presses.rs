//! How many times a clock was pressed between two of its readings, told by the increment.
//!
//! Between two readings both clocks together lose the time that passed, and gain the increment
//! at every press (Fischer mode). So the presses since the last press heard before a gap are
//! `(time passed - time the clocks lost) / increment`: a board that shows a piece moved and
//! moved back, or a position that came again, cannot hide the presses made for it. The
//! increment is not taken from the configuration: it is read off the record's own presses
//! (the median over consecutive live presses, used only when they agree), so a delay mode, a
//! clock set to another control or a game without increment gives no count, and nothing is
//! judged by it. Pure: times and clocks are arguments.

use crate::Millis;

/// Fewer pairs of consecutive presses than this tell no increment.
const MIN_PAIRS: usize = 8;
/// The pairs looked at, the latest.
const MAX_PAIRS: usize = 40;
/// A pair agrees with the median within this: a clock shows whole seconds, and a move is
/// recorded up to a scan or a reading after its press, so one pair is off by up to ~3 s.
const AGREE_MS: i64 = 3_000;
/// Below this increment the count's error (display rounding and recording delay, under 3 s)
/// could pass for a press.
pub(super) const MIN_INCREMENT_MS: i64 = 5_000;

/// One live press: when it was recorded, and both clocks as it showed them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Press {
    pub at_ms: Millis,
    pub clocks_ms: u64,
}

/// The increment a run of consecutive presses shows, to the second: the mean over the pairs
/// that agree with the median (the errors of consecutive pairs cancel in a sum, so the mean is
/// good to a fraction of a second where one pair is not), if at least [`MIN_PAIRS`] pairs do
/// and they are two thirds of all, and if it is at least [`MIN_INCREMENT_MS`].
pub(super) fn increment_ms(presses: &[Press]) -> Option<i64> {
    let mut each: Vec<i64> = presses
        .windows(2)
        .filter(|w| w[1].at_ms > w[0].at_ms)
        .map(|w| {
            let passed = (w[1].at_ms - w[0].at_ms) as i64;
            let lost = w[0].clocks_ms as i64 - w[1].clocks_ms as i64;
            passed - lost
        })
        .collect();
    if each.len() > MAX_PAIRS {
        each.drain(..each.len() - MAX_PAIRS);
    }
    let mut sorted = each.clone();
    sorted.sort_unstable();
    let median = *sorted.get(sorted.len() / 2)?;
    let agree: Vec<i64> = each
        .iter()
        .copied()
        .filter(|e| (e - median).abs() <= AGREE_MS)
        .collect();
    if agree.len() < MIN_PAIRS || 3 * agree.len() < 2 * each.len() {
        return None;
    }
    let mean = agree.iter().sum::<i64>() / agree.len() as i64;
    // Clocks add increments in whole seconds: a count over many presses must not gather the
    // estimate's error.
    let increment = (mean + 500).div_euclid(1_000) * 1_000;
    (increment >= MIN_INCREMENT_MS).then_some(increment)
}

/// The presses between `from` and a reading of both clocks `clocks_ms` at `at`, as a real
/// number (the nearer to a whole one, the surer).
pub(super) fn presses_between(increment_ms: i64, from: Press, at: Millis, clocks_ms: u64) -> f64 {
    let passed = at as i64 - from.at_ms as i64;
    let lost = from.clocks_ms as i64 - clocks_ms as i64;
    (passed - lost) as f64 / increment_ms as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game at `base` + `inc`, each player thinking `think(ply)` ms; the presses as a tracker
    /// records them (`delay(ply)` ms late, the clocks in whole seconds).
    fn game(
        inc: u64,
        plies: usize,
        think: impl Fn(usize) -> u64,
        delay: impl Fn(usize) -> u64,
    ) -> Vec<Press> {
        let (mut t, mut clocks) = (0u64, [900_000u64, 900_000]);
        (1..=plies)
            .map(|ply| {
                let mover = (ply + 1) % 2;
                t += think(ply);
                clocks[mover] = clocks[mover] - think(ply) + inc;
                Press {
                    at_ms: t + delay(ply),
                    clocks_ms: clocks.iter().map(|c| c / 1_000 * 1_000).sum(),
                }
            })
            .collect()
    }

    #[test]
    fn the_increment_is_read_off_presses_recorded_late_on_whole_seconds() {
        for inc in [5_000, 10_000, 30_000] {
            let presses = game(
                inc,
                30,
                |p| 1_300 + (p as u64 * 7_919) % 20_000,
                |p| (p as u64 * 373) % 1_000,
            );
            assert_eq!(increment_ms(&presses), Some(inc as i64));
        }
    }

    #[test]
    fn no_increment_a_small_one_or_too_few_presses_tell_nothing() {
        let think = |p: usize| 2_000 + (p as u64 * 4_111) % 9_000;
        assert_eq!(increment_ms(&game(0, 30, think, |_| 0)), None);
        assert_eq!(increment_ms(&game(2_000, 30, think, |_| 0)), None);
        assert_eq!(increment_ms(&game(10_000, 8, think, |_| 0)), None);
        // Presses recorded at one time (read from memory) are no pairs.
        let mut same = game(10_000, 30, think, |_| 0);
        for p in &mut same {
            p.at_ms = 5_000;
        }
        assert_eq!(increment_ms(&same), None);
    }

    #[test]
    fn the_presses_of_a_piece_moved_and_moved_back_are_counted() {
        let think = |p: usize| 1_500 + (p as u64 * 2_713) % 12_000;
        let presses = game(10_000, 80, think, |p| (p as u64 * 211) % 900);
        let inc = increment_ms(&presses[..30]).unwrap();
        for k in 1..=50 {
            // Over many presses, an increment off by a fraction of a second would be a press.
            let got = presses_between(
                inc,
                presses[29],
                presses[29 + k].at_ms,
                presses[29 + k].clocks_ms,
            );
            assert!((got - k as f64).abs() < 0.5, "{k}: {got}");
        }
    }
}
