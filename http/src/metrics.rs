//! `GET /metrics` for the processes that have nothing else to serve (`agentpact index`,
//! `agentpact push`): Prometheus text from a render function.

/// Serves `GET /metrics` on `listener`, answering with what `render` returns, until the task is
/// dropped.
pub async fn serve<R>(listener: tokio::net::TcpListener, render: R) -> std::io::Result<()>
where
    R: Fn() -> String + Clone + Send + Sync + 'static,
{
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let render = render.clone();
            async move { ([("content-type", "text/plain; version=0.0.4")], render()) }
        }),
    );
    axum::serve(listener, app).await
}
