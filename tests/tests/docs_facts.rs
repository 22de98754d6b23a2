//! What the documents say that the code can tell: README's list of MCP tools, resources, templates
//! and prompts against what the server lists; the commands README and docs/architecture.md name
//! against `agentpact --help`; docs/testing.md against the files in tests/tests; the bounds of
//! push's flags against the binary's own refusals; docs/contracts.md's events and contract sizes
//! against the artifacts. Each fails when a document drifts from the code.

use std::{
    collections::{BTreeMap, BTreeSet},
    process::Command,
};

use agentpact_mcp::Role;
use agentpact_tests::{
    HarnessError,
    chain::TestChain,
    cli::binary,
    docs::{self, backticked, section},
    mcp::{TestAgent, test_limits},
    postgres::TestDatabase,
};

type Result<T = ()> = std::result::Result<T, HarnessError>;

fn process(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(e.to_string())
}

/// `field` of each listed item, as the server serialized it.
fn names<T: serde::Serialize>(items: &[T], field: &str) -> Result<BTreeSet<String>> {
    items
        .iter()
        .map(|item| {
            let json = serde_json::to_value(item).map_err(process)?;
            json[field].as_str().map(str::to_owned).ok_or_else(|| process(format!("no {field} in {json}")))
        })
        .collect()
}

#[tokio::test]
async fn readme_lists_every_tool_resource_template_and_prompt_the_mcp_server_lists() -> Result {
    let chain = TestChain::start().await?;
    let db = TestDatabase::create().await?;
    // A full agent lists every tool; a wallet with no pacts lists only the fixed resources.
    let agent = TestAgent::start(&chain, &db, 1, Role::Full, test_limits()).await?;
    let failed = |what: &'static str| move |e: rmcp::ServiceError| process(format!("{what}: {e}"));
    let client = &agent.client;
    let listed = BTreeMap::from([
        ("tools", names(&client.list_all_tools().await.map_err(failed("tools/list"))?, "name")?),
        ("resources", names(&client.list_all_resources().await.map_err(failed("resources/list"))?, "uri")?),
        (
            "resource templates",
            names(
                &client.list_all_resource_templates().await.map_err(failed("resources/templates/list"))?,
                "uriTemplate",
            )?,
        ),
        ("prompts", names(&client.list_all_prompts().await.map_err(failed("prompts/list"))?, "name")?),
    ]);

    // README's section: one "- label: `name`, …" item per group (an item may wrap); the groups
    // labelled after the other kinds hold those, every other group holds tools.
    let readme = docs::read("README.md")?;
    let part = section(&readme, "## MCP tools")?;
    let mut written: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for item in part.split("\n- ").skip(1) {
        let (label, names) =
            item.split_once(':').ok_or_else(|| process(format!("a list item without a label: {item}")))?;
        let kind = match label {
            "resources" | "resource templates" | "prompts" => label,
            _ => "tools",
        };
        written.entry(kind).or_default().extend(backticked(names).into_iter().map(str::to_owned));
    }
    for (kind, listed) in &listed {
        let in_readme = written.get(kind).cloned().unwrap_or_default();
        let once: BTreeSet<String> = in_readme.iter().cloned().collect();
        assert_eq!(once.len(), in_readme.len(), "README names one of its {kind} twice: {in_readme:?}");
        let missing: Vec<_> = listed.difference(&once).collect();
        let unknown: Vec<_> = once.difference(listed).collect();
        assert!(
            missing.is_empty() && unknown.is_empty(),
            "README's MCP {kind} differ from what the server lists: missing {missing:?}, not listed by \
             the server {unknown:?}"
        );
    }
    Ok(())
}

/// What `agentpact <args>` printed on stdout (for `--help`, its whole help).
fn printed(args: &[&str]) -> Result<String> {
    let output = Command::new(binary()).args(args).output().map_err(process)?;
    assert!(output.status.success(), "agentpact {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The whole words of `text` that are commands.
fn commands_in<'a>(text: &'a str, commands: &BTreeSet<String>) -> BTreeSet<&'a str> {
    text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|word| commands.contains(*word)).collect()
}

