//! Logs go to stderr (stdout is the MCP protocol's when serving over stdio): human-readable by
//! default, JSON with `--log-json`; `RUST_LOG` filters (default `info`).

use tracing_subscriber::{EnvFilter, fmt};

/// Installs the global subscriber.
pub fn init(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}
