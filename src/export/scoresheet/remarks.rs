//! The remarks under a scoresheet: irregularities with their articles, the arbiter's decisions
//! and notes, each placed before the ply it concerns, in the arbiter's words.

use super::*;
use crate::{
    store::{Entry, Recorded, Ruling},
    tracker::Side,
};

/// An irregularity kind in words.
pub(super) fn kind_title(kind: &str) -> String {
    match kind {
        "displaced" => "Displaced pieces".to_owned(),
        "illegal_move" => "Illegal move".to_owned(),
        "clock_without_move" => "Clock pressed without a move".to_owned(),
        "wrong_start_position" => "Wrong start position".to_owned(),
        "board_rotated" => "Board turned".to_owned(),
        "clock_mis_set" => "Clock set against the time control".to_owned(),
        other => {
            let mut s = other.replace('_', " ");
            if let Some(first) = s.get(..1) {
                let up = first.to_uppercase();
                s.replace_range(..1, &up);
            }
            s
        }
    }
}

/// `s` if it says something.
fn said(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// "before move 6 (Black)" for the ply an event happened before.
pub(super) fn before_ply(ply: Option<u32>) -> String {
    match ply {
        Some(p) if p > 0 => {
            let side = if p % 2 == 1 { "White" } else { "Black" };
            format!("before move {} ({side})", p.div_ceil(2))
        }
        _ => "before the game".to_owned(),
    }
}

/// The remarks of `g`, in the order recorded: what the board and clock showed (irregularities,
/// flag falls, claimable draws), then the arbiter's decisions. The tracker's own corrections
/// (takebacks, revised moves) are left to the PGN and JSON history.
pub(super) fn remarks(g: &GameRecord) -> Vec<Remark> {
    let mut out: Vec<Remark> = Vec::new();
    let mut push = |kind, ply, article: Option<String>, title: String, text: String| {
        let number = out.len() + 1;
        out.push(Remark {
            number,
            kind,
            ply,
            article,
            title,
            text,
        });
    };
    for e in &g.events {
        if let Some(i) = g.irregularity(e) {
            let Entry::Shown {
                shown,
                resolution,
                ruled,
            } = &i.entry
            else {
                continue;
            };
            if i.kind.is_audit_trail() {
                continue;
            }
            let mut text = before_ply(e.ply);
            for part in [said(&shown.detail), said(&shown.ruling)]
                .into_iter()
                .flatten()
            {
                let _ = write!(text, "; {part}");
            }
            if resolution.is_some() {
                text.push_str("; resolved");
            }
            if let Some(r) = ruled {
                let author = Some(r.author.as_str()).filter(|a| !a.is_empty());
                let _ = write!(
                    text,
                    "; arbiter ({}): {}",
                    author.unwrap_or("arbiter"),
                    ruling_text(&r.ruling)
                );
            }
            push(
                RemarkKind::Irregularity,
                e.ply,
                said(&shown.article).map(str::to_owned),
                kind_title(&e.kind),
                text,
            );
        } else if let Recorded::FlagFall(f) = &e.what {
            let side = f.side.map_or("a player", Side::as_str);
            let mut text = format!("{side}'s flag fell {}", before_ply(e.ply));
            if let Some(p) = said(&f.proposed) {
                let _ = write!(text, "; result {p}");
            }
            if let Some(n) = said(&f.note) {
                let _ = write!(text, "; {n}");
            }
            push(
                RemarkKind::FlagFall,
                e.ply,
                said(&f.article).map(str::to_owned),
                "Flag fall".to_owned(),
                text,
            );
        } else if let Recorded::Claimable { claim, article } = &e.what {
            let claim = said(claim).unwrap_or("a draw claim");
            let text = format!("{claim} ({})", before_ply(e.ply));
            push(
                RemarkKind::Claim,
                e.ply,
                said(article).map(str::to_owned),
                "Claim possible".to_owned(),
                text,
            );
        }
    }
    for (d, event_ply) in g.decisions() {
        let author = Some(d.author.as_str()).filter(|a| !a.is_empty());
        let author = author.unwrap_or("arbiter");
        let note = said(&d.note);
        let (title, mut text, ply) = match &d.action {
            Action::SetResult {
                result,
                reason,
                previous_result,
                ..
            } => (
                "Result",
                format!(
                    "{result} ({}), was {previous_result}",
                    reason.as_str().replace('_', " ")
                ),
                None,
            ),
            Action::Rule {
                irregularity,
                ruling,
            } => (
                "Ruling",
                format!("on irregularity {irregularity}: {}", ruling_text(ruling)),
                None,
            ),
            Action::CorrectMove {
                ply,
                old_notation,
                new_notation,
                ..
            } => (
                "Correction",
                format!("move {ply} (ply) recorded as {old_notation}, corrected to {new_notation}"),
                Some(*ply),
            ),
            Action::Note { ply } => ("Note", String::new(), *ply),
            Action::Resume {
                after_ply,
                moves,
                retracted,
            } => (
                "Resumed",
                resume_text(*after_ply, moves, *retracted),
                Some(*after_ply),
            ),
        };
        if let Some(n) = note {
            if !text.is_empty() {
                text.push_str("; ");
            }
            text.push_str(n);
        }
        let _ = write!(text, " — {author}");
        push(
            RemarkKind::Decision,
            ply.or(event_ply.filter(|_| title == "Note")),
            None,
            format!("Arbiter: {}", title.to_lowercase()),
            text,
        );
    }
    out
}

/// What a resume decision did, in words.
pub(super) fn resume_text(after_ply: u32, moves: &[String], retracted: u32) -> String {
    let mut text = format!("the game goes on after ply {after_ply}");
    if !moves.is_empty() {
        text.push_str(&format!(", followed by {}", moves.join(" ")));
    }
    if retracted > 0 {
        text.push_str(&format!(" ({retracted} recorded move(s) withdrawn)"));
    }
    text
}

/// The arbiter's ruling in words: its kind, and its fields in brackets.
pub(super) fn ruling_text(ruling: &Ruling) -> String {
    let name = ruling.as_str().replace('_', " ");
    match ruling {
        Ruling::PenaltyApplied { description } => format!("{name} (description: {description})"),
        Ruling::PositionReinstated { ply } => format!("{name} (ply: {ply})"),
        Ruling::MoveStands | Ruling::NoAction => name,
    }
}
