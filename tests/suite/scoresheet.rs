//! Printable scoresheets (HTML and PDF) of games recorded through the pipeline `run` uses: a real
//! DGT capture, emulated corpus games with a clock in Article 8.4 time trouble and scripted
//! irregularities, a long game that needs a second sheet, and a togyz korgool game played by the
//! togyz emulator and tracked by the generic tracker (the replay path reads DGT captures only, so
//! the tracker's events are written to the store with `Store::write_batch`, as the daemon does).
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
        TogyzEmulatorOptions, script_togyz, togyz_records,
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
        togyz::{Position, ResultFormat, Rules, TogyzGame, notation::format_result},
    },
    lang::Lang,
    protocol::{
        FrameReader,
        tgz::{Frame, Tgz},
    },
    replay::{replay_file, replay_reader_with},
    sensor::{dgt::ClockReading, tgz::TgzBoardState},
    store::{GameRecord, ResultReason, Store, Write},
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

#[test]
fn a_togyz_game_prints_in_the_kazakh_kyrgyz_layout_with_the_supplementary_index() {
    let text = std::fs::read_to_string(shared("corpus/togyz/playok-2025.pgn")).unwrap();
    // The first corpus games that end by the rules (82 korgools, or atsyrau) and make a tuz.
    let (rec, moves, result) = togyz_records(&text, Rules::KYRGYZ)
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
        .expect("a decisive corpus game with a tuz");
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
