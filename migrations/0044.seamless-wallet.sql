-- depends: 0043.priced-below-strong-play
-- The seamless wallet (issue 37): a deployment whose players' money is the operator's, called
-- for each bet, win and rollback (service/services/seamless.py; the wire is
-- service/gateways/operator_wallet.py). What the database now knows and checks:
--
-- - the deployment's wallet mode (wallet_mode, one row), switched only by switch_wallet_mode,
--   and only while nothing of the old mode is left: no open game, no player wallet holding
--   money, no wallet transaction unsettled. In seamless mode the cashier's events are refused;
-- - a round's wallet transactions are a stream of their own, 'wallet-<round id>' (stream_kind,
--   stream_event_types): WalletCallSent (before each call), WalletCallAnswered (its answer and
--   what it means), WalletPendingFlagged and WalletReviewMarked;
-- - who records them (refusal_of's wallet rules, below): a round's bet by its own player, in
--   seamless mode, once; its answer right after it, by the same; wins, rollbacks, flags and
--   reviews only by background work's login (vegas_background: the worker, never the web
--   process), a win only for a collected game, for exactly its winnings, and only once the
--   audit has verified the player through their wallet's head (verified_points: no money
--   leaves before the history behind it verifies); a rollback only of a bet with no confirmed
--   answer or of a voided game's; never a second answer to a settled movement;
-- - in seamless mode a real game's StakePlaced needs its round's bet confirmed by the wallet,
--   for exactly its stake, by its player (so no card is dealt, the Dealt beside it, before);
--   a real duel's SeatTaken likewise its seat round's bet (the fee), confirmed and not rolled
--   back; a seat round's win is the player's prize in the settled duel (0 for a loser), its
--   rollback the fee of a cancelled duel, or of a bet that never became a seat;
-- - the server's ledger mirrors what the operator's wallet confirmed, against an account of a
--   new kind, 'operator-wallet:<player id>', which may go below zero: a confirmed bet brings the
--   stake in (operator-wallet -> player), a confirmed win takes the winnings back out, a
--   confirmed rollback of a confirmed bet returns the stake (player -> operator-wallet);
--   ledger_entry_of maps them (service/core/ledger.py wallet_entry_for is the other copy);
-- - an operator resolves a movement under review (WalletReviewResolved, with an operator's key,
--   naming a movement under review): a win or rollback sent again (retry), any movement the
--   operator's wallet did apply by other means (settled: mirrored as if confirmed), a bet it
--   never applied (not-applied);
-- - wallet_head no longer counts postings that take money back to the operator's wallet (a win
--   or a rollback confirmed), as it never counted withdrawals: they passed the gate themselves.
--
-- refusal_of and ledger_entry_of are wrapped, not restated: the earlier bodies keep their names
-- with a suffix and the new ones add the wallet's rules before delegating.

-- --- the mode ------------------------------------------------------------------------------------

CREATE TABLE wallet_mode (
    one         boolean     PRIMARY KEY DEFAULT true CHECK (one),
    mode        text        NOT NULL CHECK (mode IN ('transfer', 'seamless')),
    changed_at  timestamptz NOT NULL DEFAULT statement_timestamp()
);
INSERT INTO wallet_mode (mode) VALUES ('transfer');
GRANT SELECT ON wallet_mode TO vegas_app, vegas_audit;

CREATE FUNCTION deployment_wallet_mode() RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT mode FROM wallet_mode
$$;
GRANT EXECUTE ON FUNCTION deployment_wallet_mode TO vegas_app, vegas_audit;

-- --- a round's wallet transactions ------------------------------------------------------------------

