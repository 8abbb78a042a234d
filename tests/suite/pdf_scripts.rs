//! The PDF scoresheet in every script of the events (issue 33, item 1): corpus games recorded
//! through the replay path on numbered boards of a round, whose pairings (imported through the
//! real CSV parser) carry names in Russian, Ukrainian, Kazakh, Kyrgyz and Mongolian Cyrillic and
//! in Persian.
//! The PDFs are read back with Debian's poppler-utils: `pdftotext` gives back every name and
//! label, `pdffonts` shows the fonts embedded and subset, and `pdftoppm` renders pages to PNG
//! under `target/test-artifacts/pdf/` (look at them: the Persian joined and right to left, the
//! figurines drawn; `sheet-fa.png`, the Persian sheet laid out right to left). The round PDF and
//! the refusal of a name no font prints go through the real CLI binary. The games are dated,
//! and each sheet writes the date in its language's form.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use boardscribe::{
    arbiter::{Laws, LawsConfig, LawsSetup},
    emulator::{self, EmulatorOptions, PgnGame},
    export::{self, ExportOptions, Format, Notation, SheetOptions},
    game::Kind,
    lang::Lang,
    pairings::{self, PairingsFormat},
    replay::replay_reader_with,
    store::{GameId, GameRecord, RoundInfo, Store},
};

const BIN: &str = env!("CARGO_BIN_EXE_boardscribe");

/// The event, in Kazakh: its letters go through the header too.
const EVENT: &str = "Қазақстан кубогы 2026";
const SITE: &str = "Алматы";
/// The day the games are played, as the store keeps it (13 Azar 1405 in Iran's calendar).
const DATE: &str = "2026.12.04";

/// Each board's pairing: (white, black) as `title name (rating)` pieces.
struct Board {
    white: (&'static str, &'static str, u32),
    black: (&'static str, &'static str, u32),
}

const BOARDS: [Board; 6] = [
    // Russian.
    Board {
        white: ("GM", "Непомнящий, Ян", 2758),
        black: ("GM", "Карякин, Сергей", 2747),
    },
    // Kazakh and Mongolian.
    Board {
        white: ("IM", "Ақжол Ғалымұлы", 2451),
        black: ("WGM", "Өлзий Үүрөө", 2380),
    },
    // Kyrgyz and Kazakh.
    Board {
        white: ("FM", "Жаңыл Қасымова", 2205),
        black: ("CM", "Іңкәр Һашимова", 2150),
    },
    // Persian.
    Board {
        white: ("GM", "پرویز چمران", 2760),
        black: ("IM", "ژاله گلکار یزدی", 2401),
    },
    // The capitals that begin Kazakh words.
    Board {
        white: ("IM", "Ұлан Әбдіғани", 2302),
        black: ("FM", "Ңоян Шаһмардан", 2288),
    },
    // Ukrainian.
    Board {
        white: ("GM", "Їжакевич, Іван", 2581),
        black: ("WIM", "Ґудзь, Євгенія", 2310),
    },
];

/// The letters of the Kazakh, Kyrgyz and Mongolian alphabets beyond Russian's.
const EXTRA_CYRILLIC: &str = "ӨөҮүҢңҰұҚқҒғҺһӘәІі";
/// The capitals of the Ukrainian alphabet beyond Russian's.
const UKRAINIAN: &str = "ЇІЄҐ";
/// The Persian letters beyond Arabic's.
const PERSIAN: &str = "پچژگکی";

fn corpus(file: &str) -> Vec<PgnGame> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../shared/corpus/chess/{file}"));
    let text = std::fs::read_to_string(path).unwrap();
    emulator::games_from_pgn(&text).unwrap()
}

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts/pdf");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The pairings file of [`BOARDS`], as an arbiter would import it.
fn pairings_csv() -> String {
    let mut csv = String::from("board,white,black,white_title,black_title,white_elo,black_elo\n");
    for (i, b) in BOARDS.iter().enumerate() {
        csv.push_str(&format!(
            "{},\"{}\",\"{}\",{},{},{},{}\n",
            i + 1,
            b.white.1,
            b.black.1,
            b.white.0,
            b.black.0,
            b.white.2,
            b.black.2
        ));
    }
    csv
}

