//! `agentpact serve` as a user runs it: a process that logs where its dashboard, GraphQL API and
//! negotiation relay answer, answers there, stops cleanly on SIGTERM, and refuses what it cannot
//! do with a message that says what to do. And `agentpact migrate`, which a newcomer runs first:
//! it creates the database `serve` (and `mcp`) refuse to do without, as `push` and `index` do.

use std::{
    io::{BufRead, BufReader},
    process::{ChildStderr, Command, Output, Stdio},
    time::Duration,
};

use agentpact_contracts::Initiator;
use agentpact_indexer::Config;
use agentpact_tests::{
    HarnessError,
    chain::ether,
    cli::{binary, free_port},
    pacts::Market,
    postgres::{TestDatabase, with_database},
    webhooks::SIGNING_KEY,
};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use sqlx::{AssertSqlSafe, Connection, Executor};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest, http::HeaderValue};

type Result = std::result::Result<(), HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

fn serve(database_url: &str, chain_id: u64, port: u16) -> Command {
    let mut command = Command::new(binary());
    command
        .arg("serve")
        .args(["--database-url", database_url])
        .args(["--chain-id", &chain_id.to_string()])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .env_remove("DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A spawned process, killed (SIGKILL) and reaped when dropped, so a failing assertion leaves no
/// server running (after a clean exit, both do nothing).
struct Spawned(std::process::Child);

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The messages of a `--log-json` process's log, each sent as it is written, read on a thread
/// of its own (so the pipe never fills); the thread returns the whole of stderr at the end.
fn log_messages(stderr: ChildStderr) -> (UnboundedReceiver<String>, std::thread::JoinHandle<String>) {
    let (send, receive) = unbounded_channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(std::io::Result::ok) {
            let event: Value = serde_json::from_str(&line).unwrap_or_default();
            if let Some(message) = event["fields"]["message"].as_str() {
                let _ = send.send(message.to_owned());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    (receive, reader)
}

/// The next logged message that starts with `start` (60 s at most: a debug build on a loaded
/// machine starts slowly).
async fn logged(
    messages: &mut UnboundedReceiver<String>,
    start: &str,
) -> std::result::Result<String, HarnessError> {
    let found = async {
        while let Some(message) = messages.recv().await {
            if message.starts_with(start) {
                return Ok(message);
            }
        }
        Err(process(format!("the process exited without logging \"{start}…\"")))
    };
    tokio::time::timeout(Duration::from_secs(60), found)
        .await
        .map_err(|_| process(format!("the process did not log \"{start}…\" within 60 s")))?
}

/// The URLs (http:// or ws://) a message names, in order.
fn urls(message: &str) -> Vec<String> {
    message
        .split_whitespace()
        .filter(|word| word.starts_with("http://") || word.starts_with("ws://"))
        .map(|word| word.trim_end_matches([',', ';', ')']).to_owned())
        .collect()
}

#[tokio::test]
async fn the_serve_command_answers_graphql_and_stops_on_sigterm() -> Result {
    let m = Market::open().await?;
    m.funded(Initiator::Seller, ether(1)).await?;
    let db = TestDatabase::create().await?;
    agentpact_tests::index::indexer(&m.chain, db.pool(), Config::default()).catch_up().await?;
    let port = free_port()?;
    let mut child =
        Spawned(serve(db.url(), m.chain.anvil.chain_id(), port).arg("--log-json").spawn().map_err(process)?);
    let stderr = child.0.stderr.take().ok_or_else(|| process("no stderr pipe"))?;
    let (mut messages, stderr) = log_messages(stderr);

    // What it logs at start, one line each, in order; then each URL answers.
    let base = format!("http://127.0.0.1:{port}/");
    let dashboard = urls(&logged(&mut messages, "dashboard on ").await?);
    assert_eq!(dashboard, [base.as_str()]);
    let graphql = urls(&logged(&mut messages, "GraphQL on ").await?);
    assert_eq!(graphql, [format!("{base}graphql"), format!("ws://127.0.0.1:{port}/graphql/ws")]);
    let relay = logged(&mut messages, "negotiation relay on ").await?;
    assert!(relay.contains("HIRE_RELAY_URL"), "{relay}");
    assert_eq!(urls(&relay), [base.as_str()]);

    let client = reqwest::Client::new();
    let page = client.get(&dashboard[0]).send().await.map_err(process)?;
    assert_eq!(page.status().as_u16(), 200);
    let html = page.headers().get("content-type").and_then(|t| t.to_str().ok()).unwrap_or_default();
    assert!(html.starts_with("text/html"), "{html}");
    // The relay answers its documented route under the logged base URL (what an MCP server's
    // HIRE_RELAY_URL is set to): a body that is no message is refused in the relay's own words.
    let refused = client
        .post(format!("{}hire/messages", urls(&relay)[0]))
        .json(&json!({}))
        .send()
        .await
        .map_err(process)?;
    assert_eq!(refused.status().as_u16(), 400);
    let refused: Value = refused.json().await.map_err(process)?;
    assert_eq!(refused["error"]["code"], "BAD_MESSAGE", "{refused}");
    let mut request = graphql[1].as_str().into_client_request().map_err(process)?;
    request.headers_mut().insert("sec-websocket-protocol", HeaderValue::from_static("graphql-transport-ws"));
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.map_err(process)?;
    socket.send(Message::text(json!({ "type": "connection_init" }).to_string())).await.map_err(process)?;
    let ack = socket.next().await.ok_or_else(|| process("the websocket closed"))?.map_err(process)?;
    let ack: Value = serde_json::from_str(ack.to_text().map_err(process)?).map_err(process)?;
    assert_eq!(ack["type"], "connection_ack", "{ack}");

    let body = json!({ "query": "{ pact(id: \"0\") { status initiator } indexerStatus { lagBlocks } }" });
    let response: Value =
        client.post(&graphql[0]).json(&body).send().await.map_err(process)?.json().await.map_err(process)?;
    assert_eq!(
        response["data"],
        json!({ "pact": { "status": "FUNDED", "initiator": "SELLER" }, "indexerStatus": { "lagBlocks": 0 } })
    );
    assert_eq!(client.get(format!("{base}readyz")).send().await.map_err(process)?.status().as_u16(), 200);

    let killed = Command::new("kill").args(["-TERM", &child.0.id().to_string()]).status().map_err(process)?;
    assert!(killed.success());
    let status =
        tokio::task::spawn_blocking(move || child.0.wait()).await.map_err(process)?.map_err(process)?;
    let stderr = stderr.join().unwrap_or_default();
    assert!(status.success(), "exit after SIGTERM: {status:?} {stderr}");
    Ok(())
}

fn refused(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2), "stdout: {}", String::from_utf8_lossy(&output.stdout));
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[tokio::test]
async fn the_serve_command_refuses_what_it_cannot_do() -> Result {
    let db = TestDatabase::create().await?;
    // A database that does not exist, in a URL with a password (a trusting server ignores it;
    // one that checks it refuses the login before the database is looked for, so keep its own).
    let mut no_database =
        reqwest::Url::parse(&with_database(db.url(), "agentpact_no_such_db")).map_err(process)?;
    if no_database.password().is_none() {
        no_database.set_password(Some("pw-in-the-url")).map_err(|()| process("the URL takes no password"))?;
    }
    let password = no_database.password().unwrap_or_default().to_owned();
    let serving = refused(&serve(no_database.as_str(), 31337, free_port()?).output().map_err(process)?);
    // `agentpact mcp`, started as an agent's client starts it (addresses and key in its
    // environment), refuses it in the same words.
    let anywhere = "0x0000000000000000000000000000000000000001";
    let mcp = Command::new(binary())
        .arg("mcp")
        .args(["--database-url", no_database.as_str(), "--chain-id", "31337"])
        .args(["--agent-pact-address", anywhere, "--oracle-registry-address", anywhere])
        .args(["--agent-registry-address", anywhere])
        .env("PRIVATE_KEY", SIGNING_KEY)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .output()
        .map_err(process)?;
    for stderr in [serving, refused(&mcp)] {
        assert!(
            stderr.contains("\"agentpact_no_such_db\" that DATABASE_URL names does not exist")
                && stderr.contains("run `agentpact migrate`, which creates it"),
            "{stderr}"
        );
        assert!(!stderr.contains(&password) && !stderr.contains("at line"), "{stderr}");
    }

    let taken = std::net::TcpListener::bind("127.0.0.1:0").map_err(process)?;
    let port = taken.local_addr().map_err(process)?.port();
    let stderr = refused(&serve(db.url(), 31337, port).output().map_err(process)?);
    assert!(stderr.contains("is another server using that port"), "{stderr}");

    let stderr = refused(
        &serve(db.url(), 31337, free_port()?)
            .args(["--cors-origin", "bad\norigin"])
            .output()
            .map_err(process)?,
    );
    assert!(stderr.contains("CORS origin"), "{stderr}");
    Ok(())
}

/// `agentpact migrate` against a server without the database DATABASE_URL names: it creates it
/// (a name that only works quoted), says so once, and applies every migration; run again, it
/// creates nothing.
#[tokio::test]
async fn migrate_creates_the_database_it_names_and_its_tables() -> Result {
    on_a_new_database(|url, name| async move {
        let migrate = || {
            Command::new(binary())
                .arg("migrate")
                .args(["--database-url", &url])
                .env_remove("DATABASE_URL")
                .output()
        };
        let created = format!("created the database \"{name}\"");
        let first = migrate().map_err(process)?;
        let said = String::from_utf8_lossy(&first.stderr);
        assert!(first.status.success(), "{said}");
        assert_eq!(said.matches(&created).count(), 1, "{said}");
        migrations_applied(&url).await?;

        let again = migrate().map_err(process)?;
        let said = String::from_utf8_lossy(&again.stderr);
        assert!(again.status.success() && !said.contains(&created), "{said}");
        Ok(())
    })
    .await
}

/// `agentpact push` and `agentpact index`, which migrate on start like `migrate`, create a
/// missing database too.
#[tokio::test]
async fn push_and_index_create_the_database_they_migrate() -> Result {
    let push = ["push", "--chain-id", "31337", "--metrics-addr", &format!("127.0.0.1:{}", free_port()?)];
    creates_on_start(&push, "delivering webhooks").await?;

    let m = Market::open().await?;
    let d = &m.chain.deployment;
    let (rpc, chain_id) = (m.chain.anvil.endpoint().to_string(), m.chain.anvil.chain_id().to_string());
    let (pact, oracles, agents) =
        (d.agent_pact.to_string(), d.oracle_registry.to_string(), d.agent_registry.to_string());
    let (block, metrics) = (d.block.to_string(), format!("127.0.0.1:{}", free_port()?));
    let index = [
        "index",
        "--rpc-url",
        &rpc,
        "--chain-id",
        &chain_id,
        "--agent-pact-address",
        &pact,
        "--oracle-registry-address",
        &oracles,
        "--agent-registry-address",
        &agents,
        "--deployment-block",
        &block,
        "--metrics-addr",
        &metrics,
    ];
    creates_on_start(&index, "indexing").await
}

/// `agentpact <args>` against a database that does not exist: it logs that it created it, then
/// `ready`, and every migration is applied.
async fn creates_on_start(args: &[&str], ready: &'static str) -> Result {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    on_a_new_database(|url, name| async move {
        let mut child = Spawned(
            Command::new(binary())
                .args(&args)
                .args(["--log-json", "--database-url", &url])
                .env("WEBHOOK_SIGNING_KEY", SIGNING_KEY)
                .env_remove("DATABASE_URL")
                .env_remove("ERC8004_IDENTITY_ADDRESS")
                .env_remove("ERC8004_REPUTATION_ADDRESS")
                .env_remove("ERC8004_START_BLOCK")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(process)?,
        );
        let stderr = child.0.stderr.take().ok_or_else(|| process("no stderr pipe"))?;
        let (mut messages, _stderr) = log_messages(stderr);
        logged(&mut messages, &format!("created the database \"{name}\"")).await?;
        logged(&mut messages, ready).await?;
        migrations_applied(&url).await
    })
    .await
}

/// Runs `check` with the URL and name of a database that does not exist yet on the test server
/// (a name that only works quoted), then drops that database, even when `check` fails.
async fn on_a_new_database<C, F>(check: C) -> Result
where
    C: FnOnce(String, String) -> F,
    F: Future<Output = Result> + Send + 'static,
{
    let db = TestDatabase::create().await?;
    let name = format!("{}-New", db.name());
    // A task of its own: a failed assertion ends it, not this function.
    let checked = tokio::spawn(check(with_database(db.url(), &name), name.clone())).await;
    let drop = format!(r#"DROP DATABASE IF EXISTS "{name}" WITH (FORCE)"#);
    let dropped = db.pool().execute(sqlx::raw_sql(AssertSqlSafe(drop))).await;
    match checked {
        Ok(checked) => checked?,
        Err(failed) => std::panic::resume_unwind(failed.try_into_panic().map_err(process)?),
    }
    dropped?;
    Ok(())
}

/// Every migration is applied at `url`, and the index's tables are there.
async fn migrations_applied(url: &str) -> Result {
    let mut connection = sqlx::PgConnection::connect(url).await?;
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations WHERE success")
        .fetch_one(&mut connection)
        .await?;
    assert_eq!(applied, i64::try_from(agentpact_schema::MIGRATOR.iter().count()).unwrap_or(i64::MAX));
    sqlx::query("SELECT 1 FROM checkpoints LIMIT 1").execute(&mut connection).await?;
    connection.close().await?;
    Ok(())
}
