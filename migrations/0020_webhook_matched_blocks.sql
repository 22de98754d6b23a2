-- The blocks the instant matching of webhooks passed, with their hashes, while a reorganisation
-- could still remove them (docs/push.md §Modes). After one, matching goes back to the last of them
-- still on the indexed chain (the fork) and no further: a subscription is not told again of an
-- event it already had, nor of one matched before it existed (push/src/revoke.rs).
CREATE TABLE webhook_matched_blocks (
    chain_id  BIGINT NOT NULL,
    number    BIGINT NOT NULL,
    hash      BYTEA  NOT NULL,
    PRIMARY KEY (chain_id, number)
);
