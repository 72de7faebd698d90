-- depends: 0005.access
-- Whole-history audits, finance projections and reconciliations, and the significant-events log.

-- An audit over all games, a date range or one player, checked in chunks by Celery workers.
CREATE TABLE audits (
    audit_id     uuid        PRIMARY KEY,
    scope        jsonb       NOT NULL,  -- {"kind": "all" | "dates" | "player", ...}
    requested_by text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('running', 'done', 'failed')),
    total        integer     NOT NULL,  -- units to check: games, plus the ledger and other streams
    created_at   timestamptz NOT NULL DEFAULT statement_timestamp(),
    finished_at  timestamptz
);

-- One row per unit checked: re-running a chunk (at-least-once delivery) changes nothing.
CREATE TABLE audit_units (
    audit_id    uuid        NOT NULL REFERENCES audits,
    unit        text        NOT NULL,  -- a game id, or "ledger", or "stream:<id>"
    ok          boolean     NOT NULL,
    checked_at  timestamptz NOT NULL DEFAULT statement_timestamp(),
    PRIMARY KEY (audit_id, unit)
);

CREATE TABLE audit_findings (
    audit_id    uuid    NOT NULL REFERENCES audits,
    unit        text    NOT NULL,
    seq         integer NOT NULL,
    game_id     uuid,
    check_name  text    NOT NULL,
    location    text    NOT NULL,  -- e.g. "game-<id> v7" or "posting 1234"
    expected    text    NOT NULL,
    found       text    NOT NULL,
    PRIMARY KEY (audit_id, unit, seq)
);

-- Per day, currency and variant: what the game events say happened. Kept by a checkpointed
-- projector (its checkpoint is written in the same transaction as these rows).
CREATE TABLE daily_totals (
    day             date    NOT NULL,
    currency        char(3) NOT NULL,
    variant         text    NOT NULL,
    games_started   integer NOT NULL DEFAULT 0,
    games_finished  integer NOT NULL DEFAULT 0,
    stakes          bigint  NOT NULL DEFAULT 0,  -- staked by games started that day
    payouts         bigint  NOT NULL DEFAULT 0,  -- paid by games collected that day
    refunds         bigint  NOT NULL DEFAULT 0,  -- refunded by games voided that day
    stakes_settled  bigint  NOT NULL DEFAULT 0,  -- stakes of the games that finished that day
    certification_games integer NOT NULL DEFAULT 0,
    PRIMARY KEY (day, currency, variant)
);

-- The nightly reconciliation of each day: ledger against game events.
CREATE TABLE reconciliations (
    day          date        PRIMARY KEY,
    computed_at  timestamptz NOT NULL DEFAULT statement_timestamp(),
    result       jsonb       NOT NULL
);

-- What auditors must see without searching: voids, configuration changes, big wins.
CREATE TABLE significant_events (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind         text        NOT NULL CHECK (kind IN ('void', 'configuration', 'big-win')),
    occurred_at  timestamptz NOT NULL DEFAULT statement_timestamp(),
    actor        text        NOT NULL,
    game_id      uuid,
    player_id    uuid,
    amount       bigint,
    currency     char(3),
    details      jsonb       NOT NULL
);
CREATE INDEX significant_events_by_time ON significant_events (occurred_at DESC, id DESC);
CREATE TRIGGER significant_events_append_only BEFORE UPDATE OR DELETE ON significant_events
    FOR EACH ROW EXECUTE FUNCTION refuse_change();

GRANT SELECT, INSERT, UPDATE ON audits TO vegas_app;
GRANT SELECT, INSERT ON audit_units, audit_findings TO vegas_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON daily_totals, reconciliations TO vegas_app;
GRANT SELECT, INSERT ON significant_events TO vegas_app;
