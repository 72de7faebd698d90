-- depends: 0004.projections
-- Who may call the API: staff API keys (operator, auditor, finance) and short-lived player
-- sessions. Only SHA-256 hashes of the secrets are kept; the secret is shown once, at creation.
CREATE TABLE api_keys (
    key_id      uuid        PRIMARY KEY,
    name        text        NOT NULL,
    role        text        NOT NULL CHECK (role IN ('operator', 'auditor', 'finance')),
    key_hash    text        NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
    created_at  timestamptz NOT NULL DEFAULT statement_timestamp(),
    revoked_at  timestamptz
);
CREATE UNIQUE INDEX api_keys_active_name ON api_keys (name) WHERE revoked_at IS NULL;

CREATE TABLE player_sessions (
    token_hash    text        PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    player_id     uuid        NOT NULL,
    created_by    text        NOT NULL,  -- the operator key that minted it
    created_at    timestamptz NOT NULL DEFAULT statement_timestamp(),
    last_used_at  timestamptz NOT NULL DEFAULT statement_timestamp(),
    expires_at    timestamptz NOT NULL,  -- the hard maximum, however busy the session is
    revoked_at    timestamptz
);
CREATE INDEX player_sessions_by_player ON player_sessions (player_id);

-- Display preferences: a projection of the PreferencesChanged events in each player's stream.
CREATE TABLE player_preferences (
    player_id   uuid        PRIMARY KEY,
    sound       boolean     NOT NULL,
    colour      text        NOT NULL CHECK (colour IN ('green', 'red', 'blue')),
    card_back   integer     NOT NULL CHECK (card_back BETWEEN 1 AND 12),
    updated_at  timestamptz NOT NULL
);

GRANT SELECT, INSERT, UPDATE ON api_keys, player_sessions TO vegas_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON player_preferences TO vegas_app;
