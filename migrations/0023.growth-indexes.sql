-- depends: 0022.money-by-day
-- transactional: false
-- Two more reads that grew with the log (issue 25, `make bench SUITES=growth`):
--
-- - add_checkpoint (migration 0016) finds the checkpoint before the new one with
--   max(position) ... WHERE position <= the log's end: a sequential scan of every checkpoint
--   (3.9 ms at 9,600 checkpoints; beat signs one a minute, half a million a year);
-- - the daily report's cashier lines (service/storage/finance.py SAFER_GAMBLING_SQL) read every
--   ledger transaction of the period to keep its deposits and withdrawals (88,623 rows read to
--   keep 5,434 at 10 million events): a partial index holds only the cashier's.
--
-- CONCURRENTLY, as 0022, so a live log keeps taking writes while they build.
CREATE INDEX CONCURRENTLY IF NOT EXISTS log_checkpoints_by_position
    ON log_checkpoints (position);

CREATE INDEX CONCURRENTLY IF NOT EXISTS ledger_transactions_cashier_by_time
    ON ledger_transactions (created_at) WHERE kind IN ('deposit', 'withdrawal');
