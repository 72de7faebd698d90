-- depends: 0001.roles
-- The event store: one table holds every stream. (stream_id, version) is the optimistic
-- concurrency guard; position orders the whole log; prev_hash/hash chain each stream.
CREATE TABLE events (
    position        bigint GENERATED ALWAYS AS IDENTITY,
    stream_id       text        NOT NULL CHECK (stream_id ~ '^[a-z][a-z0-9-]{0,99}$'),
    version         integer     NOT NULL CHECK (version >= 1),
    event_id        uuid        NOT NULL,
    type            text        NOT NULL,
    schema_version  integer     NOT NULL CHECK (schema_version >= 1),
    data            jsonb       NOT NULL,
    metadata        jsonb       NOT NULL,
    recorded_at     timestamptz NOT NULL,
    prev_hash       text        NOT NULL CHECK (prev_hash ~ '^[0-9a-f]{64}$'),
    hash            text        NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
    PRIMARY KEY (stream_id, version),
    UNIQUE (position),
    UNIQUE (event_id)
);

-- The hash chain's encoding, defined once for the database (events/chain.py documents it and
-- recomputes it independently): SHA-256 over the previous hash and the event's fields, one a line.
CREATE FUNCTION event_hash(prev_hash text, stream_id text, version integer, event_id uuid,
                           type text, schema_version integer, recorded_at timestamptz,
                           data text, metadata text)
RETURNS text LANGUAGE sql STABLE STRICT AS $$
    SELECT encode(sha256(convert_to(concat_ws(E'\n',
        prev_hash, stream_id, version, event_id, type, schema_version,
        to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        data, metadata), 'UTF8')), 'hex')
$$;
GRANT EXECUTE ON FUNCTION event_hash TO vegas_app;

CREATE TRIGGER events_append_only
    BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER events_no_truncate
    BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

GRANT SELECT, INSERT ON events TO vegas_app;

-- Idempotency: a request id claimed with a fingerprint of its content, then its result.
CREATE TABLE idempotency_keys (
    scope        text        NOT NULL,  -- who may reuse the key: e.g. the caller's principal
    key          text        NOT NULL,
    fingerprint  text        NOT NULL,  -- hash of what was asked; a different ask is refused
    result       jsonb,                 -- what the request produced; set in the same transaction
    created_at   timestamptz NOT NULL DEFAULT statement_timestamp(),
    PRIMARY KEY (scope, key)
);
GRANT SELECT, INSERT, UPDATE ON idempotency_keys TO vegas_app;

-- Where each projector has got to in the log, written in the same transaction as its writes.
CREATE TABLE projection_checkpoints (
    name        text PRIMARY KEY,
    position    bigint      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT statement_timestamp()
);
GRANT SELECT, INSERT, UPDATE, DELETE ON projection_checkpoints TO vegas_app;
