-- Push (docs/push.md): webhook subscriptions, the deliveries owed to them (an outbox), and how far
-- `agentpact push` has matched the journal. `agentpact-push` is the only code that writes these
-- tables: whoever registers a subscription calls it (`subscription::register`).

-- Who wants to be told what, and where. A subscription is never deleted (its deliveries name it):
-- cancelling stops matching and delivering.
CREATE TABLE webhook_subscriptions (
    id            BIGSERIAL PRIMARY KEY,
    chain_id      BIGINT NOT NULL,
    owner         BYTEA NOT NULL CHECK (octet_length(owner) = 20),
    url           TEXT NOT NULL,
    mode          TEXT NOT NULL CONSTRAINT webhook_subscriptions_mode_known CHECK (mode IN ('instant', 'finalized')),
    -- The filter: every condition given must hold (NULL: any). `party`: the address is the pact's
    -- creator, buyer, seller, arbitrator or one of its oracles.
    party         BYTEA CHECK (octet_length(party) = 20),
    pact_ids      NUMERIC(78, 0)[],
    kinds         TEXT[],
    currencies    BYTEA[],
    -- Clock alarms (a reminder before a window the pact's parties must act in closes, a notice
    -- when it closed) for the pacts the filter matches.
    alarms        BOOLEAN NOT NULL DEFAULT true,
    -- The HMAC key of the `webhook-signature` header, when the owner chose one. Never shown again.
    hmac_secret   TEXT,
    -- The owner's EIP-191 signature of the registration text (NULL: registered by the operator).
    signature     BYTEA,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    cancelled_at  TIMESTAMPTZ
);
CREATE INDEX webhook_subscriptions_by_party ON webhook_subscriptions (chain_id, party) WHERE cancelled_at IS NULL;
CREATE INDEX webhook_subscriptions_by_owner ON webhook_subscriptions (owner) WHERE cancelled_at IS NULL;

-- How far each mode has matched the journal of a chain, and (instant) the hash of the block it
-- stopped at, to notice a reorganisation under it.
CREATE TABLE webhook_cursors (
    chain_id      BIGINT NOT NULL,
    mode          TEXT NOT NULL CONSTRAINT webhook_cursors_mode_known CHECK (mode IN ('instant', 'finalized')),
    block_number  BIGINT NOT NULL,
    log_index     INTEGER NOT NULL,
    block_hash    BYTEA,
    PRIMARY KEY (chain_id, mode)
);

-- Up to which chain second the window-closed notices of a chain were written.
CREATE TABLE webhook_alarm_cursors (
    chain_id  BIGINT PRIMARY KEY,
    until     TIMESTAMPTZ NOT NULL
);

-- One POST owed to one subscription. `body` is the exact JSON sent (and signed); the same
-- idempotency key is sent on every attempt.
CREATE TABLE webhook_deliveries (
    id               BIGSERIAL PRIMARY KEY,
    subscription_id  BIGINT NOT NULL REFERENCES webhook_subscriptions (id),
    idempotency_key  TEXT NOT NULL,
    kind             TEXT NOT NULL CONSTRAINT webhook_deliveries_kind_known
                     CHECK (kind IN ('event', 'revocation', 'reminder', 'closed')),
    chain_id         BIGINT NOT NULL,
    -- The event's place (events and revocations): what a reorganisation is checked against.
    block_number     BIGINT,
    block_hash       BYTEA,
    log_index        INTEGER,
    -- When the block was mined (events), for the latency metric.
    block_time       TIMESTAMPTZ,
    body             TEXT NOT NULL,
    state            TEXT NOT NULL DEFAULT 'pending' CONSTRAINT webhook_deliveries_state_known
                     CHECK (state IN ('pending', 'delivered', 'dead', 'cancelled')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_error       TEXT,
    -- An event a reorganisation removed after it may have been sent: its revocation is queued.
    revoked          BOOLEAN NOT NULL DEFAULT false,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    delivered_at     TIMESTAMPTZ,
    UNIQUE (subscription_id, idempotency_key)
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (subscription_id, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_recent_events ON webhook_deliveries (chain_id, block_number)
    WHERE kind = 'event' AND NOT revoked AND state <> 'cancelled';
CREATE INDEX webhook_deliveries_dead ON webhook_deliveries (subscription_id, id) WHERE state = 'dead';
