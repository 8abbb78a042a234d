//! Printable scoresheets (HTML and PDF) of games recorded through the pipeline `run` uses: a real
//! DGT capture, emulated corpus games with a clock in Article 8.4 time trouble and scripted
//! irregularities, a long game that needs a second sheet, and a togyz korgool game played by the
//! togyz emulator and tracked by the generic tracker (its events written to the store with
//! `Store::write_batch`, as the daemon does), and one with scripted irregularities replayed
//! through `replay_reader` from the emulator's capture and printed by the CLI in Kyrgyz and in
//! Kazakh words.
//! The HTML is read back with a small tag scan; the PDF with poppler's `pdftotext` (and `lopdf`).

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use boardscribe::{
    Millis,
    arbiter::{Laws, LawsConfig, LawsSetup, TimeControl},
    emulator::{
        self, EmulatorOptions, IrregularityScript, PgnGame, ScriptedIrregularity,
        TogyzEmulatorOptions, TogyzIrregularity, TogyzIrregularityKind, script_togyz,
        togyz_records,
    },
    export::{
        self, ExportOptions, Format, Notation, SheetOptions,
        json::irregularities,
        notation::PieceSymbols,
        pdf::pdf,
        scoresheet::{Scoresheet, html},
    },
    game::{
        Kind,
        togyz::{
            GameResult, Position, ResultFormat, Rules, TogyzGame,
            notation::{Record, format_result},
        },
    },
    lang::{Lang, record::termination_text},
    pairings::Pairing,
    protocol::{
        FrameReader,
        tgz::{Frame, Tgz},
    },
    replay::{replay_file, replay_reader, replay_reader_with},
    sensor::{dgt::ClockReading, tgz::TgzBoardState},
    store::{GameRecord, Recorded, ResultReason, RoundInfo, Store, Write},
    tracker::{Tracker, TrackerEvent, TrackerSettings},
};

fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel)
}

pub(crate) fn corpus(file: &str) -> Vec<PgnGame> {
    let text = std::fs::read_to_string(shared(&format!("corpus/chess/{file}"))).unwrap();
    emulator::games_from_pgn(&text).unwrap()
}

pub(crate) fn laws(time_control: Option<&str>) -> LawsSetup {
    LawsSetup {
        cfg: LawsConfig::for_edition(Laws::Fide2023),
        time_control: time_control.map(|t| t.parse::<TimeControl>().unwrap()),
        ..LawsSetup::default()
    }
}

/// Plays `game` on the emulator and replays its capture into `store`; the last game recorded.
pub(crate) fn record(
    store: &mut Store,
    game: &PgnGame,
    opts: &EmulatorOptions,
    laws: &LawsSetup,
) -> GameRecord {
    let script = emulator::script_pgn(game, opts).unwrap();
    let text = script.to_capture_text();
    let summary = replay_reader_with(
        store,
        "scenario",
        "board 7",
        text.as_bytes(),
        laws,
        &mut |_, _| {},
    )
    .unwrap();
    let id = *summary.games.last().expect("a game");
    let g = store.game(id).unwrap().unwrap();
    let want: Vec<String> = script.plies.iter().map(|p| p.uci.clone()).collect();
    let got: Vec<String> = g.moves.iter().map(|m| m.uci.clone().unwrap()).collect();
    assert_eq!(got, want, "the recording is exact");
    g
}

/// `h:mm:ss` of a clock in ms, whole seconds.
fn clock_text(ms: u64) -> String {
    format!(
        "{}:{:02}:{:02}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60
    )
}

/// A row of the HTML sheet as read back.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct ReadCell {
    pub(crate) san: String,
    pub(crate) clock: Option<String>,
    pub(crate) time_trouble: bool,
}

/// Text between `open` and the next `close` after it, from `from`.
fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = s.find(open)? + open.len();
    let end = s[start..].find(close)? + start;
    Some(&s[start..end])
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fn read_cell(td: &str) -> Option<ReadCell> {
    let san = between(td, "<span class=\"san\">", "</span>")?;
    Some(ReadCell {
        san: unescape(san),
        clock: between(td, "<span class=\"clk\">", "</span>").map(str::to_owned),
        time_trouble: td.contains("<span class=\"tt\""),
    })
}

/// Every numbered row of every sheet, in document order: (number, white, black).
fn read_rows(html: &str) -> Vec<(u32, Option<ReadCell>, Option<ReadCell>)> {
    html.split("<tr class=\"row\">")
        .skip(1)
        .map(|tr| {
            let tr = &tr[..tr.find("</tr>").expect("row closed")];
            let no = between(tr, "<td class=\"no\">", "</td>").unwrap();
            let w = between(tr, "<td class=\"w\">", "</td>").unwrap();
            let b = between(tr, "<td class=\"b\">", "</td>").unwrap();
            (no.parse().unwrap(), read_cell(w), read_cell(b))
        })
        .collect()
}

