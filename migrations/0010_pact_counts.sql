-- Flat counts (issue #21): how many pacts, and their payment, per status — for the whole chain and
-- per buyer, seller, party, oracle and currency — kept beside the rows they count, by triggers, so
-- a count a dashboard asks for reads one row per status instead of every matching pact. Triggers
-- run in the writer's transaction: a batch, a reorg's rollback and its replay move the counts with
-- the rows, and no reader sees one without the other.
--
-- dimension | subject          | a pact counts once in it for
-- all       | '' (empty bytea) | every pact
-- buyer     | the buyer        | its buyer (once known)
-- seller    | the seller       | its seller (once known)
-- party     | an account       | each distinct account among creator, buyer, seller, arbitrator, oracles
-- oracle    | an oracle        | each of its oracles
-- currency  | the token        | its currency (zero address: ETH)
CREATE TABLE pact_counts (
    chain_id   BIGINT         NOT NULL,
    dimension  TEXT           NOT NULL CHECK (dimension IN ('all', 'buyer', 'seller', 'party', 'oracle', 'currency')),
    subject    BYTEA          NOT NULL,
    status     SMALLINT       NOT NULL,
    pacts      BIGINT         NOT NULL,
    payment    NUMERIC(78, 0) NOT NULL,
    PRIMARY KEY (chain_id, dimension, subject, status)
);

-- What a pact row adds to the counts by itself (its oracles are added by `pact_oracle_counts`).
CREATE FUNCTION pact_row_counts(p pacts, sign INTEGER)
RETURNS TABLE (chain_id BIGINT, dimension TEXT, subject BYTEA, status SMALLINT, pacts BIGINT, payment NUMERIC)
LANGUAGE sql IMMUTABLE AS $$
    -- One SELECT (no UNION), so the planner inlines it into the trigger's statement.
    SELECT p.chain_id, k.dimension, k.subject, p.status, sign::bigint, sign * p.payment
    FROM (VALUES
        ('all', '\x'::bytea, true),
        ('buyer', p.buyer, true),
        ('seller', p.seller, true),
        ('currency', p.currency, true),
        ('party', p.creator, true),
        ('party', p.buyer, p.buyer IS DISTINCT FROM p.creator),
        ('party', p.seller, p.seller IS DISTINCT FROM p.creator AND p.seller IS DISTINCT FROM p.buyer),
        ('party', p.arbitrator, p.arbitrator IS DISTINCT FROM p.creator AND p.arbitrator IS DISTINCT FROM p.buyer
                                AND p.arbitrator IS DISTINCT FROM p.seller)
    ) AS k (dimension, subject, counted)
    WHERE k.subject IS NOT NULL AND k.counted
$$;

-- What one oracle of pact `p` adds: the oracle dimension, and the party dimension unless the
-- oracle already counts there as the pact's creator, buyer, seller or arbitrator.
CREATE FUNCTION pact_oracle_counts(p pacts, oracle BYTEA, sign INTEGER)
RETURNS TABLE (chain_id BIGINT, dimension TEXT, subject BYTEA, status SMALLINT, pacts BIGINT, payment NUMERIC)
LANGUAGE sql IMMUTABLE AS $$
    SELECT p.chain_id, k.dimension, oracle, p.status, sign::bigint, sign * p.payment
    FROM (VALUES
        ('oracle', true),
        ('party', oracle IS DISTINCT FROM p.creator AND oracle IS DISTINCT FROM p.buyer
                  AND oracle IS DISTINCT FROM p.seller AND oracle IS DISTINCT FROM p.arbitrator)
    ) AS k (dimension, counted)
    WHERE k.counted
$$;

-- One statement's changes, summed per row of pact_counts.
CREATE TYPE pact_count_change AS (chain_id BIGINT, dimension TEXT, subject BYTEA, status SMALLINT, pacts BIGINT, payment NUMERIC);

CREATE FUNCTION add_pact_counts(changes pact_count_change[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO pact_counts AS c (chain_id, dimension, subject, status, pacts, payment)
    SELECT chain_id, dimension, subject, status, sum(pacts), sum(payment)
    FROM unnest(changes)
    GROUP BY chain_id, dimension, subject, status
    HAVING sum(pacts) <> 0 OR sum(payment) <> 0
    ON CONFLICT (chain_id, dimension, subject, status)
    DO UPDATE SET pacts = c.pacts + EXCLUDED.pacts, payment = c.payment + EXCLUDED.payment
$$;

-- pacts: a statement's rows leave their old keys and join their new ones. Oracles are read from
-- pact_oracles as they stand: a pact's oracles never change after its creation, they are inserted
-- after the pact (their own trigger counts them then) and deleted before it (below).
CREATE FUNCTION count_inserted_or_deleted_pacts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM add_pact_counts(ARRAY(
        SELECT c::pact_count_change FROM changed p,
            pact_row_counts(p, CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END) c));
    RETURN NULL;
END $$;

-- Only the rows whose status, buyer or seller changed move (a score or a timestamp moves none).
CREATE FUNCTION count_updated_pacts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM add_pact_counts(ARRAY(
        WITH moved AS MATERIALIZED (
            SELECT o.chain_id, o.pact_id FROM old_rows o JOIN new_rows n USING (chain_id, pact_id)
            WHERE (o.status, o.buyer, o.seller) IS DISTINCT FROM (n.status, n.buyer, n.seller)
        )
        SELECT c::pact_count_change FROM new_rows n JOIN moved USING (chain_id, pact_id),
            pact_row_counts(n, 1) c
        UNION ALL
        SELECT c::pact_count_change FROM old_rows o JOIN moved USING (chain_id, pact_id),
            pact_row_counts(o, -1) c
        UNION ALL
        SELECT c::pact_count_change FROM new_rows n JOIN moved USING (chain_id, pact_id)
            JOIN pact_oracles po USING (chain_id, pact_id),
            pact_oracle_counts(n, po.oracle, 1) c
        UNION ALL
        SELECT c::pact_count_change FROM old_rows o JOIN moved USING (chain_id, pact_id)
            JOIN pact_oracles po USING (chain_id, pact_id),
            pact_oracle_counts(o, po.oracle, -1) c));
    RETURN NULL;
END $$;

-- A pact's oracles go before the pact does, while their trigger can still read the pact's status
-- (the foreign key's cascade would delete them after it).
CREATE FUNCTION delete_oracles_first() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM pact_oracles WHERE chain_id = OLD.chain_id AND pact_id = OLD.pact_id;
    RETURN OLD;
END $$;

-- pact_oracles: added or removed with the status of their pact as it stands.
CREATE FUNCTION count_inserted_or_deleted_pact_oracles() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM add_pact_counts(ARRAY(
        SELECT c::pact_count_change FROM changed po
            JOIN pacts p ON p.chain_id = po.chain_id AND p.pact_id = po.pact_id,
            pact_oracle_counts(p, po.oracle, CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END) c));
    RETURN NULL;
END $$;

-- An UPDATE of a pact's oracles would change counts no trigger follows: the indexer never does one.
CREATE FUNCTION refuse_pact_oracle_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'pact_oracles rows are inserted and deleted, never updated (pact_counts follows only those)';
END $$;

-- An insert's new rows and a delete's old rows are both `changed`: one function counts them in
-- or out by the operation.
CREATE TRIGGER pacts_counted_insert AFTER INSERT ON pacts
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION count_inserted_or_deleted_pacts();
CREATE TRIGGER pacts_counted_update AFTER UPDATE ON pacts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_updated_pacts();
CREATE TRIGGER pacts_counted_delete AFTER DELETE ON pacts
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION count_inserted_or_deleted_pacts();
CREATE TRIGGER pacts_delete_oracles_first BEFORE DELETE ON pacts
    FOR EACH ROW EXECUTE FUNCTION delete_oracles_first();
CREATE TRIGGER pact_oracles_counted_insert AFTER INSERT ON pact_oracles
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION count_inserted_or_deleted_pact_oracles();
CREATE TRIGGER pact_oracles_counted_delete AFTER DELETE ON pact_oracles
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION count_inserted_or_deleted_pact_oracles();
CREATE TRIGGER pact_oracles_never_updated BEFORE UPDATE ON pact_oracles
    FOR EACH ROW EXECUTE FUNCTION refuse_pact_oracle_update();

-- Count what is already indexed.
SELECT add_pact_counts(ARRAY(
    SELECT c::pact_count_change FROM pacts p, pact_row_counts(p, 1) c
    UNION ALL
    SELECT c::pact_count_change FROM pact_oracles po
        JOIN pacts p ON p.chain_id = po.chain_id AND p.pact_id = po.pact_id,
        pact_oracle_counts(p, po.oracle, 1) c));
