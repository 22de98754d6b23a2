-- What the read API (issue #4) needs beyond the first index schema.

-- Where the chain's head was when the indexer last looked, and the time of the indexed block, so
-- readers see the lag (blocks and chain seconds) and whether the indexer is still alive, without
-- calling the RPC themselves.
ALTER TABLE checkpoints
    ADD COLUMN block_time   TIMESTAMPTZ,
    ADD COLUMN head_block   BIGINT,
    ADD COLUMN head_time    TIMESTAMPTZ,
    ADD COLUMN head_seen_at TIMESTAMPTZ;

-- Full-text search over spec URIs: the default parser keeps a URL's path as one token, so
-- "logo" would not find ".../specs/logo-design.json". Index the URI's words instead.
DROP INDEX pacts_spec_search;
ALTER TABLE pacts DROP COLUMN spec_search;
ALTER TABLE pacts ADD COLUMN spec_search TSVECTOR
    GENERATED ALWAYS AS (to_tsvector('simple', regexp_replace(spec_uri, '[^[:alnum:]]+', ' ', 'g'))) STORED;
CREATE INDEX pacts_spec_search ON pacts USING GIN (spec_search);

-- The 0-5 score's inputs (docs/api.md §Reputation): how many finished pacts (or verifications, for
-- an oracle) were rated, and the sum of their credits, each between 0 and 1.
ALTER TABLE reputation
    ADD COLUMN rated  INTEGER       NOT NULL DEFAULT 0,
    ADD COLUMN credit NUMERIC(14, 4) NOT NULL DEFAULT 0;

-- Keyset pages ordered by last change.
CREATE INDEX pacts_by_updated ON pacts (chain_id, updated_block, pact_id);