/// The plies of the HTML sheet in order (row by row, white then black), with their rows.
pub(crate) fn read_plies(html: &str) -> Vec<(u32, bool, ReadCell)> {
    let rows = read_rows(html);
    let numbers: Vec<u32> = rows.iter().map(|r| r.0).collect();
    let mut sorted = numbers.clone();
    sorted.sort_unstable();
    assert_eq!(numbers, sorted, "rows are numbered in order");
    assert_eq!(
        numbers,
        (1..=numbers.len() as u32).collect::<Vec<_>>(),
        "rows 1..n, none missing"
    );
    let mut out = Vec::new();
    for (n, w, b) in rows {
        if let Some(w) = w {
            out.push((n, true, w));
        }
        if let Some(b) = b {
            out.push((n, false, b));
        }
    }
    out
}

/// Checks the sheet's cells against the recorded moves: every ply in its row and column, the
/// mover's clock, the time-trouble mark exactly where recorded.
fn assert_cells(html: &str, g: &GameRecord) {
    let plies = read_plies(html);
    assert_eq!(plies.len(), g.moves.len(), "one cell a ply");
    for ((row, white, cell), m) in plies.iter().zip(&g.moves) {
        assert_eq!(*row, m.ply.div_ceil(2), "ply {}", m.ply);
        assert_eq!(*white, m.ply % 2 == 1, "ply {} in its column", m.ply);
        assert_eq!(cell.san, m.notation, "ply {}", m.ply);
        let clock = if m.ply % 2 == 1 {
            m.clock_white_ms
        } else {
            m.clock_black_ms
        };
        assert_eq!(cell.clock, clock.map(clock_text), "ply {} clock", m.ply);
        assert_eq!(cell.time_trouble, m.time_trouble, "ply {} 8.4 mark", m.ply);
    }
}

fn assert_signatures(html: &str) {
    for who in ["white", "black", "arbiter"] {
        assert_eq!(
            html.matches(&format!("data-signer=\"{who}\"")).count(),
            1,
            "one signature line for {who}"
        );
    }
}

/// The text of every page of a PDF (poppler's `pdftotext -raw`: in the order it is drawn, row
/// by row), and the page count (`lopdf`, a second reader that must parse the file too).
pub(crate) fn pdf_text(bytes: &[u8]) -> (String, usize) {
    assert!(bytes.starts_with(b"%PDF-"));
    let doc = lopdf::Document::load_mem(bytes).expect("the PDF parses");
    let pages = doc.get_pages().len();
    let mut child = Command::new("pdftotext")
        .args(["-raw", "-enc", "UTF-8", "-", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("pdftotext (poppler-utils) is installed");
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, bytes).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    (String::from_utf8(out.stdout).unwrap(), pages)
}

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Keeps the sheet as an artefact, and a PNG of it when headless Chromium is installed.
pub(crate) fn keep(name: &str, html: &str, pdf: &[u8]) {
    std::fs::write(artifacts().join(format!("{name}.pdf")), pdf).unwrap();
    keep_page(name, html);
}

/// Keeps the HTML sheet as an artefact, and a PNG of it when headless Chromium is installed.
fn keep_page(name: &str, html: &str) {
    let dir = artifacts();
    let page = dir.join(format!("{name}.html"));
    std::fs::write(&page, html).unwrap();
    let png = dir.join(format!("{name}.png"));
    let shot = ["chromium", "chromium-browser"].into_iter().find_map(|b| {
        Command::new(b)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--window-size=800,1130",
            ])
            .arg(format!("--screenshot={}", png.display()))
            .arg(format!("file://{}", page.display()))
            .output()
            .ok()
    });
    match shot {
        Some(out) if out.status.success() && png.exists() => {
            println!("screenshot: {}", png.display())
        }
        _ => println!("note: no headless chromium here; {name}.png not made"),
    }
}

