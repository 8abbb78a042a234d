//! The live page and a board's page in the event's language, the browser's or the one its
//! switch asks for, over a real `boardscribe serve` of a recorded round: Persian right to left
//! at a phone's width with nothing scrolling sideways, Russian with no English word left, names
//! exactly as the pairing spells them, isolated from their title and rating. Screenshots go to
//! `target/test-artifacts/browser/`.

use crate::{browser, relay_common};

use std::path::{Path, PathBuf};

use boardscribe::{
    arbiter::{Laws, LawsConfig, LawsSetup},
    game::Kind,
    lang::Lang,
    pairings::Pairing,
    replay::replay_reader_with,
    store::{EventSettings, RoundInfo, Store},
};
use browser::{Browser, Viewport, until};
use fantoccini::Locator;
use relay_common::Served;

pub(crate) const WHITE: &str = "Нұрлан Әлиев";
pub(crate) const BLACK: &str = "علی رضا فیروزجا";

fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(rel)
}

/// A Russian event's round 1 in `store`: board 7, paired with a Kazakh name (IM, 2450) and a
/// Persian one (GM, 2760); the sheets' tests use it too.
pub(crate) fn seat_russian_round(store: &mut Store) {
    let event = RoundInfo {
        event: "Кубок Алматы".into(),
        site: "Алматы".into(),
        round: 1,
    };
    let settings = EventSettings {
        language: Some("ru".into()),
        ..EventSettings::default()
    };
    store.open_event(Some(&event), &settings, 0).unwrap();
    let board = store.board("board 7", Kind::Chess).unwrap();
    store.set_board_number(board, 7).unwrap();
    let mut pairing = Pairing::new(7, WHITE, BLACK);
    pairing.white_title = Some("IM".into());
    pairing.white_elo = Some(2450);
    pairing.black_title = Some("GM".into());
    pairing.black_elo = Some(2760);
    store.import_pairings(1, &[pairing]).unwrap();
}

/// A database of [`seat_russian_round`] with a real capture's game recorded on board 7.
fn russian_event(db: &Path) {
    let mut store = Store::open(db).unwrap();
    seat_russian_round(&mut store);
    let capture = std::fs::read(shared("captures/dgt-arnsholt/johan.capture")).unwrap();
    let laws = LawsSetup {
        cfg: LawsConfig::for_edition(Laws::Fide2023),
        ..LawsSetup::default()
    };
    let summary = replay_reader_with(
        &mut store,
        "hall",
        "board 7",
        &capture[..],
        &laws,
        &mut |_, _| {},
    )
    .unwrap();
    assert!(!summary.games.is_empty(), "the capture recorded a game");
}

/// The page's words in `lang` that its script and server write.
fn page_words(lang: Lang) -> Vec<&'static str> {
    [
        "page.connected",
        "page.waiting",
        "page.lost",
        "page.live",
        "page.languages",
    ]
    .into_iter()
    .map(|k| lang.text(k))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_speak_the_events_the_browsers_or_the_switchs_language() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("event.db");
    russian_event(&db);
    let served = Served::start(&db, 0).await;
    let url = served.url.clone();

    // Over HTTP: the event's language, unless the browser prefers another of ours.
    let client = reqwest::Client::new();
    let get = |path: &str, accept: Option<&str>| {
        let mut rq = client.get(format!("{url}{path}"));
        if let Some(a) = accept {
            rq = rq.header("Accept-Language", a);
        }
        let path = path.to_owned();
        async move {
            let answer = rq.send().await.unwrap();
            assert!(answer.status().is_success(), "{path}");
            let vary = answer.headers().get("vary").cloned();
            assert_eq!(vary.unwrap(), "Accept-Language", "{path}");
            answer.text().await.unwrap()
        }
    };
    let page = get("", None).await;
    assert!(
        page.contains("<html lang=\"ru\" dir=\"ltr\">"),
        "{}",
        &page[..300]
    );
    assert!(page.contains(&Lang::Ru.fill("page.board", &[("n", "7")])));
    let page = get("boards/7", Some("de-DE,kk;q=0.8,en;q=0.5")).await;
    assert!(
        page.contains("<html lang=\"kk\" dir=\"ltr\">"),
        "{}",
        &page[..300]
    );
    let page = get("", Some("fr")).await;
    assert!(
        page.contains("<html lang=\"ru\""),
        "no language of ours: the event's"
    );
    let page = get("?lang=fa", Some("ru")).await;
    assert!(
        page.contains("<html lang=\"fa\" dir=\"rtl\">"),
        "the switch wins"
    );
    // The names exactly, each isolated from its title and rating.
    assert!(
        page.contains(&format!("<bdi>IM</bdi> <bdi>{WHITE}</bdi> (2450)")),
        "{page}"
    );
    assert!(
        page.contains(&format!("<bdi>GM</bdi> <bdi>{BLACK}</bdi> (2760)")),
        "{page}"
    );
    // A switch to every language, each in its own name.
    for l in Lang::ALL {
        assert!(page.contains(&format!("?lang={}\" lang=\"{}\"", l.code(), l.code())));
        assert!(page.contains(&format!(
            ">{}</a>",
            boardscribe::export::escape_html(l.name())
        )));
    }

    // In Chromium at a phone's size.
    let mut browser = Browser::launch(
        Viewport::Phone {
            width: 390,
            height: 844,
        },
        "languages",
    )
    .await;
    for (lang, path) in [(Lang::Fa, "?lang=fa"), (Lang::Ru, "boards/7?lang=ru")] {
        browser.goto(&format!("{url}{path}")).await;
        browser.wait_for("section.board", 10).await;
        // The script took over (the stream opened) and wrote its words in the page's language.
        let live = lang.text("page.live");
        until(10, "the stream opens", async || {
            let status = browser.text("#status").await;
            (status == live).then_some(())
        })
        .await;
        let seen = browser
            .assert_fits(lang, "header, nav.langs, section.board, .players", "")
            .await;
        assert_eq!(seen["inner"], 390, "the page is not zoomed out");
        let text = seen["text"].as_str().unwrap();
        assert!(
            text.contains(WHITE) && text.contains(BLACK),
            "{lang}: {text}"
        );
        for words in page_words(Lang::En) {
            assert!(
                !text.contains(words),
                "{lang}: {words:?} stayed English in {text}"
            );
        }
        for words in ["Board", "White", "Black"] {
            assert!(
                !text.contains(words),
                "{lang}: {words:?} stayed English in {text}"
            );
        }
        browser.screenshot(lang.code()).await;
    }
    // The visible switch: one tap and the page is Persian.
    browser
        .client
        .find(Locator::Css("nav.langs a[lang=fa]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(10, "the Persian page", async || {
        let dir = browser.eval("return document.documentElement.dir;").await;
        (dir == "rtl").then_some(())
    })
    .await;
    assert_eq!(browser.path().await, "/boards/7?lang=fa");
    browser.close().await;
    drop(served);
}
