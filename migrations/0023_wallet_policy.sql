-- A wallet a human can hand to an agent (docs/mcp.md §Policy): the policy the human set for a
-- wallet, its kill switch, what its calls committed, and the ledger of every attempt. Every
-- `agentpact mcp` process signing for the wallet reads and writes these on the primary, each
-- decision under one advisory lock per (chain, wallet). Only `agentpact wallet` (the human's
-- command) writes wallet_controls; no MCP tool does.

-- The human's controls of one wallet: the policy as set (absent: only the per-call caps hold)
-- and the kill switch.
CREATE TABLE wallet_controls (
    chain_id      BIGINT NOT NULL,
    wallet        BYTEA NOT NULL CHECK (octet_length(wallet) = 20),
    -- The policy file, parsed and stored as JSON; its keccak256 is named by every ledger entry.
    policy        JSONB,
    policy_digest BYTEA CHECK (octet_length(policy_digest) = 32),
    policy_set_at TIMESTAMPTZ,
    -- Set: nothing is signed for the wallet until the human thaws it.
    frozen_at     TIMESTAMPTZ,
    frozen_reason TEXT,
    PRIMARY KEY (chain_id, wallet),
    CHECK ((policy IS NULL) = (policy_digest IS NULL)),
    CHECK ((policy IS NULL) = (policy_set_at IS NULL)),
    CHECK (frozen_reason IS NULL OR frozen_at IS NOT NULL)
);

-- One spend a call was admitted to make: counted against the budgets from its admission
-- (reserved), kept when its transaction is sent, released when the call sent nothing or the
-- transaction failed.
CREATE TABLE wallet_spends (
    id            BIGSERIAL PRIMARY KEY,
    chain_id      BIGINT NOT NULL,
    wallet        BYTEA NOT NULL CHECK (octet_length(wallet) = 20),
    at            TIMESTAMPTZ NOT NULL,
    tool          TEXT NOT NULL,
    currency      BYTEA NOT NULL CHECK (octet_length(currency) = 20),
    amount        NUMERIC(78, 0) NOT NULL CHECK (amount >= 0),
    -- Who is paid; NULL: nobody named yet (an open pact anyone may accept).
    counterparty  BYTEA CHECK (octet_length(counterparty) = 20),
    state         TEXT NOT NULL CHECK (state IN ('reserved', 'sent', 'released')),
    tx            BYTEA CHECK (octet_length(tx) = 32)
);
CREATE INDEX wallet_spends_window ON wallet_spends (chain_id, wallet, at);

-- The ledger: every attempt (allowed, held, refused, sent, mined, failed) with the decision and
-- its reason. `body` is the entry exactly as hashed (a compact JSON text); `hash` its keccak256;
-- `signature` the wallet's EIP-191 signature of "AgentPact wallet ledger entry 0x<hash>". Each
-- body names the previous entry's hash. The columns beside the body are copies for queries.
CREATE TABLE wallet_ledger (
    chain_id      BIGINT NOT NULL,
    wallet        BYTEA NOT NULL CHECK (octet_length(wallet) = 20),
    seq           BIGINT NOT NULL CHECK (seq >= 1),
    at            TIMESTAMPTZ NOT NULL,
    event         TEXT NOT NULL CHECK (event IN ('allowed', 'held', 'refused', 'sent', 'mined', 'failed')),
    tool          TEXT NOT NULL,
    body          TEXT NOT NULL,
    hash          BYTEA NOT NULL CHECK (octet_length(hash) = 32),
    signature     BYTEA NOT NULL CHECK (octet_length(signature) = 65),
    PRIMARY KEY (chain_id, wallet, seq)
);
CREATE INDEX wallet_ledger_calls ON wallet_ledger (chain_id, wallet, event, at);

-- Append-only: an entry once written is never changed or removed (a hash chain shows it anyway;
-- this refuses it at the source).
CREATE FUNCTION wallet_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'wallet_ledger is append-only: % refused', TG_OP;
END;
$$;
CREATE TRIGGER wallet_ledger_append_only BEFORE UPDATE OR DELETE ON wallet_ledger
    FOR EACH ROW EXECUTE FUNCTION wallet_ledger_append_only();
CREATE TRIGGER wallet_ledger_no_truncate BEFORE TRUNCATE ON wallet_ledger
    FOR EACH STATEMENT EXECUTE FUNCTION wallet_ledger_append_only();
