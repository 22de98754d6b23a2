//! `agentpact push`: signed webhooks for pact events and clock alarms until interrupted
//! (docs/push.md).

use std::{net::SocketAddr, time::Duration};

use agentpact_http::rate_limit::Rate;
use agentpact_push::{
    Metrics, PushConfig, Retry,
    sign::ServerKey,
    sink::{Broker, SinkConfig},
};
use anyhow::Context;

use crate::{
    database,
    settings::{DatabaseArgs, Secret, WebhookTargetsArgs},
    signal,
};

/// Flags of `agentpact push`.
#[derive(Debug, Clone, clap::Args)]
pub struct PushArgs {
    #[command(flatten)]
    database: DatabaseArgs,
    #[command(flatten)]
    targets: WebhookTargetsArgs,
    /// The chain whose index is watched.
    #[arg(long, env = "CHAIN_ID", default_value_t = 84532)]
    chain_id: u64,
    /// The key deliveries are signed with (hex). Receivers check `agentpact-signature` against its
    /// address, which the server logs at start and sends as `agentpact-signer`.
    #[arg(long, env = "WEBHOOK_SIGNING_KEY", hide_env_values = true)]
    webhook_signing_key: Secret,
    /// Blocks below the indexed block minus this are final (the indexer's FINALITY_DEPTH):
    /// finalized subscriptions hear of nothing above.
    #[arg(long, env = "FINALITY_DEPTH", default_value_t = 64)]
    finality_depth: u64,
    /// Seconds before a window closes that its reminder goes out (chain time).
    #[arg(long, env = "WEBHOOK_REMIND_BEFORE_SECS", default_value_t = 3600)]
    remind_before_secs: u64,
    /// Attempts before a delivery becomes a dead letter: 1 to 100.
    #[arg(long, env = "WEBHOOK_MAX_ATTEMPTS", default_value_t = Retry::default().max_attempts, value_parser = clap::value_parser!(u32).range(1..=100))]
    max_attempts: u32,
    /// Milliseconds to wait after the first failed attempt (doubled after each next one).
    #[arg(long, env = "WEBHOOK_FIRST_BACKOFF_MS", default_value_t = 1000)]
    first_backoff_ms: u64,
    /// The longest wait between two attempts, in seconds.
    #[arg(long, env = "WEBHOOK_MAX_BACKOFF_SECS", default_value_t = 3600)]
    max_backoff_secs: u64,
    /// Seconds one POST may take: 1 to 120.
    #[arg(long, env = "WEBHOOK_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=120))]
    timeout_secs: u64,
    /// Subscriptions delivered to at once.
    #[arg(long, env = "WEBHOOK_CONCURRENCY", default_value_t = 16)]
    concurrency: usize,
    /// Deliveries per second to all of one owner's subscriptions (sustained).
    #[arg(long, env = "WEBHOOK_OWNER_RATE", default_value_t = 20)]
    owner_rate: u32,
    /// Deliveries one owner may receive at once after a quiet spell.
    #[arg(long, env = "WEBHOOK_OWNER_BURST", default_value_t = 100)]
    owner_burst: u32,
    /// Milliseconds between looks at the index and the outbox without a notification.
    #[arg(long, env = "WEBHOOK_POLL_MS", default_value_t = 500)]
    poll_ms: u64,
    /// Where to serve Prometheus metrics (GET /metrics).
    #[arg(long, env = "PUSH_METRICS_ADDR", default_value = "127.0.0.1:9465")]
    metrics_addr: SocketAddr,
    /// A NATS JetStream sink: the server (nats://user:password@host:4222, tls://host:4222 for
    /// TLS). Only the sink's name is stored or shown, never this URL (docs/push.md §Streams).
    #[arg(long, env = "PUSH_NATS_URL", hide_env_values = true)]
    nats_url: Option<Secret>,
    /// The NATS sink's options, comma-separated: name=nats, mode=instant|finalized, party=0x…,
    /// alarms=yes|no, stream=AGENTPACT, prefix=agentpact (subjects prefix.chainId.type.kind.pactId).
    #[arg(long, env = "PUSH_NATS_OPTIONS", default_value = "")]
    nats_options: String,
    /// A Redis Streams sink: the server (redis://:password@host:6379/0, rediss:// for TLS). Only
    /// the sink's name is stored or shown, never this URL.
    #[arg(long, env = "PUSH_REDIS_URL", hide_env_values = true)]
    redis_url: Option<Secret>,
    /// The Redis sink's options, comma-separated: name=redis, mode, party, alarms, prefix=agentpact
    /// (the stream prefix:chainId), maxlen=1000000 (XADD's MAXLEN ~).
    #[arg(long, env = "PUSH_REDIS_OPTIONS", default_value = "")]
    redis_options: String,
    /// A RabbitMQ sink: the server (amqp://user:password@host:5672/%2f, amqps:// for TLS). Only
    /// the sink's name is stored or shown, never this URL.
    #[arg(long, env = "PUSH_AMQP_URL", hide_env_values = true)]
    amqp_url: Option<Secret>,
    /// The RabbitMQ sink's options, comma-separated: name=amqp, mode, party, alarms,
    /// prefix=agentpact (routing keys prefix.chainId.type.kind.pactId), exchange=agentpact.
    #[arg(long, env = "PUSH_AMQP_OPTIONS", default_value = "")]
    amqp_options: String,
}

