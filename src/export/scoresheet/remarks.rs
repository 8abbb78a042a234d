//! The remarks under a scoresheet: irregularities with their articles, the arbiter's decisions
//! and notes, each placed before the ply it concerns, in the arbiter's words.

use super::*;
use crate::{
    lang::Lang,
    store::{Entry, Recorded, Ruling},
    tracker::Side,
};

/// An irregularity kind in words.
pub(super) fn kind_title(kind: &str, lang: Lang) -> String {
    let key = match kind {
        "displaced" => "remark.displaced",
        "illegal_move" => "remark.illegal_move",
        "clock_without_move" => "remark.clock_without_move",
        "wrong_start_position" => "remark.wrong_start_position",
        "board_rotated" => "remark.board_rotated",
        "clock_mis_set" => "remark.clock_mis_set",
        other => {
            let mut s = other.replace('_', " ");
            if let Some(first) = s.get(..1) {
                let up = first.to_uppercase();
                s.replace_range(..1, &up);
            }
            return s;
        }
    };
    lang.text(key).to_owned()
}

/// `s` if it says something.
fn said(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// The side that makes `ply` in words (`kind`'s own words for togyz korgool).
pub(super) fn side_of(ply: u32, kind: Kind, lang: Lang) -> &'static str {
    let [white, black] = side_words(kind, lang);
    if ply % 2 == 1 { white } else { black }
}

/// White's and Black's names in `lang` (togyz korgool's own words for its sides).
pub(super) fn side_words(kind: Kind, lang: Lang) -> [&'static str; 2] {
    match kind {
        Kind::Chess => [lang.text("sheet.white"), lang.text("sheet.black")],
        Kind::Togyz => [lang.text("togyz.white"), lang.text("togyz.black")],
    }
}

/// "move 6 (Black)": the move number and side of `ply`.
fn move_args(ply: u32, kind: Kind, lang: Lang) -> (String, &'static str) {
    (ply.div_ceil(2).to_string(), side_of(ply, kind, lang))
}

/// "before move 6 (Black)" for the ply an event happened before.
pub(super) fn before_ply(ply: Option<u32>, kind: Kind, lang: Lang) -> String {
    match ply {
        Some(p) if p > 0 => {
            let (n, side) = move_args(p, kind, lang);
            lang.fill("remark.before_move", &[("move", &n), ("side", side)])
        }
        _ => lang.text("remark.before_game").to_owned(),
    }
}

/// The remarks of `g`, in the order recorded: what the board and clock showed (irregularities,
/// flag falls, claimable draws), then the arbiter's decisions. The tracker's own corrections
/// (takebacks, revised moves) are left to the PGN and JSON history. The moves a decision names
/// are written with the sheet's `pieces`, as its cells are.
pub(super) fn remarks(g: &GameRecord, lang: Lang, pieces: &PieceSymbols) -> Vec<Remark> {
    let kind = g.kind;
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
            let mut text = before_ply(e.ply, kind, lang);
            for part in [said(&shown.detail), said(&shown.ruling)]
                .into_iter()
                .flatten()
            {
                let _ = write!(text, "; {part}");
            }
            if resolution.is_some() {
                let _ = write!(text, "; {}", lang.text("remark.resolved"));
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
                let _ = write!(text, "; {ruled}");
            }
            push(
                RemarkKind::Irregularity,
                e.ply,
                said(&shown.article).map(str::to_owned),
                kind_title(&e.kind, lang),
                text,
            );
        } else if let Recorded::FlagFall(f) = &e.what {
            let side = match f.side {
                Some(Side::White) => side_of(1, kind, lang),
                Some(Side::Black) => side_of(2, kind, lang),
                None => lang.text("remark.a_player"),
            };
            let mut text = lang.fill(
                "remark.flag_fell",
                &[("side", side), ("when", &before_ply(e.ply, kind, lang))],
            );
            if let Some(p) = said(&f.proposed) {
                let _ = write!(
                    text,
                    "; {}",
                    lang.fill("remark.result_proposed", &[("result", p)])
                );
            }
            if let Some(n) = said(&f.note) {
                let _ = write!(text, "; {n}");
            }
            push(
                RemarkKind::FlagFall,
                e.ply,
                said(&f.article).map(str::to_owned),
                lang.text("remark.flag_fall").to_owned(),
                text,
            );
        } else if let Recorded::Claimable { claim, article } = &e.what {
            let claim = said(claim).unwrap_or(lang.text("remark.claim_default"));
            let text = format!("{claim} ({})", before_ply(e.ply, kind, lang));
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
                text.push_str("; ");
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

/// The arbiter's ruling in words, with what it names.
pub(super) fn ruling_text(ruling: &Ruling, kind: Kind, lang: Lang) -> String {
    match ruling {
        Ruling::PenaltyApplied { description } => {
            lang.fill("ruling.penalty_described", &[("description", description)])
        }
        Ruling::PositionReinstated { ply } => {
            let (n, side) = move_args(*ply, kind, lang);
            lang.fill(
                "ruling.position_reinstated_before",
                &[("move", &n), ("side", side)],
            )
        }
        Ruling::MoveStands => lang.text("ruling.move_stands").to_owned(),
        Ruling::NoAction => lang.text("ruling.no_action").to_owned(),
    }
}

/// A result's reason in words (a reason of the arbiter's own as written).
fn reason_text(reason: &str, lang: Lang) -> String {
    match reason {
        "resignation" => lang.text("reason.resignation").to_owned(),
        "agreement" => lang.text("reason.agreement").to_owned(),
        "forfeit" => lang.text("reason.forfeit").to_owned(),
        "decision" => lang.text("reason.decision").to_owned(),
        other => other.replace('_', " "),
    }
}

/// A game's stored termination in words (one the tables do not name as written).
pub(super) fn termination_text(termination: &str, lang: Lang) -> String {
    let key = match termination.replace([' ', ':'], "_").as_str() {
        "checkmate" => "termination.checkmate",
        "stalemate" => "termination.stalemate",
        "dead_position" => "termination.dead_position",
        "fivefold_repetition" => "termination.fivefold_repetition",
        "seventy_five_moves" => "termination.seventy_five_moves",
        "time_forfeit" => "termination.time_forfeit",
        "time_forfeit_cannot_mate" => "termination.time_forfeit_cannot_mate",
        "threefold_repetition" => "termination.threefold_repetition",
        "fifty_moves" => "termination.fifty_moves",
        "resignation" => "termination.resignation",
        "agreement" => "termination.agreement",
        "forfeit" => "termination.forfeit",
        "decision" => "termination.decision",
        "store_82" => "termination.store_82",
        "81_81" => "termination.draw_81",
        "atsyrau" => "termination.atsyrau",
        "flag_fall" => "termination.flag_fall",
        "both_flags" => "termination.both_flags",
        _ => return termination.replace('_', " "),
    };
    lang.text(key).to_owned()
}
