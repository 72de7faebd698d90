"""Certification mode: an operator deals a chosen seed or deck for a player, so a test lab can
replay known games. Such games are flagged everywhere, players can never choose their deal,
and production refuses the mode outright."""

from __future__ import annotations

import random
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from service.app import create_app
from service.bootstrap import Container, build
from service.core import shuffle
from service.core.context import Actor, RequestContext
from service.core.dealing import CertificationDeal
from service.errors import CertificationDisabled
from service.games.klondike import VEGAS_DRAW1
from service.rules.cards import CANONICAL_DECK
from service.rules.table import Table
from service.runtime.config import ConfigError, Settings
from tests.api.client import Http, assert_problem, assert_salted_commitment
from tests.api.factories import Wallet, WalletFactory

#: The worked example of service/core/SHUFFLE.md: seed bytes 00..1f and its published commitment.
WORKED_SEED = bytes(range(32)).hex()
WORKED_COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"


def _deal(http: Http, token: str, **body: Any) -> Any:
    return http.post("/v1/games", token, json={"variant": "vegas-draw1", "stake": 520, **body})


def _full_view(http: Http, game_id: str) -> dict[str, Any]:
    seen = http.get(f"/v1/games/{game_id}?view=full", http.auditor_key)
    assert seen.status_code == 200, seen.get_json()
    view: dict[str, Any] = seen.get_json()
    return view


def _stake_placed(http: Http, game_id: str) -> dict[str, Any]:
    stream = http.get(f"/v1/games/{game_id}/events", http.auditor_key).get_json()
    first: dict[str, Any] = stream["events"][0]
    assert first["type"] == "StakePlaced"
    return first


def _history_line(http: Http, wallet: Wallet, game_id: str) -> dict[str, Any]:
    path = f"/v1/players/{wallet.player.id}/history"
    items = http.get(path, wallet.player.token).get_json()["items"]
    line: dict[str, Any] = next(item for item in items if item["game_id"] == game_id)
    return line


def _face_up(view: dict[str, Any]) -> list[str]:
    return [column["face_up"][-1] for column in view["tableau"]]


def _dealt_face_up(table: Table) -> list[str]:
    """Each column's face-up card on a Vegas table dealt from a deck."""
    return [str(table.pile(f"tableau:{c}").top) for c in range(7)]


def _collect(http: Http, wallet: Wallet, game_id: str) -> dict[str, Any]:
    collected = http.post(f"/v1/games/{game_id}/collect", wallet.player.token)
    assert collected.status_code == 200, collected.get_json()
    view: dict[str, Any] = collected.get_json()
    return view


def _full_view_is_sealed(http: Http, wallet: Wallet, game_id: str) -> None:
    """Until the game ends, the auditor sees exactly what the player sees: no deck."""
    full = _full_view(http, game_id)
    mine = http.get(f"/v1/games/{game_id}", wallet.player.token).get_json()
    assert full == mine
    assert not {"deck", "stock", "shuffle_algorithm"} & full.keys()


@pytest.mark.parametrize("client_seed", [None, "lab run 7"])
def test_an_operator_deals_a_seed_as_the_published_derivation_says(
    http: Http, client_seed: str | None
) -> None:
    wallet = WalletFactory.create(balance=520)
    seed = secrets.token_hex(32)
    extra = {} if client_seed is None else {"client_seed": client_seed}
    dealt = _deal(http, http.operator_key, player_id=wallet.player.id, seed=seed, **extra)
    assert dealt.status_code == 201, dealt.get_json()
    view = dealt.get_json()
    expected = shuffle.derive_deck(bytes.fromhex(seed), client_seed)

    assert view["player_id"] == wallet.player.id
    assert view["certification"] is True
    assert view["seed_commitment"] == shuffle.commitment(bytes.fromhex(seed))
    assert view["client_seed"] == client_seed
    assert view["server_seed"] is None  # revealed only when the game ends
    # What the player sees is the deal of that deck...
    assert _face_up(view) == _dealt_face_up(VEGAS_DRAW1.deal(expected))
    # ...and, while the game is in play, the auditor sees no more than the player does.
    _full_view_is_sealed(http, wallet, view["id"])

    # The player plays it with their own session; at the end the seed is revealed...
    collected = _collect(http, wallet, view["id"])
    assert collected["server_seed"] == seed
    assert shuffle.seed_matches(seed, view["seed_commitment"])
    # ...and the auditor sees the deck itself, the stock next card first.
    full = _full_view(http, view["id"])
    assert full["deck"] == list(expected)
    assert full["shuffle_algorithm"] == shuffle.ALGORITHM
    assert full["stock"] == list(expected[28:])


