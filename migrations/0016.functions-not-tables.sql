-- depends: 0015.advantage-play
-- The database is the last guard (issue 22). Assume the service's login is stolen: with INSERT
-- on the history tables and UPDATE on balances it could back-date an event, move a balance
-- without its postings, stop the checkpoints with one row, replace a stored reconciliation
-- and swap games' sealed secrets. So vegas_app keeps only SELECT on those tables and writes
-- them through the functions below, owned by the owner and run with its rights (SECURITY
-- DEFINER, with a fixed search_path so a caller cannot substitute its own objects). Each
-- function writes only what the service legitimately writes: the log's next positions with
-- the server's clock, balanced transactions whose postings move the balances, a checkpoint
-- that extends the last one and stays inside the log, a reconciliation stamped now, a secret
-- for a new game.

-- --- the log ------------------------------------------------------------------------------------

-- A position comes from the sequence, never from a caller (OVERRIDING SYSTEM VALUE needs
-- INSERT, which the service no longer has); and none at or below zero, which no reader counts.
ALTER TABLE events ADD CONSTRAINT events_position_positive CHECK (position > 0);

-- As 0014's, now run as the owner, and a stream's times never go backwards: an event is
-- stamped no earlier than the stream's head (clock_timestamp() may step back a little when the
-- server's clock is corrected).
CREATE OR REPLACE FUNCTION append_events(p_stream text, p_expected integer, p_events text)
RETURNS SETOF events
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    head integer;
    previous text;
    head_at timestamptz;
    at timestamptz;
    added events;
    item jsonb;
    n integer := 0;
BEGIN
    PERFORM pg_current_xact_id();  -- the transaction id first, then positions (log_horizon)
    at := clock_timestamp();
    SELECT e.version, e.hash, e.recorded_at INTO head, previous, head_at
      FROM events e WHERE e.stream_id = p_stream ORDER BY e.version DESC LIMIT 1;
    IF NOT FOUND THEN
        head := 0;
        previous := repeat('0', 64);  -- events.chain.GENESIS
    ELSIF head_at > at THEN
        at := head_at;
    END IF;
    IF head <> p_expected THEN
        RAISE EXCEPTION USING ERRCODE = 'unique_violation',
            MESSAGE = format('stream %s is at version %s, not %s', p_stream, head, p_expected);
    END IF;
    FOR item IN SELECT value FROM jsonb_array_elements(p_events::jsonb) LOOP
        n := n + 1;
        INSERT INTO events AS e (stream_id, version, event_id, type, schema_version, data,
                                 metadata, recorded_at, prev_hash, hash)
        VALUES (p_stream, head + n, (item->>0)::uuid, item->>1, (item->>2)::integer,
                (item->>3)::jsonb, (item->>4)::jsonb, at, previous,
                event_hash(previous, p_stream, head + n, (item->>0)::uuid, item->>1,
                           (item->>2)::integer, at, item->>3, item->>4))
        RETURNING e.* INTO added;
        previous := added.hash;
        RETURN NEXT added;
    END LOOP;
END
$$;

-- The game command's whole write (0014) appends through append_events and writes the game's
-- read-model rows; it runs as the owner too, so it needs no grant of its own on the log.
ALTER FUNCTION record_game_events(text, integer, text, jsonb, boolean, text, text)
    SECURITY DEFINER SET search_path = public, pg_temp;

REVOKE INSERT ON events FROM vegas_app;

-- --- the ledger ---------------------------------------------------------------------------------

-- Open accounts (and their zero balances) that do not exist yet: a new account starts at zero.
CREATE FUNCTION open_accounts(p_ids text[], p_kinds text[], p_currencies text[],
                              p_players uuid[])
RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    WITH opened AS (
        INSERT INTO accounts (account_id, kind, currency, player_id)
        SELECT * FROM unnest(p_ids, p_kinds, p_currencies, p_players)
        ON CONFLICT (account_id) DO NOTHING
        RETURNING account_id, kind, currency
    )
    INSERT INTO account_balances (account_id, kind, currency, balance)
    SELECT account_id, kind, currency, 0 FROM opened
$$;

-- Post one transaction: the only way a balance moves. The amounts must sum to zero (the
-- deferred trigger of 0003 checks the stored postings again at commit). Each account's balance
-- must still be the balance after its latest posting: a balance that differs was moved
-- without postings, and posting on it (above all, the no-overdraft check) is refused. A player
-- posting that would overdraw is left out, as before: the caller sees fewer postings than it
-- asked for and rolls back. The times are the server's (the columns' defaults).
CREATE FUNCTION post_transaction(p_transaction_id uuid, p_client_transaction_id text,
                                 p_kind text, p_fingerprint text, p_currency text,
                                 p_amount bigint, p_cause_stream text, p_cause_version integer,
                                 p_request_id text, p_accounts text[], p_amounts bigint[])
