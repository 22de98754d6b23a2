-- Negotiation (seed 004): conversations between two agents and every signed message of them, the
-- append-only audit log. Written by the relay in the api server, not by the indexer; a message is
-- stored with everything needed to verify its signature again (the payload's canonical JSON hash
-- does not depend on JSONB's key order).

CREATE TABLE conversations (
    chain_id        BIGINT         NOT NULL,
    id              TEXT           NOT NULL,
    seeker          BYTEA          NOT NULL,
    worker          BYTEA          NOT NULL,
    status          TEXT           NOT NULL,
    -- The terms on the table (NULL before a proposal), and who put them there.
    task            TEXT,
    requirements    TEXT[],
    price           NUMERIC(78, 0),
    deadline        TIMESTAMPTZ,
    terms_by        BYTEA,
    expires_at      TIMESTAMPTZ    NOT NULL,
    -- Once signed: the pact carrying the terms, and the terms document its spec hash covers.
    pact_id         NUMERIC(78, 0),
    terms_document  TEXT,
    created_at      TIMESTAMPTZ    NOT NULL,
    updated_at      TIMESTAMPTZ    NOT NULL,
    PRIMARY KEY (chain_id, id)
);
CREATE INDEX conversations_by_seeker ON conversations (chain_id, seeker, updated_at DESC);
CREATE INDEX conversations_by_worker ON conversations (chain_id, worker, updated_at DESC);
CREATE UNIQUE INDEX conversations_by_pact ON conversations (chain_id, pact_id) WHERE pact_id IS NOT NULL;

CREATE TABLE negotiation_messages (
    chain_id         BIGINT      NOT NULL,
    conversation_id  TEXT        NOT NULL,
    seq              INTEGER     NOT NULL,
    kind             TEXT        NOT NULL,
    sender           BYTEA       NOT NULL,
    recipient        BYTEA       NOT NULL,
    -- The timestamp exactly as signed.
    sent_at          TEXT        NOT NULL,
    payload          JSONB       NOT NULL,
    signature        TEXT        NOT NULL,
    -- The EIP-712 hash the signature covers: a message is accepted once.
    digest           BYTEA       NOT NULL UNIQUE,
    received_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (chain_id, conversation_id, seq),
    FOREIGN KEY (chain_id, conversation_id) REFERENCES conversations (chain_id, id)
);
CREATE INDEX negotiation_messages_by_recipient ON negotiation_messages (chain_id, recipient, received_at);

-- The audit log is append-only: no message is ever changed or removed.
CREATE FUNCTION negotiation_messages_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'negotiation_messages is an append-only audit log';
END;
$$;
CREATE TRIGGER negotiation_messages_append_only BEFORE UPDATE OR DELETE ON negotiation_messages
    FOR EACH ROW EXECUTE FUNCTION negotiation_messages_append_only();
