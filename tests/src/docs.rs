//! The project's documents as tests read them: a file of the repository, the part of it under a
//! heading, its code blocks and the names it writes in backticks, so that a test can hold a
//! document to what the code says.

use std::path::PathBuf;

use crate::HarnessError;

/// The repository's root (the workspace this crate is part of).
pub fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The text of `path`, relative to the repository's root (`README.md`, `docs/testing.md`).
pub fn read(path: &str) -> Result<String, HarnessError> {
    std::fs::read_to_string(repository().join(path))
        .map_err(|e| HarnessError::Process(format!("reading {path}: {e}")))
}

/// The part of `doc` under the heading `heading` (`"## MCP tools"`), up to the next heading of the
/// same level or above outside a code block; an error when `doc` has no such heading.
pub fn section(doc: &str, heading: &str) -> Result<String, HarnessError> {
    let level_of = |line: &str| {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        (hashes > 0 && line[hashes..].starts_with(' ')).then_some(hashes)
    };
    let level = level_of(heading).unwrap_or(0);
    let mut lines = doc.lines();
    lines
        .by_ref()
        .find(|line| *line == heading)
        .ok_or_else(|| HarnessError::Process(format!("no heading {heading:?}")))?;
    let mut fenced = false;
    let mut under = String::new();
    for line in lines {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && level_of(line).is_some_and(|l| l <= level) {
            break;
        }
        under.push_str(line);
        under.push('\n');
    }
    Ok(under)
}

/// The code blocks of `text` fenced as `language` (```` ```graphql ````), each without its fences.
pub fn code_blocks<'a>(text: &'a str, language: &str) -> Vec<&'a str> {
    let fence = format!("```{language}\n");
    text.match_indices(&fence)
        .filter_map(|(at, _)| {
            let body = &text[at + fence.len()..];
            body.find("```").map(|end| &body[..end])
        })
        .collect()
}

/// Every name `text` writes between single backticks, in order.
pub fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}
