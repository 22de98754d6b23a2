-- Pacts in stages (docs/contracts.md §Stages, #55): the stages of a pact of several, one row each,
-- as AgentPact's `getStages` holds them, folded from PactStaged, PactAccepted, WorkStarted and the
-- Stage* events (indexer/src/project/stages.rs). A one-stage pact has no rows here: its pact row is
-- its stage, as escrow v3's always was, so a v3 index gains no rows and the backfill no writes.
-- The pact row of a pact of several carries its current stage's clocks and scores (its lowest live
-- stage, or its last once none lives), as `getPact` does, and its status by
-- agentpact_contracts::rules::pact_of_stages.
CREATE TABLE pact_stages (
    chain_id      BIGINT         NOT NULL,
    pact_id       NUMERIC(78, 0) NOT NULL,
    stage         SMALLINT       NOT NULL CONSTRAINT pact_stages_stage_known CHECK (stage BETWEEN 0 AND 7),
    -- Its part of the payment, in base units of the pact's currency; each side's stake in it is a
    -- tenth of it (rounded down).
    amount        NUMERIC(78, 0) NOT NULL,
    deadline      TIMESTAMPTZ    NOT NULL,
    status        SMALLINT       NOT NULL CONSTRAINT pact_stages_status_known CHECK (status BETWEEN 0 AND 8),
    proof_hash    BYTEA,
    submitted_at  TIMESTAMPTZ,
    score_count   SMALLINT       NOT NULL DEFAULT 0,
    final_score   SMALLINT,
    verified_at   TIMESTAMPTZ,
    disputed_at   TIMESTAMPTZ,
    -- Basis points to the seller of the arbitrator's ruling on it, when ruled.
    seller_share  INTEGER,
    -- How it ended (AgentPact.Ending's code, 0 LIVE until then), when, and what each side got.
    ending        SMALLINT       NOT NULL DEFAULT 0 CONSTRAINT pact_stages_ending_known CHECK (ending BETWEEN 0 AND 8),
    closed_at     TIMESTAMPTZ,
    to_seller     NUMERIC(78, 0),
    to_buyer      NUMERIC(78, 0),
    updated_block BIGINT         NOT NULL,
    PRIMARY KEY (chain_id, pact_id, stage),
    FOREIGN KEY (chain_id, pact_id) REFERENCES pacts (chain_id, pact_id) ON DELETE CASCADE
);

-- A stage's scores and dispute are its own: an oracle scores each stage, and each stage may be
-- disputed once. Rows of escrow v3 and of one-stage pacts are stage 0's.
ALTER TABLE verifications ADD COLUMN stage SMALLINT NOT NULL DEFAULT 0,
    DROP CONSTRAINT verifications_pkey,
    ADD PRIMARY KEY (chain_id, pact_id, stage, oracle);
ALTER TABLE disputes ADD COLUMN stage SMALLINT NOT NULL DEFAULT 0,
    DROP CONSTRAINT disputes_pkey,
    ADD PRIMARY KEY (chain_id, pact_id, stage);
