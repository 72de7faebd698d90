-- depends: 0017.safer-gambling
-- Time-outs and self-exclusion (issue 24): each player's exclusion, kept by the database from
-- the PlayerExcluded events, as 0017 keeps the limits. The event carries the exclusion in force
-- after it (it only ever extends: service/core/safer_gambling.py), so the row is the last
-- event's. The service refuses deals, duel joins and deposits from this row; its own login may
-- only read it, so it cannot end anyone's exclusion early.
CREATE TABLE player_exclusions (
    player_id   uuid        PRIMARY KEY,
    kind        text        NOT NULL CHECK (kind IN ('time-out', 'self-exclusion')),
    until       timestamptz NOT NULL,
    length      text        NOT NULL,
    changed_at  timestamptz NOT NULL
);

CREATE FUNCTION project_exclusion()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO player_exclusions (player_id, kind, until, length, changed_at)
    VALUES (substr(NEW.stream_id, 8)::uuid, NEW.data->>'kind',
            (NEW.data->>'until')::timestamptz, NEW.data->>'length', NEW.recorded_at)
    ON CONFLICT (player_id) DO UPDATE
       SET kind = EXCLUDED.kind, until = EXCLUDED.until, length = EXCLUDED.length,
           changed_at = EXCLUDED.changed_at;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION project_exclusion FROM PUBLIC;

CREATE TRIGGER events_project_exclusions
    AFTER INSERT ON events
    FOR EACH ROW
    WHEN (NEW.type = 'PlayerExcluded' AND NEW.stream_id LIKE 'player-%')
    EXECUTE FUNCTION project_exclusion();

GRANT SELECT ON player_exclusions TO vegas_app;
