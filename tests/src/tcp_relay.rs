//! A TCP relay in front of an endpoint that can cut every open connection at once, the way a load
//! balancer or a provider drops long-lived websockets; new connections are relayed again at once.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};

use crate::HarnessError;

/// A running relay; stops when dropped.
pub struct TcpRelay {
    addr: SocketAddr,
    cuts: tokio::sync::watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl TcpRelay {
    /// Relays every connection to `upstream` (`host:port`).
    pub async fn start(upstream: String) -> Result<Self, HarnessError> {
        let failed = |e: std::io::Error| HarnessError::Process(format!("relay: {e}"));
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(failed)?;
        let addr = listener.local_addr().map_err(failed)?;
        let (cuts, watching) = tokio::sync::watch::channel(0u64);
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                while connections.try_join_next().is_some() {}
                let (upstream, mut cut) = (upstream.clone(), watching.clone());
                cut.mark_unchanged();
                connections.spawn(async move {
                    let Ok(mut server) = TcpStream::connect(upstream).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Ok(Self { addr, cuts, task })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The relay as a websocket JSON-RPC endpoint: `ws://127.0.0.1:<port>`.
    pub fn ws_url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    /// Closes every connection open now.
    pub fn cut(&self) {
        self.cuts.send_modify(|n| *n += 1);
    }
}

impl Drop for TcpRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}