def _published_deck() -> list[str]:
    """The worked example's whole deck, as SHUFFLE.md prints it."""
    text = (Path(shuffle.__file__).parent / "SHUFFLE.md").read_text(encoding="utf-8")
    after = text.split("The whole deck in deal order:", 1)[1]
    return after.split("```", 2)[1].split()


def test_the_worked_example_seed_deals_the_published_deck(http: Http) -> None:
    wallet = WalletFactory.create(balance=520)
    dealt = _deal(http, http.operator_key, player_id=wallet.player.id, seed=WORKED_SEED)
    assert dealt.status_code == 201, dealt.get_json()
    view = dealt.get_json()
    assert view["seed_commitment"] == WORKED_COMMITMENT
    published = _published_deck()
    assert len(published) == 52
    assert _face_up(view)[:3] == ["2C", "JC", "KC"]  # the first columns of its table
    assert _collect(http, wallet, view["id"])["server_seed"] == WORKED_SEED
    assert _full_view(http, view["id"])["deck"] == published


def test_an_operator_deals_a_given_deck_card_for_card(http: Http) -> None:
    wallet = WalletFactory.create(balance=520)
    deck = list(CANONICAL_DECK)
    random.Random(20).shuffle(deck)
    dealt = _deal(http, http.operator_key, player_id=wallet.player.id, deck=deck)
    assert dealt.status_code == 201, dealt.get_json()
    view = dealt.get_json()
    assert view["certification"] is True
    # A given deck is salted with a fresh seed: the game commits to both and keeps them sealed.
    assert_salted_commitment(view, deck)
    assert view["revealed_deck"] is None
    assert _face_up(view) == _dealt_face_up(VEGAS_DRAW1.deal(deck))
    _full_view_is_sealed(http, wallet, view["id"])
    # Collecting reveals the deck, which matches the commitment made at the deal.
    collected = _collect(http, wallet, view["id"])
    assert collected["revealed_deck"] == deck
    assert shuffle.deck_matches(deck, collected["server_seed"], view["seed_commitment"])
    full = _full_view(http, view["id"])
    assert full["deck"] == deck
    assert full["shuffle_algorithm"] == shuffle.CERTIFICATION_DECK


def test_a_certification_game_is_flagged_in_view_history_and_stake_placed(http: Http) -> None:
    wallet = WalletFactory.create(balance=1_040)
    lab = _deal(http, http.operator_key, player_id=wallet.player.id, seed=WORKED_SEED)
    assert lab.status_code == 201, lab.get_json()
    lab_id = lab.get_json()["id"]
    assert http.post(f"/v1/games/{lab_id}/collect", wallet.player.token).status_code == 200
    own = _deal(http, wallet.player.token)
    assert own.status_code == 201, own.get_json()
    own_id = own.get_json()["id"]

    for game_id, flagged in ((lab_id, True), (own_id, False)):
        seen = http.get(f"/v1/games/{game_id}", wallet.player.token).get_json()
        assert seen["certification"] is flagged
        assert _full_view(http, game_id)["certification"] is flagged
        assert _history_line(http, wallet, game_id)["certification"] is flagged
        stake_placed = _stake_placed(http, game_id)
        assert stake_placed["data"]["certification"] is flagged
    assert _stake_placed(http, lab_id)["metadata"]["role"] == "operator"
    assert _stake_placed(http, own_id)["metadata"]["role"] == "player"


@pytest.mark.parametrize(
    "asked",
    [
        {"seed": WORKED_SEED},
        {"deck": list(CANONICAL_DECK)},
        {"player_id": str(uuid.uuid4())},  # another player's deal
    ],
    ids=["seed", "deck", "other-player"],
)
def test_a_player_can_never_choose_the_deal(http: Http, asked: dict[str, Any]) -> None:
    wallet = WalletFactory.create(balance=520)
    refused = _deal(http, wallet.player.token, **asked)
    assert_problem(refused, 403, "certification-disabled")
    # Nothing was staked: the player's own deal still goes through.
    assert (
        http.get(f"/v1/players/{wallet.player.id}/wallet", wallet.player.token).get_json()[
            "balance"
        ]
        == 520
    )
    own = _deal(http, wallet.player.token, player_id=wallet.player.id)
    assert own.status_code == 201, own.get_json()
    assert own.get_json()["certification"] is False


@pytest.mark.parametrize(
    "body",
    [
        {"seed": WORKED_SEED, "deck": list(CANONICAL_DECK)},
        {},
        {"seed": WORKED_SEED, "no_player": True},
    ],
    ids=["seed-and-deck", "neither", "no-player_id"],
)
def test_an_operator_deal_names_a_player_and_exactly_one_of_seed_or_deck(
    http: Http, body: dict[str, Any]
) -> None:
    wallet = WalletFactory.create(balance=520)
    if not body.pop("no_player", False):
        body["player_id"] = wallet.player.id
    refused = _deal(http, http.operator_key, **body)
    problem = assert_problem(refused, 422, "validation-error")
    assert "player_id" in problem["errors"]
    balance = http.get(f"/v1/players/{wallet.player.id}/wallet", http.operator_key)
    assert balance.get_json()["held"] == 0


