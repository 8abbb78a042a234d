//! The fonts the PDF scoresheet embeds, and what they cover.
//!
//! The files of `assets/fonts/` (see its README for their versions and licences) are part of the
//! binary, so a venue PC needs no font installed. A text is drawn in a chain of fonts, tried in
//! order for each character ([`chain`]): Noto Sans (Latin, Greek, Cyrillic with the Kazakh,
//! Kyrgyz and Mongolian letters), Noto Sans Arabic (the Persian letters and digits), DejaVu Sans
//! (the chess figurines U+2654–U+265F, arrows, Armenian, Georgian, ...). The bold chain begins
//! with Noto Sans Bold and goes on through the same fonts.
//!
//! [`uncovered`] is the check that a text can be printed (the PDF, and pairing import before it
//! takes a name): the first character no font has a glyph
//! for. Whitespace and the invisible format characters (joiners, bidi marks and isolates,
//! variation selectors) need none. Pure, apart from parsing the fonts once.

use std::sync::LazyLock;

/// One embedded font: as the PDF embeds it and as the shaper reads it.
pub struct Face {
    /// Its file's name in `assets/fonts/`.
    pub name: &'static str,
    pub(crate) pdf: krilla::text::Font,
    pub(crate) shaper: rustybuzz::Face<'static>,
}

impl Face {
    /// Parses an embedded font; they are part of the binary, so a failure is a build mistake
    /// (every font is loaded by a unit test).
    fn load(name: &'static str, data: &'static [u8]) -> Face {
        let pdf = krilla::text::Font::new(data.into(), 0);
        let shaper = rustybuzz::Face::from_slice(data, 0);
        match (pdf, shaper) {
            (Some(pdf), Some(shaper)) => Face { name, pdf, shaper },
            _ => panic!("the embedded font {name} does not parse"),
        }
    }

    /// Whether the font has a glyph for `c`.
    pub fn covers(&self, c: char) -> bool {
        self.shaper.glyph_index(c).is_some_and(|g| g.0 != 0)
    }

    /// The font's design units per em, to scale the shaper's advances.
    pub(crate) fn units_per_em(&self) -> f32 {
        self.shaper.units_per_em() as f32
    }
}

/// The weight a text is drawn in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weight {
    Regular,
    Bold,
}

struct Fonts {
    regular: Face,
    bold: Face,
    arabic: Face,
    symbols: Face,
}

static FONTS: LazyLock<Fonts> = LazyLock::new(|| Fonts {
    regular: Face::load(
        "NotoSans-Regular.ttf",
        include_bytes!("../assets/fonts/NotoSans-Regular.ttf"),
    ),
    bold: Face::load(
        "NotoSans-Bold.ttf",
        include_bytes!("../assets/fonts/NotoSans-Bold.ttf"),
    ),
    arabic: Face::load(
        "NotoSansArabic-Regular.ttf",
        include_bytes!("../assets/fonts/NotoSansArabic-Regular.ttf"),
    ),
    symbols: Face::load(
        "DejaVuSans.ttf",
        include_bytes!("../assets/fonts/DejaVuSans.ttf"),
    ),
});

/// The fonts tried, in order, for each character of a text in `weight`. Bold ends with the
/// regular Latin font, so whatever regular text can show, bold text can.
pub fn chain(weight: Weight) -> Vec<&'static Face> {
    let f = &*FONTS;
    match weight {
        Weight::Regular => vec![&f.regular, &f.arabic, &f.symbols],
        Weight::Bold => vec![&f.bold, &f.arabic, &f.symbols, &f.regular],
    }
}

/// An invisible format character: it needs no glyph, and the shaper hides it (a zero-width
/// (non-)joiner still decides how Arabic letters join).
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{fe00}'..='\u{fe0f}'
        | '\u{feff}' | '\u{e0000}'..='\u{e0fff}')
}

/// Whether some embedded font has `c`, or `c` needs no glyph (whitespace, invisible).
pub fn is_covered(c: char) -> bool {
    c.is_whitespace() || is_invisible(c) || chain(Weight::Regular).iter().any(|f| f.covers(c))
}

/// The first character of `text` that no embedded font covers (it could not be printed).
pub fn uncovered(text: &str) -> Option<char> {
    text.chars().find(|&c| !is_covered(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_font_loads_and_the_scripts_of_the_events_are_covered() {
        for weight in [Weight::Regular, Weight::Bold] {
            assert!(chain(weight).len() >= 3);
        }
        let texts = [
            "Иванов, Пётр Ёж",
            "Өлзий Үүрийн Ңң Ұлан Қасым Ғалым Һһ Әсел Іі өүңұқғһәі",
            "Ковальчук Ґанна Їжак Єва",
            "پرویز چمران ژاله گلشیری کاظم یزدی ۱۲۳",
            "♔♕♖♗♘♙♚♛♜♝♞♟",
            "№ † ½ → – … “” Nf3 O-O-O",
            "Petrosyan Պետրոսյան Chiburdanidze ჩიბურდანიძე",
            "a\u{200c}b\u{2068}c\u{2069}\u{3000}",
        ];
        for t in texts {
            assert_eq!(uncovered(t), None, "{t}");
        }
        assert_eq!(uncovered("Li 李"), Some('李'));
        assert_eq!(uncovered("x \u{1f980} y"), Some('\u{1f980}'));
        let regular = chain(Weight::Regular);
        assert!(regular[0].covers('Ә') && !regular[0].covers('پ'));
        assert!(regular[1].covers('پ'));
        assert!(regular[2].covers('♞'));
    }
}
