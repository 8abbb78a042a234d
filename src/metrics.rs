//! Counters of the running daemon, served as Prometheus text at `/metrics`.
//!
//! Flow: one [`Metrics`] (atomics, two small locks) is shared by the board tasks (connections,
//! frames, decode warnings, committed moves and irregularities), the store writer (commit
//! latency, and whether the store refuses writes for lack of space) and the relay server (SSE
//! subscribers); [`Metrics::render`] writes the Prometheus text exposition format by hand.
//! Nothing here does I/O.

use std::{
    collections::{BTreeMap, VecDeque},
    fmt::Write as _,
    sync::{
        Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering::Relaxed},
    },
    time::Duration,
};

/// How many recent commit latencies the quantiles are computed from.
const LATENCY_WINDOW: usize = 1024;

/// The quantiles `/metrics` shows of the store commit latency.
const QUANTILES: [f64; 3] = [0.5, 0.9, 0.99];

/// The daemon's counters and gauges.
#[derive(Debug, Default)]
pub struct Metrics {
    boards_configured: AtomicU64,
    boards_connected: AtomicU64,
    games_live: AtomicU64,
    frames: AtomicU64,
    decode_warnings: AtomicU64,
    bytes_skipped: AtomicU64,
    moves: AtomicU64,
    irregularities: Mutex<BTreeMap<String, u64>>,
    commits: AtomicU64,
    commit_failures: AtomicU64,
    /// 1 while the store refuses writes for lack of space.
    store_full: AtomicU64,
    store_full_batches: AtomicU64,
    raw_bytes_dropped: AtomicU64,
    commit_micros_sum: AtomicU64,
    recent_micros: Mutex<VecDeque<u64>>,
    sse_subscribers: AtomicU64,
    /// `[cluster]`: per hall, its outbox (at a hall) or how far behind it the event node is.
    cluster: Mutex<BTreeMap<String, HallGauges>>,
}

/// One hall's figures: a hall sets the outbox's, the event node the rest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HallGauges {
    /// A hall: records committed and not yet acknowledged by the broker.
    pub outbox_depth: Option<u64>,
    /// A hall: how long the oldest of them has waited, in ms.
    pub outbox_oldest_ms: Option<u64>,
    /// A hall: records the broker acknowledged since start.
    pub published: u64,
    /// 1 while connected to a NATS server.
    pub connected: Option<bool>,
    /// The event node: records in the hall's stream not yet applied.
    pub lag_records: Option<u64>,
    /// The event node: how far behind the hall it is, in ms (now minus the hall's commit time
    /// of the last record applied, while records wait; 0 when none waits).
    pub lag_ms: Option<u64>,
    /// The event node: records applied since start.
    pub applied: u64,
    /// The event node: the last record's time from the hall's commit to the event node's, ms.
    pub latency_ms: Option<u64>,
    /// Why the hall's records stopped (another database under its name, records missing), if
    /// they did.
    pub stalled: Option<String>,
    /// A hall: why the NATS servers refuse it (a short cause and the whole reason), if they do.
    pub refused: Option<(String, String)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Counters stay usable after a panic elsewhere.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Subtracts one without wrapping below zero.
