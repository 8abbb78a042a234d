//! WebDriver plumbing for the browser tests: Debian's `chromedriver` started on a free port of
//! the loopback as a child process (under `nice -n 10`, in a process group of its own that is
//! killed whole when the [`Driver`] is dropped, a panicking test too), and a headless
//! `chromium` session with a temporary profile, spoken to with `fantoccini` over plain HTTP.
//! Flow: [`Browser::launch`] starts the driver, waits for its `/status` to say ready, opens the
//! session at a desktop or phone [`Viewport`]; the tests then wait on the DOM with deadlines
//! ([`Browser::until`], [`Browser::wait_for`]), never with fixed sleeps, and keep screenshots
//! under `target/test-artifacts/console/`. Without chromium or chromedriver a test fails and
//! says how to get them.
#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use std::os::unix::process::CommandExt as _;

use fantoccini::{Client, ClientBuilder, Locator, elements::Element};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};

pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// Where the screenshots (and chromedriver's log) are kept: not committed.
pub fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts/console");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A chromedriver child process, its whole process group killed on drop (chromedriver and the
/// chromium it started stay in it).
pub struct Driver {
    child: Child,
    /// `http://127.0.0.1:PORT`
    pub url: String,
}

impl Driver {
    /// Starts chromedriver on a free port of 127.0.0.1 and waits until it says it is ready;
    /// `log`: its log file.
    pub async fn start(log: &Path) -> Driver {
        for (path, package) in [(CHROMEDRIVER, "chromium-driver"), (CHROMIUM, "chromium")] {
            assert!(
                Path::new(path).exists(),
                "{path} is missing: the console's browser tests need Debian's chromium and its \
                 driver (`apt-get install -y {package}`; .ci/run installs them)"
            );
        }
        // A port free now; chromedriver takes it a moment later.
        let port = crate::ports::free();
        let child = Command::new("nice")
            .args(["-n", "10", CHROMEDRIVER])
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("starting chromedriver");
        let driver = Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let status = format!("{}/status", driver.url);
        let client = reqwest::Client::new();
        until(30, "chromedriver to be ready", async || {
            let resp = client.get(&status).send().await.ok()?;
            let v: Value = resp.json().await.ok()?;
            (v["value"]["ready"] == true).then_some(())
        })
        .await;
        driver
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let group = rustix::process::Pid::from_child(&self.child);
        // Already gone (the session closed it and it exited): nothing to kill.
        let _already_gone =
            rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        let _reaped = self.child.wait();
    }
}

/// The window the page is shown in.
#[derive(Clone, Copy, Debug)]
pub enum Viewport {
    /// A desktop window of this size.
    Desktop { width: u32, height: u32 },
    /// A phone: chromium's mobile emulation (touch, the page's `viewport` meta honoured) at
    /// this size in CSS pixels.
    Phone { width: u32, height: u32 },
}

/// A headless chromium session; fields drop in order: the session, the driver (its process
/// group killed), then the profile.
pub struct Browser {
    pub client: Client,
    /// Dropped (killed) after the client.
    _driver: Driver,
    /// Chromium's profile, removed once chromium is gone.
    _profile: tempfile::TempDir,
    /// The screenshots' name prefix, and how many were taken.
    prefix: String,
    shots: u32,
}

