-- depends: 0027.history-row-lookup
-- What a ledger write means, checked by the database (issue 36: the insider). Until now
-- post_transaction checked a transaction's shape (balanced, on balances its postings explain)
-- and open_accounts none at all, so the service's login alone could pay itself winnings caused
-- by an event on a stream of its own naming, move one player's money to another as a
-- "deposit", or open a player's wallet as a house account with no floor. Now:
--
-- - an account's kind follows from its id (a CHECK, whoever writes the row): 'player:<id>' is
--   always that player's real wallet, so never below zero;
-- - a transaction is exactly what its cause moves: ledger_entry_of(stream, version) below says,
--   from the recorded event alone, which transaction (id, kind, currency, amount, accounts and
--   amounts) it causes, and post_transaction refuses anything else, including a cause that is
--   missing or moves no money. Its cause must be on the right kind of stream, of the right
--   player: a stake from the player whose game it is, winnings and refunds of a game that is
--   not a duel seat's, never above the game's own paytable (units x stake x M / max_units,
--   M and max_units as its StakePlaced recorded them), a duel's fee, prize and refunds only
--   for players seated in it.
--
-- ledger_entry_of is a deliberate second copy of service/core/ledger.py's entry_for and
-- duel_entry_for (the guard does not trust the guarded): tests/integration/test_ledger_meaning.py
-- runs both over every event type the catalog has and requires them to agree.

-- --- accounts ------------------------------------------------------------------------------------

-- The id says the kind (core/ledger.py: player_account, house_stakes, house_payouts, cashier,
-- duel_pot, house_rake); the kind says the id.
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_follows_id CHECK (
    CASE kind
        WHEN 'player' THEN account_id = 'player:' || player_id::text
        WHEN 'sandbox' THEN account_id = 'sandbox:' || player_id::text
        WHEN 'house-stakes' THEN account_id = 'house-stakes:' || currency
        WHEN 'house-payouts' THEN account_id = 'house-payouts:' || currency
        WHEN 'cashier' THEN account_id = 'cashier:' || currency
        WHEN 'house-rake' THEN account_id = 'house-rake:' || currency
        WHEN 'duel-pot' THEN account_id ~ '^duel-pot:[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$'
        ELSE false
    END
);

