//! The Redis Streams sink: each delivery is an entry of the chain's stream `<prefix>:<chainId>`
//! (fields `key`, `subject`, `body`), added by `XADD` with `MAXLEN ~ <maxlen>` (Redis trims whole
//! nodes, so about that many are kept); consumer groups are the consumers' own. Redis answering the
//! `XADD` answers the delivery. A key is remembered for an hour beside the stream, in the same
//! script, so a repeat (a process killed after the `XADD` and before recording it) is not added
//! twice.

use std::time::Duration;

use redis::aio::MultiplexedConnection;

use super::{Publisher, Route, SinkConfig};

/// Adds the entry unless its key was added within the hour: KEYS = [stream, the key's marker],
/// ARGV = [maxlen, key, subject, body, seconds to remember the key].
const ADD_ONCE: &str = "\
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[5]) then
  return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'key', ARGV[2], 'subject', ARGV[3], 'body', ARGV[4])
end
return false";

/// How long a key is remembered to drop a repeat.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(3600);

/// How long connecting, and one answer, may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The Redis client.
pub struct Redis;

impl Publisher for Redis {
    type Connection = MultiplexedConnection;

    async fn connect(&self, sink: &SinkConfig) -> Result<MultiplexedConnection, String> {
        let client = redis::Client::open(sink.url.as_str())
            .map_err(|e| format!("the Redis URL is not usable: {e}"))?;
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT));
        client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| format!("connecting to Redis failed: {e}"))
    }

    async fn send(
        &self,
        sink: &SinkConfig,
        connection: &mut MultiplexedConnection,
        key: &str,
        body: &str,
        route: &Route,
    ) -> Result<(), String> {
        let stream = format!("{}:{}", sink.prefix, route.chain_id);
        let added: Option<String> = redis::cmd("EVAL")
            .arg(ADD_ONCE)
            .arg(2)
            .arg(&stream)
            .arg(format!("{stream}:added:{key}"))
            .arg(&sink.own)
            .arg(key)
            .arg(format!("{}.{}", sink.prefix, route.words))
            .arg(body)
            .arg(DUPLICATE_WINDOW.as_secs())
            .query_async(connection)
            .await
            .map_err(|e| format!("XADD to Redis failed: {e}"))?;
        if added.is_none() {
            tracing::debug!(sink = sink.name, key, "already in the Redis stream");
        }
        Ok(())
    }
}