impl Browser {
    /// Chromium at `viewport`, through a chromedriver of its own; `prefix` names its artefacts.
    pub async fn launch(viewport: Viewport, prefix: &str) -> Browser {
        let dir = artifacts();
        let driver = Driver::start(&dir.join(format!("{prefix}-chromedriver.log"))).await;
        let profile = tempfile::tempdir().unwrap();
        let mut args = vec![
            "--no-sandbox".to_owned(),
            "--headless=new".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            format!("--user-data-dir={}", profile.path().display()),
        ];
        let mut options = json!({ "binary": CHROMIUM });
        match viewport {
            Viewport::Desktop { width, height } => {
                args.push(format!("--window-size={width},{height}"));
            }
            Viewport::Phone { width, height } => {
                args.push(format!("--window-size={width},{height}"));
                options["mobileEmulation"] = json!({
                    "deviceMetrics": {
                        "width": width, "height": height, "pixelRatio": 3.0,
                        "mobile": true, "touch": true,
                    },
                    "userAgent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 \
                                  (KHTML, like Gecko) Chrome/148.0 Mobile Safari/537.36",
                });
            }
        }
        options["args"] = json!(args);
        let mut caps = serde_json::Map::new();
        caps.insert("browserName".into(), json!("chrome"));
        caps.insert("goog:chromeOptions".into(), options);
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&driver.url)
            .await
            .expect("a chromium session through chromedriver");
        Browser {
            client,
            _profile: profile,
            _driver: driver,
            prefix: prefix.to_owned(),
            shots: 0,
        }
    }

    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    /// The page's path and query (`/arbiter?msg=...`), percent-decoded.
    pub async fn path(&self) -> String {
        let url = self.client.current_url().await.unwrap();
        let mut path = url.path().to_owned();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        percent_decode(&path)
    }

    /// Runs `script` (a function body: `return ...`) in the page; its value.
    pub async fn eval(&self, script: &str) -> Value {
        self.client.execute(script, Vec::new()).await.unwrap()
    }

    /// The page as a phone shows it in `lang`: asserts that it is written in `lang` and runs its
    /// way, is not zoomed out, scrolls nothing sideways and keeps each element `parts` finds
    /// (a CSS selector list) within its width. Gives `text` (the page's), `words` (without what
    /// `leave_out` finds: the record's own words, the language switch) and `html`.
    pub async fn assert_fits(
        &self,
        lang: boardscribe::lang::Lang,
        parts: &str,
        leave_out: &str,
    ) -> Value {
        let seen = self
            .client
            .execute(
                "const [parts, leave] = arguments;\
                 const r = e => { const b = e.getBoundingClientRect(); \
                   return {left: b.left, right: b.right, width: b.width}; };\
                 const copy = document.body.cloneNode(true);\
                 if (leave) copy.querySelectorAll(leave).forEach(e => e.remove());\
                 return {dir: getComputedStyle(document.body).direction, \
                   lang: document.documentElement.lang, inner: window.innerWidth, \
                   body: document.body.scrollWidth, doc: document.documentElement.scrollWidth, \
                   text: document.body.innerText, words: copy.innerText, \
                   html: document.body.innerHTML, \
                   parts: [...document.querySelectorAll(parts)].map(r)};",
                vec![json!(parts), json!(leave_out)],
            )
            .await
            .unwrap();
        let px = |v: &Value| v.as_f64().unwrap();
        eprintln!("{lang}: {}", seen["parts"]);
        assert_eq!(seen["lang"], lang.code());
        assert_eq!(seen["dir"], lang.dir(), "{lang}");
        let inner = px(&seen["inner"]);
        assert!(px(&seen["body"]) <= inner, "{lang}: {}", seen["body"]);
        assert!(px(&seen["doc"]) <= inner, "{lang}: {}", seen["doc"]);
        let found = seen["parts"].as_array().unwrap();
        assert!(!found.is_empty(), "{lang}: nothing found by {parts}");
        for part in found {
            assert!(px(&part["left"]) >= 0.0, "{lang}: {part}");
            assert!(px(&part["right"]) <= inner, "{lang}: {part}");
        }
        seen
    }

    /// The first element `css` finds, waiting for it up to `secs`.
    pub async fn wait_for(&self, css: &str, secs: u64) -> Element {
        until(secs, css, async || {
            self.client.find(Locator::Css(css)).await.ok()
        })
        .await
    }

    /// Waits until `css` finds nothing.
    pub async fn wait_gone(&self, css: &str, secs: u64) {
        until(secs, &format!("{css} to go"), async || {
            match self.client.find_all(Locator::Css(css)).await {
                Ok(found) if found.is_empty() => Some(()),
                _ => None,
            }
        })
        .await
    }

    /// The text of the first element `css` finds now ("" when none).
    pub async fn text(&self, css: &str) -> String {
        match self.client.find(Locator::Css(css)).await {
            Ok(e) => e.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// Types `text` into the field `css` finds (cleared first).
    pub async fn type_into(&self, css: &str, text: &str) {
        let field = self.wait_for(css, 10).await;
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    /// Clicks `css` (a submit button) and waits for the page it leads to: a new document
    /// (the old one was marked before the click) whose URL starts with `path_prefix`.
    pub async fn submit(&self, css: &str, path_prefix: &str) -> String {
        let button = self.wait_for(css, 10).await;
        self.eval("window.boardscribeBeforeSubmit = true; return null")
            .await;
        button.click().await.unwrap();
        until(20, &format!("the page {path_prefix}"), async || {
            let loaded = self
                .client
                .execute(
                    "return document.readyState === 'complete' && !window.boardscribeBeforeSubmit",
                    Vec::new(),
                )
                .await
                .ok()?;
            let path = self.path().await;
            (loaded == true && path.starts_with(path_prefix)).then_some(path)
        })
        .await
    }

    /// Logs into the arbiter's console at `console` (its `/arbiter` URL) with the admin `token`
    /// as `name`; returns the path the login leads to.
    pub async fn log_in(&self, console: &str, token: &str, name: &str) -> String {
        self.goto(console).await;
        self.wait_for("form.login", 20).await;
        self.type_into("input[name=token]", token).await;
        self.type_into("input[name=name]", name).await;
        self.submit("form.login button[type=submit]", "/arbiter")
            .await
    }

    /// Keeps a screenshot as `target/test-artifacts/console/PREFIX-NN-name.png`.
    pub async fn screenshot(&mut self, name: &str) {
        self.shots += 1;
        let png = self.client.screenshot().await.unwrap();
        let file = artifacts().join(format!("{}-{:02}-{name}.png", self.prefix, self.shots));
        std::fs::write(&file, png).unwrap();
    }

    /// Ends the session (chromium quits); the driver is killed when this returns.
    pub async fn close(self) {
        let Browser { client, .. } = self;
        client.close().await.unwrap();
    }
}

/// Waits for `cond` on fresh reads, up to `secs` (polls every 200 ms).
pub async fn until<T>(secs: u64, what: &str, mut cond: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = cond().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `text` with its `%XX` escapes decoded (the console's redirects escape every byte that is not
/// unreserved, a `+` too).
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
