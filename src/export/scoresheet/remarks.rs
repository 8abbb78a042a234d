//! The remarks under a scoresheet: irregularities with their articles, the arbiter's decisions
//! and notes, each placed before the ply it concerns, in the arbiter's words.

use super::*;
use crate::{
    lang::{
        Lang,
        record::{kind_title, reason_text},
    },
    store::{Entry, Recorded, worded},
    words::{claim_text, ruling_text},
};

/// `s` if it says something.
fn said(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// "move 6 (Black)": the move number and side of `ply`.
fn move_args(ply: u32, kind: Kind, lang: Lang) -> (String, &'static str) {
    (ply.div_ceil(2).to_string(), lang.side_of(ply, kind))
}

/// The remarks of `g`, in the order recorded: what the board and clock showed (irregularities,
/// flag falls, claimable draws), then the arbiter's decisions. The tracker's own corrections
/// (takebacks, revised moves) are left to the PGN and JSON history. The moves a decision names
/// are written with the sheet's `pieces`, as its cells are.
pub(super) fn remarks(g: &GameRecord, lang: Lang, pieces: &PieceSymbols) -> Vec<Remark> {
    let kind = g.kind;
    // Between the parts of a remark (Persian's own semicolon).
    let then = lang.text("remark.then");
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
            let mut text = lang.before_ply(e.ply, kind);
            let words = lang.said(kind);
            for part in [shown.detail_in(&words), shown.ruling_in(&words)]
                .into_iter()
                .flatten()
                .filter(|p| !p.is_empty())
            {
                let _ = write!(text, "{then}{part}");
            }
            if resolution.is_some() {
                let _ = write!(text, "{then}{}", lang.text("remark.resolved"));
            }
            if let Some(r) = ruled {
                let author = Some(r.author.as_str()).filter(|a| !a.is_empty());
                let ruling = ruling_text(&r.ruling, kind, lang);
                let ruled = lang.fill(
                    "remark.arbiter_ruled",
                    &[
                        ("author", author.unwrap_or(lang.text("sheet.arbiter"))),
                        ("ruling", &ruling),
                    ],
                );
                let _ = write!(text, "{then}{ruled}");
            }
            push(
                RemarkKind::Irregularity,
                e.ply,
                said(&shown.article).map(str::to_owned),
                kind_title(&e.kind, kind, lang),
                text,
            );
        } else if let Recorded::FlagFall(f) = &e.what {
            let side = match f.side {
                Some(side) => lang.side(side, kind),
                None => lang.text("remark.a_player"),
            };
            let mut text = lang.fill(
                "remark.flag_fell",
                &[("side", side), ("when", &lang.before_ply(e.ply, kind))],
            );
            if let Some(p) = said(&f.proposed) {
                let _ = write!(
                    text,
                    "{then}{}",
                    lang.fill("remark.result_proposed", &[("result", p)])
                );
            }
            let note = worded(&f.note_phrase, &f.note, &lang.said(kind));
            if let Some(n) = note.filter(|n| !n.is_empty()) {
                let _ = write!(text, "{then}{n}");
            }
            push(
                RemarkKind::FlagFall,
                e.ply,
                said(&f.article).map(str::to_owned),
                lang.text("remark.flag_fall").to_owned(),
                text,
            );
        } else if let Recorded::Claimable {
            claim,
            claim_phrase,
            article,
        } = &e.what
        {
            let claim = claim_text(claim_phrase, said(claim), kind, lang)
                .unwrap_or_else(|| lang.text("remark.claim_default").to_owned());
            let text = format!("{claim} ({})", lang.before_ply(e.ply, kind));
            push(
                RemarkKind::Claim,
                e.ply,
                said(article).map(str::to_owned),
                lang.text("remark.claim").to_owned(),
                text,
            );
        }
    }
    for (d, event_ply) in g.decisions() {
        let author = Some(d.author.as_str()).filter(|a| !a.is_empty());
        let author = author.unwrap_or(lang.text("sheet.arbiter"));
        let note = said(&d.note);
        let is_note = matches!(d.action, Action::Note { .. });
        let (title, mut text, ply) = match &d.action {
            // Only the decisions that stand are remarked (the history keeps the undone ones).
            Action::Undo { .. } => continue,
            Action::SetResult {
                result,
                reason,
                previous_result,
                ..
            } => (
                lang.text("remark.result"),
                lang.fill(
                    "remark.result_text",
                    &[
                        ("result", result),
                        ("reason", &reason_text(reason.as_str(), lang)),
                        ("previous", previous_result),
                    ],
                ),
                None,
            ),
            Action::Rule {
                irregularity,
                ruling,
            } => (
                lang.text("remark.ruling"),
                lang.fill(
                    "remark.ruling_text",
                    &[
                        ("irregularity", &irregularity.to_string()),
                        ("ruling", &ruling_text(ruling, kind, lang)),
                    ],
                ),
                None,
            ),
            Action::CorrectMove {
                ply,
                old_notation,
                new_notation,
                ..
            } => {
                let (n, side) = move_args(*ply, kind, lang);
                (
                    lang.text("remark.correction"),
                    lang.fill(
                        "remark.correction_text",
                        &[
                            ("move", &n),
                            ("side", side),
                            ("old", &pieces.write(old_notation)),
                            ("new", &pieces.write(new_notation)),
                        ],
                    ),
                    Some(*ply),
                )
            }
            Action::Note { ply } => (lang.text("remark.note"), String::new(), *ply),
            Action::Resume {
                after_ply,
                moves,
                retracted,
            } => (
                lang.text("remark.resumed"),
                resume_text(
                    *after_ply,
                    &moves.iter().map(|m| pieces.write(m)).collect::<Vec<_>>(),
                    *retracted,
                    kind,
                    lang,
                ),
                Some(*after_ply),
            ),
        };
        if let Some(n) = note {
            if !text.is_empty() {
                text.push_str(then);
            }
            text.push_str(n);
        }
        let _ = write!(text, " — {author}");
        push(
            RemarkKind::Decision,
            ply.or(event_ply.filter(|_| is_note)),
            None,
            lang.fill("remark.arbiter", &[("what", title)]),
            text,
        );
    }
    out
}

/// What a resume decision did, in words.
pub(super) fn resume_text(
    after_ply: u32,
    moves: &[String],
    retracted: u32,
    kind: Kind,
    lang: Lang,
) -> String {
    let mut text = if after_ply == 0 {
        lang.text("remark.resume_start").to_owned()
    } else {
        let (n, side) = move_args(after_ply, kind, lang);
        lang.fill("remark.resume_after", &[("move", &n), ("side", side)])
    };
    if !moves.is_empty() {
        let followed = lang.fill("remark.resume_followed", &[("moves", &moves.join(" "))]);
        let _ = write!(text, ", {followed}");
    }
    if retracted > 0 {
        let withdrawn = lang.fill(
            "remark.resume_withdrawn",
            &[("count", &retracted.to_string())],
        );
        let _ = write!(text, " ({withdrawn})");
    }
    text
}
