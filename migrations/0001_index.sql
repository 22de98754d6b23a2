-- The index of AgentPact and OracleRegistry events (DESIGN.md §Index). The indexer is the only
-- writer. Every row carries chain_id so one database can index several chains side by side.
-- Amounts are wei as NUMERIC(78,0) (any uint256 fits); addresses (20 bytes) and hashes (32 bytes)
-- are BYTEA; times are the timestamps of the blocks that carried the events.

-- What is indexed on each chain. The genesis hash tells a chain from a new one under the same id
-- (an anvil restarted from block 0): the indexer refuses to mix the two.
CREATE TABLE chains (
    chain_id          BIGINT PRIMARY KEY,
    genesis_hash      BYTEA  NOT NULL,
    agent_pact        BYTEA  NOT NULL,
    oracle_registry   BYTEA  NOT NULL,
    deployment_block  BIGINT NOT NULL
);

-- The last block whose events are all in the journal, written in the same transaction as them.
CREATE TABLE checkpoints (
    chain_id      BIGINT PRIMARY KEY REFERENCES chains (chain_id),
    block_number  BIGINT      NOT NULL,
    block_hash    BYTEA       NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Recent block hashes, to notice a reorganisation and find the fork point.
CREATE TABLE blocks (
    chain_id     BIGINT NOT NULL,
    number       BIGINT NOT NULL,
    hash         BYTEA  NOT NULL,
    parent_hash  BYTEA  NOT NULL,
    PRIMARY KEY (chain_id, number)
);

-- The journal: every decoded event, append-only. The projections below derive from it alone.
-- The key is the event's place on the chain, so an event seen twice (a backfill meeting the live
-- head) is stored once.
CREATE TABLE events (
    chain_id      BIGINT      NOT NULL,
    block_number  BIGINT      NOT NULL,
    log_index     INTEGER     NOT NULL,
    block_hash    BYTEA       NOT NULL,
    tx_hash       BYTEA       NOT NULL,
    block_time    TIMESTAMPTZ NOT NULL,
    contract      BYTEA       NOT NULL,
    kind          TEXT        NOT NULL,
    pact_id       NUMERIC(78, 0),
    account       BYTEA,
    data          JSONB       NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX events_by_pact ON events (chain_id, pact_id, block_number, log_index) WHERE pact_id IS NOT NULL;
CREATE INDEX events_by_account ON events (chain_id, account, block_number, log_index) WHERE account IS NOT NULL;

-- One row per pact: its terms and where it stands.
CREATE TABLE pacts (
    chain_id       BIGINT         NOT NULL,
    pact_id        NUMERIC(78, 0) NOT NULL,
    initiator      SMALLINT       NOT NULL,
    status         SMALLINT       NOT NULL,
    creator        BYTEA          NOT NULL,
    buyer          BYTEA,
    seller         BYTEA,
    arbitrator     BYTEA          NOT NULL,
    spec_hash      BYTEA          NOT NULL,
    spec_uri       TEXT           NOT NULL,
    deadline       TIMESTAMPTZ    NOT NULL,
    review_period  BIGINT         NOT NULL,
    threshold      SMALLINT       NOT NULL,
    payment        NUMERIC(78, 0) NOT NULL,
    buyer_stake    NUMERIC(78, 0) NOT NULL,
    seller_stake   NUMERIC(78, 0) NOT NULL,
    proof_hash     BYTEA,
    score_count    SMALLINT       NOT NULL DEFAULT 0,
    final_score    SMALLINT,
    created_at     TIMESTAMPTZ    NOT NULL,
    accepted_at    TIMESTAMPTZ,
    submitted_at   TIMESTAMPTZ,
    verified_at    TIMESTAMPTZ,
    disputed_at    TIMESTAMPTZ,
    closed_at      TIMESTAMPTZ,
    -- How a terminal pact ended: approved | auto_approved | seller_won | buyer_won | timeout |
    -- dispute_timeout | cancelled | expired (an unaccepted pact past its deadline).
    outcome        TEXT,
    created_block  BIGINT         NOT NULL,
    updated_block  BIGINT         NOT NULL,
    spec_search    TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', spec_uri)) STORED,
    PRIMARY KEY (chain_id, pact_id)
);
CREATE INDEX pacts_by_status ON pacts (chain_id, status, pact_id);
CREATE INDEX pacts_by_buyer ON pacts (chain_id, buyer, pact_id);
CREATE INDEX pacts_by_seller ON pacts (chain_id, seller, pact_id);
CREATE INDEX pacts_by_creator ON pacts (chain_id, creator, pact_id);
CREATE INDEX pacts_by_arbitrator ON pacts (chain_id, arbitrator, pact_id);
CREATE INDEX pacts_by_initiator ON pacts (chain_id, initiator, pact_id);
CREATE INDEX pacts_by_payment ON pacts (chain_id, payment, pact_id);
CREATE INDEX pacts_by_deadline ON pacts (chain_id, deadline, pact_id);
CREATE INDEX pacts_by_created ON pacts (chain_id, created_at, pact_id);
CREATE INDEX pacts_spec_search ON pacts USING GIN (spec_search);

-- The oracles a pact named, in order, with their weights.
CREATE TABLE pact_oracles (
    chain_id  BIGINT         NOT NULL,
    pact_id   NUMERIC(78, 0) NOT NULL,
    position  SMALLINT       NOT NULL,
    oracle    BYTEA          NOT NULL,
    weight    SMALLINT       NOT NULL,
    PRIMARY KEY (chain_id, pact_id, position),
    FOREIGN KEY (chain_id, pact_id) REFERENCES pacts (chain_id, pact_id) ON DELETE CASCADE
);
CREATE INDEX pact_oracles_by_oracle ON pact_oracles (chain_id, oracle, pact_id);

-- Each oracle's score on a pact.
CREATE TABLE verifications (
    chain_id      BIGINT         NOT NULL,
    pact_id       NUMERIC(78, 0) NOT NULL,
    oracle        BYTEA          NOT NULL,
    score         SMALLINT       NOT NULL,
    proof         BYTEA          NOT NULL,
    submitted_at  TIMESTAMPTZ    NOT NULL,
    block_number  BIGINT         NOT NULL,
    PRIMARY KEY (chain_id, pact_id, oracle),
    FOREIGN KEY (chain_id, pact_id) REFERENCES pacts (chain_id, pact_id) ON DELETE CASCADE
);
CREATE INDEX verifications_by_oracle ON verifications (chain_id, oracle, pact_id);

-- A pact's dispute (a pact is disputed at most once: DISPUTED only leads to a terminal status).
-- cause: raised | rejected | failed_verification; outcome: seller | buyer | timeout.
CREATE TABLE disputes (
    chain_id    BIGINT         NOT NULL,
    pact_id     NUMERIC(78, 0) NOT NULL,
    cause       TEXT           NOT NULL,
    opened_by   BYTEA,
    arbitrator  BYTEA          NOT NULL,
    opened_at   TIMESTAMPTZ    NOT NULL,
    outcome     TEXT,
    closed_at   TIMESTAMPTZ,
    PRIMARY KEY (chain_id, pact_id),
    FOREIGN KEY (chain_id, pact_id) REFERENCES pacts (chain_id, pact_id) ON DELETE CASCADE
);
CREATE INDEX disputes_by_arbitrator ON disputes (chain_id, arbitrator, pact_id);

-- Oracles as the registry knows them. status: active | deregistered (stake locked until unlock_at).
-- A withdrawn oracle's row is deleted, as the registry deletes its record.
CREATE TABLE oracles (
    chain_id       BIGINT         NOT NULL,
    address        BYTEA          NOT NULL,
    stake          NUMERIC(78, 0) NOT NULL,
    capabilities   TEXT[]         NOT NULL,
    status         TEXT           NOT NULL,
    registered_at  TIMESTAMPTZ    NOT NULL,
    unlock_at      TIMESTAMPTZ,
    updated_block  BIGINT         NOT NULL,
    PRIMARY KEY (chain_id, address)
);
CREATE INDEX oracles_by_stake ON oracles (chain_id, stake);
CREATE INDEX oracles_by_capability ON oracles USING GIN (capabilities);

-- Money credited by pacts and money withdrawn, event by event.
CREATE TABLE payouts (
    chain_id      BIGINT         NOT NULL,
    block_number  BIGINT         NOT NULL,
    log_index     INTEGER        NOT NULL,
    pact_id       NUMERIC(78, 0) NOT NULL,
    account       BYTEA          NOT NULL,
    amount        NUMERIC(78, 0) NOT NULL,
    paid_at       TIMESTAMPTZ    NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX payouts_by_account ON payouts (chain_id, account);
CREATE INDEX payouts_by_pact ON payouts (chain_id, pact_id);

CREATE TABLE withdrawals (
    chain_id      BIGINT         NOT NULL,
    block_number  BIGINT         NOT NULL,
    log_index     INTEGER        NOT NULL,
    account       BYTEA          NOT NULL,
    amount        NUMERIC(78, 0) NOT NULL,
    withdrawn_at  TIMESTAMPTZ    NOT NULL,
    PRIMARY KEY (chain_id, block_number, log_index)
);
CREATE INDEX withdrawals_by_account ON withdrawals (chain_id, account);

-- Per-address aggregates by role, refreshed from the projections for the addresses each batch
-- touches (and for every address after a reorg), so readers never recompute them.
-- role: buyer | seller | oracle. For buyers and sellers, mean_score is the mean final oracle score
-- of their pacts; for oracles, the mean score they gave and agreement = 100 - mean |score - final|.
CREATE TABLE reputation (
    chain_id       BIGINT         NOT NULL,
    address        BYTEA          NOT NULL,
    role           TEXT           NOT NULL,
    pacts          INTEGER        NOT NULL,
    completed      INTEGER        NOT NULL,
    refunded       INTEGER        NOT NULL,
    disputed       INTEGER        NOT NULL,
    timed_out      INTEGER        NOT NULL,
    volume         NUMERIC(78, 0) NOT NULL,
    mean_score     NUMERIC(6, 2),
    agreement      NUMERIC(6, 2),
    PRIMARY KEY (chain_id, address, role)
);
