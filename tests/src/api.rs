//! The GraphQL API on a free loopback port over a test database, and a client that speaks to it
//! over real HTTP and websockets.

use std::time::Duration;

use agentpact_api::ServeConfig;
use agentpact_read::Databases;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use sqlx::PgPool;
use tokio::{net::TcpStream, task::JoinHandle};
use tokio_tungstenite::{
    MaybeTlsStream, WebSocketStream,
    tungstenite::{Message, client::IntoClientRequest, http::HeaderValue},
};

use crate::HarnessError;

/// A running API server; stopped when dropped.
pub struct TestApi {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    client: reqwest::Client,
    /// The in-process server's task; `None` for a server elsewhere ([`TestApi::at`]).
    task: Option<JoinHandle<()>>,
}

/// The operator's token in [`config`].
pub const OPERATOR_TOKEN: &str = "the-test-operators-token";
/// The `Authorization` value of the operator in [`config`].
pub const OPERATOR: &str = "Bearer the-test-operators-token";

/// The settings tests use unless they say otherwise: the chain given, CORS for one origin, the
/// operator's token [`OPERATOR_TOKEN`] with the default webhook policy.
pub fn config(chain_id: u64) -> ServeConfig {
    ServeConfig {
        chain_id,
        cors_origins: vec!["https://dashboard.example".into()],
        ready_max_lag_blocks: 10,
        ready_max_silence: Duration::from_secs(30),
        ready_max_replica_lag_blocks: 2,
        rate_limit: None,
        negotiation: Default::default(),
        connections: Default::default(),
        block_wait: Duration::from_secs(5),
        operator: Some(agentpact_api::OperatorConfig {
            token: OPERATOR_TOKEN.into(),
            policy: Default::default(),
        }),
    }
}

impl TestApi {
    /// Serves the index in `pool` with `config`.
    pub async fn start(pool: &PgPool, config: ServeConfig) -> Result<Self, HarnessError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(io)?;
        let base = format!("http://{}", listener.local_addr().map_err(io)?);
        let limits = config.connections;
        let app = agentpact_api::app(Databases::single(pool.clone()), config)
            .await
            .map_err(|e| HarnessError::Process(e.to_string()))?;
        // The servers' own accept loop, with its connection limits and timeouts.
        let task = tokio::spawn(async move {
            let _ = agentpact_http::connections::serve(listener, app, limits, std::future::pending()).await;
        });
        Ok(Self { base, client: reqwest::Client::new(), task: Some(task) })
    }

    /// A client of a server running elsewhere (an `agentpact serve` process) at `base`.
    pub fn at(base: String) -> Self {
        Self { base, client: reqwest::Client::new(), task: None }
    }

    /// Posts a query; returns the whole response (`data` and `errors`).
    pub async fn post(&self, query: &str, variables: Value) -> Result<Value, HarnessError> {
        post_at(&self.client, &format!("{}/graphql", self.base), query, variables).await
    }

    /// Posts a query that must succeed; returns its `data`.
    pub async fn data(&self, query: &str, variables: Value) -> Result<Value, HarnessError> {
        data_of(self.post(query, variables).await?)
    }

    /// Posts a query with `Authorization: <authorization>` (the operator's `Bearer <token>`, or a
    /// party's signed request from [`reading_as`]); returns the whole response.
    pub async fn post_as(
        &self,
        authorization: &str,
        query: &str,
        variables: Value,
    ) -> Result<Value, HarnessError> {
        let body = json!({ "query": query, "variables": variables });
        let url = format!("{}/graphql", self.base);
        let sent = self.client.post(url).header("authorization", authorization).json(&body).send().await;
        sent.map_err(http)?.json().await.map_err(http)
    }

    /// [`TestApi::post_as`] for a query that must succeed; returns its `data`.
    pub async fn data_as(
        &self,
        authorization: &str,
        query: &str,
        variables: Value,
    ) -> Result<Value, HarnessError> {
        data_of(self.post_as(authorization, query, variables).await?)
    }

    /// GETs `path`, returning the status code and body.
    pub async fn get(&self, path: &str) -> Result<(u16, String), HarnessError> {
        let response = self.client.get(format!("{}{path}", self.base)).send().await.map_err(http)?;
        let status = response.status().as_u16();
        Ok((status, response.text().await.map_err(http)?))
    }

    /// The HTTP client, for requests the helpers above do not cover.
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// Opens a `graphql-transport-ws` subscription to `query`; returns once the server has started
    /// it, so a change made next reaches it (returning when the `subscribe` was merely sent races
    /// the server on a loaded machine). The protocol acknowledges no subscription: two `ping`s
    /// after it, each sent when the last was answered, are answered only after the server has
    /// read the `subscribe` and polled the subscription it started; or the subscription answers
    /// first (a refusal), which is kept for [`Subscription::next_data`].
    pub async fn subscribe(&self, query: &str, variables: Value) -> Result<Subscription, HarnessError> {
        self.subscribe_with(json!({}), query, variables).await
    }

    /// [`TestApi::subscribe`] on a socket whose `connection_init` carries `authorization` (as
    /// [`TestApi::post_as`] sends it).
    pub async fn subscribe_as(
        &self,
        authorization: &str,
        query: &str,
        variables: Value,
    ) -> Result<Subscription, HarnessError> {
        self.subscribe_with(json!({ "authorization": authorization }), query, variables).await
    }

    async fn subscribe_with(
        &self,
        init: Value,
        query: &str,
        variables: Value,
    ) -> Result<Subscription, HarnessError> {
        let url = format!("{}/graphql/ws", self.base.replacen("http", "ws", 1));
        let mut request = url.into_client_request().map_err(ws)?;
        request
            .headers_mut()
            .insert("sec-websocket-protocol", HeaderValue::from_static("graphql-transport-ws"));
        let (mut socket, _) = tokio_tungstenite::connect_async(request).await.map_err(ws)?;
        let hello = json!({ "type": "connection_init", "payload": init });
        socket.send(Message::text(hello.to_string())).await.map_err(ws)?;
        let mut sub = Subscription { socket, early: Default::default() };
        let ack = sub.next_message().await?;
        if ack["type"] != "connection_ack" {
            return Err(HarnessError::Process(format!("expected connection_ack, got {ack}")));
        }
        let start =
            json!({ "id": "1", "type": "subscribe", "payload": { "query": query, "variables": variables } });
        sub.socket.send(Message::text(start.to_string())).await.map_err(ws)?;
        let started = tokio::time::timeout(Duration::from_secs(30), async {
            for _ in 0..2 {
                sub.socket.send(Message::text(json!({ "type": "ping" }).to_string())).await.map_err(ws)?;
                loop {
                    let message = sub.read_message().await?;
                    if message["type"] == "pong" {
                        break;
                    }
                    // The subscription answered (a refusal, or a change): it has started. The
                    // answer is kept for `next_data`.
                    let answered = message["id"] == "1";
                    sub.early.push_back(message);
                    if answered {
                        return Ok(());
                    }
                }
            }
            Ok::<(), HarnessError>(())
        });
        started
            .await
            .map_err(|_| HarnessError::Process("the subscription did not start within 30 s".into()))??;
        Ok(sub)
    }
}

