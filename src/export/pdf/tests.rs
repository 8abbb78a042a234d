use super::*;

#[test]
fn remarks_that_do_not_fit_continue_on_a_page_with_the_signatures_last() {
    use crate::export::scoresheet::{Header, Remark, RemarkKind};
    let remark = |number| Remark {
        number,
        kind: RemarkKind::Irregularity,
        ply: Some(3),
        article: Some("7.4".into()),
        title: "Displaced pieces".into(),
        text: "before move 2 (White); e2 → empty; resolved".into(),
    };
    // An English sheet with no header and no moves: only the remarks take room.
    let mut sheet = Scoresheet {
        header: Header::default(),
        rows: Vec::new(),
        ..sample(crate::lang::Lang::En)
    };
    // The text of each page, as drawn.
    let pages = |s: &Scoresheet| -> Vec<String> {
        draw(s)
            .iter()
            .map(|c| {
                let lines: Vec<String> = c
                    .ops
                    .iter()
                    .filter_map(|op| match op {
                        Op::Text { line, .. } => Some(line.text()),
                        _ => None,
                    })
                    .collect();
                lines.join("\n")
            })
            .collect()
    };
    sheet.remarks = (1..=3).map(remark).collect();
    let p = pages(&sheet);
    assert_eq!(p.len(), 1);
    assert!(p[0].contains("[3] Art. 7.4") && p[0].contains("Signature of Arbiter"));
    sheet.remarks = (1..=40).map(remark).collect();
    let p = pages(&sheet);
    assert_eq!(p.len(), 2, "the remarks continue on a second page");
    let last = &p[1];
    assert!(last.contains("[40] Art. 7.4") && last.contains("Signature of Arbiter"));
    assert!(
        last.contains("e2 → empty"),
        "the arrow is drawn, not replaced"
    );
    assert!(!p[0].contains("Signature of"));
    let bytes = pdf(&sheet).unwrap();
    assert!(bytes.starts_with(b"%PDF-"));
}

/// A player's whole name, title and rating are drawn, smaller, when they do not fit the header's
/// half line at 10 pt (a TRF's name may be 33 characters long): never cut off.
#[test]
fn a_long_name_in_the_header_is_drawn_whole_and_smaller() {
    let mut sheet = sample(crate::lang::Lang::En);
    let long = "Ғалымжанова-Құрманбекова, Іңкәр Ш"; // 33 characters, as TRF-16 allows.
    assert_eq!(long.chars().count(), 33);
    for (side, name) in [
        (&mut sheet.header.white, long),
        (&mut sheet.header.black, "Ғалымжанова, Іңкәр Шаһизада"),
    ] {
        if let Some(p) = side.as_mut() {
            p.name = name.into();
            p.title = Some("WGM".into());
            p.elo = Some(2200);
        }
    }
    let pages = draw(&sheet);
    let lines: Vec<&Line> = pages[0]
        .ops
        .iter()
        .filter_map(|op| match op {
            Op::Text { line, .. } => Some(line),
            _ => None,
        })
        .collect();
    for name in [long, "Ғалымжанова, Іңкәр Шаһизада"] {
        let line = lines
            .iter()
            .find(|l| l.text().contains(name))
            .unwrap_or_else(|| panic!("{name} whole"));
        let text = line.text();
        assert!(
            text.contains("WGM") && text.contains("(2200)") && !text.contains("..."),
            "{text}"
        );
        assert!(line.size < 10.0 && line.size >= VALUE_MIN, "{}", line.size);
        assert!(
            line.width <= (WIDTH - 2.0 * MARGIN) / 2.0 - 70.0,
            "{}",
            line.width
        );
    }
    // A name that fits stays at 10 pt.
    let event = lines.iter().find(|l| l.text() == "Кубок Алматы").unwrap();
    assert_eq!(event.size, 10.0);
}

