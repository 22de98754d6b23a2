//! Stopping cleanly on Ctrl-C or SIGTERM.

use std::future::Future;

/// Resolves on Ctrl-C or SIGTERM. The handlers are installed when this is called, not when the
/// future is first polled: a signal that comes while the command is still starting is then an
/// orderly stop, not the default action that kills the process.
pub fn shutdown() -> impl Future<Output = ()> + Send {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{Signal, SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt()).ok();
        let terminate = signal(SignalKind::terminate()).ok();
        async fn next(signal: Option<Signal>) {
            match signal {
                Some(mut s) => drop(s.recv().await),
                None => std::future::pending().await,
            }
        }
        async move {
            tokio::select! { () = next(interrupt) => {}, () = next(terminate) => {} }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
