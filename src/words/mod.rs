//! The record in the arbiter's words, for the command line and the console alike: move numbers
//! as said at the board (`34b` is ply 68: [`moveno`]), and a game's history as lines of local
//! time, board, move, what happened and by whom ([`history`]), the event's decisions in one
//! log ([`decision_log`]), and the arbiter's ruling in a
//! language's words ([`ruling_text`]). Pure: the time zone is an argument.

use crate::{
    game::Kind,
    lang::{Lang, record::termination_text},
    phrase::Phrase,
    store::Ruling,
};

pub mod decision_log;
pub mod history;
pub mod moveno;

/// The arbiter's ruling in words, with what it names.
pub fn ruling_text(ruling: &Ruling, kind: Kind, lang: Lang) -> String {
    match ruling {
        Ruling::PenaltyApplied { description } => {
            lang.fill("ruling.penalty_described", &[("description", description)])
        }
        Ruling::PositionReinstated { ply } => {
            let n = ply.div_ceil(2).to_string();
            lang.fill(
                "ruling.position_reinstated_before",
                &[("move", &n), ("side", lang.side_of(*ply, kind))],
            )
        }
        Ruling::MoveStands => lang.text("ruling.move_stands").to_owned(),
        Ruling::NoAction => lang.text("ruling.no_action").to_owned(),
    }
}

/// A draw to claim in words: what the record says (its phrase), else the termination its code
/// names; none when the record says neither.
pub fn claim_text(
    phrase: &Option<Phrase>,
    claim: Option<&str>,
    kind: Kind,
    lang: Lang,
) -> Option<String> {
    match (phrase, claim) {
        (Some(p), _) => Some(p.words(&lang.said(kind))),
        (None, Some(c)) => Some(termination_text(c, lang)),
        (None, None) => None,
    }
}
