-- What an MCP server must keep past one request, kept where every `agentpact mcp --http`
-- process behind a load balancer reads it (docs/mcp.md §Scale-out): the spending confirmations a
-- human answers on a page, and the writes that outlived their call (tasks).

-- One confirmation page: a spend above CONFIRM_ABOVE_* waiting for a human's yes or no.
-- The page's address carries a random token; only its keccak256 is stored.
CREATE TABLE mcp_confirmations (
    token_hash   BYTEA PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    chain_id     BIGINT NOT NULL,
    wallet       BYTEA NOT NULL CHECK (octet_length(wallet) = 20),
    tool         TEXT NOT NULL,
    -- keccak256 of the tool's name and its arguments: the call the yes is bound to.
    call_digest  BYTEA NOT NULL CHECK (octet_length(call_digest) = 32),
    -- What the page shows: tool, amount, wallet, counterparty, what the call does.
    summary      JSONB NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    expires_at   TIMESTAMPTZ NOT NULL,
    decision     TEXT CHECK (decision IN ('confirmed', 'declined')),
    decided_at   TIMESTAMPTZ,
    -- Set when the call that was confirmed went on to send: a yes is spent once.
    used_at      TIMESTAMPTZ,
    CHECK ((decision IS NULL) = (decided_at IS NULL)),
    CHECK (used_at IS NULL OR decision = 'confirmed')
);
CREATE INDEX mcp_confirmations_expiry ON mcp_confirmations (expires_at);

-- A tool call whose transaction was not mined within the call's time (MCP tasks extension).
CREATE TABLE mcp_tasks (
    id          TEXT PRIMARY KEY,
    chain_id    BIGINT NOT NULL,
    wallet      BYTEA NOT NULL CHECK (octet_length(wallet) = 20),
    tool        TEXT NOT NULL,
    tx_hash     BYTEA NOT NULL CHECK (octet_length(tx_hash) = 32),
    status      TEXT NOT NULL CHECK (status IN ('working', 'completed')),
    -- The tool's answer once it finished, a refusal included (MCP: a tool error completes a task).
    result      JSONB,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK ((status = 'working') = (result IS NULL))
);
CREATE INDEX mcp_tasks_wallet ON mcp_tasks (chain_id, wallet, created_at DESC);
