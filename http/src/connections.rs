//! How the HTTP servers (`agentpact serve`'s API, `agentpact mcp --http`, and the metrics of
//! `agentpact index` and `agentpact push`) accept connections, so that holding connections open
//! cannot make a server unreachable:
//!
//! - at most [`ConnectionLimits::per_address`] open connections from one address and
//!   [`ConnectionLimits::total`] in all; a connection over either is closed at once, before a
//!   byte is read;
//! - a request's headers must arrive within [`ConnectionLimits::header_timeout`] of the
//!   connection opening (or of the previous response, on a kept-alive connection), else the
//!   connection is closed;
//! - a request body must arrive within [`ConnectionLimits::body_timeout`] (HTTP 408 otherwise).
//!
//! Websocket upgrades work as with `axum::serve`, and every request carries the peer address as
//! `ConnectInfo<SocketAddr>`.

use std::{
    collections::HashMap,
    future::Future,
    net::{IpAddr, SocketAddr},
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{Router, body::Body, extract::ConnectInfo, http::Request};
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::conn::auto::Builder,
};
use tokio::{net::TcpListener, sync::watch};
use tower::ServiceExt;
use tower_http::timeout::RequestBodyTimeoutLayer;

/// Bounds on how clients may hold connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Open connections one address may hold.
    pub per_address: usize,
    /// Open connections in all.
    pub total: usize,
    /// Time to send a request's headers.
    pub header_timeout: Duration,
    /// Time to send a request's body.
    pub body_timeout: Duration,
}

impl Default for ConnectionLimits {
    /// 256 per address, 4,096 in all (well under a usual open-file limit), 10 s for headers,
    /// 30 s for a body.
    fn default() -> Self {
        Self {
            per_address: 256,
            total: 4_096,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// Open connections, by address and in all.
#[derive(Default)]
struct Open {
    by_address: HashMap<IpAddr, usize>,
    total: usize,
}

/// One admitted connection; leaving the count when dropped.
struct Admitted {
    open: Arc<Mutex<Open>>,
    address: IpAddr,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        if let Ok(mut open) = self.open.lock() {
            open.total = open.total.saturating_sub(1);
            if let Some(n) = open.by_address.get_mut(&self.address) {
                *n -= 1;
                if *n == 0 {
                    open.by_address.remove(&self.address);
                }
            }
        }
    }
}

fn admit(open: &Arc<Mutex<Open>>, address: IpAddr, limits: ConnectionLimits) -> Option<Admitted> {
    let mut o = open.lock().ok()?;
    let from_address = o.by_address.get(&address).copied().unwrap_or(0);
    if o.total >= limits.total || from_address >= limits.per_address {
        return None;
    }
    o.total += 1;
    o.by_address.insert(address, from_address + 1);
    Some(Admitted { open: Arc::clone(open), address })
}

/// Serves `app` on `listener` within `limits` until `shutdown` resolves; then stops accepting,
/// lets open connections finish their requests (at most 10 s) and returns.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let app = app.layer(RequestBodyTimeoutLayer::new(limits.body_timeout));
    let open = Arc::new(Mutex::new(Open::default()));
    let (stop, stopping) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors or a connection reset before accept: keep serving.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(admitted) = admit(&open, peer.ip(), limits) else {
            tracing::debug!(%peer, "connection refused: over the connection limit");
            drop(stream);
            continue;
        };
        tokio::spawn(connection(stream, peer, app.clone(), limits, admitted, stopping.clone()));
    }
    drop(listener);
    let _ = stop.send(true);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while open.lock().map(|o| o.total).unwrap_or(0) > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

async fn connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    app: Router,
    limits: ConnectionLimits,
    _admitted: Admitted,
    mut stopping: watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(peer));
        app.clone().oneshot(request)
    });
    let mut builder = Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
    tokio::pin!(conn);
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended");
                }
                return;
            }
            changed = stopping.changed() => {
                if changed.is_err() || *stopping.borrow() {
                    conn.as_mut().graceful_shutdown();
                    // The connection finishes its request, then the loop returns above.
                    let _ = conn.as_mut().await;
                    return;
                }
            }
        }
    }
}