# --- certification mode off -------------------------------------------------------------------


@pytest.fixture(scope="module")
def uncertified(settings: Settings) -> Iterator[Container]:
    """Services as production runs them: on the same database, certification mode off."""
    built = build(
        replace(settings, certification_mode=False, pool_min_size=1, pool_max_size=2),
        migrate=False,
    )
    try:
        yield built
    finally:
        built.close()


@pytest.fixture
def uncertified_http(uncertified: Container, http: Http) -> Http:
    app: Flask = create_app(uncertified)
    app.config["TESTING"] = True
    return replace(http, client=app.test_client())


def test_without_certification_mode_an_operator_cannot_deal(uncertified_http: Http) -> None:
    http = uncertified_http
    wallet = WalletFactory.create(balance=520)
    for chosen in ({"seed": WORKED_SEED}, {"deck": list(CANONICAL_DECK)}):
        refused = _deal(http, http.operator_key, player_id=wallet.player.id, **chosen)
        assert_problem(refused, 403, "certification-disabled")
    assert_problem(
        _deal(http, wallet.player.token, seed=WORKED_SEED), 403, "certification-disabled"
    )
    # Ordinary play is unaffected.
    own = _deal(http, wallet.player.token)
    assert own.status_code == 201, own.get_json()
    assert own.get_json()["certification"] is False


def test_without_certification_mode_the_service_refuses_a_chosen_deal_too(
    uncertified: Container,
) -> None:
    """Behind the API, the games service holds the same line."""
    operator = RequestContext(Actor("key:lab", "operator"))
    with pytest.raises(CertificationDisabled):
        uncertified.games.start(
            operator,
            uuid.uuid4(),
            "vegas-draw1",
            520,
            certification=CertificationDeal(seed_hex=WORKED_SEED),
        )


@pytest.mark.parametrize("flag", ["1", "true", "yes", "on", "TRUE"])
def test_production_refuses_certification_mode(flag: str) -> None:
    env = {
        "APP_ENV": "production",
        "CERTIFICATION_MODE": flag,
        "DATABASE_URL": "postgresql://vegas@db/vegas",
        "SEED_ENCRYPTION_KEYS": "a-key",
        "CELERY_BROKER_URL": "redis://broker:6379/0",
        "ANCHOR_SIGNING_KEY_FILE": "/etc/vegas/anchor-signing-key.pem",
    }
    with pytest.raises(ConfigError, match="CERTIFICATION_MODE"):
        Settings.from_env(env)


def test_production_runs_with_certification_mode_off() -> None:
    env = {
        "APP_ENV": "production",
        "DATABASE_URL": "postgresql://vegas@db/vegas",
        "SEED_ENCRYPTION_KEYS": "a-key",
        "CELERY_BROKER_URL": "redis://broker:6379/0",
        "ANCHOR_SIGNING_KEY_FILE": "/etc/vegas/anchor-signing-key.pem",
    }
    for flag in (None, "0", "off", ""):
        chosen = env if flag is None else {**env, "CERTIFICATION_MODE": flag}
        settings = Settings.from_env(chosen)
        assert settings.is_production
        assert settings.certification_mode is False
    development = {"APP_ENV": "development", "CERTIFICATION_MODE": "1"}
    assert Settings.from_env(development).certification_mode is True


@pytest.mark.parametrize("app_env", [None, "", "prod", "staging", "Production", "dev"])
def test_anything_but_development_or_test_is_production(app_env: str | None) -> None:
    env = {"CERTIFICATION_MODE": "1"} | ({} if app_env is None else {"APP_ENV": app_env})
    with pytest.raises(ConfigError, match="production"):
        Settings.from_env(env)
    for local in ("development", "test"):
        assert not Settings.from_env({**env, "APP_ENV": local}).is_production


@pytest.mark.parametrize(
    "missing",
    ["DATABASE_URL", "SEED_ENCRYPTION_KEYS", "CELERY_BROKER_URL", "ANCHOR_SIGNING_KEY_FILE"],
)
def test_production_needs_a_database_a_seed_key_a_broker_and_a_signing_key(missing: str) -> None:
    env = {
        "APP_ENV": "production",
        "DATABASE_URL": "postgresql://vegas@db/vegas",
        "SEED_ENCRYPTION_KEYS": "a-key",
        "CELERY_BROKER_URL": "redis://broker:6379/0",
        "ANCHOR_SIGNING_KEY_FILE": "/etc/vegas/anchor-signing-key.pem",
    }
    del env[missing]
    with pytest.raises(ConfigError, match=missing):
        Settings.from_env(env)
