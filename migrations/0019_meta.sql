-- GraphQL `_meta` (docs/api.md §Meta): the indexed block's parent hash, so a client that compares
-- it with the hash it saw before notices a reorganisation, and whether the indexer's last pass
-- failed (`failing_since` set by the failed pass, cleared by the next pass that completes; `failure`
-- the error's kind, never its message: an RPC URL may carry a key).
ALTER TABLE checkpoints
    ADD COLUMN block_parent_hash BYTEA,
    ADD COLUMN failing_since     TIMESTAMPTZ,
    ADD COLUMN failure           TEXT;
