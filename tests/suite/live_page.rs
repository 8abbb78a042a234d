//! The live page in headless Chromium (Debian's `chromium`), driven over the DevTools protocol:
//! emulated boards recorded by the daemon, the relay on 127.0.0.1:0, the page loaded while the
//! games are under way. The rendered DOM must show every board and its moves, and moves made
//! after the page was loaded must appear without a reload. A screenshot is kept in
//! target/test-artifacts/live-page.png. Without chromium the test fails and says how to get it.

use crate::relay_common;

use std::{
    io::{BufRead, BufReader},
    net::TcpStream,
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use relay_common::{Bench, corpus_game};
use serde_json::{Value, json};
use tungstenite::{Message, WebSocket, stream::MaybeTlsStream};

const CHROMIUM: &str = "/usr/bin/chromium";

/// A headless Chromium with one page, spoken to over its DevTools WebSocket.
struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    session: String,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn launch() -> Browser {
        assert!(
            Path::new(CHROMIUM).exists(),
            "{CHROMIUM} is missing: this test needs Debian's chromium (`apt-get install -y \
             chromium`; .ci/run installs it)"
        );
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(CHROMIUM)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-port=0",
                "--window-size=1280,1000",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting chromium");
        // Chromium prints its DevTools address on standard error.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("ws://") {
                    let _ = tx.send(line[at..].trim().to_owned());
                }
            }
        });
        let endpoint = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("chromium did not print its DevTools address");
        let (ws, _) = tungstenite::connect(endpoint.as_str()).unwrap();
        let mut b = Browser {
            child,
            ws,
            session: String::new(),
            next_id: 0,
            _profile: profile,
        };
        let target = b.call(
            "Target.createTarget",
            json!({ "url": "about:blank" }),
            false,
        );
        let target = target["targetId"].as_str().unwrap().to_owned();
        let attached = b.call(
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
            false,
        );
        b.session = attached["sessionId"].as_str().unwrap().to_owned();
        b
    }

    /// Sends a command (to the page's session if `page`) and waits for its answer.
    fn call(&mut self, method: &str, params: Value, page: bool) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if page {
            msg["sessionId"] = json!(self.session);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let reply = self.ws.read().unwrap();
            let Ok(text) = reply.to_text() else { continue };
            let v: Value = serde_json::from_str(text).unwrap();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// Evaluates `expr` in the page; its value as JSON.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
            true,
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }), true);
        self.wait_for("the page to load", |b| {
            (b.eval("document.readyState") == "complete"
                && b.eval("location.href") == url
                && b.eval("document.getElementById('status').textContent") == "live")
                .then_some(())
        });
    }

    /// Calls `f` until it gives a value (60 s at most).
    fn wait_for<T>(&mut self, what: &str, mut f: impl FnMut(&mut Browser) -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = f(self) {
                return v;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "waited 60 s for {what}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn screenshot(&mut self, path: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({ "format": "png" }), true);
        let png = base64_decode(shot["data"].as_str().unwrap());
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// What the page shows of each board.
const READ_BOARDS: &str = r#"JSON.stringify([...document.querySelectorAll('main section.board')].map(s => ({
  name: s.dataset.board,
  moves: [...s.querySelectorAll('.moves li')].map(li => li.dataset.san),
  pieces: [...s.querySelectorAll('svg text.pc')].map(t => t.dataset.square + t.dataset.piece),
  marked: [...s.querySelectorAll('svg rect.last')].map(r => r.dataset.square),
  last: s.querySelector('.last-move').textContent,
  white_clock: s.querySelector('.clock[data-side="white"]').textContent,
})))"#;

fn read_boards(b: &mut Browser) -> Vec<Value> {
    let text = b.eval(READ_BOARDS);
    serde_json::from_str(text.as_str().unwrap()).unwrap()
}

