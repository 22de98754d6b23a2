//! MCP agents for tests: the real server (`agentpact_mcp::PactServer`) for one dev account, and
//! rmcp's own client talking to it over an in-memory pipe.

use std::time::Duration;

use agentpact_mcp::{PactServer, Role, WriteLimits};
use agentpact_read::Reader;
use alloy::{
    primitives::{Address, U256},
    signers::local::PrivateKeySigner,
};
use rmcp::{
    ServiceExt,
    model::{CallToolRequestParams, CallToolResult},
    service::{RoleClient, RunningService},
};
use serde_json::Value;

use crate::{HarnessError, chain::TestChain, index::target, postgres::TestDatabase};

/// One agent: a dev account's key behind an MCP server, and a client connected to it.
pub struct TestAgent {
    /// The client.
    pub client: RunningService<RoleClient, ()>,
    /// The agent's address.
    pub address: Address,
    /// The agent's wallet, to point at a relay.
    chain: std::sync::Arc<agentpact_mcp::Chain>,
    /// The output schemas the server lists, read when it starts.
    schemas: OutputSchemas,
}

/// The `outputSchema` of every tool a server lists: each call's structured result, answer or
/// error, is checked against its tool's, so no test can skip the check.
pub struct OutputSchemas {
    by_tool: std::collections::HashMap<String, jsonschema::Validator>,
}

impl OutputSchemas {
    /// The schemas of `tools`, as `tools/list` gave them (JSON); every tool must declare one.
    pub fn of(tools: &[Value]) -> Result<Self, HarnessError> {
        let mut by_tool = std::collections::HashMap::new();
        for tool in tools {
            let name = tool["name"].as_str().unwrap_or_default().to_owned();
            let schema = tool
                .get("outputSchema")
                .ok_or_else(|| HarnessError::Process(format!("tool {name} declares no outputSchema")))?;
            if schema["type"] != "object" {
                return Err(HarnessError::Process(format!("{name}'s outputSchema is not an object schema")));
            }
            let validator = jsonschema::validator_for(schema).map_err(|e| {
                HarnessError::Process(format!("{name}'s outputSchema is not a JSON Schema: {e}"))
            })?;
            by_tool.insert(name, validator);
        }
        Ok(Self { by_tool })
    }

    /// Checks what `tool` answered. A tool the server does not list (outside its role) can only
    /// fail; its error is checked against get-pact's schema, which every role lists and whose
    /// error branch every tool shares.
    pub fn check(&self, tool: &str, structured: Option<&Value>, is_error: bool) -> Result<(), HarnessError> {
        let structured = structured
            .ok_or_else(|| HarnessError::Process(format!("{tool} answered without structuredContent")))?;
        let validator = match self.by_tool.get(tool) {
            Some(v) => v,
            None if is_error => self
                .by_tool
                .get("get-pact")
                .ok_or_else(|| HarnessError::Process("the server lists no get-pact".into()))?,
            None => return Err(HarnessError::Process(format!("{tool} is not listed, yet it answered"))),
        };
        let wrong: Vec<String> =
            validator.iter_errors(structured).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(HarnessError::Process(format!(
                "{tool}'s structured result does not match its outputSchema: {}\n{structured}",
                wrong.join("; ")
            )))
        }
    }
}

/// What a tool answered.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// The sentence.
    pub text: String,
    /// The structured result.
    pub data: Value,
    /// Whether it is an error.
    pub is_error: bool,
}

/// The spending caps agents get in tests: 10 ETH, 1,000 USDC.
pub fn test_limits() -> WriteLimits {
    WriteLimits {
        max_value: U256::from(10u64) * U256::from(10u64).pow(U256::from(18u64)),
        // 1,000 USDC, at the cap's 18-decimal scale.
        max_value_usdc: U256::from(1000u64) * U256::from(10u64).pow(U256::from(18u64)),
        receipt_timeout: Duration::from_secs(30),
        call_timeout: Duration::from_secs(30),
        confirm_above: U256::MAX,
        confirm_above_usdc: U256::MAX,
        index_wait: Duration::from_secs(10),
    }
}

