-- depends: 0020.reality-checks
-- Finance's daily report counts safer gambling (issue 24): refusals are significant events of
-- their own kind, and time-outs, self-exclusions and acknowledged reality checks are read from
-- the log by day (this partial index keeps that read to those events as the log grows).
ALTER TABLE significant_events DROP CONSTRAINT significant_events_kind_check;
ALTER TABLE significant_events ADD CONSTRAINT significant_events_kind_check
    CHECK (kind IN ('void', 'configuration', 'big-win', 'session', 'collection-failed',
                    'certification', 'advantage-play', 'gaming-control', 'safer-gambling'));

CREATE INDEX events_safer_gambling_by_time ON events (recorded_at)
    WHERE type IN ('PlayerExcluded', 'RealityCheckAcknowledged');

CREATE INDEX significant_events_by_kind ON significant_events (kind, currency, occurred_at);
