"""The withdrawal gate's SQL (service/services/verification.py holds what it means): a player's
wallet head and verified point (migrations/0037), the streams behind the postings between
them, moving the point forward (the audit's login alone may), the players the audit is behind
on, and the holds recorded since a moment."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

# A wallet's head (migrations/0037 wallet_head: its last posting other than a withdrawal's):
# what a withdrawal's verification must reach.
HEAD_SQL = "SELECT wallet_head(%(wallet)s)"

# How far the player is verified (none: nothing yet).
POINT_SQL = "SELECT through_posting FROM verified_points WHERE player_id = %(player_id)s"

# The streams whose events caused the wallet's postings after the point, up to the head, in
# the order they first moved it.
CAUSES_SQL = """
SELECT cause_stream FROM postings
 WHERE account_id = %(wallet)s AND posting_id > %(after)s AND posting_id <= %(head)s
 GROUP BY cause_stream
 ORDER BY min(posting_id)
"""

# Move the player's point forward to ``head`` (never back: 0037's trigger refuses that, and a
# slower verification finishing after a faster one simply changes nothing).
ADVANCE_SQL = """
INSERT INTO verified_points AS v (player_id, through_posting)
VALUES (%(player_id)s, %(head)s)
ON CONFLICT (player_id) DO UPDATE
   SET through_posting = EXCLUDED.through_posting, verified_at = statement_timestamp()
 WHERE v.through_posting < EXCLUDED.through_posting
"""

# Players whose wallet moved since their verified point, longest behind first: what beat's
# verification advances so that a withdrawal re-verifies only a few games.
BEHIND_SQL = """
SELECT a.player_id
  FROM accounts a
  LEFT JOIN verified_points v ON v.player_id = a.player_id
 WHERE a.kind = 'player' AND wallet_head(a.account_id) > coalesce(v.through_posting, 0)
 ORDER BY coalesce(v.verified_at, a.created_at)
 LIMIT %(limit)s
"""

# Where the significant-events log stands: a withdrawal waiting for its verification looks only
# at holds recorded after it.
MARK_SQL = "SELECT coalesce(max(id), 0) FROM significant_events"

# The newest hold of the player recorded after ``after``.
HOLD_SQL = """
SELECT id, details FROM significant_events
 WHERE kind = 'withdrawal-held' AND player_id = %(player_id)s AND id > %(after)s
 ORDER BY id DESC
 LIMIT 1
"""


# The player's newest hold, whenever recorded: beat's verification, finding the same again,
# lets it stand rather than record it every run.
LATEST_HOLD_SQL = """
SELECT id, details FROM significant_events
 WHERE kind = 'withdrawal-held' AND player_id = %(player_id)s
 ORDER BY id DESC
 LIMIT 1
"""

# One hold of the player's, by id: what an operator's correction answers.
HOLD_BY_ID_SQL = """
SELECT id, details FROM significant_events
 WHERE kind = 'withdrawal-held' AND player_id = %(player_id)s AND id = %(hold)s
"""


class VerificationStore:
    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def head(self, wallet: str) -> int | None:
        row = self._conn.execute(HEAD_SQL, {"wallet": wallet}).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def point(self, player_id: uuid.UUID) -> int | None:
        row = self._conn.execute(POINT_SQL, {"player_id": player_id}).fetchone()
        return None if row is None else int(row[0])

    def causes(self, wallet: str, after: int, head: int) -> list[str]:
        rows = self._conn.execute(CAUSES_SQL, {"wallet": wallet, "after": after, "head": head})
        return [str(row[0]) for row in rows]

    def advance(self, player_id: uuid.UUID, head: int) -> None:
        self._conn.execute(ADVANCE_SQL, {"player_id": player_id, "head": head})

    def behind(self, limit: int) -> list[uuid.UUID]:
        return [row[0] for row in self._conn.execute(BEHIND_SQL, {"limit": limit})]

    def mark(self) -> int:
        row = self._conn.execute(MARK_SQL).fetchone()
        assert row is not None
        return int(row[0])

    def hold_after(self, player_id: uuid.UUID, after: int) -> tuple[int, dict[str, Any]] | None:
        row = self._conn.execute(HOLD_SQL, {"player_id": player_id, "after": after}).fetchone()
        return None if row is None else (int(row[0]), dict(row[1]))

    def latest_hold(self, player_id: uuid.UUID) -> tuple[int, dict[str, Any]] | None:
        row = self._conn.execute(LATEST_HOLD_SQL, {"player_id": player_id}).fetchone()
        return None if row is None else (int(row[0]), dict(row[1]))

    def hold(self, player_id: uuid.UUID, hold: int) -> dict[str, Any] | None:
        row = self._conn.execute(HOLD_BY_ID_SQL, {"player_id": player_id, "hold": hold}).fetchone()
        return None if row is None else dict(row[1])
