//! PGN export (export format, PGN standard section 8): tags, numbered movetext with clock
//! comments, wrapped under 80 columns.
//!
//! Tags: the Seven Tag Roster (Event, Site and Round are `?` until pairings are known; Date is the
//! game's or `????.??.??`; White/Black fall back to the board name, never `?`), then `Board`, and
//! `Variant` for togyz korgool. After each move comes `{ [%clk h:mm:ss] }` with the mover's clock
//! (whole seconds, rounded down) when it is known. Irregularities the board showed are comments
//! before the ply they happened before (`{ Irregularity: illegal_move (7.5.1) by white: ... }`);
//! an illegal move is never in the movetext.

use std::fmt::Write as _;

use crate::{game::Kind, store::GameRecord};

/// Lines stay shorter than this (PGN export format: at most 79 characters).
const MAX_LINE: usize = 80;

/// The game as PGN, ending with a newline.
pub fn pgn(game: &GameRecord) -> String {
    let mut out = String::new();
    let date = game.date.as_deref().unwrap_or("????.??.??");
    let white = game.white.as_deref().unwrap_or(&game.board_name);
    let black = game.black.as_deref().unwrap_or(&game.board_name);
    for (name, value) in [
        ("Event", "?"),
        ("Site", "?"),
        ("Date", date),
        ("Round", "?"),
        ("White", white),
        ("Black", black),
        ("Result", &game.result),
        ("Board", &game.board_name),
    ] {
        tag(&mut out, name, value);
    }
    if game.kind == Kind::Togyz {
        tag(&mut out, "Variant", "Togyz Korgool");
    }
    out.push('\n');

    let comments = irregularity_comments(game);
    let comments_before = |ply: u32| comments.iter().filter(move |(p, _)| *p == ply);
    let mut lines = Wrapper::new(&mut out);
    // A black move needs its number at the start and after a comment.
    let mut after_comment = true;
    for (_, text) in comments_before(1) {
        lines.comment(text);
    }
    for mv in &game.moves {
        let white_moved = mv.ply % 2 == 1;
        let number = mv.ply.div_ceil(2);
        // The number stays on the line of its move.
        if white_moved {
            lines.token(&format!("{number}. {}", mv.notation));
        } else if after_comment {
            lines.token(&format!("{number}... {}", mv.notation));
        } else {
            lines.token(&mv.notation);
        }
        let clock = if white_moved {
            mv.clock_white_ms
        } else {
            mv.clock_black_ms
        };
        after_comment = clock.is_some();
        if let Some(ms) = clock {
            lines.token(&format!("{{ [%clk {}] }}", clk(ms)));
        }
        for (_, text) in comments_before(mv.ply + 1) {
            lines.comment(text);
            after_comment = true;
        }
    }
    lines.token(&game.result);
    lines.finish();
    out
}

/// `(ply it happened before, comment text)` for each irregularity the board showed.
fn irregularity_comments(game: &GameRecord) -> Vec<(u32, String)> {
    super::json::irregularities(&game.events)
        .iter()
        .filter(|i| i.get("id").is_some_and(|id| !id.is_null()))
        .map(|i| {
            let text = |k: &str| i.get(k).and_then(|v| v.as_str()).map(str::to_owned);
            let mut c = format!("Irregularity: {}", text("kind").unwrap_or_default());
            if let Some(article) = text("article") {
                c.push_str(&format!(" ({article})"));
            }
            if let Some(player) = text("player") {
                c.push_str(&format!(" by {player}"));
            }
            if let Some(detail) = text("detail") {
                c.push_str(&format!(": {detail}"));
            }
            if let Some(ruling) = text("ruling") {
                c.push_str(&format!("; {ruling}"));
            }
            match i
                .get("resolution")
                .and_then(|r| r.get("how"))
                .and_then(|h| h.as_str())
            {
                Some(how) => c.push_str(&format!("; resolved: {how}")),
                None => c.push_str("; unresolved"),
            }
            let ply = i.get("ply").and_then(|p| p.as_u64()).unwrap_or(1) as u32;
            (ply, c)
        })
        .collect()
}

/// Every game, separated by a blank line.
pub fn pgn_all(games: &[GameRecord]) -> String {
    let mut out = String::new();
    for (i, game) in games.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&pgn(game));
    }
    out
}

/// `h:mm:ss` of a clock reading.
fn clk(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn tag(out: &mut String, name: &str, value: &str) {
    let _ = write!(out, "[{name} \"");
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            // A tag value is one line.
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push_str("\"]\n");
}

/// Joins tokens with spaces, breaking lines before they reach [`MAX_LINE`].
struct Wrapper<'a> {
    out: &'a mut String,
    line: usize,
}

impl<'a> Wrapper<'a> {
    fn new(out: &'a mut String) -> Wrapper<'a> {
        Wrapper { out, line: 0 }
    }

    fn token(&mut self, token: &str) {
        let width = token.chars().count();
        if self.line > 0 && self.line + 1 + width >= MAX_LINE {
            self.out.push('\n');
            self.line = 0;
        }
        if self.line > 0 {
            self.out.push(' ');
            self.line += 1;
        }
        self.out.push_str(token);
        self.line += width;
    }

    /// `{ text }`, broken at spaces like tokens; braces inside become parentheses.
    fn comment(&mut self, text: &str) {
        self.token("{");
        for word in text.split_whitespace() {
            self.token(&word.replace('{', "(").replace('}', ")"));
        }
        self.token("}");
    }

    fn finish(self) {
        self.out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_format_rounds_down_to_seconds() {
        assert_eq!(clk(0), "0:00:00");
        assert_eq!(clk(59_999), "0:00:59");
        assert_eq!(clk(5_400_000), "1:30:00");
        assert_eq!(clk(36_061_500), "10:01:01");
    }

    #[test]
    fn tag_values_are_escaped() {
        let mut s = String::new();
        tag(&mut s, "White", "A \"B\" \\ C\nD");
        assert_eq!(s, "[White \"A \\\"B\\\" \\\\ C D\"]\n");
    }

    #[test]
    fn long_tokens_never_exceed_the_line() {
        let mut s = String::new();
        let mut w = Wrapper::new(&mut s);
        for _ in 0..100 {
            w.token("{ [%clk 1:30:00] }");
            w.token("Nxe5+");
        }
        w.finish();
        assert!(s.lines().all(|l| l.len() < MAX_LINE && !l.starts_with(' ')));
        assert_eq!(s.split_whitespace().count(), 100 * 5);
    }
}
