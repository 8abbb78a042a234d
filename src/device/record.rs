//! `boardscribe record`: a real board's stream, both directions, to a capture file.
//!
//! Flow: open the port like `run` does (over the link of its `--kind`: a serial line, or a hidraw
//! node, each read cut to its report), send its start-up commands (one output report at a time
//! on a HID link), and write every chunk that goes either way, timestamped from the start, until
//! Ctrl-C or `--seconds` have passed. A board whose sensor learns it (a Certabo board's
//! calibration) and whose calibration the daemon's database keeps (`--db`) gets it in the
//! capture's `# learnt:` header, as the daemon would give it back: a capture begun mid-session,
//! with no calibration setup in it, then replays as the daemon read the board.

use std::{
    io::BufWriter,
    path::PathBuf,
    time::{Duration, Instant},
};

use anyhow::Context;

use super::{Direction, link, serial::now_ms};
use crate::{
    boards::WithBoard,
    capture::{CaptureWriter, LEARNT_HEADER},
    kind::BoardKind,
    pipeline::Board,
    store::Store,
};

/// `boardscribe record`.
#[derive(clap::Args, Debug, Clone)]
pub struct RecordArgs {
    /// The board's port: a serial port, a hidraw node (or a socket standing in for one).
    #[arg(long)]
    pub port: PathBuf,
    /// The capture file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Stop after this many seconds (default: at Ctrl-C).
    #[arg(long)]
    pub seconds: Option<u64>,
    /// The kind of board: its line settings, its start-up commands and the capture's device.
    #[arg(long, value_enum, default_value_t = BoardKind::Dgt)]
    pub kind: BoardKind,
    /// The daemon's database: what it keeps of the board's sensor (a Certabo board's
    /// calibration) goes into the capture's `# learnt:` header, so that the capture replays
    /// without a calibration setup in it.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The board's name in `--db` (default: the port, as `run --port` names it).
    #[arg(long, requires = "db")]
    pub board: Option<String>,
}

/// Records until Ctrl-C or the time limit.
pub fn record(args: RecordArgs) -> anyhow::Result<()> {
    let learnt = match &args.db {
        Some(db) => kept_learnt(&args, db)?,
        None => None,
    };
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut extra = vec![
        ("port".to_string(), args.port.display().to_string()),
        ("started_unix_ms".to_string(), now_ms().to_string()),
    ];
    if let Some(text) = learnt {
        extra.push((LEARNT_HEADER.to_string(), text));
    }
    let mut writer = CaptureWriter::new(BufWriter::new(file), args.kind.name(), &extra)?;
    let link = args.kind.link();
    let startup = args.kind.with_board(OutputReports(args.kind.startup()));
    let trim = args.kind.with_board(InputReport);
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let mut port = link::open(&args.port, link).await?;
        let start = Instant::now();
        let elapsed = |start: Instant| start.elapsed().as_millis() as u64;
        for report in &startup {
            port.send(report).await?;
            writer.write(elapsed(start), Direction::ToBoard, report)?;
        }
        let limit = args.seconds.map(Duration::from_secs);
        let mut buf = [0u8; 4096];
        loop {
            let remaining = match limit {
                Some(l) => match l.checked_sub(start.elapsed()) {
                    Some(r) => r,
                    None => break,
                },
                None => Duration::from_secs(3600 * 24 * 365),
            };
            tokio::select! {
                read = port.read(&mut buf) => {
                    let n = read?;
                    if n == 0 {
                        break;
                    }
                    let got = if port.reads_reports() { trim(&buf[..n]) } else { &buf[..n] };
                    writer.write(elapsed(start), Direction::FromBoard, got)?;
                }
                _ = tokio::time::sleep(remaining) => break,
                _ = tokio::signal::ctrl_c() => break,
            }
        }
        writer.flush()?;
        anyhow::Ok(())
    })?;
    eprintln!("capture written to {}", args.out.display());
    Ok(())
}

/// What the database `db` keeps of the board's sensor (its calibration), for a kind whose
/// sensor learns its board; said on stderr either way.
fn kept_learnt(args: &RecordArgs, db: &std::path::Path) -> anyhow::Result<Option<String>> {
    let board = match &args.board {
        Some(name) => name.clone(),
        None => args.port.display().to_string(),
    };
    if !args.kind.with_board(Learns) {
        eprintln!(
            "a {} board's sensor learns nothing of the board: --db adds nothing",
            args.kind.name()
        );
        return Ok(None);
    }
    let store = Store::open_read_only(db).with_context(|| format!("opening {}", db.display()))?;
    let text = store
        .learnt_of(&board, args.kind.name())
        .with_context(|| format!("reading {}", db.display()))?;
    match &text {
        Some(_) => eprintln!(
            "board {board}: its calibration kept in {} goes into the capture",
            db.display()
        ),
        None => eprintln!(
            "board {board}: {} keeps no calibration of it: the capture replays only from a calibration setup it shows",
            db.display()
        ),
    }
    Ok(text)
}

/// Whether a kind's sensor learns its board ([`Board::LEARNS`]).
struct Learns;

impl WithBoard for Learns {
    type Output = bool;
    fn run<B: Board>(self) -> bool {
        B::LEARNS
    }
}

/// The writes a kind's board sends `commands` as ([`Board::output_reports`]).
struct OutputReports(Vec<u8>);

impl WithBoard for OutputReports {
    type Output = Vec<Vec<u8>>;
    fn run<B: Board>(self) -> Vec<Vec<u8>> {
        B::output_reports(&self.0)
    }
}

/// How a kind's board cuts one read of a HID link ([`Board::input_report`]).
struct InputReport;

impl WithBoard for InputReport {
    type Output = fn(&[u8]) -> &[u8];
    fn run<B: Board>(self) -> fn(&[u8]) -> &[u8] {
        B::input_report
    }
}