fn decrement(a: &AtomicU64) {
    let _never_fails = a.fetch_update(Relaxed, Relaxed, |v| Some(v.saturating_sub(1)));
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    pub fn set_boards_configured(&self, n: usize) {
        self.boards_configured.store(n as u64, Relaxed);
    }

    pub fn board_connected(&self) {
        self.boards_connected.fetch_add(1, Relaxed);
    }

    pub fn board_lost(&self) {
        decrement(&self.boards_connected);
    }

    pub fn game_started(&self) {
        self.games_live.fetch_add(1, Relaxed);
    }

    pub fn game_over(&self) {
        decrement(&self.games_live);
    }

    /// Frames decoded, decode warnings and bytes skipped since the last call of this board.
    pub fn decoded(&self, frames: u64, warnings: u64, skipped: u64) {
        self.frames.fetch_add(frames, Relaxed);
        self.decode_warnings.fetch_add(warnings, Relaxed);
        self.bytes_skipped.fetch_add(skipped, Relaxed);
    }

    /// A move is durable in the store.
    pub fn move_recorded(&self) {
        self.moves.fetch_add(1, Relaxed);
    }

    /// An irregularity of `kind` is durable in the store.
    pub fn irregularity(&self, kind: &str) {
        *lock(&self.irregularities)
            .entry(kind.to_owned())
            .or_default() += 1;
    }

    /// A store transaction took `latency`; `ok`: it committed.
    pub fn commit(&self, latency: Duration, ok: bool) {
        if !ok {
            self.commit_failures.fetch_add(1, Relaxed);
            return;
        }
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.commits.fetch_add(1, Relaxed);
        self.commit_micros_sum.fetch_add(micros, Relaxed);
        let mut recent = lock(&self.recent_micros);
        if recent.len() == LATENCY_WINDOW {
            recent.pop_front();
        }
        recent.push_back(micros);
    }

    /// A batch committed: the store takes writes.
    pub fn store_ok(&self) {
        self.store_full.store(0, Relaxed);
    }

    /// A batch was refused; `full`: for lack of space (a full disk).
    pub fn store_refused(&self, full: bool) {
        if full {
            self.store_full.store(1, Relaxed);
            self.store_full_batches.fetch_add(1, Relaxed);
        }
    }

    /// Whether the store refuses writes for lack of space now.
    pub fn store_full(&self) -> bool {
        self.store_full.load(Relaxed) != 0
    }

    /// Raw bytes a board dropped (beyond its in-memory bound while the store refused writes).
    pub fn raw_dropped(&self, bytes: u64) {
        self.raw_bytes_dropped.fetch_add(bytes, Relaxed);
    }

    pub fn subscriber_joined(&self) {
        self.sse_subscribers.fetch_add(1, Relaxed);
    }

    pub fn subscriber_left(&self) {
        decrement(&self.sse_subscribers);
    }

    pub fn boards_connected(&self) -> u64 {
        self.boards_connected.load(Relaxed)
    }

    pub fn games_live(&self) -> u64 {
        self.games_live.load(Relaxed)
    }

    pub fn moves(&self) -> u64 {
        self.moves.load(Relaxed)
    }

    /// Changes hall `hall`'s figures.
    pub fn hall(&self, hall: &str, f: impl FnOnce(&mut HallGauges)) {
        f(lock(&self.cluster).entry(hall.to_owned()).or_default());
    }

    /// Hall `hall`'s figures as they are.
    pub fn hall_gauges(&self, hall: &str) -> Option<HallGauges> {
        lock(&self.cluster).get(hall).cloned()
    }

    /// The Prometheus text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut one = |name: &str, kind: &str, help: &str, value: u64| {
            let _ = writeln!(out, "# HELP boardscribe_{name} {help}");
            let _ = writeln!(out, "# TYPE boardscribe_{name} {kind}");
            let _ = writeln!(out, "boardscribe_{name} {value}");
        };
        let get = |a: &AtomicU64| a.load(Relaxed);
        one(
            "boards_configured",
            "gauge",
            "Boards the daemon records.",
            get(&self.boards_configured),
        );
        one(
            "boards_connected",
            "gauge",
            "Boards connected now.",
            get(&self.boards_connected),
        );
        one(
            "games_live",
            "gauge",
            "Games in progress.",
            get(&self.games_live),
        );
        one(
            "frames_total",
            "counter",
            "Frames decoded from the boards.",
            get(&self.frames),
        );
        one(
            "decode_warnings_total",
            "counter",
            "Bytes from the boards that did not decode (each run of them once).",
            get(&self.decode_warnings),
        );
        one(
            "bytes_skipped_total",
            "counter",
            "Bytes from the boards skipped by the frame decoder.",
            get(&self.bytes_skipped),
        );
        one(
            "moves_total",
            "counter",
            "Moves recorded (durable in the store).",
            get(&self.moves),
        );
        one(
            "store_commit_failures_total",
            "counter",
            "Store transactions that failed.",
            get(&self.commit_failures),
        );
        one(
            "store_full",
            "gauge",
            "1 while the store refuses writes because the disk is full (the boards keep their \
             moves in memory and retry), else 0.",
            get(&self.store_full),
        );
        one(
            "store_full_batches_total",
            "counter",
            "Batches the store refused because the disk was full (kept and retried).",
            get(&self.store_full_batches),
        );
        one(
            "raw_bytes_dropped_total",
            "counter",
            "Raw bytes from the boards dropped beyond the in-memory bound while the store \
             refused writes (moves are never dropped).",
            get(&self.raw_bytes_dropped),
        );
        one(
            "sse_subscribers",
            "gauge",
            "Clients subscribed to /api/events.",
            get(&self.sse_subscribers),
        );
        out.push_str(
            "# HELP boardscribe_irregularities_total Irregularities recorded, by kind.\n\
             # TYPE boardscribe_irregularities_total counter\n",
        );
        for (kind, n) in lock(&self.irregularities).iter() {
            let _ = writeln!(
                out,
                "boardscribe_irregularities_total{{kind=\"{}\"}} {n}",
                escape_label(kind)
            );
        }
        render_cluster(&mut out, &lock(&self.cluster));
        out.push_str(
            "# HELP boardscribe_store_commit_seconds Store transaction latency (quantiles of the \
             last 1024).\n# TYPE boardscribe_store_commit_seconds summary\n",
        );
        let mut recent: Vec<u64> = lock(&self.recent_micros).iter().copied().collect();
        recent.sort_unstable();
        for q in QUANTILES {
            match quantile(&recent, q) {
                Some(us) => {
                    let _ = writeln!(
                        out,
                        "boardscribe_store_commit_seconds{{quantile=\"{q}\"}} {}",
                        seconds(us)
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "boardscribe_store_commit_seconds{{quantile=\"{q}\"}} NaN"
                    );
                }
            }
        }
        let _ = writeln!(
            out,
            "boardscribe_store_commit_seconds_sum {}",
            seconds(get(&self.commit_micros_sum))
        );
        let _ = writeln!(
            out,
            "boardscribe_store_commit_seconds_count {}",
            get(&self.commits)
        );
        out
    }
}

