-- depends: 0034.stalls-named
-- A game command's write costs what it cost before the insider's checks, nearly (issue 36: the
-- hot path's figures). 0031 made every append go through record_events, which read the
-- stream's head and first event, then called append_events (another set-returning layer, which
-- read the head again), then refusal_of for each event, whose first statement matched the
-- stream's name against three regular expressions. Counted in instructions (callgrind on a
-- single-user backend: a DO loop of 250 CardDrawn writes through record_game_events minus one of
-- 50, on a log of 20,000 events; the same loop at c3fa770, through its record_game_events):
-- c3fa770 2.36 M instructions a write, 0034 2.74 M (+16%), this migration 2.55 M (+8%). Where the
-- 0.38 M went: refusal_of 0.12 M (of which the game name's regular expression 0.05 M), the
-- second set-returning layer and the reads before the append 0.17 M, credential_holder 0.07 M,
-- 0033's trigger on events 0.03 M. What changes, every rule as strong as before:
--
-- - stream_kind reads a name without the bounded repetitions ({8}, {4}, {12}) that made
--   PostgreSQL's regex engine build some forty states on every call (0.05 M instructions a game
--   name): a LIKE fixes the length and the four hyphens' places, a regex with no bounds checks
--   the characters, and a count of hyphens leaves no other (0.01 M). The same answer for every
--   text: the kind's prefix, then exactly a lowercase 8-4-4-4-12 uuid, and nothing after it.
-- - refusal_of answers a player's move on their own game (every event a play appends) with one
--   condition, before the chain of rules: it returns NULL only when every rule below that such
--   an event meets holds, checked in the rules' order, and anything else goes through the whole
--   chain unchanged, with the same messages (-0.05 M).
-- - record_events appends as append_events (0014, 0016) does, itself: it reads the head once
--   (its prior event, version, hash and time together), then the first event, then inserts
--   the events chained on it. The same positions, times and hashes, the same unique_violation
--   at any other head; append_events stays the owner's, unchanged (-0.09 M).
--
-- Grants and security attributes stay as 0031 set them (CREATE OR REPLACE keeps the owner and
-- the ACL; the attributes are restated).

-- A stream's kind from its name: NULL for a name no service stream has (0031's answer, cheaper).
CREATE OR REPLACE FUNCTION stream_kind(p_stream text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN p_stream LIKE 'game-________-____-____-____-____________'
             AND p_stream ~ '^game-[-0-9a-f]*$'
             AND char_length(replace(p_stream, '-', '')) = 36 THEN 'game'
        WHEN p_stream LIKE 'duel-________-____-____-____-____________'
             AND p_stream ~ '^duel-[-0-9a-f]*$'
             AND char_length(replace(p_stream, '-', '')) = 36 THEN 'duel'
        WHEN p_stream LIKE 'player-________-____-____-____-____________'
             AND p_stream ~ '^player-[-0-9a-f]*$'
             AND char_length(replace(p_stream, '-', '')) = 38 THEN 'player'
        WHEN p_stream = 'gaming-controls' THEN 'controls'
    END
$$;

-- 0031's rules, unchanged below the first condition (see there for who asks and what each
-- event means).
CREATE OR REPLACE FUNCTION refusal_of(who_role text, who_actor text, who_player uuid,
                           who_session timestamptz, ev events, first events, prior events)
RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    kind text;
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
    -- A player's move on their own game, every game command's write: NULL at once when all the
    -- rules below that such an event meets hold, in their order (so a cast that fails below
    -- fails here alike); anything else, or any doubt, goes the whole way below.
    IF who_role = 'player'
       AND ev.version > 1
       AND ev.type IN ('Dealt', 'ClockStarted', 'CardDrawn', 'StockRecycled', 'PilesGathered',
                       'Reshuffled', 'CardPicked', 'CardMoved', 'CardTurned', 'PairRemoved',
                       'Undone', 'AutoCompleted')
       AND stream_kind(ev.stream_id) = 'game'
       AND ev.metadata->>'role' = 'player' AND ev.metadata->>'actor' = who_actor
       AND (NOT ev.metadata ? 'session_started'
            OR (ev.metadata->>'session_started')::timestamptz = who_session)
       AND first.data->>'game_id' = substr(ev.stream_id, 6)
       AND NOT coalesce(prior.type IN ('Collected', 'Voided'), false)
       AND coalesce((first.data->>'certification')::boolean, false) IN (true, false)
       AND who_player::text = first.data->>'player_id' THEN
        RETURN NULL;
    END IF;
    kind := stream_kind(ev.stream_id);
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

-- Append to a stream as the holder of p_credential (NULL: the service's own task), each event
-- checked by refusal_of; a refusal undoes the append. The append is append_events' (0016): the
-- transaction id before a position, a stream's times never going backwards, each hash chained on
-- the one before; its head, read once here, is also the prior event refusal_of reads.
CREATE OR REPLACE FUNCTION record_events(p_credential text, p_stream text, p_expected integer,
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
    head integer := 0;
    previous text := repeat('0', 64);  -- events.chain.GENESIS
    at timestamptz;
    item jsonb;
    n integer := 0;
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
    PERFORM pg_current_xact_id();  -- the transaction id first, then positions (log_horizon)
    at := clock_timestamp();
    -- The head (keys from parameters: 0027's rule), and then the first event.
    SELECT * INTO prior FROM events e
     WHERE e.stream_id = p_stream ORDER BY e.version DESC LIMIT 1;
    IF FOUND THEN
        head := prior.version;
        previous := prior.hash;
        IF prior.recorded_at > at THEN
            at := prior.recorded_at;
        END IF;
    END IF;
    IF head <> p_expected THEN
        RAISE EXCEPTION USING ERRCODE = 'unique_violation',
            MESSAGE = format('stream %s is at version %s, not %s', p_stream, head, p_expected);
    END IF;
    IF head = 1 THEN
        first := prior;
    ELSIF head > 1 THEN
        SELECT * INTO first FROM events e WHERE e.stream_id = p_stream AND e.version = 1;
    END IF;
    -- (A stream of no known kind is refused by refusal_of, event by event, before this returns.)
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
        IF added.version = 1 THEN
            first := added;
        END IF;
        refused := refusal_of(who_role, who_actor, who_player, who_session, added, first, prior);
        IF refused IS NOT NULL THEN
            IF refused LIKE 'refused:%' THEN
                RAISE EXCEPTION '%', refused USING ERRCODE = 'insufficient_privilege';
            END IF;
            RAISE EXCEPTION '%', refused USING ERRCODE = 'check_violation';
        END IF;
        prior := added;
        RETURN NEXT added;
    END LOOP;
END
$$;
