//! `boardscribe record`: a real board's stream, both directions, to a capture file.
//!
//! Flow: open the port like `run` does (over the link of its `--kind`: a serial line, or a hidraw
//! node, each read cut to its report), send its start-up commands (one output report at a time
//! on a HID link), and write every chunk that goes either way, timestamped from the start, until
//! Ctrl-C or `--seconds` have passed.

use std::{
    io::BufWriter,
    path::PathBuf,
    time::{Duration, Instant},
};

use anyhow::Context;

use super::{Direction, link, serial::now_ms};
use crate::{boards::WithBoard, capture::CaptureWriter, kind::BoardKind, pipeline::Board};

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
}

/// Records until Ctrl-C or the time limit.
pub fn record(args: RecordArgs) -> anyhow::Result<()> {
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let extra = vec![
        ("port".to_string(), args.port.display().to_string()),
        ("started_unix_ms".to_string(), now_ms().to_string()),
    ];
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