#[test]
fn a_real_capture_prints_every_move_in_its_cell_with_its_clock() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let summary = replay_file(
        &mut store,
        &shared("captures/dgt-arnsholt/johan.capture"),
        &mut |_, _| {},
    )
    .unwrap();
    let id = *summary.games.last().unwrap();
    // A date known only by its year is printed as stored.
    store.set_game_date(id, "2026.??.??").unwrap();
    let g = store.game(id).unwrap().unwrap();
    assert!(g.moves.len() > 20, "a real game: {} plies", g.moves.len());
    assert!(
        g.moves.iter().any(|m| m.clock_white_ms.is_some()),
        "the capture has a clock"
    );

    let html = export::export(&store, Format::Scoresheet, Some(id)).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("@page { size: A4"), "print CSS");
    assert!(
        !html.contains("<link") && !html.contains("<script"),
        "self-contained"
    );
    assert_cells(&html, &g);
    assert_signatures(&html);
    assert!(
        html.contains(&format!("<span class=\"value\">{}</span>", g.result)),
        "result {}",
        g.result
    );
    // The board's number in the hall; a board without one (a replayed capture) is left blank
    // for a pen, never its port or file name (issue 16).
    let board = g.board_no.map(|n| n.to_string()).unwrap_or_default();
    assert!(html.contains(&format!("<td class=\"board\">{board}</td>")));
    assert!(html.contains("<td class=\"date\"><bdi>2026.??.??</bdi></td>"));
    assert!(!html.contains(&format!("<td class=\"board\">{}</td>", g.board_name)));

    // Figurines: the same moves, pieces as ♔♕♖♗♘, no piece letters left.
    let sheet = SheetOptions {
        notation: Notation::Figurine,
        ..SheetOptions::default()
    };
    let bytes = export::export_bytes(
        &store,
        Format::Scoresheet,
        Some(id),
        ExportOptions::default(),
        &sheet,
    )
    .unwrap();
    let fig = String::from_utf8(bytes).unwrap();
    let cells = read_plies(&fig);
    for ((_, _, cell), m) in cells.iter().zip(&g.moves) {
        assert!(
            !cell.san.contains(['K', 'Q', 'R', 'B', 'N']),
            "{}",
            cell.san
        );
        let back: String = cell
            .san
            .chars()
            .map(|c| match c {
                '♔' => 'K',
                '♕' => 'Q',
                '♖' => 'R',
                '♗' => 'B',
                '♘' => 'N',
                c => c,
            })
            .collect();
        assert_eq!(back, m.notation);
    }
    assert!(cells.iter().any(|(_, _, c)| c.san.contains('♘')));

    // The PDF: the same moves, in figurines too (its fonts have them).
    let bytes = export::export_bytes(
        &store,
        Format::Pdf,
        Some(id),
        ExportOptions::default(),
        &sheet,
    )
    .unwrap();
    let (text, pages) = pdf_text(&bytes);
    assert_eq!(pages, 1);
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut at = 0;
    for m in &g.moves {
        let written = export::scoresheet::to_figurine(&m.notation);
        let found = tokens[at..].iter().position(|t| *t == written);
        let Some(found) = found else {
            panic!("ply {} {written} in order in the PDF: {text}", m.ply)
        };
        at += found + 1;
    }
    for s in [
        "Signature of White",
        "Signature of Black",
        "Signature of Arbiter",
    ] {
        assert!(text.contains(s), "{s}");
    }
    keep("johan", &fig, &bytes);
}

