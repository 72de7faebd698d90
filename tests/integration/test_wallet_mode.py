"""The deployment's wallet mode (issue 37, migrations/0044): one mode a deployment, entered at
start only when nothing of the other is left, and the settings it needs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from service.bootstrap import Container, build
from service.runtime.config import ConfigError, Settings
from tests.integration.conftest import World
from tests.wallet.keys import TestKeys


def _seamless(settings: Settings, folder: Path) -> Settings:
    files = TestKeys.generate().write(folder)
    return replace(
        settings,
        wallet_mode="seamless",
        wallet_url="http://127.0.0.1:9",
        wallet_signing_key_file=files.supplier_private,
        wallet_operator_key_files=(files.operator_public,),
    )


def test_seamless_mode_is_refused_while_a_player_s_wallet_holds_money(
    fresh_container: Container, tmp_path: Path
) -> None:
    World(fresh_container).player(balance=500)
    with pytest.raises(ConfigError, match="wallet holds money"):
        build(_seamless(fresh_container.settings, tmp_path), migrate=False)
    with fresh_container.unit_of_work() as uow:
        assert uow.conn.execute("SELECT deployment_wallet_mode()").fetchone() == ("transfer",)


def test_seamless_mode_is_refused_while_a_game_is_open(
    fresh_container: Container, tmp_path: Path
) -> None:
    world = World(fresh_container)
    player = world.player(balance=520)
    world.game(player, stake=520)  # the whole balance staked: the wallet is empty, a game open
    with pytest.raises(ConfigError, match="a game is open"):
        build(_seamless(fresh_container.settings, tmp_path), migrate=False)


def test_an_empty_deployment_switches_and_says_so(
    fresh_container: Container, tmp_path: Path
) -> None:
    seamless = build(_seamless(fresh_container.settings, tmp_path), migrate=False)
    try:
        with seamless.unit_of_work() as uow:
            assert uow.conn.execute("SELECT deployment_wallet_mode()").fetchone() == ("seamless",)
            logged = uow.conn.execute(
                "SELECT details FROM significant_events WHERE kind = 'configuration'"
                " AND details ? 'wallet_mode' ORDER BY id DESC LIMIT 1"
            ).fetchone()
        assert logged == ({"wallet_mode": "seamless", "previous": "transfer"},)
        # and back, nothing of seamless mode being left
        build(fresh_container.settings, migrate=False).close()
    finally:
        seamless.close()


def test_seamless_settings_are_checked_before_anything_starts(tmp_path: Path) -> None:
    env = {"APP_ENV": "development", "WALLET_MODE": "seamless"}
    with pytest.raises(ConfigError, match="WALLET_URL is required"):
        Settings.from_env(env)
    with pytest.raises(ConfigError, match="transfer or seamless"):
        Settings.from_env({"APP_ENV": "development", "WALLET_MODE": "both"})
    files = TestKeys.generate().write(tmp_path)
    production = {
        "DATABASE_URL": "postgresql://x/y",
        "SEED_ENCRYPTION_KEYS": "k",
        "CELERY_BROKER_URL": "redis://x",
        "ANCHOR_SIGNING_KEY_FILE": "/k",
        "WALLET_MODE": "seamless",
        "WALLET_URL": "http://wallet.example",
        "WALLET_SIGNING_KEY_FILE": str(files.supplier_private),
        "WALLET_OPERATOR_KEY_FILE": str(files.operator_public),
    }
    with pytest.raises(ConfigError, match="https in production"):
        Settings.from_env(production)
    rotating = Settings.from_env(
        {
            **production,
            "WALLET_URL": "https://wallet.example",
            "WALLET_OPERATOR_KEY_FILE": f"{files.operator_public},{files.supplier_public}",
        }
    )
    assert len(rotating.wallet_operator_key_files) == 2


def test_a_currency_the_wire_cannot_carry_is_refused_at_start(
    fresh_container: Container, tmp_path: Path
) -> None:
    from service.core.paytable import default_paytables

    table = next(iter(default_paytables().values()))
    odd = replace(table, id="xau", currency="XAU")
    settings = replace(
        _seamless(fresh_container.settings, tmp_path),
        paytables={**fresh_container.settings.paytables, "xau": odd},
    )
    with pytest.raises(ConfigError, match="cannot carry XAU"):
        build(settings, migrate=False)
