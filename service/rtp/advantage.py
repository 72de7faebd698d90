"""Advantage play, judged (pure): is a player, or a game, returning more than it should?

GLI-19 A.6.1-A.6.2: a skill game's operator watches for players who beat the game's price. The
lab publishes what a strong player gets back (``service.rtp.published``); a player whose return
over their last games is *significantly* above that, or a game whose return over its last
games is significantly above its whole published band, is reported (a significant event and a
row in finance's report). Acting on it (limits, disabling a player) is the operator's.

A return is the ratio of sums, payouts over stakes, over a window of collected games (voided
games were never wagered). Its 95% interval is the ratio estimator's normal approximation
(the delta method), which weighs each game by its stake as the ratio does. Below
``MIN_GAMES`` games nothing is judged: a handful of lucky games is not evidence.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from service.rtp.published import Figure, Publication

#: The fewest collected games a return is judged on (the normal approximation needs some).
MIN_GAMES = 30
#: How many of a player's latest games of one game are judged together.
PLAYER_WINDOW = 200
#: How many of a game's latest games (all players) are judged together.
GAME_WINDOW = 5_000

Subject = Literal["player", "game"]


@dataclass(frozen=True, slots=True)
class Return:
    """What a window of games paid back: payouts over stakes, with a 95% interval."""

    games: int
    staked: int
    paid: int
    rtp: Decimal
    low: Decimal
    high: Decimal


def actual_return(games: Iterable[tuple[int, int]]) -> Return:
    """The return of (stake, payout) pairs (at least one, every stake positive)."""
    pairs = list(games)
    n = len(pairs)
    if n == 0:
        raise ValueError("no games")
    staked = sum(s for s, _ in pairs)
    paid = sum(p for _, p in pairs)
    ratio = paid / staked
    mean_stake = staked / n
    # Var(ratio) ~ sum((p_i - ratio x s_i)^2) / (n (n - 1) mean_stake^2).
    spread = sum((p - ratio * s) ** 2 for s, p in pairs) / max(n - 1, 1)
    half = 1.96 * math.sqrt(spread / n) / mean_stake
    return Return(n, staked, paid, _d(ratio), _d(ratio - half), _d(ratio + half))


def _d(x: float) -> Decimal:
    return Decimal(f"{x:.4f}")


@dataclass(frozen=True, slots=True)
class Flag:
    """A return significantly above what the game is priced for."""

    subject: Subject
    variant: str
    found: Return
    strong_rtp: Decimal  # the strong player's published RTP
    band_high: Decimal  # the top of the published band (the strong player's interval)
    theoretical_rtp: Decimal  # the reference bot's: an ordinary careful player's
    reason: str


def _strong(published: Publication | None, found: Return) -> Figure | None:
    """What a return is judged against: the strong player's figure (nothing is judged before
    it is measured, or on too few games)."""
    if published is None or found.games < MIN_GAMES:
        return None
    return published.strong


def judge_player(variant: str, found: Return, published: Publication | None) -> Flag | None:
    """A player whose return's lower bound exceeds what the strong player gets back."""
    figure = _strong(published, found)
    if figure is None or published is None:
        return None
    strong = Decimal(figure.rtp)
    if found.low <= strong:
        return None
    return _flag(
        "player",
        variant,
        found,
        published,
        f"returned {found.rtp} over their last {found.games} games of {variant} (95% interval "
        f"{found.low} to {found.high}), above the strong player's {strong}",
    )


def judge_game(variant: str, found: Return, published: Publication | None) -> Flag | None:
    """A game whose return's lower bound is above its whole published band (the top of the
    strong player's interval): the price no longer holds, whoever is playing."""
    figure = _strong(published, found)
    if figure is None or published is None:
        return None
    high = Decimal(figure.high)
    if found.low <= high:
        return None
    return _flag(
        "game",
        variant,
        found,
        published,
        f"{variant} returned {found.rtp} over its last {found.games} games (95% interval "
        f"{found.low} to {found.high}), above its published band (up to {high})",
    )


def _flag(
    subject: Subject, variant: str, found: Return, published: Publication, reason: str
) -> Flag:
    strong = published.strong
    assert strong is not None  # judged only against a measured strong player
    return Flag(
        subject,
        variant,
        found,
        Decimal(strong.rtp),
        Decimal(strong.high),
        Decimal(published.bot.rtp),
        reason,
    )
