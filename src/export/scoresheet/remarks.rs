//! The remarks under a scoresheet: irregularities with their articles, the arbiter's decisions
//! and notes, each placed before the ply it concerns, in the arbiter's words.

use super::*;

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

pub(super) fn str_field<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
    v.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
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
    let mut irregular = json::irregularities(&g.events).into_iter();
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
        if let Some(kind) = IrregularityKind::from_str_opt(&e.kind) {
            let Some(v) = irregular.next() else { break };
            if kind.is_audit_trail() {
                continue;
            }
            let mut text = before_ply(e.ply);
            for part in [str_field(&v, "detail"), str_field(&v, "ruling")]
                .into_iter()
                .flatten()
            {
                let _ = write!(text, "; {part}");
            }
            if v["resolved"] == Value::Bool(true) {
                text.push_str("; resolved");
            }
            if let Some(r) = v.get("ruling_by_arbiter") {
                let ruling = r.get("ruling").map(ruling_text).unwrap_or_default();
                let author = str_field(r, "author").unwrap_or("arbiter");
                let _ = write!(text, "; arbiter ({author}): {ruling}");
            }
            let article = str_field(&v, "article").map(str::to_owned);
            push(
                RemarkKind::Irregularity,
                e.ply,
                article,
                kind_title(&e.kind),
                text,
            );
        } else if e.kind == "flag_fall" {
            let d = &e.detail;
            let side = str_field(d, "side").unwrap_or("a player");
            let mut text = format!("{side}'s flag fell {}", before_ply(e.ply));
            if let Some(p) = str_field(d, "proposed") {
                let _ = write!(text, "; result {p}");
            }
            if let Some(n) = str_field(d, "note") {
                let _ = write!(text, "; {n}");
            }
            let article = str_field(d, "article").map(str::to_owned);
            push(
                RemarkKind::FlagFall,
                e.ply,
                article,
                "Flag fall".to_owned(),
                text,
            );
        } else if e.kind == "claimable" {
            let d = &e.detail;
            let claim = str_field(d, "claim").unwrap_or("a draw claim");
            let text = format!("{claim} ({})", before_ply(e.ply));
            let article = str_field(d, "article").map(str::to_owned);
            push(
                RemarkKind::Claim,
                e.ply,
                article,
                "Claim possible".to_owned(),
                text,
            );
        }
    }
    for e in g.events.iter().filter(|e| e.kind == DECISION_KIND) {
        let d = &e.detail;
        let author = str_field(d, "author").unwrap_or("arbiter");
        let note = str_field(d, "note");
        let action: Option<Action> = serde_json::from_value(d.clone()).ok();
        let (title, mut text, ply) = match action {
            Some(Action::SetResult {
                result,
                reason,
                previous_result,
                ..
            }) => (
                "Result",
                format!(
                    "{result} ({}), was {previous_result}",
                    reason.as_str().replace('_', " ")
                ),
                None,
            ),
            Some(Action::Rule {
                irregularity,
                ruling,
            }) => (
                "Ruling",
                format!(
                    "on irregularity {irregularity}: {}",
                    ruling_text(&serde_json::to_value(&ruling).unwrap_or(Value::Null))
                ),
                None,
            ),
            Some(Action::CorrectMove {
                ply,
                old_notation,
                new_notation,
                ..
            }) => (
                "Correction",
                format!("move {ply} (ply) recorded as {old_notation}, corrected to {new_notation}"),
                Some(ply),
            ),
            Some(Action::Note { ply }) => ("Note", String::new(), ply),
            Some(Action::Resume {
                after_ply,
                moves,
                retracted,
            }) => (
                "Resumed",
                resume_text(after_ply, &moves, retracted),
                Some(after_ply),
            ),
            None => ("Decision", d.to_string(), None),
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
            ply.or(e.ply.filter(|_| title == "Note")),
            None,
            format!("Arbiter: {}", title.to_lowercase()),
            text,
        );
    }
    out
}

/// A stored ruling (a string, or a [`crate::store::Ruling`] as JSON) in words.
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

pub(super) fn ruling_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.replace('_', " "),
        Value::Object(o) => {
            let name = o
                .get("ruling")
                .or_else(|| o.get("kind"))
                .and_then(Value::as_str)
                .map(|s| s.replace('_', " "));
            let extra: Vec<String> = o
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "ruling" | "kind"))
                .map(|(k, v)| match v {
                    Value::String(s) => format!("{}: {s}", k.replace('_', " ")),
                    v => format!("{}: {v}", k.replace('_', " ")),
                })
                .collect();
            match name {
                Some(n) if extra.is_empty() => n,
                Some(n) => format!("{n} ({})", extra.join(", ")),
                None => extra.join(", "),
            }
        }
        Value::Null => String::new(),
        v => v.to_string(),
    }
}
