//! Logs go to stderr (stdout is the MCP protocol's when serving over stdio): human-readable by
//! default, JSON with `--log-json`; `RUST_LOG` filters (default `info`).
//!
//! Whatever `RUST_LOG` asks, the MCP library's own events are held at info ([`CAPPED`]): at debug
//! and trace it logs every message whole — a tool call's arguments (`subscribe_webhook`'s HMAC
//! secret and target URL), the elicitation that carries a confirmation page's address and its
//! `requestState` token — and none of that may reach a log (SECURITY.md).

use tracing::{Level, Metadata};
use tracing_subscriber::{EnvFilter, filter::filter_fn, fmt, layer::SubscriberExt, util::SubscriberInitExt};

/// The targets (and their modules) whose events above info would log what a message carries.
const CAPPED: [&str; 1] = ["rmcp"];

/// Whether an event or span of `meta` may be logged at all: everything at info and above, and
/// the more verbose levels of every target but [`CAPPED`]'s.
fn allowed(meta: &Metadata<'_>) -> bool {
    *meta.level() <= Level::INFO || !CAPPED.iter().any(|capped| within(meta.target(), capped))
}

/// Whether `target` is `module` or one of its submodules.
fn within(target: &str, module: &str) -> bool {
    target.strip_prefix(module).is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

/// Installs the global subscriber.
pub fn init(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let cap = filter_fn(allowed);
    if json {
        builder.json().finish().with(cap).init();
    } else {
        builder.finish().with(cap).init();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_capped_modules_are_capped() {
        for (target, capped) in
            [("rmcp", true), ("rmcp::service", true), ("rmcpx", false), ("agentpact_mcp::server", false)]
        {
            assert_eq!(within(target, "rmcp"), capped, "{target}");
        }
    }
}
