"""Stakes and the Las Vegas paytable: each card on the foundations pays ``stake * 5 / 52``.

All amounts are integer minor units. Stakes are whole multiples of 52 so the win rate is a whole
number of minor units and 52 cards pay exactly five times the stake. Paytables are configuration
with an id and a version; a game records the ones it was played under.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from service import errors
from service.errors import RuleViolation

CARDS_IN_DECK = 52
#: All 52 cards on the foundations pay this many times the stake (seed 001: $52 in, $260 out).
FULL_PAYOUT_MULTIPLE = 5


def format_minor(amount: int, currency: str) -> str:
    """``104, "GBP"`` -> ``"GBP 1.04"``; for messages only, never for arithmetic."""
    sign = "-" if amount < 0 else ""
    major, minor = divmod(abs(amount), 100)
    return f"{sign}{currency} {major:,}.{minor:02d}"


@dataclass(frozen=True, slots=True)
class Quote:
    """What a player sees before any money moves."""

    stake: int
    currency: str
    win_rate: int
    max_payout: int
    max_net_win: int
    previous_stake: int | None
    next_stake: int | None


@dataclass(frozen=True, slots=True)
class Paytable:
    id: str
    version: int
    currency: str
    min_stake: int
    default_stake: int
    max_stake: int
    ladder: tuple[int, ...]  # the stakes the front-end's +/- buttons step through

    def __post_init__(self) -> None:
        # A bad paytable must never reach a player: refuse it when configuration is loaded.
        bounds = (self.min_stake, self.default_stake, self.max_stake, *self.ladder)
        if any(s % CARDS_IN_DECK for s in bounds):
            raise ValueError(f"paytable {self.id}: every stake must be a multiple of 52")
        if not 0 < self.min_stake <= self.default_stake <= self.max_stake:
            raise ValueError(f"paytable {self.id}: need 0 < min <= default <= max")
        if list(self.ladder) != sorted(set(self.ladder)) or not self.ladder:
            raise ValueError(f"paytable {self.id}: ladder must be strictly increasing")
        if self.ladder[0] < self.min_stake or self.ladder[-1] > self.max_stake:
            raise ValueError(f"paytable {self.id}: ladder must lie inside the stake range")
        if self.default_stake not in self.ladder:
            raise ValueError(f"paytable {self.id}: the default stake must be on the ladder")

    def as_config(self) -> dict[str, Any]:
        """The table as configuration names it (PAYTABLES_FILE's entries, and the log)."""
        return {
            "id": self.id,
            "version": self.version,
            "currency": self.currency,
            "min_stake": self.min_stake,
            "default_stake": self.default_stake,
            "max_stake": self.max_stake,
            "ladder": list(self.ladder),
        }

    def check_stake(self, stake: int) -> None:
        """Refuse a stake outside the range or not a multiple of 52, naming what is allowed."""
        allowed = (
            f"stakes are multiples of {CARDS_IN_DECK} from {self.min_stake} to {self.max_stake} "
            f"{self.currency} minor units ({format_minor(self.min_stake, self.currency)} to "
            f"{format_minor(self.max_stake, self.currency)})"
        )
        if not self.min_stake <= stake <= self.max_stake:
            raise RuleViolation(errors.STAKE_OUT_OF_RANGE, f"stake {stake} refused: {allowed}")
        if stake % CARDS_IN_DECK:
            raise RuleViolation(errors.STAKE_NOT_MULTIPLE, f"stake {stake} refused: {allowed}")

    def win_rate(self, stake: int) -> int:
        """What one card on the foundations is worth at this stake."""
        self.check_stake(stake)
        return stake * FULL_PAYOUT_MULTIPLE // CARDS_IN_DECK

    def quote(self, stake: int) -> Quote:
        rate = self.win_rate(stake)
        max_payout = rate * CARDS_IN_DECK
        below = bisect_left(self.ladder, stake)
        above = bisect_right(self.ladder, stake)
        return Quote(
            stake=stake,
            currency=self.currency,
            win_rate=rate,
            max_payout=max_payout,
            max_net_win=max_payout - stake,
            previous_stake=self.ladder[below - 1] if below > 0 else None,
            next_stake=self.ladder[above] if above < len(self.ladder) else None,
        )


DEFAULT_LADDER = (
    104, 156, 208, 260, 520, 1040, 2080, 5200, 10400,
    26000, 52000, 104000, 260000, 520000, 1040000,
)  # fmt: skip


def default_paytables() -> dict[str, Paytable]:
    """Seed 000's limits (GBP 1.04 to 10,400, default GBP 5.20), the same figures per currency."""
    return {
        cur: Paytable(
            id=f"vegas-{cur.lower()}",
            version=1,
            currency=cur,
            min_stake=104,
            default_stake=520,
            max_stake=1_040_000,
            ladder=DEFAULT_LADDER,
        )
        for cur in ("GBP", "EUR", "USD")
    }


def paytables_from_config(entries: Iterable[Mapping[str, Any]]) -> dict[str, Paytable]:
    """Build the paytables, one per currency, from configuration entries (e.g. parsed JSON)."""
    tables: dict[str, Paytable] = {}
    for entry in entries:
        table = Paytable(
            id=str(entry["id"]),
            version=int(entry["version"]),
            currency=str(entry["currency"]),
            min_stake=int(entry["min_stake"]),
            default_stake=int(entry["default_stake"]),
            max_stake=int(entry["max_stake"]),
            ladder=tuple(int(s) for s in entry["ladder"]),
        )
        if table.currency in tables:
            raise ValueError(f"two paytables for {table.currency}")
        tables[table.currency] = table
    return tables


def paytable_for(tables: Mapping[str, Paytable], currency: str) -> Paytable:
    try:
        return tables[currency]
    except KeyError:
        known = ", ".join(sorted(tables))
        raise RuleViolation(
            errors.UNKNOWN_CURRENCY, f"no paytable for currency {currency!r}; offered: {known}"
        ) from None