/// The private key of dev account `n` of `chain`.
pub fn dev_key(chain: &TestChain, n: usize) -> Result<PrivateKeySigner, HarnessError> {
    let keys = chain.anvil.keys();
    let key = keys.get(n).ok_or_else(|| HarnessError::Process(format!("no dev key {n}")))?;
    Ok(PrivateKeySigner::from(key.clone()))
}

impl TestAgent {
    /// Dev account `n` as an agent in `role`, reading the index in `db`, writing under `limits`.
    pub async fn start(
        chain: &TestChain,
        db: &TestDatabase,
        n: usize,
        role: Role,
        limits: WriteLimits,
    ) -> Result<Self, HarnessError> {
        Self::start_with(chain, db, dev_key(chain, n)?, chain.anvil.endpoint_url(), role, limits).await
    }

    /// An agent holding `signer`, reaching the chain through `url`.
    pub async fn start_with(
        chain: &TestChain,
        db: &TestDatabase,
        signer: PrivateKeySigner,
        url: alloy::transports::http::reqwest::Url,
        role: Role,
        limits: WriteLimits,
    ) -> Result<Self, HarnessError> {
        Self::start_reading(chain, Reader::new(db.pool().clone()), signer, url, role, limits).await
    }

    /// An agent holding `signer`, reaching the chain through `url`, reading the index through
    /// `reader` (a replica's, say).
    pub async fn start_reading(
        chain: &TestChain,
        reader: Reader,
        signer: PrivateKeySigner,
        url: alloy::transports::http::reqwest::Url,
        role: Role,
        limits: WriteLimits,
    ) -> Result<Self, HarnessError> {
        let t = target(chain);
        let agent = agentpact_mcp::connect(
            url,
            &agentpact_contracts::rpc::RpcLimits::default(),
            t.chain_id,
            t.contracts,
            signer,
            reader,
            limits,
        )
        .await
        .map_err(|e| HarnessError::Process(e.to_string()))?;
        Self::serving(agent, role).await
    }

    /// The MCP server of `agent` (a wallet connected as a test needs it: other contracts, say) in
    /// `role`, spoken to over an in-memory pipe.
    pub async fn serving(
        agent: std::sync::Arc<agentpact_mcp::Chain>,
        role: Role,
    ) -> Result<Self, HarnessError> {
        let address = agent.me;
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        let server = PactServer::new(agent.clone(), role);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client =
            ().serve(client_io).await.map_err(|e| HarnessError::Process(format!("MCP client: {e}")))?;
        let tools =
            client.list_all_tools().await.map_err(|e| HarnessError::Process(format!("tools/list: {e}")))?;
        let tools: Vec<Value> = tools
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<_, _>>()
            .map_err(|e| HarnessError::Process(format!("tools/list: {e}")))?;
        Ok(Self { client, address, chain: agent, schemas: OutputSchemas::of(&tools)? })
    }

    /// Points the agent's negotiation tools at the relay of the api at `base` (e.g. a `TestApi`'s).
    pub fn use_relay(&self, base: &str) -> Result<(), HarnessError> {
        let url = format!("{}/", base.trim_end_matches('/'))
            .parse()
            .map_err(|e| HarnessError::Process(format!("{e}")))?;
        self.chain.set_relay(url);
        Ok(())
    }

    /// Calls `tool` with `args` (a JSON object).
    pub async fn call(&self, tool: &str, args: Value) -> Result<Reply, HarnessError> {
        let mut request = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = args {
            request = request.with_arguments(map);
        }
        let result: CallToolResult = self
            .client
            .call_tool(request)
            .await
            .map_err(|e| HarnessError::Process(format!("{tool}: {e}")))?;
        let text = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        self.schemas.check(tool, result.structured_content.as_ref(), result.is_error == Some(true))?;
        Ok(Reply {
            text,
            data: result.structured_content.unwrap_or_default(),
            is_error: result.is_error == Some(true),
        })
    }

    /// Calls `tool`, which must succeed.
    pub async fn ok(&self, tool: &str, args: Value) -> Result<Reply, HarnessError> {
        let reply = self.call(tool, args).await?;
        if reply.is_error {
            return Err(HarnessError::Process(format!("{tool} failed: {}", reply.text)));
        }
        Ok(reply)
    }

