WITH w AS (SELECT * FROM unnest($2::smallint[], $3::text[], $4::text[], $5::text[], $6::text[],
                                $7::float8[], $8::bool[])
             AS w(status, window_name, status_name, actor, since, secs, by_review)),
 -- What waits in a window: a pact of one stage by its row; a pact of several by each stage's row
 -- (pact_stages), but for the acceptance all its stages share, which is the pact row's.
 waiting AS (
     SELECT p.chain_id, p.pact_id, NULL::smallint AS stage, p.status, p.deadline, p.submitted_at,
            p.verified_at, p.disputed_at
     FROM pacts p
     WHERE p.chain_id = $1 AND p.status = ANY($2)
       AND (p.status = 0 OR NOT EXISTS (SELECT 1 FROM pact_stages s
                                        WHERE s.chain_id = p.chain_id AND s.pact_id = p.pact_id))
     UNION ALL
     SELECT s.chain_id, s.pact_id, s.stage, s.status, s.deadline, s.submitted_at, s.verified_at,
            s.disputed_at
     FROM pact_stages s
     WHERE s.chain_id = $1 AND s.status <> 0 AND s.status = ANY($2)
 ),
 open AS (
     SELECT p.chain_id, p.pact_id, x.stage, p.currency, w.window_name, w.status_name,
            CASE w.actor
                WHEN 'counterparty' THEN ARRAY[p.counterparty]
                WHEN 'seller' THEN ARRAY[p.seller]
                WHEN 'buyer' THEN ARRAY[p.buyer]
                WHEN 'arbitrator' THEN ARRAY[p.arbitrator]
                WHEN 'oracles' THEN ARRAY(SELECT o.oracle FROM pact_oracles o
                                          WHERE o.chain_id = p.chain_id AND o.pact_id = p.pact_id)
            END AS actors,
            CASE w.since
                WHEN 'acceptBy' THEN p.accept_by
                WHEN 'deadline' THEN x.deadline
                WHEN 'submittedAt' THEN x.submitted_at
                WHEN 'verifiedAt' THEN x.verified_at
                WHEN 'disputedAt' THEN x.disputed_at
            END + make_interval(secs => CASE WHEN w.by_review THEN p.review_period::float8 ELSE w.secs END)
                AS closes_at
     FROM waiting x
     JOIN pacts p ON p.chain_id = x.chain_id AND p.pact_id = x.pact_id
     JOIN w ON w.status = x.status
 ),
 due AS (
     SELECT * FROM open
     WHERE CASE WHEN $9 = $12 THEN closes_at > $10 AND closes_at <= $11
                ELSE closes_at >= $10 AND closes_at < $11 END
 ),
 keyed AS (
     -- A stage's window is keyed by its stage too; a one-stage pact's key is the one it always was.
     SELECT due.*, due.chain_id || ':' || due.pact_id || ':' || COALESCE(due.stage || ':', '') || due.window_name || ':'
                   || extract(epoch FROM due.closes_at)::bigint || ':' || $9 AS key
     FROM due
 )
 INSERT INTO webhook_deliveries (subscription_id, idempotency_key, kind, chain_id, body, state)
 SELECT s.id, keyed.key, $9, keyed.chain_id,
        (jsonb_build_object(
            'type', $9::text, 'idempotencyKey', keyed.key, 'subscriptionId', s.id, 'mode', s.mode,
            'chainId', keyed.chain_id, 'pactId', keyed.pact_id::text, 'window', keyed.window_name,
            'status', keyed.status_name, 'closesAt', extract(epoch FROM keyed.closes_at)::bigint,
            'chainTime', extract(epoch FROM $13::timestamptz)::bigint)
          || CASE WHEN keyed.stage IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('stage', keyed.stage) END)::text,
        $14
 FROM keyed
 JOIN webhook_subscriptions s
   ON s.chain_id = keyed.chain_id AND s.alarms AND s.cancelled_at IS NULL
  AND (s.party IS NULL OR s.party = ANY(keyed.actors))
  AND (s.pact_ids IS NULL OR keyed.pact_id = ANY(s.pact_ids))
  AND (s.currencies IS NULL OR keyed.currency = ANY(s.currencies))
  -- A window that closed before the subscription existed is no news to it (an index
  -- catching up through history passes many).
  AND ($9 = $12 OR keyed.closes_at >= s.created_at)
 ORDER BY keyed.closes_at, keyed.pact_id, s.id
 ON CONFLICT (subscription_id, idempotency_key) DO NOTHING