-- One row a movement (the worker's queue, finance's wallet CSV), kept by the service in the
-- transaction that records the movement's events; the events and the ledger are the record.
CREATE TABLE wallet_transactions (
    transaction_uuid  uuid        PRIMARY KEY,
    round_id          uuid        NOT NULL,
    player_id         uuid        NOT NULL,
    external_ref      text        NOT NULL,
    method            text        NOT NULL CHECK (method IN ('bet', 'win', 'rollback')),
    reference         uuid,
    amount            bigint      NOT NULL CHECK (amount >= 0),
    wire_amount       bigint      NOT NULL CHECK (wire_amount >= 0),
    currency          char(3)     NOT NULL,
    game_code         text        NOT NULL,
    -- A duel seat's round: the duel its fee is for (the seat is held while the bet is sent).
    duel_id           uuid,
    -- The operator's session token the movement is sent with (never shown: README).
    token             text        NOT NULL,
    -- due: to send; sent: on the wire (leased_until: by whom, till when); confirmed, refused,
    -- unknown (a bet's: rolled back by its rollback), review (retries stopped).
    state             text        NOT NULL
                      CHECK (state IN ('due', 'sent', 'confirmed', 'refused', 'unknown',
                                       'review')),
    attempts          integer     NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT statement_timestamp(),
    first_sent_at     timestamptz,
    -- When an operator last sent it again after a review (its thresholds count from then).
    resumed_at        timestamptz,
    next_attempt_at   timestamptz NOT NULL DEFAULT statement_timestamp(),
    leased_until      timestamptz,
    -- Which sweep holds the lease (a claim's own id): it alone extends it to send.
    lease_owner       uuid,
    final_at          timestamptz,
    last_status       text,
    review_reason     text,
    flagged_seconds   integer     NOT NULL DEFAULT 0
);
-- One unsettled movement a player at a time: a deal waits for the last round's win or
-- rollback (409), and two deals of one player cannot both send a bet.
CREATE UNIQUE INDEX wallet_transactions_one_unsettled ON wallet_transactions (player_id)
    WHERE state IN ('due', 'sent');
CREATE INDEX wallet_transactions_due ON wallet_transactions (next_attempt_at)
    WHERE state IN ('due', 'sent');
CREATE INDEX wallet_transactions_by_round ON wallet_transactions (round_id);
CREATE INDEX wallet_transactions_by_day ON wallet_transactions (created_at);
CREATE INDEX wallet_transactions_by_duel ON wallet_transactions (duel_id) WHERE duel_id IS NOT NULL;
-- A duel's seat rounds' bets, found by the duel (the seat's and the settlement's rules below).
CREATE INDEX events_wallet_bets_by_duel ON events ((data->>'duel_id'))
    WHERE type = 'WalletCallSent' AND version = 1;
GRANT SELECT, INSERT, UPDATE ON wallet_transactions TO vegas_app;
GRANT SELECT ON wallet_transactions TO vegas_audit;

-- Every call and its answer, exactly as on the wire (bodies and signatures), kept with the round.
CREATE TABLE wallet_calls (
    request_uuid       uuid        PRIMARY KEY,
    transaction_uuid   uuid        NOT NULL REFERENCES wallet_transactions,
    sent_at            timestamptz NOT NULL DEFAULT statement_timestamp(),
    request_body       bytea       NOT NULL,
    request_signature  text        NOT NULL,
    answered_at        timestamptz,
    http_status        integer,
    answer_body        bytea,
    answer_signature   text,
    status             text,
    outcome            text,
    problem            text
);
CREATE INDEX wallet_calls_by_transaction ON wallet_calls (transaction_uuid, sent_at);
GRANT SELECT, INSERT, UPDATE ON wallet_calls TO vegas_app;
GRANT SELECT ON wallet_calls TO vegas_audit;

-- The operator's game-session token a player session was opened with (POST
-- /v1/players/{id}/sessions wallet_token): its bets are sent with it.
CREATE TABLE wallet_sessions (
    token_hash    text        PRIMARY KEY REFERENCES player_sessions,
    player_id     uuid        NOT NULL,
    wallet_token  text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT statement_timestamp()
);
GRANT SELECT, INSERT ON wallet_sessions TO vegas_app;

-- --- switching the mode ----------------------------------------------------------------------------

-- The mode the deployment starts in (service/bootstrap.py at start): unchanged, or switched
-- when nothing of the old mode is left; a configuration significant event says so.
CREATE FUNCTION switch_wallet_mode(p_mode text) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    current_mode text;
    blocker text;
BEGIN
    SELECT mode INTO current_mode FROM wallet_mode FOR UPDATE;
    IF current_mode = p_mode THEN
        RETURN current_mode;
    END IF;
    IF p_mode NOT IN ('transfer', 'seamless') THEN
        RAISE EXCEPTION 'no wallet mode %', p_mode USING ERRCODE = 'check_violation';
    END IF;
    SELECT CASE
        WHEN EXISTS (SELECT 1 FROM game_history WHERE ended_at IS NULL AND NOT certification)
            THEN 'a game is open'
        WHEN EXISTS (SELECT 1 FROM account_balances WHERE kind = 'player' AND balance <> 0)
            THEN 'a player''s wallet holds money'
        WHEN EXISTS (SELECT 1 FROM wallet_transactions WHERE state IN ('due', 'sent'))
            THEN 'a wallet transaction is unsettled'
        END INTO blocker;
    IF blocker IS NOT NULL THEN
        RAISE EXCEPTION 'the wallet mode stays %: % (settle everything first)', current_mode,
            blocker USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    UPDATE wallet_mode SET mode = p_mode, changed_at = statement_timestamp();
    INSERT INTO significant_events (kind, actor, details)
    VALUES ('configuration', 'system',
            jsonb_build_object('wallet_mode', p_mode, 'previous', current_mode));
    RETURN p_mode;
END
$$;
REVOKE EXECUTE ON FUNCTION switch_wallet_mode FROM PUBLIC;
GRANT EXECUTE ON FUNCTION switch_wallet_mode TO vegas_app;

-- --- streams and accounts -----------------------------------------------------------------------

CREATE OR REPLACE FUNCTION stream_kind(p_stream text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN p_stream LIKE 'game-________-____-____-____-____________'
             AND p_stream ~ '^game-[-0-9a-f]*$'
             AND char_length(replace(p_stream, '-', '')) = 36 THEN 'game'
        WHEN p_stream LIKE 'duel-________-____-____-____-____________'
             AND p_stream ~ '^duel-[-0-9a-f]*$'
             AND char_length(replace(p_stream, '-', '')) = 36 THEN 'duel'
        WHEN p_stream LIKE 'player-________-____-____-____-____________'
             AND p_stream ~ '^player-[-0-9a-f]*$'
             AND char_length(replace(p_stream, '-', '')) = 38 THEN 'player'
        WHEN p_stream = 'gaming-controls' THEN 'controls'
        WHEN p_stream LIKE 'wallet-________-____-____-____-____________'
             AND p_stream ~ '^wallet-[-0-9a-f]*$'
             AND char_length(replace(p_stream, '-', '')) = 38 THEN 'wallet'
    END
$$;

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
        WHEN 'wallet' THEN ARRAY['WalletCallSent', 'WalletCallAnswered', 'WalletPendingFlagged',
                                 'WalletReviewMarked', 'WalletReviewResolved']
    END
$$;

ALTER TABLE accounts DROP CONSTRAINT accounts_kind_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_check
    CHECK (kind IN ('player', 'house-stakes', 'house-payouts', 'cashier', 'duel-pot',
                    'house-rake', 'sandbox', 'operator-wallet'));
ALTER TABLE accounts DROP CONSTRAINT accounts_kind_follows_id;
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_follows_id CHECK (
    CASE kind
        WHEN 'player' THEN account_id = 'player:' || player_id::text
        WHEN 'sandbox' THEN account_id = 'sandbox:' || player_id::text
        WHEN 'house-stakes' THEN account_id = 'house-stakes:' || currency
        WHEN 'house-payouts' THEN account_id = 'house-payouts:' || currency
        WHEN 'cashier' THEN account_id = 'cashier:' || currency
        WHEN 'house-rake' THEN account_id = 'house-rake:' || currency
        WHEN 'duel-pot' THEN account_id ~ '^duel-pot:[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$'
        -- The mirror of a player's money at the operator (no player_id: it is not a wallet of
        -- the server's, and may go below zero).
        WHEN 'operator-wallet'
            THEN account_id ~ '^operator-wallet:[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$'
        ELSE false
    END
);

ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check;
ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check
    CHECK (kind IN ('deposit', 'withdrawal', 'stake', 'winnings', 'refund', 'duel-fee',
                    'duel-prize', 'duel-refund', 'correction', 'wallet-bet', 'wallet-win',
                    'wallet-rollback'));

ALTER TABLE significant_events DROP CONSTRAINT significant_events_kind_check;
ALTER TABLE significant_events ADD CONSTRAINT significant_events_kind_check
    CHECK (kind IN ('void', 'configuration', 'big-win', 'session', 'collection-failed',
                    'certification', 'advantage-play', 'gaming-control', 'safer-gambling',
                    'log-stalled', 'withdrawal-held', 'beats-the-house', 'wallet'));

CREATE OR REPLACE FUNCTION wallet_head(p_wallet text) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT p.posting_id FROM postings p
      JOIN ledger_transactions t ON t.transaction_id = p.transaction_id
     WHERE p.account_id = p_wallet
       AND t.kind NOT IN ('withdrawal', 'wallet-win', 'wallet-rollback')
     ORDER BY p.posting_id DESC
     LIMIT 1
$$;

-- --- what a wallet event means ----------------------------------------------------------------

-- The login asking is background work's (the worker), not the web process's.
CREATE FUNCTION asked_by_background() RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT pg_has_role(session_user, 'vegas_background', 'MEMBER')
$$;

-- Whether a movement is settled as of before version p_before of its round's stream: a definite
-- answer (confirmed, refused, review) or a review since the last time an operator sent it again
-- (a retry), or an operator's resolution that settled it.
CREATE FUNCTION wallet_tx_settled(p_stream text, p_tx text, p_before integer) RETURNS boolean
LANGUAGE sql STABLE AS $$
    WITH retried AS (
        SELECT coalesce(max(r.version), 0) AS since FROM events r
         WHERE r.stream_id = p_stream AND r.version < p_before
           AND r.type = 'WalletReviewResolved' AND r.data->>'transaction_uuid' = p_tx
           AND r.data->>'action' = 'retry')
    SELECT EXISTS (
        SELECT 1 FROM events a, retried
         WHERE a.stream_id = p_stream AND a.version < p_before
           AND a.data->>'transaction_uuid' = p_tx
           AND ((a.version > retried.since
                 AND ((a.type = 'WalletCallAnswered'
                       AND a.data->>'outcome' IN ('confirmed', 'refused', 'review'))
                      OR a.type = 'WalletReviewMarked'))
                OR (a.type = 'WalletReviewResolved' AND a.data->>'action' <> 'retry')))
$$;

-- Whether a round's bet stands applied at the operator as of before p_before: confirmed by its
-- answer, or settled by an operator's resolution.
CREATE FUNCTION wallet_bet_applied(p_stream text, p_bet text, p_before integer) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM events a
         WHERE a.stream_id = p_stream AND a.version < p_before
           AND a.data->>'transaction_uuid' = p_bet
           AND ((a.type = 'WalletCallAnswered' AND a.data->>'outcome' = 'confirmed')
                OR (a.type = 'WalletReviewResolved' AND a.data->>'action' = 'settled')))
$$;

-- An operator's resolution of a movement under review (the operator's key, checked by the
-- caller): what it may do with the movement, and that the movement is under review.
CREATE FUNCTION wallet_resolution_refusal(ev events) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
DECLARE
    tx text := ev.data->>'transaction_uuid';
    sent events;
    retried integer;
