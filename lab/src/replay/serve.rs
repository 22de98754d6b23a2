//! The amplified chain served over JSON-RPC (HTTP POST, single calls and batches) on a loopback
//! port: `eth_chainId`, `net_version`, `eth_blockNumber`, `eth_getBlockByNumber` and
//! `eth_getBlockByHash` (headers only: transactions were not recorded) and `eth_getLogs` (block
//! range or block hash; address and topic filters), refusing a range of more than one block whose
//! answer would pass a provider's log cap, as hosted providers do. Anything else is answered "does
//! not exist" (-32601): the replay holds no state to call.

use std::sync::{
    Arc, RwLock,
    atomic::{AtomicU64, Ordering},
};

use alloy::{
    primitives::{Address, B256},
    rpc::types::Log,
};
use axum::{
    Json, Router,
    extract::State,
    http::header,
    response::{IntoResponse, Response},
    routing::post,
};
use serde::Serialize;
use serde_json::{Value, json, value::RawValue};

use super::{Amplified, branch::Served, record::quantity};

/// How a replay serves its chain.
#[derive(Debug, Clone, Copy, Default)]
pub struct Serving {
    /// The head revealed at the start (default: the whole chain).
    pub head: Option<u64>,
    /// The most logs one `eth_getLogs` over more than one block answers; past it the call is
    /// refused with "query returned more than N results", as hosted providers answer. A one-block
    /// range is never refused (an indexer has nothing smaller to ask). Default: no cap.
    pub max_logs: Option<usize>,
}

/// What the server's handlers share.
struct Shared {
    served: RwLock<Served>,
    max_logs: Option<usize>,
    /// `eth_getLogs` calls refused for passing the log cap.
    refused: AtomicU64,
}

/// A running replay; it stops when dropped.
pub struct Replay {
    /// Where it answers: `http://127.0.0.1:<port>/`.
    pub url: String,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay").field("url", &self.url).finish_non_exhaustive()
    }
}

impl Replay {
    /// Serves all of `chain` on a free loopback port, without a log cap.
    pub async fn serve(chain: Amplified) -> anyhow::Result<Self> {
        Self::serve_with(chain, Serving::default()).await
    }

