-- Reputation that cannot be bought, and the chain's ERC-8004 registries beside ours
-- (docs/api.md §Reputation, docs/erc8004.md).
--
-- One definition of what a finished pact proves, `pact_evidence`, read by both the AgentPact
-- reputation (`reputation`) and the grounding of ERC-8004 feedback (`erc8004_reputation`), and one
-- 0-5 score over evidence, `reputation_score`, read by every surface.

-- What a finished pact weighs as evidence: its payment against the currency's reference (0.01 ETH,
-- or 25 whole units of an allowed token: a dollar stablecoin), times how long the money was really
-- locked (from the moment both sides were in to the close) against one day; at most 1. Capital that
-- is recycled through many quick pacts weighs what it is locked for, not how often it turns.
-- `paid`: the seller was paid something (completed, or a split / partial settlement); only a paid
-- pact grounds a rating of the seller or a client's ERC-8004 feedback.
CREATE VIEW pact_evidence AS
SELECT p.chain_id, p.pact_id, p.buyer, p.seller, p.status, p.outcome, p.final_score, p.seller_share,
       p.score_count, p.currency, p.payment,
       p.status IN (4, 8) AS paid,
       least(1, p.payment
                / CASE WHEN p.currency = '\x0000000000000000000000000000000000000000'::bytea
                       THEN 10000000000000000::numeric ELSE 25 * 10::numeric ^ c.decimals END
                * (extract(epoch FROM p.closed_at - coalesce(p.accepted_at, p.created_at)) / 86400)::numeric
       ) AS weight
FROM pacts p
JOIN currencies c ON c.chain_id = p.chain_id AND c.address = p.currency
WHERE p.closed_at IS NOT NULL AND p.buyer IS NOT NULL AND p.seller IS NOT NULL;

-- The 0-5 score of evidence summing to `credit` over `weight` (each piece between 0 and 1): a
-- Bayesian mean with five imaginary pieces at 0.6 (3.0 of 5) before any history.
CREATE FUNCTION reputation_score(credit NUMERIC, weight NUMERIC) RETURNS NUMERIC
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN round(least(5, greatest(0, 5 * (credit + 5 * 0.6) / (weight + 5))), 2);

-- Weights are now capped per counterparty (a sum of at most 1 per counterparty): more precision.
ALTER TABLE reputation
    ALTER COLUMN weight TYPE NUMERIC(20, 10),
    ALTER COLUMN feedback_weight TYPE NUMERIC(20, 10),
    ALTER COLUMN credit TYPE NUMERIC(20, 10),
    ALTER COLUMN feedback_credit TYPE NUMERIC(20, 10),
    ADD COLUMN counterparties INTEGER NOT NULL DEFAULT 0;
DELETE FROM reputation;
INSERT INTO reputation_pending (chain_id, pact_id) SELECT chain_id, pact_id FROM pacts ON CONFLICT DO NOTHING;

-- ERC-8004 Identity Registry. Every table here is written once per event and never updated, so a
-- rollback deletes what was written above the fork and nothing needs a replay (project::TABLES).

-- An agent token as registered.
CREATE TABLE erc8004_agents (
    chain_id      BIGINT         NOT NULL,
    agent_id      NUMERIC(78, 0) NOT NULL,
    registered_at TIMESTAMPTZ    NOT NULL,
    block_number  BIGINT         NOT NULL,
    log_index     INTEGER        NOT NULL,
    PRIMARY KEY (chain_id, agent_id)
);

-- Each change of an agent's owner (Transfer), registration file (Registered, URIUpdated) or wallet
-- (MetadataSet "agentWallet"; `address` NULL when unset), in chain order. The latest row of a field
-- is the agent's current value (`erc8004_agent_state`). A registration file given as a data: URI is
-- read once here: its name, description, MCP endpoint and skills; other URIs are kept as they are.
CREATE TABLE erc8004_agent_changes (
    chain_id     BIGINT         NOT NULL,
    agent_id     NUMERIC(78, 0) NOT NULL,
    field        TEXT           NOT NULL CONSTRAINT erc8004_change_field_known
                                CHECK (field IN ('owner', 'uri', 'wallet')),
    address      BYTEA,
    uri          TEXT,
    uri_bytes    BYTEA,
    name         TEXT,
    description  TEXT,
    mcp_endpoint TEXT,
    skills       TEXT[],
    block_number BIGINT         NOT NULL,
    log_index    INTEGER        NOT NULL,
    PRIMARY KEY (chain_id, agent_id, field, block_number, log_index)
);
CREATE INDEX erc8004_changes_by_address ON erc8004_agent_changes (chain_id, field, address);
CREATE INDEX erc8004_changes_by_block ON erc8004_agent_changes (chain_id, block_number);

-- Every agent with its current owner, wallet and registration file.
CREATE VIEW erc8004_agent_state AS
SELECT a.chain_id, a.agent_id, a.registered_at, a.block_number,
       o.address AS owner, w.address AS wallet, u.uri, u.uri_bytes, u.name, u.description, u.mcp_endpoint,
       coalesce(u.skills, '{}') AS skills
FROM erc8004_agents a
LEFT JOIN LATERAL (SELECT address FROM erc8004_agent_changes c
                   WHERE c.chain_id = a.chain_id AND c.agent_id = a.agent_id AND c.field = 'owner'
                   ORDER BY block_number DESC, log_index DESC LIMIT 1) o ON true
LEFT JOIN LATERAL (SELECT address FROM erc8004_agent_changes c
                   WHERE c.chain_id = a.chain_id AND c.agent_id = a.agent_id AND c.field = 'wallet'
                   ORDER BY block_number DESC, log_index DESC LIMIT 1) w ON true
