-- depends: 0018.exclusions
-- Disable on demand (issue 24): the operator's switches of gaming, kept by the database from
-- the GamingSwitched events of the gaming-controls stream (each switch's state is its last
-- change: service/core/controls.py), as 0017 keeps the limits. Deals and duel joins are refused
-- while a switch that covers them is off; the service's login may only read the switches, so
-- switching one means recording who did it, when and why.
CREATE TABLE gaming_controls (
    scope       text        NOT NULL CHECK (scope IN ('all', 'game', 'version', 'player')),
    target      text        NOT NULL,
    enabled     boolean     NOT NULL,
    reason      text        NOT NULL,
    changed_at  timestamptz NOT NULL,
    PRIMARY KEY (scope, target)
);

CREATE FUNCTION project_gaming_switch()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO gaming_controls (scope, target, enabled, reason, changed_at)
    VALUES (NEW.data->>'scope', NEW.data->>'target', (NEW.data->>'enabled')::boolean,
            NEW.data->>'reason', NEW.recorded_at)
    ON CONFLICT (scope, target) DO UPDATE
       SET enabled = EXCLUDED.enabled, reason = EXCLUDED.reason,
           changed_at = EXCLUDED.changed_at;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION project_gaming_switch FROM PUBLIC;

CREATE TRIGGER events_project_gaming_switches
    AFTER INSERT ON events
    FOR EACH ROW
    WHEN (NEW.type = 'GamingSwitched' AND NEW.stream_id = 'gaming-controls')
    EXECUTE FUNCTION project_gaming_switch();

GRANT SELECT ON gaming_controls TO vegas_app;

-- Each switch is also a significant event of its own kind, for the auditors' log.
ALTER TABLE significant_events DROP CONSTRAINT significant_events_kind_check;
ALTER TABLE significant_events ADD CONSTRAINT significant_events_kind_check
    CHECK (kind IN ('void', 'configuration', 'big-win', 'session', 'collection-failed',
                    'certification', 'advantage-play', 'gaming-control'));
