-- The first block of the ERC-8004 registries' logs a chain's index reads (docs/indexer.md §ERC-8004
-- start block): the deployment block unless `ERC8004_START_BLOCK` set an earlier one, so agents
-- registered before the escrow was deployed are seen without reading the escrow's blocks from
-- there. Part of the chain's identity: an index read from another block holds other agents.
-- Every index built before this column read the registries from the deployment block.
ALTER TABLE chains ADD COLUMN erc8004_start_block BIGINT;
UPDATE chains SET erc8004_start_block = deployment_block;
ALTER TABLE chains ALTER COLUMN erc8004_start_block SET NOT NULL;
