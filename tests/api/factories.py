"""factory-boy factories for players, wallets and games, built through the HTTP API itself."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import factory

from tests.api.client import Http


class Calls:
    """The HTTP helper the factories use; set by the ``http`` fixture."""

    http: Http | None = None

    @classmethod
    def get(cls) -> Http:
        assert cls.http is not None, "use the http fixture before the factories"
        return cls.http


@dataclass
class Player:
    id: str
    external_ref: str
    currency: str
    token: str  # a live player session


@dataclass
class Wallet:
    player: Player
    balance: int


@dataclass
class Game:
    player: Player
    view: dict[str, Any]
    etag: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return str(self.view["id"])


class PlayerFactory(factory.Factory[Player]):
    """A player account opened by an operator, with a session token."""

    class Meta:
        model = Player

    external_ref = factory.LazyFunction(lambda: f"casino-{uuid.uuid4()}")
    currency = "GBP"

    @classmethod
    def _create(cls, model_class: type[Player], external_ref: str, currency: str) -> Player:
        http = Calls.get()
        opened = http.post(
            "/v1/players",
            http.operator_key,
            json={"external_ref": external_ref, "currency": currency},
        )
        assert opened.status_code == 201, opened.get_json()
        player_id = opened.get_json()["id"]
        session = http.post(f"/v1/players/{player_id}/sessions", http.operator_key)
        assert session.status_code == 201, session.get_json()
        return model_class(player_id, external_ref, currency, session.get_json()["token"])


class WalletFactory(factory.Factory[Wallet]):
    """A player with money in the wallet, paid in through the cashier."""

    class Meta:
        model = Wallet

    player = factory.SubFactory(PlayerFactory)
    balance = 5_200

    @classmethod
    def _create(cls, model_class: type[Wallet], player: Player, balance: int) -> Wallet:
        if balance:
            http = Calls.get()
            paid = http.post(
                f"/v1/players/{player.id}/deposits",
                http.operator_key,
                json={"amount": balance, "transaction_id": f"fund-{uuid.uuid4()}"},
            )
            assert paid.status_code == 201, paid.get_json()
        return model_class(player, balance)


class GameFactory(factory.Factory[Game]):
    """A dealt game: the player's own deal, or (with ``deck`` or ``seed``) an operator's
    certification deal."""

    class Meta:
        model = Game

    variant = "vegas-draw1"
    stake = 520
    wallet = factory.SubFactory(WalletFactory, balance=factory.SelfAttribute("..stake"))
    deck: Any = None
    seed: Any = None

    @classmethod
    def _create(
        cls,
        model_class: type[Game],
        variant: str,
        stake: int,
        wallet: Wallet,
        deck: list[str] | None,
        seed: str | None,
    ) -> Game:
        http = Calls.get()
        body: dict[str, Any] = {"variant": variant, "stake": stake}
        if deck is not None or seed is not None:
            body |= {"player_id": wallet.player.id}
            body |= {"deck": list(deck)} if deck is not None else {"seed": seed}
            dealt = http.post("/v1/games", http.operator_key, json=body)
        else:
            dealt = http.post("/v1/games", wallet.player.token, json=body)
        assert dealt.status_code == 201, dealt.get_json()
        return model_class(wallet.player, dealt.get_json(), dealt.headers["ETag"])


def deal_certification(
    http: Http,
    player: Player,
    deck: list[str],
    *,
    variant: str = "vegas-draw3",
    stake: int = 520,
) -> str:
    """An operator deals ``player`` a game from ``deck`` (certification mode); its id."""
    dealt = http.post(
        "/v1/games",
        http.operator_key,
        json={"variant": variant, "stake": stake, "player_id": player.id, "deck": deck},
    )
    assert dealt.status_code == 201, dealt.get_json()
    return str(dealt.get_json()["id"])