LEFT JOIN LATERAL (SELECT uri, uri_bytes, name, description, mcp_endpoint, skills FROM erc8004_agent_changes c
                   WHERE c.chain_id = a.chain_id AND c.agent_id = a.agent_id AND c.field = 'uri'
                   ORDER BY block_number DESC, log_index DESC LIMIT 1) u ON true;

-- ERC-8004 Reputation Registry: each NewFeedback, and each revocation.
CREATE TABLE erc8004_feedback (
    chain_id          BIGINT         NOT NULL,
    agent_id          NUMERIC(78, 0) NOT NULL,
    client            BYTEA          NOT NULL,
    feedback_index    BIGINT         NOT NULL,
    value             NUMERIC(39, 0) NOT NULL,
    value_decimals    SMALLINT       NOT NULL,
    tag1              TEXT           NOT NULL,
    tag2              TEXT           NOT NULL,
    endpoint          TEXT           NOT NULL,
    feedback_uri      TEXT           NOT NULL,
    feedback_hash     BYTEA          NOT NULL,
    text_bytes        BYTEA[],
    given_at          TIMESTAMPTZ    NOT NULL,
    block_number      BIGINT         NOT NULL,
    log_index         INTEGER        NOT NULL,
    tx_hash           BYTEA          NOT NULL,
    PRIMARY KEY (chain_id, agent_id, client, feedback_index)
);
CREATE INDEX erc8004_feedback_by_block ON erc8004_feedback (chain_id, block_number);
CREATE INDEX erc8004_feedback_by_client ON erc8004_feedback (chain_id, client);

CREATE TABLE erc8004_revocations (
    chain_id       BIGINT         NOT NULL,
    agent_id       NUMERIC(78, 0) NOT NULL,
    client         BYTEA          NOT NULL,
    feedback_index BIGINT         NOT NULL,
    block_number   BIGINT         NOT NULL,
    PRIMARY KEY (chain_id, agent_id, client, feedback_index)
);

-- Each feedback with its grounding: the pact tag it names (`pact:{id}` in tag1 or tag2), and the
-- paid pacts behind it: pacts that settled with the client as buyer and the agent's current wallet
-- as seller (the tagged one only, when a tag names one). Grounded when there is at least one.
-- `weight`: what those pacts weigh together (pact_evidence), at most 1: a client is one vote.
CREATE VIEW erc8004_grounding AS
SELECT f.chain_id, f.agent_id, f.client, f.feedback_index,
       r.feedback_index IS NOT NULL AS revoked,
       t.tagged,
       g.pacts AS grounding_pacts,
       coalesce(g.weight, 0) AS weight,
       least(100, greatest(0, f.value / 10::numeric ^ f.value_decimals)) / 100 AS vote
FROM erc8004_feedback f
LEFT JOIN erc8004_agent_state s ON s.chain_id = f.chain_id AND s.agent_id = f.agent_id
LEFT JOIN erc8004_revocations r
       ON r.chain_id = f.chain_id AND r.agent_id = f.agent_id AND r.client = f.client
      AND r.feedback_index = f.feedback_index
CROSS JOIN LATERAL (
    SELECT (SELECT substring(tag FROM '^pact:([0-9]{1,78})$')::numeric
            FROM unnest(ARRAY[f.tag1, f.tag2]) AS tag
            WHERE tag ~ '^pact:[0-9]{1,78}$' LIMIT 1) AS tagged
) t
LEFT JOIN LATERAL (
    SELECT array_agg(e.pact_id ORDER BY e.pact_id) AS pacts, least(1, sum(e.weight)) AS weight
    FROM pact_evidence e
    WHERE e.chain_id = f.chain_id AND e.paid AND e.buyer = f.client AND e.seller = s.wallet
      AND (t.tagged IS NULL OR e.pact_id = t.tagged)
    HAVING count(*) > 0
) g ON true;

-- Per agent: its raw ERC-8004 feedback (unrevoked: count, distinct clients, mean value as given)
-- and its grounded feedback (one vote per client: the client's mean vote, weighing what its paid
-- pacts weigh), recomputed by the indexer with `reputation` (reputation::refresh).
CREATE TABLE erc8004_reputation (
    chain_id          BIGINT         NOT NULL,
    agent_id          NUMERIC(78, 0) NOT NULL,
    feedback          INTEGER        NOT NULL,
    clients           INTEGER        NOT NULL,
    mean_value        NUMERIC(60, 18),
    grounded          INTEGER        NOT NULL,
    grounded_clients  INTEGER        NOT NULL,
    grounded_weight   NUMERIC(20, 10) NOT NULL,
    grounded_credit   NUMERIC(20, 10) NOT NULL,
    grounded_score    NUMERIC(3, 2)  NOT NULL,
    PRIMARY KEY (chain_id, agent_id)
);
CREATE INDEX erc8004_reputation_by_score ON erc8004_reputation (chain_id, grounded_score DESC, agent_id);

-- Agents whose ERC-8004 aggregates must be recomputed at the end of the pass (like
-- reputation_pending for pacts).
CREATE TABLE erc8004_pending (
    chain_id BIGINT         NOT NULL,
    agent_id NUMERIC(78, 0) NOT NULL,
    PRIMARY KEY (chain_id, agent_id)
);

-- The registries a chain's index follows are part of its identity: another pair means another index.
ALTER TABLE chains
    ADD COLUMN erc8004_identity   BYTEA,
    ADD COLUMN erc8004_reputation BYTEA;
