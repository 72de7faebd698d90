-- depends: 0007.sealed-secrets
-- Classic duels (seed 003). Money: each duel has its own pot account, which takes the entry fees
-- and is emptied by the settlement (the prize to the winners, the rake to the house's rake
-- account) or the cancellation (every fee back). Read models: one row a duel, one a seat.
ALTER TABLE accounts DROP CONSTRAINT accounts_kind_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_kind_check
    CHECK (kind IN ('player', 'house-stakes', 'house-payouts', 'cashier', 'duel-pot',
                    'house-rake'));

ALTER TABLE ledger_transactions DROP CONSTRAINT ledger_transactions_kind_check;
ALTER TABLE ledger_transactions ADD CONSTRAINT ledger_transactions_kind_check
    CHECK (kind IN ('deposit', 'withdrawal', 'stake', 'winnings', 'refund', 'duel-fee',
                    'duel-prize', 'duel-refund'));

-- A pot never goes negative either: it pays out exactly what was paid in.
ALTER TABLE account_balances DROP CONSTRAINT account_balances_check;
ALTER TABLE account_balances ADD CONSTRAINT account_balances_check
    CHECK (kind NOT IN ('player', 'duel-pot') OR balance >= 0);

CREATE TABLE duels (
    duel_id      uuid        PRIMARY KEY,
    status       text        NOT NULL CHECK (status IN ('open', 'full', 'settled', 'cancelled')),
    currency     char(3)     NOT NULL,
    fee          bigint      NOT NULL,
    seats        integer     NOT NULL,
    taken        integer     NOT NULL,
    pot          bigint      NOT NULL,
    rake         bigint      NOT NULL DEFAULT 0,
    certification boolean    NOT NULL DEFAULT false,
    opened_at    timestamptz NOT NULL,
    fill_by      timestamptz NOT NULL,
    deal_by      timestamptz,
    ended_at     timestamptz,
    version      integer     NOT NULL  -- the duel stream version this row reflects
);
-- Joining looks for the oldest open duel of a fee, seat count and currency.
CREATE INDEX duels_open ON duels (currency, fee, seats, opened_at) WHERE status = 'open';
-- The sweep looks for duels waiting on the clock.
CREATE INDEX duels_unfinished ON duels (fill_by) WHERE status IN ('open', 'full');

CREATE TABLE duel_seats (
    duel_id    uuid     NOT NULL REFERENCES duels,
    seat       integer  NOT NULL,
    player_id  uuid     NOT NULL,
    game_id    uuid,
    deadline   timestamptz,
    points     integer,            -- null until the seat finishes
    end_reason text,
    payout     bigint   NOT NULL DEFAULT 0,
    refund     bigint   NOT NULL DEFAULT 0,
    PRIMARY KEY (duel_id, seat),
    UNIQUE (duel_id, player_id)
);
CREATE INDEX duel_seats_by_player ON duel_seats (player_id, duel_id);
CREATE UNIQUE INDEX duel_seats_by_game ON duel_seats (game_id) WHERE game_id IS NOT NULL;

GRANT SELECT, INSERT, UPDATE, DELETE ON duels, duel_seats TO vegas_app;
