-- depends: 0040.cheaper-log-checks
-- An operator's correction of a found forgery (issue 36). The audit's verification holds a
-- withdrawal when it finds something behind the wallet (0037), and the log is append-only, so
-- what was found stays found: the hold is answered by a BalanceCorrected event on the player's
-- stream, recorded with an operator's key, naming the hold and the findings it answers and
-- saying why, and moving money between the wallet and a house account like any other cause
-- (a debit takes forged money back, a credit restores money taken). The audit's verification
-- then no longer holds on the findings it names (service/services/verification.py).
--
-- - ledger_transactions may be of kind 'correction';
-- - the player stream's event types include BalanceCorrected (events/catalog.py
--   PLAYER_EVENT_TYPES; test_ledger_meaning.py holds them equal);
-- - refusal_of: only an operator records one, and only naming a withdrawal-held significant
--   event of that player and findings it lists (0035's function otherwise unchanged);
-- - ledger_entry_of maps it (0028's function otherwise unchanged; core/ledger.py correction is
--   the other copy, test_ledger_meaning.py requires them to agree);
-- - a hold is the audit's answer: only the audit's login records one (a trigger, since the
--   service's login inserts other significant events).

ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check;
ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check
    CHECK (kind IN ('deposit', 'withdrawal', 'stake', 'winnings', 'refund', 'duel-fee',
                    'duel-prize', 'duel-refund', 'correction'));

CREATE OR REPLACE FUNCTION stream_event_types(p_kind text) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_kind
        WHEN 'game' THEN ARRAY['StakePlaced', 'Dealt', 'ClockStarted', 'CardDrawn',
                               'StockRecycled', 'PilesGathered', 'Reshuffled', 'CardPicked',
                               'CardMoved', 'CardTurned', 'PairRemoved', 'Undone',
                               'AutoCompleted', 'Collected', 'Voided']
        WHEN 'duel' THEN ARRAY['DuelOpened', 'SeatTaken', 'SeatDealt', 'SeatFinished',
                               'DuelSettled', 'DuelCancelled']
        WHEN 'player' THEN ARRAY['PlayerRegistered', 'FundsDeposited', 'FundsWithdrawn',
                                 'PreferencesChanged', 'LimitChanged', 'PlayerExcluded',
                                 'RealityCheckAcknowledged', 'BalanceCorrected']
        WHEN 'controls' THEN ARRAY['GamingSwitched']
    END
$$;

CREATE OR REPLACE FUNCTION refusal_of(who_role text, who_actor text, who_player uuid,
                           who_session timestamptz, ev events, first events, prior events)
RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    kind text;
    id text;
    owner text;
    certification boolean;
    seats integer;
    taken integer;
    seat_player text;
    since interval;
    previous jsonb;
    held bigint;
    wanted bigint;
BEGIN
    -- A player's move on their own game, every game command's write: NULL at once when all the
    -- rules below that such an event meets hold, in their order (so a cast that fails below
    -- fails here alike); anything else, or any doubt, goes the whole way below.
    IF who_role = 'player'
       AND ev.version > 1
       AND ev.type IN ('Dealt', 'ClockStarted', 'CardDrawn', 'StockRecycled', 'PilesGathered',
                       'Reshuffled', 'CardPicked', 'CardMoved', 'CardTurned', 'PairRemoved',
                       'Undone', 'AutoCompleted')
       AND stream_kind(ev.stream_id) = 'game'
       AND ev.metadata->>'role' = 'player' AND ev.metadata->>'actor' = who_actor
       AND (NOT ev.metadata ? 'session_started'
            OR (ev.metadata->>'session_started')::timestamptz = who_session)
       AND first.data->>'game_id' = substr(ev.stream_id, 6)
       AND NOT coalesce(prior.type IN ('Collected', 'Voided'), false)
       AND coalesce((first.data->>'certification')::boolean, false) IN (true, false)
       AND who_player::text = first.data->>'player_id' THEN
        RETURN NULL;
    END IF;
    kind := stream_kind(ev.stream_id);
    IF kind IS NULL THEN
        RETURN format('stream %s is of no kind the service records', ev.stream_id);
    END IF;
    IF NOT ev.type = ANY (stream_event_types(kind)) THEN
        RETURN format('a %s is not an event of a %s stream', ev.type, kind);
    END IF;
    IF ev.metadata->>'role' IS DISTINCT FROM who_role
       OR (who_role <> 'system' AND ev.metadata->>'actor' IS DISTINCT FROM who_actor) THEN
        RETURN format('refused: %s v%s names another actor than the one asking',
                      ev.stream_id, ev.version);
    END IF;
    -- A player's events name the session they were made in (its start, which a reality
    -- check's figures count by): only the session presented.
    IF who_role = 'player' AND ev.metadata ? 'session_started'
       AND (ev.metadata->>'session_started')::timestamptz IS DISTINCT FROM who_session THEN
        RETURN format('refused: %s v%s names another session than the one asking',
                      ev.stream_id, ev.version);
    END IF;
    IF who_role IN ('auditor', 'finance') THEN
        RETURN format('refused: the %s role records nothing', who_role);
    END IF;
    IF kind = 'controls' THEN
        IF who_role <> 'operator' THEN
            RETURN 'refused: only an operator switches gaming';
        END IF;
        RETURN NULL;
    END IF;

    IF kind = 'player' THEN
        id := substr(ev.stream_id, 8);
        IF (ev.version = 1) <> (ev.type = 'PlayerRegistered')
           OR first.data->>'player_id' IS DISTINCT FROM id THEN
            RETURN format('player %s''s stream opens with their PlayerRegistered, once', id);
        END IF;
        IF ev.type IN ('PlayerRegistered', 'FundsDeposited', 'FundsWithdrawn',
                       'BalanceCorrected') THEN
            IF who_role <> 'operator' THEN
                RETURN format('refused: a %s needs an operator', ev.type);
            END IF;
            -- A correction answers a hold the audit recorded for this player, naming only
            -- findings that hold names (0041).
            IF ev.type = 'BalanceCorrected' AND NOT EXISTS (
                   SELECT 1 FROM significant_events h
                    WHERE h.id = (ev.data->>'hold')::bigint AND h.kind = 'withdrawal-held'
                      AND h.player_id::text = substr(ev.stream_id, 8)
                      AND (h.details->'findings') @> (ev.data->'findings')) THEN
                RETURN format('a correction of player %s names a hold of theirs and its findings',
                              id);
            END IF;
            RETURN NULL;
        END IF;
        IF ev.type = 'RealityCheckAcknowledged' THEN
            IF who_role <> 'player' OR who_player::text <> id
               OR (ev.data->>'session_started')::timestamptz IS DISTINCT FROM who_session THEN
                RETURN 'refused: only the player acknowledges a reality check, in its own session';
            END IF;
            RETURN NULL;
        END IF;
        IF NOT (who_role = 'operator' OR (who_role = 'player' AND who_player::text = id)) THEN
            RETURN format('refused: only player %s or an operator records a %s', id, ev.type);
        END IF;
        IF ev.type = 'PlayerExcluded' THEN
            -- Only ever extends: never ends in the past or before the one in force, and a
            -- self-exclusion in force stays one (safer_gambling.py exclude).
            SELECT e.data INTO previous FROM events e
             WHERE e.stream_id = ev.stream_id AND e.version < ev.version
               AND e.type = 'PlayerExcluded'
             ORDER BY e.version DESC LIMIT 1;
            IF (ev.data->>'until')::timestamptz <= db_clock()
               OR (previous IS NOT NULL AND (previous->>'until')::timestamptz > db_clock()
                   AND ((ev.data->>'until')::timestamptz < (previous->>'until')::timestamptz
                        OR (previous->>'kind' = 'self-exclusion'
                            AND ev.data->>'kind' <> 'self-exclusion'))) THEN
                RETURN format('an exclusion only ever extends: %s v%s would end or shorten one',
                              ev.stream_id, ev.version);
            END IF;
        ELSIF ev.type = 'LimitChanged' THEN
            -- Looser (higher, or none) than the value in force: no sooner than 24 hours on
            -- (safer_gambling.py change, LOOSENING_DELAY).
            SELECT e.data INTO previous FROM events e
             WHERE e.stream_id = ev.stream_id AND e.version < ev.version
               AND e.type = 'LimitChanged' AND e.data->>'limit' = ev.data->>'limit'
             ORDER BY e.version DESC LIMIT 1;
            held := CASE WHEN previous IS NULL THEN NULL
                         WHEN (previous->>'effective_from')::timestamptz <= db_clock()
                         THEN (previous->>'value')::bigint
                         ELSE (previous->>'previous')::bigint END;
            wanted := (ev.data->>'value')::bigint;
            IF held IS NOT NULL AND (wanted IS NULL OR wanted > held)
               AND (ev.data->>'effective_from')::timestamptz < db_clock() + interval '24 hours'
            THEN
                RETURN format('a looser limit waits 24 hours: %s v%s would loosen %s sooner',
                              ev.stream_id, ev.version, ev.data->>'limit');
            END IF;
        END IF;
        RETURN NULL;
    END IF;

    IF kind = 'game' THEN
        id := substr(ev.stream_id, 6);
        IF (ev.version = 1) <> (ev.type = 'StakePlaced')
           OR first.data->>'game_id' IS DISTINCT FROM id THEN
            RETURN format('game %s''s stream opens with the StakePlaced naming it, once', id);
        END IF;
        IF prior.type IN ('Collected', 'Voided') THEN
            RETURN format('game %s has ended: nothing follows its %s', id, prior.type);
        END IF;
        owner := first.data->>'player_id';
        certification := coalesce((first.data->>'certification')::boolean, false);
        IF who_role = 'player' THEN
            IF who_player::text IS DISTINCT FROM owner THEN
                RETURN format('refused: game %s is not this player''s', id);
            END IF;
            IF ev.type = 'Voided' OR (ev.type = 'Collected' AND ev.data->>'reason' = 'timeout')
            THEN
                RETURN format('refused: a player does not record a game''s %s',
                              CASE ev.type WHEN 'Voided' THEN 'void' ELSE 'time-out' END);
            END IF;
            IF ev.type = 'StakePlaced' AND ev.data->>'duel_id' IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM events s
                                WHERE s.stream_id = 'duel-' || (ev.data->>'duel_id')
                                  AND s.type = 'SeatTaken' AND s.data->>'player_id' = owner) THEN
                RETURN format('refused: game %s is not a seat of this player''s in its duel', id);
            END IF;
            RETURN NULL;
        END IF;
        IF who_role = 'operator' THEN
            -- A void; or a certification deal (its StakePlaced, Dealt and whatever the deal
            -- plays by itself), all recorded in the transaction that deals it.
            IF ev.type = 'Voided'
               OR (certification AND ev.type <> 'Collected'
                   AND first.recorded_at >= transaction_timestamp()) THEN
                RETURN NULL;
            END IF;
            RETURN format('refused: an operator records a game''s void, or a certification '
                          'deal, not a %s', ev.type);
        END IF;
        -- The service's own task: a game collected as timed out, once its clock has run out
        -- or it has lain idle past the policy.
        IF NOT (ev.type = 'Collected' AND ev.data->>'reason' = 'timeout') THEN
            RETURN format('refused: a %s of game %s is recorded by its player, not without a '
                          'credential', ev.type, id);
        END IF;
        IF (EXISTS (SELECT 1 FROM events c
                         WHERE c.stream_id = ev.stream_id AND c.type = 'ClockStarted'
                           AND (c.data->>'deadline')::timestamptz <= db_clock())
                OR prior.recorded_at <= db_clock() - (SELECT p.idle_after
                                                        FROM collection_policy p)) THEN
            RETURN NULL;
        END IF;
        RETURN format('refused: without a credential, game %s may only be collected once '
                      'idle past the policy or past its deadline', id);
    END IF;

    -- a duel
    id := substr(ev.stream_id, 6);
    IF (ev.version = 1) <> (ev.type = 'DuelOpened')
       OR first.data->>'duel_id' IS DISTINCT FROM id THEN
        RETURN format('duel %s''s stream opens with its DuelOpened, once', id);
    END IF;
    IF prior.type IN ('DuelSettled', 'DuelCancelled') THEN
        RETURN format('duel %s has ended: nothing follows its %s', id, prior.type);
    END IF;
    certification := coalesce((first.data->>'certification')::boolean, false);
    seats := (first.data->>'seats')::integer;
    SELECT count(*) INTO taken FROM events s
     WHERE s.stream_id = ev.stream_id AND s.version <= ev.version AND s.type = 'SeatTaken';
    IF ev.type IN ('SeatDealt', 'SeatFinished') THEN
        SELECT s.data->>'player_id' INTO seat_player FROM events s
         WHERE s.stream_id = ev.stream_id AND s.type = 'SeatTaken'
           AND s.data->>'seat' = ev.data->>'seat';
        IF seat_player IS NULL THEN
            RETURN format('duel %s has no seat %s', id, ev.data->>'seat');
        END IF;
    END IF;
    IF ev.type = 'DuelOpened' THEN
        IF who_role = 'player' OR (who_role = 'operator' AND certification) THEN
            RETURN NULL;
        END IF;
        RETURN 'refused: a duel is opened by a player joining it (or, certifying, an operator)';
    ELSIF ev.type = 'SeatTaken' THEN
        IF taken > seats THEN
            RETURN format('duel %s has only %s seats', id, seats);
        END IF;
        IF (who_role = 'player' AND ev.data->>'player_id' = who_player::text)
           OR (who_role = 'operator' AND certification) THEN
            RETURN NULL;
        END IF;
        RETURN 'refused: a seat is taken by its own player (or, certifying, an operator)';
    ELSIF ev.type = 'SeatDealt' THEN
        IF who_role = 'player' AND seat_player = who_player::text THEN
            RETURN NULL;
        END IF;
        RETURN 'refused: a seat''s game is dealt by its own player';
    ELSIF ev.type = 'SeatFinished' THEN
        IF who_role = 'player' AND seat_player = who_player::text
           AND ev.data->>'reason' IN ('finished', 'player') THEN
            RETURN NULL;
        END IF;
        IF who_role = 'system' AND ev.data->>'reason' = 'timeout'
           AND EXISTS (SELECT 1 FROM events s
                        WHERE s.stream_id = ev.stream_id AND s.type = 'SeatDealt'
                          AND s.data->>'seat' = ev.data->>'seat'
                          AND (s.data->>'deadline')::timestamptz <= db_clock()) THEN
            RETURN NULL;
        END IF;
        IF who_role = 'system' AND ev.data->>'reason' = 'not-dealt' AND taken = seats
           AND db_clock() >= (SELECT (max(s.data->>'taken_at'))::timestamptz
                               FROM events s
                              WHERE s.stream_id = ev.stream_id AND s.type = 'SeatTaken')
                             + ((first.data->>'fill_by')::timestamptz
                                - (first.data->>'opened_at')::timestamptz) THEN
            RETURN NULL;
        END IF;
        RETURN format('refused: seat %s of duel %s is finished by its player, or once its time '
                      'has run out', ev.data->>'seat', id);
    ELSIF ev.type = 'DuelSettled' THEN
        IF taken = seats
           AND (SELECT count(*) FROM events s
                 WHERE s.stream_id = ev.stream_id AND s.version < ev.version
                   AND s.type = 'SeatFinished') = seats THEN
            RETURN NULL;
        END IF;
        RETURN format('duel %s settles once every seat has finished', id);
    ELSE  -- DuelCancelled
        IF (ev.data->>'voided')::boolean THEN
            IF who_role = 'operator' THEN
                RETURN NULL;
            END IF;
            RETURN 'refused: only an operator voids a duel';
        END IF;
        IF taken < seats AND db_clock() >= (first.data->>'fill_by')::timestamptz THEN
            RETURN NULL;
        END IF;
        RETURN format('duel %s is cancelled unfilled only after its fill-by time', id);
    END IF;
END
$$;
REVOKE EXECUTE ON FUNCTION refusal_of FROM PUBLIC;

CREATE OR REPLACE FUNCTION ledger_entry_of(p_stream text, p_version integer)
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
        IF ev.type NOT IN ('FundsDeposited', 'FundsWithdrawn', 'BalanceCorrected')
           OR ev.schema_version <> 1
           OR first.type IS DISTINCT FROM 'PlayerRegistered'
           OR first.data->>'player_id' IS DISTINCT FROM id THEN
            RETURN;
        END IF;
        cur := ev.data->>'currency';
        n := (ev.data->>'amount')::bigint;
        IF cur IS DISTINCT FROM first.data->>'currency' OR n IS NULL OR n <= 0 THEN
            RETURN;
        END IF;
        IF ev.type = 'BalanceCorrected' THEN
            -- An operator's correction (core/ledger.py correction): between the wallet and the
            -- house account it names, out of the wallet on a debit, into it on a credit.
            IF ev.metadata->>'role' IS DISTINCT FROM 'operator'
               OR ev.data->>'account' NOT IN ('house-payouts', 'house-stakes', 'cashier')
               OR ev.data->>'direction' NOT IN ('debit', 'credit') THEN
                RETURN;
            END IF;
            client_transaction_id := 'correction:' || (ev.data->>'correction_id');
            kind := 'correction';
            currency := cur;
            amount := n;
            IF ev.data->>'direction' = 'debit' THEN
                accounts := ARRAY[player_account_id(id, cur), (ev.data->>'account') || ':' || cur];
            ELSE
                accounts := ARRAY[(ev.data->>'account') || ':' || cur, player_account_id(id, cur)];
            END IF;
            amounts := ARRAY[-n, n];
            RETURN NEXT;
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

-- Only the audit's login records a hold: the service's login records other significant events,
-- and a hold of its own making would be a correction's licence.
CREATE FUNCTION refuse_holds_but_the_audit_s() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_has_role(current_user, 'vegas_audit', 'USAGE') THEN
        RAISE EXCEPTION 'refused: only the audit''s login records a withdrawal-held event'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER holds_are_the_audit_s BEFORE INSERT ON significant_events
    FOR EACH ROW WHEN (NEW.kind = 'withdrawal-held') EXECUTE FUNCTION refuse_holds_but_the_audit_s();

-- A player's holds, newest first: what a waiting withdrawal, beat's verification and a
-- correction look up (rare rows, so a small partial index).
CREATE INDEX significant_events_holds ON significant_events (player_id, id)
    WHERE kind = 'withdrawal-held';
