//! A real Chromium, driven over WebDriver by chromedriver (Debian's `chromium` and
//! `chromium-driver`, installed by scripts/install-tools): pages are loaded, clicked and typed
//! into as a person would, and the browser's own performance log says which URLs it requested.

use std::{path::Path, time::Duration};

use base64::Engine;
use serde_json::{Value, json};
use tokio::process::Child;

use crate::{HarnessError, cli::free_port};

/// The WebDriver id of an element in a find answer.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// The Tab key, for [`Browser::press`].
pub const TAB: &str = "\u{E004}";
/// The Enter key, for [`Browser::press`].
pub const ENTER: &str = "\u{E007}";

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// Where screenshots go: beside the binaries, under the cargo target dir
/// (`<target dir>/dashboard-screenshots/`).
pub fn screenshots() -> std::path::PathBuf {
    let binary = crate::cli::binary();
    let target = binary.parent().and_then(|debug| debug.parent()).map(Path::to_path_buf).unwrap_or_default();
    target.join("dashboard-screenshots")
}

/// A headless Chromium with one window, and the chromedriver that drives it.
pub struct Browser {
    http: reqwest::Client,
    session: String,
    _driver: Child,
}

impl Browser {
    /// Starts chromedriver (`CHROMEDRIVER` or `chromedriver` on the PATH) and a headless
    /// Chromium (`CHROMIUM`, default `/usr/bin/chromium`) with a `width` × `height` window.
    pub async fn start(width: u32, height: u32) -> Result<Self, HarnessError> {
        let driver_bin = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let port = free_port()?;
        let driver = tokio::process::Command::new(&driver_bin)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                process(format!("{driver_bin}: {e}; run scripts/install-tools (it installs chromium-driver)"))
            })?;
        crate::cli::until_listening(port, "chromedriver").await?;
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}/session");
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--no-first-run", "--disable-extensions", format!("--window-size={width},{height}")],
            },
            "goog:loggingPrefs": { "performance": "ALL", "browser": "ALL" },
        } } });
        let answer = call(http.post(&base).json(&capabilities)).await?;
        let id = answer["sessionId"].as_str().ok_or_else(|| process(format!("no session: {answer}")))?;
        Ok(Self { session: format!("{base}/{id}"), http, _driver: driver })
    }

    /// Marks the dashboard page on screen as stale, so [`Browser::drawn`] waits for the next one: a
    /// new hash is a same-document navigation, and the router hears of it a moment after the URL
    /// has changed.
    pub async fn leaving(&self) -> Result<(), HarnessError> {
        self.run("const m = document.querySelector('main'); if (m) m.dataset.ready = 'stale'", json!([]))
            .await
            .map(drop)
    }

    /// Waits until the dashboard's router has drawn the page for the current URL.
    pub async fn drawn(&self) -> Result<(), HarnessError> {
        self.wait_for(
            "the page drawn",
            "return document.querySelector('main').dataset.ready === 'true'",
            Duration::from_secs(10),
        )
        .await
        .map(drop)
    }

    /// Opens dashboard page `url` and waits until it is drawn.
    pub async fn open(&self, url: &str) -> Result<(), HarnessError> {
        self.leaving().await?;
        self.goto(url).await?;
        self.drawn().await
    }

    /// The stage rows of the dashboard's pact page on screen: each row's `index`, `status` and
    /// what its end credited the seller and the buyer as the page shows it (`toSeller`, `toBuyer`).
    pub async fn stage_rows(&self) -> Result<Value, HarnessError> {
        self.run(
            "return [...document.querySelectorAll('tr[data-stage]')].map((r) => ({
               index: Number(r.dataset.stage), status: r.dataset.status,
               toSeller: r.querySelector('[data-to=seller]').textContent,
               toBuyer: r.querySelector('[data-to=buyer]').textContent }))",
            json!([]),
        )
        .await
    }

    /// Opens `url` (returns once the page has loaded, before its scripts have fetched anything).
    pub async fn goto(&self, url: &str) -> Result<(), HarnessError> {
        call(self.http.post(format!("{}/url", self.session)).json(&json!({ "url": url }))).await.map(drop)
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page and returns its value.
    pub async fn run(&self, script: &str, args: Value) -> Result<Value, HarnessError> {
        call(
            self.http
                .post(format!("{}/execute/sync", self.session))
                .json(&json!({ "script": script, "args": args })),
        )
        .await
    }

    /// Runs `script` until it returns something other than null or false, at most `limit`;
    /// returns that value, or an error naming `what` was awaited.
    pub async fn wait_for(&self, what: &str, script: &str, limit: Duration) -> Result<Value, HarnessError> {
        let until = std::time::Instant::now() + limit;
        loop {
            let value = self.run(script, json!([])).await?;
            if !value.is_null() && value != Value::Bool(false) {
                return Ok(value);
            }
            if std::time::Instant::now() > until {
                let text = self.run("return document.body.innerText", json!([])).await?;
                return Err(process(format!("{what}: not within {limit:?}; the page reads:\n{text}")));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Clicks the first element matching `css`.
    pub async fn click(&self, css: &str) -> Result<(), HarnessError> {
        let id = self.find(css).await?;
        call(self.http.post(format!("{}/element/{id}/click", self.session)).json(&json!({}))).await.map(drop)
    }

    /// Clears the first field matching `css` and types `text` into it, key by key.
    pub async fn type_into(&self, css: &str, text: &str) -> Result<(), HarnessError> {
        let id = self.find(css).await?;
        call(self.http.post(format!("{}/element/{id}/clear", self.session)).json(&json!({}))).await?;
        call(self.http.post(format!("{}/element/{id}/value", self.session)).json(&json!({ "text": text })))
            .await
            .map(drop)
    }

    /// Presses `keys` one after another on the keyboard, wherever the focus is: WebDriver's
    /// key codes (`TAB`, `ENTER`) or plain characters.
    pub async fn press(&self, keys: &[&str]) -> Result<(), HarnessError> {
        let strokes: Vec<Value> = keys
            .iter()
            .flat_map(|k| [json!({ "type": "keyDown", "value": k }), json!({ "type": "keyUp", "value": k })])
            .collect();
        let actions = json!({ "actions": [{ "type": "key", "id": "keyboard", "actions": strokes }] });
        call(self.http.post(format!("{}/actions", self.session)).json(&actions)).await.map(drop)
    }

    /// Resizes the window to `width` × `height`.
    pub async fn resize(&self, width: u32, height: u32) -> Result<(), HarnessError> {
        let rect = json!({ "width": width, "height": height });
        call(self.http.post(format!("{}/window/rect", self.session)).json(&rect)).await.map(drop)
    }

    /// Writes a PNG of the window to `path` (creating its folder).
    pub async fn screenshot(&self, path: &Path) -> Result<(), HarnessError> {
        let shot = call(self.http.get(format!("{}/screenshot", self.session))).await?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot.as_str().unwrap_or_default())
            .map_err(process)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(process)?;
        }
        std::fs::write(path, png).map_err(process)
    }

    /// Every URL the page requested since the last call (the browser's performance log:
    /// documents, scripts, styles, fetches and websockets alike).
    pub async fn requested_urls(&self) -> Result<Vec<String>, HarnessError> {
        let log = self.log("performance").await?;
        let mut urls = Vec::new();
        for entry in log {
            let message: Value =
                serde_json::from_str(entry["message"].as_str().unwrap_or("{}")).map_err(process)?;
            let params = &message["message"]["params"];
            match message["message"]["method"].as_str() {
                Some("Network.requestWillBeSent") => {
                    urls.push(params["request"]["url"].as_str().unwrap_or("").to_owned())
                }
                Some("Network.webSocketCreated") => {
                    urls.push(params["url"].as_str().unwrap_or("").to_owned())
                }
                _ => {}
            }
        }
        Ok(urls)
    }

    /// The page's console errors and uncaught exceptions since the last call.
    pub async fn console_errors(&self) -> Result<Vec<String>, HarnessError> {
        let log = self.log("browser").await?;
        Ok(log
            .into_iter()
            .filter(|entry| entry["level"] == "SEVERE")
            .map(|entry| entry["message"].as_str().unwrap_or_default().to_owned())
            .collect())
    }

    async fn log(&self, kind: &str) -> Result<Vec<Value>, HarnessError> {
        let log =
            call(self.http.post(format!("{}/se/log", self.session)).json(&json!({ "type": kind }))).await?;
        Ok(log.as_array().cloned().unwrap_or_default())
    }

    async fn find(&self, css: &str) -> Result<String, HarnessError> {
        let query = json!({ "using": "css selector", "value": css });
        let found = call(self.http.post(format!("{}/element", self.session)).json(&query)).await?;
        found[ELEMENT]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| process(format!("no element {css}: {found}")))
    }

    /// Ends the session (closing Chromium) and stops the driver.
    pub async fn close(self) -> Result<(), HarnessError> {
        call(self.http.delete(&self.session)).await.map(drop)
    }
}

/// Sends a WebDriver command and returns its `value`, or the driver's error as a HarnessError.
async fn call(request: reqwest::RequestBuilder) -> Result<Value, HarnessError> {
    let response = request.send().await.map_err(process)?;
    let ok = response.status().is_success();
    let body: Value = response.json().await.map_err(process)?;
    if !ok {
        return Err(process(format!("WebDriver: {} {}", body["value"]["error"], body["value"]["message"])));
    }
    Ok(body["value"].clone())
}