/// A database of round 1 with `games` played on boards numbered 1, 2, ... (a game each), through
/// the replay path, and the pairings of [`BOARDS`] imported for the first boards.
fn round_db(dir: &Path, games: &[PgnGame]) -> (PathBuf, Vec<GameRecord>) {
    let db = dir.join("event.db");
    let mut store = Store::open(&db).unwrap();
    store
        .set_round(&RoundInfo {
            event: EVENT.into(),
            site: SITE.into(),
            round: 1,
        })
        .unwrap();
    let laws = LawsSetup {
        cfg: LawsConfig::for_edition(Laws::Fide2023),
        ..LawsSetup::default()
    };
    // Boards in reverse order of their numbers, so that the round PDF has to sort them.
    for (i, game) in games.iter().enumerate().rev() {
        let name = format!("hall {}", i + 1);
        let board = store.board(&name, Kind::Chess).unwrap();
        store.set_board_number(board, i as u32 + 1).unwrap();
        let script = emulator::script_pgn(game, &EmulatorOptions::default()).unwrap();
        let text = script.to_capture_text();
        replay_reader_with(
            &mut store,
            "corpus",
            &name,
            text.as_bytes(),
            &laws,
            &mut |_, _| {},
        )
        .unwrap();
    }
    let rows = pairings::parse(&pairings_csv(), PairingsFormat::Csv, 1).unwrap();
    store.import_pairings(1, &rows).unwrap();
    for g in store.round_games(1).unwrap() {
        store.set_game_date(g.id, DATE).unwrap();
    }
    let mut recorded = store.round_games(1).unwrap();
    recorded.sort_by_key(|g| g.board_no);
    assert_eq!(recorded.len(), games.len());
    for (g, game) in recorded.iter().zip(games) {
        assert_eq!(g.moves.len(), game.moves.len(), "recorded whole");
    }
    (db, recorded)
}

/// The first `n` corpus games of 30 to 58 moves (one sheet each).
fn short_games(n: usize) -> Vec<PgnGame> {
    let games: Vec<PgnGame> = corpus("tatamast22.pgn")
        .into_iter()
        .filter(|g| (60..=116).contains(&g.moves.len()))
        .take(n)
        .collect();
    assert_eq!(games.len(), n);
    games
}

/// `pdftotext` of `pdf` (pages `first..=last`, all when `None`) in its reading order (the
/// default mode), without the embedding marks (RLE … PDF) it puts around a right-to-left
/// stretch. This is the mode that gives logical order: poppler orders the words of a
/// right-to-left stretch and the characters of each word as they are read. `-raw` (content
/// stream order) turns each right-to-left word's characters into logical order but keeps the
/// words in the order they are drawn, left to right (`چمران پرویز` for `پرویز چمران`).
pub(crate) fn pdftotext(pdf: &Path, pages: Option<(usize, usize)>) -> String {
    let mut cmd = Command::new("pdftotext");
    cmd.args(["-enc", "UTF-8"]);
    if let Some((first, last)) = pages {
        cmd.args(["-f", &first.to_string(), "-l", &last.to_string()]);
    }
    let out = cmd
        .arg(pdf)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils) is installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .chars()
        .filter(|c| !('\u{202a}'..='\u{202e}').contains(c))
        .collect()
}

/// A word of a page as `pdftotext -bbox` places it: its left and right edges, its vertical
/// middle, and its characters in the order their glyphs are drawn (left to right on the page).
#[derive(Debug)]
struct Word {
    x: f32,
    right: f32,
    y: f32,
    text: String,
}

fn words(pdf: &Path, page: usize) -> Vec<Word> {
    let out = Command::new("pdftotext")
        .args(["-bbox", "-enc", "UTF-8"])
        .args(["-f", &page.to_string(), "-l", &page.to_string()])
        .arg(pdf)
        .arg("-")
        .output()
        .unwrap();
    assert!(out.status.success());
    let html = String::from_utf8(out.stdout).unwrap();
    let attr = |w: &str, name: &str| -> f32 {
        let at = w.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        w[at..at + w[at..].find('"').unwrap()].parse().unwrap()
    };
    html.split("<word ")
        .skip(1)
        .map(|w| {
            let text = &w[w.find('>').unwrap() + 1..w.find("</word>").unwrap()];
            Word {
                x: attr(w, "xMin"),
                right: attr(w, "xMax"),
                y: (attr(w, "yMin") + attr(w, "yMax")) / 2.0,
                text: text
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&amp;", "&"),
            }
        })
        .collect()
}

/// The words of the header line that begins with the label `White` (in `lang`), left to right.
fn players_line(pdf: &Path, page: usize, lang: Lang) -> Vec<String> {
    let words = words(pdf, page);
    let label = words
        .iter()
        .filter(|w| read(&w.text) == lang.text("sheet.white"))
        .min_by(|a, b| a.y.total_cmp(&b.y))
        .expect("the White label");
    let mut line: Vec<&Word> = words
        .iter()
        .filter(|w| (w.y - label.y).abs() < 3.0)
        .collect();
    line.sort_by(|a, b| a.x.total_cmp(&b.x));
    line.iter().map(|w| w.text.clone()).collect()
}

