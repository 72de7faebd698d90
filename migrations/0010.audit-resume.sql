-- depends: 0009.sessions
-- An audit keeps the units it planned, so work a crashed worker lost is sent again by a beat
-- sweeper; an audit that keeps losing work is marked failed with the reason, never left
-- running for ever.
CREATE TABLE audit_plan (
    audit_id  uuid  NOT NULL REFERENCES audits,
    unit      text  NOT NULL,
    PRIMARY KEY (audit_id, unit)
);
ALTER TABLE audits ADD COLUMN resent integer NOT NULL DEFAULT 0;  -- times lost work was re-sent
ALTER TABLE audits ADD COLUMN failure text;                       -- why it failed, if it did
GRANT SELECT, INSERT ON audit_plan TO vegas_app;
