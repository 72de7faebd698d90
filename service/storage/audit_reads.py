"""An audit chunk's reads and writes, a statement each for the whole chunk: the ledger postings
every stream of the chunk caused, and the chunk's results (its units' rows, their findings)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import psycopg

from service.streams import is_duel, is_game
from service.verification import Finding, PostingRow

# The postings caused by any of these streams' events, with their transactions, in order.
POSTINGS_OF_SQL = """
SELECT p.posting_id, t.client_transaction_id, t.kind, t.amount, t.cause_stream,
       t.cause_version, p.account_id, p.amount, p.balance_before, p.balance_after
  FROM ledger_transactions t
  JOIN postings p USING (transaction_id)
 WHERE t.cause_stream = ANY(%(streams)s)
 ORDER BY p.posting_id
"""

# Record the chunk's checked units; a unit an earlier delivery of the chunk recorded stays as it
# was and is not returned, so only the new ones get their findings (and are counted).
UNITS_SQL = """
INSERT INTO audit_units (audit_id, unit, ok)
SELECT %(audit_id)s, u.unit, u.ok FROM unnest(%(units)s::text[], %(oks)s::boolean[]) AS u(unit, ok)
ON CONFLICT (audit_id, unit) DO NOTHING
RETURNING unit
"""

# The findings of the units just recorded, numbered within their unit.
FINDINGS_SQL = """
INSERT INTO audit_findings (audit_id, unit, seq, game_id, check_name, location, expected, found)
SELECT %(audit_id)s, f.unit, f.seq, f.game_id, f.check_name, f.location, f.expected, f.found
  FROM unnest(%(units)s::text[], %(seqs)s::int[], %(game_ids)s::uuid[], %(checks)s::text[],
              %(locations)s::text[], %(expected)s::text[], %(found)s::text[])
       AS f(unit, seq, game_id, check_name, location, expected, found)
ON CONFLICT (audit_id, unit, seq) DO NOTHING
"""


class AuditReads:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def postings_of(self, streams: Sequence[str]) -> dict[str, list[PostingRow]]:
        found: dict[str, list[PostingRow]] = {}
        with self._conn.cursor() as cur:
            cur.execute(POSTINGS_OF_SQL, {"streams": list(streams)}, prepare=True)
            for row in cur.fetchall():
                found.setdefault(row[4], []).append(PostingRow(*row))
        return found

    def record(self, audit_id: uuid.UUID, results: Sequence[tuple[str, list[Finding]]]) -> int:
        """Record the units and their findings; how many units were new."""
        with self._conn.cursor() as cur:
            cur.execute(
                UNITS_SQL,
                {
                    "audit_id": audit_id,
                    "units": [unit for unit, _ in results],
                    "oks": [not findings for _, findings in results],
                },
            )
            new = {row[0] for row in cur.fetchall()}
            rows = [
                (unit, seq, _game_id(unit), f.check, f.location, f.expected, f.found)
                for unit, findings in results
                if unit in new
                for seq, f in enumerate(findings)
            ]
            if rows:
                columns = list(zip(*rows, strict=True))
                cur.execute(
                    FINDINGS_SQL,
                    {
                        "audit_id": audit_id,
                        "units": list(columns[0]),
                        "seqs": list(columns[1]),
                        "game_ids": list(columns[2]),
                        "checks": list(columns[3]),
                        "locations": list(columns[4]),
                        "expected": list(columns[5]),
                        "found": list(columns[6]),
                    },
                )
        return len(new)


def _game_id(unit: str) -> uuid.UUID | None:
    """The game (or duel) a unit names, for its findings."""
    if is_game(unit) or is_duel(unit):
        return uuid.UUID(unit.split("-", 1)[1])
    return None
