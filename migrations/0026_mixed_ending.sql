-- Pacts in stages (docs/contracts.md §Stages, #55): a pact whose stages ended in different ways
-- ends MIXED, AgentPact.Ending's code 9 (agentpact_contracts::Ending::Mixed), which PactEnded
-- carries. The codes grow; no row changes.
ALTER TABLE pacts DROP CONSTRAINT pacts_ending_known,
    ADD CONSTRAINT pacts_ending_known CHECK (ending BETWEEN 0 AND 9);
