-- depends: 0008.duels
-- Sessions are revocable (by the player, by an operator, with the key that minted them), and
-- minting and revoking them are significant events for auditors.
ALTER TABLE significant_events DROP CONSTRAINT significant_events_kind_check;
ALTER TABLE significant_events ADD CONSTRAINT significant_events_kind_check
    CHECK (kind IN ('void', 'configuration', 'big-win', 'session'));
CREATE INDEX player_sessions_by_creator ON player_sessions (created_by) WHERE revoked_at IS NULL;
