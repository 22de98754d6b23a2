-- Reputation that honest agents earn and a farm cannot buy (#53; docs/api.md §Reputation; the design
-- and its proof: docs/proposals/53-reputation.md).
--
-- Two layers. The indexer keeps, in the events' transaction, what each counterparty's pacts and
-- ratings say of an address (`reputation_pairs`): evidence counted in paid jobs above a value floor,
-- with diminishing returns per counterparty, never capital x time. A periodic ranking run
-- (indexer reputation::rank) reads the pairs, computes how far each address is trusted as a rater
-- (a personalised PageRank from the configured seed set that never counts walks through the rated
-- address) and writes one generation of trusted scores (`reputation_raters`, `reputation_scores`,
-- `reputation_trust`, described by `reputation_runs`) in one transaction. Every surface reads the
-- generation; nothing reads the pairs but the ranking.

-- What a finished pact weighs as evidence of a job: its payment against a floor of one dollar
-- (1 whole unit of an allowed token, a dollar stablecoin; 0.0004 ETH, the docs' 25 USDC = 0.01 ETH),
-- at most 1. How long the money was locked no longer counts: locked capital comes back, and speed is
-- what agents sell.
CREATE OR REPLACE VIEW pact_evidence AS
SELECT p.chain_id, p.pact_id, p.buyer, p.seller, p.status, p.outcome, p.final_score, p.seller_share,
       p.score_count, p.currency, p.payment,
       p.status IN (4, 8) AS paid,
       least(1, p.payment
                / CASE WHEN p.currency = '\x0000000000000000000000000000000000000000'::bytea
                       THEN 400000000000000::numeric ELSE 10::numeric ^ c.decimals END
       ) AS weight
FROM pacts p
JOIN currencies c ON c.chain_id = p.chain_id AND c.address = p.currency
WHERE p.closed_at IS NOT NULL AND p.buyer IS NOT NULL AND p.seller IS NOT NULL;

-- What `rater` (a counterparty: the other party of a pact, or for an oracle the seller) says of
-- `ratee` in `role`, kept by the indexer for the ratees a batch touched (all of them after a reorg).
--   jobs        n = Σ q·m over rated pacts: q = pact_evidence.weight, m = the paid share of a
--               settlement (an agreement weighs what was paid, never a failure), 1 otherwise
--   credit_sum  Σ q·m·credit (credit 0-1 by outcome: indexer/src/reputation/credit.rs)
--   rated_jobs  Σ q over the paid pacts that are not settlements which `rater` rated (AgentRegistry)
--   ratings, rating_mean  every rating `rater` gave `ratee` in `role` (1-5; shown: a rating of a
--               refund or a settlement is counted here but weighs nothing)
--   evidence    W = e + f: e = min(1, log2(1 + n) / 2), f = min(1, log2(1 + rated_jobs) / 2)
--               (reputation_evidence)
--   endorsement C = e·(credit_sum / n) + f·(vote - 1) / 4, vote = the mean rating of the pacts
--               rated_jobs counts (rating_mean when every rating weighs) (reputation_endorsement)
-- The diminishing returns of a pair's evidence: min(1, log2(1 + x) / 2) of its weighed jobs or
-- rated jobs (2 jobs are 0.79, 3 or more are 1).
CREATE FUNCTION reputation_returns(x numeric) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN least(1, ln(1 + x::float8) / ln(2) / 2);

-- A pair's evidence W = e + f, its one definition (the indexer's pairs, the lab's benchmark).
CREATE FUNCTION reputation_evidence(jobs numeric, rated_jobs numeric) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    RETURN reputation_returns(jobs) + reputation_returns(rated_jobs);

-- A pair's endorsement C = e·(credit_sum / n) + f·(vote - 1) / 4, its one definition; `vote` is
-- the mean rating of the pacts rated_jobs counts (NULL: no rating weighs, and f is 0).
CREATE FUNCTION reputation_endorsement(jobs numeric, credit_sum numeric, rated_jobs numeric, vote numeric)
    RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN jobs > 0 THEN reputation_returns(jobs) * (credit_sum / jobs)::float8 ELSE 0 END
           + CASE WHEN vote IS NULL THEN 0 ELSE reputation_returns(rated_jobs) * ((vote - 1) / 4)::float8 END;

CREATE TABLE reputation_pairs (
    chain_id    BIGINT         NOT NULL,
    ratee       BYTEA          NOT NULL,
    role        TEXT           NOT NULL CONSTRAINT reputation_pair_role_known
                               CHECK (role IN ('buyer', 'seller', 'oracle')),
    rater       BYTEA          NOT NULL,
    pacts       INTEGER        NOT NULL,
    paid_pacts  INTEGER        NOT NULL,
    jobs        NUMERIC(30, 10) NOT NULL,
    credit_sum  NUMERIC(30, 10) NOT NULL,
    rated_jobs  NUMERIC(30, 10) NOT NULL,
    ratings     INTEGER        NOT NULL,
    rating_mean NUMERIC(8, 4),
    evidence    DOUBLE PRECISION NOT NULL,
    endorsement DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (chain_id, ratee, role, rater)
);

-- The ranking of each chain: whether the pairs changed since the last run (`dirty`, set by every
-- refresh of pairs in the events' transaction, cleared by the run that read them), and what the
-- current generation was computed from and when (GraphQL `_meta.reputation`).
CREATE TABLE reputation_runs (
    chain_id     BIGINT           PRIMARY KEY,
    dirty        BOOLEAN          NOT NULL DEFAULT true,
    block_number BIGINT,
    block_time   TIMESTAMPTZ,
    computed_at  TIMESTAMPTZ,
    took_ms      INTEGER,
    seeds        BYTEA[]          NOT NULL DEFAULT '{}',
    alpha        DOUBLE PRECISION,
    tau          DOUBLE PRECISION,
    nodes        INTEGER,
    edges        INTEGER
);

-- Every address of the trust graph: its stationary trust from the seeds (pi) and as a rater,
-- min(1, pi / tau).
CREATE TABLE reputation_trust (
    chain_id BIGINT           NOT NULL,
    address  BYTEA            NOT NULL,
    pi       DOUBLE PRECISION NOT NULL,
    trust    DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (chain_id, address)
);

-- Each ordered pair of the generation, roles pooled: what `rater`'s pacts and ratings weigh as
-- evidence of `ratee` (W, C summed over roles) and how far `rater` is trusted as a rater of
-- `ratee` (t_v(u), walks through the ratee not counted). The basis of a score, and what a viewer's
-- own endorsements (C where the viewer is the rater) are read from.
CREATE TABLE reputation_raters (
    chain_id    BIGINT           NOT NULL,
    ratee       BYTEA            NOT NULL,
    rater       BYTEA            NOT NULL,
    pacts       INTEGER          NOT NULL,
    paid_pacts  INTEGER          NOT NULL,
    evidence    DOUBLE PRECISION NOT NULL,
    endorsement DOUBLE PRECISION NOT NULL,
    trust       DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (chain_id, ratee, rater)
);
CREATE INDEX reputation_raters_by_rater ON reputation_raters (chain_id, rater);

-- The generation's scores: per role and over all roles ('all'), the trusted sums
-- (Σ t·W, Σ t·C) and reputation_score over them; raters = counterparties with evidence,
-- trusted_raters = those with trust > 0.
CREATE TABLE reputation_scores (
    chain_id       BIGINT           NOT NULL,
    address        BYTEA            NOT NULL,
    role           TEXT             NOT NULL CONSTRAINT reputation_score_role_known
                                    CHECK (role IN ('buyer', 'seller', 'oracle', 'all')),
    weight         DOUBLE PRECISION NOT NULL,
    credit         DOUBLE PRECISION NOT NULL,
    score          NUMERIC(4, 2)    NOT NULL,
    raters         INTEGER          NOT NULL,
    trusted_raters INTEGER          NOT NULL,
    PRIMARY KEY (chain_id, address, role)
);
CREATE INDEX reputation_scores_ranked ON reputation_scores (chain_id, role, score DESC, address);

-- Each grounded client's vote on an agent, its one definition (erc8004_reputation's grounded
-- figures, erc8004_trusted): over the client's unrevoked grounded feedback, how many (`given`),
-- the mean vote and the most its paid pacts weigh (erc8004_grounding).
CREATE VIEW erc8004_client_votes AS
SELECT chain_id, agent_id, client, count(*) AS given, avg(vote) AS vote, max(weight) AS weight
FROM erc8004_grounding
WHERE NOT revoked AND grounding_pacts IS NOT NULL
GROUP BY chain_id, agent_id, client;

-- The generation's grounded ERC-8004 score of each agent: each grounded client's vote (its mean
-- value / 100, weighing what its paid pacts weigh, at most 1: erc8004_grounding) times the client's
-- trust as a rater of the agent's wallet (reputation_raters); a ring of wallets without trusted
-- pacts weighs nothing. erc8004_reputation keeps the raw and grounded figures beside it.
CREATE TABLE erc8004_trusted (
    chain_id BIGINT           NOT NULL,
    agent_id NUMERIC(78, 0)   NOT NULL,
    weight   DOUBLE PRECISION NOT NULL,
    credit   DOUBLE PRECISION NOT NULL,
    score    NUMERIC(4, 2)    NOT NULL,
    clients  INTEGER          NOT NULL,
    PRIMARY KEY (chain_id, agent_id)
);

-- The per-role evidence columns of `reputation` move to the pairs and the generation; it keeps the
-- counts by role.
ALTER TABLE reputation
    DROP COLUMN weight,
    DROP COLUMN credit,
    DROP COLUMN feedback_weight,
    DROP COLUMN feedback_credit,
    DROP COLUMN counterparties;

-- Every pact's parties get their pairs.
INSERT INTO reputation_pending (chain_id, pact_id) SELECT chain_id, pact_id FROM pacts ON CONFLICT DO NOTHING;
