//! Per-client rate limiting of the GraphQL routes: a token bucket per client IP address, refilled
//! at a steady rate up to a burst. A client over its rate gets 429 with `Retry-After`. The buckets
//! live in this process: behind a load balancer each replica limits what reaches it. The same
//! buckets keyed by anything else (`RateLimiter<K>`) pace webhook deliveries per owner.

use std::{
    collections::HashMap,
    hash::Hash,
    net::{IpAddr, SocketAddr},
    sync::Mutex,
    time::{Duration, Instant},
};

use axum::{
    Json,
    extract::{ConnectInfo, Request, State},
    http::{HeaderValue, StatusCode, header::RETRY_AFTER},
    middleware::Next,
    response::{IntoResponse, Response},
};

/// How fast each client may go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Requests per second, sustained.
    pub per_second: f64,
    /// Requests allowed at once after a quiet spell.
    pub burst: f64,
}

/// Clients' buckets, one per key (a client's address unless said otherwise).
#[derive(Debug)]
pub struct RateLimiter<K = IpAddr> {
    rate: Rate,
    buckets: Mutex<HashMap<K, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Above this many clients, buckets idle long enough to be full again are forgotten.
const PRUNE_ABOVE: usize = 10_000;

impl<K: Hash + Eq> RateLimiter<K> {
    /// A limiter allowing `rate` to every client.
    pub fn new(rate: Rate) -> Self {
        Self { rate, buckets: Mutex::new(HashMap::new()) }
    }

    /// Takes a token for `client` at `now`, or says how long until one is free.
    pub fn take(&self, client: K, now: Instant) -> Result<(), Duration> {
        let Ok(mut buckets) = self.buckets.lock() else { return Ok(()) };
        let Rate { per_second, burst } = self.rate;
        if buckets.len() > PRUNE_ABOVE {
            let full_after = Duration::from_secs_f64(burst / per_second);
            buckets.retain(|_, b| now.duration_since(b.at) < full_after);
        }
        let bucket = buckets.entry(client).or_insert(Bucket { tokens: burst, at: now });
        let refill = now.duration_since(bucket.at).as_secs_f64() * per_second;
        bucket.tokens = (bucket.tokens + refill).min(burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / per_second))
        }
    }
}

/// The middleware: 429 with `Retry-After` (whole seconds, at least 1) and a GraphQL-shaped error
/// body with code `RATE_LIMITED`.
pub async fn limit(
    State(limiter): State<std::sync::Arc<RateLimiter>>,
    request: Request,
    next: Next,
) -> Response {
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::from([0, 0, 0, 0]), |ConnectInfo(addr)| addr.ip());
    match limiter.take(client, Instant::now()) {
        Ok(()) => next.run(request).await,
        Err(wait) => {
            let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
            let body = serde_json::json!({ "errors": [{
                "message": format!("too many requests from this address; retry in {seconds} s"),
                "extensions": { "code": "RATE_LIMITED" },
            }] });
            let mut response = (StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response();
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert(RETRY_AFTER, value);
            }
            response
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_the_steady_rate_per_client() {
        let limiter = RateLimiter::new(Rate { per_second: 2.0, burst: 3.0 });
        let (a, b) = (IpAddr::from([10, 0, 0, 1]), IpAddr::from([10, 0, 0, 2]));
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.take(a, t0), Ok(()));
        }
        let wait = limiter.take(a, t0).expect_err("the burst is spent");
        assert_eq!(wait, Duration::from_millis(500));
        assert_eq!(limiter.take(b, t0), Ok(()), "another client has its own bucket");
        assert_eq!(limiter.take(a, t0 + Duration::from_millis(500)), Ok(()), "refilled at 2/s");
        assert!(limiter.take(a, t0 + Duration::from_millis(500)).is_err());
    }
}
