-- Pacts in ETH or an allowed ERC-20 (docs/contracts.md §Currencies). A currency is its address,
-- 20 bytes; native ETH is the zero address, as in the contracts. Amounts stay base units of their
-- row's currency; `currencies` says how to show them (decimals, symbol), from the escrow's own
-- CurrencyAllowed events, so no reader ever asks a token.
--
-- A deployment made before currencies cannot be read by this indexer (PactCreated, Payout and
-- Withdrawn changed): index the new deployment into a fresh database. Rows already here were ETH.
CREATE TABLE currencies (
    chain_id      BIGINT   NOT NULL,
    address       BYTEA    NOT NULL,
    decimals      SMALLINT NOT NULL,
    symbol        TEXT     NOT NULL,
    block_number  BIGINT   NOT NULL,
    PRIMARY KEY (chain_id, address)
);

ALTER TABLE pacts ADD COLUMN currency BYTEA NOT NULL DEFAULT '\x0000000000000000000000000000000000000000';
ALTER TABLE pacts ALTER COLUMN currency DROP DEFAULT;
CREATE INDEX pacts_by_currency ON pacts (chain_id, currency, pact_id);

ALTER TABLE payouts ADD COLUMN currency BYTEA NOT NULL DEFAULT '\x0000000000000000000000000000000000000000';
ALTER TABLE payouts ALTER COLUMN currency DROP DEFAULT;
ALTER TABLE withdrawals ADD COLUMN currency BYTEA NOT NULL DEFAULT '\x0000000000000000000000000000000000000000';
ALTER TABLE withdrawals ALTER COLUMN currency DROP DEFAULT;

ALTER TABLE agent_capabilities ADD COLUMN currency BYTEA NOT NULL DEFAULT '\x0000000000000000000000000000000000000000';
ALTER TABLE agent_capabilities ALTER COLUMN currency DROP DEFAULT;
DROP INDEX agent_capabilities_by_name;
CREATE INDEX agent_capabilities_by_name ON agent_capabilities (chain_id, lower(name), currency, price);