#[test]
fn a_persian_sheets_result_remarks_and_signatures_run_from_the_right() {
    use crate::{
        export::scoresheet::{Remark, RemarkKind},
        lang::Lang,
    };
    let mut sheet = sample(Lang::Fa);
    sheet.termination = Some("resignation".into());
    sheet.remarks = (1..=40)
        .map(|number| Remark {
            number,
            kind: RemarkKind::Irregularity,
            ply: Some(3),
            article: Some("7.4".into()),
            title: Lang::Fa.text("remark.displaced").into(),
            // Long enough to take two lines.
            text: "پیش از حرکت 2 (سفید)؛ e2 → خالی؛ برطرف شد؛ داور وضعیت را بازگرداند و بازی ادامه یافت؛ "
                .repeat(2),
        })
        .collect();
    let pages = draw(&sheet);
    assert!(pages.len() > 1, "the remarks continue on further pages");
    let right = |op: &Op| match op {
        Op::Text { x, line, .. } => Some((line.text(), x + line.width)),
        _ => None,
    };
    let texts: Vec<(String, f32)> = pages
        .iter()
        .flat_map(|p| p.ops.iter().filter_map(right))
        .collect();
    let ends = |pick: &dyn Fn(&str) -> bool| -> Vec<f32> {
        texts
            .iter()
            .filter(|(t, _)| pick(t))
            .map(|(_, r)| *r)
            .collect()
    };
    let at_margin = |edges: Vec<f32>, from: f32| {
        assert!(!edges.is_empty(), "{texts:?}");
        for edge in edges {
            assert!(close(edge, WIDTH - from), "{edge} for {from}");
        }
    };
    // Lines are compared by a word of theirs: their runs are drawn right to left.
    at_margin(ends(&|t| t.contains(Lang::Fa.text("sheet.result"))), MARGIN);
    at_margin(ends(&|t| t == "1-0"), MARGIN + 44.0);
    // Each remark's first line from the margin, its continuation indented from it.
    let article = "ماده";
    at_margin(ends(&|t| t.contains(article)), MARGIN);
    at_margin(
        ends(&|t| t.contains("داور") && !t.contains(article) && !t.contains("امضای")),
        MARGIN + 10.0,
    );
    // The continuation's heading, and the signatures on the last page, White's rightmost.
    at_margin(ends(&|t| t.contains("یادداشت")), MARGIN);
    let last: Vec<(String, f32)> = pages[pages.len() - 1]
        .ops
        .iter()
        .filter_map(right)
        .collect();
    let signature = Lang::Fa.fill("sheet.signature", &[("who", Lang::Fa.text("sheet.white"))]);
    assert!(
        last.iter()
            .any(|(t, r)| *t == signature && close(*r, WIDTH - MARGIN))
    );
    assert!(
        !pages[0]
            .ops
            .iter()
            .filter_map(right)
            .any(|(t, _)| t == signature)
    );
    assert!(pdf(&sheet).unwrap().starts_with(b"%PDF-"));
}

/// A sheet of three plies with clocks and every header field, in `lang`.
fn sample(lang: crate::lang::Lang) -> Scoresheet {
    use crate::export::scoresheet::{Header, Row};
    let cell = |ply, text: &str| {
        Some(Cell {
            ply,
            text: text.into(),
            clock: Some(format!("1:29:5{ply}")),
            time_trouble: false,
            remarks: Vec::new(),
        })
    };
    let player = |name: &str, title: &str, elo| PlayerRecord {
        name: name.into(),
        title: Some(title.into()),
        elo: Some(elo),
        ..PlayerRecord::default()
    };
    Scoresheet {
        kind: crate::game::Kind::Chess,
        header: Header {
            game_id: 7,
            event: Some("Кубок Алматы".into()),
            site: Some("Алматы".into()),
            round: Some("3".into()),
            board: Some("4".into()),
            date: Some("2026.12.04".into()),
            white: Some(player("پرویز چمران", "GM", 2760)),
            black: Some(player("Carlsen, Magnus", "GM", 2830)),
            time_control: Some("90+30".into()),
        },
        rows: vec![
            Row {
                number: 1,
                white: cell(1, "e4"),
                black: cell(2, "c5"),
            },
            Row {
                number: 2,
                white: cell(3, "Nf3"),
                black: None,
            },
        ],
        moves_per_page: 60,
        remarks: Vec::new(),
        result: "1-0".into(),
        termination: None,
        has_time_trouble: false,
        pieces: crate::export::notation::PieceSymbols::ENGLISH,
        lang,
    }
}

/// The first text drawn as `text`: its left edge, baseline and width.
fn placed(ops: &[Op], text: &str) -> (f32, f32, f32) {
    placed_where(ops, |t| t == text).unwrap_or_else(|| panic!("{text:?} is drawn"))
}

/// The first text drawn that `pick` takes: its left edge, baseline and width.
fn placed_where(ops: &[Op], pick: impl Fn(&str) -> bool) -> Option<(f32, f32, f32)> {
    ops.iter().find_map(|op| match op {
        Op::Text { x, y, line } if pick(&line.text()) => Some((*x, *y, line.width)),
        _ => None,
    })
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 0.01
}