/// What [`players_line`] should read for `board`: each label, title, the name's words and the
/// rating in their places; a Persian name right to left (its last word leftmost, each word's
/// glyphs drawn from its last letter).
fn players_drawn(board: &Board, lang: Lang) -> Vec<String> {
    let mut out = Vec::new();
    for (label, (title, name, elo)) in [
        (lang.text("sheet.white"), board.white),
        (lang.text("sheet.black"), board.black),
    ] {
        out.push(label.to_owned());
        out.push(title.to_owned());
        let rtl = name.chars().any(|c| ('\u{600}'..='\u{6ff}').contains(&c));
        let mut words: Vec<String> = name
            .split_whitespace()
            .map(|w| {
                if rtl {
                    w.chars().rev().collect()
                } else {
                    w.to_owned()
                }
            })
            .collect();
        if rtl {
            words.reverse();
        }
        out.extend(words);
        out.push(format!("({elo})"));
    }
    out
}

/// Whether `text` has Arabic-script letters (Persian digits are not letters).
fn is_persian(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_alphabetic() && ('\u{600}'..='\u{6ff}').contains(&c))
}

/// A word in reading order: a Persian word's glyphs are drawn from its last letter.
fn read(word: &str) -> String {
    if is_persian(word) {
        word.chars().rev().collect()
    } else {
        word.to_owned()
    }
}

/// What [`players_line`] reads on a right-to-left sheet, left to right: Black's pair, then
/// White's, each its rating, the name, the title and the label (from the right: label, title,
/// name, rating), a Persian name's words right to left, a Latin one's left to right.
fn players_drawn_rtl(board: &Board, lang: Lang) -> Vec<String> {
    let mut out = Vec::new();
    for (label, (title, name, elo)) in [
        (lang.text("sheet.black"), board.black),
        (lang.text("sheet.white"), board.white),
    ] {
        out.push(format!("({elo})"));
        let mut words: Vec<String> = name.split_whitespace().map(read).collect();
        if is_persian(name) {
            words.reverse();
        }
        out.extend(words);
        out.push(title.to_owned());
        out.push(read(label));
    }
    out
}

/// The page's width and margin, in points (A4, as the sheet draws it).
const PAGE_WIDTH: f32 = 595.28;
const MARGIN: f32 = 40.0;

/// The Persian sheet `pdf` (of `board`'s game `g`) runs right to left: the title at the right
/// and the page's number at the left; each header label at the right of its line, the date
/// in Iran's calendar beside it; the moves still SAN, read left to right, the first column
/// on the right with its number rightmost, then White's move, then Black's; and the players'
/// title, name and rating from the right.
fn assert_right_to_left(pdf: &Path, board: &Board, g: &GameRecord) {
    let lang = Lang::Fa;
    let words = words(pdf, 1);
    let half = (PAGE_WIDTH - 2.0 * MARGIN) / 2.0;
    let near = |a: f32, b: f32| (a - b).abs() < 1.0;
    // A word read as `text` whose right edge is at `right`.
    let ends_at = |text: &str, right: f32| {
        assert!(
            words
                .iter()
                .any(|w| read(&w.text) == text && near(w.right, right)),
            "{text:?} ending at {right}: {:?}",
            words
                .iter()
                .filter(|w| read(&w.text) == text)
                .collect::<Vec<_>>()
        );
    };
    let first_word = |key: &'static str| lang.text(key).split_whitespace().next().unwrap();
    ends_at(first_word("sheet.title"), PAGE_WIDTH - MARGIN);
    assert!(
        words.iter().any(|w| near(w.x, MARGIN) && w.y < 70.0),
        "the page's number at the left margin"
    );
    for key in ["sheet.event", "sheet.round", "sheet.date", "sheet.white"] {
        ends_at(first_word(key), PAGE_WIDTH - MARGIN);
    }
    for key in [
        "sheet.site",
        "sheet.board",
        "sheet.time_control",
        "sheet.black",
    ] {
        ends_at(first_word(key), PAGE_WIDTH - MARGIN - half);
    }
    // The result's label, its colon after it: at its left.
    ends_at(
        &format!("{}:", lang.text("sheet.result")),
        PAGE_WIDTH - MARGIN,
    );
    // 13 Azar 1405 from the right (2 points inside its line): day, month, year.
    let date = lang.stored_date(DATE);
    let date: Vec<&str> = date.split(' ').collect();
    let day = words
        .iter()
        .find(|w| w.text == date[0] && near(w.right, PAGE_WIDTH - MARGIN - 64.0))
        .unwrap_or_else(|| panic!("the day {} beside its label", date[0]));
    let mut drawn: Vec<&Word> = words
        .iter()
        .filter(|w| (w.y - day.y).abs() < 3.0 && w.x > PAGE_WIDTH / 2.0 && w.right <= day.right)
        .collect();
    drawn.sort_by(|a, b| b.x.total_cmp(&a.x));
    let drawn: Vec<String> = drawn.iter().map(|w| read(&w.text)).collect();
    assert_eq!(drawn, date, "read from the right");

    // Every move as SAN, its characters left to right.
    for m in &g.moves {
        assert!(
            words.iter().any(|w| w.text == m.notation),
            "{} on the Persian sheet",
            m.notation
        );
    }
    // Row 1 of the first column, on the right: its number, White's move, Black's move.
    let on_right = |text: &str| {
        words
            .iter()
            .filter(|w| w.text == text && w.x > PAGE_WIDTH / 2.0)
            .min_by(|a, b| a.y.total_cmp(&b.y))
            .unwrap_or_else(|| panic!("{text} in the first column"))
    };
    let white = on_right(&g.moves[0].notation);
    let row: Vec<&Word> = words
        .iter()
        .filter(|w| (w.y - white.y).abs() < 3.0)
        .collect();
    let at = |text: &str| row.iter().find(|w| w.text == text).map(|w| w.x).unwrap();
    assert!(
        at("1") > white.x,
        "the number right of White's move: {row:?}"
    );
    assert!(
        at(&g.moves[1].notation) < white.x && at(&g.moves[1].notation) > PAGE_WIDTH / 2.0,
        "Black's move left of White's: {row:?}"
    );

    // The players: Black's at the left, White's at the right, each from the right.
    assert_eq!(players_line(pdf, 1, lang), players_drawn_rtl(board, lang));
}

