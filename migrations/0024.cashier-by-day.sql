-- depends: 0023.growth-indexes
-- The cashier's money by UTC day (issue 25): the daily report's cashier lines aggregated every
-- deposit and withdrawal of the report's 30 days from the ledger at each request (15.4 ms
-- against 2.6 at 10 million events: the work grows with the period's activity). The finance
-- projector now keeps them per day and currency, as it keeps the games' (daily_totals, 0006),
-- folding the players' FundsDeposited and FundsWithdrawn events after a checkpoint of its own
-- ('daily-cashier', in projection_checkpoints); the report reads one row a day.
--
-- Nothing is backfilled here: the projector's checkpoint starts at 0, so its first run after
-- this migration folds every deposit and withdrawal already in the log (one pass over the log,
-- by position), in the same transaction as the checkpoint it moves, as every later run does.
--
-- A projection, rebuilt from the log by emptying both tables and its checkpoint: the service
-- writes it as it writes daily_totals.

-- Per UTC day (of the event) and currency: gross deposits and withdrawals, and how many players
-- deposited that day.
CREATE TABLE daily_cashier (
    day          date    NOT NULL,
    currency     char(3) NOT NULL,
    deposits     bigint  NOT NULL DEFAULT 0,
    withdrawals  bigint  NOT NULL DEFAULT 0,
    depositors   integer NOT NULL DEFAULT 0,
    PRIMARY KEY (currency, day)
);

-- Who deposited on a day: a player's second deposit of the day adds no depositor, however the
-- projector's batches split the day.
CREATE TABLE daily_depositors (
    day        date    NOT NULL,
    currency   char(3) NOT NULL,
    player_id  uuid    NOT NULL,
    PRIMARY KEY (day, currency, player_id)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON daily_cashier, daily_depositors TO vegas_app;
