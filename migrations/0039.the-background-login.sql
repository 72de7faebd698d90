-- depends: 0037.the-auditors-login
-- Background work answers to a login of its own (issue 36, item 10's starved signing). With the
-- service's login an insider wrote a checkpoint at the log's head each time the log moved, so
-- beat's signing found the head already covered and signed nothing for minutes (add_checkpoint
-- cannot check a signature: it is the service's Ed25519 key's). Now:
--
-- - the group role vegas_background alone signs the log's checkpoints (add_checkpoint); its
--   login (BACKGROUND_DATABASE_URL, held by the worker alone, never the web process) is a member
--   of vegas_app too, for the service's rights (granted where the logins are made, as a
--   superuser: an owner with CREATEROLE may not grant vegas_app on PostgreSQL 16);
-- - a request signs one on demand (POST /v1/checkpoints) only with an auditor's or an operator's
--   key as presented (add_checkpoint_as), recorded as made by that key's holder.
--
-- What the database's clock decides without a credential (0031: a game idle past the policy or
-- its deadline collected, a seat timed out, a duel cancelled unfilled or settled) stays the
-- service's too: a player's read or command finds a seat past its deadline and records it, as
-- the worker's sweep would, and the rules, not the login, decide whether it may be.

DO $$
BEGIN
    CREATE ROLE vegas_background NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

-- --- the log's checkpoints ----------------------------------------------------------------------

REVOKE EXECUTE ON FUNCTION add_checkpoint FROM PUBLIC, vegas_app;
GRANT EXECUTE ON FUNCTION add_checkpoint TO vegas_background;

-- A checkpoint signed on demand (POST /v1/checkpoints) by the holder of p_credential, a live
-- auditor's or operator's key, recorded as made by that key's holder; otherwise add_checkpoint's.
CREATE FUNCTION add_checkpoint_as(p_credential text, p_seq integer, p_position bigint,
                                  p_message text, p_signature text, p_key_id text,
                                  p_created_at timestamptz, p_streams text[],
                                  p_versions integer[], p_hashes text[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    who_role text;
    who_actor text;
BEGIN
    SELECT h.role, h.actor INTO who_role, who_actor FROM credential_holder(p_credential) h;
    IF who_role IS NULL OR who_role NOT IN ('auditor', 'operator') THEN
        RAISE EXCEPTION 'refused: a checkpoint is signed on demand by an auditor or an operator'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    PERFORM add_checkpoint(p_seq, p_position, p_message, p_signature, p_key_id, who_actor,
                           p_created_at, p_streams, p_versions, p_hashes);
END
$$;
REVOKE EXECUTE ON FUNCTION add_checkpoint_as FROM PUBLIC;
GRANT EXECUTE ON FUNCTION add_checkpoint_as TO vegas_app;
