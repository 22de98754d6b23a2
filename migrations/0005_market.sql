-- The agent market (AgentRegistry): profiles, their capabilities and prices, and the feedback the
-- parties of finished pacts give each other. Like every projection, derived from the journal alone.

-- The third contract of a chain. NULL for indexes built before the market existed: such an index
-- was built from other contracts, and the indexer refuses to mix the two.
ALTER TABLE chains ADD COLUMN agent_registry BYTEA;

-- One row per registered agent (an agent is its wallet).
CREATE TABLE agents (
    chain_id       BIGINT      NOT NULL,
    address        BYTEA       NOT NULL,
    name           TEXT        NOT NULL,
    description    TEXT        NOT NULL,
    endpoint       TEXT        NOT NULL,
    metadata_uri   TEXT        NOT NULL,
    active         BOOLEAN     NOT NULL,
    registered_at  TIMESTAMPTZ NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    updated_block  BIGINT      NOT NULL,
    PRIMARY KEY (chain_id, address)
);
CREATE INDEX agents_by_registration ON agents (chain_id, registered_at, address);

-- What each agent offers, in the profile's order; a profile update replaces them all.
CREATE TABLE agent_capabilities (
    chain_id     BIGINT         NOT NULL,
    address      BYTEA          NOT NULL,
    position     SMALLINT       NOT NULL,
    name         TEXT           NOT NULL,
    description  TEXT           NOT NULL,
    price        NUMERIC(78, 0) NOT NULL,
    PRIMARY KEY (chain_id, address, position),
    FOREIGN KEY (chain_id, address) REFERENCES agents (chain_id, address) ON DELETE CASCADE
);
-- Search matches capability names without regard to case.
CREATE INDEX agent_capabilities_by_name ON agent_capabilities (chain_id, lower(name), price);

-- One row per rating: a party of a finished pact rating the other, at most once per pact and rater.
CREATE TABLE feedback (
    chain_id      BIGINT         NOT NULL,
    pact_id       NUMERIC(78, 0) NOT NULL,
    rater         BYTEA          NOT NULL,
    ratee         BYTEA          NOT NULL,
    rating        SMALLINT       NOT NULL,
    tags          TEXT[]         NOT NULL,
    comment       TEXT           NOT NULL,
    given_at      TIMESTAMPTZ    NOT NULL,
    block_number  BIGINT         NOT NULL,
    log_index     INTEGER        NOT NULL,
    PRIMARY KEY (chain_id, pact_id, rater),
    FOREIGN KEY (chain_id, pact_id) REFERENCES pacts (chain_id, pact_id) ON DELETE CASCADE
);
CREATE INDEX feedback_by_ratee ON feedback (chain_id, ratee, block_number DESC, log_index DESC);

-- Feedback in the 0-5 score (docs/api.md §Reputation): per role, the received ratings, the distinct
-- counterparties that gave them, their mean, and the feedback's credit (one vote per counterparty).
ALTER TABLE reputation
    ADD COLUMN feedback_count   INTEGER        NOT NULL DEFAULT 0,
    ADD COLUMN feedback_raters  INTEGER        NOT NULL DEFAULT 0,
    ADD COLUMN feedback_mean    NUMERIC(4, 2),
    ADD COLUMN feedback_credit  NUMERIC(14, 4) NOT NULL DEFAULT 0;
