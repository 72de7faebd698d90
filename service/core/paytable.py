"""Stakes and what a game pays: floor(units x stake x M / max_units).

Every game pays for units (cards on the foundations for most games); a full win reaches
``max_units`` and pays M times the stake, and the house keeps any fraction of a minor unit. All
amounts are integer minor units. Stakes are whole multiples of 52, so Vegas Klondike's card
(``stake * 5 / 52``) is a whole number of minor units and 52 cards pay exactly five times the
stake. Stake limits are configuration with an id and a version, one table per currency; a game
records the one it was played under, and the M and max_units of its rules.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from service import errors
from service.errors import RuleViolation

#: Stakes are multiples of this, so Vegas's 52 cards each pay whole minor units.
STAKE_GRID = 52


#: M is a decimal of at most two places ("5", "1.3"), so every payout is exact integer maths.
MULTIPLIER = re.compile(r"[1-9][0-9]{0,3}(\.[0-9]{1,2})?")


@lru_cache(maxsize=64)
def hundredths(multiplier: str) -> int:
    """M in hundredths: "5" -> 500, "1.3" -> 130."""
    if MULTIPLIER.fullmatch(multiplier) is None:
        raise ValueError(f"M must be a decimal with at most two places, not {multiplier!r}")
    whole, _, part = multiplier.partition(".")
    return int(whole) * 100 + int((part + "00")[:2])


def winnings(units: int, stake: int, multiplier: str, max_units: int) -> int:
    """What ``units`` pay at this stake: floor(units x stake x M / max_units). The one place
    the payout formula lives: play, collection, verification and the RTP lab all call it."""
    return units * stake * hundredths(multiplier) // (100 * max_units)


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
    win_rate: int  # one unit's worth, rounded down (exact for Vegas)
    multiplier: str
    max_units: int
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
    #: The operator's own price of some games: (game id, M) pairs, each game's M in place of
    #: the M its rules publish (issue 42). A game not named pays its rules' M (the seeds' for
    #: the Vegas variants). A game records the M it was dealt at, with this table's id and
    #: version, so a change is a new version and games dealt before settle at their own.
    rates: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        # A bad paytable must never reach a player: refuse it when configuration is loaded.
        for game_id, multiplier in self.rates:
            hundredths(multiplier)  # a decimal of at most two places, or ValueError
            if [g for g, _ in self.rates].count(game_id) > 1:
                raise ValueError(f"paytable {self.id}: two rates for {game_id}")
        bounds = (self.min_stake, self.default_stake, self.max_stake, *self.ladder)
        if any(s % STAKE_GRID for s in bounds):
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
        found: dict[str, Any] = {
            "id": self.id,
            "version": self.version,
            "currency": self.currency,
            "min_stake": self.min_stake,
            "default_stake": self.default_stake,
            "max_stake": self.max_stake,
            "ladder": list(self.ladder),
        }
        if self.rates:  # a table without its own rates logs as it always did
            found["rates"] = dict(self.rates)
        return found

    def multiplier_for(self, game_id: str, published: str) -> str:
        """The M this table pays ``game_id`` at: its own rate, else ``published`` (the rules')."""
        return dict(self.rates).get(game_id, published)

    def check_stake(self, stake: int) -> None:
        """Refuse a stake outside the range or not a multiple of 52, naming what is allowed."""
        allowed = (
            f"stakes are multiples of {STAKE_GRID} from {self.min_stake} to {self.max_stake} "
            f"{self.currency} minor units ({format_minor(self.min_stake, self.currency)} to "
            f"{format_minor(self.max_stake, self.currency)})"
        )
        if not self.min_stake <= stake <= self.max_stake:
            raise RuleViolation(errors.STAKE_OUT_OF_RANGE, f"stake {stake} refused: {allowed}")
        if stake % STAKE_GRID:
            raise RuleViolation(errors.STAKE_NOT_MULTIPLE, f"stake {stake} refused: {allowed}")

    def quote(self, stake: int, multiplier: str, max_units: int) -> Quote:
        """What a stake pays in a game of this M and max_units."""
        self.check_stake(stake)
        max_payout = winnings(max_units, stake, multiplier, max_units)
        below = bisect_left(self.ladder, stake)
        above = bisect_right(self.ladder, stake)
        return Quote(
            stake=stake,
            currency=self.currency,
            win_rate=winnings(1, stake, multiplier, max_units),
            multiplier=multiplier,
            max_units=max_units,
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
            rates=tuple(
                (str(game_id), str(m)) for game_id, m in sorted(entry.get("rates", {}).items())
            ),
        )
        if table.currency in tables:
            raise ValueError(f"two paytables for {table.currency}")
        tables[table.currency] = table
    return tables


class PaytableBook(Mapping[str, Paytable]):
    """Today's paytables by currency (as a mapping, where a plain one is taken), and every
    version the configuration log has recorded: a game staked on a version no longer
    configured is verified against what that version said (its stakes and own rates), not
    against the M the game recorded for itself. A table is known by its id, version and
    currency; every logged copy is kept (a table changed without a new version was logged
    twice, and a game dealt under either copy is its)."""

    def __init__(
        self, current: Mapping[str, Paytable], logged: Iterable[Mapping[str, Any]] = ()
    ) -> None:
        self._current = dict(current)
        self._known: dict[tuple[str, int, str], list[Paytable]] = {}
        self.logged = False  # whether the log held any table (then it holds every one dealt)
        for table in self._current.values():
            self._add(table)
        for entry in logged:
            # Each logged table was valid when it was loaded; one an older release logged in
            # another shape is passed over (its games are checked by their recorded M), never
            # allowed to stop every other game's check.
            try:
                (table,) = paytables_from_config([entry]).values()
            except (AttributeError, KeyError, TypeError, ValueError):
                continue
            self._add(table)
            self.logged = True

    def _add(self, table: Paytable) -> None:
        copies = self._known.setdefault((table.id, table.version, table.currency), [])
        if table not in copies:
            copies.append(table)

    def __getitem__(self, currency: str) -> Paytable:
        return self._current[currency]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current)

    def __len__(self) -> int:
        return len(self._current)

    def tables(self, paytable_id: str, version: int, currency: str | None) -> list[Paytable]:
        """Every copy of this table in this currency, today's first; ``currency`` None: in any
        currency (a certification game records the sandbox's with its player's table)."""
        return [
            table
            for (i, v, c), copies in self._known.items()
            if (i, v) == (paytable_id, version) and currency in (None, c)
            for table in copies
        ]


def paytable_for(tables: Mapping[str, Paytable], currency: str) -> Paytable:
    try:
        return tables[currency]
    except KeyError:
        known = ", ".join(sorted(tables))
        raise RuleViolation(
            errors.UNKNOWN_CURRENCY, f"no paytable for currency {currency!r}; offered: {known}"
        ) from None
