-- "This buyer's (or seller's) pacts in these statuses", and how many: the status travels in the
-- index, so a count reads the index alone (once vacuum has marked the pages all-visible) instead
-- of every heap page that holds one of the party's pacts.
DROP INDEX pacts_by_buyer;
DROP INDEX pacts_by_seller;
CREATE INDEX pacts_by_buyer ON pacts (chain_id, buyer, pact_id) INCLUDE (status);
CREATE INDEX pacts_by_seller ON pacts (chain_id, seller, pact_id) INCLUDE (status);
