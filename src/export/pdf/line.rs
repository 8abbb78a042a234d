//! One line of text as the PDF draws it: in visual order, in the fonts that cover it, shaped.
//!
//! Flow: [`Line::new`] runs the Unicode bidi algorithm over the text as a paragraph of the
//! [`Dir`] asked for (`unicode-bidi`: the sheet's own words run its way, moves and clocks left to
//! right, what a person wrote its own way; an isolate, FSI … PDI, keeps a name, a title or a
//! rating to itself, so that each is reordered on its own and placed in the paragraph's order), takes
//! the level runs in visual order, cuts each run where the font changes (the first font of
//! [`fonts::chain`] that covers a letter; spaces, punctuation and invisible characters stay in
//! the font of the letters around them, so a Persian name is one run), and shapes each piece
//! with `rustybuzz` in its direction (Arabic letters take their joined forms; a right-to-left
//! piece comes out in visual order, its brackets mirrored). Pieces of a right-to-left run are
//! placed right to left. A character no font covers is written as `[U+XXXX]` in the Latin font,
//! never dropped; whitespace no font has is a space. Pure.

use std::ops::Range;

use krilla::text::{GlyphId, KrillaGlyph};
use unicode_bidi::{BidiInfo, Level};

use crate::fonts::{self, Face, Weight};

/// A piece of a line in one font and one direction, shaped; its glyphs in visual order.
pub struct Run {
    pub face: &'static Face,
    /// The piece's text in logical order (what a reader's copy and search give back).
    pub text: String,
    pub glyphs: Vec<KrillaGlyph>,
    /// Its advance at the line's size, in points.
    pub width: f32,
}

/// The direction of a line's paragraph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Ltr,
    Rtl,
    /// Its own: from its first strong letter, left to right without one (what a person wrote,
    /// as an HTML `<bdi>` isolates it).
    Auto,
}

/// A line of text shaped at `size` points, its runs left to right.
pub struct Line {
    pub runs: Vec<Run>,
    pub size: f32,
    pub width: f32,
}

/// Which font a piece is drawn in: a chain's font, or the first font for a stand-in text.
#[derive(Clone, Copy, PartialEq)]
enum Pick {
    Font(usize),
    StandIn,
}

impl Line {
    /// `text` laid out in `weight` at `size` points, as a paragraph running `dir`.
    pub fn new(text: &str, weight: Weight, size: f32, dir: Dir) -> Line {
        let chain = fonts::chain(weight);
        let level = match dir {
            Dir::Ltr => Some(Level::ltr()),
            Dir::Rtl => Some(Level::rtl()),
            Dir::Auto => None,
        };
        let bidi = BidiInfo::new(text, level);
        let mut runs = Vec::new();
        for para in &bidi.paragraphs {
            let (levels, level_runs) = bidi.visual_runs(para, para.range.clone());
            for range in level_runs {
                let rtl = levels[range.start].is_rtl();
                let mut pieces = pieces(&text[range], &chain);
                if rtl {
                    pieces.reverse();
                }
                for (pick, piece) in pieces {
                    let run = match pick {
                        Pick::Font(i) => shape(chain[i], &piece, rtl, size),
                        Pick::StandIn => shape(chain[0], &piece, false, size),
                    };
                    if !run.glyphs.is_empty() {
                        runs.push(run);
                    }
                }
            }
        }
        let width = runs.iter().map(|r| r.width).sum();
        Line { runs, size, width }
    }

    /// The line's text, run by run as drawn (for tests and error messages).
    #[cfg(test)]
    pub fn text(&self) -> String {
        self.runs.iter().map(|r| r.text.as_str()).collect()
    }
}

