//! docker-compose.yml and the Dockerfile, checked as far as this machine can (no Docker engine):
//! the file parses, every service it builds from our image runs a real subcommand with flags that
//! subcommand has, dependencies name real services, and the image's entrypoint is our binary.

use std::process::Command;

use agentpact_tests::cli::binary;
use serde_yaml::{Mapping, Value};

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn text(v: &Value) -> String {
    v.as_str().map(str::to_owned).unwrap_or_default()
}

#[test]
fn compose_services_run_real_commands_with_real_flags() {
    let file = std::fs::read_to_string(root().join("docker-compose.yml")).expect("docker-compose.yml");
    let mut doc: Value = serde_yaml::from_str(&file).expect("docker-compose.yml is YAML");
    doc.apply_merge().expect("merge keys resolve");
    let services: &Mapping = doc["services"].as_mapping().expect("a services map");
    let names: Vec<String> = services.keys().map(text).collect();
    for expected in ["postgres", "anvil", "deployer", "migrate", "indexer", "api"] {
        assert!(names.contains(&expected.to_owned()), "no {expected} service: {names:?}");
    }
    let mut ours = 0;
    for (name, service) in services {
        let name = text(name);
        if let Some(deps) = service["depends_on"].as_mapping() {
            for dep in deps.keys().map(text) {
                assert!(names.contains(&dep), "{name} depends on unknown service {dep}");
            }
        }
        if service["image"] != "agentpact:local" {
            continue;
        }
        ours += 1;
        let command: Vec<String> =
            service["command"].as_sequence().expect("a command list").iter().map(text).collect();
        let help = Command::new(binary()).arg(&command[0]).arg("--help").output().expect("run the binary");
        let help_text = String::from_utf8_lossy(&help.stdout);
        assert!(help.status.success(), "{name}: `agentpact {}` is not a command: {help:?}", command[0]);
        for flag in command.iter().filter(|a| a.starts_with("--")) {
            assert!(
                help_text.contains(flag.as_str()),
                "{name}: `agentpact {}` has no flag {flag}",
                command[0]
            );
        }
        let env = service["environment"].as_mapping().expect("environment");
        for var in env.keys().map(text).filter(|v| v != "DEPLOYMENTS_DIR" && v != "PRIVATE_KEY") {
            let all_help = [&command[0], "index", "serve", "deploy", "migrate"]
                .iter()
                .map(|c| {
                    String::from_utf8_lossy(
                        &Command::new(binary()).args([*c, "--help"]).output().expect("help").stdout,
                    )
                    .into_owned()
                })
                .collect::<String>();
            assert!(all_help.contains(&format!("env: {var}")), "{name}: no command reads {var}");
        }
    }
    assert_eq!(ours, 4, "deployer, migrate, indexer and api run our image");

    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).expect("Dockerfile");
    assert!(dockerfile.contains(r#"ENTRYPOINT ["agentpact"]"#));
    assert!(dockerfile.contains("cargo build --release --locked -p agentpact"));
}
