-- depends: 0006.audit-finance
-- Sealed until seen: a game's secret is its server seed or, for a certification game given its
-- deck, that deck (which the Dealt event no longer records in clear). Both stay encrypted here
-- until the game ends and its ending event reveals them.
ALTER TABLE game_seeds
    ADD COLUMN kind text NOT NULL DEFAULT 'seed' CHECK (kind IN ('seed', 'deck'));