BEGIN
    SELECT coalesce(max(r.version), 0) INTO retried FROM events r
     WHERE r.stream_id = ev.stream_id AND r.version < ev.version
       AND r.type = 'WalletReviewResolved' AND r.data->>'transaction_uuid' = tx;
    IF NOT EXISTS (SELECT 1 FROM events a
                    WHERE a.stream_id = ev.stream_id AND a.version > retried
                      AND a.version < ev.version AND a.data->>'transaction_uuid' = tx
                      AND (a.type = 'WalletReviewMarked'
                           OR (a.type = 'WalletCallAnswered'
                               AND a.data->>'outcome' = 'review'))) THEN
        RETURN format('wallet transaction %s is not under review', tx);
    END IF;
    SELECT * INTO sent FROM events s
     WHERE s.stream_id = ev.stream_id AND s.type = 'WalletCallSent'
       AND s.data->>'transaction_uuid' = tx
     ORDER BY s.version LIMIT 1;
    IF ev.data->>'action' = 'retry' THEN
        IF ev.data->>'method' NOT IN ('win', 'rollback') THEN
            RETURN 'a bet is never sent again: it is settled or found not applied';
        END IF;
        RETURN NULL;
    END IF;
    IF sent.version IS NULL OR sent.data->>'method' IS DISTINCT FROM ev.data->>'method'
       OR sent.data->>'amount' IS DISTINCT FROM ev.data->>'amount'
       OR sent.data->>'currency' IS DISTINCT FROM ev.data->>'currency' THEN
        RETURN format('a resolution of wallet transaction %s names it as it was sent', tx);
    END IF;
    IF ev.data->>'action' = 'not-applied' AND ev.data->>'method' <> 'bet' THEN
        RETURN 'a win or a rollback is owed: it is sent again or settled, never dropped';
    END IF;
    IF ev.data->>'action' NOT IN ('settled', 'not-applied') THEN
        RETURN format('no resolution %s', ev.data->>'action');
    END IF;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION wallet_resolution_refusal FROM PUBLIC;

