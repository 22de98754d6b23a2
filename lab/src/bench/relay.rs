//! `agentpact bench relay`: the negotiation relay on loopback. Two registered agents; (1) latency:
//! one message at a time from the seeker, timed from the start of its POST until the worker's
//! GraphQL subscription (`negotiationMessages`) delivers it; (2) throughput: concurrent
//! conversations, each a closed loop of clarifications back and forth, for a fixed time. Each
//! message is signed (EIP-712) by the sending client, as agents do. Clients, server and Postgres
//! share this machine's cores.

use std::time::{Duration, Instant};

use agentpact_api::{NegotiationConfig, ServeConfig};
use agentpact_contracts::AgentRegistry;
use agentpact_indexer::Config;
use agentpact_negotiation::{Envelope, MessageType, Timeouts};
use agentpact_read::Databases;
use alloy::{
    primitives::Address,
    signers::{SignerSync, local::PrivateKeySigner},
};
use anyhow::{Context, bail};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest, http::HeaderValue};

use super::{Percentiles, Workload, lab::Lab, ms};

/// Flags of `agentpact bench relay`.
#[derive(Debug, Clone, clap::Args)]
pub struct RelayArgs {
    /// Messages timed one at a time, send to subscription.
    #[arg(long, default_value_t = 500)]
    messages: usize,
    /// Concurrent conversations in the throughput run.
    #[arg(long, default_value_t = 16)]
    conversations: usize,
    /// Seconds the throughput run lasts.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
    /// A Postgres server to create the benchmark's database on; without it, a private cluster.
    #[arg(long, env = "DATABASE_URL")]
    database_url: Option<String>,
}

/// Runs the benchmark and prints what it measured.
pub async fn run(args: RelayArgs) -> anyhow::Result<()> {
    let lab = Lab::open(&Workload { pacts: 0, seed: 1, database_url: args.database_url.clone() }, "relay", 1)
        .await?;
    let keys: Vec<PrivateKeySigner> =
        lab.anvil.keys().iter().take(3).skip(1).map(|k| PrivateKeySigner::from(k.clone())).collect();
    let [seeker, worker] =
        <[PrivateKeySigner; 2]>::try_from(keys).map_err(|_| anyhow::anyhow!("anvil has too few dev keys"))?;
    let registry = AgentRegistry::new(lab.deployment.agent_registry, lab.provider.clone());
    for (key, name) in [(&seeker, "Bench Seeker"), (&worker, "Bench Worker")] {
        let profile = AgentRegistry::Profile {
            name: name.into(),
            description: String::new(),
            endpoint: "http://127.0.0.1/mcp".into(),
            metadataUri: String::new(),
            capabilities: vec![AgentRegistry::Capability {
                name: "bench".into(),
                description: String::new(),
                price: Default::default(),
                currency: Address::ZERO,
            }],
        };
        registry.register(profile).from(key.address()).send().await?.get_receipt().await?;
    }
    lab.indexer(Config::default()).catch_up().await?;
    let chain_id = lab.anvil.chain_id();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let config = ServeConfig {
        chain_id,
        cors_origins: Vec::new(),
        ready_max_lag_blocks: u64::MAX,
        ready_max_silence: Duration::from_secs(3_600),
        ready_max_replica_lag_blocks: 2,
        rate_limit: None,
        negotiation: NegotiationConfig { timeouts: Timeouts::default(), ..NegotiationConfig::default() },
        connections: Default::default(),
        block_wait: Duration::from_secs(5),
        operator: None,
    };
    let serving = tokio::spawn(agentpact_api::serve(
        listener,
        Databases::single(lab.pool.clone()),
        config,
        std::future::pending(),
    ));
    let client = reqwest::Client::builder().pool_max_idle_per_host(256).build()?;
    let sender = Sender { client: client.clone(), url: format!("{base}/hire/messages"), chain_id };

    // Latency: send → the worker's subscription.
    let mut inbox = subscribe(&base, &worker, chain_id).await?;
    let mut samples = Vec::with_capacity(args.messages);
    for n in 0..args.messages {
        let started = Instant::now();
        sender
            .send(
                &seeker,
                worker.address(),
                &format!("lat-{n}"),
                MessageType::Proposal,
                json!({ "task": "bench", "budget": "1 ETH" }),
            )
            .await?;
        loop {
            let delivered = next(&mut inbox).await?;
            if delivered["negotiationMessages"]["conversationId"] == format!("lat-{n}") {
                break;
            }
        }
        samples.push(started.elapsed());
    }
    let latency = Percentiles::of(&mut samples).context("no latency samples")?;
    drop(inbox);

    // Throughput: conversations in parallel, clarifications back and forth.
    let until = Instant::now() + Duration::from_secs(args.seconds);
    let started = Instant::now();
    let runs = (0..args.conversations).map(|c| {
        let (sender, seeker, worker) = (sender.clone(), seeker.clone(), worker.clone());
        async move {
            let id = format!("tp-{c}");
            sender
                .send(
                    &seeker,
                    worker.address(),
                    &id,
                    MessageType::Proposal,
                    json!({ "task": "bench", "budget": "1 ETH" }),
                )
                .await?;
            let mut sent = 1usize;
            while Instant::now() < until {
                let (from, to) =
                    if sent % 2 == 1 { (&worker, seeker.address()) } else { (&seeker, worker.address()) };
                sender
                    .send(
                        from,
                        to,
                        &id,
                        MessageType::Clarification,
                        json!({ "questions": [format!("q{sent}")] }),
                    )
                    .await?;
                sent += 1;
            }
            Ok::<_, anyhow::Error>(sent)
        }
    });
    let sent: usize = futures::future::try_join_all(runs).await?.into_iter().sum();
    let elapsed = started.elapsed().as_secs_f64();
    serving.abort();

    println!("| measurement | figure |");
    println!("|---|---|");
    println!(
        "| send → counterparty's subscription, {} messages one at a time | p50 {} · p95 {} · p99 {} · max {} |",
        args.messages,
        ms(latency.p50),
        ms(latency.p95),
        ms(latency.p99),
        ms(latency.max)
    );
    println!(
        "| throughput, {} conversations for {} s | {:.0} messages/s ({sent} messages) |",
        args.conversations,
        args.seconds,
        sent as f64 / elapsed
    );
    Ok(())
}

