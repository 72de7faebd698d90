-- depends: 0032.seeds-once
-- Two read models the service's checks rely on, no longer the service's to write (issue 36:
-- the insider, item 10). With its own login an insider deleted an open game's game_history row
-- (the player then dealt a second game while the first was open, and idle collection forgot
-- it) and swapped two players' external_ref (an operator's POST /v1/players for one casino
-- customer then answered the other's id, and their deposits landed in the wrong wallet).
--
-- - players is kept by the database from each PlayerRegistered, as player_limits is (0017):
--   a trigger the owner owns inserts the row; vegas_app only reads it.
-- - game_history is written only by record_game_events (0031, the owner's, as a command's
--   write) and by restore_game_history below (the projections rebuild's), which takes the
--   row's player, version and whether the game has ended from the log itself: the service's
--   login can refresh how a row shows a game, never hide an open game or give it to another
--   player. vegas_app only reads the table.
-- - restore_player(id): the rebuild's one write of players, from the log.

-- --- players --------------------------------------------------------------------------------

CREATE FUNCTION project_player() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    INSERT INTO players (player_id, external_ref, currency, created_at)
    VALUES ((NEW.data->>'player_id')::uuid, NEW.data->>'external_ref', NEW.data->>'currency',
            NEW.recorded_at);
    RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION project_player FROM PUBLIC;

CREATE TRIGGER events_project_players
    AFTER INSERT ON events
    FOR EACH ROW
    WHEN (NEW.type = 'PlayerRegistered' AND NEW.stream_id LIKE 'player-%')
    EXECUTE FUNCTION project_player();

-- A player's row as their PlayerRegistered says (removed if the log has none): how many rows
-- changed.
CREATE FUNCTION restore_player(p_player uuid) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    changed integer;
BEGIN
    DELETE FROM players WHERE player_id = p_player;
    INSERT INTO players (player_id, external_ref, currency, created_at)
    SELECT (e.data->>'player_id')::uuid, e.data->>'external_ref', e.data->>'currency',
           e.recorded_at
      FROM events e
     WHERE e.stream_id = 'player-' || p_player::text AND e.version = 1
       AND e.type = 'PlayerRegistered';
    GET DIAGNOSTICS changed = ROW_COUNT;
    RETURN changed;
END
$$;

-- --- game_history ---------------------------------------------------------------------------

-- One game's history row as the rebuild computed it (p_row, game_history's columns as JSON;
-- NULL: the game should have none), checked against the log: a row only for a game whose
-- stream opens with a StakePlaced outside any duel, of that StakePlaced's player, at the
-- stream's head, ended exactly when the stream has ended. The rest (status, units, payout) is
-- the fold's, which the audit checks against the same log.
CREATE FUNCTION restore_game_history(p_game uuid, p_row jsonb) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    stream text := 'game-' || p_game::text;
    placed events;
    head events;
    r game_history;
BEGIN
    SELECT * INTO placed FROM events e WHERE e.stream_id = stream AND e.version = 1;
    SELECT * INTO head FROM events e
     WHERE e.stream_id = stream ORDER BY e.version DESC LIMIT 1;
    IF p_row IS NULL THEN
        IF placed.type = 'StakePlaced' AND placed.data->>'duel_id' IS NULL THEN
            RAISE EXCEPTION 'game % has its history row: it is not removed', p_game
                USING ERRCODE = 'check_violation';
        END IF;
        DELETE FROM game_history WHERE game_id = p_game;
        RETURN;
    END IF;
    r := jsonb_populate_record(NULL::game_history, p_row);
    IF placed.type IS DISTINCT FROM 'StakePlaced' OR placed.data->>'duel_id' IS NOT NULL
       OR r.game_id IS DISTINCT FROM p_game
       OR r.player_id::text IS DISTINCT FROM placed.data->>'player_id'
       OR r.version IS DISTINCT FROM head.version
       OR (r.ended_at IS NULL) <> (head.type NOT IN ('Collected', 'Voided')) THEN
        RAISE EXCEPTION 'the history row of game % is not what its log says', p_game
            USING ERRCODE = 'check_violation';
    END IF;
    DELETE FROM game_history WHERE game_id = p_game;
    INSERT INTO game_history SELECT r.*;
END
$$;

REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON players, game_history FROM vegas_app;
REVOKE EXECUTE ON FUNCTION save_game_history(game_history) FROM vegas_app;
REVOKE EXECUTE ON FUNCTION restore_player, restore_game_history FROM PUBLIC;
GRANT EXECUTE ON FUNCTION restore_player, restore_game_history TO vegas_app;
