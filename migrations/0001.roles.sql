-- The role the service works as. It is granted SELECT and INSERT on the append-only tables and
-- nothing more, so even a bug in the service cannot rewrite history. Roles are cluster-wide and
-- several databases (one per test run) share it, hence "create if missing".
DO $$
BEGIN
    CREATE ROLE vegas_app NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

-- Refuses any change to a row of an append-only table (events, ledger transactions, postings).
CREATE FUNCTION refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'table % is append-only: % is refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;
