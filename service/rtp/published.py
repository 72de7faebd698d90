"""What each game publishes about its return, computed from the lab's measurements (pure).

A measurement is the histogram of units one player ended each simulated deal with
(``service/rtp/measured/<game>.json``, written by ``flask --app service rtp simulate
--publish``). Units do not depend on M, so every figure here is computed from the histograms at
the game's current M: re-pricing a game changes its M and nothing measured. Three players
(``service.rtp.players``) are published per game:

- the reference bot's RTP: what a careful ordinary player gets back;
- the strong player's RTP: the price is set against it (GLI-19 s4.7.1(b): a skill game's RTP
  under the best strategy known), so it is the RTP a game displays;
- the clairvoyant bound: what a player who knew every card could take (exact where the
  search was exhaustive on every deal, else a lower bound on that maximum, labelled so).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Any

from service.core.paytable import Paytable
from service.games import STANDALONE, game_named
from service.rtp.players import Kind, Player
from service.rtp.simulate import LAB, rtp_of

#: The band the house prices a game into against the strong player (issue 21): its RTP at
#: least 94% and the whole of its 95% interval below 97%. Games whose seed fixes M (Vegas)
#: publish whatever their strong player measures.
BAND = (Decimal("0.94"), Decimal("0.97"))


@dataclass(frozen=True, slots=True)
class Measurement:
    """One player's simulated deals of one game: the units each ended with."""

    game_id: str
    kind: Kind
    player: str  # the player and its version
    histogram: dict[int, int]  # units -> deals
    command: str  # what measured it
    measured_on: str  # the day, ISO 8601
    exact: bool = True  # a clairvoyant bound whose every search was exhaustive
    budget: str = ""  # a searching player's budget per decision (Player.budget); "" if none


@dataclass(frozen=True, slots=True)
class Figure:
    """A measurement's return at the game's M."""

    player: str
    games: int
    mean_units: str
    full_wins: int
    rtp: str
    low: str
    high: str
    measured: str
    measured_on: str
    exact: bool
    budget: str | None  # a searching player's budget per decision, as published; None if none


@dataclass(frozen=True, slots=True)
class Publication:
    game_id: str
    multiplier: str
    bot: Figure
    #: None until measured (a game re-measured with a new player shows the bot's meanwhile).
    strong: Figure | None
    clairvoyant: Figure | None

    @property
    def displayed(self) -> Figure:
        """The RTP a game shows: the strong player's, else (not yet measured) the bot's."""
        return self.strong or self.bot

    @property
    def beats_the_house(self) -> bool:
        """Does a strong player's 95% interval reach 100% (the stake back, or more)?"""
        return self.strong is not None and Decimal(self.strong.high) >= 1

    @property
    def basis(self) -> str:
        """The RTP's basis, in words (R-08)."""
        s, b, c = self.strong, self.bot, self.clairvoyant
        ordinary = (
            f"an ordinary careful player (the reference bot {b.player}, {b.games:,} deals) gets "
            f"{_pct(b.rtp)} (95% interval {_pct(b.low)} to {_pct(b.high)})"
        )
        if s is None:
            words = (
                f"Return to player at M {self.multiplier}, simulated on {b.games:,} seeded deals "
                f"({LAB}): {ordinary}. Strong play is not yet measured for this game."
            )
        else:
            words = (
                f"Return to player at M {self.multiplier}, simulated on {s.games:,} seeded "
                f"deals ({LAB}) by the strong player {s.player}, which sees only what a player "
                f"sees and searches: {_pct(s.rtp)} (95% interval {_pct(s.low)} to "
                f"{_pct(s.high)}); {ordinary}."
            )
        if c is not None:
            words += (
                f" A player who knew every card could take {'' if c.exact else 'at least '}"
                f"{_pct(c.rtp)} ({c.player}, {c.games:,} deals)."
            )
        words += " RTP depends on skill."
        if s is not None and self.beats_the_house:
            words += (
                " Strong play may return more than the stake: its 95% interval reaches "
                f"{_pct(s.high)}."
            )
        return words


