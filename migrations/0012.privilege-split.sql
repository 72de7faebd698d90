-- depends: 0010.audit-resume
-- The privilege split (issue 12): these migrations run as the owner of every table; the service
-- logs in as a role of its own whose only rights are vegas_app's (service/db.py refuses, in
-- production, a login that is the owner or could become it). vegas_app may read and append the
-- history tables and nothing more, and each of them refuses change and emptying by trigger too.

-- Stored reconciliations become append-only: running a day again adds a row (the latest one is
-- the day's answer) instead of overwriting what was stored before.
ALTER TABLE reconciliations DROP CONSTRAINT reconciliations_pkey;
ALTER TABLE reconciliations ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY;
CREATE INDEX reconciliations_latest ON reconciliations (day, seq DESC);
CREATE TRIGGER reconciliations_append_only BEFORE UPDATE OR DELETE ON reconciliations
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER reconciliations_no_truncate BEFORE TRUNCATE ON reconciliations
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- significant_events refused UPDATE and DELETE but not TRUNCATE.
CREATE TRIGGER significant_events_no_truncate BEFORE TRUNCATE ON significant_events
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- 0006 granted UPDATE and DELETE on reconciliations; take back anything but reading and
-- appending on every history table, whatever was granted before.
REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER
    ON events, accounts, ledger_transactions, postings, significant_events, reconciliations
    FROM vegas_app;
GRANT SELECT, INSERT
    ON events, accounts, ledger_transactions, postings, significant_events, reconciliations
    TO vegas_app;
