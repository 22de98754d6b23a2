# The one `agentpact` binary (index, serve, mcp, deploy, migrate) in a small runtime image.
# Build: docker build -t agentpact .   Run: docker run --rm agentpact --help
FROM rust:1.95-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libssl-dev pkg-config && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Queries are checked against the committed .sqlx data; no database is needed to build.
ENV SQLX_OFFLINE=true
RUN cargo build --release --locked -p agentpact

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libssl3 ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/agentpact /usr/local/bin/agentpact
# A fixed mmap threshold: glibc otherwise raises it after each large free, the indexer's large
# short-lived buffers (a log range's answer, a statement's parameters) then fragment the heap, and
# a backfill's memory grows with the history (184 MiB at 100k pacts, 112 MiB with this: BENCHMARKS.md).
# The binary sets it itself when absent (cli/src/memory.rs); set here, it starts without re-executing.
ENV MALLOC_MMAP_THRESHOLD_=131072
# A volume mounted here starts owned by the unprivileged user, so `deploy` can write to it.
RUN mkdir /deployments && chown 10001 /deployments
USER 10001
ENTRYPOINT ["agentpact"]
