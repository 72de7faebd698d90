-- depends: 0025.lifetime-totals
-- Two helpers of a game command's write, recompiled on every call (issue 25, the hot path).
-- PostgreSQL keeps the plans of a PL/pgSQL function's statements for the session, but runs a
-- LANGUAGE sql function that it cannot inline by parsing and planning its body again each time
-- it is called from a cached plan: a profile of the backends under wrk's plays showed the
-- parser and planner (base_yyparse, pg_strtok, copyObject) working on every command. Measured
-- one play's statements on one connection, interleaved with the functions as they were: 0.83
-- backend CPU-ms a play before, 0.60 after (-28%), and the same with four connections.
--
-- Neither function's result changes: the hash is the same text for every event (events.chain
-- documents it; every stored hash still verifies), and the history row is written by the same
-- statement.

-- The chain's hash, now inlined into the caller's plan. A STRICT function is inlined only if
-- its body is strict too, which concat_ws is not, so STRICT goes: every argument append_events
-- passes is a NOT NULL column, and a NULL one would still fail the row's NOT NULL constraints.
CREATE OR REPLACE FUNCTION event_hash(prev_hash text, stream_id text, version integer,
                                      event_id uuid, type text, schema_version integer,
                                      recorded_at timestamptz, data text, metadata text)
RETURNS text LANGUAGE sql STABLE AS $$
    SELECT encode(sha256(convert_to(concat_ws(E'\n',
        prev_hash, stream_id, version, event_id, type, schema_version,
        to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        data, metadata), 'UTF8')), 'hex')
$$;

-- One game's betting-history row, inserted or refreshed (0014's rule, unchanged): an INSERT ...
-- ON CONFLICT is never inlined, so the body moves to PL/pgSQL, whose plan is kept.
CREATE OR REPLACE FUNCTION save_game_history(r game_history) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    INSERT INTO game_history AS h
    SELECT r.*
    ON CONFLICT (game_id) DO UPDATE
       SET status = EXCLUDED.status,
           foundation_count = EXCLUDED.foundation_count,
           payout = EXCLUDED.payout,
           refund = EXCLUDED.refund,
           end_reason = EXCLUDED.end_reason,
           version = EXCLUDED.version,
           last_event_at = EXCLUDED.last_event_at,
           ended_at = coalesce(h.ended_at, EXCLUDED.ended_at)
     WHERE h.version < EXCLUDED.version;
END
$$;
