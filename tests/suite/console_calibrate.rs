//! The console's "Calibrate" action in a real browser: Debian's chromium, headless, through
//! chromedriver (`browser`), against a real `boardscribe run` recording a DGT board (1) and a
//! Certabo board (2) from its config. Only the Certabo board's row and page carry the button;
//! the button asks first, on a page naming the setup the arbiter must show the board (the start
//! position, the extra queens on d3 and d6), and only the confirmation reaches the board's
//! task (the daemon's log says so); the flash says what to do. Nothing is asked of the DGT
//! board, and a forged confirmation from another origin is refused by the console's own gate.

use crate::{
    browser,
    pty_end_to_end::{Proc, poll},
};

use browser::{Browser, Viewport};
use fantoccini::Locator;

const TOKEN: &str = "console-calibrate-token-long-enough";
const ARBITER: &str = "Chief Arbiter";
const ASKED: &str = "the arbiter asks the board's sensor to learn the board again";

/// How many elements `css` finds on the page now.
async fn count(browser: &Browser, css: &str) -> usize {
    browser
        .client
        .find_all(Locator::Css(css))
        .await
        .unwrap()
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_calibrates_a_certabo_board_once_the_arbiter_confirms_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let token = d.join("admin.token");
    std::fs::write(&token, TOKEN).unwrap();
    let config = d.join("boardscribe.toml");
    // The boards need not be plugged in: the daemon takes the arbiter's orders for a board
    // that is away, too.
    std::fs::write(
        &config,
        format!(
            "[[board]]\nnumber = 1\nkind = \"dgt\"\nport = \"{dgt}\"\n\n\
             [[board]]\nnumber = 2\nkind = \"certabo\"\nport = \"{certabo}\"\n",
            dgt = d.join("dgt-board").display(),
            certabo = d.join("certabo-board").display(),
        ),
    )
    .unwrap();
    let http = crate::ports::free_addr();
    let db = d.join("live.db");
    let daemon = Proc::start(
        d,
        "run",
        &[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--http",
            &http.to_string(),
            "--admin-token-file",
            token.to_str().unwrap(),
        ],
    );
    let url = format!("http://{http}/");
    poll("the daemon's HTTP server", || {
        std::net::TcpStream::connect(http).ok().map(|_| ())
    });

    let mut browser = Browser::launch(
        Viewport::Desktop {
            width: 1280,
            height: 900,
        },
        "calibrate",
    )
    .await;
    browser
        .log_in(&format!("{url}arbiter"), TOKEN, ARBITER)
        .await;
    browser
        .wait_for("#live table.hall tbody tr[data-number='2']", 20)
        .await;
    browser.screenshot("hall").await;
    assert_eq!(
        count(&browser, "tr[data-number='2'] form.calibrate button").await,
        1,
        "the Certabo board's row"
    );
    assert_eq!(
        count(&browser, "tr[data-number='1'] form.calibrate").await,
        0,
        "the DGT board's row"
    );
    let button = browser
        .text("tr[data-number='2'] form.calibrate button")
        .await;
    assert_eq!(button, "Calibrate");

    // The button asks first: the setup named, nothing sent to the board yet.
    browser
        .submit(
            "tr[data-number='2'] form.calibrate button",
            "/arbiter/boards/2/calibrate",
        )
        .await;
    browser.wait_for("section.confirm-calibrate", 10).await;
    browser.screenshot("confirm").await;
    let title = browser.text("section.confirm-calibrate h2").await;
    assert_eq!(title, "Calibrate Board 2 again?");
    let setup = browser.text("section.confirm-calibrate p.setup").await;
    assert!(
        setup.contains("start position")
            && setup.contains("white queen on d3")
            && setup.contains("black queen on d6"),
        "{setup}"
    );
    assert!(
        !daemon.log_text().contains(ASKED),
        "asked before confirming"
    );

    // Confirmed: the board's task is asked, and the flash says what to do.
    let back = browser
        .submit("form.calibrate.confirm button", "/arbiter?flash=")
        .await;
    assert!(back.starts_with("/arbiter?flash="), "{back}");
    let flash = browser.text("p.flash").await;
    assert_eq!(
        flash,
        "Board 2: calibrating; set up the start position with the extra queens on d3 and d6"
    );
    browser.screenshot("calibrating").await;
    poll("the board's task asked", || {
        daemon.log_text().contains(ASKED).then_some(())
    });
    let log = daemon.log_text();
    assert!(
        log.contains("the arbiter asks from the console to calibrate the board again")
            && log.contains(ARBITER),
        "{log}"
    );

    // The pages: the Certabo board's has the button, the DGT board's none.
    browser.goto(&format!("{url}arbiter/boards/2")).await;
    browser.wait_for("h2.board-title", 10).await;
    assert_eq!(count(&browser, "form.calibrate button").await, 1);
    browser.goto(&format!("{url}arbiter/boards/1")).await;
    browser.wait_for("h2.board-title", 10).await;
    assert_eq!(count(&browser, "form.calibrate").await, 0);

    // The DGT board asked all the same (a hand-made request): refused in words, nothing sent.
    let refused = browser
        .eval(
            "const f = document.createElement('form'); f.method = 'post'; \
             f.action = '/arbiter/boards/1/calibrate'; \
             f.innerHTML = '<input name=confirm value=1><input name=back value=/arbiter>'; \
             document.body.append(f); window.boardscribeBeforeSubmit = true; f.submit(); \
             return null",
        )
        .await;
    assert!(refused.is_null());
    browser::until(20, "the refusal's flash", async || {
        let path = browser.path().await;
        let text = browser.text("p.flash.error").await;
        (path.starts_with("/arbiter?flash=") && !text.is_empty()).then_some(())
    })
    .await;
    let flash = browser.text("p.flash.error").await;
    assert!(flash.contains("learns nothing of itself"), "{flash}");
    assert_eq!(daemon.log_text().matches(ASKED).count(), 1);

    // A forged confirmation from another origin, with the session's cookie: the gate refuses
    // it as every console form.
    let cookie = browser
        .client
        .get_named_cookie("boardscribe_session")
        .await
        .unwrap();
    let forged = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(format!("{url}arbiter/boards/2/calibrate"))
        .header("Cookie", format!("boardscribe_session={}", cookie.value()))
        .header("Origin", "http://evil.example")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("confirm=1")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status().as_u16(), 403, "forged");
    assert_eq!(daemon.log_text().matches(ASKED).count(), 1);
    browser.close().await;
    drop(daemon);
}
