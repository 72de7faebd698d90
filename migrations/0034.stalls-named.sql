-- depends: 0033.read-models-of-the-log
-- Stalls are named (issue 36): one transaction held open (an insider's, a stuck client's) holds
-- the log's horizon back (log_horizon, 0014), and with it the finance projector and every
-- tailing reader, while signing still runs. The service's horizon watch (service/services/
-- horizon.py, beat) records it as a significant event of its own kind within a minute.
ALTER TABLE significant_events DROP CONSTRAINT significant_events_kind_check;
ALTER TABLE significant_events ADD CONSTRAINT significant_events_kind_check
    CHECK (kind IN ('void', 'configuration', 'big-win', 'session', 'collection-failed',
                    'certification', 'advantage-play', 'gaming-control', 'safer-gambling',
                    'log-stalled'));
