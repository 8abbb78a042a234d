//! The boards drawn as SVG: a chessboard from a FEN placement (the last move's squares marked),
//! a togyz korgool board from its position text (counts, stores, tuz marks, the last sowing).
//! Pure: text in, markup out; [`super::view`] draws each snapshot with it for the page, the
//! script and `/api/boards` (one renderer).

use std::fmt::Write as _;

use crate::export::escape_html as escape;
use crate::game::togyz;
use crate::lang::Lang;

/// Side of a square in SVG units.
const SQ: u32 = 45;

/// A square's name (`e4`) as (file, rank) from 0, or `None`.
fn square(name: &str) -> Option<(u32, u32)> {
    let b = name.as_bytes();
    match b {
        [f @ b'a'..=b'h', r @ b'1'..=b'8', ..] => Some((u32::from(f - b'a'), u32::from(r - b'1'))),
        _ => None,
    }
}

/// The Unicode glyph of a FEN piece letter.
fn glyph(piece: char) -> Option<char> {
    Some(match piece.to_ascii_lowercase() {
        'k' => '\u{265A}',
        'q' => '\u{265B}',
        'r' => '\u{265C}',
        'b' => '\u{265D}',
        'n' => '\u{265E}',
        'p' => '\u{265F}',
        _ => return None,
    })
}

/// The placement of a FEN as 64 squares, a8 first, as shakmaty reads it; all empty if it does
/// not read.
fn placement(fen: &str) -> [Option<char>; 64] {
    let mut squares = [None; 64];
    let field = fen.split(' ').next().unwrap_or("");
    if let Ok(board) = shakmaty::Board::from_ascii_board_fen(field.as_bytes()) {
        for (square, piece) in &board {
            let (file, rank) = (usize::from(square.file()), usize::from(square.rank()));
            squares[(7 - rank) * 8 + file] = Some(piece.char());
        }
    }
    squares
}

/// The position of `fen` as an SVG board, White at the bottom, the squares of `last_move` (UCI)
/// marked. Each square is a `rect` with `data-square`, each piece a `text` with `data-square` and
/// `data-piece` (the FEN letter).
pub fn board_svg(fen: &str, last_move: Option<&str>) -> String {
    let marked: Vec<(u32, u32)> = last_move
        .map(|m| {
            [m.get(0..2), m.get(2..4)]
                .into_iter()
                .flatten()
                .filter_map(square)
                .collect()
        })
        .unwrap_or_default();
    let size = SQ * 8;
    let mut out = String::with_capacity(8 * 1024);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}" class="chessboard" role="img" aria-label="{}">"#,
        escape(fen)
    );
    let pieces = placement(fen);
    for row in 0..8u32 {
        for file in 0..8u32 {
            let rank = 7 - row;
            let name = format!("{}{}", char::from(b'a' + file as u8), rank + 1);
            let light = (file + rank) % 2 == 1;
            let mut class = if light { "sq light" } else { "sq dark" }.to_owned();
            if marked.contains(&(file, rank)) {
                class.push_str(" last");
            }
            let (x, y) = (file * SQ, row * SQ);
            let _ = write!(
                out,
                r#"<rect x="{x}" y="{y}" width="{SQ}" height="{SQ}" class="{class}" data-square="{name}"/>"#
            );
            if let Some(p) = pieces[(row * 8 + file) as usize]
                && let Some(g) = glyph(p)
            {
                let color = if p.is_ascii_uppercase() { "w" } else { "b" };
                let _ = write!(
                    out,
                    r#"<text x="{}" y="{}" class="pc {color}" data-square="{name}" data-piece="{p}">{g}</text>"#,
                    x + SQ / 2,
                    y + SQ / 2 + 1,
                );
            }
        }
    }
    out.push_str("</svg>");
    out
}

/// `white` or `black`.
fn togyz_side(side: togyz::Side) -> &'static str {
    match side {
        togyz::Side::White => "white",
        togyz::Side::Black => "black",
    }
}

/// Width and height of a togyz pit, and the height of a store band, in SVG units.
const PIT_W: u32 = 50;
const PIT_H: u32 = 64;
const STORE_H: u32 = 40;

