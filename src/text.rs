//! Clean text: what people may write into the record, and how text already in it is shown.
//!
//! Flow: a name, an author, a note or a ruling's description is refused at the door when it
//! holds a control character (a NUL, a line break, a tab, an escape: [`first_control`]), so
//! that no line of a terminal, a PGN or a page can be forged with it: the pairings' names and
//! the store's decisions both ask here. Text that was written before that rule (an old
//! database) is shown with its control characters escaped ([`escape_controls`]); text in a
//! page is escaped for HTML ([`escape_html`]). Pure.

use std::borrow::Cow;

/// A control character where the record takes one line of text: which field, the character
/// and its position (1-based, in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the {field} holds a control character (U+{code:04X}) at character {at}; write it on one \
     line, without tabs or escape sequences"
)]
pub struct ControlCharacter {
    pub field: &'static str,
    pub code: u32,
    pub at: usize,
}

/// `text`, the `field` of something the record keeps, refused when it holds a control
/// character.
pub fn one_line(field: &'static str, text: &str) -> Result<(), ControlCharacter> {
    match first_control(text) {
        Some((at, c)) => Err(ControlCharacter {
            field,
            code: u32::from(c),
            at,
        }),
        None => Ok(()),
    }
}

/// The first control character of `text`: its position (1-based, in characters) and itself.
pub fn first_control(text: &str) -> Option<(usize, char)> {
    text.chars()
        .enumerate()
        .find(|(_, c)| c.is_control())
        .map(|(at, c)| (at + 1, c))
}

/// `text` with each control character written as its escape (`\u{1b}`, `\u{a}`), so that it
/// cannot move a terminal's cursor or start a line; unchanged (and not copied) when it has none.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if first_control(text).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `&`, `<`, `>`, `"` and `'` escaped for HTML text and attribute values (the scoresheet, the live
/// page).
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_control_character_is_found_with_its_position() {
        assert_eq!(first_control("Chief Arbiter"), None);
        assert_eq!(first_control("Čech Ω"), None);
        assert_eq!(first_control("ab\u{1b}[2J"), Some((3, '\u{1b}')));
        assert_eq!(first_control("x\ny"), Some((2, '\n')));
        assert_eq!(first_control("\t"), Some((1, '\t')));
        assert_eq!(first_control("del\u{7f}"), Some((4, '\u{7f}')));
        assert_eq!(first_control("c1\u{9b}2J"), Some((3, '\u{9b}')));
    }

    #[test]
    fn control_characters_are_escaped_and_clean_text_is_kept_as_is() {
        assert!(matches!(escape_controls("Chief"), Cow::Borrowed("Chief")));
        assert_eq!(
            escape_controls("Chief\u{1b}[2J\r\nforged"),
            "Chief\\u{1b}[2J\\u{d}\\u{a}forged"
        );
        assert_eq!(escape_controls("é\u{0}"), "é\\u{0}");
    }
}
