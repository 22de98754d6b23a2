-- The closed sets of agentpact_contracts (PactStatus, Initiator, vocab::{Outcome, DisputeCause,
-- DisputeOutcome, OracleStatus, ReputationRole}) and of the relay (negotiation::Status), guarded
-- where they are stored: a writer that drifts from the Rust enum fails at its INSERT, not a reader
-- weeks later. tests/tests/index_catalog.rs holds every list here to its enum's `ALL`.
ALTER TABLE pacts
    ADD CONSTRAINT pacts_status_known CHECK (status BETWEEN 0 AND 8),
    ADD CONSTRAINT pacts_initiator_known CHECK (initiator IN (0, 1)),
    ADD CONSTRAINT pacts_outcome_known CHECK (outcome IN (
        'approved', 'auto_approved', 'seller_won', 'buyer_won', 'split', 'settled', 'timeout', 'dispute_timeout',
        'cancelled', 'expired'));
ALTER TABLE disputes
    ADD CONSTRAINT disputes_cause_known CHECK (cause IN ('raised', 'rejected', 'failed_verification')),
    ADD CONSTRAINT disputes_outcome_known CHECK (outcome IN ('seller', 'buyer', 'split', 'settled', 'timeout'));
ALTER TABLE oracles
    ADD CONSTRAINT oracles_status_known CHECK (status IN ('active', 'deregistered'));
ALTER TABLE reputation
    ADD CONSTRAINT reputation_role_known CHECK (role IN ('buyer', 'seller', 'oracle'));
ALTER TABLE conversations
    ADD CONSTRAINT conversations_status_known CHECK (status IN ('NEGOTIATING', 'CONTRACTED', 'DECLINED', 'ABANDONED'));
