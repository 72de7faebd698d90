-- depends: 0030.who-asks
-- What each append means, and who may ask for it (issue 36: the insider). append_events (0014,
-- 0016) checks only a write's shape: with the service's login alone an insider appended a
-- Collected to a stream of its own naming, a FundsDeposited to any player's stream, a
-- PlayerExcluded ending a self-exclusion yesterday, GamingSwitched events turning gaming back on,
-- a second Collected on a finished game, and whole games dealt from a seed it chose. Now the
-- service appends only through record_events (and record_game_events, which calls it), given
-- the credential as presented, and append_events is the owner's alone (the event store's
-- contract suite and the store bench run as the owner on streams of their own). For every event
-- appended, record_events checks:
--
-- - the stream is of a known kind, by its name (service/core/streams.py): game-<uuid>,
--   duel-<uuid>, player-<uuid> or gaming-controls; each kind has its own event types
--   (events/catalog.py GAME_EVENT_TYPES, DUEL_EVENT_TYPES, PLAYER_EVENT_TYPES,
--   CONTROL_EVENT_TYPES), and opens with its own first event, once (a game with the
--   StakePlaced naming it, a duel with its DuelOpened, a player with their PlayerRegistered);
-- - the stream's player is fixed by that first event, and nothing follows a game's or a duel's
--   end (Collected or Voided; DuelSettled or DuelCancelled);
-- - who asks, as credential_holder (0030) reads the credential: a game's own player plays it;
--   an operator voids, deposits, withdraws, registers, switches, and deals certification games;
--   a player or an operator sets limits and exclusions and preferences; only the player, in
--   the session the check counts, acknowledges a reality check. Without a credential (the
--   service's own tasks) only what the database's clock decides may be appended: a game
--   collected as timed out once idle past collection_policy or past its clock's deadline, a
--   duel seat timed out past its deadline or its deal-by time, a duel cancelled unfilled past
--   its fill-by time, a duel settled once every seat has finished;
-- - the event's actor and role (its metadata) are the credential's holder's;
-- - an exclusion only ever extends (never ends before the one in force, never in the past, a
--   self-exclusion in force stays one), and a looser limit takes effect no sooner than 24 hours
--   on the database's clock (service/core/safer_gambling.py, the rules' other copy; the tests
--   in tests/integration/test_insider.py hold them to the same answers).
--
-- A refusal is insufficient_privilege (who may not) or check_violation (what may not be), its
-- message naming the rule; the credential appears in no message.

-- The database's clock for the rules above: the time the transaction began, so a service that
-- reads it first (service/storage/limits.py DB_CLOCK_SQL) decides on the very time the rules
-- check. (A test database's owner redefines it to follow a test's moved clock; no login but the
-- owner can.)
CREATE FUNCTION db_clock() RETURNS timestamptz
LANGUAGE sql STABLE AS $$ SELECT transaction_timestamp() $$;

-- How long a game must lie idle before the service's collector may collect it as timed out:
-- the floor of IDLE_COLLECT_AFTER_SECONDS, which only the owner changes.
CREATE TABLE collection_policy (
    only_row    boolean  PRIMARY KEY DEFAULT true CHECK (only_row),
    idle_after  interval NOT NULL CHECK (idle_after > interval '0')
);
INSERT INTO collection_policy (idle_after) VALUES (interval '24 hours');
GRANT SELECT ON collection_policy TO vegas_app;

