//! A lost thread in the console: what the board shows beside the record's last position, both
//! drawn, and the form that resumes the game (`thread_lost`: the board heard again after a gap
//! shows a position the record does not reach).
//!
//! Flow: [`super::alert_item`] calls [`lost_thread_part`] for an open `thread_lost` alert. The
//! board's position is the one the tracker kept in the alert's phrase (its `board` argument, in
//! the game's position text: [`crate::game::GameKind::reading_text`]), the record's is the
//! board's snapshot. The form names the last move that stands by its number and side (the
//! record's last by default; 0, the start) and takes the moves played since from the
//! scoresheets; it posts to `/arbiter/boards/{key}/resume`, which asks the decider to resume the
//! game there ([`crate::decider::ResumeBody`]). [`scoresheet_moves`] reads those moves. Pure.

use std::fmt::Write as _;

use super::{BoardView, board_href};
use crate::{
    game::Kind,
    lang::Lang,
    relay::{alerts::Alert, page::escape, svg},
    tracker::Side,
};

/// What the board showed when the thread was lost, as its alert's phrase keeps it.
pub fn board_shown(a: &Alert) -> Option<&str> {
    match a.detail_phrase.as_ref()?.args.get("board")? {
        crate::phrase::Arg::Text(text) if !text.is_empty() => Some(text),
        _ => None,
    }
}

/// The two boards side by side and the resume form, for an open `thread_lost` alert of a board
/// with a game; nothing otherwise.
pub fn lost_thread_part(out: &mut String, v: &BoardView, a: &Alert, lang: Lang) {
    let Some(game) = v.game_id else {
        return;
    };
    if a.kind != "thread_lost" {
        return;
    }
    let t = |key: &'static str| escape(lang.text(key));
    out.push_str(r#"<div class="diagrams">"#);
    if let Some(shown) = board_shown(a) {
        let drawn = match v.live.kind {
            Kind::Chess => svg::board_svg(shown, None),
            Kind::Togyz => svg::togyz_svg(shown, None, lang),
        };
        let _ = write!(
            out,
            r#"<figure class="board-shows">{drawn}<figcaption>{}</figcaption></figure>"#,
            t("arbiter.board_shows")
        );
    }
    let _ = write!(
        out,
        r#"<figure class="record-shows">{}<figcaption>{}</figcaption></figure></div>"#,
        v.svg,
        t("arbiter.record_shows")
    );
    // The record's last move stands unless the arbiter says otherwise.
    let ply = v.live.ply;
    let (number, black) = (ply.div_ceil(2), ply > 0 && Side::of_ply(ply) == Side::Black);
    let [white_name, black_name] = lang.sides(v.live.kind);
    let selected = |yes: bool| if yes { " selected" } else { "" };
    let _ = write!(
        out,
        r#"<form class="resume" method="post" action="{href}/resume"><input type="hidden" name="game" value="{game}"><strong>{head}</strong> <label>{after} <input type="number" name="move" min="0" value="{number}" required inputmode="numeric" size="4"></label><select name="side" aria-label="{side}"><option value="white"{ws}>{white}</option><option value="black"{bs}>{black}</option></select><textarea name="moves" rows="2" maxlength="4000" aria-label="{moves}" placeholder="{moves}" dir="ltr" autocapitalize="off" autocomplete="off"></textarea><input type="text" name="note" placeholder="{note}" maxlength="500" aria-label="{note}" dir="auto"><button type="submit">{resume}</button></form>"#,
        href = escape(&board_href(v)),
        head = t("arbiter.resume_head"),
        after = t("arbiter.resume_after"),
        side = t("arbiter.side"),
        ws = selected(!black),
        bs = selected(black),
        white = escape(white_name),
        black = escape(black_name),
        moves = t("arbiter.resume_moves"),
        note = t("arbiter.note"),
        resume = t("arbiter.resume"),
    );
}

/// The moves of a scoresheet's lines, as the arbiter copies them: move numbers (`35.`,
/// `35...`, `35…`) and result marks dropped, the moves (SAN, UCI, pit numbers) in order.
pub fn scoresheet_moves(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|token| {
            // A move number, alone (`35.`) or glued to its move (`36.Bb5`).
            let digits = token.bytes().take_while(u8::is_ascii_digit).count();
            let rest = &token[digits..];
            let after = rest.trim_start_matches(['.', '…']);
            if digits > 0 && after.len() < rest.len() {
                after
            } else {
                token
            }
        })
        .filter(|m| !m.is_empty() && !matches!(*m, "1-0" | "0-1" | "1/2-1/2" | "½-½" | "*"))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scoresheets_lines_give_their_moves_without_numbers() {
        assert_eq!(
            scoresheet_moves("35. Nf3 Nc6\n36.Bb5 36... a6 37… Ba4"),
            ["Nf3", "Nc6", "Bb5", "a6", "Ba4"]
        );
        // Togyz korgool moves are numbers without a dot: kept.
        assert_eq!(scoresheet_moves("12. 76 45X 13. 19"), ["76", "45X", "19"]);
        assert_eq!(scoresheet_moves("e2e4 1-0"), ["e2e4"]);
        assert!(scoresheet_moves("  \n ").is_empty());
    }
}