/// The one table row of `doc` whose first cell is `first`.
fn row<'a>(doc: &'a str, first: &str) -> Result<&'a str> {
    doc.lines()
        .find(|line| line.starts_with(&format!("| {first} |")))
        .ok_or_else(|| process(format!("no row {first:?}")))
}

#[test]
fn readme_and_the_architecture_name_every_command_the_help_lists() -> Result {
    let help = printed(&["--help"])?;
    let (_, listing) =
        help.split_once("Commands:\n").ok_or_else(|| process(format!("no commands: {help}")))?;
    let listing: Vec<&str> = listing.lines().take_while(|line| !line.trim().is_empty()).collect();
    let commands: BTreeSet<String> = listing
        .iter()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    assert!(commands.len() >= 8, "{help}");

    // Any other line of the help that names several commands names them all.
    for line in help.lines().filter(|line| !listing.contains(line)) {
        let named = commands_in(line, &commands);
        assert!(
            named.len() < 3 || named.len() == commands.len(),
            "the help's line {line:?} names {named:?} of {commands:?}"
        );
    }

    let readme = docs::read("README.md")?;
    let parts = section(&readme, "## The parts")?;
    let in_parts: BTreeSet<String> = parts
        .lines()
        .filter(|line| line.starts_with("| "))
        .flat_map(backticked)
        .filter_map(|code| code.strip_prefix("agentpact "))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    assert_eq!(in_parts, commands, "README's table of parts against `agentpact --help`");

    // Bare lowercase words in backticks, but the binary's own name.
    let is_command = |code: &&str| *code != "agentpact" && code.chars().all(|c| c.is_ascii_lowercase());
    let layout: BTreeSet<String> =
        backticked(row(&readme, "`cli/`")?).into_iter().filter(is_command).map(str::to_owned).collect();
    assert_eq!(layout, commands, "README's layout row of cli/ against `agentpact --help`");
    let architecture = docs::read("docs/architecture.md")?;
    let cli: BTreeSet<String> = backticked(row(&architecture, "`agentpact` (cli)")?)
        .into_iter()
        .filter(is_command)
        .map(str::to_owned)
        .collect();
    assert_eq!(cli, commands, "docs/architecture.md's cli row against `agentpact --help`");

    // What `agentpact dev` starts (cli/src/dev/mod.rs), said by its help and by README.
    let dev = printed(&["dev", "--help"])?.to_lowercase();
    let two_commands = section(&readme, "## The two commands")?.to_lowercase();
    for part in ["anvil", "contracts", "demo pact", "postgres", "indexer", "api", "dashboard", "webhook"] {
        assert!(dev.contains(part), "`agentpact dev --help` does not say it starts {part}: {dev}");
        assert!(two_commands.contains(part), "README's `dev` paragraph does not say it starts {part}");
    }
    Ok(())
}