/// Signs and posts messages to the relay.
#[derive(Clone)]
struct Sender {
    client: reqwest::Client,
    url: String,
    chain_id: u64,
}

impl Sender {
    async fn send(
        &self,
        key: &PrivateKeySigner,
        to: alloy::primitives::Address,
        id: &str,
        kind: MessageType,
        payload: Value,
    ) -> anyhow::Result<()> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        let e = Envelope::new(kind, key.address(), to, id, now, payload)
            .signed_with(self.chain_id, |hash| key.sign_hash_sync(hash))?;
        let response = self.client.post(&self.url).json(&e).send().await?;
        if !response.status().is_success() {
            bail!("the relay refused a benchmark message: {}", response.text().await.unwrap_or_default());
        }
        Ok(())
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A `negotiationMessages` subscription for `agent`, signed with its key (a negotiation is its
/// parties' to read), acknowledged.
async fn subscribe(base: &str, agent: &PrivateKeySigner, chain_id: u64) -> anyhow::Result<Socket> {
    let mut request = format!("{}/graphql/ws", base.replacen("http", "ws", 1)).into_client_request()?;
    request.headers_mut().insert("sec-websocket-protocol", HeaderValue::from_static("graphql-transport-ws"));
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await?;
    let authorization = agentpact_api::graphql::negotiation_access::authorization(agent, chain_id)?;
    let hello = json!({ "type": "connection_init", "payload": { "authorization": authorization } });
    socket.send(Message::text(hello.to_string())).await?;
    let ack = read(&mut socket).await?;
    if ack["type"] != "connection_ack" {
        bail!("expected connection_ack, got {ack}");
    }
    let query = "subscription($a: Address!) { negotiationMessages(agent: $a) { conversationId seq } }";
    let start = json!({ "id": "1", "type": "subscribe", "payload": { "query": query, "variables": { "a": agent.address() } } });
    socket.send(Message::text(start.to_string())).await?;
    Ok(socket)
}

/// The next delivered `data`.
async fn next(socket: &mut Socket) -> anyhow::Result<Value> {
    loop {
        let message = read(socket).await?;
        match message["type"].as_str() {
            Some("next") => return Ok(message["payload"]["data"].clone()),
            Some("ping") => socket.send(Message::text(r#"{"type":"pong"}"#)).await?,
            _ => bail!("unexpected subscription message: {message}"),
        }
    }
}

async fn read(socket: &mut Socket) -> anyhow::Result<Value> {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .context("no subscription message within 10 s")?
            .context("the subscription closed")??;
        if let Message::Text(text) = frame {
            return Ok(serde_json::from_str(&text)?);
        }
    }
}
