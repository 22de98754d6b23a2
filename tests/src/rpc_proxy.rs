//! A JSON-RPC proxy in front of anvil that misbehaves on purpose, the way public RPC endpoints do:
//! it answers late, fails every k-th request, answers every k-th with garbage, refuses `eth_getLogs` answers
//! longer than a cap with the "query returned more than N results" error real providers send, can
//! slip a forged, undecodable log from a given address into the first logs it returns, can
//! serve blocks whose parent is missing, refuses log ranges over a block limit in a provider's own
//! words, answers over a request rate with HTTP 429 and `Retry-After` (by the clock, or by a
//! budget of requests that runs out however slowly they come), and can stall: take requests and
//! never answer, until told to resume.

use std::sync::{
    Arc,
    atomic::{AtomicU64, Ordering},
};

use alloy::providers::{DynProvider, Provider};
use futures::FutureExt;
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

use crate::HarnessError;

/// What the proxy does wrong.
#[derive(Debug, Clone, Copy, Default)]
pub struct Faults {
    /// Answer every k-th request with an error instead of forwarding it.
    pub fail_every: Option<u64>,
    /// Refuse `eth_getLogs` results with more logs than this.
    pub max_logs: Option<usize>,
    /// Answer every k-th request with a result of the wrong shape.
    pub garbage_every: Option<u64>,
    /// Add a log with an unknown event and junk data, "emitted" by this address, to the first
    /// non-empty `eth_getLogs` answer.
    pub forge_log_from: Option<alloy::primitives::Address>,
    /// Delay every answer by a varying number of milliseconds in `[low, high)`.
    pub latency_ms: Option<(u64, u64)>,
    /// Serve the first k blocks read by number (above block 1) with a parent hash that is no
    /// block's: a block whose parent is missing.
    pub orphan_blocks: Option<u64>,
    /// Leave `blockNumber` out of every transaction receipt (a node that misbehaves so).
    pub receipts_without_block: bool,
    /// Refuse `eth_getLogs` over more blocks than a limit, with a provider's code and message.
    pub range_limit: Option<RangeLimit>,
    /// Answer requests beyond this many per second with HTTP 429 and `Retry-After: 1`. Only a
    /// client faster than the rate is refused: a slow machine may never be.
    pub max_rps: Option<u64>,
    /// Grant this many requests, then answer HTTP 429 with `Retry-After: 1` to every request
    /// until a second has passed since that first refusal; then grant as many again. A window
    /// ends only once its budget is spent, so a client making more requests than the budget is
    /// refused however slowly it makes them, and one that waits out `Retry-After` is served again.
    pub budget: Option<u64>,
}

/// How long a spent [`Faults::budget`] refuses: the `Retry-After` it names.
const BUDGET_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// How an endpoint refuses a log range over its block limit.
#[derive(Debug, Clone, Copy)]
pub struct RangeLimit {
    /// The most blocks one `eth_getLogs` may span.
    pub blocks: u64,
    /// The JSON-RPC error code of the refusal.
    pub code: i64,
    /// Its message; `{limit}` and `{asked}` are replaced by the limit and the blocks asked for.
    pub message: &'static str,
}

/// A running proxy; stops when dropped, closing its open connections ([`FaultyRpc::stop`] waits
/// until they are closed).
pub struct FaultyRpc {
    url: String,
    requests: Arc<AtomicU64>,
    failed: Arc<AtomicU64>,
    stalled: Arc<std::sync::atomic::AtomicBool>,
    windows: Arc<std::sync::Mutex<Window>>,
    log_ranges: Arc<std::sync::Mutex<Vec<(u64, u64)>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl FaultyRpc {
    /// Starts a proxy on a free loopback port that forwards to `upstream` with `faults`.
    pub async fn start(upstream: DynProvider, faults: Faults) -> Result<Self, HarnessError> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| HarnessError::Process(format!("proxy bind: {e}")))?;
        let url = format!(
            "http://{}",
            listener.local_addr().map_err(|e| HarnessError::Process(format!("proxy address: {e}")))?
        );
        let failed = Arc::new(AtomicU64::new(0));
        let stalled = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let requests = Arc::new(AtomicU64::new(0));
        let windows = Arc::new(std::sync::Mutex::new(Window::default()));
        let log_ranges = Arc::new(std::sync::Mutex::new(Vec::new()));
        let shared = Shared {
            log_ranges: log_ranges.clone(),
            stalled: stalled.clone(),
            second: Default::default(),
            window: windows.clone(),
            upstream,
            faults,
            requests: requests.clone(),
            failed: failed.clone(),
            forged: Default::default(),
            orphaned: Default::default(),
        };
        // The connections belong to the accepting task: dropping the proxy aborts it, and with
        // it every open connection, so clients see the endpoint go away.
        let (stop, mut stopped) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { break };
                        while connections.try_join_next().is_some() {}
                        connections.spawn(serve(stream, shared.clone()));
                    }
                    _ = &mut stopped => break,
                }
            }
            drop(listener);
            connections.shutdown().await;
        });
        Ok(Self { url, requests, failed, stalled, windows, log_ranges, stop: Some(stop), task })
    }

    /// Stops the proxy and returns once it has: its port refuses connections and every connection
    /// it had open is closed (dropping it does the same, without waiting).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }

    /// Stops answering (`true`): requests are read and held, never answered; `false` answers again.
    pub fn stall(&self, on: bool) {
        self.stalled.store(on, Ordering::Relaxed);
    }

    /// The proxy's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The block ranges (`fromBlock`, `toBlock`) of every `eth_getLogs` by number asked so far, in
    /// the order asked: what a client read of the chain.
    pub fn log_ranges(&self) -> Vec<(u64, u64)> {
        self.log_ranges.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// JSON-RPC requests that reached the proxy's answering so far (not those held by a stall or
    /// refused for the rate).
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    /// Requests answered with an injected error so far.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// How many [`Faults::budget`] windows have been spent so far: each ended in refusals, and
    /// every one after the first was opened by a client that came back after waiting.
    pub fn budgets_spent(&self) -> u64 {
        self.windows.lock().map_or(0, |w| w.spent)
    }
}