/// docs/architecture.md's recipes name files and functions a newcomer will look for: every
/// backticked path ending in `.rs` is a file of the repository (a suffix of a tracked path); every
/// `file.rs::name` is an item of such a file, every `module::name` an item of that module's file
/// (of the code, for `Type::name`), and every bare snake_case name (`from_pact`) is declared somewhere
/// in the code (a table or column name, in a migration).
#[test]
fn the_architecture_names_only_files_and_functions_that_exist() -> Result {
    let root = docs::repository();
    let tracked =
        std::process::Command::new("git").arg("-C").arg(&root).arg("ls-files").output().map_err(process)?;
    let tracked = String::from_utf8_lossy(&tracked.stdout).into_owned();
    let read = |file: &str| std::fs::read_to_string(root.join(file)).unwrap_or_default();
    let declares = |text: &str, item: &str| {
        ["fn", "struct", "enum", "const", "static", "mod", "type", "trait", "macro_rules!"]
            .iter()
            .any(|keyword| text.contains(&format!("{keyword} {item}")))
    };
    let code: String = tracked.lines().filter(|f| f.ends_with(".rs")).map(read).collect();
    let sql: String = tracked.lines().filter(|f| f.ends_with(".sql")).map(read).collect();
    let snake = |name: &str| {
        name.contains('_')
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    let architecture = docs::read("docs/architecture.md")?;
    let mut checked = 0;
    for name in backticked(&architecture) {
        let (path, item) = name.rsplit_once("::").map_or((name, None), |(path, item)| (path, Some(item)));
        if path.ends_with(".rs") && !path.contains(char::is_whitespace) && !path.contains('<') {
            let files: Vec<&str> =
                tracked.lines().filter(|f| *f == path || f.ends_with(&format!("/{path}"))).collect();
            assert!(!files.is_empty(), "docs/architecture.md names `{name}`, but no tracked file is {path}");
            if let Some(item) = item {
                let found = files.iter().any(|file| declares(&read(file), item));
                assert!(found, "docs/architecture.md names `{name}`, but {files:?} declare no `{item}`");
            }
        } else if let Some(item) =
            item.filter(|_| path.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            // `module::item`: in that module's file when one has that name; `Type::item`: anywhere.
            let item = item.trim_end_matches("()");
            let module: Vec<&str> = tracked
                .lines()
                .filter(|f| f.ends_with(&format!("/{path}.rs")) || f.ends_with(&format!("/{path}/mod.rs")))
                .collect();
            let found = if module.is_empty() {
                declares(&code, item)
            } else {
                module.iter().any(|file| declares(&read(file), item))
            };
            assert!(found, "docs/architecture.md names `{name}`: no `{item}` is declared there");
        } else if snake(name) {
            let found = declares(&code, name) || sql.contains(name);
            assert!(found, "docs/architecture.md names `{name}`: nothing of that name is declared");
        } else {
            continue;
        }
        checked += 1;
    }
    assert!(checked > 20, "only {checked} names checked: did the recipe move?");
    Ok(())
}

/// The `.rs` files in tests/tests, by name.
fn test_files() -> Result<BTreeSet<String>> {
    Ok(std::fs::read_dir(docs::repository().join("tests/tests"))
        .map_err(process)?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".rs"))
        .collect())
}

/// With one test binary (`autotests = false`), a file main.rs does not declare is never compiled:
/// every file must be a `mod` of main.rs, and every `mod` a file.
#[test]
fn the_test_binary_declares_every_test_file() -> Result {
    let files: BTreeSet<String> = test_files()?
        .iter()
        .filter_map(|file| file.strip_suffix(".rs"))
        .filter(|name| *name != "main")
        .map(str::to_owned)
        .collect();
    let main = docs::read("tests/tests/main.rs")?;
    let declared: BTreeSet<String> = main
        .lines()
        .filter_map(|line| line.strip_prefix("mod ").and_then(|rest| rest.strip_suffix(';')))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        files, declared,
        "tests/tests/main.rs must declare `mod <file>;` for each file in tests/tests"
    );
    Ok(())
}

#[test]
fn testing_md_has_a_row_for_every_test_file_and_names_no_other() -> Result {
    let files = test_files()?;
    let testing = docs::read("docs/testing.md")?;
    let mut rows = Vec::new();
    for line in testing.lines().filter(|line| line.starts_with("| `")) {
        let first = line.split('|').nth(1).unwrap_or_default();
        rows.extend(backticked(first).into_iter().filter(|name| name.ends_with(".rs")).map(str::to_owned));
    }
    let named: BTreeSet<String> = rows.iter().cloned().collect();
    assert_eq!(named.len(), rows.len(), "docs/testing.md gives a file two rows: {rows:?}");
    let missing: Vec<_> = files.difference(&named).collect();
    let gone: Vec<_> = named.difference(&files).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "docs/testing.md: add a row (file | what it proves) for {missing:?}; no such file in tests/tests: {gone:?}"
    );
    Ok(())
}

