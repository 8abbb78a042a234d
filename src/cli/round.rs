//! `boardscribe round start N` and `round list`: the arbiter moves the event to its next round in
//! the store (a running daemon reads it there: games that begin from now on are that round's),
//! and lists the rounds.

use super::*;
use crate::store::RoundRecord;

pub(super) fn round_command(command: RoundCommand) -> anyhow::Result<()> {
    match command {
        RoundCommand::Start { round, db, by } => {
            let mut store =
                Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
            let by = commands::author(by);
            let previous = store.start_round(round, &by, commands::now_ms()?)?;
            match previous {
                Some(p) if p == round => println!("round {round} is already the current round"),
                Some(p) => println!(
                    "round {round} started by {by} (was round {p}); games going on stay in their round"
                ),
                None => println!("round {round} started by {by}"),
            }
            Ok(())
        }
        RoundCommand::List { db, json } => {
            let store = open_existing(&db)?;
            let event = store.event()?;
            let rounds = store.rounds()?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(
                        &serde_json::json!({ "event": event, "rounds": rounds })
                    )?
                );
                return Ok(());
            }
            print!("{}", rounds_text(event.as_ref(), &rounds));
            Ok(())
        }
    }
}

/// The event's line and a table of its rounds, the current one marked `*`.
fn rounds_text(event: Option<&crate::store::StoredEvent>, rounds: &[RoundRecord]) -> String {
    let mut out = String::new();
    match event {
        Some(e) => {
            let mut line = format!("{} ({})", e.round.event, e.round.site);
            for v in [
                &e.settings.time_control,
                &e.settings.laws,
                &e.settings.variant,
            ]
            .into_iter()
            .flatten()
            {
                line.push_str(", ");
                line.push_str(v);
            }
            out.push_str(&line);
            out.push('\n');
        }
        None => out.push_str("no event yet: `boardscribe round start 1 --db PATH` starts one\n"),
    }
    if rounds.is_empty() {
        return out;
    }
    out.push_str("  round  started (UTC)     by            games  paired\n");
    for r in rounds {
        let started = if r.started_by.is_empty() {
            "not started".to_owned()
        } else {
            utc_minutes(r.started_at_ms)
        };
        out.push_str(&format!(
            "{} {:>5}  {:<17} {:<12} {:>6}  {:>6}\n",
            if r.current { "*" } else { " " },
            r.number,
            started,
            r.started_by,
            r.games,
            r.pairings,
        ));
    }
    out
}

/// `YYYY-MM-DD HH:MM` (UTC) of wall-clock ms since the epoch.
fn utc_minutes(ms: u64) -> String {
    let minutes = ms / 60_000;
    let (days, minute_of_day) = ((minutes / 1440) as i64, minutes % 1440);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        minute_of_day / 60,
        minute_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_minutes_reads_the_calendar() {
        assert_eq!(utc_minutes(0), "1970-01-01 00:00");
        // 2026-12-02 15:04:59 UTC.
        assert_eq!(utc_minutes(1_796_223_899_000), "2026-12-02 15:04");
        // 2024-02-29 23:59 UTC (a leap day).
        assert_eq!(utc_minutes(1_709_251_140_000), "2024-02-29 23:59");
    }
}
