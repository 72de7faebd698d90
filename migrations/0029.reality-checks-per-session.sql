-- depends: 0028.ledger-meaning
-- Reality checks per player session (issue 36, item 11). 0020 kept one acknowledgement per
-- player, so an acknowledgement in one session replaced another session's and made that one's
-- check due again. A player session is known by its player and its start (player_sessions'
-- created_at, the session_started every RealityCheckAcknowledged records): the table now keeps
-- each session's latest acknowledgement, filled here from the log (0020's rows hold only each
-- player's latest), and the trigger keeps it so. The service's login still only reads it.
ALTER TABLE player_reality_checks DROP CONSTRAINT player_reality_checks_pkey;
ALTER TABLE player_reality_checks ADD PRIMARY KEY (player_id, session_started);

INSERT INTO player_reality_checks (player_id, session_started, acknowledged_at)
SELECT substr(stream_id, 8)::uuid, (data->>'session_started')::timestamptz,
       max((data->>'acknowledged_at')::timestamptz)
  FROM events
 WHERE type = 'RealityCheckAcknowledged' AND stream_id LIKE 'player-%'
 GROUP BY 1, 2
ON CONFLICT (player_id, session_started) DO UPDATE
   SET acknowledged_at = EXCLUDED.acknowledged_at;

-- The same trigger (0020) now writes the acknowledgement's own session's row. CREATE OR
-- REPLACE keeps the owner and the revoked EXECUTE; the security attributes are restated, as it
-- resets what it does not say.
CREATE OR REPLACE FUNCTION project_reality_check()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO player_reality_checks (player_id, session_started, acknowledged_at)
    VALUES (substr(NEW.stream_id, 8)::uuid, (NEW.data->>'session_started')::timestamptz,
            (NEW.data->>'acknowledged_at')::timestamptz)
    ON CONFLICT (player_id, session_started) DO UPDATE
       SET acknowledged_at = EXCLUDED.acknowledged_at;
    RETURN NULL;
END
$$;
