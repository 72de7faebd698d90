-- depends: 0031.what-a-write-means
-- transactional: false
-- A sealed secret is written once, at the deal, for a game whose commitment no other has (issue
-- 36: the insider). keep_seed (0016) wrote any game's secret, so a fake deal carrying a live
-- game's commitment, given that game's ciphertext, had the service decrypt it, find it
-- "matching", pay and reveal the live game's seed; rekey_seed with garbage made a game
-- uncollectable. Now:
--
-- - keep_seed keeps a secret only for a game or duel whose first event was recorded in this
--   transaction (its deal), whose commitment (the game's Dealt, the duel's DuelOpened) no other
--   game or duel has (a certification deal's may be another certification deal's: a lab deals
--   one known seed again and again, for the sandbox), once (the primary key);
-- - rekey_seed (`flask --app service seeds rotate`) is the owner's: the service's login may not
--   re-encrypt anything, and the CLI connects as MIGRATION_DATABASE_URL.
--
-- Built outside a transaction (hence "transactional: false"): the index below is made
-- CONCURRENTLY so a live log keeps taking writes while it builds.

-- The deals by commitment: keep_seed's uniqueness check reads only these.
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_deals_by_commitment
    ON events ((data->>'seed_commitment'))
    WHERE type IN ('Dealt', 'DuelOpened');

CREATE OR REPLACE FUNCTION keep_seed(p_game_id uuid, p_key_id text, p_ciphertext bytea,
                                     p_kind text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    stream text;
    opened timestamptz;
    commitment text;
    certification boolean;
BEGIN
    -- The game's (or duel's) stream, opened by this transaction: a game id names a game-
    -- stream, a duel id a duel- stream (both uuids: they never meet).
    SELECT e.stream_id, e.recorded_at INTO stream, opened FROM events e
     WHERE e.stream_id IN ('game-' || p_game_id::text, 'duel-' || p_game_id::text)
       AND e.version = 1;
    IF NOT FOUND OR opened < transaction_timestamp() THEN
        RAISE EXCEPTION 'a secret is kept at its deal: % was not dealt in this transaction',
            p_game_id USING ERRCODE = 'check_violation';
    END IF;
    SELECT e.data->>'seed_commitment' INTO commitment FROM events e
     WHERE e.stream_id = stream AND e.type IN ('Dealt', 'DuelOpened')
     ORDER BY e.version LIMIT 1;
    certification := (SELECT coalesce((e.data->>'certification')::boolean, false) FROM events e
                       WHERE e.stream_id = stream AND e.version = 1);
    -- Another deal with this commitment: any, for a real one; a real one, for a certification
    -- deal (a test lab deals a known seed again and again, in the sandbox only).
    IF commitment IS NULL OR EXISTS (
        SELECT 1 FROM events e
          JOIN events o ON o.stream_id = e.stream_id AND o.version = 1
         WHERE e.data->>'seed_commitment' = commitment AND e.type IN ('Dealt', 'DuelOpened')
           AND e.stream_id <> stream
           AND NOT (certification AND coalesce((o.data->>'certification')::boolean, false)))
    THEN
        RAISE EXCEPTION 'the secret of % is kept only for a commitment no other game or duel has',
            p_game_id USING ERRCODE = 'check_violation';
    END IF;
    INSERT INTO game_seeds (game_id, key_id, ciphertext, kind)
    VALUES (p_game_id, p_key_id, p_ciphertext, p_kind);
END
$$;

REVOKE EXECUTE ON FUNCTION rekey_seed(uuid, text, bytea) FROM vegas_app;
