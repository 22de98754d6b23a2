-- Upkeep deferred while a backfill is far behind (issue #36, docs/indexer.md §Deferred upkeep):
-- the secondary indexes of the tables a backfill writes most, and the triggers that keep
-- pact_counts, are dropped when a pass starts far behind the head and built again, with the
-- counts recomputed, in the transaction that reaches the head. Their definitions wait here,
-- written in the transaction that drops them, so a kill at any instant leaves either the objects
-- or their definitions, never neither.
CREATE TABLE deferred_objects (
    name        TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('index', 'trigger')),
    table_name  TEXT NOT NULL,
    definition  TEXT NOT NULL
);

-- The chains whose pact_counts are stale until their backfill reaches the head.
CREATE TABLE deferred_chains (
    chain_id     BIGINT PRIMARY KEY REFERENCES chains (chain_id),
    since_block  BIGINT      NOT NULL,
    deferred_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