impl PushArgs {
    /// The broker sinks configured (those whose URL is set).
    fn sinks(&self) -> anyhow::Result<Vec<SinkConfig>> {
        let configured = [
            (Broker::Nats, &self.nats_url, &self.nats_options),
            (Broker::Redis, &self.redis_url, &self.redis_options),
            (Broker::Amqp, &self.amqp_url, &self.amqp_options),
        ];
        configured
            .into_iter()
            .filter_map(|(broker, url, options)| url.as_ref().map(|url| (broker, url, options)))
            .map(|(broker, url, options)| {
                SinkConfig::parse(broker, url.expose(), options).map_err(anyhow::Error::msg)
            })
            .collect()
    }
}

/// Runs until Ctrl-C or SIGTERM (from the start: a signal while it connects stops it in order).
pub async fn run(args: PushArgs) -> anyhow::Result<()> {
    let shutdown = signal::shutdown();
    let signer: alloy::signers::local::PrivateKeySigner =
        args.webhook_signing_key.expose().trim().parse().map_err(|_| {
            anyhow::anyhow!("WEBHOOK_SIGNING_KEY is not a hex private key (32 bytes, 0x optional)")
        })?;
    let key = ServerKey::new(signer);
    let config = PushConfig {
        finality_depth: args.finality_depth,
        remind_before: Duration::from_secs(args.remind_before_secs),
        targets: args.targets.targets()?,
        retry: Retry {
            max_attempts: args.max_attempts,
            first_backoff: Duration::from_millis(args.first_backoff_ms.max(1)),
            max_backoff: Duration::from_secs(args.max_backoff_secs.max(1)),
        },
        timeout: Duration::from_secs(args.timeout_secs),
        concurrency: args.concurrency.max(1),
        owner_rate: Rate {
            per_second: f64::from(args.owner_rate.max(1)),
            burst: f64::from(args.owner_burst.max(1)),
        },
        poll: Duration::from_millis(args.poll_ms.max(10)),
        sinks: args.sinks()?,
        ..PushConfig::new(args.chain_id)
    };
    let pool = database::migrated(&args.database, config.pool_size()).await?;
    let metrics = Metrics::for_chain(args.chain_id);
    let listener = tokio::net::TcpListener::bind(args.metrics_addr)
        .await
        .with_context(|| format!("binding the metrics address {} (PUSH_METRICS_ADDR)", args.metrics_addr))?;
    let rendered = metrics.clone();
    tokio::spawn(agentpact_http::metrics::serve(listener, move || rendered.render()));
    let sinks: Vec<&str> = config.sinks.iter().map(|s| s.name.as_str()).collect();
    tracing::info!(chain_id = args.chain_id, signer = %key.address(), metrics = %args.metrics_addr, ?sinks, "delivering webhooks");
    agentpact_push::run(pool, config, key, metrics, shutdown).await?;
    tracing::info!("stopped");
    Ok(())
}
