-- The dashboard's charts (api/src/read/history.rs). Completed payment over time reads the
-- completed pacts (status 4) of a window by their closing time, covered by the index; the score
-- distribution reads the final scores alone. Both partial: pacts still open add nothing to them.
CREATE INDEX pacts_completed_by_close ON pacts (chain_id, closed_at) INCLUDE (currency, payment) WHERE status = 4;
CREATE INDEX pacts_by_final_score ON pacts (chain_id, final_score) WHERE final_score IS NOT NULL;