-- A duel seat round's win or rollback (background work's, of the round's bet, checked above):
-- the win is the player's prize in the settled duel, closing the round; the rollback returns the
-- fee of a cancelled duel, or of a bet the wallet never confirmed or that never became a seat.
CREATE FUNCTION seat_round_refusal(ev events, first events)
RETURNS text
LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
DECLARE
    duel text := first.data->>'duel_id';
    player text := first.data->>'player_id';
    ended events;
    seated boolean;
BEGIN
    SELECT * INTO ended FROM events e
     WHERE e.stream_id = 'duel-' || duel AND e.type IN ('DuelSettled', 'DuelCancelled');
    seated := EXISTS (SELECT 1 FROM events s
                       WHERE s.stream_id = 'duel-' || duel AND s.type = 'SeatTaken'
                         AND s.data->>'player_id' = player);
    IF ev.data->>'method' = 'win' THEN
        IF ended.type IS DISTINCT FROM 'DuelSettled' OR NOT seated
           OR NOT (ev.data->>'round_closed')::boolean
           OR (ev.data->>'amount')::bigint IS DISTINCT FROM (
                  SELECT coalesce(sum((p->>'amount')::bigint), 0)
                    FROM jsonb_array_elements(ended.data->'payouts') p
                   WHERE p->>'player_id' = player) THEN
            RETURN format('a win of duel %s''s seat round is the player''s prize, closing it',
                          duel);
        END IF;
        IF NOT EXISTS (SELECT 1 FROM events s
                        WHERE s.stream_id = ev.stream_id AND s.version < ev.version
                          AND s.type = 'WalletCallSent' AND s.data->>'method' = 'win')
           AND NOT EXISTS (
               SELECT 1 FROM verified_points v
                WHERE v.player_id = player::uuid
                  AND v.through_posting >= coalesce(wallet_head('player:' || player), 0)) THEN
            RETURN format('a win of duel %s''s seat round waits for the player''s history to '
                          'verify', duel);
        END IF;
        RETURN NULL;
    END IF;
    IF (ev.data->>'amount')::bigint IS DISTINCT FROM (first.data->>'amount')::bigint THEN
        RETURN format('a rollback of duel %s''s seat round is of its fee', duel);
    END IF;
    IF wallet_bet_applied(ev.stream_id, first.data->>'transaction_uuid', ev.version)
       AND seated AND ended.type IS DISTINCT FROM 'DuelCancelled' THEN
        RETURN format('the fee of a seat of duel %s stands: only its cancellation returns it',
                      duel);
    END IF;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION seat_round_refusal FROM PUBLIC;

