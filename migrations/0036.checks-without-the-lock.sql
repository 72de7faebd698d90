-- depends: 0034.stalls-named
-- The checks that read rows they do not write hold without the writers' lock (issue 36: the
-- insider; UnitOfWork.lock_for_write is to go). Under READ COMMITTED two deals, joins or
-- deposits each read before the other commits; each check now holds by the database:
--
-- - one open game a player: game_history_one_open_game (0004), a partial unique index on the
--   rows the product counts as open (ended_at IS NULL; a duel seat's game has no row);
-- - a player's limits, exclusion and session-time limit: lock_player below, taken before the
--   checks read by every path that stakes, pays a fee, deals a seat or deposits, and by every
--   change to them (a limit, an exclusion, a reality check), so the second of two waits for
--   the first to commit and then reads what it wrote;
-- - a duel's seats: its stream, appended at the version read (the events' primary key makes a
--   concurrent second append at that version fail: refusal_of's count of seats reads a prefix
--   no one else can grow);
-- - a seed's commitment: deal_commitments below, claimed by keep_seed.
-- tests/integration/test_without_the_lock.py races each one with the writers' lock skipped.

-- A player's row, locked until the caller's transaction ends (FOR NO KEY UPDATE: the strongest
-- lock nothing else takes, so only these callers queue on it). It writes nothing and grants
-- nothing, so it asks for no credential; the service's login may not lock the table itself
-- (it only reads players, 0033). No row: no such player.
CREATE FUNCTION lock_player(p_player uuid)
RETURNS TABLE (player_id uuid, external_ref text, currency char(3), created_at timestamptz)
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    SELECT p.player_id, p.external_ref, p.currency, p.created_at
      FROM players p
     WHERE p.player_id = p_player
       FOR NO KEY UPDATE
$$;
REVOKE EXECUTE ON FUNCTION lock_player(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION lock_player(uuid) TO vegas_app;

-- Each commitment a secret was kept for, once: the first game or duel kept for it. keep_seed's
-- search of the log (0032) cannot see a deal another transaction has not committed; a row here
-- can, since a second insert of its key waits for the first's transaction and then fails. Only
-- deals kept from now on are here: those already in the log are found by keep_seed's search,
-- as before. Written only by keep_seed; the service's login has no right on it.
CREATE TABLE deal_commitments (
    commitment     text        PRIMARY KEY,
    game_id        uuid        NOT NULL,  -- a game's id, or a duel's
    certification  boolean     NOT NULL,  -- certification deals may share one (0032)
    kept_at        timestamptz NOT NULL DEFAULT statement_timestamp()
);
CREATE TRIGGER deal_commitments_append_only BEFORE UPDATE OR DELETE ON deal_commitments
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER deal_commitments_no_truncate BEFORE TRUNCATE ON deal_commitments
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
REVOKE ALL ON deal_commitments FROM PUBLIC;

-- 0032's keep_seed, claiming the commitment first: a real deal's claim fails on any other's
-- row, a certification deal's on a real deal's; either waits for a deal not yet committed.
CREATE OR REPLACE FUNCTION keep_seed(p_game_id uuid, p_key_id text, p_ciphertext bytea,
                                     p_kind text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    stream text;
    opened timestamptz;
    committed_to text;
    certification boolean;
    shared boolean;
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
    SELECT e.data->>'seed_commitment' INTO committed_to FROM events e
     WHERE e.stream_id = stream AND e.type IN ('Dealt', 'DuelOpened')
     ORDER BY e.version LIMIT 1;
    certification := (SELECT coalesce((e.data->>'certification')::boolean, false) FROM events e
                       WHERE e.stream_id = stream AND e.version = 1);
    IF committed_to IS NOT NULL THEN
        INSERT INTO deal_commitments (commitment, game_id, certification)
        VALUES (committed_to, p_game_id, certification)
        ON CONFLICT (commitment) DO NOTHING;
        IF NOT FOUND THEN
            SELECT d.certification INTO shared FROM deal_commitments d
             WHERE d.commitment = committed_to;
            IF NOT (certification AND shared) THEN
                committed_to := NULL;  -- refused below, as 0032 refuses it
            END IF;
        END IF;
    END IF;
    -- Another deal with this commitment: any, for a real one; a real one, for a certification
    -- deal (a test lab deals a known seed again and again, in the sandbox only).
    IF committed_to IS NULL OR EXISTS (
        SELECT 1 FROM events e
          JOIN events o ON o.stream_id = e.stream_id AND o.version = 1
         WHERE e.data->>'seed_commitment' = committed_to AND e.type IN ('Dealt', 'DuelOpened')
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
