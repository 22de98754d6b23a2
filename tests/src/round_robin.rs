//! A TCP proxy that hands each new connection to the next of several upstreams in turn, the way a
//! round-robin load balancer spreads clients over replicas, and remembers where each one went.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex, PoisonError},
};

use tokio::net::{TcpListener, TcpStream};

use crate::HarnessError;

/// A running proxy; stops accepting (and cuts the connections it carries) when dropped.
pub struct RoundRobin {
    addr: SocketAddr,
    upstreams: usize,
    order: Arc<Mutex<Vec<usize>>>,
    task: tokio::task::JoinHandle<()>,
}

impl RoundRobin {
    /// Sends connection `n` to `upstreams[n % upstreams.len()]` (each `host:port`), copying bytes
    /// both ways until either side closes.
    pub async fn start(upstreams: Vec<String>) -> Result<Self, HarnessError> {
        if upstreams.is_empty() {
            return Err(HarnessError::Process("round robin: no upstreams".to_owned()));
        }
        let failed = |e: std::io::Error| HarnessError::Process(format!("round robin: {e}"));
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(failed)?;
        let addr = listener.local_addr().map_err(failed)?;
        let order = Arc::new(Mutex::new(Vec::new()));
        let (count, record) = (upstreams.len(), order.clone());
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                while connections.try_join_next().is_some() {}
                let upstream = {
                    let mut order = record.lock().unwrap_or_else(PoisonError::into_inner);
                    let next = order.len() % count;
                    order.push(next);
                    upstreams[next].clone()
                };
                connections.spawn(async move {
                    let Ok(mut server) = TcpStream::connect(upstream).await else { return };
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                });
            }
        });
        Ok(Self { addr, upstreams: count, order, task })
    }

    /// The proxy as an HTTP base: `http://127.0.0.1:<port>` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The index of the upstream each connection so far was sent to, in the order they came.
    pub fn order(&self) -> Vec<usize> {
        self.order.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// How many connections each upstream got, by the upstreams' order in `start`.
    pub fn connections(&self) -> Vec<usize> {
        let mut counts = vec![0; self.upstreams];
        for upstream in self.order() {
            counts[upstream] += 1;
        }
        counts
    }
}

impl Drop for RoundRobin {
    fn drop(&mut self) {
        self.task.abort();
    }
}