-- A wallet event's refusal, or NULL (the same conventions as refusal_of: 'refused:' for who
-- asks, anything else for what the write means).
CREATE FUNCTION wallet_refusal_of(who_role text, who_actor text, who_player uuid,
                                  ev events, first events, prior events)
RETURNS text
LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
DECLARE
    id text := substr(ev.stream_id, 8);
    tx text := ev.data->>'transaction_uuid';
    sent events;
    bet events;
    game_first events;
    game_last events;
BEGIN
    IF NOT ev.type = ANY (stream_event_types('wallet')) THEN
        RETURN format('a %s is not an event of a wallet stream', ev.type);
    END IF;
    IF ev.metadata->>'role' IS DISTINCT FROM who_role
       OR (who_role <> 'system' AND ev.metadata->>'actor' IS DISTINCT FROM who_actor) THEN
        RETURN format('refused: %s v%s names another actor than the one asking',
                      ev.stream_id, ev.version);
    END IF;
    IF (ev.version = 1) <> (ev.type = 'WalletCallSent' AND ev.data->>'method' = 'bet')
       OR first.data->>'round_id' IS DISTINCT FROM id THEN
        RETURN format('wallet %s''s stream opens with its round''s bet, once', id);
    END IF;
    IF ev.version > 1 AND ev.data->>'player_id' IS NOT NULL
       AND ev.data->>'player_id' IS DISTINCT FROM first.data->>'player_id' THEN
        RETURN format('wallet %s is player %s''s', id, first.data->>'player_id');
    END IF;
    -- The bet, and its answer: the round's own player, as they deal.
    IF ev.type = 'WalletCallSent' AND ev.data->>'method' = 'bet' THEN
        IF deployment_wallet_mode() <> 'seamless' THEN
            RETURN 'a bet is sent in seamless mode only';
        END IF;
        IF who_role <> 'player' OR who_player::text IS DISTINCT FROM ev.data->>'player_id' THEN
            RETURN 'refused: a round''s bet is sent by its own player';
        END IF;
        RETURN NULL;
    END IF;
    IF ev.type = 'WalletCallAnswered' THEN
        IF prior.type IS DISTINCT FROM 'WalletCallSent'
           OR prior.data->>'request_uuid' IS DISTINCT FROM ev.data->>'request_uuid'
           OR prior.data->>'transaction_uuid' IS DISTINCT FROM tx
           OR prior.data->>'method' IS DISTINCT FROM ev.data->>'method'
           OR prior.data->>'amount' IS DISTINCT FROM ev.data->>'amount'
           OR prior.data->>'currency' IS DISTINCT FROM ev.data->>'currency' THEN
            RETURN format('an answer follows its own call: %s v%s', ev.stream_id, ev.version);
        END IF;
        IF prior.metadata->>'role' IS DISTINCT FROM who_role
           OR prior.metadata->>'actor' IS DISTINCT FROM ev.metadata->>'actor' THEN
            RETURN 'refused: a call is answered to whoever sent it';
        END IF;
        IF wallet_tx_settled(ev.stream_id, tx, ev.version) THEN
            RETURN format('wallet transaction %s is settled: no answer follows', tx);
        END IF;
        RETURN NULL;
    END IF;
    -- An operator's resolution of a movement under review.
    IF ev.type = 'WalletReviewResolved' THEN
        IF who_role <> 'operator' THEN
            RETURN 'refused: a review is resolved by an operator';
        END IF;
        RETURN wallet_resolution_refusal(ev);
    END IF;
    -- Everything else is background work's, on the worker's own login.
    IF who_role <> 'system' OR NOT asked_by_background() THEN
        RETURN 'refused: a round''s win, rollback, flag or review is background work''s';
    END IF;
    IF ev.type IN ('WalletPendingFlagged', 'WalletReviewMarked') THEN
        -- A movement sent; or, for a review, the round's game ended (a win held back before
        -- its first call: its history failed verification).
        IF NOT EXISTS (SELECT 1 FROM events s
                        WHERE s.stream_id = ev.stream_id AND s.type = 'WalletCallSent'
                          AND s.data->>'transaction_uuid' = tx)
           AND NOT (ev.type = 'WalletReviewMarked'
                    AND EXISTS (SELECT 1 FROM events g
                                 WHERE g.stream_id = 'game-' || id
                                   AND g.type IN ('Collected', 'Voided'))) THEN
            RETURN format('wallet %s sent no transaction %s', id, tx);
        END IF;
        RETURN NULL;
    END IF;
    -- A win or a rollback, of this round's bet, for its player and currency.
    bet := first;
    IF ev.data->>'reference' IS DISTINCT FROM bet.data->>'transaction_uuid'
       OR ev.data->>'currency' IS DISTINCT FROM bet.data->>'currency'
       OR ev.data->>'round_id' IS DISTINCT FROM id THEN
        RETURN format('a %s of wallet %s refers to its bet', ev.data->>'method', id);
    END IF;
    SELECT * INTO sent FROM events s
     WHERE s.stream_id = ev.stream_id AND s.version < ev.version AND s.type = 'WalletCallSent'
       AND s.data->>'transaction_uuid' = tx
     ORDER BY s.version LIMIT 1;
    IF FOUND AND (sent.data->>'method' IS DISTINCT FROM ev.data->>'method'
                  OR sent.data->>'amount' IS DISTINCT FROM ev.data->>'amount') THEN
        RETURN format('wallet transaction %s is re-sent as it was first sent', tx);
    END IF;
    IF wallet_tx_settled(ev.stream_id, tx, ev.version) THEN
        RETURN format('wallet transaction %s is settled: it is not sent again', tx);
    END IF;
    IF first.data->>'duel_id' IS NOT NULL THEN
        RETURN seat_round_refusal(ev, first);
    END IF;
    SELECT * INTO game_first FROM events g
     WHERE g.stream_id = 'game-' || id AND g.version = 1;
    SELECT * INTO game_last FROM events g
     WHERE g.stream_id = 'game-' || id ORDER BY g.version DESC LIMIT 1;
    IF ev.data->>'method' = 'win' THEN
        IF game_last.type IS DISTINCT FROM 'Collected'
           OR game_first.data->>'player_id' IS DISTINCT FROM first.data->>'player_id'
           OR (ev.data->>'amount')::bigint
              IS DISTINCT FROM coalesce((game_last.data->>'winnings')::bigint, 0)
           OR NOT (ev.data->>'round_closed')::boolean THEN
            RETURN format('a win of wallet %s is its collected game''s winnings, closing it', id);
        END IF;
        -- No money leaves before the history behind it verifies (0037): the first call only.
        IF sent.version IS NULL AND NOT EXISTS (
               SELECT 1 FROM verified_points v
                WHERE v.player_id = (first.data->>'player_id')::uuid
                  AND v.through_posting >= coalesce(
                      wallet_head('player:' || (first.data->>'player_id')), 0)) THEN
            RETURN format('a win of wallet %s waits for the player''s history to verify', id);
        END IF;
        RETURN NULL;
    END IF;
    IF ev.data->>'method' = 'rollback' THEN
        IF (ev.data->>'amount')::bigint IS DISTINCT FROM (bet.data->>'amount')::bigint THEN
            RETURN format('a rollback of wallet %s is of its bet''s amount', id);
        END IF;
        -- A bet with no confirmed answer (unknown, or no answer at all), or a voided game's.
        IF EXISTS (SELECT 1 FROM events a
                    WHERE a.stream_id = ev.stream_id AND a.type = 'WalletCallAnswered'
                      AND a.data->>'transaction_uuid' = bet.data->>'transaction_uuid'
                      AND a.data->>'outcome' = 'refused') THEN
            RETURN format('wallet %s''s bet was refused: nothing to roll back', id);
        END IF;
        IF wallet_bet_applied(ev.stream_id, bet.data->>'transaction_uuid', ev.version)
           AND game_last.type IS DISTINCT FROM 'Voided' AND game_first.version IS NOT NULL THEN
            RETURN format('wallet %s''s bet stands: only a void rolls it back', id);
        END IF;
        RETURN NULL;
    END IF;
    RETURN format('a wallet call is a bet, a win or a rollback, not %s', ev.data->>'method');
