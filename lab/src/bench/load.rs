//! `agentpact bench load`: the load generator of `bench api`, run as its own process (pinned to a
//! core of its own when `taskset` is there), so the figures measure the server, not the clients
//! sharing its runtime. Clients send request bodies from a file in a closed loop for a fixed time
//! and one JSON line reports what came back.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::{Percentiles, ms};

/// Flags of `agentpact bench load`.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadArgs {
    /// The GraphQL endpoint.
    #[arg(long)]
    url: String,
    /// A file of request bodies, one JSON object per line; client `c` starts at line `c × 31`
    /// and cycles through them.
    #[arg(long)]
    bodies: PathBuf,
    /// Concurrent clients.
    #[arg(long, default_value_t = 1)]
    clients: usize,
    /// Seconds to send for.
    #[arg(long, default_value_t = 5)]
    seconds: u64,
}

/// What one load run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Answers without errors per second.
    pub per_second: f64,
    /// Their 50th percentile latency, in milliseconds.
    pub p50_ms: f64,
    /// Their 99th percentile latency, in milliseconds.
    pub p99_ms: f64,
    /// Requests that failed or answered with errors.
    pub errors: u64,
}

impl Report {
    /// Reads the JSON line `run` prints.
    pub fn parse(line: &str) -> anyhow::Result<Self> {
        let v: Value = serde_json::from_str(line).with_context(|| format!("a load report: {line:?}"))?;
        let number =
            |key: &str| v[key].as_f64().with_context(|| format!("no {key} in the load report {line:?}"));
        Ok(Self {
            per_second: number("perSecond")?,
            p50_ms: number("p50Ms")?,
            p99_ms: number("p99Ms")?,
            errors: number("errors")? as u64,
        })
    }
}

/// Sends the load and prints its report as one JSON line.
pub async fn run(args: LoadArgs) -> anyhow::Result<()> {
    let bodies = read_bodies(&args.bodies)?;
    let length = Duration::from_secs(args.seconds);
    let client = reqwest::Client::builder().pool_max_idle_per_host(args.clients.max(1)).build()?;
    let until = Instant::now() + length;
    let mut running = Vec::new();
    for c in 0..args.clients {
        let (client, url, bodies) = (client.clone(), args.url.clone(), bodies.clone());
        running.push(tokio::spawn(async move {
            let (mut latencies, mut errors) = (Vec::new(), 0u64);
            let start = c * 31 % bodies.len();
            for body in bodies.iter().cycle().skip(start) {
                if Instant::now() >= until {
                    break;
                }
                let sent = Instant::now();
                let answer = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(body.clone())
                    .send()
                    .await;
                let ok = match answer {
                    Ok(response) => response.json::<Value>().await.is_ok_and(|v| v.get("errors").is_none()),
                    Err(_) => false,
                };
                if ok {
                    latencies.push(sent.elapsed());
                } else {
                    errors += 1;
                }
            }
            (latencies, errors)
        }));
    }
    let (mut all, mut errors) = (Vec::new(), 0);
    for client in running {
        let (latencies, e) = client.await.context("a load client panicked")?;
        all.extend(latencies);
        errors += e;
    }
    let answered = all.len();
    let p = Percentiles::of(&mut all);
    let millis = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64() * 1_000.0);
    println!(
        "{}",
        json!({
            "perSecond": answered as f64 / length.as_secs_f64(),
            "p50Ms": millis(p.map(|p| p.p50)),
            "p99Ms": millis(p.map(|p| p.p99)),
            "errors": errors,
        })
    );
    if let Some(p) = p {
        eprintln!("{answered} answers, p50 {}, p99 {}, {errors} errors", ms(p.p50), ms(p.p99));
    }
    Ok(())
}

fn read_bodies(path: &Path) -> anyhow::Result<Arc<Vec<String>>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let bodies: Vec<String> = text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect();
    if bodies.is_empty() {
        bail!("{} holds no request bodies (one JSON object per line)", path.display());
    }
    Ok(Arc::new(bodies))
}

/// Runs `agentpact bench load` as another process of this binary, pinned to CPU `cpu` when
/// `taskset` is installed, and returns its report.
pub async fn in_another_process(
    url: &str,
    bodies: &Path,
    clients: usize,
    seconds: u64,
    cpu: Option<usize>,
) -> anyhow::Result<Report> {
    let exe = std::env::current_exe().context("finding this binary to start the load process")?;
    let args: Vec<String> = vec![
        "bench".into(),
        "load".into(),
        "--url".into(),
        url.into(),
        "--bodies".into(),
        bodies.display().to_string(),
        "--clients".into(),
        clients.to_string(),
        "--seconds".into(),
        seconds.to_string(),
    ];
    let mut command =
        tokio::process::Command::new(if cpu.is_some() { "taskset".as_ref() } else { exe.as_os_str() });
    if let Some(cpu) = cpu {
        command.args(["-c", &cpu.to_string()]).arg(&exe);
    }
    command.args(&args);
    let out = command.output().await.context("starting the load process")?;
    if !out.status.success() {
        bail!("the load process failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    Report::parse(stdout.lines().last().unwrap_or_default())
}