-- A player's account in a currency (core/ledger.py player_account): the sandbox wallet in XTS.
CREATE FUNCTION player_account_id(p_player text, p_currency text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_currency = 'XTS' THEN 'sandbox:' ELSE 'player:' END || p_player
$$;

-- --- the mapping ---------------------------------------------------------------------------------

-- The ledger transaction the event at (p_stream, p_version) causes, if any: no row for an event
-- that moves no money, for a missing one, and for one whose money does not follow from its
-- stream (then nothing may be posted for it). The postings come as two arrays, accounts and
-- signed amounts, in core/ledger.py's order.
CREATE FUNCTION ledger_entry_of(p_stream text, p_version integer)
RETURNS TABLE (client_transaction_id text, kind text, currency text, amount bigint,
               accounts text[], amounts bigint[])
LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    ev events;
    first events;
    id text;
    cur text;
    n bigint;
    stake bigint;
    hundredths bigint;
    max_units bigint;
    units bigint;
    fees bigint;
BEGIN
    SELECT * INTO ev FROM events e WHERE e.stream_id = p_stream AND e.version = p_version;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT * INTO first FROM events e WHERE e.stream_id = p_stream AND e.version = 1;

    IF p_stream LIKE 'player-%' THEN
        -- The cashier's events, on a registered player's own stream, in their currency.
        id := substr(p_stream, 8);
        IF ev.type NOT IN ('FundsDeposited', 'FundsWithdrawn') OR ev.schema_version <> 1
           OR first.type IS DISTINCT FROM 'PlayerRegistered'
           OR first.data->>'player_id' IS DISTINCT FROM id THEN
            RETURN;
        END IF;
        cur := ev.data->>'currency';
        n := (ev.data->>'amount')::bigint;
        IF cur IS DISTINCT FROM first.data->>'currency' OR n IS NULL OR n <= 0 THEN
            RETURN;
        END IF;
        client_transaction_id := 'cashier:' || (ev.data->>'transaction_id');
        currency := cur;
        amount := n;
        IF ev.type = 'FundsDeposited' THEN
            kind := 'deposit';
            accounts := ARRAY['cashier:' || cur, player_account_id(id, cur)];
        ELSE
            kind := 'withdrawal';
            accounts := ARRAY[player_account_id(id, cur), 'cashier:' || cur];
        END IF;
        amounts := ARRAY[-n, n];
        RETURN NEXT;
        RETURN;
    END IF;

    IF p_stream LIKE 'game-%' THEN
        -- A game's money follows from its StakePlaced (version 1): whose game, which stake, in
        -- which currency, at which price. A duel seat's game moves none: the duel pays.
        id := substr(p_stream, 6);
        IF first.type IS DISTINCT FROM 'StakePlaced' OR first.data->>'game_id' IS DISTINCT FROM id
           OR (first.schema_version >= 3 AND first.data->>'duel_id' IS NOT NULL) THEN
            RETURN;
        END IF;
        cur := first.data->>'currency';
        stake := (first.data->>'stake')::bigint;
        -- StakePlaced v1 (Vegas Klondike only) priced every game at M = 5 over 52 cards
        -- (events/codec.py's upcaster).
        hundredths := CASE WHEN first.schema_version = 1 THEN 500
                           ELSE ((first.data->>'multiplier')::numeric * 100)::bigint END;
        max_units := CASE WHEN first.schema_version = 1 THEN 52
                          ELSE (first.data->>'max_units')::bigint END;
        IF ev.type = 'StakePlaced' AND ev.version = 1 THEN
            kind := 'stake';
            n := stake;
            client_transaction_id := 'stake:' || id;
            accounts := ARRAY[player_account_id(first.data->>'player_id', cur),
                              'house-stakes:' || cur];
        ELSIF ev.type = 'Collected' THEN
            n := (ev.data->>'winnings')::bigint;
            units := coalesce(ev.data->>'units', ev.data->>'foundation_count')::bigint;
            -- The winnings its own paytable pays for its units (core/paytable.py winnings),
            -- never above a full win.
            IF ev.data->>'currency' IS DISTINCT FROM cur OR units IS NULL OR units < 0
               OR units > max_units
               OR n IS DISTINCT FROM div(units * stake * hundredths, 100 * max_units)::bigint THEN
                RETURN;
            END IF;
            kind := 'winnings';
            client_transaction_id := 'winnings:' || id;
            accounts := ARRAY['house-payouts:' || cur,
                              player_account_id(first.data->>'player_id', cur)];
        ELSIF ev.type = 'Voided' THEN
            n := (ev.data->>'refund')::bigint;
            IF ev.data->>'currency' IS DISTINCT FROM cur OR n > stake THEN
                RETURN;
            END IF;
            kind := 'refund';
            client_transaction_id := 'refund:' || id;
            accounts := ARRAY['house-stakes:' || cur,
                              player_account_id(first.data->>'player_id', cur)];
        ELSE
            RETURN;
        END IF;
        IF n IS NULL OR n <= 0 THEN
            RETURN;
        END IF;
        currency := cur;
        amount := n;
        amounts := ARRAY[-n, n];
        RETURN NEXT;
        RETURN;
    END IF;

    IF p_stream LIKE 'duel-%' THEN
        -- A duel's money follows from its DuelOpened (version 1): its currency and fee; prizes
        -- and refunds go only to players seated in it (SeatTaken before the event).
        id := substr(p_stream, 6);
        IF first.type IS DISTINCT FROM 'DuelOpened' OR first.data->>'duel_id' IS DISTINCT FROM id
        THEN
            RETURN;
        END IF;
        cur := first.data->>'currency';
        currency := cur;
        IF ev.type = 'SeatTaken' THEN
            n := (ev.data->>'fee')::bigint;
            IF n IS DISTINCT FROM (first.data->>'fee')::bigint OR n <= 0 THEN
                RETURN;
            END IF;
            kind := 'duel-fee';
            amount := n;
            client_transaction_id := 'duel-fee:' || id || ':' || (ev.data->>'seat');
            accounts := ARRAY[player_account_id(ev.data->>'player_id', cur), 'duel-pot:' || id];
            amounts := ARRAY[-n, n];
            RETURN NEXT;
            RETURN;
        END IF;
        IF ev.type NOT IN ('DuelSettled', 'DuelCancelled') THEN
            RETURN;
        END IF;
        -- Every leg names a seated player, and the pot out is every fee paid in.
        IF EXISTS (SELECT 1 FROM jsonb_array_elements(
                       ev.data->(CASE ev.type WHEN 'DuelSettled' THEN 'payouts' ELSE 'refunds'
                                 END)) p
                    WHERE NOT EXISTS (SELECT 1 FROM events s
                                       WHERE s.stream_id = p_stream AND s.version < p_version
                                         AND s.type = 'SeatTaken'
                                         AND s.data->>'player_id' = p.value->>'player_id'
                                         AND s.data->>'seat' = p.value->>'seat')) THEN
            RETURN;
        END IF;
        SELECT coalesce(sum((s.data->>'fee')::bigint), 0) INTO fees
          FROM events s
         WHERE s.stream_id = p_stream AND s.version < p_version AND s.type = 'SeatTaken';
        IF ev.type = 'DuelSettled' THEN
            n := (ev.data->>'pot')::bigint;
            IF n IS DISTINCT FROM fees THEN
                RETURN;
            END IF;
            kind := 'duel-prize';
            SELECT array_agg(a ORDER BY o), array_agg(m ORDER BY o) INTO accounts, amounts
              FROM (SELECT 0 AS o, 'duel-pot:' || id AS a, -n AS m
                    UNION ALL
                    SELECT p.ordinality, player_account_id(p.value->>'player_id', cur),
                           (p.value->>'amount')::bigint
                      FROM jsonb_array_elements(ev.data->'payouts') WITH ORDINALITY p
                    UNION ALL
                    SELECT 1000000, 'house-rake:' || cur, (ev.data->>'rake')::bigint
                     WHERE (ev.data->>'rake')::bigint > 0) legs;
        ELSE
            n := (SELECT coalesce(sum((p.value->>'amount')::bigint), 0)
                    FROM jsonb_array_elements(ev.data->'refunds') p);
            IF n <= 0 THEN
                RETURN;  -- nothing to refund: no money moves
            END IF;
            IF n IS DISTINCT FROM fees THEN
                RETURN;
            END IF;
            kind := 'duel-refund';
            SELECT array_agg(a ORDER BY o), array_agg(m ORDER BY o) INTO accounts, amounts
              FROM (SELECT 0 AS o, 'duel-pot:' || id AS a, -n AS m
                    UNION ALL
                    SELECT p.ordinality, player_account_id(p.value->>'player_id', cur),
                           (p.value->>'amount')::bigint
                      FROM jsonb_array_elements(ev.data->'refunds') WITH ORDINALITY p) legs;
        END IF;
        amount := n;
        client_transaction_id := kind || ':' || id;
        RETURN NEXT;
        RETURN;
    END IF;
END
$$;
REVOKE EXECUTE ON FUNCTION ledger_entry_of FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger_entry_of TO vegas_app;

-- --- posting -------------------------------------------------------------------------------------

-- As 0016's, and now the transaction must be exactly what its cause moves (ledger_entry_of):
-- the same id, kind, currency, amount and postings (in any order). The cause is appended first,
-- in the same transaction (the service appends, then posts). Restated whole: CREATE OR REPLACE
-- keeps the owner and grants but resets what it does not say.
CREATE OR REPLACE FUNCTION post_transaction(p_transaction_id uuid, p_client_transaction_id text,
                                            p_kind text, p_fingerprint text, p_currency text,
                                            p_amount bigint, p_cause_stream text,
                                            p_cause_version integer, p_request_id text,
                                            p_accounts text[], p_amounts bigint[])
RETURNS TABLE (posting_id bigint, account_id text, amount bigint, balance_before bigint,
               balance_after bigint, created_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    drifted text;
    want record;
BEGIN
    IF cardinality(p_accounts) IS DISTINCT FROM cardinality(p_amounts)
       OR (SELECT coalesce(sum(a), 0) FROM unnest(p_amounts) a) <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % does not balance', p_client_transaction_id
            USING ERRCODE = 'check_violation';  -- as 0003's trigger says it at commit
    END IF;
    SELECT * INTO want FROM ledger_entry_of(p_cause_stream, p_cause_version);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'ledger transaction % has no cause: % v% moves no money',
            p_client_transaction_id, p_cause_stream, p_cause_version
            USING ERRCODE = 'check_violation';
    END IF;
    IF want.client_transaction_id IS DISTINCT FROM p_client_transaction_id
       OR want.kind IS DISTINCT FROM p_kind OR want.currency IS DISTINCT FROM p_currency
       OR want.amount IS DISTINCT FROM p_amount
       OR (SELECT array_agg(a || '=' || m ORDER BY a, m) FROM unnest(want.accounts, want.amounts)
              AS w(a, m))
          IS DISTINCT FROM
          (SELECT array_agg(a || '=' || m ORDER BY a, m) FROM unnest(p_accounts, p_amounts)
              AS g(a, m)) THEN
        RAISE EXCEPTION 'ledger transaction % is not what % v% moves',
            p_client_transaction_id, p_cause_stream, p_cause_version
            USING ERRCODE = 'check_violation',
                  DETAIL = format('it moves %s %s %s as %s', want.kind, want.amount,
                                  want.currency, want.client_transaction_id);
    END IF;
    SELECT b.account_id INTO drifted
      FROM account_balances b
     WHERE b.account_id = ANY (p_accounts)
       AND b.balance <> coalesce((SELECT p.balance_after FROM postings p
                                   WHERE p.account_id = b.account_id
                                   ORDER BY p.posting_id DESC LIMIT 1), 0)
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'the balance of account % is not the balance after its postings',
            drifted USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN QUERY
    WITH wanted AS (
        SELECT * FROM unnest(p_accounts, p_amounts) AS w(account_id, amount)
    ), moved AS (
        UPDATE account_balances b
           SET balance = b.balance + w.amount
          FROM wanted w
         WHERE b.account_id = w.account_id
           AND b.currency = p_currency
           AND (b.kind <> 'player' OR b.balance + w.amount >= 0)
        RETURNING b.account_id, w.amount, b.balance - w.amount AS before, b.balance AS after
    ), tx AS (
        INSERT INTO ledger_transactions (transaction_id, client_transaction_id, kind,
                                         fingerprint, currency, amount, cause_stream,
                                         cause_version, request_id)
        VALUES (p_transaction_id, p_client_transaction_id, p_kind, p_fingerprint, p_currency,
                p_amount, p_cause_stream, p_cause_version, p_request_id)
        RETURNING transaction_id
    ), posted AS (
        INSERT INTO postings AS p (transaction_id, account_id, amount, balance_before,
                                   balance_after, cause_stream, cause_version)
        SELECT tx.transaction_id, m.account_id, m.amount, m.before, m.after, p_cause_stream,
               p_cause_version
          FROM moved m CROSS JOIN tx
        RETURNING p.posting_id, p.account_id, p.amount, p.balance_before, p.balance_after,
                  p.created_at
    )
    SELECT * FROM posted ORDER BY 1;
END
$$;
