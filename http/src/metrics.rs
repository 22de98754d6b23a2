//! `GET /metrics` for the processes that have nothing else to serve (`agentpact index`,
//! `agentpact push`): Prometheus text from a render function, accepted through
//! [`crate::connections::serve`] with its default limits like every other server.

use crate::connections::{self, ConnectionLimits};

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
    connections::serve(listener, app, ConnectionLimits::default(), std::future::pending()).await
}

#[cfg(test)]
mod tests {
    use std::{
        io::{Read, Write},
        net::{SocketAddr, TcpStream},
    };

    use super::*;

    /// Sends one keep-alive `GET /metrics` on `stream` and returns what came back (empty when the
    /// server closed the connection unanswered).
    fn get(stream: &mut TcpStream) -> String {
        let _ = stream.write_all(b"GET /metrics HTTP/1.1\r\nhost: test\r\n\r\n");
        let mut answer = [0u8; 1024];
        let n = stream.read(&mut answer).unwrap_or(0);
        String::from_utf8_lossy(&answer[..n]).into_owned()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connections_over_the_per_address_limit_are_closed_unanswered() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let address: SocketAddr = listener.local_addr().expect("its address");
        tokio::spawn(serve(listener, || "agentpact_up 1\n".to_owned()));
        let limit = ConnectionLimits::default().per_address;
        tokio::task::spawn_blocking(move || {
            // Each held connection answered once, so the server has counted it.
            let _held: Vec<TcpStream> = (0..limit)
                .map(|n| {
                    let mut stream = TcpStream::connect(address).expect("connecting");
                    let answer = get(&mut stream);
                    assert!(answer.contains("agentpact_up 1"), "connection {n}: {answer:?}");
                    stream
                })
                .collect();
            let mut over = TcpStream::connect(address).expect("connecting");
            assert_eq!(get(&mut over), "", "one over the limit is closed before it is read");
        })
        .await
        .expect("the client thread");
    }
}