def _pct(ratio: str) -> str:
    return f"{Decimal(ratio) * 100:.2f}%"


def figure(measurement: Measurement, multiplier: str | None = None) -> Figure:
    found = rtp_of(measurement.game_id, measurement.histogram, multiplier)
    return Figure(
        measurement.player,
        found.games,
        f"{found.mean_units:.3f}",
        found.full_wins,
        str(found.rtp),
        str(found.low),
        str(found.high),
        measurement.command,
        measurement.measured_on,
        measurement.exact,
        measurement.budget or None,
    )


def parse(game_id: str, document: dict[str, Any]) -> dict[Kind, Measurement]:
    """A measurement file's players (the JSON ``{"players": {kind: {...}}}``)."""
    found: dict[Kind, Measurement] = {}
    for kind, m in document["players"].items():
        found[kind] = Measurement(
            game_id,
            kind,
            m["player"],
            {int(u): int(n) for u, n in m["histogram"].items()},
            m["command"],
            m["measured_on"],
            bool(m.get("exact", True)),
            str(m.get("budget", "")),
        )
    return found


def render(measurements: dict[Kind, Measurement]) -> dict[str, Any]:
    """The JSON a measurement file holds (the inverse of :func:`parse`)."""
    return {
        "lab": LAB,
        "players": {
            kind: {
                "player": m.player,
                "measured_on": m.measured_on,
                "command": m.command,
                "exact": m.exact,
                **({"budget": m.budget} if m.budget else {}),
                "histogram": {str(u): n for u, n in sorted(m.histogram.items())},
            }
            for kind, m in sorted(measurements.items())
        },
    }


def measurement_file(game_id: str) -> str:
    return f"{game_id}.json"


@cache
def measurements(game_id: str) -> dict[Kind, Measurement]:
    """A game's committed measurements (empty if it has none yet)."""
    path = resources.files("service.rtp.measured") / measurement_file(game_id)
    if not path.is_file():
        return {}
    return parse(game_id, json.loads(path.read_text()))


def publication(game_id: str, multiplier: str | None = None) -> Publication | None:
    """The game's published figures at its current M (or at ``multiplier``: an operator's own
    rate, worked out from the same measured units); None until the bot is measured."""
    found = measurements(game_id)
    if "bot" not in found:
        return None
    m = multiplier or game_named(game_id).multiplier
    strong, bound = found.get("strong"), found.get("clairvoyant")
    return Publication(
        game_id,
        m,
        figure(found["bot"], m),
        figure(strong, m) if strong else None,
        figure(bound, m) if bound else None,
    )


def publications() -> dict[str, Publication | None]:
    return {game_id: publication(game_id) for game_id in STANDALONE}


def publish(
    game_id: str, kind: Kind, player: Player, histogram: dict[int, int], command: str
) -> str:
    """Write one player's histogram into the game's measurement file (the lab's only write:
    a developer's step before committing the new figures); the file's path."""
    path = resources.files("service.rtp.measured") / measurement_file(game_id)
    found = dict(measurements(game_id))
    found[kind] = Measurement(
        game_id,
        kind,
        player.version,
        histogram,
        command,
        date.today().isoformat(),
        player.exact if kind == "clairvoyant" else True,
        player.budget,
    )
    text = json.dumps(render(found), indent=1) + "\n"
    with resources.as_file(path) as real:
        real.write_text(text)
    measurements.cache_clear()
    return str(path)


def _interval(f: Figure) -> str:
    return f"{_pct(f.rtp)} ({_pct(f.low)[:-1]}-{_pct(f.high)})"


