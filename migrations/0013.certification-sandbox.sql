-- depends: 0010.audit-resume
-- Certification games move no real money: they play for ISO 4217's testing currency, XTS
-- (service/ledger.py). Each player's certification money is a sandbox wallet of its own (kind
-- 'sandbox'), against XTS house accounts, all opened by their first posting. A sandbox wallet is
-- never funded, so it has no floor: its balance is the net of the player's certification play.
ALTER TABLE accounts DROP CONSTRAINT accounts_kind_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_check
    CHECK (kind IN ('player', 'house-stakes', 'house-payouts', 'cashier', 'duel-pot',
                    'house-rake', 'sandbox'));

-- A player's account is their real wallet or their sandbox one; no other account names a player.
ALTER TABLE accounts DROP CONSTRAINT accounts_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_check
    CHECK ((kind IN ('player', 'sandbox')) = (player_id IS NOT NULL));

-- The two kinds of money never meet: a real wallet is never in XTS, a sandbox wallet only is.
-- (A transaction moves only accounts of its own currency, so no posting crosses over either.)
ALTER TABLE accounts ADD CONSTRAINT accounts_sandbox_only_in_xts
    CHECK (CASE kind WHEN 'sandbox' THEN currency = 'XTS'
                     WHEN 'player' THEN currency <> 'XTS'
                     ELSE true END);
