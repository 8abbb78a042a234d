//! What `run`, `demo` and `replay` print as events are recorded: one line per move, decision and
//! irregularity, and the PGN date of a stream time.

use super::*;

/// `YYYY.MM.DD` (PGN) of a Unix time in ms, UTC.
pub fn pgn_date(ms: Millis) -> String {
    crate::export::publish::utc_date_time(ms).0
}

/// How the daemon shows recorded events on standard output.
pub fn print_event(board: &str, event: &TrackerEvent) {
    match event {
        TrackerEvent::GameStarted { orientation, .. } => {
            println!("{board}: new game (board {})", orientation.as_str());
        }
        TrackerEvent::Move(m) => {
            let n = m.ply.div_ceil(2);
            let dots = if m.ply % 2 == 1 { "." } else { "..." };
            println!("{board}: {n}{dots} {}", m.notation);
        }
        TrackerEvent::Revision { old, new, .. } => {
            println!(
                "{board}: ply {} revised: {} -> {}",
                new.ply, old.notation, new.notation
            );
        }
        TrackerEvent::Takeback {
            from_ply, to_ply, ..
        } => {
            println!("{board}: takeback from ply {from_ply} to ply {to_ply}");
        }
        TrackerEvent::ResultGesture { proposed, .. } => {
            println!(
                "{board}: result shown with the kings: {}",
                proposed.as_pgn()
            );
        }
        TrackerEvent::GameEnded {
            outcome,
            termination,
            ..
        } => println!("{board}: {} ({termination})", outcome.as_pgn()),
        TrackerEvent::Irregularity {
            kind,
            ply,
            detail,
            article,
            ..
        } => {
            let article = article
                .as_deref()
                .map_or(String::new(), |a| format!(", {a}"));
            println!(
                "{board}: irregularity before ply {ply}: {}{article}: {detail}",
                kind.as_str()
            );
        }
        TrackerEvent::Recovered {
            from_ply,
            to_ply,
            source,
            ..
        } => {
            let from = match source {
                crate::tracker::RecoverySource::Memory => "the board's memory",
                crate::tracker::RecoverySource::Search => "the only moves that fit the board",
            };
            println!(
                "{board}: plies {from_ply} to {to_ply}, missed while the board was not heard, recovered from {from}"
            );
        }
        TrackerEvent::Resolved { id, how, .. } => {
            println!("{board}: irregularity {id} resolved: {how}");
        }
        TrackerEvent::FlagFall {
            side,
            proposed,
            note,
            ..
        } => {
            let note = note.as_deref().map_or(String::new(), |n| format!("; {n}"));
            println!(
                "{board}: {} flag fell: {} for the arbiter to confirm{note}",
                side.as_str(),
                proposed.as_pgn()
            );
        }
        TrackerEvent::Claimable { claim, ply, .. } => {
            println!("{board}: before ply {ply} a draw may be claimed: {claim}");
        }
        TrackerEvent::Reoriented { orientation, .. } => {
            println!("{board}: the board lies {}", orientation.as_str());
        }
    }
}
