//! The record's stored names in a language's words: an irregularity's or an alert's kind, a
//! result's reason, a game's termination (the arbiter's ruling, a store type, is worded by
//! [`crate::words::ruling_text`], above the store). The sheets, the console and the
//! pages read the record's names (`illegal_move`, `resignation`, `store_82`) through these, so
//! each is put in words in one place. Pure.

use crate::{game::Kind, lang::Lang};

/// An irregularity's or an alert's stored kind in words, in a game of `game` (a kind the
/// tables do not name: the stored name, capitalised). Korgools displaced on a togyz board are
/// not pieces.
pub fn kind_title(kind: &str, game: Kind, lang: Lang) -> String {
    let key = match kind {
        "displaced" if game == Kind::Togyz => "remark.displaced_togyz",
        "displaced" => "remark.displaced",
        "illegal_move" => "remark.illegal_move",
        "clock_without_move" => "remark.clock_without_move",
        "wrong_start_position" => "remark.wrong_start_position",
        "board_rotated" => "remark.board_rotated",
        "clock_mis_set" => "remark.clock_mis_set",
        "illegal_position" => "remark.illegal_position",
        "thread_lost" => "remark.thread_lost",
        "board_unplugged" => "remark.board_unplugged",
        "board_silent" => "remark.board_silent",
        "board_port_busy" => "remark.board_port_busy",
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

/// A result's reason in words (a reason of the arbiter's own as written).
pub fn reason_text(reason: &str, lang: Lang) -> String {
    match reason {
        "resignation" => lang.text("reason.resignation").to_owned(),
        "agreement" => lang.text("reason.agreement").to_owned(),
        "forfeit" => lang.text("reason.forfeit").to_owned(),
        "decision" => lang.text("reason.decision").to_owned(),
        other => other.replace('_', " "),
    }
}

/// A game's stored termination in words (one the tables do not name as written).
pub fn termination_text(termination: &str, lang: Lang) -> String {
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
