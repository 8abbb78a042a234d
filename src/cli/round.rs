//! `boardscribe round start N`, `round undo N` and `round list`: the arbiter moves the event to
//! its next round in the store (a running daemon reads it there: games that begin from now on
//! are that round's), undoes a round started by mistake, and lists the rounds.

use super::*;
use crate::store::RoundRecord;
use crate::words::history;

pub(super) fn round_command(command: RoundCommand) -> anyhow::Result<()> {
    match command {
        RoundCommand::Start { round, db, author } => {
            let mut store =
                Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
            let by = commands::author(author);
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
        RoundCommand::Undo { round, db, author } => {
            let mut store =
                Store::open(&db).with_context(|| format!("opening {}", db.display()))?;
            let by = commands::author(author);
            let current = store.undo_round_start(round, &by, commands::now_ms()?)?;
            println!(
                "the start of round {round} is undone by {by}: round {current} is current again"
            );
            Ok(())
        }
        RoundCommand::List { db, json } => {
            let store = commands::open_to_read(&db)?;
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
    let zone = history::local_zone();
    out.push_str("  round  started              by            games  paired\n");
    for r in rounds {
        let started = if r.started_by.is_empty() {
            "not started".to_owned()
        } else {
            history::when(r.started_at_ms, &zone)
        };
        out.push_str(&format!(
            "{} {:>5}  {:<20} {:<12} {:>6}  {:>6}\n",
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
