-- HIRE/1.0 prices name their currency ("5 USDC"), and a conversation is priced before any pact
-- says which token that symbol is, so its price is kept as the messages name it, canonical
-- (`agentpact_negotiation::Price`: "5 USDC", "0.5 ETH"). Prices stored before were wei of ETH.
ALTER TABLE conversations ALTER COLUMN price TYPE TEXT
    USING CASE WHEN price IS NULL THEN NULL
               ELSE trim_scale(price * 0.000000000000000001)::text || ' ETH' END;
