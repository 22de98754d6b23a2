-- Verdicts void offers (docs/contracts.md §Verdicts void offers, #55): an oracle's score or a
-- `voidOffers` (OffersVoided) given after an offer was made voids it, and the escrow then refuses
-- its acceptance (OfferVoided). The standing offer is now the highest round with none of
-- withdrawn_at, accepted_at and voided_at, while the pact is still in `offered_in` and before
-- `expires_at`. Set on a pact's last offer by the first verdict after it, as the escrow's epoch rule
-- (it is void whatever its status or expiry then). An index built before this column indexed no
-- OffersVoided (the event is new) and voided nothing: its offers read as they did.
ALTER TABLE settlements ADD COLUMN voided_at TIMESTAMPTZ;
