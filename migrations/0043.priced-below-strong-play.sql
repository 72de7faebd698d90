-- depends: 0042.projections-by-the-projector
-- A price strong play beats (issue 42): a paytable that pays some game at an M whose published
-- strong-play RTP reaches 100% of the stake is a significant event when a process starting
-- logs that configuration (service/services/configuration_log.py), so the operator sees it in
-- the queue beside the configuration itself.
ALTER TABLE significant_events DROP CONSTRAINT significant_events_kind_check;
ALTER TABLE significant_events ADD CONSTRAINT significant_events_kind_check
    CHECK (kind IN ('void', 'configuration', 'big-win', 'session', 'collection-failed',
                    'certification', 'advantage-play', 'gaming-control', 'safer-gambling',
                    'log-stalled', 'withdrawal-held', 'beats-the-house'));