fn sans(v: &Value) -> Vec<String> {
    v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_page_follows_the_boards_without_reloading() {
    let mut bench = Bench::new(None).await;
    let games = [
        (corpus_game("tatamast22", 27), 21, 0.0),
        // Board 2 knocks pieces over, makes illegal moves...: the arbiter's alerts.
        (corpus_game("tatamast22", 86), 22, 0.12),
    ];
    bench.start(&games, 0.08).await;
    // Load the page once every board has a few moves.
    let start = Instant::now();
    while {
        let (boards, _) = bench.hub.snapshot();
        boards.len() < games.len() || boards.iter().any(|b| b.ply < 3)
    } {
        assert!(start.elapsed() < Duration::from_secs(60), "no moves");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let url = bench.url.clone();
    let mut browser = tokio::task::spawn_blocking(move || {
        let mut b = Browser::launch();
        b.navigate(&url);
        b.eval("window.loadedOnce = 'yes'");
        b
    })
    .await
    .unwrap();
    let at_load = read_boards(&mut browser);
    assert_eq!(at_load.len(), 2, "{at_load:?}");
    for (i, b) in at_load.iter().enumerate() {
        assert_eq!(b["name"], bench.boards[i].as_str());
        assert!(sans(b).len() >= 3, "{b}");
        assert!(!b["pieces"].as_array().unwrap().is_empty());
        assert_eq!(b["marked"].as_array().unwrap().len(), 2, "{b}");
    }

    bench.wait_done(Duration::from_secs(180)).await;
    let store = bench.store();
    let recorded = store.games().unwrap();
    let finals: Vec<Vec<String>> = bench
        .boards
        .iter()
        .map(|name| {
            let g = recorded.iter().rfind(|g| &g.board_name == name).unwrap();
            g.moves.iter().map(|m| m.notation.clone()).collect()
        })
        .collect();
    let (finals2, boards_names) = (finals.clone(), bench.boards.clone());
    let browser = tokio::task::spawn_blocking(move || {
        let now = browser.wait_for("the moves made after loading", |b| {
            let now = read_boards(b);
            (now.iter().map(sans).collect::<Vec<_>>() == finals2).then_some(now)
        });
        // Still the page first loaded: the moves came in over SSE.
        assert_eq!(browser.eval("window.loadedOnce"), "yes");
        for (i, b) in now.iter().enumerate() {
            // What the page showed at load was the record so far (its last move may have been
            // revised since).
            let at_load = sans(&at_load[i]);
            let n = at_load.len() - 1;
            assert_eq!(at_load[..n], finals2[i][..n], "board {i} at load");
            assert!(
                finals2[i].len() > at_load.len(),
                "no move after load on board {i}"
            );
            let (ply, san) = (finals2[i].len(), finals2[i].last().unwrap());
            let dots = if ply % 2 == 1 { "." } else { "..." };
            assert_eq!(b["last"], format!("{}{dots} {san}", ply.div_ceil(2)), "{b}");
            assert_eq!(b["marked"].as_array().unwrap().len(), 2, "{b}");
            assert_ne!(b["white_clock"], "–", "{b}");
        }
        // Board 2's irregularities are the arbiter's: the spectators' page never shows them
        // (issue 16, item 6; before, a banner listed them).
        let text = browser.eval("document.body.innerText");
        for word in ["displaced", "illegal", "clock without move", "art. 7"] {
            assert!(
                !text.as_str().unwrap().to_lowercase().contains(word),
                "{word:?} on the page"
            );
        }
        let artifact = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
        browser.screenshot(&artifact.join("live-page.png"));

        // The board page: one board, large, with its whole move list.
        let page = format!("{}boards/2", browser_url(&mut browser));
        browser.navigate(&page);
        let one = read_boards(&mut browser);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0]["name"], boards_names[1].as_str());
        assert_eq!(sans(&one[0]), finals2[1]);
        assert_eq!(
            browser.eval("document.querySelectorAll('section.board.large').length"),
            1
        );
        browser.screenshot(&artifact.join("board-page.png"));
        browser
    })
    .await
    .unwrap();
    drop(browser);
    assert!(finals.iter().all(|f| !f.is_empty()));
    bench.stop().await;
}

/// The page's origin with a trailing slash.
fn browser_url(b: &mut Browser) -> String {
    format!("{}/", b.eval("location.origin").as_str().unwrap())
}