/// The window of a [`Faults::budget`].
#[derive(Debug, Default)]
struct Window {
    /// Requests granted in this window.
    granted: u64,
    /// When this window's budget ran out (its first refusal); `None` while it lasts.
    spent_at: Option<std::time::Instant>,
    /// Windows spent so far.
    spent: u64,
}

impl Drop for FaultyRpc {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct Shared {
    stalled: Arc<std::sync::atomic::AtomicBool>,
    /// The second being counted for `max_rps`, and the requests in it.
    second: Arc<std::sync::Mutex<(u64, u64)>>,
    /// The window of `budget`.
    window: Arc<std::sync::Mutex<Window>>,
    upstream: DynProvider,
    faults: Faults,
    requests: Arc<AtomicU64>,
    failed: Arc<AtomicU64>,
    /// `eth_getLogs` ranges asked, in order ([`FaultyRpc::log_ranges`]).
    log_ranges: Arc<std::sync::Mutex<Vec<(u64, u64)>>>,
    forged: Arc<std::sync::atomic::AtomicBool>,
    orphaned: Arc<AtomicU64>,
}

/// Serves HTTP/1.1 requests on one connection until the client closes it.
async fn serve(mut stream: TcpStream, shared: Shared) {
    let mut buf = Vec::new();
    loop {
        let Some(body) = read_request(&mut stream, &mut buf).await else { return };
        while shared.stalled.load(Ordering::Relaxed) {
            // A stalled endpoint: the request is taken and nothing comes back (the client gives up).
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            if stream.peek(&mut [0u8; 1]).now_or_never().is_some_and(|r| matches!(r, Ok(0) | Err(_))) {
                return;
            }
        }
        let (status, answer) = if over_rate(&shared) {
            shared.failed.fetch_add(1, Ordering::Relaxed);
            let error =
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": 429, "message": "Too Many Requests"}});
            ("429 Too Many Requests\r\nretry-after: 1", error)
        } else {
            match serde_json::from_slice::<Value>(&body) {
                Ok(request) => ("200 OK", answer(&shared, request).await),
                Err(e) => {
                    let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": e.to_string()}});
                    ("200 OK", error)
                }
            }
        };
        let body = answer.to_string();
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        if stream.write_all(head.as_bytes()).await.is_err()
            || stream.write_all(body.as_bytes()).await.is_err()
        {
            return;
        }
    }
}

/// Whether this request is refused for the rate: one too many in the current second (`max_rps`)
/// or past its window's budget (`budget`).
fn over_rate(shared: &Shared) -> bool {
    over_budget(shared) || over_second(shared)
}

/// Whether this request comes after its window's budget ran out and before the wait it named
/// has passed; opens a new window after the wait.
fn over_budget(shared: &Shared) -> bool {
    let Some(budget) = shared.faults.budget else { return false };
    let Ok(mut window) = shared.window.lock() else { return false };
    let now = std::time::Instant::now();
    match window.spent_at {
        // Refused until a second after the first refusal, however often asked meanwhile.
        Some(at) if now.duration_since(at) < BUDGET_WAIT => return true,
        Some(_) => *window = Window { spent: window.spent, ..Window::default() },
        None => {}
    }
    if window.granted < budget {
        window.granted += 1;
        return false;
    }
    window.spent_at = Some(now);
    window.spent += 1;
    true
}

/// Whether this request is one too many in the current second (`max_rps`).
fn over_second(shared: &Shared) -> bool {
    let Some(max) = shared.faults.max_rps else { return false };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let Ok(mut second) = shared.second.lock() else { return false };
    if second.0 != now {
        *second = (now, 0);
    }
    second.1 += 1;
    second.1 > max
}

/// Reads one request's body; `None` when the connection closed or sent something else than HTTP.
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            let start = end + 4;
            while buf.len() < start + length {
                let mut chunk = [0u8; 8192];
                let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[start..start + length].to_vec();
            buf.drain(..start + length);
            return Some(body);
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Appends a forged log (same block as the first real one) to the first non-empty log list.
fn forge_once(shared: &Shared, from: alloy::primitives::Address, mut logs: Value) -> Value {
    let Some(list) = logs.as_array_mut() else { return logs };
    let Some(first) = list.first().cloned() else { return logs };
    if shared.forged.swap(true, Ordering::Relaxed) {
        return logs;
    }
    let mut forged = first;
    forged["address"] = json!(from);
    forged["topics"] = json!([alloy::primitives::keccak256("Bogus(uint256)")]);
    forged["data"] = json!("0xdeadbeef");
    forged["logIndex"] = json!("0x7fff");
    list.push(forged);
    shared.failed.fetch_add(1, Ordering::Relaxed);
    logs
}

/// Gives a block a parent hash that is no block's, while `orphan_blocks` lasts.
fn orphan(shared: &Shared, mut block: Value) -> Value {
    let Some(k) = shared.faults.orphan_blocks else { return block };
    let above_one =
        block["number"].as_str().and_then(|n| u64::from_str_radix(n.trim_start_matches("0x"), 16).ok())
            > Some(1);
    if above_one && shared.orphaned.fetch_add(1, Ordering::Relaxed) < k {
        block["parentHash"] = json!(format!("0x{}", "ee".repeat(32)));
        shared.failed.fetch_add(1, Ordering::Relaxed);
    }
    block
}

async fn answer(shared: &Shared, request: Value) -> Value {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let method = request.get("method").and_then(Value::as_str).unwrap_or_default().to_owned();
    let params = request.get("params").cloned().unwrap_or(Value::Array(vec![]));
    let n = shared.requests.fetch_add(1, Ordering::Relaxed) + 1;
    if let Some((low, high)) = shared.faults.latency_ms.filter(|(low, high)| low < high) {
        // Spread over the range by the request number: varied, and the same for the same run.
        let delay = low + n.wrapping_mul(7_919) % (high - low);
        tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
    }
    let error = |code: i64, message: String| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    if shared.faults.fail_every.is_some_and(|k| n.is_multiple_of(k)) {
        shared.failed.fetch_add(1, Ordering::Relaxed);
        return error(-32603, "proxy: injected failure".into());
    }
    if shared.faults.garbage_every.is_some_and(|k| n.is_multiple_of(k)) {
        shared.failed.fetch_add(1, Ordering::Relaxed);
        return json!({"jsonrpc": "2.0", "id": id, "result": {"garbage": [1, "two", null]}});
    }
    let block = |key: &str| {
        params[0][key].as_str().and_then(|n| u64::from_str_radix(n.trim_start_matches("0x"), 16).ok())
    };
    if let (true, Some(range)) = (method == "eth_getLogs", block("fromBlock").zip(block("toBlock")))
        && let Ok(mut ranges) = shared.log_ranges.lock()
    {
        ranges.push(range);
    }
    if let Some(limit) = shared.faults.range_limit.filter(|_| method == "eth_getLogs") {
        let asked =
            block("toBlock").zip(block("fromBlock")).map_or(0, |(to, from)| to.saturating_sub(from) + 1);
        if asked > limit.blocks {
            shared.failed.fetch_add(1, Ordering::Relaxed);
            let message = limit
                .message
                .replace("{limit}", &limit.blocks.to_string())
                .replace("{asked}", &asked.to_string());
            return error(limit.code, message);
        }
    }
    match shared.upstream.raw_request::<_, Value>(method.clone().into(), params).await {
        Ok(result) => {
            let too_many = method == "eth_getLogs"
                && shared.faults.max_logs.zip(result.as_array()).is_some_and(|(cap, logs)| logs.len() > cap);
            if too_many {
                shared.failed.fetch_add(1, Ordering::Relaxed);
                let cap = shared.faults.max_logs.unwrap_or_default();
                return error(-32005, format!("query returned more than {cap} results"));
            }
            let result = match (method.as_str(), shared.faults.forge_log_from) {
                ("eth_getLogs", Some(from)) => forge_once(shared, from, result),
                ("eth_getBlockByNumber", _) => orphan(shared, result),
                ("eth_getTransactionReceipt", _) if shared.faults.receipts_without_block => {
                    let mut receipt = result;
                    if let Some(fields) = receipt.as_object_mut() {
                        fields.remove("blockNumber");
                    }
                    receipt
                }
                _ => result,
            };
            json!({"jsonrpc": "2.0", "id": id, "result": result})
        }
        Err(alloy::transports::RpcError::ErrorResp(payload)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": payload})
        }
        Err(e) => error(-32603, format!("proxy: upstream failed: {e}")),
    }
}
