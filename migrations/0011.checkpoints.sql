-- depends: 0010.audit-resume
-- Anchored history: signed checkpoints of the whole event log (events/anchor.py documents the
-- format). The signature is made with a key the database never holds, so whoever can write
-- these tables can delete checkpoints but cannot forge one; auditors also keep the exported
-- files elsewhere. Both tables are append-only, like the log they anchor.
CREATE TABLE log_checkpoints (
    seq           integer     PRIMARY KEY CHECK (seq >= 1),  -- 1, 2, 3...: a gap shows a deletion
    position      bigint      NOT NULL,  -- the last position covered
    message       text        NOT NULL,  -- the signed bytes: the checkpoint as canonical JSON
    signature     text        NOT NULL,  -- Ed25519 over message, standard base64
    key_id        text        NOT NULL,
    requested_by  text        NOT NULL,  -- "beat", or the staff key that asked for it
    created_at    timestamptz NOT NULL DEFAULT statement_timestamp()
);

-- The head of every stream that changed since the checkpoint before: which stream was cut or
-- rewritten, by name. The signed heads digest covers these rows.
CREATE TABLE checkpoint_heads (
    seq        integer NOT NULL REFERENCES log_checkpoints,
    stream_id  text    NOT NULL,
    version    integer NOT NULL,
    hash       text    NOT NULL,
    PRIMARY KEY (seq, stream_id)
);
-- The latest checkpointed head of a stream.
CREATE INDEX checkpoint_heads_by_stream ON checkpoint_heads (stream_id, seq DESC);

CREATE TRIGGER log_checkpoints_append_only BEFORE UPDATE OR DELETE ON log_checkpoints
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER log_checkpoints_no_truncate BEFORE TRUNCATE ON log_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER checkpoint_heads_append_only BEFORE UPDATE OR DELETE ON checkpoint_heads
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER checkpoint_heads_no_truncate BEFORE TRUNCATE ON checkpoint_heads
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

GRANT SELECT, INSERT ON log_checkpoints, checkpoint_heads TO vegas_app;
