-- depends: 0021.safer-gambling-report
-- transactional: false
-- A day's money as the log grows (issue 25): finance's reconciliation of one day read every
-- event of the log (a parallel sequential scan: 30x slower at a million events than on an
-- empty log) and the daily report's cashier lines every ledger transaction. These two indexes
-- keep both to the day asked for. The first is partial, on exactly the money events the
-- reconciliation reads (its predicate is the query's own, service/storage/finance.py
-- DAY_EVENTS_SQL), so it costs nothing on the plays that make most of the log.
--
-- Built CONCURRENTLY (outside a transaction: hence "transactional: false" above) so that
-- applying this to a live casino's log does not stop its writes while the index is built.
CREATE INDEX CONCURRENTLY IF NOT EXISTS events_money_by_time ON events (recorded_at)
    WHERE (stream_id LIKE 'game-%' AND type IN ('StakePlaced', 'Collected', 'Voided'))
       OR (stream_id LIKE 'duel-%' AND type IN ('SeatTaken', 'DuelSettled', 'DuelCancelled'));

CREATE INDEX CONCURRENTLY IF NOT EXISTS ledger_transactions_by_time
    ON ledger_transactions (created_at);
