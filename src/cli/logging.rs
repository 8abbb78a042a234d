//! Logging to stderr through `tracing`, as the binary sets it up.
//!
//! Flow: [`init`] reads `BOARDSCRIBE_LOG` (default `boardscribe=info`) and whether systemd's
//! journal holds stderr (`JOURNAL_STREAM`, set by systemd for a unit's stdout and stderr). On a
//! terminal or a file, lines are tracing's usual ones (time, level, target, fields). Under the
//! journal the journal adds the time, so lines carry none and no colours, and each line starts
//! with its sd-daemon priority (`<3>` error, `<4>` warning, `<6>` info, `<7>` debug and trace):
//! journald reads it (`SyslogLevelPrefix=`, on by default) so `journalctl -p warning` finds the
//! warnings. A message of several lines gets the prefix on every line, since the journal takes
//! each line as a record of its own.

use std::{fmt, io::IsTerminal};

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::{
    EnvFilter,
    fmt::{
        FmtContext, FormatEvent, FormatFields,
        format::{self, Writer},
    },
    registry::LookupSpan,
};

/// The environment variable systemd sets when stdout or stderr is connected to the journal.
pub const JOURNAL_STREAM: &str = "JOURNAL_STREAM";

/// Whether stderr goes to the journal (systemd set `JOURNAL_STREAM`).
pub fn under_journal() -> bool {
    std::env::var_os(JOURNAL_STREAM).is_some()
}

/// The sd-daemon priority (syslog level) of a tracing level.
pub fn priority(level: Level) -> u8 {
    match level {
        Level::ERROR => 3,
        Level::WARN => 4,
        Level::INFO => 6,
        Level::DEBUG | Level::TRACE => 7,
    }
}

/// `text` with `<N>` before each of its lines, as the journal reads a priority.
pub fn with_priority(priority: u8, text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    for line in text.lines() {
        out.push_str(&format!("<{priority}>{line}\n"));
    }
    out
}

/// Sets up the global subscriber for the binary.
pub fn init() {
    let filter = EnvFilter::try_from_env("BOARDSCRIBE_LOG")
        .unwrap_or_else(|_| EnvFilter::new("boardscribe=info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if under_journal() {
        let plain = format::format().without_time().with_ansi(false);
        builder
            .with_ansi(false)
            .event_format(Prioritised(plain))
            .init();
    } else {
        builder.with_ansi(std::io::stderr().is_terminal()).init();
    }
}

/// An event format that writes each line of `F`'s output behind the event's priority.
struct Prioritised<F>(F);

impl<S, N, F> FormatEvent<S, N> for Prioritised<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        // The level is right-aligned (" INFO"): the journal's message starts at the word.
        let prefixed = with_priority(priority(*event.metadata().level()), line.trim_start());
        writer.write_str(&prefixed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_a_message_carries_its_priority() {
        assert_eq!(with_priority(4, "one\ntwo\n"), "<4>one\n<4>two\n");
        assert_eq!(with_priority(3, "no newline"), "<3>no newline\n");
        assert_eq!(
            [
                Level::ERROR,
                Level::WARN,
                Level::INFO,
                Level::DEBUG,
                Level::TRACE
            ]
            .map(priority),
            [3, 4, 6, 7, 7]
        );
    }
}