impl Drop for TestApi {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// An open subscription.
pub struct Subscription {
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
    /// Messages that came while [`TestApi::subscribe`] waited for its pongs.
    early: std::collections::VecDeque<Value>,
}

impl Subscription {
    /// The next `next` payload's `data` (errors are returned as errors); waits up to 10 s.
    pub async fn next_data(&mut self) -> Result<Value, HarnessError> {
        tokio::time::timeout(Duration::from_secs(10), self.next_payload())
            .await
            .map_err(|_| HarnessError::Process("no subscription message within 10 s".into()))?
    }

    async fn next_payload(&mut self) -> Result<Value, HarnessError> {
        loop {
            let message = self.next_message().await?;
            match message["type"].as_str() {
                Some("next") if message["payload"].get("errors").is_some() => {
                    return Err(HarnessError::Process(format!("subscription error: {message}")));
                }
                Some("next") => return Ok(message["payload"]["data"].clone()),
                Some("ping") => self.socket.send(Message::text(r#"{"type":"pong"}"#)).await.map_err(ws)?,
                _ => {
                    return Err(HarnessError::Process(format!("unexpected subscription message: {message}")));
                }
            }
        }
    }

    /// The next message: one kept by [`TestApi::subscribe`] first, then from the socket.
    async fn next_message(&mut self) -> Result<Value, HarnessError> {
        match self.early.pop_front() {
            Some(early) => Ok(early),
            None => self.read_message().await,
        }
    }

    /// The next text message from the socket.
    async fn read_message(&mut self) -> Result<Value, HarnessError> {
        loop {
            match self.socket.next().await {
                Some(Ok(Message::Text(text))) => {
                    return serde_json::from_str(&text).map_err(|e| HarnessError::Process(e.to_string()));
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(ws(e)),
                None => return Err(HarnessError::Process("the subscription socket closed".into())),
            }
        }
    }
}

/// The `Authorization` value that lets `signer` read its own negotiations on `chain_id` for the
/// next ten minutes (docs/api.md §Negotiations).
pub fn reading_as(
    signer: &alloy::signers::local::PrivateKeySigner,
    chain_id: u64,
) -> Result<String, HarnessError> {
    agentpact_api::graphql::negotiation_access::authorization(signer, chain_id)
        .map_err(|e| HarnessError::Process(format!("signing a negotiation read: {e}")))
}

fn io(e: std::io::Error) -> HarnessError {
    HarnessError::Process(format!("binding the API port: {e}"))
}

fn http(e: reqwest::Error) -> HarnessError {
    HarnessError::Process(format!("HTTP: {e}"))
}

fn ws(e: tokio_tungstenite::tungstenite::Error) -> HarnessError {
    HarnessError::Process(format!("websocket: {e}"))
}

/// Posts a query to the GraphQL endpoint `url` (a server this harness did not start); returns
/// the whole response.
async fn post_at(
    client: &reqwest::Client,
    url: &str,
    query: &str,
    variables: Value,
) -> Result<Value, HarnessError> {
    let body = json!({ "query": query, "variables": variables });
    client.post(url).json(&body).send().await.map_err(http)?.json().await.map_err(http)
}

/// Posts a query that must succeed to the GraphQL endpoint `url`; returns its `data`.
pub async fn data_at(
    client: &reqwest::Client,
    url: &str,
    query: &str,
    variables: Value,
) -> Result<Value, HarnessError> {
    data_of(post_at(client, url, query, variables).await?)
}

/// A response's `data`, or its errors as a HarnessError.
fn data_of(response: Value) -> Result<Value, HarnessError> {
    match response.get("errors") {
        Some(errors) => Err(HarnessError::Process(format!("GraphQL errors: {errors}"))),
        None => Ok(response["data"].clone()),
    }
}