RETURNS TABLE (posting_id bigint, account_id text, amount bigint, balance_before bigint,
               balance_after bigint, created_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
#variable_conflict use_column
DECLARE
    drifted text;
BEGIN
    IF cardinality(p_accounts) IS DISTINCT FROM cardinality(p_amounts)
       OR (SELECT coalesce(sum(a), 0) FROM unnest(p_amounts) a) <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % does not balance', p_client_transaction_id
            USING ERRCODE = 'check_violation';  -- as 0003's trigger says it at commit
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

-- The projections rebuild's one write to balances: each given account's balance (its row made
-- again if it was lost) back to the balance after its latest posting, what it must be; how
-- many rows changed.
CREATE FUNCTION restore_balances(p_accounts text[])
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    changed integer;
BEGIN
    INSERT INTO account_balances (account_id, kind, currency, balance)
    SELECT a.account_id, a.kind, a.currency, 0 FROM accounts a
     WHERE a.account_id = ANY (p_accounts)
    ON CONFLICT (account_id) DO NOTHING;
    UPDATE account_balances b
       SET balance = coalesce((SELECT p.balance_after FROM postings p
                                WHERE p.account_id = b.account_id
                                ORDER BY p.posting_id DESC LIMIT 1), 0)
     WHERE b.account_id = ANY (p_accounts);
    GET DIAGNOSTICS changed = ROW_COUNT;
    RETURN changed;
END
$$;

REVOKE INSERT ON accounts, ledger_transactions, postings FROM vegas_app;
REVOKE INSERT, UPDATE, DELETE ON account_balances FROM vegas_app;

-- --- checkpoints --------------------------------------------------------------------------------

-- Record a checkpoint and the heads it saw change. It must be the next number, extend the
-- latest one, stay inside the log (a checkpoint beyond the log's last position would make
-- every later one look like "nothing new"), and be dated no later than now and no earlier
-- than the latest one: the signature is the service's,
-- which the database cannot check, so the service also checks the latest one before extending
-- it (service/anchors.py). Two makers racing for one number: unique_violation, as before.
CREATE FUNCTION add_checkpoint(p_seq integer, p_position bigint, p_message text,
                               p_signature text, p_key_id text, p_requested_by text,
                               p_created_at timestamptz, p_streams text[], p_versions integer[],
                               p_hashes text[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    last_seq integer;
    last_at timestamptz;
    log_end bigint := (SELECT coalesce(max(e.position), 0) FROM events e);
    last_position bigint;
BEGIN
    SELECT c.seq, c.created_at INTO last_seq, last_at
      FROM log_checkpoints c ORDER BY c.seq DESC LIMIT 1;
    -- The furthest any checkpoint inside the log reached (one beyond it, which no legitimate
    -- maker wrote, is not followed: it would stop every later one).
    SELECT coalesce(max(c.position), 0) INTO last_position
      FROM log_checkpoints c WHERE c.position <= log_end;
    IF p_seq <= last_seq THEN
        RAISE EXCEPTION USING ERRCODE = 'unique_violation',
            MESSAGE = format('checkpoint %s is already taken', p_seq);
    END IF;
    IF p_seq <> coalesce(last_seq, 0) + 1 THEN
        RAISE EXCEPTION 'checkpoint % does not follow checkpoint %', p_seq, coalesce(last_seq, 0)
            USING ERRCODE = 'check_violation';
    END IF;
    IF p_position <= last_position OR p_position > log_end THEN
        RAISE EXCEPTION 'checkpoint % at position % is not after % and inside the log (%)',
            p_seq, p_position, last_position, log_end USING ERRCODE = 'check_violation';
    END IF;
    IF p_created_at > statement_timestamp() OR p_created_at < last_at THEN
        RAISE EXCEPTION 'checkpoint % is dated %, not now', p_seq, p_created_at
            USING ERRCODE = 'check_violation';
    END IF;
    INSERT INTO log_checkpoints (seq, position, message, signature, key_id, requested_by,
                                 created_at)
    VALUES (p_seq, p_position, p_message, p_signature, p_key_id, p_requested_by, p_created_at);
    INSERT INTO checkpoint_heads (seq, stream_id, version, hash)
    SELECT p_seq, h.stream_id, h.version, h.hash
      FROM unnest(p_streams, p_versions, p_hashes) AS h(stream_id, version, hash);
END
$$;

REVOKE INSERT ON log_checkpoints, checkpoint_heads FROM vegas_app;

-- --- reconciliations ------------------------------------------------------------------------

-- Store a day's reconciliation as its newest, stamped with the server's time.
CREATE FUNCTION store_reconciliation(p_day date, p_result jsonb)
RETURNS timestamptz
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    INSERT INTO reconciliations (day, computed_at, result)
    VALUES (p_day, statement_timestamp(), p_result)
    RETURNING computed_at
$$;

REVOKE INSERT, UPDATE, DELETE ON reconciliations FROM vegas_app;

-- --- sealed secrets -------------------------------------------------------------------------

-- Keep a new game's encrypted secret. A game's secret is written once; re-encrypting it under
-- a new key (rekey_seed) is the only change, and the service checks every secret it decrypts
-- against the game's commitment, so a secret moved from another game is refused at use and
-- named by the audit.
CREATE FUNCTION keep_seed(p_game_id uuid, p_key_id text, p_ciphertext bytea, p_kind text)
RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    INSERT INTO game_seeds (game_id, key_id, ciphertext, kind)
    VALUES (p_game_id, p_key_id, p_ciphertext, p_kind)
$$;

-- One secret re-encrypted under a newer key: only a secret under another key changes.
CREATE FUNCTION rekey_seed(p_game_id uuid, p_key_id text, p_ciphertext bytea)
RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    UPDATE game_seeds SET key_id = p_key_id, ciphertext = p_ciphertext
     WHERE game_id = p_game_id AND key_id <> p_key_id
$$;

REVOKE INSERT, UPDATE, DELETE ON game_seeds FROM vegas_app;

REVOKE EXECUTE ON FUNCTION open_accounts, post_transaction, restore_balances, add_checkpoint,
    store_reconciliation, keep_seed, rekey_seed FROM PUBLIC;
GRANT EXECUTE ON FUNCTION open_accounts, post_transaction, restore_balances, add_checkpoint,
    store_reconciliation, keep_seed, rekey_seed TO vegas_app;
