-- Negotiated terms in stages (HIRE/1.0 `stages`, docs/negotiation.md, #55): the stages on a
-- conversation's table, as messages carry them — a JSON array of {title?, price, deadline} in
-- order — or NULL for terms of one payment, which every conversation before this migration is.
ALTER TABLE conversations ADD COLUMN stages JSONB
    CONSTRAINT conversations_stages_array CHECK (stages IS NULL OR jsonb_typeof(stages) = 'array');
