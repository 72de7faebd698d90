-- depends: 0008.duels
-- Sessions are revocable (by the player, by an operator, with the key that minted them), and
-- minting and revoking them are significant events for auditors; so are a game the idle
-- collector could not collect and every certification deal (a known seed or deck).
ALTER TABLE significant_events DROP CONSTRAINT significant_events_kind_check;
ALTER TABLE significant_events ADD CONSTRAINT significant_events_kind_check
    CHECK (kind IN ('void', 'configuration', 'big-win', 'session', 'collection-failed',
                    'certification'));
CREATE INDEX significant_events_by_game ON significant_events (game_id, kind, occurred_at)
    WHERE game_id IS NOT NULL;

-- Key rotation re-encrypts sealed secrets under the newest key: only those two columns change.
GRANT UPDATE (key_id, ciphertext) ON game_seeds TO vegas_app;
CREATE INDEX player_sessions_by_creator ON player_sessions (created_by) WHERE revoked_at IS NULL;