/// The `[cluster]` figures, per hall; a family only when some hall has it.
fn render_cluster(out: &mut String, halls: &BTreeMap<String, HallGauges>) {
    type Get = fn(&HallGauges) -> Option<String>;
    let families: [(&str, &str, &str, Get); 8] = [
        (
            "cluster_outbox_depth",
            "gauge",
            "Records this hall committed that the broker has not acknowledged yet.",
            |g| g.outbox_depth.map(|v| v.to_string()),
        ),
        (
            "cluster_outbox_oldest_seconds",
            "gauge",
            "How long the oldest record in this hall's outbox has waited (0 when none waits).",
            |g| g.outbox_oldest_ms.map(|v| seconds(v * 1000)),
        ),
        (
            "cluster_published_total",
            "counter",
            "Records of this hall the broker acknowledged since start.",
            |g| g.outbox_depth.map(|_| g.published.to_string()),
        ),
        (
            "cluster_connected",
            "gauge",
            "1 while connected to a NATS server, else 0.",
            |g| g.connected.map(|c| u64::from(c).to_string()),
        ),
        (
            "cluster_lag_records",
            "gauge",
            "Records in the hall's stream the event node has not applied yet.",
            |g| g.lag_records.map(|v| v.to_string()),
        ),
        (
            "cluster_lag_seconds",
            "gauge",
            "How far the event node is behind the hall: now minus the hall's commit time of the \
             last record applied, while records wait; 0 when none waits.",
            |g| g.lag_ms.map(|v| seconds(v * 1000)),
        ),
        (
            "cluster_applied_total",
            "counter",
            "Records of the hall the event node applied since start.",
            |g| g.lag_records.map(|_| g.applied.to_string()),
        ),
        (
            "cluster_latency_seconds",
            "gauge",
            "The last record's time from the hall's commit to the event node's.",
            |g| g.latency_ms.map(|v| seconds(v * 1000)),
        ),
    ];
    for (name, kind, help, get) in families {
        let values: Vec<(&String, String)> = halls
            .iter()
            .filter_map(|(hall, g)| get(g).map(|v| (hall, v)))
            .collect();
        if values.is_empty() {
            continue;
        }
        let _ = writeln!(out, "# HELP boardscribe_{name} {help}");
        let _ = writeln!(out, "# TYPE boardscribe_{name} {kind}");
        for (hall, v) in values {
            let _ = writeln!(
                out,
                "boardscribe_{name}{{hall=\"{}\"}} {v}",
                escape_label(hall)
            );
        }
    }
    let stalled: Vec<(&String, &String)> = halls
        .iter()
        .filter_map(|(hall, g)| g.stalled.as_ref().map(|why| (hall, why)))
        .collect();
    if !halls.is_empty() {
        out.push_str(
            "# HELP boardscribe_cluster_stalled 1 while a hall's records cannot go on (the \
             reason is logged), else 0.\n# TYPE boardscribe_cluster_stalled gauge\n",
        );
        for hall in halls.keys() {
            let on = stalled.iter().any(|(h, _)| *h == hall);
            let _ = writeln!(
                out,
                "boardscribe_cluster_stalled{{hall=\"{}\"}} {}",
                escape_label(hall),
                u64::from(on)
            );
        }
    }
    // At a hall: 1 while the NATS servers refuse it, the cause a label (the reason is logged).
    let at_halls: Vec<(&String, &HallGauges)> = halls
        .iter()
        .filter(|(_, g)| g.outbox_depth.is_some())
        .collect();
    if !at_halls.is_empty() {
        out.push_str(
            "# HELP boardscribe_cluster_refused 1 while the NATS servers refuse this hall (a \
             certificate, a CA or credentials file; the reason is logged, naming the file), \
             else 0.\n# TYPE boardscribe_cluster_refused gauge\n",
        );
        for (hall, g) in at_halls {
            let (cause, on) = g
                .refused
                .as_ref()
                .map_or(("", 0), |(cause, _)| (cause.as_str(), 1));
            let _ = writeln!(
                out,
                "boardscribe_cluster_refused{{hall=\"{}\",cause=\"{}\"}} {on}",
                escape_label(hall),
                escape_label(cause)
            );
        }
    }
}

