-- depends: 0002.event-store
-- The wallet ledger, double entry. Accounts: each player's wallet, the house's stake and payout
-- accounts and the cashier, per currency. Transactions and postings are append-only; balances
-- are a projection of the postings kept in the same transaction.
CREATE TABLE accounts (
    account_id  text        PRIMARY KEY,
    kind        text        NOT NULL
                CHECK (kind IN ('player', 'house-stakes', 'house-payouts', 'cashier')),
    currency    char(3)     NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    player_id   uuid,
    created_at  timestamptz NOT NULL DEFAULT statement_timestamp(),
    CHECK ((kind = 'player') = (player_id IS NOT NULL))
);
CREATE UNIQUE INDEX accounts_one_wallet_per_player ON accounts (player_id, currency)
    WHERE player_id IS NOT NULL;

CREATE TABLE ledger_transactions (
    transaction_id         uuid        PRIMARY KEY,
    client_transaction_id  text        NOT NULL UNIQUE,  -- applied exactly once
    kind                   text        NOT NULL
                           CHECK (kind IN ('deposit', 'withdrawal', 'stake', 'winnings', 'refund')),
    fingerprint            text        NOT NULL,  -- what was asked, to refuse a reused id
    currency               char(3)     NOT NULL,
    amount                 bigint      NOT NULL CHECK (amount > 0),
    cause_stream           text        NOT NULL,  -- the event that caused it
    cause_version          integer     NOT NULL,
    request_id             text,
    created_at             timestamptz NOT NULL DEFAULT statement_timestamp(),
    UNIQUE (cause_stream, cause_version)
);

CREATE TABLE postings (
    posting_id      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transaction_id  uuid        NOT NULL REFERENCES ledger_transactions,
    account_id      text        NOT NULL REFERENCES accounts,
    amount          bigint      NOT NULL CHECK (amount <> 0),  -- signed: credit > 0 > debit
    balance_before  bigint      NOT NULL,
    balance_after   bigint      NOT NULL,
    cause_stream    text        NOT NULL,
    cause_version   integer     NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT statement_timestamp(),
    CHECK (balance_after = balance_before + amount)
);
CREATE INDEX postings_by_account ON postings (account_id, posting_id);
CREATE INDEX postings_by_transaction ON postings (transaction_id);

CREATE TABLE account_balances (
    account_id  text    PRIMARY KEY REFERENCES accounts,
    kind        text    NOT NULL,
    currency    char(3) NOT NULL,
    balance     bigint  NOT NULL DEFAULT 0,
    -- The last line of defence: a player's balance never goes negative.
    CHECK (kind <> 'player' OR balance >= 0)
);

-- Double entry, enforced by the database at commit: a transaction has postings, and they sum
-- to zero. Deferred, so the postings of one transaction may be inserted in any order.
CREATE FUNCTION check_transaction_balanced() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    total bigint;
    lines integer;
BEGIN
    SELECT coalesce(sum(amount), 0), count(*) INTO total, lines
      FROM postings WHERE transaction_id = NEW.transaction_id;
    IF lines < 2 OR total <> 0 THEN
        RAISE EXCEPTION 'ledger transaction % does not balance: % postings summing to %',
            NEW.transaction_id, lines, total
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER ledger_transactions_balanced
    AFTER INSERT ON ledger_transactions DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION check_transaction_balanced();
CREATE CONSTRAINT TRIGGER postings_balanced
    AFTER INSERT ON postings DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION check_transaction_balanced();

CREATE TRIGGER accounts_append_only BEFORE UPDATE OR DELETE ON accounts
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER ledger_transactions_append_only BEFORE UPDATE OR DELETE ON ledger_transactions
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER accounts_no_truncate BEFORE TRUNCATE ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER postings_no_truncate BEFORE TRUNCATE ON postings
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

GRANT SELECT, INSERT ON accounts, ledger_transactions, postings TO vegas_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON account_balances TO vegas_app;
