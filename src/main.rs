//! The `boardscribe` binary: parses the command line, sets up logging, runs the command.
#![forbid(unsafe_code)]

use std::{io::IsTerminal, process::ExitCode};

use clap::Parser;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = boardscribe::cli::Cli::parse();
    // Logs go to stderr; under systemd the journal adds its own timestamps.
    let under_journal = std::env::var_os("JOURNAL_STREAM").is_some();
    let filter = EnvFilter::try_from_env("BOARDSCRIBE_LOG")
        .unwrap_or_else(|_| EnvFilter::new("boardscribe=info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if under_journal {
        builder.without_time().with_ansi(false).init();
    } else {
        builder.with_ansi(std::io::stderr().is_terminal()).init();
    }
    match boardscribe::cli::execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("boardscribe: {err:#}");
            ExitCode::FAILURE
        }
    }
}