/// The `low..=high` range clap names when refusing `value` for push's `flag`.
fn refused_range(flag: &str) -> Result<(u64, u64)> {
    let output =
        Command::new(binary()).args(["push", flag, "1000000"]).env_clear().output().map_err(process)?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let range = stderr
        .split("is not in ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|range| range.split_once("..="))
        .ok_or_else(|| process(format!("no range in {stderr}")))?;
    let number = |s: &str| s.trim_end_matches(|c: char| !c.is_ascii_digit()).parse::<u64>().map_err(process);
    Ok((number(range.0)?, number(range.1)?))
}

#[test]
fn push_help_and_docs_state_the_bounds_push_enforces() -> Result {
    let help = printed(&["push", "--help"])?;
    let push_md = docs::read("docs/push.md")?;
    for (flag, variable) in
        [("--max-attempts", "WEBHOOK_MAX_ATTEMPTS"), ("--timeout-secs", "WEBHOOK_TIMEOUT_SECS")]
    {
        let (low, high) = refused_range(flag)?;
        let bounds = format!("{low} to {high}");
        // The flag's line, then its description up to the next flag.
        let described: String = help
            .lines()
            .skip_while(|line| !line.trim_start().starts_with(flag))
            .enumerate()
            .take_while(|(n, line)| *n == 0 || !line.trim_start().starts_with('-'))
            .map(|(_, line)| line)
            .collect();
        assert!(!described.is_empty(), "no {flag} in push --help: {help}");
        assert!(described.contains(&bounds), "push --help on {flag} does not say {bounds}: {described}");
        let documented = push_md
            .split(&format!("`{variable}` ("))
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .ok_or_else(|| process(format!("docs/push.md does not name {variable}")))?;
        assert!(documented.contains(&bounds), "docs/push.md on {variable}: ({documented}), not {bounds}");
    }
    Ok(())
}

/// Every event of a contract of ours, as `` `Name(param, …)` `` with the ABI's parameter names.
fn abi_events(contract: &str) -> Result<Vec<String>> {
    let artifact: serde_json::Value =
        serde_json::from_str(&docs::read(&format!("contracts/artifacts/{contract}.json"))?)
            .map_err(process)?;
    let abi = artifact["abi"].as_array().ok_or_else(|| process(format!("{contract}.json has no abi")))?;
    Ok(abi
        .iter()
        .filter(|item| item["type"] == "event")
        .map(|event| {
            let params: Vec<&str> = event["inputs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|input| input["name"].as_str().unwrap_or_default())
                .collect();
            format!("`{}({})`", event["name"].as_str().unwrap_or_default(), params.join(", "))
        })
        .collect())
}

#[test]
fn contracts_md_names_every_event_with_its_parameters() -> Result {
    let doc = docs::read("docs/contracts.md")?;
    let mut missing = Vec::new();
    for contract in ["AgentPact", "OracleRegistry", "AgentRegistry"] {
        let events = abi_events(contract)?;
        assert!(!events.is_empty(), "{contract}'s artifact lists no events");
        missing.extend(events.into_iter().filter(|event| !doc.contains(event.as_str())));
    }
    assert!(
        missing.is_empty(),
        "docs/contracts.md does not name these events as the ABI declares them: {missing:?}"
    );
    Ok(())
}

/// docs/contracts.md §Room: each contract's deployed bytes and headroom, as its committed artifact has them.
#[test]
fn contracts_md_states_each_contracts_size_as_the_artifacts_have_it() -> Result {
    const LIMIT: usize = 20_480;
    let room = section(&docs::read("docs/contracts.md")?, "## Room: one escrow, three contracts")?;
    let grouped = |n: usize| {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    for contract in ["AgentPact", "AgentPactLifecycle", "AgentPactViews", "AgentRegistry", "OracleRegistry"] {
        let artifact: serde_json::Value =
            serde_json::from_str(&docs::read(&format!("contracts/artifacts/{contract}.json"))?)
                .map_err(process)?;
        let code = artifact["deployedBytecode"]
            .as_str()
            .ok_or_else(|| process(format!("{contract}.json has no deployedBytecode")))?;
        let bytes = (code.len() - 2) / 2;
        let row = room
            .lines()
            .find(|line| line.starts_with(&format!("| `{contract}`")))
            .ok_or_else(|| process(format!("docs/contracts.md §Room has no row for {contract}")))?;
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(
            cells[cells.len() - 3..cells.len() - 1],
            [grouped(bytes).as_str(), grouped(LIMIT - bytes).as_str()],
            "docs/contracts.md §Room's row of {contract}: run contracts/build and copy its sizes"
        );
    }
    Ok(())
}
