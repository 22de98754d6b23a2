-- Escrow v3 (docs/contracts.md §Escrow v3): a pact can end with its money divided, by a ruling
-- (`resolveDisputeShare`) or a settlement both parties accepted, in the new terminal status SPLIT (8)
-- when neither side got everything.
--
-- A v2 deployment's events cannot be read by a v3 indexer (DisputeResolved changed): index the v3
-- deployment into a fresh database.

-- Basis points to the seller when a ruling (of the pot) or a settlement (of the payment) ended the
-- pact; null for every other ending. outcome gains `split` (a ruling between 0 and 10000) and
-- `settled`; disputes.outcome gains `split` and `settled`.
ALTER TABLE pacts ADD COLUMN seller_share INTEGER CHECK (seller_share BETWEEN 0 AND 10000);

-- Every offer to settle a pact, one row per round. The standing offer is the highest round with
-- neither withdrawn_at nor accepted_at, while the pact is still in `offered_in` and before
-- `expires_at`; a lower round was replaced.
CREATE TABLE settlements (
    chain_id      BIGINT         NOT NULL,
    pact_id       NUMERIC(78, 0) NOT NULL,
    round         BIGINT         NOT NULL,
    proposed_by   BYTEA          NOT NULL,
    offered_in    SMALLINT       NOT NULL,
    seller_share  INTEGER        NOT NULL CHECK (seller_share BETWEEN 0 AND 10000),
    expires_at    TIMESTAMPTZ    NOT NULL,
    proposed_at   TIMESTAMPTZ    NOT NULL,
    block_number  BIGINT         NOT NULL,
    withdrawn_at  TIMESTAMPTZ,
    accepted_by   BYTEA,
    accepted_at   TIMESTAMPTZ,
    PRIMARY KEY (chain_id, pact_id, round),
    FOREIGN KEY (chain_id, pact_id) REFERENCES pacts (chain_id, pact_id) ON DELETE CASCADE
);
