//! `boardscribe record`: a real board's stream, both directions, to a capture file.
//!
//! Flow: open the port like `run` does (with the line of its `--kind`), send its start-up commands, and write every chunk that
//! goes either way, timestamped from the start, until Ctrl-C or `--seconds` have passed.

use std::{
    io::BufWriter,
    path::PathBuf,
    time::{Duration, Instant},
};

use anyhow::Context;

use super::{
    Direction,
    serial::{self, now_ms},
};
use crate::{
    capture::CaptureWriter,
    kind::{BoardKind, Link},
};

/// `boardscribe record`.
#[derive(clap::Args, Debug, Clone)]
pub struct RecordArgs {
    /// The board's serial port.
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
    let Link::Serial(line) = args.kind.link();
    let startup = args.kind.startup();
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let mut port = serial::open(&args.port, line)?;
        let start = Instant::now();
        let elapsed = |start: Instant| start.elapsed().as_millis() as u64;
        serial::send(&mut port, &args.port, &startup).await?;
        writer.write(elapsed(start), Direction::ToBoard, &startup)?;
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
                read = serial::read(&mut port, &args.port, &mut buf) => {
                    let n = read?;
                    if n == 0 {
                        break;
                    }
                    writer.write(elapsed(start), Direction::FromBoard, &buf[..n])?;
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
