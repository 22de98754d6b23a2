-- Escrow v2 (docs/contracts.md §Escrow v2): a pact may name the only address that may accept it, and
-- acceptance closes at `accept_by`, at least an hour before the deadline.
--
-- A v1 deployment's events cannot be read by a v2 indexer (PactCreated changed): index the v2
-- deployment into a fresh database. For rows already here from v1, acceptance closed at the
-- deadline, which is what `accept_by` is set to; v1 pacts named no counterparty.
ALTER TABLE pacts
    ADD COLUMN counterparty BYTEA,
    ADD COLUMN accept_by    TIMESTAMPTZ;
UPDATE pacts SET accept_by = deadline;
ALTER TABLE pacts ALTER COLUMN accept_by SET NOT NULL;
CREATE INDEX pacts_by_counterparty ON pacts (chain_id, counterparty, pact_id) WHERE counterparty IS NOT NULL;

-- Reputation weighted by escrowed value (docs/api.md §Reputation): `weight` is the sum of the rated
-- pacts' weights, min(1, payment / reference), and `credit` becomes the sum of weight x credit;
-- likewise `feedback_weight` and `feedback_credit` for the counterparties' votes. Every aggregate
-- is recomputed by the indexer's next pass: the pending list names every pact.
ALTER TABLE reputation
    ADD COLUMN weight          NUMERIC(14, 4) NOT NULL DEFAULT 0,
    ADD COLUMN feedback_weight NUMERIC(14, 4) NOT NULL DEFAULT 0;
DELETE FROM reputation;
INSERT INTO reputation_pending (chain_id, pact_id) SELECT chain_id, pact_id FROM pacts ON CONFLICT DO NOTHING;
