-- depends: 0019.gaming-controls
-- Reality checks (issue 24): each player's latest acknowledged check, kept by the database from
-- the RealityCheckAcknowledged events, as 0017 keeps the limits: the session it belonged to and
-- when. Play pauses while a check is due (service/core/safer_gambling.py); the service's login
-- may only read this, so it cannot skip a player's check.
CREATE TABLE player_reality_checks (
    player_id        uuid        PRIMARY KEY,
    session_started  timestamptz NOT NULL,
    acknowledged_at  timestamptz NOT NULL
);

CREATE FUNCTION project_reality_check()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO player_reality_checks (player_id, session_started, acknowledged_at)
    VALUES (substr(NEW.stream_id, 8)::uuid, (NEW.data->>'session_started')::timestamptz,
            (NEW.data->>'acknowledged_at')::timestamptz)
    ON CONFLICT (player_id) DO UPDATE
       SET session_started = EXCLUDED.session_started,
           acknowledged_at = EXCLUDED.acknowledged_at;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION project_reality_check FROM PUBLIC;

CREATE TRIGGER events_project_reality_checks
    AFTER INSERT ON events
    FOR EACH ROW
    WHEN (NEW.type = 'RealityCheckAcknowledged' AND NEW.stream_id LIKE 'player-%')
    EXECUTE FUNCTION project_reality_check();

GRANT SELECT ON player_reality_checks TO vegas_app;