#[test]
fn a_persian_sheet_is_the_english_one_mirrored() {
    use crate::lang::Lang;
    let (en, fa) = (draw(&sample(Lang::En)), draw(&sample(Lang::Fa)));
    assert_eq!((en.len(), fa.len()), (1, 1));
    let (en, fa) = (&en[0].ops, &fa[0].ops);
    assert_eq!(en.len(), fa.len(), "the same drawing, one layout");
    let mut mirrored = Vec::new();
    for (e, f) in en.iter().zip(fa) {
        match (e, f) {
            (
                Op::Stroke { from, to, width },
                Op::Stroke {
                    from: f_from,
                    to: f_to,
                    width: f_width,
                },
            ) => {
                assert!(close(f_from.0, WIDTH - from.0) && close(f_to.0, WIDTH - to.0));
                assert_eq!((f_from.1, f_to.1, f_width), (from.1, to.1, width));
            }
            (Op::Shade { rect, grey }, Op::Shade { rect: r, grey: g }) => {
                assert!(close(r[0], WIDTH - rect[0] - rect[2]));
                assert_eq!((&r[1..], g), (&rect[1..], grey));
            }
            (
                Op::Text { x, y, line },
                Op::Text {
                    x: fx,
                    y: fy,
                    line: fl,
                },
            ) => {
                assert_eq!(y, fy, "{} and {}: the same line", line.text(), fl.text());
                if line.text() == fl.text() {
                    // The same box, mirrored: moves, clocks, numbers, what was written.
                    assert!(close(*fx, WIDTH - x - line.width), "{}", line.text());
                    mirrored.push(line.text());
                }
            }
            _ => panic!("the same kind of drawing in the same place of both"),
        }
    }
    for drawn in [
        "e4",
        "c5",
        "Nf3",
        "1:29:51",
        "1:29:52",
        "1",
        "2",
        "1-0",
        "Кубок Алматы",
        "3",
        "90+30",
    ] {
        assert!(
            mirrored.iter().any(|m| m == drawn),
            "{drawn} in {mirrored:?}"
        );
    }
}

#[test]
fn labels_stand_at_the_start_edge_the_right_on_a_persian_sheet() {
    use crate::lang::Lang;
    let half = (WIDTH - 2.0 * MARGIN) / 2.0;
    // English as it was: the labels, title and the first column at the left.
    let en = &draw(&sample(Lang::En))[0].ops;
    let (x, _, _) = placed(en, "Scoresheet");
    assert_eq!(x, MARGIN);
    assert_eq!(placed(en, "Event").0, MARGIN);
    assert_eq!(placed(en, "Site").0, MARGIN + half);
    let (x, _, w) = placed(en, "Game 7 · sheet 1 of 1");
    assert!(close(x + w, WIDTH - MARGIN));
    assert_eq!(placed(en, "e4").0, MARGIN + NO_WIDTH + 3.0);
    let (x, _, w) = placed(en, "1");
    assert!(close(x + w, MARGIN + NO_WIDTH - 3.0));
    assert!(placed(en, "c5").0 > placed(en, "e4").0);
    assert_eq!(placed(en, "4 December 2026").0, MARGIN + 64.0);
    assert_eq!(
        placed(
            en,
            &format!("Signature of {}", Lang::En.text("sheet.white"))
        )
        .0,
        MARGIN
    );

    // Persian: the same places from the right.
    let fa = &draw(&sample(Lang::Fa))[0].ops;
    let right = |text: &str| {
        let (x, _, w) = placed(fa, text);
        x + w
    };
    assert!(close(right(Lang::Fa.text("sheet.title")), WIDTH - MARGIN));
    assert!(close(right(Lang::Fa.text("sheet.event")), WIDTH - MARGIN));
    assert!(close(
        right(Lang::Fa.text("sheet.site")),
        WIDTH - MARGIN - half
    ));
    // The date, 13 Azar 1405, right to left: the day at its right.
    let (x, _, w) = placed_where(fa, |t| t.contains("آذر")).expect("the date");
    assert!(close(x + w, WIDTH - MARGIN - 64.0));
    // The page's number (its runs drawn right to left) at the left.
    let (x, _, _) = placed_where(fa, |t| t.contains('·')).expect("the page's number");
    assert!(close(x, MARGIN));
    // The number column rightmost, then White's cell, then Black's.
    assert!(close(placed(fa, "1").0, WIDTH - MARGIN - NO_WIDTH + 3.0));
    assert!(close(right("e4"), WIDTH - MARGIN - NO_WIDTH - 3.0));
    assert!(placed(fa, "c5").0 < placed(fa, "e4").0);
    // A clock at the cell's other end, on its left.
    assert!(placed(fa, "1:29:51").0 < placed(fa, "e4").0);
    let signature = Lang::Fa.fill("sheet.signature", &[("who", Lang::Fa.text("sheet.white"))]);
    assert!(close(right(&signature), WIDTH - MARGIN));
    // The players' title, name and rating from the right, whichever way the name runs.
    assert!(placed(fa, "(2760) پرویز چمران GM").0 > WIDTH / 2.0);
    assert!(placed(fa, "(2830) Carlsen, Magnus GM").0 < WIDTH / 2.0);
    assert!(placed(en, "GM پرویز چمران (2760)").0 < WIDTH / 2.0);
}