END
$$;
REVOKE EXECUTE ON FUNCTION wallet_refusal_of FROM PUBLIC;

-- The earlier rules under a name of their own; refusal_of adds the wallet's and delegates.
ALTER FUNCTION refusal_of(text, text, uuid, timestamptz, events, events, events)
    RENAME TO refusal_of_before_wallets;

CREATE FUNCTION refusal_of(who_role text, who_actor text, who_player uuid,
                           who_session timestamptz, ev events, first events, prior events)
RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    refused text;
BEGIN
    IF ev.stream_id LIKE 'wallet-%' THEN
        IF stream_kind(ev.stream_id) IS NULL THEN
            RETURN format('stream %s is of no kind the service records', ev.stream_id);
        END IF;
        IF who_role IN ('auditor', 'finance')
           OR (who_role = 'operator' AND ev.type <> 'WalletReviewResolved') THEN
            RETURN format('refused: the %s role records no wallet call', who_role);
        END IF;
        RETURN wallet_refusal_of(who_role, who_actor, who_player, ev, first, prior);
    END IF;
    refused := refusal_of_before_wallets(who_role, who_actor, who_player, who_session, ev,
                                         first, prior);
    IF refused IS NOT NULL THEN
        RETURN refused;
    END IF;
    IF ev.type IN ('FundsDeposited', 'FundsWithdrawn')
       AND deployment_wallet_mode() = 'seamless' THEN
        RETURN format('a %s is the operator''s own wallet''s in seamless mode', ev.type);
    END IF;
    -- In seamless mode a real game is dealt only on its bet confirmed, for its stake.
    IF ev.type = 'StakePlaced' AND deployment_wallet_mode() = 'seamless'
       AND NOT coalesce((ev.data->>'certification')::boolean, false)
       AND ev.data->>'duel_id' IS NULL
       AND NOT EXISTS (
           SELECT 1 FROM events b
             JOIN events a ON a.stream_id = b.stream_id AND a.type = 'WalletCallAnswered'
                          AND a.data->>'transaction_uuid' = b.data->>'transaction_uuid'
                          AND a.data->>'outcome' = 'confirmed'
            WHERE b.stream_id = 'wallet-' || substr(ev.stream_id, 6) AND b.version = 1
              AND b.data->>'player_id' = ev.data->>'player_id'
              AND (b.data->>'amount')::bigint = (ev.data->>'stake')::bigint
              AND b.data->>'currency' = ev.data->>'currency') THEN
        RETURN format('game %s is dealt only once its bet is confirmed by the operator''s '
                      'wallet', substr(ev.stream_id, 6));
    END IF;
    -- A real duel's seat is taken only on its fee's bet confirmed (and not rolled back).
    IF ev.type = 'SeatTaken' AND deployment_wallet_mode() = 'seamless'
       AND NOT coalesce((first.data->>'certification')::boolean, false)
       AND NOT EXISTS (
           SELECT 1 FROM events b
             JOIN events a ON a.stream_id = b.stream_id AND a.type = 'WalletCallAnswered'
                          AND a.data->>'transaction_uuid' = b.data->>'transaction_uuid'
                          AND a.data->>'outcome' = 'confirmed'
            WHERE b.type = 'WalletCallSent' AND b.version = 1
              AND b.data->>'duel_id' = substr(ev.stream_id, 6)
              AND b.data->>'player_id' = ev.data->>'player_id'
              AND (b.data->>'amount')::bigint = (ev.data->>'fee')::bigint
              AND NOT EXISTS (SELECT 1 FROM events r
                               WHERE r.stream_id = b.stream_id AND r.type = 'WalletCallSent'
                                 AND r.data->>'method' = 'rollback')) THEN
        RETURN format('a seat of duel %s is taken only once its fee is confirmed by the '
                      'operator''s wallet', substr(ev.stream_id, 6));
    END IF;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION refusal_of FROM PUBLIC;