/// The togyz position of `fen` (PlayStrategy's FEN, see [`togyz::notation::to_fen`]) as an SVG
/// board: black's row on top (pits 9 to 1 from the left, as white sees them), white's store next
/// to it, black's store below, white's row at the bottom (pits 1 to 9). `last` marks the last
/// move's start pit and landing pit (locations 0..18: white's pits 1..9, then black's). Each pit
/// is a `rect` with `data-side`, `data-pit` and `data-count`; a tuz pit has class `tuz` and
/// `data-tuz` (its owner) and a marker; each store a `rect` with `data-store` and `data-count`.
/// Each store's count follows its name in `lang` (a `tspan` with class `store-name` and
/// `data-store`, which the page's script names again in the reader's language). An unreadable
/// FEN draws an empty board.
pub fn togyz_svg(fen: &str, last: Option<(usize, usize)>, lang: Lang) -> String {
    let board = togyz::notation::fen_board(fen)
        .map(|(board, _)| board)
        .unwrap_or(togyz::Board {
            pits: [0; 18],
            stores: [0; 2],
            tuz: [None; 2],
        });
    let marked = |loc: usize| last.is_some_and(|(a, b)| a == loc || b == loc);
    let (w, h) = (PIT_W * 9, PIT_H * 2 + STORE_H * 2);
    let mut out = String::with_capacity(8 * 1024);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" class="togyzboard" role="img" aria-label="{}">"#,
        escape(fen)
    );
    let rows = [
        (togyz::Side::Black, 0, true),
        (togyz::Side::White, PIT_H + 2 * STORE_H, false),
    ];
    for (side, y, reversed) in rows {
        for col in 0..9u32 {
            let pit = if reversed { 9 - col } else { col + 1 } as u8;
            let loc = togyz::Board::location(side, pit);
            let count = board.pits[loc];
            let owner = board.tuz_owner(loc);
            let mut class = "pit".to_owned();
            if owner.is_some() {
                class.push_str(" tuz");
            }
            if marked(loc) {
                class.push_str(" last");
            }
            let x = col * PIT_W;
            let tuz_attr = owner.map_or(String::new(), |o| {
                format!(r#" data-tuz="{}""#, togyz_side(o))
            });
            let _ = write!(
                out,
                r#"<rect x="{x}" y="{y}" width="{PIT_W}" height="{PIT_H}" class="{class}" data-side="{}" data-pit="{pit}" data-count="{count}"{tuz_attr}/>"#,
                togyz_side(side)
            );
            let (cx, cy) = (x + PIT_W / 2, y + PIT_H / 2);
            if owner.is_some() {
                let _ = write!(
                    out,
                    r#"<circle cx="{cx}" cy="{cy}" r="{}" class="tuzmark"/><text x="{cx}" y="{}" class="tuzlabel">X</text>"#,
                    PIT_W / 3,
                    cy + 1
                );
            } else {
                let _ = write!(
                    out,
                    r#"<text x="{cx}" y="{}" class="count">{count}</text>"#,
                    cy + 1
                );
            }
            let label_y = if reversed { y + 12 } else { y + PIT_H - 5 };
            let _ = write!(
                out,
                r#"<text x="{cx}" y="{label_y}" class="pitno">{pit}</text>"#
            );
        }
    }
    // White's store lies next to black's row, black's next to white's [rules 1.1].
    for (side, y) in [
        (togyz::Side::White, PIT_H),
        (togyz::Side::Black, PIT_H + STORE_H),
    ] {
        let count = board.stores[side.index()];
        let name = togyz_side(side);
        let words = lang.text(match side {
            togyz::Side::White => "togyz.store_white",
            togyz::Side::Black => "togyz.store_black",
        });
        let _ = write!(
            out,
            r#"<rect x="0" y="{y}" width="{w}" height="{STORE_H}" class="store {name}" data-store="{name}" data-count="{count}"/><text x="{}" y="{}" class="count"><tspan class="store-name" data-store="{name}">{}</tspan>: {count}</text>"#,
            w / 2,
            y + STORE_H / 2 + 1,
            escape(words)
        );
    }
    out.push_str("</svg>");
    out
}