    /// Reads resource `uri` and parses its JSON text.
    pub async fn resource(&self, uri: &str) -> Result<Value, HarnessError> {
        let read = self
            .client
            .read_resource(rmcp::model::ReadResourceRequestParams::new(uri.to_owned()))
            .await
            .map_err(|e| HarnessError::Process(format!("{uri}: {e}")))?;
        let body = serde_json::to_value(&read.contents[0]).unwrap_or_default();
        Ok(serde_json::from_str(body["text"].as_str().unwrap_or_default()).unwrap_or_default())
    }

    /// Calls `tool`, which must fail; returns the error's code and sentence.
    pub async fn refused(&self, tool: &str, args: Value) -> Result<(String, String), HarnessError> {
        let reply = self.call(tool, args).await?;
        if !reply.is_error {
            return Err(HarnessError::Process(format!("{tool} should have failed but said: {}", reply.text)));
        }
        let code = reply.data["error"]["code"].as_str().unwrap_or_default().to_owned();
        Ok((code, reply.text))
    }
}

/// The environment `agentpact mcp` needs for `chain`'s contracts and ERC-8004 registries, reached
/// at `rpc` (the node, or a proxy in front of it), and the database at `database_url`. The signing
/// key is the caller's to add.
pub fn binary_env(chain: &TestChain, rpc: &str, database_url: &str) -> Vec<(&'static str, String)> {
    let d = chain.deployment;
    vec![
        ("RPC_URL", rpc.to_owned()),
        ("CHAIN_ID", chain.anvil.chain_id().to_string()),
        ("AGENT_PACT_ADDRESS", d.agent_pact.to_string()),
        ("ORACLE_REGISTRY_ADDRESS", d.oracle_registry.to_string()),
        ("AGENT_REGISTRY_ADDRESS", d.agent_registry.to_string()),
        ("ERC8004_IDENTITY_ADDRESS", chain.erc8004.identity.to_string()),
        ("ERC8004_REPUTATION_ADDRESS", chain.erc8004.reputation.to_string()),
        ("DATABASE_URL", database_url.to_owned()),
    ]
}

/// The real `agentpact mcp` binary over stdio, spoken to in JSON-RPC: an agent as an MCP client
/// runs it. Keeps everything the process printed (stdout and stderr) for tests that search it.
/// Killed when dropped.
pub struct StdioAgent {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    stderr: tokio::task::JoinHandle<String>,
    /// What it logged on stderr so far.
    logged: std::sync::Arc<std::sync::Mutex<String>>,
    printed: Vec<String>,
    /// Notifications read while waiting for an answer, oldest first.
    heard: std::collections::VecDeque<Value>,
    next_id: u64,
    schemas: Option<OutputSchemas>,
}

impl StdioAgent {
    /// Starts `agentpact mcp` with `env` (PRIVATE_KEY, RPC_URL, …) and completes the handshake.
    pub async fn start(env: &[(&str, String)]) -> Result<Self, HarnessError> {
        let mut agent = Self::spawn(env).await?;
        agent.handshake().await?;
        Ok(agent)
    }

    /// Starts `agentpact mcp` with `env`, sending nothing yet.
    pub async fn spawn(env: &[(&str, String)]) -> Result<Self, HarnessError> {
        use tokio::io::{AsyncBufReadExt, AsyncReadExt};
        let failed = |e: std::io::Error| HarnessError::Process(format!("agentpact mcp: {e}"));
        let mut command = tokio::process::Command::new(crate::cli::binary());
        command.arg("mcp").env_remove("DATABASE_URL").kill_on_drop(true);
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(failed)?;
        let missing = |pipe: &str| HarnessError::Process(format!("no {pipe}"));
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        let mut stderr = child.stderr.take().ok_or_else(|| missing("stderr"))?;
        // Drained as it comes: debug logging fills a pipe buffer long before a test ends.
        let logged = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let so_far = std::sync::Arc::clone(&logged);
        let stderr = tokio::spawn(async move {
            let mut chunk = vec![0; 64 * 1024];
            while let Ok(read @ 1..) = stderr.read(&mut chunk).await {
                let text = String::from_utf8_lossy(&chunk[..read]);
                so_far.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push_str(&text);
            }
            so_far.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
        });
        let stdout = tokio::io::BufReader::new(stdout).lines();
        Ok(Self {
            child,
            stdin,
            stdout,
            stderr,
            logged,
            printed: Vec::new(),
            heard: std::collections::VecDeque::new(),
            next_id: 1,
            schemas: None,
        })
    }

