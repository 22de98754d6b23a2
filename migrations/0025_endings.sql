-- Endings (docs/contracts.md §Endings, #55): every way a pact ends has its own on-chain outcome,
-- `PactEnded(pactId, ending, status)`, the last event of its last transaction, so nobody
-- downstream has to guess whether a REFUNDED pact was a cancel, a failure or a lost dispute.
-- `ending` holds AgentPact.Ending's code (0 LIVE until the pact ends; agentpact_contracts::Ending),
-- set from PactEnded with the status the contract gives (which follows the amounts: a settlement
-- whose seller part rounds to nothing ends REFUNDED, CANCELLED_BY_AGREEMENT).
ALTER TABLE pacts ADD COLUMN ending SMALLINT NOT NULL DEFAULT 0
    CONSTRAINT pacts_ending_known CHECK (ending BETWEEN 0 AND 8);

-- Pacts that ended before the escrow emitted PactEnded (escrow v3) get the ending their outcome
-- names, as the indexer reads v3's events (agentpact_contracts::Outcome::ending): a settlement at
-- 0 is a cancel by agreement, any other a split; their status stays the one that escrow gave.
-- tests/tests/index_endings.rs holds this mapping to the Rust one, outcome by outcome.
UPDATE pacts SET ending = CASE outcome
        WHEN 'approved' THEN 1
        WHEN 'auto_approved' THEN 1
        WHEN 'timeout' THEN 2
        WHEN 'settled' THEN CASE WHEN seller_share = 0 THEN 3 ELSE 4 END
        WHEN 'seller_won' THEN 5
        WHEN 'buyer_won' THEN 5
        WHEN 'split' THEN 5
        WHEN 'dispute_timeout' THEN 6
        WHEN 'cancelled' THEN 7
        WHEN 'expired' THEN 8
    END
WHERE outcome IS NOT NULL;
