-- depends: 0037.the-auditors-login
-- The operator's switches hold without the writers' lock (issue 36; 0036 made the other checks
-- hold). A deal, a duel's join or a seat's deal reads gaming_controls (0019) under READ
-- COMMITTED and takes no lock a switch waits for, so without the writers' lock one could
-- commit just after a switch that covers it, the switch's answer already given. Now each
-- switch is an advisory lock of its own (its scope and target; one of the switch's rows may
-- not exist yet, a lock always can): the deal's check takes the four that cover it shared
-- (everyone's, the player's, the game's, its version's) before it reads the switches, and
-- recording a switch takes its own exclusive, before the row changes. So a switch waits for
-- the deals in flight it covers, and a deal after it waits for it and then reads it; a switch
-- on anything else stops no one. tests/integration/test_without_the_lock.py races both ways.
--
-- Advisory locks of two int4 keys, the first naming the switches: a key space apart from the
-- writers' lock and the leaders' (one bigint each). Two switches sharing a hash only wait for
-- each other's deals.

-- A switch's lock key.
CREATE FUNCTION gaming_switch_key(p_scope text, p_target text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT hashtext(p_scope || ' ' || p_target)
$$;

-- The switches that are off, read after the shared locks of the four that cover the deal of
-- p_game (a game's id, a duel's) at p_version (its rules_version) for p_player (a uuid's text,
-- as a player's switch names it). PL/pgSQL: the read is its own statement, so it sees a switch
-- committed while the locks waited. It writes nothing and grants nothing; the service's login
-- only reads gaming_controls.
CREATE FUNCTION switches_off_for(p_player text, p_game text, p_version text)
RETURNS TABLE (scope text, target text, reason text)
LANGUAGE plpgsql VOLATILE SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtext('gaming-switch'), gaming_switch_key(s, t))
       FROM (VALUES ('all', '*'), ('player', p_player), ('game', p_game),
                    ('version', p_version)) AS covering (s, t);
    RETURN QUERY
        SELECT c.scope, c.target, c.reason FROM gaming_controls c
         WHERE NOT c.enabled
         ORDER BY c.scope, c.target;
END
$$;
REVOKE EXECUTE ON FUNCTION switches_off_for(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION switches_off_for(text, text, text) TO vegas_app;

-- 0019's projection of a switch, taking the switch's lock first: whoever records it waits for
-- the deals in flight it covers, and holds off those after it until it commits.
CREATE OR REPLACE FUNCTION project_gaming_switch()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('gaming-switch'),
                                  gaming_switch_key(NEW.data->>'scope', NEW.data->>'target'));
    INSERT INTO gaming_controls (scope, target, enabled, reason, changed_at)
    VALUES (NEW.data->>'scope', NEW.data->>'target', (NEW.data->>'enabled')::boolean,
            NEW.data->>'reason', NEW.recorded_at)
    ON CONFLICT (scope, target) DO UPDATE
       SET enabled = EXCLUDED.enabled, reason = EXCLUDED.reason,
           changed_at = EXCLUDED.changed_at;
    RETURN NULL;
END
$$;