    /// The MCP 2025-11-25 handshake (`initialize`, then `notifications/initialized`), and the tool
    /// list whose output schemas every later answer is checked against.
    pub async fn handshake(&mut self) -> Result<(), HarnessError> {
        self.handshake_with(serde_json::json!({})).await
    }

    /// [`Self::handshake`] for a client declaring `capabilities` (e.g. URL-mode elicitation).
    pub async fn handshake_with(&mut self, capabilities: Value) -> Result<(), HarnessError> {
        let agent = self;
        let init = serde_json::json!({
            "protocolVersion": "2025-06-18", "capabilities": capabilities,
            "clientInfo": { "name": "test", "version": "0" }
        });
        agent.request("initialize", init).await?;
        agent.send(&serde_json::json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await?;
        let listed = agent.request("tools/list", serde_json::json!({})).await?;
        let tools = listed["tools"].as_array().cloned().unwrap_or_default();
        agent.schemas = Some(OutputSchemas::of(&tools)?);
        Ok(())
    }

    /// Calls `tool`, which must succeed; returns its structured result.
    pub async fn ok(&mut self, tool: &str, args: Value) -> Result<Value, HarnessError> {
        let result = self.call(tool, args).await?;
        if result["isError"] == true {
            return Err(HarnessError::Process(format!("{tool} failed: {result}")));
        }
        Ok(result["structuredContent"].clone())
    }

    /// Calls `tool`; returns the JSON-RPC answer whole (`result` or `error`), failed calls included.
    pub async fn call(&mut self, tool: &str, args: Value) -> Result<Value, HarnessError> {
        let answer =
            self.exchange("tools/call", serde_json::json!({ "name": tool, "arguments": args })).await?;
        if let (Some(result), Some(schemas)) = (answer.get("result"), &self.schemas) {
            schemas.check(tool, result.get("structuredContent"), result["isError"] == true)?;
        }
        Ok(answer.get("result").cloned().unwrap_or(answer))
    }

    /// Closes stdin, waits (bounded) for the server to exit, and returns everything it printed.
    pub async fn finish(self) -> Result<String, HarnessError> {
        let (stdout, stderr) = self.stop().await?;
        Ok(format!("{stdout}\n{stderr}"))
    }

    /// Closes stdin, waits (bounded) for the server to exit, and returns what it printed on stdout
    /// (the protocol) and on stderr (its logs), apart.
    pub async fn stop(mut self) -> Result<(String, String), HarnessError> {
        use tokio::io::AsyncWriteExt;
        let _ = self.stdin.shutdown().await;
        let exited = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
        if exited.is_err() {
            let _ = self.child.start_kill();
        }
        while let Ok(Some(line)) = self.stdout.next_line().await {
            self.printed.push(line);
        }
        let stderr = (&mut self.stderr).await.map_err(|e| HarnessError::Process(e.to_string()))?;
        Ok((self.printed.join("\n"), stderr))
    }

    async fn request(&mut self, method: &str, params: Value) -> Result<Value, HarnessError> {
        Ok(self.exchange(method, params).await?["result"].clone())
    }

    /// Sends a request and reads its answer (`result` or `error`, whole), which must be the next
    /// message on stdout but for notifications (kept for [`Self::notification`]).
    pub async fn exchange(&mut self, method: &str, params: Value) -> Result<Value, HarnessError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await?;
        let answer = self.answer(method).await?;
        if answer["id"] != id {
            return Err(HarnessError::Process(format!("answer out of order: {answer}")));
        }
        Ok(answer)
    }

