-- depends: 0003.ledger
-- Read models, rebuilt from the event log on demand (flask --app service projections rebuild).
CREATE TABLE players (
    player_id     uuid        PRIMARY KEY,
    external_ref  text        NOT NULL UNIQUE,  -- the casino's own id for the player
    currency      char(3)     NOT NULL,
    created_at    timestamptz NOT NULL
);

-- Betting history, one row a game; also where "one game in progress per player" is enforced.
CREATE TABLE game_history (
    game_id           uuid        PRIMARY KEY,
    player_id         uuid        NOT NULL,
    variant           text        NOT NULL,
    stake             bigint      NOT NULL,
    currency          char(3)     NOT NULL,
    win_rate          bigint      NOT NULL,
    status            text        NOT NULL
                      CHECK (status IN ('in_progress', 'complete', 'collected', 'voided')),
    foundation_count  integer     NOT NULL DEFAULT 0,
    payout            bigint      NOT NULL DEFAULT 0,
    refund            bigint      NOT NULL DEFAULT 0,
    certification     boolean     NOT NULL DEFAULT false,
    end_reason        text,
    version           integer     NOT NULL,  -- the game stream version this row reflects
    started_at        timestamptz NOT NULL,
    last_event_at     timestamptz NOT NULL,
    ended_at          timestamptz
);
CREATE UNIQUE INDEX game_history_one_open_game ON game_history (player_id)
    WHERE ended_at IS NULL;
CREATE INDEX game_history_by_player ON game_history (player_id, started_at DESC, game_id);
CREATE INDEX game_history_open_by_activity ON game_history (last_event_at)
    WHERE ended_at IS NULL;

-- Server seeds, encrypted, until the game ends (the Collected or Voided event reveals them).
CREATE TABLE game_seeds (
    game_id     uuid        PRIMARY KEY,
    key_id      text        NOT NULL,
    ciphertext  bytea       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT statement_timestamp()
);

GRANT SELECT, INSERT, UPDATE, DELETE ON players, game_history TO vegas_app;
GRANT SELECT, INSERT ON game_seeds TO vegas_app;
