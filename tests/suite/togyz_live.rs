//! The live board of a togyz game: a corpus game played by the emulator and replayed through
//! `replay_reader` into SQLite, every committed tracker event folded into a togyz
//! [`BoardLive`]; the snapshot shows the rules' position, stores and tuz marks, the moves in
//! togyz notation, and a 2×9 SVG with the last move's pits marked; the page in Kyrgyz and in
//! Kazakh words.

use boardscribe::{
    emulator::{TogyzEmulatorOptions, script_togyz, togyz_records},
    game::{
        Kind,
        togyz::{Board, Rules, notation},
    },
    lang::Lang,
    relay::{
        live::BoardLive,
        view::{BoardView, Seats},
    },
    replay::replay_reader,
    store::Store,
    tracker::{Side, TrackerEvent},
};

const PLAYOK: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/togyz/playok-2025.pgn"
);

#[test]
fn a_replayed_togyz_game_folds_into_the_live_board() {
    let text = std::fs::read_to_string(PLAYOK).expect("corpus");
    let games = togyz_records(&text, Rules::KYRGYZ).expect("records");
    // A game with a tuz for each side, cut before its end so the board is still in play.
    let (rec, moves) = games
        .iter()
        .find(|(r, _)| r.moves.iter().filter(|m| m.text.tuz).count() == 2)
        .expect("a game with two tuz");
    let replayed = rec.replay(Rules::KYRGYZ).expect("replays");
    let n = moves.len() - 1;
    let script = script_togyz(&moves[..n], &TogyzEmulatorOptions::default()).expect("script");
    let mut store = Store::open_in_memory().expect("store");
    let mut live = BoardLive::with_kind("pit board 1", Some(1), Kind::Togyz, &[]);
    replay_reader(
        &mut store,
        "togyz capture",
        "pit board 1",
        script.to_capture_text().as_bytes(),
        &mut |_, e: &TrackerEvent| {
            live.apply(e);
        },
    )
    .expect("replay");
    let s = live.snapshot();
    let want: Vec<String> = rec.moves[..n].iter().map(|m| m.text.to_string()).collect();
    assert_eq!(s.moves, want);
    assert_eq!(
        s.last_move.as_ref().map(|m| m.san.clone()),
        want.last().cloned()
    );
    let pos = &replayed.positions[n];
    assert_eq!(s.fen, notation::to_fen(pos));
    assert_eq!(s.kind, Kind::Togyz);
    let side = if n % 2 == 0 { Side::White } else { Side::Black };
    assert_eq!(s.side_to_move, side);
    let b = pos.board();
    let t = s.togyz.expect("togyz fields");
    assert_eq!((t.white_store, t.black_store), (b.stores[0], b.stores[1]));
    assert_eq!((t.white_tuz, t.black_tuz), (b.tuz[0], b.tuz[1]));
    // The page's drawing of the snapshot.
    let svg = boardscribe::relay::view::draw(&s);
    assert_eq!(svg.matches("class=\"tuzmark\"").count(), 2);
    assert!(svg.contains(&format!(
        r#"data-store="white" data-count="{}""#,
        b.stores[0]
    )));
    // In Kyrgyz and in Kazakh, the page names the stores and the sides in the rules' own words
    // (казан; ак жагы, кара жагы; Ақ, Қара, қазан): no "white: 55", no White or Black.
    for lang in [Lang::Ky, Lang::Kk] {
        let svg_in = boardscribe::relay::view::draw_in(&s, lang);
        for (side, count) in [("white", b.stores[0]), ("black", b.stores[1])] {
            let key = if side == "white" {
                "togyz.store_white"
            } else {
                "togyz.store_black"
            };
            let shown = format!(
                r#"<tspan class="store-name" data-store="{side}">{}</tspan>: {count}<"#,
                lang.text(key)
            );
            assert!(svg_in.contains(&shown), "{lang}: {shown} in {svg_in}");
            assert!(!svg_in.contains(&format!(">{side}: ")), "{lang}: {svg_in}");
        }
        let view = BoardView::new(s.clone(), None, Seats::default());
        let page = boardscribe::relay::page::board_page_html(&view, None, lang);
        assert!(page.contains(&format!("<html lang=\"{}\"", lang.code())));
        for key in ["togyz.store_white", "togyz.store_black"] {
            assert!(page.contains(lang.text(key)), "{lang}: {key} in {page}");
        }
        for side in ["togyz.white", "togyz.black"] {
            assert!(
                page.contains(&format!(r#"-name">{}</span>"#, lang.text(side))),
                "{lang}: {side} in {page}"
            );
        }
        // The words the page's script writes when it redraws the board: the table's too.
        for (name, key) in [
            ("togyz_white", "togyz.white"),
            ("togyz_black", "togyz.black"),
            ("store_white", "togyz.store_white"),
            ("store_black", "togyz.store_black"),
        ] {
            let text = format!("&quot;{name}&quot;:&quot;{}&quot;", lang.text(key));
            assert!(page.contains(&text), "{lang}: {text}");
        }
        let english = [
            "togyz.white",
            "togyz.black",
            "togyz.store_white",
            "togyz.store_black",
            "sheet.white",
            "sheet.black",
        ]
        .map(|k| Lang::En.text(k));
        for words in english.into_iter().chain(["white:", "black:"]) {
            assert!(!page.contains(words), "{lang}: {words:?} stayed English");
        }
    }
    // The last move's start pit is marked.
    let last = &replayed.sowings[n - 1];
    let start = Board::location(last.side, last.mv.pit());
    let (row, pit) = (if start < 9 { "white" } else { "black" }, start % 9 + 1);
    assert!(
        svg.contains(&format!(r#"last" data-side="{row}" data-pit="{pit}""#)),
        "start pit {row} {pit} marked"
    );
}