    /// Sends `line` as it is (broken, huge or deep messages too) and reads the next message that is
    /// not a notification: the server's answer to it.
    pub async fn raw(&mut self, line: &str) -> Result<Value, HarnessError> {
        use tokio::io::AsyncWriteExt;
        let written = async {
            self.stdin.write_all(line.as_bytes()).await?;
            self.stdin.write_all(b"\n").await
        };
        written.await.map_err(|e| HarnessError::Process(format!("writing to agentpact mcp: {e}")))?;
        self.answer("a raw line").await
    }

    /// Calls `tool` in a session that declared URL-mode elicitation: the server's
    /// `elicitation/create` is accepted and its page answered with `decision` (`confirm` or
    /// `decline`) as a human would. Returns the call's JSON-RPC answer whole, and the pages asked.
    pub async fn call_confirming(
        &mut self,
        tool: &str,
        args: Value,
        decision: &str,
    ) -> Result<(Value, Vec<String>), HarnessError> {
        let id = self.next_id;
        self.next_id += 1;
        let params = serde_json::json!({ "name": tool, "arguments": args });
        self.send(
            &serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }),
        )
        .await?;
        let mut pages = Vec::new();
        loop {
            let message = self.answer(tool).await?;
            if message["method"] != "elicitation/create" {
                return Ok((message, pages));
            }
            let page = message["params"]["url"].as_str().unwrap_or_default().to_owned();
            crate::mcp_http::answer_page(&page, decision).await?;
            pages.push(page);
            let accepted = serde_json::json!({ "jsonrpc": "2.0", "id": message["id"], "result": { "action": "accept" } });
            self.send(&accepted).await?;
        }
    }

    /// Waits (at most `limit`) until the server has logged `text` on stderr.
    pub async fn until_logged(&self, text: &str, limit: Duration) -> Result<(), HarnessError> {
        let deadline = tokio::time::Instant::now() + limit;
        while !self.logged.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(text) {
            if tokio::time::Instant::now() >= deadline {
                return Err(HarnessError::Process(format!(
                    "agentpact mcp did not log {text:?} within {limit:?}"
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// The next notification `method` (one read before included), within `limit`.
    pub async fn notification(&mut self, method: &str, limit: Duration) -> Result<Value, HarnessError> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(at) = self.heard.iter().position(|m| m["method"] == method) {
                return Ok(self.heard.remove(at).unwrap_or_default());
            }
            let message = tokio::time::timeout_at(deadline, self.message())
                .await
                .map_err(|_| HarnessError::Process(format!("no {method} within {limit:?}")))??;
            self.heard.push_back(message);
        }
    }

    /// The next message that is not a notification (those are kept), within 60 s.
    async fn answer(&mut self, waited: &str) -> Result<Value, HarnessError> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let message = tokio::time::timeout_at(deadline, self.message())
                .await
                .map_err(|_| HarnessError::Process(format!("no answer to {waited} in 60 s")))??;
            if message.get("id").is_some() {
                return Ok(message);
            }
            self.heard.push_back(message);
        }
    }

    /// The next message on stdout.
    async fn message(&mut self) -> Result<Value, HarnessError> {
        let line = self.stdout.next_line().await.map_err(|e| HarnessError::Process(e.to_string()))?;
        let Some(line) = line else {
            // It exited: what it said on the way out is the reason.
            let stderr = tokio::time::timeout(Duration::from_secs(5), &mut self.stderr).await;
            let stderr = stderr.ok().and_then(Result::ok).unwrap_or_default();
            return Err(HarnessError::Process(format!("agentpact mcp closed stdout; its stderr:\n{stderr}")));
        };
        self.printed.push(line.clone());
        serde_json::from_str(&line).map_err(|e| HarnessError::Process(format!("{line:?}: {e}")))
    }

    async fn send(&mut self, message: &Value) -> Result<(), HarnessError> {
        use tokio::io::AsyncWriteExt;
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .map_err(|e| HarnessError::Process(format!("writing to agentpact mcp: {e}")))
    }
}

impl Drop for StdioAgent {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
