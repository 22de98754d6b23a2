-- Pacts whose parties' reputation aggregates still have to be recomputed. Every batch adds the pacts
-- it touched, in its own transaction; the end of each indexer pass recomputes them once and empties
-- the list. A backfill of many batches thus recomputes each address once, not once per batch, and a
-- crash between the two leaves the list behind for the next pass instead of stale aggregates.
CREATE TABLE reputation_pending (
    chain_id BIGINT NOT NULL,
    pact_id NUMERIC(78, 0) NOT NULL,
    PRIMARY KEY (chain_id, pact_id)
);
