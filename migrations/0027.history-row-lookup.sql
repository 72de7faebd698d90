-- depends: 0026.hot-path-functions
-- A game command's write read its whole stream (issue 25: cost as the log grows). The
-- betting-history row takes its last event's time from the event at the row's version, joined
-- on h.version, a column of jsonb_populate_record's one row. PL/pgSQL keeps a generic plan for
-- the session, and with a stream's estimated size small (many short games beside the long one)
-- the planner read every event of the stream and filtered on the version: auto_explain under
-- the hot-path bench showed "Bitmap Heap Scan on events latest, Recheck Cond: (stream_id =
-- $1)", then "Rows Removed by Join Filter: 71" on a 72-event game, and events_pkey read about
-- as many index entries a play as the game had events. The version is now a variable of the
-- function, so the lookup is a parameter on both key columns: one index entry, whatever the
-- plan and the game's length.
--
-- Nothing else changes: the same rows, the same times, the same grants (CREATE OR REPLACE keeps
-- the owner and the EXECUTE grant; the security attributes of 0016 are restated, as CREATE OR
-- REPLACE resets what it does not say).
CREATE OR REPLACE FUNCTION record_game_events(p_stream text, p_expected integer, p_events text,
                                              p_history jsonb, p_over boolean, p_snapshot text,
                                              p_snapshot_mac text)
RETURNS SETOF events
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    head integer := p_expected + jsonb_array_length(p_events::jsonb);
    -- The history row's version (game_history.version, as jsonb_populate_record reads it).
    history_version integer := (p_history->>'version')::integer;
BEGIN
    RETURN QUERY SELECT * FROM append_events(p_stream, p_expected, p_events);
    IF p_history IS NOT NULL THEN
        PERFORM save_game_history(ROW(h.game_id, h.player_id, h.variant, h.stake, h.currency,
                                      h.win_rate, h.status, h.foundation_count, h.payout,
                                      h.refund, h.certification, h.end_reason, h.version,
                                      first.recorded_at, latest.recorded_at,
                                      CASE WHEN p_over THEN latest.recorded_at END
                                      )::game_history)
           FROM jsonb_populate_record(NULL::game_history, p_history) h
           JOIN events first ON first.stream_id = p_stream AND first.version = 1
           JOIN events latest ON latest.stream_id = p_stream
                             AND latest.version = history_version;
    END IF;
    IF p_snapshot IS NOT NULL THEN
        INSERT INTO game_snapshots AS s (stream_id, version, state, mac, started_at,
                                         last_event_at)
        SELECT p_stream, head, p_snapshot, p_snapshot_mac, first.recorded_at,
               latest.recorded_at
          FROM events first
          JOIN events latest ON latest.stream_id = p_stream AND latest.version = head
         WHERE first.stream_id = p_stream AND first.version = 1
        ON CONFLICT (stream_id) DO UPDATE
           SET version = EXCLUDED.version, state = EXCLUDED.state, mac = EXCLUDED.mac,
               last_event_at = EXCLUDED.last_event_at
         WHERE s.version < EXCLUDED.version;
    END IF;
END
$$;
