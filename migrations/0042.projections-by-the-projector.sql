-- depends: 0041.corrections
-- The finance projections are the projector's, not the service's (issue 36, item 10: with the
-- service's login, zeroing daily_totals and daily_cashier made the daily report show payouts 0;
-- since then the audit's log unit found it, but nothing refused it). daily_totals,
-- daily_cashier and daily_depositors, and the projector's two checkpoints in
-- projection_checkpoints ('daily-totals', 'daily-cashier'), are written only by background
-- work's login (vegas_background, 0039), which folds them from the log: beat's projector, or a
-- report's catch-up, which the web process asks the worker for (service/services/
-- finance_reports.py). The service's login still reads them, and still keeps the rebuild's own
-- checkpoints (its other rows).

REVOKE INSERT, UPDATE, DELETE ON daily_totals, daily_cashier, daily_depositors FROM vegas_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON daily_totals, daily_cashier, daily_depositors
    TO vegas_background;

-- The projector's checkpoints say how far the log is folded: moved by anyone else, events would
-- be skipped (or folded twice).
CREATE FUNCTION refuse_finance_checkpoints_but_the_projector_s() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF (CASE TG_OP WHEN 'DELETE' THEN OLD.name ELSE NEW.name END) IN ('daily-totals',
                                                                      'daily-cashier')
       OR (TG_OP = 'UPDATE' AND OLD.name IN ('daily-totals', 'daily-cashier')) THEN
        IF NOT pg_has_role(current_user, 'vegas_background', 'USAGE') THEN
            RAISE EXCEPTION 'refused: only background work''s login moves the finance projector''s checkpoints'
                USING ERRCODE = 'insufficient_privilege';
        END IF;
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END
$$;
CREATE TRIGGER finance_checkpoints_are_the_projector_s
    BEFORE INSERT OR UPDATE OR DELETE ON projection_checkpoints
    FOR EACH ROW EXECUTE FUNCTION refuse_finance_checkpoints_but_the_projector_s();
