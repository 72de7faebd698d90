"""Helpers for tests through the real PostgreSQL: players with money, games dealt."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from service.bootstrap import Container
from service.core.dealing import CertificationDeal
from service.services.games import LoadedGame
from service.storage.projections import PlayerRow
from tests.builders import easy_deck
from tests.credentials import OPERATOR, as_player, mint_test_session, player_token
from tests.dbtools import ScratchDatabase

#: What tests here import from this module (kept as their names for them).
__all__ = ["OPERATOR", "World", "as_player", "mint_test_session", "player_token", "world"]


class World:
    """Opens players and deals games through the real services."""

    def __init__(self, container: Container) -> None:
        self.c = container

    def player(self, balance: int = 0, currency: str = "GBP") -> PlayerRow:
        row = self.c.players.open_account(OPERATOR, f"ext-{uuid.uuid4()}", currency).row
        mint_test_session(self.c, row.player_id)
        if balance:
            self.c.players.deposit(OPERATOR, row.player_id, balance, f"seed-{uuid.uuid4()}")
        return row

    def game(
        self,
        player: PlayerRow | None = None,
        *,
        stake: int = 520,
        variant: str = "vegas-draw1",
        deck: tuple[str, ...] | None = None,
    ) -> LoadedGame:
        player = player or self.player(balance=stake)
        certification = CertificationDeal(deck=deck) if deck is not None else None
        return self.c.games.start(
            as_player(player.player_id),
            player.player_id,
            variant,
            stake,
            certification=certification,
        )

    def easy_game(self, player: PlayerRow | None = None, stake: int = 520) -> LoadedGame:
        return self.game(player, stake=stake, deck=easy_deck())

    def balance(self, player: PlayerRow) -> int:
        return self.c.players.wallet(player.player_id).balance

    def sandbox_balance(self, player: PlayerRow) -> int:
        """The net of the player's certification games (easy_game deals one)."""
        return self.c.players.wallet(player.player_id).sandbox.balance


@pytest.fixture
def world(container: Container) -> World:
    return World(container)


@pytest.fixture
def insider(
    fresh_database: ScratchDatabase, fresh_container: Container
) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    """The service's own login on fresh_container's database, as its pool opens it: what an
    insider holding that login may do (issue 36)."""
    with psycopg.connect(fresh_database.service_url) as conn:
        conn.execute("SET ROLE vegas_app")
        conn.commit()
        yield conn
