//! Per-client rate limiting of the GraphQL routes: a token bucket per client IP address, refilled
//! at a steady rate up to a burst. A client over its rate gets 429 with `Retry-After`. The buckets
//! live in this process: behind a load balancer each replica limits what reaches it. The same
//! buckets keyed by anything else (`RateLimiter<K>`) pace webhook deliveries per owner.
//!
//! The buckets are `governor`'s keyed limiter (GCRA, the token bucket as one timestamp per key),
//! the crate alloy's request throttle already builds; this module adds the forgetting of idle
//! clients and the 429.

use std::{
    hash::Hash,
    net::{IpAddr, SocketAddr},
    num::NonZeroU32,
    time::Duration,
};

use axum::{
    Json,
    extract::{ConnectInfo, Request, State},
    http::{HeaderValue, StatusCode, header::RETRY_AFTER},
    middleware::Next,
    response::{IntoResponse, Response},
};
use governor::{
    Quota,
    clock::{Clock, DefaultClock},
    middleware::NoOpMiddleware,
    state::keyed::HashMapStateStore,
};

/// How fast each client may go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Requests per second, sustained.
    pub per_second: f64,
    /// Requests allowed at once after a quiet spell (whole requests; at least 1).
    pub burst: f64,
}

impl Rate {
    /// The rate as governor's quota: one request per `1 / per_second`, `burst` at once. A rate too
    /// fast to tell apart from none (a period under a nanosecond) is one per nanosecond; one too
    /// slow to write down (zero, negative, not a number) is one per year.
    fn quota(self) -> Quota {
        const SLOWEST: Duration = Duration::from_secs(365 * 24 * 3600);
        const FASTEST: Duration = Duration::from_nanos(1);
        // 1/0 is infinite and 1/NaN is NaN: neither is a duration.
        let period = Duration::try_from_secs_f64(1.0 / self.per_second).unwrap_or(SLOWEST).max(FASTEST);
        // `as` saturates: a NaN or negative burst is 0, then 1.
        let burst = NonZeroU32::new(self.burst as u32).unwrap_or(NonZeroU32::MIN);
        // Only a zero period has no quota, and the period is at least a nanosecond.
        Quota::with_period(period).unwrap_or(Quota::per_second(NonZeroU32::MIN)).allow_burst(burst)
    }
}

/// Clients' buckets, one per key (a client's address unless said otherwise), on clock `C` (the
/// monotonic clock; tests move a fake one).
#[derive(Debug)]
pub struct RateLimiter<K = IpAddr, C: Clock = DefaultClock>
where
    K: Hash + Eq + Clone,
{
    buckets: governor::RateLimiter<K, HashMapStateStore<K>, C, NoOpMiddleware<C::Instant>>,
}

/// Above this many clients, buckets idle a period past full again are forgotten.
const PRUNE_ABOVE: usize = 10_000;

impl<K: Hash + Eq + Clone> RateLimiter<K> {
    /// A limiter allowing `rate` to every client.
    pub fn new(rate: Rate) -> Self {
        Self::with_clock(rate, DefaultClock::default())
    }
}

impl<K: Hash + Eq + Clone, C: Clock> RateLimiter<K, C> {
    fn with_clock(rate: Rate, clock: C) -> Self {
        Self { buckets: governor::RateLimiter::hashmap_with_clock(rate.quota(), clock) }
    }

    /// Takes a token for `client` now, or says how long until one is free.
    pub fn take(&self, client: K) -> Result<(), Duration> {
        if self.buckets.len() > PRUNE_ABOVE {
            self.buckets.retain_recent();
        }
        self.buckets.check_key(&client).map_err(|refused| refused.wait_time_from(self.buckets.clock().now()))
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
    match limiter.take(client) {
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
    use governor::clock::FakeRelativeClock;

    use super::*;

    #[test]
    fn a_burst_then_the_steady_rate_per_client() {
        let clock = FakeRelativeClock::default();
        let limiter = RateLimiter::with_clock(Rate { per_second: 2.0, burst: 3.0 }, clock.clone());
        let (a, b) = (IpAddr::from([10, 0, 0, 1]), IpAddr::from([10, 0, 0, 2]));
        for _ in 0..3 {
            assert_eq!(limiter.take(a), Ok(()));
        }
        let wait = limiter.take(a).expect_err("the burst is spent");
        assert_eq!(wait, Duration::from_millis(500));
        assert_eq!(limiter.take(b), Ok(()), "another client has its own bucket");
        clock.advance(Duration::from_millis(500));
        assert_eq!(limiter.take(a), Ok(()), "refilled at 2/s");
        assert!(limiter.take(a).is_err());
    }

    #[test]
    fn slow_rates_wait_whole_periods_and_odd_ones_neither_panic_nor_open_the_gate() {
        let clock = FakeRelativeClock::default();
        let slow = RateLimiter::with_clock(Rate { per_second: 0.05, burst: 1.0 }, clock.clone());
        assert_eq!(slow.take(1), Ok(()));
        assert_eq!(slow.take(1), Err(Duration::from_secs(20)));
        for odd in [0.0, -1.0, f64::NAN] {
            let limiter = RateLimiter::with_clock(Rate { per_second: odd, burst: odd }, clock.clone());
            assert_eq!(limiter.take(1), Ok(()), "{odd}: one request");
            assert!(limiter.take(1).is_err(), "{odd}: then none for a long while");
        }
        let fast = RateLimiter::with_clock(Rate { per_second: 1e12, burst: 1e9 }, clock);
        assert!((0..1000).all(|_| fast.take(1).is_ok()));
    }

    #[test]
    fn idle_clients_are_forgotten_once_there_are_many() {
        let clock = FakeRelativeClock::default();
        let limiter = RateLimiter::with_clock(Rate { per_second: 1.0, burst: 1.0 }, clock.clone());
        for client in 0..=PRUNE_ABOVE {
            assert_eq!(limiter.take(client), Ok(()));
        }
        // Full again after a second; governor forgets a bucket a period after that.
        clock.advance(Duration::from_secs(2));
        assert_eq!(limiter.take(PRUNE_ABOVE + 1), Ok(()));
        assert!(limiter.buckets.len() <= 2, "{} buckets kept", limiter.buckets.len());
    }
}
