-- depends: 0014.append-function
-- Advantage play (service/advantage.py): the watcher reads each player's latest collected games
-- of one game, and each game's latest collected games of everyone, every hour. These indexes
-- keep both reads to the rows they return as the history grows.
CREATE INDEX game_history_collected_by_player
    ON game_history (player_id, variant, ended_at DESC)
    WHERE status = 'collected';
CREATE INDEX game_history_collected_by_variant
    ON game_history (variant, ended_at DESC)
    WHERE status = 'collected' AND NOT certification;

-- Its findings are significant events of their own kind (finance's daily report lists them).
ALTER TABLE significant_events DROP CONSTRAINT significant_events_kind_check;
ALTER TABLE significant_events ADD CONSTRAINT significant_events_kind_check
    CHECK (kind IN ('void', 'configuration', 'big-win', 'session', 'collection-failed',
                    'certification', 'advantage-play'));