-- --- what a wallet event moves ---------------------------------------------------------------------

ALTER FUNCTION ledger_entry_of(text, integer) RENAME TO ledger_entry_of_before_wallets;

CREATE FUNCTION ledger_entry_of(p_stream text, p_version integer)
RETURNS TABLE (client_transaction_id text, kind text, currency text, amount bigint,
               accounts text[], amounts bigint[])
LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    ev events;
    first events;
    player text;
    n bigint;
BEGIN
    IF p_stream NOT LIKE 'wallet-%' THEN
        RETURN QUERY SELECT * FROM ledger_entry_of_before_wallets(p_stream, p_version);
        RETURN;
    END IF;
    -- A confirmed answer, or an operator's resolution that the movement was applied (core/
    -- ledger.py wallet_entry_for): the movement its call named, on the round's player, in the
    -- bet's currency.
    SELECT * INTO ev FROM events e WHERE e.stream_id = p_stream AND e.version = p_version;
    SELECT * INTO first FROM events e WHERE e.stream_id = p_stream AND e.version = 1;
    IF NOT ((ev.type = 'WalletCallAnswered' AND ev.data->>'outcome' = 'confirmed')
            OR (ev.type = 'WalletReviewResolved' AND ev.data->>'action' = 'settled'))
       OR first.type IS DISTINCT FROM 'WalletCallSent'
       OR first.data->>'round_id' IS DISTINCT FROM substr(p_stream, 8)
       OR ev.data->>'currency' IS DISTINCT FROM first.data->>'currency' THEN
        RETURN;
    END IF;
    player := first.data->>'player_id';
    n := (ev.data->>'amount')::bigint;
    IF n IS NULL OR n <= 0 THEN
        RETURN;
    END IF;
    IF ev.data->>'method' = 'rollback'
       AND NOT wallet_bet_applied(p_stream, first.data->>'transaction_uuid', p_version) THEN
        RETURN;  -- a bet the wallet never applied: the mirror never brought it in
    END IF;
    client_transaction_id := 'wallet:' || (ev.data->>'transaction_uuid');
    kind := 'wallet-' || (ev.data->>'method');
    currency := first.data->>'currency';
    amount := n;
    IF ev.data->>'method' = 'bet' THEN
        accounts := ARRAY['operator-wallet:' || player, 'player:' || player];
    ELSIF ev.data->>'method' IN ('win', 'rollback') THEN
        accounts := ARRAY['player:' || player, 'operator-wallet:' || player];
    ELSE
        RETURN;
    END IF;
    amounts := ARRAY[-n, n];
    RETURN NEXT;
END
$$;
GRANT EXECUTE ON FUNCTION ledger_entry_of TO vegas_audit;
