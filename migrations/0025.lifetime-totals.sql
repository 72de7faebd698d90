-- depends: 0024.cashier-by-day
-- Lifetime totals kept as the days are (issue 25): the daily report's lifetime sums and the
-- stakes held when its range begins summed every day of daily_totals since the first (13
-- variants a day and currency: 0.96 ms against 0.11 at 10 million events, and growing with
-- every day the casino runs). lifetime_totals holds each currency's and variant's sum of every
-- day, so the report reads it and subtracts only the days after its range's end (none when it
-- ends today) or from its start (the range's own days).
--
-- Kept by a trigger on daily_totals, not by the projector's code: every writer of a day's row
-- (this release's projector, an older release's still running during a rolling deploy, a
-- rebuild that deletes the rows, a loader writing them as their owner) moves the lifetime with
-- it, in the same transaction. The one rule, "the lifetime is the sum of the days", is
-- rebuild_lifetime_totals() below, which this migration runs once under a lock that keeps every
-- writer of daily_totals out until the trigger is in place.

CREATE TABLE lifetime_totals (
    currency        char(3) NOT NULL,
    variant         text    NOT NULL,
    games_started   bigint  NOT NULL DEFAULT 0,
    games_finished  bigint  NOT NULL DEFAULT 0,
    stakes          bigint  NOT NULL DEFAULT 0,
    payouts         bigint  NOT NULL DEFAULT 0,
    refunds         bigint  NOT NULL DEFAULT 0,
    stakes_settled  bigint  NOT NULL DEFAULT 0,
    certification_games bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (currency, variant)
);
GRANT SELECT ON lifetime_totals TO vegas_app;

-- Add one day's row to its lifetime (sign 1) or take it away (sign -1).
CREATE FUNCTION add_to_lifetime_totals(d daily_totals, sign integer) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    INSERT INTO lifetime_totals AS l (currency, variant, games_started, games_finished, stakes,
                                      payouts, refunds, stakes_settled, certification_games)
    VALUES (d.currency, d.variant, sign * d.games_started, sign * d.games_finished,
            sign * d.stakes, sign * d.payouts, sign * d.refunds, sign * d.stakes_settled,
            sign * d.certification_games)
    ON CONFLICT (currency, variant) DO UPDATE SET
        games_started = l.games_started + EXCLUDED.games_started,
        games_finished = l.games_finished + EXCLUDED.games_finished,
        stakes = l.stakes + EXCLUDED.stakes,
        payouts = l.payouts + EXCLUDED.payouts,
        refunds = l.refunds + EXCLUDED.refunds,
        stakes_settled = l.stakes_settled + EXCLUDED.stakes_settled,
        certification_games = l.certification_games + EXCLUDED.certification_games
$$;
REVOKE EXECUTE ON FUNCTION add_to_lifetime_totals FROM PUBLIC;

-- A day's row inserted, changed (the projector's upsert) or deleted: its lifetime follows.
CREATE FUNCTION daily_totals_to_lifetime() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM add_to_lifetime_totals(OLD, -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM add_to_lifetime_totals(NEW, 1);
    END IF;
    RETURN NULL;
END
$$;

-- The lifetime recomputed from the days: once here, and by whoever writes daily_totals with
-- the row triggers switched off (tests/benchmarks/history.py loads as a replica session).
CREATE FUNCTION rebuild_lifetime_totals() RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
    DELETE FROM lifetime_totals;
    INSERT INTO lifetime_totals (currency, variant, games_started, games_finished, stakes,
                                 payouts, refunds, stakes_settled, certification_games)
    SELECT currency, variant, sum(games_started), sum(games_finished), sum(stakes),
           sum(payouts), sum(refunds), sum(stakes_settled), sum(certification_games)
      FROM daily_totals
     GROUP BY currency, variant;
$$;
REVOKE EXECUTE ON FUNCTION rebuild_lifetime_totals FROM PUBLIC;

-- Emptying the days (TRUNCATE fires no row trigger) empties the lifetime.
CREATE FUNCTION daily_totals_emptied() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
    DELETE FROM lifetime_totals;
    RETURN NULL;
END
$$;

-- No projector writes a day while the lifetime is summed and the triggers put in place.
LOCK TABLE daily_totals IN SHARE ROW EXCLUSIVE MODE;
DO $$ BEGIN PERFORM rebuild_lifetime_totals(); END $$;  -- (a DO block: no result to print)
CREATE TRIGGER daily_totals_lifetime AFTER INSERT OR UPDATE OR DELETE ON daily_totals
    FOR EACH ROW EXECUTE FUNCTION daily_totals_to_lifetime();
CREATE TRIGGER daily_totals_emptied AFTER TRUNCATE ON daily_totals
    FOR EACH STATEMENT EXECUTE FUNCTION daily_totals_emptied();