/// The nearest-rank quantile `q` of sorted `values`.
fn quantile(sorted: &[u64], q: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

fn seconds(micros: u64) -> String {
    format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000)
}

/// A label value as the text format writes it: `\`, `"` and newlines escaped.
fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sample line of `text` as (name with labels, value).
    fn samples(text: &str) -> Vec<(String, String)> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let (k, v) = l.rsplit_once(' ').unwrap();
                (k.to_owned(), v.to_owned())
            })
            .collect()
    }

    fn sample(text: &str, name: &str) -> String {
        samples(text)
            .into_iter()
            .find(|(k, _)| k == name)
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
            .1
    }

    #[test]
    fn the_text_format_has_help_type_and_samples() {
        let m = Metrics::new();
        m.set_boards_configured(3);
        m.board_connected();
        m.board_connected();
        m.board_lost();
        m.board_lost();
        m.board_lost(); // never below zero
        m.board_connected();
        m.decoded(10, 2, 7);
        m.decoded(5, 0, 0);
        m.move_recorded();
        m.move_recorded();
        m.irregularity("illegal_move");
        m.irregularity("illegal_move");
        m.irregularity("odd \"kind\"\n");
        for ms in 1..=100u64 {
            m.commit(Duration::from_millis(ms), true);
        }
        m.commit(Duration::from_secs(9), false);
        m.store_refused(false);
        assert!(!m.store_full(), "only a lack of space is a full store");
        m.store_refused(true);
        m.store_refused(true);
        m.raw_dropped(4096);
        m.raw_dropped(10);
        let text = m.render();
        assert_eq!(sample(&text, "boardscribe_store_full"), "1");
        assert_eq!(sample(&text, "boardscribe_store_full_batches_total"), "2");
        assert_eq!(sample(&text, "boardscribe_raw_bytes_dropped_total"), "4106");
        m.store_ok();
        assert_eq!(sample(&m.render(), "boardscribe_store_full"), "0");
        assert_eq!(sample(&text, "boardscribe_boards_configured"), "3");
        assert_eq!(sample(&text, "boardscribe_boards_connected"), "1");
        assert_eq!(sample(&text, "boardscribe_frames_total"), "15");
        assert_eq!(sample(&text, "boardscribe_decode_warnings_total"), "2");
        assert_eq!(sample(&text, "boardscribe_bytes_skipped_total"), "7");
        assert_eq!(sample(&text, "boardscribe_moves_total"), "2");
        assert_eq!(
            sample(
                &text,
                "boardscribe_irregularities_total{kind=\"illegal_move\"}"
            ),
            "2"
        );
        assert_eq!(
            sample(
                &text,
                "boardscribe_irregularities_total{kind=\"odd \\\"kind\\\"\\n\"}"
            ),
            "1"
        );
        assert_eq!(
            sample(&text, "boardscribe_store_commit_seconds{quantile=\"0.5\"}"),
            "0.050000"
        );
        assert_eq!(
            sample(&text, "boardscribe_store_commit_seconds{quantile=\"0.99\"}"),
            "0.099000"
        );
        assert_eq!(
            sample(&text, "boardscribe_store_commit_seconds_count"),
            "100"
        );
        // 1 + 2 + ... + 100 ms.
        assert_eq!(
            sample(&text, "boardscribe_store_commit_seconds_sum"),
            "5.050000"
        );
        assert_eq!(
            sample(&text, "boardscribe_store_commit_failures_total"),
            "1"
        );
        // Every metric is announced by TYPE before its samples, once.
        for (name, _) in samples(&text) {
            let base = name.split('{').next().unwrap();
            let family = base
                .strip_suffix("_sum")
                .or_else(|| base.strip_suffix("_count"))
                .filter(|f| text.contains(&format!("# TYPE {f} summary")))
                .unwrap_or(base);
            let typed = format!("# TYPE {family} ");
            assert_eq!(text.matches(&typed).count(), 1, "{family}");
            assert!(text.find(&typed).unwrap() < text.find(&format!("\n{name} ")).unwrap());
        }
    }

    #[test]
    fn an_empty_summary_says_nan() {
        let text = Metrics::new().render();
        assert_eq!(
            sample(&text, "boardscribe_store_commit_seconds{quantile=\"0.9\"}"),
            "NaN"
        );
        assert_eq!(sample(&text, "boardscribe_store_commit_seconds_count"), "0");
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[7], 0.99), Some(7));
        assert_eq!(quantile(&[1, 2, 3, 4], 0.5), Some(2));
        assert_eq!(quantile(&[1, 2, 3, 4], 0.9), Some(4));
    }
}