def games_table() -> str:
    """The README's games table: every game with its M and the three published figures."""
    lines = [
        "| id | game | M | units (max) | reference bot: RTP (95% interval) | strong player: RTP "
        "(95% interval), the price | clairvoyant bound |",
        "|---|---|---|---|---|---|---|",
    ]
    for game_id, rules in STANDALONE.items():
        found = publication(game_id)
        figures = ["not yet measured"] * 3
        if found is not None:
            s, c = found.strong, found.clairvoyant
            figures[0] = f"{_interval(found.bot)}, {found.bot.games:,} deals"
            if s is not None:
                budget = f", {s.budget}" if s.budget else ""
                figures[1] = f"**{_interval(s)}**, {s.games:,} deals, `{s.player}`{budget}" + (
                    " (may return more than the stake)" if found.beats_the_house else ""
                )
            if c is not None:
                figures[2] = f"{'' if c.exact else '>= '}{_pct(c.rtp)}, {c.games:,} deals"
        lines.append(
            f"| `{game_id}` | {rules.title} | {rules.multiplier} | {rules.units_are} "
            f"({rules.max_units}) | " + " | ".join(figures) + " |"
        )
    return "\n".join(lines) + "\n"


def beating_the_house(tables: Iterable[Paytable]) -> list[dict[str, str]]:
    """Every (paytable, game) priced so that strong play's 95% interval at that M reaches 100%
    of the stake (the paytable's own rate, else the rules' M): what an operator must see."""
    found = []
    for table in tables:
        for game_id, rules in STANDALONE.items():
            m = table.multiplier_for(game_id, rules.multiplier)
            shown = publication(game_id, m)
            if shown is not None and shown.strong is not None and shown.beats_the_house:
                found.append(
                    {
                        "paytable": f"{table.id}/{table.version}",
                        "currency": table.currency,
                        "variant": game_id,
                        "multiplier": m,
                        "strong_rtp": shown.strong.rtp,
                        "high": shown.strong.high,
                        "player": shown.strong.player,
                    }
                )
    return found


#: The Klondike family: their M is the seeds' (Vegas) or the lab's, and an operator pricing
#: one of them below strong play reads its M for 97% here (README: The operator's price).
KLONDIKE = ("vegas-draw1", "vegas-draw3", "klondike")
#: What the pricing table aims strong play at.
PRICE_TARGET = Decimal("0.97")


def multiplier_for(game_id: str, target: Decimal = PRICE_TARGET) -> str | None:
    """The largest M (a decimal of at most two places) at which the game's published strong
    player gets back at most ``target`` of its stakes; None until strong play is measured.
    RTP rises with M (the payout's rounding down only ever lowers it), so it is a search over
    hundredths."""
    strong = measurements(game_id).get("strong")
    if strong is None:
        return None
    low, high = 100, 100_000  # M 1 to 1000, in hundredths

    def rtp(hundredths: int) -> Decimal:
        return rtp_of(game_id, strong.histogram, _as_multiplier(hundredths)).rtp

    if rtp(low) > target:
        return None
    while low < high:
        mid = (low + high + 1) // 2
        if rtp(mid) <= target:
            low = mid
        else:
            high = mid - 1
    return _as_multiplier(low)


def _as_multiplier(hundredths: int) -> str:
    whole, part = divmod(hundredths, 100)
    return str(whole) if part == 0 else f"{whole}.{part:02d}".rstrip("0")


def pricing_table() -> str:
    """The README's pricing table: each Klondike variant's M for strong play at 97%."""
    lines = [
        "| id | the seeds' (or the lab's) M | strong play there | M for strong play at 97% |",
        "|---|---|---|---|",
    ]
    for game_id in KLONDIKE:
        found = publication(game_id)
        m = multiplier_for(game_id)
        if found is None or found.strong is None or m is None:
            continue
        at = figure(measurements(game_id)["strong"], m)  # measured: multiplier_for found M
        lines.append(
            f"| `{game_id}` | {found.multiplier} | {_interval(found.strong)} | "
            f"**{m}**: {_interval(at)} |"
        )
    return "\n".join(lines) + "\n"
