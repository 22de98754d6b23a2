//! A client of MCP 2026-07-28 over streamable HTTP, as the protocol's text gives it: no
//! handshake, every request carrying its version and capabilities (`_meta` and the standard
//! `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers), and a new connection for each
//! request, so that a round-robin proxy in front of several servers spreads one agent's requests
//! over all of them.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use serde_json::{Value, json};

use crate::{
    HarnessError,
    cli::{binary, free_port, until_listening},
};

fn failed(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// What a client that can send its human to a page declares (URL-mode elicitation).
pub fn by_url() -> Value {
    json!({ "elicitation": { "url": {} } })
}

/// The page an `input_required` result sends the human to, and the state its retry echoes.
pub fn asked(result: &Value) -> Result<(String, String), HarnessError> {
    let url = result["inputRequests"]["confirm"]["params"]["url"].as_str();
    let state = result["requestState"].as_str();
    match (result["resultType"].as_str(), url, state) {
        (Some("input_required"), Some(url), Some(state)) => Ok((url.to_owned(), state.to_owned())),
        _ => Err(failed(format!("expected an input_required result naming a page: {result}"))),
    }
}

/// The retry of `create-pact` with `args` after the human was asked, echoing `state`.
pub fn retry(args: &Value, state: &str) -> Value {
    json!({
        "name": "create-pact", "arguments": args, "requestState": state,
        "inputResponses": { "confirm": { "action": "accept" } },
    })
}

/// Starts `agentpact mcp --http` on a free loopback port with `env`: the process and its
/// `host:port` (its endpoint is `/mcp` there). Without `MCP_HTTP_TOKEN` in `env` it runs with
/// `--no-token`: these tests' clients are the machine's only local processes.
pub async fn serve(env: &[(&'static str, String)]) -> Result<(tokio::process::Child, String), HarnessError> {
    let open = !env.iter().any(|(k, _)| *k == "MCP_HTTP_TOKEN");
    start(env, &["--no-token"][..usize::from(open)], std::process::Stdio::null()).await
}

/// Starts `agentpact mcp --http` on a free loopback port with `env`, neither a token nor
/// `--no-token`: the process, its `host:port`, and the token it made and printed at start.
pub async fn serve_with_made_token(
    env: &[(&'static str, String)],
) -> Result<(tokio::process::Child, String, String), HarnessError> {
    use tokio::io::AsyncBufReadExt;
    let (mut child, at) = start(env, &[], std::process::Stdio::piped()).await?;
    let stderr = child.stderr.take().ok_or_else(|| failed("no stderr"))?;
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let printed = async {
        while let Some(line) = lines.next_line().await.map_err(failed)? {
            if let Some(token) = line.trim().strip_prefix("Authorization: Bearer ") {
                return Ok(token.to_owned());
            }
        }
        Err(failed("agentpact mcp --http printed no token"))
    };
    let token = tokio::time::timeout(Duration::from_secs(30), printed).await.map_err(failed)??;
    // Drained from here on, so that logging never fills the pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, at, token))
}

/// Starts `agentpact mcp --http` on a free loopback port with `env` and `args`, its stderr to
/// `stderr`, once it listens.
async fn start(
    env: &[(&'static str, String)],
    args: &[&str],
    stderr: std::process::Stdio,
) -> Result<(tokio::process::Child, String), HarnessError> {
    let port = free_port()?;
    let child = tokio::process::Command::new(binary())
        .args(["mcp", "--http", &format!("127.0.0.1:{port}")])
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .kill_on_drop(true)
        .spawn()
        .map_err(failed)?;
    until_listening(port, "agentpact mcp --http").await?;
    Ok((child, format!("127.0.0.1:{port}")))
}

/// A human's answer on the confirmation page at `page` (`confirm` or `decline`), posted as the
/// page's form does; the page's HTTP status.
pub async fn answer_page(page: &str, decision: &str) -> Result<reqwest::StatusCode, HarnessError> {
    let human = reqwest::Client::builder().pool_max_idle_per_host(0).build().map_err(failed)?;
    let answered = human
        .post(page)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("decision={decision}"))
        .send()
        .await
        .map_err(failed)?;
    Ok(answered.status())
}

/// The protocol this client speaks.
const VERSION: &str = "2026-07-28";

/// The `_meta` every 2026-07-28 request carries, for a client declaring `capabilities`.
pub fn meta(capabilities: &Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": { "name": "agentpact-tests", "version": "1" },
    })
}

/// A 2026-07-28 client of one MCP endpoint.
pub struct ModernClient {
    http: reqwest::Client,
    url: String,
    capabilities: Value,
    next: AtomicU64,
    /// The `Authorization` header every request carries, if any.
    bearer: Option<String>,
}

impl ModernClient {
    /// A client of the endpoint `url` (e.g. `http://127.0.0.1:4000/mcp`) declaring `capabilities`.
    pub fn new(url: &str, capabilities: Value) -> Result<Self, HarnessError> {
        let http = reqwest::Client::builder().pool_max_idle_per_host(0).build().map_err(failed)?;
        Ok(Self { http, url: url.to_owned(), capabilities, next: AtomicU64::new(1), bearer: None })
    }

    /// This client sending `Authorization: Bearer <token>` with every request.
    pub fn with_token(self, token: &str) -> Self {
        Self { bearer: Some(format!("Bearer {token}")), ..self }
    }

    /// POSTs `body` as it is (broken, huge or deep messages too) with the headers of a
    /// `tools/call` of `tool`: the HTTP status and the JSON-RPC messages answered (a JSON body or
    /// events).
    pub async fn post_raw(
        &self,
        tool: &str,
        body: impl Into<reqwest::Body>,
    ) -> Result<(reqwest::StatusCode, Vec<Value>), HarnessError> {
        let request =
            self.post("tools/call").header("Mcp-Name", tool).header("Content-Type", "application/json");
        let response = request.body(body).send().await;
        let response = response.map_err(failed)?;
        let status = response.status();
        let text = response.text().await.map_err(failed)?;
        let messages = match serde_json::from_str(&text) {
            Ok(message) => vec![message],
            Err(_) => events(&text),
        };
        Ok((status, messages))
    }

    /// A POST to the endpoint with the headers every request of `method` carries.
    fn post(&self, method: &str) -> reqwest::RequestBuilder {
        let request = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", VERSION)
            .header("Mcp-Method", method);
        match &self.bearer {
            Some(bearer) => request.header("Authorization", bearer),
            None => request,
        }
    }

    fn meta(&self) -> Value {
        meta(&self.capabilities)
    }

    /// Sends `method` with `params` (its `_meta` added); the response, not yet read.
    async fn send(&self, method: &str, mut params: Value) -> Result<(u64, reqwest::Response), HarnessError> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        params["_meta"] = self.meta();
        let name = ["name", "uri", "taskId"].iter().find_map(|k| params.get(*k)).and_then(Value::as_str);
        let name = name.map(str::to_owned);
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let mut request = self.post(method).json(&body);
        if let Some(name) = name {
            request = request.header("Mcp-Name", name);
        }
        let response = request.send().await.map_err(failed)?;
        if !response.status().is_success() {
            let status = response.status();
            let text = response.text().await.unwrap_or_default();
            return Err(failed(format!("{method}: HTTP {status}: {text}")));
        }
        Ok((id, response))
    }

    /// The JSON-RPC answer to `method` with `params`: `{"result": …}` or `{"error": …}`.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, HarnessError> {
        let (id, response) = self.send(method, params).await?;
        let text = response.text().await.map_err(failed)?;
        let messages: Vec<Value> = if text.trim_start().starts_with('{') {
            vec![serde_json::from_str(&text).map_err(failed)?]
        } else {
            events(&text)
        };
        messages
            .into_iter()
            .find(|m| m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()))
            .ok_or_else(|| failed(format!("{method}: no answer to request {id} in {text}")))
    }

    /// The result of tool `name` with `args` (the JSON-RPC `result`; an error is `Err`).
    pub async fn call(&self, name: &str, args: Value) -> Result<Value, HarnessError> {
        self.call_with(json!({ "name": name, "arguments": args })).await
    }

    /// The result of `tools/call` with `params` (a retry's `inputResponses` and `requestState`).
    pub async fn call_with(&self, params: Value) -> Result<Value, HarnessError> {
        let answer = self.request("tools/call", params).await?;
        answer.get("result").cloned().ok_or_else(|| failed(format!("tools/call failed: {answer}")))
    }

    /// Opens `subscriptions/listen` with `filter`; the stream stays open while the returned
    /// [`Listening`] lives.
    pub async fn listen(&self, filter: Value) -> Result<Listening, HarnessError> {
        let (_, response) = self.send("subscriptions/listen", json!({ "notifications": filter })).await?;
        Ok(Listening { response, buffer: String::new() })
    }
}

/// An open `subscriptions/listen` stream.
pub struct Listening {
    response: reqwest::Response,
    buffer: String,
}

impl Listening {
    /// The next message on the stream whose `method` is `method`, within `limit`.
    pub async fn next(&mut self, method: &str, limit: Duration) -> Result<Value, HarnessError> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                if let Some(message) = events(&event).into_iter().find(|m| m["method"] == method) {
                    return Ok(message);
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .map_err(|_| failed(format!("no {method} on the stream within {limit:?}")))?
                .map_err(failed)?
                .ok_or_else(|| failed(format!("the stream ended before {method}")))?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }
}

/// The JSON messages of server-sent events in `text` (their `data:` lines).
fn events(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}
