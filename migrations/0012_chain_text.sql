-- Text the chain emits, read back exactly (docs/indexer.md §Text the chain emits). A Solidity
-- `string` need not be UTF-8 and may hold NUL, which Postgres `text` refuses. Each text column of a
-- projection holds the display form (invalid UTF-8, NUL, control, bidirectional and invisible
-- characters replaced visibly); the `…_bytes` column beside it holds the exact bytes the chain
-- emitted when they differ from that form, and is NULL when the display form is exact.
ALTER TABLE pacts ADD COLUMN spec_uri_bytes BYTEA;
ALTER TABLE currencies ADD COLUMN symbol_bytes BYTEA;
-- Every capability's exact bytes, in order, when any of them differs from its display form.
ALTER TABLE oracles ADD COLUMN capabilities_bytes BYTEA[];
ALTER TABLE agents
    ADD COLUMN name_bytes BYTEA,
    ADD COLUMN description_bytes BYTEA,
    ADD COLUMN endpoint_bytes BYTEA,
    ADD COLUMN metadata_uri_bytes BYTEA;
ALTER TABLE agent_capabilities
    ADD COLUMN name_bytes BYTEA,
    ADD COLUMN description_bytes BYTEA;
-- Every tag's exact bytes, in order, when any of them differs from its display form.
ALTER TABLE feedback
    ADD COLUMN tags_bytes BYTEA[],
    ADD COLUMN comment_bytes BYTEA;
