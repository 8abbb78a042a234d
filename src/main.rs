//! The `boardscribe` binary: parses the command line, sets up logging, runs the command.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use boardscribe::cli::logging;
use clap::Parser;

fn main() -> ExitCode {
    let cli = boardscribe::cli::Cli::parse();
    // Logs go to stderr; under systemd the journal adds its own timestamps and reads priorities.
    logging::init();
    match boardscribe::cli::execute(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let message = format!("boardscribe: {err:#}");
            if logging::under_journal() {
                eprint!("{}", logging::with_priority(3, &message));
            } else {
                eprintln!("{message}");
            }
            ExitCode::FAILURE
        }
    }
}
