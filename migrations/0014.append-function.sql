-- depends: 0013.certification-sandbox
-- Appending to a stream as one server-side function (events/postgres.py calls it): it checks the
-- stream's head against the expected version, chains each event's hash on the one before and
-- inserts them. A head other than the expected one is an error (unique_violation, as when a
-- racing writer takes the same version), never zero rows, so the statements a caller pipelines
-- after it (projections, money, COMMIT) cannot commit without the events.
--
-- Appends no longer queue on one lock. Positions are still handed out at insert, not commit,
-- so a position may become visible after a higher one; readers that tail the log by position
-- read only up to log_horizon() (below), which waits out the transactions that could still
-- commit a lower one. That needs each appending transaction to hold its transaction id before
-- it takes a position, which is why the function asks for it first.
CREATE FUNCTION append_events(p_stream text, p_expected integer, p_events text)
RETURNS SETOF events
LANGUAGE plpgsql VOLATILE AS $$
-- p_events: a JSON array with one [event_id, type, schema_version, data, metadata] a new
-- event, data and metadata as the exact JSON texts the hash covers (JSON strings keep them
-- byte for byte). One text parameter: cheaper to send than five arrays.
DECLARE
    head integer;
    previous text;
    at timestamptz;
    added events;
    item jsonb;
    n integer := 0;
BEGIN
    PERFORM pg_current_xact_id();  -- the transaction id first, then positions (log_horizon)
    at := clock_timestamp();
    SELECT e.version, e.hash INTO head, previous
      FROM events e WHERE e.stream_id = p_stream ORDER BY e.version DESC LIMIT 1;
    IF NOT FOUND THEN
        head := 0;
        previous := repeat('0', 64);  -- events.chain.GENESIS
    END IF;
    IF head <> p_expected THEN
        RAISE EXCEPTION USING ERRCODE = 'unique_violation',
            MESSAGE = format('stream %s is at version %s, not %s', p_stream, head, p_expected);
    END IF;
    FOR item IN SELECT value FROM jsonb_array_elements(p_events::jsonb) LOOP
        n := n + 1;
        INSERT INTO events AS e (stream_id, version, event_id, type, schema_version, data,
                                 metadata, recorded_at, prev_hash, hash)
        VALUES (p_stream, head + n, (item->>0)::uuid, item->>1, (item->>2)::integer,
                (item->>3)::jsonb, (item->>4)::jsonb, at, previous,
                event_hash(previous, p_stream, head + n, (item->>0)::uuid, item->>1,
                           (item->>2)::integer, at, item->>3, item->>4))
        RETURNING e.* INTO added;
        previous := added.hash;
        RETURN NEXT added;
    END LOOP;
END
$$;
REVOKE EXECUTE ON FUNCTION append_events FROM PUBLIC;
GRANT EXECUTE ON FUNCTION append_events TO vegas_app;

-- The highest position below which the log is final: every position up to it that will ever be
-- visible is visible once this returns. Every position up to the sequence's last value has been
-- handed out, each to a transaction that held its id before (append_events asks for it first).
-- The caller then takes an id of its own, newer than all of theirs (ids are handed out in
-- order), and waits until no transaction with an older id is running (the snapshot's xmin has
-- reached its own); nothing can appear at or below that value any more. (A snapshot's list of
-- running ids is not enough: since PostgreSQL 14 it leaves out those above the newest finished
-- one.) Appending transactions are short, so the wait is too; statement_timeout bounds it.
CREATE FUNCTION log_horizon() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    handed_out bigint;
    mine xid8;
    oldest xid8;
BEGIN
    SELECT CASE WHEN is_called THEN last_value ELSE 0 END INTO handed_out
      FROM events_position_seq;
    mine := pg_current_xact_id();
    LOOP
        -- A statement of its own each time, so each sees a fresh snapshot.
        SELECT pg_snapshot_xmin(pg_current_snapshot()) INTO oldest;
        EXIT WHEN oldest >= mine;
        PERFORM pg_sleep(0.0005);
    END LOOP;
    RETURN handed_out;
END
$$;
REVOKE EXECUTE ON FUNCTION log_horizon FROM PUBLIC;
GRANT EXECUTE ON FUNCTION log_horizon TO vegas_app;
GRANT SELECT ON SEQUENCE events_position_seq TO vegas_app;

-- The log after a position, in position order, up to the horizon: a tailing reader that moves
-- its checkpoint to the last position it read never skips an event that commits late. The read
-- is a statement of its own, so its snapshot is taken after the wait.
CREATE FUNCTION read_log(p_after bigint, p_limit integer) RETURNS SETOF events
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    upto bigint := log_horizon();
BEGIN
    RETURN QUERY SELECT * FROM events e
                  WHERE e.position > p_after AND e.position <= upto
                  ORDER BY e.position LIMIT p_limit;
END
$$;
REVOKE EXECUTE ON FUNCTION read_log FROM PUBLIC;
GRANT EXECUTE ON FUNCTION read_log TO vegas_app;

-- A game's folded state every few versions (service/snapshots.py), so a process that has never
-- seen the game reads this row and the events after it rather than the whole stream. A cache of
-- the fold, never a source of truth: written by the command that appends the events it folds,
-- MACed under the service's key (a snapshot the service did not write is not read), and
-- ignored for the stream whenever in doubt.
CREATE TABLE game_snapshots (
    stream_id      text        PRIMARY KEY,
    version        integer     NOT NULL,  -- the stream version the state is the fold of
    state          text        NOT NULL,  -- its JSON, exactly as MACed
    mac            text        NOT NULL,  -- HMAC-SHA256 of state under the service's key
    started_at     timestamptz NOT NULL,  -- when the stream's first event was recorded
    last_event_at  timestamptz NOT NULL   -- when the event at version was recorded
);
GRANT SELECT, INSERT, UPDATE ON game_snapshots TO vegas_app;

-- One game's betting-history row, inserted or refreshed: the one rule for it, for commands
-- (below) and for the rebuild (service/storage/projections.py). An older version never
-- overwrites a newer one, and a game's end time, once set, stays.
CREATE FUNCTION save_game_history(r game_history) RETURNS void
LANGUAGE sql VOLATILE AS $$
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
     WHERE h.version < EXCLUDED.version
$$;
REVOKE EXECUTE ON FUNCTION save_game_history FROM PUBLIC;
GRANT EXECUTE ON FUNCTION save_game_history TO vegas_app;

-- A game command's whole write as one statement (service/storage/game_writes.py): the events,
-- appended as above; the game's betting-history row (p_history NULL for a duel seat's game,
-- whose duel's rows tell its story); and, when one is due, its snapshot. The rows' times are
-- read from the events just appended, so the caller need not know them. Sent alone, outside
-- any transaction, it is the command's whole transaction. A command that moves money calls it
-- inside a transaction with the ledger's statements.
CREATE FUNCTION record_game_events(p_stream text, p_expected integer, p_events text,
                                   p_history jsonb, p_over boolean, p_snapshot text,
                                   p_snapshot_mac text)
RETURNS SETOF events
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    head integer := p_expected + jsonb_array_length(p_events::jsonb);
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
           JOIN events latest ON latest.stream_id = p_stream AND latest.version = h.version;
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
REVOKE EXECUTE ON FUNCTION record_game_events FROM PUBLIC;
GRANT EXECUTE ON FUNCTION record_game_events TO vegas_app;
