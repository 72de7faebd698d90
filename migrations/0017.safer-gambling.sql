-- depends: 0016.functions-not-tables
-- Safer gambling (issue 24): each player's limits, kept by the database from the events that
-- set them.
--
-- A limit the player (or an operator) sets is a LimitChanged event on the player's stream; a
-- limit's state is its last change: the value it replaced, the value set, and when that takes
-- effect (at once when stricter, a day later when looser: service/core/safer_gambling.py). The
-- service refuses wagers and deposits from this table, so its own login must not be able to
-- lift a limit: vegas_app may only read it, and the table changes only as a LimitChanged is
-- appended to the log (through append_events, the only way in), by a trigger the owner owns.
-- An auditor folding the player's events gets the same rows.
CREATE TABLE player_limits (
    player_id       uuid        NOT NULL,
    limit_name      text        NOT NULL,
    previous        bigint      CHECK (previous > 0),
    value           bigint      CHECK (value > 0),
    effective_from  timestamptz NOT NULL,
    changed_at      timestamptz NOT NULL,
    PRIMARY KEY (player_id, limit_name)
);

CREATE FUNCTION project_limit_change()
RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    -- 'player-<uuid>': the uuid follows the 7-character prefix.
    INSERT INTO player_limits (player_id, limit_name, previous, value, effective_from, changed_at)
    VALUES (substr(NEW.stream_id, 8)::uuid, NEW.data->>'limit',
            (NEW.data->>'previous')::bigint, (NEW.data->>'value')::bigint,
            (NEW.data->>'effective_from')::timestamptz, NEW.recorded_at)
    ON CONFLICT (player_id, limit_name) DO UPDATE
       SET previous = EXCLUDED.previous, value = EXCLUDED.value,
           effective_from = EXCLUDED.effective_from, changed_at = EXCLUDED.changed_at;
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION project_limit_change FROM PUBLIC;

CREATE TRIGGER events_project_limit_changes
    AFTER INSERT ON events
    FOR EACH ROW
    WHEN (NEW.type = 'LimitChanged' AND NEW.stream_id LIKE 'player-%')
    EXECUTE FUNCTION project_limit_change();

GRANT SELECT ON player_limits TO vegas_app;

-- A wager or deposit is checked against what the player's wallet did this day, week and month:
-- its postings since the month's (or week's) start, found by time.
CREATE INDEX postings_by_account_time ON postings (account_id, created_at);