-- A stream's kind from its name: NULL for a name no service stream has.
CREATE FUNCTION stream_kind(p_stream text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN p_stream ~ '^game-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$' THEN 'game'
        WHEN p_stream ~ '^duel-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$' THEN 'duel'
        WHEN p_stream ~ '^player-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$' THEN 'player'
        WHEN p_stream = 'gaming-controls' THEN 'controls'
    END
$$;

-- Each kind's event types (events/catalog.py, held equal by test_insider.py).
CREATE FUNCTION stream_event_types(p_kind text) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE p_kind
        WHEN 'game' THEN ARRAY['StakePlaced', 'Dealt', 'ClockStarted', 'CardDrawn',
                               'StockRecycled', 'PilesGathered', 'Reshuffled', 'CardPicked',
                               'CardMoved', 'CardTurned', 'PairRemoved', 'Undone',
                               'AutoCompleted', 'Collected', 'Voided']
        WHEN 'duel' THEN ARRAY['DuelOpened', 'SeatTaken', 'SeatDealt', 'SeatFinished',
                               'DuelSettled', 'DuelCancelled']
        WHEN 'player' THEN ARRAY['PlayerRegistered', 'FundsDeposited', 'FundsWithdrawn',
                                 'PreferencesChanged', 'LimitChanged', 'PlayerExcluded',
                                 'RealityCheckAcknowledged']
        WHEN 'controls' THEN ARRAY['GamingSwitched']
    END
$$;

-- Why the event ev, just appended to its stream, may not be, or NULL if it may: a who-rule's
-- reason starts 'refused:' (insufficient_privilege), any other a what-rule's (check_violation).
-- ``who`` is (role, actor, player_id, session_started), role 'system' for no credential; first
-- and prior are the stream's first event and the one before ev (record_events reads each once an
-- append, not once an event: a game command's path).
-- No SET clause (nor SECURITY DEFINER): only record_events, the owner's, calls it, with its own
-- fixed search_path and rights, and a SET clause costs a configuration save and restore on every
-- call (about 60 us of a play's write, measured).
CREATE FUNCTION refusal_of(who_role text, who_actor text, who_player uuid,
                           who_session timestamptz, ev events, first events, prior events)
RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    kind text := stream_kind(ev.stream_id);
    id text;
    owner text;
    certification boolean;
    seats integer;
    taken integer;
    seat_player text;
    since interval;
    previous jsonb;
    held bigint;
    wanted bigint;
BEGIN
    IF kind IS NULL THEN
        RETURN format('stream %s is of no kind the service records', ev.stream_id);
    END IF;
    IF NOT ev.type = ANY (stream_event_types(kind)) THEN
        RETURN format('a %s is not an event of a %s stream', ev.type, kind);
    END IF;
    IF ev.metadata->>'role' IS DISTINCT FROM who_role
       OR (who_role <> 'system' AND ev.metadata->>'actor' IS DISTINCT FROM who_actor) THEN
        RETURN format('refused: %s v%s names another actor than the one asking',
                      ev.stream_id, ev.version);
    END IF;
    -- A player's events name the session they were made in (its start, which a reality
    -- check's figures count by): only the session presented.
    IF who_role = 'player' AND ev.metadata ? 'session_started'
       AND (ev.metadata->>'session_started')::timestamptz IS DISTINCT FROM who_session THEN
        RETURN format('refused: %s v%s names another session than the one asking',
                      ev.stream_id, ev.version);
    END IF;
    IF who_role IN ('auditor', 'finance') THEN
        RETURN format('refused: the %s role records nothing', who_role);
    END IF;
    IF kind = 'controls' THEN
        IF who_role <> 'operator' THEN
            RETURN 'refused: only an operator switches gaming';
        END IF;
        RETURN NULL;
    END IF;

    IF kind = 'player' THEN
        id := substr(ev.stream_id, 8);
        IF (ev.version = 1) <> (ev.type = 'PlayerRegistered')
           OR first.data->>'player_id' IS DISTINCT FROM id THEN
            RETURN format('player %s''s stream opens with their PlayerRegistered, once', id);
        END IF;
        IF ev.type IN ('PlayerRegistered', 'FundsDeposited', 'FundsWithdrawn') THEN
            IF who_role <> 'operator' THEN
                RETURN format('refused: a %s needs an operator', ev.type);
            END IF;
            RETURN NULL;
        END IF;
        IF ev.type = 'RealityCheckAcknowledged' THEN
            IF who_role <> 'player' OR who_player::text <> id
               OR (ev.data->>'session_started')::timestamptz IS DISTINCT FROM who_session THEN
                RETURN 'refused: only the player acknowledges a reality check, in its own session';
            END IF;
            RETURN NULL;
        END IF;
        IF NOT (who_role = 'operator' OR (who_role = 'player' AND who_player::text = id)) THEN
            RETURN format('refused: only player %s or an operator records a %s', id, ev.type);
        END IF;
        IF ev.type = 'PlayerExcluded' THEN
            -- Only ever extends: never ends in the past or before the one in force, and a
            -- self-exclusion in force stays one (safer_gambling.py exclude).
            SELECT e.data INTO previous FROM events e
             WHERE e.stream_id = ev.stream_id AND e.version < ev.version
               AND e.type = 'PlayerExcluded'
             ORDER BY e.version DESC LIMIT 1;
            IF (ev.data->>'until')::timestamptz <= db_clock()
               OR (previous IS NOT NULL AND (previous->>'until')::timestamptz > db_clock()
                   AND ((ev.data->>'until')::timestamptz < (previous->>'until')::timestamptz
                        OR (previous->>'kind' = 'self-exclusion'
                            AND ev.data->>'kind' <> 'self-exclusion'))) THEN
                RETURN format('an exclusion only ever extends: %s v%s would end or shorten one',
                              ev.stream_id, ev.version);
            END IF;
        ELSIF ev.type = 'LimitChanged' THEN
            -- Looser (higher, or none) than the value in force: no sooner than 24 hours on
            -- (safer_gambling.py change, LOOSENING_DELAY).
            SELECT e.data INTO previous FROM events e
             WHERE e.stream_id = ev.stream_id AND e.version < ev.version
               AND e.type = 'LimitChanged' AND e.data->>'limit' = ev.data->>'limit'
             ORDER BY e.version DESC LIMIT 1;
            held := CASE WHEN previous IS NULL THEN NULL
                         WHEN (previous->>'effective_from')::timestamptz <= db_clock()
                         THEN (previous->>'value')::bigint
                         ELSE (previous->>'previous')::bigint END;
            wanted := (ev.data->>'value')::bigint;
            IF held IS NOT NULL AND (wanted IS NULL OR wanted > held)
               AND (ev.data->>'effective_from')::timestamptz < db_clock() + interval '24 hours'
            THEN
                RETURN format('a looser limit waits 24 hours: %s v%s would loosen %s sooner',
                              ev.stream_id, ev.version, ev.data->>'limit');
            END IF;
        END IF;
        RETURN NULL;
    END IF;

    IF kind = 'game' THEN
        id := substr(ev.stream_id, 6);
        IF (ev.version = 1) <> (ev.type = 'StakePlaced')
           OR first.data->>'game_id' IS DISTINCT FROM id THEN
            RETURN format('game %s''s stream opens with the StakePlaced naming it, once', id);
        END IF;
        IF prior.type IN ('Collected', 'Voided') THEN
            RETURN format('game %s has ended: nothing follows its %s', id, prior.type);
        END IF;
        owner := first.data->>'player_id';
        certification := coalesce((first.data->>'certification')::boolean, false);
        IF who_role = 'player' THEN
            IF who_player::text IS DISTINCT FROM owner THEN
                RETURN format('refused: game %s is not this player''s', id);
            END IF;
            IF ev.type = 'Voided' OR (ev.type = 'Collected' AND ev.data->>'reason' = 'timeout')
            THEN
                RETURN format('refused: a player does not record a game''s %s',
                              CASE ev.type WHEN 'Voided' THEN 'void' ELSE 'time-out' END);
            END IF;
            IF ev.type = 'StakePlaced' AND ev.data->>'duel_id' IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM events s
                                WHERE s.stream_id = 'duel-' || (ev.data->>'duel_id')
                                  AND s.type = 'SeatTaken' AND s.data->>'player_id' = owner) THEN
                RETURN format('refused: game %s is not a seat of this player''s in its duel', id);
            END IF;
            RETURN NULL;
        END IF;
        IF who_role = 'operator' THEN
            -- A void; or a certification deal (its StakePlaced, Dealt and whatever the deal
            -- plays by itself), all recorded in the transaction that deals it.
            IF ev.type = 'Voided'
               OR (certification AND ev.type <> 'Collected'
                   AND first.recorded_at >= transaction_timestamp()) THEN
                RETURN NULL;
            END IF;
            RETURN format('refused: an operator records a game''s void, or a certification '
                          'deal, not a %s', ev.type);
        END IF;
        -- The service's own task: a game collected as timed out, once its clock has run out
        -- or it has lain idle past the policy.
        IF NOT (ev.type = 'Collected' AND ev.data->>'reason' = 'timeout') THEN
            RETURN format('refused: a %s of game %s is recorded by its player, not without a '
                          'credential', ev.type, id);
        END IF;
        IF (EXISTS (SELECT 1 FROM events c
                         WHERE c.stream_id = ev.stream_id AND c.type = 'ClockStarted'
                           AND (c.data->>'deadline')::timestamptz <= db_clock())
                OR prior.recorded_at <= db_clock() - (SELECT p.idle_after
                                                        FROM collection_policy p)) THEN
            RETURN NULL;
        END IF;
        RETURN format('refused: without a credential, game %s may only be collected once '
                      'idle past the policy or past its deadline', id);
    END IF;

    -- a duel
    id := substr(ev.stream_id, 6);
    IF (ev.version = 1) <> (ev.type = 'DuelOpened')
       OR first.data->>'duel_id' IS DISTINCT FROM id THEN
        RETURN format('duel %s''s stream opens with its DuelOpened, once', id);
    END IF;
    IF prior.type IN ('DuelSettled', 'DuelCancelled') THEN
        RETURN format('duel %s has ended: nothing follows its %s', id, prior.type);
    END IF;
    certification := coalesce((first.data->>'certification')::boolean, false);
    seats := (first.data->>'seats')::integer;
    SELECT count(*) INTO taken FROM events s
     WHERE s.stream_id = ev.stream_id AND s.version <= ev.version AND s.type = 'SeatTaken';
    IF ev.type IN ('SeatDealt', 'SeatFinished') THEN
        SELECT s.data->>'player_id' INTO seat_player FROM events s
         WHERE s.stream_id = ev.stream_id AND s.type = 'SeatTaken'
           AND s.data->>'seat' = ev.data->>'seat';
        IF seat_player IS NULL THEN
            RETURN format('duel %s has no seat %s', id, ev.data->>'seat');
        END IF;
    END IF;
    IF ev.type = 'DuelOpened' THEN
        IF who_role = 'player' OR (who_role = 'operator' AND certification) THEN
            RETURN NULL;
        END IF;
        RETURN 'refused: a duel is opened by a player joining it (or, certifying, an operator)';
    ELSIF ev.type = 'SeatTaken' THEN
        IF taken > seats THEN
            RETURN format('duel %s has only %s seats', id, seats);
        END IF;
        IF (who_role = 'player' AND ev.data->>'player_id' = who_player::text)
           OR (who_role = 'operator' AND certification) THEN
            RETURN NULL;
        END IF;
        RETURN 'refused: a seat is taken by its own player (or, certifying, an operator)';
    ELSIF ev.type = 'SeatDealt' THEN
        IF who_role = 'player' AND seat_player = who_player::text THEN
            RETURN NULL;
        END IF;
        RETURN 'refused: a seat''s game is dealt by its own player';
    ELSIF ev.type = 'SeatFinished' THEN
        IF who_role = 'player' AND seat_player = who_player::text
           AND ev.data->>'reason' IN ('finished', 'player') THEN
            RETURN NULL;
        END IF;
        IF who_role = 'system' AND ev.data->>'reason' = 'timeout'
           AND EXISTS (SELECT 1 FROM events s
                        WHERE s.stream_id = ev.stream_id AND s.type = 'SeatDealt'
                          AND s.data->>'seat' = ev.data->>'seat'
                          AND (s.data->>'deadline')::timestamptz <= db_clock()) THEN
            RETURN NULL;
        END IF;
        IF who_role = 'system' AND ev.data->>'reason' = 'not-dealt' AND taken = seats
           AND db_clock() >= (SELECT (max(s.data->>'taken_at'))::timestamptz
                               FROM events s
                              WHERE s.stream_id = ev.stream_id AND s.type = 'SeatTaken')
                             + ((first.data->>'fill_by')::timestamptz
                                - (first.data->>'opened_at')::timestamptz) THEN
            RETURN NULL;
        END IF;
        RETURN format('refused: seat %s of duel %s is finished by its player, or once its time '
                      'has run out', ev.data->>'seat', id);
    ELSIF ev.type = 'DuelSettled' THEN
        IF taken = seats
           AND (SELECT count(*) FROM events s
                 WHERE s.stream_id = ev.stream_id AND s.version < ev.version
                   AND s.type = 'SeatFinished') = seats THEN
            RETURN NULL;
        END IF;
        RETURN format('duel %s settles once every seat has finished', id);
    ELSE  -- DuelCancelled
        IF (ev.data->>'voided')::boolean THEN
            IF who_role = 'operator' THEN
                RETURN NULL;
            END IF;
            RETURN 'refused: only an operator voids a duel';
        END IF;
        IF taken < seats AND db_clock() >= (first.data->>'fill_by')::timestamptz THEN
            RETURN NULL;
        END IF;
        RETURN format('duel %s is cancelled unfilled only after its fill-by time', id);
    END IF;
END
$$;
REVOKE EXECUTE ON FUNCTION refusal_of FROM PUBLIC;

-- Append to a stream as the holder of p_credential (NULL: the service's own task): every event
-- as append_events records it, then each checked by refusal_of; a refusal undoes the append.
CREATE FUNCTION record_events(p_credential text, p_stream text, p_expected integer,
                              p_events text)
RETURNS SETOF events
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    who_role text := 'system';
    who_actor text;
    who_player uuid;
    who_session timestamptz;
    first events;
    prior events;
    added events;
    refused text;
BEGIN
    IF p_credential IS NOT NULL THEN
        SELECT h.role, h.actor, h.player_id, h.session_started
          INTO who_role, who_actor, who_player, who_session
          FROM credential_holder(p_credential) h;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'refused: the credential presented is not live'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    END IF;
    -- (A stream of no known kind is refused by refusal_of, event by event, before this returns.)
    -- The stream's first event and its head, read once (keys from parameters: 0027's rule).
    IF p_expected >= 1 THEN
        SELECT * INTO prior FROM events e
         WHERE e.stream_id = p_stream AND e.version = p_expected;
        IF p_expected = 1 THEN
            first := prior;
        ELSE
            SELECT * INTO first FROM events e WHERE e.stream_id = p_stream AND e.version = 1;
        END IF;
    END IF;
    FOR added IN SELECT * FROM append_events(p_stream, p_expected, p_events) LOOP
        IF added.version = 1 THEN
            first := added;
        END IF;
        refused := refusal_of(who_role, who_actor, who_player, who_session, added, first, prior);
        IF refused LIKE 'refused:%' THEN
            RAISE EXCEPTION '%', refused USING ERRCODE = 'insufficient_privilege';
        ELSIF refused IS NOT NULL THEN
            RAISE EXCEPTION '%', refused USING ERRCODE = 'check_violation';
        END IF;
        prior := added;
        RETURN NEXT added;
    END LOOP;
END
$$;

-- A game command's whole write (0027's), now appended through record_events as the credential's
-- holder. The previous signature stays for a release that still calls it, but the service's
-- login may no longer execute it.
CREATE FUNCTION record_game_events(p_credential text, p_stream text, p_expected integer,
                                   p_events text, p_history jsonb, p_over boolean,
                                   p_snapshot text, p_snapshot_mac text)
RETURNS SETOF events
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    head integer := p_expected + jsonb_array_length(p_events::jsonb);
    -- The history row's version (game_history.version, as jsonb_populate_record reads it).
    history_version integer := (p_history->>'version')::integer;
BEGIN
    RETURN QUERY SELECT * FROM record_events(p_credential, p_stream, p_expected, p_events);
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

REVOKE EXECUTE ON FUNCTION record_events, record_game_events(text, text, integer, text, jsonb,
    boolean, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION record_events, record_game_events(text, text, integer, text, jsonb,
    boolean, text, text) TO vegas_app;
-- The shape-only primitives are the owner's now.
REVOKE EXECUTE ON FUNCTION append_events(text, integer, text),
    record_game_events(text, integer, text, jsonb, boolean, text, text) FROM vegas_app;
