-- depends: 0034.stalls-named
-- The audit answers to its own login, and no money leaves before the history behind it verifies
-- (issue 36, items 8 and the withdrawal gate). With the service's login an insider inserted
-- every planned unit of a running audit as clean before the workers checked it (26 real findings
-- reported as 0) and stored a clean reconciliation over a day's real one. Now:
--
-- - the group role vegas_audit (a login of its own, AUDIT_DATABASE_URL, held by the worker and
--   the CLI, never by the web process) reads everything and alone writes an audit's plan,
--   units and findings, a stored reconciliation, and players' verified points;
-- - the service's login only asks for an audit, with an auditor's key as presented
--   (request_audit); the audit's worker plans it;
-- - a withdrawal is refused unless the audit's login has recorded its player verified up to
--   the head of their wallet (verified_points; service/services/verification.py verifies, on the
--   worker, every game, duel and transaction behind the wallet's postings since the last point).

DO $$
BEGIN
    CREATE ROLE vegas_audit NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

-- The audit reads everything the service writes (a later migration's new table grants its own
-- SELECT to vegas_audit too).
GRANT SELECT ON ALL TABLES IN SCHEMA public TO vegas_audit;

-- --- the audit's own rows ----------------------------------------------------------------------

-- Planned by the audit's worker: NULL until it has planned the audit's units (an audit asked for
-- over HTTP is planned on the worker, which alone may write the plan). Audits from before were
-- planned when they were made.
ALTER TABLE audits ADD COLUMN planned_at timestamptz;
UPDATE audits SET planned_at = created_at;

REVOKE INSERT, UPDATE, DELETE ON audits, audit_units, audit_findings, audit_plan FROM vegas_app;
GRANT INSERT, UPDATE ON audits TO vegas_audit;
GRANT INSERT ON audit_units, audit_findings, audit_plan TO vegas_audit;

-- Ask for an audit as the holder of p_credential, which must be a live auditor's key: its row,
-- running and not yet planned, naming the auditor. Nothing else of the audit is the service's.
CREATE FUNCTION request_audit(p_credential text, p_audit uuid, p_scope jsonb)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
    who_role text;
    who_actor text;
BEGIN
    SELECT h.role, h.actor INTO who_role, who_actor FROM credential_holder(p_credential) h;
    IF who_role IS DISTINCT FROM 'auditor' THEN
        RAISE EXCEPTION 'refused: only an auditor asks for an audit'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    INSERT INTO audits (audit_id, scope, requested_by, status, total)
    VALUES (p_audit, p_scope, who_actor, 'running', 0);
END
$$;
REVOKE EXECUTE ON FUNCTION request_audit FROM PUBLIC;
GRANT EXECUTE ON FUNCTION request_audit TO vegas_app;

-- A stored reconciliation is the audit's answer about a day: the audited may not write it.
REVOKE EXECUTE ON FUNCTION store_reconciliation FROM PUBLIC, vegas_app;
GRANT EXECUTE ON FUNCTION store_reconciliation TO vegas_audit;

-- The audit compares every ledger transaction with what its cause moves.
GRANT EXECUTE ON FUNCTION ledger_entry_of TO vegas_audit;

-- --- verified points and the withdrawal gate ---------------------------------------------------

-- How far each player's history is verified: every posting on their wallet up to
-- through_posting, with the game, duel or player stream that caused it (its rules re-decided,
-- its commitment, the ledger's mapping, the chain). Only ever moves forward.
CREATE TABLE verified_points (
    player_id        uuid        PRIMARY KEY,
    through_posting  bigint      NOT NULL,
    verified_at      timestamptz NOT NULL DEFAULT statement_timestamp()
);
CREATE FUNCTION verified_point_moves_forward() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.player_id <> OLD.player_id OR NEW.through_posting < OLD.through_posting THEN
        RAISE EXCEPTION 'a verified point only moves forward: player %', OLD.player_id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER verified_points_forward BEFORE UPDATE ON verified_points
    FOR EACH ROW EXECUTE FUNCTION verified_point_moves_forward();
CREATE TRIGGER verified_points_kept BEFORE DELETE OR TRUNCATE ON verified_points
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
GRANT SELECT ON verified_points TO vegas_app;
GRANT SELECT, INSERT, UPDATE ON verified_points TO vegas_audit;

-- A wallet's head: its last posting other than a withdrawal's. A withdrawal only takes money out
-- and passed this gate itself, so the next one need not wait for it to be verified again (two
-- withdrawals at once both pay, as the balance allows); every other posting (a deposit, a
-- stake, winnings, a refund, a duel's legs) must be verified before money leaves.
-- (postings_by_account read backwards, stopping at the first such posting.)
CREATE FUNCTION wallet_head(p_wallet text) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT p.posting_id FROM postings p
      JOIN ledger_transactions t ON t.transaction_id = p.transaction_id
     WHERE p.account_id = p_wallet AND t.kind <> 'withdrawal'
     ORDER BY p.posting_id DESC
     LIMIT 1
$$;
GRANT EXECUTE ON FUNCTION wallet_head TO vegas_app, vegas_audit;

-- The gate: a withdrawal's transaction (its cause a FundsWithdrawn on the player's own stream,
-- post_transaction and ledger_entry_of, 0028) is refused unless the audit has verified the
-- player through their wallet's head. The service asks the audit's worker first
-- (service/services/verification.py) and answers a hold as 409 withdrawal-held; this refusal
-- reaches a client only if money moved on the wallet between that verification and the
-- withdrawal (the service then verifies again).
CREATE FUNCTION refuse_unverified_withdrawal() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    player uuid := substr(NEW.cause_stream, 8)::uuid;
    head bigint;
BEGIN
    head := wallet_head('player:' || player);  -- the wallet (service/core/ledger.py)
    IF head IS NOT NULL AND NOT EXISTS (SELECT 1 FROM verified_points v
                                         WHERE v.player_id = player
                                           AND v.through_posting >= head) THEN
        RAISE EXCEPTION 'withdrawal held: player % is not verified up to posting %', player, head
            USING ERRCODE = 'check_violation', HINT = 'unverified';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER withdrawals_verified BEFORE INSERT ON ledger_transactions
    FOR EACH ROW WHEN (NEW.kind = 'withdrawal') EXECUTE FUNCTION refuse_unverified_withdrawal();

-- A hold: the audit's verification of a player found something, so their withdrawal waits for
-- an operator; the audit's login records it in the operator's queue.
ALTER TABLE significant_events DROP CONSTRAINT significant_events_kind_check;
ALTER TABLE significant_events ADD CONSTRAINT significant_events_kind_check
    CHECK (kind IN ('void', 'configuration', 'big-win', 'session', 'collection-failed',
                    'certification', 'advantage-play', 'gaming-control', 'safer-gambling',
                    'log-stalled', 'withdrawal-held'));
GRANT INSERT ON significant_events TO vegas_audit;
