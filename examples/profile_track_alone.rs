//! Profiling aid: exactly what the benches time as "the tracker alone" (`benches/common`'s
//! `track`: decoded frames → sensor → tracker), N passes over the three real captures.
//! `valgrind --tool=callgrind target/release/examples/profile_track_alone 50`.
#[path = "../benches/common/mod.rs"]
mod common;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let texts = common::texts();
    let games = common::decoded(&texts);
    let start = std::time::Instant::now();
    let mut events = 0;
    for _ in 0..n {
        events += common::track(&games);
    }
    let el = start.elapsed();
    println!(
        "{n} passes in {el:?}: {:?} a pass ({events} events)",
        el / n as u32
    );
}