#[test]
fn time_trouble_plies_and_irregularities_are_marked_with_their_articles() {
    let game = corpus("Capablanca.pgn").swap_remove(20);
    let opts = EmulatorOptions {
        seed: 4,
        time_control: Some((7 * 60_000, 2_000)),
        irregularities: vec![ScriptedIrregularity {
            before_ply: 12,
            kind: IrregularityScript::Knock { hold_ms: 6_000 },
        }],
        ..EmulatorOptions::default()
    };
    let mut store = Store::open_in_memory().unwrap();
    let mut g = record(&mut store, &game, &opts, &laws(Some("7+2")));
    assert!(
        g.moves.iter().any(|m| m.time_trouble),
        "the 8.4 window opens"
    );
    assert!(!g.moves[0].time_trouble);

    // The arbiter records a resignation and a note on a ply.
    let note_ply = g.moves.len() as u32 - 1;
    store
        .set_result(
            g.id,
            "0-1",
            ResultReason::Resignation,
            "Geurt",
            Some("White resigned"),
            1_000,
        )
        .unwrap();
    store
        .add_note(g.id, Some(note_ply), "draw offer by Black", "Geurt", 2_000)
        .unwrap();
    g = store.game(g.id).unwrap().unwrap();
    let tag = |name: &str| {
        game.tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    g.white = tag("White");
    g.black = tag("Black");
    let sheet = Scoresheet::from_game(
        &g,
        &SheetOptions {
            time_control: Some("7+2".into()),
            ..SheetOptions::default()
        },
    );
    let page = html(&sheet);
    assert_cells(&page, &g);
    assert_signatures(&page);
    assert!(page.contains("FIDE Article 8.4"), "the legend of the mark");
    assert!(page.contains("<td class=\"time-control\">7+2</td>"));
    assert!(page.contains("<span class=\"value\">0-1</span>"));
    assert!(page.contains("(resignation)"));
    for name in [&g.white, &g.black].into_iter().flatten() {
        assert!(page.contains(name.as_str()), "{name}");
    }

    // Every irregularity the board showed is listed with its article and ply.
    let shown: Vec<_> = irregularities(&g)
        .into_iter()
        .filter(|i| i["article"].is_string())
        .collect();
    assert!(
        shown
            .iter()
            .any(|i| i["kind"] == "displaced" && i["article"] == "7.4" && i["ply"] == 12),
        "{shown:?}"
    );
    let remarks: Vec<&str> = page
        .split("<li class=\"remark\"")
        .skip(1)
        .map(|li| &li[..li.find("</li>").unwrap()])
        .collect();
    for i in &shown {
        let article = i["article"].as_str().unwrap();
        let ply = i["ply"].as_u64().unwrap();
        assert!(
            remarks
                .iter()
                .any(|r| r.contains(&format!("data-ply=\"{ply}\""))
                    && r.contains(&format!("<span class=\"art\">Art. {article}</span>"))),
            "{i} in {remarks:?}"
        );
    }
    // The arbiter's decisions, briefly.
    assert!(
        remarks
            .iter()
            .any(|r| r.contains("Arbiter: result") && r.contains("White resigned"))
    );
    assert!(remarks.iter().any(|r| r.contains("Arbiter: note")
        && r.contains("draw offer by Black")
        && r.contains(&format!("data-ply=\"{note_ply}\""))));

    // The PDF has the names, the result, the articles and the legend.
    let bytes = pdf(&sheet).unwrap();
    let (text, _) = pdf_text(&bytes);
    for name in [&g.white, &g.black].into_iter().flatten() {
        assert!(text.contains(name.as_str()), "{name} in {text}");
    }
    assert!(text.contains("0-1"));
    assert!(text.contains("Art. 7.4"), "{text}");
    assert!(text.contains("FIDE Article 8.4"));
    keep("time-trouble", &page, &bytes);
}

#[test]
fn a_long_game_continues_on_a_second_sheet() {
    let game = corpus("Capablanca.pgn")
        .into_iter()
        .filter(|g| g.moves.len() > 125)
        .min_by_key(|g| g.moves.len())
        .expect("a game of over 62 moves");
    let mut store = Store::open_in_memory().unwrap();
    let g = record(&mut store, &game, &EmulatorOptions::default(), &laws(None));
    let page = export::export(&store, Format::Scoresheet, Some(g.id)).unwrap();
    assert_eq!(page.matches("<section class=\"sheet\"").count(), 2);
    assert_eq!(
        read_rows(&page).len(),
        120,
        "two sheets of 60 numbered rows"
    );
    assert_cells(&page, &g);
    assert_signatures(&page);
    let second = &page[page.rfind("<section class=\"sheet\"").unwrap()..];
    assert!(second.contains("<td class=\"no\">61</td>"));
    assert!(
        second.contains("data-signer=\"arbiter\""),
        "signatures on the last sheet"
    );

    let bytes = export::export_bytes(
        &store,
        Format::Pdf,
        Some(g.id),
        ExportOptions::default(),
        &SheetOptions::default(),
    )
    .unwrap();
    let (text, pages) = pdf_text(&bytes);
    assert_eq!(pages, 2, "the PDF grows a page");
    let last = g.moves.last().unwrap();
    assert!(
        text.split_whitespace().any(|t| t == last.notation),
        "{}",
        last.notation
    );

    // A short game from the same file is one page.
    let short = corpus("Capablanca.pgn")
        .into_iter()
        .find(|g| g.moves.len() < 60)
        .unwrap();
    let mut store = Store::open_in_memory().unwrap();
    let g = record(&mut store, &short, &EmulatorOptions::default(), &laws(None));
    let bytes = export::export_bytes(
        &store,
        Format::Pdf,
        Some(g.id),
        ExportOptions::default(),
        &SheetOptions::default(),
    )
    .unwrap();
    assert_eq!(pdf_text(&bytes).1, 1);
}

#[test]
fn scoresheet_formats_need_one_known_game() {
    let store = Store::open_in_memory().unwrap();
    for format in [Format::Scoresheet, Format::Pdf] {
        let none = export::export_bytes(
            &store,
            format,
            None,
            ExportOptions::default(),
            &SheetOptions::default(),
        );
        // Either sheet is of one game or one round (issue 34: a round's sheets in one file).
        assert!(
            matches!(none, Err(export::ExportError::GameOrRoundRequired)),
            "{format:?}"
        );
        let unknown = export::export_bytes(
            &store,
            format,
            Some(boardscribe::store::GameId(9)),
            ExportOptions::default(),
            &SheetOptions::default(),
        );
        assert!(matches!(unknown, Err(export::ExportError::UnknownGame(_))));
    }
    assert!(matches!(
        export::export(&store, Format::Pdf, None),
        Err(export::ExportError::NotText)
    ));
    // A PDF of a round takes the round's games; a round without any is an error.
    let options = ExportOptions {
        round: Some(3),
        ..ExportOptions::default()
    };
    let empty = export::export_bytes(&store, Format::Pdf, None, options, &SheetOptions::default());
    assert!(matches!(empty, Err(export::ExportError::EmptyRound(3))));
}

/// Plays a togyz corpus game on the togyz emulator, tracks it with the generic tracker and writes
/// the tracker's events to `store`.
fn record_togyz(store: &mut Store, moves: &[boardscribe::game::togyz::Move]) -> GameRecord {
    let script = script_togyz(
        moves,
        &TogyzEmulatorOptions {
            seed: 3,
            ..TogyzEmulatorOptions::default()
        },
    )
    .unwrap();
    let mut tracker = Tracker::<TogyzGame>::new(TrackerSettings {
        displaced_max_distance: 20,
        two_ply_max_distance: 20,
        ..TrackerSettings::default()
    });
    let mut reader = FrameReader::with_wire(Tgz);
    let mut state = TgzBoardState::default();
    let mut events: Vec<TrackerEvent> = Vec::new();
    let mut last: Millis = 0;
    for e in script
        .events
        .iter()
        .filter(|e| e.dir == boardscribe::device::Direction::FromBoard)
    {
        reader.push(&e.payload.to_bytes());
        while let Some(Ok(f)) = reader.next_frame() {
            last = e.at_ms;
            let changed = match &f {
                Frame::BwTime(t) => {
                    if let Some(r) = ClockReading::from_bwtime(t) {
                        tracker.clock(e.at_ms, r, &mut events);
                    }
                    false
                }
                Frame::BoardDump(d) => {
                    state.apply_dump(d);
                    true
                }
                Frame::PitUpdate { location, count } => state.apply_pit(*location, *count),
                Frame::TuzUpdate { player, pit } => state.apply_tuz(*player, *pit),
                _ => false,
            };
            if changed {
                tracker.observe(e.at_ms, &state, &mut events);
            }
        }
    }
    tracker.tick(last + 10_000, &mut events);
    let board = store.board("togyz 1", Kind::Togyz).unwrap();
    let writes: Vec<Write> = events
        .into_iter()
        .map(|event| Write::Event { board, event })
        .collect();
    let games = store.write_batch(&writes).unwrap();
    store.game(*games.last().unwrap()).unwrap().unwrap()
}

/// The first corpus game that ends by the rules (82 korgools, or atsyrau), decisively, with a
/// tuz: its record, its moves and its result.
fn decisive_togyz_game() -> (Record, Vec<boardscribe::game::togyz::Move>, GameResult) {
    let text = std::fs::read_to_string(shared("corpus/togyz/playok-2025.pgn")).unwrap();
    togyz_records(&text, Rules::KYRGYZ)
        .unwrap()
        .into_iter()
        .take(200)
        .find_map(|(rec, moves)| {
            let mut pos = Position::new();
            for m in &moves {
                pos = pos.play(*m).ok()?;
            }
            let result = pos.outcome()?;
            let tuz = rec.moves.iter().any(|m| m.text.tuz);
            (tuz && result.winner().is_some()).then_some((rec, moves, result))
        })
        .expect("a decisive corpus game with a tuz")
}

#[test]
fn a_togyz_game_prints_in_the_kazakh_kyrgyz_layout_with_the_supplementary_index() {
    let (rec, moves, result) = decisive_togyz_game();
    let mut store = Store::open_in_memory().unwrap();
    let g = record_togyz(&mut store, &moves);
    let want: Vec<String> = rec.moves.iter().map(|m| m.text.to_string()).collect();
    let got: Vec<String> = g.moves.iter().map(|m| m.notation.clone()).collect();
    assert_eq!(got, want, "the tracker recorded the game exactly");
    assert_eq!(g.kind, Kind::Togyz);

    let page = export::export(&store, Format::Scoresheet, Some(g.id)).unwrap();
    assert!(
        page.contains("<th>№</th><th>White</th><th>Black</th>"),
        "№ | white | black"
    );
    assert_cells(&page, &g);
    assert!(
        read_plies(&page)
            .iter()
            .any(|(_, _, c)| c.san.ends_with('X')),
        "the tuz mark"
    );
    assert_signatures(&page);
    let written = format_result(&result, ResultFormat::Kyrgyz);
    assert!(written.contains('/'), "{written}");
    assert_eq!(
        g.result,
        format_result(&result, ResultFormat::Pgn),
        "the stored result"
    );
    assert!(
        page.contains(&format!("<span class=\"value\">{written}</span>")),
        "{written} in the sheet"
    );

    let bytes = export::export_bytes(
        &store,
        Format::Pdf,
        Some(g.id),
        ExportOptions::default(),
        &SheetOptions::default(),
    )
    .unwrap();
    let (text, _) = pdf_text(&bytes);
    assert!(text.contains(&written), "{written} in {text}");
    for m in &want {
        assert!(text.split_whitespace().any(|t| t == m), "{m}");
    }
    keep("togyz", &page, &bytes);

    // A togyz korgool sheet has no pieces: no notation changes it (issue 33).
    for notation in [Notation::Figurine, Notation::Local] {
        let sheet = Scoresheet::from_game(
            &g,
            &SheetOptions {
                notation,
                lang: Lang::Ru,
                ..SheetOptions::default()
            },
        );
        assert_eq!(sheet.pieces, PieceSymbols::ENGLISH, "{notation}");
        let in_san = SheetOptions {
            lang: Lang::Ru,
            ..SheetOptions::default()
        };
        assert_eq!(html(&sheet), html(&Scoresheet::from_game(&g, &in_san)));
    }
}

/// A togyz korgool game's sheet in Kyrgyz and in Kazakh (issue 33: "the stores, the tuz, the
/// result form. No 'white: 55'"). A decisive corpus game with a tuz, korgools knocked out of
/// their pit and the tuz's capture not taken (so the remarks name pits, stores and the tuz),
/// played on the togyz emulator and replayed into round 1 of an event with Kyrgyz and Kazakh
/// names, then exported by the CLI with `--lang ky` and `--lang kk`, HTML and PDF. Every label
/// is the table's word, the sides the rules' own (Ак, Кара; Ақ, Қара), the result in the Kyrgyz
/// form with its index, the termination and the remarks worded by the table; no English label,
/// no White, Black or "white:" is left.
#[test]
fn a_togyz_sheet_in_kyrgyz_and_kazakh_is_in_the_tables_words() {
    const WHITE: &str = "Үмөт Жаңыбаев";
    const BLACK: &str = "Әсем Құрманғалиева";
    const EVENT: &str = "Бишкек ачык чемпионаты";
    const DATE: &str = "2026.12.04";
    let (rec, moves, result) = decisive_togyz_game();
    let tuz_ply = rec.moves.iter().position(|m| m.text.tuz).expect("a tuz") as u32 + 1;
    let scattered_ply = if tuz_ply == 3 { 5 } else { 3 };
    let opts = TogyzEmulatorOptions {
        seed: 5,
        irregularities: vec![
            TogyzIrregularity {
                before_ply: scattered_ply,
                kind: TogyzIrregularityKind::Scattered { korgools: 2 },
            },
            TogyzIrregularity {
                before_ply: tuz_ply,
                kind: TogyzIrregularityKind::CaptureNotTaken,
            },
        ],
        ..TogyzEmulatorOptions::default()
    };
    let script = script_togyz(&moves, &opts).unwrap();
    assert_eq!(
        script.irregularities.len(),
        2,
        "{:?}",
        script.irregularities
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("togyz.db");
    let g = {
        let mut store = Store::open(&db).unwrap();
        store
            .set_round(&RoundInfo {
                event: EVENT.into(),
                site: "Бишкек".into(),
                round: 1,
            })
            .unwrap();
        let board = store.board("pit board 1", Kind::Togyz).unwrap();
        store.set_board_number(board, 1).unwrap();
        store
            .import_pairings(1, &[Pairing::new(1, WHITE, BLACK)])
            .unwrap();
        replay_reader(
            &mut store,
            "togyz",
            "pit board 1",
            script.to_capture_text().as_bytes(),
            &mut |_, _| {},
        )
        .unwrap();
        let g = store.games().unwrap().pop().expect("the game recorded");
        store.set_game_date(g.id, DATE).unwrap();
        store.game(g.id).unwrap().unwrap()
    };
    let want: Vec<String> = rec.moves.iter().map(|m| m.text.to_string()).collect();
    let got: Vec<String> = g.moves.iter().map(|m| m.notation.clone()).collect();
    assert_eq!(got, want, "the game recorded exactly");
    assert_eq!(g.result, format_result(&result, ResultFormat::Pgn));
    let termination = g.termination.clone().expect("ended by the rules");
    let shown: Vec<_> = g
        .events
        .iter()
        .filter_map(|e| match &e.what {
            Recorded::Irregularity(s) if s.detail_phrase.is_some() => Some((e.kind.clone(), s)),
            _ => None,
        })
        .collect();
    let kinds: Vec<&str> = shown.iter().map(|(k, _)| k.as_str()).collect();
    assert!(
        kinds.contains(&"displaced") && kinds.contains(&"illegal_move"),
        "{kinds:?}"
    );
    let tuz_said = shown
        .iter()
        .filter_map(|(_, s)| s.detail_phrase.as_ref())
        .any(|p| format!("{p:?}").contains("tuz_not_taken"));
    assert!(tuz_said, "the tuz not taken is a remark: {shown:?}");

    let export = |format: &str, lang: Lang| -> Vec<u8> {
        let out = Command::new(env!("CARGO_BIN_EXE_boardscribe"))
            .args([
                "export",
                "--format",
                format,
                "--lang",
                lang.code(),
                "--game",
            ])
            .arg(g.id.0.to_string())
            .arg("--db")
            .arg(&db)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    // What an English togyz sheet says that no other language's may.
    let english: Vec<String> = [
        "sheet.title_togyz",
        "sheet.event",
        "sheet.site",
        "sheet.round",
        "sheet.board",
        "sheet.date",
        "sheet.time_control",
        "sheet.result",
        "sheet.arbiter",
        "remark.displaced",
        "remark.displaced_togyz",
        "remark.illegal_move",
        "togyz.store_white",
        "togyz.store_black",
    ]
    .into_iter()
    .map(|k| Lang::En.text(k).to_owned())
    .chain([termination_text(&termination, Lang::En)])
    .chain(
        [
            "White",
            "Black",
            "white:",
            "black:",
            "Signature",
            "before move",
            "Art.",
            "store",
        ]
        .map(str::to_owned),
    )
    .collect();
    let written = format_result(&result, ResultFormat::Kyrgyz);
    for lang in [Lang::Ky, Lang::Kk] {
        let [white, black] = [lang.text("togyz.white"), lang.text("togyz.black")];
        assert_eq!(lang.sides(Kind::Togyz), [white, black]);
        // The labels, the sides, the signatures, the page, the termination and the remarks'
        // titles and articles, as the table words them; the date in the language's form.
        let mut labels: Vec<String> = [
            "sheet.title_togyz",
            "sheet.event",
            "sheet.site",
            "sheet.round",
            "sheet.board",
            "sheet.date",
            "sheet.time_control",
            "togyz.white",
            "togyz.black",
            "remark.displaced_togyz",
            "remark.illegal_move",
        ]
        .into_iter()
        .map(|k| lang.text(k).to_owned())
        .chain([EVENT.to_owned(), WHITE.to_owned(), BLACK.to_owned()])
        .collect();
        labels.push(format!("{}:", lang.text("sheet.result")));
        for who in [white, black, lang.text("sheet.arbiter")] {
            labels.push(lang.fill("sheet.signature", &[("who", who)]));
        }
        labels.push(lang.fill(
            "sheet.page",
            &[("game", &g.id.0.to_string()), ("page", "1"), ("pages", "1")],
        ));
        labels.push(termination_text(&termination, lang));
        labels.push(lang.stored_date(DATE));
        for (_, s) in &shown {
            let article = s.article.as_deref().expect("a togyz article");
            labels.push(lang.fill("sheet.article", &[("article", article)]));
        }
        // What the remarks say, in the table's words (the pits, the stores, the tuz).
        let words = lang.said(Kind::Togyz);
        let said: Vec<String> = shown
            .iter()
            .flat_map(|(_, s)| [s.detail_in(&words), s.ruling_in(&words)])
            .flatten()
            .collect();
        assert!(
            said.iter()
                .any(|s| s.contains(lang.text("togyz.white"))
                    || s.contains(lang.text("togyz.black"))),
            "{lang}: a remark names a side's pit: {said:?}"
        );

        let html = String::from_utf8(export("scoresheet", lang)).unwrap();
        let head = format!("<html lang=\"{}\" dir=\"ltr\">", lang.code());
        assert!(html.contains(&head), "{lang}: {}", &html[..200]);
        assert!(
            html.contains(&format!("<th>№</th><th>{white}</th><th>{black}</th>")),
            "{lang}: № | {white} | {black}"
        );
        assert!(
            html.contains(&format!(
                "<th>{white}</th><td class=\"white\"><bdi>{WHITE}</bdi></td>"
            )),
            "{lang}: {WHITE} beside {white}"
        );
        assert!(
            html.contains(&format!(
                "<th>{black}</th><td class=\"black\"><bdi>{BLACK}</bdi></td>"
            )),
            "{lang}: {BLACK} beside {black}"
        );
        assert!(
            html.contains(&format!("<span class=\"value\">{written}</span>")),
            "{lang}: {written}"
        );
        for label in &labels {
            let label = export::escape_html(label);
            assert!(html.contains(&label), "{lang}: {label:?}");
        }
        for s in &said {
            let s = export::escape_html(s);
            assert!(html.contains(&s), "{lang}: {s:?}");
        }
        assert_cells(&html, &g);
        assert_signatures(&html);

        let pdf = export("pdf", lang);
        let (text, _) = pdf_text(&pdf);
        for label in &labels {
            assert!(text.contains(label.as_str()), "{lang}: {label:?} in {text}");
        }
        assert!(text.contains(&written), "{lang}: {written} in {text}");
        let on_sheet = crate::pdf_scripts::word_set(&text);
        for s in &said {
            let missing: Vec<String> = crate::pdf_scripts::word_set(s)
                .into_iter()
                .filter(|w| !on_sheet.contains(w))
                .collect();
            assert!(
                missing.is_empty(),
                "{lang}: {missing:?} of {s:?} not on the sheet"
            );
        }
        for m in &want {
            assert!(text.split_whitespace().any(|t| t == m), "{lang}: {m}");
        }
        keep(&format!("togyz-{lang}"), &html, &pdf);

        // No English label, no White or Black, no "white: 55", on either; and korgools are no
        // chess pieces (the chess sheet's "displaced pieces").
        for (what, page) in [("HTML", html.as_str()), ("PDF", text.as_str())] {
            for words in &english {
                assert!(
                    !page.contains(words.as_str()),
                    "{lang} {what}: {words:?} stayed English"
                );
            }
            let chess = lang.text("remark.displaced");
            assert!(!page.contains(chess), "{lang} {what}: {chess:?}");
        }
        // Nor any word of the remarks' English.
        for (_, s) in &shown {
            for english in [&s.detail, &s.ruling].into_iter().flatten() {
                let left: Vec<String> = crate::pdf_scripts::word_set(english)
                    .into_iter()
                    .filter(|w| w.len() > 3 && w.chars().all(|c| c.is_ascii_lowercase()))
                    .filter(|w| on_sheet.contains(w))
                    .collect();
                assert!(left.is_empty(), "{lang}: English {left:?} of {english:?}");
            }
        }
    }
}

#[test]
fn the_export_command_writes_sheets_and_asks_for_the_game() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let bin = env!("CARGO_BIN_EXE_boardscribe");
    let capture = shared("captures/dgt-arnsholt/johan.capture");
    let ok = Command::new(bin)
        .args(["replay", "-q", "--db"])
        .arg(&db)
        .arg(&capture)
        .status()
        .unwrap();
    assert!(ok.success());

    let out = Command::new(bin)
        .args(["export", "--format", "scoresheet", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--game"));

    let html = Command::new(bin)
        .args([
            "export",
            "--format",
            "scoresheet",
            "--game",
            "1",
            "--figurine",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert!(html.status.success());
    let html = String::from_utf8(html.stdout).unwrap();
    let store = Store::open(&db).unwrap();
    let g = store.game(boardscribe::store::GameId(1)).unwrap().unwrap();
    assert_eq!(read_plies(&html).len(), g.moves.len());

    let pdf_path = dir.path().join("sheet.pdf");
    let status = Command::new(bin)
        .args(["export", "--format", "pdf", "--game", "1", "--out"])
        .arg(&pdf_path)
        .arg("--db")
        .arg(&db)
        .status()
        .unwrap();
    assert!(status.success());
    let stdout_pdf = Command::new(bin)
        .args(["export", "--format", "pdf", "--game", "1", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let file = std::fs::read(&pdf_path).unwrap();
    assert_eq!(file, stdout_pdf.stdout, "--out and standard output agree");
    let (text, pages) = pdf_text(&file);
    assert_eq!(pages, 1);
    assert!(text.contains(&g.moves[0].notation));
}

#[test]
fn a_sheet_is_written_in_the_events_language_or_the_one_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lang.db");
    let mut store = Store::open(&db).unwrap();
    crate::page_languages::seat_russian_round(&mut store);
    let (white, black) = (crate::page_languages::WHITE, crate::page_languages::BLACK);
    let opts = EmulatorOptions {
        seed: 4,
        time_control: Some((7 * 60_000, 2_000)),
        irregularities: vec![ScriptedIrregularity {
            before_ply: 12,
            kind: IrregularityScript::Knock { hold_ms: 6_000 },
        }],
        ..EmulatorOptions::default()
    };
    let game = corpus("Capablanca.pgn").swap_remove(20);
    let g = record(&mut store, &game, &opts, &laws(Some("7+2")));
    assert_eq!(
        (g.round, g.board_no),
        (Some(1), Some(7)),
        "the game is round 1's board 7"
    );
    store
        .set_result(
            g.id,
            "0-1",
            ResultReason::Resignation,
            "Арбитр",
            None,
            1_000,
        )
        .unwrap();
    store.set_game_date(g.id, "2026.12.04").unwrap();
    drop(store);

    let export = |lang: Option<Lang>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_boardscribe"));
        cmd.args(["export", "--format", "scoresheet", "--game"])
            .arg(g.id.0.to_string())
            .arg("--db")
            .arg(&db);
        if let Some(l) = lang {
            cmd.args(["--lang", l.code()]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Unless told otherwise, the event's language.
    let page = export(None);
    assert!(
        page.contains("<html lang=\"ru\" dir=\"ltr\">"),
        "{}",
        &page[..200]
    );
    assert_eq!(page, export(Some(Lang::Ru)));

    // What the English sheet says that no other language's may.
    let english: Vec<&str> = [
        "sheet.title",
        "sheet.event",
        "sheet.time_control",
        "sheet.result",
        "remark.displaced",
        "reason.resignation",
    ]
    .into_iter()
    .map(|k| Lang::En.text(k))
    .chain(["Signature of", "before move", "Arbiter: result", "Art. "])
    .collect();
    for lang in Lang::ALL {
        let page = export(Some(lang));
        let head = format!("<html lang=\"{}\" dir=\"{}\">", lang.code(), lang.dir());
        assert!(page.contains(&head), "{lang}: {}", &page[..200]);
        // The names exactly as the pairing spells them, each isolated from its title and rating.
        assert!(
            page.contains(&format!("<bdi>IM</bdi> <bdi>{white}</bdi> (2450)")),
            "{lang}"
        );
        assert!(
            page.contains(&format!("<bdi>GM</bdi> <bdi>{black}</bdi> (2760)")),
            "{lang}"
        );
        assert!(page.contains("<bdi>Кубок Алматы</bdi>"), "{lang}");
        // The day in the language's form (Persian: Iran's calendar), isolated.
        let date = boardscribe::export::escape_html(&lang.stored_date("2026.12.04"));
        assert!(
            page.contains(&format!("<td class=\"date\"><bdi>{date}</bdi></td>")),
            "{lang}: {date}"
        );
        // Its own words for the labels, the remarks and the result's reason.
        for key in [
            "sheet.title",
            "sheet.event",
            "sheet.site",
            "sheet.round",
            "sheet.time_control",
            "sheet.result",
            "sheet.number",
            "remark.displaced",
            "reason.resignation",
        ] {
            let want = boardscribe::export::escape_html(lang.text(key));
            assert!(page.contains(&want), "{lang}: {key} = {want:?}");
        }
        let signed = lang.fill("sheet.signature", &[("who", lang.text("sheet.arbiter"))]);
        assert!(
            page.contains(&boardscribe::export::escape_html(&signed)),
            "{lang}"
        );
        if lang != Lang::En {
            for words in &english {
                assert!(!page.contains(words), "{lang}: {words:?} stayed English");
            }
        }
        // Moves and clocks as recorded, whatever the language.
        assert_cells(&page, &store_game(&db, g.id));
        assert_signatures(&page);
        keep_page(&format!("sheet-{lang}"), &page);
    }
}

fn store_game(db: &Path, id: boardscribe::store::GameId) -> GameRecord {
    Store::open(db).unwrap().game(id).unwrap().unwrap()
}
