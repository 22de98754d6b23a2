//! The recording served over JSON-RPC (HTTP POST, single calls and batches) on a loopback port:
//! `eth_chainId`, `net_version`, `eth_blockNumber`, `eth_getBlockByNumber` and
//! `eth_getBlockByHash` (headers only: transactions were not recorded) and `eth_getLogs` (block
//! range or block hash; address and topic filters). Anything else is answered "does not exist"
//! (-32601): the replay holds no state to call.

use std::sync::Arc;

use alloy::primitives::{Address, B256};
use axum::{Json, Router, extract::State, routing::post};
use serde_json::{Value, json};

use super::{Recording, record::quantity};

/// A running replay; it stops when dropped.
#[derive(Debug)]
pub struct Replay {
    /// Where it answers: `http://127.0.0.1:<port>/`.
    pub url: String,
    server: tokio::task::JoinHandle<()>,
}

impl Replay {
    /// Serves `recording` on a free loopback port.
    pub async fn serve(recording: Recording) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/", listener.local_addr()?);
        let app = Router::new().route("/", post(rpc)).with_state(Arc::new(recording));
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { url, server })
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// One JSON-RPC body: a call or a batch of calls.
async fn rpc(State(recording): State<Arc<Recording>>, Json(body): Json<Value>) -> Json<Value> {
    Json(match body {
        Value::Array(calls) => Value::Array(calls.iter().map(|c| answer(&recording, c)).collect()),
        call => answer(&recording, &call),
    })
}

/// A JSON-RPC error: its code and message.
type Refusal = (i64, String);

fn invalid(message: impl Into<String>) -> Refusal {
    (-32602, message.into())
}

/// The response to `call`.
fn answer(recording: &Recording, call: &Value) -> Value {
    let id = call.get("id").cloned().unwrap_or(Value::Null);
    let params = call.get("params").cloned().unwrap_or_else(|| json!([]));
    let result = match call.get("method").and_then(Value::as_str) {
        Some("eth_chainId") => Ok(json!(quantity(recording.chain_id))),
        Some("net_version") => Ok(json!(recording.chain_id.to_string())),
        Some("eth_blockNumber") => Ok(json!(quantity(recording.head()))),
        Some("eth_getBlockByNumber") => block_by_number(recording, &params),
        Some("eth_getBlockByHash") => block_by_hash(recording, &params),
        Some("eth_getLogs") => logs(recording, &params),
        Some(other) => Err((-32601, format!("the method {other} does not exist/is not available"))),
        None => Err((-32600, "invalid request: no method".to_owned())),
    };
    match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err((code, message)) => {
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
        }
    }
}

/// A block tag or quantity: `latest`, `safe`, `finalized` and `pending` are the head.
fn block_number(recording: &Recording, v: &Value) -> Result<u64, Refusal> {
    match v.as_str() {
        Some("latest" | "safe" | "finalized" | "pending") => Ok(recording.head()),
        Some("earliest") => Ok(0),
        Some(text) => text
            .strip_prefix("0x")
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .ok_or_else(|| invalid(format!("invalid block number {text:?}"))),
        None => Err(invalid(format!("invalid block number {v}"))),
    }
}

/// Refuses full transactions: only headers and transaction hashes were recorded.
fn hashes_only(params: &Value) -> Result<(), Refusal> {
    match params.get(1).and_then(Value::as_bool) {
        Some(true) => Err(invalid("full transactions were not recorded: ask with false")),
        _ => Ok(()),
    }
}

fn block_by_number(recording: &Recording, params: &Value) -> Result<Value, Refusal> {
    hashes_only(params)?;
    let n = block_number(recording, params.get(0).unwrap_or(&Value::Null))?;
    Ok(recording.block(n).cloned().unwrap_or(Value::Null))
}

fn block_by_hash(recording: &Recording, params: &Value) -> Result<Value, Refusal> {
    hashes_only(params)?;
    let hash: B256 = params
        .get(0)
        .and_then(Value::as_str)
        .and_then(|h| h.parse().ok())
        .ok_or_else(|| invalid("invalid block hash"))?;
    Ok(recording.number_of_hash(&hash).and_then(|n| recording.block(n)).cloned().unwrap_or(Value::Null))
}

/// `eth_getLogs`: the blocks of `blockHash`, or `fromBlock..=toBlock` (defaults: latest; a range
/// past the head is cut at the head), then the address and topic filters.
fn logs(recording: &Recording, params: &Value) -> Result<Value, Refusal> {
    let filter = params.get(0).ok_or_else(|| invalid("eth_getLogs takes a filter object"))?;
    let (from, to) = match filter.get("blockHash") {
        Some(hash) => {
            let hash: B256 =
                hash.as_str().and_then(|h| h.parse().ok()).ok_or_else(|| invalid("invalid blockHash"))?;
            let n =
                recording.number_of_hash(&hash).ok_or_else(|| invalid(format!("unknown block {hash}")))?;
            (n, n)
        }
        None => {
            let bound = |key| filter.get(key).map_or(Ok(recording.head()), |v| block_number(recording, v));
            (bound("fromBlock")?, bound("toBlock")?.min(recording.head()))
        }
    };
    if from > to && from <= recording.head() {
        return Err(invalid(format!("invalid block range params: fromBlock {from} is after toBlock {to}")));
    }
    let addresses = addresses(filter.get("address"))?;
    let topics = topics(filter.get("topics"))?;
    let mut found = Vec::new();
    for n in from..=to {
        for log in recording.logs_of(n) {
            let address = log["address"].as_str().and_then(|a| a.parse::<Address>().ok());
            let address_ok = addresses.is_empty() || address.is_some_and(|a| addresses.contains(&a));
            if address_ok && topics_match(&topics, log) {
                found.push(log.clone());
            }
        }
    }
    Ok(Value::Array(found))
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

fn topics_match(wanted: &[Vec<B256>], log: &Value) -> bool {
    let has: Vec<B256> = log["topics"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t.as_str().and_then(|t| t.parse().ok())).collect())
        .unwrap_or_default();
    wanted.iter().enumerate().all(|(i, set)| set.is_empty() || has.get(i).is_some_and(|t| set.contains(t)))
}