/// The rows of `pdffonts`: (name, type, embedded, subset, unicode).
fn pdffonts(pdf: &Path) -> Vec<(String, String, String, String, String)> {
    let out = Command::new("pdffonts")
        .arg(pdf)
        .output()
        .expect("pdffonts (poppler-utils) is installed");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .skip(2)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // name type... encoding emb sub uni object ID: the last five are fixed.
            let n = f.len();
            (
                f[0].to_owned(),
                f[1..n - 6].join(" "),
                f[n - 5].to_owned(),
                f[n - 4].to_owned(),
                f[n - 3].to_owned(),
            )
        })
        .collect()
}

fn pages_of(pdf: &Path) -> usize {
    let out = Command::new("pdfinfo").arg(pdf).output().unwrap();
    let info = String::from_utf8(out.stdout).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Renders page `page` of `pdf` to `target/test-artifacts/pdf/{name}.png`.
fn render(pdf: &Path, page: usize, name: &str) -> PathBuf {
    let stem = artifacts().join(name);
    let status = Command::new("pdftoppm")
        .args(["-png", "-r", "110", "-singlefile"])
        .args(["-f", &page.to_string(), "-l", &page.to_string()])
        .arg(pdf)
        .arg(&stem)
        .status()
        .unwrap();
    assert!(status.success());
    let png = stem.with_extension("png");
    assert!(
        std::fs::metadata(&png).unwrap().len() > 10_000,
        "a page drawn"
    );
    println!("rendered: {}", png.display());
    png
}

/// Every label a chess sheet in `lang` prints on its first page, and the date in the
/// language's form. The page's number, the date and the result's colon only for a
/// left-to-right language: poppler orders a right-to-left line's digits, and a colon drawn at
/// its left end, its own way ([`assert_right_to_left`] reads those from their places).
fn labels(g: &GameRecord, lang: Lang) -> Vec<String> {
    let mut l: Vec<String> = [
        "sheet.title",
        "sheet.event",
        "sheet.site",
        "sheet.round",
        "sheet.board",
        "sheet.date",
        "sheet.time_control",
        "sheet.white",
        "sheet.black",
        "sheet.number",
    ]
    .map(|k| lang.text(k).to_owned())
    .to_vec();
    for who in ["sheet.white", "sheet.black", "sheet.arbiter"] {
        l.push(lang.fill("sheet.signature", &[("who", lang.text(who))]));
    }
    if lang.rtl() {
        l.push(lang.text("sheet.result").to_owned());
    } else {
        l.push(format!("{}:", lang.text("sheet.result")));
        l.push(lang.stored_date(DATE));
        let id = g.id.0.to_string();
        l.push(lang.fill(
            "sheet.page",
            &[("game", &id), ("page", "1"), ("pages", "1")],
        ));
    }
    l
}

#[test]
fn names_in_every_script_and_every_label_read_back_from_the_pdf() {
    let all: String = BOARDS.iter().flat_map(|b| [b.white.1, b.black.1]).collect();
    for c in EXTRA_CYRILLIC
        .chars()
        .chain(UKRAINIAN.chars())
        .chain(PERSIAN.chars())
    {
        assert!(all.contains(c), "the test names hold {c}");
    }
    let dir = tempfile::tempdir().unwrap();
    let (db, games) = round_db(dir.path(), &short_games(BOARDS.len()));
    let store = Store::open_read_only(&db).unwrap();
    for (i, (b, g)) in BOARDS.iter().zip(&games).enumerate() {
        let sheet = SheetOptions {
            notation: if i == 3 {
                Notation::Figurine
            } else {
                Notation::San
            },
            ..SheetOptions::default()
        };
        let bytes = export::export_bytes(
            &store,
            Format::Pdf,
            Some(g.id),
            ExportOptions::default(),
            &sheet,
        )
        .unwrap();
        let pdf = artifacts().join(format!("board-{}.pdf", i + 1));
        std::fs::write(&pdf, &bytes).unwrap();

        // Every label and name, and the event, in the text poppler reads: in logical order.
        let text = pdftotext(&pdf, None);
        for label in labels(g, Lang::En) {
            assert!(text.contains(&label), "{label:?} in {text}");
        }
        for s in [EVENT, SITE, b.white.1, b.black.1] {
            assert!(text.contains(s), "{s:?} in board {}: {text}", i + 1);
        }
        // Nothing replaced.
        assert!(!text.contains('?') && !text.contains("[U+"), "{text}");
        // Every move as the sheet writes it (figurines on board 4).
        let tokens: Vec<&str> = text.split_whitespace().collect();
        for m in &g.moves {
            let written = if sheet.notation == Notation::Figurine {
                export::scoresheet::to_figurine(&m.notation)
            } else {
                m.notation.clone()
            };
            assert!(
                tokens.contains(&written.as_str()),
                "{written} in board {}",
                i + 1
            );
        }
        // Title, name and rating in their places on the page, a Persian name right to left.
        assert_eq!(
            players_line(&pdf, 1, Lang::En),
            players_drawn(b, Lang::En),
            "board {}",
            i + 1
        );

        // The fonts: all embedded as subsets, with a Unicode map.
        let fonts = pdffonts(&pdf);
        assert!(fonts.len() >= 2, "{fonts:?}");
        for (name, kind, emb, sub, uni) in &fonts {
            let (tag, _) = name.split_once('+').expect("a subset tag");
            assert!(
                tag.len() == 6 && tag.chars().all(|c| c.is_ascii_uppercase()),
                "{name}"
            );
            assert_eq!(
                (emb.as_str(), sub.as_str(), uni.as_str()),
                ("yes", "yes", "yes")
            );
            assert!(kind.contains("CID TrueType"), "{kind}");
        }
        let names: Vec<&str> = fonts
            .iter()
            .map(|f| f.0.split('+').nth(1).unwrap())
            .collect();
        assert!(names.contains(&"NotoSans-Regular") && names.contains(&"NotoSans-Bold"));
        if i == 3 {
            assert!(names.contains(&"NotoSansArabic-Regular"), "{names:?}");
            assert!(
                names.contains(&"DejaVuSans"),
                "the figurines' font: {names:?}"
            );
            assert!(
                text.contains('♘') || text.contains('♗'),
                "figurines: {text}"
            );
        } else {
            assert!(!names.contains(&"NotoSansArabic-Regular"), "{names:?}");
        }
        render(&pdf, 1, &format!("board-{}", i + 1));
    }
}

/// Game `game`'s PDF sheet in `lang`, written to `pdf` by the CLI.
pub(crate) fn export_sheet(db: &Path, game: GameId, lang: Lang, pdf: &Path) {
    let out = Command::new(BIN)
        .args(["export", "--format", "pdf", "--lang", lang.code(), "--game"])
        .arg(game.0.to_string())
        .arg("--out")
        .arg(pdf)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{lang}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The round's sheets in `lang`, one PDF, written to `pdf` by the CLI.
fn export_round(db: &Path, lang: Lang, pdf: &Path) {
    let status = Command::new(BIN)
        .args([
            "export",
            "--format",
            "pdf",
            "--round",
            "1",
            "--lang",
            lang.code(),
        ])
        .arg("--out")
        .arg(pdf)
        .arg("--db")
        .arg(db)
        .status()
        .unwrap();
    assert!(status.success(), "{lang}");
}

/// Each language's sheet, of the Persian board (names in both directions on one sheet) and of
/// every other board of the round: the Russian and Ukrainian names, and the Kazakh, Kyrgyz and
/// Mongolian ones with their own capitals (Ө Ү Ң Ұ Қ Ғ Һ Ә І), each read back from `pdftotext`
/// exactly, composed, in its place beside its title and rating.
#[test]
fn a_sheet_in_each_language_prints_its_labels_and_every_name() {
    let all: String = BOARDS.iter().flat_map(|b| [b.white.1, b.black.1]).collect();
    for c in "ӨҮҢҰҚҒҺӘІ".chars().chain(UKRAINIAN.chars()) {
        assert!(all.contains(c), "the test names hold {c}");
    }
    let dir = tempfile::tempdir().unwrap();
    let (db, games) = round_db(dir.path(), &short_games(BOARDS.len()));
    // The Persian board: names in both directions on one sheet.
    let (b, g) = BOARDS
        .iter()
        .zip(&games)
        .find(|(b, _)| b.black.1.chars().any(|c| PERSIAN.contains(c)))
        .expect("a board with a Persian name");
    for lang in Lang::ALL {
        let pdf = artifacts().join(format!("sheet-{lang}.pdf"));
        export_sheet(&db, g.id, lang, &pdf);
        let text = pdftotext(&pdf, None);
        for label in labels(g, lang) {
            assert!(text.contains(&label), "{lang}: {label:?} in {text}");
        }
        for s in [EVENT, SITE, b.white.1, b.black.1] {
            assert!(text.contains(s), "{lang}: {s:?} in {text}");
        }
        assert!(
            !text.contains('?') && !text.contains("[U+"),
            "{lang}: {text}"
        );
        if lang != Lang::En {
            for english in ["Scoresheet", "Signature", "Result", "Time control"] {
                assert!(!text.contains(english), "{lang}: {english:?} in {text}");
            }
        }
        if lang.rtl() {
            assert_right_to_left(&pdf, b, g);
        } else {
            assert_eq!(players_line(&pdf, 1, lang), players_drawn(b, lang));
        }
        render(&pdf, 1, &format!("sheet-{lang}"));

        // Every board's sheet in this language: each name exactly as paired.
        let round = artifacts().join(format!("round-1-{lang}.pdf"));
        export_round(&db, lang, &round);
        assert_eq!(pages_of(&round), BOARDS.len(), "{lang}: one sheet a board");
        for (i, (b, g)) in BOARDS.iter().zip(&games).enumerate() {
            let page = i + 1;
            let text = pdftotext(&round, Some((page, page)));
            for label in labels(g, lang) {
                assert!(
                    text.contains(&label),
                    "{lang}, board {page}: {label:?} in {text}"
                );
            }
            for name in [b.white.1, b.black.1] {
                assert!(
                    text.contains(name),
                    "{lang}, board {page}: {name:?} in {text}"
                );
            }
            assert!(
                !text.contains('?') && !text.contains("[U+"),
                "{lang}, board {page}: {text}"
            );
            assert!(
                !text.chars().any(|c| ('\u{300}'..='\u{36f}').contains(&c)),
                "{lang}, board {page}: a letter came back decomposed: {text}"
            );
            let drawn = if lang.rtl() {
                players_drawn_rtl(b, lang)
            } else {
                players_drawn(b, lang)
            };
            assert_eq!(
                players_line(&round, page, lang),
                drawn,
                "{lang}, board {page}"
            );
        }
        render(&round, 2, &format!("round-1-{lang}-board-2"));
    }
}

#[test]
fn the_round_pdf_has_each_boards_sheet_in_board_order() {
    let dir = tempfile::tempdir().unwrap();
    let (db, games) = round_db(dir.path(), &short_games(BOARDS.len()));
    let out = artifacts().join("round-1.pdf");
    let status = Command::new(BIN)
        .args([
            "export",
            "--format",
            "pdf",
            "--round",
            "1",
            "--figurine",
            "--out",
        ])
        .arg(&out)
        .arg("--db")
        .arg(&db)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(pages_of(&out), BOARDS.len(), "one sheet a board");
    for (i, (b, g)) in BOARDS.iter().zip(&games).enumerate() {
        let page = i + 1;
        let text = pdftotext(&out, Some((page, page)));
        assert!(
            text.contains(&Lang::En.fill(
                "sheet.page",
                &[("game", &g.id.0.to_string()), ("page", "1"), ("pages", "1")]
            )),
            "page {page}: {text}"
        );
        assert!(
            text.contains(b.white.1) && text.contains(b.black.1),
            "page {page}: {text}"
        );
        assert_eq!(
            players_line(&out, page, Lang::En),
            players_drawn(b, Lang::En),
            "page {page}"
        );
        let on_page = words(&out, page);
        let label = on_page.iter().find(|w| w.text == "Board").unwrap();
        let number = on_page
            .iter()
            .filter(|w| (w.y - label.y).abs() < 3.0 && w.x > label.x)
            .min_by(|a, b| a.x.total_cmp(&b.x))
            .unwrap();
        assert_eq!(number.text, page.to_string(), "board {page} on page {page}");
    }
    render(&out, 4, "round-1-board-4");

    // The same bytes as the library writes; --game still gives one game.
    let store = Store::open_read_only(&db).unwrap();
    let sheet = SheetOptions {
        notation: Notation::Figurine,
        ..SheetOptions::default()
    };
    let options = ExportOptions {
        round: Some(1),
        ..ExportOptions::default()
    };
    let bytes = export::export_bytes(&store, Format::Pdf, None, options, &sheet).unwrap();
    assert_eq!(bytes, std::fs::read(&out).unwrap());
    let one = Command::new(BIN)
        .args([
            "export",
            "--format",
            "pdf",
            "--game",
            &games[1].id.0.to_string(),
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert!(one.status.success());
    let one_pdf = dir.path().join("one.pdf");
    std::fs::write(&one_pdf, one.stdout).unwrap();
    assert_eq!(pages_of(&one_pdf), 1);
    assert!(pdftotext(&one_pdf, None).contains(BOARDS[1].white.1));

    // Neither --game nor --round, or a round without games: an error that says what to give.
    for (args, says) in [
        (vec!["export", "--format", "pdf"], "--round N"),
        (
            vec!["export", "--format", "pdf", "--round", "9"],
            "round 9 has no games",
        ),
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// All of a round's sheets in one printable HTML page too (issue 34, item 4): each board's
/// sheet, in board order, in the language asked for, titled as the round's.
#[test]
fn the_round_html_has_each_boards_sheet_in_board_order() {
    let dir = tempfile::tempdir().unwrap();
    let (db, games) = round_db(dir.path(), &short_games(BOARDS.len()));
    let out = Command::new(BIN)
        .args([
            "export",
            "--format",
            "scoresheet",
            "--round",
            "1",
            "--lang",
            "ru",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = String::from_utf8(out.stdout).unwrap();
    std::fs::write(artifacts().join("round-1-ru.html"), &html).unwrap();
    assert!(
        html.starts_with("<!DOCTYPE html>\n<html lang=\"ru\""),
        "{html}"
    );
    let title = Lang::Ru.fill("sheet.round_document", &[("round", "1")]);
    assert!(html.contains(&format!("<title>{title}</title>")), "{html}");
    assert_eq!(
        html.matches(r#"<section class="sheet""#).count(),
        BOARDS.len(),
        "one sheet a board"
    );
    let mut from = 0;
    for (b, g) in BOARDS.iter().zip(&games) {
        let label = Lang::Ru.fill(
            "sheet.page",
            &[("game", &g.id.0.to_string()), ("page", "1"), ("pages", "1")],
        );
        let at = from + html[from..].find(&label).expect(&label);
        let next = html[at..]
            .find(r#"<section class="sheet""#)
            .map_or(html.len(), |n| at + n);
        let sheet = &html[from..next];
        assert!(
            sheet.contains(b.white.1) && sheet.contains(b.black.1),
            "game {}: {sheet}",
            g.id.0
        );
        from = next;
    }
    // Neither --game nor --round: an error that says what to give.
    let out = Command::new(BIN)
        .args(["export", "--format", "scoresheet", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--round N"));
}

#[test]
fn a_name_no_font_prints_is_refused_at_import_with_its_line_and_character() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let csv = dir.path().join("round1.csv");
    for (name, code) in [("Li 李", "U+674E"), ("Crab \u{1f980} Rust", "U+1F980")] {
        std::fs::write(
            &csv,
            format!("board,white,black\n1,Әсел Қасымова,پرویز چمران\n2,\"{name}\",Ivanov\n"),
        )
        .unwrap();
        let out = Command::new(BIN)
            .args(["pairings", "--round", "1", "--db"])
            .arg(&db)
            .arg(&csv)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("line 3") && err.contains(code), "{err}");
    }
    // The same file with printable names is imported.
    std::fs::write(
        &csv,
        "board,white,black\n1,Әсел Қасымова,پرویز چمران\n2,Li Chao,Ivanov\n",
    )
    .unwrap();
    let ok = Command::new(BIN)
        .args(["pairings", "--round", "1", "--db"])
        .arg(&db)
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

/// The words of `text`, by letters and digits, each of one script: what a sheet's text is
/// compared by, whatever way a line breaks or poppler places punctuation and spaces around a
/// right-to-left stretch. Joiners and direction marks are dropped (poppler drops the Persian
/// zero-width non-joiner).
pub(crate) fn word_set(text: &str) -> std::collections::BTreeSet<String> {
    let bare: String = text
        .chars()
        .filter(|c| {
            !matches!(
                c,
                '\u{200c}' | '\u{200d}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}'
            )
        })
        .collect();
    let mut out = std::collections::BTreeSet::new();
    for run in bare.split(|c: char| !c.is_alphanumeric()) {
        let mut word = String::new();
        for c in run.chars() {
            if word
                .chars()
                .last()
                .is_some_and(|l| l.is_ascii() != c.is_ascii())
            {
                out.insert(std::mem::take(&mut word));
            }
            word.push(c);
        }
        if !word.is_empty() {
            out.insert(word);
        }
    }
    out
}

/// The irregularities the board showed, with the penalty the Laws provide, written in the
/// sheet's language (issue 33, item 2): an illegal move completed by a clock press and a piece
/// knocked over, scripted on a corpus game and recorded through the replay path, then the
/// sheet printed by the CLI in each language and read back with `pdftotext`. Every word of
/// each remark's detail and ruling, as the language words the record's phrase, is on the
/// sheet; in every language but English, no word of the record's English is.
#[test]
fn the_irregularities_and_their_penalties_read_in_the_sheets_language() {
    use boardscribe::emulator::{IllegalKind, IrregularityScript, ScriptedIrregularity};
    use boardscribe::store::Recorded;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("event.db");
    let game = &short_games(1)[0];
    {
        let mut store = Store::open(&db).unwrap();
        let board = store.board("hall 1", Kind::Chess).unwrap();
        store.set_board_number(board, 1).unwrap();
        let opts = EmulatorOptions {
            irregularities: vec![
                ScriptedIrregularity {
                    before_ply: 9,
                    kind: IrregularityScript::IllegalMove {
                        kind: IllegalKind::WrongShape,
                    },
                },
                ScriptedIrregularity {
                    before_ply: 20,
                    kind: IrregularityScript::Knock { hold_ms: 8_000 },
                },
            ],
            ..EmulatorOptions::default()
        };
        let script = emulator::script_pgn(game, &opts).unwrap();
        let laws = LawsSetup {
            cfg: LawsConfig::for_edition(Laws::Fide2023),
            ..LawsSetup::default()
        };
        replay_reader_with(
            &mut store,
            "corpus",
            "hall 1",
            script.to_capture_text().as_bytes(),
            &laws,
            &mut |_, _| {},
        )
        .unwrap();
    }
    let store = Store::open_read_only(&db).unwrap();
    let g = store.games().unwrap().pop().expect("the game recorded");
    let shown: Vec<_> = g
        .events
        .iter()
        .filter_map(|e| match &e.what {
            Recorded::Irregularity(s) if s.detail_phrase.is_some() => Some(s.clone()),
            _ => None,
        })
        .collect();
    assert!(
        shown.iter().any(|s| s.ruling_phrase.is_some()),
        "an illegal move with its penalty: {shown:?}"
    );
    assert!(shown.len() >= 2, "{shown:?}");
    for lang in Lang::ALL {
        let pdf = artifacts().join(format!("remarks-{lang}.pdf"));
        export_sheet(&db, g.id, lang, &pdf);
        let text = pdftotext(&pdf, None);
        let on_sheet = word_set(&text);
        // A change of a square reads the way the line runs: Persian's arrow points left.
        let (along, back) = if lang.rtl() {
            ('←', '→')
        } else {
            ('→', '←')
        };
        assert!(
            text.contains(along) && !text.contains(back),
            "{lang}: {along} in {text}"
        );
        let words = lang.said(Kind::Chess);
        for s in &shown {
            for said in [s.detail_in(&words), s.ruling_in(&words)]
                .into_iter()
                .flatten()
            {
                let missing: Vec<_> = word_set(&said)
                    .into_iter()
                    .filter(|w| !on_sheet.contains(w))
                    .collect();
                assert!(
                    missing.is_empty(),
                    "{lang}: {missing:?} of {said:?} not on the sheet"
                );
            }
            if lang == Lang::En {
                continue;
            }
            let english = [s.detail.clone(), s.ruling.clone()].into_iter().flatten();
            for text in english {
                let left: Vec<_> = word_set(&text)
                    .into_iter()
                    .filter(|w| w.len() > 3 && w.chars().all(|c| c.is_ascii_lowercase()))
                    .filter(|w| on_sheet.contains(w))
                    .collect();
                assert!(
                    left.is_empty(),
                    "{lang}: English {left:?} of {text:?} on the sheet"
                );
            }
        }
        render(&pdf, pages_of(&pdf), &format!("remarks-{lang}"));
    }
}