#[test]
fn the_number_columns_head_fits_its_column_in_every_language() {
    for lang in crate::lang::Lang::ALL {
        let no = lang.text("sheet.number");
        let size = fitting(no, NO_WIDTH - 5.0);
        assert!(
            width(no, Weight::Bold, size) <= NO_WIDTH - 5.0 + 0.01,
            "{lang}: {no:?} at {size} pt"
        );
    }
    assert_eq!(fitting("No.", NO_WIDTH - 5.0), 9.0);
}

#[test]
fn long_text_is_wrapped_and_cut_to_its_room() {
    let s = "a b c ".repeat(100);
    let lines = wrap(&s, 8.0, 200.0);
    assert!(lines.len() > 3);
    assert!(
        lines
            .iter()
            .all(|l| width(l, Weight::Regular, 8.0) <= 200.0)
    );
    for name in ["Magnus Carlsen-Nepomniachtchi", "علی رضا فیروزجا و دیگران"] {
        let cut = fit(name, Weight::Regular, 10.0, 60.0);
        assert!(cut.ends_with("...") && width(&cut, Weight::Regular, 10.0) <= 60.0);
        let longer = format!(
            "{}...",
            name.chars()
                .take(cut.chars().count() - 2)
                .collect::<String>()
        );
        assert!(
            width(&longer, Weight::Regular, 10.0) > 60.0,
            "{cut}: the longest"
        );
    }
    assert_eq!(fit("Nf3", Weight::Regular, 10.0, 60.0), "Nf3");
}

#[test]
fn the_name_is_an_isolate_between_title_and_rating() {
    let p = PlayerRecord {
        name: "فیروزجا، علی رضا".into(),
        elo: Some(2760),
        title: Some("GM".into()),
        ..PlayerRecord::default()
    };
    assert_eq!(
        player(&p),
        "\u{2068}GM\u{2069} \u{2068}فیروزجا، علی رضا\u{2069} \u{2068}(2760)\u{2069}"
    );
    let l = Line::new(&player(&p), Weight::Regular, 10.0, Dir::Ltr);
    assert!(l.text().starts_with("GM ") && l.text().ends_with(" (2760)"));
    let r = Line::new(&player(&p), Weight::Regular, 10.0, Dir::Rtl);
    assert!(r.text().starts_with("(2760) ") && r.text().ends_with(" GM"));
}

#[test]
fn no_two_texts_on_a_line_overlap_in_any_language() {
    use crate::lang::Lang;
    for lang in Lang::ALL {
        let mut sheet = sample(lang);
        sheet.termination = Some("resignation".into());
        let pages = draw(&sheet);
        let texts: Vec<(String, f32, f32, f32)> = pages[0]
            .ops
            .iter()
            .filter_map(|op| match op {
                Op::Text { x, y, line } => Some((line.text(), *x, *y, *x + line.width)),
                _ => None,
            })
            .collect();
        for (i, a) in texts.iter().enumerate() {
            for b in &texts[i + 1..] {
                let same_line = (a.2 - b.2).abs() < 4.0;
                let apart = a.3 <= b.1 + 0.5 || b.3 <= a.1 + 0.5;
                assert!(
                    !same_line || apart,
                    "{lang}: {:?} ({:.1}..{:.1}) runs into {:?} ({:.1}..{:.1})",
                    a.0,
                    a.1,
                    a.3,
                    b.0,
                    b.1,
                    b.3
                );
            }
        }
    }
}