    /// Serves `chain` on a free loopback port as `serving` says.
    pub async fn serve_with(chain: Amplified, serving: Serving) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/", listener.local_addr()?);
        let head = serving.head.unwrap_or(u64::MAX);
        let served = RwLock::new(Served::new(chain, head));
        let shared = Arc::new(Shared { served, max_logs: serving.max_logs, refused: AtomicU64::new(0) });
        let app = Router::new().route("/", post(rpc)).with_state(shared.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { url, shared, server })
    }

    /// The head served now.
    pub fn head(&self) -> u64 {
        self.read(|s| s.head())
    }

    /// Reveals the chain up to block `head`: a node that mined up to it.
    pub fn reveal(&self, head: u64) {
        self.write(|s| s.reveal(head));
    }

    /// Stages a reorg: blocks `from..=to` are served from a side branch (each the next copy's
    /// block at that place, with other hashes) and the head is `to`, until [`Self::settle`].
    pub fn fork(&self, from: u64, to: u64) -> anyhow::Result<()> {
        self.write(|s| s.fork(from, to))
    }

    /// Ends a staged reorg: the canonical chain replaces the side branch, at least as long.
    pub fn settle(&self) {
        self.write(Served::settle);
    }

    /// How many `eth_getLogs` calls were refused for passing the log cap.
    pub fn refused(&self) -> u64 {
        self.shared.refused.load(Ordering::Relaxed)
    }

    /// Calls `f` with the chain behind the replay.
    pub fn with_chain<T>(&self, f: impl FnOnce(&Amplified) -> T) -> T {
        self.read(|s| f(s.chain()))
    }

    fn read<T>(&self, f: impl FnOnce(&Served) -> T) -> T {
        f(&self.shared.served.read().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    fn write<T>(&self, f: impl FnOnce(&mut Served) -> T) -> T {
        f(&mut self.shared.served.write().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// One JSON-RPC response.
#[derive(Serialize)]
struct Reply {
    jsonrpc: &'static str,
    id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

/// One JSON-RPC body: a call or a batch of calls.
async fn rpc(State(shared): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    let served = shared.served.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    let view = View { served: &served, max_logs: shared.max_logs, refused: &shared.refused };
    let text = match body {
        Value::Array(calls) => {
            serde_json::to_string(&calls.iter().map(|c| view.answer(c)).collect::<Vec<_>>())
        }
        call => serde_json::to_string(&view.answer(&call)),
    };
    drop(served);
    match text {
        Ok(text) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        Err(e) => (axum::http::StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// A JSON-RPC error: its code and message.
type Refusal = (i64, String);

fn invalid(message: impl Into<String>) -> Refusal {
    (-32602, message.into())
}

/// The served chain as one call sees it.
struct View<'a> {
    served: &'a Served,
    max_logs: Option<usize>,
    refused: &'a AtomicU64,
}

impl View<'_> {
    /// The response to `call`.
    fn answer(&self, call: &Value) -> Reply {
        let id = call.get("id").cloned().unwrap_or(Value::Null);
        let params = call.get("params").cloned().unwrap_or_else(|| json!([]));
        let chain_id = self.served.chain().chain_id();
        let result = match call.get("method").and_then(Value::as_str) {
            Some("eth_chainId") => raw(&quantity(chain_id)),
            Some("net_version") => raw(&chain_id.to_string()),
            Some("eth_blockNumber") => raw(&quantity(self.served.head())),
            Some("eth_getBlockByNumber") => self.block_by_number(&params).and_then(|b| raw(&b)),
            Some("eth_getBlockByHash") => self.block_by_hash(&params).and_then(|b| raw(&b)),
            Some("eth_getLogs") => self.logs(&params).and_then(|logs| raw(&logs)),
            Some(other) => Err((-32601, format!("the method {other} does not exist/is not available"))),
            None => Err((-32600, "invalid request: no method".to_owned())),
        };
        match result {
            Ok(result) => Reply { jsonrpc: "2.0", id, result: Some(result), error: None },
            Err((code, message)) => Reply {
                jsonrpc: "2.0",
                id,
                result: None,
                error: Some(json!({ "code": code, "message": message })),
            },
        }
    }

    /// A block tag or quantity: `latest`, `safe`, `finalized` and `pending` are the head.
    fn block_number(&self, v: &Value) -> Result<u64, Refusal> {
        match v.as_str() {
            Some("latest" | "safe" | "finalized" | "pending") => Ok(self.served.head()),
            Some("earliest") => Ok(0),
            Some(text) => text
                .strip_prefix("0x")
                .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                .ok_or_else(|| invalid(format!("invalid block number {text:?}"))),
            None => Err(invalid(format!("invalid block number {v}"))),
        }
    }

    fn block_by_number(&self, params: &Value) -> Result<Option<&Value>, Refusal> {
        hashes_only(params)?;
        let n = self.block_number(params.get(0).unwrap_or(&Value::Null))?;
        Ok(self.served.block(n))
    }

    fn block_by_hash(&self, params: &Value) -> Result<Option<&Value>, Refusal> {
        hashes_only(params)?;
        let hash = block_hash(params.get(0))?;
        Ok(self.served.number_of_hash(&hash).and_then(|n| self.served.block(n)))
    }

    /// `eth_getLogs`: the block of `blockHash`, or `fromBlock..=toBlock` (defaults: latest; a
    /// range past the head is cut at the head), then the address and topic filters.
    fn logs(&self, params: &Value) -> Result<Vec<Log>, Refusal> {
        let filter = params.get(0).ok_or_else(|| invalid("eth_getLogs takes a filter object"))?;
        let head = self.served.head();
        let (from, to) = match filter.get("blockHash") {
            Some(hash) => {
                let hash = block_hash(Some(hash))?;
                let n = self
                    .served
                    .number_of_hash(&hash)
                    .ok_or_else(|| invalid(format!("unknown block {hash}")))?;
                (n, n)
            }
            None => {
                let bound = |key| filter.get(key).map_or(Ok(head), |v| self.block_number(v));
                (bound("fromBlock")?, bound("toBlock")?.min(head))
            }
        };
        if from > to && from <= head {
            return Err(invalid(format!(
                "invalid block range params: fromBlock {from} is after toBlock {to}"
            )));
        }
        let addresses = addresses(filter.get("address"))?;
        let topics = topics(filter.get("topics"))?;
        let mut found = Vec::new();
        for n in from..=to {
            let logs = self.served.logs(n).map_err(|e| (-32603, format!("replay: {e:#}")))?;
            found.extend(logs.into_iter().filter(|log| {
                (addresses.is_empty() || addresses.contains(&log.address())) && topics_match(&topics, log)
            }));
            if let Some(max) = self.max_logs.filter(|&max| to > from && found.len() > max) {
                self.refused.fetch_add(1, Ordering::Relaxed);
                return Err((-32005, format!("query returned more than {max} results")));
            }
        }
        Ok(found)
    }
}

/// `value` as a raw JSON result.
fn raw(value: &impl Serialize) -> Result<Box<RawValue>, Refusal> {
    serde_json::value::to_raw_value(value).map_err(|e| (-32603, format!("replay: {e}")))
}

/// Refuses full transactions: only headers and transaction hashes were recorded.
fn hashes_only(params: &Value) -> Result<(), Refusal> {
    match params.get(1).and_then(Value::as_bool) {
        Some(true) => Err(invalid("full transactions were not recorded: ask with false")),
        _ => Ok(()),
    }
}

fn block_hash(v: Option<&Value>) -> Result<B256, Refusal> {
    v.and_then(Value::as_str).and_then(|h| h.parse().ok()).ok_or_else(|| invalid("invalid block hash"))
}

/// The filter's `address`: one or a list (empty: any).
fn addresses(v: Option<&Value>) -> Result<Vec<Address>, Refusal> {
    let parse = |v: &Value| {
        v.as_str().and_then(|a| a.parse().ok()).ok_or_else(|| invalid(format!("invalid address {v}")))
    };
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(list)) => list.iter().map(parse).collect(),
        Some(one) => Ok(vec![parse(one)?]),
    }
}

/// The filter's `topics`: per position, any (empty) or one of a set.
fn topics(v: Option<&Value>) -> Result<Vec<Vec<B256>>, Refusal> {
    let parse = |v: &Value| {
        v.as_str().and_then(|t| t.parse().ok()).ok_or_else(|| invalid(format!("invalid topic {v}")))
    };
    let Some(Value::Array(positions)) = v else {
        return Ok(Vec::new());
    };
    positions
        .iter()
        .map(|p| match p {
            Value::Null => Ok(Vec::new()),
            Value::Array(set) => set.iter().map(parse).collect(),
            one => Ok(vec![parse(one)?]),
        })
        .collect()
}

fn topics_match(wanted: &[Vec<B256>], log: &Log) -> bool {
    let has = log.topics();
    wanted.iter().enumerate().all(|(i, set)| set.is_empty() || has.get(i).is_some_and(|t| set.contains(t)))
}
