-- depends: 0028.ledger-meaning
-- Who asks, checked by the database (issue 36: the insider). The service's login could INSERT
-- an operator key into api_keys and a ten-year session for any player into player_sessions, and
-- both were then honoured. Now vegas_app only reads those tables:
--
-- - staff keys are made and revoked with the owner's login (`flask --app service keys create`,
--   which connects as MIGRATION_DATABASE_URL), never the service's;
-- - a player session is minted only by mint_session, given a live operator key as presented
--   (the key itself, hashed here: the database keeps only hashes, so the service's login, which
--   can read the hashes, cannot present one); it is used, touched and revoked only with its own
--   token, or revoked by an operator's key.
--
-- A credential reaches these functions only as a bind parameter and is never put in a message,
-- so it appears in no log of the database's. credential_holder() is the one reading of a
-- credential; the functions that act for someone (these, and the writes that follow) call it.

-- A session's idle timeout (SESSION_IDLE_MINUTES when it was minted): the database decides
-- whether a session is live, so it keeps the timeout with the session. Sessions minted before
-- this migration keep the default's 30 minutes.
ALTER TABLE player_sessions ADD COLUMN idle_timeout interval NOT NULL DEFAULT '30 minutes'
    CHECK (idle_timeout > interval '0');

-- Who a credential, as presented, stands for: a live staff key's role and actor ('key:<id>',
-- service/services/access.py key_actor), or a live player session's player and start; no row
-- for anything else. The secret's SHA-256 is what the tables keep (access.py _digest).
-- Called only by the owner's functions below and in 0031 (EXECUTE is revoked from everyone
-- else), which run with the owner's rights and a fixed search_path: so no SECURITY DEFINER and
-- no SET clause of its own, which would cost a configuration save and restore on every call.
CREATE FUNCTION credential_holder(p_credential text)
RETURNS TABLE (role text, actor text, player_id uuid, session_started timestamptz)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    digest text := encode(sha256(convert_to(coalesce(p_credential, ''), 'UTF8')), 'hex');
BEGIN
    IF p_credential LIKE 'vsk\_%' THEN
        RETURN QUERY SELECT k.role, 'key:' || k.key_id::text, NULL::uuid, NULL::timestamptz
                       FROM api_keys k
                      WHERE k.key_hash = digest AND k.revoked_at IS NULL;
    ELSIF p_credential LIKE 'vsp\_%' THEN
        RETURN QUERY SELECT 'player'::text, s.player_id::text, s.player_id, s.created_at
                       FROM player_sessions s
                      WHERE s.token_hash = digest AND s.revoked_at IS NULL
                        AND s.expires_at > statement_timestamp()
                        AND s.last_used_at > statement_timestamp() - s.idle_timeout;
    END IF;
END
$$;
REVOKE EXECUTE ON FUNCTION credential_holder FROM PUBLIC;

-- The holder of a credential that must be one of p_roles, or insufficient_privilege naming what
-- was wanted (never the credential).
CREATE FUNCTION required_holder(p_credential text, p_roles text[])
RETURNS TABLE (role text, actor text, player_id uuid, session_started timestamptz)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    holder record;
BEGIN
    SELECT * INTO holder FROM credential_holder(p_credential) h;
    IF NOT FOUND OR NOT holder.role = ANY (p_roles) THEN
        RAISE EXCEPTION 'refused: this needs a live % credential', array_to_string(p_roles, ' or ')
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN QUERY SELECT holder.role, holder.actor, holder.player_id, holder.session_started;
END
$$;
REVOKE EXECUTE ON FUNCTION required_holder FROM PUBLIC;

-- A new session for a registered player (its PlayerRegistered in the log, not a projection),
-- minted by the operator whose key is presented; it lives at most a day.
CREATE FUNCTION mint_session(p_operator_key text, p_player uuid, p_token_hash text,
                             p_max_age interval, p_idle interval)
RETURNS TABLE (created_at timestamptz, expires_at timestamptz)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    minter text := (SELECT h.actor FROM required_holder(p_operator_key, ARRAY['operator']) h);
BEGIN
    IF NOT EXISTS (SELECT 1 FROM events e
                    WHERE e.stream_id = 'player-' || p_player::text AND e.version = 1
                      AND e.type = 'PlayerRegistered') THEN
        RAISE EXCEPTION 'no player %', p_player USING ERRCODE = 'foreign_key_violation';
    END IF;
    IF NOT (p_max_age > interval '0' AND p_max_age <= interval '24 hours'
            AND p_idle > interval '0' AND p_idle <= p_max_age) THEN
        RAISE EXCEPTION 'a session lives at most 24 hours, idle at most as long'
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN QUERY
    INSERT INTO player_sessions AS s (token_hash, player_id, created_by, expires_at,
                                      idle_timeout)
    VALUES (p_token_hash, p_player, minter, statement_timestamp() + p_max_age, p_idle)
    RETURNING s.created_at, s.expires_at;
END
$$;

-- Use a session: live only if not revoked, used within its idle timeout and before its hard
-- expiry; its use restarts the idle clock. Checking and touching are one statement, so a
-- session cannot be used after expiring. Only the token itself touches it.
CREATE FUNCTION touch_session(p_token text)
RETURNS TABLE (player_id uuid, expires_at timestamptz, created_at timestamptz)
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    UPDATE player_sessions s SET last_used_at = statement_timestamp()
     WHERE s.token_hash = encode(sha256(convert_to(p_token, 'UTF8')), 'hex')
       AND s.revoked_at IS NULL
       AND s.last_used_at > statement_timestamp() - s.idle_timeout
       AND s.expires_at > statement_timestamp()
    RETURNING s.player_id, s.expires_at, s.created_at
$$;

-- A player logging out: the session of the token presented, if it is live; its player.
CREATE FUNCTION revoke_session(p_token text)
RETURNS uuid
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    UPDATE player_sessions s SET revoked_at = statement_timestamp()
     WHERE s.token_hash = encode(sha256(convert_to(p_token, 'UTF8')), 'hex')
       AND s.revoked_at IS NULL
    RETURNING s.player_id
$$;

-- An operator revokes every live session of a player: how many there were.
CREATE FUNCTION revoke_player_sessions(p_operator_key text, p_player uuid)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    revoked integer;
BEGIN
    PERFORM 1 FROM required_holder(p_operator_key, ARRAY['operator']);
    UPDATE player_sessions s SET revoked_at = statement_timestamp()
     WHERE s.player_id = p_player AND s.revoked_at IS NULL;
    GET DIAGNOSTICS revoked = ROW_COUNT;
    RETURN revoked;
END
$$;

REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON api_keys, player_sessions FROM vegas_app;
REVOKE EXECUTE ON FUNCTION mint_session, touch_session, revoke_session, revoke_player_sessions
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mint_session, touch_session, revoke_session, revoke_player_sessions
    TO vegas_app;
