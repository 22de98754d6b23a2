//! Shows the indexer's progress while it is behind the head: a bar on a terminal, a line every ten
//! seconds otherwise (logs, CI).

use std::{io::IsTerminal, time::Duration};

use agentpact_indexer::Metrics;
use indicatif::{ProgressBar, ProgressStyle};

/// Reports until the task is dropped.
pub async fn report(metrics: Metrics) {
    if std::io::stderr().is_terminal() { bar(metrics).await } else { lines(metrics).await }
}

async fn bar(metrics: Metrics) {
    let bar = ProgressBar::new(0);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} block {pos}/{len} {wide_bar} {per_sec} eta {eta}")
    {
        bar.set_style(style);
    }
    loop {
        bar.set_length(metrics.head_block());
        bar.set_position(metrics.indexed_block());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn lines(metrics: Metrics) {
    let mut last = None;
    loop {
        tokio::time::sleep(Duration::from_secs(10)).await;
        let (indexed, head) = (metrics.indexed_block(), metrics.head_block());
        if indexed < head && last != Some(indexed) {
            tracing::info!(indexed, head, behind = head - indexed, "backfilling");
        }
        last = Some(indexed);
    }
}