/// `text` (one bidi level run, in logical order) cut where the font changes.
fn pieces(text: &str, chain: &[&'static Face]) -> Vec<(Pick, String)> {
    let mut out: Vec<(Pick, String)> = Vec::new();
    let mut current: Option<usize> = None;
    for c in text.chars() {
        if is_bidi_control(c) {
            // Its work is done: the runs are in visual order.
            continue;
        }
        let covering = |c: char| chain.iter().position(|f| f.covers(c));
        let stays = |c: char| fonts::is_invisible(c) || !c.is_alphanumeric();
        let (pick, c) = match current {
            Some(i) if stays(c) && (chain[i].covers(c) || fonts::is_invisible(c)) => {
                (Pick::Font(i), c)
            }
            _ if fonts::is_invisible(c) => (Pick::Font(current.unwrap_or(0)), c),
            _ => match covering(c) {
                Some(i) => (Pick::Font(i), c),
                None if c.is_whitespace() || c.is_control() => {
                    (Pick::Font(current.unwrap_or(0)), ' ')
                }
                None => {
                    out.push((Pick::StandIn, format!("[U+{:04X}]", u32::from(c))));
                    continue;
                }
            },
        };
        if let Pick::Font(i) = pick {
            current = Some(i);
        }
        match out.last_mut() {
            Some((last, s)) if *last == pick => s.push(c),
            _ => out.push((pick, c.to_string())),
        }
    }
    out
}

/// A mark, embedding or isolate of the bidi algorithm (shaping does not need them).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` shaped in `face`, right to left when `rtl`; glyphs of invisible characters that take
/// no room are left out (they have nothing to draw).
fn shape(face: &'static Face, text: &str, rtl: bool, size: f32) -> Run {
    let mut buffer = rustybuzz::UnicodeBuffer::new();
    buffer.push_str(text);
    buffer.set_direction(if rtl {
        rustybuzz::Direction::RightToLeft
    } else {
        rustybuzz::Direction::LeftToRight
    });
    buffer.guess_segment_properties();
    let shaped = rustybuzz::shape(&face.shaper, &[], buffer);
    let upem = face.units_per_em();
    let mut starts: Vec<usize> = shaped
        .glyph_infos()
        .iter()
        .map(|g| g.cluster as usize)
        .collect();
    starts.sort_unstable();
    starts.dedup();
    let cluster = |start: usize| -> Range<usize> {
        let end = starts
            .iter()
            .copied()
            .find(|&s| s > start)
            .unwrap_or(text.len());
        start..end
    };
    let mut glyphs = Vec::with_capacity(shaped.len());
    let mut advance = 0.0;
    for (info, pos) in shaped.glyph_infos().iter().zip(shaped.glyph_positions()) {
        let range = cluster(info.cluster as usize);
        let invisible = text
            .get(range.clone())
            .is_some_and(|s| s.chars().all(fonts::is_invisible));
        if invisible && pos.x_advance == 0 {
            continue;
        }
        advance += pos.x_advance as f32;
        glyphs.push(KrillaGlyph::new(
            GlyphId::new(info.glyph_id),
            pos.x_advance as f32 / upem,
            pos.x_offset as f32 / upem,
            pos.y_offset as f32 / upem,
            pos.y_advance as f32 / upem,
            range,
            None,
        ));
    }
    Run {
        face,
        text: text.to_owned(),
        glyphs,
        width: advance / upem * size,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fonts_of(line: &Line) -> Vec<(&'static str, String)> {
        line.runs
            .iter()
            .map(|r| (r.face.name, r.text.clone()))
            .collect()
    }

    #[test]
    fn a_persian_name_is_one_right_to_left_run_between_title_and_rating() {
        let name = "علی رضا فیروزجا";
        let line = Line::new(
            &format!("GM \u{2068}{name}\u{2069} (2760)"),
            Weight::Regular,
            10.0,
            Dir::Ltr,
        );
        let runs = fonts_of(&line);
        assert_eq!(runs.len(), 3, "{runs:?}");
        assert_eq!(runs[0].1, "GM ");
        assert_eq!(runs[1].0, "NotoSansArabic-Regular.ttf");
        assert!(runs[1].1.contains(name), "{runs:?}");
        assert_eq!(runs[2].1, " (2760)");
        // Shaped: joined forms, so not the glyphs of the letters alone; laid out right to
        // left: the first glyph drawn is the name's last letter.
        let arabic = &line.runs[1];
        let last = &arabic.glyphs[0];
        assert_eq!(&arabic.text[last.text_range.clone()], "ا");
        let isolated = shape(arabic.face, "ل", true, 10.0).glyphs[0].glyph_id;
        let in_name = shape(arabic.face, "علی", true, 10.0);
        assert_eq!(in_name.glyphs.len(), 3);
        assert_ne!(in_name.glyphs[1].glyph_id, isolated, "lam joins both sides");
    }

    /// The texts of `line`'s runs left to right, spaces trimmed, empty ones left out.
    fn drawn(line: &Line) -> Vec<String> {
        line.runs
            .iter()
            .map(|r| r.text.trim().to_owned())
            .filter(|t| !t.is_empty())
            .collect()
    }

    #[test]
    fn isolates_keep_title_name_and_rating_in_the_paragraphs_order_either_way() {
        let name = "پرویز چمران";
        let label = format!("\u{2068}GM\u{2069} \u{2068}{name}\u{2069} \u{2068}(2760)\u{2069}");
        // Left to right: GM, the name (itself right to left), the rating.
        let ltr = Line::new(&label, Weight::Regular, 10.0, Dir::Ltr);
        assert_eq!(drawn(&ltr), ["GM", name, "(2760)"]);
        // Right to left: the rating leftmost, the title rightmost; each still reads its way.
        let rtl = Line::new(&label, Weight::Regular, 10.0, Dir::Rtl);
        assert_eq!(drawn(&rtl), ["(2760)", name, "GM"]);
        assert!((ltr.width - rtl.width).abs() < 0.01);
        let latin = "\u{2068}GM\u{2069} \u{2068}Magnus Carlsen\u{2069} \u{2068}(2830)\u{2069}";
        let rtl = Line::new(latin, Weight::Regular, 10.0, Dir::Rtl);
        assert_eq!(drawn(&rtl), ["(2830)", "Magnus Carlsen", "GM"]);
    }

    #[test]
    fn a_line_of_its_own_direction_takes_it_from_its_first_letter() {
        let persian = Line::new("۱۳ آذر ۱۴۰۵", Weight::Regular, 10.0, Dir::Auto);
        // Right to left: the year leftmost, the day rightmost.
        assert_eq!(drawn(&persian), ["۱۴۰۵", "آذر", "۱۳"]);
        let unknown = Line::new("2026.??.??", Weight::Regular, 10.0, Dir::Auto);
        assert_eq!(drawn(&unknown), ["2026.??.??"]);
        // A move stays a move in a right-to-left paragraph only when laid out left to right.
        let san = Line::new("e8=Q+ [2]", Weight::Regular, 10.0, Dir::Ltr);
        assert_eq!(san.text(), "e8=Q+ [2]");
    }

    #[test]
    fn without_the_isolate_the_rating_would_move_to_the_left_of_the_name() {
        let line = Line::new("GM علی رضا (2760)", Weight::Regular, 10.0, Dir::Ltr);
        let text = line.text();
        assert!(
            !text.ends_with("(2760)"),
            "the bidi algorithm takes the rating into the name's run: {text}"
        );
    }

    #[test]
    fn fonts_fall_back_per_character_and_nothing_vanishes() {
        let line = Line::new("♘f3 Әсел پ \u{1f980} 李", Weight::Bold, 10.0, Dir::Ltr);
        let runs = fonts_of(&line);
        let names: Vec<&str> = runs.iter().map(|r| r.0).collect();
        assert_eq!(names[0], "DejaVuSans.ttf", "{runs:?}");
        assert_eq!(names[1], "NotoSans-Bold.ttf", "{runs:?}");
        assert!(names.contains(&"NotoSansArabic-Regular.ttf"), "{runs:?}");
        assert!(line.text().contains("[U+1F980]"), "{}", line.text());
        assert!(line.text().ends_with("[U+674E]"), "{}", line.text());
        for run in &line.runs {
            assert!(run.glyphs.iter().all(|g| g.glyph_id.to_u32() != 0));
        }
        assert!(line.width > 0.0);
    }
}
